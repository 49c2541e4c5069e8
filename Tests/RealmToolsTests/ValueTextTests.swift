import Foundation
import RealmQuery
import RealmStorage
import Testing

@testable import RealmTools

/// The library under the tools: value text, CSV quoting, JSON escaping
/// and the progress bar.
@Suite struct ValueTextTests {
    @Test func timestampsAreISO8601InUTC() {
        #expect(ValueText.iso8601(seconds: 0, nanoseconds: 0) == "1970-01-01T00:00:00Z")
        #expect(ValueText.iso8601(seconds: 1_700_000_000, nanoseconds: 5_000_000) == "2023-11-14T22:13:20.005Z")
        #expect(ValueText.iso8601(seconds: -1, nanoseconds: 0) == "1969-12-31T23:59:59Z")
        #expect(ValueText.iso8601(seconds: 0, nanoseconds: -1) == "1969-12-31T23:59:59.999999999Z")
        #expect(ValueText.iso8601(seconds: 951_782_400, nanoseconds: 120) == "2000-02-29T00:00:00.00000012Z")
        #expect(ValueText.iso8601(seconds: -62_135_596_800, nanoseconds: 0) == "0001-01-01T00:00:00Z")
        #expect(ValueText.iso8601(seconds: 253_402_300_800, nanoseconds: 0) == "+10000-01-01T00:00:00Z")
        // Day by day across four centuries agrees with Foundation's calendar.
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(identifier: "UTC")!
        for day in stride(from: -80_000, to: 80_000, by: 97) {
            let seconds = Int64(day) * 86_400
            let c = calendar.dateComponents([.year, .month, .day], from: Date(timeIntervalSince1970: Double(seconds)))
            let expected = String(format: "%04d-%02d-%02dT00:00:00Z", c.year!, c.month!, c.day!)
            #expect(ValueText.iso8601(seconds: seconds, nanoseconds: 0) == expected)
        }
    }

    @Test func valuesAsJSONAndCSVFields() {
        let text = ValueText(catalog: Catalog())
        #expect(text.json(.double(.nan)) == .string("nan"))
        #expect(text.json(.double(-.infinity)) == .string("-inf"))
        #expect(text.json(.double(0.1)).compact == "0.1")
        #expect(text.json(.float(0.1)).compact == "0.1")
        #expect(text.json(.binary([0, 1, 2, 255])).compact == "\"AAEC/w==\"")
        #expect(text.json(.objectId(Array(0..<12))).compact == "\"000102030405060708090a0b\"")
        #expect(text.json(.decimal128(low: 15, high: 0x303C_0000_0000_0000)).compact == "\"0.15\"")
        #expect(
            text.json(.uuid(UUID(uuidString: "6F9619FF-8B86-D011-B42D-00C04FC964FF")!)).compact
                == "\"6f9619ff-8b86-d011-b42d-00c04fc964ff\"")
        #expect(text.json(.map(["b": .int(1), "a": .null])).compact == "{\"a\":null,\"b\":1}")
        #expect(text.json(.typedLink(table: 9, key: ObjectKey(3))).compact == "{\"table\":\"#9\",\"key\":3}")
        #expect(JSONValue.string("q\"\\\n\u{1}é").compact == "\"q\\\"\\\\\\n\\u0001é\"")
        let list = ColumnSchema("l", .string, list: true)
        #expect(text.csvField(.list([.string("a,b")]), list) == "[\"a,b\"]")
        #expect(
            CSV.record(["a", "b,c", "say \"hi\"", "", nil, " x", "line\nbreak"])
                == "a,\"b,c\",\"say \"\"hi\"\"\",\"\",,\" x\",\"line\nbreak\"\r\n")
    }

    @Test func progressBar() {
        #expect(
            ProgressDisplay.bar(done: 50_000_000, total: 100_000_000, elapsed: 2, width: 10)
                == "[#####-----]  50%  50.0 MB / 100.0 MB  25.0 MB/s  2s left")
        #expect(ProgressDisplay.bar(done: 0, total: 0, elapsed: 0, width: 4) == "[####] 100%  0 bytes / 0 bytes  -")
        var lines: [String] = []
        let plain = ProgressDisplay(console: Console(out: { _ in }, err: { lines.append($0) }), isTerminal: false)
        for i in 0...100 { plain.update(Compactor.Progress(phase: .copying, bytesWritten: i * 1000, bytesExpected: 100_000)) }
        plain.update(Compactor.Progress(phase: .verifying, bytesWritten: 100_000, bytesExpected: 100_000))
        #expect(lines.count == 12)
        #expect(lines.allSatisfy { $0.hasSuffix("\n") && !$0.contains("\r") })
    }
}
