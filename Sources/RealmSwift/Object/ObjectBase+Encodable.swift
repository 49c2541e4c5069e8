import Foundation

/// Objects are `Encodable`: each persisted property is encoded under its name — values as
/// themselves, nil as null, links as the nested linked object, lists and sets as arrays, maps as
/// keyed containers, persisted enums as their raw values. Linking objects are computed and not encoded. A cycle of links (an object
/// reached again while it is being encoded) throws `EncodingError.invalidValue`; override
/// ``ObjectBase/encode(to:)`` to encode such objects differently (by primary key, say).
///
/// ```swift
/// let json = try JSONEncoder().encode(realm.objects(Dog.self))   // [{"name":"Rex","age":3}, …]
/// ```
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
                        + "override encode(to:) to encode the link differently"))
        }
        var container = encoder.container(keyedBy: MapCodingKey.self)
        try Self.$encodingPath.withValue(path + [identity]) {
            for (i, p) in info.properties.enumerated() where p.isStored {
                let key = MapCodingKey(stringValue: p.name)
                guard let value = unwrapOptional(propertyValue(i)) else {
                    try container.encodeNil(forKey: key)
                    continue
                }
                // A persisted enum that is not Codable itself encodes its raw value.
                guard let encodable = value as? any Encodable ?? ((value as? any RawRepresentable)?.rawValue as? any Encodable) else {
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
        case .object(let v): try container.encode(v)
        case .objectId(let v): try container.encode(v)
        case .decimal128(let v): try container.encode(v)
        case .uuid(let v): try container.encode(v)
        }
    }
}
