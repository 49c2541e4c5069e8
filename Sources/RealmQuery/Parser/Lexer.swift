import Foundation

/// Splits query text into tokens (Spec/QUERY.md §2). Works on Unicode scalars, so offsets in
/// errors and in the syntax tree count scalars.
struct Lexer {
    private let text: String
    private let scalars: [Unicode.Scalar]
    private var i = 0

    /// The tokens of `text`, ending with one `.end` token.
    static func tokens(of text: String) throws(QueryError) -> [Token] {
        var lexer = Lexer(text: text)
        var tokens: [Token] = []
        while true {
            let token = try lexer.next()
            tokens.append(token)
            if token.kind == .end { return tokens }
        }
    }

    private init(text: String) {
        self.text = text
        self.scalars = Array(text.unicodeScalars)
    }

    private func peek(_ ahead: Int = 0) -> Unicode.Scalar? {
        i + ahead < scalars.count ? scalars[i + ahead] : nil
    }

    private func error(_ code: QueryError.Code, _ message: String, at offset: Int) -> QueryError {
        QueryError(code, message, offset: offset, text: text)
    }

    private func spelling(from start: Int) -> String {
        // Scalar by scalar: appending the slice at once goes through the standard library's
        // unspecialized generic code, whose first use in a process searched every protocol
        // conformance for the slice's.
        var text = String()
        for s in scalars[start..<i] { text.unicodeScalars.append(s) }
        return text
    }

    private func token(_ kind: Token.Kind, from start: Int) -> Token {
        Token(kind: kind, offset: start, text: spelling(from: start))
    }

    private static func isDigit(_ s: Unicode.Scalar?) -> Bool { s.map { ("0"..."9").contains($0) } ?? false }

    private mutating func next() throws(QueryError) -> Token {
        while let s = peek(), s.properties.isWhitespace { i += 1 }
        let start = i
        guard let s = peek() else { return Token(kind: .end, offset: i, text: "") }
        switch s {
        case "(", ")", "{", "}", "[", "]", ",":
            i += 1
            return token(.punctuation(Punctuation(rawValue: String(s))!), from: start)
        case "." where !Self.isDigit(peek(1)):
            i += 1
            return token(.punctuation(.dot), from: start)
        case "=", "!", "<", ">", "&", "|":
            return try operatorToken()
        case "'", "\"":
            return try stringLiteral()
        case "%":
            let specifier = peek(1)
            i += specifier == nil ? 1 : 2
            switch specifier {
            case "@": return token(.argument, from: start)
            case "K": return token(.keyPathArgument, from: start)
            default:
                throw error(
                    .syntax, "unsupported format specifier '\(spelling(from: start))': use %@ for values and %K for key paths",
                    at: start)
            }
        case "#", "$", "@":
            i += 1
            guard let first = peek(), Keyword.isIdentifierStart(first) else {
                throw error(.syntax, "expected a name after '\(s)'", at: start)
            }
            let name = word()
            let kind: Token.Kind = s == "#" ? .identifier(name) : s == "$" ? .variable(name) : .collectionOperator(name)
            return token(kind, from: start)
        case "-" where Self.isDigit(peek(1)) || (peek(1) == "." && Self.isDigit(peek(2))):
            return try number()
        case "-", "+", "*", "/":
            throw error(.syntax, "unexpected '\(s)': arithmetic is not supported", at: start)
        default:
            if Self.isDigit(s) || s == "." { return try number() }
            guard Keyword.isIdentifierStart(s) else { throw error(.syntax, "unexpected character '\(s)'", at: start) }
            if s == "T", let literal = try timestampLiteral() { return literal }
            let name = word()
            if let literal = try typedLiteral(name, from: start) { return literal }
            return token(Keyword(word: name).map { .keyword($0, name) } ?? .identifier(name), from: start)
        }
    }

    // MARK: Typed literals

