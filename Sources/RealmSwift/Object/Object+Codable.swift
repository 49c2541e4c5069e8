import Foundation
import RealmStorage

/// Codable model classes, as in RealmSwift: an object is not `Encodable` by itself; a model class
/// that declares `Codable` (or `Encodable`, `Decodable`) gets it, with `@Persisted` properties
/// taking part in synthesized coding.
///
/// ```swift
/// final class Dog: Object, Codable {
///     @Persisted var name = ""
///     @Persisted var age = 0
///     @Persisted var owner: Person?        // Person: Object, Codable
/// }
/// let dog = try JSONDecoder().decode(Dog.self, from: json)        // an unmanaged Dog
/// let data = try JSONEncoder().encode(realm.objects(Dog.self))    // [{"name":"Rex","age":3,"owner":null}]
/// ```
///
/// Decoding is Swift's synthesized `init(from:)`: each `@Persisted` wrapper decodes its value
/// (a missing key of an optional property decodes as nil). Encoding writes each persisted
/// property under the key the class's `CodingKeys` give it (its name by default; a property
/// left out of `CodingKeys` is left out) — values as themselves, nil as null, links as the nested
/// object, lists and sets as arrays, maps as keyed containers, enums as their raw values. Linking
/// objects are computed and not encoded. Unlike RealmSwift, managed objects encode too (RealmSwift
/// throws for them). A cycle of links (an object reached again while it is being encoded) throws
/// `EncodingError.invalidValue`; declare `encode(to:)` in the class to encode such objects
/// differently (by primary key, say).
extension Encodable where Self: ObjectBase {
    /// Encodes the persisted properties under their coding keys (see above).
    public func encode(to encoder: any Encoder) throws { try encodePersistedProperties(to: encoder) }
}

extension Persisted: Decodable where Value: Decodable {
    /// Decodes the property's value (an unmanaged object's initial value).
    public init(from decoder: any Decoder) throws {
        if let probe = decoder as? CodingKeyProbe.ProbeDecoder {
            self.init()
            marker = probe.probe.isTarget
            return
        }
        // Through a container, so the decoder's strategies (dates, data) apply to the value.
        let container = try decoder.singleValueContainer()
        if let optional = Value.self as? any DecodableOptional.Type {
            self.init(wrappedValue: try optional.decodeWrapped(container) as! Value)
        } else {
            self.init(wrappedValue: try container.decode(Value.self))
        }
    }
}

/// An optional decoded as nil or its wrapped value through a container (`Optional`'s own
/// `init(from:)` decodes the wrapped value directly, past the decoder's strategies).
protocol DecodableOptional {
    static func decodeWrapped(_ container: any SingleValueDecodingContainer) throws -> Self
}

extension Optional: DecodableOptional where Wrapped: Decodable {
    static func decodeWrapped(_ container: any SingleValueDecodingContainer) throws -> Self {
        container.decodeNil() ? nil : try container.decode(Wrapped.self)
    }
}

/// A property wrapper whose value can be nil: synthesized decoding gives it nil when its key is
/// missing, as RealmSwift does for optional `@Persisted` properties. Public only because the
/// decoding overload below names it.
public protocol OptionalCodingWrapper {
    /// The wrapped value's type, an optional.
    associatedtype WrappedType: ExpressibleByNilLiteral
    /// A wrapper holding `wrappedValue` (nil for a missing key).
    init(wrappedValue: WrappedType)
}

extension Persisted: OptionalCodingWrapper where Value: ExpressibleByNilLiteral {}

extension KeyedDecodingContainer {
    /// Decodes an optional `@Persisted` property: nil when the key is missing.
    public func decode<T: Decodable & OptionalCodingWrapper>(_ type: T.Type, forKey key: Key) throws -> T {
        try decodeIfPresent(T.self, forKey: key) ?? T(wrappedValue: nil)
    }
}

extension ObjectBase {
    /// The objects being encoded on this task or thread, outermost first (to find cycles).
    @TaskLocal static var encodingPath: [String] = []

    func encodePersistedProperties(to encoder: any Encoder) throws {
        let info = _rlmClass
        let identity = _rlmRealm == nil ? "\(info.className) \(ObjectIdentifier(self))" : "\(info.className) \(_rlmKey)"
        let path = Self.encodingPath
        guard !path.contains(identity) else {
            throw EncodingError.invalidValue(
                self,
                .init(
                    codingPath: encoder.codingPath,
                    debugDescription: "\(info.className) links back to itself through \(encoder.codingPath.map(\.stringValue)); "
                        + "declare encode(to:) in the class to encode the link differently"))
        }
        var container = encoder.container(keyedBy: MapCodingKey.self)
        try Self.$encodingPath.withValue(path + [identity]) {
            let keys = CodingKeyProbe.keys(of: info)
            for (i, p) in info.properties.enumerated() where p.isStored {
                guard let name = keys.map({ i < $0.count ? $0[i] : nil }) ?? p.name else { continue }
                let key = MapCodingKey(stringValue: name)
                guard let value = unwrapOptional(propertyValue(i)) else {
                    try container.encodeNil(forKey: key)
                    continue
                }
                // A persisted enum that is not Codable itself encodes its raw value; a linked
                // object whose class is not Encodable encodes its persisted properties.
                guard
                    let encodable = value as? any Encodable ?? ((value as? any RawRepresentable)?.rawValue as? any Encodable)
                        ?? (value as? ObjectBase).map(EncodedObject.init)
                else {
                    throw EncodingError.invalidValue(
                        value,
                        .init(
                            codingPath: container.codingPath + [key],
                            debugDescription: "\(info.className).\(p.name) holds a \(type(of: value)), which is not Encodable"))
                }
                try container.encode(encodable, forKey: key)
            }
        }
    }
}

extension AnyRealmValue: Encodable {
    /// Encodes the value itself (a linked object as a nested object, `.none` as null).
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        switch self {
        case .none: try container.encodeNil()
        case .int(let v): try container.encode(v)
        case .bool(let v): try container.encode(v)
        case .float(let v): try container.encode(v)
        case .double(let v): try container.encode(v)
        case .string(let v): try container.encode(v)
        case .data(let v): try container.encode(v)
        case .date(let v): try container.encode(v)
        case .object(let v): try container.encode(EncodedObject(v))
        case .objectId(let v): try container.encode(v)
        case .decimal128(let v): try container.encode(v)
        case .uuid(let v): try container.encode(v)
        }
    }
}

/// An object encoded as its class encodes it (its own `encode(to:)` when the class is
/// `Encodable`), else by its persisted properties.
struct EncodedObject: Encodable {
    let object: ObjectBase
    init(_ object: ObjectBase) { self.object = object }

    func encode(to encoder: any Encoder) throws {
        if let e = object as? any Encodable { try e.encode(to: encoder) } else { try object.encodePersistedProperties(to: encoder) }
    }
}
