import Foundation

/// One registered observation: a collection, an object or a whole Realm, with its block.
/// Computing what changed (`prepare`) and calling the block (`deliver`) are two steps, so that
/// every observer of a Realm computes its changes against the same version before any block
/// runs (a block may write, which moves the Realm on).
class NotificationObserver {
    /// Shared with the token; the observer does not keep the token alive.
    let token: ObservationState
    /// The `.initial` delivery is still due.
    var needsInitial = true

    init(token: ObservationState) { self.token = token }

    /// Compute what this observer will be told about the move the context describes (or its
    /// initial state); false when there is nothing to tell.
    func prepare(_ context: ChangeContext?) -> Bool { false }

    /// Call the block with what `prepare` computed.
    func deliver() {}
}

/// The changes between the version observers last saw (`old`) and the one their Realm reads
/// now, table by table, computed when first asked for.
final class ChangeContext {
    let old: CoreTxn
    let realm: RealmInstance
    /// The change is this Realm's own commit: object observers get no old values then, as in
    /// RealmSwift ("not supplied if the change happened on the same thread").
    let local: Bool
    private var tables: [String: TableChanges] = [:]
    /// A frozen Realm on the old version, for old values.
    private var oldRealm: RealmInstance?

    init(old: CoreTxn, realm: RealmInstance, local: Bool) {
        self.old = old
        self.realm = realm
        self.local = local
    }

    func changes(_ info: TableInfo) -> TableChanges {
        if let c = tables[info.tableName] { return c }
        let c: TableChanges
        do {
            c = try realm.currentTxn.changes(since: old, table: info.tableName, cols: info.cols.filter { $0 != 0 })
        } catch {
            // a table the older version does not have yet: every object is new
            let keys = (try? realm.table(info).keys()) ?? []
            c = TableChanges(inserted: Set(keys))
        }
        tables[info.tableName] = c
        return c
    }

    /// Whether anything of `info`'s table changed.
    func touched(_ info: TableInfo) -> Bool { !changes(info).isEmpty }

    /// The keys of the objects that linked to an object in the old version (its linking objects then).
    func oldOwners(_ owners: LinkingOwner) -> [Int64] {
        if oldRealm == nil { oldRealm = RealmInstance(snapshotOf: realm, txn: old) }
        guard let r = oldRealm, (try? r.table(owners.info).exists(owners.key)) == true else { return [] }
        return (try? r.table(owners.info).backlinks(owners.key, origin: r.table(owners.origin), col: owners.originCol)) ?? []
    }

    /// The value property `index` of object `key` had in the old version (nil for lists and
    /// when the object did not exist).
    func oldValue(_ info: TableInfo, key: Int64, index: Int) -> Any? {
        let p = info.properties[index]
        if p.kind.collection != .none { return nil }
        if oldRealm == nil { oldRealm = RealmInstance(snapshotOf: realm, txn: old) }
        guard let r = oldRealm, (try? r.table(info).exists(key)) == true else { return nil }
        let o = info.classInfo.type.init()
        o.__accessor = ObjectAccessor(realm: r, info: r.tableInfo(info.classInfo.type), key: key)
        return info.classInfo.value(of: o, p)
    }
}

/// How observers reach their Realm's thread or queue when another thread or process commits.
enum DeliveryHome {
    /// A thread with a run loop: a timer firing at once on that run loop.
    case runLoop(RunLoop)
    /// The main thread: its dispatch queue (which the main run loop, `dispatchMain()` and the
    /// main actor all serve).
    case main
    /// A serial queue (a Realm confined to it).
    case queue(DispatchQueue)
    /// An actor (a Realm isolated to it): a task that runs on its executor.
    case actor(any Actor)

    func perform(_ body: @escaping @Sendable () -> Void) {
        switch self {
        case .runLoop(let loop):
            let timer = Timer(fire: Date(), interval: 0, repeats: false) { _ in body() }
            loop.add(timer, forMode: .common)
        case .main:
            DispatchQueue.main.async(execute: body)
        case .queue(let q):
            q.async(execute: body)
        case .actor(let a):
            a.strataInvoke(body)
        }
    }
}

