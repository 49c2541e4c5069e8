import Foundation
import Logging
import NIOCore
import PostgresNIO
import RealmSyncProtocol

/// The service's every durable byte, in one PostgreSQL schema named after the application
/// (Spec/SYNC.md §8): a typed table per synced class, the history, the clients and their
/// subscriptions. Servers hold nothing else, so any number of them serve one database.
struct SyncStore: Sendable {
    let client: PostgresClient
    let appId: String
    let logger: Logger

    var schema: String { SQLMapping.quoted(appId) }
    func table(_ name: String) -> String { schema + "." + SQLMapping.quoted(name) }
    /// The channel a commit of the history is announced on (`LISTEN`/`NOTIFY`).
    var channel: String { "realm_sync_" + appId.replacingOccurrences(of: "-", with: "_") }

    /// `body` in one transaction; a `SessionFailure` it throws comes out as itself, not wrapped in
    /// the `PostgresTransactionError` of the rollback, so a session reports it to its client.
    func transaction<T: Sendable>(_ body: (PostgresConnection) async throws -> sending T) async throws -> sending T {
        do {
            return try await client.withTransaction(logger: logger, body)
        } catch let e as PostgresTransactionError {
            if let failure = e.closureError as? SessionFailure { throw failure }
            throw e
        }
    }

    /// Creates the store's own tables when they are missing, one server at a time.
    func migrate() async throws {
        try await transaction { c in
            try await c.query("SELECT pg_advisory_xact_lock(hashtext(\(channel)))", logger: logger)
            for statement in [
                "CREATE SCHEMA IF NOT EXISTS \(schema)",
                """
                CREATE TABLE IF NOT EXISTS \(table("_sync_schema")) (class text NOT NULL, property text NOT NULL, \
                tag smallint NOT NULL, flags smallint NOT NULL, link_target text NOT NULL, PRIMARY KEY (class, property))
                """,
                """
                CREATE TABLE IF NOT EXISTS \(table("_sync_meta")) (id integer PRIMARY KEY, server_version bigint NOT NULL)
                """,
                "INSERT INTO \(table("_sync_meta")) VALUES (1, 0) ON CONFLICT DO NOTHING",
                """
                CREATE TABLE IF NOT EXISTS \(table("_sync_history")) (server_version bigint PRIMARY KEY, \
                client_file_id bytea, client_version bigint NOT NULL, clock bigint NOT NULL, \
                at timestamptz NOT NULL DEFAULT now(), changeset bytea NOT NULL)
                """,
                """
                CREATE TABLE IF NOT EXISTS \(table("_sync_clients")) (client_file_id bytea PRIMARY KEY, \
                user_id text NOT NULL, last_client_version bigint NOT NULL DEFAULT 0, created timestamptz NOT NULL DEFAULT now())
                """,
                """
                CREATE TABLE IF NOT EXISTS \(table("_sync_tombstones")) (class text NOT NULL, primary_key bytea NOT NULL, \
                clock bigint NOT NULL, client_file_id bytea NOT NULL, PRIMARY KEY (class, primary_key))
                """,
                """
                CREATE TABLE IF NOT EXISTS \(table("_sync_subscriptions")) (client_file_id bytea NOT NULL, \
                query_set_version bigint NOT NULL, position integer NOT NULL, name text NOT NULL, class text NOT NULL, \
                query text NOT NULL, PRIMARY KEY (client_file_id, position))
                """,
                // The objects whose writes an upload was refused (§10), sent back to its client.
                "ALTER TABLE \(table("_sync_history")) ADD COLUMN IF NOT EXISTS compensations bytea",
                // What the client's user could read when it was last bootstrapped (§10).
                "ALTER TABLE \(table("_sync_clients")) ADD COLUMN IF NOT EXISTS read_roles text",
                // The newest server version compacted away (§8.5), and what each client last said
                // it had, and when.
                "ALTER TABLE \(table("_sync_meta")) ADD COLUMN IF NOT EXISTS compacted_through bigint NOT NULL DEFAULT 0",
                """
                ALTER TABLE \(table("_sync_clients")) ADD COLUMN IF NOT EXISTS server_version bigint NOT NULL DEFAULT 0, \
                ADD COLUMN IF NOT EXISTS last_seen timestamptz NOT NULL DEFAULT now()
                """,
                // Rows other applications wrote with SQL, not yet in the history (§8.4).
                """
                CREATE TABLE IF NOT EXISTS \(table("_sync_external")) (id bigserial PRIMARY KEY, class text NOT NULL, \
                op text NOT NULL, key text NOT NULL, changed text[], at timestamptz NOT NULL DEFAULT clock_timestamp())
                """,
            ] {
                try await c.query(PostgresQuery(unsafeSQL: statement), logger: logger)
            }
            // Class tables made before `_sync_values` existed (protocol draft of 2026-11-28).
            let catalog = try await catalog(on: c)
            for statement in captureFunctions() { try await c.query(PostgresQuery(unsafeSQL: statement), logger: logger) }
            for name in catalog.classes.keys.sorted() where !catalog.classes[name]!.isEmbedded {
                try await c.query(
                    PostgresQuery(unsafeSQL: "ALTER TABLE \(table(name)) ADD COLUMN IF NOT EXISTS _sync_values bytea"), logger: logger)
                // Stores made before SQL writes were captured (2026-11-30) get their triggers.
                for statement in captureStatements(for: catalog.classes[name]!) {
                    try await c.query(PostgresQuery(unsafeSQL: statement), logger: logger)
                }
            }
        }
    }

