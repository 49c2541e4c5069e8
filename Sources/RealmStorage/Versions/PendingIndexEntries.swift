/// The entries (hash, object key) a write transaction adds to one index, in the order they were
/// added, held as runs where that is smaller: a run is an entry and how many entries follow it with
/// hash and key each one greater. An integer's hash keeps its order (``IndexHash``) and a bulk insert
/// gives its objects consecutive keys, so the index of a column filled with consecutive integers
/// (an imported primary key) takes one run for any number of objects, where a plain list takes 16
/// bytes an object. Entries that do not form runs (strings, random integers) switch the storage to
/// a plain list once runs save nothing, so it never takes more than a plain list does, beyond its
/// spare capacity.
struct PendingIndexEntries: RandomAccessCollection {
    typealias Entry = (UInt64, Int64)

    /// `count` entries: (`hash` + i, `key` + i) for i in 0..<count.
    struct Run {
        var hash: UInt64
        var key: Int64
        var count: Int

        /// Whether `e` is the entry after the run's last one.
        func continues(with e: Entry) -> Bool {
            hash &+ UInt64(count) == e.0 && hash < e.0 && key &+ Int64(count) == e.1 && key < e.1
        }

        /// The position of `e` in the run, if it is one of its entries.
        func position(of e: Entry) -> Int? {
            guard e.0 >= hash, e.1 >= key else { return nil }
            let d = e.0 - hash
            guard d < UInt64(count), Int64(d) == e.1 - key else { return nil }
            return Int(d)
        }
    }

    private enum Storage {
        /// The runs, and where each begins among the entries.
        case runs([Run], starts: [Int])
        case plain([Entry])
    }

    private var storage: Storage = .runs([], starts: [])
    private(set) var count = 0
    /// Whether the entries are in order of (hash, key): every append so far came after the last
    /// entry (a removal keeps the order).
    private(set) var isSorted = true

    /// Runs are given up for a plain list when there are more than this many and they average fewer
    /// than two entries each (a run takes 32 bytes with its start, an entry 16).
    static let plainAfterRuns = 64

    init() {}

    /// A plain list of `entries`.
    init(plain entries: [Entry], isSorted: Bool) {
        storage = .plain(entries)
        count = entries.count
        self.isSorted = isSorted
    }

    var startIndex: Int { 0 }
    var endIndex: Int { count }

    subscript(i: Int) -> Entry {
        switch storage {
        case .plain(let e): return e[i]
        case .runs(let runs, let starts):
            precondition(i >= 0 && i < count, "index out of range")
            let r = Self.run(containing: i, starts)
            let d = i - starts[r]
            return (runs[r].hash &+ UInt64(d), runs[r].key &+ Int64(d))
        }
    }

    /// The run that holds entry `i`: the last whose start is at most `i`.
    private static func run(containing i: Int, _ starts: [Int]) -> Int {
        var lo = 0
        var hi = starts.count
        while hi - lo > 1 {
            let mid = (lo + hi) / 2
            if starts[mid] <= i { lo = mid } else { hi = mid }
        }
        return lo
    }

    /// The number of runs the entries are held as (0 for a plain list): for tests.
    var runCount: Int {
        if case .runs(let runs, _) = storage { return runs.count }
        return 0
    }

    /// The largest hash among the entries.
    var maxHash: UInt64? {
        if isSorted { return last?.0 }
        switch storage {
        case .plain(let e): return e.lazy.map(\.0).max()
        case .runs(let runs, _): return runs.lazy.map { $0.hash &+ UInt64($0.count - 1) }.max()
        }
    }

    mutating func append(_ e: Entry) {
        if isSorted, let last, last.0 > e.0 || (last.0 == e.0 && last.1 > e.1) { isSorted = false }
        switch storage {
        case .plain(var entries):
            storage = .runs([], starts: [])
            entries.append(e)
            storage = .plain(entries)
        case .runs(var runs, var starts):
            storage = .runs([], starts: [])
            if let last = runs.last, last.continues(with: e) {
                runs[runs.count - 1].count += 1
            } else if runs.count >= Self.plainAfterRuns && runs.count * 2 > count {
                var entries = [Entry]()
                entries.reserveCapacity(Swift.max(count * 2, 16))
                for r in runs { for d in 0..<r.count { entries.append((r.hash &+ UInt64(d), r.key &+ Int64(d))) } }
                entries.append(e)
                storage = .plain(entries)
                count += 1
                return
            } else {
                starts.append(count)
                runs.append(Run(hash: e.0, key: e.1, count: 1))
            }
            storage = .runs(runs, starts: starts)
        }
        count += 1
    }

    /// Removes the last entry equal to `e`; returns whether there was one.
    @discardableResult
    mutating func removeLast(_ e: Entry) -> Bool {
        switch storage {
        case .plain(var entries):
            guard let i = entries.lastIndex(where: { $0 == e }) else { return false }
            storage = .runs([], starts: [])
            entries.remove(at: i)
            storage = .plain(entries)
        case .runs(var runs, var starts):
            // The last run holding the entry, and where in it.
            var found: (run: Int, offset: Int)?
            for r in runs.indices.reversed() {
                if let d = runs[r].position(of: e) {
                    found = (r, d)
                    break
                }
            }
            guard let (r, d) = found else { return false }
            storage = .runs([], starts: [])
            let run = runs[r]
            // The run is cut around the entry: what came before it stays, what came after follows.
            var pieces: [Run] = []
            if d > 0 { pieces.append(Run(hash: run.hash, key: run.key, count: d)) }
            if d + 1 < run.count {
                pieces.append(Run(hash: run.hash &+ UInt64(d + 1), key: run.key &+ Int64(d + 1), count: run.count - d - 1))
            }
            runs.replaceSubrange(r...r, with: pieces)
            starts.removeSubrange(r...)
            var start = r == 0 ? 0 : starts[r - 1] + runs[r - 1].count
            for p in runs[r...] {
                starts.append(start)
                start += p.count
            }
            storage = .runs(runs, starts: starts)
        }
        count -= 1
        return true
    }

    /// The entries in order of (hash, key): these entries when they are in order already.
    func inOrder() -> PendingIndexEntries {
        if isSorted { return self }
        return PendingIndexEntries(plain: sorted(by: { ($0.0, $0.1) < ($1.0, $1.1) }), isSorted: true)
    }
}
