import Foundation
import RealmStorage

/// The common base of ``Object`` and ``EmbeddedObject``: the state that makes an object managed.
///
/// Objects are thread-confined once managed by a live Realm: use them on the thread (or actor) that
/// opened the Realm, or pass them on with ``ThreadSafeReference`` or ``freeze()``. Unmanaged objects
/// are ordinary Swift objects.
open class ObjectBase: CustomStringConvertible {
    // MARK: The accessor's state
    //
    // A managed accessor is bound once, for good, to one object (`_rlmBinding`): its Realm, its
    // key in its class's table and the Realm's ``Realm/invalidate()`` generation at the time.
    // Besides that the binding keeps one read path, a cache of where the object was last found:
    // the view of its row group (which owns the table reader of one version and the segments it
    // read) and its row there, plus a stamp, the Realm's stamp when that path was set while the
    // Realm read that view's version outside a write transaction (-1 otherwise).
    //
    // What invalidates what, and when:
    // - The read path is used directly (``_rlmReadDirect(_:_:)``) only while its stamp is the
    //   Realm's ``Realm/stamp``. Every version change (refresh, a commit, the start of a write),
    //   every write inside a transaction and every `invalidate()` moves the stamp, so a direct read
    //   never sees a version other than the one the path was found in.
    // - Otherwise the general path (``Realm/readValue(_:_:)``) reuses the view's row while the view
    //   is of the version the Realm reads, else finds the object again by key and replaces the
    //   path (the object then reads directly again).
    // - `invalidate()` bumps the Realm's generation: an accessor bound before it no longer matches
    //   and every read stops with a message, as in RealmSwift. A deleted object is found missing by
    //   key on the general path.
    // A frozen Realm's stamp is never a path's (its objects take the general path, which reads
    // only the frozen snapshot, safe from many threads).
    //
    // An unmanaged object keeps its values in `_rlmUnmanaged`, emptied when it is added.

    /// A managed accessor's state: one value, read with one access on the read path (see above).
    struct Binding {
        let realm: Realm
        let key: ObjectKey
        let generation: Int
        /// The view of the row group the object was last found in (nil: not yet), and its row.
        var view: GroupView?
        var row: Int32
        /// The Realm's stamp while `view` may be read directly (-1: never).
        var stamp: Int
    }

    /// An unmanaged object's values, set through its accessors, its initializers or the dynamic
    /// API. A value is kept in `stored`, in its stored form, when that decodes back to it exactly
    /// (numbers, strings, ...: no boxing into `Any`), else in `values` — and then in `stored` too
    /// when it has a stored form (dates), for `add`. A class, made on an object's first set, so a
    /// managed accessor carries none of it.
    ///
    /// Every access to its properties (and to `_rlmUnmanaged`) is instantaneous — an array is
    /// copied out, changed and put back, never changed in place through the property — and none is
    /// visible outside this module, so the optimizer needs no dynamic exclusivity check for them
    /// (one access that spans a call would bring the checks back to every access).
    final class UnmanagedState {
        var values: [Any?] = []
        var stored: [StorageValue?] = []
        /// Bit i: property i (< 64) was set.
        var setMask: UInt64 = 0
        /// Bit i: property i (< 64) has its stored form in `stored`.
        var storedMask: UInt64 = 0
        /// When set, accessors report which property they read (key path → name).
        var recorder: IndexRecorder?

        /// Gives the state slots for every property of `info` (and values, with `values`).
        func prepare(_ info: ClassInfo, values withValues: Bool) {
            if withValues && values.isEmpty { values = [Any?](repeating: nil, count: info.properties.count) }
            if stored.isEmpty { stored = info.emptySlots() }
        }

        /// Keeps `value` as property `index`'s stored form (nil: none), the slots prepared.
        func setStored(_ index: Int, _ value: StorageValue?) {
            var slots = stored
            stored = []
            slots[index] = value
            stored = slots
        }

        /// Keeps `value` as property `index`'s value (nil: none), the values prepared.
        func setValue(_ index: Int, _ value: Any?) {
            var slots = values
            values = []
            slots[index] = value
            values = slots
        }

