import Foundation

/// The decoded, mutable form of one column of one row group, used while a write transaction builds
/// new segments. Typed storage keeps bulk inserts free of per-value boxing.
package struct ColumnBuffer: Sendable {
    package let type: ColumnType
    package let nullable: Bool
    package let isList: Bool
    /// Whether values are sets: lists without equal elements (checked by ``validate(_:column:)``).
    package let isSet: Bool
    /// Whether values are maps from strings to elements of ``type``.
    package let isMap: Bool
    /// Whether each value is a collection (list, set or map) whose elements the nullability covers.
    package var isCollection: Bool { isList || isMap }

    package enum Storage: Sendable {
        case ints([Int64])
        case floats([Float])
        case doubles([Double])
        case fixed(width: Int, [UInt8])
        case strings([String])
        case blobs([[UInt8]])
        /// Mixed values, serialized when the segment is encoded.
        case values([StorageValue])
        case lists([[StorageValue]])
        case maps([[String: StorageValue]])
    }
    package private(set) var storage: Storage
    /// Present (non-null) flags; nil when the column is not nullable or is a collection.
    package private(set) var valid: [Bool]?
    package private(set) var count: Int = 0

    package init(type: ColumnType, nullable: Bool, isList: Bool, isSet: Bool = false, isMap: Bool = false, capacity: Int = 0) {
        precondition(isList || !isSet, "a set column is a list column")
        precondition(!(isList && isMap), "a map column is not a list column")
        self.type = type
        self.nullable = nullable
        self.isList = isList
        self.isSet = isSet
        self.isMap = isMap
        if isList {
            storage = .lists([])
        } else if isMap {
            storage = .maps([])
        } else {
            switch type {
            case .int, .bool, .link: storage = .ints([])
            case .float: storage = .floats([])
            case .double: storage = .doubles([])
            case .string: storage = .strings([])
            case .binary: storage = .blobs([])
            case .mixed: storage = .values([])
            case .timestamp, .objectId, .uuid, .decimal128:
                if case .fixed(let w) = type.lane { storage = .fixed(width: w, []) } else { fatalError("unreachable") }
            }
        }
        valid = nullable && !isList && !isMap ? [] : nil
        if capacity > 0 { reserve(capacity) }
    }

    /// A non-nullable int column holding `values` (a key segment's contents).
    package init(ints values: [Int64]) {
        self.init(type: .int, nullable: false, isList: false)
        storage = .ints(values)
        count = values.count
    }

    /// An empty buffer for `column`.
    package init(_ column: ColumnSchema, capacity: Int = 0) {
        self.init(
            type: column.type, nullable: column.isNullable, isList: column.isList, isSet: column.isSet, isMap: column.isMap,
            capacity: capacity)
    }

    package mutating func reserve(_ n: Int) {
        switch storage {
        case .ints(var a): a.reserveCapacity(n); storage = .ints(a)
        case .doubles(var a): a.reserveCapacity(n); storage = .doubles(a)
        case .strings(var a): a.reserveCapacity(n); storage = .strings(a)
        case .values(var a): a.reserveCapacity(n); storage = .values(a)
        default: break
        }
        valid?.reserveCapacity(n)
    }

    /// The value stored for a missing field (Spec/FORMAT.md §5.5): an empty collection, null when
    /// nullable, else the type's zero.
    package static func defaultValue(type: ColumnType, nullable: Bool, isList: Bool, isMap: Bool = false) -> StorageValue {
        if isList { return .list([]) }
        if isMap { return .map([:]) }
        if nullable { return .null }
        switch type {
        case .int: return .int(0)
        case .bool: return .bool(false)
        case .float: return .float(0)
        case .double: return .double(0)
        case .string: return .string("")
        case .binary: return .binary([])
        case .timestamp: return .timestamp(seconds: 0, nanoseconds: 0)
        case .objectId: return .objectId([UInt8](repeating: 0, count: 12))
        case .uuid: return .uuid(UUID(uuid: (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)))
        case .decimal128: return .decimal128(low: 0, high: 0x3040_0000_0000_0000)
        case .link, .mixed: return .null
        }
    }

    /// Checks that `value` can be stored here; throws ``StorageError/Code/typeMismatch`` otherwise,
    /// and ``StorageError/Code/notFound`` for a link or typed link with a negative object key (keys
    /// are never negative, Spec/FORMAT.md §5.5; such a link used to be written and then reported by
    /// the Verifier — found by the Operations fuzzer).
    package func validate(_ value: StorageValue, column: String) throws { try rule.validate(value, column: column) }

    /// What this buffer accepts.
    package var rule: ValueRule { ValueRule(type: type, nullable: nullable, isList: isList, isSet: isSet, isMap: isMap) }

    /// The first negative object key a link or typed link in `value` names, if any.
    static func negativeLinkKey(_ value: StorageValue) -> Int64? {
        switch value {
        case .link(let k) where k.rawValue < 0: k.rawValue
        case .typedLink(_, let k) where k.rawValue < 0: k.rawValue
        case .list(let items): items.lazy.compactMap(negativeLinkKey).first
        case .map(let entries): entries.values.lazy.compactMap(negativeLinkKey).first
        default: nil
        }
    }

    /// The first element equal (``StorageValue/bitwiseEquals(_:)``) to an earlier one, if any.
    package static func firstDuplicate(_ elements: [StorageValue]) -> StorageValue? {
        guard elements.count > 1 else { return nil }
        var seen = Set<BitwiseKey>(minimumCapacity: elements.count)
        return elements.first { !seen.insert(BitwiseKey($0)).inserted }
    }

    /// Appends a value already checked with ``validate(_:column:)``.
    package mutating func append(_ value: consuming StorageValue) {
        count += 1
        if valid != nil { valid!.append(!value.isNull) }
        switch storage {
        case .ints(var a):
            storage = .ints([])
            a.append(Self.int(value))
            storage = .ints(a)
        case .floats(var a):
            storage = .floats([])
            if case .float(let f) = value { a.append(f) } else { a.append(0) }
            storage = .floats(a)
        case .doubles(var a):
            storage = .doubles([])
            if case .double(let d) = value { a.append(d) } else { a.append(0) }
            storage = .doubles(a)
        case .fixed(let w, var a):
            storage = .ints([])
            a.append(contentsOf: Self.fixedBytes(value, width: w))
            storage = .fixed(width: w, a)
        case .strings(var a):
            storage = .ints([])
            if case .string(let s) = value { a.append(s) } else { a.append("") }
            storage = .strings(a)
        case .blobs(var a):
            storage = .ints([])
            if case .binary(let b) = value { a.append(b) } else { a.append([]) }
            storage = .blobs(a)
        case .values(var a):
            storage = .ints([])
            a.append(value)
            storage = .values(a)
        case .lists(var a):
            storage = .ints([])
            if case .list(let l) = value { a.append(l) } else { a.append([]) }
            storage = .lists(a)
        case .maps(var a):
            storage = .ints([])
            if case .map(let m) = value { a.append(m) } else { a.append([:]) }
            storage = .maps(a)
        }
    }

    /// Replaces the value at `index`.
    package mutating func set(_ index: Int, _ value: StorageValue) {
        precondition(index >= 0 && index < count)
        if valid != nil { valid![index] = !value.isNull }
        switch storage {
        case .ints(var a):
            storage = .ints([])
            a[index] = Self.int(value)
            storage = .ints(a)
        case .floats(var a):
            storage = .ints([])
            a[index] = { if case .float(let f) = value { f } else { 0 } }()
            storage = .floats(a)
        case .doubles(var a):
            storage = .ints([])
            a[index] = { if case .double(let d) = value { d } else { 0 } }()
            storage = .doubles(a)
        case .fixed(let w, var a):
            storage = .ints([])
            a.replaceSubrange(index * w..<(index + 1) * w, with: Self.fixedBytes(value, width: w))
            storage = .fixed(width: w, a)
        case .strings(var a):
            storage = .ints([])
            a[index] = { if case .string(let s) = value { s } else { "" } }()
            storage = .strings(a)
        case .blobs(var a):
            storage = .ints([])
            a[index] = { if case .binary(let b) = value { b } else { [] } }()
            storage = .blobs(a)
        case .values(var a):
            storage = .ints([])
            a[index] = value
            storage = .values(a)
        case .lists(var a):
            storage = .ints([])
            a[index] = { if case .list(let l) = value { l } else { [] } }()
            storage = .lists(a)
        case .maps(var a):
            storage = .ints([])
            a[index] = { if case .map(let m) = value { m } else { [:] } }()
            storage = .maps(a)
        }
    }

    /// The value at `index`.
    package func value(_ index: Int) -> StorageValue {
        if let valid, !valid[index] { return .null }
        switch storage {
        case .ints(let a): return Self.decodeInt(a[index], type)
        case .floats(let a): return .float(a[index])
        case .doubles(let a): return .double(a[index])
        case .fixed(let w, let a): return Self.decodeFixed(Array(a[index * w..<(index + 1) * w]), type)
        case .strings(let a): return .string(a[index])
        case .blobs(let a): return .binary(a[index])
        case .values(let a): return a[index]
        case .lists(let a): return .list(a[index])
        case .maps(let a): return .map(a[index])
        }
    }

    /// Removes the rows at the given sorted, distinct indices, in place: the rows after the
    /// first removed one move down and the tail is cut (no new arrays; a transaction deleting
    /// many objects one at a time rebuilt the whole group for each).
    package mutating func remove(sortedIndices: [Int]) {
        guard let first = sortedIndices.first else { return }
        let rows = count
        // One walk beside the sorted indices (no hashing: a patch applied by a reader removes
        // rows from whole segments).
        func compact<T>(_ a: inout [T], width w: Int = 1) {
            var write = first * w
            var next = 0
            for row in first..<rows {
                if next < sortedIndices.count && sortedIndices[next] == row {
                    next += 1
                    continue
                }
                for k in 0..<w { a.swapAt(write + k, row * w + k) }
                write += w
            }
            a.removeLast(a.count - write)
        }
        // Each array is taken out of the enum while it is compacted, so that it is uniquely
        // referenced and changes in place.
        switch storage {
        case .ints(var a):
            storage = .ints([])
            compact(&a)
            storage = .ints(a)
        case .floats(var a):
            storage = .ints([])
            compact(&a)
            storage = .floats(a)
        case .doubles(var a):
            storage = .ints([])
            compact(&a)
            storage = .doubles(a)
        case .fixed(let w, var a):
            storage = .ints([])
            compact(&a, width: w)
            storage = .fixed(width: w, a)
        case .strings(var a):
            storage = .ints([])
            compact(&a)
            storage = .strings(a)
        case .blobs(var a):
            storage = .ints([])
            compact(&a)
            storage = .blobs(a)
        case .values(var a):
            storage = .ints([])
            compact(&a)
            storage = .values(a)
        case .lists(var a):
            storage = .ints([])
            compact(&a)
            storage = .lists(a)
        case .maps(var a):
            storage = .ints([])
            compact(&a)
            storage = .maps(a)
        }
        if var v = valid {
            valid = nil
            compact(&v)
            valid = v
        }
        count -= sortedIndices.count
    }

    /// Appends all rows of `other` (same column).
    package mutating func append(contentsOf other: ColumnBuffer) {
        switch (storage, other.storage) {
        case (.ints(var a), .ints(let b)): storage = .ints([]); a += b; storage = .ints(a)
        case (.floats(var a), .floats(let b)): storage = .ints([]); a += b; storage = .floats(a)
        case (.doubles(var a), .doubles(let b)): storage = .ints([]); a += b; storage = .doubles(a)
        case (.fixed(let w, var a), .fixed(_, let b)): storage = .ints([]); a += b; storage = .fixed(width: w, a)
        case (.strings(var a), .strings(let b)): storage = .ints([]); a += b; storage = .strings(a)
        case (.blobs(var a), .blobs(let b)): storage = .ints([]); a += b; storage = .blobs(a)
        case (.values(var a), .values(let b)): storage = .ints([]); a += b; storage = .values(a)
        case (.lists(var a), .lists(let b)): storage = .ints([]); a += b; storage = .lists(a)
        case (.maps(var a), .maps(let b)): storage = .ints([]); a += b; storage = .maps(a)
        default: preconditionFailure("appending a column of another type")
        }
        if valid != nil { valid! += other.valid ?? [Bool](repeating: true, count: other.count) }
        count += other.count
    }

    /// Builds a buffer from already-decoded parts (used by the segment decoder).
    package static func make(type: ColumnType, nullable: Bool, isList: Bool, storage: Storage, valid: [Bool]?, count: Int) -> ColumnBuffer {
        var b = ColumnBuffer(type: type, nullable: nullable, isList: isList)
        b.storage = storage
        b.valid = (nullable && !b.isCollection) ? (valid ?? [Bool](repeating: true, count: count)) : nil
        b.count = count
        return b
    }

    // MARK: value ↔ lane conversions

    @inline(__always)
    static func int(_ v: StorageValue) -> Int64 {
        switch v {
        case .int(let i): i
        case .bool(let b): b ? 1 : 0
        case .link(let k): k.rawValue
        default: 0
        }
    }

    @inline(__always)
    static func decodeInt(_ raw: Int64, _ type: ColumnType) -> StorageValue {
        switch type {
        case .bool: .bool(raw != 0)
        case .link: .link(ObjectKey(raw))
        default: .int(raw)
        }
    }

    static func fixedBytes(_ v: StorageValue, width: Int) -> [UInt8] {
        var w = ByteWriter(capacity: width)
        switch v {
        case .timestamp(let s, let n):
            w.i64(s)
            w.i32(n)
        case .objectId(let b): w.append(b)
        case .uuid(let u):
            let t = u.uuid
            w.append([t.0, t.1, t.2, t.3, t.4, t.5, t.6, t.7, t.8, t.9, t.10, t.11, t.12, t.13, t.14, t.15])
        case .decimal128(let lo, let hi):
            w.u64(lo)
            w.u64(hi)
        default: break
        }
        var out = w.bytes
        if out.count < width { out += [UInt8](repeating: 0, count: width - out.count) }
        return Array(out.prefix(width))
    }

    static func decodeFixed(_ b: [UInt8], _ type: ColumnType) -> StorageValue {
        func u64(_ o: Int) -> UInt64 { (0..<8).reduce(UInt64(0)) { $0 | UInt64(b[o + $1]) << (8 * UInt64($1)) } }
        func u32(_ o: Int) -> UInt32 { (0..<4).reduce(UInt32(0)) { $0 | UInt32(b[o + $1]) << (8 * UInt32($1)) } }
        switch type {
        case .timestamp:
            return .timestamp(seconds: Int64(bitPattern: u64(0)), nanoseconds: Int32(bitPattern: u32(8)))
        case .objectId: return .objectId(b)
        case .uuid:
            return .uuid(UUID(uuid: (b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7], b[8], b[9], b[10], b[11], b[12], b[13], b[14], b[15])))
        case .decimal128: return .decimal128(low: u64(0), high: u64(8))
        default: return .null
        }
    }
}

