import Foundation
import Testing

@testable import RealmStorage

/// One database, one file (Spec/FORMAT.md §8): a file with a second name (a hard link) is never
/// compacted in place, and a name that still leads to a file a compaction replaced never takes a
/// commit. Real processes write through both names, with and without automatic compaction, and a
/// compactor is killed after the rename with a link made behind its last check.
@Suite struct HardLinkCompactionTests {
    typealias Child = OnlineCompactionTests

    /// Every sequence number in the file at `path`, read by a fresh store.
    static func sequences(_ path: String) throws -> Set<Int64> {
        Set(try Child.sequences(try Store.open(at: path, options: .init(readOnly: true)).snapshot()))
    }

    /// A `Log` file (``OnlineCompactionTests/makeLog(_:)``) with a second name, `other.realm`.
    static func linkedLog(_ dir: TempDir) throws -> (path: String, other: String, inode: UInt64?) {
        let path = dir.file()
        try Child.makeLog(path)
        let other = dir.file("other.realm")
        try FileManager.default.linkItem(atPath: path, toPath: other)
        return (path, other, SystemFile.inode(atPath: path))
    }

    static func links(_ path: String) throws -> Int {
        try SystemFile.open(path, .readOnly).linkCount()
    }

    /// An explicit compaction of a linked file fails with `hardLinked` and changes nothing; an
    /// automatic one is skipped, so the two names stay one database; without the link it runs.
    @Test func aLinkedFileIsNeverCompactedInPlace() throws {
        let dir = TempDir()
        let (path, other, inode) = try Self.linkedLog(dir)
        var options = Child.manual
        options.compaction = .automatic(minimumDeadBytes: 0, deadToLiveRatio: 0)
        let store = try Store.open(at: path, options: options)
        let error = expectCode(.hardLinked) { try store.compact() }
        #expect(error?.reason.contains("2 names") == true, "\(String(describing: error))")
        #expect(!FileManager.default.fileExists(atPath: path + ".compacting"))
        // Commits ask the automatic policy, which would compact after each of them.
        for seq in 1000..<1040 {
            try store.write { tx in _ = try tx.insert("Log", ["seq": .int(Int64(seq)), "payload": .string("x"), "total": .int(0)]) }
        }
        Store.compactionQueue.sync {}
        #expect(store.lastCompaction == nil)
        #expect(SystemFile.inode(atPath: path) == inode && SystemFile.inode(atPath: other) == inode)
        #expect(try Self.links(path) == 2)
        #expect(try Self.sequences(other) == Set(0..<300).union(1000..<1040))
        // The other name gone, the same store compacts.
        try FileManager.default.removeItem(atPath: other)
        let result = try store.compact()
        #expect(result.objectCounts["Log"] == 340)
        #expect(SystemFile.inode(atPath: path) != inode)
    }

