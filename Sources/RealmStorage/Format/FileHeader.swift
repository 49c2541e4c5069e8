/// The file header and its two commit slots (Spec/FORMAT.md §3).
///
/// ```
/// offset 0     : static header  "RLMSWIFT" · u32 format version · u32 header size (12288) · …
/// offset 4096  : commit slot 0 (64 bytes)
/// offset 8192  : commit slot 1 (64 bytes)
/// offset 12288 : first block
/// ```
package enum FileHeader {
    package static let magic: [UInt8] = Array("RLMSWIFT".utf8)
    /// The format version of the files this library creates (Spec/FORMAT.md §3.1, §9).
    package static let formatVersion: UInt32 = 8
    /// The format versions this library reads. A file keeps the version it was created with; only
    /// compaction, which writes a new file, upgrades it.
    package static let readableVersions: ClosedRange<UInt32> = 1...8
    /// The first format version whose commits may be chained: named by a commit head in front of
    /// their region instead of a slot (Spec/FORMAT.md §3.4).
    package static let chainedCommitsVersion: UInt32 = 3
    /// The first format version whose row-group lists and index directories may be paged
    /// (Spec/FORMAT.md §5.4, §5.7).
    package static let pagedListsVersion: UInt32 = 4
    /// The first format version whose row groups may name segment patches (Spec/FORMAT.md §4.8).
    package static let segmentPatchesVersion: UInt32 = 5
    /// The first format version whose changesets say, per column, which objects had it set
    /// (Spec/FORMAT.md §5.6).
    package static let columnChangesVersion: UInt32 = 6
    /// The first format version whose commits may be written before the one they build on is
    /// durable, so that one `fdatasync` makes a group of them durable; each commit head says which
    /// commit was acknowledged when it was written (Spec/FORMAT.md §3.4, §6.2).
    package static let groupCommitVersion: UInt32 = 7
    /// The first format version whose version records carry their own length and the version that
    /// was acknowledged when they were written (`lag`, as commit heads do), so that a record found
    /// past a damaged block is evidence that a newer commit was acknowledged (Spec/FORMAT.md §5.1,
    /// §6.6).
    package static let recordLagVersion: UInt32 = 8
    package static let size = 12288
    package static let slotOffsets = [4096, 8192]
    package static let slotSize = 64
    static let slotMagic: UInt32 = 0x544F_4C53  // "SLOT"

    /// The static header (first 64 bytes of the file) of format `version`.
    static func encodeStatic(version: UInt32 = formatVersion) -> [UInt8] {
        var w = ByteWriter(capacity: 64)
        w.append(magic)
        w.u32(version)
        w.u32(UInt32(size))
        w.u32(UInt32(slotOffsets[0]))
        w.u32(UInt32(slotOffsets[1]))
        while w.count < 56 { w.u8(0) }
        w.u64(w.checksum())
        return w.bytes
    }

    /// Validates the static header; returns the format version.
    static func validateStatic(_ v: ByteView) throws -> UInt32 {
        guard v.count >= 64, try v.bytes(0, 8) == magic else {
            throw StorageError(.notARealmFile, "the file does not start with the Realm magic bytes")
        }
        let version = try v.u32(8)
        guard readableVersions.contains(version) else {
            throw StorageError(
                .unsupportedFormatVersion,
                "format version \(version); this library reads versions \(readableVersions.lowerBound) to \(readableVersions.upperBound)")
        }
        guard try v.checksum(0, 56) == v.u64(56) else { throw StorageError.corrupted("static header checksum mismatch", at: 56) }
        guard try v.u32(12) == UInt32(size), try v.u32(16) == UInt32(slotOffsets[0]), try v.u32(20) == UInt32(slotOffsets[1]) else {
            throw StorageError.corrupted("static header geometry differs from the format's", at: 12)
        }
        return version
    }
}

