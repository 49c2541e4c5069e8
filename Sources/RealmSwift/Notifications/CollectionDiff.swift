import RealmStorage

/// The difference between two versions of an ordered collection, in the shape of
/// ``RealmCollectionChange``: deletions and modifications in old indices, insertions (and
/// ``modificationsNew``) in new indices, each ascending. Deleting `deletions` from the old
/// collection and then inserting the new elements at `insertions` yields the new collection; a
/// moved element is reported as a deletion and an insertion.
struct CollectionDiff: Equatable, Sendable {
    var deletions: [Int] = []
    var insertions: [Int] = []
    var modifications: [Int] = []
    var modificationsNew: [Int] = []

    var isEmpty: Bool { deletions.isEmpty && insertions.isEmpty && modifications.isEmpty }

    /// The diff of two sequences of identities (duplicates allowed). `modified` tells whether an
    /// element present in both changed its contents.
    static func compute<K: Hashable>(old: [K], new: [K], modified: (K) -> Bool) -> CollectionDiff {
        var d = CollectionDiff()
        var prefix = 0
        let shortest = Swift.min(old.count, new.count)
        while prefix < shortest && old[prefix] == new[prefix] { prefix += 1 }
        var suffix = 0
        while suffix < shortest - prefix && old[old.count - 1 - suffix] == new[new.count - 1 - suffix] { suffix += 1 }
        let oldMiddle = prefix..<(old.count - suffix)
        let newMiddle = prefix..<(new.count - suffix)

        // Pairs (old index, new index) of elements that stay, ascending in both.
        var kept: [(Int, Int)] = []
        if let pairs = uniqueMatches(old, oldMiddle, new, newMiddle) {
            kept = pairs
        } else if oldMiddle.count * newMiddle.count <= 4_000_000 {
            kept = lcsMatches(old, oldMiddle, new, newMiddle)
        }
        var keptOld = Set<Int>()
        keptOld.reserveCapacity(kept.count)
        var keptNew = Set<Int>()
        keptNew.reserveCapacity(kept.count)
        for (i, j) in kept {
            keptOld.insert(i)
            keptNew.insert(j)
        }
        d.deletions = oldMiddle.filter { !keptOld.contains($0) }
        d.insertions = newMiddle.filter { !keptNew.contains($0) }
        for i in 0..<prefix where modified(old[i]) {
            d.modifications.append(i)
            d.modificationsNew.append(i)
        }
        for (i, j) in kept where modified(old[i]) {
            d.modifications.append(i)
            d.modificationsNew.append(j)
        }
        for s in stride(from: suffix, to: 0, by: -1) where modified(old[old.count - s]) {
            d.modifications.append(old.count - s)
            d.modificationsNew.append(new.count - s)
        }
        return d
    }

    /// The diff of two lists of distinct object keys where only the keys in `changed` can have
    /// appeared, disappeared or moved (every other key keeps its relative order). Returns nil when
    /// that does not hold, so the caller falls back to ``compute(old:new:modified:)``. Linear in
    /// the lists with a bitmap membership test; the work beyond that is proportional to `changed`.
    static func compute(old: [ObjectKey], new: [ObjectKey], changed: Set<ObjectKey>, modified: (ObjectKey) -> Bool) -> CollectionDiff? {
        let filter = KeyFilter(changed)
        // Changed keys with their index and the number of stable keys before them.
        var oldChanged: [(key: ObjectKey, index: Int, gap: Int)] = []
        var newChanged: [(key: ObjectKey, index: Int, gap: Int)] = []
        var i = 0
        var j = 0
        var stable = 0
        while true {
            while i < old.count && filter.contains(old[i]) {
                oldChanged.append((old[i], i, stable))
                i += 1
            }
            while j < new.count && filter.contains(new[j]) {
                newChanged.append((new[j], j, stable))
                j += 1
            }
            if i == old.count || j == new.count { break }
            guard old[i] == new[j] else { return nil }
            i += 1
            j += 1
            stable += 1
        }
        guard i == old.count && j == new.count else { return nil }

        var d = CollectionDiff()
        var inNew: [ObjectKey: (index: Int, gap: Int)] = [:]
        inNew.reserveCapacity(newChanged.count)
        for c in newChanged { inNew[c.key] = (c.index, c.gap) }
        // Keys in both that keep their gap are candidates to stay; the longest run of them in
        // ascending new order stays, the rest moved.
        var common: [(old: Int, new: Int, key: ObjectKey)] = []
        var present = Set<ObjectKey>()
        for c in oldChanged {
            guard let n = inNew[c.key] else {
                d.deletions.append(c.index)
                continue
            }
            present.insert(c.key)
            if n.gap == c.gap {
                common.append((c.index, n.index, c.key))
            } else {
                d.deletions.append(c.index)
                d.insertions.append(n.index)
            }
        }
        let staying = longestIncreasing(common.map(\.new))
        for (p, c) in common.enumerated() {
            if staying.contains(p) {
                if modified(c.key) {
                    d.modifications.append(c.old)
                    d.modificationsNew.append(c.new)
                }
            } else {
                d.deletions.append(c.old)
                d.insertions.append(c.new)
            }
        }
        for c in newChanged where !present.contains(c.key) { d.insertions.append(c.index) }
        d.deletions.sort()
        d.insertions.sort()
        return d
    }

