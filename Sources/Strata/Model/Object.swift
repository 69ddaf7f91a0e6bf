import Foundation

/// The base class of model classes. Subclass it and mark the stored properties with
/// `@Persisted`; the others are ignored.
///
/// ```swift
/// class Dog: Object {
///     @Persisted var name = ""
///     @Persisted(indexed: true) var color: String?
///     @Persisted(originProperty: "dogs") var owners: LinkingObjects<Person>
/// }
/// let dog = Dog(value: ["name": "小白", "color": "白色"])   // unmanaged
/// try realm.write { realm.add(dog) }                        // managed from now on
/// ```
///
/// An object is a plain Swift object until it is added to a Realm (or read from one); then its
/// properties read and write the file. A managed object belongs to its Realm's thread; changing
/// one outside a write, or touching one that was deleted, is a programmer error and traps with
/// the class and property named.
open class Object: ObjectBase, CustomStringConvertible {
    /// Set when the object is managed: its Realm, class and key.
    final var __accessor: ObjectAccessor? {
        get { __place }
        set {
            __place = newValue
            hold(newValue?.realmReference)
            if let a = newValue, !a.info.classInfo.instanceFields.isEmpty, a.info.classInfo.type == Swift.type(of: self) {
                let base = Unmanaged.passUnretained(self).toOpaque()
                for f in a.info.classInfo.instanceFields {
                    f.field.bind(at: base + f.offset, to: _ManagedProperty(object: self, index: f.index))
                }
            }
            assert(newValue.map { $0.realm.owns($0.info) } ?? true, "an object's TableInfo is its Realm's own")
        }
    }
    private final var __place: ObjectAccessor?

    /// Becomes managed while `add` moves its fields' values into the Realm (each field is bound
    /// as its value is written: no field is bound before).
    final func __adopt(_ accessor: ObjectAccessor) {
        __place = accessor
        hold(accessor.realmReference)
    }

    /// A managed object becomes the object `key` of its class in the same Realm (an iterator
    /// reusing an instance nobody references: Results.Iterator).
    @usableFromInline
    final func __move(to key: Int64) {
        __place = __place.map { ObjectAccessor(realm: $0.realm, info: $0.info, key: key) }
    }
    /// What the accessor refers to without counting it (ObjectAccessor), kept alive here: the
    /// Realm (which keeps its TableInfos: an object's is one of its Realm's own), through its
    /// hold count (`RealmInstance.addHold`), not a reference each: a Realm is weakly referenced
    /// (by the caches of open Realms), which puts every retain and release of it on the
    /// runtime's slow path, and each object made and dropped took one of each.
    private final var __holds: Unmanaged<RealmInstance>?

    private final func hold(_ realm: Unmanaged<RealmInstance>?) {
        realm?._withUnsafeGuaranteedRef { $0.addHold() }
        __holds?._withUnsafeGuaranteedRef { $0.dropHold() }
        __holds = realm
    }

    deinit { __holds?._withUnsafeGuaranteedRef { $0.dropHold() } }

    /// Set on an unmanaged object used to learn which property a key path reads (KeyPathNames).
    @usableFromInline var __probe: _KeyPathProbe?

    /// An unmanaged object with its properties' declared defaults.
    public required init() { super.init() }

    /// Managed by a Realm (for @Persisted's inlined accessors).
    @usableFromInline var __isManaged: Bool { __accessor != nil }

    /// An unmanaged object whose properties are taken from `value`: a dictionary of property
    /// names to values, an array of values in the order of the properties, or another object
    /// (managed or not) of the same class; a list property takes an array (of objects, or of
    /// dictionaries/arrays for objects). Properties not given keep their defaults. Traps when a
    /// value has the wrong type, naming the class and property.
    public convenience init(value: Any) {
        self.init()
        ObjectCopy.fill(self, from: value)
    }

    /// The Realm managing this object, or nil while it is unmanaged.
    public var realm: Realm? { __accessor.map { Realm($0.realm) } }

