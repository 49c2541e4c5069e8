import Foundation

/// Commits a file holds but recovery cannot reach, because an earlier commit head, version record
/// or slot is damaged (Spec/FORMAT.md §6.6).
///
/// A crash can only tear commits that were not acknowledged: the last one, or (format 7) the last
/// group written before one `fdatasync`. Each commit head says which commit was acknowledged when
/// it was written. So a failed check followed by a valid commit head written after a newer commit
/// was acknowledged, or a lock file whose durable record names a newer version, is damage, never a
/// torn tail. Opening such a file throws ``StorageError/Code/corrupted`` (with
/// ``StorageError/unreachableVersion``) unless ``Store/Options/salvage`` asks for the newest intact
/// version; ``Store/damage`` then says what was skipped. `Sendable`.
public struct ChainDamage: Sendable, Equatable, CustomStringConvertible {
    /// One commit found past the break, by its head or (format 8) its version record.
    public struct Commit: Sendable, Equatable {
        /// The version the head names.
        public var version: UInt64
        /// The head's byte offset.
        public var offset: UInt64
    }

    /// The byte offset of the first check that failed: a commit head, a version record, a commit
    /// region or a header slot.
    public var offset: UInt64
    /// What failed there.
    public var reason: String
    /// The newest version that can be read: the one a salvaging open reads.
    public var intactVersion: UInt64
    /// The newest version the file (or its lock file's durable record) shows exists.
    public var newestUnreachableVersion: UInt64
    /// The commits found after the break, by a valid commit head or (format 8) version record,
    /// that were written after a version newer than the intact one was acknowledged, in file order.
    public var unreachableCommits: [Commit]

    public var description: String {
        "the commit chain is damaged at byte \(offset) (\(reason)): versions after \(intactVersion) up to "
            + "\(newestUnreachableVersion) exist but cannot be read"
    }

    /// The error an open reports for this damage.
    var error: StorageError {
        var e = StorageError(
            .corrupted,
            description + "; open with salvage (Store.Options.salvage, realm-dump --salvage) to read version \(intactVersion)",
            offset: offset)
        e.unreachableVersion = newestUnreachableVersion
        return e
    }
}

extension Store {
    /// How one step along the commit chain ended (Spec/FORMAT.md §3.4).
    enum ChainStep {
        /// A valid next commit (its region is not checked yet), and the version its head says was
        /// acknowledged when it was written.
        case next(Current, acknowledged: UInt64)
        /// Nothing follows: zeros, the end of the file, or a head naming a commit reported failed.
        case end
        /// A compaction's superseded mark follows (§8): no commit does; whether the mark is in force
        /// is ``supersededMark(_:)``'s to say.
        case marked
        /// Bytes follow that are not a valid next commit: a torn last commit, or damage.
        case broken(offset: Int, reason: String)
    }

    /// The outcome of following a chain: where it settled and, if a check failed on the way, where.
    struct Settled {
        /// nil only when the first commit is the last, was to be checked, and failed.
        var current: Current?
        var broken: (offset: Int, reason: String)?
        /// The chain ended at a superseded mark.
        var endsAtMark = false
    }

    /// Finds the newest commit whose slot, record and new blocks all verify (Spec/FORMAT.md §6.6), or
    /// throws ``StorageError/Code/corrupted`` when commits after it exist that a damaged block
    /// hides (see ``ChainDamage``).
    /// - Parameter durable: the commit a writer recorded in the lock file as durable; when the newest
    ///   slot is that commit its bytes are known durable and the region check is skipped.
    /// - Parameter onlySlot: consider only this slot (forensics); its commit region is checked when it
    ///   is the newest valid slot, as it would be.
    static func recover(
        _ file: SystemFile, durable: (version: UInt64, recordChecksum: UInt64)? = nil, onlySlot: Int? = nil,
        rejecting failed: FailedCommit? = nil
    ) throws -> Current {
        let (current, damage, _) = try recover(file, durable: durable, onlySlot: onlySlot, rejecting: failed, salvage: false)
        if let damage { throw damage.error }
        return current
    }

