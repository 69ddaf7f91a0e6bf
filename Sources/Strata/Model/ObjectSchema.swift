import Foundation

/// The schema of one model class: its name and properties, as `Realm.schema` and
/// `Object.objectSchema` report them.
public final class ObjectSchema: CustomStringConvertible {
    public let className: String
    public let properties: [Property]
    /// The primary key property, if the class has one.
    public var primaryKeyProperty: Property? { properties.first { $0.isPrimary } }
    /// The Swift class, when this schema comes from one.
    public let objectClass: Object.Type

    init(info: ClassInfo) {
        className = info.name
        objectClass = info.type
        properties = info.properties.map { Property(info: $0) }
    }

    public subscript(propertyName: String) -> Property? { properties.first { $0.name == propertyName } }

    public var description: String {
        "\(className) {\n" + properties.map { "\t\($0)" }.joined(separator: "\n") + "\n}"
    }
}

/// The types a property can have, as RealmSwift names them.
public enum PropertyType: Int, Sendable, CustomStringConvertible {
    case int, bool, float, double, string, data, any, date, object, objectId, decimal128, UUID,
         linkingObjects

    public var description: String {
        switch self {
        case .int: return "int"
        case .bool: return "bool"
        case .float: return "float"
        case .double: return "double"
        case .string: return "string"
        case .data: return "data"
        case .any: return "mixed"
        case .date: return "date"
        case .object: return "object"
        case .objectId: return "object id"
        case .decimal128: return "decimal128"
        case .UUID: return "uuid"
        case .linkingObjects: return "linking objects"
        }
    }
}

/// One property of a model class.
public struct Property: CustomStringConvertible {
    public let name: String
    public let type: PropertyType
    public let isOptional: Bool
    public let isArray: Bool
    public let isIndexed: Bool
    public let isPrimary: Bool
    /// The target class of links, lists of links and linking objects.
    public let objectClassName: String?
    /// Linking objects: the property of the target class that links here.
    public let linkOriginPropertyName: String?
    /// The declared initial value (nil for lists, linking objects and optionals declared nil).
    public let defaultValue: Any?

    init(info p: ClassInfo.PropertyInfo) {
        name = p.name
        isOptional = p.kind.optional
        isArray = p.kind.collection == .list
        isIndexed = p.isIndexed || p.isPrimaryKey
        isPrimary = p.isPrimaryKey
        objectClassName = p.kind.target?.className()
        linkOriginPropertyName = p.originProperty
        defaultValue = p.defaultValue
        if p.kind.collection == .linkingObjects {
            type = .linkingObjects
            return
        }
        switch p.kind.type {
        case .bool: type = .bool
        case .int: type = .int
        case .float: type = .float
        case .double: type = .double
        case .string: type = .string
        case .binary: type = .data
        case .timestamp: type = .date
        case .objectId: type = .objectId
        case .uuid: type = .UUID
        case .decimal128: type = .decimal128
        case .link: type = .object
        case .mixed, .null: type = .any
        }
    }

    public var description: String {
        var s = "\(name) {\n\t\ttype = \(type);\n"
        if let c = objectClassName { s += "\t\tobjectClassName = \(c);\n" }
        if let o = linkOriginPropertyName { s += "\t\tlinkOriginPropertyName = \(o);\n" }
        s += "\t\tindexed = \(isIndexed ? "YES" : "NO");\n\t\tisPrimary = \(isPrimary ? "YES" : "NO");\n"
        s += "\t\tarray = \(isArray ? "YES" : "NO");\n\t\toptional = \(isOptional ? "YES" : "NO");\n\t}"
        return s
    }
}

/// The schema of a Realm: the object schemas of its classes.
public struct Schema: CustomStringConvertible {
    public let objectSchema: [ObjectSchema]

    public subscript(className: String) -> ObjectSchema? {
        objectSchema.first { $0.className == className }
    }

    public var description: String { "Schema {\n" + objectSchema.map { "\($0)" }.joined(separator: "\n") + "\n}" }
}
