import CCore
import Foundation

/// A sort key of `Results.sorted(by:)`: a property (or a key path through to-one links) and its
/// direction, as RealmSwift spells it.
public struct SortDescriptor: Hashable, CustomStringConvertible {
    /// The property (or key path through links) to sort by.
    public let keyPath: String
    /// Ascending (true, the default) or descending order.
    public let ascending: Bool

    /// Sorts by `keyPath`, ascending unless `ascending` is false. An unknown key path traps when the sort is used.
    public init(keyPath: String, ascending: Bool = true) {
        self.keyPath = keyPath
        self.ascending = ascending
    }

    /// Sorting by the property a key path reads (`SortDescriptor(keyPath: \Person.age)`).
    public init<Element: ObjectBase>(keyPath: PartialKeyPath<Element>, ascending: Bool = true) {
        self.init(keyPath: _name(for: keyPath), ascending: ascending)
    }

    /// The same key path the other way round.
    public func reversed() -> SortDescriptor { SortDescriptor(keyPath: keyPath, ascending: !ascending) }

    public var description: String {
        "SortDescriptor(keyPath: \(keyPath), direction: \(ascending ? "ascending" : "descending"))"
    }
}

/// A string literal sorts ascending by the key path it names (`sorted(by: ["name"])`).
extension SortDescriptor: ExpressibleByStringLiteral {
    public init(stringLiteral value: String) { self.init(keyPath: value) }
}


/// What a `Results` asks the core for: the filters so far (each a predicate of the core's
/// language whose arguments are numbered `$n` into `args`), the sort keys and the distinct keys.
struct QuerySpec {
    var predicates: [String] = []
    var args: [Any] = []
    var sort: [SortDescriptor] = []
    var distinct: [String] = []
    /// `prefix(n)`: at most this many objects, after sorting and distinct.
    var limit: Int?

    var isEmpty: Bool { predicates.isEmpty && sort.isEmpty && distinct.isEmpty && limit == nil }

    /// The core's query text.
    var text: String {
        var t = predicates.isEmpty ? "TRUEPREDICATE"
              : predicates.count == 1 ? predicates[0]
              : predicates.map { "(\($0))" }.joined(separator: " AND ")
        if !sort.isEmpty {
            t += " SORT(" + sort.map { "\($0.keyPath) \($0.ascending ? "ASC" : "DESC")" }
                .joined(separator: ", ") + ")"
        }
        if !distinct.isEmpty { t += " DISTINCT(" + distinct.joined(separator: ", ") + ")" }
        return t
    }

    /// The length of a value placeholder's specifier after `%` at `at` (`@`, `d`, `ld`, `lld`, …),
    /// or nil for another character.
    private static let conversions = Array("diufgeD".utf8)

    private static func valuePlaceholder(_ bytes: [UInt8], _ at: Int) -> Int? {
        if bytes[at] == UInt8(ascii: "@") { return 1 }
        var j = at
        while j < bytes.count, bytes[j] == UInt8(ascii: "l") || bytes[j] == UInt8(ascii: "h") || bytes[j] == UInt8(ascii: "q"),
              j - at < 2 { j += 1 }
        guard j < bytes.count, conversions.contains(bytes[j]) else { return nil }
        return j - at + 1
    }

