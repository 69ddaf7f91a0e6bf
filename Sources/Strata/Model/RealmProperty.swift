import Foundation

/// A property declared the older RealmSwift way, as a `let` of a class instance:
///
/// ```swift
/// class Reading: Object {
///     let value = RealmProperty<Double?>()
///     let extra = RealmProperty<AnyRealmValue>()
/// }
/// reading.value.value = 21.5
/// ```
///
/// Unmanaged, the instance holds the value; once its object is managed (added, or handed out
/// by a Realm) it reads and writes the object's property in the Realm, with the checks of any
/// managed property (thread, write, deleted object).
public final class RealmProperty<Value: RealmPropertyType>: CustomStringConvertible {
    fileprivate var unmanaged: Value
    /// The object whose property this is, once managed (weak: the object owns this instance).
    fileprivate weak var object: Object?
    /// Where that object lives, kept for when the instance outlives it
    /// (`realm.objects(T.self).first!.value.value`: the object is gone before `.value` is read).
    fileprivate var place: ObjectAccessor?
    fileprivate var index = 0

    /// The managed property this reads and writes, or nil while unmanaged.
    private var managed: _ManagedProperty? {
        if let o = object, o.__isManaged { return _ManagedProperty(object: o, index: index) }
        guard let p = place else { return nil }
        let o = p.realm.managedObject(p.info.classInfo.type, info: p.info, key: p.key)
        object = o // (weak: gone again with the caller's reference)
        return _ManagedProperty(object: o, index: index)
    }

    /// A property holding its type's default.
    public init() { unmanaged = Value._strataDefault() }

    /// The property's value.
    public var value: Value {
        get {
            if let m = managed { return Value._strataGet(m) }
            return unmanaged
        }
        set {
            if let m = managed {
                Value._strataSet(m, newValue)
            } else {
                unmanaged = newValue
            }
        }
    }

    public var description: String { String(describing: value) }
}

extension RealmProperty: Equatable where Value: Equatable {
    public static func == (lhs: RealmProperty, rhs: RealmProperty) -> Bool { lhs.value == rhs.value }
}

extension RealmProperty: Codable where Value: Codable {
    public convenience init(from decoder: Decoder) throws {
        self.init()
        value = try decoder.singleValueContainer().decode(Value.self)
    }
    public func encode(to encoder: Encoder) throws {
        var c = encoder.singleValueContainer()
        try c.encode(value)
    }
}

/// Types a `RealmProperty` holds: `AnyRealmValue` and optionals of numbers and Bool.
public protocol RealmPropertyType: _Persistable, _RealmSchemaDiscoverable {}
extension AnyRealmValue: RealmPropertyType {}
extension Optional: RealmPropertyType where Wrapped: RealmOptionalType & _RealmSchemaDiscoverable {}

/// Types an optional `RealmProperty` (or the older `RealmOptional`) holds.
public protocol RealmOptionalType: _OptionalPersistable {}
extension Int: RealmOptionalType {}
extension Int8: RealmOptionalType {}
extension Int16: RealmOptionalType {}
extension Int32: RealmOptionalType {}
extension Int64: RealmOptionalType {}
extension Float: RealmOptionalType {}
extension Double: RealmOptionalType {}
extension Bool: RealmOptionalType {}

/// RealmSwift's oldest spelling of an optional number: `let age = RealmOptional<Int>()`, read
/// and written through `.value`. The same as `RealmProperty<Int?>`.
public final class RealmOptional<Wrapped: RealmOptionalType & _RealmSchemaDiscoverable>: CustomStringConvertible {
    fileprivate let property = RealmProperty<Wrapped?>()

    /// An optional holding nil.
    public init() {}
    /// An optional holding `value`.
    public convenience init(_ value: Wrapped?) {
        self.init()
        self.value = value
    }

    /// The value (nil when null); setting a managed one traps outside a write.
    public var value: Wrapped? {
        get { property.value }
        set { property.value = newValue }
    }

    public var description: String { String(describing: value) }
}

extension RealmOptional: Equatable where Wrapped: Equatable {
    public static func == (lhs: RealmOptional, rhs: RealmOptional) -> Bool { lhs.value == rhs.value }
}

