import Foundation

/// How one model class lives in one file: its table and, per property (in the class's order),
/// the core's property id. Made once per file and class when the schema is set up.
final class TableInfo {
    let classInfo: ClassInfo
    let tableName: String
    /// The core's property id of each property; linking objects have none (0).
    let cols: [UInt32]
    /// Its number in its file (0, 1, …): where Realms keep its table handle.
    let ordinal: Int

    /// For messages: "Class.property", by property, and "Results<Class>".
    let propertyPaths: [String]
    let resultsName: String

    /// The class's `LinkingObjects` properties as the core's queries spell them
    /// (`owners` → `@links.Person.dogs`), by name.
    let linkingObjectsPaths: [String: String]

    init(classInfo: ClassInfo, cols: [UInt32], ordinal: Int) {
        self.classInfo = classInfo
        self.tableName = classInfo.name
        self.cols = cols
        self.ordinal = ordinal
        propertyPaths = classInfo.properties.map { "\(classInfo.name).\($0.name)" }
        resultsName = "Results<\(classInfo.name)>"
        var links: [String: String] = [:]
        for p in classInfo.properties where p.kind.collection == .linkingObjects {
            if let origin = p.kind.target, let prop = p.originProperty {
                links[p.name] = "@links.\(origin.className()).\(prop)"
            }
        }
        linkingObjectsPaths = links
    }

    var name: String { classInfo.name }
    var properties: [ClassInfo.PropertyInfo] { classInfo.properties }
    var schema: ObjectSchema { classInfo.schema }
}

/// One open file (or memory store) shared by every Realm instance of the process that opens it:
/// the core's database handle (safe across threads) and the tables of the model classes.
final class SharedFile: @unchecked Sendable { // (its state is guarded by its lock)
    let db: Database
    private let lock = NSLock()
    private var tables: [ObjectIdentifier: TableInfo] = [:]
    /// The schemas set up: the set of class identities, and the schema version.
    private var readySchemas: Set<ReadySchema> = []
    private struct ReadySchema: Hashable {
        let classes: Set<ObjectIdentifier>
        let version: UInt64
    }

    /// The encryption key the file was opened with (nil: not encrypted).
    private let encryptionKey: Data?

    private init(db: Database, encryptionKey: Data?) {
        self.db = db
        self.encryptionKey = encryptionKey
        watcher = CommitWatcher(db: db)
    }

    /// Tells the Realms of this file that observe something when any thread or process commits.
    let watcher: CommitWatcher

    /// Wakes async writers waiting for the file's writer lock.
    let writeTurns = WriteTurns()

    /// The shared log syncs of grouped async commits.
    let groupSync = GroupSync()

    deinit { watcher.stop() }

    /// Frozen Realms by version and class set, while something uses them: freezing objects of
    /// one version shares one frozen Realm (and its transactions).
    private var frozenRealms: [String: WeakRealm] = [:]

    func frozenRealm(_ key: String, make: () throws -> RealmInstance) rethrows -> RealmInstance {
        lock.lock()
        defer { lock.unlock() }
        if let r = frozenRealms[key]?.instance { return r }
        let r = try make()
        frozenRealms = frozenRealms.filter { $0.value.instance != nil }
        frozenRealms[key] = WeakRealm(r)
        return r
    }

    /// The public names of renamed properties of the classes set up (nil: none renamed).
    private var names: NameMap?
    var nameMap: NameMap? {
        lock.lock()
        defer { lock.unlock() }
        return names
    }

    func table(for type: Object.Type) -> TableInfo? {
        lock.lock()
        defer { lock.unlock() }
        return tables[ObjectIdentifier(type)]
    }

    // MARK: the registry (one SharedFile per file while some Realm uses it)

    private static let registryLock = NSLock()
    nonisolated(unsafe) private static var registry: [String: WeakShared] = [:]

    private struct WeakShared { weak var file: SharedFile? }