/// One commit slot: the durable pointer to a version record (Spec/FORMAT.md §3.2).
package struct CommitSlot: Sendable, Equatable {
    package var version: UInt64
    package var record: BlockRef
    /// The committed file length: every byte of this version lies below it.
    package var fileLength: UInt64
    /// Nanoseconds since 1970.
    package var commitTime: Int64
    /// The checksum trailer of the version record this slot points to.
    package var recordChecksum: UInt64

    func encode() -> [UInt8] {
        var w = ByteWriter(capacity: 64)
        w.u32(FileHeader.slotMagic)
        w.u32(0)
        w.u64(version)
        w.ref(record)
        w.u64(fileLength)
        w.i64(commitTime)
        w.u64(recordChecksum)
        w.u64(w.checksum())
        return w.bytes
    }

    /// Decodes a slot; nil when it is empty or its checksum does not match (a torn or never-written slot).
    static func decode(_ v: ByteView) -> CommitSlot? {
        guard v.count >= 64, (try? v.u32(0)) == FileHeader.slotMagic,
            let sum = try? v.checksum(0, 56), sum == (try? v.u64(56))
        else { return nil }
        guard let version = try? v.u64(8), let off = try? v.u64(16), let len = try? v.u64(24),
            let fl = try? v.u64(32), let t = try? v.i64(40), let rc = try? v.u64(48)
        else { return nil }
        return CommitSlot(version: version, record: BlockRef(offset: off, length: len), fileLength: fl, commitTime: t, recordChecksum: rc)
    }
}

/// The head of a commit of format 3 (Spec/FORMAT.md §3.4): written immediately before the commit
/// region, it names the commit's record as a slot would, and binds it to its parent commit, so
/// recovery can follow commits appended after the one the newest slot names.
package struct CommitHead: Sendable, Equatable {
    package static let size = 80
    static let magic: UInt32 = 0x4445_4852  // "RHED"
    /// What a slot naming this commit would hold.
    package var slot: CommitSlot
    /// The version and record checksum of the commit this one was made on.
    package var parentVersion: UInt64
    package var parentRecordChecksum: UInt64
    /// How far back the acknowledged commit lies (format 7, bytes 4–7): the newest commit of the
    /// chain that was durable when this one was written is version `slot.version − lag`. Zero (every
    /// head before format 7) means the parent was.
    package var lag: UInt32 = 0

    /// The newest commit of the chain that was acknowledged (durable) when this one was written:
    /// the parent, unless the commit was written in a group (Spec/FORMAT.md §3.4).
    package var acknowledgedVersion: UInt64 { Self.acknowledged(version: slot.version, parent: parentVersion, lag: lag) ?? 0 }

    /// The commit a head or (format 8) version record of `version`, built on `parent`, says was
    /// acknowledged when it was written (Spec/FORMAT.md §3.4, §5.1): `version − lag`, or the parent
    /// when `lag` is 0; nil when `lag` names no commit at or before the parent (the bytes are then
    /// not a valid head or record).
    static func acknowledged(version: UInt64, parent: UInt64, lag: UInt32) -> UInt64? {
        guard lag != 0 else { return parent }
        guard UInt64(lag) <= version, version - UInt64(lag) <= parent else { return nil }
        return version - UInt64(lag)
    }

    func encode() -> [UInt8] {
        var w = ByteWriter(capacity: Self.size)
        w.u32(Self.magic)
        w.u32(lag)
        w.u64(slot.version)
        w.ref(slot.record)
        w.u64(slot.fileLength)
        w.i64(slot.commitTime)
        w.u64(slot.recordChecksum)
        w.u64(parentVersion)
        w.u64(parentRecordChecksum)
        w.u64(w.checksum())
        return w.bytes
    }

    /// Decodes a head; nil when the bytes are not one (zeros, another block, a torn write), or when
    /// its lag names no commit at or before its parent.
    static func decode(_ v: ByteView) -> CommitHead? {
        guard v.count >= size, (try? v.u32(0)) == magic,
            let sum = try? v.checksum(0, size - 8), sum == (try? v.u64(size - 8))
        else { return nil }
        guard let lag = try? v.u32(4), let version = try? v.u64(8), let off = try? v.u64(16), let len = try? v.u64(24),
            let fl = try? v.u64(32), let t = try? v.i64(40), let rc = try? v.u64(48),
            let pv = try? v.u64(56), let prc = try? v.u64(64)
        else { return nil }
        guard acknowledged(version: version, parent: pv, lag: lag) != nil else { return nil }
        return CommitHead(
            slot: CommitSlot(
                version: version, record: BlockRef(offset: off, length: len), fileLength: fl, commitTime: t, recordChecksum: rc),
            parentVersion: pv, parentRecordChecksum: prc, lag: lag)
    }
}

