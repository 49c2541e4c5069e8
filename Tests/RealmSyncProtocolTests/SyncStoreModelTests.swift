import RealmSyncProtocol
import Testing

/// The conflict rules of Spec/SYNC.md §6 as the in-memory store applies them, and the effective
/// changes it reports (§6.7).
@Suite struct SyncStoreModelTests {
    static let a = [UInt8](repeating: 0xA, count: 16)
    static let b = [UInt8](repeating: 0xB, count: 16)

    static func upload(_ clock: UInt64, _ instructions: [Instruction]) -> Upload {
        Upload(clientVersion: clock, clock: clock, instructions: instructions)
    }
    static func dog(_ op: Instruction.Operation) -> Instruction { Instruction("Dog", .int(1), op) }

    @Test func lastWriterWinsByClockThenClient() {
        var store = SyncStoreModel()
        _ = store.apply(Self.upload(1, [Self.dog(.create), Self.dog(.set(path: ["name"], value: .string("a")))]), from: Self.a)
        // A later clock wins; an earlier one loses and is told the winner.
        #expect(
            store.apply(Self.upload(5, [Self.dog(.set(path: ["name"], value: .string("b")))]), from: Self.b) == [
                Self.dog(.set(path: ["name"], value: .string("b")))
            ])
        #expect(
            store.apply(Self.upload(4, [Self.dog(.set(path: ["name"], value: .string("c")))]), from: Self.a) == [
                Self.dog(.set(path: ["name"], value: .string("b")))
            ])
        // The same clock: the greater client file identity wins.
        #expect(
            store.apply(Self.upload(5, [Self.dog(.set(path: ["name"], value: .string("d")))]), from: Self.a).first
                == Self.dog(.set(path: ["name"], value: .string("b"))))
        let id = SyncStoreModel.ObjectID("Dog", .int(1))
        #expect(store.objects[id]?.properties["name"]?.value == .string("b"))
    }

    @Test func aDeleteWinsAndANewerCreateResurrects() {
        var store = SyncStoreModel()
        let id = SyncStoreModel.ObjectID("Dog", .int(1))
        _ = store.apply(Self.upload(1, [Self.dog(.create)]), from: Self.a)
        #expect(store.apply(Self.upload(3, [Self.dog(.erase)]), from: Self.b) == [Self.dog(.erase)])
        // An update made concurrently (before the delete was seen) is discarded; its writer learns the object is gone.
        #expect(store.apply(Self.upload(2, [Self.dog(.set(path: ["age"], value: .int(4)))]), from: Self.a) == [Self.dog(.erase)])
        // A create older than the delete does not bring it back; a newer one does, with defaults.
        #expect(store.apply(Self.upload(2, [Self.dog(.create)]), from: Self.a) == [Self.dog(.erase)] && store.objects[id] == nil)
        #expect(store.apply(Self.upload(6, [Self.dog(.create)]), from: Self.a) == [Self.dog(.create)])
        #expect(store.objects[id]?.properties.isEmpty == true && store.tombstones[id] == nil)
        // A delete of the earlier life, arriving late, leaves the new one.
        #expect(store.apply(Self.upload(4, [Self.dog(.erase)]), from: Self.b).isEmpty && store.objects[id] != nil)
    }

    @Test func setsMapsListsAndEmbeddedObjectsMergeByElement() {
        var store = SyncStoreModel()
        let id = SyncStoreModel.ObjectID("Dog", .int(1))
        _ = store.apply(Self.upload(1, [Self.dog(.create)]), from: Self.a)
        // Sets per element: the later of add and erase decides.
        _ = store.apply(Self.upload(3, [Self.dog(.setAdd(path: ["tags"], value: .string("x")))]), from: Self.a)
        #expect(
            store.apply(Self.upload(2, [Self.dog(.setErase(path: ["tags"], value: .string("x")))]), from: Self.b) == [
                Self.dog(.setAdd(path: ["tags"], value: .string("x")))
            ])
        // Maps per key.
        _ = store.apply(Self.upload(4, [Self.dog(.mapSet(path: ["m"], key: "k", value: .int(1)))]), from: Self.a)
        #expect(
            store.apply(Self.upload(5, [Self.dog(.mapErase(path: ["m"], key: "k"))]), from: Self.b) == [
                Self.dog(.mapErase(path: ["m"], key: "k"))
            ])
        #expect(
            store.apply(Self.upload(4, [Self.dog(.mapSet(path: ["m"], key: "k", value: .int(2)))]), from: Self.a) == [
                Self.dog(.mapErase(path: ["m"], key: "k"))
            ])
        // Lists: concurrent inserts at the head both kept, newest first; an element set last-writer-wins.
        let x = ElementId(clock: 6, clientFileId: Self.a, index: 0)
        let y = ElementId(clock: 7, clientFileId: Self.b, index: 0)
        _ = store.apply(Self.upload(6, [Self.dog(.listInsert(path: ["l"], id: x, after: .head, value: .int(1)))]), from: Self.a)
        _ = store.apply(Self.upload(7, [Self.dog(.listInsert(path: ["l"], id: y, after: .head, value: .int(2)))]), from: Self.b)
        #expect(store.objects[id]?.lists["l"]?.values == [.int(2), .int(1)])
        #expect(
            store.apply(Self.upload(5, [Self.dog(.listSet(path: ["l"], id: y, value: .int(9)))]), from: Self.a) == [
                Self.dog(.listSet(path: ["l"], id: y, value: .int(2)))
            ])
        // Embedded objects: replacing the whole object drops what was set under it before, and
        // what is set under it with an older clock afterwards.
        _ = store.apply(Self.upload(8, [Self.dog(.set(path: ["home", "city"], value: .string("Oslo")))]), from: Self.a)
        _ = store.apply(
            Self.upload(9, [Self.dog(.set(path: ["home"], value: .embedded([PropertyState("city", .string("Rome"))])))]), from: Self.b)
        #expect(store.objects[id]?.properties["home.city"] == nil)
        #expect(
            store.apply(Self.upload(8, [Self.dog(.set(path: ["home", "street"], value: .string("x")))]), from: Self.a) == [
                Self.dog(.set(path: ["home", "street"], value: .null))
            ])
    }

    /// Writes to objects that exist, applied in any order, leave the store in the same state:
    /// per-property, per-element and per-key last-writer-wins commute. (Creates and deletes do not
    /// commute, by design: a write that arrives before its object's creation is discarded.)
    @Test(arguments: [1, 2, 3] as [UInt64])
    func writesCommute(seed: UInt64) {
        var rng = seed
        func next(_ n: Int) -> Int {
            rng = rng &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            return Int((rng >> 33) % UInt64(n))
        }
        let creates = (0..<3).map { Self.upload(1, [Instruction("T", .int(Int64($0)), .create)]) }
        var writes: [(Upload, [UInt8])] = []
        for step in 0..<150 {
            let op: Instruction.Operation =
                switch next(3) {
                case 0: .set(path: ["p"], value: .int(Int64(next(100))))
                case 1:
                    next(2) == 0 ? .setAdd(path: ["s"], value: .int(Int64(next(4)))) : .setErase(path: ["s"], value: .int(Int64(next(4))))
                default:
                    next(2) == 0
                        ? .mapSet(path: ["m"], key: "\(next(3))", value: .int(Int64(step))) : .mapErase(path: ["m"], key: "\(next(3))")
                }
            // Every upload has a clock of its own (a client's clock never repeats).
            writes.append((Self.upload(UInt64(step + 2), [Instruction("T", .int(Int64(next(3))), op)]), next(2) == 0 ? Self.a : Self.b))
        }
        func state(_ order: [Int]) -> SyncStoreModel {
            var store = SyncStoreModel()
            for c in creates { _ = store.apply(c, from: Self.a) }
            for i in order { _ = store.apply(writes[i].0, from: writes[i].1) }
            return store
        }
        let reference = state(Array(writes.indices))
        #expect(reference.objects.count == 3)
        for _ in 0..<5 {
            var order = Array(writes.indices)
            for i in stride(from: order.count - 1, to: 0, by: -1) { order.swapAt(i, next(i + 1)) }
            #expect(state(order) == reference)
        }
    }
}
