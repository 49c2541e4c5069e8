import Foundation
import RealmStorage

/// The common base of ``Object`` and ``EmbeddedObject``: the state that makes an object managed.
///
/// Objects are thread-confined once managed by a live Realm: use them on the thread (or actor) that
/// opened the Realm, or pass them on with ``ThreadSafeReference`` or ``freeze()``. Unmanaged objects
/// are ordinary Swift objects.
open class ObjectBase: CustomStringConvertible, Encodable {
    // The per-object state below is exempt from dynamic exclusivity checks, which cost more than
    // the accesses themselves on the property-read path: a managed object is confined to its
    // Realm's thread (frozen ones are only read), and no access to these overlaps another.
    /// The Realm managing this object (nil while unmanaged).
    @exclusivity(unchecked) @usableFromInline package final var _rlmRealm: Realm?
    /// The object's key in its table, when managed.
    @exclusivity(unchecked) package final var _rlmKey = ObjectKey(-1)
    /// Where the object sits in the snapshot of version `_rlmLocationVersion` (a read-path cache).
    @exclusivity(unchecked) package final var _rlmLocation = RowLocation(group: -1, row: -1)
    @exclusivity(unchecked) package final var _rlmLocationVersion: UInt64 = 0
    /// The table reader of that version, once resolved.
    @exclusivity(unchecked) final var _rlmReader: BoundReader? { didSet { _rlmPlaceEpoch &+= 1 } }
    /// The view of the object's row group, for the direct read path; valid while
    /// `_rlmReadStamp` is the Realm's stamp (-1: never).
    @exclusivity(unchecked) final var _rlmGroup: GroupView? { didSet { _rlmPlaceEpoch &+= 1 } }
    /// Moves on whenever `_rlmReader` or `_rlmGroup` is set: a walk that placed this accessor
    /// knows from it that both are still the ones it set (see ``ObjectWalk``).
    @exclusivity(unchecked) final var _rlmPlaceEpoch = 0
    @exclusivity(unchecked) final var _rlmReadStamp = -1
    /// The values of an unmanaged object, set through its accessors, its initializers or the
    /// dynamic API (empty until the first). A value is kept in `_rlmStored`, in its stored form,
    /// when that decodes back to it exactly (numbers, strings, ...: no boxing into `Any`), else in
    /// `_rlmValues` — and then in `_rlmStored` too when it has a stored form (dates), for `add`.
    @exclusivity(unchecked) @usableFromInline package final var _rlmValues: [Any?] = []
    @exclusivity(unchecked) @usableFromInline package final var _rlmStored: [StorageValue?] = []
    /// Bit i: property i (< 64) was set.
    @exclusivity(unchecked) @usableFromInline final var _rlmSetMask: UInt64 = 0
    /// Bit i: property i (< 64) has its stored form in `_rlmStored`.
    @exclusivity(unchecked) @usableFromInline final var _rlmStoredMask: UInt64 = 0
    /// When set, accessors report which property they read (key path → name).
    @exclusivity(unchecked) @usableFromInline package final var _rlmRecorder: IndexRecorder?
    @exclusivity(unchecked) private final var _rlmClassStorage: ClassInfo?
    /// The Realm's ``Realm/confinedThread`` (0: none), for the direct read path's thread check.
    @exclusivity(unchecked) final var _rlmThread: UInt = 0
    /// The Realm's ``Realm/invalidate()`` generation when this object was bound to it.
    @exclusivity(unchecked) final var _rlmGeneration = 0

    /// Creates an unmanaged object.
    public required init() {}

    var _rlmClass: ClassInfo {
        if let i = _rlmClassStorage { return i }
        let i = ClassInfo.of(type(of: self))
        _rlmClassStorage = i
        return i
    }

    /// The index of the property of this object's class declared at `site` with values of `type`
    /// (-1: none, or more than one). Reads the stored class description when there is one: through
    /// the lazy `_rlmClass` a new object's first set costs ~45 instructions more per property.
    @usableFromInline final func _rlmIndex(declaredAt site: PersistedSite, type: ObjectIdentifier) -> Int {
        if let info = _rlmClassStorage { return info.index(declaredAt: site, type: type) }
        return _rlmClass.index(declaredAt: site, type: type)
    }

