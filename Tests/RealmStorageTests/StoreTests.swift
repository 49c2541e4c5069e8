import Foundation
import Testing

@testable import RealmStorage

@Suite struct StoreTests {
    @Test func createInsertReadReopen() throws {
        let dir = TempDir()
        do {
            let store = try makePeopleStore(dir, count: 10_000)
            let snap = try store.snapshot()
            #expect(snap.version == 2)
            #expect(try snap.objectCount("Person") == 10_000)
            #expect(try snap.value("Person", ObjectKey(1234), "name") == .string("name-1234"))
            #expect(try snap.value("Person", ObjectKey(1234), "age") == .int(Int64(1234 * 7 % 100)))
            #expect(try snap.objectKey("Person", primaryKey: .int(9999)) == ObjectKey(9999))
            #expect(try snap.objectKey("Person", primaryKey: .int(10_000)) == nil)
        }
        let reopened = try Store.open(at: dir.file())
        let snap = try reopened.snapshot()
        #expect(try snap.objectCount("Person") == 10_000)
        #expect(try snap.count("Person", whereInt: "age", .greater(50)) == 4_900)
        #expect(try snap.object("Person", ObjectKey(3))["active"] == .bool(true))
    }

    @Test func setDeleteAndFrozenSnapshotKeepsOldView() throws {
        let dir = TempDir()
        let store = try makePeopleStore(dir, count: 100)
        let frozen = try store.snapshot()
        let tx = try store.beginWrite()
        try tx.set("Person", ObjectKey(5), "name", .string("Grace"))
        try tx.delete("Person", ObjectKey(6))
        #expect(try tx.value("Person", ObjectKey(5), "name") == .string("Grace"))
        #expect(try tx.contains("Person", ObjectKey(6)) == false)
        let newer = try tx.commit()
        #expect(try newer.value("Person", ObjectKey(5), "name") == .string("Grace"))
        #expect(try newer.contains("Person", ObjectKey(6)) == false)
        #expect(try newer.objectCount("Person") == 99)
        #expect(try frozen.value("Person", ObjectKey(5), "name") == .string("name-5"))
        #expect(try frozen.contains("Person", ObjectKey(6)))
        let cs = (try newer.changeset()).tables["Person"]!
        #expect(cs.modified == [ObjectKey(5)])
        #expect(cs.deleted == [ObjectKey(6)])
        #expect(try newer.changes(since: frozen.version - 1).tables["Person"]!.inserted.count == 99)
    }

    @Test func duplicatePrimaryKeyIsTypedError() throws {
        let dir = TempDir()
        let store = try makePeopleStore(dir, count: 10)
        let tx = try store.beginWrite()
        #expect(throws: StorageError.self) { try tx.insert("Person", row: person(3)) }
        expectCode(.duplicatePrimaryKey) { try tx.insert("Person", row: person(3)) }
        try tx.insert("Person", row: person(10))
        #expect(throws: StorageError.self) { try tx.insert("Person", row: person(10)) }
        tx.cancel()
        #expect(try store.snapshot().objectCount("Person") == 10)
    }

    @Test func stringPrimaryKeyAndSecondaryIndex() throws {
        let dir = TempDir()
        let store = try Store.open(at: dir.file(), options: .init(create: true))
        let tx = try store.beginWrite()
        try tx.createTable("Dog", primaryKey: ColumnSchema("name", .string))
        try tx.addColumn("Dog", ColumnSchema("breed", .string, nullable: true, indexed: true))
        for i in 0..<5000 {
            try tx.insert("Dog", ["name": .string("dog-\(i)"), "breed": i % 2 == 0 ? .string("lab") : .null])
        }
        #expect(try tx.objectKey("Dog", primaryKey: .string("dog-77")) == ObjectKey(77))
        let s = try tx.commit()
        #expect(try s.objectKey("Dog", primaryKey: .string("dog-4999")) == ObjectKey(4999))
        #expect(try s.objectKey("Dog", primaryKey: .string("cat")) == nil)
        #expect(try s.objectKeys("Dog", indexed: "breed", equalTo: .string("lab")).count == 2500)
        #expect(try s.objectKeys("Dog", indexed: "breed", equalTo: .null).count == 2500)
        let tx2 = try store.beginWrite()
        try tx2.set("Dog", ObjectKey(0), "breed", .null)
        try tx2.delete("Dog", ObjectKey(2))
        #expect(throws: StorageError.self) { try tx2.set("Dog", ObjectKey(1), "name", .string("dog-3")) }
        let s2 = try tx2.commit()
        #expect(try s2.objectKeys("Dog", indexed: "breed", equalTo: .string("lab")).count == 2498)
        #expect(try s2.objectKey("Dog", primaryKey: .string("dog-2")) == nil)
    }

