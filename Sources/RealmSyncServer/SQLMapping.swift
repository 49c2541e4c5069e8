import Foundation
import NIOCore
import PostgresNIO
import RealmSyncProtocol

/// How synced values are stored in PostgreSQL's typed columns (Spec/SYNC.md §8.1).
enum SQLMapping {
    /// The column type of scalar values tagged `tag` (a link's: its target's primary key's);
    /// nil for values this server does not store in a column yet.
    static func columnType(tag: UInt8) -> String? {
        switch tag {
        case 1, 2: "boolean"
        case 3: "bigint"
        case 4: "real"
        case 5: "double precision"
        case 6: "text"
        case 7: "bytea"
        case 8: "timestamptz"
        case 9: "bytea"
        case 10: "uuid"
        case 11: "numeric"
        case 13, 17: "jsonb"
        default: nil
        }
    }

    /// The column type of property `p`: a collection's is `jsonb`, a link's its target's key's.
    static func columnType(of p: SyncClass.Property, keyTags: [String: UInt8]) -> String? {
        if p.flags & 0b1110 != 0 { return "jsonb" }
        return columnType(tag: p.valueTag == 12 ? keyTags[p.linkTarget] ?? 0 : p.valueTag)
    }

    /// The tags a primary key may have: int, string, objectId, uuid.
    static let primaryKeyTags: Set<UInt8> = [3, 6, 9, 10]

    /// `name` as a quoted SQL identifier.
    static func quoted(_ name: String) -> String {
        // Names are checked (no quotes in them); the replacement is for safety, and skipped when
        // there is nothing to replace (it was a visible share of an upload's time).
        "\"" + (name.utf8.contains(UInt8(ascii: "\"")) ? name.replacingOccurrences(of: "\"", with: "\"\"") : name) + "\""
    }

    /// Whether `name` can name a class or property: a letter or `_`, then letters, digits and
    /// `_`, at most 56 bytes (PostgreSQL's identifiers hold 63, and a companion column adds 4),
    /// and not one of the store's own (`_sync…`, `_id`).
    static func isValidName(_ name: String) -> Bool {
        guard let first = name.unicodeScalars.first, name.utf8.count <= 56, !name.hasPrefix("_sync") else { return false }
        func letter(_ c: Unicode.Scalar) -> Bool { c.isASCII && (c.properties.isAlphabetic || c == "_") }
        return letter(first) && name.unicodeScalars.allSatisfy { letter($0) || ("0"..."9").contains($0) }
    }

    /// The companion column of a timestamp property, holding its nanoseconds within the second
    /// (a `timestamptz` keeps microseconds).
    static func nanosecondsColumn(_ property: String) -> String { property + "__ns" }

    /// Whether `value` fits a column of `tag` (optional columns also take null).
    static func fits(_ value: SyncValue, tag: UInt8, optional: Bool, linkTarget: String, linkKeyTag: UInt8?) -> Bool {
        switch value {
        case .null: return optional || tag == 12
        case .bool: return tag == 1 || tag == 2
        case .link(let target, let key): return tag == 12 && target == linkTarget && key.tag == linkKeyTag
        case .objectId(let b): return tag == 9 && b.count == 12
        case .uuid(let b): return tag == 10 && b.count == 16
        case .timestamp(_, let ns): return tag == 8 && ns < 1_000_000_000
        default: return value.tag == tag
        }
    }

