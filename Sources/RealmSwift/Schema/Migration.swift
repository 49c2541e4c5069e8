import RealmStorage

/// The object handed to a migration block: old objects read the file as it was, new objects
/// are written with the new schema.
///
/// Used only inside the block, on the thread that opened the Realm.
public final class Migration {
    let realm: Realm
    let old: Realm
    /// The schema of the file before the migration.
    public let oldSchema: Schema
    /// The schema after the migration.
    public var newSchema: Schema { realm.schema }

    init(realm: Realm, old: Realm) {
        self.realm = realm
        self.old = old
        self.oldSchema = old.schema
    }

    /// Calls `block` with every object of `typeName` as it was (`oldObject`) and as it is now
    /// (`newObject`, nil when the class or the object no longer exists).
    public func enumerateObjects(ofType typeName: String, _ block: (_ oldObject: MigrationObject?, _ newObject: MigrationObject?) -> Void) {
        guard old.catalog.table(typeName) != nil else { return }
        let exists = realm.catalog.table(typeName) != nil
        for k in old.objectKeys(typeName) {
            let o = old.dynamicObject(typeName, k)
            let n = exists && ((try? realm.transaction!.contains(typeName, k)) ?? false) ? realm.dynamicObject(typeName, k) : nil
            block(o, n)
        }
    }

    /// Creates an object of `typeName` in the new schema.
    @discardableResult
    public func create(_ typeName: String, value: Any = [String: Any]()) -> MigrationObject {
        do { return try realm.checkedDynamicCreate(typeName, value: value) } catch { fatalError("\(error)") }
    }

    /// Deletes a new object.
    public func delete(_ object: MigrationObject) { realm.delete(object) }

    /// Deletes every object of `typeName` and its table. Returns whether it existed.
    @discardableResult
    public func deleteData(forType typeName: String) -> Bool {
        let tx = realm.requireWrite()
        guard tx.catalog.table(typeName) != nil else { return false }
        do { try realmErrors { try tx.deleteAll(typeName) } } catch { fatalError("\(error)") }
        realm.bump()
        return true
    }

    /// Carries the values of `oldName` (in the old schema) over to `newName` (in the new one).
    public func renameProperty(onType typeName: String, from oldName: String, to newName: String) {
        let tx = realm.requireWrite()
        guard let oldTable = old.catalog.table(typeName), oldTable.column(oldName) != nil else {
            fatalError("Cannot rename property '\(typeName).\(oldName)': it does not exist in the old schema.")
        }
        guard tx.catalog.table(typeName)?.column(newName) != nil else {
            fatalError("Cannot rename property '\(typeName).\(oldName)' to '\(newName)': the new schema has no such property.")
        }
        do {
            try realmErrors {
                let snap = old.currentSnapshot
                for k in try snap.objectKeys(typeName) where try tx.contains(typeName, k) {
                    try tx.set(typeName, k, newName, try snap.value(typeName, k, oldName))
                }
            }
        } catch {
            fatalError("Cannot rename property '\(typeName).\(oldName)' to '\(newName)': \(error)")
        }
        realm.bump()
    }
}

/// An object seen by a migration: a ``DynamicObject``.
public typealias MigrationObject = DynamicObject

/// Applies schema changes inside the migration's write transaction and runs the block.
struct Migrator {
    let realm: Realm
    let classes: [ClassInfo]
    let oldVersion: UInt64
    let old: Snapshot

    func run() throws {
        let tx = realm.transaction!
        let oldRealm = Realm(frozen: old.retained(kind: "migration"), of: realm)
        try realmErrors {
            for c in classes {
                guard let t = tx.catalog.table(c.className) else { continue }
                if let pk = c.primaryKey, t.primaryKey != c.properties[pk].name {
                    throw Realm.Error(.schemaMismatch, "Changing the primary key of '\(c.className)' is not supported by this version.")
                }
                for col in t.columns where col.name != t.primaryKey {
                    let p = c.indexByName[col.name].map { c.properties[$0] }
                    if p?.isStored != true || !Self.same(p!.column!, col) { try tx.removeColumn(c.className, col.name) }
                }
            }
        }
        // New tables and columns (types that changed come back empty; the block fills them).
        for c in classes { try realm.addMissingColumns(c) }
        if let block = realm.configuration.migrationBlock {
            block(Migration(realm: realm, old: oldRealm), oldVersion)
        }
        realm.bump()
    }

    static func same(_ a: ColumnSchema, _ b: ColumnSchema) -> Bool {
        a.type == b.type && a.isList == b.isList && a.isSet == b.isSet && a.isMap == b.isMap && a.linkTarget == b.linkTarget
            && a.isNullable == b.isNullable
            && a.isIndexed == b.isIndexed
    }
}
