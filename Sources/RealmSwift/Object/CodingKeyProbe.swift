import Foundation
import RealmStorage

/// Finds the coding key of each persisted property of a `Decodable` model class, so encoding (a
/// default implementation, see Object+Codable.swift) uses the same keys as the class's
/// synthesized `init(from:)` — its `CodingKeys`, renames and omissions included.
///
/// Swift gives no access to a class's `CodingKeys`, so the probe asks the class's own
/// `init(from:)`: it decodes a prototype from a decoder that records the key of each decode
/// call and produces no values. Run once per key, it lets the wrapper decoded by call `j` mark
/// itself (``Persisted/init(from:)``); `Mirror` then finds which property that is. Once per class
/// and process; a class whose `init(from:)` decodes no `@Persisted` wrapper (a hand-written one,
/// say), or throws on the probe, keeps the default: every property under its name.
enum CodingKeyProbe {
    /// Per class: the key of each property (nil: not encoded), or nil for "by name".
    private static let cache = Locked<[ObjectIdentifier: [String?]?]>([:])

    /// The coding key of each property of `info`'s class by index (nil: left out), or nil when
    /// every property is encoded under its name.
    static func keys(of info: ClassInfo) -> [String?]? {
        let id = ObjectIdentifier(info.type)
        if let known = cache.withLock({ $0[id] }) { return known }
        let found = probe(info)
        cache.withLock { $0[id] = found }
        return found
    }

    private static func probe(_ info: ClassInfo) -> [String?]? {
        guard !info.isDynamic, let decodable = info.type as? any Decodable.Type else { return nil }
        let state = State()
        // First run: the keys decoded, in call order.
        guard (try? decodable.init(from: ProbeDecoder(probe: state, depth: 0))) != nil else { return nil }
        let keys = state.keys
        var result = [String?](repeating: nil, count: info.properties.count)
        var anyMarked = false
        for j in keys.indices {
            state.reset(target: j)
            guard let object = (try? decodable.init(from: ProbeDecoder(probe: state, depth: 0))) as? ObjectBase else { return nil }
            let wrappers = ClassInfo.wrappers(of: object)
            guard let i = wrappers.firstIndex(where: { $0.1.marker }), i < result.count else { continue }
            result[i] = keys[j]
            anyMarked = true
        }
        return anyMarked ? result : nil
    }

    /// What one probe run records and which decode call it targets.
    final class State {
        private(set) var keys: [String] = []
        private var target = -1
        private var calls = 0
        /// Whether the decode call being answered is the targeted one.
        private(set) var isTarget = false

        func reset(target: Int) {
            keys = []
            calls = 0
            self.target = target
        }

        /// Notes a top-level decode of `key`, before its value is decoded.
        func begin(_ key: String) {
            keys.append(key)
            isTarget = calls == target
            calls += 1
        }

        func end() { isTarget = false }
    }

    /// A decoder that produces empty values: top-level keyed decodes are recorded; nested ones give
    /// nil, empty or zero.
    struct ProbeDecoder: Decoder {
        let probe: State
        let depth: Int
        var codingPath: [any CodingKey] { [] }
        var userInfo: [CodingUserInfoKey: Any] { [:] }

        func container<Key: CodingKey>(keyedBy type: Key.Type) throws -> KeyedDecodingContainer<Key> {
            guard depth < 8 else { throw DecodingError.dataCorrupted(.init(codingPath: [], debugDescription: "probe depth")) }
            return KeyedDecodingContainer(Keyed<Key>(probe: probe, depth: depth))
        }
        func unkeyedContainer() throws -> any UnkeyedDecodingContainer { Unkeyed(probe: probe, depth: depth) }
        func singleValueContainer() throws -> any SingleValueDecodingContainer { Single(probe: probe, depth: depth) }
    }

    struct Keyed<Key: CodingKey>: KeyedDecodingContainerProtocol {
        let probe: State
        let depth: Int
        var codingPath: [any CodingKey] { [] }
        var allKeys: [Key] { [] }

        func contains(_ key: Key) -> Bool { depth == 0 }
        func decodeNil(forKey key: Key) throws -> Bool { depth > 0 }
        func decode<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T {
            if depth == 0 { probe.begin(key.stringValue) }
            defer { if depth == 0 { probe.end() } }
            return try T(from: ProbeDecoder(probe: probe, depth: depth + 1))
        }
        func decodeIfPresent<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T? {
            depth == 0 ? try decode(type, forKey: key) : nil
        }
        func nestedContainer<NestedKey: CodingKey>(keyedBy type: NestedKey.Type, forKey key: Key) throws -> KeyedDecodingContainer<
            NestedKey
        > {
            KeyedDecodingContainer(Keyed<NestedKey>(probe: probe, depth: depth + 1))
        }
        func nestedUnkeyedContainer(forKey key: Key) throws -> any UnkeyedDecodingContainer { Unkeyed(probe: probe, depth: depth + 1) }
        func superDecoder() throws -> any Decoder { ProbeDecoder(probe: probe, depth: depth) }
        func superDecoder(forKey key: Key) throws -> any Decoder { ProbeDecoder(probe: probe, depth: depth + 1) }
    }

    struct Unkeyed: UnkeyedDecodingContainer {
        let probe: State
        let depth: Int
        var codingPath: [any CodingKey] { [] }
        var count: Int? { 0 }
        var isAtEnd: Bool { true }
        var currentIndex: Int { 0 }

        mutating func decodeNil() throws -> Bool { true }
        mutating func decode<T: Decodable>(_ type: T.Type) throws -> T { try T(from: ProbeDecoder(probe: probe, depth: depth + 1)) }
        mutating func nestedContainer<NestedKey: CodingKey>(keyedBy type: NestedKey.Type) throws -> KeyedDecodingContainer<NestedKey> {
            KeyedDecodingContainer(Keyed<NestedKey>(probe: probe, depth: depth + 1))
        }
        mutating func nestedUnkeyedContainer() throws -> any UnkeyedDecodingContainer { Unkeyed(probe: probe, depth: depth + 1) }
        mutating func superDecoder() throws -> any Decoder { ProbeDecoder(probe: probe, depth: depth + 1) }
    }

    struct Single: SingleValueDecodingContainer {
        let probe: State
        let depth: Int
        var codingPath: [any CodingKey] { [] }

        func decodeNil() -> Bool { true }
        func decode(_ type: Bool.Type) throws -> Bool { false }
        func decode(_ type: String.Type) throws -> String { "" }
        func decode(_ type: Double.Type) throws -> Double { 0 }
        func decode(_ type: Float.Type) throws -> Float { 0 }
        func decode(_ type: Int.Type) throws -> Int { 0 }
        func decode(_ type: Int8.Type) throws -> Int8 { 0 }
        func decode(_ type: Int16.Type) throws -> Int16 { 0 }
        func decode(_ type: Int32.Type) throws -> Int32 { 0 }
        func decode(_ type: Int64.Type) throws -> Int64 { 0 }
        func decode(_ type: UInt.Type) throws -> UInt { 0 }
        func decode(_ type: UInt8.Type) throws -> UInt8 { 0 }
        func decode(_ type: UInt16.Type) throws -> UInt16 { 0 }
        func decode(_ type: UInt32.Type) throws -> UInt32 { 0 }
        func decode(_ type: UInt64.Type) throws -> UInt64 { 0 }
        func decode<T: Decodable>(_ type: T.Type) throws -> T { try T(from: ProbeDecoder(probe: probe, depth: depth + 1)) }
    }
}
