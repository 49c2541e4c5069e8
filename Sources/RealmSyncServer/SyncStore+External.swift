import Foundation
import NIOCore
import PostgresNIO
import RealmSyncProtocol

/// Rows other applications write with plain SQL (Spec/SYNC.md §8.4). A trigger on every class
/// table records each `INSERT`, `UPDATE` and `DELETE` not made by a sync server (the servers'
/// connections set `realm_sync.applying`) in `_sync_external`, in the writer's transaction, and
/// notifies the servers; one of them turns the recorded changes into history entries as a writer
/// of its own, after which they reach clients as any upload's do.
///
/// Triggers rather than logical decoding: they need no `wal_level = logical`, no replication
/// slot (whose WAL a stopped service would keep forever) and no privilege beyond the schema's;
/// they refuse, in the writer's own transaction, what the service could not sync (a change of a
/// primary key, a write to a column the service keeps), so nothing is lost silently; and they
/// cost a row in `_sync_external` a change, which only other applications' writes pay.
extension SyncStore {
    /// The writer SQL writes are attributed to: 16 zero bytes, at clock 0 until converted.
    static let sqlWriterId = [UInt8](repeating: 0, count: 16)
    static let sqlWriter = OrderKey(clock: 0, clientFileId: sqlWriterId)

    /// The capture function every class table's trigger calls, and the function that refuses a
    /// `TRUNCATE` (the service could not tell its clients which objects went).
    func captureFunctions() -> [String] {
        [
            """
            CREATE OR REPLACE FUNCTION \(schema)._sync_capture() RETURNS trigger LANGUAGE plpgsql AS $f$
            DECLARE
              allowed text[] := string_to_array(TG_ARGV[0], ',');
              stamps text[] := string_to_array(TG_ARGV[1], ',');
              changed text[];
              row_new jsonb;
              row_old jsonb;
              k text;
              s text;
              bad text[];
            BEGIN
              IF current_setting('realm_sync.applying', true) = 'on' THEN
                IF TG_OP = 'DELETE' THEN RETURN OLD; END IF;
                RETURN NEW;
              END IF;
              IF TG_OP = 'DELETE' THEN
                k := to_jsonb(OLD)->>'_id';
              ELSE
                row_new := to_jsonb(NEW);
                k := row_new->>'_id';
                IF TG_OP = 'INSERT' THEN
                  changed := ARRAY(SELECT key FROM jsonb_each(row_new)
                    WHERE jsonb_typeof(value) <> 'null' AND key <> '_id' AND left(key, 6) <> '_sync_');
                ELSE
                  row_old := to_jsonb(OLD);
                  IF row_old->'_id' IS DISTINCT FROM row_new->'_id' THEN
                    RAISE EXCEPTION 'realm-sync: the primary key of a % does not change; delete the object and insert another',
                      TG_TABLE_NAME;
                  END IF;
                  changed := ARRAY(SELECT n.key FROM jsonb_each(row_new) n JOIN jsonb_each(row_old) o USING (key)
                    WHERE n.value IS DISTINCT FROM o.value);
                END IF;
                bad := ARRAY(SELECT c FROM unnest(changed) c WHERE NOT c = ANY(allowed));
                IF cardinality(bad) > 0 THEN
                  RAISE EXCEPTION 'realm-sync: column % of % is not written with SQL (writable: %)',
                    bad[1], TG_TABLE_NAME, array_to_string(allowed, ', ');
                END IF;
                -- A timestamp written without its nanoseconds column: they come from the timestamp.
                FOREACH s IN ARRAY stamps LOOP
                  IF s = ANY(changed) AND NOT (s || '__ns') = ANY(changed) THEN
                    NEW := jsonb_populate_record(NEW, jsonb_build_object(s || '__ns', NULL));
                  END IF;
                END LOOP;
                IF TG_OP = 'INSERT' THEN
                  NEW._sync_created := 0;
                  NEW._sync_created_by := '\\x00000000000000000000000000000000'::bytea;
                  NEW._sync_clocks := '{}'::jsonb;
                  NEW._sync_values := NULL;
                END IF;
              END IF;
              INSERT INTO \(table("_sync_external")) (class, op, key, changed) VALUES (TG_TABLE_NAME, TG_OP, k, changed);
              PERFORM pg_notify('\(channel)', 'external');
              IF TG_OP = 'DELETE' THEN RETURN OLD; END IF;
              RETURN NEW;
            END
            $f$
            """,
            """
            CREATE OR REPLACE FUNCTION \(schema)._sync_refuse_truncate() RETURNS trigger LANGUAGE plpgsql AS $f$
            BEGIN
              IF current_setting('realm_sync.applying', true) = 'on' THEN RETURN NULL; END IF;
              RAISE EXCEPTION 'realm-sync: % is not truncated; DELETE its rows instead', TG_TABLE_NAME;
            END
            $f$
            """,
        ]
    }

