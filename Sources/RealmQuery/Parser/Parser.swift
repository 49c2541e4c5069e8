import RealmStorage

extension QueryPredicate {
    /// Parses a predicate in the NSPredicate format dialect RealmSwift's `filter` accepts
    /// (Spec/QUERY.md §2–§5), taking `arguments` in order for its `%@` and `%K` placeholders.
    ///
    /// ```swift
    /// let p = try QueryPredicate.parse("ANY dogs.name ==[c] %@", arguments: [.value(.string("rex"))])
    /// print(p)   // ANY dogs.name ==[c] "rex"
    /// ```
    ///
    /// Parsing checks the syntax only; ``bind(to:in:linkingObjects:)`` checks names and types.
    ///
    /// - Throws: ``QueryError`` with code `.syntax`, `.invalidLiteral`, `.invalidKeyPath`,
    ///   `.unsupportedOperator` (`MATCHES`), `.argumentCount` or `.invalidArgument`, and the offset
    ///   of the problem in `text`.
    package static func parse(_ text: String, arguments: [QueryArgument] = []) throws(QueryError) -> QueryPredicate {
        var parser = Parser(text: text, tokens: try Lexer.tokens(of: text), arguments: arguments)
        return try parser.parse()
    }
}

/// A recursive-descent parser over the tokens of one query (grammar: Spec/QUERY.md §3).
struct Parser {
    /// How deeply parentheses, `NOT`s and subqueries may nest: a bound on recursion, so that no
    /// input can exhaust the stack.
    static let maximumDepth = 100

    let text: String
    private let tokens: [Token]
    private var index = 0
    private let arguments: [QueryArgument]
    private var argumentsUsed = 0
    private var depth = 0

    init(text: String, tokens: [Token], arguments: [QueryArgument]) {
        self.text = text
        self.tokens = tokens
        self.arguments = arguments
    }

    // MARK: Helpers

    var current: Token { tokens[index] }

    mutating func advance() { if index < tokens.count - 1 { index += 1 } }

    func error(_ code: QueryError.Code, _ message: String, at offset: Int? = nil) -> QueryError {
        QueryError(code, message, offset: offset ?? current.offset, text: text)
    }

    func isPunctuation(_ p: Punctuation) -> Bool { current.kind == .punctuation(p) }

    func isKeyword(_ k: Keyword) -> Bool {
        if case .keyword(k, _) = current.kind { true } else { false }
    }

    /// Consumes `p`, or throws "expected \(expectation), found …".
    mutating func expect(_ p: Punctuation, _ expectation: String) throws(QueryError) {
        guard isPunctuation(p) else { throw error(.syntax, "expected \(expectation), found \(current.quoted)") }
        advance()
    }

    /// Runs `body` one nesting level deeper (an error at the current token if that is too deep).
    mutating func nested<T>(_ body: (inout Parser) throws(QueryError) -> T) throws(QueryError) -> T {
        guard depth < Self.maximumDepth else {
            throw error(.syntax, "the predicate nests deeper than \(Self.maximumDepth) levels")
        }
        depth += 1
        defer { depth -= 1 }
        return try body(&self)
    }

    /// The next argument, for the placeholder at `offset`.
    mutating func nextArgument(at offset: Int) throws(QueryError) -> QueryArgument {
        guard argumentsUsed < arguments.count else {
            throw error(
                .argumentCount,
                "the text has more %@/%K placeholders than the \(arguments.count) argument\(arguments.count == 1 ? "" : "s") given",
                at: offset)
        }
        argumentsUsed += 1
        return arguments[argumentsUsed - 1]
    }

    // MARK: Predicates

    mutating func parse() throws(QueryError) -> QueryPredicate {
        guard current.kind != .end else { throw error(.syntax, "the predicate is empty") }
        let predicate = try parseOr()
        guard current.kind == .end else {
            throw error(.syntax, "unexpected \(current.quoted) after the end of the predicate")
        }
        guard argumentsUsed == arguments.count else {
            throw QueryError(
                .argumentCount, "\(arguments.count) arguments were given but the text has \(argumentsUsed) %@/%K placeholders",
                text: text)
        }
        return predicate
    }

