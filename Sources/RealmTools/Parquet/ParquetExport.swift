import Foundation
import RealmStorage

/// One table as a Parquet file (`realm-dump FILE --export parquet --output DIR`).
///
/// | Realm type | Parquet column |
/// |---|---|
/// | object key (`_key`, first) | required INT64 |
/// | int | INT64 |
/// | bool | BOOLEAN |
/// | float, double | FLOAT, DOUBLE |
/// | string | BYTE_ARRAY, STRING |
/// | binary | BYTE_ARRAY |
/// | timestamp | INT64, TIMESTAMP (adjusted to UTC) in nanoseconds; in microseconds when an instant of the column lies outside 1677–2262, milliseconds beyond ±292,000 years |
/// | objectId | FIXED_LEN_BYTE_ARRAY(12) |
/// | uuid | FIXED_LEN_BYTE_ARRAY(16), UUID |
/// | decimal128 | FIXED_LEN_BYTE_ARRAY(16), DECIMAL(38, s) with the smallest scale `s` that holds every value of the column exactly; BYTE_ARRAY, STRING (the decimal's text) when no scale does (NaN, infinities, more than 38 digits) |
/// | link | INT64: the target's object key |
/// | mixed | BYTE_ARRAY, JSON: the value as `--export jsonl` writes it |
/// | list, set | LIST of the element type |
/// | map | MAP with STRING keys, entries in the UTF-8 order of their keys |
///
/// Nullable properties are optional columns (a to-one link and a mixed value always are); nulls
/// are nulls. Lists and maps themselves are never null. Each file has row groups of at most
/// 65,536 objects, one data page per column chunk, compressed with LZ4_RAW.
package enum ParquetExport {
    /// How a stored value is written into a leaf column.
    enum Encoding: Equatable {
        case bool, int64, link, float, double, string, binary, json, objectId, uuid
        case timestamp(ParquetNode.TimeUnit)
        case decimal(scale: Int)
        case decimalText

        var node: (ParquetNode.Kind, ParquetNode.LogicalType?) {
            switch self {
            case .bool: (.leaf(.boolean, length: nil), nil)
            case .int64, .link: (.leaf(.int64, length: nil), nil)
            case .float: (.leaf(.float, length: nil), nil)
            case .double: (.leaf(.double, length: nil), nil)
            case .string, .decimalText: (.leaf(.byteArray, length: nil), .string)
            case .binary: (.leaf(.byteArray, length: nil), nil)
            case .json: (.leaf(.byteArray, length: nil), .json)
            case .objectId: (.leaf(.fixedLenByteArray, length: 12), nil)
            case .uuid: (.leaf(.fixedLenByteArray, length: 16), .uuid)
            case .timestamp(let unit): (.leaf(.int64, length: nil), .timestamp(unit))
            case .decimal(let scale): (.leaf(.fixedLenByteArray, length: 16), .decimal(precision: 38, scale: Int32(scale)))
            }
        }
    }

    /// How one property of the table is written.
    struct ColumnPlan {
        enum Shape { case scalar, list, map }
        var column: ColumnSchema
        var shape: Shape
        /// The encoding of the values (of the elements of a list, the values of a map).
        var encoding: Encoding
        /// Whether a value (element, map value) may be null.
        var optional: Bool

        init(_ column: ColumnSchema) {
            self.column = column
            shape = column.isMap ? .map : column.isList ? .list : .scalar
            optional = column.isNullable || column.type == .mixed || (column.type == .link && shape != .list)
            encoding =
                switch column.type {
                case .int: .int64
                case .bool: .bool
                case .float: .float
                case .double: .double
                case .string: .string
                case .binary: .binary
                case .timestamp: .timestamp(.nanos)
                case .objectId: .objectId
                case .uuid: .uuid
                case .decimal128: .decimal(scale: 0)
                case .link: .link
                case .mixed: .json
                }
        }

        /// The top-level field: LIST and MAP follow the format's three-level structures.
        var field: ParquetNode {
            let (kind, logical) = encoding.node
            switch shape {
            case .scalar:
                return ParquetNode(column.name, optional ? .optional : .required, kind, logical: logical)
            case .list:
                let element = ParquetNode("element", optional ? .optional : .required, kind, logical: logical)
                return ParquetNode(
                    column.name, .required, .group([ParquetNode("list", .repeated, .group([element]))]), logical: .list)
            case .map:
                let key = ParquetNode("key", .required, .leaf(.byteArray, length: nil), logical: .string)
                let value = ParquetNode("value", optional ? .optional : .required, kind, logical: logical)
                return ParquetNode(
                    column.name, .required, .group([ParquetNode("key_value", .repeated, .group([key, value]))]), logical: .map)
            }
        }

        /// Calls `body` with each value of a property (each element of a list, each value of a map).
        func forEachValue(_ v: StorageValue, _ body: (StorageValue) throws -> Void) rethrows {
            switch (shape, v) {
            case (.list, .list(let items)): for e in items { try body(e) }
            case (.map, .map(let entries)): for e in entries.values { try body(e) }
            default: try body(v)
            }
        }
    }

    /// The objects in one Parquet row group.
    static let rowGroupSize = 65_536

    /// Writes the objects of `table` to a new Parquet file at `path`; returns how many.
    package static func write(_ s: Snapshot, table: TableSchema, to path: String) throws -> Int {
        let text = ValueText(catalog: s.catalog)
        let plans = try plan(s, table)
        let writer = try ParquetFileWriter(
            path: path, fields: [ParquetNode("_key", .required, .leaf(.int64, length: nil))] + plans.map(\.field), codec: .lz4Raw)
        let empty = writer.columns.map { ParquetColumnData($0) }
        var data = empty
        var rows = 0
        var total = 0
        try ObjectExport.forEachObject(s, table) { key, values in
            data[0].level(repetition: 0, definition: 0)
            data[0].int64(key.rawValue)
            var leaf = 1
            for (p, v) in zip(plans, values) {
                try shred(v, p, &data, &leaf, text)
            }
            rows += 1
            total += 1
            if rows == rowGroupSize {
                try writer.appendRowGroup(rows: rows, data)
                data = empty
                rows = 0
            }
            return true
        }
        if rows > 0 { try writer.appendRowGroup(rows: rows, data) }
        try writer.close()
        return total
    }

    /// The plan of each property: timestamps in the finest unit that holds every instant of the
    /// column, decimals at the smallest scale that holds every value (found by reading the table
    /// once more, only when it has such properties).
    static func plan(_ s: Snapshot, _ table: TableSchema) throws -> [ColumnPlan] {
        var plans = table.columns.map(ColumnPlan.init)
        guard plans.contains(where: { $0.column.type == .timestamp || $0.column.type == .decimal128 }) else { return plans }
        var units = [ParquetNode.TimeUnit](repeating: .nanos, count: plans.count)
        var scales = [Int](repeating: 0, count: plans.count)
        var decimalFits = [Bool](repeating: true, count: plans.count)
        // The most digits before the decimal point of any nonzero decimal of the column.
        var integerDigits = [Int](repeating: Int.min, count: plans.count)
        try ObjectExport.forEachObject(s, table) { _, values in
            for (i, (p, v)) in zip(plans, values).enumerated() {
                switch p.column.type {
                case .timestamp:
                    try p.forEachValue(v) { e in
                        guard case .timestamp(let sec, let ns) = e else { return }
                        while timestamp(sec, ns, units[i]) == nil {
                            switch units[i] {
                            case .nanos: units[i] = .micros
                            case .micros: units[i] = .millis
                            case .millis:
                                throw ToolFailure(.failure, "an instant of \(table.name).\(p.column.name) is outside Parquet's range")
                            }
                        }
                    }
                case .decimal128:
                    guard decimalFits[i] else { continue }
                    p.forEachValue(v) { e in
                        guard case .decimal128(let lo, let hi) = e else { return }
                        guard let parts = Decimal128(low: lo, high: hi).finiteParts else {
                            decimalFits[i] = false
                            return
                        }
                        guard parts.coefficient != 0 else { return }
                        integerDigits[i] = max(integerDigits[i], decimalDigitCount(parts.coefficient) + parts.exponent)
                        scales[i] = max(scales[i], -parts.exponent)
                        if scales[i] > 38 { decimalFits[i] = false }
                    }
                default: continue
                }
            }
            return true
        }
        for i in plans.indices {
            switch plans[i].column.type {
            case .timestamp: plans[i].encoding = .timestamp(units[i])
            case .decimal128:
                // Every value's unscaled integer at the column's scale must have at most 38 digits.
                let fits = decimalFits[i] && (integerDigits[i] == Int.min || integerDigits[i] + scales[i] <= 38)
                plans[i].encoding = fits ? .decimal(scale: scales[i]) : .decimalText
            default: break
            }
        }
        return plans
    }

    /// An instant in `unit`s since 1970, or nil when it does not fit in 64 bits.
    static func timestamp(_ seconds: Int64, _ nanoseconds: Int32, _ unit: ParquetNode.TimeUnit) -> Int64? {
        let (perSecond, divisor): (Int64, Int64) =
            switch unit {
            case .nanos: (1_000_000_000, 1)
            case .micros: (1_000_000, 1000)
            case .millis: (1000, 1_000_000)
            }
        let n = Int64(nanoseconds)
        let fraction = n >= 0 ? n / divisor : -((-n + divisor - 1) / divisor)  // rounded down
        let (whole, overflow) = seconds.multipliedReportingOverflow(by: perSecond)
        guard !overflow else { return nil }
        let (sum, overflow2) = whole.addingReportingOverflow(fraction)
        return overflow2 ? nil : sum
    }

    /// The 16 big-endian two's-complement bytes of a decimal's unscaled integer at `scale`.
    static func decimalBytes(_ d: Decimal128, scale: Int) -> [UInt8]? {
        guard let unscaled = d.unscaledInteger(scale: scale) else { return nil }
        let bits = UInt128(bitPattern: unscaled)
        return (0..<16).map { UInt8(truncatingIfNeeded: bits >> (8 * (15 - $0))) }
    }

    /// Appends one property's value to its leaf columns (one, or two for a map), starting at
    /// `leaf`, and moves `leaf` past them.
    static func shred(
        _ v: StorageValue, _ p: ColumnPlan, _ data: inout [ParquetColumnData], _ leaf: inout Int, _ text: ValueText
    ) throws {
        switch p.shape {
        case .scalar:
            if v.isNull {
                guard p.optional else { throw unexpected(v, p) }
                data[leaf].level(repetition: 0, definition: 0)
            } else {
                data[leaf].level(repetition: 0, definition: data[leaf].column.maxDefinition)
                try encode(v, p, &data[leaf], text)
            }
            leaf += 1
        case .list:
            guard case .list(let items) = v else { throw unexpected(v, p) }
            let max = data[leaf].column.maxDefinition
            if items.isEmpty { data[leaf].level(repetition: 0, definition: 0) }
            for (k, e) in items.enumerated() {
                if e.isNull {
                    guard p.optional else { throw unexpected(e, p) }
                    data[leaf].level(repetition: k == 0 ? 0 : 1, definition: max - 1)
                } else {
                    data[leaf].level(repetition: k == 0 ? 0 : 1, definition: max)
                    try encode(e, p, &data[leaf], text)
                }
            }
            leaf += 1
        case .map:
            guard case .map(let entries) = v else { throw unexpected(v, p) }
            let (keys, values) = (leaf, leaf + 1)
            let max = data[values].column.maxDefinition
            if entries.isEmpty {
                data[keys].level(repetition: 0, definition: 0)
                data[values].level(repetition: 0, definition: 0)
            }
            let sorted = ValueText.sorted(entries)
            for (k, e) in sorted.enumerated() {
                data[keys].level(repetition: k == 0 ? 0 : 1, definition: 1)
                data[keys].byteArray(e.key.utf8)
                if e.value.isNull {
                    guard p.optional else { throw unexpected(e.value, p) }
                    data[values].level(repetition: k == 0 ? 0 : 1, definition: max - 1)
                } else {
                    data[values].level(repetition: k == 0 ? 0 : 1, definition: max)
                    try encode(e.value, p, &data[values], text)
                }
            }
            leaf += 2
        }
    }

    /// Appends one non-null value in the plan's encoding.
    static func encode(_ v: StorageValue, _ p: ColumnPlan, _ d: inout ParquetColumnData, _ text: ValueText) throws {
        switch (p.encoding, v) {
        case (.bool, .bool(let b)): d.boolean(b)
        case (.int64, .int(let i)): d.int64(i)
        case (.link, .link(let k)): d.int64(k.rawValue)
        case (.float, .float(let f)): d.float(f)
        case (.double, .double(let x)): d.double(x)
        case (.string, .string(let s)): d.byteArray(s.utf8)
        case (.binary, .binary(let b)): d.byteArray(b)
        case (.json, _): d.byteArray(text.json(v).compact.utf8)
        case (.objectId, .objectId(let b)) where b.count == 12: d.fixed(b)
        case (.uuid, .uuid(let u)):
            let t = u.uuid
            d.fixed([t.0, t.1, t.2, t.3, t.4, t.5, t.6, t.7, t.8, t.9, t.10, t.11, t.12, t.13, t.14, t.15])
        case (.timestamp(let unit), .timestamp(let s, let n)):
            guard let t = timestamp(s, n, unit) else { throw unexpected(v, p) }
            d.int64(t)
        case (.decimal(let scale), .decimal128(let lo, let hi)):
            guard let bytes = decimalBytes(Decimal128(low: lo, high: hi), scale: scale) else { throw unexpected(v, p) }
            d.fixed(bytes)
        case (.decimalText, .decimal128(let lo, let hi)): d.byteArray(Decimal128(low: lo, high: hi).description.utf8)
        default: throw unexpected(v, p)
        }
    }

    static func unexpected(_ v: StorageValue, _ p: ColumnPlan) -> ToolFailure {
        ToolFailure(.corrupted, "a value of \(p.column.name) (\(v)) does not fit its \(p.column.type) column")
    }
}
