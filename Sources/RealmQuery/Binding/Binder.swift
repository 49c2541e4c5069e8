import RealmStorage

extension QueryPredicate {
    /// Checks the predicate against `table` and resolves it for evaluation (Spec/QUERY.md §6–§8):
    /// key paths become columns (through links into their target tables, and through
    /// `linkingObjects`), comparisons are normalized, constants are converted to the type of what
    /// they are compared with.
    ///
    /// ```swift
    /// let bound = try QueryPredicate.parse("owner.age > 30").bind(to: catalog.table("Dog")!, in: catalog)
    /// ```
    ///
    /// - Parameter linkingObjects: RealmSwift's `LinkingObjects` properties, which the catalog does
    ///   not store, so that key paths can follow them.
    /// - Throws: ``QueryError`` with code `.unknownProperty`, `.typeMismatch`, `.unsupportedOperator`,
    ///   `.invalidKeyPath`, `.unknownVariable`, `.invalidArgument` or `.invalidLiteral`, and the
    ///   offset of the problem (the error has no ``QueryError/text``; ``BoundPredicate/compile(_:arguments:table:catalog:linkingObjects:)``
    ///   adds it).
    package func bind(to table: TableSchema, in catalog: Catalog, linkingObjects: [LinkingObjectsProperty] = []) throws(QueryError)
        -> BoundPredicate
    {
        try Binder(catalog: catalog, linkingObjects: linkingObjects).bind(self, in: .object(table))
    }
}

/// Resolves a ``QueryPredicate`` against the catalog.
struct Binder {
    let catalog: Catalog
    let linkingObjects: [LinkingObjectsProperty]

    /// Where key paths start.
    enum Scope {
        /// The object being tested; key paths have no variable.
        case object(TableSchema)
        /// The element of a subquery; key paths start at it, with `$variable` or (on objects)
        /// without a variable.
        case element(variable: String, Element)

        /// The subquery's variable (nil at the object): a key path written without it still
        /// prints with it.
        var variable: String? {
            if case .element(let name, _) = self { name } else { nil }
        }
    }

    /// What a key path starts at, or reaches: an object of a table, or a value.
    enum Element {
        case object(TableSchema)
        case value(ColumnType, nullable: Bool)
    }

    func bind(_ predicate: QueryPredicate, in scope: Scope) throws(QueryError) -> BoundPredicate {
        switch predicate {
        case .constant(let value): return .constant(value)
        case .and(let ps): return .and(try ps.map { (p) throws(QueryError) in try bind(p, in: scope) })
        case .or(let ps): return .or(try ps.map { (p) throws(QueryError) in try bind(p, in: scope) })
        case .not(let p): return .not(try bind(p, in: scope))
        case .comparison(let c): return .comparison(try bind(c, in: scope))
        }
    }

    // MARK: Comparisons

    /// Binds a comparison and brings it to normal form: the left side a non-constant and the only
    /// side that may be to-many (Spec/QUERY.md §6.3).
    func bind(_ c: QueryComparison, in scope: Scope) throws(QueryError) -> BoundComparison {
        var left = try side(c.left, in: scope)
        var right = try side(c.right, in: scope)
        var op = c.op
        var modifier = c.modifier
        func modifierError(_ m: CollectionModifier) -> QueryError {
            QueryError(.unsupportedOperator, "\(m) needs a key path through a list on the left of the comparison", offset: c.position)
        }
        guard left.operand != nil || right.operand != nil else {
            throw QueryError(.unsupportedOperator, "a comparison needs a key path on at least one side", offset: c.position)
        }
        // Swap so that the left side is a non-constant and the only to-many side.
        if right.operand != nil, left.operand == nil || op == .in || right.isToMany {
            if op == .in, !right.isToMany { throw inNeedsList(right) }
            guard !left.isToMany else {
                throw QueryError(.unsupportedOperator, "at most one side of a comparison can go through a list", offset: c.operatorPosition)
            }
            if let modifier { throw modifierError(modifier) }
            if op == .in {
                // `x IN list` is `ANY list == x`.
                (left, right, op, modifier) = (right, left, .equal, .any)
            } else if let swapped = op.swapped {
                (left, right, op) = (right, left, swapped)
            } else if left.operand == nil {
                throw QueryError(.unsupportedOperator, "\(op) needs a key path on its left", offset: c.operatorPosition)
            } else {
                throw QueryError(
                    .unsupportedOperator, "the right side of \(op) cannot be a key path through a list", offset: right.position)
            }
        }
        if left.isToMany {
            modifier = modifier ?? .any
        } else if let modifier {
            throw modifierError(modifier)
        }
        try checkOperator(op, options: c.options, on: left, at: c.operatorPosition)
        return BoundComparison(
            modifier: modifier, left: left.operand!, op: op, options: c.options, right: try rightOperand(right, of: op, against: left),
            valueType: left.type)
    }

