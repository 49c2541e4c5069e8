import RealmStorage

/// The plain in-memory model the `Operations` target checks the engine against: per table, the
/// objects by key with one value per column. Mutations here cannot fail; the harness decides from
/// the model which engine errors to expect.
struct ReferenceModel {
    /// `Item`: no primary key; an indexed int, nullable scalars, a mixed, a list and a map.
    static let item = "Item"
    /// `Keyed`: an int primary key.
    static let keyed = "Keyed"

    static let schema: [(table: String, primaryKey: ColumnSchema?, columns: [ColumnSchema])] = [
        (
            item, nil,
            [
                ColumnSchema("n", .int, indexed: true), ColumnSchema("s", .string, nullable: true),
                ColumnSchema("d", .double, nullable: true),
                ColumnSchema("x", .mixed, nullable: true), ColumnSchema("tags", .string, list: true),
                ColumnSchema("m", .int, nullable: true, map: true),
            ]
        ),
        (keyed, ColumnSchema("id", .int), [ColumnSchema("v", .string), ColumnSchema("b", .binary)]),
    ]

    static func columns(_ table: String) -> [ColumnSchema] {
        let t = schema.first { $0.table == table }!
        return (t.primaryKey.map { [$0] } ?? []) + t.columns
    }

    var objects: [String: [ObjectKey: [String: StorageValue]]] = [item: [:], keyed: [:]]

    func keys(_ table: String) -> [ObjectKey] { objects[table, default: [:]].keys.sorted() }

    /// The object of `table` whose primary key is `id`, if any.
    func key(_ table: String, primaryKey id: StorageValue) -> ObjectKey? {
        objects[table, default: [:]].first { $0.value["id"].map { $0.bitwiseEquals(id) } ?? false }?.key
    }

    /// Compares every object and field of `self` with what `read` reports; traps on a difference.
    func check(
        _ what: @autoclosure () -> String, keys readKeys: (String) throws -> [ObjectKey],
        value readValue: (String, ObjectKey, String) throws -> StorageValue
    ) {
        for (table, objects) in objects {
            let expected = objects.keys.sorted()
            let got: [ObjectKey]
            do { got = try readKeys(table).sorted() } catch { fatalError("Operations: \(what()): keys of \(table): \(error)") }
            require(got == expected, "Operations: \(what()): \(table) has keys \(got), the model \(expected)")
            for key in expected { check(what(), table, key, value: readValue) }
        }
    }

    /// Compares one object with what `read` reports; traps on a difference.
    func check(
        _ what: @autoclosure () -> String, _ table: String, _ key: ObjectKey,
        value readValue: (String, ObjectKey, String) throws -> StorageValue
    ) {
        guard let fields = objects[table]?[key] else { return }
        for column in Self.columns(table) {
            let got: StorageValue
            do { got = try readValue(table, key, column.name) } catch {
                fatalError("Operations: \(what()): \(table) \(key).\(column.name): \(error)")
            }
            let expected = fields[column.name]!
            require(
                got.bitwiseEquals(expected), "Operations: \(what()): \(table) \(key).\(column.name) is \(got), the model \(expected)")
        }
    }
}
