import RealmQuery
import RealmStorage
import Synchronization

/// One persisted property of a model class, as discovered from its `@Persisted` wrapper.
struct PropertyInfo {
    let property: Property
    let valueType: any _Persistable.Type
    var name: String { property.name }
    /// Linking objects are computed, not stored.
    var isStored: Bool { property.type != .linkingObjects }
    /// The engine column this property is stored in.
    var column: ColumnSchema? {
        guard isStored else { return nil }
        let p = property
        return ColumnSchema(
            p.name, p.type.columnType, nullable: p.isOptional || p.type == .any || (p.type == .object && !p.isCollection), list: p.isArray,
            set: p.isSet, map: p.isMap, linkTarget: p.objectClassName, indexed: p.isIndexed && !p.isPrimaryKey)
    }
}

/// Everything the library knows about one model class: discovered once with `Mirror` and cached
/// for the life of the process.
///
/// `@unchecked Sendable`: every stored property is immutable after `init` except the spare slots,
/// which live in a `Locked`.
final class ClassInfo: @unchecked Sendable {
    let type: ObjectBase.Type
    let className: String
    let properties: [PropertyInfo]
    /// Whether each property is stored (not linking objects), for hot loops.
    let isStored: [Bool]
    /// Bit i set for each stored property i < 64 (``storedMaskCovers``: every property is < 64).
    let storedMask: UInt64
    var storedMaskCovers: Bool { properties.count <= 64 }
    let primaryKey: Int?
    let isEmbedded: Bool
    /// Whether this describes a table read from the file for the dynamic API (its objects are
    /// `DynamicObject`s), not a model class.
    let isDynamic: Bool
    let schema: ObjectSchema
    let indexByName: [String: Int]
    /// Empty stored-value slots of objects that were added, for new unmanaged objects: making and
    /// freeing an array of optional enums costs more than the values it holds (a generic metadata
    /// lookup, then a witness call per element), about a seventh of a bulk insert's time.
    private let spareSlots = Locked<[[StorageValue?]]>([])
    private static let spareSlotsKept = 32

    /// Slots for every property of an unmanaged object, all empty.
    func emptySlots() -> [StorageValue?] {
        spareSlots.withLock { $0.popLast() } ?? [StorageValue?](repeating: nil, count: properties.count)
    }

    /// Keeps an added object's slots, emptied, for ``emptySlots()``.
    func recycle(_ slots: [StorageValue?]) {
        guard slots.count == properties.count else { return }
        spareSlots.withLock { if $0.count < Self.spareSlotsKept { $0.append(slots) } }
    }

    private static let registry = Locked<[ObjectIdentifier: ClassInfo]>([:])
    /// The registry's entries, read without a lock: every new object asks for its class's once,
    /// and the registry's lock and hash cost more than the rest of its first property set.
    /// Entries are added under the registry's lock; classes are never unloaded.
    private static let byIdentity = IdentityTable<ClassInfo>(capacity: 512)

    /// The cached description of `type`, discovering it on first use.
    static func of(_ type: ObjectBase.Type) -> ClassInfo {
        let id = ObjectIdentifier(type)
        if let info = byIdentity.value(for: id) { return info }
        if let info = registry.withLock({ $0[id] }) { return info }
        let info = ClassInfo(type)
        return registry.withLock { r in
            if let existing = r[id] { return existing }
            r[id] = info
            byIdentity.insert(id, info)
            return info
        }
    }

    /// Every class discovered so far in this process.
    static var discovered: [ClassInfo] { registry.withLock { Array($0.values) } }

    /// The `LinkingObjects` properties of every discovered model class, for the query binder
    /// (`ANY owners.name == 'Ada'`; the file's catalog does not store them).
    static var linkingObjectsProperties: [LinkingObjectsProperty] {
        discovered.flatMap { info in
            info.properties.compactMap { p -> LinkingObjectsProperty? in
                guard p.property.type == .linkingObjects, let origin = p.property.objectClassName,
                    let column = p.property.linkOriginPropertyName
                else { return nil }
                return LinkingObjectsProperty(table: info.className, name: p.name, originTable: origin, originColumn: column)
            }
        }
    }

    private init(_ type: ObjectBase.Type) {
        self.type = type
        self.className = Self.name(of: type)
        self.isEmbedded = type is EmbeddedObject.Type
        self.isDynamic = false
        var props: [PropertyInfo] = []
        let prototype = type.init()
        let wrappers = Self.wrappers(of: prototype)
        for (label, wrapper) in wrappers {
            let name = String(label.dropFirst())
            let info = wrapper.valueType._rlmInfo
            let isPK = wrapper.flags & 1 != 0
            let property = Property(
                name: name, type: info.kind == .linkingObjects ? .linkingObjects : info.type, isIndexed: wrapper.flags & 2 != 0,
                isOptional: info.isOptional, isArray: info.kind == .list, isSet: info.kind == .set, isMap: info.kind == .map,
                isPrimaryKey: isPK, objectClassName: info.objectType.map(Self.name(of:)),
                linkOriginPropertyName: wrapper.origin)
            props.append(PropertyInfo(property: property, valueType: wrapper.valueType))
        }
        self.properties = props
        self.isStored = props.map(\.isStored)
        self.storedMask = Self.mask(props.map(\.isStored))
        self.primaryKey = props.firstIndex { $0.property.isPrimaryKey }
        self.schema = ObjectSchema(className: className, properties: props.map(\.property), isEmbedded: isEmbedded)
        var byName: [String: Int] = [:]
        for (i, p) in props.enumerated() { byName[p.name] = i }
        self.indexByName = byName
    }

