/// Appends the primitive fields of Spec/SYNC.md §1 ("Conventions") to a message being built.
public struct WireWriter: Sendable {
    /// The bytes written so far.
    public internal(set) var bytes: [UInt8] = []

    /// An empty message.
    public init() {}

    /// One byte.
    public mutating func u8(_ v: UInt8) { bytes.append(v) }

    /// A little-endian `u64`.
    public mutating func u64(_ v: UInt64) {
        for i in 0..<8 { bytes.append(UInt8(truncatingIfNeeded: v >> UInt64(8 * i))) }
    }

    /// An unsigned LEB128 integer.
    public mutating func uvarint(_ v: UInt64) {
        var x = v
        while x >= 0x80 {
            bytes.append(UInt8(x & 0x7F) | 0x80)
            x >>= 7
        }
        bytes.append(UInt8(x))
    }

    /// A signed integer, zigzag-encoded then LEB128.
    public mutating func svarint(_ v: Int64) { uvarint(UInt64(bitPattern: (v << 1) ^ (v >> 63))) }

    /// A count of items, as `uvarint`.
    public mutating func count(_ n: Int) { uvarint(UInt64(n)) }

    /// Raw bytes of a fixed length (no length prefix).
    public mutating func raw(_ b: [UInt8]) { bytes.append(contentsOf: b) }

    /// A `uvarint` length and the bytes.
    public mutating func data(_ b: [UInt8]) {
        count(b.count)
        bytes.append(contentsOf: b)
    }

    /// A `uvarint` byte length and the UTF-8 bytes.
    public mutating func string(_ s: String) {
        count(s.utf8.count)
        bytes.append(contentsOf: s.utf8)
    }
}

/// Reads the primitive fields of a received message; every read is bounded by the message and
/// throws ``WireError`` instead of running past it.
public struct WireReader: Sendable {
    let bytes: [UInt8]
    /// The offset of the next byte to read.
    public private(set) var offset = 0
    /// The largest count of items a reader accepts before reading them (a guard against a count
    /// that would make it allocate far more than the message holds).
    public static let maximumCount = 1 << 26

    /// A reader of `bytes`, from the first.
    public init(_ bytes: [UInt8]) { self.bytes = bytes }

    /// Whether every byte was read.
    public var isAtEnd: Bool { offset == bytes.count }

    func error(_ reason: String) -> WireError { WireError(offset: offset, reason) }

    /// One byte.
    public mutating func u8() throws(WireError) -> UInt8 {
        guard offset < bytes.count else { throw error("the message ends before a byte") }
        defer { offset += 1 }
        return bytes[offset]
    }

    /// A little-endian `u64`.
    public mutating func u64() throws(WireError) -> UInt64 {
        guard bytes.count - offset >= 8 else { throw error("the message ends inside a u64") }
        var v: UInt64 = 0
        for i in 0..<8 { v |= UInt64(bytes[offset + i]) << UInt64(8 * i) }
        offset += 8
        return v
    }

    /// An unsigned LEB128 integer of at most 10 bytes, the tenth at most 1.
    public mutating func uvarint() throws(WireError) -> UInt64 {
        var v: UInt64 = 0
        for i in 0..<10 {
            let b = try u8()
            guard i < 9 || b <= 1 else { throw WireError(offset: offset - 1, "a uvarint longer than 64 bits") }
            v |= UInt64(b & 0x7F) << UInt64(7 * i)
            if b < 0x80 { return v }
        }
        throw WireError(offset: offset - 1, "a uvarint longer than 10 bytes")
    }

    /// A zigzag-encoded signed integer.
    public mutating func svarint() throws(WireError) -> Int64 {
        let u = try uvarint()
        return Int64(bitPattern: (u >> 1) ^ (0 &- (u & 1)))
    }

    /// A count of items, checked against ``maximumCount`` and against the bytes left (each item
    /// takes at least `minimumItemSize` bytes).
    public mutating func count(minimumItemSize: Int = 1) throws(WireError) -> Int {
        let at = offset
        let n = try uvarint()
        guard n <= UInt64(Self.maximumCount), Int(n) * minimumItemSize <= bytes.count - offset else {
            throw WireError(offset: at, "a count of \(n) items does not fit the message")
        }
        return Int(n)
    }

    /// `n` raw bytes.
    public mutating func raw(_ n: Int) throws(WireError) -> [UInt8] {
        guard n >= 0, bytes.count - offset >= n else { throw error("the message ends inside \(n) bytes") }
        defer { offset += n }
        return Array(bytes[offset..<offset + n])
    }

    /// A `uvarint` length and that many bytes.
    public mutating func data() throws(WireError) -> [UInt8] { try raw(try count()) }

    /// A `uvarint` length and that many bytes of valid UTF-8.
    public mutating func string() throws(WireError) -> String {
        let at = offset
        let n = try count()
        guard bytes.count - offset >= n else { throw error("the message ends inside \(n) bytes") }
        // Validated in place: no copy of the bytes before the string's own.
        guard let s = String(validating: bytes[offset..<offset + n], as: UTF8.self) else {
            throw WireError(offset: at, "a string that is not valid UTF-8")
        }
        offset += n
        return s
    }
}

/// Lower-case hexadecimal text of bytes (client file identities in order keys, ObjectIds in JSON):
/// two digits a byte, without Foundation's formatter, which cost a visible share of an upload's
/// time on the server.
public enum Hex {
    private static let digits = Array("0123456789abcdef".utf8)

    /// `bytes` as lower-case hexadecimal digits.
    public static func string(_ bytes: some Sequence<UInt8>) -> String {
        var out: [UInt8] = []
        out.reserveCapacity(bytes.underestimatedCount * 2)
        for b in bytes {
            out.append(digits[Int(b >> 4)])
            out.append(digits[Int(b & 0x0F)])
        }
        return String(decoding: out, as: UTF8.self)
    }
}
