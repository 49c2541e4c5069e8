/// A change instruction (Spec/SYNC.md §5): what one upload or history entry does to one object.
public struct Instruction: Equatable, Hashable, Sendable {
    /// What the instruction does, with its operands.
    public enum Operation: Equatable, Hashable, Sendable {
        case create
        case erase
        case set(path: [String], value: SyncValue)
        case listInsert(path: [String], id: ElementId, after: ElementId, value: SyncValue)
        case listSet(path: [String], id: ElementId, value: SyncValue)
        case listErase(path: [String], id: ElementId)
        case setAdd(path: [String], value: SyncValue)
        case setErase(path: [String], value: SyncValue)
        case mapSet(path: [String], key: String, value: SyncValue)
        case mapErase(path: [String], key: String)
        /// A list's whole live contents and their element identities, as the store holds them:
        /// sent only in downloads (a client replaces its list with it; §7.3).
        case listState(path: [String], ids: [ElementId], values: [SyncValue])

        /// The property path the operation writes; nil for `CREATE` and `ERASE`.
        public var path: [String]? {
            switch self {
            case .create, .erase: nil
            case .set(let p, _), .listInsert(let p, _, _, _), .listSet(let p, _, _), .listErase(let p, _), .setAdd(let p, _),
                .setErase(let p, _), .mapSet(let p, _, _), .mapErase(let p, _), .listState(let p, _, _):
                p
            }
        }

        /// The operation code of §5.
        public var code: UInt8 {
            switch self {
            case .create: 1
            case .erase: 2
            case .set: 3
            case .listInsert: 4
            case .listSet: 5
            case .listErase: 6
            case .setAdd: 7
            case .setErase: 8
            case .mapSet: 9
            case .mapErase: 10
            case .listState: 11
            }
        }
    }

    public var className: String
    public var primaryKey: SyncValue
    public var operation: Operation

    /// `operation` on the object of `className` whose primary key is `primaryKey`.
    public init(_ className: String, _ primaryKey: SyncValue, _ operation: Operation) {
        self.className = className
        self.primaryKey = primaryKey
        self.operation = operation
    }
}

/// A class of the synced schema (Spec/SYNC.md §4.1).
public struct SyncClass: Equatable, Hashable, Sendable {
    /// A property of a synced class: its value tag (§4.3; 12 for links), flags and link target.
    public struct Property: Equatable, Hashable, Sendable {
        public var name: String
        public var valueTag: UInt8
        /// Bit 0 optional, bit 1 list, bit 2 set, bit 3 map.
        public var flags: UInt8
        /// The linked class, empty unless a link.
        public var linkTarget: String

        /// A property `name` of values tagged `valueTag`.
        public init(_ name: String, valueTag: UInt8, flags: UInt8 = 0, linkTarget: String = "") {
            self.name = name
            self.valueTag = valueTag
            self.flags = flags
            self.linkTarget = linkTarget
        }
    }

    public var name: String
    /// The tag of the `_id` property's values: int, string, objectId or uuid.
    public var primaryKeyTag: UInt8
    public var isEmbedded: Bool
    public var properties: [Property]

    /// A class `name` whose `_id` values are tagged `primaryKeyTag`.
    public init(_ name: String, primaryKeyTag: UInt8, isEmbedded: Bool = false, properties: [Property]) {
        self.name = name
        self.primaryKeyTag = primaryKeyTag
        self.isEmbedded = isEmbedded
        self.properties = properties
    }
}

/// One local commit's changes, uploaded (§4.2).
public struct Upload: Equatable, Hashable, Sendable {
    public var clientVersion: UInt64
    public var clock: UInt64
    public var instructions: [Instruction]

    /// The upload of the commit of local version `clientVersion`, made at `clock`.
    public init(clientVersion: UInt64, clock: UInt64, instructions: [Instruction]) {
        self.clientVersion = clientVersion
        self.clock = clock
        self.instructions = instructions
    }
}

/// One history entry, downloaded (§4.2): the effective changes of one accepted upload.
public struct Entry: Equatable, Hashable, Sendable {
    public var serverVersion: UInt64
    public var originClientFileId: [UInt8]
    public var originClientVersion: UInt64
    public var clock: UInt64
    public var instructions: [Instruction]

