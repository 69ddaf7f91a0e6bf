import Foundation

/// Marks a stored property of an `Object` subclass as persisted. The declared initial value is
/// the property's default; the Swift type says whether it is optional.
///
/// ```swift
/// class Person: Object {
///     @Persisted(primaryKey: true) var id = UUID().uuidString
///     @Persisted(indexed: true) var name = ""
///     @Persisted var age: Int?
///     @Persisted var dogs: List<Dog>
///     @Persisted var company: Company?
/// }
/// ```
///
/// While the object is unmanaged the wrapper holds the value; once managed it holds the
/// property's place in the class's schema and every read and write goes to the Realm.
@propertyWrapper
public struct Persisted<Value: _Persistable> {
    @usableFromInline
    enum Storage {
        case unmanaged(Value)
        case unmanagedNoDefault
        case managed(Int)
    }

    @usableFromInline var storage: Storage
    @usableFromInline var primaryKey = false
    @usableFromInline var indexed = false
    @usableFromInline var fullText = false
    @usableFromInline var originProperty: String?

    /// A property with its type's default (0, "", nil, an empty collection).
    /// A property whose default is `wrappedValue`.
    @inlinable public init() { storage = .unmanagedNoDefault }
    @inlinable public init(wrappedValue: Value) { storage = .unmanaged(wrappedValue) }

    /// The primary key: unique, indexed; Int, String, ObjectId or UUID (or their optionals).
    @inlinable public init(primaryKey: Bool) {
        storage = .unmanagedNoDefault
        self.primaryKey = primaryKey
    }

    /// The primary key (`primaryKey: true`): unique, indexed; int, string, ObjectId or UUID.
    @inlinable public init(wrappedValue: Value, primaryKey: Bool) {
        storage = .unmanaged(wrappedValue)
        self.primaryKey = primaryKey
    }

    /// Kept in an index: queries for equality (and ranges) use it.
    @inlinable public init(indexed: Bool) {
        storage = .unmanagedNoDefault
        self.indexed = indexed
    }

    /// An indexed property (`indexed: true`): equality and range queries use the index.
    @inlinable public init(wrappedValue: Value, indexed: Bool) {
        storage = .unmanaged(wrappedValue)
        self.indexed = indexed
    }

    /// A property kept in an index of the given kind: `.fullText` (a `String` or `String?`)
    /// indexes the words of the text for `TEXT` queries and
    /// ``Query/fullTextMatches(_:)``; `.general` is `indexed: true`. (Beyond RealmSwift,
    /// which has no full-text search; Realm's other SDKs spell it this way.)
    @inlinable public init(indexed kind: IndexKind) {
        storage = .unmanagedNoDefault
        indexed = kind == .general
        fullText = kind == .fullText
    }

    /// A property with an initial value, kept in an index of the given kind.
    @inlinable public init(wrappedValue: Value, indexed kind: IndexKind) {
        storage = .unmanaged(wrappedValue)
        indexed = kind == .general
        fullText = kind == .fullText
    }

    @available(*, unavailable, message: "@Persisted can only be used as a property of an Object subclass")
    public var wrappedValue: Value {
        get { fatalError() }
        set { fatalError() } // swiftlint:disable:this unused_setter_value
    }

    /// Objects a Realm hands out are not bound field by field (binding costs more than the
    /// read): a field still unmanaged in a managed object finds its property through its
    /// storage key path (`propertyIndex`), remembered per Realm.
    @inlinable
    public static subscript<EnclosingSelf: Object>(
        _enclosingInstance object: EnclosingSelf,
        wrapped wrappedKeyPath: ReferenceWritableKeyPath<EnclosingSelf, Value>,
        storage storageKeyPath: ReferenceWritableKeyPath<EnclosingSelf, Persisted<Value>>
    ) -> Value {
        get {
            // Managed: the property by the storage key path's identity (cached), without reading
            // the field through the key path (a generic projection costs more than the read).
            if object.__isManaged {
                // (propertyIndex checked the thread)
                return Value._strataGet(_ManagedProperty(object: object, index: propertyIndex(object, storageKeyPath),
                                                         threadChecked: true))
            }
            if let probe = object.__probe {
                probe.saw(object, &object[keyPath: storageKeyPath])
                if let link = probe.linked(Value.self) { return link } // the path goes on through it
            }
            // Unmanaged (its storage is never .managed then): the field in place, by its offset.
            let field = fieldAddress(object, storageKeyPath)
            switch field.pointee.storage {
            case .unmanaged(let value):
                return value
            default:
                let value = Value._strataDefault()
                field.pointee.storage = .unmanaged(value)
                return value
            }
        }
        set {
            if object.__isManaged {
                Value._strataSet(_ManagedProperty(object: object, index: propertyIndex(object, storageKeyPath)), newValue)
                return
            }
            fieldAddress(object, storageKeyPath).pointee.storage = .unmanaged(newValue)
        }
    }

