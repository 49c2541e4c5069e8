import Foundation
import RealmStorage

extension Realm {
    // MARK: Reading

    /// Every object of `type`, as a live ``Results``.
    public func objects<Element: Object>(_ type: Element.Type) -> Results<Element> {
        checkThread()
        let info = ClassInfo.of(type)
        verifyOrTrap(info)
        return Results(realm: self, info: info)
    }

    /// The object of `type` whose primary key is `key`, or nil.
    public func object<Element: Object, KeyType>(ofType type: Element.Type, forPrimaryKey key: KeyType) -> Element? {
        checkThread()
        let info = classInfo(type)
        let raw: StorageValue
        do {
            raw = try ValueCoercion.primaryKey(key, primaryKeyInfo(info))
        } catch {
            fatalError("Invalid primary key value \(key) for '\(info.className)': \(error)")
        }
        return object(type, info, primaryKey: raw)
    }

    /// The object of `type` whose primary key is `key`, or nil (an `Int` key: no dynamic cast).
    public func object<Element: Object>(ofType type: Element.Type, forPrimaryKey key: Int) -> Element? {
        checkThread()
        // The class of the last such lookup, in the same version: its class description and
        // table reader are at hand, without looking either up (or retaining them one by one).
        if transaction == nil, let shortcut = caches.primaryKeyShortcut, shortcut.type == ObjectIdentifier(type) {
            do {
                return try shortcut.bound.object(type, .int(Int64(key)), shortcut.info, in: self)
            } catch {
                lookUpFailed(shortcut.info, error)
            }
        }
        let info = classInfo(type)
        let pk = primaryKeyInfo(info)
        guard pk.type == .int else {
            do {
                return object(type, info, primaryKey: try ValueCoercion.primaryKey(key, pk))
            } catch {
                fatalError("Invalid primary key value \(key) for '\(info.className)': \(error)")
            }
        }
        do {
            guard transaction == nil, !isFrozen, let bound = try reader(info, currentSnapshot) else {
                return object(type, info, primaryKey: .int(Int64(key)))
            }
            caches.primaryKeyShortcut = PrimaryKeyShortcut(type: ObjectIdentifier(type), info: info, bound: bound)
            return try bound.object(type, .int(Int64(key)), info, in: self)
        } catch {
            lookUpFailed(info, error)
        }
    }

    /// Stops with the reason a lookup of `info`'s objects failed (a damaged file).
    private func lookUpFailed(_ info: ClassInfo, _ error: any Swift.Error) -> Never {
        readFailed(error, reading: "'\(info.className)'")
    }

    /// The type description of `info`'s primary-key property (stops when it has none).
    private func primaryKeyInfo(_ info: ClassInfo) -> _RLMTypeInfo {
        verifyOrTrap(info)
        guard let pk = info.primaryKey else {
            fatalError("'\(info.className)' does not have a primary key; declare one with @Persisted(primaryKey: true).")
        }
        return info.properties[pk].valueType._rlmInfo
    }

    /// The object of `type` (described by `info`) whose primary key's stored form is `raw`.
    private func object<Element: Object>(_ type: Element.Type, _ info: ClassInfo, primaryKey raw: StorageValue) -> Element? {
        do {
            // A table reader exists only for a table the file has; the other paths look it up.
            if let tx = transaction {
                guard tx.hasTable(info.className) else { return nil }
                return try tx.objectKey(info.className, primaryKey: raw).map { makeObject(type, $0, info) }
            }
            guard !isFrozen, let bound = try reader(info, currentSnapshot) else {
                guard catalog.tables.contains(where: { $0.name == info.className }) else { return nil }
                return try currentSnapshot.objectKey(info.className, primaryKey: raw).map { makeObject(type, $0, info) }
            }
            // A live Realm outside a write: the class's table reader finds the key and the
            // object's row, so its property reads take the direct path from the start.
            return try bound.object(type, raw, info, in: self)
        } catch {
            lookUpFailed(info, error)
        }
    }

    /// The class description of `type`: from this live Realm's last lookup when it was the same
    /// type, else from the process-wide registry.
    func classInfo(_ type: ObjectBase.Type) -> ClassInfo {
        if isFrozen { return ClassInfo.of(type) }
        let id = ObjectIdentifier(type)
        if let c = caches.lastClass, c.type == id { return c.info }
        let info = ClassInfo.of(type)
        caches.lastClass = (id, info)
        return info
    }

