import RealmStorage

/// One side of a comparison being bound: a constant (not yet typed) or an operand with its type.
struct Side {
    /// The bound operand; `nil` for a constant.
    var operand: BoundOperand?
    /// The constant, for constants.
    var constant: QueryValue?
    var position: Int
    var isToMany = false
    var type: ColumnType = .int
    var linkTarget: String?
    var isNullable = false
    /// What ``name`` is made from: kept as is, so a predicate that binds makes no message text
    /// (printing each expression cost the first query of a process ~0.3 M instructions).
    var naming: Naming

    enum Naming {
        /// A constant, named by its value.
        case constant(QueryValue)
        /// An operand, named by its expression and type (a link names its target table).
        case operand(QueryExpression, ColumnType, target: String?)

        /// The name: `'owner.age' (int)`, `'best' (link to Dog)`, or a constant's value.
        var text: String {
            switch self {
            case .constant(let value): value.description
            case .operand(let expression, let type, let target): "'\(expression)' (\(target.map { "link to \($0)" } ?? type.description))"
            }
        }
    }

    /// How messages name it: `'owner.age' (int)`.
    var name: String { naming.text }
}

/// Operands: key paths resolved through the catalog, collection operators, subqueries.
extension Binder {
    func side(_ expression: QueryExpression, in scope: Scope) throws(QueryError) -> Side {
        let at = expression.position
        switch expression.kind {
        case .constant(let value):
            return Side(constant: value, position: at, naming: .constant(value))
        case .keyPath(let path):
            let bound = try resolve(path, in: scope)
            return side(.keyPath(bound), bound, type: bound.valueType, nullable: bound.isNullable, toMany: bound.isToMany, expression)
        case .aggregate(let function, let collection, let property):
            return try aggregate(function, collection: collection, property: property, in: scope, expression)
        case .subqueryCount(let subquery):
            let collection = try resolve(subquery.collection, in: scope)
            guard collection.isToMany else {
                throw QueryError(
                    .invalidKeyPath, "the collection of a SUBQUERY must be a list; '\(subquery.collection)' is one value",
                    offset: subquery.collection.position)
            }
            let element: Element =
                if let table = collection.targetTable.flatMap(catalog.table) { .object(table) } else {
                    .value(collection.valueType, nullable: collection.isNullable)
                }
            let predicate = try bind(subquery.predicate, in: .element(variable: subquery.variable, element))
            let bound = BoundSubquery(collection: collection, variable: subquery.variable, predicate: predicate)
            return Side(operand: .subqueryCount(bound), position: at, type: .int, naming: .operand(expression, .int, target: nil))
        }
    }

    private func side(
        _ operand: BoundOperand, _ path: BoundKeyPath, type: ColumnType, nullable: Bool, toMany: Bool, _ expression: QueryExpression
    ) -> Side {
        let target = type == .link ? path.targetTable : nil
        return Side(
            operand: operand, position: expression.position, isToMany: toMany, type: type, linkTarget: target, isNullable: nullable,
            naming: .operand(expression, type, target: target))
    }

    // MARK: Collection operators

    /// `@count`/`@size` of a list (or length of a string or binary), `@min`/`@max`/`@sum`/`@avg`
    /// over the values a path through a list reaches (Spec/QUERY.md §7.7).
    private func aggregate(
        _ function: AggregateFunction, collection: PropertyPath, property: PropertyPath?, in scope: Scope, _ expression: QueryExpression
    ) throws(QueryError) -> Side {
        func invalid(_ message: String) -> QueryError { QueryError(.invalidKeyPath, message, offset: expression.position) }
        var path = try resolve(collection, in: scope)
        if let property {
            guard path.isToMany, path.steps.last?.isToMany == true, let table = path.targetTable.flatMap(catalog.table) else {
                throw invalid("\(function).\(property) needs a list of objects before it; '\(collection)' is not one")
            }
            let rest = try resolve(property, in: .object(table))
            guard !rest.isToMany else { throw invalid("the key path after \(function) cannot go through another list") }
            path.steps += rest.steps
            path.valueType = rest.valueType
            path.targetTable = rest.targetTable
            path.isNullable = rest.isNullable
        }
        if function == .count {
            if property == nil, path.steps.last?.isToMany == true {
                return side(.aggregate(.count, path), path, type: .int, nullable: false, toMany: false, expression)
            }
            guard path.valueType == .string || path.valueType == .binary else {
                throw invalid("@count needs a list, a string or binary data; '\(collection)' is none of these")
            }
            return side(.length(path), path, type: .int, nullable: path.isNullable, toMany: path.isToMany, expression)
        }
        guard path.isToMany else { throw invalid("\(function) needs a key path through a list; '\(collection)' is one value") }
        guard path.valueType != .link else {
            throw invalid("\(function) over objects needs a property to aggregate: '\(collection).\(function).property'")
        }
        let type = path.valueType
        let result: ColumnType
        switch function {
        case .min, .max:
            guard type.isNumeric || type == .timestamp else { throw aggregateMismatch(function, type, expression) }
            result = type
        case .sum:
            guard type.isNumeric else { throw aggregateMismatch(function, type, expression) }
            result = type == .float ? .double : type
        default:
            guard type.isNumeric else { throw aggregateMismatch(function, type, expression) }
            result = type == .decimal128 ? .decimal128 : .double
        }
        return side(.aggregate(function, path), path, type: result, nullable: function != .sum, toMany: false, expression)
    }