    /// The triggers of `cls`'s table, made again (its writable columns change with the schema).
    func captureStatements(for cls: SyncClass) -> [String] {
        let plain = cls.properties.filter(StoredValues.isPlain)
        let writable = plain.flatMap { $0.valueTag == 8 ? [$0.name, SQLMapping.nanosecondsColumn($0.name)] : [$0.name] }
        let stamps = plain.filter { $0.valueTag == 8 }.map(\.name)
        let t = table(cls.name)
        return [
            "DROP TRIGGER IF EXISTS _sync_capture ON \(t)",
            """
            CREATE TRIGGER _sync_capture BEFORE INSERT OR UPDATE OR DELETE ON \(t) FOR EACH ROW \
            EXECUTE FUNCTION \(schema)._sync_capture('\(writable.joined(separator: ","))', '\(stamps.joined(separator: ","))')
            """,
            "DROP TRIGGER IF EXISTS _sync_truncate ON \(t)",
            "CREATE TRIGGER _sync_truncate BEFORE TRUNCATE ON \(t) FOR EACH STATEMENT EXECUTE FUNCTION \(schema)._sync_refuse_truncate()",
        ]
    }

    /// The primary key `text` (as `to_jsonb(row)->>'_id'` gives it) of a class whose keys are
    /// tagged `tag`.
    static func key(_ text: String, tag: UInt8) -> SyncValue? {
        switch tag {
        case 3: return Int64(text).map(SyncValue.int)
        case 6: return .string(text)
        case 9:
            guard text.hasPrefix("\\x") else { return nil }
            let bytes = hexBytes(text.dropFirst(2))
            return bytes.count == 12 ? .objectId(bytes) : nil
        case 10: return UUID(uuidString: text).map { .uuid(SQLMapping.bytes($0)) }
        default: return nil
        }
    }

    /// One recorded SQL change.
    private struct ExternalChange {
        var id: SyncStoreModel.ObjectID
        var operation: String
        var changed: [String]
        var milliseconds: Int64
    }

