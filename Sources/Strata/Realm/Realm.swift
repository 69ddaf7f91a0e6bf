import CCore
import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The state behind a `Realm`: one file seen from one thread through one snapshot. There is one
/// per configuration and thread while something uses it (`Realm(configuration:)` finds it).
final class RealmInstance {
    let configuration: Realm.Configuration
    let shared: SharedFile
    let classes: [ClassInfo]
    private let owner: pthread_t
    /// Set for a Realm confined to a serial queue: it is used on that queue, whatever thread
    /// runs it (`Realm(configuration:queue:)`, `observe(on:)`).
    let queue: DispatchQueue?
    private let queueMark: QueueMark?
    /// Opened on the main thread or main queue (main-actor code): used there, whichever thread
    /// drains the main queue (on Linux it may be another than the first, and change).
    let isMain: Bool
    /// Set for a Realm isolated to an actor (`Realm.open()` inside the actor, `Realm(actor:)`): it
    /// is used on the actor's executor, whatever thread runs it.
    let actor: (any Actor)?
    /// For a frozen Realm (`freeze()`, old values of change notifications): its transactions, one
    /// version read from any thread. A frozen Realm never moves and never writes.
    let frozen: FrozenReads?
    var isFrozen: Bool { frozen != nil }
    /// The snapshot read (a read transaction), or the write transaction during a write.
    private var txn: CoreTxn
    /// During a write with observers: the snapshot read before it (what they last saw).
    private var readBeforeWrite: CoreTxn?
    /// The observers of this Realm and their deliveries (made by the first observer).
    private(set) var notifier: RealmNotifier?
    /// Table handles of `txn`, by their TableInfo's ordinal.
    private let tableHandles: TableHandleSlots
    /// The tables of this Realm's classes.
    /// (A short list: looked up on every `object(ofType:forPrimaryKey:)` and results read; a scan
    /// of a few identifiers costs less than hashing. Never changes: frozen Realms read it from
    /// any thread.)
    let infos: [(type: ObjectIdentifier, info: TableInfo)]
    /// The first failure inside the current write: it is thrown by `write`/`commitWrite`, which
    /// then roll the write back (RealmSwift's `add`, setters and `delete` cannot throw).
    private var writeError: Error?
    private(set) var isInvalidated = false
    /// Itself, during a write of a main-thread or queue Realm: a write begun through a `Realm`
    /// value nobody keeps (`try Realm().beginWrite()`) goes on in the next `Realm()`, as
    /// RealmSwift's does, until it is committed or cancelled. A thread's Realm is kept by the
    /// thread instead (`WriteHolds`): when the thread ends with the write open, the Realm goes
    /// and its write is rolled back, releasing the writer lock.
    private var selfDuringWrite: RealmInstance?

    private func holdDuringWrite(_ on: Bool) {
        if queue == nil && !isMain && actor == nil {
            WriteHolds.hold(self, on)
        } else {
            selfDuringWrite = on ? self : nil
        }
    }
    /// Moves with every change a write makes (results re-read their keys when it moved).
    var mutationCount: UInt64 = 0
    /// Per table (by ordinal): the property of each @Persisted storage key path seen
    /// (Persisted.propertyIndex).
    private let keyPathIndexes: KeyPathIndexCache
    /// The update policies of the adds in progress (an add adds the objects it links to).
    var addPolicy: [Realm.UpdatePolicy] = []
    /// Depth of `add(_:update: .modified)` calls updating an existing object (embedded objects
    /// are then updated in place).
    var updatingExisting = 0

    var autorefresh = true
    /// `asyncWrite` calls of this Realm in progress (waiting or writing).
    var asyncWriters = 0
    /// The queued `beginAsyncWrite` blocks and commit completions.
    let asyncWrites = AsyncWriteQueue()
    /// Where the caches of open Realms find this one without a weak reference (RealmSlot).
    let slot = RealmSlot()

    init(opening configuration: Realm.Configuration, queue: DispatchQueue? = nil, actor: (any Actor)? = nil) throws {
        self.configuration = configuration
        owner = pthread_self()
        self.queue = queue
        queueMark = queue.map(QueueMark.of)
        self.actor = actor
        isMain = queue == nil && actor == nil && QueueMark.onMain
        frozen = nil
        let types = try configuration.objectTypes.map(RealmInstance.modelClasses) ?? ClassDiscovery.allObjectClasses()
        let infos = try RealmInstance.checkedClasses(types)
        classes = infos
        shared = try SharedFile.open(configuration)
        try shared.prepare(infos, config: configuration)
        let file = shared
        let tables = infos.compactMap { c in file.table(for: c.type).map { (type: ObjectIdentifier(c.type), info: $0) } }
        self.infos = tables
        keyPathIndexes = RealmInstance.keyPathCache(for: tables.map(\.info))
        tableHandles = TableHandleSlots(count: RealmInstance.ordinals(tables.map(\.info)))
        txn = try CoreTxn(db: shared.db, write: false)
        slot.fill(self)
    }

