import Foundation
import Testing

@testable import RealmStorage

/// The entries a write transaction adds to an index (`PendingIndexEntries`): held as runs of
/// consecutive entries while that is smaller, as a plain list after. Checked against an array, and
/// through the engine, where a bulk insert's index is written from them.
@Suite struct PendingIndexEntriesTests {
    typealias Entry = (UInt64, Int64)

    static func same(_ a: PendingIndexEntries, _ b: [Entry]) -> Bool {
        a.count == b.count && zip(a, b).allSatisfy { $0 == $1 }
    }

    /// Appends in stretches of consecutive entries and of random ones, removals of entries
    /// anywhere (and of entries that are not there), against an array: after every step the two
    /// hold the same entries in the same order, and agree on the largest hash and on the sorted
    /// order; slices read the same.
    @Test(arguments: [1, 2, 3, 4, 5, 6])
    func matchesAnArray(seed: UInt64) throws {
        var rng = SplitMix(seed: seed)
        var entries = PendingIndexEntries()
        var model: [Entry] = []
        var next: Entry = (100, 1)
        for step in 0..<3000 {
            let r = rng.next() % 100
            if r < 70 {
                // Mostly the next consecutive entry; now and then a jump, or a repeated hash.
                let jump = rng.next() % 10
                if jump == 0 { next = (rng.next() % 1000, Int64(rng.next() % 1000)) }
                if jump == 1 { next.1 += 5 }
                entries.append(next)
                model.append(next)
                next = (next.0 &+ 1, next.1 + 1)
            } else if r < 90, !model.isEmpty {
                let e = model[Int(rng.next() % UInt64(model.count))]
                let removed = entries.removeLast(e)
                #expect(removed)
                model.remove(at: model.lastIndex { $0 == e }!)
            } else {
                let e: Entry = (UInt64.max - rng.next() % 5, -1)
                let removed = entries.removeLast(e)
                #expect(!removed)
            }
            // Required: one difference stops the run (the rest would differ too).
            try #require(Self.same(entries, model), "step \(step)")
            #expect(entries.maxHash == model.map(\.0).max())
            if step % 100 == 0 {
                let sorted = model.sorted { ($0.0, $0.1) < ($1.0, $1.1) }
                #expect(Self.same(entries.inOrder(), sorted))
                if !model.isEmpty {
                    let a = Int(rng.next() % UInt64(model.count))
                    let b = a + Int(rng.next() % UInt64(model.count - a + 1))
                    #expect(entries[a..<b].elementsEqual(model[a..<b]) { $0 == $1 })
                }
            }
        }
    }

    /// Consecutive entries take one run however many they are; a removal in the middle cuts it in
    /// two. Entries that form no runs end as a plain list once the runs would average fewer than two
    /// entries, and stay one.
    @Test func runsWhileTheyPay() {
        var entries = PendingIndexEntries()
        for i in 0..<100_000 { entries.append((UInt64(1000 + i), Int64(i))) }
        #expect(entries.count == 100_000)
        #expect(entries.runCount == 1)
        #expect(entries.last! == (100_999, 99_999))
        var removed = entries.removeLast((50_999, 49_999))
        #expect(removed)
        #expect(entries.runCount == 2)
        #expect(entries[49_999] == (51_000, 50_000))
        removed = entries.removeLast((1000, 0))
        #expect(removed)
        removed = entries.removeLast((100_999, 99_999))
        #expect(removed)
        #expect(entries.runCount == 2)
        #expect(entries.first! == (1001, 1))

        var scattered = PendingIndexEntries()
        var rng = SplitMix(seed: 9)
        var model: [Entry] = []
        for _ in 0..<1000 {
            let e = (rng.next(), Int64(rng.next() % 1_000_000))
            scattered.append(e)
            model.append(e)
        }
        #expect(scattered.runCount == 0)
        #expect(Self.same(scattered, model))
        // A plain list stays one, even for consecutive entries.
        for i in 0..<100 { scattered.append((UInt64(i), Int64(i))) }
        #expect(scattered.runCount == 0)
        #expect(scattered.count == 1100)
    }

    /// A run never wraps: the entry after the largest hash (or key) starts a new run.
    @Test func runsDoNotWrap() {
        var entries = PendingIndexEntries()
        entries.append((UInt64.max, Int64.max))
        entries.append((0, Int64.min))
        #expect(entries.runCount == 2)
        let expected: [Entry] = [(UInt64.max, Int64.max), (0, Int64.min)]
        #expect(Self.same(entries, expected))
        #expect(entries.maxHash == UInt64.max)
    }

    /// Through the engine: one transaction inserts objects with consecutive primary keys into a
    /// new table and deletes some of them again, a later one appends more (some out of order) to
    /// the index the first wrote and deletes old ones; every key is then found by its primary key,
    /// no deleted one is, and the file verifies, before and after reopening.
    @Test func bulkInsertsWithConsecutiveKeysAreIndexed() throws {
        let dir = TempDir()
        var store: Store? = try makePeopleStore(dir)
        var live = Set<Int>()
        try store!.write { tx in
            var keys: [Int: ObjectKey] = [:]
            for i in 0..<20_000 {
                keys[i] = try tx.insert("Person", row: person(i))
                live.insert(i)
            }
            for i in stride(from: 7, to: 20_000, by: 997) {
                try tx.delete("Person", keys[i]!)
                live.remove(i)
            }
            // Still found in the transaction, from the pending entries.
            #expect(try tx.objectKey("Person", primaryKey: .int(8)) == keys[8])
            #expect(try tx.objectKey("Person", primaryKey: .int(7)) == nil)
        }
        try store!.write { tx in
            for i in 20_000..<25_000 { _ = try tx.insert("Person", row: person(i)) }
            for i in [30_000, 26_000, 28_000] { _ = try tx.insert("Person", row: person(i)) }
            for i in [1, 2, 3, 19_999] {
                try tx.delete("Person", try #require(try tx.objectKey("Person", primaryKey: .int(Int64(i)))))
            }
            live.formUnion(20_000..<25_000)
            live.formUnion([30_000, 26_000, 28_000])
            live.subtract([1, 2, 3, 19_999])
            expectCode(.duplicatePrimaryKey) { try tx.insert("Person", row: person(24_999)) }
        }
        for reopen in [false, true] {
            if reopen {
                store = nil
                store = try Store.open(at: dir.file())
            }
            let s = try store!.snapshot()
            #expect(Verifier().verify(s).isClean)
            #expect(try s.objectCount("Person") == live.count)
            for i in 0..<31_000 where i % 7 == 0 || live.contains(i) != (i < 25_000) || i % 1000 < 3 {
                let key = try s.objectKey("Person", primaryKey: .int(Int64(i)))
                #expect((key != nil) == live.contains(i), "id \(i)")
                if let key { #expect(try s.value("Person", key, "id") == .int(Int64(i))) }
            }
        }
    }
}
