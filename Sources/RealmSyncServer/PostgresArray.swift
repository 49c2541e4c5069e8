import Foundation
import NIOCore
import PostgresNIO
import RealmSyncProtocol

/// A one-dimensional PostgreSQL array in the binary format (`array_send`: dimensions, a null
/// flag, the element type, each dimension's length and lower bound, then each element as an
/// `int32` length, -1 for null, and its bytes), read element by element.
///
/// A bootstrap reads a range of a table as one array per column (`array_agg`), and writes each
/// array straight into a column of a `BOOTSTRAP_TABLE` message: the common column types without a
/// Swift value per cell, the others through ``SQLMapping/value(_:tag:nanoseconds:link:)``.
/// PostgresNIO's own array decoding takes no null elements, which a column may hold.
struct PostgresArray {
    private var buffer: ByteBuffer
    /// The element type.
    let elementType: PostgresDataType
    /// How many elements the array has (0 for null).
    let count: Int

    /// The array in `bytes`; null (no bytes) reads as an empty array.
    init(_ bytes: ByteBuffer?) throws {
        guard var b = bytes else {
            (buffer, elementType, count) = (ByteBuffer(), .null, 0)
            return
        }
        guard let dimensions = b.readInteger(as: Int32.self), b.readInteger(as: Int32.self) != nil,
            let type = b.readInteger(as: UInt32.self)
        else { throw SyncServerError("a truncated array from PostgreSQL") }
        var n: Int32 = 0
        if dimensions == 1 {
            guard let length = b.readInteger(as: Int32.self), length >= 0, b.readInteger(as: Int32.self) != nil else {
                throw SyncServerError("a truncated array from PostgreSQL")
            }
            n = length
        } else if dimensions != 0 {
            throw SyncServerError("an array of \(dimensions) dimensions from PostgreSQL")
        }
        (buffer, elementType, count) = (b, PostgresDataType(type), Int(n))
    }

    /// The next element's bytes; nil for a null element.
    mutating func next() throws -> ByteBuffer? {
        guard let length = buffer.readInteger(as: Int32.self) else { throw SyncServerError("a truncated array from PostgreSQL") }
        if length < 0 { return nil }
        guard let bytes = buffer.readSlice(length: Int(length)) else { throw SyncServerError("a truncated array from PostgreSQL") }
        return bytes
    }

    /// Writes the first `rows` elements as values of a column of `tag` (§4.3), null elements as
    /// null; with `linkTarget`, as links to that class (the elements are its primary keys).
    mutating func write(tag: UInt8, rows: Int, linkTarget: String? = nil, into w: inout WireWriter) throws {
        guard count == rows else { throw SyncServerError("arrays of \(count) and \(rows) elements in one bootstrap row") }
        for _ in 0..<rows {
            guard var e = try next() else {
                w.u8(0)
                continue
            }
            if let linkTarget {
                w.u8(12)
                w.string(linkTarget)
            }
            switch (tag, e.readableBytes) {
            case (1, 1), (2, 1): w.u8(e.readInteger(as: UInt8.self)! != 0 ? 2 : 1)
            case (3, 8):
                w.u8(3)
                w.svarint(e.readInteger(as: Int64.self)!)
            case (5, 8):
                w.u8(5)
                w.u64(e.readInteger(as: UInt64.self)!)
            case (6, _): w.stringValue(utf8: e.readableBytesView)
            case (7, _): w.binaryValue(e.readableBytesView)
            case (9, 12):
                w.u8(9)
                w.raw(Array(e.readableBytesView))
            default:
                let cell = PostgresCell(bytes: e, dataType: elementType, format: .binary, columnName: "", columnIndex: 0)
                w.value(try SQLMapping.value(cell, tag: tag))
            }
        }
    }

    /// Writes the first `rows` elements, `timestamptz`s, as timestamp values (§4.3) with the
    /// nanoseconds of `nanoseconds`, the companion column's array.
    mutating func writeTimestamps(nanoseconds: inout PostgresArray, rows: Int, into w: inout WireWriter) throws {
        guard count == rows, nanoseconds.count == rows else {
            throw SyncServerError("arrays of \(count), \(nanoseconds.count) and \(rows) elements in one bootstrap row")
        }
        for _ in 0..<rows {
            let date = try next()
            let ns = try nanoseconds.next()
            let cell = PostgresCell(bytes: date, dataType: elementType, format: .binary, columnName: "", columnIndex: 0)
            let nsCell = PostgresCell(bytes: ns, dataType: nanoseconds.elementType, format: .binary, columnName: "", columnIndex: 0)
            w.value(try SQLMapping.value(cell, tag: 8, nanoseconds: nsCell))
        }
    }
}