    /// Add a filter written with NSPredicate's placeholders: `%@` (the next argument), `%K` (the
    /// next argument, a key path, pasted in) and `$0…$n` (argument n); its arguments follow
    /// those of the filters before it. Quoted text is left as it is. Read as UTF-8 bytes (every
    /// character that means something here is ASCII, and a multi-byte character's bytes never are).
    /// `root`: the class the key paths start from (a memberwise comparison with a key path
    /// that ends in a collection property is a SUBQUERY over its elements).
    mutating func add(format: String, _ original: [Any], root: ClassInfo? = nil) {
        let base = args.count
        let plain = base == 0 && original.allSatisfy(Self.isPlain)
        if plain, let known = ParsedFormats.shared[format] { // parsed before: the same text
            predicates.append(known.text)
            for k in 0..<max(known.used, original.count) { args.append(k < original.count ? original[k] : Optional<Int>.none as Any) }
            return
        }
        var pasted = false
        var out: [UInt8] = []
        var next = 0
        var used = 0
        var given = original
        // the values of memberwise comparisons, numbered after the given arguments at the end
        var members: [Any] = []
        /// Argument n is a value mapped to an embedded object, compared with `==`/`!=` by the key
        /// path before it: compare each of the object's properties instead (RealmSwift's
        /// memberwise equality); true when done.
        func memberwise(_ n: Int) -> Bool {
            guard n < given.count, !Self.isPlain(given[n]), // (the cheap casts first)
                  let c = given[n] as? any _CustomPersistable,
                  let o = c._strataPersisted as? EmbeddedObject else { return false }
            let text = String(decoding: out, as: UTF8.self)
            guard let (start, keyPath, any, negated) = Self.comparison(endingAt: text) else {
                strataTrap("A \(type(of: c)) (mapped to the embedded class '\(o.objectSchema.className)') can only be "
                           + "compared with == or != to a property: \(format)")
            }
            used = max(used, n + 1)
            given[n] = NSNull()
            var path = keyPath
            var collection = false
            for suffix in [".@allValues", ".@values"] where path.hasSuffix(suffix) {
                path.removeLast(suffix.count)
                collection = true
            }
            let kept = String(text.prefix(start))
            if collection || root.map({ Self.endsInCollection(path, from: $0) }) == true {
                // the elements of a collection: one of them equal in every member (as RealmSwift:
                // `!=` holds when the collection has elements and none is equal)
                let v = "$m\(members.count)"
                let inner = o.memberwiseValues.map { name, value in
                    members.append(value)
                    return "\(v).\(name) == \u{1}\(members.count - 1)\u{1}"
                }.joined(separator: " AND ")
                let sub = "SUBQUERY(\(path), \(v), \(inner)).@count"
                out = Array((kept + (negated ? "(\(path).@count > 0 AND \(sub) == 0)" : "(\(sub) > 0)")).utf8)
                return true
            }
            let parts = o.memberwiseValues.map { name, value in
                members.append(value)
                return "\(any ? "ANY " : "")\(keyPath).\(name) == \u{1}\(members.count - 1)\u{1}"
            }
            out = Array((kept + (negated ? "NOT " : "") + "(" + parts.joined(separator: " AND ") + ")").utf8)
            return true
        }
        func argument(_ n: Int) { out += "$\(base + n)".utf8 }
        var quote: UInt8?
        let bytes = Array(format.utf8)
        out.reserveCapacity(bytes.count + 8)
        var i = 0
        while i < bytes.count {
            let c = bytes[i]
            if let q = quote {
                out.append(c)
                if c == UInt8(ascii: "\\"), i + 1 < bytes.count { out.append(bytes[i + 1]); i += 2; continue }
                if c == q { quote = nil }
                i += 1
                continue
            }
            if c == UInt8(ascii: "'") || c == UInt8(ascii: "\"") { quote = c; out.append(c); i += 1; continue }
            if c == UInt8(ascii: "%"), i + 1 < bytes.count, let len = Self.valuePlaceholder(bytes, i + 1) {
                // %@, and NSPredicate's printf-style %d %i %u %f %ld %lld %lu %llu %lf: the next argument
                if !memberwise(next) { argument(next) }
                next += 1
                used = max(used, next)
                i += 1 + len
                continue
            }
            if c == UInt8(ascii: "%"), i + 1 < bytes.count, bytes[i + 1] == UInt8(ascii: "K") { /* a key path, pasted in */
                if next < given.count { out += "\(given[next])".utf8 }
                pasted = true
                next += 1
                used = max(used, next)
                i += 2
                continue
            }
            if c == UInt8(ascii: "$"), i + 1 < bytes.count, (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(bytes[i + 1]) {
                var j = i + 1
                var n = 0
                while j < bytes.count, (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(bytes[j]) {
                    n = n * 10 + Int(bytes[j] - UInt8(ascii: "0"))
                    j += 1
                }
                if !memberwise(n) { argument(n) }
                used = max(used, n + 1)
                i = j
                continue
            }
            out.append(c)
            i += 1
        }
        var text = String(decoding: out, as: UTF8.self)
        let count = max(used, given.count)
        for (j, _) in members.enumerated() { text = text.replacingOccurrences(of: "\u{1}\(j)\u{1}", with: "$\(base + count + j)") }
        predicates.append(text)
        for k in 0..<count { args.append(k < given.count ? given[k] : Optional<Int>.none as Any) }
        args += members
        if plain, !pasted, members.isEmpty { ParsedFormats.shared[format] = (text, used) }
    }

    /// Whether `keyPath` (through to-one links) ends in a list, set or map property of `root`.
    static func endsInCollection(_ keyPath: String, from root: ClassInfo) -> Bool {
        var info = root
        let parts = keyPath.split(separator: ".").map(String.init)
        for (i, name) in parts.enumerated() {
            guard let p = info.property(named: name) else { return false }
            if i == parts.count - 1 { return p.kind.collection == .list || p.kind.collection == .set || p.kind.collection == .map }
            guard let target = p.kind.target else { return false }
            info = ClassInfo.of(target)
        }
        return false
    }

    /// An argument that is never compared memberwise (cheap to tell: a cast to a concrete type).
    private static func isPlain(_ a: Any) -> Bool { a is String || a is Int || a is Double || a is Bool }

    /// The comparison `[ANY] keyPath ==` (or `!=`, `=`, `<>`) that `text` ends with: where it
    /// starts, its key path, whether ANY was written and whether it is an inequality.
    private static func comparison(endingAt text: String) -> (Int, String, Bool, Bool)? {
        let c = Array(text)
        var i = c.count
        func skipSpaces() { while i > 0, c[i - 1] == " " { i -= 1 } }
        skipSpaces()
        guard i >= 1 else { return nil }
        let negated: Bool
        if i >= 2, ["==", "!=", "<>"].contains(String(c[(i - 2)..<i])) {
            negated = c[i - 2] != "="
            i -= 2
        } else if c[i - 1] == "=" {
            negated = false
            i -= 1
        } else { return nil }
        skipSpaces()
        let end = i
        while i > 0, c[i - 1].isLetter || c[i - 1].isNumber || "_.@$".contains(c[i - 1]) { i -= 1 }
        guard i < end else { return nil }
        let keyPath = String(c[i..<end])
        var start = i
        var any = false
        var j = i
        while j > 0, c[j - 1] == " " { j -= 1 }
        for word in ["ANY", "SOME"] where j >= word.count && String(c[(j - word.count)..<j]).uppercased() == word {
            let before = j - word.count
            if before == 0 || !(c[before - 1].isLetter || c[before - 1].isNumber) { any = true; start = before }
        }
        return (start, keyPath, any, negated)
    }
}

/// Predicates parsed by `QuerySpec.add(format:)`, by format, for the formats that parse the same
/// whatever their arguments (no `%K`, plain arguments) as a first filter: the core's text and how
/// many arguments it uses. Code filters with a handful of formats again and again; bounded all
/// the same (cleared when full).
private final class ParsedFormats: @unchecked Sendable { // (its table is guarded by its lock)
    static let shared = ParsedFormats()
    private let lock = NSLock()
    private var parsed: [String: (text: String, used: Int)] = [:]
    /// The format asked for last, compared before the table is hashed (a literal format is
    /// the same string each time: equal at its first word).
    private var last: (format: String, parsed: (text: String, used: Int))?

    subscript(format: String) -> (text: String, used: Int)? {
        get {
            lock.lock()
            defer { lock.unlock() }
            if let last, last.format == format { return last.parsed }
            guard let known = parsed[format] else { return nil }
            last = (format, known)
            return known
        }
        set {
            lock.lock()
            defer { lock.unlock() }
            if parsed.count >= 1024 { parsed.removeAll() }
            parsed[format] = newValue
            last = newValue.map { (format, $0) }
        }
    }
}

/// Query arguments as `strata_value`s whose bytes live as long as this object.
final class QueryArgs {
    private(set) var values: [strata_value] = []
    private var buffers: [UnsafeMutableRawPointer] = []
    /// No argument reads the file (an object, by its key, or a collection other than an Array
    /// given for IN: a List or Results is live): the values stay right for every later run.
    private(set) var isConstant = true

    /// Convert each argument: a primitive of the model, nil, a managed object (for link
    /// equality), or a sequence of those (for IN). What cannot be converted is named.
    init(_ args: [Any], what: @autoclosure () -> String) throws {
        values.reserveCapacity(args.count)
        for (i, a) in args.enumerated() {
            values.append(try convert(a, what: { "\(what()), argument \(i)" }, nested: false))
        }
    }

    /// Short strings' bytes, back to back (one allocation for the usual query's arguments).
    private var arena: UnsafeMutableRawPointer?
    private var arenaUsed = 0
    private static let arenaSize = 256

    deinit {
        for b in buffers { free(b) }
        free(arena)
    }

    private func copy(_ bytes: UnsafeRawBufferPointer) -> UnsafeRawPointer? {
        if bytes.count == 0 { return nil }
        let p: UnsafeMutableRawPointer
        if bytes.count <= Self.arenaSize - arenaUsed {
            if arena == nil { arena = malloc(Self.arenaSize)! }
            p = arena! + arenaUsed
            arenaUsed += bytes.count
        } else {
            p = malloc(bytes.count)!
            buffers.append(p)
        }
        p.copyMemory(from: bytes.baseAddress!, byteCount: bytes.count)
        return UnsafeRawPointer(p)
    }

    private func convert(_ a: Any, what: () -> String, nested: Bool) throws -> strata_value {
        // the common arguments first: a cast to a concrete type is cheap, the ones below are not
        if let str = a as? String { return stored(.string(str)) }
        if let i = a as? Int { return stored(.int(Int64(i))) }
        if let any = a as? AnyRealmValue, case .object(let o) = any { return try convert(o, what: what, nested: nested) }
        if let o = a as? Object {
            isConstant = false
            var v = strata_value()
            v.type = STRATA_TYPE_LINK
            // an unmanaged or deleted object is no object of the file: it matches no link (as in
            // RealmSwift), through a key no object has
            v.u.link = o.__accessor.flatMap { $0.isInvalidated ? nil : $0.key } ?? Int64.max
            return v
        }
        if let s = ValueConversion.storedIfPrimitive(a) { return stored(s) }
        if let region = a as? RLMGeospatial { return geo(region) }
        if !nested, let items = Self.elements(a) {
            if !(a is [Any]) { isConstant = false } // (a List or Results is live: read at each run)
            let list = try items.map { try convert($0, what: what, nested: true) }
            let p = UnsafeMutablePointer<strata_value>.allocate(capacity: max(list.count, 1))
            p.initialize(from: list, count: list.count)
            buffers.append(UnsafeMutableRawPointer(p))
            var v = strata_value()
            v.type = STRATA_TYPE_LIST
            v.u.list.items = UnsafePointer(p)
            v.u.list.count = list.count
            return v
        }
        throw StrataError(code: .wrongType,
                          message: "\(what()): a \(type(of: a)) cannot be a query argument")
    }

    /// A region for GEOWITHIN: its description and points copied into memory this object owns.
    private func geo(_ region: RLMGeospatial) -> strata_value {
        region._strataWithGeo { g in
            let shape = UnsafeMutablePointer<strata_geo>.allocate(capacity: 1)
            shape.initialize(to: g.pointee)
            buffers.append(UnsafeMutableRawPointer(shape))
            let points = UnsafeMutablePointer<Double>.allocate(capacity: max(2 * g.pointee.npoints, 1))
            points.initialize(from: g.pointee.points, count: 2 * g.pointee.npoints)
            buffers.append(UnsafeMutableRawPointer(points))
            shape.pointee.points = UnsafePointer(points)
            if g.pointee.nrings > 0, let src = g.pointee.ring_ends {
                let ends = UnsafeMutablePointer<Int>.allocate(capacity: g.pointee.nrings)
                ends.initialize(from: src, count: g.pointee.nrings)
                buffers.append(UnsafeMutableRawPointer(ends))
                shape.pointee.ring_ends = UnsafePointer(ends)
            }
            var v = strata_value()
            v.type = STRATA_TYPE_GEO
            v.u.geo.shape = UnsafePointer(shape)
            return v
        }
    }

    private func stored(_ s: StoredValue) -> strata_value {
        var v = strata_value()
        switch s {
        case .string(let str):
            v.type = STRATA_TYPE_STRING
            var str = str
            str.withUTF8 { v.u.bytes.data = copy(UnsafeRawBufferPointer($0)); v.u.bytes.len = $0.count }
        case .data(let d):
            v.type = STRATA_TYPE_BINARY
            d.withUnsafeBytes { v.u.bytes.data = copy($0); v.u.bytes.len = $0.count }
        default:
            s.withCValue { v = $0.pointee }
        }
        return v
    }

    /// The elements of an array, set, List or Results given for IN (nil for anything else).
    private static func elements(_ a: Any) -> [Any]? {
        if a is String || a is Data { return nil }
        if let c = a as? _QueryArgSequence { return c._strataQueryElements }
        if let arr = a as? [Any] { return arr }
        if let s = a as? any Sequence { return open(s) }
        return nil
    }

    private static func open<S: Sequence>(_ s: S) -> [Any] { s.map { $0 as Any } }
}

/// Collections of the module given as an IN argument.
protocol _QueryArgSequence {
    var _strataQueryElements: [Any] { get }
}