    /// A description of a table read from the file, for the dynamic API.
    init(dynamic table: TableSchema) {
        self.type = DynamicObject.self
        self.className = table.name
        self.isEmbedded = false
        self.isDynamic = true
        let props = table.columns.map { c in
            let p = Property(
                name: c.name, type: SchemaSetup.propertyType(c.type), isIndexed: c.isIndexed,
                isOptional: c.isNullable && !(c.type == .link && !c.isList), isArray: c.isList && !c.isSet, isSet: c.isSet,
                isMap: c.isMap, isPrimaryKey: table.primaryKey == c.name,
                objectClassName: c.linkTarget)
            return PropertyInfo(property: p, valueType: DynamicValues.valueType(c))
        }
        self.properties = props
        self.isStored = props.map(\.isStored)
        self.storedMask = Self.mask(props.map(\.isStored))
        self.primaryKey = props.firstIndex { $0.property.isPrimaryKey }
        self.schema = ObjectSchema(className: table.name, properties: props.map(\.property), isEmbedded: false)
        var byName: [String: Int] = [:]
        for (i, p) in props.enumerated() { byName[p.name] = i }
        self.indexByName = byName
    }

    /// Problems that make this class unusable as a model, as messages naming the fix.
    var modelErrors: [String] {
        var out: [String] = []
        if properties.isEmpty { out.append("Class '\(className)' has no @Persisted properties.") }
        if properties.filter(\.property.isPrimaryKey).count > 1 { out.append("Class '\(className)' declares more than one primary key.") }
        if isEmbedded && primaryKey != nil { out.append("Embedded class '\(className)' cannot have a primary key.") }
        for p in properties.map(\.property) {
            if p.isPrimaryKey && (![.int, .string, .objectId, .UUID].contains(p.type) || p.isCollection) {
                out.append(
                    "Property '\(className).\(p.name)' of type \(p.type) cannot be a primary key (use Int, String, ObjectId or UUID).")
            }
            if p.isIndexed && !p.isPrimaryKey && (p.isCollection || [.float, .double, .data, .object].contains(p.type)) {
                out.append("Property '\(className).\(p.name)' of type \(p.type) cannot be indexed.")
            }
        }
        return out
    }

    /// A model class's name as `String(describing:)` gives it (the unqualified type name), without
    /// the protocol-conformance lookups `String(describing:)` makes first (a fresh process's
    /// first open spent a quarter of its time in them).
    static func name(of type: ObjectBase.Type) -> String { _typeName(type, qualified: false) }

    /// The `@Persisted` wrappers of `object`, base class first, with their `_name` labels.
    static func wrappers(of object: ObjectBase) -> [(String, any PersistedProperty)] {
        var levels: [[(String, any PersistedProperty)]] = []
        var mirror: Mirror? = Mirror(reflecting: object)
        // The library's own base classes declare no `@Persisted` property: their fields are not
        // looked at (each first cast of a type to a protocol that fails searches every conformance
        // record of the process).
        while let m = mirror, !Self.isLibraryBase(m.subjectType) {
            levels.append(
                m.children.compactMap { c in
                    guard let label = c.label, label.hasPrefix("_"), let w = c.value as? any PersistedProperty else { return nil }
                    return (label, w)
                })
            mirror = m.superclassMirror
        }
        return levels.reversed().flatMap { $0 }
    }

    /// Whether `type` is one of the library's base classes (`ObjectBase`, `Object`,
    /// `EmbeddedObject`), compared by identity.
    static func isLibraryBase(_ type: Any.Type) -> Bool {
        let id = ObjectIdentifier(type)
        return id == ObjectIdentifier(ObjectBase.self) || id == ObjectIdentifier(Object.self)
            || id == ObjectIdentifier(EmbeddedObject.self)
    }

    func makePrototype() -> ObjectBase { type.init() }

    static func mask(_ flags: [Bool]) -> UInt64 {
        var m: UInt64 = 0
        for (i, f) in flags.enumerated() where f && i < 64 { m |= 1 << UInt64(i) }
        return m
    }

    /// The current values of an unmanaged object: those set through accessors, else the wrappers'
    /// initial values (read with `Mirror` only when some property was never set).
    func unmanagedValues(of object: ObjectBase) -> [Any?] {
        // Every stored property set: nothing to look up.
        let allSet =
            storedMaskCovers
            ? storedMask & ~object._rlmSetMask == 0 : !isStored.indices.contains { isStored[$0] && !object._rlmHasValue($0) }
        if !allSet { fillInitialValues(of: object) }
        return properties.indices.map { object._rlmHeldValue($0) }
    }