    /// The synced schema the store has.
    func catalog() async throws -> Catalog {
        try await Self.catalog(client.query(catalogQuery, logger: logger))
    }

    /// The synced schema as connection `c` (in a transaction) sees it.
    func catalog(on c: PostgresConnection) async throws -> Catalog {
        try await Self.catalog(c.query(catalogQuery, logger: logger))
    }

    private var catalogQuery: PostgresQuery {
        "SELECT class, property, tag, flags, link_target FROM \(unescaped: table("_sync_schema"))"
    }

    /// Locks the history's one writer row (`_sync_meta`) for the transaction of `c`, so that
    /// server versions commit in their order, and returns the newest server version.
    func lockHistory(on c: PostgresConnection) async throws -> UInt64 {
        for try await v in try await c.query(
            "SELECT server_version FROM \(unescaped: table("_sync_meta")) WHERE id = 1 FOR UPDATE", logger: logger
        ).decode(Int64.self) {
            return UInt64(v)
        }
        return 0
    }

    /// One row of `_sync_history` (§8.1).
    struct HistoryRow {
        var version: UInt64
        /// Nil for the SQL writer (§8.4).
        var clientFileId: [UInt8]?
        var clientVersion: UInt64
        var clock: UInt64
        var changeset: [UInt8]
        var compensations: [UInt8]? = nil
    }

    /// Appends `rows` to the history, and sets the server version to the last one's (with the
    /// client's newest applied upload, when it is an upload's) and announces it, in one statement.
    func appendHistory(_ rows: [HistoryRow], applied: (clientFileId: [UInt8], version: UInt64)? = nil, on c: PostgresConnection)
        async throws
    {
        guard let version = rows.last?.version else { return }
        try await insertRows(
            into: "_sync_history", columns: ["server_version", "client_file_id", "client_version", "clock", "changeset", "compensations"],
            count: rows.count, on: c
        ) { r, binds in
            let row = rows[r]
            binds.append(Int64(row.version))
            if let id = row.clientFileId { binds.append(ByteBuffer(bytes: id)) } else { binds.appendNull() }
            binds.append(Int64(row.clientVersion))
            binds.append(Int64(bitPattern: row.clock))
            binds.append(ByteBuffer(bytes: row.changeset))
            if let compensations = row.compensations { binds.append(ByteBuffer(bytes: compensations)) } else { binds.appendNull() }
        }
        let meta = "UPDATE \(table("_sync_meta")) SET server_version = \(version) WHERE id = 1"
        if let applied {
            try await c.query(
                """
                WITH meta AS (\(unescaped: meta)), \
                client AS (UPDATE \(unescaped: table("_sync_clients")) SET last_client_version = \(Int64(applied.version)) \
                WHERE client_file_id = \(ByteBuffer(bytes: applied.clientFileId))) \
                SELECT pg_notify(\(channel), \(String(version)))
                """, logger: logger)
        } else {
            try await c.query("WITH meta AS (\(unescaped: meta)) SELECT pg_notify(\(channel), \(String(version)))", logger: logger)
        }
    }

    static func catalog(_ rows: PostgresRowSequence) async throws -> Catalog {
        var catalog = Catalog()
        for try await (c, p, tag, flags, target) in rows.decode((String, String, Int16, Int16, String).self) {
            var cls = catalog.classes[c] ?? SyncClass(c, primaryKeyTag: 0, properties: [])
            if p == "_id" {
                // An embedded class is recorded with the tag of embedded objects (it has no key).
                cls.isEmbedded = tag == 13
                cls.primaryKeyTag = tag == 13 ? 0 : UInt8(tag)
            } else {
                cls.properties.append(SyncClass.Property(p, valueTag: UInt8(tag), flags: UInt8(flags), linkTarget: target))
            }
            catalog.classes[c] = cls
        }
        return catalog
    }

