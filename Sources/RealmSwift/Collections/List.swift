import RealmStorage

/// An ordered list of values or objects: a property of a model class (`@Persisted var toys:
/// List<Toy>`), or a standalone, unmanaged list.
///
/// ```swift
/// try realm.write {
///     dog.toys.append(Toy(value: ["name": "ball"]))
///     dog.toys.move(from: 0, to: 1)
/// }
/// ```
///
/// A managed list reads and writes its parent object's property in the Realm (mutations need a
/// write transaction); it is thread-confined like its Realm. Unmanaged lists are plain storage.
public final class List<Element: RealmCollectionValue>: RandomAccessCollection, MutableCollection, CustomStringConvertible {
    var storage: [Element] = []
    /// The managing object and property, for managed lists.
    var property: ManagedProperty?
    var parent: ObjectBase? { property?.parent }

    /// Creates an empty, unmanaged list.
    public init() {}

    /// The Realm managing this list, or nil.
    public var realm: Realm? { property?.realm }
    /// Whether the list's object was deleted or its Realm invalidated.
    public var isInvalidated: Bool { property?.parent.isInvalidated ?? false }

    var managedItems: [StorageValue] {
        if case .list(let items) = property?.read() { return items }
        return []
    }

    func writeItems(_ body: (inout [StorageValue]) throws -> Void) {
        property?.write { v in
            guard case .list(var items) = v else { return }
            try body(&items)
            v = .list(items)
        }
    }

    func encode(_ e: Element) throws -> StorageValue { try e._rlmEncode(realm).value }

    func decode(_ v: StorageValue) -> Element {
        guard let property else { return Element._rlmDecode(_RLMRaw(v), nil) }
        return property.decode(v)
    }

    // MARK: Collection

    public var startIndex: Int { 0 }
    public var endIndex: Int { count }
    /// The number of elements.
    public var count: Int { parent == nil ? storage.count : managedItems.count }

    /// The element at `position`; setting replaces it (managed lists: in a write transaction).
    public subscript(position: Int) -> Element {
        get {
            guard parent != nil else { return storage[position] }
            let items = managedItems
            precondition(position >= 0 && position < items.count, "Index \(position) is out of bounds (count \(items.count)).")
            return decode(items[position])
        }
        set { replace(index: position, object: newValue) }
    }

    /// The index of the first element equal to `object`.
    public func index(of object: Element) -> Int? { firstIndex { $0 == object } }

    // MARK: Mutation

    /// Appends an element (adding an unmanaged object to the Realm).
    public func append(_ object: Element) { insert(object, at: count) }

    /// Appends every element of a sequence.
    public func append<S: Sequence>(contentsOf objects: S) where S.Element == Element {
        guard parent != nil else {
            storage.append(contentsOf: objects)
            return
        }
        let values = Array(objects)
        writeItems { items in items += try values.map(encode) }
    }

    /// Appends every element of a sequence (RealmSwift's name for ``append(contentsOf:)``).
    public func append<S: Sequence>(objectsIn objects: S) where S.Element == Element { append(contentsOf: objects) }

    /// Replaces the elements in `subrange` with `newElements`.
    public func replaceSubrange<C: Collection>(_ subrange: Range<Int>, with newElements: C) where C.Element == Element {
        guard property != nil else {
            storage.replaceSubrange(subrange, with: newElements)
            return
        }
        let values = Array(newElements)
        writeItems { items in
            precondition(
                subrange.lowerBound >= 0 && subrange.upperBound <= items.count, "Range \(subrange) is out of bounds (count \(items.count))."
            )
            items.replaceSubrange(subrange, with: try values.map(encode))
        }
    }

    /// Removes the first `n` elements.
    public func removeFirst(_ n: Int) {
        precondition(n >= 0 && n <= count, "Cannot remove \(n) elements of \(count).")
        replaceSubrange(0..<n, with: [])
    }

    /// Removes the last `n` elements.
    public func removeLast(_ n: Int) {
        precondition(n >= 0 && n <= count, "Cannot remove \(n) elements of \(count).")
        replaceSubrange((count - n)..<count, with: [])
    }

