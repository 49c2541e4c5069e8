/// An error in a query: its text does not parse, or it does not fit the schema it is bound to.
///
/// A query is text supplied at run time, so every problem with it is thrown, never trapped
/// (CONTRIBUTING.md, "Style"). The error carries a stable ``Code``, a message, and where it can be pinned down
/// the ``offset`` into the query ``text``; ``description`` prints the text with a caret under that
/// position:
///
/// ```swift
/// do { _ = try QueryPredicate.parse("age >> 5") }
/// catch QueryError.syntax { /* … */ }
/// // QueryError.syntax: expected a key path or a value after '>', found '>' (at offset 5)
/// //   age >> 5
/// //        ^
/// ```
///
/// Offsets count Unicode scalars from the start of the text (for text without combining sequences,
/// that is the character offset). `Sendable`.
package struct QueryError: Error, CustomStringConvertible, Sendable, Equatable {
    /// Stable error codes. Raw values are never reused.
    package enum Code: Int, Sendable, CaseIterable {
        /// The text is not a predicate of the grammar in Spec/QUERY.md §3.
        case syntax = 1
        /// A key path names a property that its class does not have.
        case unknownProperty = 2
        /// The two sides of a comparison, or a constant and its property, have incompatible types.
        case typeMismatch = 3
        /// The operator, option or modifier does not apply to the operands (e.g. `<` on a bool).
        case unsupportedOperator = 4
        /// The text uses more `%@`/`%K` placeholders than arguments were given, or fewer.
        case argumentCount = 5
        /// An argument does not fit its placeholder (a key path for `%@`, a list where one value goes, …).
        case invalidArgument = 6
        /// A key path is malformed for its use: a collection operator in the wrong place, a property
        /// after a non-link, an aggregate without a list.
        case invalidKeyPath = 7
        /// A `$variable` is used outside its `SUBQUERY`, a key path inside a `SUBQUERY` starts with
        /// another variable, or names a property of an element that is a value.
        case unknownVariable = 8
        /// A literal cannot be represented: an integer beyond 64 bits, a bad escape in a string, a
        /// decimal with more than 34 significant digits.
        case invalidLiteral = 9
        /// An aggregate's result does not fit its type: a sum of ints beyond `Int64`.
        case overflow = 10
    }

    /// What went wrong, as a stable code.
    package var code: Code
    /// A human-readable explanation.
    package var message: String
    /// Where in ``text`` the problem is, in Unicode scalars from its start; `nil` when the problem
    /// has no single place (too many arguments) or the predicate was not parsed from text.
    package var offset: Int?
    /// The query text, when the predicate was parsed from text.
    package var text: String?

    /// Creates an error.
    package init(_ code: Code, _ message: String, offset: Int? = nil, text: String? = nil) {
        self.code = code
        self.message = message
        self.offset = offset
        self.text = text
    }

    /// The same error, with `text` as the query it refers to (unless it already has one).
    package func inText(_ text: String) -> QueryError {
        var e = self
        if e.text == nil { e.text = text }
        return e
    }

    /// The code, the message, and (when both are known) the offending line with a caret under
    /// ``offset``.
    package var description: String {
        var s = "QueryError.\(code): \(message)"
        guard let offset else { return s }
        s += " (at offset \(offset))"
        guard let text else { return s }
        let scalars = Array(text.unicodeScalars)
        let at = min(max(0, offset), scalars.count)
        var start = at
        while start > 0 && scalars[start - 1] != "\n" { start -= 1 }
        var end = at
        while end < scalars.count && scalars[end] != "\n" { end += 1 }
        func shown(_ range: Range<Int>) -> String {
            var view = String.UnicodeScalarView()
            view.append(contentsOf: scalars[range].map { $0 == "\t" ? " " : $0 })
            return String(view)
        }
        let column = shown(start..<at).count
        s += "\n  " + shown(start..<end) + "\n  " + String(repeating: " ", count: column) + "^"
        return s
    }

    // The codes as members of the error type, so that `catch QueryError.syntax` reads naturally.

    /// ``Code/syntax``.
    package static let syntax = Code.syntax
    /// ``Code/unknownProperty``.
    package static let unknownProperty = Code.unknownProperty
    /// ``Code/typeMismatch``.
    package static let typeMismatch = Code.typeMismatch
    /// ``Code/unsupportedOperator``.
    package static let unsupportedOperator = Code.unsupportedOperator
    /// ``Code/argumentCount``.
    package static let argumentCount = Code.argumentCount
    /// ``Code/invalidArgument``.
    package static let invalidArgument = Code.invalidArgument
    /// ``Code/invalidKeyPath``.
    package static let invalidKeyPath = Code.invalidKeyPath
    /// ``Code/unknownVariable``.
    package static let unknownVariable = Code.unknownVariable
    /// ``Code/invalidLiteral``.
    package static let invalidLiteral = Code.invalidLiteral
    /// ``Code/overflow``.
    package static let overflow = Code.overflow
}

/// Lets `catch QueryError.typeMismatch` match a ``QueryError`` with that code.
package func ~= (code: QueryError.Code, error: any Error) -> Bool {
    (error as? QueryError)?.code == code
}