    /// Adds what `classes` has that the store has not (tables, columns, catalog rows), in one
    /// transaction under the migration lock; returns the catalog after.
    func ensure(_ classes: [SyncClass]) async throws -> Catalog {
        try await transaction { c in
            try await c.query("SELECT pg_advisory_xact_lock(hashtext(\(channel)))", logger: logger)
            let current = try await catalog(on: c)
            let additions = try current.additions(for: classes)
            var after = current
            for added in additions {
                let isNew = current.classes[added.name] == nil
                if isNew && added.isEmbedded {
                    // No table: embedded objects live in their owners' rows.
                    try await c.query(
                        "INSERT INTO \(unescaped: table("_sync_schema")) VALUES (\(added.name), '_id', 13, 0, '')", logger: logger)
                    after.classes[added.name] = SyncClass(added.name, primaryKeyTag: 0, isEmbedded: true, properties: [])
                } else if isNew {
                    let keyType = SQLMapping.columnType(tag: added.primaryKeyTag)!
                    try await c.query(
                        PostgresQuery(
                            unsafeSQL: """
                                CREATE TABLE IF NOT EXISTS \(table(added.name)) (_id \(keyType) PRIMARY KEY, \
                                _sync_values bytea, _sync_clocks jsonb NOT NULL DEFAULT '{}', _sync_created bigint NOT NULL, \
                                _sync_created_by bytea NOT NULL)
                                """), logger: logger)
                    try await c.query(
                        "INSERT INTO \(unescaped: table("_sync_schema")) VALUES (\(added.name), '_id', \(Int16(added.primaryKeyTag)), 0, '')",
                        logger: logger)
                    after.classes[added.name] = SyncClass(added.name, primaryKeyTag: added.primaryKeyTag, properties: [])
                }
            }
            // Properties after every class exists, so that a link's column takes its target's key type.
            let keyTags = after.classes.mapValues(\.primaryKeyTag)
            for added in additions {
                for p in added.properties where !added.isEmbedded {
                    // An embedded class has no table: its objects live in their owners' rows.
                    let column = SQLMapping.quoted(p.name)
                    try await c.query(
                        PostgresQuery(
                            unsafeSQL:
                                "ALTER TABLE \(table(added.name)) ADD COLUMN IF NOT EXISTS \(column) \(SQLMapping.columnType(of: p, keyTags: keyTags)!)"
                        ),
                        logger: logger)
                    if p.valueTag == 8 && StoredValues.isPlain(p) {
                        try await c.query(
                            PostgresQuery(
                                unsafeSQL:
                                    "ALTER TABLE \(table(added.name)) ADD COLUMN IF NOT EXISTS \(SQLMapping.quoted(SQLMapping.nanosecondsColumn(p.name))) integer"
                            ), logger: logger)
                    }
                }
                for p in added.properties {
                    try await c.query(
                        "INSERT INTO \(unescaped: table("_sync_schema")) VALUES (\(added.name), \(p.name), \(Int16(p.valueTag)), \(Int16(p.flags)), \(p.linkTarget))",
                        logger: logger)
                    after.classes[added.name]!.properties.append(p)
                }
            }
            for added in additions where !added.isEmbedded {
                for statement in captureStatements(for: after.classes[added.name]!) {
                    try await c.query(PostgresQuery(unsafeSQL: statement), logger: logger)
                }
            }
            return after
        }
    }

    // MARK: Clients

    /// A new client file of `user`: its identity.
    func registerClient(user: String) async throws -> [UInt8] {
        let id = (0..<16).map { _ in UInt8.random(in: 0...255) }
        try await client.query(
            "INSERT INTO \(unescaped: table("_sync_clients")) (client_file_id, user_id) VALUES (\(ByteBuffer(bytes: id)), \(user))",
            logger: logger)
        return id
    }

