import Foundation

/// One version pinned by someone, as reported by ``Store/pinnedVersions()``.
public struct VersionPin: Sendable, Hashable, CustomStringConvertible {
    /// The pinned version.
    public var version: UInt64
    /// The process that pins it.
    public var processID: Int32
    /// What pins it ("snapshot", "frozen", "transaction", "realm", …), as given by the pinner.
    public var kind: String
    /// How many references of this kind pin it in that process's store.
    public var count: Int
    /// Whether the pin belongs to this store instance.
    public var isLocal: Bool

    public var description: String { "v\(version) by pid \(processID) (\(kind) ×\(count))\(isLocal ? "" : " [other]")" }
}

/// The lock file beside a data file (Spec/FORMAT.md §7): one byte every opener share-locks (so
/// compaction can tell the file is in use), a writer word in shared memory that one store at a time
/// holds for a write transaction, and a table of per-store pin slots, each owned while its liveness
/// byte is locked, so pins of a dead process (and the writer word it held) are released with it.
final class LockFile: @unchecked Sendable {
    // Sendable: `file`, `nonce` and `region` are immutable; `slot` is set once in init;
    // `yieldsNext` is only touched by the store's one writer at a time (its writer gate).
    let file: SystemFile
    let canWrite: Bool
    private(set) var slot: Int?
    /// Names this store (with its slot) in the writer word; also published in its pin slot, so a
    /// writer word naming a slot whose owner has changed is known to be stale.
    let nonce = UInt32.random(in: 1...UInt32.max)
    /// The fork generation of the process that opened it: a child forked from that process shares
    /// its token, so it may not write.
    private let openerForkGeneration = SystemFile.forkGeneration
    /// The last release saw a waiter: the next acquisition pauses first to let it in.
    private var yieldsNext = false
    /// The whole file mapped read-write, when it is open read-write: pins and records are then
    /// published and read without a system call (a `pwrite` here cost a commit ~3 µs), and writers
    /// meet in the writer word. A writer fails to open without it; a read-only store whose mapping
    /// fails uses `pread`/`pwrite`.
    let region: SharedRegion?

    static let openByte = 0
    /// Held shared by every writable store for as long as it is open, so a build that still takes it
    /// exclusively to write (lock-file protocol 1) waits instead of writing beside the writer word.
    static let writerByte = 1
    /// Serializes slot claims (and so updates of the high-water mark).
    static let registryByte = 2
    /// Held exclusively by a writer without a pin slot while it holds the writer word: the word's
    /// liveness test for such a writer.
    static let slotlessWriterByte = 3
    /// Held exclusively by the one store compacting the file online (Spec/FORMAT.md §8), for the
    /// whole compaction: a second compactor, in any process, finds it taken and does not start.
    static let compactionByte = 4
    static let highWaterOffset = 512
    /// The writer word (Spec/FORMAT.md §7): 0 when free, else the token of the store that holds or
    /// last released it.
    static let writerWordOffset = 576
    static let heldBit: UInt64 = 1 << 63
    static let wantedBit: UInt64 = 1 << 62
    /// Where the writer records the last commit it made durable (Spec/FORMAT.md §7).
    static let durableOffset = 600
    static let durableMagic: UInt32 = 0x4152_5544  // "DURA"
    /// Where a writer records a commit that failed after writing its slot (Spec/FORMAT.md §7).
    static let failedOffset = 640
    static let failedMagic: UInt32 = 0x4C49_4146  // "FAIL"
    /// The file generation (Spec/FORMAT.md §7, protocol 4): a u64 accessed atomically, made odd by a
    /// compactor just before it renames a compacted file over the data file's path and even again
    /// once the rename is durable. A store that sees it differ from the value it last saw looks at
    /// the path again and follows the new file.
    static let generationOffset = 680
    static let slotLockBase = 1024
    static let slotCount = 1024
    static let slotDataBase = 4096
    static let slotDataSize = 4096
    static let maxEntries = (slotDataSize - 24) / 24
    /// The end of the last pin slot: a writable opener extends the file (sparse) to this length.
    static let fullLength = slotDataBase + slotCount * slotDataSize
    static let kindNames = ["snapshot", "frozen", "transaction", "realm", "notifier", "other"]

