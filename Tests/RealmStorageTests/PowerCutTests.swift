import Foundation
import RealmTestSupport
import Testing

@testable import RealmStorage

/// Power cuts, simulated (in the spirit of SQLite's crash-test VFS). A SIGKILL leaves the page
/// cache intact and so says nothing about a machine that loses power: here the `OS` layer records
/// every write and sync of a run of commits, and at each sync boundary the test builds the disk
/// states a power cut could leave — the writes since the last completed sync dropped, applied in
/// any order, or torn at 512-byte sectors — and checks that recovery opens each with every commit
/// acknowledged before that sync, and the data of the version it opens at (Spec/FORMAT.md §6.3–§6.5).
@Suite struct PowerCutTests {
    static let sector = 512

    /// A disk image: the bytes and the length the file has.
    struct Disk {
        var bytes: [UInt8]

        mutating func apply(_ e: WriteLog.Event) {
            switch e {
            case .write(let offset, let data): apply(offset, data[...])
            case .truncate(let length):
                if length < bytes.count { bytes.removeLast(bytes.count - length) } else { grow(to: length) }
            case .sync: break
            }
        }

        mutating func apply(_ offset: Int, _ data: ArraySlice<UInt8>) {
            grow(to: offset + data.count)
            bytes.replaceSubrange(offset..<offset + data.count, with: data)
        }

        mutating func grow(to length: Int) {
            if length > bytes.count { bytes += [UInt8](repeating: 0, count: length - bytes.count) }
        }
    }

    /// The pending writes cut into the sectors they touch (a write's piece of each sector).
    static func sectors(_ pending: [WriteLog.Event]) -> [(offset: Int, data: ArraySlice<UInt8>)] {
        var out: [(Int, ArraySlice<UInt8>)] = []
        for case .write(let offset, let data) in pending {
            var o = offset
            while o < offset + data.count {
                let end = min(offset + data.count, (o / sector + 1) * sector)
                out.append((o, data[(o - offset)..<(end - offset)]))
                o = end
            }
        }
        return out
    }

    @Test func everyPowerCutKeepsEveryAcknowledgedCommit() throws {
        let dir = TempDir()
        // Commits past 2 KB (the bulk inserts) are written in pieces, their head last.
        var options = Store.Options(create: true, rowGroupCapacity: 16)
        options.commitFlushThreshold = 2048
        let store = try Store.open(at: dir.file(), options: options)
        try store.write { tx in
            try tx.createTable("Item", primaryKey: ColumnSchema("id", .int))
            try tx.addColumn("Item", ColumnSchema("name", .string))
        }
        var digests: [UInt64: String] = [try store.snapshot().version: try DamageTests.digest(try store.snapshot())]
        let base = Disk(bytes: fileBytes(store.path))
        var slotWriter = Store.Options()
        slotWriter.chainsCommits = false
        let unchained = try Store.open(at: dir.file(), options: slotWriter)
        // The commits, and after each the number of syncs that had returned when it was acknowledged.
        let log = WriteLog(path: store.path)
        var acknowledged: [(version: UInt64, syncs: Int)] = []
        var lastKey = ObjectKey(0)
        try FaultInjection.recording(log) {
            for i in 0..<24 {
                try (i % 8 == 5 ? unchained : store).write { tx in
                    if i % 5 == 4 {
                        for j in 0..<300 { _ = try tx.insert("Item", row: [.int(Int64(1000 * i + j)), .string("bulk-\(i)-\(j)")]) }
                    } else if i % 3 == 2 {
                        try tx.set("Item", lastKey, "name", .string("renamed-\(i)"))
                    } else {
                        lastKey = try tx.insert("Item", row: [.int(Int64(i)), .string("item-\(i)")])
                    }
                }
                let s = try store.snapshot()
                digests[s.version] = try DamageTests.digest(s)
                acknowledged.append((s.version, log.events.filter { $0 == .sync }.count))
            }
        }
        let (failures, states) = try Self.replay(
            log.events, from: base, digests: digests, dir: dir, seed: 26,
            mustHave: { b in acknowledged.last { $0.syncs <= b }?.version ?? 1 })
        #expect(log.events.filter { $0 == .sync }.count >= 24)
        #expect(failures.isEmpty, "\(failures.prefix(8).joined(separator: "\n"))")
        #expect(states > 300)
    }

    /// Builds, at every sync boundary of `events` (written over `base`), the disk states a power cut
    /// could leave — the writes since the last completed sync dropped, all applied, any subset of
    /// their sectors in any order with or without the size change, or applied in order up to a
    /// torn sector — and opens each: it must hold at least `mustHave(b)` (the newest commit
    /// acknowledged once `b` syncs had returned) and read the data `digests` holds for its version.
    /// - Returns: what went wrong, and how many states were opened.
    static func replay(
        _ events: [WriteLog.Event], from base: Disk, digests: [UInt64: String], dir: TempDir, seed: UInt64,
        mustHave: (Int) -> UInt64
    ) throws -> (failures: [String], states: Int) {
        let syncAt = events.indices.filter { events[$0] == .sync }
        var rng = SplitMix(seed: seed)
        var states = 0
        var failures: [String] = []
        // Boundary b: the syncs before b returned (the state is durable up to the b-th), the events
        // up to the next sync are in flight.
        var durable = base
        var next = 0
        for b in 0...syncAt.count {
            let end = b < syncAt.count ? syncAt[b] : events.count
            let pending = Array(events[next..<end])
            let must = mustHave(b)
            var candidates: [Disk] = []
            // Nothing of the pending writes reached the disk; all of them did.
            candidates.append(durable)
            var all = durable
            for e in pending { all.apply(e) }
            candidates.append(all)
            // Any subset of their sectors, in any order; a size change made or not.
            let pieces = Self.sectors(pending)
            let resize = pending.filter { if case .truncate = $0 { return true } else { return false } }
            for _ in 0..<(pieces.isEmpty ? 0 : 12) {
                var d = durable
                if rng.next() % 2 == 0 { for e in resize { d.apply(e) } }
                for (o, data) in pieces.shuffled(using: &rng) where rng.next() % 2 == 0 { d.apply(o, data) }
                candidates.append(d)
            }
            // The pending writes applied in order up to a torn sector, the rest lost.
            if !pieces.isEmpty {
                var d = durable
                let cut = rng.below(pieces.count)
                for (o, data) in pieces[..<cut] { d.apply(o, data) }
                candidates.append(d)
            }
            for (n, disk) in candidates.enumerated() {
                states += 1
                let path = dir.file("cut-\(b)-\(n).realm")
                _ = FileManager.default.createFile(atPath: path, contents: Data(disk.bytes))
                defer { try? FileManager.default.removeItem(atPath: path) }
                do {
                    let s = try Store.open(at: path, options: .init(readOnly: true)).snapshot()
                    if s.version < must {
                        failures.append("boundary \(b) state \(n): opened at v\(s.version), acknowledged v\(must)")
                    } else if try DamageTests.digest(s) != digests[s.version] {
                        failures.append("boundary \(b) state \(n): v\(s.version) reads other data than was committed")
                    }
                } catch {
                    failures.append("boundary \(b) state \(n): \(error)")
                }
            }
            durable = all
            next = end
        }
        return (failures, states)
    }
}