    /// What a HELLO learns of a client file it names: the user it belongs to (nil: the store does
    /// not know it), and, when that is `user`, what the user could read when the file was last
    /// bootstrapped (``Permissions/readRoles(of:for:)``). A file of `user` is recorded as having
    /// integrated the history through `serverVersion`, now (§8.5), in the same statement.
    func helloOfClient(_ id: [UInt8], user: String, serverVersion: UInt64) async throws -> (owner: String?, readRoles: String?) {
        let key = ByteBuffer(bytes: id)
        for try await (owner, roles) in try await client.query(
            """
            WITH seen AS (UPDATE \(unescaped: table("_sync_clients")) SET server_version = \(Int64(serverVersion)), last_seen = now() \
            WHERE client_file_id = \(key) AND user_id = \(user) RETURNING read_roles) \
            SELECT (SELECT user_id FROM \(unescaped: table("_sync_clients")) WHERE client_file_id = \(key)), (SELECT read_roles FROM seen)
            """, logger: logger
        ).decode((String?, String?).self) {
            return (owner, roles)
        }
        return (nil, nil)
    }

    /// Records what a client file's user could read when the file was bootstrapped.
    func setReadRoles(_ roles: String?, of id: [UInt8]) async throws {
        try await client.query(
            "UPDATE \(unescaped: table("_sync_clients")) SET read_roles = \(roles) WHERE client_file_id = \(ByteBuffer(bytes: id))",
            logger: logger)
    }

    /// The newest server version.
    func latestVersion() async throws -> UInt64 {
        for try await v in try await client.query(
            "SELECT server_version FROM \(unescaped: table("_sync_meta")) WHERE id = 1", logger: logger
        ).decode(Int64.self) {
            return UInt64(v)
        }
        return 0
    }

    // MARK: Uploads

    /// Applies `uploads` of client file `clientFileId` in one transaction (Spec/SYNC.md §8.2):
    /// uploads already applied are skipped, the others go through the conflict rules, each gets a
    /// history entry, and the commit is announced. The writes of an upload to objects of a class
    /// of `writeFilters` must leave and find the object meeting the filter (§10); the others are
    /// not applied, and are returned. Returns the newest client version applied and the server
    /// version after; nothing is applied when it throws.
    func apply(
        _ uploads: [Upload], from clientFileId: [UInt8], catalog: Catalog, writeFilters: [String: SubscriptionSQL] = [:]
    ) async throws -> (clientVersion: UInt64, serverVersion: UInt64, refused: [(clientVersion: UInt64, objects: [SyncStoreModel.ObjectID])])
    {
        for upload in uploads {
            for i in upload.instructions { try catalog.check(i) }
        }
        let clientKey = ByteBuffer(bytes: clientFileId)
        return try await transaction { c in
            var lastClientVersion: UInt64 = 0
            for try await v in try await c.query(
                "SELECT last_client_version FROM \(unescaped: table("_sync_clients")) WHERE client_file_id = \(clientKey) FOR UPDATE",
                logger: logger
            ).decode(Int64.self) {
                lastClientVersion = UInt64(v)
            }
            var version = try await lockHistory(on: c)
            // Every object the new uploads touch, read (and locked) with a query per class, then the
            // uploads applied in memory, and the history, objects and tombstones written with a
            // statement per table and class: a few round trips a batch instead of four an object.
            var fresh: [Upload] = []
            for upload in uploads where upload.clientVersion > (fresh.last?.clientVersion ?? lastClientVersion) { fresh.append(upload) }
            var touched: [SyncStoreModel.ObjectID] = []
            var seen = Set<SyncStoreModel.ObjectID>()
            for upload in fresh {
                for i in upload.instructions {
                    let id = SyncStoreModel.ObjectID(i.className, i.primaryKey)
                    if seen.insert(id).inserted { touched.append(id) }
                }
            }
            let loaded = try await load(touched, catalog: catalog, on: c)
            var model = SyncStoreModel()
            for id in touched { model.load(id, object: loaded[id]?.object, tombstone: loaded[id]?.tombstone) }
            var history: [HistoryRow] = []
            var refused: [(clientVersion: UInt64, objects: [SyncStoreModel.ObjectID])] = []
            // Once an upload's writes are checked, each upload is stored as it is applied (the
            // checks read the tables).
            var storedEach = false
            for upload in fresh {
                // Without write filters (the common case) nothing below the first branch runs.
                var ids: [SyncStoreModel.ObjectID] = []
                if !writeFilters.isEmpty {
                    var mine = Set<SyncStoreModel.ObjectID>()
                    for i in upload.instructions where mine.insert(SyncStoreModel.ObjectID(i.className, i.primaryKey)).inserted {
                        ids.append(SyncStoreModel.ObjectID(i.className, i.primaryKey))
                    }
                }
                let checked = ids.filter { writeFilters[$0.className] != nil }
                var forbidden = Set<SyncStoreModel.ObjectID>()
                var effective: [Instruction] = []
                if checked.isEmpty && !storedEach {
                    effective = model.apply(upload, from: clientFileId)
                } else {
                    if !storedEach {
                        try await store(touched.map { ($0, loaded[$0]?.object, model.object($0)) }, catalog: catalog, on: c)
                        storedEach = true
                    }
                    // Objects the user may not write as they are, then as the upload leaves them.
                    forbidden = try await notWritable(checked.filter { model.object($0) != nil }, writeFilters, catalog: catalog, on: c)
                    while true {
                        let before = model
                        let allowed = upload.instructions.filter {
                            !forbidden.contains(SyncStoreModel.ObjectID($0.className, $0.primaryKey))
                        }
                        try await c.query("SAVEPOINT write_check", logger: logger)
                        effective = model.apply(
                            Upload(clientVersion: upload.clientVersion, clock: upload.clock, instructions: allowed), from: clientFileId)
                        try await store(ids.map { ($0, before.object($0), model.object($0)) }, catalog: catalog, on: c)
                        let after = try await notWritable(
                            checked.filter { !forbidden.contains($0) && model.object($0) != nil }, writeFilters, catalog: catalog, on: c)
                        if after.isEmpty {
                            try await c.query("RELEASE SAVEPOINT write_check", logger: logger)
                            break
                        }
                        try await c.query("ROLLBACK TO SAVEPOINT write_check", logger: logger)
                        model = before
                        forbidden.formUnion(after)
                    }
                }
                version += 1
                var w = WireWriter()
                w.instructions(effective)
                var compensations: [UInt8]?
                if !forbidden.isEmpty {
                    let objects = ids.filter(forbidden.contains)
                    refused.append((upload.clientVersion, objects))
                    var cw = WireWriter()
                    cw.instructions(objects.map { Instruction($0.className, $0.primaryKey, .create) })
                    compensations = cw.bytes
                }
                history.append(
                    HistoryRow(
                        version: version, clientFileId: clientFileId, clientVersion: upload.clientVersion, clock: upload.clock,
                        changeset: w.bytes, compensations: compensations))
            }
            guard let applied = fresh.last?.clientVersion else { return (lastClientVersion, version, []) }
            if !storedEach { try await store(touched.map { ($0, loaded[$0]?.object, model.object($0)) }, catalog: catalog, on: c) }
            try await storeTombstones(of: touched, model, loaded: loaded, on: c)
            // The history, then the new server version, the client's newest applied upload and the
            // announcement in one statement.
            try await appendHistory(history, applied: (clientFileId, applied), on: c)
            return (applied, version, refused)
        }
    }