    /// "Class.property" of a field, for messages.
    @usableFromInline
    static func fieldName<EnclosingSelf: Object>(
        _ object: EnclosingSelf, _ storageKeyPath: ReferenceWritableKeyPath<EnclosingSelf, Persisted<Value>>
    ) -> String {
        let base = UnsafeMutableRawPointer(Unmanaged.passUnretained(object).toOpaque())
        let offset = UnsafeMutableRawPointer(fieldAddress(object, storageKeyPath)) - base
        let info = ClassInfo.of(EnclosingSelf.self)
        return info.index(atOffset: offset).map { "\(info.name).\(info.properties[$0].name)" } ?? info.name
    }

    /// The address of an object's field, by its storage key path: the key path projects it once
    /// (a stored property's key path projects it in place) and its offset is remembered by the
    /// key path's identity (a projection through a key path costs ~20× the lookup).
    @usableFromInline
    static func fieldAddress<EnclosingSelf: Object>(
        _ object: EnclosingSelf, _ storageKeyPath: ReferenceWritableKeyPath<EnclosingSelf, Persisted<Value>>
    ) -> UnsafeMutablePointer<Persisted<Value>> {
        let base = UnsafeMutableRawPointer(Unmanaged.passUnretained(object).toOpaque())
        let id = ObjectIdentifier(storageKeyPath)
        if let offset = FieldOffsets.offset(of: id) {
            return (base + offset).assumingMemoryBound(to: Persisted<Value>.self)
        }
        let offset = withUnsafeMutablePointer(to: &object[keyPath: storageKeyPath]) { UnsafeMutableRawPointer($0) - base }
        FieldOffsets.remember(id, offset)
        return (base + offset).assumingMemoryBound(to: Persisted<Value>.self)
    }

    /// The property of a managed object's field, by its storage key path (one instance per
    /// property: the runtime caches key path literals): looked up in the Realm's table, or
    /// found the first time from the field's address (a stored property's key path projects it
    /// in place), whose offset the class's schema knows.
    @usableFromInline
    static func propertyIndex<EnclosingSelf: Object>(
        _ object: EnclosingSelf, _ storageKeyPath: ReferenceWritableKeyPath<EnclosingSelf, Persisted<Value>>
    ) -> Int {
        let accessor = object.__accessor!
        if let i = accessor.cachedPropertyIndex(ObjectIdentifier(storageKeyPath), fieldName(object, storageKeyPath)) {
            return i
        }
        let base = UnsafeMutableRawPointer(Unmanaged.passUnretained(object).toOpaque())
        let offset = withUnsafeMutablePointer(to: &object[keyPath: storageKeyPath]) {
            UnsafeMutableRawPointer($0) - base
        }
        guard let index = accessor.info.classInfo.index(atOffset: offset) else {
            strataTrap("\(EnclosingSelf.className()): a @Persisted field at offset \(offset) is not in its schema")
        }
        accessor.realm.cachePropertyIndex(accessor.info, ObjectIdentifier(storageKeyPath), index)
        return index
    }
}

extension Persisted where Value: _LinkingObjectsProtocol {
    /// The objects of `Value.Element` whose property `originProperty` (a link or a list of
    /// links) points at this object.
    @inlinable public init(originProperty: String) {
        storage = .unmanagedNoDefault
        self.originProperty = originProperty
    }
}

/// How schema discovery and binding see a `@Persisted` field without knowing its Value: through
/// The options a property's declaration wrote (`primaryKey:`, `indexed:`, `originProperty:`).
struct PersistedOptions {
    var primaryKey = false
    var indexed = false
    var fullText = false
    var origin: String?
}

