import Foundation
import RealmStorage

extension _RealmValue {
    /// Converts a loosely typed value (from a dictionary, an array or the dynamic API) to this type.
    public static func _rlmCoerce(_ value: Any, _ realm: Realm?) throws -> Self {
        if let v = value as? Self { return v }
        return _rlmDecode(_RLMRaw(try ValueCoercion.raw(value, _rlmInfo, typeName: "\(Self.self)")), realm)
    }
}

extension Optional where Wrapped: _RealmValue {
    public static func _rlmCoerce(_ value: Any, _ realm: Realm?) throws -> Wrapped? {
        guard let u = unwrapOptional(value), !(u is NSNull) else { return nil }
        return try Wrapped._rlmCoerce(u, realm)
    }
}

extension PersistableEnum {
    public static func _rlmCoerce(_ value: Any, _ realm: Realm?) throws -> Self {
        if let v = value as? Self { return v }
        let raw = try RawValue._rlmCoerce(value, realm)
        guard let v = Self(rawValue: raw) else { throw Realm.Error(.fail, "\(raw) is not a case of \(Self.self)") }
        return v
    }
}

extension Object {
    public static func _rlmCoerce(_ value: Any, _ realm: Realm?) throws -> Self { try ValueCoercion.object(self, value) }
}

extension EmbeddedObject {
    public static func _rlmCoerce(_ value: Any, _ realm: Realm?) throws -> Self { try ValueCoercion.object(self, value) }
}

/// Conversions of loosely typed values (dictionaries, arrays, the dynamic API) to property values.
enum ValueCoercion {
    /// `value` itself when it is a `T`, else a new unmanaged `T` made from it.
    static func object<T: ObjectBase>(_ type: T.Type, _ value: Any) throws -> T {
        if let v = value as? T { return v }
        let o = type.init()
        try assign(value, to: o)
        return o
    }

    /// Assigns `value` — a `[String: Any]`, an array in property order, or another object — to the
    /// unmanaged `object`.
    static func assign(_ value: Any, to object: ObjectBase) throws {
        let info = object._rlmClass
        if let dict = value as? [String: Any] {
            for (name, v) in dict {
                guard let i = info.indexByName[name] else { throw Realm.Error.unknownProperty(name, info.className) }
                guard info.properties[i].isStored else { continue }
                object._rlmSetUnmanaged(i, try coerce(v, to: info.properties[i], realm: nil))
            }
        } else if let array = value as? [Any] {
            let stored = info.properties.indices.filter { info.properties[$0].isStored }
            guard array.count <= stored.count else {
                throw Realm.Error(.fail, "\(array.count) values given for \(info.className), which has \(stored.count) properties")
            }
            for (v, i) in zip(array, stored) { object._rlmSetUnmanaged(i, try coerce(v, to: info.properties[i], realm: nil)) }
        } else if let other = value as? ObjectBase {
            for (i, p) in info.properties.enumerated() where p.isStored {
                guard let j = other._rlmClass.indexByName[p.name] else { continue }
                object._rlmSetUnmanaged(i, try coerce(other.propertyValue(j), to: p, realm: nil))
            }
        } else {
            throw Realm.Error(.fail, "cannot create \(info.className) from a value of type \(type(of: value))")
        }
    }

    static func coerce(_ value: Any?, to p: PropertyInfo, realm: Realm?) throws -> Any {
        try p.valueType._rlmCoerceAny(value as Any, realm)
    }

    /// The stored form of a primary-key value: the key types themselves (`Int`, `String`,
    /// `ObjectId`, `UUID`) directly, anything else through ``raw(_:_:typeName:)`` (which
    /// unwraps optionals and converts loosely typed values).
    static func primaryKey<Key>(_ key: Key, _ info: _RLMTypeInfo) throws -> StorageValue {
        switch info.type {
        case .int: if let k = key as? Int { return .int(Int64(k)) }
        case .string: if let k = key as? String { return .string(k) }
        case .objectId: if let k = key as? ObjectId { return .objectId(k.bytes) }
        case .UUID: if let k = key as? UUID { return .uuid(k) }
        default: break
        }
        return try raw(key as Any, info, typeName: "the primary key")
    }

    /// The stored form of a scalar given as any reasonable Swift value.
    static func raw(_ value: Any, _ info: _RLMTypeInfo, typeName: String) throws -> StorageValue {
        guard let v = unwrapOptional(value), !(v is NSNull) else {
            if info.isOptional { return .null }
            throw Realm.Error(.fail, "nil cannot be stored in a non-optional property of type \(typeName)")
        }
        func mismatch() -> Realm.Error { Realm.Error(.fail, "a value of type \(type(of: v)) (\(v)) cannot be stored as \(typeName)") }
        switch info.type {
        case .int:
            if let i = v as? any BinaryInteger, let x = Int64(exactly: i) { return .int(x) }
            if let d = v as? Double, let x = Int64(exactly: d) { return .int(x) }
            throw mismatch()
        case .bool:
            if let b = v as? Bool { return .bool(b) }
            throw mismatch()
        case .float:
            if let f = v as? Float { return .float(f) }
            if let d = v as? Double { return .float(Float(d)) }
            if let i = v as? any BinaryInteger { return .float(Float(Int64(i))) }
            throw mismatch()
        case .double:
            if let d = v as? Double { return .double(d) }
            if let f = v as? Float { return .double(Double(f)) }
            if let i = v as? any BinaryInteger { return .double(Double(Int64(i))) }
            throw mismatch()
        case .string:
            if let s = v as? String { return .string(s) }
            if let s = v as? Substring { return .string(String(s)) }
            throw mismatch()
        case .data:
            if let d = v as? Data { return .binary([UInt8](d)) }
            if let d = v as? [UInt8] { return .binary(d) }
            throw mismatch()
        case .date:
            if let d = v as? Date { return try d._rlmEncode(nil).value }
            throw mismatch()
        case .objectId:
            if let o = v as? ObjectId { return .objectId(o.bytes) }
            if let s = v as? String, let o = try? ObjectId(string: s) { return .objectId(o.bytes) }
            throw mismatch()
        case .decimal128:
            let d: Decimal128
            if let x = v as? Decimal128 {
                d = x
            } else if let i = v as? Int {
                d = Decimal128(i)
            } else if let x = v as? Double {
                d = Decimal128(x)
            } else if let s = v as? String, let x = try? Decimal128(string: s) {
                d = x
            } else {
                throw mismatch()
            }
            return .decimal128(low: d.low, high: d.high)
        case .UUID:
            if let u = v as? UUID { return .uuid(u) }
            if let s = v as? String, let u = UUID(uuidString: s) { return .uuid(u) }
            throw mismatch()
        case .object, .linkingObjects, .any:
            throw mismatch()
        }
    }
}

extension _Persistable {
    static func _rlmCoerceAny(_ value: Any, _ realm: Realm?) throws -> Any { try _rlmCoerce(value, realm) }
}