    /// A managed object of `type` for `key`.
    func makeObject<T: ObjectBase>(_ type: T.Type, _ key: ObjectKey, _ info: ClassInfo? = nil) -> T {
        let o = type.init()
        o._rlmBind(self, key, info ?? ClassInfo.of(type))
        return o
    }

    func objectKeys(_ table: String) -> [ObjectKey] {
        do {
            guard catalog.table(table) != nil else { return [] }
            if let tx = transaction { return try tx.objectKeys(table) }
            return try currentSnapshot.objectKeys(table)
        } catch {
            readFailed(error, reading: "'\(table)'")
        }
    }

    func objectCount(_ table: String) throws -> Int {
        guard catalog.table(table) != nil else { return 0 }
        if let tx = transaction { return try tx.objectCount(table) }
        return try currentSnapshot.objectCount(table)
    }

    func containsObject(_ object: ObjectBase) -> Bool {
        let name = object._rlmClass.className
        guard catalog.table(name) != nil else { return false }
        if let tx = transaction { return (try? tx.contains(name, object._rlmKey)) ?? false }
        return (try? currentSnapshot.contains(name, object._rlmKey)) ?? false
    }

    /// Forgets every table reader (and so the versions they pin).
    func dropReaders() {
        caches.readers = [:]
        caches.lastReader = nil
        caches.primaryKeyShortcut = nil
    }

    /// The reader of `info`'s table in the current snapshot (nil when the table does not exist).
    func reader(_ info: ClassInfo, _ snapshot: Snapshot) throws -> BoundReader? {
        if caches.readersVersion != snapshot.version {
            dropReaders()
            caches.readersVersion = snapshot.version
        }
        // (Both caches were emptied above when the version changed.)
        if let last = caches.lastReader, last.info === info { return last.reader }
        if let r = caches.readers[ObjectIdentifier(info)] {
            caches.lastReader = (info, r)
            return r
        }
        guard snapshot.catalog.table(info.className) != nil else { return nil }
        let r = try TableReader(snapshot, info.className)
        let bound = BoundReader(reader: r, columns: info.properties.map { r.columnIndex($0.name) ?? -1 }, readState: readState)
        caches.readers[ObjectIdentifier(info)] = bound
        caches.lastReader = (info, bound)
        return bound
    }

    /// The stored value of property `index` of a managed object.
    func readValue(_ object: ObjectBase, _ index: Int) -> StorageValue {
        checkThread()
        let info = object._rlmClass
        if object._rlmGeneration != generation {
            fatalError(
                "Object has been deleted or invalidated (reading \(info.className).\(info.properties[index].name)); realm.invalidate() was called since it was read."
            )
        }
        do {
            if let tx = transaction { return try tx.value(info.className, object._rlmKey, info.properties[index].name) }
            // A frozen Realm may be read from many threads: only its immutable snapshot is used.
            if isFrozen { return try snapshot!.value(info.className, object._rlmKey, info.properties[index].name) }
            let snap = currentSnapshot
            let view: GroupView
            let row: Int32
            if let binding = object._rlmBinding, let v = binding.view, v.version == snap.version {
                // Found in this version before (the stamp moved since: a cancelled write, say).
                view = v
                row = binding.row
            } else {
                guard let bound = try reader(info, snap) else { throw StorageError(.notFound, "no table") }
                guard let location = try bound.reader.locate(object._rlmKey), let v = bound.view(Int(location.group)) else {
                    throw StorageError(.notFound, "no object")
                }
                view = v
                row = location.row
            }
            object._rlmPlace(view, row: row, stamp: directReadStamp(view.version))
            return try view.value(index, row: row)
        } catch let e as StorageError where e.code == .notFound {
            fatalError("Object has been deleted or invalidated (reading \(info.className).\(info.properties[index].name)).")
        } catch {
            readFailed(error, reading: "\(info.className).\(info.properties[index].name)")
        }
    }

    // MARK: Writing properties