    /// Writes the tombstones of `ids` that `model` changed from the `loaded` ones.
    func storeTombstones(
        of ids: [SyncStoreModel.ObjectID], _ model: SyncStoreModel,
        loaded: [SyncStoreModel.ObjectID: (object: SyncStoreModel.Object?, tombstone: OrderKey?)], on c: PostgresConnection
    ) async throws {
        let tombstones = ids.compactMap { id in
            model.tombstone(id).flatMap { $0 != loaded[id]?.tombstone ? (id, $0) : nil }
        }
        try await insertRows(
            into: "_sync_tombstones", columns: ["class", "primary_key", "clock", "client_file_id"], count: tombstones.count,
            conflict: "ON CONFLICT (class, primary_key) DO UPDATE SET clock = EXCLUDED.clock, client_file_id = EXCLUDED.client_file_id",
            on: c
        ) { r, binds in
            let (id, tombstone) = tombstones[r]
            binds.append(id.className)
            binds.append(ByteBuffer(bytes: Self.keyBytes(id.primaryKey)))
            binds.append(Int64(bitPattern: tombstone.clock))
            binds.append(ByteBuffer(bytes: tombstone.clientFileId))
        }
    }

    /// Of `ids`, the objects the table holds that do not meet their class's write filter.
    private func notWritable(
        _ ids: [SyncStoreModel.ObjectID], _ filters: [String: SubscriptionSQL], catalog: Catalog, on c: PostgresConnection
    ) async throws -> Set<SyncStoreModel.ObjectID> {
        try await objects(ids, meeting: filters, negated: true, catalog: catalog) { try await c.query($0, logger: logger) }
    }

