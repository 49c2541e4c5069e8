import RealmStorage

/// A key path resolved against the schema: the columns to read, hop by hop, from the object being
/// tested (or from a subquery's element) to the values compared (Spec/QUERY.md §7.1).
///
/// Each step reads one column of an object of its table. A link step continues into the link's
/// target table; a list or set step (or a map step, through its values, or a backlink step) fans out
/// to every element, which makes the path **to-many**. A nil to-one link on the way makes a to-one path's value nil, and contributes no
/// values to a to-many path. A path with no steps is the current element itself (a subquery's
/// `$x`). `Sendable`.
package struct BoundKeyPath: Sendable, Equatable, CustomStringConvertible {
    /// The columns read, in order.
    package var steps: [PathStep]
    /// The type of the values the path reaches: the final column's type (for a list, its elements'
    /// type); `.link` when it reaches objects.
    package var valueType: ColumnType
    /// For paths that reach objects: their table.
    package var targetTable: String?
    /// Whether a value reached can be nil: the final column (or list element) is nullable, or the
    /// path ends on a to-one link, or (for a to-one path) a to-one link on the way can be nil.
    package var isNullable: Bool
    /// The subquery variable the path starts at, for ``description`` only (`nil`: the object).
    package var variable: String?

    /// A resolved key path (the binder makes these; tests and planners may too).
    package init(steps: [PathStep], valueType: ColumnType, targetTable: String? = nil, isNullable: Bool, variable: String? = nil) {
        self.steps = steps
        self.valueType = valueType
        self.targetTable = targetTable
        self.isNullable = isNullable
        self.variable = variable
    }

    /// Whether the path goes through a list, set, map or backlink, so it reaches any number of values.
    package var isToMany: Bool { steps.contains(where: \.isToMany) }

    /// `owner.dogs.name`; backlinks print as `@links.Table.column`, a subquery element as `$x`.
    package var description: String {
        ((variable.map { ["$" + $0] } ?? []) + steps.map(\.description)).joined(separator: ".")
    }
}

/// One hop of a ``BoundKeyPath``. `Sendable`.
package enum PathStep: Sendable, Equatable, CustomStringConvertible {
    /// Reads `column` of the current object, an object of `table`.
    case column(table: String, ColumnSchema)
    /// Follows links backwards: every object of `originTable` whose link (or link list) column
    /// `originColumn` points at the current object. Always to-many.
    case backlink(originTable: String, originColumn: ColumnSchema)

    /// Whether the step fans out to many values: a list or set column (its elements), a map column
    /// (its values) or a backlink.
    package var isToMany: Bool {
        switch self {
        case .column(_, let column): column.isList || column.isMap
        case .backlink: true
        }
    }

    /// The table of the objects the step reaches when it is a link, else `nil`.
    package var linkTarget: String? {
        switch self {
        case .column(_, let column): column.type == .link ? column.linkTarget : nil
        case .backlink(let origin, _): origin
        }
    }

    package var description: String {
        switch self {
        case .column(_, let column): column.name
        case .backlink(let origin, let column): "@links.\(origin).\(column.name)"
        }
    }
}

/// A computed to-many property the binder can follow: RealmSwift's `LinkingObjects`, which the
/// file's catalog does not store. `Dog.owners` defined as the origin `Person.dogs` is
/// `LinkingObjectsProperty(table: "Dog", name: "owners", originTable: "Person", originColumn: "dogs")`.
/// `Sendable`.
package struct LinkingObjectsProperty: Sendable, Hashable {
    /// The table that has the property.
    package var table: String
    /// The property's name.
    package var name: String
    /// The table whose link column points at `table`.
    package var originTable: String
    /// The link (or link list) column of `originTable`.
    package var originColumn: String

    /// `table.name` follows `originTable.originColumn` backwards.
    package init(table: String, name: String, originTable: String, originColumn: String) {
        self.table = table
        self.name = name
        self.originTable = originTable
        self.originColumn = originColumn
    }
}