    /// Traps unless property `index` of `object` may be written now.
    @usableFromInline func checkWritable(_ object: ObjectBase, _ index: Int) {
        if isFrozen { fatalError("Cannot modify a frozen object; thaw() it and write to the live object in a write transaction.") }
        _ = requireWrite()
        if index == object._rlmClass.primaryKey {
            fatalError("Primary key can't be changed after an object is inserted (\(object._rlmClass.className)).")
        }
    }

    /// Writes property `index` of a managed object with the stored value `make` computes.
    func writeValue(_ object: ObjectBase, _ index: Int, _ make: () throws -> StorageValue) {
        let tx = requireWrite()
        let info = object._rlmClass
        do {
            // The property's fields are read in place: a copy of it retains every string it holds.
            let name = info.properties[index].name
            // Embedded objects replaced or removed by this write are deleted with it.
            let embedded = info.properties[index].valueType._rlmInfo.objectType.flatMap {
                $0 is EmbeddedObject.Type ? ClassInfo.of($0) : nil
            }
            let old = embedded == nil ? [] : Self.linkKeys(try tx.value(info.className, object._rlmKey, name))
            let new = try make()
            try tx.set(info.className, object._rlmKey, name, new)
            if let embedded {
                for k in Set(old).subtracting(Self.linkKeys(new)) where try tx.contains(embedded.className, k) {
                    try deleteObject(embedded, k, tx)
                }
            }
            stamp += 1
        } catch let e as StorageError where e.code == .notFound {
            fatalError("Object has been deleted or invalidated (writing \(info.className).\(info.properties[index].name)).")
        } catch {
            fatalError("Realm could not write \(info.className).\(info.properties[index].name): \(error)")
        }
    }

    /// Sets property `index` of a managed object to an already coerced value.
    func setAnyValue(_ object: ObjectBase, _ index: Int, _ value: Any) throws {
        let tx = requireWrite()
        let info = object._rlmClass
        let p = info.properties[index]
        let raw = try p.valueType._rlmEncodeAny(value, self).value
        try realmErrors { try tx.set(info.className, object._rlmKey, p.name, raw) }
        stamp += 1
    }

    // MARK: Adding

    /// Adds an unmanaged object (and the unmanaged objects it links to) to this Realm. With an
    /// update policy other than `.error`, an existing object with the same primary key is updated.
    /// Stops with a message when the primary key exists (`.error`) — use ``checkedAdd(_:update:)``
    /// to get a thrown error instead.
    public func add(_ object: ObjectBase, update: UpdatePolicy = .error) {
        do { try checkedAdd(object, update: update) } catch { fatalError("\(error)") }
    }

    /// Adds every object of `objects`.
    public func add<S: Sequence>(_ objects: S, update: UpdatePolicy = .error) where S.Iterator.Element: ObjectBase {
        for o in objects { add(o, update: update) }
    }

    /// The throwing form of `add(_:update:)`.
    /// - Throws: ``Realm/Error`` — `.primaryKeyExists`, `.invalidValue`, `.fail` (an object of
    ///   another Realm).
    public func checkedAdd(_ object: ObjectBase, update: UpdatePolicy = .error) throws {
        let tx = requireWrite("add objects")
        if object._rlmClass.isEmbedded {
            throw Realm.Error(.fail, "Embedded objects cannot be added directly; assign them to a property of their parent object.")
        }
        let saved = addPolicy
        addPolicy = update
        defer { addPolicy = saved }
        if update != .error, object._rlmClass.primaryKey == nil {
            throw Realm.Error(.fail, "'\(object._rlmClass.className)' has no primary key; add(_:update:) with an update policy needs one")
        }
        _ = try insert(object, tx, providedOnly: false)
    }

    /// Creates a managed object of `type` from a dictionary, an array in property order, or another
    /// object; with an update policy, updates the object with the same primary key instead (only
    /// the properties given).
    @discardableResult
    public func create<T: ObjectBase>(_ type: T.Type, value: Any = [String: Any](), update: UpdatePolicy = .error) -> T {
        do { return try checkedCreate(type, value: value, update: update) } catch { fatalError("\(error)") }
    }