    /// A table reader's primary-key lookup (index resolved once, chunks decoded as needed) agrees
    /// with the snapshot's for int and string keys, present and absent, across many index chunks,
    /// including Int64.min (whose hash is null's) and a table without a primary key.
    @Test func tableReaderPrimaryKeyLookupsAgreeWithTheSnapshot() throws {
        let dir = TempDir()
        let store = try Store.open(at: dir.file(), options: .init(create: true))
        let tx = try store.beginWrite()
        try tx.createTable("I", primaryKey: ColumnSchema("id", .int))
        try tx.createTable("S", primaryKey: ColumnSchema("id", .string))
        try tx.createTable("Plain")
        var rng = SplitMix(seed: 11)
        var ints: [Int64] = [.min, .max, 0, -1]
        for _ in 0..<6_000 { ints.append(Int64(bitPattern: rng.next())) }
        ints = Array(Set(ints))
        for v in ints { try tx.insert("I", ["id": .int(v)]) }
        for i in 0..<6_000 { try tx.insert("S", ["id": .string("key-\(i * 7)")]) }
        try tx.insert("Plain", [:])
        let s = try tx.commit()
        let (schema, state) = try s.table("I")
        #expect(try s.indexDirectory(state.indexes[schema.primaryKeyColumn!.id]!).chunks.count > 1)
        let intReader = try TableReader(s, "I")
        let stringReader = try TableReader(s, "S")
        var probes: [StorageValue] = ints.prefix(1_000).map { .int($0) } + [.int(1), .int(2), .int(Int64.min + 1)]
        probes += (0..<500).map { _ in .int(Int64(bitPattern: rng.next())) }
        let idColumn = try #require(intReader.columnIndex("id"))
        for p in probes {
            let want = try s.objectKey("I", primaryKey: p)
            #expect(try intReader.objectKey(primaryKey: p) == want, "\(p)")
            // The located form finds the same object, and its row holds the key.
            let found = try intReader.object(primaryKey: p)
            #expect(found?.key == want)
            if let found {
                let location = try #require(found.location)
                #expect(try intReader.locate(found.key) == location)
                #expect(try intReader.value(location, column: idColumn) == p)
            }
        }
        #expect(try intReader.objectKey(primaryKey: .int(.min)) != nil)
        for i in stride(from: 0, to: 45_000, by: 37) {
            let p = StorageValue.string("key-\(i)")
            let want = try s.objectKey("S", primaryKey: p)
            #expect(try stringReader.objectKey(primaryKey: p) == want)
            #expect((want != nil) == (i % 7 == 0 && i < 42_000))
        }
        #expect(try stringReader.objectKey(primaryKey: .null) == nil)
        expectCode(.notFound) { try TableReader(s, "Plain").objectKey(primaryKey: .int(1)) }
        expectCode(.notFound) { try TableReader(s, "Plain").object(primaryKey: .int(1)) }
    }

