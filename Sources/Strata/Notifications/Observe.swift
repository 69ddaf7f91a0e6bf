import Foundation

/// Registering observers: the checks RealmSwift makes, then an observer on this Realm's thread,
/// or on a Realm confined to the queue given (made there, and the observed thing found again
/// in it).
enum Observation {
    /// `what` names the observed thing in the messages of traps (made only for one).
    static func register(_ realm: RealmInstance, queue: DispatchQueue?, what: @autoclosure () -> String,
                         onError: @escaping (Error) -> Void,
                         make: @escaping (RealmInstance, ObservationState) -> NotificationObserver) -> NotificationToken {
        realm.checkThread(what())
        if realm.isFrozen {
            strataTrap("Frozen Realms do not change and do not have change notifications (\(what())).")
        }
        if realm.configuration.readOnly {
            strataTrap("Read-only Realms do not change and do not have change notifications (\(what()) of '\(realm.configuration.path)').")
        }
        if realm.isInWriteTransaction {
            strataTrap("Cannot register notification blocks from within write transactions (\(what())).")
        }
        let token = NotificationToken()
        let state = token.state
        if let target = actorTarget { // observe(on: actor): registered on the actor's Realm
            let config = realm.configuration
            let (make, onError) = (Unchecked(make), Unchecked(onError))
            target.actor.strataInvoke {
                defer { target.registered() }
                if state.isInvalidated { return }
                do {
                    let home = try RealmCache.instance(for: config, actor: target.actor)
                    _ = home.refresh() // at least the version the observed thing was read in
                    home.notifications().add(make.value(home, state))
                } catch {
                    onError.value(error)
                    state.invalidate()
                }
            }
            return token
        }
        guard let queue else {
            realm.notifications().add(make(realm, state))
            return token
        }
        let config = realm.configuration
        // (the blocks run on the queue only, as RealmSwift's queue observers do)
        let (make, onError) = (Unchecked(make), Unchecked(onError))
        queue.async {
            if state.isInvalidated { return }
            do {
                let home = try RealmCache.instance(for: config, queue: queue)
                home.notifications().add(make.value(home, state))
            } catch {
                onError.value(error)
                state.invalidate()
            }
        }
        return token
    }

    /// Set while an `observe(on: actor)` registers: the observer goes to the actor's Realm.
    @TaskLocal static var actorTarget: ActorTarget?

    /// Where an `observe(on: actor)` registers, and the wait for it (the registration runs on
    /// the actor; the call returns once it has).
    final class ActorTarget: @unchecked Sendable {
        let actor: any Actor
        private let lock = NSLock()
        private var done = false
        private var waiter: CheckedContinuation<Void, Never>?

        init(_ actor: any Actor) { self.actor = actor }

        func registered() {
            lock.lock()
            done = true
            let w = waiter
            waiter = nil
            lock.unlock()
            w?.resume()
        }

        func wait() async {
            await withCheckedContinuation { c in
                lock.lock()
                if done {
                    lock.unlock()
                    c.resume()
                } else {
                    waiter = c
                    lock.unlock()
                }
            }
        }
    }

    /// Register an observer through `register` (an `observe(..., on: nil, ...)` call) on
    /// `actor`'s Realm; the caller then waits for `target` (the registration runs on the actor).
    /// From a cancelled task nothing is registered (RealmSwift's rule): an invalidated token,
    /// no target.
    static func registering(on actor: any Actor, _ register: () -> NotificationToken)
        -> (token: NotificationToken, target: ActorTarget?) {
        if Task.isCancelled { return (NotificationToken.cancelled, nil) }
        let target = ActorTarget(actor)
        return ($actorTarget.withValue(target) { register() }, target)
    }

    /// An `observe(on: actor)` block as the observers call it: on the actor, isolated to it.
    static func delivering<A: Actor, Change>(on actor: A, _ block: @Sendable @escaping (isolated A, Change) -> Void)
        -> (Change) -> Void {
        { change in
            nonisolated(unsafe) let change = change // (delivered on the actor, used there)
            actor.assumeIsolated { block($0, change) }
        }
    }

    /// The changes an observer registered by `register` receives, as an AsyncStream that ends
    /// with `ends` (or when the consumer stops: the token is invalidated then).
    static func stream<Change>(_ register: (@escaping (Change) -> Void) -> NotificationToken,
                               ends: @escaping (Change) -> Bool = { _ in false }) -> AsyncStream<Change> {
        AsyncStream { continuation in
            let token = register { change in
                // (consumed where the observer delivers: the Realm's thread, queue or actor)
                nonisolated(unsafe) let delivered = change
                continuation.yield(delivered)
                if ends(change) { continuation.finish() }
            }
            continuation.onTermination = { _ in token.invalidate() }
        }
    }
}

extension Results {
    /// Be told of the results now (`.initial`) and after every version that changes them
    /// (`.update` with deleted, inserted and modified indices). The block runs on this thread
    /// — at once when this thread commits or refreshes, else from its run loop — or on `queue`
    /// (with results of a Realm confined to it). `keyPaths` limits modifications to changes of
    /// those properties (`"name"`, `"dogs.color"`). Keep the token: releasing or invalidating it
    /// stops the notifications.
    public func observe(keyPaths: [String]? = nil, on queue: DispatchQueue? = nil,
                        _ block: @escaping (RealmCollectionChange<Results<Element>>) -> Void) -> NotificationToken {
        let base = self.base
        return Observation.register(base.realm, queue: queue, what: "observe \(description)", onError: { block(.error($0)) }) { home, token in
            ResultsObserver(base: base.rebound(to: home), keyPaths: keyPaths, token: token,
                            make: { Results(base: $0) }, block: block)
        }
    }


