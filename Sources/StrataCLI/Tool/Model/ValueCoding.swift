// ValueCoding.swift — stored values as JSON and as text, and back, by the property's type.
//
// A property of a known type takes its natural JSON form: numbers, strings, base64 for binary,
// ISO 8601 with nanoseconds for timestamps ("2024-05-01T12:00:00.5Z"), hex for object ids, the
// canonical text for UUIDs and decimal128, a reference for links (below). A mixed property holds
// any type, so beside null, booleans, integers, doubles and strings its values carry a tag, as
// MongoDB's extended JSON does: {"$float": 1.5}, {"$binary": "…"}, {"$date": "…"}, {"$oid": "…"},
// {"$uuid": "…"}, {"$decimal": "…"}, {"$link": {"class": "Dog", "ref": …}}.
// A reference to an object is its primary key's value when its class has one, else its position
// among its class's objects in the export (0-based, in key order): both survive an import into a
// new file, where keys are new.
import CCore
import Foundation
@_spi(StrataCore) import Strata

/// Turns links into references and back (Transfer/References.swift).
protocol LinkCoding {
    func reference(to key: Int64, in cls: String) throws -> JSON
    func key(for ref: JSON, in cls: String) throws -> Int64
    func className(ofTable id: UInt32) throws -> String
    func tableId(of cls: String) throws -> UInt32
}

enum ValueCoding {
    // MARK: JSON

    static func json(_ v: StoredValue, _ p: PropertySchema, links: LinkCoding) throws -> JSON {
        if p.type == .mixed { return try mixedJSON(v, links: links) }
        switch v {
        case .null: return .null
        case .bool(let b): return .bool(b)
        case .int(let i): return .int(i)
        case .float(let f): return floatJSON(f)
        case .double(let d): return .double(d)
        case .string(let s): return .string(s)
        case .data(let d): return .string(d.base64EncodedString())
        case .timestamp(let s, let n): return .string(Timestamps.text(seconds: s, nanoseconds: n))
        case .objectId(let o): return .string(o.stringValue)
        case .uuid(let u): return .string(u.uuidString.lowercased())
        case .decimal(let d): return .string(d.description)
        case .link(let k): return try links.reference(to: k, in: p.target ?? "")
        case .typedLink: return try mixedJSON(v, links: links)
        }
    }

    /// A float as the shortest decimal that reads back to it (not its double's digits).
    private static func floatJSON(_ f: Float) -> JSON {
        if f.isNaN || f.isInfinite { return .double(Double(f)) }
        return .double(Double("\(f)") ?? Double(f))
    }

    static func mixedJSON(_ v: StoredValue, links: LinkCoding) throws -> JSON {
        switch v {
        case .null: return .null
        case .bool(let b): return .bool(b)
        case .int(let i): return .int(i)
        case .double(let d) where d.isFinite: return .double(d)
        case .double(let d): return .object([("$double", .double(d))])
        case .string(let s): return .string(s)
        case .float(let f): return .object([("$float", floatJSON(f))])
        case .data(let d): return .object([("$binary", .string(d.base64EncodedString()))])
        case .timestamp(let s, let n): return .object([("$date", .string(Timestamps.text(seconds: s, nanoseconds: n)))])
        case .objectId(let o): return .object([("$oid", .string(o.stringValue))])
        case .uuid(let u): return .object([("$uuid", .string(u.uuidString.lowercased()))])
        case .decimal(let d): return .object([("$decimal", .string(d.description))])
        case .typedLink(let t, let k):
            let cls = try links.className(ofTable: t)
            return .object([("$link", .object([("class", .string(cls)), ("ref", try links.reference(to: k, in: cls))]))])
        case .link(let k): return .int(k)
        }
    }

