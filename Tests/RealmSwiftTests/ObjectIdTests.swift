import Foundation
import Testing

@testable import RealmSwift

@Suite struct ObjectIdTests {
    @Test func generatedIdsAreUnique() {
        var seen = Set<ObjectId>()
        for _ in 0..<10_000 {
            seen.insert(ObjectId.generate())
        }
        #expect(seen.count == 10_000)
        #expect(ObjectId() != ObjectId())
    }

    @Test func generatedIdsAreUniqueAcrossThreads() async {
        let ids = await withTaskGroup(of: [ObjectId].self) { group in
            for _ in 0..<4 {
                group.addTask { (0..<2_000).map { _ in ObjectId.generate() } }
            }
            var all: [ObjectId] = []
            for await batch in group {
                all.append(contentsOf: batch)
            }
            return all
        }
        #expect(Set(ids).count == 8_000)
    }

    @Test func counterIncreasesAndProcessValueIsShared() {
        var previous = ObjectId.generate()
        for _ in 0..<1_000 {
            let next = ObjectId.generate()
            // Other tests may generate ids concurrently, so the counter may skip values, but it
            // always moves forward (modulo 2^24).
            let step = (next.counterValue &- previous.counterValue) & 0xFF_FFFF
            #expect(step >= 1 && step < 0x80_0000)
            // Bytes 4...8 are the per-process random value.
            #expect(next.bytes[4..<9] == previous.bytes[4..<9])
            previous = next
        }
    }

    @Test func generatedTimestampIsNow() {
        let before = Date().timeIntervalSince1970.rounded(.down)
        let id = ObjectId.generate()
        let after = Date().timeIntervalSince1970
        #expect(id.timestamp.timeIntervalSince1970 >= before)
        #expect(id.timestamp.timeIntervalSince1970 <= after)
    }

    @Test(arguments: [
        "000000000000000000000000",
        "ffffffffffffffffffffffff",
        "0123456789abcdef01234567",
        "5f1b2c3d4e5f607182930a1b",
        "62b1f1c2e4b0a1b2c3d4e5f6",
    ])
    func hexRoundTrip(_ string: String) throws {
        let id = try ObjectId(string: string)
        #expect(id.stringValue == string)
        #expect(id.description == string)
        #expect(try ObjectId(string: id.stringValue) == id)
    }

    @Test func uppercaseIsAcceptedAndLowercased() throws {
        let id = try ObjectId(string: "0123456789ABCDEFabcdefAB")
        #expect(id.stringValue == "0123456789abcdefabcdefab")
        #expect(id == (try ObjectId(string: "0123456789abcdefabcdefab")))
    }

    @Test func generatedRoundTrip() throws {
        for _ in 0..<100 {
            let id = ObjectId.generate()
            #expect(id.stringValue.count == 24)
            #expect(try ObjectId(string: id.stringValue) == id)
        }
    }

    @Test(arguments: [
        "",
        "0",
        "0123456789abcdef0123456",
        "0123456789abcdef012345678",
        "0123456789abcdef0123456g",
        "0123456789abcdef 1234567",
        " 0123456789abcdef01234567",
        "0x23456789abcdef01234567",
        "0123456789abcdef0123456\u{e9}",
        "zzzzzzzzzzzzzzzzzzzzzzzz",
    ])
    func invalidStringsThrow(_ string: String) {
        #expect(throws: ObjectIdParseError.self) { try ObjectId(string: string) }
        #expect(throws: ObjectIdParseError(input: string)) { try ObjectId(string: string) }
    }

    @Test func parseErrorDescriptionMentionsInput() {
        do {
            _ = try ObjectId(string: "nope")
            Issue.record("expected an error")
        } catch {
            #expect(String(describing: error).contains("nope"))
        }
    }

    @Test func timestampRoundTrip() {
        let date = Date(timeIntervalSince1970: 1_700_000_000.75)
        let id = ObjectId(timestamp: date, machineId: 0x12_3456, processId: 0x789A)
        #expect(id.timestamp == Date(timeIntervalSince1970: 1_700_000_000))
        #expect(id.stringValue.hasPrefix("6553f100"))
        #expect(id.stringValue.dropFirst(8).prefix(10) == "123456789a")
    }

    @Test func timestampEdges() {
        let epoch = ObjectId(timestamp: Date(timeIntervalSince1970: 0), machineId: 0, processId: 0)
        #expect(epoch.timestamp == Date(timeIntervalSince1970: 0))
        #expect(epoch.stringValue.hasPrefix("0000000000000000"))
        let beforeEpoch = ObjectId(timestamp: Date(timeIntervalSince1970: -100), machineId: 0, processId: 0)
        #expect(beforeEpoch.timestamp == Date(timeIntervalSince1970: 0))
        let late = ObjectId(timestamp: Date(timeIntervalSince1970: 5_000_000_000), machineId: 0, processId: 0)
        #expect(late.timestamp == Date(timeIntervalSince1970: TimeInterval(UInt32.max)))
        let parsed = try? ObjectId(string: "ffffffff0000000000000000")
        #expect(parsed?.timestamp == Date(timeIntervalSince1970: 4_294_967_295))
    }

