import RealmQuery
import RealmStorage

extension Realm {
    /// Where this Realm's queries read: the open write transaction (own changes included), else
    /// the current snapshot.
    var querySource: any QuerySource { transaction ?? currentSnapshot }
}

/// What a `Results` selects: filters, sorts and distinct steps in the order they were chained,
/// evaluated together on first access and again only when the Realm changes.
struct ResultsQuery: Sendable {
    enum Step: Sendable {
        /// Query text with its arguments, or a tree built by `where { }`.
        case filter(QueryInput)
        case sort([SortDescriptor])
        case distinct([String])
    }
    var steps: [Step] = []
    /// The collection property whose objects the steps start from, in its order; nil: every
    /// object of the table (ResultsQuery+Collection.swift).
    var collection: CollectionRef?

    var isEmpty: Bool { steps.isEmpty && collection == nil }

    func adding(_ step: Step) -> ResultsQuery {
        var q = self
        q.steps.append(step)
        return q
    }

    /// Checks every step against the schema now (for the throwing forms), without evaluating.
    func validate(_ table: String, _ realm: Realm) throws {
        let catalog = realm.catalog
        guard let schema = catalog.table(table) else { return }
        for step in steps {
            switch step {
            case .filter(let query): _ = try Self.compile(query, schema, catalog)
            case .sort(let keys): for k in keys { _ = try Self.bindPath(k.keyPath, schema, catalog) }
            case .distinct(let paths): for p in paths { _ = try Self.bindPath(p, schema, catalog) }
            }
        }
    }

    static func compile(_ query: QueryInput, _ schema: TableSchema, _ catalog: Catalog) throws -> BoundPredicate {
        do {
            return try query.compile(table: schema, catalog: catalog, linkingObjects: ClassInfo.linkingObjectsProperties)
        } catch {
            throw Realm.Error.query(error)
        }
    }

    static func bindPath(_ path: String, _ schema: TableSchema, _ catalog: Catalog, toMany: Bool = false) throws -> BoundKeyPath {
        do {
            return try BoundKeyPath.bind(
                path, table: schema, catalog: catalog, allowToMany: toMany, linkingObjects: ClassInfo.linkingObjectsProperties)
        } catch {
            throw Realm.Error.query(error)
        }
    }

    /// The number of matching objects, or nil when counting needs the keys (a distinct step, or
    /// results over a collection property).
    func count(_ table: String, _ realm: Realm) throws -> Int? {
        let source = realm.querySource
        guard let schema = source.catalog.table(table) else { return 0 }
        if collection != nil || steps.contains(where: { if case .distinct = $0 { true } else { false } }) { return nil }
        let predicate = try Self.conjunction(steps, schema, source.catalog)
        do { return try QueryEvaluator(source).count(table, predicate) } catch let e as QueryError {
            throw Realm.Error.query(e)
        }
    }

    /// The AND of the filter steps among `steps` (nil when there are none).
    static func conjunction<S: Sequence>(_ steps: S, _ schema: TableSchema, _ catalog: Catalog) throws -> BoundPredicate?
    where S.Element == Step {
        var filters: [BoundPredicate] = []
        for case .filter(let query) in steps { filters.append(try compile(query, schema, catalog)) }
        return filters.isEmpty ? nil : filters.count == 1 ? filters[0] : .and(filters)
    }

    /// The keys of the matching objects, in order.
    func evaluate(_ table: String, _ realm: Realm) throws -> [ObjectKey] {
        try evaluate(table, in: realm.querySource)
    }

    /// What an incremental update needs: the query as one predicate and its effective sort keys,
    /// and the objects that changed. Nil when updating is not exact or does not pay: another
    /// table changed, many objects changed, a distinct step, a query reading through links, or
    /// results over a collection property.
    struct IncrementalPlan {
        var predicate: BoundPredicate?
        var sortKeys: [SortKey]
        var changed: Set<ObjectKey>
    }

    func incrementalPlan(_ table: String, previousCount: Int, changes: Changeset, in snapshot: Snapshot) throws -> IncrementalPlan? {
        guard collection == nil, !changes.schemaChanged, changes.tables.keys.allSatisfy({ $0 == table }), let t = changes.tables[table]
        else { return nil }
        var changed = t.modified
        changed.formUnion(t.inserted)
        changed.formUnion(t.deleted)
        guard changed.count * 8 <= previousCount else { return nil }
        let catalog = snapshot.catalog
        guard let schema = catalog.table(table) else { return nil }
        var filters: [BoundPredicate] = []
        var sortKeys: [SortKey] = []
        for step in steps {
            switch step {
            case .filter(let query): filters.append(try Self.compile(query, schema, catalog))
            case .sort(let descriptors):
                // A later sort decides first; earlier ones break its ties (sorts are stable).
                sortKeys.insert(
                    contentsOf: try descriptors.map {
                        SortKey(path: try Self.bindPath($0.keyPath, schema, catalog), ascending: $0.ascending)
                    },
                    at: 0)
            case .distinct: return nil
            }
        }
        let predicate: BoundPredicate? = filters.isEmpty ? nil : filters.count == 1 ? filters[0] : .and(filters)
        guard predicate?.readsOnlyOwnColumns ?? true, sortKeys.allSatisfy({ $0.path.readsOnlyOwnColumns && $0.path.valueType != .link })
        else { return nil }
        return IncrementalPlan(predicate: predicate, sortKeys: sortKeys, changed: changed)
    }

