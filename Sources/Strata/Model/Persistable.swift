import Foundation
import CCore

/// A type that can be the value of a `@Persisted` property. Strata conforms Bool, the integer
/// and floating-point types, String, Data, Date, ObjectId, UUID, Decimal128, AnyRealmValue,
/// optionals of these, `Object` subclasses (as optional to-one links), `List` and
/// `LinkingObjects`. The members are Strata's own (underscored, as in RealmSwift); a model never
/// calls them.
public protocol _Persistable: _HasPersistedType {
    /// How a property of this type is stored.
    static var _strataKind: _PersistedKind { get }
    /// The value of a property declared without an initial value (`@Persisted var n: Int`).
    static func _strataDefault() -> Self
    /// Read the property of a managed object.
    static func _strataGet(_ at: _ManagedProperty) -> Self
    /// Write the property of a managed object (inside a write).
    static func _strataSet(_ at: _ManagedProperty, _ value: Self)
}

/// What the schema records of a `@Persisted` value type.
public struct _PersistedKind {
    /// The core's type of the values (for a List: of its elements).
    let type: CoreType
    let optional: Bool
    /// Links and lists of links: the target class.
    let target: Object.Type?
    let collection: Collection

    enum Collection { case none, list, set, map, linkingObjects }

    init(_ type: CoreType, optional: Bool = false, target: Object.Type? = nil,
         collection: Collection = .none) {
        self.type = type
        self.optional = optional
        self.target = target
        self.collection = collection
    }
}

/// A property of a managed object: the object and the property's place in its class's schema.
public struct _ManagedProperty {
    let object: Object
    let index: Int
    /// The caller checked that this is the Realm's thread (a @Persisted accessor checks it
    /// before finding its property): reads skip the check.
    let threadChecked: Bool

    @usableFromInline
    init(object: Object, index: Int, threadChecked: Bool = false) {
        self.object = object
        self.index = index
        self.threadChecked = threadChecked
    }

    var accessor: ObjectAccessor { object.__accessor! }

    /// Where the elements of this collection property are read and written.
    var elementContext: _ElementContext {
        let a = accessor
        return _ElementContext(realm: a.realm, what: a.info.propertyPaths[index], property: (a.info, index))
    }

    func read() -> StoredValue { accessor.get(index, threadChecked: threadChecked) }
    /// The core's value as it hands it out (ObjectAccessor.getRaw).
    func readRaw() -> strata_value { accessor.getRaw(index, threadChecked: threadChecked) }
    func write(_ v: StoredValue) { accessor.set(index, v) }
}

/// A value type stored as one core value. Conforming gives `_Persistable` for free.
public protocol _PrimitivePersistable: _Persistable {
    static var _strataCoreType: _CoreTypeTag { get }
    init(_strata v: _Stored)
    var _strata: _Stored { get }
    /// The value a core value of this type's core type stands for, or nil when none does (an
    /// enum's raw value that no case has, a value a failable mapping refuses).
    static func _strataExactly(_ v: _Stored) -> Self?
}

/// A core value (opaque outside Strata).
public struct _Stored {
    let value: StoredValue
    init(_ value: StoredValue) { self.value = value }
}

/// A core type (opaque outside Strata).
public struct _CoreTypeTag {
    let type: CoreType
    init(_ type: CoreType) { self.type = type }
}

extension _PrimitivePersistable {
    public static func _strataExactly(_ v: _Stored) -> Self? { Self(_strata: v) }
    public static var _strataKind: _PersistedKind { _PersistedKind(_strataCoreType.type) }
    public static func _strataGet(_ at: _ManagedProperty) -> Self { Self(_strata: _Stored(at.read())) }
    public static func _strataSet(_ at: _ManagedProperty, _ value: Self) { at.write(value._strata.value) }
}

// MARK: - Scalars

// The getters of the common types read the core's value directly (no StoredValue in between);
// a value of another type (a file whose column differs) goes the general way.

extension Bool: _PrimitivePersistable {
    public static func _strataGet(_ at: _ManagedProperty) -> Bool {
        let v = at.readRaw()
        return v.type == STRATA_TYPE_BOOL ? v.u.b : Bool(_strata: _Stored(StoredValue(v)))
    }
    public static var _strataCoreType: _CoreTypeTag { _CoreTypeTag(.bool) }
    public static func _strataDefault() -> Bool { false }
    public init(_strata v: _Stored) { if case .bool(let b) = v.value { self = b } else { self = false } }
    public var _strata: _Stored { _Stored(.bool(self)) }
}

