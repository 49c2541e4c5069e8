import Foundation

// Frozen collections read the version they were frozen at, forever, from any thread; they pin
// that version (see `Realm.numberOfActiveVersions`) until the last frozen value reading it is gone.

extension Results {
    /// Whether these results read one fixed version (immutable, usable from any thread).
    public var isFrozen: Bool { values?.isFrozen ?? base.realm.isFrozen }

    /// A frozen copy: the same query, read at the current version forever. Cannot be called in a
    /// write transaction.
    public func freeze() -> Results {
        if isFrozen { return self }
        if let values { return Results(values: values.freeze()) }
        // Invalidated results freeze to invalidated results (RealmSwift's answer), not to a view of
        // the current version.
        return Results(realm: base.realm.freeze(), info: base.info, query: base.query, invalidated: isInvalidated)
    }

    /// The live results of a frozen copy, in a new live Realm on the calling thread (nil when the
    /// Realm cannot be opened). Live results return themselves.
    public func thaw() -> Results? {
        guard isFrozen else { return self }
        if let values { return values.thaw().map { Results(values: $0) } }
        guard let live = try? base.realm.checkedThaw() else { return nil }
        return Results(realm: live, info: base.info, query: base.query)
    }
}

extension List {
    /// Whether this list belongs to a frozen object.
    public var isFrozen: Bool { realm?.isFrozen ?? false }

    /// A frozen copy of this managed list (the list of its frozen parent object).
    public func freeze() -> List {
        guard let p = property else { fatalError("Unmanaged lists cannot be frozen; add the object to a Realm first.") }
        if isFrozen { return self }
        return List._rlmGet(p.parent.freeze(), p.index)
    }

    /// The live list of a frozen one, or nil when its object has been deleted since.
    public func thaw() -> List? {
        guard let p = property, isFrozen else { return self }
        return p.parent.thaw().map { List._rlmGet($0, p.index) }
    }
}

extension MutableSet {
    /// Whether this set belongs to a frozen object.
    public var isFrozen: Bool { realm?.isFrozen ?? false }

    /// A frozen copy of this managed set (the set of its frozen parent object).
    public func freeze() -> MutableSet {
        guard let p = property else { fatalError("Unmanaged sets cannot be frozen; add the object to a Realm first.") }
        if isFrozen { return self }
        return MutableSet._rlmGet(p.parent.freeze(), p.index)
    }

    /// The live set of a frozen one, or nil when its object has been deleted since.
    public func thaw() -> MutableSet? {
        guard let p = property, isFrozen else { return self }
        return p.parent.thaw().map { MutableSet._rlmGet($0, p.index) }
    }
}

extension Map {
    /// Whether this map belongs to a frozen object.
    public var isFrozen: Bool { realm?.isFrozen ?? false }

    /// A frozen copy of this managed map (the map of its frozen parent object).
    public func freeze() -> Map {
        guard let p = property else { fatalError("Unmanaged maps cannot be frozen; add the object to a Realm first.") }
        if isFrozen { return self }
        return Map._rlmGet(p.parent.freeze(), p.index)
    }

    /// The live map of a frozen one, or nil when its object has been deleted since.
    public func thaw() -> Map? {
        guard let p = property, isFrozen else { return self }
        return p.parent.thaw().map { Map._rlmGet($0, p.index) }
    }
}

extension LinkingObjects {
    /// Whether these linking objects belong to a frozen object.
    public var isFrozen: Bool { realm?.isFrozen ?? false }

    /// A frozen copy (the linking objects of the frozen parent object).
    public func freeze() -> LinkingObjects {
        guard let parent else { fatalError("Unmanaged linking objects cannot be frozen; add the object to a Realm first.") }
        if isFrozen { return self }
        return LinkingObjects(parent: parent.freeze(), property: propertyName)
    }

    /// The live linking objects of a frozen copy, or nil when the object has been deleted since.
    public func thaw() -> LinkingObjects? {
        guard let parent, isFrozen else { return self }
        return parent.thaw().map { LinkingObjects(parent: $0, property: propertyName) }
    }
}
