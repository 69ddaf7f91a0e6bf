import Foundation

/// What belongs to its Realm's thread and can be handed to another thread through a
/// `ThreadSafeReference`: managed objects, `Results` and `List`.
public protocol ThreadConfined {
    /// The Realm the value belongs to, nil when unmanaged.
    var realm: Realm? { get }
    /// Whether the value can no longer be read (deleted, or its Realm invalidated).
    var isInvalidated: Bool { get }
    /// Whether the value is frozen (readable from any thread).
    var isFrozen: Bool { get }
    /// A frozen copy: the version read now, readable from any thread.
    func freeze() -> Self
    /// The live counterpart in the calling thread's Realm (nil when it is gone there).
    func thaw() -> Self?
    /// The same thing in `realm` (another Realm of its file), or nil when it is gone there.
    func _strataFound(in realm: Realm) -> Self?
}

extension Object: ThreadConfined {
    public func _strataFound(in realm: Realm) -> Self? {
        guard let a = __accessor else { return nil }
        let r = realm.instance
        guard (try? r.table(a.info).exists(a.key)) == true else { return nil }
        return r.sameObject(type(of: self), as: a)
    }
}

extension Results {
    public func _strataFound(in realm: Realm) -> Results<Element>? {
        Results(base: base.rebound(to: realm.instance))
    }
}

extension LinkingObjects {
    public func _strataFound(in realm: Realm) -> LinkingObjects<Element>? {
        guard let owner, let r = _strataResults else { return nil }
        let other = realm.instance
        guard (try? other.table(other.tableInfo(owner.info.classInfo.type)).exists(owner.key)) == true else { return nil }
        return LinkingObjects(results: Results(base: r.base.rebound(to: other)), owner: owner)
    }
}

extension List {
    public func _strataFound(in realm: Realm) -> List<Element>? { found(in: realm) }
}

/// A way to hand an object, a `Results` or a `List` to another thread: made on the thread that
/// owns it, resolved once with `realm.resolve(_:)` on the other thread, which then reads the same
/// object (at least the version it was made at).
///
/// ```swift
/// let ref = ThreadSafeReference(to: person)
/// DispatchQueue.global().async {
///     let realm = try! Realm(configuration: config)
///     guard let person = realm.resolve(ref) else { return }   // nil: deleted meanwhile
/// }
/// ```
public final class ThreadSafeReference<Confined: ThreadConfined>: @unchecked Sendable {
    private let lock = NSLock()
    private var value: Confined?
    private let storeKey: String
    private let version: UInt64
    /// Made inside a write: `version` is the one that write makes, which may never come (the
    /// write cancelled) or not yet (resolved before the commit).
    private let madeInWrite: Bool
    private let what: String

    /// A reference to `threadConfined`, a managed object or collection of this thread's Realm.
    public init(to threadConfined: Confined) {
        guard let realm = threadConfined.realm else {
            strataTrap("Cannot construct reference to unmanaged object, which can be passed across threads directly (\(Confined.self)).")
        }
        if threadConfined.isInvalidated {
            strataTrap("Cannot construct reference to invalidated object (\(Confined.self)).")
        }
        value = threadConfined
        storeKey = realm.instance.configuration.storeKey
        // During a write: the version the write makes (resolving refreshes to it when it is
        // committed; before that, or when it is cancelled, an object the write made is nil).
        version = realm.instance.version
        madeInWrite = realm.instance.isInWriteTransaction
        what = "\(Confined.self)"
    }

    /// True once resolved (a reference resolves once).
    public var isInvalidated: Bool {
        lock.lock()
        defer { lock.unlock() }
        return value == nil
    }

    func resolve(in realm: Realm) -> Confined? {
        lock.lock()
        guard let v = value else {
            lock.unlock()
            strataTrap("Can only resolve a thread safe reference once (\(what)).")
        }
        value = nil
        lock.unlock()
        let r = realm.instance
        r.checkThread("resolve \(what)")
        // a Realm of another file has none of its objects (as RealmSwift, which finds nothing there)
        if r.configuration.storeKey != storeKey { return nil }
        if r.version < version {
            if r.isFrozen || r.isInWriteTransaction || !r.refresh() && r.version < version && !madeInWrite {
                strataTrap("Cannot resolve a thread safe reference of version \(version) in a Realm at version \(r.version) that cannot refresh (frozen or in a write transaction).")
            }
        }
        return v._strataFound(in: realm)
    }
}

extension Realm {
    /// The object or collection of `reference` in this Realm (refreshed to at least the version
    /// the reference was made at), or nil when the object was deleted since. Once per reference.
    public func resolve<Confined: ThreadConfined>(_ reference: ThreadSafeReference<Confined>) -> Confined? {
        reference.resolve(in: self)
    }
}

/// A property or variable holding an object or collection that may be read on any thread: it
/// keeps a thread-safe reference, and each read resolves it in the calling thread's Realm of the
/// same configuration (making a new reference for the next read). Nil once the object is
/// deleted. Wrapping an unmanaged object traps (pass it directly instead).
///
/// ```swift
/// @ThreadSafe var person = somePerson
/// DispatchQueue.global().async { print(person?.name ?? "deleted") }
/// ```
@propertyWrapper public final class ThreadSafe<T: ThreadConfined>: @unchecked Sendable {
    private var reference: ThreadSafeReference<T>?
    private var configuration: Realm.Configuration?
    private let lock = NSLock()

    /// The object on this thread (resolved from the reference the first time), nil when it was deleted.
    public var wrappedValue: T? {
        get {
            lock.lock()
            defer { lock.unlock() }
            guard let reference, let configuration else { return nil }
            let realm: Realm
            do { realm = try Realm(configuration: configuration) } catch {
                strataTrap("@ThreadSafe \(T.self): cannot open its Realm on this thread: \(error)")
            }
            guard let value = realm.resolve(reference) else {
                self.reference = nil
                return nil
            }
            self.reference = ThreadSafeReference(to: value)
            return value
        }
        set {
            lock.lock()
            defer { lock.unlock() }
            guard let newValue else {
                reference = nil
                return
            }
            guard let realm = newValue.realm else {
                strataTrap("Only managed objects may be wrapped as thread safe (\(T.self)).")
            }
            configuration = realm.configuration
            reference = ThreadSafeReference(to: newValue)
        }
    }

    /// Wraps an object to hand across threads (nil allowed).
    public init(wrappedValue: T?) {
        self.wrappedValue = wrappedValue
    }
}
