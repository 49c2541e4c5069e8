import Foundation
import RealmQuery
import RealmStorage
import RealmSyncProtocol

/// The sync metadata a client file keeps beside its data (Spec/SYNC.md §7.1), in two tables of
/// its own that RealmSwift's schema never shows (names starting with `__`):
///
/// - `__sync_state`, one object: the client file identity, the newest integrated server version,
///   the upload cursor, the newest converted local version, the newest integrated own version, the
///   hybrid logical clock, and the subscription set with its version and state;
/// - `__sync_upload`, one object per local commit still to be integrated: its client version, its
///   clock and its upload's bytes.
///
/// Every change to them is written in the same commit as the data it describes.
struct SyncFileState: Equatable, Sendable {
    var clientFileId: [UInt8] = []
    var serverVersion: UInt64 = 0
    var uploadAcked: UInt64 = 0
    var convertedThrough: UInt64 = 0
    var integratedOwn: UInt64 = 0
    var clock: UInt64 = 0
    var querySetVersion: UInt64 = 0
    /// 0 pending, 1 complete, 2 error.
    var queryState: Int64 = 0
    /// The subscription set versions saved over while still pending (RealmSwift's superseded
    /// sets), the newest 100.
    var superseded: [UInt64] = []
    var queryError = ""
    var subscriptions: [StoredSubscription] = []
    /// 16 random bytes drawn when the state is made: the client file part of the identities of
    /// the list elements this file inserts (Spec/SYNC.md §5), known before the server assigns the
    /// file its identity.
    var origin: [UInt8] = (0..<16).map { _ in UInt8.random(in: 0...255) }

    static let table = "__sync_state"
    static let uploads = "__sync_upload"

    static let columns: [ColumnSchema] = [
        ColumnSchema("clientFileId", .binary), ColumnSchema("serverVersion", .int), ColumnSchema("uploadAcked", .int),
        ColumnSchema("convertedThrough", .int), ColumnSchema("integratedOwn", .int), ColumnSchema("clock", .int),
        ColumnSchema("querySetVersion", .int), ColumnSchema("queryState", .int), ColumnSchema("queryError", .string),
        ColumnSchema("subscriptions", .binary), ColumnSchema("origin", .binary), ColumnSchema("superseded", .binary),
    ]

    init() {}

    init(_ values: [String: StorageValue]) throws {
        func int(_ name: String) -> Int64 { if case .int(let v)? = values[name] { v } else { 0 } }
        if case .binary(let b)? = values["clientFileId"] { clientFileId = b }
        serverVersion = UInt64(max(0, int("serverVersion")))
        uploadAcked = UInt64(max(0, int("uploadAcked")))
        convertedThrough = UInt64(max(0, int("convertedThrough")))
        integratedOwn = UInt64(max(0, int("integratedOwn")))
        clock = UInt64(bitPattern: int("clock"))
        querySetVersion = UInt64(max(0, int("querySetVersion")))
        queryState = int("queryState")
        if case .binary(let b)? = values["superseded"] {
            var r = WireReader(b)
            while !r.isAtEnd, let v = try? r.uvarint() { superseded.append(v) }
        }
        if case .string(let s)? = values["queryError"] { queryError = s }
        if case .binary(let b)? = values["subscriptions"] { subscriptions = try StoredSubscription.decode(b) }
        if case .binary(let b)? = values["origin"], b.count == 16 { origin = b }
    }

    var values: [String: StorageValue] {
        [
            "clientFileId": .binary(clientFileId), "serverVersion": .int(Int64(serverVersion)), "uploadAcked": .int(Int64(uploadAcked)),
            "convertedThrough": .int(Int64(convertedThrough)), "integratedOwn": .int(Int64(integratedOwn)),
            "clock": .int(Int64(bitPattern: clock)), "querySetVersion": .int(Int64(querySetVersion)), "queryState": .int(queryState),
            "queryError": .string(queryError), "subscriptions": .binary(StoredSubscription.encode(subscriptions)),
            "origin": .binary(origin), "superseded": .binary(Self.encoded(superseded)),
        ]
    }

    private static func encoded(_ versions: [UInt64]) -> [UInt8] {
        var w = WireWriter()
        for v in versions { w.uvarint(v) }
        return w.bytes
    }

    /// The newest local version converted to uploads, as `snapshot` holds it (nil: no sync state
    /// yet); one value, not the whole state (read after every local commit).
    static func convertedThrough(_ snapshot: Snapshot) throws -> UInt64? {
        guard snapshot.catalog.table(table) != nil, let key = try snapshot.objectKeys(table).first,
            case .int(let v) = try snapshot.value(table, key, "convertedThrough")
        else { return nil }
        return UInt64(max(0, v))
    }

    /// The state as `snapshot` holds it; nil when the file has no sync state yet.
    static func read(_ snapshot: Snapshot) throws -> SyncFileState? {
        guard snapshot.catalog.table(table) != nil, let key = try snapshot.objectKeys(table).first else { return nil }
        return try SyncFileState(try snapshot.object(table, key))
    }