    /// The throwing form of ``create(_:value:update:)``.
    /// - Throws: ``Realm/Error`` — `.primaryKeyExists`, `.invalidProperty`, `.invalidValue`.
    @discardableResult
    public func checkedCreate<T: ObjectBase>(_ type: T.Type, value: Any = [String: Any](), update: UpdatePolicy = .error) throws -> T {
        let tx = requireWrite("create objects")
        let o = type.init()
        if let other = value as? ObjectBase {
            // Copy every property of another object.
            for (i, p) in o._rlmClass.properties.enumerated() where p.isStored {
                guard let j = other._rlmClass.indexByName[p.name] else { continue }
                var v = other.propertyValue(j)
                if let linked = unwrapOptional(v) as? ObjectBase, linked._rlmRealm != nil, linked._rlmRealm?.store !== store {
                    v = try p.valueType._rlmCoerceAny(linked, nil)
                }
                o._rlmSetUnmanaged(i, try ValueCoercion.coerce(v, to: p, realm: nil))
            }
        } else {
            try ValueCoercion.assign(value, to: o)
        }
        let saved = addPolicy
        addPolicy = update
        defer { addPolicy = saved }
        _ = try insert(o, tx, providedOnly: update != .error)
        return o
    }

    /// The key to store for a link to `object`, adding it when it is unmanaged.
    func linkKey(for object: ObjectBase) throws -> ObjectKey {
        if object is EmbeddedObject, object._rlmRealm != nil {
            throw Realm.Error(.fail, "Cannot set a link to an existing managed embedded object; assign a new, unmanaged one.")
        }
        if let r = object._rlmRealm {
            guard r.store === store else {
                throw Realm.Error(.fail, "Object is already managed by another Realm. Use create instead to copy it into this Realm.")
            }
            return object._rlmKey
        }
        return try insert(object, requireWrite("add objects"), providedOnly: false)
    }

    /// The column layout of the class inserted last (a class: read per insert without copying
    /// its fields).
    final class InsertLayout {
        let info: ClassInfo
        let slots: [LayoutSlot]
        /// Column j holds property j for every column, and no property holds links: an object
        /// whose every stored property is in stored form is inserted from its slots as they are.
        let direct: Bool
        init(info: ClassInfo, slots: [LayoutSlot], direct: Bool) {
            self.info = info
            self.slots = slots
            self.direct = direct
        }
    }

    /// The error an insert of `object` throws for `e`.
    private func insertError(_ e: StorageError, _ object: ObjectBase, _ info: ClassInfo) -> Realm.Error {
        guard e.code == .duplicatePrimaryKey else { return Realm.Error(e) }
        let pk = info.primaryKey.map { String(describing: unwrapOptional(object._rlmHeldValue($0) ?? "?") ?? "nil") } ?? "?"
        return Realm.Error(
            .primaryKeyExists, "Attempting to create an object of type '\(info.className)' with an existing primary key value '\(pk)'.",
            underlying: e)
    }