    /// True once the object was deleted (or its Realm invalidated); its properties may then no
    /// longer be touched.
    public var isInvalidated: Bool { __accessor?.isInvalidated ?? false }

    /// The schema of the object's class.
    public var objectSchema: ObjectSchema {
        __accessor?.info.schema ?? ClassInfo.of(type(of: self)).schema
    }

    /// The schema of this class as Realms store it (RealmSwift's `sharedSchema()`; Strata's is an
    /// `ObjectSchema`, not the Objective-C `RLMObjectSchema`).
    public class func sharedSchema() -> ObjectSchema? { ClassInfo.of(self).schema }

    /// The class name models and Realms use: the unqualified Swift name.
    open class func className() -> String { ClassInfo.unqualifiedName(of: self) }

    /// The name of the primary key property, for a class that names it this way (RealmSwift's
    /// older spelling of `@Persisted(primaryKey: true)`); nil: none named here. A name that is no
    /// property of the class is refused when a Realm opens.
    open class func primaryKey() -> String? { nil }

    /// Properties kept in an index, for a class that names them this way (the older spelling of
    /// `@Persisted(indexed: true)`).
    open class func indexedProperties() -> [String] { [] }

    /// Properties a subclass declares but does not store (RealmSwift compatibility; properties
    /// without `@Persisted` are ignored anyway).
    open class func ignoredProperties() -> [String] { [] }

    /// Names the file stores properties under, by property (RealmSwift's `propertiesMapping()`):
    /// `["pk": "custom_pk"]` keeps property `pk` in column `custom_pk`. Swift code, key paths,
    /// key-value coding and predicate strings use the property's own name; only the file (and
    /// other languages reading it) sees the column name. A key that is no property of the class,
    /// or two properties given one column, is refused when a Realm opens.
    open class func propertiesMapping() -> [String: String] { [:] }

    /// As RealmSwift describes objects: `Dog {\n\tname = 小白;\n}`, links and collections
    /// nested to depth 5.
    open var description: String { RealmDescription.object(self) }

    /// A property's value by name, as RealmSwift's key-value coding hands it out: nil for nil
    /// (and for a name that is no property), numbers and Bools as NSNumber (so `as? Int`,
    /// `as? Int8` or `as? Double` all read them), other values as they are: `dog["name"] as? String`.
    open subscript(key: String) -> Any? {
        get {
            let info = __accessor?.info.classInfo ?? ClassInfo.of(Swift.type(of: self))
            guard let p = info.property(named: key) else { return nil }
            return ValueConversion.keyValueCoded(info.value(of: self, p))
        }
        set {
            let info = __accessor?.info.classInfo ?? ClassInfo.of(Swift.type(of: self))
            guard let p = info.property(named: key) else {
                strataTrap("Invalid property name '\(key)' for class '\(info.name)'.")
            }
            info.setValue(newValue, of: self, p)
        }
    }

    /// Key-value coding, as RealmSwift's objects (NSObject) have it: a property's value by name
    /// (nil for a name that is no property).
    public func value(forKey key: String) -> Any? { self[key] }

    /// A value through links: `"dog.name"`.
    public func value(forKeyPath keyPath: String) -> Any? {
        let parts = keyPath.split(separator: ".", maxSplits: 1).map(String.init)
        guard parts.count == 2 else { return self[keyPath] }
        guard let next = self[parts[0]] as? Object else { return nil }
        return next.value(forKeyPath: parts[1])
    }

    /// Set a property through links: `"dog.name"`.
    public func setValue(_ value: Any?, forKeyPath keyPath: String) {
        let parts = keyPath.split(separator: ".", maxSplits: 1).map(String.init)
        guard parts.count == 2 else { return setValue(value, forKey: keyPath) }
        guard let next = self[parts[0]] as? Object else {
            strataTrap("setValue(_:forKeyPath: '\(keyPath)'): '\(parts[0])' of \(Swift.type(of: self).className()) is not a linked object")
        }
        next.setValue(value, forKeyPath: parts[1])
    }

