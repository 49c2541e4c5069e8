import Foundation
import Testing

@testable import RealmStorage

/// Golden files added with the data-safety rules (Spec/FORMAT.md §6.6 steps 5–6), all of format
/// version 4: Decimal128 values at their extremes, an index on every indexable type, a compacted
/// file, two slots naming one version, and a damaged chain that must be reported. Write them (only
/// them) with `REALM_WRITE_VECTORS=1 swift test --filter 'v4ValuesAndIndexes|v4Compacted|v4SameVersionSlots|v4DamagedChain'`.
extension GoldenFileTests {
    /// The `amount` values of `v4-values-indexes.realm`, as Decimal128 strings.
    static let decimals = [
        "0", "-0", "1E-6176", "-1.5E-20", "0.000001", "123456789012345678901234567890.1234",
        "9999999999999999999999999999999999E6111", "-9999999999999999999999999999999999E6111", "1E+6144", "NaN", "-NaN",
        "Inf", "-Inf", "12345E0",
    ]

    static func decimal(_ s: String) throws -> StorageValue {
        let d = try Decimal128(string: s)
        return .decimal128(low: d.low, high: d.high)
    }

    /// Row `i` of `Values` in `v4-values-indexes.realm`.
    static func valuesRow(_ i: Int) throws -> [String: StorageValue] {
        [
            "id": .int(Int64(i)),
            "amount": try decimal(decimals[i]),
            "flag": .bool(i % 3 == 0),
            "data": i % 4 == 3 ? .null : .binary(Array("b\(i % 5)".utf8)),
            "when": .timestamp(seconds: Int64(1_700_000_000 + (i % 6) * 86_400), nanoseconds: Int32(i % 2)),
            "uid": i % 5 == 4 ? .null : .uuid(UUID(uuidString: String(format: "00000000-0000-4000-8000-%012d", i % 7))!),
        ]
    }

    @Test func v4ValuesAndIndexes() throws {
        if Self.writing {
            try Self.write("v4-values-indexes.realm") { store in
                try store.write { tx in
                    try tx.createTable("Values", primaryKey: ColumnSchema("id", .int))
                    try tx.addColumn("Values", ColumnSchema("amount", .decimal128, nullable: true, indexed: true))
                    try tx.addColumn("Values", ColumnSchema("flag", .bool, indexed: true))
                    try tx.addColumn("Values", ColumnSchema("data", .binary, nullable: true, indexed: true))
                    try tx.addColumn("Values", ColumnSchema("when", .timestamp, indexed: true))
                    try tx.addColumn("Values", ColumnSchema("uid", .uuid, nullable: true, indexed: true))
                    for i in Self.decimals.indices { _ = try tx.insert("Values", try Self.valuesRow(i)) }
                }
            }
        }
        let dir = TempDir()
        let s = try Self.open("v4-values-indexes.realm", dir)
        #expect(s.formatVersion == 4 && s.version == 2)
        #expect(try s.objectCount("Values") == Self.decimals.count)
        let t = try #require(s.catalog.table("Values"))
        #expect(["amount", "flag", "data", "when", "uid"].allSatisfy { t.column($0)?.isIndexed == true })
        for i in Self.decimals.indices {
            let key = try #require(try s.objectKey("Values", primaryKey: .int(Int64(i))))
            for (column, value) in try Self.valuesRow(i) {
                #expect(try s.value("Values", key, column).bitwiseEquals(value), "row \(i) \(column)")
            }
        }
        // Every index answers for every value it holds.
        for (column, value) in try Self.valuesRow(1) where column != "id" {
            let expected = try Self.decimals.indices.filter { try Self.valuesRow($0)[column]!.bitwiseEquals(value) }.count
            #expect(try s.objectKeys("Values", indexed: column, equalTo: value).count == expected, "\(column)")
        }
        #expect(Verifier().verify(s).isClean)
    }