    /// How a store uses the lock file (Spec/FORMAT.md §7).
    enum Mode {
        /// Creates it if missing, holds the open byte shared, claims and publishes a pin slot.
        case writer
        /// A read-only store: an existing lock file opened read-write if permitted (then as a
        /// writer), else read-only (open byte only, no slot).
        case reader
        /// Reads only: opened read-only, no lock taken, no slot claimed; invisible to others.
        case observer
    }

    let mode: Mode

    /// - Parameter claimsSlot: false only in tests of a store that found no free pin slot.
    init(path: String, mode: Mode, claimsSlot: Bool = true) throws {
        self.mode = mode
        if mode == .observer {
            file = try SystemFile.open(path, .readOnly)
            canWrite = false
            region = nil
            return
        }
        if mode == .reader {
            if let f = try? SystemFile.open(path, .readWrite) {
                file = f
                canWrite = true
            } else if let f = try? SystemFile.open(path, .readOnly) {
                file = f
                canWrite = false
            } else {
                throw StorageError(.readOnly, "no lock file can be opened", path: path)
            }
        } else {
            (file, created) = try Self.openOrCreate(path)
            canWrite = true
        }
        do {
            try file.waitLock(byte: Self.openByte, .shared)
            if mode == .writer {
                // Writers meet in the writer word, so they need the mapping; and an older build that
                // locks the writer byte to write must not write beside them.
                try file.waitLock(byte: Self.writerByte, .shared)
                region = try Self.mapWhole(file)
            } else {
                region = canWrite ? try? Self.mapWhole(file) : nil
            }
        } catch {
            // A full disk, say: an open that fails leaves behind no lock file it created.
            if created { Self.removeIfUnused(file) }
            throw error
        }
        if canWrite && claimsSlot { try claimSlot() }
    }

    /// Whether this opener created the lock file (then a failed open removes it again).
    private(set) var created = false

    /// Opens the lock file read-write, creating it if missing; says whether it created it.
    private static func openOrCreate(_ path: String) throws -> (SystemFile, Bool) {
        while true {
            do {
                return (try SystemFile.open(path, .readWrite), false)
            } catch let e as StorageError where e.code == .fileNotFound {
                do {
                    return (try SystemFile.open(path, .createNew), true)
                } catch let e as StorageError where e.code == .fileExists {
                    continue  // another opener created it meanwhile
                }
            }
        }
    }

    /// Removes the lock file `file` is open on when no other opener has it open and its path still
    /// leads to it: what a failed open created must not stay behind.
    static func removeIfUnused(_ file: SystemFile) {
        guard (try? file.isLockedByOther(byte: openByte)) == false, let mine = try? file.identity(),
            SystemFile.identity(atPath: file.path) == mine
        else { return }
        SystemFile.unlink(file.path)
    }

    /// After a failed open of the data file by the store that created this lock file: removes it
    /// unless another opener has it open.
    func removeIfCreatedAndUnused() {
        if created { Self.removeIfUnused(file) }
    }

    /// Extends `file` to ``fullLength`` if it is shorter (never shrinking it: another process may be
    /// doing the same), gives all of it disk blocks, and maps it. Without the blocks (a sparse file,
    /// as older builds left it), a store into the mapping on a full disk raises SIGBUS; with them,
    /// a full disk is an `ENOSPC` error here, at open.
    private static func mapWhole(_ file: SystemFile) throws -> SharedRegion {
        try file.allocate(length: fullLength)
        return try SharedRegion(file: file, length: fullLength)
    }

    /// Where in the data file writers mark which lock file they use (Spec/FORMAT.md §7, protocol 4):
    /// a shared lock on byte `dataFileMarkBase + (lock file inode mod 2^32)`, far beyond any data,
    /// and one on ``olderBuildsMark``.
    static let dataFileMarkBase = (1 << 61) + (1 << 32)
    static let dataFileMarkRange = dataFileMarkBase..<dataFileMarkBase + (1 << 32)
    /// Protocol 3 marked the range just below ``dataFileMarkRange``. Every protocol-4 writer also
    /// holds its last byte, so a protocol-3 writer (which does not follow an online compaction)
    /// sees a mark that is not its own and refuses to open; any other lock in that range is a
    /// protocol-3 writer, and a protocol-4 writer refuses to open beside it.
    static let olderBuildsMarkRange = (1 << 61)..<dataFileMarkBase
    static let olderBuildsMark = dataFileMarkBase - 1

