import Foundation
import RealmStorage

/// A value in the storage engine's currency. Public only because generic constraints name it.
public struct _RLMRaw {
    @usableFromInline package var value: StorageValue
    @usableFromInline package init(_ value: StorageValue) { self.value = value }
}

/// How a Swift type is persisted. Public only because generic constraints name it.
public struct _RLMTypeInfo {
    package enum Kind {
        case single
        case list
        case set
        case map
        case linkingObjects
    }
    package var type: PropertyType
    package var isOptional: Bool
    package var kind: Kind = .single
    /// For links, lists of links and linking objects: the target class.
    package var objectType: ObjectBase.Type?

    package init(_ type: PropertyType, optional: Bool = false, kind: Kind = .single, objectType: ObjectBase.Type? = nil) {
        self.type = type
        self.isOptional = optional
        self.kind = kind
        self.objectType = objectType
    }
}

/// A type that can be stored in a property or a collection element. The conformances come with the
/// library (and with ``PersistableEnum``); it is public only because generic constraints name it.
public protocol _RealmValue {
    /// How values of this type are stored.
    static var _rlmInfo: _RLMTypeInfo { get }
    /// The value of a property declared without an initial value.
    static func _rlmDefaultValue() -> Self
    /// Reads a stored value (`realm` materializes links).
    static func _rlmDecode(_ raw: _RLMRaw, _ realm: Realm?) -> Self
    /// Converts to the stored form; links to unmanaged objects add them to `realm` first.
    func _rlmEncode(_ realm: Realm?) throws -> _RLMRaw
    /// Converts a loosely typed value (from a dictionary, an array or the dynamic API).
    static func _rlmCoerce(_ value: Any, _ realm: Realm?) throws -> Self
    /// `object` as this type (results hand out their accessors through it; the model classes' own
    /// cast is a class check, cheaper than a generic cast). Stops when it is not one.
    static func _rlmCast(_ object: consuming ObjectBase) -> Self
    /// Whether decoding a value's stored form gives back exactly the value (false for dates,
    /// whose stored form counts nanoseconds): unmanaged objects then keep only the stored form.
    static var _rlmExactlyStored: Bool { get }
}

extension _RealmValue {
    public static func _rlmCast(_ object: consuming ObjectBase) -> Self { object as! Self }
    public static var _rlmExactlyStored: Bool { true }
}

/// A type that can be an element of `List`, `MutableSet`, `Map` and `Results`.
public protocol RealmCollectionValue: _RealmValue, Hashable, SendableMetatype {}

/// A type a `@Persisted` property can have: every ``RealmCollectionValue``, optionals of them,
/// `List`, `MutableSet`, `Map` and `LinkingObjects`.
public protocol _Persistable {
    static var _rlmInfo: _RLMTypeInfo { get }
    static func _rlmDefaultValue() -> Self
    /// The value of property `index` of a managed object.
    static func _rlmGet(_ object: ObjectBase, _ index: Int) -> Self
    /// Sets property `index` of a managed object (inside a write transaction).
    static func _rlmSet(_ object: ObjectBase, _ index: Int, _ value: Self)
    /// The stored form of an unmanaged value, adding linked unmanaged objects to `realm`.
    static func _rlmEncodeUnmanaged(_ value: Self, _ realm: Realm) throws -> _RLMRaw
    /// The stored form of a value that needs no Realm to encode (nil for links and collections).
    static func _rlmStoredForm(_ value: Self) -> _RLMRaw?
    /// Converts a loosely typed value (from a dictionary, an array or the dynamic API).
    static func _rlmCoerce(_ value: Any, _ realm: Realm?) throws -> Self
    /// The stored form of `value` when it decodes back to exactly `value` (an unmanaged object then
    /// keeps only that form); nil otherwise.
    static func _rlmExactStoredForm(_ value: Self) -> _RLMRaw?
    /// The value a stored form from ``_rlmExactStoredForm(_:)`` stands for.
    static func _rlmFromStored(_ raw: _RLMRaw) -> Self
}

extension _Persistable {
    public static func _rlmExactStoredForm(_ value: Self) -> _RLMRaw? { nil }
    public static func _rlmFromStored(_ raw: _RLMRaw) -> Self {
        fatalError("\(Self.self) values are not kept in stored form.")
    }
    static func _rlmFromStoredAny(_ raw: _RLMRaw) -> Any { _rlmFromStored(raw) }