    @Test func v4Compacted() throws {
        if Self.writing {
            let dir = TempDir()
            let store = try Store.open(at: dir.file(), options: .init(create: true, rowGroupCapacity: 16))
            try store.write { tx in
                try tx.createTable("Note", primaryKey: ColumnSchema("id", .int))
                try tx.addColumn("Note", ColumnSchema("text", .string, indexed: true))
                for i in 0..<50 { _ = try tx.insert("Note", ["id": .int(Int64(i)), "text": .string("note \(i)")]) }
            }
            for i in 0..<10 { try store.write { try $0.delete("Note", ObjectKey(Int64(i * 3))) } }
            let path = Self.vectors + "/v4-compacted.realm"
            try? FileManager.default.removeItem(atPath: path)
            _ = try store.compact(to: path)
        }
        let dir = TempDir()
        let s = try Self.open("v4-compacted.realm", dir)
        #expect(s.formatVersion == 4 && s.version == 12)
        #expect(try s.objectCount("Note") == 40)
        #expect(try s.contains("Note", ObjectKey(3)) == false)
        #expect(try s.value("Note", ObjectKey(4), "text") == .string("note 4"))
        #expect(try s.objectKeys("Note", indexed: "text", equalTo: .string("note 49")) == [ObjectKey(49)])
        #expect(try s.versionHistory() == [12])
        let r = try Inspector().inspect(path: dir.file("v4-compacted.realm"))
        #expect(r.versions.first?.commitStart == UInt64(FileHeader.size))
        #expect(r.slots.compactMap(\.version) == [12])
        #expect(Verifier().verify(s).isClean)
    }

    @Test func v4SameVersionSlots() throws {
        if Self.writing {
            try Self.write("v4-same-version-slots.realm") { store in
                var unchained = Store.Options()
                unchained.chainsCommits = false
                let slots = try Store.open(at: store.path, options: unchained)
                try slots.write { tx in
                    try tx.createTable("Pair", primaryKey: ColumnSchema("id", .int))
                    _ = try tx.insert("Pair", ["id": .int(1)])
                }
                try slots.write { _ = try $0.insert("Pair", ["id": .int(2)]) }
            }
            // Both slots name version 3 (a writer never does this; a reader must still open it).
            let path = Self.vectors + "/v4-same-version-slots.realm"
            var bytes = [UInt8](FileManager.default.contents(atPath: path)!)
            let newest = try #require(Store.newestSlot(ByteView(copying: Array(bytes[0..<FileHeader.size]))))
            let other = FileHeader.slotOffsets[1 - newest.0]
            let from = FileHeader.slotOffsets[newest.0]
            bytes.replaceSubrange(other..<other + FileHeader.slotSize, with: bytes[from..<from + FileHeader.slotSize])
            try Data(bytes).write(to: URL(fileURLWithPath: path))
        }
        let dir = TempDir()
        let s = try Self.open("v4-same-version-slots.realm", dir)
        #expect(s.version == 3)
        #expect(try s.objectCount("Pair") == 2)
        let r = try Inspector().inspect(path: dir.file("v4-same-version-slots.realm"))
        #expect(r.slots.compactMap(\.version) == [3, 3])
        #expect(Verifier().verify(s).isClean)
    }

    /// The head of version 3 in `v4-damaged-chain.realm`, whose byte 20 is flipped.
    static let damagedHeadOffset = 13_056

    @Test func v4DamagedChain() throws {
        if Self.writing {
            try Self.write("v4-damaged-chain.realm") { store in
                try store.write { tx in
                    try tx.createTable("Log", primaryKey: ColumnSchema("seq", .int))
                    _ = try tx.insert("Log", ["seq": .int(0)])
                }
                for i in 1...5 { try store.write { _ = try $0.insert("Log", ["seq": .int(Int64(i))]) } }
            }
            let path = Self.vectors + "/v4-damaged-chain.realm"
            var bytes = [UInt8](FileManager.default.contents(atPath: path)!)
            let r = try Inspector().inspect(path: path)
            let v3 = try #require(r.versions.first { $0.version == 3 })
            #expect(Int(v3.commitStart) - CommitHead.size == Self.damagedHeadOffset, "update damagedHeadOffset and the README")
            bytes[Self.damagedHeadOffset + 20] ^= 0x01
            try Data(bytes).write(to: URL(fileURLWithPath: path))
        }
        let dir = TempDir()
        let path = dir.file("v4-damaged-chain.realm")
        try FileManager.default.copyItem(atPath: Self.vectors + "/v4-damaged-chain.realm", toPath: path)
        do {
            _ = try Store.open(at: path, options: .init(readOnly: true))
            Issue.record("a damaged chain opened")
        } catch let e as StorageError {
            #expect(e.code == .corrupted && e.offset == UInt64(Self.damagedHeadOffset) && e.unreachableVersion == 7, "\(e)")
        }
        var salvage = Store.Options(readOnly: true)
        salvage.salvage = true
        let store = try Store.open(at: path, options: salvage)
        #expect(try store.snapshot().version == 2)
        #expect(try store.snapshot().objectCount("Log") == 1)
        #expect(store.damage?.unreachableCommits.map(\.version) == [4, 5, 6, 7])
    }
}
