import RealmStorage

extension Results {
    /// The first `maxLength` objects, as an array. When these results end with a sort and are not
    /// evaluated yet, only those objects are selected (a bounded top-k, not a full sort):
    /// `people.sorted(byKeyPath: "score", ascending: false).prefix(100)`.
    public func prefix(_ maxLength: Int) -> [Element] {
        precondition(maxLength >= 0, "Can't take a prefix of negative length from a collection")
        if let values { return Array(values.elements.prefix(maxLength)) }
        let keys = base.prefixKeys(maxLength)
        return keys.map { base.object($0) as! Element }
    }
}

extension ResultsBase {
    /// The first `n` keys: from the cache when it is current, else evaluated with a limit.
    func prefixKeys(_ n: Int) -> [ObjectKey] {
        realm.checkThread()
        if generation != realm.generation { return [] }
        if isCurrent || query.isEmpty || realm.transaction != nil { return Array(keys.prefix(n)) }
        do {
            return try query.evaluate(info.className, in: realm.querySource, limit: n)
        } catch {
            fatalError("\(error)")
        }
    }
}
