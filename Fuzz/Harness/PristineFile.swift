import Foundation
import RealmStorage

/// A valid Realm file built once per process, with a map of its blocks, so that `FileOpen` can
/// damage it *behind* the checksums: a mutation program overwrites bytes of chosen blocks, then
/// every checksum the damage broke is recomputed (block trailers, commit regions, record and slot
/// checksums, Spec/FORMAT.md §2.3, §3.2, §5.1). Random bytes rarely survive XXH64; repaired
/// ones reach the catalog, row-group, segment, index and record decoders with hostile values.
struct PristineFile {
    let bytes: [UInt8]
    /// (offset, length, is a version record) of every checksummed block, in offset order.
    let blocks: [(offset: Int, length: Int, isRecord: Bool)]
    /// Offsets of the commit heads (Spec/FORMAT.md §3.4).
    let heads: [Int]

    static let shared: PristineFile? = try? PristineFile()

    init() throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("realm-fuzz-pristine-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let path = dir + "/pristine.realm"
        let store = try Store.open(at: path, options: .init(create: true, rowGroupCapacity: 8))
        let tx = try store.beginWrite()
        try tx.createTable("Dog")
        try tx.addColumn("Dog", ColumnSchema("name", .string))
        try tx.createTable("Person", primaryKey: ColumnSchema("id", .int))
        for c in [
            ColumnSchema("name", .string, indexed: true), ColumnSchema("score", .double, nullable: true), ColumnSchema("born", .timestamp),
            ColumnSchema("oid", .objectId), ColumnSchema("uuid", .uuid), ColumnSchema("dec", .decimal128), ColumnSchema("f", .float),
            ColumnSchema("data", .binary), ColumnSchema("dog", .link, linkTarget: "Dog"),
            ColumnSchema("dogs", .link, list: true, linkTarget: "Dog"), ColumnSchema("tags", .string, set: true),
            ColumnSchema("scores", .int, map: true), ColumnSchema("any", .mixed, nullable: true),
        ] {
            try tx.addColumn("Person", c)
        }
        var dogs: [ObjectKey] = []
        for i in 0..<6 { dogs.append(try tx.insert("Dog", ["name": .string("dog \(i % 3)")])) }
        for i in 0..<40 {
            try tx.insert(
                "Person",
                [
                    "id": .int(Int64(i * 7 - 20)), "name": .string(["Ann", "Bo", "Cy"][i % 3] + "\(i / 3)"),
                    "score": i % 4 == 0 ? .null : .double(Double(i) / 3), "born": .timestamp(seconds: Int64(i) * 86_400, nanoseconds: 5),
                    "oid": .objectId((0..<12).map { UInt8(truncatingIfNeeded: $0 * i) }),
                    "uuid": .uuid(UUID(uuid: (UInt8(i), 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, UInt8(i)))),
                    "dec": .decimal128(low: UInt64(i), high: 0x3040_0000_0000_0000), "f": .float(Float(i) * 0.5),
                    "data": .binary(Array(repeating: UInt8(i), count: i % 5)), "dog": .link(dogs[i % dogs.count]),
                    "dogs": .list((0..<(i % 4)).map { .link(dogs[$0]) }), "tags": .list((0..<(i % 3)).map { .string("t\($0)") }),
                    "scores": .map(["a": .int(Int64(i)), "b\(i % 2)": .int(-1)]),
                    "any": [.int(Int64(i)), .string("s\(i)"), .null, .bool(true)][i % 4],
                ])
        }
        try tx.commit()
        let tx2 = try store.beginWrite()
        for k in try tx2.objectKeys("Person").prefix(12) where k.rawValue % 3 == 0 { try tx2.delete("Person", k) }
        try tx2.set("Person", try tx2.objectKeys("Person")[0], "name", .string("changed"))
        try tx2.commit()
        // A table of more than 32 row groups: its row-group list and index directory are paged
        // (format 4, Spec/FORMAT.md §5.4, §5.7), then a commit rewrites some of the pages.
        let tx3 = try store.beginWrite()
        try tx3.createTable("Tick", primaryKey: ColumnSchema("id", .int))
        for i in 0..<300 { try tx3.insert("Tick", row: [.int(Int64(i * 3))]) }
        try tx3.commit()
        let tx4 = try store.beginWrite()
        try tx4.delete("Tick", ObjectKey(20))
        try tx4.insert("Tick", row: [.int(1)])
        try tx4.commit()
        bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: path)))
        let report = try Inspector().inspect(path: path, blocks: true)
        blocks = report.blocks.filter { !["header", "dead", "unknown"].contains($0.kind) && $0.length >= 16 }
            .map { (Int($0.offset), Int($0.length), $0.kind == "record") }
        heads = report.blocks.filter { $0.kind == "commit head" }.map { Int($0.offset) }
    }

    /// The file with the mutations of `program` applied and the checksums repaired.
    func mutated(by program: [UInt8]) -> [UInt8] {
        var out = bytes
        var input = FuzzInput(program)
        while !input.isAtEnd {
            let block = blocks[Int(input.u16()) % blocks.count]
            let at = block.offset + Int(input.u16()) % (block.length - 8)
            let room = block.offset + block.length - 8 - at
            switch input.below(5) {
            case 0: out[at] = input.u8()
            case 1: out[at] ^= 1 << input.below(8)
            case 2: for (k, b) in Self.littleEndian(UInt64(input.u32()), 4).prefix(room).enumerated() { out[at + k] = b }
            case 3: for (k, b) in Self.littleEndian(input.u64(), 8).prefix(room).enumerated() { out[at + k] = b }
            default:
                // A small number (a count or length off by a little) over a u32.
                let v = UInt64(bitPattern: Int64(Int8(bitPattern: input.u8())))
                for (k, b) in Self.littleEndian(v, 4).prefix(room).enumerated() { out[at + k] = b }
            }
        }
        repairChecksums(&out)
        return out
    }

    static func littleEndian(_ v: UInt64, _ n: Int) -> [UInt8] { (0..<n).map { UInt8(truncatingIfNeeded: v >> UInt64(8 * $0)) } }

    static func u64(_ b: [UInt8], _ at: Int) -> UInt64 { (0..<8).reduce(0) { $0 | UInt64(b[at + $1]) << UInt64(8 * $1) } }

    static func put(_ v: UInt64, _ b: inout [UInt8], _ at: Int) { for (k, x) in littleEndian(v, 8).enumerated() { b[at + k] = x } }

    func repairChecksums(_ out: inout [UInt8]) {
        // Blocks first, then each record's commit region and trailer, then the heads and slots that
        // name records.
        for b in blocks where !b.isRecord {
            Self.put(XXH64.hash(Array(out[b.offset..<b.offset + b.length - 8])), &out, b.offset + b.length - 8)
        }
        for b in blocks where b.isRecord {
            let start = Self.u64(out, b.offset + 40)
            if start <= UInt64(b.offset) { Self.put(XXH64.hash(Array(out[Int(start)..<b.offset])), &out, b.offset + 48) }
            Self.put(XXH64.hash(Array(out[b.offset..<b.offset + b.length - 8])), &out, b.offset + b.length - 8)
        }
        for head in heads {
            let offset = Self.u64(out, head + 16)
            let length = Self.u64(out, head + 24)
            if length >= 8, offset <= UInt64(out.count), length <= UInt64(out.count) - offset {
                Self.put(Self.u64(out, Int(offset + length) - 8), &out, head + 48)
            }
            Self.put(XXH64.hash(Array(out[head..<head + CommitHead.size - 8])), &out, head + CommitHead.size - 8)
        }
        for slot in FileHeader.slotOffsets where out[slot..<slot + 4] != [0, 0, 0, 0] {
            let offset = Self.u64(out, slot + 16)
            let length = Self.u64(out, slot + 24)
            if length >= 8, offset <= UInt64(out.count), length <= UInt64(out.count) - offset {
                Self.put(Self.u64(out, Int(offset + length) - 8), &out, slot + 48)
            }
            Self.put(XXH64.hash(Array(out[slot..<slot + 56])), &out, slot + 56)
        }
    }
}