/// What a column accepts (its type, nullability and collection kind), checked value by value
/// without a buffer: inserts validate each row against their table's rules.
package struct ValueRule: Sendable, Equatable {
    let type: ColumnType
    let nullable: Bool
    let isList: Bool
    let isSet: Bool
    let isMap: Bool

    package init(type: ColumnType, nullable: Bool, isList: Bool, isSet: Bool, isMap: Bool) {
        self.type = type
        self.nullable = nullable
        self.isList = isList
        self.isSet = isSet
        self.isMap = isMap
    }

    /// The rule of `column`.
    package init(_ column: ColumnSchema) {
        self.init(type: column.type, nullable: column.isNullable, isList: column.isList, isSet: column.isSet, isMap: column.isMap)
    }

    /// Throws `.typeMismatch` (or `.notFound` for a negative link key) unless `value` fits. A
    /// scalar that fits (what most inserts give) is accepted inline, without the column's name,
    /// which only the messages use.
    @inline(__always)
    package func validate(_ value: StorageValue, column: @autoclosure () -> String) throws {
        if acceptsScalar(value) { return }
        try validateFully(value, column: column())
    }

    /// Whether `value` is a scalar this column takes.
    @inline(__always)
    private func acceptsScalar(_ value: StorageValue) -> Bool {
        guard !isList && !isMap && type != .link && type != .mixed else { return false }
        return value.isNull ? nullable : value.fits(type)
    }

    private func validateFully(_ value: StorageValue, column: String) throws {
        if type == .link || type == .mixed, let key = ColumnBuffer.negativeLinkKey(value) {
            throw StorageError(.notFound, "column '\(column)' holds a link to object key \(key); object keys are never negative")
        }
        if isList {
            guard case .list(let elems) = value else {
                throw StorageError(.typeMismatch, "column '\(column)' is a list of \(type); got \(value)")
            }
            for e in elems where !(e.fits(type) || (e.isNull && nullable)) {
                throw StorageError(.typeMismatch, "list '\(column)' holds \(nullable ? "optional " : "")\(type); got \(e)")
            }
            if isSet, let e = ColumnBuffer.firstDuplicate(elems) {
                throw StorageError(.typeMismatch, "set '\(column)' holds \(e) more than once")
            }
            return
        }
        if isMap {
            guard case .map(let entries) = value else {
                throw StorageError(.typeMismatch, "column '\(column)' is a map of \(type); got \(value)")
            }
            for (k, e) in entries where !(e.fits(type) || (e.isNull && nullable)) {
                throw StorageError(.typeMismatch, "map '\(column)' holds \(nullable ? "optional " : "")\(type); got \(e) at key \"\(k)\"")
            }
            return
        }
        if value.isNull {
            guard nullable else { throw StorageError(.typeMismatch, "column '\(column)' is not nullable") }
            return
        }
        guard value.fits(type) else {
            throw StorageError(.typeMismatch, "column '\(column)' holds \(type); got \(value)")
        }
    }
}