    private func inNeedsList(_ side: Side) -> QueryError {
        QueryError(
            .typeMismatch, "IN needs a list on its right: a {…} constant, a %@ array or a key path through a list", offset: side.position)
    }

    /// Whether values of `type` can be compared: the types of Spec/QUERY.md §7.2, which are every
    /// type so far. A switch without a default, so a column type added later must be placed here
    /// (queryable once the spec says what its operators mean); not a set, whose generic type a
    /// process's first query had to make (a search of every protocol conformance of the process).
    static func isQueryable(_ type: ColumnType) -> Bool {
        switch type {
        case .int, .bool, .float, .double, .string, .binary, .timestamp, .objectId, .uuid, .decimal128, .link, .mixed: true
        }
    }

    /// The operator table of Spec/QUERY.md §7.2 and the options rules of §7.3.
    private func checkOperator(_ op: ComparisonOperator, options: ComparisonOptions, on left: Side, at offset: Int) throws(QueryError) {
        guard Self.isQueryable(left.type) else {
            throw QueryError(.unsupportedOperator, "\(left.name) cannot be queried in this version of the language", offset: offset)
        }
        let applies: Bool
        switch op {
        case .equal, .notEqual, .in: applies = true
        // Mixed values take every operator; it holds for the values of a fitting type (§7.10).
        case .less, .lessOrEqual, .greater, .greaterOrEqual:
            // Strings order by their UTF-8 bytes (RealmSwift ≥ 10.53; Spec/QUERY.md §7.2).
            applies = left.type.isNumeric || left.type == .timestamp || left.type == .mixed || left.type == .string
        case .between:
            applies = left.type.isNumeric || left.type == .timestamp || left.type == .mixed
        case .beginsWith, .endsWith, .contains, .like: applies = left.type == .string || left.type == .binary || left.type == .mixed
        }
        guard applies else { throw QueryError(.unsupportedOperator, "\(op) does not apply to \(left.name)", offset: offset) }
        guard !options.isEmpty else { return }
        guard left.type == .string || left.type == .mixed else {
            throw QueryError(.unsupportedOperator, "the options \(options) apply to strings only, not to \(left.name)", offset: offset)
        }
        if op == .like && options.contains(.diacriticInsensitive) {
            throw QueryError(.unsupportedOperator, "LIKE does not support the [d] option", offset: offset)
        }
    }

    /// The right side, converted to the left side's type.
    private func rightOperand(_ right: Side, of op: ComparisonOperator, against left: Side) throws(QueryError) -> BoundOperand {
        guard let constant = right.constant else {
            guard op != .between else {
                throw QueryError(.typeMismatch, "BETWEEN needs two constants: {lower, upper}", offset: right.position)
            }
            // Numbers compare with numbers of another type (an average of ints, a double, with an
            // int property: Spec/QUERY.md §7.5); every other type only with its own.
            let numeric = left.type.isNumeric && right.type.isNumeric
            guard numeric || right.type == left.type, right.linkTarget == left.linkTarget else {
                throw QueryError(.typeMismatch, "\(left.name) cannot be compared with \(right.name)", offset: right.position)
            }
            return right.operand!
        }
        var target = ValueTarget(
            type: left.type, linkTarget: left.linkTarget, allowsNull: left.isNullable, naming: left.naming, catalog: catalog)
        switch op {
        case .between:
            guard case .list(let bounds) = constant, bounds.count == 2 else {
                throw QueryError(.typeMismatch, "BETWEEN needs a list of two bounds: {lower, upper}", offset: right.position)
            }
            target.allowsNull = false
            return .list(try bounds.map { (b) throws(QueryError) in try ValueConversion.convert(b, to: target, at: right.position) })
        case .in:
            guard case .list(let items) = constant else { throw inNeedsList(right) }
            return .list(try items.map { (i) throws(QueryError) in try ValueConversion.convert(i, to: target, at: right.position) })
        default:
            // A substring operator with nil matches nothing rather than being an error (§7.4).
            if op.isSubstringOperator { target.allowsNull = true }
            return .constant(try ValueConversion.convert(constant, to: target, at: right.position))
        }
    }
}

extension ColumnType {
    /// int, float, double, decimal128.
    var isNumeric: Bool {
        switch self {
        case .int, .float, .double, .decimal128: true
        default: false
        }
    }
}