    private func aggregateMismatch(_ function: AggregateFunction, _ type: ColumnType, _ expression: QueryExpression) -> QueryError {
        let needs = function == .min || function == .max ? "numbers or dates" : "numbers"
        return QueryError(
            .typeMismatch, "\(function) needs \(needs); '\(expression)' aggregates \(type) values", offset: expression.position)
    }

    // MARK: Key paths

    /// Resolves `path` from the scope's object or element, hop by hop (Spec/QUERY.md §7.1).
    func resolve(_ path: PropertyPath, in scope: Scope) throws(QueryError) -> BoundKeyPath {
        var element: Element
        switch (scope, path.variable) {
        case (.object(let table), nil):
            element = .object(table)
        case (.element(let name, let e), let v?) where v == name:
            element = e
        case (.object, let v?):
            throw QueryError(.unknownVariable, "$\(v) is not defined: variables exist only inside their SUBQUERY", offset: path.position)
        case (.element(let name, _), let v?):
            throw QueryError(
                .unknownVariable, "$\(v) is not defined here; key paths in this SUBQUERY start with $\(name)", offset: path.position)
        case (.element(_, .object(let table)), nil):
            // As RealmSwift resolves it: a key path without a variable inside a SUBQUERY names a
            // property of the collection's objects.
            element = .object(table)
        case (.element(let name, .value), nil):
            throw QueryError(
                .unknownVariable, "the elements of this SUBQUERY are values, with no properties: write $\(name) for the element",
                offset: path.position)
        }
        var steps: [PathStep] = []
        var (type, target, nullable): (ColumnType, String?, Bool)
        switch element {
        case .object(let table): (type, target, nullable) = (.link, table.name, false)
        case .value(let t, let n): (type, target, nullable) = (t, nil, n)
        }
        var throughOptionalLink = false
        for (i, name) in path.components.enumerated() {
            guard case .object(let table) = element else {
                let reached = PropertyPath(Array(path.components[..<i]), variable: path.variable)
                throw QueryError(
                    .invalidKeyPath, "'\(reached)' is \(type), not a link, and has no property '\(name)'", offset: path.position(of: i))
            }
            if type == .link && nullable { throughOptionalLink = true }
            if let column = table.column(name) {
                steps.append(.column(table: table.name, column))
                if column.type == .link {
                    guard let targetTable = column.linkTarget.flatMap(catalog.table) else {
                        throw QueryError(
                            .unknownProperty, "the link '\(table.name).\(name)' targets a table the catalog lacks",
                            offset: path.position(of: i))
                    }
                    element = .object(targetTable)
                    (type, target, nullable) = (.link, targetTable.name, !column.isList)
                } else {
                    element = .value(column.type, nullable: column.isNullable)
                    (type, target, nullable) = (column.type, nil, column.isNullable)
                }
            } else if let property = linkingObjects.first(where: { $0.table == table.name && $0.name == name }) {
                guard let origin = catalog.table(property.originTable), let column = origin.column(property.originColumn),
                    column.type == .link, column.linkTarget == table.name
                else {
                    throw QueryError(
                        .unknownProperty,
                        "the LinkingObjects property '\(table.name).\(name)' names '\(property.originTable).\(property.originColumn)', which is not a link to \(table.name)",
                        offset: path.position(of: i))
                }
                steps.append(.backlink(originTable: origin.name, originColumn: column))
                element = .object(origin)
                (type, target, nullable) = (.link, origin.name, false)
            } else {
                throw QueryError(.unknownProperty, "'\(table.name)' has no property '\(name)'", offset: path.position(of: i))
            }
        }
        // A nil to-one link makes a to-one path nil; on a to-many path it contributes no values (§7.1).
        let isToMany = steps.contains(where: \.isToMany)
        return BoundKeyPath(
            steps: steps, valueType: type, targetTable: target, isNullable: nullable || (throughOptionalLink && !isToMany),
            variable: path.variable ?? scope.variable)
    }
}