    @Test func machineAndProcessIdsAreTruncated() {
        let id = ObjectId(timestamp: Date(timeIntervalSince1970: 1), machineId: -1, processId: 0x1_2345)
        #expect(id.bytes[4..<9] == [0xFF, 0xFF, 0xFF, 0x23, 0x45])
    }

    @Test func orderingIsLexicographicByBytes() throws {
        let sorted = try [
            "000000000000000000000000",
            "000000000000000000000001",
            "0000000000000000000000ff",
            "000000000000000100000000",
            "00000000000000ff00000000",
            "0000000100000000ffffffff",
            "7fffffffffffffffffffffff",
            "800000000000000000000000",
            "ffffffffffffffffffffffff",
        ].map { try ObjectId(string: $0) }
        for i in sorted.indices {
            for j in sorted.indices {
                #expect((sorted[i] < sorted[j]) == (i < j))
                #expect((sorted[i] == sorted[j]) == (i == j))
                #expect((sorted[i] < sorted[j]) == sorted[i].bytes.lexicographicallyPrecedes(sorted[j].bytes))
            }
        }
        #expect(sorted.shuffled().sorted() == sorted)
    }

    @Test func laterTimestampsSortLater() {
        let early = ObjectId(timestamp: Date(timeIntervalSince1970: 1_000), machineId: 0xFF_FFFF, processId: 0xFFFF)
        let late = ObjectId(timestamp: Date(timeIntervalSince1970: 1_001), machineId: 0, processId: 0)
        #expect(early < late)
    }

    @Test func codableRoundTrip() throws {
        struct Wrapper: Codable, Equatable {
            var id: ObjectId
            var ids: [ObjectId]
        }
        let value = Wrapper(id: ObjectId.generate(), ids: [ObjectId.generate(), try ObjectId(string: "0123456789abcdef01234567")])
        let data = try JSONEncoder().encode(value)
        let json = String(decoding: data, as: UTF8.self)
        #expect(json.contains("\"0123456789abcdef01234567\""))
        #expect(json.contains("\"\(value.id.stringValue)\""))
        #expect(try JSONDecoder().decode(Wrapper.self, from: data) == value)
    }

    @Test func codableEncodesSingleString() throws {
        let id = try ObjectId(string: "5f1b2c3d4e5f607182930a1b")
        let data = try JSONEncoder().encode([id])
        #expect(String(decoding: data, as: UTF8.self) == "[\"5f1b2c3d4e5f607182930a1b\"]")
    }

    @Test func decodingInvalidStringFails() {
        let data = Data("[\"not an object id\"]".utf8)
        #expect(throws: DecodingError.self) { try JSONDecoder().decode([ObjectId].self, from: data) }
        #expect(throws: DecodingError.self) { try JSONDecoder().decode([ObjectId].self, from: Data("[42]".utf8)) }
    }

    @Test func bytesBridging() throws {
        let bytes: [UInt8] = [0x01, 0x23, 0x45, 0x67, 0x89, 0xAB, 0xCD, 0xEF, 0xFE, 0xDC, 0xBA, 0x98]
        let id = try #require(ObjectId(bytes: bytes))
        #expect(id.bytes == bytes)
        #expect(id.stringValue == "0123456789abcdeffedcba98")
        #expect(ObjectId(bytes: id.bytes) == id)
        let generated = ObjectId.generate()
        #expect(ObjectId(bytes: generated.bytes) == generated)
        #expect(generated.bytes.count == 12)
    }

    @Test func bytesBridgingRejectsWrongLengths() {
        #expect(ObjectId(bytes: []) == nil)
        #expect(ObjectId(bytes: [UInt8](repeating: 1, count: 11)) == nil)
        #expect(ObjectId(bytes: [UInt8](repeating: 1, count: 13)) == nil)
        #expect(ObjectId(bytes: [UInt8](repeating: 0, count: 12)) != nil)
    }

    @Test func hashingMatchesEquality() throws {
        let a = try ObjectId(string: "0123456789abcdef01234567")
        let b = try ObjectId(string: "0123456789ABCDEF01234567")
        #expect(a == b)
        #expect(a.hashValue == b.hashValue)
        #expect(Set([a, b]).count == 1)
    }

    @Test func isCompact() {
        #expect(MemoryLayout<ObjectId>.size <= 16)
        #expect(MemoryLayout<ObjectId?>.size <= 17)
    }
}