    /// Set a property by name (managed: inside a write). A name that is no property, or a value
    /// of the wrong type, traps naming them.
    public func setValue(_ value: Any?, forKey key: String) { self[key] = value }

    /// Set properties from a dictionary of names to values.
    public func setValuesForKeys(_ keyedValues: [String: Any]) {
        for (k, v) in keyedValues { self[k] = v }
    }

    /// NSObject's equality (RealmSwift's objects are NSObjects): `==` with another object.
    open func isEqual(_ object: Any?) -> Bool {
        guard let other = object as? Object else { return false }
        return self == other
    }

    /// Two managed objects are the same object when they are the same row of the same Realm
    /// file; unmanaged ones only when identical.
    public func isSameObject(as other: Object?) -> Bool {
        guard let other = other else { return false }
        if self === other { return true }
        if let d = self as? DynamicObject, let same = d.isSameMigrationObject(other) { return same }
        guard let a = __accessor, let b = other.__accessor else { return false }
        return a.key == b.key && a.info.tableName == b.info.tableName && a.realm.shared === b.realm.shared
    }
}

/// The root of the model classes (RealmSwift's name for what `Object` and `EmbeddedObject`
/// share): `objectTypes: [ObjectBase.Type]`, `ObjectChange<ObjectBase>` and generic code over
/// model classes use it. Subclass `Object`, not this class: a class deriving from `ObjectBase`
/// alone is not a model and a Realm refuses it by name.
open class ObjectBase {
    /// An unmanaged object.
    public required init() {}
}

/// Lets methods hand each model class its own type (`ObjectChange<Dog>` from `observe`, a `Dog`
/// from `freeze()`).
public protocol _TypedObject: AnyObject {}
extension Object: _TypedObject {}

/// As RealmSwift compares objects: two managed objects of a class with a primary key (or two
/// frozen objects) are equal when they are the same object of the same file; otherwise only the
/// same instance is equal (`isSameObject(as:)` compares rows whatever the class).
extension Object: Equatable {
    public static func == (a: Object, b: Object) -> Bool {
        if a === b { return true }
        guard let x = a.__accessor, x.info.classInfo.primaryKeyIndex != nil || x.realm.isFrozen else { return false }
        return a.isSameObject(as: b)
    }
}

extension Object: Hashable {
    public func hash(into h: inout Hasher) {
        if let a = __accessor, a.info.classInfo.primaryKeyIndex != nil || a.realm.isFrozen {
            h.combine(a.key)
            h.combine(a.info.tableName)
        } else {
            h.combine(ObjectIdentifier(self))
        }
    }
}

/// Programmer errors (a managed object changed outside a write, a deleted object touched, a
/// Realm used from another thread) stop the program with a message, as RealmSwift does.
func strataTrap(_ message: String, file: StaticString = #file, line: UInt = #line) -> Never {
    fatalError(message, file: file, line: line)
}

extension Object: _OptionalPersistable {
    public static var _strataKindWhenOptional: _PersistedKind {
        _PersistedKind(.link, optional: true, target: self)
    }

    public static func _strataFromStored(_ v: _Stored, _ at: _ManagedProperty) -> Self? {
        guard case .link(let key) = v.value else { return nil }
        return at.accessor.realm.managedObject(self, key: key)
    }

    public static func _strataToStored(_ value: Object, _ at: _ManagedProperty) -> _Stored {
        if value is EmbeddedObject {
            let current: Int64? = { if case .link(let k) = at.read() { return k } else { return nil } }()
            // set again where it is: its own place, nothing changes
            if let a = value.__accessor, a.realm === at.accessor.realm, current == a.key { return _Stored(.link(a.key)) }
            // an existing object updated by add(_:update:): the embedded object there takes the values
            if let k = at.accessor.realm.embeddedInPlace(value, replacing: current) { return _Stored(.link(k)) }
        }
        return _Stored(.link(at.accessor.realm.keyForLink(
            value, what: "\(at.accessor.info.name).\(at.accessor.info.properties[at.index].name)")))
    }
}
