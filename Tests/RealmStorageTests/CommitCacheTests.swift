import Foundation
import Testing

@testable import RealmStorage

/// What a store keeps of its own commits so the next transaction need not read the newest pages
/// of the file through the mapping, and the lock file every writable opener maps.
@Suite struct CommitCacheTests {
    /// The trailer stored in the last 8 bytes of the block at `ref`, read from the file itself.
    static func trailer(_ path: String, _ ref: BlockRef) throws -> UInt64 {
        let file = try SystemFile.open(path, .readOnly)
        return try ByteView(copying: try file.read(at: Int(ref.offset + ref.length) - 8, count: 8)).u64(0)
    }

    /// The blocks of a table a snapshot reaches without decoding segments: row groups, the
    /// row-group list (and its pages) and the primary-key index directory (and its pages).
    static func structureRefs(_ snap: Snapshot, _ table: String) throws -> [BlockRef] {
        let st = try snap.tableState(table)
        let list = try snap.rowGroupList(st)
        return list.entries.map(\.block) + list.pages.map(\.block) + [st.rowGroups] + st.indexes.values.filter { !$0.isNone }
    }

    @Test func ownRecentBlocksAreKeyedByTheTrailersTheCommitsWrote() throws {
        let dir = TempDir()
        let store = try PagedListTests.idTable(dir, objects: 0, rowGroupCapacity: 16)
        // Enough commits for the blocks that left the window to be dropped in bulk at least once.
        for i in 0..<1_000 { try store.write { try $0.insert("T", row: [.int(Int64(i))]) } }
        let snap = try store.snapshot()
        let end = UInt64(snap.fileLength)
        var known = 0
        for ref in try Self.structureRefs(snap, "T") {
            let stored = try Self.trailer(dir.file(), ref)
            if let sum = store.cache.recentChecksum(ref) {
                #expect(sum == stored, "block at \(ref.offset)")
                known += 1
            }
            // The key is the same whichever way it is formed.
            #expect(snap.cacheKey(ref) == BlockCache.Key(ref, checksum: stored))
        }
        #expect(known >= 3, "the last commit's list, directory and tail group are known")
        // Only blocks within the window of the end are kept.
        let offsets = store.cache.inner.withLock { $0.recent[$0.recentStart...].map(\.offset) }
        #expect(!offsets.isEmpty)
        #expect(offsets.allSatisfy { $0 + BlockCache.recentWindow >= end })
        #expect(offsets == offsets.sorted())
        let (start, count) = store.cache.inner.withLock { ($0.recentStart, $0.recent.count) }
        #expect(start < 256 || start * 2 < count, "\(start) of \(count) entries left the window")
        // A wrong length is never taken for the block.
        let someRef = try #require(try Self.structureRefs(snap, "T").first { store.cache.recentChecksum($0) != nil })
        #expect(store.cache.recentChecksum(BlockRef(offset: someRef.offset, length: someRef.length + 8)) == nil)
    }

    @Test func aLargeCommitPushesOlderBlocksOutOfTheWindow() throws {
        let dir = TempDir()
        let store = try makePeopleStore(dir, count: 10)
        let before = try Self.structureRefs(try store.snapshot(), "Person")
        #expect(before.contains { store.cache.recentChecksum($0) != nil })
        // Well over the window of new blocks.
        try store.write { tx in for i in 10..<20_000 { try tx.insert("Person", row: person(i)) } }
        #expect(before.allSatisfy { store.cache.recentChecksum($0) == nil })
        let snap = try store.snapshot()
        #expect(try snap.objectCount("Person") == 20_000)
        #expect(try snap.objectKey("Person", primaryKey: .int(19_999)) != nil)
    }

    @Test func blocksAnotherStoreWroteAreReadFromTheFile() throws {
        let dir = TempDir()
        let a = try makePeopleStore(dir, count: 10)
        let b = try Store.open(at: dir.file())
        try b.write { try $0.insert("Person", row: person(10)) }
        let snap = try a.snapshot()
        let refs = try Self.structureRefs(snap, "Person")
        #expect(refs.allSatisfy { a.cache.recentChecksum($0) == nil || b.cache.recentChecksum($0) == nil })
        for ref in refs { #expect(snap.cacheKey(ref) == BlockCache.Key(ref, checksum: try Self.trailer(dir.file(), ref))) }
        #expect(try snap.value("Person", try #require(try snap.objectKey("Person", primaryKey: .int(10))), "name") == .string("name-10"))
        // A writes on top of B's commit, starting from what it read of it.
        try a.write { try $0.insert("Person", row: person(11)) }
        #expect(try b.snapshot().objectCount("Person") == 12)
        #expect(Verifier().verify(try b.snapshot()).isClean)
    }

    /// The trailing chunks of an index with ascending keys merge like a binary counter; the small
    /// ones a commit writes are kept decoded for the next commits, and must hold what the file holds.
    @Test func cachedIndexChunksHoldWhatTheFileHolds() throws {
        let dir = TempDir()
        let store = try PagedListTests.idTable(dir, objects: 0, rowGroupCapacity: 64)
        for i in 0..<500 { try store.write { try $0.insert("T", row: [.int(Int64(i))]) } }
        let cached = store.cache.inner.withLock { $0.chunkEntries }
        #expect(!cached.isEmpty)
        #expect(cached.count <= BlockCache.maxChunkEntries)
        let snap = try store.snapshot()
        for (key, entries) in cached {
            let ref = BlockRef(offset: key.offset, length: key.length)
            #expect(try Self.trailer(dir.file(), ref) == key.checksum)
            let decoded = try IndexDirectory.chunkEntries(try snap.block(ref, BlockMagic.indexChunk), expected: entries.count)
            #expect(decoded.entries.map(\.0) == entries.map(\.0) && decoded.entries.map(\.1) == entries.map(\.1))
        }
        let reopened = try Store.open(at: dir.file(), options: .init(readOnly: true)).snapshot()
        for i in 0..<500 { #expect(try reopened.objectKey("T", primaryKey: .int(Int64(i))) != nil, "id \(i)") }
        #expect(Verifier().verify(reopened).isClean)
    }

    @Test func writableOpenersMapTheWholeLockFile() throws {
        let dir = TempDir()
        let a = try makePeopleStore(dir, count: 3)
        let lockPath = dir.file() + ".lock"
        let size = try #require(try FileManager.default.attributesOfItem(atPath: lockPath)[.size] as? Int)
        #expect(size == LockFile.fullLength)
        // Pins published through one store's mapping are read by another store.
        let frozen = try a.snapshot(kind: "frozen")
        let b = try Store.open(at: dir.file())
        #expect(b.pinnedVersions().contains { !$0.isLocal && $0.version == frozen.version && $0.kind == "frozen" })
        // A lock file that may only be read is read with pread: its pins still show.
        try FileManager.default.setAttributes([.posixPermissions: 0o444], ofItemAtPath: lockPath)
        defer { try? FileManager.default.setAttributes([.posixPermissions: 0o644], ofItemAtPath: lockPath) }
        if getuid() != 0 {
            let reader = try Store.open(at: dir.file(), options: .init(readOnly: true))
            #expect(reader.pinnedVersions().contains { !$0.isLocal && $0.version == frozen.version && $0.kind == "frozen" })
        }
        // The durable record written through the mapping is read by a passive opener.
        try a.write { tx in for i in 3..<60_000 { try tx.insert("Person", row: person(i)) } }
        let passive = try LockFile(path: lockPath, mode: .observer)
        #expect(passive.durableCommit()?.version == a.currentVersion)
        withExtendedLifetime((frozen, b)) {}
    }
}