/// the field's address in the object (its offset from `_forEachField`).
protocol PersistedField {
    static var kind: _PersistedKind { get }
    /// The type of the property's values (`Value`).
    static var valueType: Any.Type { get }
    /// The options written in the declaration.
    static func options(at field: UnsafeRawPointer) -> PersistedOptions
    /// The unmanaged value (the default made if it had none), type-erased.
    static func unmanagedValue(at field: UnsafeMutableRawPointer) -> Any
    /// The unmanaged value as a core value (a primary key to look up): nil for a value that is
    /// not one core value.
    static func unmanagedStored(at field: UnsafeMutableRawPointer) -> StoredValue?
    /// From now on the field reads and writes property `at.index` of its managed object.
    static func bind(at field: UnsafeMutableRawPointer, to at: _ManagedProperty)
    /// Set the unmanaged value from a type-erased one; false when it has the wrong type.
    static func setUnmanaged(at field: UnsafeMutableRawPointer, _ value: Any) -> Bool
    /// Write an unmanaged value into the managed object's property (untyped input).
    static func write(_ value: Any, to at: _ManagedProperty)
    /// During add: bind the field at `field` to `at` and write the value it held unmanaged
    /// (`skipIfEqual`: not when the object holds it already). One typed call, no boxing.
    static func transfer(from field: UnsafeMutableRawPointer, to at: _ManagedProperty, skipIfEqual: Bool)
    /// The value of a managed object's property, type-erased.
    static func read(_ at: _ManagedProperty) -> Any
}

extension Persisted: PersistedField {
    static var kind: _PersistedKind { Value._strataKind }
    static var valueType: Any.Type { Value.self }

    static func options(at field: UnsafeRawPointer) -> PersistedOptions {
        let p = field.assumingMemoryBound(to: Persisted<Value>.self).pointee
        return PersistedOptions(primaryKey: p.primaryKey, indexed: p.indexed, fullText: p.fullText,
                                origin: p.originProperty)
    }

    static func unmanagedValue(at field: UnsafeMutableRawPointer) -> Any { typedUnmanaged(field) }

    static func unmanagedStored(at field: UnsafeMutableRawPointer) -> StoredValue? {
        if Value.self == Int.self { return Persisted<Int>.typedUnmanaged(field)._strata.value }
        if Value.self == String.self { return Persisted<String>.typedUnmanaged(field)._strata.value }
        return ValueConversion.storedIfPrimitive(unmanagedValue(at: field))
    }

    static func bind(at field: UnsafeMutableRawPointer, to at: _ManagedProperty) {
        if Value.self == Int.self { return Persisted<Int>.typedBind(field, at.index) }
        if Value.self == String.self { return Persisted<String>.typedBind(field, at.index) }
        typedBind(field, at.index)
    }

    static func setUnmanaged(at field: UnsafeMutableRawPointer, _ value: Any) -> Bool {
        guard let v = ValueConversion.convert(value, to: Value.self) else { return false }
        field.assumingMemoryBound(to: Persisted<Value>.self).pointee.storage = .unmanaged(v)
        return true
    }

    static func write(_ value: Any, to at: _ManagedProperty) {
        guard let v = ValueConversion.convert(value, to: Value.self) else {
            strataTrap("Invalid value '\(value)' of type '\(type(of: value))' for property "
                       + "'\(at.accessor.info.name).\(at.accessor.info.properties[at.index].name)'.")
        }
        Value._strataSet(at, v)
    }

    static func read(_ at: _ManagedProperty) -> Any { Value._strataGet(at) }

    // The common value types go to code made for them before anything touches `Storage`: a
    // generic body looks up the metadata of `Persisted<Value>.Storage` first, a hash lookup in
    // the runtime's cache at each call (an add calls this once per field). (`@_specialize`
    // dispatches after that lookup.)
    static func transfer(from field: UnsafeMutableRawPointer, to at: _ManagedProperty, skipIfEqual: Bool) {
        if Value.self == Int.self { return Persisted<Int>.typedTransfer(field, at, skipIfEqual) }
        if Value.self == String.self { return Persisted<String>.typedTransfer(field, at, skipIfEqual) }
        if Value.self == Bool.self { return Persisted<Bool>.typedTransfer(field, at, skipIfEqual) }
        if Value.self == Double.self { return Persisted<Double>.typedTransfer(field, at, skipIfEqual) }
        if Value.self == Date.self { return Persisted<Date>.typedTransfer(field, at, skipIfEqual) }
        if Value.self == Int?.self { return Persisted<Int?>.typedTransfer(field, at, skipIfEqual) }
        if Value.self == String?.self { return Persisted<String?>.typedTransfer(field, at, skipIfEqual) }
        typedTransfer(field, at, skipIfEqual)
    }