    /// The value a JSON value stands for in property `p` (an element of it, for collections).
    static func value(_ j: JSON, _ p: PropertySchema, links: LinkCoding, at: @autoclosure () -> String) throws -> StoredValue {
        func bad(_ why: String = "") -> ToolFailure {
            ToolFailure("\(at()): \(j.text) is not a valid \(p.type.name)\(why.isEmpty ? "" : " (\(why))")")
        }
        if case .null = j { return .null }
        switch p.type {
        case .bool:
            guard case .bool(let b) = j else { throw bad() }
            return .bool(b)
        case .int:
            guard case .int(let i) = j else { throw bad() }
            return .int(i)
        case .float, .double:
            let d: Double
            switch j {
            case .int(let i): d = Double(i)
            case .double(let x): d = x
            case .string("NaN"): d = .nan
            case .string("Infinity"): d = .infinity
            case .string("-Infinity"): d = -.infinity
            default: throw bad()
            }
            return p.type == .float ? .float(Float(d)) : .double(d)
        case .string:
            guard case .string(let s) = j else { throw bad() }
            return .string(s)
        case .binary:
            guard case .string(let s) = j, let d = Data(base64Encoded: s) else { throw bad("base64 expected") }
            return .data(d)
        case .timestamp:
            guard case .string(let s) = j, let t = Timestamps.parse(s) else {
                throw bad("ISO 8601 expected, as 2024-05-01T12:00:00.25Z")
            }
            return .timestamp(t.seconds, t.nanoseconds)
        case .objectId:
            guard case .string(let s) = j, let o = try? ObjectId(string: s) else { throw bad("24 hex digits expected") }
            return .objectId(o)
        case .uuid:
            guard case .string(let s) = j, let u = UUID(uuidString: s) else { throw bad() }
            return .uuid(u)
        case .decimal128:
            let text: String
            switch j {
            case .string(let s): text = s
            case .int(let i): text = String(i)
            case .double(let d): text = "\(d)"
            default: throw bad()
            }
            guard let d = try? Decimal128(string: text) else { throw bad() }
            return .decimal(d)
        case .link:
            return .link(try links.key(for: j, in: p.target ?? ""))
        case .mixed:
            return try mixedValue(j, links: links, at: at())
        case .null:
            throw bad()
        }
    }

    static func mixedValue(_ j: JSON, links: LinkCoding, at: @autoclosure () -> String) throws -> StoredValue {
        switch j {
        case .null: return .null
        case .bool(let b): return .bool(b)
        case .int(let i): return .int(i)
        case .double(let d): return .double(d)
        case .string(let s): return .string(s)
        case .array:
            throw ToolFailure("\(at()): a mixed value cannot be an array (nested collections are not supported)")
        case .object(let m):
            guard m.count == 1, let member = m.first else {
                throw ToolFailure("\(at()): \(j.text) is not a tagged mixed value ({\"$date\": …}, {\"$link\": …}, …)")
            }
            let (tag, inner) = member
            func typed(_ t: CoreType) throws -> StoredValue {
                try value(inner, PropertySchema(type: t), links: links, at: at())
            }
            switch tag {
            case "$double": return try typed(.double)
            case "$float": return try typed(.float)
            case "$binary": return try typed(.binary)
            case "$date": return try typed(.timestamp)
            case "$oid": return try typed(.objectId)
            case "$uuid": return try typed(.uuid)
            case "$decimal": return try typed(.decimal128)
            case "$link":
                guard case .string(let cls)? = inner["class"], let ref = inner["ref"] else {
                    throw ToolFailure("\(at()): $link needs \"class\" and \"ref\"")
                }
                return .typedLink(try links.tableId(of: cls), try links.key(for: ref, in: cls))
            default:
                throw ToolFailure("\(at()): unknown tag '\(tag)' in a mixed value")
            }
        }
    }

    // MARK: text (tables and CSV)

    /// One cell: strings as they are, other values as their JSON text without quotes.
    static func text(_ j: JSON) -> String {
        switch j {
        case .null: return ""
        case .string(let s): return s
        case .double(let d) where !d.isFinite: return d.isNaN ? "NaN" : d < 0 ? "-Infinity" : "Infinity"
        default: return j.text
        }
    }

    /// The JSON value a CSV cell stands for in property `p`: an empty cell is null for optional
    /// properties, collections and mixed values are JSON text, the rest are their plain text.
    static func json(cell: String, _ p: PropertySchema, at: @autoclosure () -> String) throws -> JSON {
        if p.collection != nil || p.type == .mixed {
            if cell.isEmpty { return p.collection == nil ? .null : .array([]) }
            return try JSON.parse(Data(cell.utf8), what: at())
        }
        if cell.isEmpty && (p.optional || p.type != .string) { return .null }
        switch p.type {
        case .bool:
            switch cell.lowercased() {
            case "true", "1", "yes": return .bool(true)
            case "false", "0", "no": return .bool(false)
            default: throw ToolFailure("\(at()): '\(cell)' is not a bool (true or false)")
            }
        case .int:
            guard let i = Int64(cell) else { throw ToolFailure("\(at()): '\(cell)' is not an int") }
            return .int(i)
        case .float, .double:
            if ["NaN", "Infinity", "-Infinity"].contains(cell) { return .string(cell) }
            guard let d = Double(cell) else { throw ToolFailure("\(at()): '\(cell)' is not a \(p.type.name)") }
            return .double(d)
        case .link:
            if let i = Int64(cell) { return .int(i) }
            return .string(cell)
        default:
            return .string(cell)
        }
    }
}

extension PropertySchema {
    /// A stand-in property of one type (a mixed value's tagged inner value).
    init(type: CoreType) {
        self.init(CoreProperty(col: 0, name: "", type: type, flags: [.nullable], linkTarget: nil))
    }
}
