import RealmStorage
import RealmTestSupport
import Testing

@testable import RealmSwift

/// Applies a diff to the old list: deletions (old indices) first, then insertions (new indices).
func applyDiff<K>(_ d: CollectionDiff, old: [K], new: [K]) -> [K] {
    var out = old
    for i in d.deletions.reversed() { out.remove(at: i) }
    for i in d.insertions { out.insert(new[i], at: i) }
    return out
}

@Suite struct CollectionDiffTests {
    @Test func simpleCases() {
        let d = CollectionDiff.compute(old: [1, 2, 3, 4], new: [1, 3, 4, 5], modified: { $0 == 3 })
        #expect(d.deletions == [1])
        #expect(d.insertions == [3])
        #expect(d.modifications == [2])
        #expect(d.modificationsNew == [1])
        #expect(CollectionDiff.compute(old: [1, 2], new: [1, 2], modified: { _ in false }).isEmpty)
        // A move is a deletion and an insertion.
        let m = CollectionDiff.compute(old: [1, 2, 3], new: [3, 1, 2], modified: { _ in true })
        #expect(m.deletions == [2] && m.insertions == [0])
        #expect(m.modifications == [0, 1] && m.modificationsNew == [1, 2])
    }

    @Test func newIndicesOfModifications() {
        let old = [10, 11, 12, 13, 14]
        let new = [9, 11, 13, 15, 14]
        let d = CollectionDiff.compute(old: old, new: new, modified: { _ in true })
        #expect(
            CollectionDiff.newIndices(ofModifications: d.modifications, deletions: d.deletions, insertions: d.insertions)
                == d.modificationsNew)
    }

    /// Random edits of random lists, with and without duplicates: applying the diff yields the new
    /// list, and modifications name exactly the kept elements the model marked modified.
    @Test func propertyRandomEdits() {
        var rng = SplitMix(seed: 0x5EED)
        for round in 0..<400 {
            let duplicates = round % 3 == 0
            let n = Int(rng.next() % 40)
            var old: [Int] = []
            for i in 0..<n { old.append(duplicates ? Int(rng.next() % 8) : i) }
            var new = old
            var next = 1000
            for _ in 0..<Int(rng.next() % 8) {
                switch rng.next() % 3 {
                case 0 where !new.isEmpty: new.remove(at: Int(rng.next() % UInt64(new.count)))
                case 1:
                    new.insert(duplicates ? Int(rng.next() % 8) : next, at: Int(rng.next() % UInt64(new.count + 1)))
                    next += 1
                default:
                    if new.count > 1 { new.swapAt(Int(rng.next() % UInt64(new.count)), Int(rng.next() % UInt64(new.count))) }
                }
            }
            let modifiedSet = Set(old.filter { _ in rng.next() % 4 == 0 })
            let d = CollectionDiff.compute(old: old, new: new, modified: { modifiedSet.contains($0) })
            #expect(applyDiff(d, old: old, new: new) == new, "round \(round): \(old) → \(new): \(d)")
            #expect(d.modifications.count == d.modificationsNew.count)
            for (i, j) in zip(d.modifications, d.modificationsNew) {
                #expect(old[i] == new[j] && modifiedSet.contains(old[i]))
                #expect(!d.deletions.contains(i) && !d.insertions.contains(j))
            }
            #expect(
                CollectionDiff.newIndices(ofModifications: d.modifications, deletions: d.deletions, insertions: d.insertions)
                    == d.modificationsNew)
        }
    }

    /// The fast path for object keys agrees with the general one on what applying yields, and
    /// declines (nil) when an unchanged key moved.
    @Test func changedKeysFastPath() throws {
        var rng = SplitMix(seed: 42)
        for round in 0..<200 {
            let n = 50 + Int(rng.next() % 200)
            var values = (0..<n).map { _ in Int(rng.next() % 50) }
            func order(_ v: [Int], _ alive: [Bool]) -> [ObjectKey] {
                (0..<v.count).filter { alive[$0] }.sorted { v[$0] < v[$1] || (v[$0] == v[$1] && $0 < $1) }.map { ObjectKey(Int64($0)) }
            }
            var alive = [Bool](repeating: true, count: n)
            for i in 0..<n where rng.next() % 7 == 0 { alive[i] = false }
            let old = order(values, alive)
            var changed = Set<ObjectKey>()
            for _ in 0..<Int(rng.next() % 10) {
                let k = Int(rng.next() % UInt64(n))
                changed.insert(ObjectKey(Int64(k)))
                switch rng.next() % 3 {
                case 0: alive[k].toggle()
                default: values[k] = Int(rng.next() % 50)
                }
            }
            let new = order(values, alive)
            let d = try #require(CollectionDiff.compute(old: old, new: new, changed: changed, modified: { changed.contains($0) }))
            #expect(applyDiff(d, old: old, new: new) == new, "round \(round)")
            for (i, j) in zip(d.modifications, d.modificationsNew) { #expect(old[i] == new[j]) }
        }
        let keys = (0..<5).map { ObjectKey(Int64($0)) }
        #expect(CollectionDiff.compute(old: keys, new: keys.reversed(), changed: [], modified: { _ in false }) == nil)
    }

    @Test func ascendingUpdateReplays() {
        var rng = SplitMix(seed: 77)
        for _ in 0..<300 {
            let old = (0..<Int(rng.next() % 60)).filter { _ in rng.next() % 2 == 0 }.map { ObjectKey(Int64($0)) }
            let changed = (0..<70).filter { _ in rng.next() % 6 == 0 }.map { ObjectKey(Int64($0)) }
            let matching = Set(changed.filter { _ in rng.next() % 2 == 0 })
            let modified = Set(changed.filter { _ in rng.next() % 2 == 0 })
            var expected = Set(old).subtracting(changed).union(matching).sorted()
            let (new, d) = CollectionDiff.ascendingUpdate(old: old, changed: changed, matching: matching, modified: modified)
            #expect(new == expected)
            #expect(applyDiff(d, old: old, new: new) == new)
            for (i, j) in zip(d.modifications, d.modificationsNew) { #expect(old[i] == new[j] && modified.contains(old[i])) }
            expected = []
        }
    }
}

/// A notification error carries no state: reports build no value for it (a queue or actor
/// observer used to stop the process on an error instead of receiving `.error`).
@Suite struct NotificationErrorReportTests {
    struct Failure: Error {}

    @Test func errorsAreReportedWithoutBuildingAValue() {
        var built = 0
        let value: () -> [Int] = {
            built += 1
            return [1]
        }
        let error = NotifierEvent<[Int64], CollectionDiff>.error(Failure())
        guard case .error(let e) = collectionReport(error, value) else {
            Issue.record("not reported as an error")
            return
        }
        #expect(e is Failure)
        #expect(built == 0)
        // Other events build it once.
        guard
            case .update(let v, _, let insertions, _) = collectionReport(
                NotifierEvent<[Int64], CollectionDiff>.update(try! makeSnapshot(), [], CollectionDiff(insertions: [0])), value)
        else {
            Issue.record("not an update")
            return
        }
        #expect(v == [1] && insertions == [0] && built == 1)
    }

    func makeSnapshot() throws -> Snapshot {
        let dir = TempDir()
        return try Store.open(at: dir.file(), options: .init(create: true)).snapshot()
    }
}
