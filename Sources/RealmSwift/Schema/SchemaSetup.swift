import Foundation
import RealmStorage

/// How a table's catalog columns map to a class's properties (for inserts in catalog order).
enum LayoutSlot {
    case property(Int)
    /// A column the class does not declare (only possible in files written by other tools).
    case unused(ColumnSchema)
}

/// Creating tables for model classes, checking them against the file, and migrating.
enum SchemaSetup {
    static let metadataTable = "__RealmMetadata"
    static let versionColumn = "schemaVersion"

    /// Checks and prepares the file when a Realm opens.
    static func run(_ realm: Realm) throws {
        let config = realm.configuration
        let snapshot = realm.currentSnapshot
        defer { if let types = config.objectTypes { for c in closure(types.map { ClassInfo.of($0) }) { realm.known[c.className] = c } } }
        var classes: [ClassInfo]
        if let types = config.objectTypes {
            classes = closure(types.map { ClassInfo.of($0) })
        } else {
            classes = ClassInfo.discovered.filter { snapshot.catalog.table($0.className) != nil }
        }
        for c in classes {
            let errors = c.modelErrors
            if !errors.isEmpty { throw Realm.Error(.schemaMismatch, errors.joined(separator: " ")) }
        }
        let stored = storedVersion(snapshot)
        if config.schemaVersion < stored {
            throw Realm.Error(
                .schemaMismatch, "Provided schema version \(config.schemaVersion) is less than last set version \(stored).",
                path: realm.store.path)
        }
        let diffs = classes.flatMap { differences($0, snapshot.catalog) }
        let needsVersion = config.schemaVersion > stored
        let missing = classes.filter { snapshot.catalog.table($0.className) == nil }
        if !diffs.isEmpty && !needsVersion && !config.deleteRealmIfMigrationNeeded {
            throw Realm.Error(
                .schemaMismatch, "Migration is required due to the following errors:\n" + diffs.map { "- \($0)" }.joined(separator: "\n"),
                path: realm.store.path)
        }
        if config.readOnly {
            if needsVersion {
                throw Realm.Error(.schemaMismatch, "A read-only Realm cannot be migrated to schema version \(config.schemaVersion).")
            }
            realm.verified.formUnion(classes.filter { snapshot.catalog.table($0.className) != nil }.map { ObjectIdentifier($0.type) })
            return
        }
        guard !diffs.isEmpty || needsVersion || !missing.isEmpty || snapshot.catalog.table(metadataTable) == nil else {
            realm.verified.formUnion(classes.map { ObjectIdentifier($0.type) })
            return
        }
        try realm.checkedBeginWrite()
        do {
            let tx = realm.transaction!
            if !diffs.isEmpty && !needsVersion {
                // deleteRealmIfMigrationNeeded: start over with an empty file.
                for t in tx.catalog.tables.reversed() { try realmErrors { try dropTable(t.name, tx) } }
            }
            if needsVersion {
                try Migrator(realm: realm, classes: classes, oldVersion: stored, old: snapshot).run()
            }
            for c in classes { try realm.ensureTable(c) }
            try setStoredVersion(config.schemaVersion, tx)
            try realm.commitWrite()
        } catch {
            if realm.isInWriteTransaction { realm.cancelWrite() }
            throw error
        }
    }

    /// Removes a table after removing the link columns that point to it.
    static func dropTable(_ name: String, _ tx: WriteTransaction) throws {
        guard tx.catalog.table(name) != nil else { return }
        for t in tx.catalog.tables where t.name != name {
            for c in t.columns where c.linkTarget == name { try tx.removeColumn(t.name, c.name) }
        }
        try tx.removeTable(name)
    }

    /// `roots` and every class reachable from them through links.
    static func closure(_ roots: [ClassInfo]) -> [ClassInfo] {
        var out: [ClassInfo] = []
        var seen = Set<ObjectIdentifier>()
        var stack = roots
        while let c = stack.popLast() {
            guard seen.insert(ObjectIdentifier(c)).inserted else { continue }
            out.append(c)
            for p in c.properties {
                if let t = p.valueType._rlmInfo.objectType { stack.append(ClassInfo.of(t)) }
            }
        }
        return out
    }

