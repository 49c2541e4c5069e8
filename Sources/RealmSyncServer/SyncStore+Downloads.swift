import Foundation
import NIOCore
import PostgresNIO
import RealmSyncProtocol

/// A client's subscriptions compiled for one catalog: per class, the conditions any of which an
/// object must meet to be on the client.
struct CompiledSubscriptions: Sendable {
    var byClass: [String: [SubscriptionSQL]] = [:]

    init() {}

    init(_ subscriptions: [Subscription], catalog: Catalog) throws(SessionFailure) {
        for s in subscriptions { byClass[s.className, default: []].append(try SubscriptionSQL(s, catalog: catalog)) }
    }

    /// `(c1) OR (c2) …` for `className`, its values appended to `binds`; nil when nothing of the
    /// class is subscribed.
    func condition(_ className: String, into binds: inout PostgresBindings, offset: Int) throws -> String? {
        guard let list = byClass[className], !list.isEmpty else { return nil }
        var parts: [String] = []
        var offset = offset
        for s in list {
            parts.append("(" + (try s.bound(into: &binds, offset: offset)) + ")")
            offset += s.binds.count
        }
        return parts.joined(separator: " OR ")
    }
}

extension SyncStore {
    /// The subscriptions a client file last sent, and their version.
    func subscriptions(of clientFileId: [UInt8]) async throws -> (version: UInt64, subscriptions: [Subscription]) {
        var version: UInt64 = 0
        var list: [Subscription] = []
        for try await (v, name, cls, query) in try await client.query(
            "SELECT query_set_version, name, class, query FROM \(unescaped: table("_sync_subscriptions")) WHERE client_file_id = \(ByteBuffer(bytes: clientFileId)) ORDER BY position",
            logger: logger
        ).decode((Int64, String, String, String).self) {
            version = UInt64(v)
            list.append(Subscription(name: name, className: cls, query: query))
        }
        return (version, list)
    }

    /// Replaces a client file's subscriptions.
    func saveSubscriptions(_ list: [Subscription], version: UInt64, of clientFileId: [UInt8]) async throws {
        let id = ByteBuffer(bytes: clientFileId)
        try await transaction { c in
            try await c.query("DELETE FROM \(unescaped: table("_sync_subscriptions")) WHERE client_file_id = \(id)", logger: logger)
            for (i, s) in list.enumerated() {
                try await c.query(
                    "INSERT INTO \(unescaped: table("_sync_subscriptions")) VALUES (\(id), \(Int64(version)), \(Int32(i)), \(s.name), \(s.className), \(s.query))",
                    logger: logger)
            }
        }
    }

    /// The state a client is sent of an object: its primary key and every property set.
    static func state(_ row: PostgresRow, cls: SyncClass, catalog: Catalog) throws -> ObjectState {
        let key = try SQLMapping.value(row.first!, tag: cls.primaryKeyTag)
        let object = try object(row, cls: cls, catalog: catalog)
        let properties = cls.properties.compactMap { p in
            StoredValues.isPlain(p)
                ? object.properties[p.name].map { PropertyState(p.name, $0.value) } : StoredValues.state(of: p, in: object)
        }
        return ObjectState(cls.name, key, properties)
    }

    /// The columns a bootstrap reads of `cls`: the key, the plain properties and, when the class
    /// has other properties, `_sync_values` (no conflict state: a bootstrap sends values only).
    static func bootstrapColumns(of cls: SyncClass) -> [String] {
        let plain = cls.properties.filter(StoredValues.isPlain)
        return ["_id"] + plain.flatMap { $0.valueTag == 8 ? [$0.name, SQLMapping.nanosecondsColumn($0.name)] : [$0.name] }
            + (plain.count < cls.properties.count ? ["_sync_values"] : [])
    }

    /// The state a bootstrap sends of an object, from a row of ``bootstrapColumns(of:)``: every
    /// property with a value, and null for an optional property (or link) without one, so that it
    /// reads no conflict state (decoding `_sync_clocks` was most of a bootstrap's time on the
    /// server). A client that holds the object gets the same values as from ``state(_:cls:catalog:)``.
    static func bootstrapState(_ row: PostgresRow, cls: SyncClass, catalog: Catalog) throws -> ObjectState {
        // The cells in order, without copying the row into an array.
        var cells = row.makeIterator()
        func next() throws -> PostgresCell {
            guard let cell = cells.next() else { throw SyncServerError("a bootstrap row with fewer columns than its class") }
            return cell
        }
        let key = try SQLMapping.value(try next(), tag: cls.primaryKeyTag)
        var properties: [PropertyState] = []
        properties.reserveCapacity(cls.properties.count)
        for p in cls.properties where StoredValues.isPlain(p) {
            let cell = try next()
            let value = try SQLMapping.value(
                cell, tag: p.valueTag, nanoseconds: p.valueTag == 8 ? try next() : nil,
                link: p.valueTag == 12 ? (p.linkTarget, catalog.keyTag(p.linkTarget)!) : nil)
            if value != .null || p.flags & 1 != 0 { properties.append(PropertyState(p.name, value)) }
        }
        if let values = cells.next(), let bytes = try values.decode(ByteBuffer?.self) {
            var object = SyncStoreModel.Object(created: OrderKey(clock: 0, clientFileId: []))
            try StoredValues.decode(Array(bytes.readableBytesView), into: &object, clocks: nil)
            for p in cls.properties where !StoredValues.isPlain(p) {
                if let state = StoredValues.state(of: p, in: object) { properties.append(state) }
            }
        }
        return ObjectState(cls.name, key, properties)
    }