    /// Of `ids`, the objects the table holds that meet (`negated`: do not meet) their class's
    /// condition in `conditions` (a class without one is left out), by `run`ning one query a class.
    func objects(
        _ ids: [SyncStoreModel.ObjectID], meeting conditions: [String: SubscriptionSQL], negated: Bool = false, catalog: Catalog,
        run: (PostgresQuery) async throws -> PostgresRowSequence
    ) async throws -> Set<SyncStoreModel.ObjectID> {
        var byClass: [String: [SyncValue]] = [:]
        for id in ids { byClass[id.className, default: []].append(id.primaryKey) }
        var out = Set<SyncStoreModel.ObjectID>()
        for (name, keys) in byClass {
            guard let cls = catalog.classes[name], let condition = conditions[name] else { continue }
            var binds = PostgresBindings()
            try SQLMapping.bindArray(keys, tag: cls.primaryKeyTag, into: &binds)
            let sql = try condition.bound(into: &binds, offset: 1)
            let test = negated ? "NOT coalesce((\(sql)), false)" : "(\(sql))"
            for try await row in try await run(
                PostgresQuery(unsafeSQL: "SELECT _id FROM \(table(name)) WHERE _id = ANY($1) AND \(test)", binds: binds))
            {
                out.insert(SyncStoreModel.ObjectID(name, try SQLMapping.value(row.first!, tag: cls.primaryKeyTag)))
            }
        }
        return out
    }

    static func keyBytes(_ key: SyncValue) -> [UInt8] {
        var w = WireWriter()
        w.value(key)
        return w.bytes
    }

    /// The columns a server reads of `cls`, in this order: `_id`, each plain property (a
    /// timestamp's companion after it), then the conflict state (`_sync_values`, `_sync_clocks`,
    /// `_sync_created`, `_sync_created_by`).
    static func columns(of cls: SyncClass) -> [String] {
        ["_id"] + propertyColumns(cls.properties.filter(StoredValues.isPlain)) + [
            "_sync_values", "_sync_clocks", "_sync_created", "_sync_created_by",
        ]
    }

    /// The select list of ``columns(of:)``: `_sync_clocks` as a `text[]` of `name=clock/client`
    /// pairs (PostgreSQL takes the JSON apart; decoding it in Swift was a visible share of an
    /// upload's and a download's time on the server).
    static func selectList(of cls: SyncClass) -> String {
        columns(of: cls).map {
            $0 == "_sync_clocks" ? "ARRAY(SELECT k || '=' || v FROM jsonb_each_text(_sync_clocks) AS e(k, v))" : SQLMapping.quoted($0)
        }.joined(separator: ", ")
    }

    /// The columns a server writes of `cls`: every property's (the SQL-readable `numeric` and
    /// `jsonb` columns of the properties kept in `_sync_values` included).
    static func writtenColumns(of cls: SyncClass) -> [String] {
        ["_id"] + propertyColumns(cls.properties) + ["_sync_values", "_sync_clocks", "_sync_created", "_sync_created_by"]
    }

    private static func propertyColumns(_ properties: [SyncClass.Property]) -> [String] {
        properties.flatMap { $0.valueTag == 8 && StoredValues.isPlain($0) ? [$0.name, SQLMapping.nanosecondsColumn($0.name)] : [$0.name] }
    }

    /// The objects `ids` name, as the store has them, locked (`FOR UPDATE`, in key order), and
    /// their tombstones: a query per class for each. An object the store lacks is absent.
    func load(_ ids: [SyncStoreModel.ObjectID], catalog: Catalog, on c: PostgresConnection) async throws -> [SyncStoreModel
        .ObjectID: (object: SyncStoreModel.Object?, tombstone: OrderKey?)]
    {
        var out: [SyncStoreModel.ObjectID: (object: SyncStoreModel.Object?, tombstone: OrderKey?)] = [:]
        var byClass: [String: [SyncValue]] = [:]
        for id in ids { byClass[id.className, default: []].append(id.primaryKey) }
        for (name, keys) in byClass.sorted(by: { $0.key < $1.key }) {
            let cls = catalog.classes[name]!
            var binds = PostgresBindings()
            try SQLMapping.bindArray(keys, tag: cls.primaryKeyTag, into: &binds)
            let columns = Self.selectList(of: cls)
            for try await row in try await c.query(
                PostgresQuery(
                    unsafeSQL: "SELECT \(columns) FROM \(table(cls.name)) WHERE _id = ANY($1) ORDER BY _id FOR UPDATE", binds: binds),
                logger: logger)
            {
                let key = try SQLMapping.value(row.first!, tag: cls.primaryKeyTag)
                out[SyncStoreModel.ObjectID(name, key), default: (nil, nil)].object = try Self.object(row, cls: cls, catalog: catalog)
            }
            var byBytes: [[UInt8]: SyncValue] = [:]
            for k in keys { byBytes[Self.keyBytes(k)] = k }
            for try await (bytes, clock, client) in try await c.query(
                "SELECT primary_key, clock, client_file_id FROM \(unescaped: table("_sync_tombstones")) WHERE class = \(name) AND primary_key = ANY(\(byBytes.keys.map { ByteBuffer(bytes: $0) }))",
                logger: logger
            ).decode((ByteBuffer, Int64, ByteBuffer).self) {
                guard let key = byBytes[Array(bytes.readableBytesView)] else { continue }
                out[SyncStoreModel.ObjectID(name, key), default: (nil, nil)].tombstone = OrderKey(
                    clock: UInt64(bitPattern: clock), clientFileId: Array(client.readableBytesView))
            }
        }
        return out
    }