    /// Turns the SQL changes recorded so far (at most 5,000) into history entries, in the order
    /// they were made; returns the server version after, or nil when there were none.
    ///
    /// Each change is applied with a clock later than every clock of its object (the row already
    /// holds its values, so it is the object's newest write), as a writer of its own
    /// (``sqlWriterId``): an `INSERT` is the object's `CREATE` and a `SET` of each non-null
    /// column, an `UPDATE` a `SET` of each column it changed, a `DELETE` its `ERASE`. Consecutive
    /// changes of distinct objects make one entry.
    func convertExternal() async throws -> UInt64? {
        var pending = false
        for try await _ in try await client.query("SELECT 1 FROM \(unescaped: table("_sync_external")) LIMIT 1", logger: logger).decode(
            Int32.self)
        {
            pending = true
        }
        guard pending else { return nil }
        return try await transaction { c -> UInt64? in
            var version = try await lockHistory(on: c)
            let catalog = try await catalog(on: c)
            var rows: [(Int64, String, String, String, [String]?, Int64)] = []
            for try await row in try await c.query(
                """
                DELETE FROM \(unescaped: table("_sync_external")) WHERE id IN \
                (SELECT id FROM \(unescaped: table("_sync_external")) ORDER BY id LIMIT 5000) \
                RETURNING id, class, op, key, changed, (extract(epoch FROM at) * 1000)::bigint
                """, logger: logger
            ).decode((Int64, String, String, String, [String]?, Int64).self) {
                rows.append(row)
            }
            guard !rows.isEmpty else { return nil }
            var changes: [ExternalChange] = []
            for (_, name, op, text, changed, ms) in rows.sorted(by: { $0.0 < $1.0 }) {
                guard let cls = catalog.classes[name], let key = Self.key(text, tag: cls.primaryKeyTag) else {
                    logger.warning(
                        "an SQL change of an unknown class or key was dropped", metadata: ["class": "\(name)", "key": "\(text)"])
                    continue
                }
                let properties = Set(cls.properties.map(\.name))
                let names = (changed ?? []).map { n in
                    n.hasSuffix("__ns") && properties.contains(String(n.dropLast(4))) ? String(n.dropLast(4)) : n
                }
                changes.append(
                    ExternalChange(id: SyncStoreModel.ObjectID(name, key), operation: op, changed: names, milliseconds: ms))
            }
            var ids: [SyncStoreModel.ObjectID] = []
            var seen = Set<SyncStoreModel.ObjectID>()
            for change in changes where seen.insert(change.id).inserted { ids.append(change.id) }
            let loaded = try await load(ids, catalog: catalog, on: c)
            var model = SyncStoreModel()
            for id in ids {
                // A row written with SQL and not converted yet is not an object of the model yet.
                let object = loaded[id]?.object.flatMap { $0.created.clock == 0 ? nil : $0 }
                model.load(id, object: object, tombstone: loaded[id]?.tombstone)
            }
            var history: [HistoryRow] = []
            var group: [Instruction] = []
            var inGroup = Set<SyncStoreModel.ObjectID>()
            var clock: UInt64 = 0
            var last: UInt64 = 0
            func flush() {
                guard !group.isEmpty else { return }
                let effective = model.apply(Upload(clientVersion: 0, clock: clock, instructions: group), from: Self.sqlWriterId)
                version += 1
                var w = WireWriter()
                w.instructions(effective)
                history.append(HistoryRow(version: version, clientFileId: nil, clientVersion: 0, clock: clock, changeset: w.bytes))
                last = clock
                group = []
                inGroup = []
            }
            for change in changes {
                if inGroup.contains(change.id) { flush() }
                let id = change.id
                var instructions: [Instruction] = []
                // Later than the previous entry's, and than every clock of the object.
                var at = max(HybridClock.value(milliseconds: UInt64(max(0, change.milliseconds))), last + 1)
                if change.operation == "DELETE" {
                    instructions.append(Instruction(id.className, id.primaryKey, .erase))
                } else {
                    guard let row = loaded[id]?.object, let cls = catalog.classes[id.className] else { continue }  // deleted since
                    let plain = cls.properties.filter(StoredValues.isPlain).map(\.name)
                    if let object = model.object(id) {
                        at = max(at, object.created.clock + 1)
                        for slot in object.properties.values { at = max(at, slot.key.clock + 1) }
                        for name in change.changed where plain.contains(name) {
                            instructions.append(
                                Instruction(id.className, id.primaryKey, .set(path: [name], value: row.properties[name]?.value ?? .null)))
                        }
                    } else {
                        if let deleted = model.tombstone(id) { at = max(at, deleted.clock + 1) }
                        instructions.append(Instruction(id.className, id.primaryKey, .create))
                        for name in plain {
                            guard let value = row.properties[name]?.value, value != .null else { continue }
                            instructions.append(Instruction(id.className, id.primaryKey, .set(path: [name], value: value)))
                        }
                    }
                }
                guard !instructions.isEmpty else { continue }
                clock = max(clock, at)
                group += instructions
                inGroup.insert(id)
            }
            flush()
            guard !history.isEmpty else { return nil }
            try await store(ids.map { ($0, loaded[$0]?.object, model.object($0)) }, catalog: catalog, on: c)
            try await storeTombstones(of: ids, model, loaded: loaded, on: c)
            try await appendHistory(history, on: c)
            return version
        }
    }
}
