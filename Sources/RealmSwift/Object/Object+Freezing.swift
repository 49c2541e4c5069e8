extension ObjectBase {
    /// Whether this object belongs to a frozen Realm (immutable, usable from any thread).
    public var isFrozen: Bool { _realm?.isFrozen ?? false }

    /// A frozen copy of this managed object: it keeps the current version's values forever and can
    /// be read from any thread. Unmanaged objects cannot be frozen.
    public func freeze() -> Self {
        guard let realm = _realm else { fatalError("Unmanaged objects cannot be frozen; add the object to a Realm first.") }
        if realm.isFrozen { return self }
        let frozen = realm.freeze()
        let o = Self()
        o._bind(frozen, _key, _info)
        return o
    }

    /// The live object of a frozen one, in a live Realm on the calling thread, or nil when it has
    /// been deleted since.
    public func thaw() -> Self? {
        guard let realm = _realm else { return self }
        if !realm.isFrozen { return self }
        guard let live = try? realm.thaw() else { return nil }
        let o = Self()
        o._bind(live, _key, _info)
        return live.containsObject(o) ? o : nil
    }
}
