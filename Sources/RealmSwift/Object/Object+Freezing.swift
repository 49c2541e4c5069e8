extension ObjectBase {
    /// Whether this object belongs to a frozen Realm (immutable, usable from any thread).
    public var isFrozen: Bool { _rlmRealm?.isFrozen ?? false }

    /// A frozen copy of this managed object: it keeps the current version's values forever and can
    /// be read from any thread. Unmanaged objects cannot be frozen.
    public func freeze() -> Self {
        guard let realm = _rlmRealm else { fatalError("Unmanaged objects cannot be frozen; add the object to a Realm first.") }
        if realm.isFrozen { return self }
        let frozen = realm.freeze()
        let o = Self()
        o._rlmBind(frozen, _rlmKey, _rlmClass)
        return o
    }

    /// The live object of a frozen one, in a live Realm on the calling thread, or nil when it has
    /// been deleted since.
    public func thaw() -> Self? {
        guard let realm = _rlmRealm else { return self }
        if !realm.isFrozen { return self }
        guard let live = try? realm.checkedThaw() else { return nil }
        let o = Self()
        o._rlmBind(live, _rlmKey, _rlmClass)
        return live.containsObject(o) ? o : nil
    }
}