/// A commit reported as failed after its bytes may have been seen (Spec/FORMAT.md §6.2, §7): no
/// chain follows it and no commit builds on it.
struct FailedCommit: Sendable, Equatable {
    let version: UInt64
    /// Its committed length: the next commit starts at or after it.
    let fileLength: UInt64
    /// The first commit of its group (format 7): every commit from version `firstVersion` to
    /// `version` was written before the `fdatasync` that failed, and failed with it. Equal to
    /// `version` for a commit that failed alone.
    var firstVersion: UInt64

    init(version: UInt64, fileLength: UInt64, firstVersion: UInt64? = nil) {
        self.version = version
        self.fileLength = fileLength
        self.firstVersion = min(firstVersion ?? version, version)
    }

    /// Whether `slot` (a slot's or a head's fields) names this commit or an earlier one of its group.
    func names(_ slot: CommitSlot) -> Bool {
        slot.version == version ? slot.fileLength == fileLength : (firstVersion..<version).contains(slot.version)
    }
}

/// The mark an online compaction leaves in the file it replaces (Spec/FORMAT.md §8, "The
/// superseded mark"): written at the old file's committed length, made durable before the rename,
/// it names the path the compacted copy was renamed to. A name that still leads to the old file
/// (a hard link made while it was compacted) must not be written through: while the path the mark
/// names leads to another file, the mark is **in force**, and opening the old file fails with
/// ``StorageError/Code/superseded``. A mark whose path still leads to the file itself is stale (the
/// compaction did not rename) and is ignored, and cleared by the next writer.
package struct SupersededMark: Sendable, Equatable {
    static let magic: UInt32 = 0x5055_5352  // "RSUP"
    /// The fixed part before the path.
    static let headerSize = 32
    /// The longest path a mark holds (Linux's `PATH_MAX`).
    static let maximumPathLength = 4096
    /// The version the compacted copy starts at: the newest of the old file.
    package var version: UInt64
    /// That version's committed length: where the mark lies.
    package var fileLength: UInt64
    /// When the compaction marked the file (nanoseconds since 1970).
    package var time: Int64
    /// The absolute path the compacted copy was renamed to.
    package var path: String

    /// The encoded length of a mark whose path has `pathLength` bytes.
    static func length(pathLength: Int) -> Int { (headerSize + pathLength + 7) / 8 * 8 + 8 }

    func encode() -> [UInt8] {
        let p = Array(path.utf8)
        var w = ByteWriter(capacity: Self.length(pathLength: p.count))
        w.u32(Self.magic)
        w.u32(UInt32(p.count))
        w.u64(version)
        w.u64(fileLength)
        w.i64(time)
        w.append(p)
        w.sealBlock()
        return w.bytes
    }

    /// The mark's length as its first 8 bytes give it, if they begin a mark (nil otherwise).
    static func encodedLength(_ v: ByteView) -> Int? {
        guard v.count >= 8, (try? v.u32(0)) == magic, let p = try? v.u32(4), p >= 1, p <= UInt32(maximumPathLength) else {
            return nil
        }
        return length(pathLength: Int(p))
    }

    /// Decodes a whole mark; nil when the bytes are not one (another block, zeros, a torn write).
    static func decode(_ v: ByteView) -> SupersededMark? {
        guard let n = encodedLength(v), v.count >= n, let sum = try? v.checksum(0, n - 8), sum == (try? v.u64(n - 8)),
            let p = try? v.u32(4), let version = try? v.u64(8), let length = try? v.u64(16), let time = try? v.i64(24),
            let path = try? v.string(headerSize, Int(p))
        else { return nil }
        return SupersededMark(version: version, fileLength: length, time: time, path: path)
    }
}
