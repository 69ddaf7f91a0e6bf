// JSON.swift — a JSON value whose objects keep their keys' order (export, dump and --json output
// are deterministic: classes by name, properties in schema order), written compactly, and read
// by a parser of its own (numbers keep their kind: 1 is an integer, 1.0 a double; every Int64 is exact).
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

    /// Parse one JSON text; the error names what is wrong and where (byte offset).
    static func parse(_ data: Data, what: String) throws -> JSON {
        try data.withUnsafeBytes { raw in
            var p = JSONParser(bytes: raw.bindMemory(to: UInt8.self), what: what)
            let v = try p.value(depth: 0)
            p.skipSpace()
            guard p.at == p.bytes.count else { throw p.fail("text after the JSON value") }
            return v
        }
    }
}

/// RFC 8259 JSON, read exactly: integers are Int64 (all of them: Foundation's JSONSerialization
/// reads -2^63 as a double), numbers with a fraction or exponent are doubles.
private struct JSONParser {
    let bytes: UnsafeBufferPointer<UInt8>
    let what: String
    var at = 0

    init(bytes: UnsafeBufferPointer<UInt8>, what: String) {
        self.bytes = bytes
        self.what = what
    }

    func fail(_ why: String) -> ToolFailure { ToolFailure("\(what): not valid JSON: \(why) at byte \(at)") }

    mutating func skipSpace() {
        while at < bytes.count, bytes[at] == 0x20 || bytes[at] == 0x0A || bytes[at] == 0x0D || bytes[at] == 0x09 { at += 1 }
    }

    mutating func literal(_ word: String, _ v: JSON) throws -> JSON {
        for c in word.utf8 {
            guard at < bytes.count, bytes[at] == c else { throw fail("expected \(word)") }
            at += 1
        }
        return v
    }

    mutating func value(depth: Int) throws -> JSON {
        guard depth < 512 else { throw fail("nested too deeply") }
        skipSpace()
        guard at < bytes.count else { throw fail("unexpected end") }
        switch bytes[at] {
        case UInt8(ascii: "n"): return try literal("null", .null)
        case UInt8(ascii: "t"): return try literal("true", .bool(true))
        case UInt8(ascii: "f"): return try literal("false", .bool(false))
        case UInt8(ascii: "\""): return .string(try string())
        case UInt8(ascii: "["):
            at += 1
            var items: [JSON] = []
            skipSpace()
            if at < bytes.count, bytes[at] == UInt8(ascii: "]") { at += 1; return .array(items) }
            while true {
                items.append(try value(depth: depth + 1))
                skipSpace()
                guard at < bytes.count else { throw fail("unexpected end in an array") }
                if bytes[at] == UInt8(ascii: ",") { at += 1; continue }
                if bytes[at] == UInt8(ascii: "]") { at += 1; return .array(items) }
                throw fail("expected , or ]")
            }
        case UInt8(ascii: "{"):
            at += 1
            var members: [(String, JSON)] = []
            skipSpace()
            if at < bytes.count, bytes[at] == UInt8(ascii: "}") { at += 1; return .object(members) }
            while true {
                skipSpace()
                guard at < bytes.count, bytes[at] == UInt8(ascii: "\"") else { throw fail("expected a member name") }
                let k = try string()
                skipSpace()
                guard at < bytes.count, bytes[at] == UInt8(ascii: ":") else { throw fail("expected :") }
                at += 1
                members.append((k, try value(depth: depth + 1)))
                skipSpace()
                guard at < bytes.count else { throw fail("unexpected end in an object") }
                if bytes[at] == UInt8(ascii: ",") { at += 1; continue }
                if bytes[at] == UInt8(ascii: "}") { at += 1; return .object(members) }
                throw fail("expected , or }")
            }
        default:
            return try number()
        }
    }

