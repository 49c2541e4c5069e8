/// Equality of Realm collections follows RealmSwift: managed collections are equal when they are
/// the same collection (the same property of the same object, read through the same `Realm`);
/// unmanaged lists and sets are equal when their elements are. ``Results`` are equal only to
/// copies of themselves (Results.swift).
extension ObjectBase {
    /// Whether both are the same object read through the same `Realm` instance (RealmSwift compares
    /// the Realm its accessors belong to).
    func isSameObjectInSameRealm(as other: ObjectBase) -> Bool {
        _rlmRealm != nil && _rlmRealm === other._rlmRealm && isSameObject(as: other)
    }
}

extension ManagedProperty {
    /// Whether both name the same property of the same object in the same `Realm` instance.
    func isSame(as other: ManagedProperty) -> Bool { index == other.index && parent.isSameObjectInSameRealm(as: other.parent) }
}

extension List: Equatable {
    /// Whether both are the same managed list, or both unmanaged with equal elements.
    public static func == (lhs: List, rhs: List) -> Bool {
        if lhs === rhs { return true }
        switch (lhs.property, rhs.property) {
        case (let l?, let r?): return l.isSame(as: r)
        case (nil, nil): return lhs.storage == rhs.storage
        default: return false
        }
    }
}

extension MutableSet: Equatable {
    /// Whether both are the same managed set, or both unmanaged with the same elements.
    public static func == (lhs: MutableSet, rhs: MutableSet) -> Bool {
        if lhs === rhs { return true }
        switch (lhs.property, rhs.property) {
        case (let l?, let r?): return l.isSame(as: r)
        case (nil, nil): return Set(lhs.storage) == Set(rhs.storage)
        default: return false
        }
    }
}

extension LinkingObjects: Equatable {
    /// Whether both are the objects linking to the same object through the same property.
    public static func == (lhs: LinkingObjects, rhs: LinkingObjects) -> Bool {
        guard lhs.objectClassName == rhs.objectClassName, lhs.propertyName == rhs.propertyName else { return false }
        switch (lhs.parent, rhs.parent) {
        case (let l?, let r?): return l === r || l.isSameObjectInSameRealm(as: r)
        case (nil, nil): return true
        default: return false
        }
    }
}
