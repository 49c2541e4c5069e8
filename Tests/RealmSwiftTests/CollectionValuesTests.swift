import Foundation
import RealmStorage
import RealmTestSupport
import Testing

@testable import RealmSwift

/// `min()`, `max()`, `sum()`, `average()`, `sorted(ascending:)`, `distinct()` and `filter` on
/// collections of values (the last three giving live results of values), each body run over an
/// unmanaged kennel, a managed one and a frozen one.
@Suite struct CollectionValuesTests {
    static let date0 = Date(timeIntervalSince1970: 1_000)
    static let date1 = Date(timeIntervalSince1970: -50)

    /// Runs `body` with the same values in an unmanaged, a managed and a frozen kennel.
    func each(_ body: (Kennel, String) throws -> Void) throws {
        func fill(_ k: Kennel) {
            k.ints.append(objectsIn: [4, -2, 9, 4, 0])
            k.optInts.append(objectsIn: [nil, 3, nil, -1, 3])
            k.int8s.append(objectsIn: [100, 27])
            k.doubles.append(objectsIn: [1.5, .nan, -0.5, 2])
            k.optDoubles.append(objectsIn: [nil, nil])
            k.floats.append(objectsIn: [0.25, 1.5])
            k.decimals.append(objectsIn: [Decimal128(1), try! Decimal128(string: "2.5"), try! Decimal128(string: "0.25")])
            k.dates.append(objectsIn: [Self.date0, Self.date1])
            k.optDates.append(objectsIn: [nil, Self.date0])
            k.strings.append(objectsIn: ["b", "é", "B", "a", "b", ""])
            k.optStrings.append(objectsIn: ["x", nil, "a", nil])
            k.intSet.insert(objectsIn: [5, 3, 8])
            k.stringSet.insert(objectsIn: ["q", "p"])
            k.scores["x"] = 10
            k.scores["a"] = -4
            k.scores["m"] = 7
            k.optScores["k"] = .some(nil)
            k.optScores["j"] = 2.5
        }
        let unmanaged = Kennel(value: ["id": 1])
        fill(unmanaged)
        try body(unmanaged, "unmanaged")
        let (realm, _) = try makeKennelRealm()
        let managed = Kennel(value: ["id": 1])
        fill(managed)
        try realm.write { realm.add(managed) }
        try body(managed, "managed")
        try body(managed.freeze(), "frozen")
    }

    @Test func minMaxSumAverageSkipNils() throws {
        try each { k, kind in
            #expect(k.ints.min() == -2 && k.ints.max() == 9 && k.ints.sum() == 15, "\(kind)")
            #expect(k.ints.average() == 3.0 as Double?, "\(kind)")
            // Optionals: nils skipped; min/max doubly optional as in RealmSwift.
            #expect(k.optInts.min() == .some(-1) && k.optInts.max() == .some(3) && k.optInts.sum() == 5, "\(kind)")
            #expect(k.optInts.average() == 5.0 / 3 as Double?, "\(kind)")
            #expect(k.optDoubles.min() == nil && k.optDoubles.sum() == 0 && k.optDoubles.average() as Double? == nil, "\(kind)")
            // NaN never wins min/max over numbers; it makes the sum NaN.
            #expect(k.doubles.min() == -0.5 && k.doubles.max() == 2 && k.doubles.sum().isNaN, "\(kind)")
            #expect(k.floats.sum() == Float(1.75) && k.floats.max() == Float(1.5), "\(kind)")
            #expect(k.int8s.max() == Int8(100), "\(kind)")
            let (d375, d025, d125) = (try Decimal128(string: "3.75"), try Decimal128(string: "0.25"), try Decimal128(string: "1.25"))
            #expect(k.decimals.sum() == d375 && k.decimals.min() == d025 && k.decimals.average() == d125, "\(kind)")
            #expect(k.dates.min() == Self.date1 && k.dates.max() == Self.date0, "\(kind)")
            #expect(k.optDates.min() == .some(Self.date0), "\(kind)")
            #expect(k.intSet.max() == 8 && k.intSet.sum() == 16 && k.intSet.average() == 16.0 / 3 as Double?, "\(kind)")
            #expect(k.scores.min() == -4 && k.scores.max() == 10 && k.scores.sum() == 13, "\(kind)")
            #expect(k.scores.average() == 13.0 / 3 as Double?, "\(kind)")
            #expect(k.optScores.max() == .some(2.5) && k.optScores.sum() == 2.5, "\(kind)")
        }
        let empty = List<Int>()
        #expect(empty.min() == nil && empty.max() == nil && empty.sum() == 0 && empty.average() as Double? == nil)
        #expect(List<Decimal128?>().sum() == Decimal128(0) && Map<String, Float>().sum() == 0)
    }