    static func _rlmEncodeAny(_ value: Any, _ realm: Realm) throws -> _RLMRaw {
        guard let v = value as? Self else {
            throw Realm.Error(.fail, "a value of type \(type(of: value)) cannot be stored in a property of type \(Self.self)")
        }
        return try _rlmEncodeUnmanaged(v, realm)
    }
}

extension _Persistable where Self: _RealmValue {
    public static func _rlmExactStoredForm(_ value: Self) -> _RLMRaw? { _rlmExactlyStored ? _rlmStoredForm(value) : nil }
    public static func _rlmFromStored(_ raw: _RLMRaw) -> Self { _rlmDecode(raw, nil) }
    public static func _rlmGet(_ object: ObjectBase, _ index: Int) -> Self {
        let realm = object._rlmRealm!
        return _rlmDecode(_RLMRaw(realm.readValue(object, index)), realm)
    }
    /// Property `index` of a managed object, read by `direct` (view, index, row) from the
    /// object's row when its Realm allows that (``ObjectBase/_rlmReadDirect(_:_:)``; nil from
    /// `direct` — a null row, another lane — falls back too), else through the general path.
    @inline(__always)
    static func _rlmRead(_ object: ObjectBase, _ index: Int, direct: (GroupView, Int, Int) -> Self?) -> Self {
        if let v = object._rlmReadDirect(index, direct) { return v }
        let realm = object._rlmRealm!
        return _rlmDecode(_RLMRaw(realm.readValue(object, index)), realm)
    }
    public static func _rlmSet(_ object: ObjectBase, _ index: Int, _ value: Self) {
        let realm = object._rlmRealm!
        realm.writeValue(object, index) { try value._rlmEncode(realm).value }
    }
    public static func _rlmEncodeUnmanaged(_ value: Self, _ realm: Realm) throws -> _RLMRaw { try value._rlmEncode(realm) }
    public static func _rlmStoredForm(_ value: Self) -> _RLMRaw? {
        if _rlmInfo.type == .object || _rlmInfo.type == .any { return nil }
        return try? value._rlmEncode(nil)
    }
}

// MARK: - Scalars

extension Bool: RealmCollectionValue, _Persistable {
    public static var _rlmInfo: _RLMTypeInfo { .init(.bool) }
    public static func _rlmGet(_ object: ObjectBase, _ index: Int) -> Bool { _rlmRead(object, index) { $0.int($1, $2).map { $0 != 0 } } }
    public static func _rlmDefaultValue() -> Bool { false }
    public static func _rlmDecode(_ raw: _RLMRaw, _ realm: Realm?) -> Bool {
        if case .bool(let v) = raw.value { return v }
        return false
    }
    public func _rlmEncode(_ realm: Realm?) throws -> _RLMRaw { _RLMRaw(.bool(self)) }
    @inlinable public static func _rlmExactStoredForm(_ value: Bool) -> _RLMRaw? { _RLMRaw(.bool(value)) }
}

/// Integers of every width are stored as 64-bit integers; reads truncate to the property's width.
public protocol _RealmInteger: FixedWidthInteger, RealmCollectionValue, _Persistable {}

extension _RealmInteger {
    public static var _rlmInfo: _RLMTypeInfo { .init(.int) }
    public static func _rlmGet(_ object: ObjectBase, _ index: Int) -> Self {
        _rlmRead(object, index) { $0.int($1, $2).map { Self(truncatingIfNeeded: $0) } }
    }
    public static func _rlmDefaultValue() -> Self { 0 }
    public static func _rlmDecode(_ raw: _RLMRaw, _ realm: Realm?) -> Self {
        if case .int(let v) = raw.value { return Self(truncatingIfNeeded: v) }
        return 0
    }
    public func _rlmEncode(_ realm: Realm?) throws -> _RLMRaw { _RLMRaw(.int(Int64(self))) }
    /// Inlinable (as are those of the other scalars): an unmanaged setter builds the stored form in place.
    @inlinable public static func _rlmExactStoredForm(_ value: Self) -> _RLMRaw? { _RLMRaw(.int(Int64(value))) }
}

extension Int: _RealmInteger {
    // Its own accessor read: the generic one's specializations are merged into one function that
    // calls its reader through a pointer (the commonest property type pays for that on every read).
    public static func _rlmGet(_ object: ObjectBase, _ index: Int) -> Int {
        _rlmRead(object, index) { $0.int($1, $2).map { Int(truncatingIfNeeded: $0) } }
    }
}
extension Int8: _RealmInteger {}
extension Int16: _RealmInteger {}
extension Int32: _RealmInteger {}
extension Int64: _RealmInteger {}

