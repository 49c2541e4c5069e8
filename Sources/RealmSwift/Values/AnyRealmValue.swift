import Foundation
import RealmStorage

/// A value of any persisted type — or a link to an object of any class — in one property
/// (`@Persisted var value: AnyRealmValue`).
///
/// ```swift
/// thing.value = .string("hello")
/// thing.value = .int(42)
/// thing.value = .object(dog)   // a link to any object
/// if case .int(let n) = thing.value { print(n) }
/// ```
///
/// Stored in a mixed column (Spec/FORMAT.md, format version 2). A value type; objects inside it
/// follow their Realm's thread rules.
public enum AnyRealmValue: Hashable, CustomStringConvertible {
    /// No value (null).
    case none
    /// An integer.
    case int(Int)
    /// A boolean.
    case bool(Bool)
    /// A `Float`.
    case float(Float)
    /// A `Double`.
    case double(Double)
    /// A string.
    case string(String)
    /// Binary data.
    case data(Data)
    /// An instant.
    case date(Date)
    /// A link to an object of any class.
    case object(Object)
    /// An `ObjectId`.
    case objectId(ObjectId)
    /// A `Decimal128`.
    case decimal128(Decimal128)
    /// A `UUID`.
    case uuid(UUID)

    /// The value when it is an int, else nil.
    public var intValue: Int? { if case .int(let v) = self { v } else { nil } }
    /// The value when it is a bool, else nil.
    public var boolValue: Bool? { if case .bool(let v) = self { v } else { nil } }
    /// The value when it is a float, else nil.
    public var floatValue: Float? { if case .float(let v) = self { v } else { nil } }
    /// The value when it is a double, else nil.
    public var doubleValue: Double? { if case .double(let v) = self { v } else { nil } }
    /// The value when it is a string, else nil.
    public var stringValue: String? { if case .string(let v) = self { v } else { nil } }
    /// The value when it is data, else nil.
    public var dataValue: Data? { if case .data(let v) = self { v } else { nil } }
    /// The value when it is a date, else nil.
    public var dateValue: Date? { if case .date(let v) = self { v } else { nil } }
    /// The value when it is an ObjectId, else nil.
    public var objectIdValue: ObjectId? { if case .objectId(let v) = self { v } else { nil } }
    /// The value when it is a Decimal128, else nil.
    public var decimal128Value: Decimal128? { if case .decimal128(let v) = self { v } else { nil } }
    /// The value when it is a UUID, else nil.
    public var uuidValue: UUID? { if case .uuid(let v) = self { v } else { nil } }
    /// The linked object, if this value is a link.
    public var dynamicObject: DynamicObject? {
        guard case .object(let o) = self else { return nil }
        if let d = o as? DynamicObject { return d }
        guard let realm = o._rlmRealm else { return nil }
        return realm.dynamicObject(o._rlmClass.className, o._rlmKey)
    }
    /// The linked object as `type`, if this value links to an object of that class.
    public func object<T: Object>(_ type: T.Type) -> T? {
        guard case .object(let o) = self else { return nil }
        return o as? T
    }

    public var description: String {
        switch self {
        case .none: "none"
        case .int(let v): "int(\(v))"
        case .bool(let v): "bool(\(v))"
        case .float(let v): "float(\(v))"
        case .double(let v): "double(\(v))"
        case .string(let v): "string(\"\(v)\")"
        case .data(let v): "data(\(v.count) bytes)"
        case .date(let v): "date(\(v))"
        case .object(let o): "object(\(o._rlmClass.className))"
        case .objectId(let v): "objectId(\(v))"
        case .decimal128(let v): "decimal128(\(v))"
        case .uuid(let v): "uuid(\(v))"
        }
    }
}

extension AnyRealmValue: RealmCollectionValue, _Persistable {
    public static var _rlmInfo: _RLMTypeInfo { .init(.any, optional: true) }
    public static func _rlmDefaultValue() -> AnyRealmValue { .none }

    public static func _rlmDecode(_ raw: _RLMRaw, _ realm: Realm?) -> AnyRealmValue {
        switch raw.value {
        case .null: return .none
        case .int(let v): return .int(Int(v))
        case .bool(let v): return .bool(v)
        case .float(let v): return .float(v)
        case .double(let v): return .double(v)
        case .string(let v): return .string(v)
        case .binary(let v): return .data(Data(v))
        case .timestamp: return .date(Date._rlmDecode(raw, realm))
        case .objectId(let b): return ObjectId(bytes: b).map { .objectId($0) } ?? .none
        case .uuid(let u): return .uuid(u)
        case .decimal128(let lo, let hi): return .decimal128(Decimal128(low: lo, high: hi))
        case .typedLink(let table, let key):
            guard let realm, let t = realm.catalog.tables.first(where: { $0.id == table }) else { return .none }
            if let info = realm.modelClass(named: t.name), info.type is Object.Type {
                return .object(realm.makeObject(info.type, key, info) as! Object)
            }
            return .object(realm.dynamicObject(t.name, key))
        default: return .none
        }
    }

    public func _rlmEncode(_ realm: Realm?) throws -> _RLMRaw {
        switch self {
        case .none: return _RLMRaw(.null)
        case .int(let v): return _RLMRaw(.int(Int64(v)))
        case .bool(let v): return _RLMRaw(.bool(v))
        case .float(let v): return _RLMRaw(.float(v))
        case .double(let v): return _RLMRaw(.double(v))
        case .string(let v): return _RLMRaw(.string(v))
        case .data(let v): return _RLMRaw(.binary([UInt8](v)))
        case .date(let v): return try v._rlmEncode(realm)
        case .objectId(let v): return _RLMRaw(.objectId(v.bytes))
        case .decimal128(let v): return _RLMRaw(.decimal128(low: v.low, high: v.high))
        case .uuid(let v): return _RLMRaw(.uuid(v))
        case .object(let o):
            guard let realm else { throw Realm.Error(.fail, "links can only be stored in a Realm") }
            let key = try realm.linkKey(for: o)
            guard let table = realm.catalog.table(o._rlmClass.className) else {
                throw Realm.Error(.fail, "no table for \(o._rlmClass.className)")
            }
            return _RLMRaw(.typedLink(table: table.id, key: key))
        }
    }

    public static func _rlmCoerce(_ value: Any, _ realm: Realm?) throws -> AnyRealmValue {
        guard let v = unwrapOptional(value), !(v is NSNull) else { return .none }
        switch v {
        case let x as AnyRealmValue: return x
        case let x as Int: return .int(x)
        case let x as Bool: return .bool(x)
        case let x as Float: return .float(x)
        case let x as Double: return .double(x)
        case let x as String: return .string(x)
        case let x as Data: return .data(x)
        case let x as Date: return .date(x)
        case let x as Object: return .object(x)
        case let x as ObjectId: return .objectId(x)
        case let x as Decimal128: return .decimal128(x)
        case let x as UUID: return .uuid(x)
        case let x as any BinaryInteger: return .int(Int(x))
        default: throw Realm.Error(.invalidValue, "a value of type \(type(of: v)) cannot be stored as AnyRealmValue")
        }
    }
}
