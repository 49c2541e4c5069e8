import Foundation
import RealmStorage

/// The right side of a string or binary operator, prepared once: its bytes after the options
/// (Spec/QUERY.md §7.3) and, for `LIKE` on strings, its Unicode scalars.
struct TextPattern {
    /// The folded UTF-8 bytes of a string, or the bytes of binary data.
    let bytes: [UInt8]
    /// Whether the pattern came from a string (so `LIKE`'s `?` is one Unicode scalar, not one byte).
    let isString: Bool
    /// For strings: the folded scalars (what `LIKE` walks).
    let scalars: [Unicode.Scalar]

    /// The pattern of a string or binary value; nil for other values (nil, numbers, …).
    init?(_ value: StorageValue, options: ComparisonOptions) {
        switch value {
        case .string(let s):
            let folded = Self.fold(s, options)
            bytes = Array(folded.utf8)
            scalars = Array(folded.unicodeScalars)
            isString = true
        case .binary(let b):
            bytes = b
            scalars = []
            isString = false
        default:
            return nil
        }
    }

    /// Applies `[d]` (canonical decomposition, then no nonspacing marks) and then `[c]` (each
    /// scalar's lowercase mapping).
    static func fold(_ s: String, _ options: ComparisonOptions) -> String {
        if options.isEmpty { return s }
        var out = s
        if options.contains(.diacriticInsensitive) {
            var view = String.UnicodeScalarView()
            view.append(
                contentsOf: s.decomposedStringWithCanonicalMapping.unicodeScalars.filter {
                    $0.properties.generalCategory != .nonspacingMark
                })
            out = String(view)
        }
        if options.contains(.caseInsensitive) {
            var lowered = ""
            lowered.reserveCapacity(out.utf8.count)
            for scalar in out.unicodeScalars {
                if scalar.isASCII {
                    lowered.unicodeScalars.append(
                        scalar.value >= 0x41 && scalar.value <= 0x5A ? Unicode.Scalar(scalar.value + 32)! : scalar)
                } else {
                    lowered += scalar.properties.lowercaseMapping
                }
            }
            out = lowered
        }
        return out
    }

    /// The UTF-8 bytes of `s` lowercased, when `s` is ASCII (where `[c]` is exactly that); nil
    /// otherwise.
    static func asciiLowercased(_ s: String) -> [UInt8]? {
        var out: [UInt8] = []
        out.reserveCapacity(s.utf8.count)
        for b in s.utf8 {
            guard b < 0x80 else { return nil }
            out.append(b >= 0x41 && b <= 0x5A ? b | 0x20 : b)
        }
        return out
    }

    /// Whether `value` (a string or binary value of the same kind) satisfies `op` against this
    /// pattern. Nil values and values of another kind match nothing; an empty pattern makes
    /// `BEGINSWITH`, `ENDSWITH` and `CONTAINS` match nothing (§7.4).
    func matches(_ value: StorageValue, _ op: ComparisonOperator, options: ComparisonOptions) -> Bool {
        switch (value, isString) {
        case (.string(let s), true):
            if op == .like {
                return Self.like(Array(Self.fold(s, options).unicodeScalars), scalars, one: "?", any: "*")
            }
            if options.isEmpty { return test(s.utf8, op) }
            if options == .caseInsensitive, let lowered = Self.asciiLowercased(s) { return test(lowered, op) }
            return test(Self.fold(s, options).utf8, op)
        case (.binary(let b), false):
            return op == .like ? Self.like(b, bytes, one: 0x3F, any: 0x2A) : test(b, op)
        default:
            return false
        }
    }

    /// `==` (after the options), `BEGINSWITH`, `ENDSWITH` or `CONTAINS` on bytes.
    func test<C: BidirectionalCollection<UInt8>>(_ value: C, _ op: ComparisonOperator) -> Bool {
        switch op {
        case .equal, .notEqual, .in: return value.elementsEqual(bytes)
        case .beginsWith: return !bytes.isEmpty && value.starts(with: bytes)
        case .endsWith: return !bytes.isEmpty && value.reversed().starts(with: bytes.reversed())
        case .contains: return !bytes.isEmpty && Self.contains(Array(value), bytes)
        default: return false
        }
    }

    /// Whether `needle` (not empty) occurs in `haystack`.
    static func contains(_ haystack: [UInt8], _ needle: [UInt8]) -> Bool {
        let n = needle.count
        guard n <= haystack.count else { return false }
        let first = needle[0]
        var i = 0
        let last = haystack.count - n
        while i <= last {
            if haystack[i] == first {
                var j = 1
                while j < n && haystack[i + j] == needle[j] { j += 1 }
                if j == n { return true }
            }
            i += 1
        }
        return false
    }

    /// Wildcard match of the whole of `s` against `p`: `one` matches exactly one element, `any` a
    /// run of zero or more (greedy with backtracking to the last `any`, so linear for most patterns).
    static func like<T: Equatable>(_ s: [T], _ p: [T], one: T, any: T) -> Bool {
        var (si, pi) = (0, 0)
        var star = -1
        var mark = 0
        while si < s.count {
            if pi < p.count && p[pi] == any {
                star = pi
                mark = si
                pi += 1
            } else if pi < p.count && (p[pi] == one || p[pi] == s[si]) {
                si += 1
                pi += 1
            } else if star >= 0 {
                pi = star + 1
                mark += 1
                si = mark
            } else {
                return false
            }
        }
        while pi < p.count && p[pi] == any { pi += 1 }
        return pi == p.count
    }
}