    /// The entry of server version `serverVersion`.
    public init(serverVersion: UInt64, originClientFileId: [UInt8], originClientVersion: UInt64, clock: UInt64, instructions: [Instruction])
    {
        self.serverVersion = serverVersion
        self.originClientFileId = originClientFileId
        self.originClientVersion = originClientVersion
        self.clock = clock
        self.instructions = instructions
    }
}

/// One object's whole state, bootstrapped (§4.2).
public struct ObjectState: Equatable, Hashable, Sendable {
    public var className: String
    public var primaryKey: SyncValue
    public var properties: [PropertyState]

    /// The object of `className` with `primaryKey` and these properties.
    public init(_ className: String, _ primaryKey: SyncValue, _ properties: [PropertyState]) {
        self.className = className
        self.primaryKey = primaryKey
        self.properties = properties
    }
}

/// One subscription of a subscription set (§4.2): an optional name, a class and a query.
public struct Subscription: Equatable, Hashable, Sendable {
    /// Empty for an unnamed subscription.
    public var name: String
    public var className: String
    /// The query, in the NSPredicate dialect of Spec/QUERY.md.
    public var query: String

    /// A subscription to the objects of `className` matching `query`.
    public init(name: String = "", className: String, query: String) {
        self.name = name
        self.className = className
        self.query = query
    }
}

/// A message of the sync protocol (Spec/SYNC.md §4), one binary WebSocket message.
public enum SyncMessage: Equatable, Hashable, Sendable {
    case hello(clientFileId: [UInt8], lastServerVersion: UInt64, lastUploadAcked: UInt64, schema: [SyncClass])
    case welcome(clientFileId: [UInt8], serverVersion: UInt64, serverClock: UInt64)
    case upload([Upload])
    case uploadAck(clientVersion: UInt64, serverVersion: UInt64)
    case query(querySetVersion: UInt64, subscriptions: [Subscription])
    case bootstrap(querySetVersion: UInt64, serverVersion: UInt64, objects: [ObjectState], last: Bool)
    case download(fromVersion: UInt64, entries: [Entry], latestServerVersion: UInt64)
    case error(code: UInt64, message: String, fatal: Bool, clientVersion: UInt64)
    /// A client asks (`serverVersion` 0) to be told when it has every change up to the server's
    /// newest version; the server answers with the same `requestId` and that version, after the
    /// downloads that bring the client to it.
    case mark(requestId: UInt64, serverVersion: UInt64)
    /// A part of one upload too large for one message: the parts of an upload come in order, in
    /// consecutive messages, the last with `last`; the server applies the upload when it has all.
    case uploadPart(Upload, last: Bool)
    /// Objects of one class in the bootstrap of `querySetVersion`, by column; the bootstrap ends
    /// with a ``bootstrap(querySetVersion:serverVersion:objects:last:)`` with `last`.
    case bootstrapTable(querySetVersion: UInt64, serverVersion: UInt64, table: BootstrapTable)
    /// A part of one history entry too large for one message: the parts of an entry come in
    /// order, in consecutive messages, the last with `last`; the client applies the entry, as a
    /// ``download(fromVersion:entries:latestServerVersion:)`` of that one entry, when it has all
    /// (``DownloadAssembly``).
    case downloadPart(fromVersion: UInt64, entry: Entry, last: Bool, latestServerVersion: UInt64)
    /// The writes of the upload of `clientVersion` to `objects` were not applied (the user may not
    /// make them, §10); the rest of the upload was. The client's own entry of that upload brings
    /// back the objects as the store has them (RealmSwift's compensating write).
    case writeRefused(clientVersion: UInt64, objects: [SyncStoreModel.ObjectID], reason: String)

    /// The message type of `BOOTSTRAP_TABLE`.
    public static let bootstrapTableType: UInt8 = 11
    /// The message type of `DOWNLOAD_PART`.
    public static let downloadPartType: UInt8 = 12
    /// The message type of `WRITE_REFUSED`.
    public static let writeRefusedType: UInt8 = 13

