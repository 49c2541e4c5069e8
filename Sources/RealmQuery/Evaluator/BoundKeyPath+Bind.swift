import RealmStorage

extension BoundKeyPath {
    /// Binds a dotted key path (`"owner.name"`) to `table`, for sorting, `distinct` and
    /// aggregates (Spec/QUERY.md §6.1, §9).
    ///
    /// ```swift
    /// let path = try BoundKeyPath.bind("best.owner.age", table: catalog.table("Person")!, catalog: catalog)
    /// let all = try BoundKeyPath.bind("dogs.age", table: catalog.table("Person")!, catalog: catalog, allowToMany: true)
    /// ```
    ///
    /// - Parameters:
    ///   - allowToMany: whether the path may go through a list, set, map or LinkingObjects
    ///     property (aggregates may; sorting and `distinct` need one value per object).
    ///   - linkingObjects: RealmSwift's `LinkingObjects` properties the path may follow.
    /// - Throws: ``QueryError`` with the path as its text: `.invalidKeyPath` for an empty
    ///   component, a property after a value that is not a link, or a to-many path where one
    ///   value is needed; `.unknownProperty` for a name the table lacks.
    package static func bind(
        _ path: String, table: TableSchema, catalog: Catalog, allowToMany: Bool = false,
        linkingObjects: [LinkingObjectsProperty] = []
    ) throws(QueryError) -> BoundKeyPath {
        let components = path.split(separator: ".", omittingEmptySubsequences: false).map(String.init)
        var positions: [Int] = []
        var offset = 0
        for c in components {
            positions.append(offset)
            offset += c.unicodeScalars.count + 1
        }
        if let empty = components.firstIndex(where: \.isEmpty) {
            throw QueryError(
                .invalidKeyPath, "'\(path)' is not a key path: property names separated by dots", offset: positions[empty], text: path)
        }
        let bound: BoundKeyPath
        do {
            bound = try Binder(catalog: catalog, linkingObjects: linkingObjects).resolve(
                PropertyPath(components, componentPositions: positions), in: .object(table))
        } catch {
            throw error.inText(path)
        }
        if bound.isToMany && !allowToMany {
            let at = bound.steps.firstIndex(where: \.isToMany) ?? 0
            throw QueryError(
                .invalidKeyPath,
                "'\(path)' goes through the collection '\(components[at])'; sorting and distinct need one value per object",
                offset: positions[at], text: path)
        }
        return bound
    }
}
