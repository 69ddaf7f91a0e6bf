import Foundation

/// A type that is stored as another, stored type (RealmSwift's `CustomPersistable`): the file
/// holds `persistableValue`, and a value read is `init(persistedValue:)` of it. `PersistedType`
/// is one of the primitive stored types, or an `EmbeddedObject` subclass for a type that needs
/// more than one value:
///
/// ```swift
/// struct Celsius: CustomPersistable, Hashable {
///     typealias PersistedType = Double
///     var degrees: Double
///     init(persistedValue: Double) { degrees = persistedValue }
///     var persistableValue: Double { degrees }
/// }
/// class PointObject: EmbeddedObject { @Persisted var x = 0.0; @Persisted var y = 0.0 }
/// extension CGPoint: CustomPersistable {
///     typealias PersistedType = PointObject
///     init(persistedValue: PointObject) { self.init(x: persistedValue.x, y: persistedValue.y) }
///     var persistableValue: PointObject { PointObject(value: [x, y]) }
/// }
/// ```
///
/// A type mapped to an embedded object need not be optional: a property (or map entry) that
/// holds no object reads `init(persistedValue:)` of a new, default object. Queries compare a
/// mapped value member by member (`$0.point == CGPoint(x: 1, y: 2)` is `point.x == 1 AND
/// point.y == 2`).
public protocol CustomPersistable: _CustomPersistable {
    /// The value made from what the file stores.
    init(persistedValue: PersistedType)
    /// What the file stores for this value.
    var persistableValue: PersistedType { get }
}

/// `CustomPersistable` whose conversion from the stored value may fail: a non-optional
/// property or collection element whose stored value it refuses traps naming the value and
/// the type; an optional one reads nil.
public protocol FailableCustomPersistable: _CustomPersistable {
    /// The value made from what the file stores, or nil when it cannot be (reading it then traps naming the property).
    init?(persistedValue: PersistedType)
    /// What the file stores for this value.
    var persistableValue: PersistedType { get }
}

/// What `CustomPersistable` and `FailableCustomPersistable` share: the mapping, type-erased
/// (untyped input, key-value coding, query arguments go through it).
public protocol _CustomPersistable: _Persistable, _OptionalPersistable, _RealmCollectionValueInsideOptional,
                                    _RealmSchemaDiscoverable {
    /// `persistableValue`, type-erased.
    var _strataPersisted: Any { get }
    /// `init(persistedValue:)` of a value of `PersistedType`; nil when the value has another
    /// type or a failable mapping refuses it.
    static func _strataMapped(_ persisted: Any) -> Self?
    /// The value a mapping gives for a stored value it refuses (traps for a failable one).
    static func _strataRequired(_ persisted: PersistedType) -> Self
}

extension CustomPersistable {
    public var _strataPersisted: Any { persistableValue }
    public static func _strataMapped(_ persisted: Any) -> Self? {
        (persisted as? PersistedType).map(Self.init(persistedValue:))
    }
    public static func _strataRequired(_ persisted: PersistedType) -> Self { Self(persistedValue: persisted) }
}

extension FailableCustomPersistable {
    public var _strataPersisted: Any { persistableValue }
    public static func _strataMapped(_ persisted: Any) -> Self? {
        (persisted as? PersistedType).flatMap(Self.init(persistedValue:))
    }
    public static func _strataRequired(_ persisted: PersistedType) -> Self {
        guard let v = Self(persistedValue: persisted) else {
            strataTrap("Could not convert value '\(RealmDescription.value(persisted, depth: 1))' to type '\(Self.self)'.")
        }
        return v
    }
}

extension _CustomPersistable {
    /// A value given untyped (`Object(value:)`, `object[key] = …`) as this type: the type
    /// itself, or anything its `PersistedType` takes; nil for what neither takes. A value a
    /// failable mapping refuses traps naming it.
    static func _strataConvert(_ value: Any) -> Self? {
        if let v = value as? Self { return v }
        // nil for a type mapped to an object: no object, which reads as a default one
        if ValueConversion.isNil(value) && PersistedType.self is EmbeddedObject.Type { return _strataDefault() }
        guard let persisted = ValueConversion.convert(value, to: PersistedType.self) else { return nil }
        if let v = _strataMapped(persisted) { return v }
        strataTrap("Could not convert value '\(RealmDescription.value(value, depth: 1))' to type '\(Self.self)'.")
    }
}

// MARK: - Mapped to a primitive

extension _CustomPersistable where PersistedType: _PrimitivePersistable {
    public static var _strataKind: _PersistedKind { _PersistedKind(PersistedType._strataCoreType.type) }
    public static var _strataKindWhenOptional: _PersistedKind {
        _PersistedKind(PersistedType._strataCoreType.type, optional: true)
    }
    public static var _strataElementKind: _PersistedKind { _PersistedKind(PersistedType._strataCoreType.type) }