    /// Appends `value` to `binds` as a column of `tag` stores it; a timestamp also appends its
    /// nanoseconds.
    static func bind(_ value: SyncValue, tag: UInt8, into binds: inout PostgresBindings) throws {
        switch value {
        case .null:
            binds.appendNull()
            if tag == 8 { binds.appendNull() }
        case .bool(let b): binds.append(b)
        case .int(let i): binds.append(i)
        case .float(let f): binds.append(f)
        case .double(let d): binds.append(d)
        case .string(let s): binds.append(s)
        case .binary(let b), .objectId(let b): binds.append(ByteBuffer(bytes: b))
        case .uuid(let b): binds.append(uuid(b))
        case .timestamp(let s, let ns):
            binds.append(Date(timeIntervalSince1970: Double(s) + Double(ns / 1000) / 1e6))
            binds.append(Int32(ns))
        case .link(_, let key): try bind(key, tag: key.tag, into: &binds)
        default: throw SyncServerError("no column for a value tagged \(value.tag)")
        }
    }

    /// Appends primary keys of `tag` (int, string, objectId or uuid) to `binds` as one array.
    static func bindArray(_ keys: [SyncValue], tag: UInt8, into binds: inout PostgresBindings) throws {
        // The instructions were checked (Catalog.check): every key has its class's key type.
        switch tag {
        case 3:
            let ints: [Int64] = keys.compactMap { if case .int(let i) = $0 { return i } else { return nil } }
            binds.append(ints)
        case 6:
            let strings: [String] = keys.compactMap { if case .string(let s) = $0 { return s } else { return nil } }
            binds.append(strings)
        case 9:
            let ids: [ByteBuffer] = keys.compactMap { if case .objectId(let b) = $0 { return ByteBuffer(bytes: b) } else { return nil } }
            binds.append(ids)
        case 10:
            let ids: [UUID] = keys.compactMap { if case .uuid(let b) = $0, b.count == 16 { return uuid(b) } else { return nil } }
            binds.append(ids)
        default: throw SyncServerError("no primary key column for values tagged \(tag)")
        }
    }

    static func uuid(_ b: [UInt8]) -> UUID {
        UUID(uuid: (b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7], b[8], b[9], b[10], b[11], b[12], b[13], b[14], b[15]))
    }

    static func bytes(_ u: UUID) -> [UInt8] {
        let t = u.uuid
        return [t.0, t.1, t.2, t.3, t.4, t.5, t.6, t.7, t.8, t.9, t.10, t.11, t.12, t.13, t.14, t.15]
    }

    /// The value of `cell`, a column of `tag`; for a timestamp, `nanoseconds` is its companion
    /// column's cell. A null column is `.null`.
    static func value(_ cell: PostgresCell, tag: UInt8, nanoseconds: PostgresCell? = nil, link: (target: String, keyTag: UInt8)? = nil)
        throws -> SyncValue
    {
        if let link {
            let key = try value(cell, tag: link.keyTag)
            return key == .null ? .null : .link(class: link.target, primaryKey: key)
        }
        switch tag {
        case 1, 2: return try cell.decode(Bool?.self).map(SyncValue.bool) ?? .null
        case 3: return try cell.decode(Int64?.self).map(SyncValue.int) ?? .null
        case 4: return try cell.decode(Float?.self).map(SyncValue.float) ?? .null
        case 5: return try cell.decode(Double?.self).map(SyncValue.double) ?? .null
        case 6: return try cell.decode(String?.self).map(SyncValue.string) ?? .null
        case 7: return try cell.decode(ByteBuffer?.self).map { .binary(Array($0.readableBytesView)) } ?? .null
        case 9: return try cell.decode(ByteBuffer?.self).map { .objectId(Array($0.readableBytesView)) } ?? .null
        case 10: return try cell.decode(UUID?.self).map { .uuid(bytes($0)) } ?? .null
        case 8:
            guard let date = try cell.decode(Date?.self) else { return .null }
            let seconds = (date.timeIntervalSince1970).rounded(.down)
            let ns =
                try nanoseconds?.decode(Int32?.self).map(UInt32.init) ?? UInt32(((date.timeIntervalSince1970 - seconds) * 1e9).rounded())
            return .timestamp(seconds: Int64(seconds), nanoseconds: ns)
        default: throw SyncServerError("no column for values tagged \(tag)")
        }
    }
}