    /// Marks `data` as written through this lock file, and fails if a writer marked it through
    /// another: the same data file reached through a hard link, or with its lock file deleted or
    /// replaced while a writer had it open (two such writers would not exclude each other); or if a
    /// writer of an older build (lock-file protocol 3, which does not follow online compaction) has
    /// it open.
    func markDataFile(_ data: SystemFile) throws {
        let mark = Self.dataFileMarkBase + Int(try file.inode() & 0xFFFF_FFFF)
        try data.waitLock(byte: mark, .shared)
        do {
            try data.waitLock(byte: Self.olderBuildsMark, .shared)
        } catch {
            data.unlock(byte: mark)
            throw error
        }
        let range = Self.dataFileMarkRange
        let older = Self.olderBuildsMarkRange
        if try data.isLockedByOther(bytes: older.lowerBound..<Self.olderBuildsMark) {
            data.unlock(byte: mark)
            data.unlock(byte: Self.olderBuildsMark)
            throw StorageError(
                .inUseByAnotherProcess,
                "the file is open for writing by an older build of the library (lock-file protocol 3), which cannot follow "
                    + "online compaction; close it there first")
        }
        if try data.isLockedByOther(bytes: range.lowerBound..<mark) || data.isLockedByOther(bytes: mark + 1..<range.upperBound) {
            data.unlock(byte: mark)
            data.unlock(byte: Self.olderBuildsMark)
            throw StorageError(
                .inUseByAnotherProcess,
                "the file is open for writing through another lock file: it was reached through another path (a hard link), "
                    + "or its lock file was deleted or replaced while it was open; open it through one path, after the other "
                    + "writers close it")
        }
    }

    // MARK: Online compaction (Spec/FORMAT.md §7, §8)

    /// Takes the compaction byte without waiting; false when another store is compacting.
    func tryCompactionLock() throws -> Bool { try file.tryLock(byte: Self.compactionByte, .exclusive) }

    func releaseCompactionLock() { file.unlock(byte: Self.compactionByte) }

    /// The file generation, or nil when it cannot be read.
    var fileGeneration: UInt64? {
        if let region { return region.load(word: Self.generationOffset) }
        guard let b = try? file.read(at: Self.generationOffset, count: 8), b.count == 8 else { return nil }
        return try? ByteView(copying: b).u64(0)
    }

    /// Makes the generation odd (a switch begins) and returns the odd value; the caller holds the
    /// writer word. An odd generation left by a compactor that died is made even first.
    func beginSwitch() -> UInt64 {
        guard let region else { return 0 }
        while true {
            let g = region.load(word: Self.generationOffset)
            let next = g % 2 == 0 ? g &+ 1 : g &+ 2
            if region.compareExchange(word: Self.generationOffset, expected: g, desired: next).exchanged { return next }
        }
    }

    /// Makes an odd generation `g` even (the switch it began is complete, or its compactor died
    /// and the caller, holding the writer word, looked at the path itself).
    func endSwitch(_ g: UInt64) {
        guard let region, g % 2 == 1 else { return }
        _ = region.compareExchange(word: Self.generationOffset, expected: g, desired: g &+ 1)
    }

    /// Writes through the mapping when there is one.
    private func write(_ bytes: [UInt8], at offset: Int) throws {
        if let region { region.write(bytes, at: offset) } else { try file.write(bytes, at: offset) }
    }

    /// Reads through the mapping when there is one; nil when the read fails.
    private func read(at offset: Int, count: Int) -> [UInt8]? {
        if let region { return region.read(at: offset, count: count) }
        return try? file.read(at: offset, count: count)
    }

