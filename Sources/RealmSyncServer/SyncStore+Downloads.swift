import Foundation
import NIOCore
import PostgresNIO
import RealmSyncProtocol

/// A client's subscriptions compiled for one catalog: per class, the conditions any of which an
/// object must meet to be on the client.
struct CompiledSubscriptions: Sendable {
    var byClass: [String: [SubscriptionSQL]] = [:]
    /// What the user may read of each subscribed class (Spec/SYNC.md §10); no entry: all of it.
    var readable: [String: SubscriptionSQL] = [:]

    init() {}

    /// `subscriptions` compiled on `catalog`, each class's limited to what `user` may read when
    /// the server has `permissions`.
    init(_ subscriptions: [Subscription], catalog: Catalog, user: SyncUser, permissions: Permissions?) throws(SessionFailure) {
        for s in subscriptions { byClass[s.className, default: []].append(try SubscriptionSQL(s, catalog: catalog)) }
        if let permissions {
            for name in byClass.keys { readable[name] = permissions.readFilter(name, for: user, catalog: catalog) }
        }
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
        guard let read = readable[className] else { return parts.joined(separator: " OR ") }
        return "(" + parts.joined(separator: " OR ") + ") AND (" + (try read.bound(into: &binds, offset: offset)) + ")"
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

    /// The columns a bootstrap reads of `cls`, each aggregated into an array: the key, the plain
    /// properties (a timestamp with its nanoseconds) and, when the class has other properties,
    /// `_sync_values` (no conflict state: a bootstrap sends values only; decoding `_sync_clocks`
    /// was most of a bootstrap's time on the server).
    static func bootstrapColumns(of cls: SyncClass) -> [String] {
        let plain = cls.properties.filter(StoredValues.isPlain)
        return ["_id"] + plain.flatMap { $0.valueTag == 8 ? [$0.name, SQLMapping.nanosecondsColumn($0.name)] : [$0.name] }
            + (plain.count < cls.properties.count ? ["_sync_values"] : [])
    }

    /// Every object `subscriptions` match, at one server version, as `BOOTSTRAP_TABLE` messages
    /// (Spec/SYNC.md §4, §8.3) handed to `send`; returns that version.
    ///
    /// Each message holds the rows of a range of the table's pages (`ctid`, a TID range scan):
    /// one query returns the range's matching rows as one array per column (`array_agg`), and each
    /// array becomes a column of the message without a Swift value per cell. A row at a time cost
    /// about 4 µs per object on the server, most of it in the client library's per-row work. The
    /// ranges adapt so that a message holds about `batch` objects and at most about 4 MiB.
    func bootstrap(
        _ subscriptions: CompiledSubscriptions, querySetVersion: UInt64, catalog: Catalog, batch: Int,
        send: @Sendable ([UInt8]) async throws -> Void
    ) async throws -> UInt64 {
        try await transaction { c in
            try await c.query("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ READ ONLY", logger: logger)
            var version: UInt64 = 0
            for try await v in try await c.query(
                "SELECT server_version FROM \(unescaped: table("_sync_meta")) WHERE id = 1", logger: logger
            ).decode(Int64.self) {
                version = UInt64(v)
            }
            for name in subscriptions.byClass.keys.sorted() {
                guard let cls = catalog.classes[name] else { continue }
                // The snapshot is taken (the query above): a row it sees lies on a page below the
                // table's size now.
                var pages: Int64 = 0
                for try await n in try await c.query(
                    "SELECT pg_relation_size(\(table(name))::regclass) / current_setting('block_size')::bigint", logger: logger
                ).decode(Int64.self) {
                    pages = n
                }
                let plain = cls.properties.filter(StoredValues.isPlain)
                let columns = Self.bootstrapColumns(of: cls).map { "array_agg(" + SQLMapping.quoted($0) + ")" }.joined(separator: ", ")
                // The row of arrays of the pages from `start` to `end`.
                @Sendable func fetch(_ start: Int64, _ end: Int64) async throws -> PostgresRow? {
                    var binds = PostgresBindings()
                    guard let condition = try subscriptions.condition(name, into: &binds, offset: 0) else { return nil }
                    let sql =
                        "SELECT \(columns) FROM \(table(name)) WHERE ctid >= '(\(start),0)'::tid AND ctid < '(\(end),0)'::tid AND (\(condition))"
                    var result: PostgresRow?
                    for try await row in try await c.query(PostgresQuery(unsafeSQL: sql, binds: binds), logger: logger) { result = row }
                    return result
                }
                // PostgreSQL reads the next range while this task encodes and sends the last one.
                var span: Int64 = 64
                var start = min(span, pages)
                var current = pages > 0 ? try await fetch(0, start) : nil
                while let row = current {
                    let (from, end) = (start, min(start + span, pages))
                    async let next = from < end ? fetch(from, end) : nil
                    let (message, rows) = try Self.bootstrapTable(
                        row, cls: cls, plain: plain, catalog: catalog, querySetVersion: querySetVersion, serverVersion: version)
                    if rows > 0 { try await send(message) }
                    // The range after next: about `batch` rows and at most about 4 MiB to a
                    // message, changing by at most a factor of 4 at a time.
                    let byRows = rows == 0 ? 4 : Double(batch) / Double(rows)
                    let byBytes = message.isEmpty ? 4 : Double(4 << 20) / Double(message.count)
                    span = max(1, min(1 << 20, Int64((Double(span) * min(4, max(0.25, min(byRows, byBytes)))).rounded())))
                    start = end
                    current = try await next
                }
            }
            return version
        }
    }

    /// The `BOOTSTRAP_TABLE` of one row of arrays (``bootstrapColumns(of:)``) and its row count;
    /// no message for arrays of no rows (`array_agg` of nothing is null).
    static func bootstrapTable(
        _ row: PostgresRow, cls: SyncClass, plain: [SyncClass.Property], catalog: Catalog, querySetVersion: UInt64, serverVersion: UInt64
    ) throws -> ([UInt8], Int) {
        var cells = row.makeIterator()
        func next() throws -> PostgresArray {
            guard let cell = cells.next() else { throw SyncServerError("a bootstrap row with fewer columns than its class") }
            return try PostgresArray(cell.bytes)
        }
        var keys = try next()
        let rows = keys.count
        guard rows > 0 else { return ([], 0) }
        var encoder = BootstrapTableEncoder(
            querySetVersion: querySetVersion, serverVersion: serverVersion, className: cls.name, properties: plain.map(\.name), rows: rows)
        try keys.write(tag: cls.primaryKeyTag, rows: rows, into: &encoder.writer)
        for p in plain {
            var values = try next()
            if p.valueTag == 8 {
                var nanoseconds = try next()
                try values.writeTimestamps(nanoseconds: &nanoseconds, rows: rows, into: &encoder.writer)
            } else if p.valueTag == 12 {
                try values.write(tag: catalog.keyTag(p.linkTarget) ?? 0, rows: rows, linkTarget: p.linkTarget, into: &encoder.writer)
            } else {
                try values.write(tag: p.valueTag, rows: rows, into: &encoder.writer)
            }
        }
        guard plain.count < cls.properties.count else { return (encoder.finish(others: nil), rows) }
        var stored = try next()
        var others: [[PropertyState]] = []
        others.reserveCapacity(rows)
        for _ in 0..<rows {
            var states: [PropertyState] = []
            if let bytes = try stored.next() {
                var object = SyncStoreModel.Object(created: OrderKey(clock: 0, clientFileId: []))
                try StoredValues.decode(Array(bytes.readableBytesView), into: &object, clocks: nil)
                for p in cls.properties where !StoredValues.isPlain(p) {
                    if let state = StoredValues.state(of: p, in: object) { states.append(state) }
                }
            }
            others.append(states)
        }
        return (encoder.finish(others: others), rows)
    }

    /// The history after `after`, at most `limit` entries and, past the first, at most about
    /// `bytes` bytes of changesets, each reduced to what a client with
    /// `subscriptions` is sent (Spec/SYNC.md §8.3): an object the subscriptions match now comes
    /// whole (`CREATE` and a `SET` of each property set, its state now), one they do not match is
    /// `ERASE`d (a no-op on a client that does not have it); objects of classes the client does not
    /// subscribe to are left out. An entry that leaves nothing is left out too, unless it is the
    /// batch's last or the client's own.
    func download(
        after: UInt64, limit: Int, bytes: Int, subscriptions: CompiledSubscriptions, catalog: Catalog, own: [UInt8]
    ) async throws -> [Entry] {
        var entries: [Entry] = []
        // Of the client's own entries, the objects whose writes were refused (§10), as `CREATE`s.
        var compensated: [Int: [Instruction]] = [:]
        // `octet_length` of a stored bytea reads its size without reading its bytes.
        for try await (version, client, clientVersion, clock, changeset, compensations) in try await client.query(
            """
            SELECT server_version, client_file_id, client_version, clock, changeset, compensations FROM (\
            SELECT *, sum(octet_length(changeset)) OVER (ORDER BY server_version) - octet_length(changeset) AS before \
            FROM \(unescaped: table("_sync_history")) \
            WHERE server_version > \(Int64(after)) ORDER BY server_version LIMIT \(Int64(limit))) h \
            WHERE before < \(Int64(bytes)) ORDER BY server_version
            """, logger: logger
        ).decode((Int64, ByteBuffer?, Int64, Int64, ByteBuffer, ByteBuffer?).self) {
            var reader = WireReader(Array(changeset.readableBytesView))
            let instructions = try reader.instructions()
            if let compensations, client.map({ Array($0.readableBytesView) }) == own {
                var r = WireReader(Array(compensations.readableBytesView))
                compensated[entries.count] = try r.instructions()
            }
            entries.append(
                Entry(
                    serverVersion: UInt64(version), originClientFileId: client.map { Array($0.readableBytesView) } ?? [],
                    originClientVersion: UInt64(clientVersion), clock: UInt64(bitPattern: clock), instructions: instructions))
        }
        // Versions follow one another: a gap is the history compacted under the client (§8.5).
        if let first = entries.first, first.serverVersion != after + 1 {
            throw SessionFailure.clientReset(
                "the history was compacted past server version \(after), which this file has; reset it")
        }
        // The objects the entries touch, and which of them the subscriptions match now.
        var touched: [String: [SyncValue]] = [:]
        var seen = Set<SyncStoreModel.ObjectID>()
        for i in entries.lazy.flatMap(\.instructions) + compensated.values.joined()
        where seen.insert(SyncStoreModel.ObjectID(i.className, i.primaryKey)).inserted {
            touched[i.className, default: []].append(i.primaryKey)
        }
        var states: [SyncStoreModel.ObjectID: ObjectState] = [:]
        for (name, keys) in touched {
            guard let cls = catalog.classes[name] else { continue }
            for chunk in stride(from: 0, to: keys.count, by: 500).map({ keys[$0..<min($0 + 500, keys.count)] }) {
                var binds = PostgresBindings()
                for k in chunk { try SQLMapping.bind(k, tag: cls.primaryKeyTag, into: &binds) }
                guard let condition = try subscriptions.condition(name, into: &binds, offset: chunk.count) else { break }
                let list = (1...chunk.count).map { "$\($0)" }.joined(separator: ", ")
                let columns = Self.selectList(of: cls)
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
        // Of the objects that do not match, those the user may read now (classes with a read
        // filter, §10): the others are sent only if the entry may have changed whether the user
        // may read them, so that nothing of an object the user never could read reaches it.
        let unmatched = touched.flatMap { name, keys in
            subscriptions.readable[name] == nil ? [] : keys.map { SyncStoreModel.ObjectID(name, $0) }.filter { states[$0] == nil }
        }
        let readable = try await objects(unmatched, meeting: subscriptions.readable, catalog: catalog) {
            try await client.query($0, logger: logger)
        }
        var out: [Entry] = []
        for (n, e) in entries.enumerated() {
            var instructions: [Instruction] = []
            var done = Set<SyncStoreModel.ObjectID>()
            // A refused write's object comes back to its writer as the store has it (or erased).
            let all = compensated[n].map { e.instructions + $0 } ?? e.instructions
            // The objects whose readability the entry may have changed: created, erased, or with a
            // property the read filter reads written (compensations count as created).
            var mayChange = Set<SyncStoreModel.ObjectID>()
            if !subscriptions.readable.isEmpty {
                for i in all {
                    guard let read = subscriptions.readable[i.className] else { continue }
                    if i.operation.path.map({ $0.first.map(read.properties.contains) ?? true }) ?? true {
                        mayChange.insert(SyncStoreModel.ObjectID(i.className, i.primaryKey))
                    }
                }
            }
            for i in all {
                let id = SyncStoreModel.ObjectID(i.className, i.primaryKey)
                guard subscriptions.byClass[i.className] != nil, done.insert(id).inserted else { continue }
                if states[id] == nil, subscriptions.readable[i.className] != nil, !readable.contains(id), !mayChange.contains(id) {
                    continue  // unreadable before this entry and after it
                }
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