    @inline(never)
    private static func typedUnmanaged(_ field: UnsafeMutableRawPointer) -> Value {
        let p = field.assumingMemoryBound(to: Persisted<Value>.self)
        switch p.pointee.storage {
        case .unmanaged(let v): return v
        case .unmanagedNoDefault:
            let v = Value._strataDefault()
            p.pointee.storage = .unmanaged(v)
            return v
        case .managed: fatalError("unmanagedValue of a managed property")
        }
    }

    @inline(never)
    private static func typedBind(_ field: UnsafeMutableRawPointer, _ index: Int) {
        field.assumingMemoryBound(to: Persisted<Value>.self).pointee.storage = .managed(index)
    }

    @inline(never)
    private static func typedTransfer(_ field: UnsafeMutableRawPointer, _ at: _ManagedProperty, _ skipIfEqual: Bool) {
        let p = field.assumingMemoryBound(to: Persisted<Value>.self)
        let value: Value
        switch p.pointee.storage {
        case .unmanaged(let v): value = v
        case .unmanagedNoDefault: value = Value._strataDefault()
        case .managed: return
        }
        p.pointee.storage = .managed(at.index)
        let collection = Value._strataKind.collection
        if collection == .linkingObjects { return }
        if skipIfEqual, let prim = value as? any _PrimitivePersistable, prim._strata.value == at.read() { return }
        Value._strataSet(at, value)
        // the collection the object held unmanaged is now its managed property (RealmSwift: a
        // `let list = obj.dogs` kept from before `add` reads and writes the Realm after it)
        if collection != .none, let c = value as? _AdoptedOnAdd { c._strataAdopt(at) }
    }
}

/// A collection property whose unmanaged instance becomes the managed property when its object
/// is added to a Realm.
protocol _AdoptedOnAdd: AnyObject {
    func _strataAdopt(_ at: _ManagedProperty)
}

/// The offsets in their objects of the fields that storage key paths name (Persisted.fieldAddress),
/// for the whole process: a key path's field lies at one offset in every instance. Every write
/// to an unmanaged object asks, so it is an open-addressed table of key path identities under a
/// plain mutex (no dictionary, no Foundation lock); past its room, a dictionary.
@usableFromInline
enum FieldOffsets {
    private static let capacity = 1 << 12
    // (the table is read and written under `lock` only)
    nonisolated(unsafe) private static let lock: UnsafeMutablePointer<pthread_mutex_t> = {
        let lock = UnsafeMutablePointer<pthread_mutex_t>.allocate(capacity: 1)
        pthread_mutex_init(lock, nil)
        return lock
    }()
    nonisolated(unsafe) private static let keys: UnsafeMutablePointer<UInt> = { // 0: empty
        let keys = UnsafeMutablePointer<UInt>.allocate(capacity: capacity)
        keys.initialize(repeating: 0, count: capacity)
        return keys
    }()
    nonisolated(unsafe) private static let offsets = UnsafeMutablePointer<Int>.allocate(capacity: capacity)
    // under the lock
    nonisolated(unsafe) private static var used = 0
    nonisolated(unsafe) private static var overflow: [ObjectIdentifier: Int] = [:]

    @inline(__always)
    private static func slot(_ id: UInt) -> Int { Int(truncatingIfNeeded: (id >> 4) ^ (id >> 16)) & (capacity - 1) }

    @usableFromInline
    static func offset(of keyPath: ObjectIdentifier) -> Int? {
        let id = UInt(bitPattern: keyPath)
        let (lock, keys) = (lock, keys)
        pthread_mutex_lock(lock)
        defer { pthread_mutex_unlock(lock) }
        var i = slot(id)
        while keys[i] != 0 {
            if keys[i] == id { return offsets[i] }
            i = (i + 1) & (capacity - 1)
        }
        return overflow.isEmpty ? nil : overflow[keyPath]
    }

    @usableFromInline
    static func remember(_ keyPath: ObjectIdentifier, _ offset: Int) {
        let id = UInt(bitPattern: keyPath)
        pthread_mutex_lock(lock)
        defer { pthread_mutex_unlock(lock) }
        if used >= capacity / 2 {
            overflow[keyPath] = offset
            return
        }
        var i = slot(id)
        while keys[i] != 0 {
            if keys[i] == id { return }
            i = (i + 1) & (capacity - 1)
        }
        keys[i] = id
        offsets[i] = offset
        used += 1
    }
}