    final func _rlmBind(_ realm: Realm, _ key: ObjectKey, _ info: ClassInfo) {
        _rlmSetBinding(realm, key)
        if _rlmClassStorage !== info { _rlmClassStorage = info }
        // A new accessor (the commonest case) holds nothing to release.
        if !_rlmValues.isEmpty { _rlmValues = [] }
        if !_rlmStored.isEmpty {
            // Emptied in place (this object is their only holder), then handed on for reuse.
            for i in _rlmStored.indices { _rlmStored[i] = nil }
            info.recycle(_rlmStored)
            _rlmStored = []
        }
        _rlmSetMask = 0
        _rlmStoredMask = 0
        _rlmForgetPlace()
    }

    /// Binds a new accessor (made by `init()` just now: it holds no values, reader or view) to the
    /// object `key` of `realm` and places it at `location` (see ``_rlmPlace(at:reader:view:stamp:)``):
    /// ``_rlmBind(_:_:_:)`` and that in one pass of plain stores.
    final func _rlmBindNew(
        _ realm: Realm, _ key: ObjectKey, _ info: ClassInfo, at location: RowLocation, reader: BoundReader, view: consuming GroupView?,
        stamp: Int
    ) {
        _rlmSetBinding(realm, key)
        _rlmClassStorage = info
        _rlmLocation = location
        _rlmLocationVersion = reader.version
        _rlmReader = reader
        _rlmReadStamp = view == nil ? -1 : stamp
        _rlmGroup = view
    }

    /// What every binding to the object `key` of `realm` sets.
    @inline(__always)
    private final func _rlmSetBinding(_ realm: Realm, _ key: ObjectKey) {
        _rlmRealm = realm
        _rlmThread = realm.confinedThread
        _rlmGeneration = realm.generation
        _rlmKey = key
    }

    /// Makes this accessor (managed, of the same Realm and class, referenced by nothing else) the
    /// accessor of the object `key`: results iteration reuses an accessor the loop let go of.
    func _rlmReuse(for key: ObjectKey, generation: Int) {
        _rlmKey = key
        _rlmGeneration = generation
        // The reader and view stay (the next placement usually keeps them); unplaced, the object
        // locates itself again and takes the general path until then.
        _rlmLocationVersion = 0
        _rlmReadStamp = -1
    }

    private func _rlmForgetPlace() {
        _rlmLocationVersion = 0
        if _rlmReader != nil { _rlmReader = nil }
        if _rlmGroup != nil { _rlmGroup = nil }
        _rlmReadStamp = -1
    }

    func _rlmBindClass(_ info: ClassInfo) { _rlmClassStorage = info }

    /// Records where the object sits in the snapshot of `version` (read through `reader`), so
    /// reads of that version find its row without looking it up.
    func _rlmPlace(at location: RowLocation, version: UInt64, reader: BoundReader?) {
        if let reader, let stamp = _rlmRealm?.directReadStamp(version), stamp >= 0 {
            _rlmPlace(at: location, reader: reader, view: reader.view(Int(location.group)), stamp: stamp)
        } else {
            _rlmLocation = location
            _rlmLocationVersion = version
            _rlmReader = reader
            _rlmGroup = nil
            _rlmReadStamp = -1
        }
    }

    /// Reads property `index` with `read` (its cursor, the row) from the object's row-group
    /// view when the read may skip the general path: the object was placed in the version its
    /// live Realm reads, outside a write transaction, and nothing changed since (its read stamp is
    /// the Realm's stamp, which every version change, write transaction and
    /// ``Realm/invalidate()`` moves). nil sends the read through ``Realm/readValue(_:_:)``, which
    /// checks and resolves the rest (and stops with its message for an invalidated or deleted
    /// object).
    @inline(__always)
    final func _rlmReadDirect<T>(_ index: Int, _ read: (SegmentCursor, Int) -> T?) -> T? {
        // No local reference to the Realm or the view is kept across a call, so none is retained:
        // the cursor is copied out of the view (it holds no reference; the view, which this object
        // keeps, keeps its memory).
        guard _rlmReadStamp == _rlmRealm?.stamp else { return nil }
        if _rlmThread == 0 || _rlmThread != currentThreadIdentity() { _rlmRealm?.checkThread() }
        if let cursor = _rlmGroup?.resolvedCursor(index) { return read(cursor, Int(_rlmLocation.row)) }
        guard let cursor = _rlmGroup?.cursor(index) else { return nil }
        return read(cursor, Int(_rlmLocation.row))
    }

