/// The type of a persisted property, as RealmSwift names it.
public enum PropertyType: Int, Sendable, CustomStringConvertible {
    /// Any integer type (`Int`, `Int8` … `Int64`).
    case int = 0
    /// `Bool`.
    case bool = 1
    /// `String`.
    case string = 2
    /// `Data` (binary).
    case data = 3
    /// `Date`, stored to the nanosecond.
    case date = 4
    /// `Float`.
    case float = 5
    /// `Double`.
    case double = 6
    /// A link to an object (an `Object` subclass, embedded or not).
    case object = 7
    /// `LinkingObjects`: the objects linking to this one through a property (computed, not stored).
    case linkingObjects = 8
    /// `AnyRealmValue` (a mixed value).
    case any = 9
    /// `ObjectId`.
    case objectId = 10
    /// `Decimal128`.
    case decimal128 = 11
    /// `UUID`.
    case UUID = 12

    public var description: String {
        switch self {
        case .int: "int"
        case .bool: "bool"
        case .string: "string"
        case .data: "data"
        case .date: "date"
        case .float: "float"
        case .double: "double"
        case .object: "object"
        case .linkingObjects: "linking objects"
        case .any: "mixed"
        case .objectId: "object id"
        case .decimal128: "decimal128"
        case .UUID: "uuid"
        }
    }

    /// Whether values of this type may link to objects (links, and mixed values): `add` stores
    /// them after the object itself, so cycles between new objects end.
    var holdsLinks: Bool { self == .object || self == .any }
}

/// One property of an ``ObjectSchema``: its name, type and attributes.
///
/// `Property` is a `Sendable` value.
public struct Property: Sendable, Hashable, CustomStringConvertible {
    /// The property's name.
    public let name: String
    /// The type of the property (for collections, of their elements).
    public let type: PropertyType
    /// Whether a persisted index is kept for the property (always true for the primary key).
    public let isIndexed: Bool
    /// Whether the property (or, for collections, each element) may be nil.
    public let isOptional: Bool
    /// Whether the property is a `List`.
    public let isArray: Bool
    /// Whether the property is a `MutableSet`.
    public let isSet: Bool
    /// Whether the property is a `Map`.
    public let isMap: Bool
    /// Whether the property is the class's primary key.
    public let isPrimaryKey: Bool
    /// For links and linking objects: the class name of the target.
    public let objectClassName: String?
    /// For linking objects: the property of ``objectClassName`` that links here.
    public let linkOriginPropertyName: String?

    init(
        name: String, type: PropertyType, isIndexed: Bool = false, isOptional: Bool = false, isArray: Bool = false, isSet: Bool = false,
        isMap: Bool = false, isPrimaryKey: Bool = false, objectClassName: String? = nil, linkOriginPropertyName: String? = nil
    ) {
        self.name = name
        self.type = type
        self.isIndexed = isIndexed || isPrimaryKey
        self.isOptional = isOptional
        self.isArray = isArray
        self.isSet = isSet
        self.isMap = isMap
        self.isPrimaryKey = isPrimaryKey
        self.objectClassName = objectClassName
        self.linkOriginPropertyName = linkOriginPropertyName
    }

    /// Whether the property is a collection (`List`, `MutableSet` or `Map`).
    public var isCollection: Bool { isArray || isSet || isMap }

    public var description: String {
        var t = type == .object || type == .linkingObjects ? "<\(objectClassName ?? "?")>" : type.description
        if isOptional { t += "?" }
        if isArray { t = "array<\(t)>" }
        if isSet { t = "set<\(t)>" }
        if isMap { t = "map<string, \(t)>" }
        if type == .linkingObjects { t = "linking objects<\(objectClassName ?? "?").\(linkOriginPropertyName ?? "?")>" }
        var attrs: [String] = []
        if isPrimaryKey { attrs.append("primary key") } else if isIndexed { attrs.append("indexed") }
        return "\(name): \(t)" + (attrs.isEmpty ? "" : " (\(attrs.joined(separator: ", ")))")
    }
}

/// The schema of one class: its name, properties and primary key.
///
/// `ObjectSchema` is a `Sendable` value.
public struct ObjectSchema: Sendable, Hashable, CustomStringConvertible {
    /// The class (table) name.
    public let className: String
    /// The persisted and computed properties, in declaration order (superclass properties first).
    public let properties: [Property]
    /// Whether objects of this class are embedded in a parent object.
    public let isEmbedded: Bool

    /// The primary-key property, if any.
    public var primaryKeyProperty: Property? { properties.first { $0.isPrimaryKey } }

    /// The property named `propertyName`.
    public subscript(propertyName: String) -> Property? { properties.first { $0.name == propertyName } }

    public var description: String {
        "\(className)\(isEmbedded ? " (embedded)" : "") {\n" + properties.map { "    \($0)\n" }.joined() + "}"
    }
}

/// The schema of a Realm: every class it holds.
public struct Schema: Sendable, Hashable, CustomStringConvertible {
    /// The classes, sorted by name.
    public let objectSchema: [ObjectSchema]

    /// The class named `className`.
    public subscript(className: String) -> ObjectSchema? { objectSchema.first { $0.className == className } }

    public var description: String { objectSchema.map(\.description).joined(separator: "\n") }
}
