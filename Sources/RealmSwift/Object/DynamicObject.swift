import Foundation
import RealmStorage

/// An object read through the dynamic API: its class and properties come from the file's schema,
/// not from a Swift model class. Read and write it with subscripts.
///
/// ```swift
/// let realm = try Realm(configuration: .init(fileURL: url))  // no objectTypes needed
/// for dog in realm.dynamicObjects("Dog") { print(dog["name"] ?? "-") }
/// ```
///
/// Links read as `DynamicObject`s; lists, sets and maps as live `List`, `MutableSet` and `Map`
/// (of `DynamicObject` for links), as in RealmSwift. Thread-confined like its Realm.
@dynamicMemberLookup
public final class DynamicObject: Object {
    /// The class (table) name.
    public var className: String { _rlmClass.className }

    /// A property by name, written as a member (`dog.name` for `dog["name"]`), as in RealmSwift.
    public subscript(dynamicMember member: String) -> Any? {
        get { self[member] }
        set { self[member] = newValue }
    }

    /// The property value: scalars, `DynamicObject` for links, and for a list, set or map the
    /// live collection (`List<DynamicObject>`, `List<Int>`, `Map<String, DynamicObject?>`, …).
    override func propertyValue(_ index: Int) -> Any {
        guard let realm = _rlmRealm else { return super.propertyValue(index) }
        let p = _rlmClass.properties[index]
        if p.property.isCollection {
            func live<T: _Persistable>(_: T.Type) -> Any { T._rlmGet(self, index) }
            return live(p.valueType)
        }
        return DynamicValues.swiftValue(realm.readValue(self, index), target: p.property.objectClassName, realm: realm) as Any
    }
}

extension ObjectBase {
    /// The list of objects named `propertyName`, its elements read as ``DynamicObject``s (any
    /// managed object: a model object, an embedded one, a dynamic one). Stops with a message when
    /// the object is unmanaged or the property is not a list of objects, as RealmSwift does.
    ///
    /// ```swift
    /// migration.enumerateObjects(ofType: "Person") { _, new in
    ///     let dogs = new!.dynamicList("dogs")
    ///     print(dogs.count, dogs.first?["name"] ?? "-")
    /// }
    /// ```
    public func dynamicList(_ propertyName: String) -> List<DynamicObject> {
        List._rlmGet(self, dynamicCollectionIndex(propertyName, kind: "a list of objects") { $0.isArray })
    }

    /// The set of objects named `propertyName`, its elements read as ``DynamicObject``s (see
    /// ``dynamicList(_:)``).
    public func dynamicMutableSet(_ propertyName: String) -> MutableSet<DynamicObject> {
        MutableSet._rlmGet(self, dynamicCollectionIndex(propertyName, kind: "a set of objects") { $0.isSet })
    }

    /// The map of objects named `propertyName`, its values read as ``DynamicObject``s (see
    /// ``dynamicList(_:)``).
    public func dynamicMap<Key: _MapKey>(_ propertyName: String) -> Map<Key, DynamicObject?> {
        Map._rlmGet(self, dynamicCollectionIndex(propertyName, kind: "a map of objects") { $0.isMap })
    }

    /// The index of the managed collection-of-objects property `name` that `isKind` accepts.
    private func dynamicCollectionIndex(_ name: String, kind: String, _ isKind: (Property) -> Bool) -> Int {
        guard _rlmRealm != nil else {
            fatalError("Only managed objects have dynamic collections; '\(name)' was asked of an unmanaged object.")
        }
        guard let i = _rlmClass.indexByName[name] else { fatalError("\(Realm.Error.unknownProperty(name, _rlmClass.className))") }
        let p = _rlmClass.properties[i].property
        guard p.type == .object, isKind(p) else {
            fatalError("Property '\(name)' of \(_rlmClass.className) is not \(kind).")
        }
        return i
    }
}

/// Conversions between stored values and the loosely typed values of the dynamic API.
enum DynamicValues {
    /// The Swift type that stores values of column `c`.
    static func valueType(_ c: ColumnSchema) -> any _Persistable.Type {
        func pick<T: RealmCollectionValue & _Persistable>(_: T.Type) -> any _Persistable.Type {
            if c.isMap { return c.isNullable ? Map<String, T?>.self : Map<String, T>.self }
            if c.isSet { return c.isNullable && c.type != .link ? MutableSet<T?>.self : MutableSet<T>.self }
            if c.isList { return c.isNullable && c.type != .link ? List<T?>.self : List<T>.self }
            return c.isNullable ? T?.self : T.self
        }
        switch c.type {
        case .int: return pick(Int.self)
        case .bool: return pick(Bool.self)
        case .float: return pick(Float.self)
        case .double: return pick(Double.self)
        case .string: return pick(String.self)
        case .binary: return pick(Data.self)
        case .timestamp: return pick(Date.self)
        case .objectId: return pick(ObjectId.self)
        case .uuid: return pick(UUID.self)
        case .decimal128: return pick(Decimal128.self)
        case .link:
            if c.isMap { return Map<String, DynamicObject?>.self }
            if c.isSet { return MutableSet<DynamicObject>.self }
            return c.isList ? List<DynamicObject>.self : DynamicObject?.self
        case .mixed:
            if c.isMap { return Map<String, AnyRealmValue>.self }
            if c.isSet { return MutableSet<AnyRealmValue>.self }
            return c.isList ? List<AnyRealmValue>.self : AnyRealmValue.self
        }
    }