    /// Inserts `count` rows into the store's table `name`, `bind(r, &binds)` appending row r's
    /// values in `columns` order, in statements of many rows each. `expressions` (none: the
    /// parameters as they are) gives each column's value as SQL in which `$` stands for its
    /// parameter (`$::jsonb`).
    func insertRows(
        into name: String, columns: [String], expressions: [String] = [], count: Int, conflict: String = "", on c: PostgresConnection,
        bind: (Int, inout PostgresBindings) throws -> Void
    ) async throws {
        // PostgreSQL takes at most 65,535 parameters a statement.
        let perStatement = max(1, 60_000 / columns.count)
        // Each column's SQL before and after its parameter.
        let around: [(String, String)] = columns.indices.map { i in
            guard i < expressions.count, let d = expressions[i].firstIndex(of: "$") else { return ("", "") }
            return (String(expressions[i][..<d]), String(expressions[i][expressions[i].index(after: d)...]))
        }
        var start = 0
        while start < count {
            let end = min(count, start + perStatement)
            var binds = PostgresBindings()
            var rows: [String] = []
            rows.reserveCapacity(end - start)
            for r in start..<end {
                try bind(r, &binds)
                let first = (r - start) * columns.count
                let values = columns.indices.map { i in around[i].0 + "$" + String(first + i + 1) + around[i].1 }
                rows.append("(" + values.joined(separator: ", ") + ")")
            }
            try await c.query(
                PostgresQuery(
                    unsafeSQL:
                        "INSERT INTO \(table(name)) (\(columns.map(SQLMapping.quoted).joined(separator: ", "))) VALUES \(rows.joined(separator: ", ")) \(conflict)",
                    binds: binds), logger: logger)
            start = end
        }
    }

    /// The model's object of a row read with ``columns(of:)``.
    static func object(_ row: PostgresRow, cls: SyncClass, catalog: Catalog) throws -> SyncStoreModel.Object {
        let cells = Array(row)
        let n = cells.count
        let created = OrderKey(
            clock: UInt64(bitPattern: try cells[n - 2].decode(Int64.self)),
            clientFileId: Array(try cells[n - 1].decode(ByteBuffer.self).readableBytesView))
        var clocks: [String: String] = [:]
        for pair in try cells[n - 3].decode([String].self) {
            guard let eq = pair.firstIndex(of: "=") else { continue }
            clocks[String(pair[..<eq])] = String(pair[pair.index(after: eq)...])
        }
        var object = SyncStoreModel.Object(created: created)
        if let values = try cells[n - 4].decode(ByteBuffer?.self) {
            try StoredValues.decode(Array(values.readableBytesView), into: &object, clocks: clocks)
        }
        var i = 1
        for p in cls.properties where StoredValues.isPlain(p) {
            let cell = cells[i]
            let ns = p.valueTag == 8 ? cells[i + 1] : nil
            i += p.valueTag == 8 ? 2 : 1
            // A column written with SQL and not converted yet (§8.4) has a value without a clock:
            // it counts as written at clock 0.
            let clock = clocks[p.name].flatMap(Self.orderKey)
            let value = try SQLMapping.value(
                cell, tag: p.valueTag, nanoseconds: ns, link: p.valueTag == 12 ? (p.linkTarget, catalog.keyTag(p.linkTarget)!) : nil)
            guard let key = clock ?? (value == .null ? nil : Self.sqlWriter) else { continue }
            object.properties[p.name] = SyncStoreModel.Slot(value: value, key: key)
        }
        return object
    }