        /// Notes that property `index` was set, with its stored form (`hasStored`) or not.
        func mark(_ index: Int, hasStored: Bool) {
            guard index < 64 else { return }
            let bit: UInt64 = 1 << UInt64(index)
            setMask |= bit
            if hasStored { storedMask |= bit } else { storedMask &= ~bit }
        }
    }

    /// The managed state (nil while unmanaged).
    final var _rlmBinding: Binding?
    /// The unmanaged state (nil until a value is set).
    final var _rlmUnmanaged: UnmanagedState?
    /// The description of the object's class, once asked for.
    private final var _rlmClassStorage: ClassInfo?

    /// The unmanaged state, made on first use.
    final var _rlmUnmanagedState: UnmanagedState {
        if let u = _rlmUnmanaged { return u }
        let u = UnmanagedState()
        _rlmUnmanaged = u
        return u
    }

    /// The Realm managing this object (nil while unmanaged).
    @usableFromInline package final var _rlmRealm: Realm? { _rlmBinding?.realm }
    /// Whether the object is managed (reads no reference).
    @usableFromInline final var _rlmIsManaged: Bool { _rlmBinding != nil }
    /// The object's key in its table, when managed.
    package final var _rlmKey: ObjectKey { _rlmBinding?.key ?? ObjectKey(-1) }
    /// The Realm's ``Realm/invalidate()`` generation when this object was bound to it.
    final var _rlmGeneration: Int { _rlmBinding?.generation ?? 0 }
    final var _rlmValues: [Any?] { _rlmUnmanaged?.values ?? [] }
    final var _rlmStored: [StorageValue?] { _rlmUnmanaged?.stored ?? [] }
    final var _rlmSetMask: UInt64 { _rlmUnmanaged?.setMask ?? 0 }
    final var _rlmStoredMask: UInt64 { _rlmUnmanaged?.storedMask ?? 0 }
    @usableFromInline package final var _rlmRecorder: IndexRecorder? {
        get { _rlmUnmanaged?.recorder }
        set { _rlmUnmanagedState.recorder = newValue }
    }

    /// Creates an unmanaged object.
    public required init() {}

    var _rlmClass: ClassInfo {
        if let i = _rlmClassStorage { return i }
        let i = ClassInfo.of(type(of: self))
        _rlmClassStorage = i
        return i
    }

    /// The index of the property whose wrapper `keyPath` names (see ``PropertyKeyPaths``);
    /// `marking` marks that wrapper on a prototype of the class.
    @usableFromInline final func _rlmIndex(of keyPath: AnyKeyPath, marking: (ObjectBase) -> ObjectBase?) -> Int {
        PropertyKeyPaths.index(of: keyPath, in: self, marking: marking)
    }

    /// Binds this accessor, for good, to the object `key` of `realm` (a new accessor, or an
    /// unmanaged object being added).
    final func _rlmBind(_ realm: Realm, _ key: ObjectKey, _ info: ClassInfo) {
        _rlmBinding = Binding(realm: realm, key: key, generation: realm.generation, view: nil, row: -1, stamp: -1)
        if _rlmClassStorage !== info { _rlmClassStorage = info }
        // A new accessor (the commonest case) holds nothing to release.
        if let u = _rlmUnmanaged {
            _rlmUnmanaged = nil
            var stored = u.stored
            u.stored = []
            // Emptied in place (this object was their only holder), then handed on for reuse.
            for i in stored.indices { stored[i] = nil }
            info.recycle(stored)
        }
    }

    /// Binds a new accessor (made by `init()` just now: it holds no values) to the object `key`
    /// of `realm` (whose `invalidate()` generation is `generation`), found at `row` of `view` (see
    /// ``_rlmPlace(_:row:stamp:)``).
    @inline(__always)
    final func _rlmBindNew(
        _ realm: Realm, _ key: ObjectKey, _ info: ClassInfo, generation: Int, view: GroupView, row: Int32, stamp: Int
    ) {
        _rlmBinding = Binding(realm: realm, key: key, generation: generation, view: view, row: row, stamp: stamp)
        // A model class's description is not kept: `_rlmClass` finds it (one probe) when asked.
        // A dynamic object's comes from the file, not from its class.
        if info.isDynamic { _rlmClassStorage = info }
    }

