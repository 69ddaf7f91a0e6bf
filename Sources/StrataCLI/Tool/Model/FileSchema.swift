// FileSchema.swift — a file's classes and properties as the core stores them, their JSON form
// (the "schema" of export and dump files) and the creation of that schema in another file.
import CCore
@_spi(StrataCore) import Strata

enum CollectionKind: String { case list, set, map }

struct PropertySchema {
    var col: UInt32 = 0
    let name: String
    let type: CoreType
    let optional: Bool
    let indexed: Bool
    /// A full-text index of its words (`TEXT` queries).
    let fullText: Bool
    let primaryKey: Bool
    let collection: CollectionKind?
    let target: String?

    init(_ p: CoreProperty) {
        col = p.col
        name = p.name
        type = p.type
        optional = p.flags.contains(.nullable)
        indexed = p.flags.contains(.indexed)
        fullText = p.flags.contains(.fullText)
        primaryKey = p.flags.contains(.primaryKey)
        collection = p.flags.contains(.map) ? .map : p.flags.contains(.set) ? .set
            : p.flags.contains(.list) ? .list : nil
        target = p.linkTarget
    }

    init(json: JSON, in cls: String) throws {
        func field(_ k: String) -> JSON? { json[k] }
        guard case .string(let n)? = field("name") else {
            throw ToolFailure("schema of class '\(cls)': a property has no \"name\"")
        }
        guard case .string(let t)? = field("type"),
              let ty = CoreType.allNamed.first(where: { $0.name == t }), ty != .null else {
            throw ToolFailure("schema of '\(cls).\(n)': unknown or missing \"type\" (\(field("type")?.text ?? "none"))")
        }
        name = n
        type = ty
        optional = field("optional") == .bool(true)
        indexed = field("indexed") == .bool(true)
        fullText = field("fullText") == .bool(true)
        primaryKey = field("primaryKey") == .bool(true)
        if case .string(let c)? = field("collection") {
            guard let kind = CollectionKind(rawValue: c) else {
                throw ToolFailure("schema of '\(cls).\(n)': unknown collection '\(c)' (list, set or map)")
            }
            collection = kind
        } else {
            collection = nil
        }
        if case .string(let t)? = field("target") { target = t } else { target = nil }
        if ty == .link && target == nil {
            throw ToolFailure("schema of '\(cls).\(n)': a link property needs a \"target\" class")
        }
    }

    var flags: CoreFlags {
        var f: CoreFlags = []
        if optional { f.insert(.nullable) }
        if indexed && !primaryKey { f.insert(.indexed) }
        if fullText { f.insert(.fullText) }
        switch collection {
        case .list?: f.insert(.list)
        case .set?: f.formUnion([.list, .set])
        case .map?: f.formUnion([.list, .map])
        case nil: break
        }
        return f
    }

    var json: JSON {
        var m: [(String, JSON)] = [("name", .string(name)), ("type", .string(type.name))]
        if optional { m.append(("optional", .bool(true))) }
        if indexed { m.append(("indexed", .bool(true))) }
        if fullText { m.append(("fullText", .bool(true))) }
        if primaryKey { m.append(("primaryKey", .bool(true))) }
        if let c = collection { m.append(("collection", .string(c.rawValue))) }
        if let t = target { m.append(("target", .string(t))) }
        return .object(m)
    }

    /// "string?", "list<int>", "map<string, link Dog>", as `strata schema` shows it.
    var typeText: String {
        var base = type == .link ? "link \(target ?? "?")" : type.name
        if optional && !(type == .link && collection == nil) { base += "?" }
        switch collection {
        case .list?: return "list<\(base)>"
        case .set?: return "set<\(base)>"
        case .map?: return "map<string, \(base)>"
        case nil: return base
        }
    }
}

struct ClassSchema {
    let name: String
    let embedded: Bool
    var properties: [PropertySchema]

    var primaryKey: PropertySchema? { properties.first(where: { $0.primaryKey }) }

    func property(_ name: String) -> PropertySchema? { properties.first(where: { $0.name == name }) }

    var json: JSON {
        var m: [(String, JSON)] = [("name", .string(name))]
        if embedded { m.append(("embedded", .bool(true))) }
        m.append(("properties", .array(properties.map(\.json))))
        return .object(m)
    }

    init(name: String, embedded: Bool, properties: [PropertySchema]) {
        self.name = name
        self.embedded = embedded
        self.properties = properties
    }

    init(json: JSON) throws {
        guard case .string(let n)? = json["name"] else { throw ToolFailure("schema: a class has no \"name\"") }
        guard case .array(let props)? = json["properties"] else {
            throw ToolFailure("schema of class '\(n)': no \"properties\" array")
        }
        name = n
        embedded = json["embedded"] == .bool(true)
        properties = try props.map { try PropertySchema(json: $0, in: n) }
    }
}

extension CoreType {
    static let allNamed: [CoreType] = [.bool, .int, .float, .double, .string, .binary, .timestamp,
                                       .objectId, .uuid, .decimal128, .link, .mixed]
}

/// Every class of the file, sorted by name, with its properties in the order they were added.
func readSchema(_ txn: CoreTxn) throws -> [ClassSchema] {
    try txn.tableNames().compactMap { name in
        guard let t = try txn.table(name) else { return nil }
        return ClassSchema(name: name, embedded: try t.isEmbedded(),
                           properties: try t.properties().map(PropertySchema.init))
    }
}

/// Make `wanted` exist in the file of `txn`: missing classes and properties are created; an
/// existing property must have the same type, collection and target (else an error naming it).
/// Returns the schema as the file now has it (property ids filled in).
func ensureSchema(_ wanted: [ClassSchema], in txn: CoreTxn) throws -> [String: ClassSchema] {
    // Tables first (links name their targets), then properties, then embedding.
    for cls in wanted where try txn.table(cls.name) == nil { _ = try txn.createTable(cls.name) }
    var out: [String: ClassSchema] = [:]
    for cls in wanted {
        let table = try txn.table(cls.name)!
        let existing = try table.properties().map(PropertySchema.init)
        var props: [PropertySchema] = []
        for var p in cls.properties {
            if let have = existing.first(where: { $0.name == p.name }) {
                guard have.typeText == p.typeText else {
                    throw ToolFailure("class '\(cls.name)' property '\(p.name)' is \(have.typeText) in the file but \(p.typeText) in the input")
                }
                props.append(have)
                continue
            }
            p.col = try table.addProperty(p.name, type: p.type, flags: p.flags, linkTarget: p.target)
            if p.primaryKey { try table.setPrimaryKey(p.col) }
            props.append(p)
        }
        // Properties the file has beyond the input's stay (they get their defaults).
        for have in existing where !props.contains(where: { $0.name == have.name }) { props.append(have) }
        out[cls.name] = ClassSchema(name: cls.name, embedded: cls.embedded, properties: props)
    }
    for cls in wanted where cls.embedded {
        let table = try txn.table(cls.name)!
        if try !table.isEmbedded() { try table.setEmbedded(true) }
    }
    return out
}
