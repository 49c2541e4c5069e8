/// The serialization of one value of a mixed column (Spec/FORMAT.md §4.7): an item of the bytes lane
/// holding a tag byte and the value's little-endian payload. Null is the validity bitmap's business
/// (its item is empty), never a tag.
package enum MixedValue {
    /// The tag byte of an item; raw values are stored in the file.
    enum Tag: UInt8, CustomStringConvertible {
        case int = 1
        case bool = 2
        case float = 3
        case double = 4
        case string = 5
        case binary = 6
        case timestamp = 7
        case objectId = 8
        case uuid = 9
        case decimal128 = 10
        case typedLink = 11

        /// The exact payload length, or nil when the payload is the rest of the item (string, binary).
        var payloadLength: Int? {
            switch self {
            case .int, .double: 8
            case .bool: 1
            case .float: 4
            case .string, .binary: nil
            case .timestamp, .objectId, .typedLink: 12
            case .uuid, .decimal128: 16
            }
        }

        var description: String {
            switch self {
            case .int: "int"
            case .bool: "bool"
            case .float: "float"
            case .double: "double"
            case .string: "string"
            case .binary: "binary"
            case .timestamp: "timestamp"
            case .objectId: "objectId"
            case .uuid: "uuid"
            case .decimal128: "decimal128"
            case .typedLink: "typed link"
            }
        }
    }

    /// The item of `value`: empty for null. `value` must fit a mixed column (see
    /// ``ColumnBuffer/validate(_:column:)``).
    static func encode(_ value: StorageValue) -> [UInt8] {
        var w = ByteWriter(capacity: 17)
        switch value {
        case .null: break
        case .int(let v):
            w.u8(Tag.int.rawValue)
            w.i64(v)
        case .bool(let b):
            w.u8(Tag.bool.rawValue)
            w.u8(b ? 1 : 0)
        case .float(let f):
            w.u8(Tag.float.rawValue)
            w.u32(f.bitPattern)
        case .double(let d):
            w.u8(Tag.double.rawValue)
            w.u64(d.bitPattern)
        case .string(let s):
            w.u8(Tag.string.rawValue)
            w.append(contentsOf: s.utf8)
        case .binary(let b):
            w.u8(Tag.binary.rawValue)
            w.append(b)
        case .timestamp:
            w.u8(Tag.timestamp.rawValue)
            w.append(ColumnBuffer.fixedBytes(value, width: 12))
        case .objectId(let b):
            w.u8(Tag.objectId.rawValue)
            w.append(b)
        case .uuid:
            w.u8(Tag.uuid.rawValue)
            w.append(ColumnBuffer.fixedBytes(value, width: 16))
        case .decimal128:
            w.u8(Tag.decimal128.rawValue)
            w.append(ColumnBuffer.fixedBytes(value, width: 16))
        case .typedLink(let table, let key):
            w.u8(Tag.typedLink.rawValue)
            w.u32(table)
            w.i64(key.rawValue)
        case .link, .list, .map:
            preconditionFailure("\(value) is not a mixed value; validate it before encoding")
        }
        return w.bytes
    }

    /// Decodes the non-null item of `length` bytes at `offset` of `blob`, checking its tag, its exact
    /// payload length, a bool's byte and a string's UTF-8.
    /// - Throws: ``StorageError/Code/corrupted`` with the item's file offset.
    static func decode(_ blob: ByteView, _ offset: Int, _ length: Int) throws -> StorageValue {
        let item = try blob.slice(offset, length, "mixed item")
        guard length >= 1 else { throw StorageError.corrupted("a non-null mixed item is empty (no tag)", at: item.origin) }
        let raw = try item.u8(0)
        guard let tag = Tag(rawValue: raw) else { throw StorageError.corrupted("unknown mixed tag \(raw)", at: item.origin) }
        let n = length - 1
        if let expected = tag.payloadLength, n != expected {
            throw StorageError.corrupted("mixed \(tag) item has \(n) payload bytes; expected \(expected)", at: item.origin)
        }
        switch tag {
        case .int: return .int(try item.i64(1))
        case .bool:
            let b = try item.u8(1)
            guard b <= 1 else { throw StorageError.corrupted("mixed bool byte \(b) is neither 0 nor 1", at: item.origin + 1) }
            return .bool(b == 1)
        case .float: return .float(Float(bitPattern: try item.u32(1)))
        case .double: return .double(Double(bitPattern: try item.u64(1)))
        case .string:
            guard let s = try item.validatedString(1, n) else {
                throw StorageError.corrupted("mixed string is not valid UTF-8", at: item.origin + 1)
            }
            return .string(s)
        case .binary: return .binary(try item.bytes(1, n))
        case .timestamp: return .timestamp(seconds: try item.i64(1), nanoseconds: try item.i32(9))
        case .objectId: return .objectId(try item.bytes(1, 12))
        case .uuid: return ColumnBuffer.decodeFixed(try item.bytes(1, 16), .uuid)
        case .decimal128: return .decimal128(low: try item.u64(1), high: try item.u64(9))
        case .typedLink: return .typedLink(table: try item.u32(1), key: ObjectKey(try item.i64(5)))
        }
    }
}
