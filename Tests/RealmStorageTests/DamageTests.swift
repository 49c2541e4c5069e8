import Foundation
import RealmTestSupport
import Testing

@testable import RealmStorage

/// Damage is reported, never read as an older version (Spec/FORMAT.md §6.6): a crash can only tear
/// the last commit, so a failed commit head, record or slot with a later commit after it is damage.
@Suite struct DamageTests {
    /// Everything a version holds, as text: its number and every object of every table.
    static func digest(_ s: Snapshot) throws -> String {
        var out = "v\(s.version)"
        for t in s.catalog.tables {
            out += "|\(t.name):"
            for key in try s.objectKeys(t.name) {
                let o = try s.object(t.name, key)
                out += "\(key.rawValue)=" + o.keys.sorted().map { "\($0):\(o[$0]!)" }.joined(separator: ",") + ";"
            }
        }
        return out
    }

    /// What opening a file gives: its digest, or the error.
    enum Outcome: Equatable {
        case data(version: UInt64, digest: String)
        case error(StorageError.Code)
    }

    static func outcome(_ path: String) -> Outcome {
        do {
            let s = try Store.open(at: path, options: .init(readOnly: true)).snapshot()
            return .data(version: s.version, digest: try digest(s))
        } catch let e as StorageError {
            return .error(e.code)
        } catch {
            return .error(.io)
        }
    }

    /// The byte ranges of a file's commit heads, version records and header slots, and which of them
    /// belong to its last commit.
    struct Structures {
        var ranges: [(range: Range<Int>, what: String)] = []
        var last: [Range<Int>] = []
        var lastVersion: UInt64 = 0
        var parentVersion: UInt64 = 0
        /// The commits of the last group (format 7, Spec/FORMAT.md §6.4): the last commit and each
        /// one whose successor's head names an older version as acknowledged. A crash can tear any of
        /// them, so damage to one may be read as any version from the group's base to the one before it.
        var lastGroup: [(version: UInt64, ranges: [Range<Int>])] = []
        /// The version the last group was built on.
        var groupBase: UInt64 = 0
    }

    static func structures(_ path: String) throws -> Structures {
        let r = try Inspector().inspect(path: path)
        var out = Structures()
        let bytes = fileBytes(path)
        for (i, o) in FileHeader.slotOffsets.enumerated() {
            out.ranges.append((o..<o + FileHeader.slotSize, "slot \(i)"))
        }
        let newest = try #require(r.versions.first)
        out.lastVersion = newest.version
        for v in r.versions {
            let record = Int(v.recordOffset)..<Int(v.recordOffset + v.recordLength)
            out.ranges.append((record, "record of v\(v.version)"))
            var head: Range<Int>?
            let h = Int(v.commitStart) - CommitHead.size
            if h >= FileHeader.size, let decoded = CommitHead.decode(ByteView(copying: Array(bytes[h..<h + CommitHead.size]))),
                decoded.slot.version == v.version
            {
                head = h..<h + CommitHead.size
                out.ranges.append((head!, "head of v\(v.version)"))
            }
            // In the last group: the newest commit, or one whose successor (the group's previous
            // member) was written before it was acknowledged.
            let successorAcknowledged = out.lastGroup.last.flatMap { m in
                r.versions.first { $0.version == m.version }.flatMap { w -> UInt64? in
                    let h = Int(w.commitStart) - CommitHead.size
                    guard h >= FileHeader.size else { return nil }
                    return CommitHead.decode(ByteView(copying: Array(bytes[h..<h + CommitHead.size])))?.acknowledgedVersion
                }
            }
            if v.version == newest.version || (out.groupBase == 0 && (successorAcknowledged ?? v.version) < v.version) {
                var ranges = [record, Int(v.commitStart)..<Int(v.recordOffset)] + (head.map { [$0] } ?? [])
                for s in r.slots where s.version == v.version {
                    ranges.append(FileHeader.slotOffsets[s.index]..<FileHeader.slotOffsets[s.index] + FileHeader.slotSize)
                }
                out.lastGroup.append((v.version, ranges))
            } else if out.groupBase == 0 {
                out.groupBase = v.version
            }
            if v.version == newest.version {
                out.last = [record, Int(v.commitStart)..<Int(v.recordOffset)] + (head.map { [$0] } ?? [])
                out.parentVersion = r.versions.count > 1 ? r.versions[1].version : 0
                for s in r.slots where s.version == v.version {
                    out.last.append(FileHeader.slotOffsets[s.index]..<FileHeader.slotOffsets[s.index] + FileHeader.slotSize)
                }
            }
        }
        return out
    }