    /// Open `configuration`'s file and set its schema up (creating, migrating, compacting) —
    /// the slow part of opening, done by `Realm.open` off the caller's actor. The file stays open
    /// while the result is kept.
    static func prepareFile(_ configuration: Realm.Configuration) throws -> SharedFile {
        let types = try configuration.objectTypes.map(RealmInstance.modelClasses) ?? ClassDiscovery.allObjectClasses()
        let infos = try RealmInstance.checkedClasses(types)
        let file = try SharedFile.open(configuration)
        try file.prepare(infos, config: configuration)
        return file
    }

    /// A frozen Realm reading `txn` (a read transaction of `base`'s file) from the calling
    /// thread, and clones of it from others.
    init(snapshotOf base: RealmInstance, txn: CoreTxn) {
        configuration = base.configuration
        shared = base.shared
        classes = base.classes
        infos = base.infos
        owner = pthread_self()
        queue = nil
        queueMark = nil
        actor = nil
        isMain = false
        frozen = FrozenReads(anchor: txn)
        keyPathIndexes = RealmInstance.keyPathCache(for: infos.map(\.info))
        tableHandles = TableHandleSlots(count: 0) // a frozen Realm's are per thread (FrozenReads)
        self.txn = txn
        slot.fill(self)
    }

    /// How many table ordinals the classes of `infos` span.
    private static func ordinals(_ infos: [TableInfo]) -> Int {
        (infos.map(\.ordinal).max() ?? -1) + 1
    }

    private static func keyPathCache(for infos: [TableInfo]) -> KeyPathIndexCache {
        KeyPathIndexCache(tables: ordinals(infos),
                          properties: infos.map(\.properties.count).max() ?? 0)
    }

    /// How many objects and Realm values hold this Realm (`Object.__holds`, `RealmBox`); while
    /// there are any, one retain of it stands for them all: the first hold retains, the last
    /// drop releases. Whoever adds the first hold holds the Realm already, so a release of the
    /// last drop racing with it on another thread never frees it.
    private let holdCount: UnsafeMutablePointer<Int> = {
        let p = UnsafeMutablePointer<Int>.allocate(capacity: 1)
        p.initialize(to: 0)
        return p
    }()

    func addHold() {
        if strata_swift_atomic_add(holdCount, 1) == 0 { _ = Unmanaged.passUnretained(self).retain() }
    }

    func dropHold() {
        if strata_swift_atomic_add(holdCount, -1) == 1 { Unmanaged.passUnretained(self).release() }
    }

    deinit {
        slot.empty()
        holdCount.deallocate()
        for q in compiledQueries.values { strata_query_free(q) }
        if !isFrozen { txn.free() } // a frozen Realm's transactions free themselves when unused
        tableHandles.free()
    }

    /// The transaction this Realm reads (or writes) in now (a frozen Realm: the calling
    /// thread's).
    var currentTxn: CoreTxn { frozen?.reader().txn ?? txn }

    /// Queries compiled by this Realm, by table and text (a compiled query runs in any later
    /// transaction; the core checks its properties' types each run). Bounded: cleared when full.
    private var compiledQueries: [CompiledQueryKey: OpaquePointer] = [:]
    private struct CompiledQueryKey: Hashable {
        let table: String
        let text: String
    }
    /// Raised whenever compiled queries are freed (the cache cleared): a query kept elsewhere
    /// (`ResultsBase`) with an older generation is gone.
    private(set) var compiledQueriesGeneration = 0

    func compiledQuery(table: String, text: String) throws -> OpaquePointer {
        if let f = frozen {
            f.cacheLock.lock()
            defer { f.cacheLock.unlock() }
            return try compiledQueryUnlocked(table: table, text: text)
        }
        return try compiledQueryUnlocked(table: table, text: text)
    }

    /// The query asked for last, compared before the table is hashed: code runs one query
    /// again and again, and its text is then the same string (equal at its first word).
    private var lastCompiled: (key: CompiledQueryKey, query: OpaquePointer)?

    private func compiledQueryUnlocked(table: String, text: String) throws -> OpaquePointer {
        let key = CompiledQueryKey(table: table, text: text)
        if let last = lastCompiled, last.key == key { return last.query }
        if let q = compiledQueries[key] {
            lastCompiled = (key, q)
            return q
        }
        if compiledQueries.count >= 256 {
            for q in compiledQueries.values { strata_query_free(q) }
            compiledQueries.removeAll()
            lastCompiled = nil
            compiledQueriesGeneration += 1
        }
        var q: OpaquePointer?
        let names = shared.nameMap
        try withExtendedLifetime(names) {
            try StrataError.check { strata_query_compile_mapped(currentTxn.handle, table, text, names?.handle, &q, $0) }
        }
        compiledQueries[key] = q!
        lastCompiled = (key, q!)
        return q!
    }