    static func orderKey(_ text: String) -> OrderKey? {
        let parts = text.split(separator: "/")
        guard parts.count == 2, let clock = UInt64(parts[0]) else { return nil }
        return OrderKey(clock: clock, clientFileId: hexBytes(parts[1]))
    }

    static func text(_ key: OrderKey) -> String { String(key.clock) + "/" + Hex.string(key.clientFileId) }

    static func hexBytes(_ s: Substring) -> [UInt8] {
        var out: [UInt8] = []
        var i = s.startIndex
        while i < s.endIndex, let j = s.index(i, offsetBy: 2, limitedBy: s.endIndex), let b = UInt8(s[i..<j], radix: 16) {
            out.append(b)
            i = j
        }
        return out
    }

    /// Writes the objects that changed, `after` as the store will hold them (nil: deleted): a
    /// `DELETE` and a multi-row upsert per class.
    func store(
        _ objects: [(id: SyncStoreModel.ObjectID, before: SyncStoreModel.Object?, after: SyncStoreModel.Object?)], catalog: Catalog,
        on c: PostgresConnection
    ) async throws {
        var deleted: [String: [SyncValue]] = [:]
        var written: [String: [(SyncValue, SyncStoreModel.Object)]] = [:]
        for o in objects where o.before != o.after {
            if let after = o.after {
                written[o.id.className, default: []].append((o.id.primaryKey, after))
            } else {
                deleted[o.id.className, default: []].append(o.id.primaryKey)
            }
        }
        for (name, keys) in deleted.sorted(by: { $0.key < $1.key }) {
            var binds = PostgresBindings()
            try SQLMapping.bindArray(keys, tag: catalog.classes[name]!.primaryKeyTag, into: &binds)
            try await c.query(PostgresQuery(unsafeSQL: "DELETE FROM \(table(name)) WHERE _id = ANY($1)", binds: binds), logger: logger)
        }
        for (name, rows) in written.sorted(by: { $0.key < $1.key }) {
            let cls = catalog.classes[name]!
            let columns = Self.writtenColumns(of: cls)
            // The clocks go as a text[] of names and clocks, which PostgreSQL makes an object of.
            var expressions: [String: String] = ["_sync_clocks": "jsonb_object($::text[])"]
            for p in cls.properties where !StoredValues.isPlain(p) {
                expressions[p.name] = p.valueTag == 11 && p.flags & 0b1110 == 0 ? "$::numeric" : "$::jsonb"
            }
            let updates = columns.dropFirst().map { "\(SQLMapping.quoted($0)) = EXCLUDED.\(SQLMapping.quoted($0))" }
            try await insertRows(
                into: name, columns: columns, expressions: columns.map { expressions[$0] ?? "$" }, count: rows.count,
                conflict: "ON CONFLICT (_id) DO UPDATE SET \(updates.joined(separator: ", "))", on: c
            ) { r, binds in
                try Self.bindRow(key: rows[r].0, rows[r].1, cls: cls, catalog: catalog, into: &binds)
            }
        }
    }

    /// Appends the values of ``writtenColumns(of:)`` of object `after` with primary key `key`.
    private static func bindRow(
        key: SyncValue, _ after: SyncStoreModel.Object, cls: SyncClass, catalog: Catalog, into binds: inout PostgresBindings
    ) throws {
        try SQLMapping.bind(key, tag: cls.primaryKeyTag, into: &binds)
        var clocks: [String: String] = [:]
        for p in cls.properties {
            guard StoredValues.isPlain(p) else {
                if let text = StoredValues.column(p, StoredValues.state(of: p, in: after)) {
                    binds.append(text)
                } else {
                    binds.appendNull()
                }
                if let slot = after.properties[p.name] { clocks[p.name] = Self.text(slot.key) }
                continue
            }
            if let slot = after.properties[p.name] {
                try SQLMapping.bind(slot.value, tag: p.valueTag == 12 ? catalog.keyTag(p.linkTarget)! : p.valueTag, into: &binds)
                clocks[p.name] = Self.text(slot.key)
            } else {
                binds.appendNull()
                if p.valueTag == 8 { binds.appendNull() }
            }
        }
        binds.append(ByteBuffer(bytes: StoredValues.encode(after, cls: cls)))
        binds.append(clocks.sorted { $0.key < $1.key }.flatMap { [$0.key, $0.value] })
        binds.append(Int64(bitPattern: after.created.clock))
        binds.append(ByteBuffer(bytes: after.created.clientFileId))
    }
}
