/// A set of rows of one row group, one bit per row: what a scan decides for a group, combined
/// word by word for AND, OR and NOT.
struct RowMask: Equatable {
    /// Bit `r % 64` of word `r / 64` is row `r`; bits past ``count`` are always clear.
    private(set) var words: [UInt64]
    /// The number of rows.
    let count: Int

    /// All rows (`filled`) or none.
    init(count: Int, filled: Bool) {
        self.count = count
        let n = (count + 63) / 64
        words = [UInt64](repeating: filled ? ~0 : 0, count: n)
        if filled && count % 64 != 0 { words[n - 1] = (UInt64(1) << UInt64(count % 64)) - 1 }
    }

    /// A mask from whole words (bits past `count` must be clear).
    init(count: Int, words: [UInt64]) {
        self.count = count
        self.words = words
    }

    /// Whether no row is in the mask.
    var isEmpty: Bool { words.allSatisfy { $0 == 0 } }

    subscript(row: Int) -> Bool {
        get { words[row >> 6] & (UInt64(1) << UInt64(row & 63)) != 0 }
        set {
            if newValue {
                words[row >> 6] |= UInt64(1) << UInt64(row & 63)
            } else {
                words[row >> 6] &= ~(UInt64(1) << UInt64(row & 63))
            }
        }
    }

    /// Keeps the rows also in `other`.
    mutating func formIntersection(_ other: RowMask) {
        for i in words.indices { words[i] &= other.words[i] }
    }

    /// Adds the rows of `other`.
    mutating func formUnion(_ other: RowMask) {
        for i in words.indices { words[i] |= other.words[i] }
    }

    /// Removes the rows of `other`.
    mutating func subtract(_ other: RowMask) {
        for i in words.indices { words[i] &= ~other.words[i] }
    }

    /// Calls `body` with each row in the mask, ascending.
    func forEach(_ body: (Int) throws -> Void) rethrows {
        for (w, word) in words.enumerated() {
            var bits = word
            while bits != 0 {
                let b = bits.trailingZeroBitCount
                try body(w << 6 | b)
                bits &= bits &- 1
            }
        }
    }

    /// The rows of `0..<count` for which `test` holds, decided for every row (for cheap tests,
    /// where a branch-free loop beats visiting only the candidates).
    static func build(count: Int, _ test: (Int) throws -> Bool) rethrows -> RowMask {
        var words = [UInt64](repeating: 0, count: (count + 63) / 64)
        var base = 0
        while base < count {
            let end = Swift.min(base + 64, count)
            var word: UInt64 = 0
            for row in base..<end where try test(row) { word |= UInt64(1) << UInt64(row - base) }
            words[base >> 6] = word
            base = end
        }
        return RowMask(count: count, words: words)
    }

    /// The rows of `candidates` for which `test` holds.
    static func select(_ candidates: RowMask, _ test: (Int) throws -> Bool) rethrows -> RowMask {
        var out = RowMask(count: candidates.count, filled: false)
        try candidates.forEach { row in if try test(row) { out[row] = true } }
        return out
    }
}