    /// Moves an accessor to another row of the row group (reader and view) it was placed in.
    @inline(__always)
    final func _rlmMove(toRow row: Int32, group: Int32, version: UInt64, stamp: Int) {
        _rlmLocation.group = group
        _rlmLocation.row = row
        _rlmLocationVersion = version
        _rlmReadStamp = stamp
    }

    /// Records where the object sits in the version `reader` reads, with the view of its row group
    /// when `stamp` is the Realm's stamp while it reads that version outside a write (the direct
    /// read path; -1 or a nil view: the general path).
    @inline(__always)
    final func _rlmPlace(at location: RowLocation, reader: BoundReader, view: GroupView?, stamp: Int) {
        _rlmLocation = location
        _rlmLocationVersion = reader.version
        // A reused accessor usually stays in its reader and group: no retain and release then.
        if _rlmReader !== reader { _rlmReader = reader }
        if _rlmGroup !== view { _rlmGroup = view }
        _rlmReadStamp = view == nil ? -1 : stamp
    }

    /// Keeps `value` of an unmanaged object's property `index` (with its stored form, when known).
    @usableFromInline final func _rlmSetUnmanaged(_ index: Int, _ value: Any, stored: _RLMRaw? = nil) {
        if _rlmValues.isEmpty { _rlmValues = [Any?](repeating: nil, count: _rlmClass.properties.count) }
        if _rlmStored.isEmpty { _rlmStored = _rlmClass.emptySlots() }
        _rlmValues[index] = value
        _rlmStored[index] = stored?.value
        guard index < 64 else { return }
        _rlmSetMask |= 1 << UInt64(index)
        if stored == nil { _rlmStoredMask &= ~(1 << UInt64(index)) } else { _rlmStoredMask |= 1 << UInt64(index) }
    }

    /// `object` as a `T`: an object of exactly that class (every object a Results of the class
    /// iterates) needs no dynamic cast; another one is cast (and must be a `T`).
    @inlinable @inline(__always)
    static func _rlmDowncast<T: ObjectBase>(_ object: consuming ObjectBase) -> T {
        if type(of: object) == T.self { return unsafeDowncast(object, to: T.self) }
        return object as! T
    }

    /// Keeps an unmanaged object's property `index` as `stored` alone (its value decodes from it
    /// exactly).
    @inlinable @inline(__always) final func _rlmSetStored(_ index: Int, _ stored: _RLMRaw) {
        // Inlined into each accessor's setter (its value's case is then known); the first set of
        // an object, a property past 64 or one also held as a value take the general path.
        guard !_rlmStored.isEmpty, index < 64, _rlmValues.isEmpty else { return _rlmSetStoredGeneral(index, stored) }
        _rlmStored[index] = stored.value
        _rlmSetMask |= 1 << UInt64(index)
        _rlmStoredMask |= 1 << UInt64(index)
    }

    @usableFromInline final func _rlmSetStoredGeneral(_ index: Int, _ stored: _RLMRaw) {
        if _rlmStored.isEmpty { _rlmStored = _rlmClass.emptySlots() }
        _rlmStored[index] = stored.value
        if index < _rlmValues.count { _rlmValues[index] = nil }
        guard index < 64 else { return }
        _rlmSetMask |= 1 << UInt64(index)
        _rlmStoredMask |= 1 << UInt64(index)
    }

    /// The stored form an unmanaged object holds for property `index`, if any.
    @usableFromInline final func _rlmStoredValue(_ index: Int) -> StorageValue? {
        index < _rlmStored.count ? _rlmStored[index] : nil
    }

    /// Whether an unmanaged object holds a value for property `index`.
    final func _rlmHasValue(_ index: Int) -> Bool {
        (index < _rlmValues.count && _rlmValues[index] != nil) || _rlmStoredValue(index) != nil
    }