    /// Inserts an element at `index`.
    public func insert(_ object: Element, at index: Int) {
        guard parent != nil else {
            precondition(index >= 0 && index <= storage.count, "Index \(index) is out of bounds (count \(storage.count)).")
            storage.insert(object, at: index)
            return
        }
        writeItems { items in
            precondition(index >= 0 && index <= items.count, "Index \(index) is out of bounds (count \(items.count)).")
            items.insert(try encode(object), at: index)
        }
    }

    /// Removes the element at `index`.
    public func remove(at index: Int) {
        guard parent != nil else {
            precondition(index >= 0 && index < storage.count, "Index \(index) is out of bounds (count \(storage.count)).")
            storage.remove(at: index)
            return
        }
        writeItems { items in
            precondition(index >= 0 && index < items.count, "Index \(index) is out of bounds (count \(items.count)).")
            items.remove(at: index)
        }
    }

    /// Removes the last element.
    public func removeLast() {
        precondition(!isEmpty, "Cannot remove the last element of an empty list.")
        remove(at: count - 1)
    }

    /// Removes the first element.
    public func removeFirst() {
        precondition(!isEmpty, "Cannot remove the first element of an empty list.")
        remove(at: 0)
    }

    /// Removes every element (the objects themselves stay in the Realm).
    public func removeAll() {
        guard parent != nil else {
            storage.removeAll()
            return
        }
        writeItems { $0.removeAll() }
    }

    /// Replaces the element at `index`.
    public func replace(index: Int, object: Element) {
        guard parent != nil else {
            precondition(index >= 0 && index < storage.count, "Index \(index) is out of bounds (count \(storage.count)).")
            storage[index] = object
            return
        }
        writeItems { items in
            precondition(index >= 0 && index < items.count, "Index \(index) is out of bounds (count \(items.count)).")
            items[index] = try encode(object)
        }
    }

    /// Moves the element at `from` to `to`.
    public func move(from: Int, to: Int) {
        guard parent != nil else {
            let e = storage.remove(at: from)
            storage.insert(e, at: to)
            return
        }
        writeItems { items in
            precondition(from >= 0 && from < items.count && to >= 0 && to < items.count, "Index out of bounds (count \(items.count)).")
            let e = items.remove(at: from)
            items.insert(e, at: to)
        }
    }

    /// Exchanges the elements at two indexes.
    public func swapAt(_ index1: Int, _ index2: Int) {
        guard parent != nil else {
            storage.swapAt(index1, index2)
            return
        }
        writeItems { items in
            precondition(
                index1 >= 0 && index1 < items.count && index2 >= 0 && index2 < items.count, "Index out of bounds (count \(items.count)).")
            items.swapAt(index1, index2)
        }
    }

    public var description: String {
        "List<\(Element.self)> <\(count)> [" + map { ObjectBase.describe($0) }.joined(separator: ", ") + "]"
    }
}

extension List: _Persistable {
    public static func _rlmStoredForm(_ value: List) -> _RLMRaw? { nil }
    public static var _rlmInfo: _RLMTypeInfo {
        var i = Element._rlmInfo
        i.kind = .list
        return i
    }
    public static func _rlmDefaultValue() -> List { List() }
    public static func _rlmGet(_ object: ObjectBase, _ index: Int) -> List {
        let l = List()
        l.property = ManagedProperty(parent: object, index: index)
        return l
    }
    public static func _rlmSet(_ object: ObjectBase, _ index: Int, _ value: List) {
        if let p = value.property, p.parent === object, p.index == index { return }
        let elements = Array(value)
        ManagedProperty(parent: object, index: index).write { v in v = .list(try stored(elements, realm: object._rlmRealm)) }
    }
    public static func _rlmEncodeUnmanaged(_ value: List, _ realm: Realm) throws -> _RLMRaw {
        _RLMRaw(.list(try stored(Array(value), realm: realm)))
    }
    static func stored(_ elements: [Element], realm: Realm?) throws -> [StorageValue] {
        try elements.map { try $0._rlmEncode(realm).value }
    }
    public static func _rlmCoerce(_ value: Any, _ realm: Realm?) throws -> List {
        if let l = value as? List { return l }
        guard let items = value as? any Sequence else {
            throw Realm.Error(.invalidValue, "a value of type \(type(of: value)) cannot be stored as List<\(Element.self)>")
        }
        let l = List()
        for case let item in items as any Sequence { l.storage.append(try Element._rlmCoerce(item, realm)) }
        return l
    }
}
