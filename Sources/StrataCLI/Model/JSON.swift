// JSON.swift — a JSON value whose objects keep their keys' order (export, dump and --json output
// are deterministic: classes by name, properties in schema order), written compactly, and read
// through Foundation's JSONSerialization (numbers keep their kind: 1 is an integer, 1.0 a double).
import Foundation

enum JSON: Equatable, Sendable {
    case null
    case bool(Bool)
    case int(Int64)
    case double(Double)
    case string(String)
    case array([JSON])
    case object([(String, JSON)])

    static func == (a: JSON, b: JSON) -> Bool {
        switch (a, b) {
        case (.null, .null): return true
        case (.bool(let x), .bool(let y)): return x == y
        case (.int(let x), .int(let y)): return x == y
        case (.double(let x), .double(let y)): return x.bitPattern == y.bitPattern
        case (.string(let x), .string(let y)): return x == y
        case (.array(let x), .array(let y)): return x == y
        case (.object(let x), .object(let y)):
            return x.count == y.count && zip(x, y).allSatisfy { $0.0 == $1.0 && $0.1 == $1.1 }
        default: return false
        }
    }

    /// The member `key` of an object (nil for a missing key or a non-object).
    subscript(key: String) -> JSON? {
        guard case .object(let members) = self else { return nil }
        return members.first(where: { $0.0 == key })?.1
    }

    var text: String {
        var out = ""
        write(to: &out)
        return out
    }

    func write(to out: inout String) {
        switch self {
        case .null: out += "null"
        case .bool(let b): out += b ? "true" : "false"
        case .int(let i): out += String(i)
        case .double(let d):
            // Shortest text that reads back to the same double; JSON has no NaN or infinities.
            if d.isNaN { out += "\"NaN\"" } else if d.isInfinite { out += d < 0 ? "\"-Infinity\"" : "\"Infinity\"" }
            else { out += "\(d)" }
        case .string(let s): JSON.quote(s, into: &out)
        case .array(let items):
            out += "["
            for (i, item) in items.enumerated() {
                if i > 0 { out += "," }
                item.write(to: &out)
            }
            out += "]"
        case .object(let members):
            out += "{"
            for (i, (k, v)) in members.enumerated() {
                if i > 0 { out += "," }
                JSON.quote(k, into: &out)
                out += ":"
                v.write(to: &out)
            }
            out += "}"
        }
    }

    static func quote(_ s: String, into out: inout String) {
        out += "\""
        for u in s.unicodeScalars {
            switch u {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            case "\r": out += "\\r"
            case "\t": out += "\\t"
            case _ where u.value < 0x20:
                out += "\\u" + String(repeating: "0", count: 4 - String(u.value, radix: 16).count)
                    + String(u.value, radix: 16)
            default: out.unicodeScalars.append(u)
            }
        }
        out += "\""
    }

    /// Parse one JSON text; the error names what is wrong.
    static func parse(_ data: Data, what: String) throws -> JSON {
        let any: Any
        do {
            any = try JSONSerialization.jsonObject(with: data, options: [.fragmentsAllowed])
        } catch {
            throw ToolFailure("\(what): not valid JSON (\((error as NSError).userInfo[NSDebugDescriptionErrorKey] ?? error))")
        }
        return try from(any, what: what)
    }

    private static func from(_ any: Any, what: String) throws -> JSON {
        switch any {
        case is NSNull: return .null
        case let s as String: return .string(s)
        case let n as NSNumber:
            switch String(cString: n.objCType) {
            case "c": return .bool(n.boolValue)
            case "d", "f": return .double(n.doubleValue)
            case "Q" where n.uint64Value > UInt64(Int64.max):
                throw ToolFailure("\(what): the number \(n) is out of the 64-bit integer range")
            default: return .int(n.int64Value)
            }
        case let a as [Any]: return .array(try a.map { try from($0, what: what) })
        case let o as [String: Any]:
            return .object(try o.sorted(by: { $0.key < $1.key }).map { ($0.key, try from($0.value, what: what)) })
        default: throw ToolFailure("\(what): unexpected JSON value \(any)")
        }
    }
}
