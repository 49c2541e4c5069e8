import RealmStorage

/// A schema node of a Parquet file: a leaf column of one physical type, or a group of nodes.
///
/// Written to the Apache Parquet format specification (parquet-format, `parquet.thrift`): no kept
/// Swift package writes Parquet, so ``ParquetFileWriter`` does, with the few parts an export needs
/// (PLAIN values, RLE levels, version-1 data pages, one page per column chunk, LZ4_RAW or no
/// compression).
package struct ParquetNode: Sendable {
    /// How often a node occurs in its parent.
    package enum Repetition: Int32, Sendable {
        case required = 0
        case optional = 1
        case repeated = 2
    }

    /// Physical types, with their numbers in the format.
    package enum PhysicalType: Int32, Sendable {
        case boolean = 0
        case int32 = 1
        case int64 = 2
        case float = 4
        case double = 5
        case byteArray = 6
        case fixedLenByteArray = 7
    }

    /// The units of a timestamp.
    package enum TimeUnit: Sendable, Equatable {
        case millis, micros, nanos
    }

    /// The logical types the export writes.
    package enum LogicalType: Sendable, Equatable {
        case string
        case json
        case uuid
        case list
        case map
        case decimal(precision: Int32, scale: Int32)
        /// An instant (adjusted to UTC) counted in `unit`s since 1970-01-01T00:00:00Z.
        case timestamp(TimeUnit)
    }

    package indirect enum Kind: Sendable {
        case leaf(PhysicalType, length: Int32?)
        case group([ParquetNode])
    }

    package var name: String
    package var repetition: Repetition
    package var kind: Kind
    package var logical: LogicalType?

    package init(_ name: String, _ repetition: Repetition, _ kind: Kind, logical: LogicalType? = nil) {
        self.name = name
        self.repetition = repetition
        self.kind = kind
        self.logical = logical
    }

    /// The leaves under this node, depth first, with their paths and maximum levels.
    func leaves(path: [String] = [], definition: Int = 0, repetitionLevel: Int = 0) -> [ParquetLeafColumn] {
        let path = path + [name]
        let d = definition + (repetition == .required ? 0 : 1)
        let r = repetitionLevel + (repetition == .repeated ? 1 : 0)
        switch kind {
        case .leaf(let type, let length):
            return [ParquetLeafColumn(path: path, type: type, length: length, maxDefinition: d, maxRepetition: r)]
        case .group(let children):
            return children.flatMap { $0.leaves(path: path, definition: d, repetitionLevel: r) }
        }
    }

    /// This node and its descendants, depth first: the order of the footer's schema list.
    var depthFirst: [ParquetNode] {
        guard case .group(let children) = kind else { return [self] }
        return [self] + children.flatMap(\.depthFirst)
    }

    /// Writes this node's SchemaElement fields (the root's carries no repetition).
    func writeElement(_ w: inout ThriftCompactWriter, isRoot: Bool) {
        if case .leaf(let type, let length) = kind {
            w.i32(1, type.rawValue)
            if let length { w.i32(2, length) }
        }
        if !isRoot { w.i32(3, repetition.rawValue) }
        w.string(4, name)
        if case .group(let children) = kind { w.i32(5, Int32(children.count)) }
        // The legacy converted type, for readers older than logical types.
        switch logical {
        case .string: w.i32(6, 0)
        case .map: w.i32(6, 1)
        case .list: w.i32(6, 3)
        case .json: w.i32(6, 19)
        case .decimal(let precision, let scale):
            w.i32(6, 5)
            w.i32(7, scale)
            w.i32(8, precision)
        case .timestamp(.millis): w.i32(6, 9)
        case .timestamp(.micros): w.i32(6, 10)
        case .timestamp(.nanos), .uuid, nil: break
        }
        if let logical {
            w.beginStruct(10)
            switch logical {
            case .string: w.emptyStruct(1)
            case .map: w.emptyStruct(2)
            case .list: w.emptyStruct(3)
            case .decimal(let precision, let scale):
                w.beginStruct(5)
                w.i32(1, scale)
                w.i32(2, precision)
                w.endStruct()
            case .timestamp(let unit):
                w.beginStruct(8)
                w.bool(1, true)
                w.beginStruct(2)
                w.emptyStruct(unit == .millis ? 1 : unit == .micros ? 2 : 3)
                w.endStruct()
                w.endStruct()
            case .json: w.emptyStruct(12)
            case .uuid: w.emptyStruct(14)
            }
            w.endStruct()
        }
    }
}

