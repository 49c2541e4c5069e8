import Foundation
import RealmQuery
import RealmStorage

/// Key-value coding over a collection's elements, as RealmSwift's collections offer it through
/// Foundation: `value(forKey:)` gives an array with each element's value, `setValue(_:forKey:)`
/// sets a property on every element.
extension RealmCollection {
    /// Each element's value of the property `key`, as an array `[Any]` in collection order
    /// (`NSNull()` where the value is nil; `"self"` gives the elements themselves), so
    /// `dogs.value(forKey: "name") as! [String]` works. Stops on an unknown property — use
    /// ``checkedValue(forKeyPath:)`` for names from input.
    public func value(forKey key: String) -> Any? {
        do { return try _rlmCollection.value(forKeyPath: [key]) } catch { fatalError("\(error)") }
    }

    /// Each element's value at a dotted key path (`"owner.name"`; through a list, an array per
    /// element), or a collection operator: `"@count"`, `"@min.age"`, `"@max.age"`, `"@sum.age"`,
    /// `"@avg.age"` (over every value the path reaches; nil for min, max and average of nothing).
    /// Stops on an unknown property — use ``checkedValue(forKeyPath:)`` for paths from input.
    public func value(forKeyPath keyPath: String) -> Any? {
        do { return try checkedValue(forKeyPath: keyPath) } catch { fatalError("\(error)") }
    }

    /// The throwing form of ``value(forKeyPath:)``.
    /// - Throws: ``Realm/Error`` `.invalidProperty` for a name the elements lack, `.invalidQuery`
    ///   for values an operator cannot aggregate.
    public func checkedValue(forKeyPath keyPath: String) throws -> Any? {
        let parts = keyPath.split(separator: ".", omittingEmptySubsequences: false).map(String.init)
        return try _rlmCollection.value(forKeyPath: parts)
    }

    /// Sets the property `key` of every element to `value` (managed collections: inside a write
    /// transaction). On a list of values, `"self"` replaces every element. Stops on an unknown
    /// property or a value of the wrong type — use ``checkedSetValue(_:forKey:)`` for input.
    public func setValue(_ value: Any?, forKey key: String) {
        do { try checkedSetValue(value, forKey: key) } catch { fatalError("\(error)") }
    }

    /// The throwing form of ``setValue(_:forKey:)``.
    /// - Throws: ``Realm/Error`` `.invalidProperty` for a name the elements lack, or the error of
    ///   converting `value` to the property's type (nothing after the failing element is set).
    public func checkedSetValue(_ value: Any?, forKey key: String) throws {
        if key == "self", let list = self as? List<Element> {
            let new = try Element._rlmCoerce(value as Any, realm)
            for i in list.indices { list[i] = new }
            return
        }
        for element in _rlmCollection.elements() {
            guard let object = element as? ObjectBase else { throw KeyValueCoding.notAnObject(Element.self, key) }
            try object.setValue(value, forProperty: key)
        }
    }
}

extension CollectionElements {
    /// ``RealmCollection/value(forKeyPath:)`` with the path split at its dots.
    func value(forKeyPath parts: [String]) throws -> Any? {
        if let op = parts.first, op.hasPrefix("@") {
            let rest = parts.dropFirst().joined(separator: ".")
            if op == "@count" && parts.count == 1 { return elements().count }
            guard let function = AggregateFunction(rawValue: op), function != .count, !rest.isEmpty else {
                throw Realm.Error(.invalidProperty, "unsupported collection operator '\(parts.joined(separator: "."))'")
            }
            let values = try elements().flatMap { try KeyValueCoding.leaves($0, rest) }.map(KeyValueCoding.stored)
            let type = values.first { !$0.isNull }.map(KeyValueCoding.columnType) ?? .int
            do {
                return try StoredValues.aggregate(values, function, type: type).flatMap(KeyValueCoding.scalar)
                    ?? (function == .sum ? 0 : nil)
            } catch {
                throw Realm.Error.query(error)
            }
        }
        return try elements().map { try KeyValueCoding.value($0, parts[...]) }
    }
}

/// Key-value coding on single elements: properties by name, through links and collections.
enum KeyValueCoding {
    /// The value of the key path `parts` of `element`: `NSNull()` for nil, an array per element
    /// when the path continues through a collection.
    static func value(_ element: Any, _ parts: ArraySlice<String>) throws -> Any {
        guard let element = unwrapOptional(element), !(element is NSNull) else { return NSNull() }
        guard let name = parts.first else { return element }
        let next: Any?
        if name == "self" {
            next = element
        } else {
            guard let object = element as? ObjectBase else { throw notAnObject(type(of: element), name) }
            next = try object.value(forProperty: name)
        }
        guard let next, !(next is NSNull) else { return NSNull() }
        let rest = parts.dropFirst()
        if rest.isEmpty { return next }
        if let collection = next as? any RealmCollection { return try elements(collection).map { try value($0, rest) } }
        return try value(next, rest)
    }

    /// Every value the dotted `path` reaches from `element`: through links, and into each element
    /// of a collection on the way or at the end (nils included, as `NSNull`).
    static func leaves(_ element: Any, _ path: String) throws -> [Any] {
        func flatten(_ v: Any) -> [Any] {
            if let array = v as? [Any] { return array.flatMap(flatten) }
            if let collection = v as? any RealmCollection { return elements(collection).flatMap(flatten) }
            return [v]
        }
        let parts = path.split(separator: ".", omittingEmptySubsequences: false).map(String.init)
        return flatten(try value(element, parts[...]))
    }

    static func elements<C: RealmCollection>(_ collection: C) -> [Any] { collection.map { $0 as Any } }

    /// The stored form of a value `leaves` gave (`.null` for nil; links to managed objects as
    /// links).
    static func stored(_ v: Any) -> StorageValue {
        if v is NSNull { return .null }
        if let o = v as? ObjectBase { return o._rlmRealm == nil ? .null : .link(o._rlmKey) }
        return (try? QueryArguments.scalar(v)) ?? .null
    }

    /// The column type of a stored value.
    static func columnType(_ v: StorageValue) -> ColumnType {
        switch v {
        case .int: .int
        case .bool: .bool
        case .float: .float
        case .double: .double
        case .decimal128: .decimal128
        case .timestamp: .timestamp
        case .string: .string
        case .binary: .binary
        case .objectId: .objectId
        case .uuid: .uuid
        case .link, .typedLink: .link
        case .null, .list, .map: .mixed
        }
    }

    /// The Swift value of a stored scalar (an aggregate's result).
    static func scalar(_ v: StorageValue) -> Any? {
        switch v {
        case .null: nil
        case .int(let x): Int(x)
        case .float(let x): x
        case .double(let x): x
        case .decimal128(let lo, let hi): Decimal128(low: lo, high: hi)
        case .timestamp: Date._rlmDecode(_RLMRaw(v), nil)
        default: nil
        }
    }

    static func notAnObject(_ type: Any.Type, _ name: String) -> Realm.Error {
        Realm.Error(.invalidProperty, "\(type) values have no property '\(name)'; key-value coding reads properties of objects (or 'self')")
    }
}