    private func claimSlot() throws {
        try file.waitLock(byte: Self.registryByte, .exclusive)
        defer { file.unlock(byte: Self.registryByte) }
        for i in 0..<Self.slotCount where try file.tryLock(byte: Self.slotLockBase + i, .exclusive) {
            slot = i
            let hw = readHighWater()
            if i + 1 > hw {
                var w = ByteWriter()
                w.u32(UInt32(i + 1))
                try write(w.bytes, at: Self.highWaterOffset)
            }
            try publish([])
            return
        }
    }

    func readHighWater() -> Int {
        guard let b = read(at: Self.highWaterOffset, count: 4), b.count == 4 else { return 0 }
        return Int((try? ByteView(copying: b).u32(0)) ?? 0)
    }

    /// Writes this store's published pins (version, kind, count) into its slot, ordered by version
    /// and kind.
    func publish(_ pins: [Store.LocalPin]) throws {
        guard let slot else { return }
        var entries: [(UInt64, UInt32, Int)] = []
        entries.reserveCapacity(pins.count)
        // By index: the fields are read in place, without copying each pin (and retaining its kind's name).
        for i in pins.indices where pins[i].count > 0 && pins[i].isPublished {
            entries.append((pins[i].version, pins[i].kindCode, pins[i].count))
        }
        entries.sort { ($0.0, $0.1) < ($1.0, $1.1) }
        if entries.count > Self.maxEntries { entries.removeSubrange(Self.maxEntries...) }
        var w = ByteWriter(capacity: 32 + entries.count * 24)
        w.u32(0x4E49_5050)  // "PPIN"
        w.u32(UInt32(bitPattern: SystemFile.processID))
        w.u32(UInt32(entries.count))
        w.u32(nonce)
        for (v, k, n) in entries {
            w.u64(v)
            w.u32(k)
            w.u32(0)
            w.u64(UInt64(n))
        }
        // The checksum follows the last entry: only the bytes in use are written.
        w.u64(w.checksum())
        try write(w.bytes, at: Self.slotDataBase + slot * Self.slotDataSize)
    }

    /// Pins published by other live stores (any process), skipping this store's own slot.
    func otherPins() -> [VersionPin] {
        otherSlots().flatMap { pid, entries in
            entries.map { VersionPin(version: $0.version, processID: pid, kind: $0.kind, count: $0.count, isLocal: false) }
        }
    }

    /// Every live pin slot of another store: its owner's pid and its entries (Spec/FORMAT.md §7,
    /// "Reading other stores' pins").
    private func otherSlots() -> [(pid: Int32, entries: [(version: UInt64, kind: String, count: Int)])] {
        let hw = min(Self.slotCount, readHighWater())
        var out: [(pid: Int32, entries: [(version: UInt64, kind: String, count: Int)])] = []
        for i in 0..<hw where i != slot {
            guard (try? file.isLockedByOther(byte: Self.slotLockBase + i)) == true else { continue }
            for _ in 0..<3 {
                guard let b = read(at: Self.slotDataBase + i * Self.slotDataSize, count: Self.slotDataSize),
                    b.count >= 24
                else { break }
                let v = ByteView(copying: b)
                let n = Int((try? v.u32(8)) ?? UInt32.max)
                guard n <= Self.maxEntries, (try? v.u32(0)) == 0x4E49_5050,
                    let sum = try? v.checksum(0, 16 + n * 24), let stored = try? v.u64(16 + n * 24), sum == stored
                else { continue }
                let pid = Int32(bitPattern: (try? v.u32(4)) ?? 0)
                var entries: [(version: UInt64, kind: String, count: Int)] = []
                for e in 0..<n {
                    let o = 16 + e * 24
                    guard let ver = try? v.u64(o), let k = try? v.u32(o + 8), let c = try? v.u64(o + 16) else { continue }
                    entries.append((ver, Self.kindNames[min(Int(k), Self.kindNames.count - 1)], Int(c)))
                }
                out.append((pid, entries))
                break
            }
        }
        return out
    }

    /// Whether any other store (in any process) has the data file open.
    func isOpenElsewhere() throws -> Bool {
        // An observer holds no lock of its own: any lock on the open byte is someone else's.
        if mode == .observer { return try file.isLockedByOther(byte: Self.openByte) }
        // Try to convert our shared lock to exclusive: it fails if anyone else shares it.
        let exclusive = try file.tryLock(byte: Self.openByte, .exclusive)
        if exclusive { try file.waitLock(byte: Self.openByte, .shared) }
        return !exclusive
    }