    func _rlmBindClass(_ info: ClassInfo) { _rlmClassStorage = info }

    /// Sets the read path: the object sits at `row` of `view`; `stamp` is the Realm's stamp when
    /// it reads the view's version outside a write transaction (``Realm/directReadStamp(_:)``),
    /// else -1.
    @inline(__always)
    final func _rlmPlace(_ view: GroupView, row: Int32, stamp: Int) {
        guard _rlmBinding != nil else { return }
        if _rlmBinding!.view !== view { _rlmBinding!.view = view }
        _rlmBinding!.row = row
        _rlmBinding!.stamp = stamp
    }

    /// Reads property `index` with `read` (the view, the index, the row) from the object's row-group
    /// view when the read path is valid (see the state's description above); nil sends the read
    /// through ``Realm/readValue(_:_:)``, which checks and resolves the rest (and stops with its
    /// message for an invalidated or deleted object).
    @inline(__always)
    final func _rlmReadDirect<T>(_ index: Int, _ read: (GroupView, Int, Int) -> T?) -> T? {
        // Only the binding's view is taken (one retain), by single-field reads: every access to
        // `_rlmBinding` is instantaneous, so the optimizer needs no dynamic exclusivity check for
        // it (keep it so: an access that spans a call, such as a mutating method, would bring the
        // checks back to every access). The stamp and thread are read from the view's Realm state.
        guard let view = _rlmBinding?.view, _rlmBinding?.stamp == view.readState.stamp.load(ordering: .relaxed) else { return nil }
        let thread = view.readState.confinedThread
        if thread == 0 || thread != currentThreadIdentity() { _rlmBinding?.realm.checkThread() }
        return read(view, index, Int(_rlmBinding?.row ?? -1))
    }

    /// Keeps `value` of an unmanaged object's property `index` (with its stored form, when known).
    @usableFromInline final func _rlmSetUnmanaged(_ index: Int, _ value: Any, stored: _RLMRaw? = nil) {
        let u = _rlmUnmanagedState
        u.prepare(_rlmClass, values: true)
        u.setValue(index, value)
        u.setStored(index, stored?.value)
        u.mark(index, hasStored: stored != nil)
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
    @usableFromInline final func _rlmSetStored(_ index: Int, _ stored: _RLMRaw) {
        // Not folded into one call with `_rlmSetUnmanaged`: passing the value as `Any?` through it
        // cost every unmanaged set ~170 instructions (callgrind, W1's adds).
        let u = _rlmUnmanagedState
        u.prepare(_rlmClass, values: false)
        u.setStored(index, stored.value)
        if index < u.values.count { u.setValue(index, nil) }
        u.mark(index, hasStored: true)
    }

    /// The stored form an unmanaged object holds for property `index`, if any.
    @usableFromInline final func _rlmStoredValue(_ index: Int) -> StorageValue? {
        guard let u = _rlmUnmanaged, index < u.stored.count else { return nil }
        return u.stored[index]
    }

    /// The value an unmanaged object holds for property `index` as a `Value`, if any.
    @usableFromInline
    final func _rlmUnmanagedValue<Value: _Persistable>(_ index: Int, as _: Value.Type) -> Value? {
        guard let u = _rlmUnmanaged else { return nil }
        if index < u.values.count, let v = u.values[index] { return v as? Value }
        if index < u.stored.count, let s = u.stored[index] { return Value._rlmFromStored(_RLMRaw(s)) }
        return nil
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
    /// class and key, and both live or both frozen at the same version).
    public func isSameObject(as object: ObjectBase?) -> Bool {
        guard let object else { return false }
        if self === object { return true }
        guard let a = _rlmRealm, let b = object._rlmRealm else { return false }
        guard a.store === b.store, _rlmKey == object._rlmKey, _rlmClass === object._rlmClass else { return false }
        // As RealmSwift (which compares the Realm instances it caches per thread and per frozen
        // version): a frozen object is the same only as one frozen at the same version.
        guard a.isFrozen == b.isFrozen else { return false }
        return !a.isFrozen || a.snapshot?.version == b.snapshot?.version
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