/// A leaf column: where it is in the schema, its type and its maximum levels.
package struct ParquetLeafColumn: Sendable, Equatable {
    package var path: [String]
    package var type: ParquetNode.PhysicalType
    package var length: Int32?
    package var maxDefinition: Int
    package var maxRepetition: Int
}

/// The levels and PLAIN-encoded values of one leaf column for the rows of one row group.
package struct ParquetColumnData {
    package let column: ParquetLeafColumn
    /// One repetition level per entry (empty when the column's maximum is 0).
    package var repetitionLevels: [UInt8] = []
    /// One definition level per entry (empty when the column's maximum is 0).
    package var definitionLevels: [UInt8] = []
    /// The entries: values, nulls and empty lists.
    package var entries = 0
    /// The values, PLAIN-encoded (booleans are packed at the end, from `bits`).
    package var values: [UInt8] = []
    var bits: [Bool] = []

    package init(_ column: ParquetLeafColumn) { self.column = column }

    /// Records an entry's levels (the entry carries a value when `definition` is the maximum).
    package mutating func level(repetition: Int, definition: Int) {
        if column.maxRepetition > 0 { repetitionLevels.append(UInt8(repetition)) }
        if column.maxDefinition > 0 { definitionLevels.append(UInt8(definition)) }
        entries += 1
    }

    package mutating func boolean(_ v: Bool) { bits.append(v) }

    package mutating func int64(_ v: Int64) { littleEndian(UInt64(bitPattern: v)) }

    package mutating func float(_ v: Float) { littleEndian(UInt64(v.bitPattern), bytes: 4) }

    package mutating func double(_ v: Double) { littleEndian(v.bitPattern) }

    /// A BYTE_ARRAY value: its length (4 bytes) and its bytes.
    package mutating func byteArray<C: Collection<UInt8>>(_ v: C) {
        littleEndian(UInt64(v.count), bytes: 4)
        values.append(contentsOf: v)
    }

    /// A FIXED_LEN_BYTE_ARRAY value: exactly the column's length of bytes.
    package mutating func fixed(_ v: [UInt8]) { values.append(contentsOf: v) }

    private mutating func littleEndian(_ v: UInt64, bytes: Int = 8) {
        for i in 0..<bytes { values.append(UInt8(truncatingIfNeeded: v >> (8 * i))) }
    }

    /// The page body: the repetition levels, the definition levels (each as a 4-byte length and
    /// the RLE/bit-packing hybrid, here as RLE runs only) and the values.
    func pageBody() -> [UInt8] {
        var out: [UInt8] = []
        if column.maxRepetition > 0 { Self.levels(repetitionLevels, into: &out) }
        if column.maxDefinition > 0 { Self.levels(definitionLevels, into: &out) }
        if column.type == .boolean {
            var byte: UInt8 = 0
            for (i, b) in bits.enumerated() {
                if b { byte |= 1 << UInt8(i % 8) }
                if i % 8 == 7 {
                    out.append(byte)
                    byte = 0
                }
            }
            if bits.count % 8 != 0 { out.append(byte) }
        } else {
            out.append(contentsOf: values)
        }
        return out
    }

    /// Levels as RLE runs, after their length in 4 bytes. A run is its length shifted left by
    /// one (the low bit 0 marks an RLE run) as a ULEB128 varint, then its value in one byte
    /// (levels here are at most 2, so the bit width is at most 8).
    static func levels(_ levels: [UInt8], into out: inout [UInt8]) {
        var runs: [UInt8] = []
        var i = 0
        while i < levels.count {
            var j = i + 1
            while j < levels.count && levels[j] == levels[i] { j += 1 }
            appendULEB128(UInt64(j - i) << 1, to: &runs)
            runs.append(levels[i])
            i = j
        }
        for k in 0..<4 { out.append(UInt8(truncatingIfNeeded: runs.count >> (8 * k))) }
        out.append(contentsOf: runs)
    }
}

