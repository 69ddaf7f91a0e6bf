import Foundation

/// Swift concurrency: Realms isolated to an actor, opened without blocking it.
///
/// ```swift
/// actor Store {
///     func rename(_ id: Int, to name: String) async throws {
///         let realm = try await Realm.open()          // isolated to this actor
///         try await realm.asyncWrite {                 // waits for the file without a thread
///             realm.object(ofType: Dog.self, forPrimaryKey: id)?.name = name
///         }
///     }
/// }
/// ```
///
/// An actor's Realm belongs to the actor, not to a thread: any thread that runs the actor's jobs
/// uses it; another actor or thread using it traps naming the actor. A write begun with
/// `beginWrite()` must end in the same job (the file's writer lock belongs to a thread); across
/// an `await`, use `asyncWrite`.
extension Realm {
    /// When to download a synchronized Realm before opening (RealmSwift's; Strata's Realms are
    /// local, so every behavior opens the file as it is).
    @frozen public enum OpenBehavior: Sendable {
        /// Open the file as it is.
        case never
        /// Open the file as it is (no server to download from).
        case always
        /// Open the file as it is (no server to download from).
        case once
    }

    /// The Realm of `configuration` isolated to the calling actor (the main actor's on the main
    /// actor). Opening the file, migrating and compacting it run off the actor; a cancelled task
    /// throws `CancellationError` and leaves nothing open.
    public static func open(configuration: Realm.Configuration = .defaultConfiguration,
                            _isolation actor: isolated any Actor = #isolation,
                            downloadBeforeOpen: OpenBehavior = .never) async throws -> Realm {
        let file = try await prepared(configuration)
        try Task.checkCancellation()
        return try withExtendedLifetime(file) { try Realm(isolatedTo: actor, configuration) }
    }

    /// The Realm of `configuration` isolated to `actor` (which the caller need not be on; it can
    /// only use the Realm on the actor).
    public init<A: Actor>(configuration: Realm.Configuration = .defaultConfiguration, actor: A,
                          downloadBeforeOpen: OpenBehavior = .never) async throws {
        let file = try await Realm.prepared(configuration)
        try Task.checkCancellation()
        let made = try await actor.strataRun { isolated in
            try withExtendedLifetime(file) { Unchecked(try Realm(isolatedTo: isolated, configuration)) }
        }
        self = made.value
    }

    /// The main actor's Realm of `configuration`, opened off the main actor.
    @MainActor
    public init(configuration: Realm.Configuration = .defaultConfiguration,
                downloadBeforeOpen: OpenBehavior = .never) async throws {
        let file = try await Realm.prepared(configuration)
        try Task.checkCancellation()
        self = try withExtendedLifetime(file) { try Realm(isolatedTo: MainActor.shared, configuration) }
    }

    /// The cached Realm of `actor` (called on it).
    private init(isolatedTo actor: any Actor, _ configuration: Realm.Configuration) throws {
        do {
            self.init(try RealmCache.instance(for: configuration, actor: actor))
        } catch let e as StrataError {
            throw StrataError.opening(e, path: configuration.path)
        }
    }

    /// The file of `configuration`, opened and its schema set up on a thread of its own.
    private static func prepared(_ configuration: Realm.Configuration) async throws -> SharedFile {
        try await withCheckedThrowingContinuation { c in
            DispatchQueue.global().async {
                do {
                    c.resume(returning: try RealmInstance.prepareFile(configuration))
                } catch let e as StrataError {
                    c.resume(throwing: StrataError.opening(e, path: configuration.path))
                } catch {
                    c.resume(throwing: error)
                }
            }
        }
    }

    /// Run `block` in a write, waiting for the file without blocking the actor's thread: the task
    /// suspends while another writer (of this process or another) holds it. Before the block the
    /// Realm moves to the latest version, as `beginWrite` does. A block that throws rolls the
    /// write back and the error is rethrown; a task cancelled while it waits throws
    /// `CancellationError` and writes nothing. Only for a Realm isolated to an actor (the main
    /// actor's included): on another it traps.
    @discardableResult
    public func asyncWrite<Result>(_isolation actor: isolated any Actor = #isolation,
                                   _ block: () throws -> Result) async throws -> Result {
        let r = instance
        r.checkThread("asyncWrite")
        guard r.actor != nil || r.isMain else {
            strataTrap("asyncWrite() can only be called on main thread or actor-isolated Realms")
        }
        if r.isInWriteTransaction { strataTrap("asyncWrite(): the Realm is already in a write transaction") }
        r.asyncWriters += 1
        defer { r.asyncWriters -= 1 }
        while true {
            try Task.checkCancellation()
            if try r.beginWrite(wait: false) { break }
            await r.shared.writeTurns.wait()
        }
        let result: Result
        do {
            try Task.checkCancellation()
            result = try block()
        } catch {
            if r.isInWriteTransaction { r.cancelWrite() }
            throw error
        }
        if r.isInWriteTransaction { try r.commitWrite() }
        return result
    }

