/// A value on the wire (Spec/SYNC.md §4.3): a property's value, a primary key, a collection's
/// contents, or an embedded object's properties.
public enum SyncValue: Equatable, Hashable, Sendable {
    case null
    case bool(Bool)
    case int(Int64)
    case float(Float)
    case double(Double)
    case string(String)
    case binary([UInt8])
    /// Seconds since 1970-01-01T00:00:00Z and nanoseconds (below 10^9).
    case timestamp(seconds: Int64, nanoseconds: UInt32)
    /// The 12 bytes of an ObjectId.
    case objectId([UInt8])
    /// The 16 bytes of a UUID.
    case uuid([UInt8])
    /// A Decimal128's low and high 64 bits.
    case decimal128(low: UInt64, high: UInt64)
    /// A link: the target's class and primary key.
    indirect case link(class: String, primaryKey: SyncValue)
    /// An embedded object's properties.
    case embedded([PropertyState])
    case list([SyncValue])
    case set([SyncValue])
    /// A map's entries, in the order sent.
    case map([MapEntry])
    /// A mixed property's value (never a collection or an embedded object).
    indirect case mixed(SyncValue)

    /// One entry of a ``SyncValue/map(_:)``.
    public struct MapEntry: Equatable, Hashable, Sendable {
        public var key: String
        public var value: SyncValue
        /// The entry `key`: `value`.
        public init(_ key: String, _ value: SyncValue) {
            self.key = key
            self.value = value
        }
    }

    /// The tag of Spec/SYNC.md §4.3 this value is sent with.
    public var tag: UInt8 {
        switch self {
        case .null: 0
        case .bool(let b): b ? 2 : 1
        case .int: 3
        case .float: 4
        case .double: 5
        case .string: 6
        case .binary: 7
        case .timestamp: 8
        case .objectId: 9
        case .uuid: 10
        case .decimal128: 11
        case .link: 12
        case .embedded: 13
        case .list: 14
        case .set: 15
        case .map: 16
        case .mixed: 17
        }
    }
}

/// One property of an object's state, or of an embedded object (Spec/SYNC.md §4.2).
public struct PropertyState: Equatable, Hashable, Sendable {
    public var name: String
    public var value: SyncValue
    /// For a list: the identity of each element, in order (§6.4); empty otherwise.
    public var ids: [ElementId]

    /// Property `name` holding `value` (with its elements' identities, for a list).
    public init(_ name: String, _ value: SyncValue, ids: [ElementId] = []) {
        self.name = name
        self.value = value
        self.ids = ids
    }
}

/// The identity of a list element (Spec/SYNC.md §5, §6.4): the clock of the upload that inserted
/// it, its client file, and its position among that upload's inserts.
public struct ElementId: Equatable, Hashable, Comparable, Sendable {
    public var clock: UInt64
    /// 16 bytes.
    public var clientFileId: [UInt8]
    public var index: UInt64

    /// The identity naming the head of a list.
    public static let head = ElementId(clock: 0, clientFileId: [UInt8](repeating: 0, count: 16), index: 0)

    /// The element inserted `index`-th by the upload of `clock` from `clientFileId`.
    public init(clock: UInt64, clientFileId: [UInt8], index: UInt64) {
        self.clock = clock
        self.clientFileId = clientFileId
        self.index = index
    }

    /// The order of §6.4: by clock, then client file byte by byte, then index.
    public static func < (a: ElementId, b: ElementId) -> Bool {
        if a.clock != b.clock { return a.clock < b.clock }
        if a.clientFileId != b.clientFileId { return a.clientFileId.lexicographicallyPrecedes(b.clientFileId) }
        return a.index < b.index
    }
}

extension WireWriter {
    /// A value with its tag (§4.3).
    public mutating func value(_ v: SyncValue) {
        u8(v.tag)
        switch v {
        case .null, .bool: break
        case .int(let i): svarint(i)
        case .float(let f): raw((0..<4).map { UInt8(truncatingIfNeeded: f.bitPattern >> UInt32(8 * $0)) })
        case .double(let d): u64(d.bitPattern)
        case .string(let s): string(s)
        case .binary(let b): data(b)
        case .timestamp(let s, let n):
            svarint(s)
            uvarint(UInt64(n))
        case .objectId(let b), .uuid(let b): raw(b)
        case .decimal128(let low, let high):
            u64(low)
            u64(high)
        case .link(let c, let key):
            string(c)
            value(key)
        case .embedded(let properties): propertyStates(properties)
        case .list(let items), .set(let items):
            count(items.count)
            for i in items { value(i) }
        case .map(let entries):
            count(entries.count)
            for e in entries {
                string(e.key)
                value(e.value)
            }
        case .mixed(let inner): value(inner)
        }
    }