    /// Pids of the other stores that own a live pin slot, pinning anything or not (for messages).
    func otherProcessIDs() -> [Int32] {
        Array(Set(otherSlots().map(\.pid))).sorted()
    }

    /// Records that the commit `(version, recordChecksum)` is durable (its fdatasync returned).
    /// Best effort: a failure only costs the next opener one region check.
    func markDurable(version: UInt64, recordChecksum: UInt64) {
        writeRecord(Self.durableMagic, at: Self.durableOffset, version, recordChecksum)
    }

    /// The last commit a writer recorded as durable, if the record is intact.
    func durableCommit() -> (version: UInt64, recordChecksum: UInt64)? {
        readRecord(Self.durableMagic, at: Self.durableOffset).map { (version: $0.0, recordChecksum: $0.1) }
    }

    /// Records a commit that failed after its slot was written: its version number and bytes may have
    /// been seen by readers, so no later commit (by any store) may reuse them. The record's
    /// reserved word holds how many versions before it failed with it (a group, format 7).
    func recordFailed(_ f: FailedCommit) {
        let span = UInt32(clamping: f.version - f.firstVersion)
        writeRecord(Self.failedMagic, at: Self.failedOffset, f.version, f.fileLength, reserved: span)
    }

    /// The failed commit recorded by any writer, if the record is intact.
    func failedCommit() -> FailedCommit? {
        readRecord(Self.failedMagic, at: Self.failedOffset).map { r in
            FailedCommit(version: r.0, fileLength: r.1, firstVersion: r.0 - min(UInt64(r.reserved), r.0))
        }
    }

    /// Clears the durable and failed-commit records: a new data file was created at the path
    /// (Spec/FORMAT.md §6.1), and they named the commits of the file it replaced.
    func forgetCommitRecords() {
        guard canWrite else { return }
        let zeros = [UInt8](repeating: 0, count: 32)
        try? write(zeros, at: Self.durableOffset)
        try? write(zeros, at: Self.failedOffset)
    }

    /// A 32-byte record: magic, a u32 (zero but for the failed-commit record's span), two u64
    /// values, XXH64 of the first 24 bytes.
    private func writeRecord(_ magic: UInt32, at offset: Int, _ first: UInt64, _ second: UInt64, reserved: UInt32 = 0) {
        guard canWrite else { return }
        var w = ByteWriter(capacity: 32)
        w.u32(magic)
        w.u32(reserved)
        w.u64(first)
        w.u64(second)
        w.u64(w.checksum())
        try? write(w.bytes, at: offset)
    }

    private func readRecord(_ magic: UInt32, at offset: Int) -> (UInt64, UInt64, reserved: UInt32)? {
        guard let b = read(at: offset, count: 32), b.count == 32 else { return nil }
        let v = ByteView(copying: b)
        guard (try? v.u32(0)) == magic, let sum = try? v.checksum(0, 24), sum == v.lastWord,
            let reserved = try? v.u32(4), let first = try? v.u64(8), let second = try? v.u64(16)
        else { return nil }
        return (first, second, reserved)
    }

    // MARK: The writer word

    /// This store's token in the writer word (held and wanted bits clear).
    var token: UInt64 { UInt64(nonce) | UInt64(slot.map { $0 + 1 } ?? 0) << 32 }

    /// Takes the writer word (Spec/FORMAT.md §7), waiting while another live store holds it.
    /// - Returns: whether this store was the last to hold it, so no commit was made since its own
    ///   (only for a store with a pin slot; one without never assumes it).
    func acquireWriter() throws -> Bool {
        guard let region else { throw StorageError(.readOnly, "the lock file is not open for writing") }
        try checkOpener()
        if slot == nil { try file.waitLock(byte: Self.slotlessWriterByte, .exclusive) }
        do {
            return try takeWord(region)
        } catch {
            if slot == nil { file.unlock(byte: Self.slotlessWriterByte) }
            throw error
        }
    }