    /// The value an unmanaged object holds for property `index`, if any.
    final func _rlmHeldValue(_ index: Int) -> Any? {
        if index < _rlmValues.count, let v = _rlmValues[index] { return v }
        if let s = _rlmStoredValue(index) { return _rlmClass.properties[index].valueType._rlmFromStoredAny(_RLMRaw(s)) }
        return nil
    }

    /// The Realm that manages this object, or nil while it is unmanaged.
    public var realm: Realm? { _rlmRealm }

    /// Whether the object was deleted, or its Realm invalidated; such an object cannot be used.
    public var isInvalidated: Bool {
        guard let realm = _rlmRealm else { return false }
        return realm.generation != _rlmGeneration || !realm.containsObject(self)
    }

    /// The schema of this object's class.
    public var objectSchema: ObjectSchema { _rlmClass.schema }

    /// Whether this object and `object` are the same object (for managed ones: same Realm file,
    /// class and key).
    public func isSameObject(as object: ObjectBase?) -> Bool {
        guard let object else { return false }
        if self === object { return true }
        guard let a = _rlmRealm, let b = object._rlmRealm else { return false }
        return a.store === b.store && _rlmKey == object._rlmKey && _rlmClass === object._rlmClass
    }

    /// Reads or writes a property by name (the dynamic form; traps on an unknown name — use
    /// ``value(forProperty:)`` and ``setValue(_:forProperty:)`` for names from input).
    public subscript(key: String) -> Any? {
        get {
            do { return try value(forProperty: key) } catch { fatalError("\(error)") }
        }
        set {
            do { try setValue(newValue, forProperty: key) } catch { fatalError("\(error)") }
        }
    }

    /// The value of the property named `name`.
    /// - Throws: ``Realm/Error`` with code `.invalidProperty` when the class has no such property.
    public func value(forProperty name: String) throws -> Any? {
        guard let i = _rlmClass.indexByName[name] else { throw Realm.Error.unknownProperty(name, _rlmClass.className) }
        return unwrapOptional(propertyValue(i))
    }

    /// Sets the property named `name` (managed objects: inside a write transaction).
    /// - Throws: ``Realm/Error`` for an unknown property or a value of the wrong type.
    public func setValue(_ value: Any?, forProperty name: String) throws {
        guard let i = _rlmClass.indexByName[name] else { throw Realm.Error.unknownProperty(name, _rlmClass.className) }
        let p = _rlmClass.properties[i]
        let converted = try ValueCoercion.coerce(value, to: p, realm: _rlmRealm)
        if let realm = _rlmRealm {
            realm.checkWritable(self, i)
            try realm.setAnyValue(self, i, converted)
        } else {
            _rlmSetUnmanaged(i, converted)
        }
    }

    /// The value of property `index` as `Any` (an optional property gives an `Optional` inside).
    func propertyValue(_ index: Int) -> Any {
        let p = _rlmClass.properties[index]
        if _rlmRealm != nil { return p.valueType._rlmGetAny(self, index) }
        if let v = _rlmHeldValue(index) { return v }
        let values = _rlmClass.unmanagedValues(of: self)
        return (index < values.count ? values[index] : nil) ?? p.valueType._rlmDefaultValue()
    }

    /// Encodes the persisted properties by name (ObjectBase+Encodable.swift); override to encode
    /// differently.
    open func encode(to encoder: any Encoder) throws { try encodePersistedProperties(to: encoder) }

    open var description: String {
        if _rlmRealm != nil && isInvalidated { return "[invalid object]" }
        var s = "\(_rlmClass.className) {\n"
        for (i, p) in _rlmClass.properties.enumerated() where p.isStored {
            s += "\t\(p.name) = \(Self.describe(propertyValue(i)));\n"
        }
        return s + "}"
    }

    static func describe(_ v: Any) -> String {
        let u = unwrapOptional(v)
        guard let u else { return "nil" }
        if let o = u as? ObjectBase { return "\(o._rlmClass.className)(\(o._rlmRealm == nil ? "unmanaged" : "\(o._rlmKey)"))" }
        if let s = u as? String { return "\"\(s)\"" }
        return "\(u)"
    }
}