    /// The model classes of a configuration's `objectTypes`: each must derive from `Object`.
    private static func modelClasses(_ types: [ObjectBase.Type]) throws -> [Object.Type] {
        try types.map { t in
            guard let model = t as? Object.Type else {
                throw StrataError(code: .invalidArgument, message: "objectTypes: '\(String(reflecting: t))' is not a "
                    + "subclass of Object, so it cannot be a class of a Realm")
            }
            return model
        }
    }

    private static func checkedClasses(_ types: [Object.Type]) throws -> [ClassInfo] {
        var byName: [String: Object.Type] = [:]
        var infos: [ClassInfo] = []
        for t in types {
            let name = t.className()
            if let other = byName[name] {
                if other == t { continue }
                throw StrataError(code: .invalidArgument, message: "two model classes are named '\(name)' "
                    + "(\(String(reflecting: other)) and \(String(reflecting: t))): name the one this Realm "
                    + "uses in its configuration's objectTypes")
            }
            byName[name] = t
            let info = ClassInfo.of(t)
            if let pk = t.primaryKey(), info.property(named: pk) == nil {
                throw StrataError(code: .invalidArgument, message: "Primary key property '\(pk)' does not exist on object '\(name)'")
            }
            for p in t.indexedProperties() where info.property(named: p) == nil {
                throw StrataError(code: .invalidArgument, message: "Indexed property '\(p)' does not exist on object '\(name)'")
            }
            try checkColumnNames(info)
            infos.append(info)
        }
        return infos
    }

    /// `propertiesMapping()` names properties of the class, and no two properties share a column.
    private static func checkColumnNames(_ info: ClassInfo) throws {
        for p in info.type.propertiesMapping().keys.sorted() where info.property(named: p) == nil {
            throw StrataError(code: .invalidArgument, message: "propertiesMapping() of '\(info.name)' names property "
                + "'\(p)', which '\(info.name)' does not have")
        }
        var byColumn: [String: String] = [:]
        for p in info.properties where p.kind.collection != .linkingObjects {
            if let other = byColumn[p.columnName] {
                throw StrataError(code: .invalidArgument, message: "'\(info.name).\(other)' and '\(info.name).\(p.name)' "
                    + "are both stored as column '\(p.columnName)' (propertiesMapping())")
            }
            byColumn[p.columnName] = p.name
        }
    }

    @inline(__always)
    func cachedPropertyIndex(_ info: TableInfo, _ keyPath: ObjectIdentifier,
                             _ what: @autoclosure () -> String) -> Int? {
        checkThread(what()) // before touching this thread's cache
        if let f = frozen {
            f.cacheLock.lock()
            defer { f.cacheLock.unlock() }
            return keyPathIndexes.index(table: info.ordinal, keyPath: keyPath)
        }
        return keyPathIndexes.index(table: info.ordinal, keyPath: keyPath)
    }

    func cachePropertyIndex(_ info: TableInfo, _ keyPath: ObjectIdentifier, _ index: Int) {
        frozen?.cacheLock.lock()
        defer { frozen?.cacheLock.unlock() }
        keyPathIndexes.insert(table: info.ordinal, keyPath: keyPath, index: index)
    }

    // MARK: threads

    /// Trap unless this is the Realm's thread (or queue) and the Realm is valid. Inlined: every
    /// property access asks, and the common case (the thread that opened it) is a comparison.
    @inline(__always)
    func checkThread(_ what: @autoclosure () -> String = "Realm") {
        if queueMark == nil && actor == nil && !isInvalidated && pthread_equal(owner, pthread_self()) != 0 { return }
        checkThreadOtherwise(what)
    }

    @inline(never)
    private func checkThreadOtherwise(_ what: () -> String) {
        // The common case first: the thread that opened it (a main Realm is usually used on the
        // thread that opened it too; asking whether a thread is the main one costs two system
        // calls on Linux).
        if let actor {
            // traps off the actor, naming it ("Incorrect actor executor assumption; expected
            // 'Module.Store' executor": the runtime's message)
            actor.preconditionIsolated("Realm accessed from incorrect actor (\(what())): this Realm is isolated to "
                                       + "\(type(of: actor)) and its objects are used on it only")
        } else if queueMark == nil && pthread_equal(owner, pthread_self()) != 0 {
            // its thread
        } else if frozen != nil {
            // any thread: each reads through its own transaction of the frozen version
        } else if let mark = queueMark {
            if DispatchQueue.getSpecific(key: QueueMark.key) !== mark {
                strataTrap("Realm accessed from incorrect thread (\(what())): this Realm is confined to "
                           + "the queue '\(queue?.label ?? "")' and its objects are used on it only")
            }
        } else if isMain {
            if !QueueMark.onMain {
                strataTrap("Realm accessed from incorrect thread (\(what())): this Realm was opened on the main "
                           + "thread or main actor and its objects are used there only")
            }
        } else {
            strataTrap("Realm accessed from incorrect thread (\(what())): a Realm and its objects "
                       + "belong to the thread that opened them")
        }
        if isInvalidated { strataTrap("Realm at '\(configuration.path)' was invalidated (\(what()))") }
    }

