import RealmStorage

/// A query as it was given: text in the NSPredicate dialect with its `%@`/`%K` arguments
/// (`filter("age > %@", 3)`), or a syntax tree built in code (RealmSwift's type-safe
/// `where { $0.age > 3 }`, which never goes through text). `Sendable`.
///
/// ```swift
/// let text = QueryInput.text("age > %@", arguments: [.value(.int(3))])
/// let tree = QueryInput.tree(.comparison(QueryComparison(.keyPath("age"), .greater, .constant(.integer(3)))))
/// // Both bind to the same predicate.
/// ```
package enum QueryInput: Sendable, Equatable {
    /// Query text and the arguments for its placeholders.
    case text(String, arguments: [QueryArgument])
    /// A predicate built in code.
    case tree(QueryPredicate)

    /// The predicate: the text parsed, or the tree itself.
    /// - Throws: ``QueryError`` from the parser, carrying the text.
    package func predicate() throws(QueryError) -> QueryPredicate {
        switch self {
        case .text(let text, let arguments):
            do { return try QueryPredicate.parse(text, arguments: arguments) } catch { throw error.inText(text) }
        case .tree(let predicate):
            return predicate
        }
    }

    /// The predicate bound to `table` (see ``QueryPredicate/bind(to:in:linkingObjects:)``).
    /// - Throws: ``QueryError``; for text, carrying the text for its caret.
    package func compile(table: TableSchema, catalog: Catalog, linkingObjects: [LinkingObjectsProperty] = []) throws(QueryError)
        -> BoundPredicate
    {
        switch self {
        case .text(let text, let arguments):
            return try BoundPredicate.compile(text, arguments: arguments, table: table, catalog: catalog, linkingObjects: linkingObjects)
        case .tree(let predicate):
            return try predicate.bind(to: table, in: catalog, linkingObjects: linkingObjects)
        }
    }
}

extension QueryValue {
    /// The constant a `%@` argument stands for, as the parser makes it; nil for a `%K` key path.
    package init?(argument: QueryArgument) {
        switch argument {
        case .value(let v): self.init(v)
        case .values(let vs): self = .list(vs.map(QueryValue.init))
        case .object(let table, let key): self = .object(table: table, key: key)
        case .keyPath: return nil
        }
    }
}