    /// The state as the open transaction `tx` holds it, creating the tables on first use (the
    /// first local version to upload is then the one after `tx`'s base).
    static func read(_ tx: WriteTransaction) throws -> SyncFileState {
        if tx.catalog.table(table) == nil {
            try tx.createTable(table)
            for c in columns { try tx.addColumn(table, c) }
            try tx.createTable(uploads)
            for c in [ColumnSchema("clientVersion", .int), ColumnSchema("clock", .int), ColumnSchema("upload", .binary)] {
                try tx.addColumn(uploads, c)
            }
            var s = SyncFileState()
            s.convertedThrough = tx.baseVersion
            s.uploadAcked = tx.baseVersion
            s.integratedOwn = tx.baseVersion
            try tx.insert(table, s.values)
            return s
        }
        guard let key = try tx.objectKeys(table).first else { throw SyncError(.clientInternalError, "the file's sync state is missing") }
        if let t = tx.catalog.table(table), t.columns.count < columns.count + 1 {
            for c in columns where t.column(c.name) == nil { try tx.addColumn(table, c) }  // a file of an earlier draft
        }
        var out: [String: StorageValue] = [:]
        for c in columns { out[c.name] = try tx.value(table, key, c.name) }
        return try SyncFileState(out)
    }

    /// Writes the state in `tx`; with `old` (the state as read), only what differs from it.
    func write(_ tx: WriteTransaction, over old: SyncFileState? = nil) throws {
        guard let key = try tx.objectKeys(Self.table).first else {
            throw SyncError(.clientInternalError, "the file's sync state is missing")
        }
        let before = old?.values
        for (name, value) in values where before?[name].map({ !$0.bitwiseEquals(value) }) ?? true {
            try tx.set(Self.table, key, name, value)
        }
    }
}

/// A subscription as the file keeps it.
struct StoredSubscription: Equatable, Sendable {
    var name: String
    var className: String
    var query: String
    var createdAt: Date
    var updatedAt: Date

    static func encode(_ subs: [StoredSubscription]) -> [UInt8] {
        var w = WireWriter()
        w.count(subs.count)
        for s in subs {
            w.string(s.name)
            w.string(s.className)
            w.string(s.query)
            w.u64(UInt64(max(0, s.createdAt.timeIntervalSince1970 * 1000)))
            w.u64(UInt64(max(0, s.updatedAt.timeIntervalSince1970 * 1000)))
        }
        return w.bytes
    }

    static func decode(_ bytes: [UInt8]) throws -> [StoredSubscription] {
        guard !bytes.isEmpty else { return [] }
        do {
            var r = WireReader(bytes)
            var out: [StoredSubscription] = []
            for _ in 0..<(try r.count(minimumItemSize: 19)) {
                let name = try r.string()
                let cls = try r.string()
                let query = try r.string()
                let created = Date(timeIntervalSince1970: Double(try r.u64()) / 1000)
                let updated = Date(timeIntervalSince1970: Double(try r.u64()) / 1000)
                out.append(StoredSubscription(name: name, className: cls, query: query, createdAt: created, updatedAt: updated))
            }
            return out
        } catch {
            throw SyncError(.clientInternalError, "the file's subscription set is damaged: \(error)")
        }
    }
}

/// One not yet integrated upload of `__sync_upload`.
struct JournalEntry: Sendable {
    var key: ObjectKey
    var upload: Upload
    /// The upload's encoded size (its row's bytes).
    var size: Int
}

/// The synced part of a file's schema: every class with a primary key `_id`, and the embedded
/// classes (classes whose names start with `__` are not synced). `classes` holds the top-level
/// classes, whose objects are uploaded and downloaded; `embeddedClasses` the embedded ones, whose
/// objects travel inside their owners (Spec/SYNC.md §6.6).
struct SyncedSchema: Sendable {
    var classes: [SyncClass] = []
    var embeddedClasses: [SyncClass] = []
    var problems: [String] = []

    /// Every class the server is told of (§4.1).
    var all: [SyncClass] { classes + embeddedClasses }

    init(_ catalog: Catalog, embedded: Set<String>) {
        for t in catalog.tables where !t.name.hasPrefix("__") {
            if embedded.contains(t.name) {
                embeddedClasses.append(SyncClass(t.name, primaryKeyTag: 0, isEmbedded: true, properties: Self.properties(t, embedded)))
                continue
            }
            guard let pk = t.primaryKeyColumn, pk.name == "_id" else {
                problems.append(
                    "the class \(t.name) cannot be synced: a synced class needs a primary key named _id (ObjectId, String, Int or UUID)")
                continue
            }
            classes.append(SyncClass(t.name, primaryKeyTag: Self.tag(pk.type), properties: Self.properties(t, embedded)))
        }
    }

