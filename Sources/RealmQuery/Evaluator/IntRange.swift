import RealmStorage

/// A test on the non-null raw values of an int, bool or link column as one inclusive range (or
/// its complement, or a small set for `IN`), scanned over a segment's integer lane without
/// decoding values.
struct IntRange {
    /// Matching values are `lo...lo + span` (unsigned arithmetic), unless ``isEmpty``.
    let lo: Int64
    let span: UInt64
    let isEmpty: Bool
    /// Whether the match is the complement.
    let negated: Bool
    /// For `IN`: the matching values (the range is unused).
    let set: Set<Int64>?

    /// The range of `test`, or nil when its constants are not raw integers.
    init?(_ test: ValueTest) {
        func raw(_ v: StorageValue) -> Int64?? {
            switch v {
            case .int(let i): .some(i)
            case .bool(let b): .some(b ? 1 : 0)
            case .link(let k): .some(k.rawValue)
            case .null: .some(nil)
            default: nil
            }
        }
        var (lo, hi, negated): (Int64, Int64, Bool) = (1, 0, false)
        var set: Set<Int64>?
        switch test.op {
        case .in:
            var values = Set<Int64>()
            for v in test.list {
                guard let r = raw(v) else { return nil }
                if let r { values.insert(r) }
            }
            set = values
        case .between:
            guard test.list.count == 2, let a = raw(test.list[0]) ?? nil, let b = raw(test.list[1]) ?? nil else { return nil }
            (lo, hi) = (a, b)
        default:
            guard let constant = test.constant, let r = raw(constant) else { return nil }
            // Against nil, non-nil values are unequal and unordered: an empty range (negated for !=).
            guard let c = r else {
                negated = test.op == .notEqual
                break
            }
            switch test.op {
            case .equal: (lo, hi) = (c, c)
            case .notEqual: (lo, hi, negated) = (c, c, true)
            case .less: if c != .min { (lo, hi) = (.min, c - 1) }
            case .lessOrEqual: (lo, hi) = (.min, c)
            case .greater: if c != .max { (lo, hi) = (c + 1, .max) }
            case .greaterOrEqual: (lo, hi) = (c, .max)
            default: return nil
            }
        }
        self.lo = lo
        self.span = UInt64(bitPattern: hi &- lo)
        self.isEmpty = lo > hi
        self.negated = negated
        self.set = set
    }

    /// Whether the raw value `x` matches.
    @inline(__always)
    func matches(_ x: Int64) -> Bool {
        if let set { return set.contains(x) }
        return !isEmpty && UInt64(bitPattern: x &- lo) <= span ? !negated : negated
    }

    /// The rows of `lane` whose values match (null rows unspecified: the caller fixes them).
    func mask(_ lane: IntegerLane) -> RowMask {
        let n = lane.count
        if set == nil {
            // Whole groups from the bounds of a packed lane: all values match or none does.
            if isEmpty { return RowMask(count: n, filled: negated) }
            if case .packed(let p) = lane, p.slope == 0 {
                let low = Int128(p.reference)
                let high = low + (p.width >= 64 ? Int128(UInt64.max) : Int128((UInt64(1) << UInt64(p.width)) - 1))
                let (a, b) = (Int128(lo), Int128(lo) + Int128(span))
                if a <= low && high <= b { return RowMask(count: n, filled: !negated) }
                if high < a || b < low { return RowMask(count: n, filled: negated) }
            }
        }
        var words = [UInt64](repeating: 0, count: (n + 63) / 64)
        fill(lane.array, &words)
        return RowMask(count: n, words: words)
    }

    private func fill(_ values: [Int64], _ words: inout [UInt64]) {
        let n = values.count
        if let set {
            for i in 0..<n where set.contains(values[i]) { words[i >> 6] |= UInt64(1) << UInt64(i & 63) }
            return
        }
        let flip: UInt64 = negated ? 1 : 0
        let (lo, span) = (self.lo, self.span)
        var base = 0
        while base < n {
            let end = min(base + 64, n)
            var word: UInt64 = 0
            for i in base..<end {
                let hit: UInt64 = UInt64(bitPattern: values[i] &- lo) <= span ? 1 : 0
                word |= (hit ^ flip) << UInt64(i - base)
            }
            words[base >> 6] = word
            base = end
        }
    }
}