/// Unwraps any level of `Optional` hidden in an `Any`.
func unwrapOptional(_ v: Any) -> Any? {
    let m = Mirror(reflecting: v)
    guard m.displayStyle == .optional else { return v }
    guard let first = m.children.first else { return nil }
    return unwrapOptional(first.value)
}

extension _Persistable {
    static func _rlmGetAny(_ object: ObjectBase, _ index: Int) -> Any { _rlmGet(object, index) }
}

extension ObjectBase: Hashable {
    /// Managed objects are equal when they are the same object; unmanaged ones only to themselves.
    public static func == (a: ObjectBase, b: ObjectBase) -> Bool { a.isSameObject(as: b) }
    public func hash(into h: inout Hasher) {
        if _rlmRealm != nil {
            h.combine(_rlmKey)
            h.combine(ObjectIdentifier(_rlmClass))
        } else {
            h.combine(ObjectIdentifier(self))
        }
    }
}

/// The base class of model classes stored in their own table.
///
/// ```swift
/// final class Dog: Object {
///     @Persisted(primaryKey: true) var id = 0
///     @Persisted var name = ""
/// }
/// let realm = try Realm()
/// try realm.write { realm.add(Dog(value: ["id": 1, "name": "Rex"])) }
/// ```
open class Object: ObjectBase, RealmCollectionValue, _Persistable {
    /// Creates an unmanaged object.
    public required init() {}

    /// Creates an unmanaged object from a dictionary of property values, an array of them in
    /// declaration order, or another object.
    public convenience init(value: Any) {
        self.init()
        do { try ValueCoercion.assign(value, to: self) } catch { fatalError("\(error)") }
    }

    /// The class name: the name of its table in the file.
    open class func className() -> String { ClassInfo.name(of: self) }

    @inlinable public static func _rlmCast(_ object: consuming ObjectBase) -> Self { _rlmDowncast(object) }
    public static var _rlmInfo: _RLMTypeInfo { .init(.object, optional: false, objectType: self) }
    public static func _rlmDefaultValue() -> Self {
        fatalError("A to-one link must be optional: declare it as `\(Self.self)?`.")
    }
    public static func _rlmDecode(_ raw: _RLMRaw, _ realm: Realm?) -> Self {
        guard case .link(let key) = raw.value, let realm else {
            fatalError("A link to \(Self.self) could not be read (null or unmanaged).")
        }
        return realm.makeObject(self, key)
    }
    public func _rlmEncode(_ realm: Realm?) throws -> _RLMRaw {
        guard let realm else { throw Realm.Error(.fail, "links can only be stored in a Realm") }
        return _RLMRaw(.link(try realm.linkKey(for: self)))
    }
}

/// The base class of model classes whose objects live inside one parent object: they have no
/// primary key, are created by assigning them to a parent's property, and are deleted with it.
open class EmbeddedObject: ObjectBase, RealmCollectionValue, _Persistable {
    /// Creates an unmanaged embedded object.
    public required init() {}

    /// Creates an unmanaged embedded object from a dictionary, array or object.
    public convenience init(value: Any) {
        self.init()
        do { try ValueCoercion.assign(value, to: self) } catch { fatalError("\(error)") }
    }

    @inlinable public static func _rlmCast(_ object: consuming ObjectBase) -> Self { _rlmDowncast(object) }
    public static var _rlmInfo: _RLMTypeInfo { .init(.object, optional: false, objectType: self) }
    public static func _rlmDefaultValue() -> Self {
        fatalError("An embedded object property must be optional: declare it as `\(Self.self)?`.")
    }
    public static func _rlmDecode(_ raw: _RLMRaw, _ realm: Realm?) -> Self {
        guard case .link(let key) = raw.value, let realm else {
            fatalError("An embedded \(Self.self) could not be read (null or unmanaged).")
        }
        return realm.makeObject(self, key)
    }
    public func _rlmEncode(_ realm: Realm?) throws -> _RLMRaw {
        guard let realm else { throw Realm.Error(.fail, "embedded objects can only be stored in a Realm") }
        return _RLMRaw(.link(try realm.linkKey(for: self)))
    }
}

/// Collects the property indexes accessors report (key path → property name).
@usableFromInline
package final class IndexRecorder {
    /// (class, property index) in the order the accessors ran.
    var steps: [(ClassInfo, Int)] = []
}