    /// Gives each stored property of `object` that holds no value its wrapper's initial value (or
    /// its type's default).
    private func fillInitialValues(of object: ObjectBase) {
        let wrappers = object is DynamicObject ? [] : Self.wrappers(of: object)
        for i in properties.indices where isStored[i] && !object._rlmHasValue(i) {
            let initial = i < wrappers.count ? wrappers[i].1.initialAny : nil
            object._rlmSetUnmanaged(i, initial ?? properties[i].valueType._rlmDefaultValue())
        }
    }
}

/// Property indexes by the storage key paths of their `@Persisted` wrappers, for every model
/// class of the process.
///
/// A property declared in a class has the same index in that class and in every subclass
/// (``ClassInfo/wrappers(of:)`` lists base classes first), so a key path's index does not depend
/// on the class of the object it is used on.
enum PropertyKeyPaths {
    /// Indexes by the identity of the key path object: one probe, read without a lock.
    private static let byIdentity = IdentityTable<Int>(capacity: 1024)
    /// Indexes by key path, compared by value; also keeps every key path whose identity is in
    /// `byIdentity` alive, so that identity is never another key path's.
    private static let byValue = Locked<[KeptKeyPath: Int]>([:])

    /// A key path kept here (key paths are immutable once made).
    struct KeptKeyPath: Hashable, @unchecked Sendable {
        let path: AnyKeyPath
    }

    /// The index of the property whose `@Persisted` wrapper is stored at `keyPath` (the storage
    /// key path Swift passes to the wrapper's subscript) in `object`'s class.
    ///
    /// One probe of the identity table answers almost every call (Swift instantiates a key path
    /// literal once). A key path not in it is compared by value with the known ones; one never
    /// seen is resolved once: `marking` marks its wrapper on a new prototype of the object's class
    /// (nil: the prototype is not of the key path's root type) and `Mirror` finds the marked
    /// wrapper. The object itself is never written. A key path that names no wrapper stops with a
    /// message.
    @inline(__always)
    static func index(of keyPath: AnyKeyPath, in object: ObjectBase, marking: (ObjectBase) -> ObjectBase?) -> Int {
        if let i = byIdentity.value(for: ObjectIdentifier(keyPath)) { return i }
        return discover(keyPath, object._rlmClass, marking)
    }

    private static func discover(_ keyPath: AnyKeyPath, _ info: ClassInfo, _ marking: (ObjectBase) -> ObjectBase?) -> Int {
        let key = KeptKeyPath(path: keyPath)
        let index: Int
        if let i = byValue.withLock({ $0[key] }) {
            index = i
        } else {
            // A prototype of its own for each lookup: nothing shared is written.
            guard let marked = marking(info.makePrototype()),
                let i = ClassInfo.wrappers(of: marked).firstIndex(where: { $0.1.marker })
            else {
                fatalError("A @Persisted property of \(info.className) is not a stored property of the class (\(keyPath)).")
            }
            index = i
        }
        byValue.withLock { known in
            // Only the key path kept in `known` (the first of its value) enters the identity table.
            guard known[key] == nil else { return }
            known[key] = index
            byIdentity.insert(ObjectIdentifier(key.path), index)
        }
        return index
    }
}

/// A fixed table from object identities to values, read without a lock. Writers are serialized
/// by the caller; an entry is never changed or removed, so an identity must stay in use for good.
/// `@unchecked Sendable`: a slot's value is written before its key is published with release
/// ordering, and read only after an acquiring load of the key saw it (an `AtomicLazyReference`
/// would do for class values, but its load costs more than the lookups this table spares).
struct IdentityTable<Value>: @unchecked Sendable {
    private final class Slot {
        let key = Atomic<UInt>(0)
        var value: Value?
    }
    private let slots: [Slot]

    /// A table of `capacity` slots (a power of two).
    init(capacity: Int) {
        precondition(capacity > 0 && capacity & (capacity - 1) == 0)
        slots = (0..<capacity).map { _ in Slot() }
    }

    @inline(__always)
    func value(for id: ObjectIdentifier) -> Value? {
        let key = UInt(bitPattern: id)
        var i = Int((key >> 4) & UInt(slots.count - 1))
        for _ in 0..<8 {
            let k = slots[i].key.load(ordering: .acquiring)
            if k == key { return slots[i].value }
            if k == 0 { return nil }
            i = (i + 1) & (slots.count - 1)
        }
        return nil
    }

    /// Adds an entry when a free slot is near; otherwise the caller's own map keeps it.
    func insert(_ id: ObjectIdentifier, _ value: Value) {
        let key = UInt(bitPattern: id)
        var i = Int((key >> 4) & UInt(slots.count - 1))
        for _ in 0..<8 {
            let k = slots[i].key.load(ordering: .relaxed)
            if k == key { return }
            if k == 0 {
                slots[i].value = value
                slots[i].key.store(key, ordering: .releasing)
                return
            }
            i = (i + 1) & (slots.count - 1)
        }
    }
}
