import RealmStorage

/// Expressions: constants, lists, key paths with collection operators, `SUBQUERY`, placeholders.
extension Parser {
    /// One side of a comparison. `context` names what came before, for the error message.
    mutating func parseExpression(after context: String?) throws(QueryError) -> QueryExpression {
        let start = current.offset
        switch current.kind {
        case .integer(let v):
            advance()
            return QueryExpression(.constant(.integer(v)), position: start)
        case .fractional(let text):
            advance()
            return QueryExpression(.constant(.fractional(text)), position: start)
        case .string(let s):
            advance()
            return QueryExpression(.constant(.string(s)), position: start)
        case .typed(let v):
            advance()
            return QueryExpression(.constant(.typed(v)), position: start)
        case .keyword(.nil, _), .keyword(.null, _):
            advance()
            return QueryExpression(.constant(.null), position: start)
        case .keyword(.true, _), .keyword(.yes, _):
            advance()
            return QueryExpression(.constant(.bool(true)), position: start)
        case .keyword(.false, _), .keyword(.no, _):
            advance()
            return QueryExpression(.constant(.bool(false)), position: start)
        case .keyword(.subquery, _):
            return QueryExpression(.subqueryCount(try parseSubquery()), position: start)
        case .punctuation(.leftBrace):
            return QueryExpression(.constant(try parseList()), position: start)
        case .argument:
            advance()
            return QueryExpression(.constant(try value(of: nextArgument(at: start), at: start)), position: start)
        case .identifier, .variable, .keyPathArgument:
            return try parseKeyPath()
        case .collectionOperator(let name):
            throw error(.invalidKeyPath, "a key path cannot start with '@\(name)'; write the collection before it (dogs.@\(name))")
        case .keyword(_, let word):
            throw error(
                .syntax,
                "expected a key path or a value\(context.map { " after \($0)" } ?? ""), found the reserved word '\(word)' (write #\(word) for a property of that name)"
            )
        default:
            throw error(.syntax, "expected a key path or a value\(context.map { " after \($0)" } ?? ""), found \(current.quoted)")
        }
    }

    /// The constant for a `%@` argument.
    func value(of argument: QueryArgument, at offset: Int) throws(QueryError) -> QueryValue {
        if case .keyPath(let path) = argument {
            throw error(.invalidArgument, "the key path argument '\(path)' goes with %K, not %@", at: offset)
        }
        return QueryValue(argument: argument)!
    }

    /// `{a, b, …}`: constants and `%@` values, not nested.
    mutating func parseList() throws(QueryError) -> QueryValue {
        let open = current.offset
        advance()
        var items: [QueryValue] = []
        if isPunctuation(.rightBrace) {
            advance()
            return .list(items)
        }
        while true {
            // Checked before parsing the element, so that `{{{…` cannot recurse.
            if isPunctuation(.leftBrace) { throw error(.syntax, "lists cannot be nested") }
            let element = try parseExpression(after: items.isEmpty ? "'{'" : "','")
            guard case .constant(let value) = element.kind else {
                throw error(.syntax, "a list holds constants only, not '\(element)'", at: element.position)
            }
            if case .list = value { throw error(.syntax, "lists cannot be nested", at: element.position) }
            items.append(value)
            if isPunctuation(.comma) {
                advance()
            } else if isPunctuation(.rightBrace) {
                advance()
                return .list(items)
            } else {
                throw error(.syntax, "expected ',' or '}' in the list opened at offset \(open), found \(current.quoted)")
            }
        }
    }

    // MARK: Key paths

    private enum Part {
        case name(String, at: Int)
        case collectionOperator(String, at: Int)
    }

    /// `name(.name)*`, `$var(.name)*` or with `%K` parts, with at most one collection operator.
    mutating func parseKeyPath() throws(QueryError) -> QueryExpression {
        let start = current.offset
        var variable: String?
        var parts: [Part] = []
        switch current.kind {
        case .variable(let name): variable = name
        case .identifier(let name): parts.append(.name(name, at: start))
        default: parts += try keyPathArgument()
        }
        advance()
        while isPunctuation(.dot) {
            advance()
            let at = current.offset
            switch current.kind {
            case .identifier(let name), .keyword(_, let name): parts.append(.name(name, at: at))
            case .collectionOperator(let name): parts.append(.collectionOperator(name, at: at))
            case .keyPathArgument: parts += try keyPathArgument()
            default: throw error(.syntax, "expected a property name after '.', found \(current.quoted)")
            }
            advance()
        }
        return QueryExpression(try keyPathExpression(parts, variable: variable, start: start), position: start)
    }