    /// Inserts (or, by primary key, updates) an unmanaged object and binds it.
    func insert(_ object: ObjectBase, _ tx: WriteTransaction, providedOnly: Bool) throws -> ObjectKey {
        if let r = object._rlmRealm {
            guard r.store === store else {
                throw Realm.Error(.fail, "Object is already managed by another Realm. Use create instead to copy it into this Realm.")
            }
            return object._rlmKey
        }
        let info = object._rlmClass
        if caches.lastInsert?.info !== info {
            try ensureTable(info)
            let layout = try columnLayout(info, tx)
            let direct =
                layout.count == info.properties.count
                && layout.indices.allSatisfy { j in
                    if case .property(let i) = layout[j] { i == j && !info.properties[i].property.type.holdsLinks } else { false }
                }
            caches.lastInsert = InsertLayout(info: info, slots: layout, direct: direct)
        }
        let last = caches.lastInsert!
        // Every stored property in stored form (the common case: scalars and strings set through
        // accessors): the row is made from those alone, without the values as `Any`.
        let allStored = info.storedMaskCovers && info.storedMask & ~object._rlmStoredMask == 0
        // No update by primary key: the object is inserted.
        let insertsOnly = addPolicy == .error || info.primaryKey == nil
        // The commonest add, first: such an object whose slots are in column order: they are the row.
        if last.direct, allStored, insertsOnly, object._rlmStored.count == last.slots.count {
            let key: ObjectKey
            do {
                key = try tx.insert(info.className, values: object._rlmStored)
            } catch let e as StorageError {
                throw insertError(e, object, info)
            }
            object._rlmBind(self, key, info)
            stamp += 1
            return key
        }
        let layout = last.slots
        // Which properties the caller gave (before defaults fill the rest), for `providedOnly`.
        let provided = providedOnly ? info.properties.indices.map { object._rlmHasValue($0) } : []
        let values = allStored && insertsOnly ? [] : info.unmanagedValues(of: object)
        let table = info.className
        var existing: ObjectKey?
        if let pk = info.primaryKey, addPolicy != .error {
            let pkRaw = try realmErrors { try info.properties[pk].valueType._rlmEncodeAny(values[pk]!, self).value }
            existing = try realmErrors { try tx.objectKey(table, primaryKey: pkRaw) }
        }
        var deferred: [Int] = []
        let key: ObjectKey
        if let existing {
            key = existing
            object._rlmBind(self, key, info)
            for (i, p) in info.properties.enumerated() where p.isStored && i != info.primaryKey {
                if providedOnly && !provided[i] { continue }
                if p.property.type.holdsLinks {
                    deferred.append(i)
                    continue
                }
                let raw = try realmErrors { try p.valueType._rlmEncodeAny(values[i]!, self).value }
                if addPolicy == .modified, try realmErrors({ try tx.value(table, key, p.name) }).bitwiseEquals(raw) { continue }
                try realmErrors { try tx.set(table, key, p.name, raw) }
            }
        } else {
            // The row is built in a buffer kept across inserts (a new array per object costs a
            // generic metadata lookup and a witness call per element when freed).
            var row = caches.insertRow  // empty: kept so after every insert
            caches.insertRow = []
            row.reserveCapacity(layout.count)
            defer {
                // Kept without its values (the last row could hold a large blob).
                row.removeAll(keepingCapacity: true)
                caches.insertRow = row
            }
            for slot in layout {
                switch slot {
                case .property(let i):
                    if info.properties[i].property.type.holdsLinks {
                        deferred.append(i)
                        row.append(info.properties[i].column!.defaultValue)
                    } else if let stored = object._rlmStoredValue(i) {
                        row.append(stored)
                    } else {
                        row.append(try realmErrors { try info.properties[i].valueType._rlmEncodeAny(values[i]!, self).value })
                    }
                case .unused(let c):
                    row.append(c.defaultValue)
                }
            }
            do {
                key = try tx.insert(table, row: row)
            } catch let e as StorageError {
                throw insertError(e, object, info)
            }
            object._rlmBind(self, key, info)
        }
        // Links last (and mixed values, which may hold links), so cycles between new objects
        // resolve to keys that exist.
        for i in deferred {
            let p = info.properties[i]
            let raw = try realmErrors { try p.valueType._rlmEncodeAny(values[i]!, self).value }
            try realmErrors { try tx.set(table, key, p.name, raw) }
        }
        stamp += 1
        return key
    }

    // MARK: Deleting

    /// Deletes a managed object; links to it become nil and lists drop it; its embedded objects
    /// are deleted with it.
    public func delete(_ object: ObjectBase) {
        let tx = requireWrite("delete objects")
        guard object._rlmRealm?.store === store else {
            fatalError(
                "Can only delete an object from the Realm it belongs to; this object is \(object._rlmRealm == nil ? "unmanaged" : "from another Realm")."
            )
        }
        do { try deleteObject(object._rlmClass, object._rlmKey, tx) } catch { fatalError("\(error)") }
        stamp += 1
    }

    /// Deletes every object of a sequence.
    public func delete<S: Sequence>(_ objects: S) where S.Iterator.Element: ObjectBase {
        for o in Array(objects) { delete(o) }
    }

    /// Deletes every object of every class.
    public func deleteAll() {
        let tx = requireWrite("delete objects")
        do {
            for t in tx.catalog.tables where !t.name.hasPrefix("__") { try tx.deleteAll(t.name) }
        } catch {
            fatalError("Realm could not delete every object: \(error)")
        }
        stamp += 1
    }