    // MARK: snapshots and writes

    var isInWriteTransaction: Bool { txn.isWrite }

    /// The table handle of `info` in the current transaction.
    func table(_ info: TableInfo) -> CoreTable {
        if let f = frozen {
            let r = f.reader()
            if info.ordinal < r.tables.count, let t = r.tables[info.ordinal] { return t }
            let t = open(info, in: r.txn)
            while r.tables.count <= info.ordinal { r.tables.append(nil) }
            r.tables[info.ordinal] = t
            return t
        }
        if let t = tableHandles[info.ordinal] { return t }
        let t = open(info, in: txn)
        tableHandles.keep(t, at: info.ordinal)
        return t
    }

    /// Open the table of `info` in `txn`.
    private func open(_ info: TableInfo, in txn: CoreTxn) -> CoreTable {
        do {
            guard let t = try txn.table(info.tableName) else {
                strataTrap("table '\(info.tableName)' is missing from '\(configuration.path)'")
            }
            return t
        } catch {
            strataTrap("cannot open table '\(info.tableName)': \(error)")
        }
    }

    /// Whether `info` is this Realm's own (it lives as long as the Realm).
    func owns(_ info: TableInfo) -> Bool { infos.contains { $0.info === info } }

    /// The table of the class named `name` (DynamicObject), or a trap naming it.
    func tableInfo(named name: String) -> TableInfo {
        for e in infos where e.info.name == name { return e.info }
        strataTrap("Object type '\(name)' is not managed by this Realm (not in its objectTypes)")
    }

    func tableInfo(_ type: Object.Type) -> TableInfo {
        let id = ObjectIdentifier(type)
        for e in infos where e.type == id { return e.info }
        strataTrap("Object type '\(type.className())' is not managed by this Realm (not in its objectTypes)")
    }

    private func switchTo(_ next: CoreTxn) {
        txn.free()
        txn = next
        tableHandles.clear()
    }

    /// Start a write: waits while another thread or process writes, then moves this Realm to
    /// the latest version.
    /// Begin a write (`wait` false: only when no other writer holds the file; false then).
    @discardableResult
    func beginWrite(wait: Bool = true) throws -> Bool {
        checkThread("beginWrite")
        if txn.isWrite { throw StrataError(code: .transactionState, message: "the Realm is already in a write transaction") }
        if configuration.readOnly {
            throw StrataError(code: .readOnly, message: "'\(configuration.path)' is opened read-only: cannot write")
        }
        if isFrozen { throw StrataError(code: .readOnly, message: "a frozen Realm cannot write") }
        notifier?.deliverInitials()
        guard let w = try CoreTxn(writeOn: shared.db, wait: wait) else { return false }
        writeThread = pthread_self()
        if notifier?.hasObservers == true {
            readBeforeWrite = txn // what observers last saw: the commit is told against it
            txn = w
            tableHandles.clear()
        } else {
            switchTo(w)
        }
        writeError = nil
        holdDuringWrite(true)
        return true
    }

    /// The thread a write began on: the core's writer lock belongs to it, so the write must end
    /// there (an actor's or queue's Realm: in the same job, before the actor suspends).
    private var writeThread: pthread_t?

    private func checkWriteThread(_ what: String) {
        guard let t = writeThread, pthread_equal(t, pthread_self()) == 0 else { return }
        strataTrap("\(what) on another thread than the write began on: a write of a Realm isolated to an actor or "
                   + "confined to a queue must end in the job that began it (no `await` between beginWrite and "
                   + "commitWrite; use asyncWrite)")
    }

    /// A write of this Realm ended: async writers waiting for the file may go.
    private func writeEnded() {
        writeThread = nil
        shared.writeTurns.released()
        asyncWrites.writeEnded(self)
    }

