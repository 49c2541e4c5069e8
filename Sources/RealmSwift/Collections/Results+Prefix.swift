import RealmStorage

extension Results {
    /// The first `maxLength` elements, as RealmSwift gives them: a slice. When these results end
    /// with a sort, only those objects are selected (a bounded top-k, not a full sort):
    /// `people.sorted(byKeyPath: "score", ascending: false).prefix(100)`. The slice's base is
    /// results limited to those objects (live, like these results).
    public func prefix(_ maxLength: Int) -> Slice<Results> {
        precondition(maxLength >= 0, "Can't take a prefix of negative length from a collection")
        if values != nil { return Slice(base: self, bounds: 0..<Swift.min(maxLength, count)) }
        let limited = Results(
            realm: base.realm, info: base.info, query: base.query, invalidated: base.generation != base.realm.generation,
            limit: Swift.min(maxLength, base.limit ?? maxLength))
        // Keys these results already hold are taken as they are (no second evaluation).
        if base.isCurrent || base.query.isEmpty || base.realm.transaction != nil {
            limited.base.adopt(Array(base.keys.prefix(maxLength)))
        }
        return Slice(base: limited, bounds: 0..<limited.count)
    }
}