    /// Dense integer keys (the index's chunks and the row groups' keys are arithmetic runs): every
    /// key is found at its row across chunk and group boundaries, in the first and a later
    /// version, and the keys just outside the range are not.
    @Test func denseIntegerPrimaryKeysAreFoundAtTheirRows() throws {
        let dir = TempDir()
        let store = try Store.open(at: dir.file(), options: .init(create: true))
        var tx = try store.beginWrite()
        try tx.createTable("D", primaryKey: ColumnSchema("id", .int))
        try tx.addColumn("D", ColumnSchema("v", .int))
        for i in 0..<20_000 { try tx.insert("D", ["id": .int(Int64(i)), "v": .int(Int64(i) * 3)]) }
        var s = try tx.commit()
        for version in 0..<2 {
            let (schema, state) = try s.table("D")
            #expect(try s.indexDirectory(state.indexes[schema.primaryKeyColumn!.id]!).chunks.count > 1)
            let reader = try TableReader(s, "D")
            #expect(reader.groupCount > 1)
            let v = try #require(reader.columnIndex("v"))
            for i in 0..<20_000 + version {
                let found = try #require(try reader.object(primaryKey: .int(Int64(i))), "\(i)")
                let location = try #require(found.location)
                #expect(try reader.value(location, column: v) == .int(Int64(i) * 3))
            }
            for missing: Int64 in [-1, 20_001, .max, .min] { #expect(try reader.object(primaryKey: .int(missing)) == nil) }
            guard version == 0 else { break }
            tx = try store.beginWrite()
            try tx.insert("D", ["id": .int(20_000), "v": .int(60_000)])
            s = try tx.commit()
        }
    }

    /// Small commits reuse the decoded tail groups the previous commit left in the store's cache;
    /// across added and removed columns, deletes and updates, what they write equals a plain model,
    /// read back by another store and verified clean.
    @Test func smallCommitsOverCachedTailGroupsMatchAModel() throws {
        let dir = TempDir()
        let store = try Store.open(at: dir.file(), options: .init(create: true, rowGroupCapacity: 16))
        var tx = try store.beginWrite()
        try tx.createTable("T", primaryKey: ColumnSchema("id", .int))
        try tx.addColumn("T", ColumnSchema("s", .string))
        try tx.commit()
        var model: [Int64: [String: StorageValue]] = [:]
        var rng = SplitMix(seed: 8)
        var hasN = false
        var hasS = true
        for step in 0..<300 {
            tx = try store.beginWrite()
            if step == 100 {
                try tx.addColumn("T", ColumnSchema("n", .int, nullable: true))
                hasN = true
                for k in model.keys { model[k]!["n"] = .null }
            }
            if step == 200 {
                try tx.removeColumn("T", "s")
                hasS = false
                for k in model.keys { model[k]!["s"] = nil }
            }
            let id = Int64(step)
            var row: [String: StorageValue] = ["id": .int(id)]
            if hasS { row["s"] = .string("v\(step)") }
            if hasN { row["n"] = .int(id * 3) }
            let key = try tx.insert("T", row)
            model[key.rawValue] = row
            if step % 7 == 3, let victim = model.keys.randomElement(using: &rng) {
                try tx.delete("T", ObjectKey(victim))
                model[victim] = nil
            }
            if hasN, step % 5 == 1, let k = model.keys.max() {
                try tx.set("T", ObjectKey(k), "n", .int(-id))
                model[k]!["n"] = .int(-id)
            }
            try tx.commit()
        }
        let other = try Store.open(at: dir.file(), options: .init(readOnly: true)).snapshot()
        #expect(try other.objectKeys("T").map(\.rawValue) == model.keys.sorted())
        for (k, row) in model {
            for (name, v) in row { #expect(try other.value("T", ObjectKey(k), name).bitwiseEquals(v), "\(k).\(name)") }
        }
        #expect(try Verifier().verify(path: dir.file()).isClean)
    }

    /// Small commits start from the row-group list, index directory and tail group the previous
    /// commit left decoded in the store's cache: duplicate primary keys are still caught (the
    /// newest, and older ones, after deletes too) and lookups agree with a model.
    @Test func smallCommitsFromCachedStructuresKeepPrimaryKeysUnique() throws {
        let dir = TempDir()
        let store = try Store.open(at: dir.file(), options: .init(create: true, rowGroupCapacity: 8))
        var tx = try store.beginWrite()
        try tx.createTable("T", primaryKey: ColumnSchema("id", .int))
        try tx.commit()
        var model: [Int64: ObjectKey] = [:]
        var rng = SplitMix(seed: 21)
        for step in 0..<200 {
            tx = try store.beginWrite()
            // Ids mostly ascend (the index's fresh-tail path) and sometimes fall back into the middle.
            let id = step % 9 == 4 ? Int64(step) - 1_000 : Int64(step)
            if let newest = model.keys.max() {
                expectCode(.duplicatePrimaryKey) { try tx.insert("T", row: [.int(newest)]) }
            }
            if let old = model.keys.randomElement(using: &rng) {
                expectCode(.duplicatePrimaryKey) { try tx.insert("T", row: [.int(old)]) }
            }
            model[id] = try tx.insert("T", row: [.int(id)])
            if step % 6 == 5, let victim = model.keys.randomElement(using: &rng) {
                try tx.delete("T", model[victim]!)
                model[victim] = nil
            }
            let snap = try tx.commit()
            if step % 10 == 0 {
                for (pk, key) in model { #expect(try snap.objectKey("T", primaryKey: .int(pk)) == key) }
                #expect(try snap.objectKey("T", primaryKey: .int(Int64(step) + 1)) == nil)
            }
        }
        // A deleted id can be inserted again.
        if let gone = (0..<200).map(Int64.init).first(where: { model[$0] == nil }) {
            tx = try store.beginWrite()
            model[gone] = try tx.insert("T", row: [.int(gone)])
            try tx.commit()
        }
        let other = try Store.open(at: dir.file(), options: .init(readOnly: true)).snapshot()
        for (pk, key) in model { #expect(try other.objectKey("T", primaryKey: .int(pk)) == key) }
        #expect(try other.objectCount("T") == model.count)
        #expect(try Verifier().verify(path: dir.file()).isClean)
    }

    /// An insert that fails on any of its values (the first, a middle one, the last, or a
    /// duplicate primary key) changes nothing: the rows around it commit intact.
    @Test func aFailedInsertChangesNothing() throws {
        let dir = TempDir()
        let store = try Store.open(at: dir.file(), options: .init(create: true, rowGroupCapacity: 4))
        let tx = try store.beginWrite()
        try tx.createTable("T", primaryKey: ColumnSchema("id", .int))
        try tx.addColumn("T", ColumnSchema("s", .string))
        try tx.addColumn("T", ColumnSchema("n", .double, nullable: true))
        try tx.addColumn("T", ColumnSchema("b", .bool))
        var expected: [[StorageValue]] = []
        let bad: [[StorageValue]] = [
            [.string("x"), .string("a"), .double(1), .bool(true)],
            [.int(100), .int(5), .double(1), .bool(true)],
            [.int(101), .string("a"), .string("not a double"), .bool(true)],
            [.int(102), .string("a"), .null, .null],
            [.int(103), .string("a"), .double(2), .int(1)],
        ]
        for i in 0..<11 {
            let row: [StorageValue] = [.int(Int64(i)), .string("s\(i)"), i % 3 == 0 ? .null : .double(Double(i)), .bool(i % 2 == 0)]
            try tx.insert("T", row: row)
            expected.append(row)
            expectCode(.typeMismatch) { try tx.insert("T", row: bad[i % bad.count]) }
            expectCode(.duplicatePrimaryKey) { try tx.insert("T", row: [.int(Int64(i)), .string("dup"), .null, .bool(false)]) }
            #expect(try tx.objectCount("T") == i + 1)
        }
        let snap = try tx.commit()
        #expect(try snap.objectCount("T") == expected.count)
        for row in expected {
            let key = try #require(try snap.objectKey("T", primaryKey: row[0]))
            for (c, name) in ["id", "s", "n", "b"].enumerated() { #expect(try snap.value("T", key, name).bitwiseEquals(row[c])) }
        }
        #expect(try Verifier().verify(path: dir.file()).isClean)
    }

    /// A failed first insert of a transaction (whose new tail group would have held it) leaves
    /// the table as it was: the objects already there are still found.
    @Test func aFailedFirstInsertLeavesTheTableFindable() throws {
        let dir = TempDir()
        let store = try Store.open(at: dir.file(), options: .init(create: true))
        try store.write { tx in
            try tx.createTable("T", primaryKey: ColumnSchema("id", .string))
            try tx.addColumn("T", ColumnSchema("n", .int))
            try tx.insert("T", row: [.string("a"), .int(1)])
        }
        let tx = try store.beginWrite()
        expectCode(.typeMismatch) { try tx.insert("T", row: [.string("b"), .string("not an int")]) }
        #expect(try tx.contains("T", ObjectKey(0)))
        #expect(try tx.value("T", ObjectKey(0), "n") == .int(1))
        expectCode(.duplicatePrimaryKey) { try tx.insert("T", row: [.string("a"), .int(2)]) }
        try tx.set("T", ObjectKey(0), "n", .int(5))
        let b = try tx.insert("T", row: [.string("b"), .int(2)])
        let snap = try tx.commit()
        #expect(try snap.objectCount("T") == 2)
        #expect(try snap.value("T", ObjectKey(0), "n") == .int(5))
        #expect(try snap.objectKey("T", primaryKey: .string("b")) == b)
        #expect(try Verifier().verify(path: dir.file()).isClean)
    }

    /// `insert(_:values:)` takes one optional value per column: nil is the column's default.
    @Test func insertWithOptionalValuesUsesColumnDefaults() throws {
        let dir = TempDir()
        let store = try Store.open(at: dir.file(), options: .init(create: true))
        let tx = try store.beginWrite()
        try tx.createTable("T", primaryKey: ColumnSchema("id", .int))
        try tx.addColumn("T", ColumnSchema("s", .string))
        try tx.addColumn("T", ColumnSchema("n", .double, nullable: true))
        try tx.addColumn("T", ColumnSchema("l", .int, list: true))
        let a = try tx.insert("T", values: [.int(1), nil, nil, nil])
        let b = try tx.insert("T", values: [.int(2), .string("x"), .double(2.5), .list([.int(7)])])
        expectCode(.typeMismatch) { try tx.insert("T", values: [.int(3), .int(3), nil, nil]) }
        expectCode(.typeMismatch) { try tx.insert("T", values: [.int(3), nil]) }
        expectCode(.duplicatePrimaryKey) { try tx.insert("T", values: [.int(1), nil, nil, nil]) }
        let snap = try tx.commit()
        #expect(try snap.objectCount("T") == 2)
        #expect(try snap.value("T", a, "s") == .string(""))
        #expect(try snap.value("T", a, "n") == .null)
        #expect(try snap.value("T", a, "l") == .list([]))
        #expect(try snap.value("T", b, "s") == .string("x"))
        #expect(try snap.value("T", b, "n") == .double(2.5))
        #expect(try snap.value("T", b, "l") == .list([.int(7)]))
    }

    @Test func everyTypeRoundTrips() throws {
        let dir = TempDir()
        let store = try Store.open(at: dir.file(), options: .init(create: true))
        let tx = try store.beginWrite()
        try tx.createTable("Target")
        try tx.createTable("All")
        let u = UUID()
        let samples: [(ColumnType, StorageValue)] = [
            (.int, .int(.min)), (.bool, .bool(true)), (.float, .float(-0.0)), (.double, .double(.nan)),
            (.string, .string("héllo ✓")), (.binary, .binary([0, 255, 7])), (.timestamp, .timestamp(seconds: -5, nanoseconds: 999_999_999)),
            (.objectId, .objectId(Array(1...12))), (.uuid, .uuid(u)), (.decimal128, .decimal128(low: 42, high: 0x3040_0000_0000_0000)),
            (.link, .link(ObjectKey(0))),
        ]
        for (t, _) in samples {
            try tx.addColumn("All", ColumnSchema("\(t)", t, linkTarget: t == .link ? "Target" : nil))
            try tx.addColumn("All", ColumnSchema("\(t)?", t, nullable: true, linkTarget: t == .link ? "Target" : nil))
            try tx.addColumn("All", ColumnSchema("[\(t)]", t, nullable: true, list: true, linkTarget: t == .link ? "Target" : nil))
        }
        try tx.insert("Target", [:])
        var values: [String: StorageValue] = [:]
        for (t, v) in samples {
            values["\(t)"] = v
            values["\(t)?"] = .null
            values["[\(t)]"] = .list([v, .null, v])
        }
        let k = try tx.insert("All", values)
        let k2 = try tx.insert("All", [:])
        let s = try tx.commit()
        for (t, v) in samples {
            #expect(try s.value("All", k, "\(t)").bitwiseEquals(v), "\(t)")
            #expect(try s.value("All", k, "\(t)?") == .null)
            #expect(try s.value("All", k, "[\(t)]").bitwiseEquals(.list([v, .null, v])), "[\(t)]")
            #expect(try s.value("All", k2, "[\(t)]") == .list([]))
        }
        #expect(try s.value("All", k2, "string") == .string(""))
    }

    @Test func typeMismatchAndUnknownNamesThrow() throws {
        let dir = TempDir()
        let store = try makePeopleStore(dir, count: 1)
        let tx = try store.beginWrite()
        #expect(throws: StorageError.self) { try tx.insert("Person", ["id": .int(9), "age": .string("x")]) }
        #expect(throws: StorageError.self) { try tx.insert("Person", ["id": .int(9), "nope": .int(1)]) }
        #expect(throws: StorageError.self) { try tx.insert("Nope", [:]) }
        #expect(throws: StorageError.self) { try tx.set("Person", ObjectKey(0), "age", .null) }
        #expect(throws: StorageError.self) { try tx.set("Person", ObjectKey(77), "age", .int(1)) }
        tx.cancel()
        #expect(throws: StorageError.self) { try tx.insert("Person", ["id": .int(9)]) }
    }

    @Test func schemaChangesAddAndRemoveColumns() throws {
        let dir = TempDir()
        let store = try makePeopleStore(dir, count: 50)
        let tx = try store.beginWrite()
        try tx.addColumn("Person", ColumnSchema("email", .string, nullable: true))
        try tx.removeColumn("Person", "score")
        try tx.set("Person", ObjectKey(3), "email", .string("a@b.c"))
        let s = try tx.commit()
        #expect(try s.value("Person", ObjectKey(3), "email") == .string("a@b.c"))
        #expect(try s.value("Person", ObjectKey(4), "email") == .null)
        #expect(throws: StorageError.self) { try s.value("Person", ObjectKey(4), "score") }
        #expect(try s.changeset().schemaChanged)
        let tx2 = try store.beginWrite()
        try tx2.removeTable("Person")
        let s2 = try tx2.commit()
        #expect(s2.catalog.table("Person") == nil)
    }

    @Test func readOnlyOpenNeverWritesAndRejectsWrites() throws {
        let dir = TempDir()
        _ = try makePeopleStore(dir, count: 10)
        let before = fileBytes(dir.file())
        let ro = try Store.open(at: dir.file(), options: .init(readOnly: true))
        #expect(try ro.snapshot().objectCount("Person") == 10)
        #expect(throws: StorageError.self) { try ro.beginWrite() }
        expectCode(.readOnly) { try Compactor().compact(ro) }
        #expect(fileBytes(dir.file()) == before)
        // A copy in a directory of its own, without a lock file: a read-only open, a verification and
        // an inspection create nothing there and change nothing (as in a read-only directory).
        let alone = TempDir()
        try FileManager.default.copyItem(atPath: dir.file(), toPath: alone.file())
        let listing = try FileManager.default.contentsOfDirectory(atPath: alone.path)
        let s = try Store.open(at: alone.file(), options: .init(readOnly: true)).snapshot()
        #expect(try s.objectCount("Person") == 10)
        #expect(try Verifier().verify(path: alone.file()).isClean)
        _ = try Inspector().inspect(path: alone.file(), segments: true)
        #expect(try FileManager.default.contentsOfDirectory(atPath: alone.path) == listing)
        #expect(fileBytes(alone.file()) == before)
    }

    @Test func passiveOpenWritesNothingAndStaysInvisible() throws {
        let dir = TempDir()
        let store = try makePeopleStore(dir, count: 10)
        let frozen = try store.snapshot(kind: "frozen")
        let data = fileBytes(dir.file())
        let lock = fileBytes(dir.file() + ".lock")
        let listing = try FileManager.default.contentsOfDirectory(atPath: dir.path).sorted()
        do {
            let passive = try Store.open(at: dir.file(), options: .passive)
            let s = try passive.snapshot(kind: "other")
            #expect(try s.objectCount("Person") == 10)
            #expect(passive.isReadOnly)
            // It reads the others' pins and sees the file open, but nobody sees it.
            #expect(passive.pinnedVersions().contains { $0.version == frozen.version && $0.kind == "frozen" && !$0.isLocal })
            #expect(try passive.isOpenElsewhere())
            #expect(!store.pinnedVersions().contains { !$0.isLocal })
            #expect(try !store.isOpenElsewhere())
            #expect(Verifier().verify(s).isClean)
            _ = try Inspector().inspect(path: dir.file(), segments: true)
        }
        #expect(fileBytes(dir.file()) == data)
        #expect(fileBytes(dir.file() + ".lock") == lock)
        #expect(try FileManager.default.contentsOfDirectory(atPath: dir.path).sorted() == listing)
    }

    @Test func otherProcessIDsNameStoresThatPinNothing() throws {
        let dir = TempDir()
        let store = try makePeopleStore(dir, count: 1)
        #expect(store.otherProcessIDs().isEmpty)
        let other = try Store.open(at: dir.file())
        #expect(store.otherProcessIDs() == [SystemFile.processID])
        withExtendedLifetime(other) {}
    }

    /// A commit that leaves the schema alone copies the previous record's catalog bytes; they must
    /// be exactly what encoding the catalog gives, before and after schema changes.
    @Test func unchangedCatalogBytesAreCopiedExactly() throws {
        let dir = TempDir()
        let store = try makePeopleStore(dir, count: 3)
        try store.write { try $0.insert("Person", row: person(3)) }
        try store.write { try $0.addColumn("Person", ColumnSchema("nick", .string, nullable: true)) }
        try store.write { try $0.insert("Person", ["id": .int(4), "nick": .string("n")]) }
        try store.write { try $0.createTable("Dog") }
        try store.write { try $0.insert("Dog", [:]) }
        let reopened = try Store.open(at: dir.file(), options: .init(readOnly: true)).snapshot()
        for r in try reopened.ancestorRecords(downTo: 0) {
            var w = ByteWriter()
            r.catalog.encode(into: &w)
            let kept = try r.catalogBytes.map { try $0.bytes(0, $0.count) }
            #expect(kept == w.bytes, "version \(r.version)")
        }
        #expect(reopened.catalog.table("Person")?.column("nick") != nil && reopened.catalog.table("Dog") != nil)
        #expect(try reopened.value("Person", ObjectKey(4), "nick") == .string("n"))
    }

    @Test func slotOptionReadsTheOtherHeaderSlotAndNeverAdvances() throws {
        let dir = TempDir()
        var writing = Store.Options(create: true)
        writing.chainsCommits = false  // every commit names itself by a slot
        let store = try makePeopleStore(dir, count: 3, options: writing)  // v2 in slot 1 (v1 was in slot 0)
        try store.write { try $0.insert("Person", row: person(3)) }  // v3 in slot 0
        var options = Store.Options.passive
        options.slot = 1
        let old = try Store.open(at: dir.file(), options: options)
        #expect(try old.snapshot().version == 2)
        #expect(try old.snapshot().objectCount("Person") == 3)
        try store.write { try $0.insert("Person", row: person(4)) }
        #expect(try old.snapshot().version == 2)
        // v4 went into slot 1; slot 0 still names v3.
        options.slot = 0
        #expect(try Store.open(at: dir.file(), options: options).snapshot().version == 3)
        options.slot = 1
        #expect(try Store.open(at: dir.file(), options: options).snapshot().version == 4)
        options.slot = 2
        expectCode(.notFound) { try Store.open(at: dir.file(), options: options) }
        // A damaged slot is reported with its offset; the other one still opens.
        let damaged = TempDir()
        var bytes = fileBytes(dir.file())
        bytes[FileHeader.slotOffsets[1] + 9] ^= 0xFF
        _ = FileManager.default.createFile(atPath: damaged.file(), contents: Data(bytes))
        options.slot = 1
        do {
            _ = try Store.open(at: damaged.file(), options: options)
            Issue.record("a damaged slot opened")
        } catch let e as StorageError {
            #expect(e.code == .corrupted && e.offset == UInt64(FileHeader.slotOffsets[1]))
        }
        options.slot = 0
        #expect(try Store.open(at: damaged.file(), options: options).snapshot().version == 3)
    }

    @Test func notARealmFileAndMissingFile() throws {
        let dir = TempDir()
        _ = FileManager.default.createFile(atPath: dir.file("junk"), contents: Data(repeating: 7, count: 20000))
        expectCode(.notARealmFile) { try Store.open(at: dir.file("junk"), options: .init(readOnly: true)) }
        expectCode(.fileNotFound) { try Store.open(at: dir.file("missing")) }
    }

    @Test func activeVersionLimitExampleOfDesign() throws {
        let dir = TempDir()
        let store = try makePeopleStore(dir, count: 0, options: .init(create: true, maximumNumberOfActiveVersions: 3))
        // v2 exists (table created). Make v3, v4 and hold frozen snapshots at v2, v3, v4.
        var frozen: [Snapshot] = [try store.snapshot(kind: "frozen")]
        for i in 0..<2 {
            let tx = try store.beginWrite()
            try tx.insert("Person", row: person(i))
            frozen.append(try tx.commit().retained(kind: "frozen"))
        }
        #expect(Set(frozen.map(\.version)) == [2, 3, 4])
        #expect(store.numberOfActiveVersions == 3)
        let tx = try store.beginWrite()
        try tx.insert("Person", row: person(10))
        do {
            try tx.commit()
            Issue.record("commit should exceed the limit")
        } catch let e as StorageError {
            #expect(e.code == .maximumNumberOfActiveVersionsExceeded)
            #expect(e.active == 4 && e.limit == 3)
        }
        #expect(try store.snapshot().objectCount("Person") == 2)
        frozen.removeFirst()  // release v2
        let tx2 = try store.beginWrite()
        try tx2.insert("Person", row: person(10))
        let s = try tx2.commit()
        #expect(s.version == 5)
        #expect(store.pinnedVersions().contains { $0.version == 3 && $0.kind == "frozen" })
    }

    @Test func manySmallCommitsKeepFewRowGroups() throws {
        let dir = TempDir()
        let store = try makePeopleStore(dir, count: 0, options: .init(create: true, rowGroupCapacity: 64))
        for i in 0..<300 {
            let tx = try store.beginWrite()
            try tx.insert("Person", row: person(i))
            try tx.commit()
        }
        let s = try store.snapshot()
        #expect(try s.objectCount("Person") == 300)
        #expect(try s.objectKeys("Person") == (0..<300).map { ObjectKey(Int64($0)) })
        #expect(try s.rowGroups("Person").count <= 300 / 64 + 8)
        #expect(try s.value("Person", ObjectKey(299), "name") == .string("name-299"))
    }

    @Test func xxh64KnownVectors() {
        #expect(XXH64.hash([]) == 0xEF46_DB37_51D8_E999)
        #expect(XXH64.hash(Array("a".utf8)) == 0xD24E_C4F1_A98C_6E5B)
        #expect(XXH64.hash(Array("abc".utf8)) == 0x44BC_2CF5_AD77_0999)
        // The streaming form equals the one-shot hash however the input is split.
        var rng = SplitMix(seed: 11)
        for length in [0, 1, 31, 32, 33, 100, 1000] {
            let bytes = (0..<length).map { _ in UInt8(truncatingIfNeeded: rng.next()) }
            var stream = XXH64.Streaming()
            var i = 0
            while i < length {
                let n = min(length - i, Int(rng.next() % 40))
                stream.update(Array(bytes[i..<(i + n)]))
                i += n
            }
            #expect(stream.finalize() == XXH64.hash(bytes), "length \(length)")
        }
    }
}
