import Foundation
import RealmStorage
import RealmTestSupport
import Testing

@testable import RealmFuzzHarness

/// Replays every corpus file of Fuzz/Corpus/<Target>/ (FileOpen, SegmentDecode, Predicate,
/// Operations) through the fuzz harness (no libFuzzer needed), plus seeded sweeps of flipped and
/// truncated files, random segments, random query text and random operation programs: the harness
/// must return — an error is fine, a trap (a crash or a difference from the model) is a bug.
@Suite struct CorpusReplayTests {
    static let corpus = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("Fuzz/Corpus")

    static func files(_ target: String) -> [URL] {
        let dir = corpus.appendingPathComponent(target)
        let names = (try? FileManager.default.contentsOfDirectory(atPath: dir.path)) ?? []
        return names.sorted().map { dir.appendingPathComponent($0) }
    }

    @Test func fileOpenCorpusReplays() throws {
        let seeds = Self.files("FileOpen")
        #expect(!seeds.isEmpty)
        for url in seeds { FuzzHarness.fileOpen([UInt8](try Data(contentsOf: url))) }
    }

    @Test func predicateCorpusReplays() throws {
        let seeds = Self.files("Predicate")
        #expect(!seeds.isEmpty)
        for url in seeds { FuzzHarness.predicate([UInt8](try Data(contentsOf: url))) }
    }

    @Test func damageBehindRepairedChecksumsNeverCrashesTheReader() throws {
        let pristine = try #require(PristineFile.shared)
        #expect(pristine.blocks.count > 20)
        #expect(pristine.blocks.contains { $0.isRecord })
        // With nothing damaged, the repair changes nothing.
        #expect(pristine.mutated(by: []) == pristine.bytes)
        var rng = SplitMix(seed: 17 &* UInt64(Self.sweep))
        var opened = 0
        for _ in 0..<(60 * Self.sweep) {
            let program = [0x7f] + (0..<(1 + rng.below(24))).map { _ in UInt8(rng.below(256)) }
            let bytes = pristine.mutated(by: program)
            let path = FileManager.default.temporaryDirectory.appendingPathComponent("realm-fuzz-test-\(UUID().uuidString).realm").path
            #expect(FileManager.default.createFile(atPath: path, contents: Data(bytes)))
            if (try? Store.open(at: path, options: .passive).snapshot()) != nil { opened += 1 }
            try? FileManager.default.removeItem(atPath: path)
            FuzzHarness.fileOpen(program)
        }
        // The repaired checksums let most damaged files open (the damage is then behind them).
        #expect(opened > 30 * Self.sweep)
    }

    @Test func segmentDecodeCorpusReplays() throws {
        let seeds = Self.files("SegmentDecode")
        #expect(!seeds.isEmpty)
        for url in seeds { FuzzHarness.segmentDecode([UInt8](try Data(contentsOf: url))) }
    }

    @Test func operationsCorpusReplays() throws {
        let seeds = Self.files("Operations")
        #expect(!seeds.isEmpty)
        for url in seeds { FuzzHarness.operations([UInt8](try Data(contentsOf: url))) }
    }

    @Test func randomSegmentsNeverCrashTheDecoder() {
        var rng = SplitMix(seed: 11)
        for round in 0..<600 {
            let bytes = [UInt8(round % 3)] + (0..<rng.below(200)).map { _ in UInt8(rng.below(256)) }
            FuzzHarness.segmentDecode(bytes)
        }
    }

    /// `FUZZ_SWEEP=N` multiplies the random sweeps (a quick debug-build shake-out before fuzzing).
    static let sweep = ProcessInfo.processInfo.environment["FUZZ_SWEEP"].flatMap(Int.init) ?? 1

    @Test func randomProgramsMatchTheModel() {
        var rng = SplitMix(seed: 13 &* UInt64(Self.sweep))
        for _ in 0..<(40 * Self.sweep) { FuzzHarness.operations((0..<rng.below(160)).map { _ in UInt8(rng.below(256)) }) }
    }

    @Test(arguments: ["v1-people.realm", "v2-collections.realm"])
    func mutatedFilesNeverCrashTheReader(seed: String) throws {
        let original = [UInt8](try Data(contentsOf: Self.corpus.appendingPathComponent("FileOpen/\(seed)")))
        var rng = SplitMix(seed: UInt64(original.count))
        for round in 0..<40 {
            var bytes = original
            if round % 8 == 7 {
                bytes = Array(bytes.prefix(rng.below(bytes.count)))
            } else {
                for _ in 0...(rng.below(4)) { bytes[rng.below(bytes.count)] ^= UInt8(1 << rng.below(8)) }
            }
            FuzzHarness.fileOpen(bytes)
        }
    }

    @Test func randomQueryTextNeverCrashesTheBinder() {
        var rng = SplitMix(seed: 7)
        let pieces = [
            "age", "name", "dogs", ".", "@count", "@avg", "ANY", "NONE", "(", ")", ">", "==", "BETWEEN", "{", "}", ",", "1", "'a'",
            "%@", "%K", "AND", "OR", "NOT", "SUBQUERY", "$x", "[c]", "LIKE", "nil", "tags", "scores", "any", " ",
        ]
        for _ in 0..<500 {
            let text = (0..<rng.below(12)).map { _ in pieces[rng.below(pieces.count)] }.joined(separator: " ")
            FuzzHarness.predicate(Array(text.utf8))
        }
    }
}