    /// Commit the write; throws (and rolls the write back) when it failed, naming why.
    /// `unsynced`: visible now, durable after the file's next log sync (group commit).
    func commitWrite(withoutNotifying tokens: [NotificationToken] = [], unsynced: Bool = false) throws {
        checkThread("commitWrite")
        guard txn.isWrite else {
            throw StrataError(code: .transactionState, message: "commitWrite outside a write transaction")
        }
        if let e = writeError {
            cancelWrite()
            throw e
        }
        checkWriteThread("commitWrite")
        defer { holdDuringWrite(false) }
        defer { writeEnded() }
        do {
            try txn.commit(unsynced: unsynced)
        } catch {
            tableHandles.clear()
            txn = try CoreTxn(db: shared.db, write: false)
            tellObservers(skipping: [])
            throw error
        }
        tableHandles.clear()
        txn = try CoreTxn(db: shared.db, write: false)
        tellObservers(skipping: Set(tokens.map { ObjectIdentifier($0.state) }), local: true)
    }

    /// After a write ended: the observers learn what changed since the snapshot they last saw.
    /// `local`: the write committed (its changes are this Realm's own).
    private func tellObservers(skipping: Set<ObjectIdentifier>, local: Bool = false) {
        guard let before = readBeforeWrite else { return }
        readBeforeWrite = nil
        if let n = notifier { n.moved(from: before, realm: self, skipping: skipping, local: local) }
    }

    /// Undo everything since `beginWrite`. Objects added in it become invalid.
    func cancelWrite() {
        checkThread("cancelWrite")
        guard txn.isWrite else { return }
        checkWriteThread("cancelWrite")
        writeError = nil
        defer { holdDuringWrite(false) }
        defer { writeEnded() }
        do {
            switchTo(try CoreTxn(db: shared.db, write: false))
        } catch {
            strataTrap("cannot read '\(configuration.path)' after cancelling a write: \(error)")
        }
        tellObservers(skipping: []) // commits of others that the write began on
    }

    /// Run `block` in a write and commit it; a block that throws rolls the write back and the
    /// error is rethrown. Returns what the block returns.
    func write<Result>(withoutNotifying tokens: [NotificationToken] = [],
                       _ block: () throws -> Result) throws -> Result {
        try beginWrite()
        let result: Result
        do {
            result = try block()
        } catch {
            if isInWriteTransaction { cancelWrite() }
            throw error
        }
        if isInWriteTransaction { try commitWrite(withoutNotifying: tokens) }
        return result
    }

    /// Move to the latest version (outside a write). Returns whether there was a newer one.
    func refresh() -> Bool {
        checkThread("refresh")
        if txn.isWrite || isFrozen { return false }
        let before = txn.version
        if let n = notifier, n.hasObservers {
            n.deliverInitials()
            guard let next = try? CoreTxn(db: shared.db, write: false), next.version != before else { return false }
            let old = txn
            txn = next
            tableHandles.clear()
            n.moved(from: old, realm: self, skipping: [])
            return true
        }
        do {
            try txn.refresh()
        } catch {
            do { switchTo(try CoreTxn(db: shared.db, write: false)) } catch {
                strataTrap("cannot read '\(configuration.path)': \(error)")
            }
        }
        tableHandles.clear()
        return txn.version != before
    }

    /// The notifier, made with the first observer: its home is this Realm's queue, or the run
    /// loop of its thread (the main queue on the main thread).
    func notifications() -> RealmNotifier {
        if let n = notifier { return n }
        let home: DeliveryHome
        if let q = queue { home = .queue(q) } else if let a = actor { home = .actor(a) } else if isMain { home = .main } else {
            home = .runLoop(RunLoop.current)
        }
        let n = RealmNotifier(realm: self, home: home)
        notifier = n
        return n
    }

    /// The home's run loop or queue turned after a commit somewhere (or a new observer):
    /// deliver what is due, refreshing when the Realm refreshes by itself.
    func wokenForNotifications() {
        if isInvalidated || isFrozen { return }
        guard let n = notifier else { return }
        n.deliverInitials()
        if txn.isWrite { return } // told when the write ends
        if autorefresh || queue != nil {
            _ = refresh()
        } else if shared.db.latestVersion != txn.version {
            n.refreshRequired(realm: self)
        }
    }

    /// The version this Realm reads (or, writing, will commit).
    var version: UInt64 { txn.version }
    /// The core's transaction this Realm reads (or writes) in now: for queries.
    var coreTxnHandle: OpaquePointer { currentTxn.handle }

    /// Record a failure inside a write (thrown by the commit); outside a write it traps.
    func fail(_ error: Error, _ what: @autoclosure () -> String) {
        guard txn.isWrite else { strataTrap("\(what()): \(error)") }
        if writeError == nil { writeError = error }
    }

    /// Inside a write, or trap naming what was changed.
    func requireWrite(_ what: @autoclosure () -> String) {
        if isFrozen {
            strataTrap("Attempting to modify a frozen object - call thaw on the Object instance first (\(what())).")
        }
        if !txn.isWrite {
            strataTrap("Cannot modify managed objects outside of a write transaction (\(what())).")
        }
    }