    mutating func number() throws -> JSON {
        let start = at
        var isInt = true
        if at < bytes.count, bytes[at] == UInt8(ascii: "-") { at += 1 }
        let digits0 = at
        while at < bytes.count, bytes[at] >= 0x30, bytes[at] <= 0x39 { at += 1 }
        guard at > digits0 else { throw fail("unexpected character") }
        if at < bytes.count, bytes[at] == UInt8(ascii: ".") {
            isInt = false
            at += 1
            let f0 = at
            while at < bytes.count, bytes[at] >= 0x30, bytes[at] <= 0x39 { at += 1 }
            guard at > f0 else { throw fail("a digit must follow the decimal point") }
        }
        if at < bytes.count, bytes[at] == UInt8(ascii: "e") || bytes[at] == UInt8(ascii: "E") {
            isInt = false
            at += 1
            if at < bytes.count, bytes[at] == UInt8(ascii: "+") || bytes[at] == UInt8(ascii: "-") { at += 1 }
            let e0 = at
            while at < bytes.count, bytes[at] >= 0x30, bytes[at] <= 0x39 { at += 1 }
            guard at > e0 else { throw fail("a digit must follow the exponent") }
        }
        let text = String(decoding: UnsafeBufferPointer(rebasing: bytes[start..<at]), as: UTF8.self)
        if isInt {
            guard let i = Int64(text) else { throw fail("the integer \(text) is out of the 64-bit range") }
            return .int(i)
        }
        guard let d = Double(text) else { throw fail("bad number \(text)") }
        return .double(d)
    }

    mutating func hex4() throws -> UInt32 {
        guard at + 4 <= bytes.count else { throw fail("short \\u escape") }
        var v: UInt32 = 0
        for _ in 0..<4 {
            let c = bytes[at]
            let d: UInt32
            switch c {
            case 0x30...0x39: d = UInt32(c - 0x30)
            case 0x41...0x46: d = UInt32(c - 0x41 + 10)
            case 0x61...0x66: d = UInt32(c - 0x61 + 10)
            default: throw fail("bad \\u escape")
            }
            v = v * 16 + d
            at += 1
        }
        return v
    }

    mutating func string() throws -> String {
        at += 1  // the opening quote
        var out = [UInt8]()
        while true {
            guard at < bytes.count else { throw fail("unterminated string") }
            let c = bytes[at]
            at += 1
            switch c {
            case UInt8(ascii: "\""):
                guard let s = String(validating: out, as: UTF8.self) else { throw fail("a string is not valid UTF-8") }
                return s
            case UInt8(ascii: "\\"):
                guard at < bytes.count else { throw fail("unterminated escape") }
                let e = bytes[at]
                at += 1
                switch e {
                case UInt8(ascii: "\""): out.append(0x22)
                case UInt8(ascii: "\\"): out.append(0x5C)
                case UInt8(ascii: "/"): out.append(0x2F)
                case UInt8(ascii: "b"): out.append(0x08)
                case UInt8(ascii: "f"): out.append(0x0C)
                case UInt8(ascii: "n"): out.append(0x0A)
                case UInt8(ascii: "r"): out.append(0x0D)
                case UInt8(ascii: "t"): out.append(0x09)
                case UInt8(ascii: "u"):
                    var u = try hex4()
                    if (0xD800..<0xDC00).contains(u) {
                        guard at + 2 <= bytes.count, bytes[at] == 0x5C, bytes[at + 1] == UInt8(ascii: "u") else {
                            throw fail("a lone surrogate in a \\u escape")
                        }
                        at += 2
                        let lo = try hex4()
                        guard (0xDC00..<0xE000).contains(lo) else { throw fail("a lone surrogate in a \\u escape") }
                        u = 0x10000 + ((u - 0xD800) << 10) + (lo - 0xDC00)
                    }
                    guard let scalar = Unicode.Scalar(u) else { throw fail("a lone surrogate in a \\u escape") }
                    out.append(contentsOf: Array(String(Character(scalar)).utf8))
                default: throw fail("unknown escape \\\(Character(Unicode.Scalar(e)))")
                }
            case 0..<0x20:
                throw fail("a control character in a string")
            default:
                out.append(c)
            }
        }
    }
}