    /// `PropertyState[]` (§4.2).
    public mutating func propertyStates(_ properties: [PropertyState]) {
        count(properties.count)
        for p in properties {
            string(p.name)
            value(p.value)
            count(p.ids.count)
            for id in p.ids { elementId(id) }
        }
    }

    /// An `ElementId` (§5).
    public mutating func elementId(_ id: ElementId) {
        u64(id.clock)
        data(id.clientFileId)
        uvarint(id.index)
    }
}

extension WireReader {
    /// A value with its tag (§4.3); `depth` bounds nesting (embedded objects, mixed values).
    public mutating func value(depth: Int = 0) throws(WireError) -> SyncValue {
        guard depth < 64 else { throw error("values nested more than 64 deep") }
        let at = offset
        let tag = try u8()
        switch tag {
        case 0: return .null
        case 1: return .bool(false)
        case 2: return .bool(true)
        case 3: return .int(try svarint())
        case 4:
            let b = try raw(4)
            return .float(Float(bitPattern: (0..<4).reduce(UInt32(0)) { $0 | UInt32(b[$1]) << UInt32(8 * $1) }))
        case 5: return .double(Double(bitPattern: try u64()))
        case 6: return .string(try string())
        case 7: return .binary(try data())
        case 8:
            let s = try svarint()
            let n = try uvarint()
            guard n < 1_000_000_000 else { throw WireError(offset: at, "a timestamp's nanoseconds reach a second") }
            return .timestamp(seconds: s, nanoseconds: UInt32(n))
        case 9: return .objectId(try raw(12))
        case 10: return .uuid(try raw(16))
        case 11: return .decimal128(low: try u64(), high: try u64())
        case 12: return .link(class: try string(), primaryKey: try value(depth: depth + 1))
        case 13: return .embedded(try propertyStates(depth: depth + 1))
        case 14, 15:
            let n = try count()
            var items: [SyncValue] = []
            items.reserveCapacity(n)
            for _ in 0..<n { items.append(try value(depth: depth + 1)) }
            return tag == 14 ? .list(items) : .set(items)
        case 16:
            let n = try count(minimumItemSize: 2)
            var entries: [SyncValue.MapEntry] = []
            entries.reserveCapacity(n)
            for _ in 0..<n { entries.append(SyncValue.MapEntry(try string(), try value(depth: depth + 1))) }
            return .map(entries)
        case 17:
            let inner = try value(depth: depth + 1)
            guard inner.tag < 13 else { throw WireError(offset: at, "a mixed value holding a collection or an embedded object") }
            return .mixed(inner)
        default: throw WireError(offset: at, "unknown value tag \(tag)")
        }
    }

    /// `PropertyState[]` (§4.2).
    public mutating func propertyStates(depth: Int = 0) throws(WireError) -> [PropertyState] {
        let n = try count(minimumItemSize: 3)
        var out: [PropertyState] = []
        out.reserveCapacity(n)
        for _ in 0..<n {
            let name = try string()
            let v = try value(depth: depth)
            let k = try count(minimumItemSize: 10)
            var ids: [ElementId] = []
            ids.reserveCapacity(k)
            for _ in 0..<k { ids.append(try elementId()) }
            out.append(PropertyState(name, v, ids: ids))
        }
        return out
    }

    /// An `ElementId` (§5): its client file identity must be 16 bytes.
    public mutating func elementId() throws(WireError) -> ElementId {
        let clock = try u64()
        let at = offset
        let file = try data()
        guard file.count == 16 else { throw WireError(offset: at, "a client file identity of \(file.count) bytes, not 16") }
        return ElementId(clock: clock, clientFileId: file, index: try uvarint())
    }
}
