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

    init(classInfo: ClassInfo, cols: [UInt32], ordinal: Int) {
        self.classInfo = classInfo
        self.tableName = classInfo.name
        self.cols = cols
        self.ordinal = ordinal
    }

    var name: String { classInfo.name }
    var properties: [ClassInfo.PropertyInfo] { classInfo.properties }
    var schema: ObjectSchema { classInfo.schema }
}

/// One open file (or memory store) shared by every Realm instance of the process that opens it:
/// the core's database handle (safe across threads) and the tables of the model classes.
final class SharedFile {
    let db: Database
    private let lock = NSLock()
    private var tables: [ObjectIdentifier: TableInfo] = [:]
    /// The schemas set up: the set of class identities, and the schema version.
    private var readySchemas: Set<ReadySchema> = []
    private struct ReadySchema: Hashable {
        let classes: Set<ObjectIdentifier>
        let version: UInt64
    }

    private init(db: Database) { self.db = db }

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
        if config.encryptionKey != nil {
            throw StrataError(code: .invalidArgument,
                              message: "'\(config.path)': Strata files are not encrypted; encryptionKey must be nil")
        }
        registryLock.lock()
        defer { registryLock.unlock() }
        if let f = registry[config.storeKey]?.file { return f }
        let durability: Database.Durability = config.inMemoryIdentifier != nil ? .memory : .full
        let db = try Database(path: config.path, durability: durability, readOnly: config.readOnly,
                              maxVersions: UInt64(config.maximumNumberOfActiveVersions ?? 0))
        let f = SharedFile(db: db)
        registry[config.storeKey] = WeakShared(file: f)
        return f
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
        if !plan.changes.isEmpty || plan.versionChange {
            if config.readOnly {
                throw StrataError(code: .readOnly, message: "'\(config.path)' is opened read-only "
                                  + "but its schema must change: \(plan.changes.joined(separator: "; "))")
            }
            let txn = try CoreTxn(db: db, write: true)
            do {
                try plan.apply(txn: txn)
                try txn.commit()
            } catch {
                txn.free()
                throw error
            }
        }
        let txn = try CoreTxn(db: db, write: false)
        defer { txn.free() }
        for c in classes {
            guard let t = try txn.table(c.name) else {
                throw StrataError(code: .notFound, message: "table '\(c.name)' is missing after the schema was set up")
            }
            let props = try t.properties()
            let cols = c.properties.map { p in props.first { $0.name == p.name }?.col ?? 0 }
            let ordinal = tables[ObjectIdentifier(c.type)]?.ordinal ?? tables.count
            tables[ObjectIdentifier(c.type)] = TableInfo(classInfo: c, cols: cols, ordinal: ordinal)
        }
        readySchemas.insert(ids)
    }
}

/// The core property a model property needs.
struct WantedProperty: Equatable {
    let name: String
    let type: CoreType
    let flags: CoreFlags
    let target: String?

    init?(_ p: ClassInfo.PropertyInfo) {
        if p.kind.collection == .linkingObjects { return nil }
        name = p.name
        type = p.kind.type
        var f: CoreFlags = []
        if p.kind.optional || p.kind.type == .link && p.kind.collection == .none { f.insert(.nullable) }
        if p.kind.type == .mixed { f.insert(.nullable) }
        if p.kind.collection == .list { f.insert(.list) }
        if p.isPrimaryKey { f.insert(.primaryKey) }
        if p.isIndexed { f.insert(.indexed) }
        flags = f
        target = p.kind.target?.className()
    }

    /// Same storage (index flags aside: they can change without migrating data).
    func sameStorage(_ c: CoreProperty) -> Bool {
        let storage: CoreFlags = [.nullable, .list]
        return c.type == type && c.flags.intersection(storage) == flags.intersection(storage)
            && (type != .link || c.linkTarget == target)
    }
}

enum SchemaCheck {
    /// Every link, list of links and linking objects names a class of the schema, and the
    /// linking objects' origin property exists and links back.
    static func links(_ classes: [ClassInfo]) throws {
        let byName = Dictionary(classes.map { ($0.name, $0) }, uniquingKeysWith: { a, _ in a })
        for c in classes {
            for p in c.properties {
                guard let target = p.kind.target else { continue }
                guard let t = byName[target.className()], t.type == target else {
                    throw StrataError(code: .notFound, message: "'\(c.name).\(p.name)' links to class "
                        + "'\(target.className())', which is not in this Realm's objectTypes")
                }
                if p.kind.collection == .linkingObjects {
                    guard let origin = p.originProperty, let op = t.property(named: origin),
                          op.kind.target.map({ $0.className() }) == c.name else {
                        throw StrataError(code: .notFound, message: "'\(c.name).\(p.name)': linking objects "
                            + "need '\(t.name).\(p.originProperty ?? "")' to be a link or a list of links to '\(c.name)'")
                    }
                }
            }
        }
    }
}

