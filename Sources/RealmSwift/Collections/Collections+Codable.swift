import Foundation

// Collections encode their elements — `Results`, `List`, `MutableSet` and `LinkingObjects` as
// arrays in collection order, `Map` as a keyed container in key order — as RealmSwift's do.
// `List`, `MutableSet` and `Map` also decode, into unmanaged collections.

extension Results: Encodable where Element: Encodable {
    /// Encodes the elements as an array, in order.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.unkeyedContainer()
        for element in self { try container.encode(element) }
    }
}

extension List: Encodable where Element: Encodable {
    /// Encodes the elements as an array, in order.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.unkeyedContainer()
        for element in self { try container.encode(element) }
    }
}

extension MutableSet: Encodable where Element: Encodable {
    /// Encodes the elements as an array, in insertion order.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.unkeyedContainer()
        for element in self { try container.encode(element) }
    }
}

extension LinkingObjects: Encodable where Element: Encodable {
    /// Encodes the linking objects as an array.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.unkeyedContainer()
        for element in self { try container.encode(element) }
    }
}

extension Map: Encodable where Value: Encodable {
    /// Encodes the entries as a keyed container (a JSON object), in key order.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: MapCodingKey.self)
        for entry in self { try container.encode(entry.value, forKey: MapCodingKey(stringValue: entry.key._rlmKey)) }
    }
}

extension List: Decodable where Element: Decodable {
    /// Decodes an unmanaged list from an array.
    public convenience init(from decoder: any Decoder) throws {
        self.init()
        var container = try decoder.unkeyedContainer()
        while !container.isAtEnd { storage.append(try container.decode(Element.self)) }
    }
}

extension MutableSet: Decodable where Element: Decodable {
    /// Decodes an unmanaged set from an array (repeated values are kept once).
    public convenience init(from decoder: any Decoder) throws {
        self.init()
        var container = try decoder.unkeyedContainer()
        var elements: [Element] = []
        while !container.isAtEnd { elements.append(try container.decode(Element.self)) }
        insert(objectsIn: elements)
    }
}

extension Map: Decodable where Value: Decodable {
    /// Decodes an unmanaged map from a keyed container (a JSON object).
    public convenience init(from decoder: any Decoder) throws {
        self.init()
        let container = try decoder.container(keyedBy: MapCodingKey.self)
        for key in container.allKeys { storage[Key(_rlmKey: key.stringValue)] = try container.decode(Value.self, forKey: key) }
    }
}

/// A map key as a coding key.
struct MapCodingKey: CodingKey {
    let stringValue: String
    init(stringValue: String) { self.stringValue = stringValue }
    var intValue: Int? { nil }
    init?(intValue: Int) { nil }
}