extension Float: RealmCollectionValue, _Persistable {
    public static var _rlmInfo: _RLMTypeInfo { .init(.float) }
    public static func _rlmGet(_ object: ObjectBase, _ index: Int) -> Float { _rlmRead(object, index) { $0.float($1, $2) } }
    public static func _rlmDefaultValue() -> Float { 0 }
    public static func _rlmDecode(_ raw: _RLMRaw, _ realm: Realm?) -> Float {
        if case .float(let v) = raw.value { return v }
        return 0
    }
    public func _rlmEncode(_ realm: Realm?) throws -> _RLMRaw { _RLMRaw(.float(self)) }
    @inlinable public static func _rlmExactStoredForm(_ value: Float) -> _RLMRaw? { _RLMRaw(.float(value)) }
}

extension Double: RealmCollectionValue, _Persistable {
    public static var _rlmInfo: _RLMTypeInfo { .init(.double) }
    public static func _rlmGet(_ object: ObjectBase, _ index: Int) -> Double { _rlmRead(object, index) { $0.double($1, $2) } }
    public static func _rlmDefaultValue() -> Double { 0 }
    public static func _rlmDecode(_ raw: _RLMRaw, _ realm: Realm?) -> Double {
        if case .double(let v) = raw.value { return v }
        return 0
    }
    public func _rlmEncode(_ realm: Realm?) throws -> _RLMRaw { _RLMRaw(.double(self)) }
    @inlinable public static func _rlmExactStoredForm(_ value: Double) -> _RLMRaw? { _RLMRaw(.double(value)) }
}

extension String: RealmCollectionValue, _Persistable {
    public static var _rlmInfo: _RLMTypeInfo { .init(.string) }
    public static func _rlmGet(_ object: ObjectBase, _ index: Int) -> String { _rlmRead(object, index) { $0.string($1, $2) } }
    public static func _rlmDefaultValue() -> String { "" }
    public static func _rlmDecode(_ raw: _RLMRaw, _ realm: Realm?) -> String {
        if case .string(let v) = raw.value { return v }
        return ""
    }
    public func _rlmEncode(_ realm: Realm?) throws -> _RLMRaw { _RLMRaw(.string(self)) }
    @inlinable public static func _rlmExactStoredForm(_ value: String) -> _RLMRaw? { _RLMRaw(.string(value)) }
}

extension Data: RealmCollectionValue, _Persistable {
    public static var _rlmInfo: _RLMTypeInfo { .init(.data) }
    /// Kept as set on unmanaged objects: a `Data` rebuilt from its bytes would be a copy, and a
    /// slice would lose its indices.
    public static var _rlmExactlyStored: Bool { false }
    public static func _rlmDefaultValue() -> Data { Data() }
    public static func _rlmDecode(_ raw: _RLMRaw, _ realm: Realm?) -> Data {
        if case .binary(let v) = raw.value { return Data(v) }
        return Data()
    }
    public func _rlmEncode(_ realm: Realm?) throws -> _RLMRaw { _RLMRaw(.binary([UInt8](self))) }
}

extension Date: RealmCollectionValue, _Persistable {
    /// Seconds between 1970-01-01 and 2001-01-01.
    static let epochOffset: Int64 = 978_307_200
    public static var _rlmInfo: _RLMTypeInfo { .init(.date) }
    public static var _rlmExactlyStored: Bool { false }
    public static func _rlmDefaultValue() -> Date { Date(timeIntervalSince1970: 0) }
    public static func _rlmDecode(_ raw: _RLMRaw, _ realm: Realm?) -> Date {
        guard case .timestamp(let s, let ns) = raw.value else { return Date(timeIntervalSince1970: 0) }
        return Date(timeIntervalSinceReferenceDate: Double(s &- epochOffset) + Double(ns) / 1e9)
    }
    public func _rlmEncode(_ realm: Realm?) throws -> _RLMRaw {
        // Split relative to the reference date so whole seconds stay exact; seconds and
        // nanoseconds share a sign, as Realm stores dates.
        let r = timeIntervalSinceReferenceDate
        guard r.isFinite, abs(r) < 9.0e18 else {
            throw Realm.Error(.fail, "the date \(self) cannot be stored (out of range)")
        }
        let whole = r.rounded(.towardZero)
        var s = Int64(whole)
        var ns = Int64(((r - whole) * 1e9).rounded())
        if ns >= 1_000_000_000 {
            s += 1
            ns -= 1_000_000_000
        } else if ns <= -1_000_000_000 {
            s -= 1
            ns += 1_000_000_000
        }
        return _RLMRaw(.timestamp(seconds: s &+ Self.epochOffset, nanoseconds: Int32(ns)))
    }
}