    /// The typed literal that starts with the word `name` (just read), if it is one: `oid(` and
    /// 24 hexadecimal digits `)`, `uuid(` and a UUID `)`, `B64` and a string of base64 (Realm's
    /// query language spells them so; timestamps are ``timestampLiteral()``).
    private mutating func typedLiteral(_ name: String, from start: Int) throws(QueryError) -> Token? {
        switch name {
        case "oid" where peek() == "(", "uuid" where peek() == "(":
            i += 1
            let contentStart = i
            while let s = peek(), s != ")" { i += 1 }
            guard peek() == ")" else { throw error(.syntax, "unterminated \(name)( literal", at: start) }
            let content = spelling(from: contentStart).trimmingCharacters(in: .whitespaces)
            i += 1
            if name == "oid" {
                guard let bytes = ValueConversion.objectIdBytes(content) else {
                    throw error(.invalidLiteral, "an ObjectId literal holds 24 hexadecimal digits: oid(\(content))", at: start)
                }
                return token(.typed(.objectId(bytes)), from: start)
            }
            guard let uuid = UUID(uuidString: content) else { throw error(.invalidLiteral, "not a UUID: uuid(\(content))", at: start) }
            return token(.typed(.uuid(uuid)), from: start)
        case "B64" where peek() == "\"" || peek() == "'":
            guard case .string(let text) = try stringLiteral().kind, let data = Data(base64Encoded: text) else {
                throw error(.invalidLiteral, "not base64 in a B64 literal", at: start)
            }
            return token(.typed(.binary(Array(data))), from: start)
        default:
            return nil
        }
    }

    /// `T<seconds>:<nanoseconds>` at `T` (each number possibly negative); nil, having read
    /// nothing, when the text there is not one (a name such as `T1`).
    private mutating func timestampLiteral() throws(QueryError) -> Token? {
        let start = i
        i += 1
        guard let seconds = signedDigits(), peek() == ":", Self.isDigit(peek(1)) || (peek(1) == "-" && Self.isDigit(peek(2))) else {
            i = start
            return nil
        }
        i += 1
        guard let s = Int64(seconds), let ns = signedDigits().flatMap({ Int32($0) }), abs(ns) < 1_000_000_000,
            ns == 0 || s == 0 || (s < 0) == (ns < 0)
        else {
            throw error(.invalidLiteral, "a timestamp literal's seconds and nanoseconds are out of range or of different signs", at: start)
        }
        return token(.typed(.timestamp(seconds: s, nanoseconds: ns)), from: start)
    }

    /// An optional `-` and digits; nil, having read nothing, when there are no digits.
    private mutating func signedDigits() -> String? {
        let start = i
        if peek() == "-" { i += 1 }
        let digits = i
        while Self.isDigit(peek()) { i += 1 }
        guard i > digits else {
            i = start
            return nil
        }
        return spelling(from: start)
    }

    /// Reads an identifier's characters.
    private mutating func word() -> String {
        let start = i
        while let s = peek(), Keyword.isIdentifierContinuation(s) { i += 1 }
        return spelling(from: start)
    }

    private mutating func operatorToken() throws(QueryError) -> Token {
        let start = i
        let first = scalars[i]
        let second = peek(1)
        let two: Token.Kind? =
            switch (first, second) {
            case ("=", "="): .comparison(.equal)
            case ("=", "<"): .comparison(.lessOrEqual)
            case ("=", ">"): .comparison(.greaterOrEqual)
            case ("!", "="): .comparison(.notEqual)
            case ("<", "="): .comparison(.lessOrEqual)
            case ("<", ">"): .comparison(.notEqual)
            case (">", "="): .comparison(.greaterOrEqual)
            case ("&", "&"): .punctuation(.and)
            case ("|", "|"): .punctuation(.or)
            default: nil
            }
        if let two {
            i += 2
            return token(two, from: start)
        }
        i += 1
        switch first {
        case "=": return token(.comparison(.equal), from: start)
        case "!": return token(.punctuation(.not), from: start)
        case "<": return token(.comparison(.less), from: start)
        case ">": return token(.comparison(.greater), from: start)
        default: throw error(.syntax, "unexpected '\(first)': use '\(first)\(first)'", at: start)
        }
    }

    // MARK: Numbers

    private mutating func number() throws(QueryError) -> Token {
        let start = i
        let negative = peek() == "-"
        if negative { i += 1 }
        if peek() == "0", let radixMark = peek(1), let radix = ["x": 16, "X": 16, "o": 8, "O": 8, "b": 2, "B": 2][radixMark] {
            i += 2
            let digitsStart = i
            while let s = peek(), Keyword.isIdentifierContinuation(s) { i += 1 }
            let digits = spelling(from: digitsStart)
            guard !digits.isEmpty, let magnitude = UInt64(digits, radix: radix) else {
                throw error(.invalidLiteral, "malformed or too large integer literal '\(spelling(from: start))'", at: start)
            }
            return token(.integer(try integer(magnitude, negative: negative, from: start)), from: start)
        }
        var isFractional = false
        while Self.isDigit(peek()) { i += 1 }
        if peek() == ".", Self.isDigit(peek(1)) {
            isFractional = true
            i += 1
            while Self.isDigit(peek()) { i += 1 }
        }
        if peek() == "e" || peek() == "E",
            Self.isDigit(peek(1)) || ((peek(1) == "+" || peek(1) == "-") && Self.isDigit(peek(2)))
        {
            isFractional = true
            i += 2
            while Self.isDigit(peek()) { i += 1 }
        }
        if let s = peek(), Keyword.isIdentifierContinuation(s) {
            throw error(.invalidLiteral, "malformed number '\(spelling(from: start))\(s)'", at: start)
        }
        let text = spelling(from: start)
        if isFractional { return token(.fractional(text), from: start) }
        guard let magnitude = UInt64(text.drop { $0 == "-" }) else {
            throw error(.invalidLiteral, "integer literal \(text) does not fit in 64 bits", at: start)
        }
        return token(.integer(try integer(magnitude, negative: negative, from: start)), from: start)
    }

