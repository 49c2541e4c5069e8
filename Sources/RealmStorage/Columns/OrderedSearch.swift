extension RandomAccessCollection where Index == Int {
    /// Binary search: the first index whose element is not `before`, for a collection in which every
    /// element that is `before` precedes every element that is not.
    @inline(__always)
    func partitionPoint(_ before: (Element) throws -> Bool) rethrows -> Int {
        var lo = startIndex
        var hi = endIndex
        while lo < hi {
            // Indices are never negative, so the halving is a shift and nothing overflows.
            let mid = lo &+ (hi &- lo) >> 1
            if try before(self[mid]) { lo = mid &+ 1 } else { hi = mid }
        }
        return lo
    }
}

extension RandomAccessCollection where Index == Int, Element: Comparable {
    /// The index of `value` in an ascending collection, or nil.
    @inline(__always)
    func sortedIndex(of value: Element) -> Int? {
        let i = partitionPoint { $0 < value }
        return i < endIndex && self[i] == value ? i : nil
    }
}
