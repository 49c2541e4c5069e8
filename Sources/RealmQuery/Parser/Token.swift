import RealmStorage

/// A token of the query text (Spec/QUERY.md §2).
struct Token: Equatable {
    enum Kind: Equatable {
        /// A property name: an identifier that is not a reserved word, or any `#`-escaped word.
        case identifier(String)
        /// A reserved word, with its spelling (a reserved word after `.` is a property name).
        case keyword(Keyword, String)
        /// `$name`.
        case variable(String)
        /// `@name`.
        case collectionOperator(String)
        case integer(Int64)
        /// A number with a fraction or exponent, as written (sign included).
        case fractional(String)
        case string(String)
        /// A typed literal: `oid(…)`, `uuid(…)`, `T<seconds>:<nanoseconds>`, `B64"…"`.
        case typed(StorageValue)
        /// `%@`.
        case argument
        /// `%K`.
        case keyPathArgument
        case punctuation(Punctuation)
        /// `==` `=` `!=` `<>` `<` `<=` `=<` `>` `>=` `=>`.
        case comparison(ComparisonOperator)
        case end
    }

    var kind: Kind
    /// Offset of the token's first Unicode scalar.
    var offset: Int
    /// The token as written.
    var text: String

    /// How error messages name the token.
    var quoted: String { kind == .end ? "the end of the text" : "'\(text)'" }
}

/// Punctuation and the logical operators, by canonical spelling.
enum Punctuation: String, Equatable {
    case leftParenthesis = "("
    case rightParenthesis = ")"
    case leftBrace = "{"
    case rightBrace = "}"
    case leftBracket = "["
    case rightBracket = "]"
    case comma = ","
    case dot = "."
    case and = "&&"
    case or = "||"
    case not = "!"
}

/// The reserved words, matched case-insensitively. A property with one of these names is written
/// `#name` (or after a `.`, where no reserved word can stand).
enum Keyword: String, CaseIterable {
    case and = "AND"
    case or = "OR"
    case not = "NOT"
    case between = "BETWEEN"
    case `in` = "IN"
    case beginsWith = "BEGINSWITH"
    case endsWith = "ENDSWITH"
    case contains = "CONTAINS"
    case like = "LIKE"
    case matches = "MATCHES"
    case any = "ANY"
    case some = "SOME"
    case all = "ALL"
    case none = "NONE"
    case subquery = "SUBQUERY"
    case truePredicate = "TRUEPREDICATE"
    case falsePredicate = "FALSEPREDICATE"
    case `nil` = "NIL"
    case null = "NULL"
    case `true` = "TRUE"
    case `false` = "FALSE"
    case yes = "YES"
    case no = "NO"

    /// The reserved word spelled `word` in any case.
    init?(word: String) {
        self.init(rawValue: word.uppercased())
    }

    /// Whether `name` must be written `#name` to read as a property name at the start of a key path.
    static func needsEscape(_ name: String) -> Bool {
        Keyword(word: name) != nil || !isIdentifier(name)
    }

    /// Whether `name` is an identifier: a letter or `_`, then letters, digits, marks or `_`.
    static func isIdentifier(_ name: String) -> Bool {
        guard let first = name.unicodeScalars.first, isIdentifierStart(first) else { return false }
        return name.unicodeScalars.dropFirst().allSatisfy(isIdentifierContinuation)
    }

    static func isIdentifierStart(_ s: Unicode.Scalar) -> Bool {
        s == "_" || s.properties.isAlphabetic
    }

    static func isIdentifierContinuation(_ s: Unicode.Scalar) -> Bool {
        if isIdentifierStart(s) { return true }
        switch s.properties.generalCategory {
        case .decimalNumber, .nonspacingMark, .spacingMark: return true
        default: return false
        }
    }
}