    /// Every object `subscriptions` match, at one server version, handed to `send` in batches of
    /// at most `batch` (Spec/SYNC.md §4, `BOOTSTRAP`); returns that version.
    func bootstrap(
        _ subscriptions: CompiledSubscriptions, catalog: Catalog, batch: Int, send: @Sendable ([ObjectState], UInt64) async throws -> Void
    ) async throws -> UInt64 {
        try await transaction { c in
            try await c.query("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ READ ONLY", logger: logger)
            var version: UInt64 = 0
            for try await v in try await c.query(
                "SELECT server_version FROM \(unescaped: table("_sync_meta")) WHERE id = 1", logger: logger
            ).decode(Int64.self) {
                version = UInt64(v)
            }
            var pending: [ObjectState] = []
            for name in subscriptions.byClass.keys.sorted() {
                guard let cls = catalog.classes[name] else { continue }
                var binds = PostgresBindings()
                guard let condition = try subscriptions.condition(name, into: &binds, offset: 0) else { continue }
                let columns = Self.bootstrapColumns(of: cls).map(SQLMapping.quoted).joined(separator: ", ")
                let rows = try await c.query(
                    PostgresQuery(unsafeSQL: "SELECT \(columns) FROM \(table(name)) WHERE \(condition)", binds: binds), logger: logger)
                for try await row in rows {
                    pending.append(try Self.bootstrapState(row, cls: cls, catalog: catalog))
                    if pending.count >= batch {
                        try await send(pending, version)
                        pending.removeAll(keepingCapacity: true)
                    }
                }
            }
            try await send(pending, version)
            return version
        }
    }

    /// The history after `after`, at most `limit` entries, each reduced to what a client with
    /// `subscriptions` is sent (Spec/SYNC.md §8.3): an object the subscriptions match now comes
    /// whole (`CREATE` and a `SET` of each property set, its state now), one they do not match is
    /// `ERASE`d (a no-op on a client that does not have it); objects of classes the client does not
    /// subscribe to are left out. An entry that leaves nothing is left out too, unless it is the
    /// batch's last or the client's own.
    func download(after: UInt64, limit: Int, subscriptions: CompiledSubscriptions, catalog: Catalog, own: [UInt8]) async throws -> [Entry] {
        var entries: [Entry] = []
        for try await (version, client, clientVersion, clock, changeset) in try await client.query(
            """
            SELECT server_version, client_file_id, client_version, clock, changeset FROM \(unescaped: table("_sync_history")) \
            WHERE server_version > \(Int64(after)) ORDER BY server_version LIMIT \(Int64(limit))
            """, logger: logger
        ).decode((Int64, ByteBuffer?, Int64, Int64, ByteBuffer).self) {
            var reader = WireReader(Array(changeset.readableBytesView))
            let instructions = try reader.instructions()
            entries.append(
                Entry(
                    serverVersion: UInt64(version), originClientFileId: client.map { Array($0.readableBytesView) } ?? [],
                    originClientVersion: UInt64(clientVersion), clock: UInt64(bitPattern: clock), instructions: instructions))
        }
        // The objects the entries touch, and which of them the subscriptions match now.
        var touched: [String: [SyncValue]] = [:]
        var seen = Set<SyncStoreModel.ObjectID>()
        for e in entries {
            for i in e.instructions where seen.insert(SyncStoreModel.ObjectID(i.className, i.primaryKey)).inserted {
                touched[i.className, default: []].append(i.primaryKey)
            }
        }
        var states: [SyncStoreModel.ObjectID: ObjectState] = [:]
        for (name, keys) in touched {
            guard let cls = catalog.classes[name] else { continue }
            for chunk in stride(from: 0, to: keys.count, by: 500).map({ keys[$0..<min($0 + 500, keys.count)] }) {
                var binds = PostgresBindings()
                for k in chunk { try SQLMapping.bind(k, tag: cls.primaryKeyTag, into: &binds) }
                guard let condition = try subscriptions.condition(name, into: &binds, offset: chunk.count) else { break }
                let list = (1...chunk.count).map { "$\($0)" }.joined(separator: ", ")
                let columns = Self.columns(of: cls).map(SQLMapping.quoted).joined(separator: ", ")
                for try await row in try await client.query(
                    PostgresQuery(
                        unsafeSQL: "SELECT \(columns) FROM \(table(name)) WHERE _id IN (\(list)) AND (\(condition))", binds: binds),
                    logger: logger)
                {
                    let state = try Self.state(row, cls: cls, catalog: catalog)
                    states[SyncStoreModel.ObjectID(name, state.primaryKey)] = state
                }
            }
        }
        var out: [Entry] = []
        for (n, e) in entries.enumerated() {
            var instructions: [Instruction] = []
            var done = Set<SyncStoreModel.ObjectID>()
            for i in e.instructions {
                let id = SyncStoreModel.ObjectID(i.className, i.primaryKey)
                guard subscriptions.byClass[i.className] != nil, done.insert(id).inserted else { continue }
                if let state = states[id] {
                    instructions.append(Instruction(i.className, i.primaryKey, .create))
                    for p in state.properties {
                        if case .list(let values) = p.value {
                            instructions.append(
                                Instruction(i.className, i.primaryKey, .listState(path: [p.name], ids: p.ids, values: values)))
                        } else {
                            instructions.append(Instruction(i.className, i.primaryKey, .set(path: [p.name], value: p.value)))
                        }
                    }
                } else {
                    instructions.append(Instruction(i.className, i.primaryKey, .erase))
                }
            }
            // An entry that leaves nothing is left out, but for the last (which advances the
            // client's server version) and the client's own (which tell it its uploads arrived).
            guard !instructions.isEmpty || n == entries.count - 1 || e.originClientFileId == own else { continue }
            var filtered = e
            filtered.instructions = instructions
            out.append(filtered)
        }
        return out
    }
}