    // MARK: schema

    /// The classes of this Realm.
    var schema: Schema { Schema(objectSchema: classes.map { $0.schema }) }

    /// True when the Realm holds no objects of its classes.
    var isEmpty: Bool {
        checkThread("isEmpty")
        return classes.allSatisfy { c in (try? table(tableInfo(c.type)).count()) == 0 }
    }

    /// Stop using this Realm: its objects become invalid.
    func invalidate() {
        checkThread("invalidate")
        if txn.isWrite { cancelWrite() }
        isInvalidated = true
    }
}

/// The mark a Realm puts on its serial queue (`DispatchQueue.setSpecific`): code runs on the
/// queue when `getSpecific` finds it.
final class QueueMark: @unchecked Sendable {
    static let key = DispatchSpecificKey<QueueMark>()
    private static let lock = NSLock()

    /// Whether code runs on the main thread or the main queue (the main actor's executor): on
    /// Linux a thread other than the process's first may drain the main queue.
    static var onMain: Bool {
        _ = mainMarked
        return DispatchQueue.getSpecific(key: mainKey) != nil || Thread.isMainThread
    }
    private static let mainKey = DispatchSpecificKey<Bool>()
    private static let mainMarked: Void = DispatchQueue.main.setSpecific(key: mainKey, value: true)

    static func of(_ queue: DispatchQueue) -> QueueMark {
        lock.lock()
        defer { lock.unlock() }
        if let m = queue.getSpecific(key: key) { return m }
        let m = QueueMark()
        queue.setSpecific(key: key, value: m)
        return m
    }
}

/// A Realm: one file (or in-memory store) seen from one thread, through one snapshot that moves
/// forward when the Realm writes or refreshes.
///
/// ```swift
/// let realm = try Realm(configuration: .init(fileURL: url, schemaVersion: 1))
/// try realm.write {
///     realm.add(person)                    // adds the company and the dogs too
/// }
/// let people = realm.objects(Person.self)
/// ```
///
/// A Realm and its objects belong to the thread that opened it; using them from another thread
/// traps. `Realm(configuration:)` on one thread returns the same Realm while it is in use there,
/// so a write begun through one value is the write of every other.
public struct Realm {
    /// The Realm this value uses: in a box, so that `invalidate()` can hand this value (and its
    /// copies) a fresh one of the same configuration while the objects read before stay
    /// invalidated.
    private let box: RealmBox
    var instance: RealmInstance { box.instance }

    /// `body` with the instance borrowed, not retained (point reads and adds: retaining a
    /// RealmInstance takes the runtime's slow path, as the caches' weak references give it a
    /// side table). The box holds it during `body`: replacing it (`invalidate()`) is a call
    /// on this Realm's thread, which `body` does not make.
    @inline(__always)
    func borrowingInstance<R>(_ body: (RealmInstance) -> R) -> R {
        Unmanaged.passUnretained(box.instance)._withUnsafeGuaranteedRef(body)
    }

    init(_ instance: RealmInstance) { box = RealmBox(instance) }

    /// The Realm of the default configuration on this thread (or confined to `queue`).
    public init(queue: DispatchQueue? = nil) throws {
        try self.init(configuration: .defaultConfiguration, queue: queue)
    }

    /// The Realm of `configuration` on this thread: the one this thread already has open, or a
    /// new one. Throws when the file cannot be opened or its schema does not fit the classes
    /// without a migration the configuration allows.
    ///
    /// With a serial `queue`: the Realm confined to it, used from blocks run on that queue
    /// (whatever thread runs them), where it refreshes by itself when others commit.
    public init(configuration: Configuration, queue: DispatchQueue? = nil) throws {
        do {
            if let queue {
                box = RealmBox(try RealmCache.instance(for: configuration, queue: queue))
            } else {
                box = RealmBox(try RealmCache.instance(for: configuration))
            }
        } catch let e as StrataError {
            throw StrataError.opening(e, path: configuration.path)
        }
    }

    /// The Realm of the file at `fileURL`, with the default configuration's other settings.
    public init(fileURL: URL) throws {
        var configuration = Configuration.defaultConfiguration
        configuration.fileURL = fileURL
        try self.init(configuration: configuration)
    }

    /// The configuration the Realm was opened with.
    public var configuration: Configuration { instance.configuration }

    /// When on (the default), a Realm whose thread runs its run loop (or whose queue runs)
    /// moves to the latest version by itself when another thread or process commits, once it
    /// observes something; it always moves when it writes or `refresh()` is called.
    public var autorefresh: Bool {
        get { instance.autorefresh }
        nonmutating set { instance.autorefresh = newValue }
    }