    /// A stored value as a Swift value (nil for null).
    static func swiftValue(_ v: StorageValue, target: String?, realm: Realm) -> Any? {
        switch v {
        case .null: return nil
        case .int(let x): return Int(x)
        case .bool(let x): return x
        case .float(let x): return x
        case .double(let x): return x
        case .string(let x): return x
        case .binary(let x): return Data(x)
        case .timestamp: return Date._rlmDecode(_RLMRaw(v), realm)
        case .objectId(let b): return ObjectId(bytes: b)
        case .uuid(let u): return u
        case .decimal128(let lo, let hi): return Decimal128(low: lo, high: hi)
        case .link(let k): return target.map { realm.dynamicObject($0, k) }
        case .list(let items): return items.map { swiftValue($0, target: target, realm: realm) }
        case .typedLink: return AnyRealmValue._rlmDecode(_RLMRaw(v), realm)
        case .map(let m): return m.mapValues { swiftValue($0, target: target, realm: realm) }
        }
    }
}

extension Realm {
    /// Every object of the class named `className`, read through the file's schema.
    /// Stops with a message for an unknown class; ``checkedDynamicObjects(_:)`` throws instead.
    public func dynamicObjects(_ className: String) -> Results<DynamicObject> {
        do { return try checkedDynamicObjects(className) } catch { fatalError("\(error)") }
    }

    /// The throwing form of ``dynamicObjects(_:)``.
    /// - Throws: ``Realm/Error`` `.invalidProperty` when the file has no such class.
    public func checkedDynamicObjects(_ className: String) throws -> Results<DynamicObject> {
        checkThread()
        return Results(realm: self, info: try dynamicInfo(className))
    }

    /// The object of class `className` whose primary key is `key`, or nil.
    /// - Throws: ``Realm/Error`` for an unknown class, a class without a primary key, or a key of
    ///   the wrong type.
    public func dynamicObject(ofType className: String, forPrimaryKey key: Any) throws -> DynamicObject? {
        checkThread()
        let info = try dynamicInfo(className)
        guard let pk = info.primaryKey else { throw Realm.Error(.invalidProperty, "class '\(className)' has no primary key") }
        let raw = try ValueCoercion.raw(key, info.properties[pk].valueType._rlmInfo, typeName: "the primary key of '\(className)'")
        let found = try realmErrors {
            if let tx = transaction { return try tx.objectKey(className, primaryKey: raw) }
            return try currentSnapshot.objectKey(className, primaryKey: raw)
        }
        return found.map { dynamicObject(className, $0) }
    }

    /// Creates an object of class `className` from a dictionary or an array of values.
    /// - Throws: ``Realm/Error`` for an unknown class or property, a bad value, a duplicate key.
    @discardableResult
    public func checkedDynamicCreate(_ className: String, value: Any = [String: Any](), update: UpdatePolicy = .error) throws
        -> DynamicObject
    {
        let tx = requireWrite("create objects")
        let info = try dynamicInfo(className)
        let o = DynamicObject()
        o._rlmBindClass(info)
        try ValueCoercion.assign(value, to: o)
        let saved = addPolicy
        addPolicy = update
        defer { addPolicy = saved }
        _ = try insert(o, tx, providedOnly: update != .error)
        return o
    }

    /// Creates an object of class `className` (stops with a message on bad input; see
    /// ``checkedDynamicCreate(_:value:update:)``).
    @discardableResult
    public func dynamicCreate(_ className: String, value: Any = [String: Any](), update: UpdatePolicy = .error) -> DynamicObject {
        do { return try checkedDynamicCreate(className, value: value, update: update) } catch { fatalError("\(error)") }
    }

    func dynamicObject(_ className: String, _ key: ObjectKey) -> DynamicObject {
        let o = DynamicObject()
        do { o._rlmBind(self, key, try dynamicInfo(className)) } catch { fatalError("\(error)") }
        return o
    }

    func dynamicInfo(_ className: String) throws -> ClassInfo {
        guard let t = catalog.table(className), !className.hasPrefix("__") else {
            throw Realm.Error(.invalidProperty, "the Realm has no class named '\(className)'")
        }
        if let (schema, info) = caches.dynamicInfos[className], schema == t { return info }
        let info = ClassInfo(dynamic: t)
        caches.dynamicInfos[className] = (t, info)
        return info
    }

    func bump() {
        stamp += 1
        caches.lastInsert = nil  // a migration step may have removed or changed a table
    }
}