    /// Recovery that reports damage instead of throwing when `salvage` is set. A break that looks
    /// like damage is looked at again (up to three times) before it is reported, unless it stays at
    /// the same offset: a commit another process is writing while this one reads can look broken
    /// for an instant, damage does not move.
    static func recover(
        _ file: SystemFile, durable: (version: UInt64, recordChecksum: UInt64)?, onlySlot: Int?, rejecting failed: FailedCommit?,
        salvage: Bool
    ) throws -> (Current, ChainDamage?, torn: (offset: Int, reason: String)?) {
        var seen: UInt64?
        var looks = 0
        while true {
            let (current, damage, torn) = try recoverOnce(file, durable: durable, onlySlot: onlySlot, rejecting: failed)
            guard let damage else { return (current, nil, torn) }
            looks += 1
            if damage.offset == seen || looks == 3 {
                if salvage { return (current, damage, nil) }
                throw damage.error
            }
            seen = damage.offset
        }
    }

    private static func recoverOnce(
        _ file: SystemFile, durable: (version: UInt64, recordChecksum: UInt64)?, onlySlot: Int?, rejecting failed: FailedCommit?
    ) throws -> (Current, ChainDamage?, torn: (offset: Int, reason: String)?) {
        let size = try file.size()
        guard size >= 64 else {
            if size == 0 { throw StorageError(.notARealmFile, "the file is empty") }
            throw StorageError(.notARealmFile, "the file is \(size) bytes, shorter than a Realm header")
        }
        // The static header and the two slots: nothing else of the header's 12288 bytes is read.
        let formatVersion = try FileHeader.validateStatic(ByteView(copying: try file.read(at: 0, count: 64)))
        guard size >= FileHeader.size else { throw StorageError.corrupted("file truncated inside its header", at: size) }
        let slots = try FileHeader.slotOffsets.map { o in
            CommitSlot.decode(ByteView(copying: try file.read(at: o, count: FileHeader.slotSize), origin: o))
        }
        var order = [0, 1].filter { slots[$0] != nil }.sorted { slots[$0]!.version > slots[$1]!.version }
        if let only = onlySlot {
            guard FileHeader.slotOffsets.indices.contains(only) else {
                throw StorageError(.notFound, "there is no header slot \(only); slots are 0 and 1")
            }
            guard slots[only] != nil else {
                throw StorageError.corrupted(
                    "header slot \(only) is empty or its checksum does not match", at: FileHeader.slotOffsets[only])
            }
            order = [only]
        }
        guard !order.isEmpty else { throw StorageError.corrupted("neither commit slot is valid", at: FileHeader.slotOffsets[0]) }
        let newest = [0, 1].filter { slots[$0] != nil }.max { slots[$0]!.version < slots[$1]!.version }
        // A slot that fails its checks is damage or a torn last commit: what follows decides.
        var firstFailure: StorageError?
        for i in order {
            let slot = slots[i]!
            do {
                guard slot.fileLength <= UInt64(size), slot.fileLength >= UInt64(FileHeader.size) else {
                    throw StorageError.corrupted(
                        "slot \(i) claims \(slot.fileLength) bytes; the file has \(size)", at: FileHeader.slotOffsets[i])
                }
                let mapping = try FileMapping(file: file, length: mappingLength(for: size))
                let view = mapping.view(validLength: Int(slot.fileLength))
                let record = try loadRecord(view, slot, formatVersion: formatVersion, cache: nil)
                let current = Current(file: file, formatVersion: formatVersion, mapping: mapping, slot: slot, slotIndex: i, record: record)
                // The newest slot's commit, or the last commit chained after a slot's, may have been
                // torn by a crash: check every byte it wrote. (A slot read for forensics is not
                // followed, nor checked for damage after it.)
                let settled = try settle(
                    current, checkFirst: i == newest, durable: { durable }, cache: nil, rejecting: { failed },
                    follow: onlySlot == nil)
                guard let result = settled.current else {
                    throw StorageError.corrupted(
                        "the newest commit's bytes do not match its checksum (torn commit)", at: Int(record.commitStart))
                }
                guard onlySlot == nil else { return (result, nil, nil) }
                let broken = settled.broken ?? firstFailure.map { (Int(clamping: $0.offset ?? 0), $0.reason) }
                guard let broken else { return (result, nil, nil) }
                let damage = try unreachableCommits(after: result, brokenAt: broken, size: size, durable: durable, rejecting: failed)
                // A check failed and nothing shows a newer acknowledged commit: a torn last commit.
                return (result, damage, damage == nil ? broken : nil)
            } catch let e as StorageError where e.code != .io {
                // A slot whose commit does not verify: try the older one. An I/O error is reported
                // at once, never a reason to open an older version (the next commit would overwrite
                // newer ones).
                if firstFailure == nil { firstFailure = e }
                continue
            }
        }
        throw firstFailure ?? StorageError.corrupted("no valid commit", at: 0)
    }