    /// True between `beginWrite` and `commitWrite`/`cancelWrite`.
    public var isInWriteTransaction: Bool { instance.isInWriteTransaction }

    /// Start a write: waits while another thread or process writes, then moves this Realm to
    /// the latest version. Beginning a write inside a write, in a read-only or frozen Realm, or
    /// when the file cannot be written is a programmer error and traps naming why (RealmSwift
    /// raises an exception there; its `beginWrite` does not throw).
    public func beginWrite() {
        do { try instance.beginWrite() } catch { strataTrap("Cannot begin a write transaction: \(error)") }
    }

    /// Commit the write; throws (and rolls the write back) when something in it failed — a
    /// duplicate primary key, a value too large, a full disk — naming what. The observers of
    /// `tokens` are not told of this write.
    public func commitWrite(withoutNotifying tokens: [NotificationToken] = []) throws {
        try instance.commitWrite(withoutNotifying: tokens)
    }

    /// Undo everything since `beginWrite`. Objects added in it become invalid. Outside a write
    /// it is a programmer error and traps (RealmSwift raises there).
    public func cancelWrite() {
        if !instance.isInWriteTransaction { strataTrap("Can't cancel a non-existent write transaction") }
        instance.cancelWrite()
    }

    /// Run `block` in a write and commit it; a block that throws rolls the write back and the
    /// error is rethrown. Returns what the block returns.
    @discardableResult
    public func write<Result>(withoutNotifying tokens: [NotificationToken] = [],
                              _ block: () throws -> Result) throws -> Result {
        try instance.write(withoutNotifying: tokens, block)
    }

    /// Move to the latest version (outside a write). Returns whether there was a newer one.
    @discardableResult
    public func refresh() -> Bool { instance.refresh() }

    /// The classes of this Realm.
    public var schema: Schema { instance.schema }

    /// True when the Realm holds no objects of its classes.
    public var isEmpty: Bool { instance.isEmpty }

    /// Let go of the version this Realm reads (a write in progress is cancelled): the objects,
    /// results and lists read so far become invalid; the Realm reads the latest version again
    /// at its next use, as RealmSwift's does.
    public func invalidate() {
        let old = instance
        old.invalidate()
        if old.isFrozen { return }
        do {
            box.instance = try old.queue.map { try RealmCache.instance(for: old.configuration, queue: $0) }
                ?? RealmCache.instance(for: old.configuration)
        } catch {
            strataTrap("cannot read '\(old.configuration.path)' again after invalidate(): \(error)")
        }
    }
}

extension Realm: Equatable {
    /// Same file, same thread.
    public static func == (a: Realm, b: Realm) -> Bool {
        a.instance === b.instance
    }
}

/// The Realms of a thread that are in a write, kept by the thread (a thread-local slot whose
/// destructor runs when the thread exits: the Realms go then, rolling their writes back).
enum WriteHolds {
    private final class Held { var realms: [ObjectIdentifier: RealmInstance] = [:] }

    private static let key: pthread_key_t = {
        var k = pthread_key_t()
        pthread_key_create(&k) { p in
            if let p { Unmanaged<Held>.fromOpaque(p).release() }
        }
        return k
    }()

    static func hold(_ realm: RealmInstance, _ on: Bool) {
        let held: Held
        if let p = pthread_getspecific(key) {
            held = Unmanaged<Held>.fromOpaque(p).takeUnretainedValue()
        } else {
            guard on else { return }
            held = Held()
            pthread_setspecific(key, Unmanaged.passRetained(held).toOpaque())
        }
        held.realms[ObjectIdentifier(realm)] = on ? realm : nil
    }
}

/// A Realm value's RealmInstance (Realm.invalidate replaces it). It holds one of the instance's
/// holds too: while code keeps a Realm, reading objects one at a time does not take the
/// instance's first hold (a retain on the runtime's slow path: RealmInstance.holdCount) and
/// drop its last with each object.
final class RealmBox: @unchecked Sendable {
    var instance: RealmInstance {
        didSet {
            instance.addHold()
            oldValue.dropHold()
        }
    }

    init(_ instance: RealmInstance) {
        self.instance = instance
        instance.addHold()
    }

    deinit { instance.dropHold() }
}

/// The Realms open on each thread, by configuration (weakly held: a Realm lives while it or one
/// of its objects is used).
enum RealmCache {
    private final class Box { var realms: [String: WeakInstance] = [:] }
    private typealias WeakInstance = WeakRealm
    private static let key = "strata.realm.cache"

    private static let queueLock = NSLock()
    nonisolated(unsafe) private static var queueRealms: [String: WeakInstance] = [:]

    nonisolated(unsafe) private static var mainRealms: [String: WeakInstance] = [:]

