import RealmStorage

/// A writer of the Thrift compact protocol, the encoding of Parquet's page headers and footer.
///
/// Written by hand because no kept Swift package writes Thrift (swift-protobuf is Protocol
/// Buffers, a different encoding). Only what Parquet's structures use is here: structs, lists of
/// structs, strings and integers, and booleans. Fields are written in increasing id order, as the
/// short form of the field header requires.
///
/// ```swift
/// var w = ThriftCompactWriter()
/// w.i32(1, 0)          // field 1: i32 0
/// w.beginStruct(5)     // field 5: a struct
/// w.i32(1, 10)
/// w.endStruct()
/// w.stop()             // the end of the outer struct
/// ```
package struct ThriftCompactWriter {
    /// The bytes written so far.
    package private(set) var bytes: [UInt8] = []
    /// The id of the last field written in each open struct, innermost last.
    private var lastField: [Int16] = [0]

    /// The compact protocol's type codes.
    package enum TypeCode: UInt8 {
        case booleanTrue = 1, booleanFalse = 2, byte = 3, i16 = 4, i32 = 5, i64 = 6, double = 7, binary = 8
        case list = 9, set = 10, map = 11, structure = 12
    }

    package init() {}

    /// A field header: the id as a delta from the previous field's when it is 1 to 15, else in full.
    private mutating func header(_ id: Int16, _ type: TypeCode) {
        let delta = Int(id) - Int(lastField[lastField.count - 1])
        if delta > 0 && delta <= 15 {
            bytes.append(UInt8(delta) << 4 | type.rawValue)
        } else {
            bytes.append(type.rawValue)
            varint(zigzag(Int64(id)))
        }
        lastField[lastField.count - 1] = id
    }

    private mutating func varint(_ value: UInt64) { appendULEB128(value, to: &bytes) }

    private func zigzag(_ v: Int64) -> UInt64 { UInt64(bitPattern: (v << 1) ^ (v >> 63)) }

    /// An i32 field (the type of Parquet's enums too).
    package mutating func i32(_ id: Int16, _ value: Int32) {
        header(id, .i32)
        varint(zigzag(Int64(value)))
    }

    /// An i64 field.
    package mutating func i64(_ id: Int16, _ value: Int64) {
        header(id, .i64)
        varint(zigzag(value))
    }

    /// A boolean field: its value is the type code of the header.
    package mutating func bool(_ id: Int16, _ value: Bool) { header(id, value ? .booleanTrue : .booleanFalse) }

    /// A string (binary) field.
    package mutating func string(_ id: Int16, _ value: String) {
        header(id, .binary)
        rawString(value)
    }

    private mutating func rawString(_ value: String) {
        varint(UInt64(value.utf8.count))
        bytes.append(contentsOf: value.utf8)
    }

    /// Opens a struct field; write its fields, then ``endStruct()``. A union is a struct with one
    /// field set.
    package mutating func beginStruct(_ id: Int16) {
        header(id, .structure)
        lastField.append(0)
    }

    /// Closes the innermost struct.
    package mutating func endStruct() {
        bytes.append(0)
        lastField.removeLast()
    }

    /// An empty struct field (the members of Parquet's unions that carry no data).
    package mutating func emptyStruct(_ id: Int16) {
        beginStruct(id)
        endStruct()
    }

    /// Ends the outermost struct (the one the writer started in).
    package mutating func stop() { bytes.append(0) }

    /// A list header: the element count and type.
    private mutating func listHeader(_ id: Int16, _ count: Int, _ element: TypeCode) {
        header(id, .list)
        if count < 15 {
            bytes.append(UInt8(count) << 4 | element.rawValue)
        } else {
            bytes.append(0xF0 | element.rawValue)
            varint(UInt64(count))
        }
    }

    /// A list of i32 (of Parquet enums, such as encodings).
    package mutating func i32List(_ id: Int16, _ values: [Int32]) {
        listHeader(id, values.count, .i32)
        for v in values { varint(zigzag(Int64(v))) }
    }

    /// A list of strings.
    package mutating func stringList(_ id: Int16, _ values: [String]) {
        listHeader(id, values.count, .binary)
        for v in values { rawString(v) }
    }

    /// A list of structs, each written by `element`, which writes the fields of one struct.
    package mutating func structList<T>(_ id: Int16, _ values: [T], _ element: (inout ThriftCompactWriter, T) -> Void) {
        listHeader(id, values.count, .structure)
        for v in values {
            lastField.append(0)
            element(&self, v)
            bytes.append(0)
            lastField.removeLast()
        }
    }
}