    /// Throws unless the process of fork generation `generation` (this one) opened the lock file:
    /// a child forked from the opener shares its slot and token, so taking the word with them could
    /// break mutual exclusion.
    func checkOpener(_ generation: UInt64 = SystemFile.forkGeneration) throws {
        guard generation == openerForkGeneration else {
            throw StorageError(.invalidTransactionState, "the store was opened by another process (before a fork); open it again here")
        }
    }

    private func takeWord(_ region: SharedRegion) throws -> Bool {
        let me = token
        if yieldsNext {
            // Our last release found a waiter and left the word at zero: give it its turn before
            // taking the word again. It looks at least every 0.5 ms, but on a loaded machine its
            // thread may run much later: wait until the word changes (the waiter took it, and
            // holds it or has left its token), for up to `turnWait` (a waiter that is gone).
            yieldsNext = false
            var waited: UInt32 = 0
            while waited < Self.turnWait, region.load(word: Self.writerWordOffset) == 0 {
                usleep(50)
                waited += 50
            }
        }
        var pause: UInt32 = 20
        var looks = 0
        while true {
            let w = region.load(word: Self.writerWordOffset)
            // Once the pauses are the longest (after 0.62 ms of waiting), the holder's liveness is
            // tested every few looks (two system calls; the holder may be in a long transaction).
            let testsLiveness = pause == Self.longestPause && looks % 8 == 0
            looks += 1
            if try w & Self.heldBit == 0 || (testsLiveness && !ownerIsAlive(w)) {
                // Free, released, or held by a store that is gone: take it.
                if region.compareExchange(word: Self.writerWordOffset, expected: w, desired: me | Self.heldBit).exchanged {
                    return w == me && slot != nil
                }
                continue
            }
            if w & Self.wantedBit == 0 {
                _ = region.compareExchange(word: Self.writerWordOffset, expected: w, desired: w | Self.wantedBit)
            }
            usleep(pause)
            pause = min(pause * 2, Self.longestPause)
        }
    }

    /// The longest pause (µs) between two looks at a held writer word.
    static let longestPause: UInt32 = 500
    /// The longest a store whose release found a waiter waits (µs) for the waiter to take the word.
    static let turnWait: UInt32 = 20_000

    /// Releases the writer word. `upToDate`: this store's current commit is the newest (it committed
    /// or looked); the word then keeps its token so its next acquisition can skip looking again,
    /// unless a waiter asked for it.
    func releaseWriter(upToDate: Bool) {
        guard let region else { return }
        let me = token
        var w = region.load(word: Self.writerWordOffset)
        assert(w & ~Self.wantedBit == me | Self.heldBit, "released a writer word this store did not hold")
        while w & ~Self.wantedBit == me | Self.heldBit {
            let keep = upToDate && w & Self.wantedBit == 0
            let r = region.compareExchange(word: Self.writerWordOffset, expected: w, desired: keep ? me : 0)
            if r.exchanged {
                yieldsNext = w & Self.wantedBit != 0
                break
            }
            w = r.original
        }
        if slot == nil { file.unlock(byte: Self.slotlessWriterByte) }
    }

    /// Whether the store a held writer word names is alive: the liveness byte of its pin slot is
    /// locked by another open file and that slot publishes its nonce; for a store without a slot,
    /// whether another open file holds the slotless-writer byte.
    func ownerIsAlive(_ w: UInt64) throws -> Bool {
        let field = Int((w >> 32) & 0xFFFF)
        guard field != 0 else { return try file.isLockedByOther(byte: Self.slotlessWriterByte) }
        let s = field - 1
        guard s < Self.slotCount, s != slot, try file.isLockedByOther(byte: Self.slotLockBase + s),
            let b = read(at: Self.slotDataBase + s * Self.slotDataSize + 12, count: 4), b.count == 4
        else { return false }
        return (try? ByteView(copying: b).u32(0)) == UInt32(truncatingIfNeeded: w)
    }

    /// The writer word as it stands (tests and inspection).
    var writerWord: UInt64 { region?.load(word: Self.writerWordOffset) ?? 0 }
}
