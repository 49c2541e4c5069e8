import Foundation
import RealmTestSupport
import Testing

@testable import RealmStorage

/// One file, one set of writers, whatever the path (Spec/FORMAT.md §7): a symbolic link leads to
/// the same lock file; a hard link, or a lock file deleted while a writer has the file open, makes
/// the second writer fail at open instead of writing beside the first. And a full disk is an
/// error, never a signal.
@Suite struct FileIdentityTests {
    /// Runs the StorageCrashWriter child in `mode` on `file` and returns what it printed.
    static func child(_ file: String, _ mode: String) throws -> String {
        let binary = try #require(CrashTests.writerBinary(), "StorageCrashWriter was not built")
        let p = Process()
        p.executableURL = URL(fileURLWithPath: binary)
        p.arguments = [file, mode]
        let out = Pipe()
        p.standardOutput = out
        p.standardError = FileHandle.nullDevice
        try p.run()
        let text = String(decoding: out.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        p.waitUntilExit()
        #expect(p.terminationReason == .exit, "the child died of signal \(p.terminationStatus): \(text)")
        return text
    }

    @Test func aSymbolicLinkSharesTheLockFile() throws {
        let dir = TempDir()
        let real = dir.file("real.realm")
        let link = dir.file("link.realm")
        let a = try makePeopleStore(dir, options: .init(create: true))
        _ = a
        try FileManager.default.moveItem(atPath: dir.file(), toPath: real)
        try FileManager.default.moveItem(atPath: dir.file() + ".lock", toPath: real + ".lock")
        try FileManager.default.createSymbolicLink(atPath: link, withDestinationPath: real)
        let viaReal = try Store.open(at: real)
        let viaLink = try Store.open(at: link)
        #expect(viaLink.lockPath == viaReal.lockPath && viaLink.path == viaReal.path)
        #expect(!FileManager.default.fileExists(atPath: link + ".lock"))
        // Writers through both names exclude each other and see each other's commits.
        for i in 0..<40 { try (i % 2 == 0 ? viaReal : viaLink).write { _ = try $0.insert("Person", row: person(i)) } }
        #expect(try viaReal.snapshot().objectCount("Person") == 40)
        #expect(try viaLink.snapshot().version == viaReal.snapshot().version)
        #expect(try Self.child(link, "open").hasPrefix("opened \(try viaReal.snapshot().version)"))
    }

    @Test func aHardLinkCannotMakeASecondWriter() throws {
        let dir = TempDir()
        let original = dir.file()
        let hard = dir.file("hard.realm")
        do {
            let first = try makePeopleStore(dir)
            try FileManager.default.linkItem(atPath: original, toPath: hard)
            expectCode(.inUseByAnotherProcess) { try Store.open(at: hard) }
            #expect(try Self.child(hard, "open").hasPrefix("error inUseByAnotherProcess"))
            // Readers are not writers: they open through any name.
            #expect(try Self.child(hard, "openreadonly").hasPrefix("opened 2"))
            try first.write { _ = try $0.insert("Person", row: person(1)) }
        }
        // Once the first writer closed, the other name may write.
        let second = try Store.open(at: hard)
        try second.write { _ = try $0.insert("Person", row: person(2)) }
        #expect(try second.snapshot().objectCount("Person") == 2)
    }

    @Test func aDeletedLockFileCannotMakeASecondWriter() throws {
        let dir = TempDir()
        let first = try makePeopleStore(dir)
        try FileManager.default.removeItem(atPath: first.lockPath)
        expectCode(.inUseByAnotherProcess) { try Store.open(at: dir.file()) }
        #expect(try Self.child(dir.file(), "open").hasPrefix("error inUseByAnotherProcess"))
        // The first writer goes on alone, and nothing was lost.
        try first.write { _ = try $0.insert("Person", row: person(1)) }
        #expect(try Store.open(at: dir.file(), options: .init(readOnly: true)).snapshot().objectCount("Person") == 1)
    }

    // MARK: A full disk

    /// A small tmpfs mounted on `dir` for the body (root only: without it the test says so and
    /// checks the error path by fault injection alone).
    static func withSmallDisk(_ megabytes: Int, _ body: (String) throws -> Void) throws -> Bool {
        let dir = TempDir()
        let mount = Process()
        mount.executableURL = URL(fileURLWithPath: "/bin/mount")
        mount.arguments = ["-t", "tmpfs", "-o", "size=\(megabytes)m", "tmpfs", dir.path]
        mount.standardError = FileHandle.nullDevice
        guard (try? mount.run()) != nil else { return false }
        mount.waitUntilExit()
        guard mount.terminationStatus == 0 else { return false }
        defer {
            let umount = Process()
            umount.executableURL = URL(fileURLWithPath: "/bin/umount")
            umount.arguments = ["-l", dir.path]
            try? umount.run()
            umount.waitUntilExit()
        }
        try body(dir.path)
        return true
    }

    /// Writes zeros to `path` until the disk is full.
    static func fill(_ path: String) {
        _ = FileManager.default.createFile(atPath: path, contents: nil)
        guard let h = FileHandle(forWritingAtPath: path) else { return }
        defer { try? h.close() }
        let chunk = Data(count: 64 << 10)
        while (try? h.write(contentsOf: chunk)) != nil {}
        let small = Data(count: 512)
        while (try? h.write(contentsOf: small)) != nil {}
    }

    @Test func aFullDiskIsAnErrorNeverASignal() throws {
        let mounted = try Self.withSmallDisk(12) { root in
            let file = root + "/full.realm"
            let writer = try Store.open(at: file, options: .init(create: true))
            try writer.write { tx in
                try tx.createTable("Item", primaryKey: ColumnSchema("id", .int))
                try tx.addColumn("Item", ColumnSchema("blob", .binary))
            }
            try writer.write { _ = try $0.insert("Item", row: [.int(1), .binary([UInt8](repeating: 7, count: 1000))]) }
            let version = try writer.snapshot().version
            let other = root + "/other.realm"
            try FileManager.default.copyItem(atPath: file, toPath: other)
            Self.fill(root + "/filler")
            // A commit that needs new blocks fails cleanly and loses nothing.
            do {
                var rng = SplitMix(seed: 7)
                try writer.write { tx in
                    for i in 2..<40 {
                        _ = try tx.insert(
                            "Item", row: [.int(Int64(i)), .binary((0..<200_000).map { _ in UInt8(truncatingIfNeeded: rng.next()) })])
                    }
                }
                Issue.record("a commit on a full disk was acknowledged")
            } catch let e as StorageError {
                #expect(e.code == .io, "\(e)")
            }
            #expect(try writer.snapshot().version == version)
            // New processes: a read-only open and a writer open with the (allocated) lock file work.
            #expect(try Self.child(file, "openreadonly").hasPrefix("opened \(version)"))
            #expect(try Self.child(file, "open").hasPrefix("opened \(version)"))
            // A lock file without blocks (as older builds left it: sparse) or none at all: a writer
            // must allocate it and fails with an I/O error instead of dying of SIGBUS.
            if !FileManager.default.fileExists(atPath: other + ".lock") {
                _ = FileManager.default.createFile(atPath: other + ".lock", contents: nil)
            }
            let sparse = try #require(FileHandle(forWritingAtPath: other + ".lock"))
            try sparse.truncate(atOffset: UInt64(LockFile.fullLength))
            try sparse.close()
            #expect(try Self.child(other, "open").hasPrefix("error io"))
            try FileManager.default.removeItem(atPath: other + ".lock")
            #expect(try Self.child(other, "open").hasPrefix("error io"))
            // Once there is room again, everything works.
            try FileManager.default.removeItem(atPath: root + "/filler")
            try writer.write { _ = try $0.insert("Item", row: [.int(99), .binary([1, 2, 3])]) }
            #expect(try Self.child(other, "open").hasPrefix("opened \(version)"))
        }
        if !mounted {
            // Not root here: the same error path through fault injection.
            let dir = TempDir()
            _ = try makePeopleStore(dir)
            try FileManager.default.removeItem(atPath: dir.file() + ".lock")
            let plan = FaultPlan()
            plan.arm(.fallocate, at: 1)
            FaultInjection.run(plan) { _ = expectCode(.io) { try Store.open(at: dir.file()) } }
        }
    }
}