    /// The data of the version before the last commit: the file as a crash that tore the last
    /// commit would leave it (its head, region, record and slot zeroed).
    static func parentOutcome(_ path: String, _ st: Structures, _ dir: TempDir) throws -> Outcome {
        var bytes = fileBytes(path)
        for r in st.last { for i in r { bytes[i] = 0 } }
        let torn = dir.file("torn.realm")
        _ = FileManager.default.createFile(atPath: torn, contents: Data(bytes))
        return outcome(torn)
    }

    /// Flips every byte of every commit head, record and slot of `path`, one at a time, and checks
    /// each outcome: the same data, a typed error, or (only for a byte of the last commit) the
    /// version before it.
    /// `part` of `parts`: only every `parts`-th structure, so a large file's flips run in parallel.
    static func flipEveryStructureByte(_ path: String, dir: TempDir, part: Int = 0, of parts: Int = 1) throws -> Int {
        let st = try structures(path)
        let original = outcome(path)
        guard case .data(let newest, _) = original else {
            Issue.record("\(path) does not open: \(original)")
            return 0
        }
        #expect(newest == st.lastVersion)
        let parent = try parentOutcome(path, st, dir)
        // The data of every version a torn last group may leave (its base up to its newest).
        var groupDigests: [UInt64: String] = [:]
        if st.lastGroup.count > 1 {
            let s = try Store.open(at: path, options: .init(readOnly: true)).snapshot()
            for h in try s.history(since: st.groupBase - 1) { groupDigests[h.version] = try digest(h) }
        }
        let copy = dir.file("flipped.realm")
        try? FileManager.default.removeItem(atPath: copy)
        try FileManager.default.copyItem(atPath: path, toPath: copy)
        let handle = try FileHandle(forUpdating: URL(fileURLWithPath: copy))
        defer { try? handle.close() }
        let bytes = fileBytes(path)
        var flips = 0
        var bad: [String] = []
        var seen = Set<Int>()
        for (n, (range, what)) in st.ranges.enumerated() where n % parts == part {
            for at in range where seen.insert(at).inserted {
                try handle.seek(toOffset: UInt64(at))
                handle.write(Data([bytes[at] ^ 0xFF]))
                let got = outcome(copy)
                try handle.seek(toOffset: UInt64(at))
                handle.write(Data([bytes[at]]))
                flips += 1
                switch got {
                case original, .error: continue
                case parent where st.last.contains(where: { $0.contains(at) }): continue
                case .data(let v, let d)
                where st.lastGroup.contains { m in m.ranges.contains { $0.contains(at) } && v >= st.groupBase && v < m.version }
                    && groupDigests[v] == d:
                    continue
                default:
                    if bad.count < 10 { bad.append("byte \(at) (\(what)): \(got)") }
                }
            }
        }
        #expect(bad.isEmpty, "\((path as NSString).lastPathComponent): \(bad.joined(separator: "\n"))")
        return flips
    }

    @Test(arguments: [
        "v1-empty.realm", "v1-people.realm", "v1-all-types.realm", "v2-collections.realm", "v3-chained.realm", "v4-paged.realm",
        "v4-values-indexes.realm", "v4-compacted.realm", "v4-same-version-slots.realm", "v5-patches.realm",
        "v5-index-patches.realm", "v6-column-changes.realm", "v7-group-commit.realm", "v8-records.realm",
    ])
    func everyByteFlipOfAGoldenFile(_ name: String) throws {
        let dir = TempDir()
        let path = dir.file(name)
        try FileManager.default.copyItem(atPath: GoldenFileTests.vectors + "/" + name, toPath: path)
        #expect(try Self.flipEveryStructureByte(path, dir: dir) > 0)
    }

