import Foundation
import RealmTestSupport
import Testing

@testable import RealmStorage

/// The changeset's two layouts (Spec/FORMAT.md §5.6): 16-byte runs up to format 5, ULEB128 gaps
/// and lengths with column key sets from format 6.
@Suite struct ChangesetEncodingTests {
    static func encoded(_ c: Changeset, _ version: UInt32) -> [UInt8] {
        var w = ByteWriter()
        c.encode(into: &w, formatVersion: version)
        return w.bytes
    }

    static func decoded(_ bytes: [UInt8], _ version: UInt32) throws -> Changeset {
        if version < FileHeader.columnChangesVersion {
            var skip = BlockReader(ByteView(copying: bytes))
            try Changeset.skipFormat5(&skip)
            #expect(skip.offset == bytes.count)
        }
        var r = BlockReader(ByteView(copying: bytes))
        let c = try Changeset.decode(&r, formatVersion: version)
        #expect(r.offset == bytes.count)
        return c
    }

    /// Random changesets (keys near and far apart, at the ends of the key range, one or several
    /// columns) read back as written in both layouts; format 6 keeps which object had which column.
    @Test(arguments: [UInt64(1), 2, 3, 4])
    func randomChangesetsRoundTrip(seed: UInt64) throws {
        var rng = SplitMix(seed: seed)
        func key() -> ObjectKey {
            switch rng.next() % 4 {
            case 0: ObjectKey(Int64(rng.next() % 64))
            case 1: ObjectKey(Int64(rng.next() % 1_000_000))
            case 2: ObjectKey(Int64.max - 16 - Int64(rng.next() % 8))  // a run ends by Int64.max (§5.6)
            default: ObjectKey(Int64(rng.next() >> 1))
            }
        }
        for _ in 0..<20 {
            var c = Changeset()
            c.schemaChanged = rng.next() % 2 == 0
            for name in ["A", "B"] {
                var t = Changeset.TableChanges()
                for _ in 0..<rng.next() % 40 { t.inserted.insert(key()) }
                for _ in 0..<rng.next() % 40 { t.recordDelete(key()) }
                for _ in 0..<rng.next() % 80 { t.recordSet(UInt32(rng.next() % 3), of: key()) }
                t.settleColumnSets()
                t.deleted.subtract(t.inserted)
                t.modified.subtract(t.inserted)
                for c in t.modifiedByColumn.keys { t.modifiedByColumn[c]!.subtract(t.inserted) }
                c.tables[name] = t
            }
            let v6 = try Self.decoded(Self.encoded(c, 6), 6)
            #expect(v6 == c)
            let v5 = try Self.decoded(Self.encoded(c, 5), 5)
            for (name, t) in c.tables {
                let u = try #require(v5.tables[name])
                #expect(u.inserted == t.inserted && u.deleted == t.deleted && u.modified == t.modified)
                #expect(u.modifiedColumns == t.modifiedColumns && !u.knowsColumnsPerObject)
            }
        }
    }

    /// A recorded set joins `modified` when the sets are settled, unless its object was deleted
    /// since; its column stays among the modified columns either way.
    @Test func settlingSkipsDeletedObjects() {
        var t = Changeset.TableChanges()
        t.recordSet(1, of: ObjectKey(5))
        t.recordSet(2, of: ObjectKey(7))
        t.recordSet(1, of: ObjectKey(7))
        #expect(!t.isEmpty)
        t.recordDelete(ObjectKey(5))
        t.settleColumnSets()
        #expect(t.modified == [ObjectKey(7)])
        #expect(t.deleted == [ObjectKey(5)])
        #expect(t.modifiedColumns == [1, 2])
        #expect(t.modifiedByColumn == [1: [ObjectKey(7)], 2: [ObjectKey(7)]])
        #expect(t.pendingSets.isEmpty)
    }

    /// Sets of one column are encoded from the pending sets as they stand (in key order or not,
    /// with repeats, some of their objects deleted since, some consecutive): the same bytes as
    /// when they are settled into key sets first, in both layouts. Sets of several columns, or
    /// beside objects already settled, take the settled path.
    @Test(arguments: [UInt64(1), 2, 3])
    func oneColumnsPendingSetsEncodeAsSettled(seed: UInt64) throws {
        var rng = SplitMix(seed: seed)
        for round in 0..<30 {
            var t = Changeset.TableChanges()
            let ascending = round % 2 == 0
            var k = Int64(rng.next() % 100)
            for _ in 0..<(1 + rng.next() % 200) {
                k = ascending ? k + Int64(rng.next() % 3) : Int64(rng.next() % 300)
                t.recordSet(4, of: ObjectKey(k))
            }
            for _ in 0..<rng.next() % 5 { t.recordDelete(ObjectKey(Int64(rng.next() % 300))) }
            for _ in 0..<rng.next() % 3 { t.inserted.insert(ObjectKey(1000 + Int64(rng.next() % 50))) }
            if round % 5 == 4 { t.recordSet(UInt32(round % 10 == 4 ? 5 : 4), of: ObjectKey(7)) }
            #expect(t.pendingSingleColumn() != nil || round % 10 == 4)
            var settled = t
            settled.settleColumnSets()
            #expect(settled.pendingSingleColumn() == nil)
            for version in [UInt32(5), 6] {
                var pending = Changeset()
                pending.tables["T"] = t
                var reference = Changeset()
                reference.tables["T"] = settled
                #expect(Self.encoded(pending, version) == Self.encoded(reference, version))
            }
        }
        // Every object deleted since: the column is still listed, with no objects.
        var gone = Changeset.TableChanges()
        gone.recordSet(2, of: ObjectKey(3))
        gone.recordDelete(ObjectKey(3))
        var g = Changeset()
        g.tables["T"] = gone
        let decoded = try Self.decoded(Self.encoded(g, 6), 6)
        #expect(decoded.tables["T"]?.modifiedColumns == [2] && decoded.tables["T"]?.modified == [])
    }

