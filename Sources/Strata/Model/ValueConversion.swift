import Foundation

/// Values given untyped (`Object(value:)`, `create(_:value:)`, `object[key] = …`,
/// `object(ofType:forPrimaryKey:)`) turned into a property's type: the same type, a number of
/// another width or kind that the property's type holds exactly, nil / NSNull for optionals, a
/// dictionary or array for an object, an array for a list.
enum ValueConversion {
    static func convert<V>(_ value: Any, to: V.Type) -> V? {
        if let v = value as? V { return v }
        if V.self == AnyRealmValue.self { return AnyRealmValue(any: value) as? V }
        if let o = V.self as? _StrataOptional.Type {
            return o._strataConvert(value) as? V
        }
        if let c = V.self as? any _CustomPersistable.Type { return c._strataConvert(value) as? V }
        if let p = V.self as? any _PrimitivePersistable.Type {
            guard let s = storedIfPrimitive(value), let v = primitive(s, as: p) else { return nil }
            return v as? V
        }
        if let l = V.self as? _StrataListType.Type {
            return l._strataFrom(value) as? V
        }
        if let o = V.self as? Object.Type, isObjectLiteral(value) {
            let made = o.init()
            ObjectCopy.fill(made, from: value)
            return made as? V
        }
        return nil
    }

    /// A dictionary or an array (not of bytes) stands for an object's property values.
    static func isObjectLiteral(_ value: Any) -> Bool {
        value is [String: Any] || (value is [Any] && !(value is Data))
    }

    /// The value as the core would store it, when it is a primitive or nil.
    static func storedIfPrimitive(_ value: Any) -> StoredValue? {
        if let p = value as? any _PrimitivePersistable { return p._strata.value } // unwraps .some
        if let c = value as? any _CustomPersistable { return storedIfPrimitive(c._strataPersisted) }
        if let a = value as? AnyRealmValue { return a.stored }
        if isNil(value) { return .null }
        if let s = value as? NSString { return .string(String(s)) }
        if let d = value as? NSData { return .data(Data(referencing: d)) }
        if let d = value as? NSDate { return Date(timeIntervalSinceReferenceDate: d.timeIntervalSinceReferenceDate)._strata.value }
        if let n = value as? NSNumber { // an integer exactly (past 2^53 too), else a double
            switch String(cString: n.objCType) {
            case "q", "l", "i", "s", "Q", "L", "I", "S": return .int(n.int64Value)
            default: return .double(n.doubleValue)
            }
        }
        return nil
    }

    /// Each value once, in order (the first of equal values; managed objects by their key; values
    /// neither primitive nor managed all kept): `@distinctUnionOfObjects`, a set's key-value coding.
    static func distinct(_ values: [Any]) -> [Any] {
        var seen: [StoredValue] = []
        var out: [Any] = []
        for v in values {
            let s = storedIfPrimitive(v) ?? (v as? Object).flatMap { $0.__accessor.map { .link($0.key) } }
            if let s { if seen.contains(s) { continue }; seen.append(s) }
            out.append(v)
        }
        return out
    }

    /// A primitive or nil (primary keys).
    static func stored(_ value: Any) -> StoredValue { storedIfPrimitive(value) ?? .null }

    /// A value as RealmSwift's key-value coding hands it out: nil as NSNull, an optional's
    /// value unwrapped.
    static func flattened(_ value: Any) -> Any {
        if isNil(value) { return NSNull() }
        if let o = value as? _OptionalMarker, let w = o._strataWrapped { return flattened(w) }
        if let a = value as? AnyRealmValue { // the value it holds, as RealmSwift bridges it
            if case .object(let o) = a { return o }
            guard let s = a.stored, s != .null else { return NSNull() }
            return s.anyValue
        }
        return value
    }

    /// A property's value for key-value coding: nil for nil, an optional's value unwrapped,
    /// numbers and Bools as NSNumber.
    static func keyValueCoded(_ value: Any) -> Any? {
        if isNil(value) { return nil }
        var v = (value as? _OptionalMarker)?._strataWrapped ?? value
        if let a = v as? AnyRealmValue { // its value, as RealmSwift's key-value coding hands it out
            if case .object(let o) = a { return o }
            guard let s = a.stored, s != .null else { return nil }
            v = s.anyValue
        }
        switch v {
        case let n as Int: return NSNumber(value: n)
        case let n as Int8: return NSNumber(value: n)
        case let n as Int16: return NSNumber(value: n)
        case let n as Int32: return NSNumber(value: n)
        case let n as Int64: return NSNumber(value: n)
        case let n as Float: return NSNumber(value: n)
        case let n as Double: return NSNumber(value: n)
        case let b as Bool: return NSNumber(value: b)
        default: return v
        }
    }