    func deleteObject(_ info: ClassInfo, _ key: ObjectKey, _ tx: WriteTransaction) throws {
        let table = info.className
        guard try tx.contains(table, key) else {
            fatalError("Object has been deleted or invalidated; it cannot be deleted again.")
        }
        // Embedded children go with their parent.
        var children: [(ClassInfo, ObjectKey)] = []
        for p in info.properties where p.property.type == .object && p.isStored {
            guard let target = p.valueType._rlmInfo.objectType, target is EmbeddedObject.Type else { continue }
            switch try tx.value(table, key, p.name) {
            case .link(let k): children.append((ClassInfo.of(target), k))
            case .list(let items):
                for case .link(let k) in items { children.append((ClassInfo.of(target), k)) }
            case .map(let m):
                for case .link(let k) in m.values { children.append((ClassInfo.of(target), k)) }
            default: break
            }
        }
        try tx.delete(table, key)
        try removeLinks(to: key, in: table, tx)
        for (ci, k) in children where try tx.contains(ci.className, k) { try deleteObject(ci, k, tx) }
    }

    /// The objects a link column's value links to (a link, a list's or a map's links).
    package static func linkKeys(_ v: StorageValue) -> [ObjectKey] {
        switch v {
        case .link(let k): [k]
        case .list(let items): items.compactMap { if case .link(let k) = $0 { k } else { nil } }
        case .map(let m): m.values.compactMap { if case .link(let k) = $0 { k } else { nil } }
        default: []
        }
    }

    /// Nullifies links to a deleted object and removes it from lists.
    func removeLinks(to key: ObjectKey, in target: String, _ tx: WriteTransaction) throws {
        try Self.removeLinks(to: [key], in: target, tx)
    }

    /// Removes every link to the objects `keys` of `target` from the file's objects: a link
    /// becomes null, a list or set loses the element, a map's value and a mixed value (in a list
    /// too) hold null. `changing` is told of each property before it changes: its object, its
    /// value then, and the keys of `keys` it held (a sync client records what the objects'
    /// leaving took away).
    package static func removeLinks(
        to keys: Set<ObjectKey>, in target: String, _ tx: WriteTransaction,
        changing: (
            (_ table: TableSchema, _ key: ObjectKey, _ column: ColumnSchema, _ old: StorageValue, _ removed: Set<ObjectKey>)
                throws -> Void
        )? = nil
    ) throws {
        guard !keys.isEmpty, let targetId = tx.catalog.table(target)?.id else { return }
        for t in tx.catalog.tables {
            let columns = t.columns.filter { $0.type == .mixed || ($0.type == .link && $0.linkTarget == target) }
            guard !columns.isEmpty else { continue }
            for k in try tx.objectKeys(t.name) {
                for c in columns {
                    // A link column holds links, a mixed one typed links.
                    func removed(_ s: StorageValue) -> ObjectKey? {
                        switch s {
                        case .link(let l) where c.type == .link && keys.contains(l): l
                        case .typedLink(targetId, let l) where c.type == .mixed && keys.contains(l): l
                        default: nil
                        }
                    }
                    let value = try tx.value(t.name, k, c.name)
                    let hits: [ObjectKey]
                    let kept: StorageValue
                    switch value {
                    case .list(let items):
                        hits = items.compactMap(removed)
                        kept = .list(c.type == .mixed ? items.map { removed($0) == nil ? $0 : .null } : items.filter { removed($0) == nil })
                    case .map(let m):
                        hits = m.values.compactMap(removed)
                        kept = .map(m.mapValues { removed($0) == nil ? $0 : .null })
                    default:
                        hits = removed(value).map { [$0] } ?? []
                        kept = .null
                    }
                    guard !hits.isEmpty else { continue }
                    try changing?(t, k, c, value, Set(hits))
                    try tx.set(t.name, k, c.name, kept)
                }
            }
        }
    }
}

/// The class of a live Realm's last lookup by an `Int` primary key, with its table reader of the
/// current version: kept with the Realm's other table readers (see ``Realm/primaryKeyShortcut``).
final class PrimaryKeyShortcut {
    let type: ObjectIdentifier
    let info: ClassInfo
    let bound: BoundReader