    private func integer(_ magnitude: UInt64, negative: Bool, from start: Int) throws(QueryError) -> Int64 {
        if negative, magnitude <= UInt64(Int64.max) + 1 { return Int64(bitPattern: 0 &- magnitude) }
        if !negative, magnitude <= UInt64(Int64.max) { return Int64(magnitude) }
        throw error(.invalidLiteral, "integer literal \(spelling(from: start)) does not fit in 64 bits", at: start)
    }

    // MARK: Strings

    private mutating func stringLiteral() throws(QueryError) -> Token {
        let start = i
        let quote = scalars[i]
        i += 1
        var value = String.UnicodeScalarView()
        while true {
            guard let s = peek() else { throw error(.syntax, "unterminated string literal", at: start) }
            i += 1
            if s == quote { break }
            if s == "\\" {
                value.append(try escape(at: i - 1))
            } else {
                value.append(s)
            }
        }
        return token(.string(String(value)), from: start)
    }

    /// Reads the escape sequence whose backslash is at `at` (`i` is just after it).
    private mutating func escape(at: Int) throws(QueryError) -> Unicode.Scalar {
        guard let e = peek() else { throw error(.syntax, "unterminated string literal", at: at) }
        i += 1
        switch e {
        case "n": return "\n"
        case "t": return "\t"
        case "r": return "\r"
        case "0": return "\0"
        case "a": return "\u{07}"
        case "b": return "\u{08}"
        case "f": return "\u{0C}"
        case "v": return "\u{0B}"
        case "\\", "'", "\"": return e
        case "x":
            return try scalar(hexDigits(2, escapeAt: at), escapeAt: at)
        case "u":
            let value: UInt32
            if peek() == "{" {
                i += 1
                let digitsStart = i
                while let s = peek(), s.properties.isASCIIHexDigit { i += 1 }
                guard i > digitsStart, i - digitsStart <= 6, peek() == "}" else {
                    throw error(.invalidLiteral, "malformed \\u{…} escape", at: at)
                }
                value = UInt32(spelling(from: digitsStart), radix: 16)!
                i += 1
            } else {
                value = try hexDigits(4, escapeAt: at)
                if (0xD800..<0xDC00).contains(value) {
                    // A UTF-16 surrogate pair written as two \u escapes.
                    guard peek() == "\\", peek(1) == "u" else { throw error(.invalidLiteral, "unpaired surrogate in \\u escape", at: at) }
                    i += 2
                    let low = try hexDigits(4, escapeAt: at)
                    guard (0xDC00..<0xE000).contains(low) else { throw error(.invalidLiteral, "unpaired surrogate in \\u escape", at: at) }
                    return try scalar(0x10000 + ((value - 0xD800) << 10) + (low - 0xDC00), escapeAt: at)
                }
            }
            return try scalar(value, escapeAt: at)
        default:
            throw error(.invalidLiteral, "unknown escape sequence '\\\(e)'", at: at)
        }
    }

    private mutating func hexDigits(_ count: Int, escapeAt: Int) throws(QueryError) -> UInt32 {
        let digitsStart = i
        while i - digitsStart < count, let s = peek(), s.properties.isASCIIHexDigit { i += 1 }
        guard i - digitsStart == count else {
            throw error(.invalidLiteral, "escape needs \(count) hexadecimal digits", at: escapeAt)
        }
        return UInt32(spelling(from: digitsStart), radix: 16)!
    }

    private func scalar(_ value: UInt32, escapeAt: Int) throws(QueryError) -> Unicode.Scalar {
        guard let s = Unicode.Scalar(value) else {
            throw error(.invalidLiteral, "escape names no Unicode scalar (U+\(String(value, radix: 16, uppercase: true)))", at: escapeAt)
        }
        return s
    }
}