    /// The Realm of `config` of the main thread / main queue (whichever thread runs it).
    private static func mainInstance(for config: Realm.Configuration) throws -> RealmInstance {
        let key = config.storeKey + "|" + (config.readOnly ? "ro" : "rw")
        queueLock.lock()
        defer { queueLock.unlock() }
        mainRealms = mainRealms.filter { $0.value.instance != nil }
        if let r = mainRealms[key]?.instance, try reuse(r, for: config) { return r }
        try refuseOtherReadOnly(mainRealms[config.storeKey + "|" + (config.readOnly ? "rw" : "ro")]?.instance, config)
        let r = try RealmInstance(opening: config)
        mainRealms[key] = WeakInstance(r)
        return r
    }

    /// Whether the open Realm r serves `config` (same classes); an error when its schema version
    /// differs.
    private static func reuse(_ r: RealmInstance, for config: Realm.Configuration) throws -> Bool {
        if r.isInvalidated { return false } // invalidate(): a new one takes its place
        try refuseOtherKey(r, config)
        if r.configuration.schemaVersion != config.schemaVersion {
            throw StrataError(code: .invalidArgument, message: "'\(config.path)' is already open with "
                + "schema version \(r.configuration.schemaVersion), not \(config.schemaVersion)")
        }
        let wanted = (config.objectTypes ?? []).map(ObjectIdentifier.init)
        let have = r.classes.map { ObjectIdentifier($0.type) }
        return config.objectTypes == nil || Set(wanted) == Set(have)
    }

    /// A file is open with one encryption key at a time (RealmSwift's wording).
    static func refuseOtherKey(_ r: RealmInstance, _ config: Realm.Configuration) throws {
        if config.inMemoryIdentifier == nil, r.configuration.encryptionKey != config.encryptionKey {
            throw StrataError(code: .invalidArgument, message: "Realm at path '\(config.path)' already "
                              + "opened with different encryption key")
        }
    }

    /// A thread sees a file one way: read-only or not (RealmSwift refuses the other too).
    private static func refuseOtherReadOnly(_ open: RealmInstance?, _ config: Realm.Configuration) throws {
        guard let open, !open.isInvalidated else { return }
        throw StrataError(code: .invalidArgument, message: "Realm has different readOnly settings: '\(config.path)' "
            + "is already open \(config.readOnly ? "for writing" : "read-only") on this thread")
    }

    /// The Realm of `config` confined to `queue` (one per queue and configuration).
    static func instance(for config: Realm.Configuration, queue: DispatchQueue) throws -> RealmInstance {
        let mark = QueueMark.of(queue)
        let key = "\(ObjectIdentifier(mark))|" + config.storeKey + "|" + (config.readOnly ? "ro" : "rw")
        queueLock.lock()
        defer { queueLock.unlock() }
        queueRealms = queueRealms.filter { $0.value.instance != nil }
        if let r = queueRealms[key]?.instance, !r.isInvalidated {
            try refuseOtherKey(r, config)
            return r
        }
        let r = try RealmInstance(opening: config, queue: queue)
        queueRealms[key] = WeakInstance(r)
        return r
    }

    nonisolated(unsafe) private static var actorRealms: [String: WeakInstance] = [:]

    /// The Realm of `config` isolated to `actor` (one per actor and configuration; the main
    /// actor's is the main thread's).
    static func instance(for config: Realm.Configuration, actor: any Actor) throws -> RealmInstance {
        if actor === MainActor.shared as AnyObject { return try mainInstance(for: config) }
        let key = "\(ObjectIdentifier(actor))|" + config.storeKey + "|" + (config.readOnly ? "ro" : "rw")
        queueLock.lock()
        defer { queueLock.unlock() }
        actorRealms = actorRealms.filter { $0.value.instance != nil }
        if let r = actorRealms[key]?.instance, try reuse(r, for: config) { return r }
        let r = try RealmInstance(opening: config, actor: actor)
        actorRealms[key] = WeakInstance(r)
        return r
    }

    static func instance(for config: Realm.Configuration) throws -> RealmInstance {
        if QueueMark.onMain { return try mainInstance(for: config) }
        let dict = Thread.current.threadDictionary
        let box: Box
        if let b = dict[key] as? Box { box = b } else { box = Box(); dict[key] = box }
        let cacheKey = config.storeKey + "|" + (config.readOnly ? "ro" : "rw")
        if let r = box.realms[cacheKey]?.instance, try reuse(r, for: config) { return r }
        try refuseOtherReadOnly(box.realms[config.storeKey + "|" + (config.readOnly ? "rw" : "ro")]?.instance, config)
        let r = try RealmInstance(opening: config)
        box.realms[cacheKey] = WeakInstance(r)
        return r
    }
}