    /// A file of 52 versions: `Item` (int primary key `id`, `name`) and chained one-object commits
    /// (inserts, updates, deletes), two of them named by a slot instead (written by a store that
    /// does not chain).
    static func makeLongFile(_ dir: TempDir) throws -> String {
        let store = try Store.open(at: dir.file(), options: .init(create: true, rowGroupCapacity: 16))
        try store.write { tx in
            try tx.createTable("Item", primaryKey: ColumnSchema("id", .int))
            try tx.addColumn("Item", ColumnSchema("name", .string))
        }
        var slotWriter = Store.Options()
        slotWriter.chainsCommits = false
        let unchained = try Store.open(at: dir.file(), options: slotWriter)
        var keys: [ObjectKey] = []
        for i in 0..<50 {
            try (i == 20 || i == 35 ? unchained : store).write { tx in
                switch i % 4 {
                case 1: try tx.set("Item", keys.last!, "name", .string("renamed-\(i)"))
                case 3: try tx.delete("Item", keys.removeFirst())
                default: keys.append(try tx.insert("Item", row: [.int(Int64(i)), .string("item-\(i)")]))
                }
            }
        }
        return dir.file()
    }

    @Test(arguments: 0..<4) func everyByteFlipOfAFileOf52Versions(part: Int) throws {
        let dir = TempDir()
        let path = try Self.makeLongFile(dir)
        let r = try Inspector().inspect(path: path)
        #expect(r.currentVersion == 52 && r.chainedCommits == 14 && r.slots.compactMap(\.version).sorted() == [23, 38])
        // Compare copies without the lock file, as a file copied elsewhere.
        let copyDir = TempDir()
        let copy = copyDir.file("long.realm")
        try FileManager.default.copyItem(atPath: path, toPath: copy)
        let start = Date()
        let flips = try Self.flipEveryStructureByte(copy, dir: copyDir, part: part, of: 4)
        print("DamageTests: \(flips) flips in \(Date().timeIntervalSince(start)) s")
        #expect(flips > 1_500)
    }

    /// The issue's case: one byte of a non-last commit head in `v3-chained.realm`.
    @Test func aDamagedHeadBeforeLaterCommitsIsReportedNotSkipped() throws {
        let dir = TempDir()
        let path = dir.file("chained.realm")
        try FileManager.default.copyItem(atPath: GoldenFileTests.vectors + "/v3-chained.realm", toPath: path)
        let st = try Self.structures(path)
        let head = try #require(st.ranges.first { $0.what == "head of v2" }?.range)
        var bytes = fileBytes(path)
        bytes[head.lowerBound + 20] ^= 0x01
        _ = FileManager.default.createFile(atPath: path, contents: Data(bytes))
        do {
            _ = try Store.open(at: path, options: .init(readOnly: true))
            Issue.record("a damaged chain opened")
        } catch let e as StorageError {
            #expect(e.code == .corrupted)
            #expect(e.offset == UInt64(head.lowerBound))
            #expect(e.unreachableVersion == 5)
        }
        // Writable opens fail too: nothing is appended over the unreachable commits.
        expectCode(.corrupted) { try Store.open(at: path) }
        #expect(fileBytes(path) == bytes)
        // Salvage reads the newest intact version on purpose and says what it skipped.
        var options = Store.Options(readOnly: true)
        options.salvage = true
        let salvaged = try Store.open(at: path, options: options)
        #expect(try salvaged.snapshot().version == 1)
        let damage = try #require(salvaged.damage)
        #expect(damage.intactVersion == 1 && damage.newestUnreachableVersion == 5)
        #expect(damage.unreachableCommits.map(\.version) == [3, 4, 5])
    }

