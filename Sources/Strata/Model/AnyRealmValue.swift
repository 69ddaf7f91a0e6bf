import Foundation

/// A property that holds a value of any primitive type, or none (Realm's "mixed").
///
/// ```swift
/// class Setting: Object { @Persisted var value: AnyRealmValue }
/// setting.value = .string("dark")
/// if case .int(let n) = setting.value { … }
/// ```
/// `.object` (a link held in a mixed property) is not stored by the core yet: writing one fails
/// the write, naming the property.
public enum AnyRealmValue: Hashable {
    case none
    case int(Int)
    case bool(Bool)
    case float(Float)
    case double(Double)
    case string(String)
    case data(Data)
    case date(Date)
    case object(Object)
    case objectId(ObjectId)
    case decimal128(Decimal128)
    case uuid(UUID)

    public var intValue: Int? { if case .int(let v) = self { return v }; return nil }
    public var boolValue: Bool? { if case .bool(let v) = self { return v }; return nil }
    public var floatValue: Float? { if case .float(let v) = self { return v }; return nil }
    public var doubleValue: Double? { if case .double(let v) = self { return v }; return nil }
    public var stringValue: String? { if case .string(let v) = self { return v }; return nil }
    public var dataValue: Data? { if case .data(let v) = self { return v }; return nil }
    public var dateValue: Date? { if case .date(let v) = self { return v }; return nil }
    public var objectIdValue: ObjectId? { if case .objectId(let v) = self { return v }; return nil }
    public var decimal128Value: Decimal128? { if case .decimal128(let v) = self { return v }; return nil }
    public var uuidValue: UUID? { if case .uuid(let v) = self { return v }; return nil }
    public func object<T: Object>(_ type: T.Type) -> T? { if case .object(let o) = self { return o as? T }; return nil }

    init(stored: StoredValue) {
        switch stored {
        case .null, .link: self = .none
        case .bool(let b): self = .bool(b)
        case .int(let i): self = .int(Int(i))
        case .float(let f): self = .float(f)
        case .double(let d): self = .double(d)
        case .string(let s): self = .string(s)
        case .data(let d): self = .data(d)
        case .timestamp: self = .date(Date(_strata: _Stored(stored)))
        case .objectId(let o): self = .objectId(o)
        case .uuid(let u): self = .uuid(u)
        case .decimal(let d): self = .decimal128(d)
        }
    }

    /// The stored form; nil for `.object`, which a mixed property cannot hold.
    var stored: StoredValue? {
        switch self {
        case .none: return .null
        case .int(let i): return .int(Int64(i))
        case .bool(let b): return .bool(b)
        case .float(let f): return .float(f)
        case .double(let d): return .double(d)
        case .string(let s): return .string(s)
        case .data(let d): return .data(d)
        case .date(let d): return d._strata.value
        case .object: return nil
        case .objectId(let o): return .objectId(o)
        case .decimal128(let d): return .decimal(d)
        case .uuid(let u): return .uuid(u)
        }
    }

    /// Any primitive given untyped (`Object(value:)`).
    init?(any value: Any) {
        if let v = value as? AnyRealmValue { self = v; return }
        if let o = value as? Object { self = .object(o); return }
        guard let s = ValueConversion.storedIfPrimitive(value) else { return nil }
        self.init(stored: s)
    }
}

extension AnyRealmValue: _Persistable {
    public static var _strataKind: _PersistedKind { _PersistedKind(.mixed, optional: true) }
    public static func _strataDefault() -> AnyRealmValue { .none }
    public static func _strataGet(_ at: _ManagedProperty) -> AnyRealmValue { AnyRealmValue(stored: at.read()) }
    public static func _strataSet(_ at: _ManagedProperty, _ value: AnyRealmValue) {
        guard let s = value.stored else {
            let a = at.accessor
            a.realm.fail(StrataError(code: .wrongType, message: "'\(a.info.name).\(a.info.properties[at.index].name)' "
                + "is AnyRealmValue: it holds primitives, not objects (.object is not supported yet)"),
                         "set AnyRealmValue")
            return
        }
        at.write(s)
    }
}

extension AnyRealmValue: RealmCollectionValue {
    public static var _strataElementKind: _PersistedKind { _PersistedKind(.mixed, optional: true) }
    public static func _strataElement(_ v: _Stored, _ ctx: _ElementContext) -> AnyRealmValue {
        AnyRealmValue(stored: v.value)
    }
    public static func _strataStore(_ v: AnyRealmValue, _ ctx: _ElementContext) -> _Stored {
        guard let s = v.stored else {
            ctx.realm.fail(StrataError(code: .wrongType, message: "\(ctx.what): a list of AnyRealmValue holds "
                + "primitives, not objects"), "append AnyRealmValue")
            return _Stored(.null)
        }
        return _Stored(s)
    }
}
