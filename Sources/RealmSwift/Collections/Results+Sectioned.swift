extension Results where Element: ObjectBase {
    /// These objects sorted by a property and grouped into one section per distinct value of it.
    ///
    /// ```swift
    /// let byAge = realm.objects(Person.self).sectioned(by: \.age, ascending: false)
    /// print(byAge.allKeys)  // [41, 33, 7]
    /// ```
    ///
    /// - Parameters:
    ///   - keyPath: A persisted property (or a path through to-one links) to sort and section by.
    ///   - ascending: The direction to sort in (nil first when ascending).
    public func sectioned<Key: _Persistable & Hashable>(by keyPath: KeyPath<Element, Key>, ascending: Bool = true)
        -> SectionedResults<Key, Element>
    {
        sectioned(by: keyPath, sortDescriptors: [SortDescriptor(keyPath: keyPath, ascending: ascending)])
    }

    /// These objects sorted by `sortDescriptors` and grouped into one section per distinct value of
    /// a property.
    ///
    /// The primary sort descriptor should be the one that determines the section key, so that each
    /// section's objects are next to each other; when they are not, objects with the same key still
    /// go to one section (the section of the first of them), in sorted order.
    ///
    /// - Parameters:
    ///   - keyPath: The property whose value is the section key.
    ///   - sortDescriptors: How to sort the objects first (an empty array keeps these results' order).
    public func sectioned<Key: _Persistable & Hashable>(by keyPath: KeyPath<Element, Key>, sortDescriptors: [SortDescriptor])
        -> SectionedResults<Key, Element>
    {
        SectionedResults(sortedIfAsked(sortDescriptors), sectionKey: { $0[keyPath: keyPath] })
    }

    /// These objects grouped into sections by the key `block` returns for each of them, the
    /// objects sorted by that key first.
    ///
    /// ```swift
    /// let byInitial = realm.objects(Person.self).sectioned(by: { String($0.name.prefix(1)) })
    /// ```
    ///
    /// The objects are sorted by the keys `block` computes, in `Key`'s `<` order (stable: objects
    /// with equal keys keep the order of these results). RealmSwift offers this form only for
    /// results of values, sorted by the values themselves; with objects there is no such order, so
    /// the computed key decides, and it must be `Comparable`.
    ///
    /// - Parameters:
    ///   - block: The section key of an object (called again for each object whenever the Realm
    ///     changed and the sections are read).
    ///   - ascending: Whether smaller keys come first.
    public func sectioned<Key: _Persistable & Hashable & Comparable>(by block: @escaping (Element) -> Key, ascending: Bool = true)
        -> SectionedResults<Key, Element>
    {
        SectionedResults(self, sectionKey: block, keyOrder: ascending ? { $0 < $1 } : { $0 > $1 })
    }

    /// These objects sorted by `sortDescriptors` and grouped into sections by the key `block`
    /// returns for each of them.
    ///
    /// The primary sort descriptor should order the objects by the key `block` computes, so that
    /// each section's objects are next to each other; when it does not, objects with the same key
    /// still go to one section (the section of the first of them), in sorted order.
    ///
    /// - Parameters:
    ///   - block: The section key of an object.
    ///   - sortDescriptors: How to sort the objects first (an empty array keeps these results' order).
    public func sectioned<Key: _Persistable & Hashable>(by block: @escaping (Element) -> Key, sortDescriptors: [SortDescriptor])
        -> SectionedResults<Key, Element>
    {
        SectionedResults(sortedIfAsked(sortDescriptors), sectionKey: block)
    }

    /// `sectioned(by: block, sortDescriptors:)` with the block last, for a trailing closure.
    public func sectioned<Key: _Persistable & Hashable>(sortDescriptors: [SortDescriptor], _ block: @escaping (Element) -> Key)
        -> SectionedResults<Key, Element>
    {
        sectioned(by: block, sortDescriptors: sortDescriptors)
    }

}

/// Sections of the objects of a list, set or linking objects, as RealmSwift gives every
/// `RealmCollection` (the collection's live results, sorted and sectioned like ``Results``').
///
/// ```swift
/// let byAge = person.dogs.sectioned(by: \.age, ascending: true)
/// ```
extension RealmCollection where Element: ObjectBase {
    /// The objects sorted by a property and grouped into one section per distinct value of it.
    public func sectioned<Key: _Persistable & Hashable>(by keyPath: KeyPath<Element, Key>, ascending: Bool = true)
        -> SectionedResults<Key, Element>
    {
        _rlmCollection.results("sectioned(by:ascending:)").sectioned(by: keyPath, ascending: ascending)
    }

    /// The objects sorted by `sortDescriptors` and grouped into one section per distinct value of
    /// a property.
    public func sectioned<Key: _Persistable & Hashable>(by keyPath: KeyPath<Element, Key>, sortDescriptors: [SortDescriptor])
        -> SectionedResults<Key, Element>
    {
        _rlmCollection.results("sectioned(by:sortDescriptors:)").sectioned(by: keyPath, sortDescriptors: sortDescriptors)
    }

    /// The objects sorted by `sortDescriptors` and grouped into sections by the key `block` returns.
    public func sectioned<Key: _Persistable & Hashable>(by block: @escaping (Element) -> Key, sortDescriptors: [SortDescriptor])
        -> SectionedResults<Key, Element>
    {
        _rlmCollection.results("sectioned(by:sortDescriptors:)").sectioned(by: block, sortDescriptors: sortDescriptors)
    }

    /// `sectioned(by: block, sortDescriptors:)` with the block last, for a trailing closure.
    public func sectioned<Key: _Persistable & Hashable>(sortDescriptors: [SortDescriptor], _ block: @escaping (Element) -> Key)
        -> SectionedResults<Key, Element>
    {
        _rlmCollection.results("sectioned(sortDescriptors:_:)").sectioned(by: block, sortDescriptors: sortDescriptors)
    }
}

extension Results {
    /// These results sorted by `sortDescriptors` (these results themselves when there are none):
    /// what sections are grouped from.
    func sortedIfAsked(_ sortDescriptors: [SortDescriptor]) -> Results {
        sortDescriptors.isEmpty ? self : sorted(by: sortDescriptors)
    }
}
