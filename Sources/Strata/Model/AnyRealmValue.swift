import Foundation

/// A property that holds a value of any primitive type, or none (Realm's "mixed").
///
/// ```swift
/// class Setting: Object { @Persisted var value: AnyRealmValue }
/// setting.value = .string("dark")
/// if case .int(let n) = setting.value { … }
/// ```
/// `.object` links to an object of any class of the Realm (an unmanaged one is added); when that
/// object is deleted the value becomes `.none`. Embedded objects cannot be held (a trap names
/// the property).
public enum AnyRealmValue: Hashable {
    /// Null.
    case none
    /// An integer.
    case int(Int)
    /// A Boolean.
    case bool(Bool)
    /// A 32-bit float.
    case float(Float)
    /// A 64-bit double.
    case double(Double)
    /// A string.
    case string(String)
    /// Bytes.
    case data(Data)
    /// A date (seconds and nanoseconds, exactly as given).
    case date(Date)
    /// A link to an object of any class (the object must be managed by the same Realm, or is added with its owner).
    case object(Object)
    /// An ObjectId.
    case objectId(ObjectId)
    /// A decimal128.
    case decimal128(Decimal128)
    /// A UUID.
    case uuid(UUID)

    /// The integer, or nil when the value is of another kind.
    public var intValue: Int? { if case .int(let v) = self { return v }; return nil }
    /// The Boolean, or nil when the value is of another kind.
    public var boolValue: Bool? { if case .bool(let v) = self { return v }; return nil }
    /// The float, or nil when the value is of another kind.
    public var floatValue: Float? { if case .float(let v) = self { return v }; return nil }
    /// The double, or nil when the value is of another kind.
    public var doubleValue: Double? { if case .double(let v) = self { return v }; return nil }
    /// The string, or nil when the value is of another kind.
    public var stringValue: String? { if case .string(let v) = self { return v }; return nil }
    /// The bytes, or nil when the value is of another kind.
    public var dataValue: Data? { if case .data(let v) = self { return v }; return nil }
    /// The date, or nil when the value is of another kind.
    public var dateValue: Date? { if case .date(let v) = self { return v }; return nil }
    /// The ObjectId, or nil when the value is of another kind.
    public var objectIdValue: ObjectId? { if case .objectId(let v) = self { return v }; return nil }
    /// The decimal128, or nil when the value is of another kind.
    public var decimal128Value: Decimal128? { if case .decimal128(let v) = self { return v }; return nil }
    /// The UUID, or nil when the value is of another kind.
    public var uuidValue: UUID? { if case .uuid(let v) = self { return v }; return nil }
    /// The linked object as `type`, or nil when the value is not an object of that class.
    public func object<T: Object>(_ type: T.Type) -> T? { if case .object(let o) = self { return o as? T }; return nil }

    /// A stored value read in `realm` (nil: no Realm to find a linked object in; a link reads
    /// as `.none` then).
    init(stored: StoredValue, realm: RealmInstance? = nil) {
        switch stored {
        case .typedLink(let table, let key):
            self = realm?.object(typedLink: table, key: key).map { .object($0) } ?? .none
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

    /// The stored form in `realm`: `.object` becomes a typed link (its object added when
    /// unmanaged); `what` names the property for messages.
    func stored(in realm: RealmInstance, what: @autoclosure () -> String) -> StoredValue {
        if case .object(let o) = self { return realm.typedLink(o, what: what()) }
        return stored!
    }

    /// The stored form; nil for `.object`, which needs a Realm (`stored(in:what:)`).
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
    public static func _strataGet(_ at: _ManagedProperty) -> AnyRealmValue {
        AnyRealmValue(stored: at.read(), realm: at.accessor.realm)
    }
    public static func _strataSet(_ at: _ManagedProperty, _ value: AnyRealmValue) {
        let a = at.accessor
        at.write(value.stored(in: a.realm, what: a.info.propertyPaths[at.index]))
    }
}

extension AnyRealmValue: RealmCollectionValue {
    public static var _strataElementKind: _PersistedKind { _PersistedKind(.mixed, optional: true) }
    public static func _strataElement(_ v: _Stored, _ ctx: _ElementContext) -> AnyRealmValue {
        AnyRealmValue(stored: v.value, realm: ctx.realm)
    }
    public static func _strataStore(_ v: AnyRealmValue, _ ctx: _ElementContext) -> _Stored {
        _Stored(v.stored(in: ctx.realm, what: ctx.what))
    }
}