/// The integer types share one core type (int64, packed to the width the values need).
public protocol _IntegerPersistable: _PrimitivePersistable, FixedWidthInteger {}

extension _IntegerPersistable {
    public static func _strataGet(_ at: _ManagedProperty) -> Self {
        let v = at.readRaw()
        return v.type == STRATA_TYPE_INT ? Self(truncatingIfNeeded: v.u.i) : Self(_strata: _Stored(StoredValue(v)))
    }
    public static var _strataCoreType: _CoreTypeTag { _CoreTypeTag(.int) }
    public static func _strataDefault() -> Self { 0 }
    public init(_strata v: _Stored) {
        if case .int(let i) = v.value { self.init(truncatingIfNeeded: i) } else { self = 0 }
    }
    public var _strata: _Stored { _Stored(.int(Int64(self))) }
}

extension Int: _IntegerPersistable {}
extension Int8: _IntegerPersistable {}
extension Int16: _IntegerPersistable {}
extension Int32: _IntegerPersistable {}
extension Int64: _IntegerPersistable {}

extension Float: _PrimitivePersistable {
    public static var _strataCoreType: _CoreTypeTag { _CoreTypeTag(.float) }
    public static func _strataDefault() -> Float { 0 }
    public init(_strata v: _Stored) {
        switch v.value {
        case .float(let f): self = f
        case .double(let d): self = Float(d)
        case .int(let i): self = Float(i)
        default: self = 0
        }
    }
    public var _strata: _Stored { _Stored(.float(self)) }
}

extension Double: _PrimitivePersistable {
    public static func _strataGet(_ at: _ManagedProperty) -> Double {
        let v = at.readRaw()
        return v.type == STRATA_TYPE_DOUBLE ? v.u.d : Double(_strata: _Stored(StoredValue(v)))
    }
    public static var _strataCoreType: _CoreTypeTag { _CoreTypeTag(.double) }
    public static func _strataDefault() -> Double { 0 }
    public init(_strata v: _Stored) {
        switch v.value {
        case .double(let d): self = d
        case .float(let f): self = Double(f)
        case .int(let i): self = Double(i)
        default: self = 0
        }
    }
    public var _strata: _Stored { _Stored(.double(self)) }
}

extension String: _PrimitivePersistable {
    public static func _strataGet(_ at: _ManagedProperty) -> String {
        let v = at.readRaw()
        guard v.type == STRATA_TYPE_STRING else { return String(_strata: _Stored(StoredValue(v))) }
        return v.u.bytes.len == 0 ? "" : String(decoding: UnsafeRawBufferPointer(start: v.u.bytes.data, count: v.u.bytes.len), as: UTF8.self)
    }
    public static var _strataCoreType: _CoreTypeTag { _CoreTypeTag(.string) }
    public static func _strataDefault() -> String { "" }
    public init(_strata v: _Stored) { if case .string(let s) = v.value { self = s } else { self = "" } }
    public var _strata: _Stored { _Stored(.string(self)) }
}

extension Data: _PrimitivePersistable {
    public static var _strataCoreType: _CoreTypeTag { _CoreTypeTag(.binary) }
    public static func _strataDefault() -> Data { Data() }
    public init(_strata v: _Stored) { if case .data(let d) = v.value { self = d } else { self = Data() } }
    public var _strata: _Stored { _Stored(.data(self)) }
}

/// Dates are stored as whole seconds and nanoseconds since 1970 (before 1970 too). They are
/// split from the Date's own count (seconds since 2001, a Double) and put back the same way, so a
/// Date reads back as the very same Date.
extension Date: _PrimitivePersistable {
    public static var _strataCoreType: _CoreTypeTag { _CoreTypeTag(.timestamp) }
    public static func _strataDefault() -> Date { Date() } // (RealmSwift: `Date()`, the present)
    /// Seconds from 1970 to 2001 (Date's reference date).
    private static let since1970: Int64 = 978_307_200