    static func isNil(_ value: Any) -> Bool {
        if value is NSNull { return true }
        return (value as? _OptionalMarker)?._strataIsNil ?? false
    }

    /// A stored value as primitive type p, when p holds it exactly.
    static func primitive(_ s: StoredValue, as p: any _PrimitivePersistable.Type) -> Any? {
        let want = p._strataCoreType.type
        switch (s, want) {
        case (.null, _): return nil
        case (.int(let i), .int):
            guard let ip = p as? any _IntegerPersistable.Type else { return p._strataExactly(_Stored(s)) }
            return ip.exactly(i)
        case (.int(let i), .double): return Double(i)
        case (.int(let i), .float): return Float(i)
        case (.double(let d), .float): return Float(d)
        case (.double(let d), .int): // an NSNumber: an integer type, or an enum's Int raw value
            guard d.rounded() == d, abs(d) < 9.2e18 else { return nil }
            guard let ip = p as? any _IntegerPersistable.Type else { return p._strataExactly(_Stored(.int(Int64(d)))) }
            return ip.exactly(Int64(d))
        case (.float(let f), .double): return Double(f)
        case (.int(let i), .decimal128): return Decimal128(value: i)
        case (.double(let d), .decimal128): return Decimal128(value: d)
        case (.string(let str), .decimal128): return try? Decimal128(string: str) // as RealmSwift reads "2"
        default:
            guard s.coreType == want else { return nil }
            return p._strataExactly(_Stored(s))
        }
    }

    /// A primary key given untyped, as the core stores property p's values.
    static func convertAny(_ value: Any, toKindOf p: ClassInfo.PropertyInfo) -> StoredValue? {
        guard let s = storedIfPrimitive(value) else { return nil }
        if case .null = s { return p.kind.optional ? .null : nil }
        if s.coreType == p.kind.type { return s }
        if case .int(let i) = s, p.kind.type == .double { return .double(Double(i)) }
        return nil
    }

    static func describe(_ value: Any) -> String {
        if isNil(value) { return "nil" }
        if let s = value as? StoredValue ?? storedIfPrimitive(value) {
            switch s {
            case .string(let x): return x
            case .int(let i): return String(i)
            case .objectId(let o): return o.stringValue
            case .uuid(let u): return u.uuidString
            default: break
            }
        }
        return String(describing: value)
    }
}

extension _IntegerPersistable {
    static func exactly(_ i: Int64) -> Any? { Self(exactly: i) }
}

/// Tells an optional boxed in Any apart (nil inside an Any is not `== nil`).
protocol _OptionalMarker {
    var _strataIsNil: Bool { get }
    var _strataWrapped: Any? { get }
}

extension Optional: _OptionalMarker {
    var _strataWrapped: Any? { self.map { $0 as Any } }
    var _strataIsNil: Bool {
        switch self {
        case .none: return true
        case .some(let w): return (w as? _OptionalMarker)?._strataIsNil ?? false
        }
    }
}

/// Optionals convert their wrapped type and accept nil.
protocol _StrataOptional {
    static func _strataConvert(_ value: Any) -> Any?
}

extension Optional: _StrataOptional {
    static func _strataConvert(_ value: Any) -> Any? {
        if ValueConversion.isNil(value) { return Wrapped?.none as Any }
        guard let w = ValueConversion.convert(value, to: Wrapped.self) else { return nil }
        return Wrapped?.some(w) as Any
    }
}

/// A map's entries as a dictionary (copying a map from one object to another).
protocol _MapEntries {
    var _strataEntries: [String: Any] { get }
}

extension Map: _MapEntries {
    var _strataEntries: [String: Any] {
        Dictionary(uniqueKeysWithValues: entries.map { ($0.key._strataKey, $0.value as Any) })
    }
}

/// Lists are made from arrays (or other lists) of convertible elements.
protocol _StrataListType {
    static func _strataFrom(_ value: Any) -> Any?
}

extension List: _StrataListType {
    static func _strataFrom(_ value: Any) -> Any? {
        let items: [Any]
        if ValueConversion.isNil(value) {
            items = [] // nil / NSNull: an empty list, as RealmSwift reads it
        } else if let a = value as? [Any] {
            items = a
        } else if let s = value as? any Sequence {
            items = Array(s.map { $0 as Any })
        } else {
            return nil
        }
        let list = List<Element>()
        for x in items {
            // (a list of a type mapped to an object holds no nulls, though its element type
            // reads null as a default object elsewhere)
            if ValueConversion.isNil(x) && !Element._strataElementKind.optional && Element._strataElementKind.type == .link { return nil }
            guard let e = ValueConversion.convert(x, to: Element.self) else { return nil }
            list.append(e)
        }
        return list
    }
}