    public static func _strataDefault() -> Self { _strataDefaultMapped(PersistedType._strataDefault()) }
    public static func _strataGet(_ at: _ManagedProperty) -> Self { _strataRead(PersistedType._strataGet(at), at) }
    public static func _strataSet(_ at: _ManagedProperty, _ value: Self) {
        at.write(PersistedType._strataToStored((value._strataPersisted as! PersistedType), at).value)
    }

    public static func _strataFromStored(_ v: _Stored, _ at: _ManagedProperty) -> Self? {
        if case .null = v.value { return nil }
        return _strataMapped(PersistedType(_strata: v))
    }
    public static func _strataToStored(_ value: Self, _ at: _ManagedProperty) -> _Stored {
        (value._strataPersisted as! PersistedType)._strata
    }

    public static func _strataElement(_ v: _Stored, _ ctx: _ElementContext) -> Self {
        _strataRequired(PersistedType(_strata: v))
    }
    public static func _strataStore(_ v: Self, _ ctx: _ElementContext) -> _Stored {
        (v._strataPersisted as! PersistedType)._strata
    }

    public func hash(into hasher: inout Hasher) { (_strataPersisted as! PersistedType).hash(into: &hasher) }
}

// MARK: - Mapped to an embedded object

extension _CustomPersistable where PersistedType: EmbeddedObject {
    /// A to-one link to the embedded class, null while no object is there (a non-optional
    /// mapped property reads a default object then, as in RealmSwift).
    public static var _strataKind: _PersistedKind { _PersistedKind(.link, optional: true, target: PersistedType.self) }
    public static var _strataKindWhenOptional: _PersistedKind { _strataKind }
    public static var _strataElementKind: _PersistedKind { _PersistedKind(.link, target: PersistedType.self) }

    public static func _strataDefault() -> Self { _strataDefaultMapped(PersistedType()) }

    public static func _strataGet(_ at: _ManagedProperty) -> Self {
        guard case .link(let key) = at.read() else { return _strataDefault() }
        return _strataRead(at.accessor.realm.managedObject(PersistedType.self, key: key), at)
    }
    public static func _strataSet(_ at: _ManagedProperty, _ value: Self) {
        at.write(_strataToStored(value, at).value)
    }

    public static func _strataFromStored(_ v: _Stored, _ at: _ManagedProperty) -> Self? {
        guard case .link(let key) = v.value else { return nil }
        return _strataMapped(at.accessor.realm.managedObject(PersistedType.self, key: key))
    }
    public static func _strataToStored(_ value: Self, _ at: _ManagedProperty) -> _Stored {
        PersistedType._strataToStored(value._strataPersisted as! PersistedType, at)
    }

    /// A list's element (never null) or a map's value (null reads a default object).
    public static func _strataElement(_ v: _Stored, _ ctx: _ElementContext) -> Self {
        guard case .link = v.value else { return _strataDefault() }
        return _strataRequired(PersistedType._strataElement(v, ctx))
    }
    public static func _strataStore(_ v: Self, _ ctx: _ElementContext) -> _Stored {
        PersistedType._strataStore(v._strataPersisted as! PersistedType, ctx)
    }

    /// Hashed by the values the embedded object holds (a new object is made for each
    /// `persistableValue`, so its identity says nothing).
    public func hash(into hasher: inout Hasher) {
        let o = _strataPersisted as! PersistedType
        for p in o.objectSchema.properties {
            hasher.combine(RealmDescription.value(o[p.name], depth: 1))
        }
    }
}

extension _CustomPersistable {
    fileprivate static func _strataDefaultMapped(_ persisted: PersistedType) -> Self {
        guard let v = _strataMapped(persisted) else {
            strataTrap("Failed to default construct a \(Self.self) using the default value for persisted type "
                       + "\(PersistedType.self). This conversion must either succeed, the property must be optional, "
                       + "or you must explicitly specify a default value for the property.")
        }
        return v
    }

    /// A non-optional property's stored value through the mapping: a refused one traps naming
    /// the class, the property and the value.
    fileprivate static func _strataRead(_ persisted: PersistedType, _ at: _ManagedProperty) -> Self {
        guard let v = _strataMapped(persisted) else {
            let info = at.accessor.info
            strataTrap("\(info.name).\(info.properties[at.index].name): Failed to convert persisted value "
                       + "'\(RealmDescription.value(persisted, depth: 1))' to type '\(Self.self)' in a non-optional context.")
        }
        return v
    }
}

extension EmbeddedObject {
    /// Memberwise equality for queries (a value mapped to an embedded object): the object's
    /// properties by name and value. Collections and links inside it are refused naming them,
    /// as RealmSwift does.
    var memberwiseValues: [(String, Any)] {
        let o = self
        return o.objectSchema.properties.map { p in
            if p.isArray || p.isSet || p.isMap {
                strataTrap("Unsupported property '\(o.objectSchema.className).\(p.name)' for memberwise equality query: "
                           + "equality on collections is not implemented.")
            }
            if p.type == .object || p.type == .linkingObjects {
                strataTrap("Unsupported property '\(o.objectSchema.className).\(p.name)' for memberwise equality query: "
                           + "object links are not implemented.")
            }
            return (p.name, o[p.name] ?? NSNull())
        }
    }
}