    mutating func parseOr() throws(QueryError) -> QueryPredicate {
        var terms = [try parseAnd()]
        while isKeyword(.or) || isPunctuation(.or) {
            advance()
            terms.append(try parseAnd())
        }
        return terms.count == 1 ? terms[0] : .or(terms.flatMap(\.disjuncts))
    }

    mutating func parseAnd() throws(QueryError) -> QueryPredicate {
        var terms = [try parseNot()]
        while isKeyword(.and) || isPunctuation(.and) {
            advance()
            terms.append(try parseNot())
        }
        return terms.count == 1 ? terms[0] : .and(terms.flatMap(\.conjuncts))
    }

    mutating func parseNot() throws(QueryError) -> QueryPredicate {
        guard isKeyword(.not) || isPunctuation(.not) else { return try parsePrimary() }
        return .not(
            try nested { (p: inout Parser) throws(QueryError) in
                p.advance()
                return try p.parseNot()
            })
    }

    mutating func parsePrimary() throws(QueryError) -> QueryPredicate {
        if isPunctuation(.leftParenthesis) {
            let open = current.offset
            return try nested { (p: inout Parser) throws(QueryError) in
                p.advance()
                let inner = try p.parseOr()
                try p.expect(.rightParenthesis, "')' to close the '(' at offset \(open)")
                return inner
            }
        }
        if isKeyword(.truePredicate) || isKeyword(.falsePredicate) {
            defer { advance() }
            return .constant(isKeyword(.truePredicate))
        }
        return .comparison(try parseComparison())
    }

    // MARK: Comparisons

    mutating func parseComparison() throws(QueryError) -> QueryComparison {
        let start = current.offset
        var modifier: CollectionModifier?
        if case .keyword(let k, _) = current.kind {
            switch k {
            case .any, .some: modifier = .any
            case .all: modifier = .all
            case .none: modifier = CollectionModifier.none
            default: break
            }
            if modifier != nil { advance() }
        }
        let left = try parseExpression(after: modifier.map { "'\($0)'" })
        let operatorToken = current
        guard let op = try comparisonOperator() else {
            throw error(.syntax, "expected a comparison operator after '\(left)', found \(current.quoted)")
        }
        advance()
        let options = try parseOptions()
        let right = try parseExpression(after: "'\(operatorToken.text)'")
        return QueryComparison(
            left, op, right, options: options, modifier: modifier, position: start, operatorPosition: operatorToken.offset)
    }

    func comparisonOperator() throws(QueryError) -> ComparisonOperator? {
        switch current.kind {
        case .comparison(let op): return op
        case .keyword(.matches, _):
            throw error(.unsupportedOperator, "MATCHES (regular expressions) is not supported; use LIKE with ? and * wildcards")
        case .keyword(let k, _): return ComparisonOperator(rawValue: k.rawValue)  // BETWEEN, IN, BEGINSWITH, …
        default: return nil
        }
    }

    /// `[c]`, `[d]`, `[cd]` (or `[dc]`), letters in any case.
    mutating func parseOptions() throws(QueryError) -> ComparisonOptions {
        guard isPunctuation(.leftBracket) else { return [] }
        advance()
        let letters = current
        var options: ComparisonOptions = []
        guard case .identifier(let word) = letters.kind else {
            throw error(.syntax, "expected options [c], [d] or [cd], found \(current.quoted)")
        }
        for letter in word.lowercased() {
            let option: ComparisonOptions? = letter == "c" ? .caseInsensitive : letter == "d" ? .diacriticInsensitive : nil
            guard let option, !options.contains(option) else {
                throw error(.syntax, "unknown options '[\(word)]': use [c], [d] or [cd]")
            }
            options.insert(option)
        }
        advance()
        try expect(.rightBracket, "']' after the options")
        return options
    }
}