/// An object being copied, the same one however it was reached: a managed object by its Realm,
/// table and key (each access hands out another instance, and a freed one's identifier is
/// reused), an unmanaged one by identity (kept alive, so its identifier is not reused).
struct CopySource: Hashable {
    let object: Object
    init(_ object: Object) { self.object = object }

    private var identity: AnyHashable {
        if let a = object.__accessor { return AnyHashable([AnyHashable(ObjectIdentifier(a.realm)), a.info.tableName, a.key]) }
        return AnyHashable(ObjectIdentifier(object))
    }
    static func == (a: CopySource, b: CopySource) -> Bool { a.identity == b.identity }
    func hash(into h: inout Hasher) { h.combine(identity) }
}

/// `Object(value:)` and `create(_:value:)`: properties from a dictionary, an array or an object.
enum ObjectCopy {
    /// `copyingInto`: for `create`: linked objects not managed by that Realm (unmanaged, or of
    /// another Realm) are copied, never adopted (RealmSwift's create copies them); `copies`
    /// keeps one copy per object (a graph with cycles).
    static func fill(_ o: Object, from value: Any, copyingInto realm: RealmInstance? = nil) {
        var copies: [CopySource: Object] = [:]
        fill(o, from: value, copyingInto: realm, copies: &copies)
    }

    private static func fill(_ o: Object, from value: Any, copyingInto realm: RealmInstance?,
                             copies: inout [CopySource: Object]) {
        let info = ClassInfo.of(type(of: o))
        let settable = info.properties.filter { $0.kind.collection != .linkingObjects }
        func set(_ v: Any, _ p: ClassInfo.PropertyInfo) {
            guard let realm, p.kind.target != nil else { return info.setValue(v, of: o, p) }
            if p.kind.collection == .map, let entries = v as? [String: Any] { // each value copied
                return info.setValue(entries.mapValues { copied($0, into: realm, copies: &copies) }, of: o, p)
            }
            info.setValue(copied(v, into: realm, copies: &copies), of: o, p)
        }
        if let dict = value as? [String: Any] {
            for p in settable {
                if let v = dict[p.name] { set(v, p) }
            }
        } else if let other = value as? Object {
            let otherInfo = other.__accessor?.info.classInfo ?? ClassInfo.of(type(of: other))
            for p in settable {
                guard let q = otherInfo.property(named: p.name) else { continue }
                var v = otherInfo.value(of: other, q)
                if let managedList = v as? any Sequence, q.kind.collection == .list || q.kind.collection == .set {
                    v = Array(managedList.map { $0 as Any }) // a copy, not the other object's list
                } else if let map = v as? any _MapEntries {
                    v = map._strataEntries // a copy, as a dictionary
                }
                set(v, p)
            }
        } else if let array = value as? [Any] {
            if array.count > settable.count {
                strataTrap("Invalid array of \(array.count) values for class '\(info.name)', which has "
                           + "\(settable.count) properties.")
            }
            for (p, v) in zip(settable, array) { set(v, p) }
        } else {
            strataTrap("Invalid value '\(value)' to initialize an object of type '\(info.name)': "
                       + "give a dictionary, an array or an object.")
        }
    }

    /// A link's value for `create`: objects not managed by `realm` copied (each once), arrays and
    /// sequences element by element; other values as they are.
    private static func copied(_ v: Any, into realm: RealmInstance, copies: inout [CopySource: Object]) -> Any {
        if let obj = v as? Object {
            if let a = obj.__accessor, a.realm === realm, !(obj is EmbeddedObject) { return obj } // embedded: copied
            let source = CopySource(obj)
            if let done = copies[source] { return done }
            let copy = type(of: obj).init()
            copies[source] = copy
            fill(copy, from: obj, copyingInto: realm, copies: &copies)
            return copy
        }
        if v is String || v is Data || isObjectLiteralDictionary(v) { return v }
        if let items = v as? [Any] { return items.map { copied($0, into: realm, copies: &copies) } }
        if let seq = v as? any Sequence, !(v is [String: Any]) {
            return Array(seq.map { $0 as Any }).map { copied($0, into: realm, copies: &copies) }
        }
        return v
    }

    private static func isObjectLiteralDictionary(_ v: Any) -> Bool { v is [String: Any] }
}

/// A value handed out untyped (`value(forKey:)`, NSNull for nil) as the Swift type `T`
/// (RealmSwift's helper; its tests use it). A value that is no `T` traps naming both.
public func dynamicBridgeCast<T>(fromObjectiveC x: Any) -> T {
    if let t = x as? T, !(x is NSNull) { return t }
    if let t = ValueConversion.convert(x, to: T.self) { return t }
    fatalError("dynamicBridgeCast: a \(type(of: x)) is not a \(T.self)")
}

/// A Swift value as it is handed out untyped (nil as NSNull).
public func dynamicBridgeCast<T>(fromSwift x: T) -> Any { ValueConversion.flattened(x) }
