import RealmStorage

/// A set of distinct values or objects: a property of a model class (`@Persisted var tags:
/// MutableSet<String>`), or a standalone, unmanaged set. Elements keep the order they were
/// inserted in and can be read by index.
///
/// ```swift
/// try realm.write {
///     dog.tags.insert("good")
///     dog.tags.formUnion(["loyal", "good"])   // still two elements
/// }
/// ```
///
/// A managed set reads and writes its parent object's property (mutations need a write
/// transaction) and is thread-confined like its Realm.
public final class MutableSet<Element: RealmCollectionValue>: RandomAccessCollection, CustomStringConvertible {
    var storage: [Element] = []
    var property: ManagedProperty?

    /// Creates an empty, unmanaged set.
    public init() {}

    /// The Realm managing this set, or nil.
    public var realm: Realm? { property?.realm }
    /// Whether the set's object was deleted or its Realm invalidated.
    public var isInvalidated: Bool { property?.parent.isInvalidated ?? false }

    var managedItems: [StorageValue] {
        if case .list(let items) = property?.read() { return items }
        return []
    }

    func decode(_ v: StorageValue) -> Element {
        guard let property else { return Element._rlmDecode(_RLMRaw(v), nil) }
        return property.decode(v)
    }

    /// The stored form of `e` when it can already be stored without adding anything (nil for an
    /// unmanaged object, which no managed set can contain yet).
    func storedForm(_ e: Element) -> StorageValue? {
        if let o = e as? ObjectBase, o._rlmRealm == nil { return nil }
        return try? e._rlmEncode(realm).value
    }

    public var startIndex: Int { 0 }
    public var endIndex: Int { count }
    /// The number of elements.
    public var count: Int { property == nil ? storage.count : managedItems.count }

    /// The element at `position` (insertion order).
    public subscript(position: Int) -> Element {
        guard property != nil else { return storage[position] }
        let items = managedItems
        precondition(position >= 0 && position < items.count, "Index \(position) is out of bounds (count \(items.count)).")
        return decode(items[position])
    }

    /// Whether the set holds `object`.
    public func contains(_ object: Element) -> Bool {
        guard property != nil else { return storage.contains { Self.same($0, object) } }
        guard let raw = storedForm(object) else { return false }
        return managedItems.contains { $0.bitwiseEquals(raw) }
    }

    static func same(_ a: Element, _ b: Element) -> Bool {
        if let x = a as? any BinaryFloatingPoint, let y = b as? any BinaryFloatingPoint, x.isNaN && y.isNaN { return true }
        return a == b
    }

    /// Inserts `object` unless it is already present.
    public func insert(_ object: Element) { insert(objectsIn: [object]) }

    /// Inserts every element of a sequence that is not already present.
    public func insert<S: Sequence>(objectsIn objects: S) where S.Element == Element {
        guard let property else {
            for o in objects where !storage.contains(where: { Self.same($0, o) }) { storage.append(o) }
            return
        }
        let values = Array(objects)
        property.write { v in
            guard case .list(let items) = v else { return }
            v = .list(try Self.storedSet(values, realm: property.realm, appendingTo: items))
        }
    }

    /// Removes `object` if present.
    public func remove(_ object: Element) {
        guard let property else {
            storage.removeAll { Self.same($0, object) }
            return
        }
        guard let raw = storedForm(object) else { return }
        property.write { v in
            guard case .list(let items) = v else { return }
            v = .list(items.filter { !$0.bitwiseEquals(raw) })
        }
    }

    /// Removes every element (objects stay in the Realm).
    public func removeAll() {
        guard let property else {
            storage.removeAll()
            return
        }
        property.write { $0 = .list([]) }
    }

