import Foundation
import RealmSyncProtocol
import Testing

/// The sync protocol's messages (Spec/SYNC.md §4, §5): every message and value round-trips, the
/// primitive encodings are the specified bytes, and malformed bytes are typed errors with offsets.
@Suite struct SyncMessageTests {
    static let fileA = [UInt8](repeating: 0xA1, count: 16)
    static let fileB = (0..<16).map { UInt8($0) }

    /// A value of every tag, nested where the format nests.
    static let values: [SyncValue] = [
        .null, .bool(false), .bool(true), .int(0), .int(-1), .int(.min), .int(.max), .float(-1.5), .float(.infinity),
        .double(.pi), .double(-0.0), .string(""), .string("é\u{301}🙂"), .binary([]), .binary([0, 255, 7]),
        .timestamp(seconds: -62_135_596_800, nanoseconds: 999_999_999), .objectId((0..<12).map { UInt8($0) }),
        .uuid([UInt8](repeating: 9, count: 16)), .decimal128(low: 1, high: 0x3040_0000_0000_0000),
        .link(class: "Dog", primaryKey: .string("rex")),
        .embedded([PropertyState("city", .string("Oslo")), PropertyState("zip", .null)]),
        .list([.int(1), .null, .string("x")]), .set([.int(3)]),
        .map([SyncValue.MapEntry("", .int(1)), SyncValue.MapEntry("k", .mixed(.double(2)))]),
        .mixed(.link(class: "Dog", primaryKey: .int(5))),
    ]

    static let messages: [SyncMessage] = [
        .hello(
            clientFileId: [], lastServerVersion: 0, lastUploadAcked: 0,
            schema: [
                SyncClass(
                    "Person", primaryKeyTag: 9,
                    properties: [
                        .init("name", valueTag: 6), .init("age", valueTag: 3, flags: 1),
                        .init("dogs", valueTag: 12, flags: 2, linkTarget: "Dog"),
                        .init("tags", valueTag: 6, flags: 4), .init("scores", valueTag: 5, flags: 8),
                    ]),
                SyncClass("Address", primaryKeyTag: 6, isEmbedded: true, properties: []),
            ]),
        .hello(clientFileId: fileA, lastServerVersion: 1 << 40, lastUploadAcked: 77, schema: []),
        .welcome(clientFileId: fileB, serverVersion: 12, serverClock: .max),
        .upload([
            Upload(
                clientVersion: 2, clock: HybridClock.value(milliseconds: 1_764_374_400_000),
                instructions: [
                    Instruction("Person", .objectId([UInt8](repeating: 1, count: 12)), .create),
                    Instruction("Person", .int(1), .set(path: ["name"], value: .string("Ada"))),
                    Instruction("Person", .int(1), .set(path: ["address", "city"], value: .string("Oslo"))),
                    Instruction(
                        "Person", .int(1),
                        .listInsert(
                            path: ["dogs"], id: ElementId(clock: 5, clientFileId: fileA, index: 0), after: .head,
                            value: .link(class: "Dog", primaryKey: .int(3)))),
                    Instruction(
                        "Person", .int(1), .listSet(path: ["dogs"], id: ElementId(clock: 5, clientFileId: fileA, index: 0), value: .null)),
                    Instruction("Person", .int(1), .listErase(path: ["dogs"], id: ElementId(clock: 5, clientFileId: fileA, index: 1))),
                    Instruction("Person", .int(1), .setAdd(path: ["tags"], value: .string("a"))),
                    Instruction("Person", .int(1), .setErase(path: ["tags"], value: .string("b"))),
                    Instruction("Person", .int(1), .mapSet(path: ["scores"], key: "x", value: .double(1))),
                    Instruction("Person", .int(1), .mapErase(path: ["scores"], key: "y")),
                    Instruction(
                        "Person", .int(1),
                        .listState(path: ["tags"], ids: [ElementId(clock: 5, clientFileId: fileA, index: 2)], values: [.string("c")])),
                    Instruction("Person", .int(2), .erase),
                ]),
            Upload(clientVersion: 3, clock: 1, instructions: []),
        ]),
        .uploadAck(clientVersion: 3, serverVersion: 9),
        .uploadPart(Upload(clientVersion: 4, clock: 7, instructions: [Instruction("Person", .int(1), .create)]), last: false),
        .uploadPart(Upload(clientVersion: 4, clock: 7, instructions: []), last: true),
        .query(
            querySetVersion: 4,
            subscriptions: [
                Subscription(name: "adults", className: "Person", query: "age > 17"),
                Subscription(className: "Dog", query: "TRUEPREDICATE"),
            ]),
        .bootstrap(
            querySetVersion: 4, serverVersion: 9,
            objects: [
                ObjectState(
                    "Person", .int(1),
                    [
                        PropertyState("name", .string("Ada")),
                        PropertyState(
                            "dogs", .list([.link(class: "Dog", primaryKey: .int(3))]),
                            ids: [ElementId(clock: 5, clientFileId: fileA, index: 0)]),
                    ])
            ], last: true),
        .download(
            fromVersion: 8,
            entries: [
                Entry(serverVersion: 9, originClientFileId: fileA, originClientVersion: 3, clock: 1, instructions: []),
                Entry(
                    serverVersion: 10, originClientFileId: [], originClientVersion: 0, clock: 2,
                    instructions: [Instruction("Dog", .int(3), .erase)]),
            ], latestServerVersion: 10),
        .error(code: 7, message: "cannot compile 'a.@count > 1'", fatal: false, clientVersion: 0),
        .downloadPart(
            fromVersion: 10,
            entry: Entry(
                serverVersion: 11, originClientFileId: fileB, originClientVersion: 4, clock: 7,
                instructions: [Instruction("Dog", .int(3), .create)]),
            last: false, latestServerVersion: 12),
        .downloadPart(
            fromVersion: 10, entry: Entry(serverVersion: 11, originClientFileId: [], originClientVersion: 0, clock: 7, instructions: []),
            last: true, latestServerVersion: 12),
        .writeRefused(
            clientVersion: 5, objects: [SyncStoreModel.ObjectID("Doc", .string("a1")), SyncStoreModel.ObjectID("Dog", .int(-3))],
            reason: "permission denied"),
        .writeRefused(clientVersion: 6, objects: [], reason: ""),
    ]