    /// The newest commit reachable from `c` along the commits chained after it (Spec/FORMAT.md §3.4,
    /// §6.6): while a valid commit head follows the committed length, names the current commit as
    /// its parent and its record loads, that commit becomes current. Then the commits that may be
    /// torn have their region checksums checked, oldest first: the last one, and (format 7) each
    /// one written in a group, whose successor's head says it was not yet acknowledged when the
    /// successor was written. A commit is not checked when `durable` names it or a later commit, or
    /// when it is `c` and `checkFirst` is false. The chain ends at the parent of the first that fails.
    /// - Returns: where the chain settled (nil only when `c` itself fails its check, which needs
    ///   `checkFirst`), and the first check that failed on the way, if any: the caller decides
    ///   whether it was a torn tail or damage.
    /// - Throws: only when the file cannot be read or mapped.
    static func settle(
        _ c: Current, checkFirst: Bool, durable: () -> (version: UInt64, recordChecksum: UInt64)?, cache: BlockCache?,
        rejecting failed: () -> FailedCommit? = { nil }, follow: Bool = true
    ) throws -> Settled {
        var previous: Current?
        var last = c
        var size: Int?
        var broken: (offset: Int, reason: String)?
        var endsAtMark = false
        // Format 7: the commits followed by one written before they were acknowledged (in a group),
        // with their parents; empty, and so never allocated, for other chains.
        var grouped: [(parent: Current?, commit: Current)] = []
        // Commits at or before the one the lock file records as durable need no check.
        let recorded = durable()
        var durableThrough: UInt64 = 0
        func noteDurable(_ x: Current) {
            if let d = recorded, d.version == x.slot.version, d.recordChecksum == x.slot.recordChecksum { durableThrough = d.version }
        }
        noteDurable(c)
        steps: while follow, last.formatVersion >= FileHeader.chainedCommitsVersion {
            switch try chained(after: last, &size, cache, rejecting: failed) {
            case .next(let next, let acknowledged):
                if acknowledged < last.slot.version && (previous != nil || checkFirst) { grouped.append((previous, last)) }
                previous = last
                last = next
                noteDurable(next)
            case .end: break steps
            case .marked:
                endsAtMark = true
                break steps
            case .broken(let offset, let reason):
                broken = (offset, reason)
                break steps
            }
        }
        // Oldest first, then the last: the chain ends at the parent of the first that fails.
        for (parent, commit) in grouped where commit.slot.version > durableThrough && !regionVerifies(commit) {
            return Settled(current: parent, broken: (Int(commit.record.commitStart), regionMismatch(commit)))
        }
        guard previous != nil || checkFirst, last.slot.version > durableThrough, !regionVerifies(last) else {
            return Settled(current: last, broken: broken, endsAtMark: endsAtMark)
        }
        return Settled(current: previous, broken: broken ?? (Int(last.record.commitStart), regionMismatch(last)))
    }

    /// Whether every byte `c`'s commit wrote before its record hashes to the record's commit checksum.
    private static func regionVerifies(_ c: Current) -> Bool {
        (try? verifyCommitRegion(c.mapping.view(validLength: Int(c.slot.fileLength)), c.record, c.slot)) != nil
    }

    private static func regionMismatch(_ c: Current) -> String { "the bytes of version \(c.slot.version) do not match its checksum" }

