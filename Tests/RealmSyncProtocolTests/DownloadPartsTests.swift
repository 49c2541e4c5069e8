import RealmSyncProtocol
import RealmTestSupport
import Testing

/// Downloads cut to a byte budget (Spec/SYNC.md §4 `DOWNLOAD_PART`, §8.3): whatever the entries,
/// the messages stay near the budget, and a client that receives them in order gets back exactly
/// the entries, whatever their size.
@Suite struct DownloadPartsTests {
    static let file = (0..<16).map { UInt8($0) }

    /// Random entries: small and large instructions, long lists, empty entries, and now and then
    /// an entry far larger than any budget. Each instruction names its own object, so no two
    /// `LIST_STATE`s of one list follow each other.
    static func entries(_ rng: inout SplitMix, after: UInt64) -> [Entry] {
        var key: Int64 = 0
        func instruction() -> Instruction {
            key += 1
            switch Int.random(in: 0..<10, using: &rng) {
            case 0: return Instruction("Dog", .int(key), .create)
            case 1: return Instruction("Dog", .int(key), .erase)
            case 2...4:
                let n = Int.random(in: 0...600, using: &rng)
                let values: [SyncValue] = (0..<n).map { k in
                    k % 7 == 3 ? .string(String(repeating: "s", count: k % 300)) : .int(Int64(k) << (k % 40))
                }
                let ids = (0..<n).map { ElementId(clock: UInt64(k: $0), clientFileId: file, index: UInt64($0 % 5)) }
                return Instruction("Dog", .int(key), .listState(path: ["list"], ids: ids, values: values))
            default:
                let text = String(repeating: "x", count: Int.random(in: 0...5_000, using: &rng))
                return Instruction("Dog", .int(key), .set(path: ["name"], value: .string(text)))
            }
        }
        var out: [Entry] = []
        var version = after
        for _ in 0..<Int.random(in: 0...12, using: &rng) {
            version += UInt64.random(in: 1...3, using: &rng)
            let count = Int.random(in: 0..<8, using: &rng) == 0 ? Int.random(in: 50...200, using: &rng) : Int.random(in: 0...6, using: &rng)
            out.append(
                Entry(
                    serverVersion: version, originClientFileId: Bool.random(using: &rng) ? file : [], originClientVersion: version / 2,
                    clock: version << 16, instructions: (0..<count).map { _ in instruction() }))
        }
        return out
    }

    @Test(arguments: [64, 1_000, 16_384, 1 << 20])
    func cutDownloadsStayNearTheBudgetAndComeBackWhole(budget: Int) throws {
        var rng = SplitMix(seed: UInt64(budget))
        for round in 0..<25 {
            let start = UInt64(round * 1_000)
            let entries = Self.entries(&rng, after: start)
            let messages = SyncMessage.downloads(fromVersion: start, entries: entries, latestServerVersion: start + 999, budget: budget)
            #expect(messages.isEmpty == entries.isEmpty)
            // What a client does with them, in order.
            var assembly = DownloadAssembly()
            var version = start
            var received: [Entry] = []
            for m in messages {
                let bytes = m.encoded()
                #expect(try SyncMessage.decode(bytes) == m)
                switch m {
                case .download(let from, let batch, let latest):
                    #expect(assembly.partial == nil && from == version && latest == start + 999)
                    // Over the budget only by its header, or an entry alone (then one not larger
                    // than the budget: larger ones go in parts).
                    #expect(bytes.count <= budget + 16 || batch.count == 1, "\(bytes.count) bytes, \(batch.count) entries")
                    received += batch
                    version = batch.last?.serverVersion ?? version
                case .downloadPart(let from, let part, let last, _):
                    #expect(from == version)
                    var w = WireWriter()
                    w.instructions(part.instructions)
                    // Over the budget by one element of a list at most, or by one instruction
                    // that cannot be cut.
                    #expect(w.bytes.count <= budget + 400 || part.instructions.count == 1, "\(w.bytes.count) bytes")
                    if let whole = try assembly.add(part, last: last) {
                        received.append(whole)
                        version = whole.serverVersion
                    }
                default: Issue.record("unexpected \(m.type)")
                }
            }
            #expect(assembly.partial == nil)
            // (The first difference only: the entries are too large to print.)
            #expect(received.count == entries.count, "round \(round)")
            if let k = received.indices.first(where: { $0 < entries.count && received[$0] != entries[$0] }) {
                Issue.record("round \(round): entry \(k) differs (version \(entries[k].serverVersion))")
            }
        }
    }

    /// A list too long for one message arrives in pieces that the client joins into one list.
    @Test func aListLongerThanAMessageIsCutAndJoined() throws {
        let ids = (0..<10_000).map { ElementId(clock: UInt64($0), clientFileId: Self.file, index: 0) }
        let list = Instruction("Dog", .int(1), .listState(path: ["list"], ids: ids, values: ids.indices.map { .int(Int64($0)) }))
        let entry = Entry(
            serverVersion: 5, originClientFileId: [], originClientVersion: 0, clock: 1,
            instructions: [Instruction("Dog", .int(1), .create), list, Instruction("Dog", .int(2), .erase)])
        let messages = SyncMessage.downloads(fromVersion: 4, entries: [entry], latestServerVersion: 5, budget: 20_000)
        #expect(messages.count > 5)
        var assembly = DownloadAssembly()
        var whole: Entry?
        for (k, m) in messages.enumerated() {
            guard case .downloadPart(4, let part, let last, 5) = m else {
                Issue.record("expected DOWNLOAD_PART, got \(m.type)")
                return
            }
            #expect(last == (k == messages.count - 1))
            whole = try assembly.add(part, last: last)
        }
        #expect(whole == entry)
    }

    /// A part of another entry among an entry's parts is a protocol error, and so is a DOWNLOAD
    /// there (the client checks the latter, §4).
    @Test func aPartOfAnotherEntryIsAnError() throws {
        var assembly = DownloadAssembly()
        let a = Entry(serverVersion: 7, originClientFileId: [], originClientVersion: 0, clock: 1, instructions: [])
        var b = a
        b.serverVersion = 8
        #expect(try assembly.add(a, last: false) == nil)
        #expect(throws: WireError.self) { try assembly.add(b, last: true) }
        var c = a
        c.clock = 2
        assembly.reset()
        #expect(try assembly.add(a, last: false) == nil)
        #expect(throws: WireError.self) { try assembly.add(c, last: true) }
        assembly.reset()
        #expect(assembly.partial == nil)
        #expect(try assembly.add(b, last: true) == b)
    }

    /// `DOWNLOAD_PART` is the bytes §4 lists.
    @Test func aDownloadPartIsTheSpecifiedBytes() throws {
        let part = SyncMessage.downloadPart(
            fromVersion: 3,
            entry: Entry(
                serverVersion: 4, originClientFileId: [], originClientVersion: 0, clock: 1,
                instructions: [Instruction("D", .int(1), .create)]),
            last: true, latestServerVersion: 9)
        // type, fromVersion, serverVersion, origin (empty), originClientVersion, clock (u64),
        // last, one instruction (CREATE, "D", int 1), latestServerVersion.
        #expect(part.encoded() == [12, 3, 4, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 0x44, 3, 2, 9])
    }
}

extension UInt64 {
    /// A clock value that grows with `k` and takes uvarints of several lengths.
    fileprivate init(k: Int) { self = UInt64(k) << UInt64(k % 30) }
}
