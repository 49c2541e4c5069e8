import Foundation

/// Group commit (Spec/FORMAT.md §6.2, format 7): a commit is written under the writer word, which
/// then passes to the next write transaction of this store while the commit waits for its
/// `fdatasync`. One thread syncs at a time; the commits written while it does are made durable by
/// the next sync, each acknowledged only when a sync that began after its write returns. The word
/// stays with this store until its last commit is durable, so no other process builds on a commit
/// that may still fail; if a sync fails, every commit waiting for it fails, and so does every
/// commit written after them (they build on them).
extension Store {
    /// A commit written and not yet durable.
    struct PendingCommit {
        let version: UInt64
        let fileLength: UInt64
        let parentVersion: UInt64
        /// Its record's checksum trailer, for the lock file's durable record.
        let recordChecksum: UInt64
        /// Where its commit head lies: cleared if its group fails, which unlinks it and every
        /// commit after it from the chain.
        let headOffset: Int
        /// The slot it wrote and the bytes that slot held before, put back if its group fails. Only
        /// the first commit of a group writes a slot.
        let slotWrite: (offset: Int, previous: [UInt8])?
        /// The store's current commit before it: where the store goes back if its group fails.
        let before: Current
    }

    /// The write transaction, the writer word and the commits waiting for a sync.
    struct Writers {
        /// A write transaction of this store is open (one at a time).
        var transactionOpen = false
        /// This store holds the writer word (Spec/FORMAT.md §7).
        var holdsWord = false
        /// Whether the word, once released after the last pending commit is durable, is released
        /// as up to date (the store's commit is the newest).
        var releasesWordWhenDurable = false
        /// Written, not yet durable, oldest first.
        var pending: [PendingCommit] = []
        /// A thread is in `fdatasync` for the commits written before it began.
        var syncing = false
        /// The groups whose sync failed: their versions and the error.
        var failures: [(versions: ClosedRange<UInt64>, error: StorageError)] = []
    }

    /// The newest commit of the chain that is acknowledged, for the head of a commit made on `base`:
    /// `base` itself unless commits of this store still wait for their sync, else the parent of the
    /// first of them (it was acknowledged when that commit was written, and nothing after it is).
    func acknowledgedVersion(base: UInt64) -> UInt64 {
        writers.withLock { $0.pending.first?.parentVersion ?? base }
    }

    /// Starts the write-back of a commit just written to `file` (bytes `from..<to`) when its writer
    /// is alone: no other writer waits for the word, no commit waits for a sync and none is in
    /// flight. The commits of a group share pages, a page being written back is written again for
    /// the next commit, and a group's sync that ends sooner gathers fewer commits.
    func startWritebackIfAlone(_ file: SystemFile, from: Int, to: Int) {
        guard writersWaiting.load(ordering: .relaxed) == 0, writers.withLock({ $0.pending.isEmpty && !$0.syncing }) else { return }
        file.startWriteback(at: from, count: to - from)
    }

    /// Adds a commit just written (under the writer word) to those waiting for a sync.
    func enqueue(_ commit: PendingCommit) {
        writers.withLock { $0.pending.append(commit) }
    }

    /// Makes every pending commit of this store durable (before a commit that writes a slot, or a
    /// compaction's switch).
    /// - Throws: the sync's error if it failed (every pending commit then failed).
    func flushPendingCommits() throws {
        guard let last = writers.withLock({ $0.pending.last?.version }) else { return }
        try awaitDurable(last)
    }

    /// Returns when the commit `version` of this store is durable: syncs the file if no other thread
    /// is syncing, else waits for that thread's sync (and, if it began before this commit was
    /// written, for the next one).
    /// - Throws: ``StorageError/Code/io`` when the sync that was to make it durable failed.
    func awaitDurable(_ version: UInt64) throws {
        enum Step {
            case done
            case failed(StorageError)
            case sync
        }
        while true {
            let step = writers.wait(on: Self.syncSettled) { w -> Step? in
                guard w.pending.contains(where: { $0.version == version }) else {
                    if let f = w.failures.last(where: { $0.versions.contains(version) }) { return .failed(f.error) }
                    return .done
                }
                if w.syncing { return nil }
                w.syncing = true
                return .sync
            }
            switch step {
            case .done: return
            case .failed(let error): throw error
            case .sync:
                let minimum = options.groupCommitMinimum
                var looks = 0
                while minimum > 1, looks < 250, writers.withLock({ $0.pending.count }) < minimum {
                    usleep(200)
                    looks += 1
                }
                // Every commit written before this point is covered by the sync.
                let (through, file) = writers.withLock { w in (w.pending[w.pending.count - 1].version, w.pending[0].before.file) }
                var failure: StorageError?
                do { try file.syncData() } catch let e as StorageError { failure = e } catch {
                    failure = StorageError(.io, "fdatasync failed: \(error)", path: path)
                }
                settleSync(through: through, failure: failure)
            }
        }
    }

    /// Records the outcome of a sync that covered every commit up to `through`; on failure, fails
    /// every pending commit. Releases the writer word when nothing is pending and no transaction
    /// is open.
    private func settleSync(through: UInt64, failure: StorageError?) {
        writers.withLock { w in
            w.syncing = false
            if let failure {
                if let first = w.pending.first, let last = w.pending.last {
                    // Unlinking the group's first commit unlinks every commit after it.
                    unnameFailedCommit(
                        FailedCommit(version: last.version, fileLength: last.fileLength, firstVersion: first.version),
                        file: first.before.file, head: first.headOffset, slot: first.slotWrite, before: first.before)
                    // Kept for good: a thread of the group may look only later, and a failed sync
                    // is rare (an I/O error), so the list stays short.
                    w.failures.append((first.version...last.version, failure))
                }
                w.pending.removeAll()
            } else {
                let covered = w.pending.prefix { $0.version <= through }
                // A group of several: record its last commit as durable, so that damage to the group
                // is not taken for a torn one while the lock file lasts (Spec/FORMAT.md §6.6, §7).
                if covered.count > 1, let last = covered.last {
                    lockFile?.markDurable(version: last.version, recordChecksum: last.recordChecksum)
                }
                w.pending.removeFirst(covered.count)
            }
            if w.pending.isEmpty, !w.transactionOpen, w.holdsWord {
                lockFile?.releaseWriter(upToDate: failure == nil && w.releasesWordWhenDurable)
                w.holdsWord = false
            }
        }
        writers.broadcast(Self.syncSettled)
    }

    /// A commit, or a group of them, failed after its bytes were written (its `pwrite` or its
    /// sync): unnames it, best effort and not synced (puts back the slot it wrote, clears its
    /// head, which unlinks every commit chained after it), goes back to the commit before it, and
    /// records it as failed here and in the lock file, so no commit reuses its versions or bytes
    /// and none builds on it (Spec/FORMAT.md §6.2).
    func unnameFailedCommit(
        _ failed: FailedCommit, file: SystemFile, head: Int?, slot: (offset: Int, previous: [UInt8])?, before: Current
    ) {
        if let slot { try? file.write(slot.previous, at: slot.offset) }
        if let head { try? file.write([UInt8](repeating: 0, count: CommitHead.size), at: head) }
        state.withLock { s in
            s.failedCommit = failed
            // A refresh on another thread may have moved this store to the commit meanwhile.
            if s.current.record.version >= failed.firstVersion { s.current = before }
            s.writerUpToDate = false
        }
        lockFile?.recordFailed(failed)
    }
}