    /// Whether every element of this set is in `other`.
    public func isSubset(of other: MutableSet<Element>) -> Bool { allSatisfy { other.contains($0) } }
    /// Whether this set and `other` share an element.
    public func intersects(_ other: MutableSet<Element>) -> Bool { contains { other.contains($0) } }
    /// Keeps only the elements also in `other`.
    public func formIntersection(_ other: MutableSet<Element>) {
        let drop = filter { !other.contains($0) }
        for e in drop { remove(e) }
    }
    /// Inserts every element of `other`.
    public func formUnion(_ other: MutableSet<Element>) { insert(objectsIn: Array(other)) }
    /// Removes every element of `other`.
    public func subtract(_ other: MutableSet<Element>) {
        for e in Array(other) { remove(e) }
    }

    public var description: String {
        "MutableSet<\(Element.self)> <\(count)> {" + map { ObjectBase.describe($0) }.joined(separator: ", ") + "}"
    }
}

extension MutableSet {
    /// `items` followed by the stored forms of `elements` that are not among them yet (stored-form
    /// equality, the rule the engine checks set columns with).
    static func storedSet(_ elements: [Element], realm: Realm?, appendingTo items: [StorageValue] = []) throws -> [StorageValue] {
        var out = items
        for e in elements {
            let raw = try e._rlmEncode(realm).value
            if !out.contains(where: { $0.bitwiseEquals(raw) }) { out.append(raw) }
        }
        return out
    }
}

extension MutableSet: _Persistable {
    public static func _rlmStoredForm(_ value: MutableSet) -> _RLMRaw? { nil }
    public static var _rlmInfo: _RLMTypeInfo {
        var i = Element._rlmInfo
        i.kind = .set
        return i
    }
    public static func _rlmDefaultValue() -> MutableSet { MutableSet() }
    public static func _rlmGet(_ object: ObjectBase, _ index: Int) -> MutableSet {
        let s = MutableSet()
        s.property = ManagedProperty(parent: object, index: index)
        return s
    }
    public static func _rlmSet(_ object: ObjectBase, _ index: Int, _ value: MutableSet) {
        if let p = value.property, p.parent === object, p.index == index { return }
        let elements = Array(value)
        ManagedProperty(parent: object, index: index).write { v in v = .list(try storedSet(elements, realm: object._rlmRealm)) }
    }
    public static func _rlmEncodeUnmanaged(_ value: MutableSet, _ realm: Realm) throws -> _RLMRaw {
        _RLMRaw(.list(try storedSet(Array(value), realm: realm)))
    }
    public static func _rlmCoerce(_ value: Any, _ realm: Realm?) throws -> MutableSet {
        if let s = value as? MutableSet { return s }
        guard let items = value as? any Sequence else {
            throw Realm.Error(.invalidValue, "a value of type \(type(of: value)) cannot be stored as MutableSet<\(Element.self)>")
        }
        let s = MutableSet()
        var elements: [Element] = []
        for item in items as any Sequence { elements.append(try Element._rlmCoerce(item, realm)) }
        s.insert(objectsIn: elements)
        return s
    }
}

/// One collection property of one managed object: reads its stored value and rewrites it inside
/// the write transaction.
struct ManagedProperty {
    let parent: ObjectBase
    let index: Int
    var realm: Realm? { parent._rlmRealm }

    func read() -> StorageValue { parent._rlmRealm!.readValue(parent, index) }

    /// An element (a map's value) of this property. A link read into a collection of
    /// ``DynamicObject``s becomes a dynamic object of the property's target class: the element
    /// type has no class of its own to read it with.
    func decode<T: RealmCollectionValue>(_ value: StorageValue) -> T {
        if T.self == DynamicObject.self || T.self == DynamicObject?.self, case .link(let key) = value, let realm,
            let target = parent._rlmClass.properties[index].property.objectClassName
        {
            return (realm.dynamicObject(target, key) as Any) as! T
        }
        return T._rlmDecode(_RLMRaw(value), realm)
    }

    /// Rewrites the stored value with `body` (the current value goes in, the new one comes out).
    func write(_ body: (inout StorageValue) throws -> Void) {
        let realm = parent._rlmRealm!
        realm.writeValue(parent, index) {
            var v = read()
            try body(&v)
            return v
        }
    }
}
