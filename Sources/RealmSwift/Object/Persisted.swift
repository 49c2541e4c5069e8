import RealmStorage

/// Declares a persisted property of an ``Object`` or ``EmbeddedObject``.
///
/// ```swift
/// final class Dog: Object {
///     @Persisted(primaryKey: true) var id = 0
///     @Persisted var name = ""
///     @Persisted var owner: Person?
///     @Persisted var toys: List<Toy>
/// }
/// ```
///
/// Unmanaged objects keep their values in memory; once added to a Realm, reads and writes go to the
/// file. The wrapper reaches its object through Swift's enclosing-instance subscript (there is no
/// Objective-C runtime on Linux), so it works only as a property of a class derived from
/// `ObjectBase`.
///
/// An accessor finds its property by the key path of the wrapper's storage (`\Dog._name`), which
/// Swift passes to the subscript: a wrapper copied from another property (`_b = _a`) still reads
/// and writes its own column.
@propertyWrapper
public struct Persisted<Value: _Persistable> {
    @usableFromInline var initial: Value?
    @usableFromInline var flags: UInt8 = 0
    /// Set only on a private prototype of the class while a storage key path's property is looked
    /// up with `Mirror` (see ``PropertyKeyPaths``).
    @usableFromInline var marker = false

    @usableFromInline static var primaryKeyFlag: UInt8 { 1 }
    @usableFromInline static var indexedFlag: UInt8 { 2 }

    /// A property with the type's default value (`0`, `""`, `nil`, an empty collection, a new `ObjectId`).
    @inlinable public init() {}

    /// A property with an initial value.
    @inlinable public init(wrappedValue: Value) {
        initial = wrappedValue
    }

    @available(*, unavailable, message: "@Persisted can only be used as a property of a Realm object")
    /// Unavailable: the value is read and written through the enclosing object.
    public var wrappedValue: Value {
        get { fatalError("@Persisted can only be used as a property of a Realm object") }
        // swift-format-ignore
        set { fatalError("@Persisted can only be used as a property of a Realm object") }
    }

    @inlinable @inline(__always)
    /// Reads and writes the property of `object` (managed: in its Realm; unmanaged: in memory).
    public static subscript<EnclosingSelf: ObjectBase>(
        _enclosingInstance object: EnclosingSelf,
        wrapped wrappedKeyPath: ReferenceWritableKeyPath<EnclosingSelf, Value>,
        storage storageKeyPath: ReferenceWritableKeyPath<EnclosingSelf, Persisted<Value>>
    ) -> Value {
        get {
            let i = resolvedIndex(object, storageKeyPath)
            if object._rlmIsManaged { return Value._rlmGet(object, i) }
            if let recorder = object._rlmRecorder { return recorded(object, recorder, i) }
            if let v = object._rlmUnmanagedValue(i, as: Value.self) { return v }
            if let v = object[keyPath: storageKeyPath].initial { return v }
            let d = Value._rlmDefaultValue()
            object._rlmSetUnmanaged(i, d)
            return d
        }
        set {
            let i = resolvedIndex(object, storageKeyPath)
            if let realm = object._rlmRealm {
                realm.checkWritable(object, i)
                Value._rlmSet(object, i, newValue)
            } else if let stored = Value._rlmExactStoredForm(newValue) {
                object._rlmSetStored(i, stored)
            } else {
                object._rlmSetUnmanaged(i, newValue, stored: Value._rlmStoredForm(newValue))
            }
        }
    }

    /// The index of the property whose storage `storage` names, in the class of `object`.
    ///
    /// Looked up by the key path's identity (one probe, see ``PropertyKeyPaths``); a key path
    /// never seen is resolved once by marking its wrapper on a private prototype of the class and
    /// finding the marked one with `Mirror`. The user's object is never written.
    @inlinable @inline(__always)
    static func resolvedIndex<E: ObjectBase>(_ object: E, _ storage: ReferenceWritableKeyPath<E, Persisted<Value>>) -> Int {
        object._rlmIndex(of: storage) { prototype in
            guard let marked = prototype as? E else { return nil }
            marked[keyPath: storage].marker = true
            return marked
        }
    }

    /// Notes property `i` for a key-path recording; a link returns a recording prototype of its
    /// target so nested paths (`\Person.dog?.name`) keep recording.
    @usableFromInline
    static func recorded(_ object: ObjectBase, _ recorder: IndexRecorder, _ i: Int) -> Value {
        recorder.steps.append((object._rlmClass, i))
        let info = Value._rlmInfo
        if info.kind == .single, let target = info.objectType {
            let proto = target.init()
            proto._rlmRecorder = recorder
            if let v = (proto as Any) as? Value { return v }
        }
        let value = Value._rlmDefaultValue()
        if info.kind == .list || info.kind == .set, let target = info.objectType,
            let collection = value as? any RecordingPrototypeHolder
        {
            // One recording element, so that a path mapped through the elements
            // (`\Person.dogs.projectTo.name`) records the element's property too.
            let proto = target.init()
            proto._rlmRecorder = recorder
            collection.holdRecordingPrototype(proto)
        }
        return value
    }
}

extension Persisted where Value: _RealmValue {
    /// A primary-key property (`Int`, `String`, `ObjectId`, `UUID` or optionals of them).
    @inlinable public init(primaryKey: Bool) {
        self.init()
        flags = primaryKey ? Self.primaryKeyFlag : 0
    }
    /// A primary-key property with an initial value.
    @inlinable public init(wrappedValue: Value, primaryKey: Bool) {
        self.init(wrappedValue: wrappedValue)
        flags = primaryKey ? Self.primaryKeyFlag : 0
    }
    /// An indexed property: `==` and `IN` queries use a persisted index.
    @inlinable public init(indexed: Bool) {
        self.init()
        flags = indexed ? Self.indexedFlag : 0
    }
    /// An indexed property with an initial value.
    @inlinable public init(wrappedValue: Value, indexed: Bool) {
        self.init(wrappedValue: wrappedValue)
        flags = indexed ? Self.indexedFlag : 0
    }
}

extension Persisted {
    /// The objects of `Origin` whose `originProperty` links to this object.
    public init<Origin: ObjectBase>(originProperty: String) where Value == LinkingObjects<Origin> {
        // The initial value (what an unmanaged object reads) carries the property's name.
        self.init(wrappedValue: LinkingObjects(fromType: Origin.self, property: originProperty))
    }
}

/// What schema discovery reads from each wrapper through `Mirror`.
protocol PersistedProperty {
    var flags: UInt8 { get }
    var marker: Bool { get }
    var origin: String? { get }
    var initialAny: Any? { get }
    var valueType: any _Persistable.Type { get }
}

extension Persisted: PersistedProperty {
    /// The linking property's name, for linking objects only: other values are not cast (a failed
    /// cast to a protocol searches every conformance record of the process, once per type, which a
    /// fresh process's first open paid once per property type).
    var origin: String? {
        guard Value._rlmInfo.kind == .linkingObjects else { return nil }
        return (initial as? any LinkingObjectsOrigin)?.propertyName
    }
    var initialAny: Any? { initial.map { $0 as Any } }
    var valueType: any _Persistable.Type { Value.self }
}

/// What `@Persisted(originProperty:)` keeps: the linking property's name, in its initial value.
protocol LinkingObjectsOrigin {
    var propertyName: String { get }
}

extension LinkingObjects: LinkingObjectsOrigin {}
