import RealmStorage
import Synchronization

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
/// An accessor finds its property by where the wrapper was made: let the declaration make it (or
/// make it by hand where you assign it, `_name = Persisted(wrappedValue: "")`). A wrapper copied
/// from another property, or made for two properties of the same type by one shared helper
/// function, is taken for the property it was first made for.
@propertyWrapper
public struct Persisted<Value: _Persistable> {
    @usableFromInline var initial: Value?
    @usableFromInline var flags: UInt8 = 0
    /// Set only while the property's index is looked up with `Mirror` (see ``resolvedIndex``).
    @usableFromInline var marker = false
    /// The property's index in its class once an accessor has looked it up (-1: not yet).
    @usableFromInline var index: Int32 = -1
    /// Where the property is declared (the compiler fills in the initializers' `_file`, `_line`
    /// and `_column` there): how an accessor finds its property without a key path.
    @usableFromInline let site: PersistedSite

    @usableFromInline static var primaryKeyFlag: UInt8 { 1 }
    @usableFromInline static var indexedFlag: UInt8 { 2 }

    /// A property with the type's default value (`0`, `""`, `nil`, an empty collection, a new `ObjectId`).
    ///
    /// `_file`, `_line` and `_column` name the declaration; leave them to the compiler.
    @inlinable public init(_file: StaticString = #fileID, _line: UInt32 = #line, _column: UInt32 = #column) {
        site = PersistedSite(_file, _line, _column)
    }

    /// A property with an initial value.
    @inlinable public init(
        wrappedValue: Value, _file: StaticString = #fileID, _line: UInt32 = #line, _column: UInt32 = #column
    ) {
        initial = wrappedValue
        site = PersistedSite(_file, _line, _column)
    }

    @available(*, unavailable, message: "@Persisted can only be used as a property of a Realm object")
    public var wrappedValue: Value {
        get { fatalError("@Persisted can only be used as a property of a Realm object") }
        // swift-format-ignore
        set { fatalError("@Persisted can only be used as a property of a Realm object") }
    }