    static func storedVersion(_ s: Snapshot) -> UInt64 {
        guard s.catalog.table(metadataTable) != nil, let k = try? s.objectKeys(metadataTable).first,
            case .int(let v)? = try? s.value(metadataTable, k, versionColumn)
        else { return 0 }
        return UInt64(bitPattern: v)
    }

    static func setStoredVersion(_ v: UInt64, _ tx: WriteTransaction) throws {
        try realmErrors {
            if tx.catalog.table(metadataTable) == nil {
                try tx.createTable(metadataTable)
                try tx.addColumn(metadataTable, ColumnSchema(versionColumn, .int))
            }
            if let k = try tx.objectKeys(metadataTable).first {
                try tx.set(metadataTable, k, versionColumn, .int(Int64(bitPattern: v)))
            } else {
                try tx.insert(metadataTable, [versionColumn: .int(Int64(bitPattern: v))])
            }
        }
    }

    /// How `info` differs from its table in `catalog` (empty when the table is absent or equal).
    static func differences(_ info: ClassInfo, _ catalog: Catalog) -> [String] {
        guard let t = catalog.table(info.className) else { return [] }
        var out: [String] = []
        let cls = info.className
        for p in info.properties where p.isStored {
            let want = p.column!
            guard let have = t.column(p.name) else {
                out.append("Property '\(cls).\(p.name)' has been added.")
                continue
            }
            if have.type != want.type || have.isList != want.isList || have.isSet != want.isSet || have.isMap != want.isMap
                || have.linkTarget != want.linkTarget
            {
                out.append("Property '\(cls).\(p.name)' has been changed from '\(describe(have))' to '\(describe(want))'.")
            } else if have.isNullable != want.isNullable {
                out.append("Property '\(cls).\(p.name)' has been made \(want.isNullable ? "optional" : "required").")
            } else if p.property.isPrimaryKey != (t.primaryKey == p.name) {
                out.append("Primary Key for class '\(cls)' has been \(p.property.isPrimaryKey ? "added" : "removed") on '\(p.name)'.")
            } else if !p.property.isPrimaryKey && have.isIndexed != want.isIndexed {
                out.append("Property '\(cls).\(p.name)' has been made \(want.isIndexed ? "indexed" : "unindexed").")
            }
        }
        for c in t.columns where info.indexByName[c.name].map({ !info.properties[$0].isStored }) ?? true {
            out.append("Property '\(cls).\(c.name)' has been removed.")
        }
        return out
    }

    static func describe(_ c: ColumnSchema) -> String {
        var s = c.type == .link ? "<\(c.linkTarget ?? "?")>" : "\(c.type)"
        if c.isNullable && c.type != .link && c.type != .mixed { s += "?" }
        if c.isSet {
            s = "set<\(s)>"
        } else if c.isMap {
            s = "map<string, \(s)>"
        } else if c.isList {
            s = "array<\(s)>"
        }
        return s
    }

    /// The public schema of a catalog (internal tables hidden).
    /// The schema of the file's tables; a table of a model class the Realm knows says whether the
    /// class is embedded (the file itself does not record it).
    static func schema(of catalog: Catalog, known: [String: ClassInfo] = [:]) -> Schema {
        let classes = catalog.tables.filter { !$0.name.hasPrefix("__") }.sorted { $0.name < $1.name }.map { t in
            ObjectSchema(
                className: t.name,
                properties: t.columns.map { c in
                    Property(
                        name: c.name, type: propertyType(c.type), isIndexed: c.isIndexed,
                        isOptional: c.isNullable && !(c.type == .link && !c.isList),
                        isArray: c.isList && !c.isSet, isSet: c.isSet, isMap: c.isMap, isPrimaryKey: t.primaryKey == c.name,
                        objectClassName: c.linkTarget)
                }, isEmbedded: known[t.name]?.isEmbedded ?? false)
        }
        return Schema(objectSchema: classes)
    }

    static func propertyType(_ t: ColumnType) -> PropertyType {
        switch t {
        case .int: .int
        case .bool: .bool
        case .float: .float
        case .double: .double
        case .string: .string
        case .binary: .data
        case .timestamp: .date
        case .objectId: .objectId
        case .uuid: .UUID
        case .decimal128: .decimal128
        case .link: .object
        case .mixed: .any
        }
    }
}