    /// The message type of §4.
    public var type: UInt8 {
        switch self {
        case .hello: 1
        case .welcome: 2
        case .upload: 3
        case .uploadAck: 4
        case .query: 5
        case .bootstrap: 6
        case .download: 7
        case .error: 8
        case .mark: 9
        case .uploadPart: 10
        case .bootstrapTable: Self.bootstrapTableType
        case .downloadPart: Self.downloadPartType
        case .writeRefused: Self.writeRefusedType
        }
    }

    /// The message's bytes.
    public func encoded() -> [UInt8] {
        if case .bootstrapTable(let querySet, let version, let t) = self {
            var e = BootstrapTableEncoder(
                querySetVersion: querySet, serverVersion: version, className: t.className, properties: t.properties, rows: t.keys.count)
            for v in t.keys { e.writer.value(v) }
            for column in t.columns { for v in column { e.writer.value(v) } }
            return e.finish(others: t.others)
        }
        var w = WireWriter()
        w.u8(type)
        switch self {
        case .hello(let id, let last, let acked, let schema):
            w.data(id)
            w.uvarint(last)
            w.uvarint(acked)
            w.count(schema.count)
            for c in schema { w.syncClass(c) }
        case .welcome(let id, let version, let clock):
            w.data(id)
            w.uvarint(version)
            w.u64(clock)
        case .upload(let uploads):
            w.count(uploads.count)
            for u in uploads {
                w.uvarint(u.clientVersion)
                w.u64(u.clock)
                w.instructions(u.instructions)
            }
        case .uploadAck(let c, let s):
            w.uvarint(c)
            w.uvarint(s)
        case .uploadPart(let u, let last):
            w.uvarint(u.clientVersion)
            w.u64(u.clock)
            w.u8(last ? 1 : 0)
            w.instructions(u.instructions)
        case .query(let version, let subscriptions):
            w.uvarint(version)
            w.count(subscriptions.count)
            for s in subscriptions {
                w.string(s.name)
                w.string(s.className)
                w.string(s.query)
            }
        case .bootstrap(let querySet, let version, let objects, let last):
            w.uvarint(querySet)
            w.uvarint(version)
            w.count(objects.count)
            for o in objects {
                w.string(o.className)
                w.value(o.primaryKey)
                w.propertyStates(o.properties)
            }
            w.u8(last ? 1 : 0)
        case .download(let from, let entries, let latest):
            w.uvarint(from)
            w.count(entries.count)
            for e in entries { w.entry(e) }
            w.uvarint(latest)
        case .downloadPart(let from, let e, let last, let latest):
            w.uvarint(from)
            w.entryHeader(e)
            w.u8(last ? 1 : 0)
            w.instructions(e.instructions)
            w.uvarint(latest)
        case .writeRefused(let clientVersion, let objects, let reason):
            w.uvarint(clientVersion)
            w.count(objects.count)
            for o in objects {
                w.string(o.className)
                w.value(o.primaryKey)
            }
            w.string(reason)
        case .error(let code, let message, let fatal, let clientVersion):
            w.uvarint(code)
            w.string(message)
            w.u8(fatal ? 1 : 0)
            w.uvarint(clientVersion)
        case .mark(let id, let version):
            w.uvarint(id)
            w.uvarint(version)
        case .bootstrapTable: break
        }
        return w.bytes
    }