    @inlinable @inline(__always)
    public static subscript<EnclosingSelf: ObjectBase>(
        _enclosingInstance object: EnclosingSelf,
        wrapped wrappedKeyPath: ReferenceWritableKeyPath<EnclosingSelf, Value>,
        storage storageKeyPath: ReferenceWritableKeyPath<EnclosingSelf, Persisted<Value>>
    ) -> Value {
        get {
            let i = resolvedIndex(object, storageKeyPath)
            if object._rlmRealm != nil { return Value._rlmGet(object, i) }
            if let recorder = object._rlmRecorder { return recorded(object, recorder, i) }
            if i < object._rlmValues.count, let v = object._rlmValues[i] { return v as! Value }
            if let s = object._rlmStoredValue(i) { return Value._rlmFromStored(_RLMRaw(s)) }
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

    /// The index of the property `storage` names, kept in the wrapper after the first lookup.
    ///
    /// Reads and writes only the wrapper's own fields through `storage`, which the optimizer turns
    /// into plain loads and stores once this is inlined into an accessor: the key path is then
    /// never made (making one and looking it up cost a property read ~200 instructions). The
    /// first lookup finds the declaration's place in the class's table (a property of another
    /// value type there does not count); a place the table does not know (or shares between two
    /// properties) is resolved by marking the wrapper, under a lock, and finding the marked one
    /// with `Mirror`. A frozen object's wrappers keep nothing (other threads may read it).
    @inlinable @inline(__always)
    static func resolvedIndex<E: ObjectBase>(_ object: E, _ storage: ReferenceWritableKeyPath<E, Persisted<Value>>) -> Int {
        let known = object[keyPath: storage].index
        if known >= 0 { return Int(known) }
        var i = object._rlmIndex(declaredAt: object[keyPath: storage].site, type: ObjectIdentifier(Value.self))
        if i < 0 {
            i = _persistedMarkerLock.withLock { _ in
                object[keyPath: storage].marker = true
                let found = _persistedMarkedIndex(object)
                object[keyPath: storage].marker = false
                return found
            }
        }
        if _persistedKeepsIndex(object) { object[keyPath: storage].index = Int32(truncatingIfNeeded: i) }
        return i
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
        return Value._rlmDefaultValue()
    }
}

/// Serializes the marking of wrappers (a frozen object may be read by many threads at once).
@usableFromInline let _persistedMarkerLock = Mutex(())

/// Whether `object`'s wrappers may keep their index (not when frozen: it is shared across threads).
@usableFromInline func _persistedKeepsIndex(_ object: ObjectBase) -> Bool { !(object._rlmRealm?.isFrozen ?? false) }

/// The index of the one wrapper of `object` whose marker is set.
@usableFromInline func _persistedMarkedIndex(_ object: ObjectBase) -> Int {
    let info = object._rlmClass
    guard let i = info.markedIndex(in: object) else {
        fatalError("A @Persisted property of \(info.className) is not a stored property of the class.")
    }
    return i
}

/// Where a `@Persisted` property is declared: its file (the identity of its `#fileID` literal,
/// see `staticStringIdentity`; 0 in no declaration), line and column.
@usableFromInline struct PersistedSite: Equatable {
    let file: Int
    let line: UInt32
    let column: UInt32

    @usableFromInline init(_ file: StaticString, _ line: UInt32, _ column: UInt32) {
        self.init(file: staticStringIdentity(file), line: line, column: column)
    }

    init(file: Int, line: UInt32, column: UInt32) {
        self.file = file
        self.line = line
        self.column = column
    }
}

extension Persisted where Value: _RealmValue {
    /// A primary-key property (`Int`, `String`, `ObjectId`, `UUID` or optionals of them).
    @inlinable public init(primaryKey: Bool, _file: StaticString = #fileID, _line: UInt32 = #line, _column: UInt32 = #column) {
        self.init(_file: _file, _line: _line, _column: _column)
        flags = primaryKey ? Self.primaryKeyFlag : 0
    }
    /// A primary-key property with an initial value.
    @inlinable public init(
        wrappedValue: Value, primaryKey: Bool, _file: StaticString = #fileID, _line: UInt32 = #line, _column: UInt32 = #column
    ) {
        self.init(wrappedValue: wrappedValue, _file: _file, _line: _line, _column: _column)
        flags = primaryKey ? Self.primaryKeyFlag : 0
    }
    /// An indexed property: `==` and `IN` queries use a persisted index.
    @inlinable public init(indexed: Bool, _file: StaticString = #fileID, _line: UInt32 = #line, _column: UInt32 = #column) {
        self.init(_file: _file, _line: _line, _column: _column)
        flags = indexed ? Self.indexedFlag : 0
    }
    /// An indexed property with an initial value.
    @inlinable public init(
        wrappedValue: Value, indexed: Bool, _file: StaticString = #fileID, _line: UInt32 = #line, _column: UInt32 = #column
    ) {
        self.init(wrappedValue: wrappedValue, _file: _file, _line: _line, _column: _column)
        flags = indexed ? Self.indexedFlag : 0
    }
}

extension Persisted {
    /// The objects of `Origin` whose `originProperty` links to this object.
    public init<Origin: ObjectBase>(
        originProperty: String, _file: StaticString = #fileID, _line: UInt32 = #line, _column: UInt32 = #column
    ) where Value == LinkingObjects<Origin> {
        // The initial value (what an unmanaged object reads) carries the property's name.
        self.init(
            wrappedValue: LinkingObjects(fromType: Origin.self, property: originProperty), _file: _file, _line: _line, _column: _column)
    }
}

/// What schema discovery reads from each wrapper through `Mirror`.
protocol PersistedProperty {
    var flags: UInt8 { get }
    var marker: Bool { get }
    var origin: String? { get }
    var initialAny: Any? { get }
    var valueType: any _Persistable.Type { get }
    var site: PersistedSite { get }
}

extension Persisted: PersistedProperty {
    var origin: String? { (initial as? any LinkingObjectsOrigin)?.propertyName }
    var initialAny: Any? { initial.map { $0 as Any } }
    var valueType: any _Persistable.Type { Value.self }
}

/// What `@Persisted(originProperty:)` keeps: the linking property's name, in its initial value.
protocol LinkingObjectsOrigin {
    var propertyName: String { get }
}

extension LinkingObjects: LinkingObjectsOrigin {}