    @Test func sortedAndDistinctValues() throws {
        try each { k, kind in
            #expect(Array(k.ints.sorted()) == [-2, 0, 4, 4, 9] && Array(k.ints.sorted(ascending: false)) == [9, 4, 4, 0, -2], "\(kind)")
            #expect(Array(k.ints.distinct()) == [4, -2, 9, 0], "\(kind)")
            // Strings by UTF-8 bytes: "" < "B" < "a" < "b" < "é".
            #expect(Array(k.strings.sorted()) == ["", "B", "a", "b", "b", "é"], "\(kind)")
            #expect(Array(k.strings.distinct()) == ["b", "é", "B", "a", ""], "\(kind)")
            #expect(
                Array(k.optStrings.sorted()) == [nil, nil, "a", "x"]
                    && Array(k.optStrings.sorted(ascending: false)) == ["x", "a", nil, nil], "\(kind)")
            #expect(Array(k.optStrings.distinct()) == ["x", nil, "a"], "\(kind)")
            #expect(Array(k.optInts.sorted()) == [nil, nil, -1, 3, 3], "\(kind)")
            #expect(Array(k.dates.sorted()) == [Self.date1, Self.date0], "\(kind)")
            #expect(k.doubles.sorted().first!.isNaN && Array(k.doubles.sorted().dropFirst()) == [-0.5, 1.5, 2], "\(kind)")
            #expect(Array(k.intSet.sorted()) == [3, 5, 8] && Array(k.stringSet.sorted(ascending: false)) == ["q", "p"], "\(kind)")
            #expect(Array(k.scores.sorted()) == [-4, 7, 10], "\(kind)")
            #expect(Array(k.optScores.sorted()) == [nil, 2.5], "\(kind)")
        }
    }

    @Test func valuesFollowWrites() throws {
        let (realm, _) = try makeKennelRealm()
        let k = Kennel(value: ["id": 1, "ints": [1, 2]])
        try realm.write { realm.add(k) }
        #expect(k.ints.sum() == 3)
        try realm.write {
            k.ints.append(10)
            #expect(k.ints.max() == 10)  // inside the transaction
        }
        #expect(k.ints.sum() == 13 && Array(k.ints.sorted(ascending: false)) == [10, 2, 1])
    }

    @Test func filterGivesResultsOfValues() throws {
        try each { k, kind in
            let big = k.ints.filter("self > %@", 0)
            #expect(Array(big) == [4, 9, 4] && big.count == 3 && big[1] == 9, "\(kind)")
            #expect(big.index(of: 4) == 0 && big.index(of: -2) == nil, "\(kind)")
            #expect(
                big.isFrozen == (kind == "frozen") && big.realm?.isFrozen == (kind == "frozen" ? true : kind == "managed" ? false : nil))
            // Chained steps apply in order; aggregates and value operations work on the results.
            let chain = k.ints.filter("self >= 0").sorted(ascending: false).distinct()
            #expect(Array(chain) == [9, 4, 0], "\(kind)")
            #expect(chain.sum() == 13 && chain.min() == 0 && chain.max() == 9 && chain.average() == 13.0 / 3 as Double?, "\(kind)")
            #expect(Array(chain.filter("self < 5")) == [4, 0], "\(kind)")
            #expect(Array(k.ints.sorted(ascending: true).filter("self != 4")) == [-2, 0, 9], "\(kind)")
            #expect(Array(k.ints.filter("TRUEPREDICATE").sorted(byKeyPath: "self", ascending: false)) == [9, 4, 4, 0, -2], "\(kind)")
            #expect(Array(k.ints.filter("self IN %@", [9, 0, 7])) == [9, 0], "\(kind)")
            #expect(k.ints.filter("self > 0").sum(ofProperty: "self") as Int == 17, "\(kind)")
            #expect(k.ints.index(matching: "self < %@", 0) == 1 && k.ints.index(matching: "self > 100") == nil, "\(kind)")
            #expect(chain.index(matching: "self == 0") == 2, "\(kind)")
            // The type-safe form over values asks about each value (it used to stop the process).
            #expect(chain.index(matching: { $0 < 5 }) == 1 && chain.index(matching: { $0 > 100 }) == nil, "\(kind)")
            // Optionals, strings (case- and diacritic-insensitive), sets, dates.
            #expect(Array(k.optInts.filter("self == nil")) == [nil, nil] && Array(k.optInts.filter("self > 0")) == [3, 3], "\(kind)")
            #expect(Array(k.strings.filter("self BEGINSWITH[c] 'b'")) == ["b", "B", "b"], "\(kind)")
            #expect(Array(k.strings.filter("self ==[cd] 'E'")) == ["é"], "\(kind)")
            #expect(Array(k.intSet.filter("self > 4").sorted()) == [5, 8], "\(kind)")
            #expect(Array(k.dates.filter("self < %@", Self.date0)) == [Self.date1], "\(kind)")
            #expect(k.ints.filter("self > 100").isEmpty && k.ints.filter("self > 100").first == nil, "\(kind)")
            #expect(big.description.hasPrefix("Results<Int> <count 3>"), "\(kind)")
            // Maps: their values in key order ("a" -4, "m" 7, "x" 10).
            #expect(Array(k.scores.filter("self > 0")) == [7, 10] && Array(k.scores.where { $0 < 8 }) == [-4, 7], "\(kind)")
            #expect(Array(k.scores.sorted(ascending: false).filter("self != 7")) == [10, -4], "\(kind)")
            #expect(Array(k.optScores.filter("self == nil")) == [nil], "\(kind)")
            // The type-safe form.
            #expect(Array(k.ints.where { $0 > 0 && $0 != 9 }) == [4, 4], "\(kind)")
            #expect(Array(chain.where { $0.in([0, 9]) }) == [9, 0], "\(kind)")
            #expect(Array(k.optStrings.where { $0 == nil || $0 == "a" }) == [nil, "a", nil], "\(kind)")
        }
    }

    @Test func resultsOfValuesAreLiveAndFreeze() throws {
        let (realm, _) = try makeKennelRealm()
        let k = Kennel(value: ["id": 1, "ints": [5, 1, 8]])
        try realm.write { realm.add(k) }
        let big = k.ints.filter("self > 2").sorted(ascending: true)
        #expect(Array(big) == [5, 8])
        let frozen = big.freeze()
        try realm.write {
            k.ints.append(3)
            k.ints.remove(at: 0)
            #expect(Array(big) == [3, 8])  // the write transaction's own changes
        }
        #expect(Array(big) == [3, 8] && big.count == 2)
        #expect(frozen.isFrozen && Array(frozen) == [5, 8])
        #expect(Array(frozen.thaw() ?? big.freeze()) == [3, 8])
        // Deleting the object empties the results; invalidating the Realm does too.
        try realm.write { realm.delete(k) }
        #expect(big.isEmpty && Array(frozen) == [5, 8])
        realm.invalidate()
        #expect(big.isInvalidated)
    }

    @Test func invalidQueriesOnValuesThrow() throws {
        let (realm, _) = try makeKennelRealm()
        let k = Kennel(value: ["id": 1, "ints": [1, 2]])
        try realm.write { realm.add(k) }
        for text in ["self >", "name == 'a'", "self == 'x'", "self > 1.5", "self.foo > 1"] {
            #expect(throws: Realm.Error.self, "\(text)") { _ = try k.ints.filter(checking: text) }
        }
        #expect(throws: Realm.Error.self) { _ = try k.strings.filter(checking: "self > %@", [1]) }
        #expect(try Array(k.ints.filter(checking: "self == %@", [2])) == [2])
    }

    @Test func resultsOfValuesStopWithAMessageWhereObjectsAreNeeded() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let list = List<Int>()
            list.append(objectsIn: [1, 2])
            _ = list.filter("self > 0").sorted(byKeyPath: "age")
        }
        #expect(ConfinementTests.stderr(result).contains("takes the key path \"self\""))
        let observed = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let list = List<Int>()
            _ = list.filter("self > 0").observe { _ in }
        }
        #expect(ConfinementTests.stderr(observed).contains("Only results of values of a managed collection can be observed"))
    }

    /// A thread-safe reference carries results of values (their source and steps) to another thread.
    @Test func resultsOfValuesTravelByThreadSafeReference() throws {
        let (realm, dir) = try makeKennelRealm()
        let k = Kennel(value: ["id": 1, "ints": [4, 1, 6, 9]])
        try realm.write { realm.add(k) }
        let ref = ThreadSafeReference(to: k.ints.filter("self > 2").sorted(ascending: false))
        let mapRef = ThreadSafeReference(to: k.scores.sorted())
        let config = realm.configuration
        let result = Locked<String>("")
        let t = Thread {
            let other = try! Realm(configuration: config)
            let values = other.resolve(ref).map { Array($0) } ?? [-1]
            let scores = other.resolve(mapRef).map { Array($0) } ?? [-1]
            result.withLock { $0 = "\(values) \(scores)" }
        }
        t.start()
        while result.withLock({ $0.isEmpty }) { Thread.sleep(forTimeInterval: 0.01) }
        #expect(result.withLock { $0 } == "[9, 6, 4] []")
        withExtendedLifetime(dir) {}
    }

    /// On a queue, the block gets the same results in a Realm confined to that queue.
    @Test func resultsOfValuesAreObservedOnAQueue() async throws {
        let (realm, dir) = try makeKennelRealm()
        let k = Kennel(value: ["id": 1, "ints": [4, 1, 6]])
        try realm.write { realm.add(k) }
        let seen = Recorder<[Int]>()
        let queue = DispatchQueue(label: "values")
        let token = k.ints.filter("self > 2").sorted(ascending: false).observe(on: queue) { change in
            dispatchPrecondition(condition: .onQueue(queue))
            switch change {
            case .initial(let r): seen.append(Array(r))
            case .update(let r, _, _, _): seen.append(Array(r))
            case .error: seen.append([-1])
            }
        }
        try await seen.wait(for: 1)
        let writer = try Realm(configuration: realm.configuration)
        try writer.write { writer.object(ofType: Kennel.self, forPrimaryKey: 1)!.ints.append(objectsIn: [9, 0]) }
        #expect(try await seen.wait(for: 2) == [[6, 4], [9, 6, 4]])
        token.invalidate()
        withExtendedLifetime(dir) {}
    }

    /// Results of values report their changes as the collection's values change: the diffs replay
    /// the old values into the new ones, and deleting the object reports every value deleted.
    @Test func resultsOfValuesAreObserved() throws {
        let (realm, _) = try makeKennelRealm()
        let k = Kennel(value: ["id": 1])
        try realm.write { realm.add(k) }
        var rng = SplitMix(seed: 21)
        let watched: [(String, Results<Int>)] = [
            ("filter", k.ints.filter("self >= 3")), ("sorted", k.ints.sorted(ascending: false)),
            ("chain", k.ints.filter("self != 5").sorted(ascending: true).distinct()), ("map", k.scores.filter("self > 2")),
        ]
        var seen = [[Int]](repeating: [], count: watched.count)
        var updates = 0
        var failures: [String] = []
        let tokens = watched.enumerated().map { n, w in
            w.1.observe { change in
                switch change {
                case .initial(let r): seen[n] = Array(r)
                case .update(let r, let d, let i, _):
                    let now = Array(r)
                    if replay(seen[n], now, deletions: d, insertions: i) != now { failures.append("\(w.0): \(seen[n]) → \(now)") }
                    seen[n] = now
                    updates += 1
                case .error(let e): failures.append("\(e)")
                }
            }
        }
        realm.refresh()
        for _ in 0..<40 {
            try realm.write {
                let v = Int(rng.next() % 10)
                switch rng.next() % 4 {
                case 0 where !k.ints.isEmpty: k.ints.remove(at: Int(rng.next() % UInt64(k.ints.count)))
                case 1: k.scores["k\(rng.next() % 5)"] = v
                default: k.ints.insert(v, at: Int(rng.next() % UInt64(k.ints.count + 1)))
                }
            }
            realm.refresh()
            for (n, w) in watched.enumerated() { #expect(seen[n] == Array(w.1), "\(w.0)") }
        }
        #expect(failures.isEmpty, "\(failures.prefix(3))")
        #expect(updates > 40)
        // Deleting the object: every value reported deleted, then nothing more.
        try realm.write { realm.delete(k) }
        realm.refresh()
        #expect(seen.allSatisfy(\.isEmpty) && failures.isEmpty)
        for t in tokens { t.invalidate() }
    }

    @Test func overflowingSumStops() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let list = List<Int>()
            list.append(objectsIn: [.max, 1])
            _ = list.sum()
        }
        #expect(ConfinementTests.stderr(result).contains("beyond the range of a 64-bit int"))
    }
}