    /// Decodes one message; every byte must be part of it.
    /// - Throws: ``WireError`` for an unknown type, a truncated or malformed field, or bytes left over.
    public static func decode(_ bytes: [UInt8]) throws(WireError) -> SyncMessage {
        var r = WireReader(bytes)
        let type = try r.u8()
        let message: SyncMessage
        switch type {
        case 1:
            let id = try r.clientFileId(allowEmpty: true)
            let last = try r.uvarint()
            let acked = try r.uvarint()
            let n = try r.count(minimumItemSize: 4)
            var schema: [SyncClass] = []
            for _ in 0..<n { schema.append(try r.syncClass()) }
            message = .hello(clientFileId: id, lastServerVersion: last, lastUploadAcked: acked, schema: schema)
        case 2:
            message = .welcome(
                clientFileId: try r.clientFileId(allowEmpty: false), serverVersion: try r.uvarint(), serverClock: try r.u64())
        case 3:
            let n = try r.count(minimumItemSize: 10)
            var uploads: [Upload] = []
            for _ in 0..<n {
                uploads.append(Upload(clientVersion: try r.uvarint(), clock: try r.u64(), instructions: try r.instructions()))
            }
            message = .upload(uploads)
        case 4: message = .uploadAck(clientVersion: try r.uvarint(), serverVersion: try r.uvarint())
        case 10:
            let version = try r.uvarint()
            let clock = try r.u64()
            let last = try r.flag()
            message = .uploadPart(Upload(clientVersion: version, clock: clock, instructions: try r.instructions()), last: last)
        case 5:
            let version = try r.uvarint()
            let n = try r.count(minimumItemSize: 3)
            var subscriptions: [Subscription] = []
            for _ in 0..<n { subscriptions.append(Subscription(name: try r.string(), className: try r.string(), query: try r.string())) }
            message = .query(querySetVersion: version, subscriptions: subscriptions)
        case 6:
            let querySet = try r.uvarint()
            let version = try r.uvarint()
            let n = try r.count(minimumItemSize: 3)
            var objects: [ObjectState] = []
            for _ in 0..<n { objects.append(ObjectState(try r.string(), try r.value(), try r.propertyStates())) }
            message = .bootstrap(querySetVersion: querySet, serverVersion: version, objects: objects, last: try r.flag())
        case 7:
            let from = try r.uvarint()
            let n = try r.count(minimumItemSize: 12)
            var entries: [Entry] = []
            for _ in 0..<n {
                var e = try r.entryHeader()
                e.instructions = try r.instructions()
                entries.append(e)
            }
            message = .download(fromVersion: from, entries: entries, latestServerVersion: try r.uvarint())
        case Self.writeRefusedType:
            let version = try r.uvarint()
            let n = try r.count(minimumItemSize: 3)
            var objects: [SyncStoreModel.ObjectID] = []
            for _ in 0..<n { objects.append(SyncStoreModel.ObjectID(try r.string(), try r.value())) }
            message = .writeRefused(clientVersion: version, objects: objects, reason: try r.string())
        case Self.downloadPartType:
            let from = try r.uvarint()
            var e = try r.entryHeader()
            let last = try r.flag()
            e.instructions = try r.instructions()
            message = .downloadPart(fromVersion: from, entry: e, last: last, latestServerVersion: try r.uvarint())
        case 8: message = .error(code: try r.uvarint(), message: try r.string(), fatal: try r.flag(), clientVersion: try r.uvarint())
        case 9: message = .mark(requestId: try r.uvarint(), serverVersion: try r.uvarint())
        case Self.bootstrapTableType:
            let (querySet, version, table) = try r.bootstrapTable()
            message = .bootstrapTable(querySetVersion: querySet, serverVersion: version, table: table)
        default: throw WireError(offset: 0, "unknown message type \(type)")
        }
        guard r.isAtEnd else { throw r.error("bytes after the end of the message") }
        return message
    }
}

extension WireWriter {
    mutating func syncClass(_ c: SyncClass) {
        string(c.name)
        u8(c.primaryKeyTag)
        u8(c.isEmbedded ? 1 : 0)
        count(c.properties.count)
        for p in c.properties {
            string(p.name)
            u8(p.valueTag)
            u8(p.flags)
            string(p.linkTarget)
        }
    }

    mutating func path(_ p: [String]) {
        count(p.count)
        for s in p { string(s) }
    }

    /// An entry's server version, origin and clock (what precedes its instructions).
    mutating func entryHeader(_ e: Entry) {
        uvarint(e.serverVersion)
        data(e.originClientFileId)
        uvarint(e.originClientVersion)
        u64(e.clock)
    }

    /// A whole entry of a `DOWNLOAD`.
    mutating func entry(_ e: Entry) {
        entryHeader(e)
        instructions(e.instructions)
    }

    /// Writes `list` as `Instruction[]` (§5): the form a history entry's changeset is stored in.
    public mutating func instructions(_ list: [Instruction]) {
        count(list.count)
        for i in list { instruction(i) }
    }

