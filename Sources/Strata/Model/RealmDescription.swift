import Foundation

/// Objects and collections described as RealmSwift (realm-cocoa) describes them, so output and
/// tests that match it carry over:
///
/// ```
/// Person {
///     name = 张三;
///     dogs = List<Dog> <0x6000…> (
///         [0] Dog {
///             name = 小白;
///         }
///     );
///     company = (null);
/// }
/// ```
/// Nesting stops at depth 5 with `<Maximum depth exceeded>` (objects may link in cycles).
enum RealmDescription {
    static let maxDepth = 5
    static let exceeded = "<Maximum depth exceeded>"

    static func object(_ o: Object, depth: Int = maxDepth) -> String {
        if depth == 0 { return exceeded }
        let info = o.__accessor?.info.classInfo ?? ClassInfo.of(type(of: o))
        let name = o.__accessor?.info.name ?? type(of: o).className()
        if o.isInvalidated { return "\(name) [invalid object]" }
        var s = "\(name) {\n"
        for p in info.properties where p.kind.collection != .linkingObjects {
            let v = value(info.value(of: o, p), depth: depth - 1)
            s += "\t\(p.name) = \(v.replacingOccurrences(of: "\n", with: "\n\t"));\n"
        }
        return s + "}"
    }

    /// `List<Dog> <0x…> (\n\t[0] …,\n\t[1] …\n)`.
    static func collection<S: Sequence>(_ kind: String, element: Any.Type, _ items: S, identity: AnyObject?,
                                        depth: Int = maxDepth) -> String {
        if depth == 0 { return exceeded }
        let address = identity.map { String(UInt(bitPattern: ObjectIdentifier($0).hashValue), radix: 16) } ?? "0"
        let lines = items.enumerated().map { i, e in
            "\t[\(i)] " + value(e, depth: depth - 1).replacingOccurrences(of: "\n", with: "\n\t")
        }
        return "\(kind)<\(elementName(element))> <0x\(address)> (\n" + lines.joined(separator: ",\n") + "\n)"
    }

    /// `Map<string, Dog> <0x…> (\n[key]: …,\n[other]: …\n)` (realm-cocoa's dictionary format:
    /// entries not indented).
    static func map(element: Any.Type, _ entries: [(String, Any)], identity: AnyObject, depth: Int = maxDepth) -> String {
        if depth == 0 { return exceeded }
        let address = String(UInt(bitPattern: ObjectIdentifier(identity).hashValue), radix: 16)
        let lines = entries.map { k, v in
            "[\(k)]: " + value(v, depth: depth - 1).replacingOccurrences(of: "\n", with: "\n\t")
        }
        return "Map<string, \(elementName(element))> <0x\(address)> (\n" + lines.joined(separator: ",\n") + "\n)"
    }

    /// A collection's element type as RealmSwift names it: the class, or the stored type.
    static func elementName(_ t: Any.Type) -> String {
        if let o = t as? Object.Type { return o.className() }
        if let c = t as? any RealmCollectionValue.Type {
            let k = c._strataElementKind
            if let target = k.target { return target.className() }
            return PropertyType(core: k.type).description
        }
        return "\(t)"
    }

    /// One value: nil as `(null)`, numbers and Bools as NSNumber writes them, bytes in hex,
    /// objects and collections nested.
    static func value(_ v: Any?, depth: Int) -> String {
        guard let v, !ValueConversion.isNil(v) else { return "(null)" }
        let inner = (v as? _OptionalMarker)?._strataWrapped ?? v
        switch inner {
        case let o as Object: return object(o, depth: depth)
        case let c as _Describable: return c._strataDescription(depth: depth)
        case let a as AnyRealmValue:
            if case .object(let o) = a { return object(o, depth: depth) }
            guard let s = a.stored, s != .null else { return "(null)" }
            return stored(s)
        case let b as Bool: return b ? "1" : "0"
        case let d as Data: return data(d)
        case let s as String: return s
        case let p as any _PrimitivePersistable: return stored(p._strata.value)
        case let c as any _CustomPersistable: return value(c._strataPersisted, depth: depth)
        default: return String(describing: inner)
        }
    }

    private static func stored(_ s: StoredValue) -> String {
        switch s {
        case .null: return "(null)"
        case .bool(let b): return b ? "1" : "0"
        case .int(let i): return String(i)
        case .float(let f): return "\(f)"
        case .double(let d): return "\(d)"
        case .string(let x): return x
        case .data(let d): return data(d)
        case .timestamp: return Date(_strata: _Stored(s)).description
        case .objectId(let o): return o.stringValue
        case .uuid(let u): return u.uuidString
        case .decimal(let d): return d.description
        case .link(let k), .typedLink(_, let k): return "(object \(k))"
        }
    }

    /// `<61626364 65 — 5 total bytes>`: at most 24 bytes shown, in groups of four.
    private static func data(_ d: Data) -> String {
        let shown = d.prefix(24)
        var hex = ""
        for (i, b) in shown.enumerated() {
            if i > 0 && i % 4 == 0 { hex += " " }
            hex += String(format: "%02x", b)
        }
        return "<\(hex) — \(d.count) total bytes>"
    }
}

/// Collections describing themselves at a depth (RealmDescription).
protocol _Describable {
    func _strataDescription(depth: Int) -> String
}