/// What the file needs to hold the model classes, worked out in a read transaction.
struct SchemaPlan {
    let classes: [ClassInfo]
    let config: Realm.Configuration
    let fileVersion: UInt64
    /// A new file: no tables, version 0.
    let fresh: Bool
    /// The file's schema must change in ways that lose data (or it is deleted, as configured).
    var migrating: [String] = []
    var changes: [String] = []
    var versionChange: Bool { config.schemaVersion != fileVersion }

    init(classes: [ClassInfo], txn: CoreTxn, config: Realm.Configuration) throws {
        self.classes = classes
        self.config = config
        fileVersion = try txn.schemaVersion()
        let existing = Set(try txn.tableNames())
        fresh = fileVersion == 0 && existing.isEmpty
        for c in classes {
            let wanted = c.properties.compactMap(WantedProperty.init)
            guard existing.contains(c.name), let t = try txn.table(c.name) else {
                changes.append("class '\(c.name)' added")
                continue
            }
            let have = try t.properties()
            for w in wanted {
                if let h = have.first(where: { $0.name == w.name }) {
                    if !w.sameStorage(h) {
                        migrating.append("'\(c.name).\(w.name)' changed from \(h.type.name) to \(w.type.name)")
                    } else if h.flags.contains(.primaryKey) != w.flags.contains(.primaryKey) {
                        migrating.append("primary key of '\(c.name)' changed")
                    } else if h.flags.contains(.indexed) != w.flags.contains(.indexed)
                                && !w.flags.contains(.primaryKey) {
                        changes.append("index of '\(c.name).\(w.name)' changed")
                    }
                } else {
                    migrating.append("property '\(c.name).\(w.name)' added")
                }
            }
            for h in have where !wanted.contains(where: { $0.name == h.name }) {
                migrating.append("property '\(c.name).\(h.name)' removed")
            }
        }
        // A new file (version 0, no tables yet) takes any schema version without migrating.
        if !migrating.isEmpty && !fresh {
            if config.schemaVersion < fileVersion {
                throw StrataError(code: .invalidArgument, message: "'\(config.path)': provided schema version "
                    + "\(config.schemaVersion) is less than last set version \(fileVersion)")
            }
            if config.schemaVersion == fileVersion && !config.deleteRealmIfMigrationNeeded {
                throw StrataError(code: .invalidArgument, message: "'\(config.path)': migration is required "
                    + "(schema version \(fileVersion)): " + migrating.joined(separator: "; "))
            }
        } else if config.schemaVersion < fileVersion {
            throw StrataError(code: .invalidArgument, message: "'\(config.path)': provided schema version "
                + "\(config.schemaVersion) is less than last set version \(fileVersion)")
        }
        changes += migrating
    }

    /// Create what is missing, change what differs (data of removed properties goes), set the
    /// schema version, and run the migration block for an older file.
    func apply(txn: CoreTxn) throws {
        let deleting = !migrating.isEmpty && config.deleteRealmIfMigrationNeeded
            && config.schemaVersion == fileVersion
        if deleting { // as if the file were deleted: every table goes, links first
            let names = try txn.tableNames()
            for n in names { try txn.table(n)?.clear() }
            var left = names
            while !left.isEmpty {
                let before = left.count
                left = try left.filter { n in
                    do { try txn.dropTable(n); return false } catch let e as StrataError where e.code != .io {
                        return true // still linked to by another table: drop that one first
                    }
                }
                if left.count == before { throw StrataError(code: .invalidArgument, message: "cannot delete tables \(left)") }
            }
        }
        for c in classes where try txn.table(c.name) == nil { _ = try txn.createTable(c.name) }
        for c in classes {
            guard let t = try txn.table(c.name) else { continue }
            var have = try t.properties()
            let wanted = c.properties.compactMap(WantedProperty.init)
            for h in have where !wanted.contains(where: { $0.name == h.name && $0.sameStorage(h) }) {
                if h.flags.contains(.primaryKey) { try t.setPrimaryKey(0) }
                try t.removeProperty(h.col)
            }
            have = try t.properties()
            for w in wanted {
                var col: UInt32
                if let h = have.first(where: { $0.name == w.name }) {
                    col = h.col
                } else {
                    let base = w.flags.subtracting([.primaryKey, .indexed])
                    col = try t.addProperty(w.name, type: w.type, flags: base, linkTarget: w.target)
                }
                let h = try t.properties().first { $0.col == col }!
                if w.flags.contains(.primaryKey) && !h.flags.contains(.primaryKey) {
                    try t.setPrimaryKey(col)
                } else if !w.flags.contains(.primaryKey) && h.flags.contains(.primaryKey) {
                    try t.setPrimaryKey(0)
                }
                let nowIndexed = try t.properties().first { $0.col == col }!.flags.contains(.indexed)
                if !w.flags.contains(.primaryKey) && w.flags.contains(.indexed) != nowIndexed {
                    try t.setIndexed(col, w.flags.contains(.indexed))
                }
            }
        }
        if versionChange { try txn.setSchemaVersion(config.schemaVersion) }
        if !fresh, !deleting, fileVersion < config.schemaVersion, let block = config.migrationBlock {
            block(Migration(), fileVersion)
        }
    }
}