    /// The step after `c`: the commit chained after it, if a valid head at its committed length
    /// names `c` as its parent, its record loads and starts right after the head, and it is not the
    /// commit `failed` names (reported failed: it may never become durable). Its region is not
    /// checked here. The head is read with `pread`, not through the mapping: that page is where the
    /// next commit writes, and reading it through the mapping would map it (and, by the kernel's
    /// fault-around, the pages after it) into this process, so that writing each of them back
    /// would cost that commit's `fdatasync` a write-protection pass.
    private static func chained(
        after c: Current, _ size: inout Int?, _ cache: BlockCache?, rejecting failed: () -> FailedCommit?
    ) throws -> ChainStep {
        let at = Int(c.slot.fileLength)
        let raw = try c.file.read(at: at, count: CommitHead.size)
        if raw.allSatisfy({ $0 == 0 }) { return .end }
        let bytes = ByteView(copying: raw)
        // A compaction's superseded mark (§8): no commit follows it; whether it is in force is
        // decided by ``supersededMark(_:)``.
        if SupersededMark.encodedLength(bytes) != nil { return .marked }
        guard bytes.count == CommitHead.size, let head = CommitHead.decode(bytes) else {
            return .broken(offset: at, reason: "the bytes after version \(c.slot.version) are not a valid commit head")
        }
        guard head.parentVersion == c.slot.version, head.parentRecordChecksum == c.slot.recordChecksum,
            head.slot.version > c.slot.version, head.slot.fileLength > UInt64(at + CommitHead.size)
        else {
            return .broken(offset: at, reason: "the commit head after version \(c.slot.version) does not build on it")
        }
        if failed()?.names(head.slot) == true { return .end }
        let fileSize = try size ?? c.file.size()
        size = fileSize
        let slot = head.slot
        guard slot.fileLength <= UInt64(fileSize) else {
            return .broken(offset: at, reason: "the commit head of version \(slot.version) names bytes past the end of the file")
        }
        let mapping =
            Int(slot.fileLength) <= c.mapping.length ? c.mapping : try FileMapping(file: c.file, length: mappingLength(for: fileSize))
        let record: VersionRecord
        do {
            record = try loadRecord(mapping.view(validLength: Int(slot.fileLength)), slot, formatVersion: c.formatVersion, cache: cache)
        } catch let e as StorageError where e.code != .io {
            return .broken(offset: Int(clamping: e.offset ?? slot.record.offset), reason: "version \(slot.version): \(e.reason)")
        }
        guard record.commitStart == UInt64(at + CommitHead.size), record.parentVersion == c.slot.version,
            record.parentRecord == c.slot.record
        else {
            return .broken(offset: Int(slot.record.offset), reason: "the record of version \(slot.version) does not follow its head")
        }
        return .next(
            Current(
                file: c.file, formatVersion: c.formatVersion, mapping: mapping, slot: slot, slotIndex: c.slotIndex, record: record,
                chained: c.chained + 1),
            acknowledged: head.acknowledgedVersion)
    }

    /// The version record of a format-8 file at `o`, if the bytes there are one whose checksum
    /// matches (its length is its own field, Spec/FORMAT.md §5.1): what a slot naming it would hold,
    /// and the version that was acknowledged when it was written.
    static func recordEvidence(_ view: ByteView, at o: Int, size: Int) -> (slot: CommitSlot, acknowledged: UInt64)? {
        guard o + VersionRecord.lengthOffset + 8 <= size, let length = try? view.u64(o + VersionRecord.lengthOffset),
            length >= UInt64(VersionRecord.lengthOffset + 16), length % 8 == 0, length <= UInt64(size - o)
        else { return nil }
        let n = Int(length)
        guard let sum = try? view.checksumInPieces(o, n - 8), let trailer = try? view.u64(o + n - 8), sum == trailer,
            let lag = try? view.u32(o + 4), let version = try? view.u64(o + 8), let parent = try? view.u64(o + 16),
            let time = try? view.i64(o + 56), let acknowledged = CommitHead.acknowledged(version: version, parent: parent, lag: lag)
        else { return nil }
        let slot = CommitSlot(
            version: version, record: BlockRef(offset: UInt64(o), length: length), fileLength: UInt64(o + n), commitTime: time,
            recordChecksum: trailer)
        return (slot, acknowledged)
    }