    /// The scenario of issue 49 with real processes: a writer commits through one name with
    /// automatic compaction after almost every commit, while writers through the other name are
    /// refused, then take their turn. Every acknowledged commit, through either name, is in the
    /// file at both names, which stay one file.
    @Test func writersThroughTwoLinksWithAutomaticCompactionLoseNothing() throws {
        let dir = TempDir()
        let (path, other, inode) = try Self.linkedLog(dir)
        var acknowledged = Set<Int64>(0..<300)
        for round in 0..<4 {
            let (first, second) = round % 2 == 0 ? (path, other) : (other, path)
            let a = try Child.launch([first, "compactloop", "150"])
            // Started while the first writes: refused at open (another lock file marks the data
            // file), or, if the first is already done, it writes its own commits.
            usleep(20_000)
            let b = try Child.run([second, "compactloop", "20"])
            let aText = String(decoding: a.out.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
            a.process.waitUntilExit()
            #expect(a.process.terminationStatus == 0, "round \(round): \(aText.suffix(200))")
            acknowledged.formUnion(Child.acknowledged(aText))
            acknowledged.formUnion(Child.acknowledged(b.text))
            // Alone now, the second name takes commits too, to the same database.
            let c = try Child.run([second, "compactloop", "20"])
            #expect(c.status == 0 && Child.acknowledged(c.text).count == 20, "round \(round): \(c.text.suffix(200))")
            acknowledged.formUnion(Child.acknowledged(c.text))
            #expect(SystemFile.inode(atPath: path) == inode && SystemFile.inode(atPath: other) == inode, "round \(round)")
        }
        #expect(acknowledged.count >= 300 + 4 * (150 + 20))
        #expect(try Self.sequences(path) == acknowledged)
        #expect(try Self.sequences(other) == acknowledged)
        #expect(try Self.links(path) == 2)
        #expect(try Verifier().verify(path: path).isClean)
    }

    /// A link made after the compaction's last check, before its rename, names the old file once
    /// the rename is done: the superseded mark written before the rename makes every opener of that
    /// name fail, and no writer process commits there. Killed right after the rename too.
    @Test(arguments: ["none", "renamed"])
    func aLinkMadeDuringTheSwitchNeverTakesACommit(_ killAt: String) throws {
        let dir = TempDir()
        let path = dir.file()
        try Child.makeLog(path)
        let other = dir.file("other.realm")
        let r = try Child.run([path, "compactat", killAt, other])
        if killAt == "none" {
            #expect(r.status == 0 && r.text.contains("compacted"), "\(r.text)")
        } else {
            #expect(r.reason == .uncaughtSignal && r.text.contains("at renamed"), "\(r.text)")
        }
        let acks = Set(Child.acknowledged(r.text))
        #expect(acks.count == 3)
        #expect(SystemFile.inode(atPath: path) != SystemFile.inode(atPath: other))
        // Every opener of the old name is refused, naming the database's path.
        let canonical = SystemFile.canonicalPath(path)
        let refused = expectCode(.superseded) { try Store.open(at: other) }
        #expect(refused?.supersededBy == canonical)
        expectCode(.superseded) { try Store.open(at: other, options: .init(readOnly: true)) }
        #expect(try Child.run([other, "open"]).text.hasPrefix("error superseded"))
        // A writer process through the old name acknowledges nothing.
        let writer = try Child.run([other, "compactloop", "10"])
        #expect(Child.acknowledged(writer.text).isEmpty && writer.status != 0, "\(writer.text)")
        // An inspection tool reads the old file and is told what it is.
        let passive = try Store.open(at: other, options: .passive)
        #expect(passive.superseded?.path == canonical && passive.superseded?.version == passive.currentVersion)
        // The database at the path has everything, and goes on.
        #expect(try Self.sequences(path) == Set(0..<300).union(acks))
        let store = try Store.open(at: path, options: Child.manual)
        try store.write { tx in _ = try tx.insert("Log", ["seq": .int(9999), "payload": .string("z"), "total": .int(0)]) }
        #expect(try Self.sequences(path).contains(9999))
        #expect(try Verifier().verify(path: path).isClean)
    }

    /// Runs `/bin/mount` or `/bin/umount` with `arguments`; whether it succeeded.
    static func mountCommand(_ tool: String, _ arguments: [String]) -> Bool {
        let p = Process()
        p.executableURL = URL(fileURLWithPath: "/bin/" + tool)
        p.arguments = arguments
        p.standardError = FileHandle.nullDevice
        guard (try? p.run()) != nil else { return false }
        p.waitUntilExit()
        return p.terminationStatus == 0
    }

    /// A bind mount of the file at a second path (root only; without it the test says so): unlike a
    /// hard link it leaves the link count at 1, so compaction goes ahead, and the mount then keeps
    /// showing the old file. The superseded mark makes every opener through the mount fail, and
    /// every commit acknowledged through either path is in the database at its path.
    @Test func aBindMountedSecondPathNeverTakesACommitAfterACompaction() throws {
        let dir = TempDir()
        let path = dir.file()
        try Child.makeLog(path)
        let other = dir.file("mounted.realm")
        _ = FileManager.default.createFile(atPath: other, contents: nil)
        guard Self.mountCommand("mount", ["--bind", path, other]) else {
            print("HardLinkCompactionTests: no bind mount here (not root?): skipped")
            return
        }
        defer { _ = Self.mountCommand("umount", ["-l", other]) }
        #expect(try SystemFile.inode(atPath: other) == SystemFile.inode(atPath: path) && Self.links(path) == 1)
        var acknowledged = Set<Int64>(0..<300)
        // Through the mount first, while nothing was compacted: the same database.
        let before = try Child.run([other, "compactloop", "20"])
        acknowledged.formUnion(Child.acknowledged(before.text))
        #expect(Child.acknowledged(before.text).count == 20, "\(before.text.suffix(200))")
        // Through the path, compacting after almost every commit; meanwhile through the mount.
        let a = try Child.launch([path, "compactloop", "100"])
        usleep(20_000)
        let during = try Child.run([other, "compactloop", "20"])
        let aText = String(decoding: a.out.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        a.process.waitUntilExit()
        acknowledged.formUnion(Child.acknowledged(aText))
        acknowledged.formUnion(Child.acknowledged(during.text))
        #expect(SystemFile.inode(atPath: other) != SystemFile.inode(atPath: path), "the path was never compacted")
        // Now the mount shows a superseded file: every opener fails, no commit is acknowledged.
        #expect(try Child.run([other, "open"]).text.hasPrefix("error superseded"))
        let after = try Child.run([other, "compactloop", "20"])
        #expect(Child.acknowledged(after.text).isEmpty)
        #expect(try Self.sequences(path) == acknowledged)
        #expect(try Verifier().verify(path: path).isClean)
    }

    /// A compactor killed once its mark is written but before its rename leaves a stale mark: the
    /// path still leads to the file, so it opens; the next writer clears the mark before it writes.
    @Test func aStaleMarkIsIgnoredAndCleared() throws {
        let dir = TempDir()
        let path = dir.file()
        try Child.makeLog(path)
        let r = try Child.run([path, "compactat", "marked"])
        #expect(r.reason == .uncaughtSignal && r.text.contains("at marked"), "\(r.text)")
        let store = try Store.open(at: path, options: Child.manual)
        let current = store.state.withLock { $0.current }
        let mark = try #require(try Store.supersededMark(current))
        #expect(!mark.inForce && mark.mark.path == SystemFile.canonicalPath(path))
        let tx = try store.beginWrite()
        #expect(try Store.supersededMark(current) == nil)
        let at = Int(current.slot.fileLength)
        #expect(try current.file.read(at: at, count: SupersededMark.length(pathLength: mark.mark.path.utf8.count)).allSatisfy { $0 == 0 })
        try tx.insert("Log", ["seq": .int(7777), "payload": .string("after"), "total": .int(0)])
        try tx.commit()
        #expect(try Self.sequences(path) == Set(0..<300).union(Child.acknowledged(r.text)).union([7777]))
        #expect(try Verifier().verify(path: path).isClean)
    }

    /// The mark's encoding: what decodes is what was encoded; a flipped byte, a wrong length or a
    /// path too long is no mark.
    @Test func markEncoding() throws {
        let mark = SupersededMark(version: 42, fileLength: 123_456, time: 7, path: "/data/app/default.realm")
        let bytes = mark.encode()
        #expect(bytes.count == SupersededMark.length(pathLength: 23) && bytes.count % 8 == 0)
        #expect(SupersededMark.decode(ByteView(copying: bytes)) == mark)
        for i in [0, 5, 9, 40, bytes.count - 1] {
            var damaged = bytes
            damaged[i] ^= 0x10
            #expect(SupersededMark.decode(ByteView(copying: damaged)) == nil, "byte \(i)")
        }
        #expect(SupersededMark.decode(ByteView(copying: Array(bytes.dropLast(8)))) == nil)
        var long = bytes
        long.replaceSubrange(4..<8, with: [0x01, 0x10, 0, 0])  // 4097 bytes of path
        #expect(SupersededMark.encodedLength(ByteView(copying: long)) == nil)
    }
}
