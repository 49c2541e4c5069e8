import RealmStorage

/// The key types a ``Map`` can have (String).
public protocol _MapKey: Hashable, Comparable {
    var _rlmKey: String { get }
    init(_rlmKey: String)
}

extension String: _MapKey {
    public var _rlmKey: String { self }
    public init(_rlmKey: String) { self = _rlmKey }
}

/// One entry of a ``Map``.
public struct SingleMapEntry<Key: _MapKey, Value: RealmCollectionValue>: Hashable {
    /// The entry's key.
    public let key: Key
    /// The entry's value.
    public let value: Value
}

/// A dictionary from strings to values or objects: a property of a model class (`@Persisted var
/// scores: Map<String, Int>`), or a standalone, unmanaged map. Entries are ordered by key.
///
/// ```swift
/// try realm.write {
///     player.scores["level 1"] = 120
///     player.scores["level 2"] = nil   // removes the key
/// }
/// ```
///
/// A managed map reads and writes its parent object's property (mutations need a write
/// transaction) and is thread-confined like its Realm.
public final class Map<Key: _MapKey, Value: RealmCollectionValue>: Sequence, CustomStringConvertible {
    var storage: [Key: Value] = [:]
    var property: ManagedProperty?

    /// Creates an empty, unmanaged map.
    public init() {}

    /// The Realm managing this map, or nil.
    public var realm: Realm? { property?.realm }
    /// Whether the map's object was deleted or its Realm invalidated.
    public var isInvalidated: Bool { property?.parent.isInvalidated ?? false }

    var managed: [String: StorageValue] {
        if case .map(let m) = property?.read() { return m }
        return [:]
    }

    func decode(_ v: StorageValue) -> Value {
        guard let property else { return Value._rlmDecode(_RLMRaw(v), nil) }
        return property.decode(v)
    }

    /// The number of entries.
    public var count: Int { property == nil ? storage.count : managed.count }
    /// Whether the map is empty.
    public var isEmpty: Bool { count == 0 }

    /// The keys, in ascending order.
    public var keys: [Key] {
        property == nil
            ? storage.keys.sorted() : managed.keys.sorted { Array($0.utf8).lexicographicallyPrecedes(Array($1.utf8)) }.map(Key.init)
    }

    /// The values, in the order of ``keys``.
    public var values: [Value] { keys.map { self[$0]! } }

    /// The value for `key`; setting nil removes the key.
    public subscript(key: Key) -> Value? {
        get {
            guard property != nil else { return storage[key] }
            return managed[key._rlmKey].map(decode)
        }
        set {
            if let newValue { updateValue(newValue, forKey: key) } else { removeObject(for: key) }
        }
    }

    /// Whether `key` is present.
    public func contains(key: Key) -> Bool { self[key] != nil }

    /// Sets the value for `key`.
    public func updateValue(_ value: Value, forKey key: Key) {
        guard let property else {
            storage[key] = value
            return
        }
        property.write { v in
            guard case .map(var m) = v else { return }
            m[key._rlmKey] = try value._rlmEncode(property.realm).value
            v = .map(m)
        }
    }

    /// Sets the value for `key` (RealmSwift's key-value form).
    public func setValue(_ value: Value, forKey key: Key) { updateValue(value, forKey: key) }

    /// The value for `key`, or nil.
    public func value(forKey key: Key) -> Value? { self[key] }

    /// Removes `key` and its value.
    public func removeObject(for key: Key) {
        guard let property else {
            storage[key] = nil
            return
        }
        property.write { v in
            guard case .map(var m) = v else { return }
            m[key._rlmKey] = nil
            v = .map(m)
        }
    }

    /// Adds the entries of `other`, resolving keys present in both with `combine`.
    public func merge<S: Sequence>(_ other: S, uniquingKeysWith combine: (Value, Value) throws -> Value) rethrows
    where S.Element == (key: Key, value: Value) {
        for (k, v) in other { self[k] = try self[k].map { try combine($0, v) } ?? v }
    }

    /// The entries as `(key, value)` pairs, in key order.
    public func asKeyValueSequence() -> [(key: Key, value: Value)] { keys.map { ($0, self[$0]!) } }

    /// Removes every entry (objects stay in the Realm).
    public func removeAll() {
        guard let property else {
            storage.removeAll()
            return
        }
        property.write { $0 = .map([:]) }
    }

    /// Iterates the entries in key order.
    public func makeIterator() -> IndexingIterator<[SingleMapEntry<Key, Value>]> {
        keys.map { SingleMapEntry(key: $0, value: self[$0]!) }.makeIterator()
    }

    public var description: String {
        "Map<\(Key.self), \(Value.self)> <\(count)> [" + map { "\($0.key): \(ObjectBase.describe($0.value))" }.joined(separator: ", ") + "]"
    }
}

extension Map: _Persistable {
    public static func _rlmStoredForm(_ value: Map) -> _RLMRaw? { nil }
    public static var _rlmInfo: _RLMTypeInfo {
        var i = Value._rlmInfo
        i.kind = .map
        return i
    }
    public static func _rlmDefaultValue() -> Map { Map() }
    public static func _rlmGet(_ object: ObjectBase, _ index: Int) -> Map {
        let m = Map()
        m.property = ManagedProperty(parent: object, index: index)
        return m
    }
    public static func _rlmSet(_ object: ObjectBase, _ index: Int, _ value: Map) {
        if let p = value.property, p.parent === object, p.index == index { return }
        let entries = Array(value)
        ManagedProperty(parent: object, index: index).write { v in
            var m: [String: StorageValue] = [:]
            for e in entries { m[e.key._rlmKey] = try e.value._rlmEncode(object._rlmRealm).value }
            v = .map(m)
        }
    }
    public static func _rlmEncodeUnmanaged(_ value: Map, _ realm: Realm) throws -> _RLMRaw {
        var m: [String: StorageValue] = [:]
        for e in value { m[e.key._rlmKey] = try e.value._rlmEncode(realm).value }
        return _RLMRaw(.map(m))
    }
    public static func _rlmCoerce(_ value: Any, _ realm: Realm?) throws -> Map {
        if let m = value as? Map { return m }
        guard let dict = value as? [String: Any] else {
            throw Realm.Error(.invalidValue, "a value of type \(type(of: value)) cannot be stored as Map<\(Key.self), \(Value.self)>")
        }
        let m = Map()
        for (k, v) in dict { m.storage[Key(_rlmKey: k)] = try Value._rlmCoerce(v, realm) }
        return m
    }
}