    /// Writes one item of an `Instruction[]`.
    mutating func instruction(_ i: Instruction) {
        u8(i.operation.code)
        string(i.className)
        value(i.primaryKey)
        switch i.operation {
        case .create, .erase: break
        case .set(let p, let v), .setAdd(let p, let v), .setErase(let p, let v):
            path(p)
            value(v)
        case .listInsert(let p, let id, let after, let v):
            path(p)
            elementId(id)
            elementId(after)
            value(v)
        case .listSet(let p, let id, let v):
            path(p)
            elementId(id)
            value(v)
        case .listErase(let p, let id):
            path(p)
            elementId(id)
        case .mapSet(let p, let key, let v):
            path(p)
            string(key)
            value(v)
        case .mapErase(let p, let key):
            path(p)
            string(key)
        case .listState(let p, let ids, let values):
            path(p)
            count(ids.count)
            for id in ids { elementId(id) }
            value(.list(values))
        }
    }
}

extension WireReader {
    mutating func flag() throws(WireError) -> Bool {
        let at = offset
        switch try u8() {
        case 0: return false
        case 1: return true
        case let b: throw WireError(offset: at, "a flag of \(b), not 0 or 1")
        }
    }

    mutating func clientFileId(allowEmpty: Bool) throws(WireError) -> [UInt8] {
        let at = offset
        let id = try data()
        guard id.count == 16 || (allowEmpty && id.isEmpty) else {
            throw WireError(offset: at, "a client file identity of \(id.count) bytes, not 16")
        }
        return id
    }

    mutating func syncClass() throws(WireError) -> SyncClass {
        let name = try string()
        let pk = try u8()
        let embedded = try flag()
        let n = try count(minimumItemSize: 4)
        var properties: [SyncClass.Property] = []
        for _ in 0..<n {
            properties.append(SyncClass.Property(try string(), valueTag: try u8(), flags: try u8(), linkTarget: try string()))
        }
        return SyncClass(name, primaryKeyTag: pk, isEmbedded: embedded, properties: properties)
    }

    /// An entry's server version, origin and clock; its instructions are left empty.
    mutating func entryHeader() throws(WireError) -> Entry {
        Entry(
            serverVersion: try uvarint(), originClientFileId: try clientFileId(allowEmpty: true), originClientVersion: try uvarint(),
            clock: try u64(), instructions: [])
    }

    mutating func path() throws(WireError) -> [String] {
        let n = try count()
        var out: [String] = []
        for _ in 0..<n { out.append(try string()) }
        return out
    }

    /// Reads an `Instruction[]` (§5).
    public mutating func instructions() throws(WireError) -> [Instruction] {
        let n = try count(minimumItemSize: 3)
        var out: [Instruction] = []
        out.reserveCapacity(n)
        for _ in 0..<n {
            let at = offset
            let code = try u8()
            let className = try string()
            let key = try value()
            let op: Instruction.Operation
            switch code {
            case 1: op = .create
            case 2: op = .erase
            case 3: op = .set(path: try path(), value: try value())
            case 4: op = .listInsert(path: try path(), id: try elementId(), after: try elementId(), value: try value())
            case 5: op = .listSet(path: try path(), id: try elementId(), value: try value())
            case 6: op = .listErase(path: try path(), id: try elementId())
            case 7: op = .setAdd(path: try path(), value: try value())
            case 8: op = .setErase(path: try path(), value: try value())
            case 9: op = .mapSet(path: try path(), key: try string(), value: try value())
            case 10: op = .mapErase(path: try path(), key: try string())
            case 11:
                let p = try path()
                let k = try count(minimumItemSize: 10)
                var ids: [ElementId] = []
                ids.reserveCapacity(k)
                for _ in 0..<k { ids.append(try elementId()) }
                let valuesAt = offset
                guard case .list(let values) = try value(), values.count == ids.count else {
                    throw WireError(offset: valuesAt, "a list state whose values are not a list of one value per identity")
                }
                op = .listState(path: p, ids: ids, values: values)
            default: throw WireError(offset: at, "unknown instruction \(code)")
            }
            out.append(Instruction(className, key, op))
        }
        return out
    }
}