/// The observers of one Realm instance (one thread or queue), and their deliveries: after a
/// commit of this Realm, during `refresh()`, and (through the file's commit watcher) when
/// another thread or process commits, from the Realm's run loop or queue.
final class RealmNotifier: @unchecked Sendable {
    private let weakRealm: WeakRealm
    private var realm: RealmInstance? { weakRealm.instance }
    let home: DeliveryHome
    private let lock = NSLock()
    private var observers: [NotificationObserver] = []
    /// A wake-up is on its way to the home (set by the watcher's thread).
    private var wakeScheduled = false
    /// Blocks are running: a move of the Realm meanwhile is delivered after them, from here.
    var isDelivering = false
    var deferredBase: CoreTxn?
    var deferredSkipping: Set<ObjectIdentifier> = []
    var deferredLocal = false

    init(realm: RealmInstance, home: DeliveryHome) {
        weakRealm = WeakRealm(realm)
        self.home = home
    }

    var hasObservers: Bool {
        lock.lock()
        defer { lock.unlock() }
        return !observers.isEmpty
    }

    func add(_ o: NotificationObserver) {
        lock.lock()
        observers.append(o)
        lock.unlock()
        o.token.onInvalidate { [weak self, weak o] in
            guard let self, let o else { return }
            self.lock.lock()
            self.observers.removeAll { $0 === o }
            self.lock.unlock()
        }
        realm?.shared.watcher.add(self)
        scheduleWake() // the initial delivery
    }

    private var current: [NotificationObserver] {
        lock.lock()
        defer { lock.unlock() }
        return observers
    }

    /// A commit happened somewhere (the watcher's thread): wake the home once.
    func commitSeen() { scheduleWake(unlessIdle: true) }

    /// Wake the home (once: a wake-up already on its way covers this one).
    private func scheduleWake(unlessIdle: Bool = false) {
        lock.lock()
        if wakeScheduled || (unlessIdle && observers.isEmpty) {
            lock.unlock()
            return
        }
        wakeScheduled = true
        lock.unlock()
        home.perform { [weak self] in
            guard let self else { return }
            self.lock.lock()
            self.wakeScheduled = false
            self.lock.unlock()
            self.realm?.wokenForNotifications()
        }
    }

    /// Deliver the initial notifications still due (the Realm has not moved).
    func deliverInitials() {
        let due = current.filter { $0.needsInitial && !$0.token.isInvalidated }
        if due.isEmpty || isDelivering { return }
        run(due.filter { $0.prepare(nil) })
    }

    /// The Realm moved from `old` to the version it reads now: tell every observer what changed
    /// (those of `skipping` only update what they know).
    func moved(from old: CoreTxn, realm: RealmInstance, skipping: Set<ObjectIdentifier>, local: Bool = false) {
        if isDelivering {
            if deferredBase == nil {
                deferredBase = old
                deferredSkipping = skipping
                deferredLocal = local
            } else {
                deferredLocal = deferredLocal && local
            }
            return
        }
        var base = old
        var skip = skipping
        var isLocal = local
        while true {
            let context = ChangeContext(old: base, realm: realm, local: isLocal)
            let ready = current.filter { o in
                if o.token.isInvalidated { return false }
                return o.prepare(o.needsInitial ? nil : context) && !skip.contains(ObjectIdentifier(o.token))
            }
            run(ready)
            guard let next = deferredBase else { break }
            deferredBase = nil
            base = next
            skip = deferredSkipping
            isLocal = deferredLocal
        }
    }

    /// A newer version exists and the Realm does not refresh by itself: tell Realm observers.
    func refreshRequired(realm: RealmInstance) {
        let ready = current.compactMap { $0 as? RealmObserver }.filter { !$0.token.isInvalidated }
        for o in ready { o.prepareRefreshRequired() }
        run(ready)
    }

    private func run(_ ready: [NotificationObserver]) {
        isDelivering = true
        defer { isDelivering = false }
        for o in ready where !o.token.isInvalidated {
            o.needsInitial = false
            o.deliver()
        }
    }
}