    /// After a failed check at `brokenAt`, recovery settled on `r`. That is a torn tail unless
    /// something shows a newer commit was acknowledged: a valid commit head past `r` whose
    /// acknowledged version (its parent before format 7) is newer than `r`, or a durable record in
    /// the lock file naming a newer version. Then it is damage.
    static func unreachableCommits(
        after r: Current, brokenAt: (offset: Int, reason: String), size: Int,
        durable: (version: UInt64, recordChecksum: UInt64)?, rejecting failed: FailedCommit?
    ) throws -> ChainDamage? {
        var found: [ChainDamage.Commit] = []
        let from = Int(r.slot.fileLength)
        if r.formatVersion >= FileHeader.chainedCommitsVersion, size > from {
            let mapping = size <= r.mapping.length ? r.mapping : try FileMapping(file: r.file, length: mappingLength(for: size))
            let view = mapping.view(validLength: size)
            for o in view.offsets(ofAlignedWord: CommitHead.magic, from: from) where o + CommitHead.size <= size {
                guard let h = CommitHead.decode(try view.slice(o, CommitHead.size)), h.acknowledgedVersion > r.slot.version,
                    failed?.names(h.slot) != true
                else { continue }
                found.append(ChainDamage.Commit(version: h.slot.version, offset: UInt64(o)))
            }
        }
        // Format 8: a version record says which commit was acknowledged when it was written, so a
        // record past the break counts as a head does, also when its head is among the damage.
        if r.formatVersion >= FileHeader.recordLagVersion, size > from {
            let mapping = size <= r.mapping.length ? r.mapping : try FileMapping(file: r.file, length: mappingLength(for: size))
            let view = mapping.view(validLength: size)
            let heads = Set(found.map(\.version))
            for o in view.offsets(ofAlignedWord: BlockMagic.versionRecord, from: from) {
                guard let c = recordEvidence(view, at: o, size: size), c.acknowledged > r.slot.version,
                    failed?.names(c.slot) != true, !heads.contains(c.slot.version)
                else { continue }
                found.append(ChainDamage.Commit(version: c.slot.version, offset: UInt64(o)))
            }
            found.sort { $0.offset < $1.offset }
        }
        var newest = found.map(\.version).max() ?? 0
        if let d = durable, d.version > r.slot.version { newest = max(newest, d.version) }
        guard newest > r.slot.version else { return nil }
        return ChainDamage(
            offset: UInt64(max(0, brokenAt.offset)), reason: brokenAt.reason, intactVersion: r.slot.version,
            newestUnreachableVersion: newest, unreachableCommits: found)
    }
}

extension Store {
    /// The superseded mark (Spec/FORMAT.md §8) at `c`'s committed length, if one is there for `c`
    /// (its version and length), and whether it is in force: the path it names leads to another
    /// file than the one `c` was read from (the compaction renamed its copy there).
    static func supersededMark(_ c: Current) throws -> (mark: SupersededMark, inForce: Bool)? {
        let at = Int(c.slot.fileLength)
        // One read of a head's length covers a mark naming a path of up to 40 bytes.
        let first = try c.file.read(at: at, count: CommitHead.size)
        guard let n = SupersededMark.encodedLength(ByteView(copying: first)) else { return nil }
        let bytes = n <= first.count ? Array(first.prefix(n)) : try c.file.read(at: at, count: n)
        guard let mark = SupersededMark.decode(ByteView(copying: bytes)),
            mark.version == c.slot.version, mark.fileLength == c.slot.fileLength
        else { return nil }
        let onPath = SystemFile.identity(atPath: mark.path)
        let mine = try c.file.identity()
        return (mark, onPath != nil && onPath != mine)
    }

    /// The error an opener or writer of a file whose superseded mark is in force reports.
    static func supersededError(_ mark: SupersededMark, _ path: String) -> StorageError {
        var e = StorageError(
            .superseded,
            "this file was replaced by a compacted copy at \(mark.path) and is no longer the database; it was reached through "
                + "another name (a hard link) that still leads to the old file: open \(mark.path) instead, and remove this name",
            path: path)
        e.supersededBy = mark.path
        return e
    }

    /// Under the writer word, before a transaction writes: fails if the current commit's file was
    /// replaced by a compaction at the path its mark names; clears a stale mark (the compaction
    /// that wrote it did not rename), which this writer's commit would otherwise only partly cover.
    /// Called by a writer's refresh when its chain ended at a mark (format 3 and later; before, at
    /// every writer's refresh).
    func checkSupersededMark() throws {
        let current = state.withLock { $0.current }
        guard let (mark, inForce) = try Self.supersededMark(current) else { return }
        if inForce { throw Self.supersededError(mark, path) }
        let length = SupersededMark.length(pathLength: mark.path.utf8.count)
        try current.file.write([UInt8](repeating: 0, count: length), at: Int(current.slot.fileLength))
    }
}