extension RealmOptional: Codable where Wrapped: Codable {
    public convenience init(from decoder: Decoder) throws {
        self.init()
        let c = try decoder.singleValueContainer()
        value = c.decodeNil() ? nil : try c.decode(Wrapped.self)
    }
    public func encode(to encoder: Encoder) throws {
        var c = encoder.singleValueContainer()
        try c.encode(value)
    }
}

// MARK: - Schema discovery and binding

/// A property field holding an instance (`let x = RealmProperty<…>()`): its name is the
/// field's own, and the instance is told its object when the object becomes managed.
protocol InstancePropertyField: PersistedField {}

/// What a property field holding a `RealmProperty` does, given the instance.
extension RealmProperty {
    func stored() -> StoredValue? { ValueConversion.storedIfPrimitive(unmanaged) }

    func bind(_ at: _ManagedProperty) {
        object = at.object
        place = at.object.__accessor
        index = at.index
    }

    func setUnmanaged(_ value: Any) -> Bool {
        guard let v = ValueConversion.convert(value, to: Value.self) else { return false }
        unmanaged = v
        return true
    }

    static func write(_ value: Any, to at: _ManagedProperty) { Persisted<Value>.write(value, to: at) }

    func transfer(to at: _ManagedProperty, skipIfEqual: Bool) {
        let v = unmanaged
        bind(at)
        if skipIfEqual, let s = ValueConversion.storedIfPrimitive(v), s == at.read() { return }
        Value._strataSet(at, v)
    }
}

extension RealmProperty: InstancePropertyField {
    private static func instance(_ field: UnsafeRawPointer) -> RealmProperty {
        field.assumingMemoryBound(to: RealmProperty.self).pointee
    }
    static var kind: _PersistedKind { Value._strataKind }
    static var valueType: Any.Type { Value.self }
    static func options(at field: UnsafeRawPointer) -> PersistedOptions { PersistedOptions() }
    static func unmanagedValue(at field: UnsafeMutableRawPointer) -> Any { instance(field).unmanaged }
    static func unmanagedStored(at field: UnsafeMutableRawPointer) -> StoredValue? { instance(field).stored() }
    static func bind(at field: UnsafeMutableRawPointer, to at: _ManagedProperty) { instance(field).bind(at) }
    static func setUnmanaged(at field: UnsafeMutableRawPointer, _ value: Any) -> Bool { instance(field).setUnmanaged(value) }
    static func transfer(from field: UnsafeMutableRawPointer, to at: _ManagedProperty, skipIfEqual: Bool) {
        instance(field).transfer(to: at, skipIfEqual: skipIfEqual)
    }
    static func read(_ at: _ManagedProperty) -> Any { Value._strataGet(at) }
}

extension RealmOptional: InstancePropertyField {
    private static func inner(_ field: UnsafeRawPointer) -> RealmProperty<Wrapped?> {
        field.assumingMemoryBound(to: RealmOptional.self).pointee.property
    }
    static var kind: _PersistedKind { RealmProperty<Wrapped?>.kind }
    static var valueType: Any.Type { Wrapped?.self }
    static func options(at field: UnsafeRawPointer) -> PersistedOptions { PersistedOptions() }
    static func unmanagedValue(at field: UnsafeMutableRawPointer) -> Any { inner(field).unmanaged as Any }
    static func unmanagedStored(at field: UnsafeMutableRawPointer) -> StoredValue? { inner(field).stored() }
    static func bind(at field: UnsafeMutableRawPointer, to at: _ManagedProperty) { inner(field).bind(at) }
    static func setUnmanaged(at field: UnsafeMutableRawPointer, _ value: Any) -> Bool { inner(field).setUnmanaged(value) }
    static func write(_ value: Any, to at: _ManagedProperty) { RealmProperty<Wrapped?>.write(value, to: at) }
    static func transfer(from field: UnsafeMutableRawPointer, to at: _ManagedProperty, skipIfEqual: Bool) {
        inner(field).transfer(to: at, skipIfEqual: skipIfEqual)
    }
    static func read(_ at: _ManagedProperty) -> Any { Wrapped?._strataGet(at) as Any }
}