    init(type: ObjectIdentifier, info: ClassInfo, bound: BoundReader) {
        self.type = type
        self.info = info
        self.bound = bound
    }
}

/// A table reader with the column position of each property of one class (-1: not stored).
/// Belongs to one live Realm (confined to its thread).
final class BoundReader {
    let reader: TableReader
    let columns: [Int]
    let version: UInt64
    /// The views of the row groups read so far.
    private var views: [GroupView?] = []
    /// The Realm's read state, for the views.
    private let readState: Realm.ReadState
    init(reader: TableReader, columns: [Int], readState: Realm.ReadState) {
        self.reader = reader
        self.columns = columns
        self.version = reader.snapshot.version
        self.readState = readState
    }

    /// The object of `type` (described by `info`) whose primary key's stored form is `raw`, bound
    /// to `realm` and placed at its row (so its reads take the direct path), or nil.
    func object<Element: Object>(_ type: Element.Type, _ raw: StorageValue, _ info: ClassInfo, in realm: Realm) throws -> Element? {
        guard let (key, location) = try reader.object(primaryKey: raw) else { return nil }
        let object = type.init()
        guard let location, let view = view(Int(location.group)) else {
            object._rlmBind(realm, key, info)
            return object
        }
        object._rlmBindNew(
            realm, key, info, generation: realm.generation, view: view, row: location.row, stamp: realm.directReadStamp(version))
        return object
    }

    /// The view of row group `group` (nil for a group the table does not have).
    func view(_ group: Int) -> GroupView? {
        guard group >= 0, group < reader.groupCount else { return nil }
        if views.isEmpty { views = [GroupView?](repeating: nil, count: reader.groupCount) }
        if let v = views[group] { return v }
        let v = GroupView(reader: reader, columns: columns, group: group, readState: readState)
        views[group] = v
        return v
    }
}

/// The segments of one row group of one version, by property index, resolved on a property's
/// first read: an object accessor's read path (see ``ObjectBase``). Keeps each segment reader
/// alive for as long as its cursor may be read.
final class GroupView {
    private let reader: TableReader
    private let columns: [Int]
    let group: Int
    /// The version the view reads.
    let version: UInt64
    /// The read state of the Realm the view belongs to.
    let readState: Realm.ReadState
    /// Each property's segment once resolved (on its first read), read in place.
    private let slots: CursorSlots

    init(reader: TableReader, columns: [Int], group: Int, readState: Realm.ReadState) {
        self.readState = readState
        self.reader = reader
        self.columns = columns
        self.group = group
        self.version = reader.snapshot.version
        slots = CursorSlots(count: columns.count)
    }

    // Row `row` of property `index`, read directly (nil: the property's segment cannot answer
    // here — a null, another lane, no segment — and the general path reads it).
    func int(_ index: Int, _ row: Int) -> Int64? { read(index) { $0.int(index, row) } }
    func double(_ index: Int, _ row: Int) -> Double? { read(index) { $0.double(index, row) } }
    func float(_ index: Int, _ row: Int) -> Float? { read(index) { $0.float(index, row) } }
    func string(_ index: Int, _ row: Int) -> String? { read(index) { $0.string(index, row) } }

    /// `body`'s read of the slots, resolving property `index`'s segment first when it was never
    /// read.
    @inline(__always)
    private func read<T>(_ index: Int, _ body: (CursorSlots) -> T?) -> T? {
        if let v = body(slots) { return v }
        return resolve(index) ? body(slots) : nil
    }

    /// The stored value of property `index` at `row` (the general path: nulls, lists, damage).
    func value(_ index: Int, row: Int32) throws -> StorageValue {
        let c = columns[index]
        guard c >= 0 else { throw StorageError(.notFound, "no column") }
        return try reader.value(RowLocation(group: group, row: Int(row)), column: c)
    }

    /// Resolves property `index`'s segment on its first read; false when it was resolved before
    /// (a read that found nothing then finds nothing now either).
    private func resolve(_ index: Int) -> Bool {
        guard !slots.isFilled(index) else { return false }
        let c = columns[index]
        if c >= 0, let segment = try? reader.segment(RowLocation(group: group, row: 0), column: c) {
            slots.fill(index, with: segment)
        } else {
            slots.fillEmpty(index)
        }
        return true
    }
}