    static func open(_ config: Realm.Configuration) throws -> SharedFile {
        let key = config.encryptionKey
        if let key, key.count != 64 {
            throw StrataError(code: .invalidArgument, message: "'\(config.path)': an encryption key is "
                              + "64 bytes; this one is \(key.count)")
        }
        registryLock.lock()
        defer { registryLock.unlock() }
        if let f = registry[config.storeKey]?.file {
            if f.encryptionKey != key, config.inMemoryIdentifier == nil { // RealmSwift's wording
                throw StrataError(code: .invalidArgument, message: "Realm at path '\(config.path)' "
                                  + "already opened with different encryption key")
            }
            return f
        }
        let durability: Database.Durability = config.inMemoryIdentifier != nil ? .memory : .full
        let db = try Database(path: config.path, durability: durability, readOnly: config.readOnly,
                              maxVersions: UInt64(config.maximumNumberOfActiveVersions ?? 0),
                              encryptionKey: key.map { [UInt8]($0) })
        if durability != .memory, !config.readOnly, let ask = config.shouldCompactOnLaunch {
            let space = try db.space()
            if ask(Int(space.fileBytes), Int(space.usedBytes)) {
                do { try db.compact() } catch let e as StrataError where e.code == .busy {
                    // another process has the file open: it is compacted on a later launch
                }
            }
        }
        let f = SharedFile(db: db, encryptionKey: key)
        registry[config.storeKey] = WeakShared(file: f)
        return f
    }

    /// Whether a Realm of this process has the file open.
    static func isOpen(_ config: Realm.Configuration) -> Bool {
        registryLock.lock()
        defer { registryLock.unlock() }
        return registry[config.storeKey]?.file != nil
    }

    // MARK: the schema

    /// Make the file's schema hold `classes` (creating tables and properties, migrating when
    /// the schema version rose), once per set of classes; record their tables.
    func prepare(_ classes: [ClassInfo], config: Realm.Configuration) throws {
        let ids = ReadySchema(classes: Set(classes.map { ObjectIdentifier($0.type) }),
                              version: config.schemaVersion)
        lock.lock()
        defer { lock.unlock() }
        if readySchemas.contains(ids) { return }
        try SchemaCheck.links(classes)
        let read = try CoreTxn(db: db, write: false)
        let plan = try SchemaPlan(classes: classes, txn: read, config: config)
        read.free()
        if plan.needsWrite {
            if config.readOnly {
                throw StrataError(code: .readOnly, message: "'\(config.path)' is opened read-only "
                                  + "but its schema must change: \(plan.changes.joined(separator: "; "))")
            }
            // The old objects of the migration: a snapshot of the version the write begins on
            // (taken once the write holds the lock; another process may have migrated the file
            // meanwhile, so the plan is made again from it).
            let txn = try CoreTxn(db: db, write: true)
            var old: CoreTxn?
            do {
                old = try CoreTxn(db: db, write: false)
                let plan = try SchemaPlan(classes: classes, txn: old!, config: config)
                if plan.needsWrite {
                    try plan.apply(txn: txn, old: old!)
                    old!.free()
                    try txn.commit()
                }
            } catch {
                old?.free()
                txn.free()
                throw error
            }
            old?.free()
            txn.free()
        }
        let txn = try CoreTxn(db: db, write: false)
        defer { txn.free() }
        for c in classes {
            guard let t = try txn.table(c.name) else {
                throw StrataError(code: .notFound, message: "table '\(c.name)' is missing after the schema was set up")
            }
            let props = try t.properties()
            let cols = c.properties.map { p in props.first { $0.name == p.columnName }?.col ?? 0 }
            let ordinal = tables[ObjectIdentifier(c.type)]?.ordinal ?? tables.count
            tables[ObjectIdentifier(c.type)] = TableInfo(classInfo: c, cols: cols, ordinal: ordinal)
        }
        if classes.contains(where: \.hasColumnNames) {
            names = try NameMap(tables.values.map(\.classInfo))
        }
        readySchemas.insert(ids)
    }
}