    /// The keys of the matching objects in `snapshot`, computed from `previous` (the keys at an
    /// older version) when ``incrementalPlan(_:previousCount:changes:in:)`` allows; nil: evaluate
    /// in full instead.
    func incremental(_ table: String, previous: [ObjectKey], changes: Changeset, in snapshot: Snapshot) throws -> [ObjectKey]? {
        guard let plan = try incrementalPlan(table, previousCount: previous.count, changes: changes, in: snapshot) else { return nil }
        let filter = KeyFilter(plan.changed)
        return try QueryEvaluator(snapshot).update(
            table, previous: previous, changed: plan.changed.sorted(), isChanged: filter.contains, predicate: plan.predicate,
            sortKeys: plan.sortKeys)
    }

    /// The keys of the matching objects in `source` (a snapshot, for notifiers), in order.
    /// With `limit`, only the first `limit` keys are needed: a final sort step then selects them
    /// with the evaluator's bounded top-k instead of sorting everything.
    func evaluate(_ table: String, in source: any QuerySource, limit: Int? = nil) throws -> [ObjectKey] {
        let catalog = source.catalog
        guard let schema = catalog.table(table) else { return [] }
        let evaluator = QueryEvaluator(source)
        // Leading filters run as one predicate; later steps apply in chain order.
        let leading = steps.prefix { if case .filter = $0 { true } else { false } }
        let rest = steps.dropFirst(leading.count)
        let first = try Self.conjunction(leading, schema, catalog)
        // Every object sorted, only the first few wanted: the evaluator selects them from the
        // first sort column's lanes without listing every object.
        if collection == nil, first == nil, rest.count == 1, case .sort(let descriptors) = rest.first!, let limit {
            let sortKeys = try descriptors.map { SortKey(path: try Self.bindPath($0.keyPath, schema, catalog), ascending: $0.ascending) }
            if let top = try evaluator.sortedPrefix(ofAll: table, by: sortKeys, limit: limit) { return top }
        }
        var keys = try collection.map { try evaluator.matching(table, try $0.keys(in: source), first) } ?? evaluator.filter(table, first)
        for (i, step) in zip(rest.indices, rest) {
            if case .sort(let descriptors) = step, i == rest.indices.last, let limit {
                let sortKeys = try descriptors.map {
                    SortKey(path: try Self.bindPath($0.keyPath, schema, catalog), ascending: $0.ascending)
                }
                return try evaluator.sort(table, keys, by: sortKeys, limit: limit)
            }
            switch step {
            case .filter(let query):
                let p = try Self.compile(query, schema, catalog)
                keys = try keys.filter { try evaluator.matches(table, $0, p) }
            case .sort(let descriptors):
                let sortKeys = try descriptors.map {
                    SortKey(path: try Self.bindPath($0.keyPath, schema, catalog), ascending: $0.ascending)
                }
                keys = try evaluator.sort(table, keys, by: sortKeys)
            case .distinct(let paths):
                keys = try evaluator.distinct(table, keys, by: try paths.map { try Self.bindPath($0, schema, catalog) })
            }
        }
        return limit.map { Array(keys.prefix($0)) } ?? keys
    }
}

/// A property to sort by, and the direction.
///
/// ```swift
/// realm.objects(Person.self).sorted(by: [SortDescriptor(keyPath: "age", ascending: false), "name"])
/// ```
public struct SortDescriptor: Sendable, Hashable, ExpressibleByStringLiteral, CustomStringConvertible {
    /// The property (or dotted path through links) to sort by.
    public let keyPath: String
    /// Whether smaller values come first (nil first when ascending).
    public let ascending: Bool

    /// Sorts by a property name or a dotted path through to-one links (`"owner.age"`).
    public init(keyPath: String, ascending: Bool = true) {
        self.keyPath = keyPath
        self.ascending = ascending
    }

    /// Sorts by a Swift key path.
    public init<Root: ObjectBase, Value>(keyPath: KeyPath<Root, Value>, ascending: Bool = true) {
        do { self.keyPath = try KeyPathNames.path(keyPath) } catch { fatalError("\(error)") }
        self.ascending = ascending
    }

    /// A sort by a property, ascending: `sorted(by: ["age", "name"])`.
    public init(stringLiteral value: String) { self.init(keyPath: value) }

    /// The same key path in the other direction.
    public var reversed: SortDescriptor { SortDescriptor(keyPath: keyPath, ascending: !ascending) }

    public var description: String { "\(keyPath) \(ascending ? "ascending" : "descending")" }
}