    private static func properties(_ t: TableSchema, _ embedded: Set<String>) -> [SyncClass.Property] {
        var props: [SyncClass.Property] = []
        for c in t.columns where c.name != "_id" {
            var flags: UInt8 = c.isNullable || (c.type == .link && !c.isList && !c.isMap) ? 1 : 0
            if c.isSet { flags |= 4 } else if c.isList { flags |= 2 }
            if c.isMap { flags |= 8 }
            let isEmbedded = c.type == .link && embedded.contains(c.linkTarget ?? "")
            props.append(
                SyncClass.Property(c.name, valueTag: isEmbedded ? 13 : Self.tag(c.type), flags: flags, linkTarget: c.linkTarget ?? ""))
        }
        return props
    }

    func synced(_ name: String) -> Bool { classes.contains { $0.name == name } }

    static func tag(_ type: ColumnType) -> UInt8 {
        switch type {
        case .bool: 1
        case .int: 3
        case .float: 4
        case .double: 5
        case .string: 6
        case .binary: 7
        case .timestamp: 8
        case .objectId: 9
        case .uuid: 10
        case .decimal128: 11
        case .link: 12
        case .mixed: 17
        }
    }
}

/// Turns local commits into uploads and applies downloads and bootstraps as local commits
/// (Spec/SYNC.md §5, §7).
enum SyncFile {
    // MARK: Values

