import RealmStorage

/// The objects of `Element` that link to an object through one property: the inverse of a link
/// or list, computed (never stored).
///
/// ```swift
/// final class Person: Object {
///     @Persisted var dogs: List<Dog>
/// }
/// final class Dog: Object {
///     @Persisted(originProperty: "dogs") var owners: LinkingObjects<Person>
/// }
/// ```
///
/// Empty while the object is unmanaged; live and thread-confined once it is managed.
public struct LinkingObjects<Element: ObjectBase>: RandomAccessCollection, CustomStringConvertible {
    let parent: ObjectBase?
    /// The name of the class that links here.
    public let objectClassName: String
    /// The property of that class that links here.
    public let propertyName: String

    /// Linking objects of `fromType` through `property` (unmanaged: always empty).
    public init(fromType: Element.Type, property: String) {
        parent = nil
        objectClassName = ClassInfo.name(of: fromType)
        propertyName = property
    }

    init(parent: ObjectBase, property: String) {
        self.parent = parent
        self.objectClassName = ClassInfo.name(of: Element.self)
        self.propertyName = property
    }

    /// The Realm managing the parent object, or nil.
    public var realm: Realm? { parent?._rlmRealm }
    /// Whether the object linked to was deleted or its Realm invalidated.
    public var isInvalidated: Bool { parent?.isInvalidated ?? false }

    var keys: [ObjectKey] {
        guard let parent, let realm = parent._rlmRealm else { return [] }
        realm.checkThread()
        let origin = ClassInfo.of(Element.self)
        guard let i = origin.indexByName[propertyName] else {
            fatalError("Class '\(origin.className)' has no property '\(propertyName)' (named by LinkingObjects).")
        }
        let target = parent._rlmKey
        return realm.objectKeys(origin.className).filter { k in
            let o = realm.makeObject(Element.self, k, origin)
            switch realm.readValue(o, i) {
            case .link(let l): return l == target
            case .list(let items): return items.contains(.link(target))
            default: return false
            }
        }
    }

    public var startIndex: Int { 0 }
    public var endIndex: Int { keys.count }

    /// The linking object at `position`.
    public subscript(position: Int) -> Element {
        let k = keys
        precondition(position >= 0 && position < k.count, "Index \(position) is out of bounds (count \(k.count)).")
        return parent!._rlmRealm!.makeObject(Element.self, k[position])
    }

    public var description: String { "LinkingObjects<\(objectClassName)> <\(count)>" }
}

extension LinkingObjects: _Persistable {
    public static func _rlmStoredForm(_ value: LinkingObjects) -> _RLMRaw? { nil }
    public static var _rlmInfo: _RLMTypeInfo { .init(.linkingObjects, kind: .linkingObjects, objectType: Element.self) }
    public static func _rlmDefaultValue() -> LinkingObjects { LinkingObjects(fromType: Element.self, property: "") }
    public static func _rlmGet(_ object: ObjectBase, _ index: Int) -> LinkingObjects {
        LinkingObjects(parent: object, property: object._rlmClass.properties[index].property.linkOriginPropertyName ?? "")
    }
    public static func _rlmSet(_ object: ObjectBase, _ index: Int, _ value: LinkingObjects) {
        fatalError("LinkingObjects are computed and cannot be set.")
    }
    public static func _rlmEncodeUnmanaged(_ value: LinkingObjects, _ realm: Realm) throws -> _RLMRaw { _RLMRaw(.null) }
    public static func _rlmCoerce(_ value: Any, _ realm: Realm?) throws -> LinkingObjects {
        throw Realm.Error(.invalidValue, "LinkingObjects are computed and cannot be set")
    }
}