    /// The new contents and the diff of a list of keys kept in ascending order (results without a
    /// sort) when only the keys `changed` (ascending) can have come or gone: `matching` are those
    /// of them in the new version, `modified` those that count as modified. Binary searches and
    /// block copies only: O(changed · log n) plus copying the list.
    static func ascendingUpdate(old: [ObjectKey], changed: [ObjectKey], matching: Set<ObjectKey>, modified: Set<ObjectKey>) -> (
        [ObjectKey], CollectionDiff
    ) {
        var d = CollectionDiff()
        var new: [ObjectKey] = []
        new.reserveCapacity(old.count + matching.count)
        var copied = 0  // old keys before this index are handled
        for c in changed {
            var lo = copied
            var hi = old.count
            while lo < hi {
                let mid = (lo + hi) / 2
                if old[mid] < c { lo = mid + 1 } else { hi = mid }
            }
            new.append(contentsOf: old[copied..<lo])
            copied = lo
            let wasIn = lo < old.count && old[lo] == c
            let isIn = matching.contains(c)
            switch (wasIn, isIn) {
            case (true, false):
                d.deletions.append(lo)
                copied = lo + 1
            case (false, true):
                d.insertions.append(new.count)
                new.append(c)
            case (true, true):
                if modified.contains(c) {
                    d.modifications.append(lo)
                    d.modificationsNew.append(new.count)
                }
                new.append(c)
                copied = lo + 1
            case (false, false): break
            }
        }
        new.append(contentsOf: old[copied...])
        return (new, d)
    }

    /// Matches of the middle parts when neither holds duplicates: common elements, minus those
    /// that moved (outside a longest increasing run of new positions). Nil on duplicates.
    private static func uniqueMatches<K: Hashable>(_ old: [K], _ o: Range<Int>, _ new: [K], _ n: Range<Int>) -> [(Int, Int)]? {
        var newIndex: [K: Int] = [:]
        newIndex.reserveCapacity(n.count)
        for j in n where newIndex.updateValue(j, forKey: new[j]) != nil { return nil }
        var seen = Set<K>()
        seen.reserveCapacity(o.count)
        var pairs: [(Int, Int)] = []
        for i in o {
            guard seen.insert(old[i]).inserted else { return nil }
            if let j = newIndex[old[i]] { pairs.append((i, j)) }
        }
        let staying = longestIncreasing(pairs.map(\.1))
        return pairs.indices.filter { staying.contains($0) }.map { pairs[$0] }
    }

    /// Matches of a longest common subsequence (quadratic; used for small middles with duplicates).
    private static func lcsMatches<K: Hashable>(_ old: [K], _ o: Range<Int>, _ new: [K], _ n: Range<Int>) -> [(Int, Int)] {
        let rows = o.count + 1
        let cols = n.count + 1
        var table = [Int32](repeating: 0, count: rows * cols)
        for a in stride(from: o.count - 1, through: 0, by: -1) {
            for b in stride(from: n.count - 1, through: 0, by: -1) {
                table[a * cols + b] =
                    old[o.lowerBound + a] == new[n.lowerBound + b]
                    ? table[(a + 1) * cols + b + 1] + 1 : Swift.max(table[(a + 1) * cols + b], table[a * cols + b + 1])
            }
        }
        var pairs: [(Int, Int)] = []
        var a = 0
        var b = 0
        while a < o.count && b < n.count {
            if old[o.lowerBound + a] == new[n.lowerBound + b] {
                pairs.append((o.lowerBound + a, n.lowerBound + b))
                a += 1
                b += 1
            } else if table[(a + 1) * cols + b] >= table[a * cols + b + 1] {
                a += 1
            } else {
                b += 1
            }
        }
        return pairs
    }

    /// The positions of a longest strictly increasing subsequence (patience sorting, n log n).
    static func longestIncreasing(_ values: [Int]) -> Set<Int> {
        guard !values.isEmpty else { return [] }
        var tails: [Int] = []  // positions of the smallest tail of each length
        var previous = [Int](repeating: -1, count: values.count)
        for (p, v) in values.enumerated() {
            var lo = 0
            var hi = tails.count
            while lo < hi {
                let mid = (lo + hi) / 2
                if values[tails[mid]] < v { lo = mid + 1 } else { hi = mid }
            }
            if lo > 0 { previous[p] = tails[lo - 1] }
            if lo == tails.count { tails.append(p) } else { tails[lo] = p }
        }
        var out = Set<Int>()
        out.reserveCapacity(tails.count)
        var p = tails[tails.count - 1]
        while p >= 0 {
            out.insert(p)
            p = previous[p]
        }
        return out
    }

    /// The new index of each element reported as modified: its old index shifted by the
    /// deletions before it and the insertions at or before its new place.
    static func newIndices(ofModifications modifications: [Int], deletions: [Int], insertions: [Int]) -> [Int] {
        modifications.map { i in
            var j = i - deletions.prefix { $0 < i }.count
            for ins in insertions where ins <= j { j += 1 }
            return j
        }
    }
}

/// Membership of object keys: a bitmap over their range when it is small, else a hash set.
struct KeyFilter {
    private let low: Int64
    private let bits: [UInt64]
    private let set: Set<ObjectKey>?

    init(_ keys: Set<ObjectKey>) {
        let raws = keys.map(\.rawValue)
        let low = raws.min() ?? 0
        let high = raws.max() ?? -1
        self.low = low
        if high >= low, high - low < 1 << 26 {
            var bits = [UInt64](repeating: 0, count: Int((high - low) >> 6) + 1)
            for r in raws {
                let o = r - low
                bits[Int(o >> 6)] |= 1 << UInt64(o & 63)
            }
            self.bits = bits
            self.set = nil
        } else {
            self.bits = []
            self.set = keys.isEmpty ? nil : keys
        }
    }

    @inline(__always)
    func contains(_ key: ObjectKey) -> Bool {
        if let set { return set.contains(key) }
        let o = key.rawValue &- low
        guard o >= 0, o >> 6 < Int64(bits.count) else { return false }
        return bits[Int(o >> 6)] & (1 << UInt64(o & 63)) != 0
    }
}