    @Test(arguments: messages)
    func messagesRoundTrip(_ m: SyncMessage) throws {
        let bytes = m.encoded()
        #expect(bytes.first == m.type)
        #expect(try SyncMessage.decode(bytes) == m)
    }

    @Test func everyValueRoundTrips() throws {
        for v in Self.values {
            var w = WireWriter()
            w.value(v)
            var r = WireReader(w.bytes)
            #expect(try r.value() == v, "\(v)")
            #expect(r.isAtEnd)
        }
    }

    /// The primitive encodings are the bytes Spec/SYNC.md §1 names.
    @Test func primitivesAreTheSpecifiedBytes() throws {
        var w = WireWriter()
        w.uvarint(0)
        w.uvarint(127)
        w.uvarint(128)
        w.uvarint(.max)
        w.svarint(-1)
        w.svarint(1)
        w.svarint(.min)
        w.string("é")
        w.u64(0x0102_0304_0506_0708)
        #expect(
            w.bytes == [0x00, 0x7F, 0x80, 0x01] + [UInt8](repeating: 0xFF, count: 9) + [0x01] + [0x01, 0x02]
                + [UInt8](repeating: 0xFF, count: 9) + [0x01] + [0x02, 0xC3, 0xA9] + [8, 7, 6, 5, 4, 3, 2, 1])
        var r = WireReader(w.bytes)
        #expect(try r.uvarint() == 0 && r.uvarint() == 127 && r.uvarint() == 128 && r.uvarint() == .max)
        #expect(try r.svarint() == -1 && r.svarint() == 1 && r.svarint() == .min)
        #expect(try r.string() == "é" && r.u64() == 0x0102_0304_0506_0708 && r.isAtEnd)
        // A tag's value and a clock's layout.
        #expect(SyncValue.bool(true).tag == 2 && SyncValue.mixed(.null).tag == 17)
        #expect(HybridClock.value(milliseconds: 1) == 1 << 16)
    }

    /// A `BOOTSTRAP_TABLE` is the bytes §4 lists: header, the key column, each property's column,
    /// then the others' flag; its objects are its rows.
    @Test func bootstrapTableIsTheSpecifiedBytes() throws {
        // Made here, not among the static `messages`: LeakSanitizer reports the arrays of a
        // table kept in a static until exit as leaked (it does not see the reference to them).
        for m: SyncMessage in [
            .bootstrapTable(
                querySetVersion: 4, serverVersion: 9,
                table: BootstrapTable(
                    className: "Person", properties: ["name", "age"], keys: [.int(1), .int(2)],
                    columns: [[.string("Ada"), .null], [.null, .int(-3)]],
                    others: [[PropertyState("tags", .set([.string("a")]))], []])),
            .bootstrapTable(
                querySetVersion: 1, serverVersion: 1,
                table: BootstrapTable(className: "Dog", properties: [], keys: [.string("rex")], columns: [])),
        ] {
            #expect(try SyncMessage.decode(m.encoded()) == m)
            let bytes = m.encoded()
            for n in 0..<bytes.count { #expect(throws: WireError.self) { try SyncMessage.decode(Array(bytes.prefix(n))) } }
        }
        let table = BootstrapTable(className: "D", properties: ["n"], keys: [.int(1), .int(-1)], columns: [[.string("a"), .null]])
        let bytes = SyncMessage.bootstrapTable(querySetVersion: 2, serverVersion: 3, table: table).encoded()
        #expect(bytes == [11, 2, 3, 1, 0x44, 1, 1, 0x6E, 2, 3, 2, 3, 1, 6, 1, 0x61, 0, 0])
        #expect(
            table.objects == [
                ObjectState("D", .int(1), [PropertyState("n", .string("a"))]), ObjectState("D", .int(-1), [PropertyState("n", .null)]),
            ])
        // A row count the message cannot hold, and a missing column, are typed errors.
        #expect(throws: WireError.self) { try SyncMessage.decode([11, 2, 3, 1, 0x44, 0, 0x7F]) }
        #expect(throws: WireError.self) { try SyncMessage.decode(Array(bytes.dropLast(4)) + [0]) }
    }

    /// Every prefix of every message is a typed error (never a crash), and so is every message
    /// with a byte more; so are the specific malformations the spec names.
    @Test func malformedBytesAreTypedErrors() throws {
        for m in Self.messages {
            let bytes = m.encoded()
            for n in 0..<bytes.count {
                #expect(throws: WireError.self) { try SyncMessage.decode(Array(bytes.prefix(n))) }
            }
            #expect(throws: WireError.self) { try SyncMessage.decode(bytes + [0]) }
        }
        func fails(_ bytes: [UInt8], _ reason: String, at offset: Int) {
            do {
                _ = try SyncMessage.decode(bytes)
                Issue.record("\(bytes) decoded")
            } catch {
                #expect(error.reason.contains(reason) && error.offset == offset, "\(error)")
            }
        }
        fails([0], "unknown message type 0", at: 0)
        fails([99], "unknown message type 99", at: 0)
        fails([2, 3, 1, 2, 3, 0, 0, 0, 0, 0, 0, 0, 0, 0], "not 16", at: 1)  // a 3-byte client file id
        fails([4] + [UInt8](repeating: 0xFF, count: 10) + [0x02], "longer than 64 bits", at: 10)
        fails([8, 1, 0, 2, 0], "a flag of 2", at: 3)
        fails([5, 0, 0xFF, 0xFF, 0xFF, 0xFF, 0x0F], "does not fit the message", at: 2)  // a huge count
        fails([8, 1, 2, 0xC3, 0x28, 0, 0], "not valid UTF-8", at: 2)
        // A value with an unknown tag, a mixed collection, and nanoseconds of a whole second.
        for (value, reason): ([UInt8], String) in [
            ([18], "unknown value tag 18"), ([17, 14, 0], "mixed value holding"), ([8, 0, 0x80, 0x94, 0xEB, 0xDC, 0x03], "nanoseconds"),
        ] {
            var r = WireReader(value)
            #expect(throws: WireError.self) { _ = try r.value() }
            var again = WireReader(value)
            do { _ = try again.value() } catch { #expect(error.reason.contains(reason), "\(error)") }
        }
        // Nesting deeper than 64 is refused, not recursed into.
        var deep = WireWriter()
        for _ in 0..<100 { deep.u8(17) }
        deep.u8(0)
        var r = WireReader(deep.bytes)
        #expect(throws: WireError.self) { _ = try r.value() }
    }

    /// The clock never goes backwards and moves past what it observes (§6.1).
    @Test func theHybridClockIsMonotonic() {
        var clock = HybridClock()
        let a = clock.next(milliseconds: 1000)
        let b = clock.next(milliseconds: 1000)  // the same millisecond: the counter moves
        let c = clock.next(milliseconds: 900)  // the wall clock went back: still later
        #expect(a == HybridClock.value(milliseconds: 1000) && b == a + 1 && c == b + 1)
        clock.observe(HybridClock.value(milliseconds: 5000) + 7)
        #expect(clock.next(milliseconds: 1001) == HybridClock.value(milliseconds: 5000) + 8)
        #expect(clock.next(milliseconds: 6000) == HybridClock.value(milliseconds: 6000))
        // Element identities order by clock, then client file, then index (§6.4).
        let x = ElementId(clock: 2, clientFileId: Self.fileA, index: 0)
        #expect(ElementId.head < x && x < ElementId(clock: 2, clientFileId: Self.fileA, index: 1))
        #expect(ElementId(clock: 2, clientFileId: Self.fileB, index: 9) < x)
    }
}

extension SyncMessage: CustomTestStringConvertible {
    public var testDescription: String { "type \(type)" }
}