    /// The same changes as an asynchronous sequence (registered on this thread: the main actor,
    /// or a thread that runs its run loop).
    public var changeset: AsyncStream<RealmCollectionChange<Results<Element>>> {
        Observation.stream { yield in observe { yield($0) } }
    }
}

extension List {
    /// Be told of the list now (`.initial`) and after every version that changes it: elements
    /// deleted (old indices), inserted and, for objects, modified (new indices). When its
    /// object is deleted, every element is reported deleted. Thread, queue and `keyPaths` as
    /// for `Results.observe`.
    public func observe(keyPaths: [String]? = nil, on queue: DispatchQueue? = nil,
                        _ block: @escaping (RealmCollectionChange<List<Element>>) -> Void) -> NotificationToken {
        observeList(keyPaths: keyPaths, on: queue, block)
    }

    /// The same changes as an asynchronous sequence (registered on this thread).
    public var changeset: AsyncStream<RealmCollectionChange<List<Element>>> {
        Observation.stream { yield in observe { yield($0) } }
    }
}

extension LinkingObjects {
    /// Be told of the linking objects now and after every version that changes them, as
    /// `Results.observe`.
    public func observe(keyPaths: [String]? = nil, on queue: DispatchQueue? = nil,
                        _ block: @escaping (RealmCollectionChange<LinkingObjects<Element>>) -> Void) -> NotificationToken {
        guard let owner else {
            strataTrap("Only linking objects of an object managed by a Realm support change notifications (LinkingObjects<\(Element.className())>).")
        }
        let base = _strataResults!.base
        return Observation.register(base.realm, queue: queue, what: "observe LinkingObjects<\(Element.className())>",
                                    onError: { block(.error($0)) }) { home, token in
            ResultsObserver(base: base.rebound(to: home), keyPaths: keyPaths, token: token,
                            make: { LinkingObjects(results: Results(base: $0), owner: owner) }, block: block)
        }
    }
}

extension _TypedObject where Self: Object {
    /// Be told when properties of this object change (`.change` with each property's old and
    /// new value) or when it is deleted (`.deleted`, then nothing more). No initial call. On
    /// this thread or on `queue` (with the object found again in a Realm confined to it);
    /// `keyPaths` limits it to those properties.
    public func observe(keyPaths: [String]? = nil, on queue: DispatchQueue? = nil,
                        _ block: @escaping (ObjectChange<Self>) -> Void) -> NotificationToken {
        guard let a = __accessor else {
            strataTrap("Only objects which are managed by a Realm support change notifications (\(Self.className())).")
        }
        if a.isInvalidated { strataTrap("Object has been deleted or invalidated (observe \(Self.className())).") }
        let key = a.key
        return Observation.register(a.realm, queue: queue, what: "observe \(Self.className())",
                                    onError: { block(.error($0)) }) { home, token in
            let object = home === a.realm ? self : home.sameObject(Self.self, as: ObjectAccessor(realm: a.realm, info: a.info, key: key))
            return ObjectObserver(object: object, keyPaths: keyPaths, token: token, block: block)
        }
    }

    /// The same, handing the object as `T` (RealmSwift's generic form: a block written for
    /// `ObjectChange<ObjectBase>` serves objects of every class).
    public func observe<T: ObjectBase>(keyPaths: [String]? = nil, on queue: DispatchQueue? = nil,
                                       _ block: @escaping (ObjectChange<T>) -> Void) -> NotificationToken {
        observe(keyPaths: keyPaths, on: queue) { (change: ObjectChange<Self>) in
            switch change {
            case .error(let e): block(.error(e))
            case .deleted: block(.deleted)
            case .change(let o, let properties):
                guard let typed = o as? T else {
                    strataTrap("observe \(Self.className()): the object is not a \(T.self)")
                }
                block(.change(typed, properties))
            }
        }
    }

    /// Calls `block` after each commit that changes the object (only the properties at `keyPaths`, when given), on `queue` or the observing thread's run loop. Keep the token: releasing it stops the notifications.
    public func observe(keyPaths: [PartialKeyPath<Self>], on queue: DispatchQueue? = nil,
                        _ block: @escaping (ObjectChange<Self>) -> Void) -> NotificationToken {
        observe(keyPaths: keyPaths.map { KeyPathNames.name($0) }, on: queue, block)
    }

    /// The same changes as an asynchronous sequence (registered on this thread); it ends when
    /// the object is deleted.
    public var changes: AsyncStream<ObjectChange<Self>> {
        Observation.stream({ yield in observe { yield($0) } },
                           ends: { if case .deleted = $0 { return true } else { return false } })
    }
}

extension Realm {
    /// Be told after every move of this Realm to a newer version (`.didChange`): a write of this
    /// thread committing, `refresh()`, or, when autorefresh is on, another thread's or process's
    /// commit reaching this thread's run loop (with autorefresh off, `.refreshRequired`).
    public func observe(_ block: @escaping NotificationBlock) -> NotificationToken {
        Observation.register(instance, queue: nil, what: "observe Realm", onError: { _ in }) { home, token in
            RealmObserver(realm: home, token: token, block: block)
        }
    }
}