    public init(_strata v: _Stored) {
        guard case .timestamp(let s, let ns) = v.value else { self = Date(timeIntervalSince1970: 0); return }
        self = Date(timeIntervalSinceReferenceDate: TimeInterval(s &- Date.since1970) + TimeInterval(ns) / 1e9)
    }
    public var _strata: _Stored {
        let r = timeIntervalSinceReferenceDate
        guard r.isFinite, abs(r) < 9.2e18 else { return _Stored(.timestamp(r < 0 ? .min : .max, 0)) }
        var whole = r.rounded(.down)
        var ns = Int32(((r - whole) * 1e9).rounded()) // 0 ≤ ns ≤ 1e9: the core keeps 0 ≤ ns < 1e9
        if ns == 1_000_000_000 { whole += 1; ns = 0 }
        return _Stored(.timestamp(Int64(whole) &+ Date.since1970, ns))
    }
}

extension ObjectId: _PrimitivePersistable {
    public static var _strataCoreType: _CoreTypeTag { _CoreTypeTag(.objectId) }
    /// A new ObjectId, as RealmSwift gives a property declared without a value.
    public static func _strataDefault() -> ObjectId { ObjectId.generate() }
    public init(_strata v: _Stored) { if case .objectId(let o) = v.value { self = o } else { self = ObjectId() } }
    public var _strata: _Stored { _Stored(.objectId(self)) }
}

extension UUID: _PrimitivePersistable {
    public static var _strataCoreType: _CoreTypeTag { _CoreTypeTag(.uuid) }
    /// A new random UUID, as RealmSwift gives a property declared without a value.
    public static func _strataDefault() -> UUID { UUID() }
    public init(_strata v: _Stored) {
        if case .uuid(let u) = v.value { self = u } else { self = UUID(uuid: (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)) }
    }
    public var _strata: _Stored { _Stored(.uuid(self)) }
}

extension Decimal128: _PrimitivePersistable {
    public static var _strataCoreType: _CoreTypeTag { _CoreTypeTag(.decimal128) }
    public static func _strataDefault() -> Decimal128 { Decimal128() }
    public init(_strata v: _Stored) {
        if case .decimal(let d) = v.value { self = d } else { self = Decimal128() }
    }
    public var _strata: _Stored { _Stored(.decimal(self)) }
}

// MARK: - Optionals and links

/// What an optional can wrap: a primitive (stored as the primitive or null) or an object (a
/// to-one link).
public protocol _OptionalPersistable: _HasPersistedType {
    static var _strataKindWhenOptional: _PersistedKind { get }
    static func _strataFromStored(_ v: _Stored, _ at: _ManagedProperty) -> Self?
    static func _strataToStored(_ value: Self, _ at: _ManagedProperty) -> _Stored
}

extension _PrimitivePersistable {
    public static var _strataKindWhenOptional: _PersistedKind {
        _PersistedKind(_strataCoreType.type, optional: true)
    }
    public static func _strataFromStored(_ v: _Stored, _ at: _ManagedProperty) -> Self? {
        if case .null = v.value { return nil }
        return Self(_strata: v)
    }
    public static func _strataToStored(_ value: Self, _ at: _ManagedProperty) -> _Stored { value._strata }
}

extension Bool: _OptionalPersistable {}
extension Int: _OptionalPersistable {}
extension Int8: _OptionalPersistable {}
extension Int16: _OptionalPersistable {}
extension Int32: _OptionalPersistable {}
extension Int64: _OptionalPersistable {}
extension Float: _OptionalPersistable {}
extension Double: _OptionalPersistable {}
extension String: _OptionalPersistable {}
extension Data: _OptionalPersistable {}
extension Date: _OptionalPersistable {}
extension ObjectId: _OptionalPersistable {}
extension UUID: _OptionalPersistable {}
extension Decimal128: _OptionalPersistable {}

extension Optional: _Persistable where Wrapped: _OptionalPersistable {
    public static var _strataKind: _PersistedKind { Wrapped._strataKindWhenOptional }
    public static func _strataDefault() -> Wrapped? { nil }
    public static func _strataGet(_ at: _ManagedProperty) -> Wrapped? {
        Wrapped._strataFromStored(_Stored(at.read()), at)
    }
    public static func _strataSet(_ at: _ManagedProperty, _ value: Wrapped?) {
        guard let v = value else { return at.write(.null) }
        at.write(Wrapped._strataToStored(v, at).value)
    }
}
