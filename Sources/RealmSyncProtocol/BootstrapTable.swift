/// Objects of one class in a bootstrap, column by column (Spec/SYNC.md §4, `BOOTSTRAP_TABLE`): the
/// primary keys, one column of values per property sent as a column, and each object's other
/// properties (collections, embedded objects) as property states.
///
/// A table carries the same objects as ``ObjectState``s would, in fewer bytes (a property's name
/// once, not once per object) and with less work at both ends: a server can write each column
/// from the column PostgreSQL returns, and a client insert each object from its row.
public struct BootstrapTable: Equatable, Hashable, Sendable {
    public var className: String
    /// The properties sent as columns, in column order.
    public var properties: [String]
    /// Each object's primary key; the table has one row per key.
    public var keys: [SyncValue]
    /// One column per property of ``properties``, each with one value per row. A null of a
    /// property that is not optional (nor a link, nor mixed) means "no value": a new object keeps
    /// its default, an object the client holds keeps its value.
    public var columns: [[SyncValue]]
    /// Each row's other properties, or empty when no row has any.
    public var others: [[PropertyState]]

    /// A table of `className`; `columns` (one per property) and `others` (empty, or one per key)
    /// must have a value per key.
    public init(
        className: String, properties: [String], keys: [SyncValue], columns: [[SyncValue]], others: [[PropertyState]] = []
    ) {
        self.className = className
        self.properties = properties
        self.keys = keys
        self.columns = columns
        self.others = others
    }

    /// The objects of the table, one per row: the column values (nulls included) then the others.
    public var objects: [ObjectState] {
        keys.indices.map { r in
            ObjectState(
                className, keys[r],
                properties.indices.map { PropertyState(properties[$0], columns[$0][r]) } + (others.isEmpty ? [] : others[r]))
        }
    }
}

/// Writes a `BOOTSTRAP_TABLE` message (Spec/SYNC.md §4) in order: the header (``init``), then
/// `rows` key values, then `rows` values for each property in turn (written with ``writer``'s value
/// methods), then ``finish(others:)``. The writer checks nothing of what the caller writes between.
public struct BootstrapTableEncoder: Sendable {
    /// The message so far; values go in through its value methods.
    public var writer = WireWriter()

    /// Starts the message of a table of `rows` objects of `className`, with `properties` as columns.
    public init(querySetVersion: UInt64, serverVersion: UInt64, className: String, properties: [String], rows: Int) {
        writer.u8(SyncMessage.bootstrapTableType)
        writer.uvarint(querySetVersion)
        writer.uvarint(serverVersion)
        writer.string(className)
        writer.count(properties.count)
        for p in properties { writer.string(p) }
        writer.count(rows)
    }

    /// Ends the message with each row's other properties (nil or empty: none) and returns it.
    public mutating func finish(others: [[PropertyState]]?) -> [UInt8] {
        if let others, !others.isEmpty {
            writer.u8(1)
            for states in others { writer.propertyStates(states) }
        } else {
            writer.u8(0)
        }
        return writer.bytes
    }
}

extension WireWriter {
    /// A string value (tag 6) from its UTF-8 bytes, which the caller vouches for.
    public mutating func stringValue(utf8: some Collection<UInt8>) {
        u8(6)
        count(utf8.count)
        bytes.append(contentsOf: utf8)
    }

    /// A binary value (tag 7).
    public mutating func binaryValue(_ b: some Collection<UInt8>) {
        u8(7)
        count(b.count)
        bytes.append(contentsOf: b)
    }
}

extension WireReader {
    /// The fields of a `BOOTSTRAP_TABLE` after its type byte.
    mutating func bootstrapTable() throws(WireError) -> (querySetVersion: UInt64, serverVersion: UInt64, table: BootstrapTable) {
        let querySet = try uvarint()
        let version = try uvarint()
        let className = try string()
        let n = try count()
        var properties: [String] = []
        properties.reserveCapacity(n)
        for _ in 0..<n { properties.append(try string()) }
        // Every row takes at least one byte in the key column and in each property's.
        let rows = try count(minimumItemSize: 1 + n)
        func column() throws(WireError) -> [SyncValue] {
            var values: [SyncValue] = []
            values.reserveCapacity(rows)
            for _ in 0..<rows { values.append(try value()) }
            return values
        }
        let keys = try column()
        var columns: [[SyncValue]] = []
        columns.reserveCapacity(n)
        for _ in 0..<n { columns.append(try column()) }
        var others: [[PropertyState]] = []
        if try flag() {
            others.reserveCapacity(rows)
            for _ in 0..<rows { others.append(try propertyStates()) }
        }
        return (
            querySet, version, BootstrapTable(className: className, properties: properties, keys: keys, columns: columns, others: others)
        )
    }
}
