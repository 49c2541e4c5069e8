import RealmSyncProtocol
import Testing

/// The list order of Spec/SYNC.md §6.4: concurrent inserts are all kept in one order, and every
/// replica converges whatever order it applies the operations in.
@Suite struct SyncListTests {
    static func file(_ b: UInt8) -> [UInt8] { [UInt8](repeating: b, count: 16) }
    static func id(_ clock: UInt64, _ file: UInt8, _ index: UInt64 = 0) -> ElementId {
        ElementId(clock: clock, clientFileId: Self.file(file), index: index)
    }

    @Test func concurrentInsertsAreAllKeptNewestFirst() {
        var list = SyncList()
        // a, then b after a, then two clients insert concurrently after a.
        list.insert(Self.id(1, 1), after: .head, .string("a"))
        list.insert(Self.id(2, 1), after: Self.id(1, 1), .string("b"))
        list.insert(Self.id(3, 2), after: Self.id(1, 1), .string("x"))
        list.insert(Self.id(3, 3), after: Self.id(1, 1), .string("y"))
        // Siblings after a: (3, file 3) > (3, file 2) > (2, file 1).
        #expect(list.values == [.string("a"), .string("y"), .string("x"), .string("b")])
        // Erased elements stay anchors; what hangs after them keeps its place.
        list.erase(Self.id(1, 1))
        list.insert(Self.id(4, 1), after: Self.id(1, 1), .string("z"))
        #expect(list.values == [.string("z"), .string("y"), .string("x"), .string("b")])
        let setErased = list.set(Self.id(1, 1), .null)
        let setLive = list.set(Self.id(2, 1), .string("B"))
        #expect(!setErased && setLive && list.values.last == .string("B"))
        // Unknown anchors, known identities and the head identity change nothing.
        let before = list
        let refused = [
            list.insert(Self.id(9, 9), after: Self.id(8, 8), .null), list.insert(Self.id(2, 1), after: .head, .null),
            list.insert(.head, after: .head, .null), list.erase(Self.id(7, 7)), list.erase(Self.id(1, 1)),
        ]
        #expect(refused == [false, false, false, false, false] && list == before)
        // Several inserts of one upload, each at the head, read last-inserted first.
        var one = SyncList()
        for i in 0..<3 { one.insert(Self.id(5, 1, UInt64(i)), after: .head, .int(Int64(i))) }
        #expect(one.values == [.int(2), .int(1), .int(0)])
    }

    /// Random inserts and erases from three clients, applied by replicas in different orders that
    /// keep every anchor before what hangs after it: every replica holds the same list.
    @Test(arguments: [1, 2, 3, 4, 5] as [UInt64])
    func replicasConverge(seed: UInt64) {
        var rng = seed
        func next(_ n: Int) -> Int {
            rng = rng &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            return Int((rng >> 33) % UInt64(n))
        }
        enum Op {
            case insert(ElementId, after: ElementId, Int)
            case erase(ElementId)
        }
        var ops: [Op] = []
        var known: [ElementId] = [.head]
        for step in 0..<200 {
            if next(4) == 0, known.count > 1 {
                ops.append(.erase(known[1 + next(known.count - 1)]))
            } else {
                let id = Self.id(UInt64(1 + step / 3), UInt8(1 + step % 3), UInt64(step))
                ops.append(.insert(id, after: known[next(known.count)], step))
                known.append(id)
            }
        }
        func apply(_ order: [Int]) -> SyncList {
            var list = SyncList()
            var pending = order
            // Operations whose anchor (or element) is not there yet wait for a later pass.
            while !pending.isEmpty {
                var waiting: [Int] = []
                for i in pending {
                    switch ops[i] {
                    case .insert(let id, let after, let v): if !list.insert(id, after: after, .int(Int64(v))) { waiting.append(i) }
                    case .erase(let id): if list.elements[id] == nil { waiting.append(i) } else { list.erase(id) }
                    }
                }
                guard waiting.count < pending.count else { break }
                pending = waiting
            }
            return list
        }
        let reference = apply(Array(ops.indices))
        #expect(reference.elements.count == known.count - 1)
        for _ in 0..<5 {
            var order = Array(ops.indices)
            for i in stride(from: order.count - 1, to: 0, by: -1) { order.swapAt(i, next(i + 1)) }
            let replica = apply(order)
            #expect(replica.values == reference.values && replica.ids == reference.ids && replica == reference)
        }
    }
}