extension UUID: RealmCollectionValue, _Persistable {
    public static var _rlmInfo: _RLMTypeInfo { .init(.UUID) }
    public static func _rlmDefaultValue() -> UUID { UUID() }
    public static func _rlmDecode(_ raw: _RLMRaw, _ realm: Realm?) -> UUID {
        if case .uuid(let v) = raw.value { return v }
        return UUID(uuid: (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0))
    }
    public func _rlmEncode(_ realm: Realm?) throws -> _RLMRaw { _RLMRaw(.uuid(self)) }
}

extension ObjectId: RealmCollectionValue, _Persistable {
    public static var _rlmInfo: _RLMTypeInfo { .init(.objectId) }
    public static func _rlmDefaultValue() -> ObjectId { .generate() }
    public static func _rlmDecode(_ raw: _RLMRaw, _ realm: Realm?) -> ObjectId {
        if case .objectId(let b) = raw.value, let id = ObjectId(bytes: b) { return id }
        return ObjectId(bytes: [UInt8](repeating: 0, count: 12))!
    }
    public func _rlmEncode(_ realm: Realm?) throws -> _RLMRaw { _RLMRaw(.objectId(bytes)) }
}

extension Decimal128: RealmCollectionValue, _Persistable {
    public static var _rlmInfo: _RLMTypeInfo { .init(.decimal128) }
    public static func _rlmDefaultValue() -> Decimal128 { Decimal128() }
    public static func _rlmDecode(_ raw: _RLMRaw, _ realm: Realm?) -> Decimal128 {
        if case .decimal128(let lo, let hi) = raw.value { return Decimal128(low: lo, high: hi) }
        return Decimal128()
    }
    public func _rlmEncode(_ realm: Realm?) throws -> _RLMRaw { _RLMRaw(.decimal128(low: low, high: high)) }
}

// MARK: - Optionals

extension Optional: _RealmValue where Wrapped: _RealmValue {
    public static var _rlmInfo: _RLMTypeInfo {
        var i = Wrapped._rlmInfo
        i.isOptional = true
        return i
    }
    public static var _rlmExactlyStored: Bool { Wrapped._rlmExactlyStored }
    public static func _rlmDefaultValue() -> Wrapped? { nil }
    public static func _rlmDecode(_ raw: _RLMRaw, _ realm: Realm?) -> Wrapped? {
        if case .null = raw.value { return nil }
        return Wrapped._rlmDecode(raw, realm)
    }
    public func _rlmEncode(_ realm: Realm?) throws -> _RLMRaw {
        guard let self else { return _RLMRaw(.null) }
        return try self._rlmEncode(realm)
    }
}

extension Optional: RealmCollectionValue where Wrapped: RealmCollectionValue {}
extension Optional: _Persistable where Wrapped: _RealmValue {}

// MARK: - Enums

/// An enum whose raw values can be persisted: `enum Kind: Int, PersistableEnum { case a, b }`.
/// It is stored as its raw value, which its aggregates and value operations use.
public protocol PersistableEnum: RawRepresentable, CaseIterable, RealmCollectionValue, _Persistable, _HasPersistedType, MinMaxType
where RawValue: _RealmValue, PersistedType == RawValue {}

extension PersistableEnum {
    public static var _rlmInfo: _RLMTypeInfo { RawValue._rlmInfo }
    public static var _rlmExactlyStored: Bool { RawValue._rlmExactlyStored }
    public static func _rlmDefaultValue() -> Self { allCases.first! }
    public static func _rlmDecode(_ raw: _RLMRaw, _ realm: Realm?) -> Self {
        let r = RawValue._rlmDecode(raw, realm)
        guard let v = Self(rawValue: r) else {
            fatalError("The stored value \(r) is not a case of \(Self.self); add the case or migrate the stored values.")
        }
        return v
    }
    public func _rlmEncode(_ realm: Realm?) throws -> _RLMRaw { try rawValue._rlmEncode(realm) }
}