    /// A lone modified key costs two bytes of runs in format 6, sixteen in format 5.
    @Test func aLoneKeyTakesTwoBytes() {
        var t = Changeset.TableChanges()
        for k in stride(from: 0, to: 1000, by: 10) { t.recordSet(0, of: ObjectKey(Int64(k))) }
        var c = Changeset()
        c.tables["T"] = t
        let empty = Changeset.TableChanges()
        var base = Changeset()
        base.tables["T"] = empty
        let v6 = Self.encoded(c, 6).count - Self.encoded(base, 6).count
        let v5 = Self.encoded(c, 5).count - Self.encoded(base, 5).count
        #expect(v6 == 100 * 2 + 4)  // runs, and the column id
        #expect(v5 == 100 * 16 + 4)
    }

    /// Malformed format-6 runs are typed errors: an over-long ULEB128, one past 64 bits, a length
    /// that overflows, a run ending past the largest key, a truncated set.
    @Test func malformedRunsAreRejected() throws {
        func table(_ runs: [UInt8], count: UInt32) -> [UInt8] {
            var w = ByteWriter()
            w.u32(0)
            w.u32(1)
            w.string("T")
            w.u32(count)
            w.append(runs)
            w.u32(0)  // deleted
            w.u32(0)  // modified
            w.u32(0)  // modified columns
            w.u32(0)  // column key sets
            return w.bytes
        }
        #expect(try Self.decoded(table([5, 0], count: 1), 6).tables["T"]?.inserted == [ObjectKey(5)])
        let bad: [[UInt8]] = [
            Array(repeating: 0x80, count: 10) + [0, 0],  // 11 bytes
            Array(repeating: 0xFF, count: 9) + [0x02, 0],  // 65 bits
            [0, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0x7F],  // length − 1 = 2^63 − 1
            [0xFE, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0x7F, 1],  // start 2^63 − 2, length 2
        ]
        for runs in bad {
            #expect(throws: StorageError.self, "\(runs)") {
                var r = BlockReader(ByteView(copying: table(runs, count: 1)))
                _ = try Changeset.decode(&r, formatVersion: 6)
            }
        }
        // A column key set for a column that is not modified.
        var w = ByteWriter()
        for v: UInt32 in [0, 1] { w.u32(v) }
        w.string("T")
        for _ in 0..<3 { w.u32(0) }
        w.u32(0)  // no modified columns
        w.u32(1)  // but one column key set
        w.u32(7)
        w.u32(0)
        #expect(throws: StorageError.self) { _ = try Self.decoded(w.bytes, 6) }
        // Truncated.
        #expect(throws: StorageError.self) {
            var r = BlockReader(ByteView(copying: Array(table([5, 0], count: 1).dropLast(3))))
            _ = try Changeset.decode(&r, formatVersion: 6)
        }
    }
}

extension ChangesetEncodingTests {
    /// A format-6 record is decoded without walking its changeset (opening a file after a commit
    /// of a million changes stays cheap); a changeset whose structure is wrong is reported when it
    /// is read. A format-5 record's changeset is checked when the record is decoded.
    @Test func aFormat6ChangesetIsCheckedWhenRead() throws {
        var changes = Changeset()
        var t = Changeset.TableChanges()
        for k in 0..<5 { t.recordSet(1, of: ObjectKey(Int64(k * 3))) }
        changes.tables["T"] = t
        for version: UInt32 in [5, 6] {
            let record = VersionRecord(
                version: 2, parentVersion: 1, parentRecord: BlockRef(offset: 12288, length: 104), commitStart: 12392,
                commitChecksum: 0, commitTime: 0, liveBytes: 0, catalog: Catalog(), tables: [:], changeset: changes,
                formatVersion: version)
            var (bytes, range, _) = record.encodeWithChangesetRange()
            let good = try VersionRecord.decode(ByteView(copying: bytes), formatVersion: version)
            #expect(try good.decodeChangeset().tables["T"]?.modified.count == 5)
            // The table count says two tables where there is one; the block is sealed again.
            bytes[range.lowerBound + 4] = 2
            bytes.removeLast(8)
            let sum = XXH64.hash(bytes, seed: 0)
            for i in 0..<8 { bytes.append(UInt8(truncatingIfNeeded: sum >> UInt64(8 * i))) }
            if version == 5 {
                #expect(throws: StorageError.self) { try VersionRecord.decode(ByteView(copying: bytes), formatVersion: 5) }
            } else {
                let damaged = try VersionRecord.decode(ByteView(copying: bytes), formatVersion: 6)
                #expect(throws: StorageError.self) { try damaged.decodeChangeset() }
                #expect(throws: StorageError.self) { try damaged.changeCounts() }
            }
        }
    }
}