    /// The UUID of 16 bytes.
    static func uuid(_ b: [UInt8]) -> UUID {
        UUID(uuid: (b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7], b[8], b[9], b[10], b[11], b[12], b[13], b[14], b[15]))
    }

    static func uuidBytes(_ u: UUID) -> [UInt8] {
        let t = u.uuid
        return [t.0, t.1, t.2, t.3, t.4, t.5, t.6, t.7, t.8, t.9, t.10, t.11, t.12, t.13, t.14, t.15]
    }

    static func syncValue(_ v: StorageValue, column: ColumnSchema, at snapshot: any QuerySource) throws -> SyncValue {
        if column.type == .mixed { return try mixedSyncValue(v, at: snapshot) }
        switch v {
        case .null: return .null
        case .int(let i): return .int(i)
        case .bool(let b): return .bool(b)
        case .float(let f): return .float(f)
        case .double(let d): return .double(d)
        case .string(let s): return .string(s)
        case .binary(let b): return .binary(b)
        case .timestamp(var s, var ns):
            if ns < 0 {
                s -= 1
                ns += 1_000_000_000
            }
            return .timestamp(seconds: s, nanoseconds: UInt32(ns))
        case .objectId(let b): return .objectId(b)
        case .uuid(let u): return .uuid(uuidBytes(u))
        case .decimal128(let lo, let hi): return .decimal128(low: lo, high: hi)
        case .link(let key):
            guard let target = column.linkTarget, try snapshot.contains(target, key) else { return .null }
            if let table = snapshot.catalog.table(target), table.primaryKeyColumn == nil {
                return try embeddedSyncValue(table, key, at: snapshot)
            }
            let pk = try snapshot.value(target, key, "_id")
            return .link(class: target, primaryKey: try syncValue(pk, column: ColumnSchema("_id", .int), at: snapshot))
        case .typedLink, .list, .map: throw SyncError(.clientInternalError, "a value of a kind that cannot be synced: \(v)")
        }
    }

    /// The stored form of `v` for `column`; nil when it does not fit (the instruction is skipped).
    static func storageValue(_ v: SyncValue, column: ColumnSchema, tx: WriteTransaction) throws -> StorageValue? {
        switch (v, column.type) {
        case (.null, _): return column.isNullable || column.type == .link || column.type == .mixed ? .null : nil
        case (.mixed(let inner), .mixed): return try mixedStorageValue(inner, tx: tx)
        case (.embedded(let states), .link):
            guard let target = tx.catalog.table(column.linkTarget ?? ""), target.primaryKeyColumn == nil else { return nil }
            return .link(try insertEmbedded(states, into: target, tx: tx))
        case (.link(let cls, let pk), .link):
            guard cls == column.linkTarget, let target = tx.catalog.table(cls), let pkColumn = target.primaryKeyColumn,
                let key = try storageValue(pk, column: pkColumn, tx: tx)
            else { return .null }
            return try tx.objectKey(cls, primaryKey: key).map { .link($0) } ?? .null
        default: return scalarStorageValue(v, type: column.type, nullable: column.isNullable)
        }
    }

    /// The value of a column of `type` (not a link, not mixed) for `v`: nil when `v` does not fit
    /// it, or is null and the column takes none (no value).
    static func scalarStorageValue(_ v: SyncValue, type: ColumnType, nullable: Bool) -> StorageValue? {
        switch (v, type) {
        case (.null, _): return nullable ? .null : nil
        case (.bool(let b), .bool): return .bool(b)
        case (.int(let i), .int): return .int(i)
        case (.float(let f), .float): return .float(f)
        case (.double(let d), .double): return .double(d)
        case (.string(let s), .string): return .string(s)
        case (.binary(let b), .binary): return .binary(b)
        case (.timestamp(let s, let ns), .timestamp):
            return s < 0 && ns > 0
                ? .timestamp(seconds: s + 1, nanoseconds: Int32(ns) - 1_000_000_000) : .timestamp(seconds: s, nanoseconds: Int32(ns))
        case (.objectId(let b), .objectId): return .objectId(b)
        case (.uuid(let b), .uuid):
            guard b.count == 16 else { return nil }
            return .uuid(uuid(b))
        case (.decimal128(let lo, let hi), .decimal128): return .decimal128(low: lo, high: hi)
        default: return nil
        }
    }

    static func primaryKey(_ v: SyncValue, of table: TableSchema, tx: WriteTransaction) throws -> StorageValue? {
        guard let pk = table.primaryKeyColumn else { return nil }
        return try storageValue(v, column: pk, tx: tx)
    }

    /// The object of class `className` whose primary key is `primaryKey`, if the file holds it.
    static func objectKey(_ className: String, _ primaryKey: SyncValue, tx: WriteTransaction) throws -> ObjectKey? {
        guard let table = tx.catalog.table(className), let pk = try self.primaryKey(primaryKey, of: table, tx: tx) else { return nil }
        return try tx.objectKey(className, primaryKey: pk)
    }

    // MARK: Transactions

    /// Runs `body` in a write transaction of `store` with the file's sync state (created on first
    /// use), after converting the local commits not yet converted, and commits both. Returns
    /// whether the sync state was created and the objects the conversion rejected.
    @discardableResult
    static func transaction(
        _ store: Store, embedded: Set<String>, _ body: (WriteTransaction, inout SyncFileState) throws -> Void = { _, _ in }
    ) throws -> (isNew: Bool, rejected: [Rejected]) {
        let tx = try store.beginWrite()
        do {
            let isNew = tx.catalog.table(SyncFileState.table) == nil
            var state = try SyncFileState.read(tx)
            let read = state
            let rejected = try convert(tx, &state, head: try store.snapshot(kind: "sync"), embedded: embedded)
            try body(tx, &state)
            // This commit is the client's own (it writes the state): nothing of it is uploaded.
            state.convertedThrough = tx.baseVersion + 1
            try state.write(tx, over: read)
            _ = try tx.commit()
            return (isNew, rejected)
        } catch {
            if !tx.isFinished { tx.cancel() }
            throw error
        }
    }

    // MARK: From commits to uploads

    /// Converts every local commit after `state.convertedThrough` up to `tx`'s base into uploads
    /// appended to the journal (commits of the sync client itself, which write `__sync_state`,
    /// are passed over).
    /// - Throws: ``SyncError`` `.clientResetError` when the versions are no longer in the file.
    @discardableResult
    static func convert(_ tx: WriteTransaction, _ state: inout SyncFileState, head: Snapshot, embedded: Set<String>) throws
        -> [Rejected]
    {
        guard state.convertedThrough < head.version else { return [] }
        let chain: [Snapshot]
        do {
            chain = try head.history(since: state.convertedThrough > 0 ? state.convertedThrough - 1 : 0)
        } catch {
            throw SyncError(
                .clientResetError,
                "the local commits after version \(state.convertedThrough) are no longer in the file (it was compacted before they were uploaded): \(error)"
            )
        }
        var rejected: [Rejected] = []
        var previous: Snapshot? = nil
        for snap in chain {
            defer { previous = snap }
            guard snap.version > state.convertedThrough else { continue }
            let changes = try snap.changeset()
            guard changes.tables[SyncFileState.table] == nil else { continue }
            var clock = HybridClock(last: state.clock)
            let uploadClock = clock.next(milliseconds: UInt64(max(0, snap.commitTime.timeIntervalSince1970 * 1000)))
            let described = try describe(
                changes, in: snap, before: previous, subscriptions: state.subscriptions, embedded: embedded,
                ids: ElementIdMaker(clock: uploadClock, origin: state.origin), lists: ListIdentities(tx))
            rejected += described.rejected
            try append(described.instructions, version: snap.version, clock: uploadClock, to: tx, &state)
        }
        state.convertedThrough = head.version
        try undo(rejected, in: tx)
        return rejected
    }

    /// Describes the open transaction `tx` (a Realm's commit, from its commit hook) as an upload
    /// appended to the journal in the same transaction, so the commit and its upload are durable
    /// together. Does nothing, leaving the commit to ``convert(_:_:head:embedded:)``, when commits
    /// before it are not converted yet (they were made by another process).
    static func describe(_ tx: WriteTransaction, base: Snapshot, embedded: Set<String>) throws -> [Rejected] {
        guard tx.catalog.table(SyncFileState.table) != nil else { return [] }
        // The state as the commit's base holds it (the commit has not touched it): one lookup of
        // its row, not one per value (this runs in every local commit).
        guard base.version == tx.baseVersion, var state = try SyncFileState.read(base), state.convertedThrough == tx.baseVersion else {
            return []
        }
        let read = state
        let changes = tx.pendingChangeset()
        var clock = HybridClock(last: state.clock)
        let uploadClock = clock.next(milliseconds: UInt64(max(0, Date().timeIntervalSince1970 * 1000)))
        let described = try describe(
            changes, in: tx, before: base, subscriptions: state.subscriptions, embedded: embedded,
            ids: ElementIdMaker(clock: uploadClock, origin: state.origin), lists: ListIdentities(tx))
        // The version the commit will have (one more unless an earlier commit failed, and then
        // higher: client versions stay ascending either way).
        try append(described.instructions, version: tx.baseVersion + 1, clock: uploadClock, to: tx, &state)
        try undo(described.rejected, in: tx)
        state.convertedThrough = tx.baseVersion + 1
        try state.write(tx, over: read)
        return described.rejected
    }

    /// The instructions of one commit's `changes` (Spec/SYNC.md §5), reading values in `source`
    /// (the commit) and the primary keys of deleted objects and old collections in `before` (its
    /// parent); list elements it inserts take identities from `maker`, and the lists' identities
    /// after the commit are recorded in `lists`.
    static func describe(
        _ changes: Changeset, in source: any QuerySource, before: Snapshot?, subscriptions: [StoredSubscription], embedded: Set<String>,
        ids maker: ElementIdMaker, lists: ListIdentities
    ) throws -> (instructions: [Instruction], rejected: [Rejected]) {
        var maker = maker
        let schema = SyncedSchema(source.catalog, embedded: embedded)
        // Parsed and bound only for a commit that creates objects (most commits do not).
        var view: SubscriptionView?
        var instructions: [Instruction] = []
        var rejected: [Rejected] = []
        for cls in schema.classes {
            guard let t = changes.tables[cls.name], let table = source.catalog.table(cls.name), let pkColumn = table.primaryKeyColumn
            else { continue }
            let columns = table.columns.filter { $0.name != "_id" }
            func pk(_ key: ObjectKey, _ s: any QuerySource) throws -> SyncValue {
                try syncValue(try s.value(cls.name, key, "_id"), column: pkColumn, at: s)
            }
            var rejectedKeys = Set<ObjectKey>()
            for key in t.inserted.sorted(by: { $0.rawValue < $1.rawValue }) {
                guard try source.contains(cls.name, key) else { continue }
                let id = try pk(key, source)
                if view == nil { view = SubscriptionView(subscriptions, catalog: source.catalog) }
                guard try view?.allows(cls.name, key, in: source) ?? false else {
                    // A write outside every subscription: not uploaded, and undone locally
                    // (Spec/SYNC.md §7.4).
                    rejectedKeys.insert(key)
                    rejected.append(Rejected(className: cls.name, primaryKey: id))
                    continue
                }
                instructions.append(Instruction(cls.name, id, .create))
                for c in columns {
                    let v = try source.value(cls.name, key, c.name)
                    if c.isList || c.isMap {
                        instructions += try describeNew(
                            v, column: c, object: id, className: cls.name, at: source, ids: &maker, lists: lists)
                    } else {
                        instructions.append(Instruction(cls.name, id, .set(path: [c.name], value: try syncValue(v, column: c, at: source))))
                    }
                }
            }
            for key in t.modified.sorted(by: { $0.rawValue < $1.rawValue }) where !rejectedKeys.contains(key) {
                guard try source.contains(cls.name, key) else { continue }
                let id = try pk(key, source)
                for c in columns where t.mayHaveSet(c.id, of: key) {
                    let v = try source.value(cls.name, key, c.name)
                    if c.isList || c.isMap {
                        let old: StorageValue =
                            if let before, try before.contains(cls.name, key), before.catalog.table(cls.name)?.column(c.name) != nil {
                                try before.value(cls.name, key, c.name)
                            } else { c.isMap ? .map([:]) : .list([]) }
                        instructions += try describeChange(
                            from: old, known: c.isSet || c.isMap ? nil : try lists.known(cls.name, id, c.name), to: v, column: c,
                            object: id,
                            className: cls.name, at: source, oldAt: before, ids: &maker, lists: lists)
                    } else {
                        instructions.append(Instruction(cls.name, id, .set(path: [c.name], value: try syncValue(v, column: c, at: source))))
                    }
                }
            }
            if let before {
                for key in t.deleted.sorted(by: { $0.rawValue < $1.rawValue }) where try before.contains(cls.name, key) {
                    let id = try pk(key, before)
                    instructions.append(Instruction(cls.name, id, .erase))
                    try lists.remove(cls.name, id, table: table)
                }
            }
        }
        instructions += try describeEmbedded(changes, in: source, before: before, schema: schema, ids: &maker, lists: lists)
        return (instructions, rejected)
    }

    /// Appends an upload of `instructions` (none: nothing) made at `clock` to the journal.
    static func append(_ instructions: [Instruction], version: UInt64, clock: UInt64, to tx: WriteTransaction, _ state: inout SyncFileState)
        throws
    {
        guard !instructions.isEmpty else { return }
        let upload = Upload(clientVersion: version, clock: clock, instructions: instructions)
        state.clock = max(state.clock, clock)
        try tx.insert(
            SyncFileState.uploads,
            [
                "clientVersion": .int(Int64(version)), "clock": .int(Int64(bitPattern: upload.clock)),
                "upload": .binary(SyncMessage.upload([upload]).encoded()),
            ])
    }

    /// The compensating write: the rejected objects leave the file.
    static func undo(_ rejected: [Rejected], in tx: WriteTransaction) throws {
        for r in rejected {
            guard let table = tx.catalog.table(r.className), let pk = try primaryKey(r.primaryKey, of: table, tx: tx),
                let key = try tx.objectKey(r.className, primaryKey: pk)
            else { continue }
            try deleteCascading(table, key, tx: tx)
        }
    }

    /// An object created outside every subscription, which the conversion undid.
    struct Rejected: Sendable, Equatable {
        var className: String
        var primaryKey: SyncValue
    }

    /// What the subscriptions let a client create: per class, the bound queries of its
    /// subscriptions. A query the local engine cannot bind lets everything through (the server
    /// decides).
    struct SubscriptionView {
        var predicates: [String: [BoundPredicate?]] = [:]

        init(_ subscriptions: [StoredSubscription], catalog: Catalog) {
            for s in subscriptions {
                guard let table = catalog.table(s.className) else { continue }
                let bound = try? QueryPredicate.parse(s.query).bind(to: table, in: catalog)
                predicates[s.className, default: []].append(bound)
            }
        }

        func allows(_ cls: String, _ key: ObjectKey, in snapshot: any QuerySource) throws -> Bool {
            guard let list = predicates[cls] else { return false }
            for p in list {
                guard let p else { return true }
                if (try? QueryEvaluator(snapshot).matches(cls, key, p)) ?? true { return true }
            }
            return false
        }
    }

    /// The journal decoded, kept by a client between its transactions (Spec/SYNC.md §7.3): rows
    /// are decoded once, when first seen, and what the pending writes (every journal row: a row
    /// leaves when its own entry is integrated) wrote is counted as rows come and go. Reading the
    /// whole journal at every upload and download made a stream of commits cost quadratic time
    /// (sync benchmark S2).
    final class Journal {
        private(set) var entries: [JournalEntry] = []
        private var lastKey: Int64 = -1
        private var properties: [Pending.PropertyKey: Int] = [:]
        private var objects: [SyncStoreModel.ObjectID: Int] = [:]

        /// Decodes the rows added since the last call (row keys only grow).
        func refresh(_ source: any QuerySource) throws {
            guard source.catalog.table(SyncFileState.uploads) != nil else { return }
            let keys = try source.objectKeys(SyncFileState.uploads)
            guard let last = keys.last, last.rawValue > lastKey else { return }
            var i = keys.endIndex
            while i > keys.startIndex && keys[i - 1].rawValue > lastKey { i -= 1 }
            for key in keys[i...] {
                guard case .binary(let bytes) = try source.value(SyncFileState.uploads, key, "upload"),
                    case .upload(let uploads) = try SyncMessage.decode(bytes)
                else { throw SyncError(.clientInternalError, "the file's upload journal is damaged") }
                for u in uploads {
                    entries.append(JournalEntry(key: key, upload: u, size: bytes.count / max(1, uploads.count)))
                    count(u, +1)
                }
                lastKey = key.rawValue
            }
        }

        /// Removes the rows of client versions through `version` (their own entry arrived).
        func integrate(through version: UInt64, in tx: WriteTransaction) throws {
            var n = 0
            while n < entries.count && entries[n].upload.clientVersion <= version { n += 1 }
            guard n > 0 else { return }
            for e in entries[..<n] {
                if try tx.contains(SyncFileState.uploads, e.key) { try tx.delete(SyncFileState.uploads, e.key) }
                count(e.upload, -1)
            }
            entries.removeFirst(n)
        }

        private func count(_ upload: Upload, _ delta: Int) {
            for i in upload.instructions {
                let id = SyncStoreModel.ObjectID(i.className, i.primaryKey)
                objects[id, default: 0] += delta
                if objects[id] == 0 { objects[id] = nil }
                if let path = i.operation.path {
                    // A write inside an embedded object also makes the embedded property pending.
                    for p in path.count > 1 ? [path, [path[0]]] : [path] {
                        let key = Pending.PropertyKey(className: i.className, primaryKey: i.primaryKey, path: p)
                        properties[key, default: 0] += delta
                        if properties[key] == 0 { properties[key] = nil }
                    }
                }
            }
        }

        /// What the pending writes wrote.
        var pending: Pending { Pending(properties: properties, objects: objects) }
    }

    /// What pending local writes wrote (Spec/SYNC.md §7.3).
    struct Pending {
        let properties: [PropertyKey: Int]
        let objects: [SyncStoreModel.ObjectID: Int]

        func wrote(_ key: PropertyKey) -> Bool { properties[key] != nil }
        func touched(_ id: SyncStoreModel.ObjectID) -> Bool { objects[id] != nil }

        struct PropertyKey: Hashable {
            var className: String
            var primaryKey: SyncValue
            var path: [String]
        }
    }

    /// Applies downloaded entries in `tx` (Spec/SYNC.md §7.3).
    static func apply(_ entries: [Entry], _ tx: WriteTransaction, _ state: inout SyncFileState, journal: Journal) throws {
        try journal.refresh(tx)
        for entry in entries {
            if entry.originClientFileId == state.clientFileId {
                state.integratedOwn = max(state.integratedOwn, entry.originClientVersion)
                try journal.integrate(through: state.integratedOwn, in: tx)
            }
            let pending = journal.pending
            let creates = entry.instructions.filter { if case .create = $0.operation { true } else { false } }
            // Consecutive erasures of one class go together: links to them are looked for once.
            var erasing: TableSchema?
            var erased = Set<ObjectKey>()
            for i in creates + entry.instructions.filter({ if case .create = $0.operation { false } else { true } }) {
                let erases = i.operation == .erase
                if let e = erasing, !erases || e.name != i.className {
                    try erase(erased, of: e, tx: tx)
                    erasing = nil
                    erased = []
                }
                guard erases, let table = tx.catalog.table(i.className), !i.className.hasPrefix("__") else {
                    try apply(i, tx, pending)
                    continue
                }
                guard let key = try objectKey(i.className, i.primaryKey, tx: tx) else { continue }
                erasing = table
                erased.insert(key)
            }
            if let e = erasing { try erase(erased, of: e, tx: tx) }
            // States that linked to the objects created, which the file did not hold, get their
            // links (§7.3).
            let unresolved = UnresolvedLinks(tx)
            if !unresolved.isEmpty {
                for c in creates {
                    for change in try unresolved.arrived(SyncStoreModel.ObjectID(c.className, c.primaryKey)) {
                        try applyAgain(change, tx, pending)
                    }
                }
            }
            state.serverVersion = max(state.serverVersion, entry.serverVersion)
        }
    }

    static func apply(_ i: Instruction, _ tx: WriteTransaction, _ pending: Pending) throws {
        guard let table = tx.catalog.table(i.className), !i.className.hasPrefix("__"),
            let pk = try primaryKey(i.primaryKey, of: table, tx: tx)
        else { return }
        let key = try tx.objectKey(i.className, primaryKey: pk)
        switch i.operation {
        case .create:
            if key == nil { try tx.insert(i.className, ["_id": pk]) }
        case .erase:
            if let key { try erase([key], of: table, tx: tx) }
        case .set(let path, _), .listState(let path, _, _):
            guard let key, path.count == 1, let column = table.column(path[0]), column.name != "_id",
                !pending.wrote(Pending.PropertyKey(className: i.className, primaryKey: i.primaryKey, path: path))
            else { return }
            if column.isList || column.isMap {
                try replaceCollection(i.operation, of: i, key: key, column: column, tx: tx)
            } else if case .set(_, let value) = i.operation, holdsEmbedded(column, in: tx.catalog) {
                try setEmbedded(value, table, key, column, tx: tx)
            } else if case .set(_, let value) = i.operation, let v = try storageValue(value, column: column, tx: tx) {
                try tx.set(i.className, key, column.name, v)
            }
            // Links left out for want of their objects wait for them (§7.3).
            if column.type == .link || column.type == .mixed {
                let value: SyncValue =
                    switch i.operation {
                    case .set(_, let v): v
                    case .listState(_, _, let values): .list(values)
                    default: .null
                    }
                let missing = try missingTargets(of: value, tx: tx)
                let unresolved = UnresolvedLinks(tx)
                if !missing.isEmpty || !unresolved.isEmpty { try unresolved.update(i, missing: missing) }
            }
        default:
            return  // a server sends collections whole (SET of a set or map, LIST_STATE of a list)
        }
    }

    /// Applies `change` again, a recorded state whose missing objects arrived (§7.3); forgotten
    /// when its object is gone.
    static func applyAgain(_ change: Instruction, _ tx: WriteTransaction, _ pending: Pending) throws {
        guard try objectKey(change.className, change.primaryKey, tx: tx) != nil else {
            try UnresolvedLinks(tx).update(change, missing: [])
            return
        }
        try apply(change, tx, pending)
    }

    /// Erases objects `keys` of the top-level class `table` (a download's `ERASE`, a bootstrap's
    /// removals): links to them go first (recorded, should they come back), then the objects with
    /// their embedded objects, their lists' identities and what their properties waited for.
    static func erase(_ keys: Set<ObjectKey>, of table: TableSchema, tx: WriteTransaction) throws {
        guard let pkColumn = table.primaryKeyColumn, !keys.isEmpty else { return }
        var ids: [ObjectKey: SyncStoreModel.ObjectID] = [:]
        for key in keys {
            ids[key] = SyncStoreModel.ObjectID(
                table.name, try syncValue(try tx.value(table.name, key, pkColumn.name), column: pkColumn, at: tx))
        }
        try unlink(ids, of: table, tx: tx)
        let unresolved = UnresolvedLinks(tx)
        let lists = ListIdentities(tx)
        for (key, id) in ids {
            try deleteCascading(table, key, tx: tx)
            try lists.remove(table.name, id.primaryKey, table: table)
            try unresolved.forgetObject(table.name, id.primaryKey, table: table)
        }
    }

    /// Applies a complete bootstrap in `tx`: every object it holds, and the removal of every
    /// object of a synced class it does not hold (pending local writes excepted).
    static func applyBootstrap(
        _ tables: [BootstrapTable], _ tx: WriteTransaction, _ state: SyncFileState, embedded: Set<String>, journal: Journal
    ) throws {
        try journal.refresh(tx)
        let pending = journal.pending
        let schema = SyncedSchema(tx.catalog, embedded: embedded)
        // The classes whose tables hold objects before the bootstrap: only their objects are
        // looked up, and only they can have objects to remove (a new client's tables are empty).
        var nonEmpty = Set<String>()
        for cls in schema.classes where try tx.objectCount(cls.name) > 0 { nonEmpty.insert(cls.name) }
        var held = Set<SyncStoreModel.ObjectID>()
        // An object the file does not hold is inserted whole, its scalar values with it (one
        // insertion of a row in column order); links wait for the second pass, when every object
        // of the bootstrap exists.
        var later: [ObjectState] = []
        var positions: [String: [String: Int]] = [:]
        for t in tables {
            guard let table = tx.catalog.table(t.className), !t.className.hasPrefix("__"), let pkColumn = table.primaryKeyColumn else {
                continue
            }
            let position =
                positions[t.className]
                ?? Dictionary(uniqueKeysWithValues: table.columns.enumerated().map { ($0.element.name, $0.offset) })
            positions[t.className] = position
            // Each column's place in a row (-1: none), what it holds, and whether its values wait
            // for the second pass (kept apart: a column schema copied per value was a visible cost).
            let index = t.properties.map { name in name == "_id" ? -1 : position[name] ?? -1 }
            let types = index.map { $0 < 0 ? ColumnType.int : table.columns[$0].type }
            let nullable = index.map { $0 < 0 || table.columns[$0].isNullable }
            let deferred = index.map { i in
                i >= 0
                    && (table.columns[i].type == .link || table.columns[i].type == .mixed || table.columns[i].isList
                        || table.columns[i].isMap)
            }
            // A null of a column that takes none is no value (the object keeps its own).
            func state(_ c: Int, _ r: Int) -> PropertyState? {
                let v = t.columns[c][r]
                guard index[c] >= 0, v != .null || nullable[c] || deferred[c] else { return nil }
                return PropertyState(t.properties[c], v)
            }
            let mayHold = nonEmpty.contains(t.className)
            let keyIndex = position["_id"]!
            // One row array for the table: filled in place, never copied.
            var row = [StorageValue?](repeating: nil, count: table.columns.count)
            for r in t.keys.indices {
                guard let pk = try storageValue(t.keys[r], column: pkColumn, tx: tx) else { continue }
                let others = t.others.isEmpty ? [] : t.others[r]
                if mayHold {
                    held.insert(SyncStoreModel.ObjectID(t.className, t.keys[r]))
                    if try tx.objectKey(t.className, primaryKey: pk) != nil {
                        later.append(ObjectState(t.className, t.keys[r], t.properties.indices.compactMap { state($0, r) } + others))
                        continue
                    }
                }
                for i in row.indices { row[i] = nil }
                row[keyIndex] = pk
                var links: [PropertyState] = []
                for c in index.indices where index[c] >= 0 {
                    if deferred[c] {
                        links.append(PropertyState(t.properties[c], t.columns[c][r]))
                    } else if let v = scalarStorageValue(t.columns[c][r], type: types[c], nullable: nullable[c]) {
                        row[index[c]] = v
                    }
                }
                for p in others {
                    guard let i = position[p.name], p.name != "_id" else { continue }
                    let column = table.columns[i]
                    if column.type == .link || column.type == .mixed || column.isList || column.isMap {
                        links.append(p)
                    } else if let v = try storageValue(p.value, column: column, tx: tx) {
                        row[i] = v
                    }
                }
                _ = try tx.insert(t.className, values: row)
                if !links.isEmpty { later.append(ObjectState(t.className, t.keys[r], links)) }
            }
        }
        for o in later {
            for p in o.properties {
                let op: Instruction.Operation =
                    if case .list(let values) = p.value {
                        .listState(path: [p.name], ids: p.ids, values: values)
                    } else {
                        .set(path: [p.name], value: p.value)
                    }
                try apply(Instruction(o.className, o.primaryKey, op), tx, pending)
            }
        }
        for cls in schema.classes where nonEmpty.contains(cls.name) {
            guard let table = tx.catalog.table(cls.name), let pkColumn = table.primaryKeyColumn else { continue }
            var gone = Set<ObjectKey>()
            for key in try tx.objectKeys(cls.name) {
                let pk = try syncValue(try tx.value(cls.name, key, "_id"), column: pkColumn, at: tx)
                let id = SyncStoreModel.ObjectID(cls.name, pk)
                if !held.contains(id) && !pending.touched(id) { gone.insert(key) }
            }
            try erase(gone, of: table, tx: tx)
        }
        // States kept for objects the bootstrap brought (those of objects it holds were applied
        // again above; these are of objects a pending write keeps).
        let unresolved = UnresolvedLinks(tx)
        if !unresolved.isEmpty {
            for change in try unresolved.arrivedAll() { try applyAgain(change, tx, pending) }
        }
    }
}