    /// The parts of the key path given for the `%K` at the current token.
    private mutating func keyPathArgument() throws(QueryError) -> [Part] {
        let at = current.offset
        let path: String
        switch try nextArgument(at: at) {
        case .keyPath(let p), .value(.string(let p)): path = p
        default: throw error(.invalidArgument, "%K needs a key path (a string) as its argument", at: at)
        }
        let names = path.split(separator: ".", omittingEmptySubsequences: false).map(String.init)
        return try names.map { (name: String) throws(QueryError) -> Part in
            if name.hasPrefix("@"), Keyword.isIdentifier(String(name.dropFirst())) {
                return .collectionOperator(String(name.dropFirst()), at: at)
            }
            guard Keyword.isIdentifier(name) else {
                throw error(.invalidArgument, "the %K argument '\(path)' is not a key path", at: at)
            }
            return .name(name, at: at)
        }
    }

    private func keyPathExpression(_ parts: [Part], variable: String?, start: Int) throws(QueryError) -> QueryExpression.Kind {
        var names: [String] = []
        var positions: [Int] = []
        var aggregate: (function: AggregateFunction, at: Int, index: Int)?
        for part in parts {
            switch part {
            case .name(let name, let at):
                names.append(name)
                positions.append(at)
            case .collectionOperator(let name, let at):
                guard let function = AggregateFunction(operatorName: name) else {
                    throw error(
                        .invalidKeyPath, "unknown collection operator '@\(name)'; use @count, @size, @min, @max, @sum or @avg", at: at)
                }
                guard aggregate == nil else { throw error(.invalidKeyPath, "a key path can have only one collection operator", at: at) }
                guard !names.isEmpty || variable != nil else {
                    throw error(.invalidKeyPath, "'@\(name)' needs a collection before it", at: at)
                }
                aggregate = (function, at, names.count)
            }
        }
        guard let aggregate else {
            return .keyPath(PropertyPath(names, variable: variable, componentPositions: positions, position: start))
        }
        let split = aggregate.index
        let collection = PropertyPath(
            Array(names[..<split]), variable: variable, componentPositions: Array(positions[..<split]), position: start)
        guard split < names.count else { return .aggregate(aggregate.function, collection: collection, property: nil) }
        guard aggregate.function != .count else {
            throw error(.invalidKeyPath, "@count must end its key path", at: aggregate.at)
        }
        let property = PropertyPath(
            Array(names[split...]), componentPositions: Array(positions[split...]), position: positions[split])
        return .aggregate(aggregate.function, collection: collection, property: property)
    }

    // MARK: SUBQUERY

    /// `SUBQUERY(collection, $variable, predicate).@count` (or `.@size`).
    mutating func parseSubquery() throws(QueryError) -> Subquery {
        advance()
        try expect(.leftParenthesis, "'(' after SUBQUERY")
        let collectionStart = current.offset
        switch current.kind {
        case .identifier, .variable, .keyPathArgument: break
        default:
            throw error(.syntax, "expected the key path of a collection as the first argument of SUBQUERY, found \(current.quoted)")
        }
        guard case .keyPath(let collection) = try parseKeyPath().kind else {
            throw error(.invalidKeyPath, "the collection of a SUBQUERY cannot have a collection operator", at: collectionStart)
        }
        try expect(.comma, "',' after the collection of SUBQUERY")
        guard case .variable(let variable) = current.kind else {
            throw error(.syntax, "expected a $variable as the second argument of SUBQUERY, found \(current.quoted)")
        }
        advance()
        try expect(.comma, "',' after the variable of SUBQUERY")
        let predicate = try nested { (p: inout Parser) throws(QueryError) in try p.parseOr() }
        try expect(.rightParenthesis, "')' to close SUBQUERY")
        guard isPunctuation(.dot) else { throw error(.syntax, "SUBQUERY(…) must be followed by .@count") }
        advance()
        guard case .collectionOperator(let name) = current.kind, AggregateFunction(operatorName: name) == .count else {
            throw error(.syntax, "SUBQUERY(…) must be followed by .@count, found \(current.quoted)")
        }
        advance()
        return Subquery(collection: collection, variable: variable, predicate: predicate)
    }
}