extension Realm {
    /// Checks `info` against the file once per Realm, creating its tables inside a write
    /// transaction; a mismatch stops the process with the migration message.
    func verifyOrTrap(_ info: ClassInfo) {
        if isFrozen || caches.lastVerified === info { return }
        let id = ObjectIdentifier(info.type)
        if verified.contains(id) {
            caches.lastVerified = info
            return
        }
        let errors = info.modelErrors
        if !errors.isEmpty { fatalError(errors.joined(separator: " ")) }
        let diffs = SchemaSetup.differences(info, catalog)
        if !diffs.isEmpty {
            fatalError(
                "Migration is required due to the following errors:\n" + diffs.map { "- \($0)" }.joined(separator: "\n")
                    + "\nList the class in Configuration.objectTypes to get this as a thrown error when the Realm opens, and raise schemaVersion to migrate."
            )
        }
        if catalog.table(info.className) != nil {
            verified.insert(id)
            if known[info.className] == nil { known[info.className] = info }
        }
    }

    /// Creates the tables of `info` and of every class it links to, as needed.
    func ensureTable(_ info: ClassInfo) throws {
        let id = ObjectIdentifier(info.type)
        if verified.contains(id), catalog.table(info.className) != nil { return }
        verifyOrTrap(info)
        let tx = requireWrite("add objects")
        let all = SchemaSetup.closure([info])
        try realmErrors {
            let created = all.filter { tx.catalog.table($0.className) == nil }
            for c in created {
                for d in SchemaSetup.differences(c, tx.catalog) { throw Realm.Error(.schemaMismatch, d) }
                try tx.createTable(c.className, primaryKey: c.primaryKey.map { c.properties[$0].column! })
                for (i, p) in c.properties.enumerated() where p.isStored && i != c.primaryKey && p.property.type != .object {
                    try tx.addColumn(c.className, p.column!)
                }
            }
            for c in created {
                for p in c.properties where p.isStored && p.property.type == .object { try tx.addColumn(c.className, p.column!) }
            }
        }
        for c in all { verifyOrTrap(c) }
        caches.layouts = [:]
        stamp += 1
    }

    /// The catalog-order layout of `info`'s table: kept across write transactions while the
    /// table's columns are the same (a commit that changes no schema shares them, so the check is
    /// an identity comparison; a one-object commit no longer hashes every column name).
    func columnLayout(_ info: ClassInfo, _ tx: WriteTransaction) throws -> [LayoutSlot] {
        guard let t = tx.catalog.table(info.className) else { throw Realm.Error(.fail, "no table for \(info.className)") }
        let id = ObjectIdentifier(info)
        if let l = caches.layouts[id], l.columns == t.columns { return l.slots }
        let slots: [LayoutSlot] = t.columns.map { c in info.indexByName[c.name].map { .property($0) } ?? .unused(c) }
        caches.layouts[id] = (t.columns, slots)
        return slots
    }
}

extension Realm {
    /// Creates missing tables of `classes` and adds the columns their tables lack (migrations).
    func addMissingColumns(_ info: ClassInfo) throws {
        let tx = requireWrite()
        let all = SchemaSetup.closure([info])
        try realmErrors {
            for c in all where tx.catalog.table(c.className) == nil {
                try tx.createTable(c.className, primaryKey: c.primaryKey.map { c.properties[$0].column! })
            }
            for c in all {
                for p in c.properties where p.isStored && tx.catalog.table(c.className)?.column(p.name) == nil {
                    try tx.addColumn(c.className, p.column!)
                }
            }
        }
        caches.layouts = [:]
        bump()
    }
}

extension Realm {
    /// The model class this Realm uses for the table `className`: one of its configuration's
    /// classes, else one it has used, else the only discovered class of that name (nil: none, or
    /// several — then the dynamic API reads it).
    func modelClass(named className: String) -> ClassInfo? {
        if let c = known[className] { return c }
        let candidates = ClassInfo.discovered.filter { $0.className == className && $0.type is Object.Type }
        return candidates.count == 1 ? candidates[0] : nil
    }
}