    /// Move to the latest version and deliver the notifications due, without blocking (only for
    /// a Realm isolated to an actor, the main actor's included). Returns whether there was a
    /// newer version.
    @discardableResult
    public func asyncRefresh(_isolation: isolated any Actor = #isolation) async -> Bool {
        let r = instance
        r.checkThread("asyncRefresh")
        guard r.actor != nil || r.isMain else {
            strataTrap("asyncRefresh() can only be called on main thread or actor-isolated Realms")
        }
        return r.refresh()
    }
}

extension NotificationToken {
    /// A token whose observation never began (the task that asked was cancelled).
    static var cancelled: NotificationToken {
        let t = NotificationToken()
        t.invalidate()
        return t
    }
}

/// A value handed from one isolation domain to another where the compiler cannot see that only
/// the receiver uses it (a Realm made on the actor it belongs to).
struct Unchecked<Value>: @unchecked Sendable {
    let value: Value
    init(_ value: Value) { self.value = value }
}

extension Actor {
    /// Run `body` on this actor (isolated to it) and return its result.
    func strataRun<T: Sendable>(_ body: @Sendable (isolated Self) throws -> T) async rethrows -> T {
        try body(self)
    }

    /// Run `body` on this actor later, from a task of its own (deliveries to an actor's Realm);
    /// detached, so that it inherits none of the caller's task-local values.
    nonisolated func strataInvoke(_ body: @escaping @Sendable () -> Void) {
        Task.detached { await self.strataRun { _ in body() } }
    }
}

// MARK: - Notifications on an actor

extension RealmCollection {
    /// Be told of the collection's changes on `actor`: the block runs isolated to it, with the
    /// collection as the actor's Realm sees it (`.initial`, then `.update` after each version
    /// that changed it). Returns once the observer is in place on the actor.
    public func observe<A: Actor>(keyPaths: [String]? = nil, on actor: A,
                                  _isolation: isolated (any Actor)? = #isolation,
                                  _ block: @Sendable @escaping (isolated A, RealmCollectionChange<Self>) -> Void) async -> NotificationToken {
        let r = Observation.registering(on: actor) {
            observe(keyPaths: keyPaths, on: nil, Observation.delivering(on: actor, block))
        }
        await r.target?.wait()
        return r.token
    }
}

extension RealmCollection where Element: Object {
    public func observe<A: Actor>(keyPaths: [PartialKeyPath<Element>], on actor: A,
                                  _isolation: isolated (any Actor)? = #isolation,
                                  _ block: @Sendable @escaping (isolated A, RealmCollectionChange<Self>) -> Void) async -> NotificationToken {
        await observe(keyPaths: keyPaths.map { KeyPathNames.name($0) }, on: actor, block)
    }
}

extension RealmKeyedCollection where Value: OptionalProtocol, Value.Wrapped: Object {
    /// The same, with typed key paths of the map's objects.
    public func observe<A: Actor>(keyPaths: [PartialKeyPath<Value.Wrapped>], on actor: A,
                                  _isolation: isolated (any Actor)? = #isolation,
                                  _ block: @Sendable @escaping (isolated A, RealmMapChange<Self>) -> Void) async -> NotificationToken {
        await observe(keyPaths: keyPaths.map { KeyPathNames.name($0) }, on: actor, block)
    }
}

extension RealmKeyedCollection {
    /// Be told of the map's changes on `actor` (as `observe(keyPaths:on:_:)` with a queue).
    public func observe<A: Actor>(keyPaths: [String]? = nil, on actor: A,
                                  _isolation: isolated (any Actor)? = #isolation,
                                  _ block: @Sendable @escaping (isolated A, RealmMapChange<Self>) -> Void) async -> NotificationToken {
        let r = Observation.registering(on: actor) {
            observe(keyPaths: keyPaths, on: nil, Observation.delivering(on: actor, block))
        }
        await r.target?.wait()
        return r.token
    }
}

extension _TypedObject where Self: Object {
    /// Be told of this object's changes on `actor`: the block runs isolated to it, with the
    /// object as the actor's Realm sees it.
    public func observe<A: Actor>(keyPaths: [String]? = nil, on actor: A,
                                  _isolation: isolated (any Actor)? = #isolation,
                                  _ block: @Sendable @escaping (isolated A, ObjectChange<Self>) -> Void) async -> NotificationToken {
        let r = Observation.registering(on: actor) {
            observe(keyPaths: keyPaths, on: nil, Observation.delivering(on: actor, block))
        }
        await r.target?.wait()
        return r.token
    }

    public func observe<A: Actor>(keyPaths: [PartialKeyPath<Self>], on actor: A,
                                  _isolation: isolated (any Actor)? = #isolation,
                                  _ block: @Sendable @escaping (isolated A, ObjectChange<Self>) -> Void) async -> NotificationToken {
        await observe(keyPaths: keyPaths.map { KeyPathNames.name($0) }, on: actor, block)
    }
}