    @Test func aSalvagingWriterAppendsAfterTheUnreachableCommits() throws {
        let dir = TempDir()
        let path = try Self.makeLongFile(dir)
        let st = try Self.structures(path)
        let record = try #require(st.ranges.first { $0.what == "record of v45" }?.range)
        var bytes = fileBytes(path)
        bytes[record.lowerBound + 40] ^= 0x10
        _ = FileManager.default.createFile(atPath: path, contents: Data(bytes))
        expectCode(.corrupted) { try Store.open(at: path) }
        var options = Store.Options()
        options.salvage = true
        let store = try Store.open(at: path, options: options)
        #expect(store.damage?.intactVersion == 44 && store.damage?.newestUnreachableVersion == 52)
        #expect(try store.snapshot().version == 44)
        try store.write { _ = try $0.insert("Item", row: [.int(99_999), .string("new")]) }
        let after = try store.snapshot()
        #expect(after.version == 53)
        // The damaged bytes and the commits after them are untouched.
        let now = fileBytes(path)
        #expect(Array(now[0..<bytes.count].dropFirst(FileHeader.size)) == Array(bytes.dropFirst(FileHeader.size)))
        // The file now opens without salvage at the new commit.
        let reopened = try Store.open(at: path, options: .init(readOnly: true)).snapshot()
        #expect(reopened.version == 53)
        #expect(try reopened.objectKey("Item", primaryKey: .int(99_999)) != nil)
    }

    /// Verification checks the whole chain: the damage and each version it hides, and an older
    /// slot whose record no longer loads although the file opens at its newest version.
    @Test func verificationReportsEveryUnreachableVersionAndDamagedSlots() throws {
        let dir = TempDir()
        let path = try Self.makeLongFile(dir)
        let st = try Self.structures(path)
        var bytes = fileBytes(path)
        let older = try #require(st.ranges.first { $0.what == "record of v23" }?.range)
        bytes[older.lowerBound + 30] ^= 0x04
        let slotDamaged = dir.file("slot.realm")
        _ = FileManager.default.createFile(atPath: slotDamaged, contents: Data(bytes))
        #expect(try Store.open(at: slotDamaged, options: .init(readOnly: true)).snapshot().version == 52)
        let slotReport = try Verifier().verify(path: slotDamaged)
        #expect(
            slotReport.problems.contains { $0.reason.contains("header slot") && $0.reason.contains("version 23") }, "\(slotReport.problems)"
        )
        let head = try #require(st.ranges.first { $0.what == "head of v45" }?.range)
        bytes = fileBytes(path)
        bytes[head.lowerBound + 3] ^= 0x80
        let chainDamaged = dir.file("chain.realm")
        _ = FileManager.default.createFile(atPath: chainDamaged, contents: Data(bytes))
        let report = try Verifier().verify(path: chainDamaged)
        #expect(report.version == 44)
        #expect(report.problems.first?.offset == UInt64(head.lowerBound))
        for v in 46...52 {
            #expect(report.problems.contains { $0.reason == "version \(v) cannot be reached (its commit head is here)" }, "v\(v)")
        }
    }

    /// A torn last commit (a crash during it) still opens at the version before it, without error.
    @Test func aTornLastCommitStillOpensAtTheVersionBefore() throws {
        let dir = TempDir()
        let path = try Self.makeLongFile(dir)
        let st = try Self.structures(path)
        let parent = try Self.parentOutcome(path, st, dir)
        guard case .data(let v, _) = parent else {
            Issue.record("torn file did not open: \(parent)")
            return
        }
        #expect(v == 51)
        // Garbage instead of zeros where the last commit was: the same.
        var bytes = fileBytes(path)
        for r in st.last where r.lowerBound >= FileHeader.size { for i in r { bytes[i] = UInt8(truncatingIfNeeded: i &* 31) } }
        let torn = dir.file("garbage.realm")
        _ = FileManager.default.createFile(atPath: torn, contents: Data(bytes))
        #expect(Self.outcome(torn) == parent)
    }
}
