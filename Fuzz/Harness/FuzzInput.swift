import Foundation
import RealmStorage

/// Reads a fuzz input front to back as small numbers, choices and values; past the end every read
/// gives zero, so any byte string is a complete program.
struct FuzzInput {
    let bytes: [UInt8]
    var offset = 0

    init(_ bytes: [UInt8]) { self.bytes = bytes }

    var isAtEnd: Bool { offset >= bytes.count }

    mutating func u8() -> UInt8 {
        guard offset < bytes.count else { return 0 }
        defer { offset += 1 }
        return bytes[offset]
    }

    mutating func u16() -> UInt16 { UInt16(u8()) | UInt16(u8()) << 8 }
    mutating func u32() -> UInt32 { UInt32(u16()) | UInt32(u16()) << 16 }
    mutating func u64() -> UInt64 { UInt64(u32()) | UInt64(u32()) << 32 }

    /// A number in `0..<n` (n > 0).
    mutating func below(_ n: Int) -> Int { Int(u8()) % n }

    mutating func bool() -> Bool { u8() & 1 != 0 }

    /// Up to `n` bytes (fewer at the end of the input).
    mutating func bytes(_ n: Int) -> [UInt8] {
        let k = max(0, min(n, bytes.count - offset))
        defer { offset += k }
        return Array(bytes[offset..<offset + k])
    }

    /// An integer that is small most of the time and any 64-bit value sometimes.
    mutating func int() -> Int64 {
        switch u8() % 4 {
        case 0: Int64(Int8(bitPattern: u8()))
        case 1: Int64(Int16(bitPattern: u16()))
        case 2: Int64(bitPattern: u64())
        default: Int64(u8() % 8)
        }
    }

    /// A short string from the input's bytes (invalid UTF-8 repaired), often from a tiny alphabet
    /// so that values repeat (dictionary encoding) and map keys collide.
    mutating func string() -> String {
        let n = below(12)
        if bool() { return (0..<n).map { _ in Self.alphabet[below(Self.alphabet.count)] }.joined() }
        return String(decoding: bytes(n), as: UTF8.self)
    }

    /// "é" twice: precomposed and as "e" + combining acute (canonically equivalent, different bytes).
    static let alphabet = ["a", "b", "\u{e9}", "e\u{301}"]

    /// A value that a column of `type` holds (nulls are chosen by the caller).
    mutating func value(_ type: ColumnType) -> StorageValue {
        switch type {
        case .int: .int(int())
        case .bool: .bool(bool())
        case .float: .float(bool() ? Float(int()) : Float(bitPattern: u32()))
        case .double: .double(bool() ? Double(int()) : Double(bitPattern: u64()))
        case .string: .string(string())
        case .binary: .binary(bytes(below(20)))
        case .timestamp: .timestamp(seconds: int(), nanoseconds: Int32(u32() % 1_000_000_000))
        case .objectId: .objectId((0..<12).map { _ in u8() })
        case .uuid:
            .uuid(UUID(uuid: (u8(), u8(), u8(), u8(), u8(), u8(), u8(), u8(), u8(), u8(), u8(), u8(), u8(), u8(), u8(), u8())))
        case .decimal128: .decimal128(low: u64(), high: u64())
        case .link: .link(ObjectKey(int()))
        case .mixed:
            switch u8() % 12 {
            case 0: .null
            case 1: .int(int())
            case 2: .bool(bool())
            case 3: value(.float)
            case 4: value(.double)
            case 5: .string(string())
            case 6: value(.binary)
            case 7: value(.timestamp)
            case 8: value(.objectId)
            case 9: value(.uuid)
            case 10: value(.decimal128)
            default: .typedLink(table: u32() % 4, key: ObjectKey(int()))
            }
        }
    }
}
