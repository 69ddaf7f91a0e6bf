import Foundation

/// The schema of one model class: its name and properties, as `Realm.schema` and
/// `Object.objectSchema` report them.
public final class ObjectSchema: CustomStringConvertible, Equatable {
    /// The same class name and properties.
    public static func == (a: ObjectSchema, b: ObjectSchema) -> Bool {
        a.className == b.className && a.allProperties == b.allProperties && a.isEmbedded == b.isEmbedded
    }

    /// The class's name (the table's in the file).
    public let className: String
    /// The stored properties (linking objects are `computedProperties`, as in RealmSwift).
    public var properties: [Property] { allProperties.filter { $0.type != .linkingObjects } }
    /// The linking-objects properties.
    public var computedProperties: [Property] { allProperties.filter { $0.type == .linkingObjects } }
    /// Every property, in declaration order.
    let allProperties: [Property]
    /// The primary key property, if the class has one.
    public var primaryKeyProperty: Property? { properties.first { $0.isPrimary } }
    /// The Swift class, when this schema comes from one (a class the file has and the model
    /// does not — a migration's old schema — has `Object.self`).
    public let objectClass: Object.Type

    init(info: ClassInfo) {
        className = info.name
        objectClass = info.type
        isEmbedded = info.isEmbedded
        allProperties = info.properties.map { Property(info: $0) }
    }

    /// A table as the file has it.
    init(className: String, objectClass: Object.Type, core: [CoreProperty], embedded: Bool) {
        self.className = className
        self.objectClass = objectClass
        isEmbedded = embedded
        allProperties = core.map { Property(core: $0) }
    }

    /// A property by name, linking objects included.
    public subscript(propertyName: String) -> Property? { allProperties.first { $0.name == propertyName } }

    /// Whether the class is embedded (its objects have one parent each).
    public let isEmbedded: Bool
    /// Asymmetric (sync-only) classes do not exist in a local database: never.
    public var isAsymmetric: Bool { false }

    public var description: String {
        "\(className) {\n" + allProperties.map { "\t\($0)" }.joined(separator: "\n") + "\n}"
    }
}

/// The types a property can have, as RealmSwift names them.
public enum PropertyType: Int, Sendable, CustomStringConvertible {
    /// A property's type, as RealmSwift names them.
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
public struct Property: CustomStringConvertible, Equatable {
    /// The property's name.
    public let name: String
    /// The property's type (for a collection: its elements').
    public let type: PropertyType
    /// Whether the property (or its elements) may be nil.
    public let isOptional: Bool
    /// Whether the property is a list (RealmSwift's name: also true for sets and maps).
    public let isArray: Bool
    /// Whether the property is indexed.
    public let isIndexed: Bool
    /// Whether the property is the primary key.
    public let isPrimary: Bool
    /// Whether the property keeps a full-text index of its words (`@Persisted(indexed:
    /// .fullText)`; beyond RealmSwift). Such a property's `isIndexed` is false.
    public let isFullTextIndexed: Bool
    /// The target class of links, lists of links and linking objects.
    public let objectClassName: String?
    /// Linking objects: the property of the target class that links here.
    public let linkOriginPropertyName: String?
    /// The declared initial value (nil for lists, linking objects and optionals declared nil).
    public let defaultValue: Any?

    /// The same name, type and flags (the default value is not compared).
    public static func == (a: Property, b: Property) -> Bool {
        a.name == b.name && a.columnName == b.columnName && a.type == b.type && a.isOptional == b.isOptional && a.isArray == b.isArray && a.isSet == b.isSet && a.isMap == b.isMap
            && a.isIndexed == b.isIndexed && a.isFullTextIndexed == b.isFullTextIndexed && a.isPrimary == b.isPrimary
            && a.objectClassName == b.objectClassName
            && a.linkOriginPropertyName == b.linkOriginPropertyName
    }

    init(info p: ClassInfo.PropertyInfo) {
        name = p.name
        columnName = p.columnName
        isOptional = p.kind.optional && p.kind.type != .mixed // (as RealmSwift: AnyRealmValue is not optional)
        isArray = p.kind.collection == .list
        isSet = p.kind.collection == .set
        isMap = p.kind.collection == .map
        isIndexed = p.isIndexed || p.isPrimaryKey
        isFullTextIndexed = p.isFullText
        isPrimary = p.isPrimaryKey
        objectClassName = p.kind.target?.className()
        linkOriginPropertyName = p.originProperty
        defaultValue = p.defaultValue
        type = p.kind.collection == .linkingObjects ? .linkingObjects : PropertyType(core: p.kind.type)
    }

    /// A property as the file has it (no declared default, no origin: the file keeps neither).
    init(core p: CoreProperty) {
        name = p.name
        columnName = p.name
        type = PropertyType(core: p.type)
        isOptional = p.flags.contains(.nullable) && p.type != .mixed
        isArray = p.flags.contains(.list) && !p.flags.contains(.set) && !p.flags.contains(.map)
        isSet = p.flags.contains(.set)
        isMap = p.flags.contains(.map)
        isIndexed = p.flags.contains(.indexed) || p.flags.contains(.primaryKey)
        isFullTextIndexed = p.flags.contains(.fullText)
        isPrimary = p.flags.contains(.primaryKey)
        objectClassName = p.linkTarget
        linkOriginPropertyName = nil
        defaultValue = nil
    }

    /// A set (`MutableSet`).
    public let isSet: Bool
    /// A map (`Map`).
    public let isMap: Bool
    /// The name the file stores the property under (`Object.propertiesMapping()`; else the
    /// property's own name).
    public let columnName: String

    /// As RealmSwift (realm-cocoa) describes a property.
    public var description: String {
        func yesNo(_ b: Bool) -> String { b ? "YES" : "NO" }
        var s = "\(name) {\n\t\ttype = \(type);\n"
        if let c = objectClassName {
            s += "\t\tobjectClassName = \(c);\n\t\tlinkOriginPropertyName = \(linkOriginPropertyName ?? "(null)");\n"
        }
        s += "\t\tcolumnName = \(columnName);\n"
        s += "\t\tindexed = \(yesNo(isIndexed));\n\t\tisPrimary = \(yesNo(isPrimary));\n"
        s += "\t\tarray = \(yesNo(isArray));\n\t\tset = \(yesNo(isSet));\n\t\tdictionary = \(yesNo(isMap));\n"
        s += "\t\toptional = \(yesNo(isOptional));\n\t}"
        return s
    }
}

extension PropertyType {
    init(core: CoreType) {
        switch core {
        case .bool: self = .bool
        case .int: self = .int
        case .float: self = .float
        case .double: self = .double
        case .string: self = .string
        case .binary: self = .data
        case .timestamp: self = .date
        case .objectId: self = .objectId
        case .uuid: self = .UUID
        case .decimal128: self = .decimal128
        case .link: self = .object
        case .mixed, .null: self = .any
        }
    }
}

/// The schema of a Realm: the object schemas of its classes.
public struct Schema: CustomStringConvertible, Equatable {
    /// Every class of the Realm's schema.
    public let objectSchema: [ObjectSchema]

    /// The class named `className`, nil when the schema has none.
    public subscript(className: String) -> ObjectSchema? {
        objectSchema.first { $0.className == className }
    }

    public var description: String { "Schema {\n" + objectSchema.map { "\($0)" }.joined(separator: "\n") + "\n}" }
}