/// Writes a Parquet file: `PAR1`, the row groups' column chunks, the footer (FileMetaData in the
/// Thrift compact protocol), its length and `PAR1`. Each column chunk is one version-1 data page.
/// Not thread-safe.
package final class ParquetFileWriter {
    /// The compression of the pages.
    package enum Codec: Int32, Sendable {
        case uncompressed = 0
        /// LZ4 blocks with no framing (Parquet's LZ4_RAW).
        case lz4Raw = 7
    }

    private struct Chunk {
        var column: ParquetLeafColumn
        var codec: Codec
        var offset: Int64
        var entries: Int64
        var compressed: Int64
        var uncompressed: Int64
    }

    private struct RowGroup {
        var chunks: [Chunk]
        var rows: Int64
        var offset: Int64
    }

    private let file: LineWriter
    private let fields: [ParquetNode]
    package let columns: [ParquetLeafColumn]
    private let codec: Codec
    private var offset: Int64 = 0
    private var rowGroups: [RowGroup] = []

    /// Creates the file at `path` with these top-level fields.
    package init(path: String, fields: [ParquetNode], codec: Codec) throws {
        self.file = try LineWriter(path: path)
        self.fields = fields
        self.columns = fields.flatMap { $0.leaves() }
        self.codec = codec
        try write(Array("PAR1".utf8))
    }

    private func write(_ bytes: [UInt8]) throws {
        try file.write(bytes: bytes)
        offset += Int64(bytes.count)
    }

    /// Appends a row group of `rows` rows; `data` holds one entry per leaf column, in schema order.
    package func appendRowGroup(rows: Int, _ data: [ParquetColumnData]) throws {
        precondition(data.map(\.column) == columns, "one ParquetColumnData per leaf column, in schema order")
        let start = offset
        var chunks: [Chunk] = []
        for d in data {
            let body = d.pageBody()
            var codec = codec
            var stored = body
            if codec == .lz4Raw {
                if let c = LZ4.compress(body) { stored = c } else { codec = .uncompressed }
            }
            guard body.count <= Int(Int32.max), stored.count <= Int(Int32.max), d.entries <= Int(Int32.max) else {
                throw ToolFailure(.failure, "a column of \(rows) rows is too large for one Parquet page")
            }
            var header = ThriftCompactWriter()
            header.i32(1, 0)  // DATA_PAGE
            header.i32(2, Int32(body.count))
            header.i32(3, Int32(stored.count))
            header.beginStruct(5)  // DataPageHeader
            header.i32(1, Int32(d.entries))
            header.i32(2, 0)  // values: PLAIN
            header.i32(3, 3)  // definition levels: RLE
            header.i32(4, 3)  // repetition levels: RLE
            header.endStruct()
            header.stop()
            let chunkOffset = offset
            try write(header.bytes)
            try write(stored)
            chunks.append(
                Chunk(
                    column: d.column, codec: codec, offset: chunkOffset, entries: Int64(d.entries),
                    compressed: Int64(header.bytes.count + stored.count), uncompressed: Int64(header.bytes.count + body.count)))
        }
        rowGroups.append(RowGroup(chunks: chunks, rows: Int64(rows), offset: start))
    }

    /// Writes the footer and closes the file.
    package func close() throws {
        let schema = ParquetNode("schema", .required, .group(fields)).depthFirst
        var w = ThriftCompactWriter()
        w.i32(1, 2)  // version
        w.structList(2, Array(schema.enumerated())) { w, e in e.element.writeElement(&w, isRoot: e.offset == 0) }
        w.i64(3, rowGroups.reduce(0) { $0 + $1.rows })
        w.structList(4, rowGroups) { w, g in
            w.structList(1, g.chunks) { w, c in
                w.i64(2, c.offset)
                w.beginStruct(3)  // ColumnMetaData
                w.i32(1, c.column.type.rawValue)
                w.i32List(2, [0, 3])  // PLAIN, RLE
                w.stringList(3, c.column.path)
                w.i32(4, c.codec.rawValue)
                w.i64(5, c.entries)
                w.i64(6, c.uncompressed)
                w.i64(7, c.compressed)
                w.i64(9, c.offset)
                w.endStruct()
            }
            w.i64(2, g.chunks.reduce(0) { $0 + $1.uncompressed })
            w.i64(3, g.rows)
            w.i64(5, g.offset)
            w.i64(6, g.chunks.reduce(0) { $0 + $1.compressed })
        }
        w.string(6, "realm-dump")
        w.stop()
        let footer = w.bytes
        try write(footer)
        try write((0..<4).map { UInt8(truncatingIfNeeded: footer.count >> (8 * $0)) } + Array("PAR1".utf8))
        try file.close()
    }
}
