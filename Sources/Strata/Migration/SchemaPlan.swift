import Foundation

/// The core property a model property needs.
struct WantedProperty: Equatable {
    /// The column's name (the property's, or its `propertiesMapping()` name).
    let name: String
    let type: CoreType
    let flags: CoreFlags
    let target: String?

    init?(_ p: ClassInfo.PropertyInfo) {
        if p.kind.collection == .linkingObjects { return nil }
        name = p.columnName
        type = p.kind.type
        var f: CoreFlags = []
        if p.kind.optional || p.kind.type == .link && p.kind.collection == .none { f.insert(.nullable) }
        if p.kind.type == .mixed { f.insert(.nullable) }
        if p.kind.collection == .list { f.insert(.list) }
        if p.kind.collection == .set { f.insert([.list, .set]) }
        if p.kind.collection == .map { f.insert([.list, .map]) }
        if p.isPrimaryKey { f.insert(.primaryKey) }
        if p.isIndexed { f.insert(.indexed) }
        if p.isFullText { f.insert(.fullText) }
        flags = f
        target = p.kind.target?.className()
    }

    /// Same storage (index flags aside: they can change without migrating data).
    func sameStorage(_ c: CoreProperty) -> Bool {
        let storage: CoreFlags = [.nullable, .list, .set, .map]
        return c.type == type && c.flags.intersection(storage) == flags.intersection(storage)
            && (type != .link || c.linkTarget == target)
    }

    /// The same values, stored with another optionality (kept by a migration, nil becoming the
    /// declared default where the property is now required).
    func onlyOptionalityDiffers(_ c: CoreProperty) -> Bool {
        c.type == type && c.flags.intersection([.list, .set, .map]) == flags.intersection([.list, .set, .map])
            && (type != .link || c.linkTarget == target) && !sameStorage(c)
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

/// What the file needs to hold the model classes, worked out from one snapshot; `apply` makes
/// it so in a write transaction begun on that snapshot.
///
/// The steps of a migration, all in that one write (if anything fails or the process dies, the
/// file stays at its old version): tables of new classes are made; properties removed from the
/// model, or whose storage changed, are removed; new properties are added and every existing
/// object gets the property's declared default (a property whose only change is its optionality
/// keeps its values, nil becoming the default); the schema version is set; the migration block
/// runs, reading the old objects from the snapshot the write began on; then primary keys and
/// indexes are set, so a block can make values unique before a new primary key is checked.
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
    /// Something must be written: a schema change or a new version.
    var needsWrite: Bool { !changes.isEmpty || versionChange }

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
            if try t.isEmbedded() != c.isEmbedded {
                migrating.append("class '\(c.name)' " + (c.isEmbedded ? "became embedded" : "is no longer embedded"))
            }
            let have = try t.properties()
            for w in wanted {
                if let h = have.first(where: { $0.name == w.name }) {
                    if !w.sameStorage(h) {
                        let from = Self.describe(h.type, h.flags), to = Self.describe(w.type, w.flags)
                        migrating.append("property '\(c.name).\(w.name)' changed from \(from) to \(to)")
                    } else if h.flags.contains(.primaryKey) != w.flags.contains(.primaryKey) {
                        migrating.append("primary key of '\(c.name)' changed "
                            + (w.flags.contains(.primaryKey) ? "to '\(w.name)'" : "from '\(w.name)'"))
                    } else if h.flags.contains(.indexed) != w.flags.contains(.indexed)
                                && !w.flags.contains(.primaryKey) {
                        migrating.append("index of '\(c.name).\(w.name)' "
                            + (w.flags.contains(.indexed) ? "added" : "removed"))
                    } else if h.flags.contains(.fullText) != w.flags.contains(.fullText) {
                        migrating.append("full-text index of '\(c.name).\(w.name)' "
                            + (w.flags.contains(.fullText) ? "added" : "removed"))
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
        if config.schemaVersion < fileVersion {
            throw StrataError(code: .invalidArgument, message: "'\(config.path)': provided schema version "
                + "\(config.schemaVersion) is less than last set version \(fileVersion)")
        }
        if !migrating.isEmpty && !fresh && config.schemaVersion == fileVersion
            && !config.deleteRealmIfMigrationNeeded {
            throw StrataError(code: .schemaMismatch, message: "'\(config.path)': migration is required "
                + "(schema version \(fileVersion) was not increased): " + migrating.joined(separator: "; "))
        }
        changes += migrating
    }

    static func describe(_ type: CoreType, _ flags: CoreFlags) -> String {
        (flags.contains(.set) ? "set of " : flags.contains(.map) ? "map of " : flags.contains(.list) ? "list of " : "") + type.name + (flags.contains(.nullable) && type != .link ? "?" : "")
    }

    /// Make the file hold the classes in the write transaction `txn`; `old` is a read
    /// transaction of the version `txn` began on (the migration block's old objects).
    func apply(txn: CoreTxn, old: CoreTxn) throws {
        let deleting = !migrating.isEmpty && config.deleteRealmIfMigrationNeeded
            && config.schemaVersion == fileVersion
        if deleting { try deleteEverything(txn) }
        for c in classes where try txn.table(c.name) == nil {
            let t = try txn.createTable(c.name)
            if c.isEmbedded { try t.setEmbedded(true) }
        }
        for c in classes { try reshape(c, txn: txn, old: old) }
        if versionChange { try txn.setSchemaVersion(config.schemaVersion) }
        if !fresh, !deleting, fileVersion < config.schemaVersion, let block = config.migrationBlock {
            let migration = Migration(old: old, new: txn, classes: classes)
            block(migration, fileVersion)
            try migration.finish()
        }
        // after the block (which may give orphans a parent or delete them): a class that became
        // embedded needs one parent per object, else the migration fails naming the class
        for c in classes {
            guard let t = try txn.table(c.name), try t.isEmbedded() != c.isEmbedded else { continue }
            try t.setEmbedded(c.isEmbedded)
        }
        for c in classes { try setKeysAndIndexes(c, txn: txn) }
    }

    /// As if the file were deleted: every table goes, links first.
    private func deleteEverything(_ txn: CoreTxn) throws {
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

    /// Properties removed, changed and added; the added ones hold their defaults (or, when only
    /// the optionality changed, the values they had).
    private func reshape(_ c: ClassInfo, txn: CoreTxn, old: CoreTxn) throws {
        guard let t = try txn.table(c.name) else { return }
        let wanted = c.properties.compactMap(WantedProperty.init)
        let before = try t.properties()
        let wantedKey = wanted.first { $0.flags.contains(.primaryKey) }
        if let pk = before.first(where: { $0.flags.contains(.primaryKey) }),
           wantedKey?.name != pk.name || !wantedKey!.sameStorage(pk) {
            try t.setPrimaryKey(0) // set again after the migration block
        }
        for h in before where !wanted.contains(where: { $0.name == h.name && $0.sameStorage(h) }) {
            try t.removeProperty(h.col)
        }
        let have = try t.properties()
        let oldTable = try old.table(c.name)
        for w in wanted where !have.contains(where: { $0.name == w.name }) {
            let col = try t.addProperty(w.name, type: w.type,
                                        flags: w.flags.subtracting([.primaryKey, .indexed, .fullText]), linkTarget: w.target)
            let p = c.properties.first { $0.columnName == w.name }!
            if let oldTable, let h = before.first(where: { $0.name == w.name }), w.onlyOptionalityDiffers(h) {
                try keepValues(of: h, from: oldTable, into: t, col: col, p, w)
            } else {
                try fillDefault(t, col: col, p)
            }
        }
    }

    /// Every object gets p's declared default (skipped when the core's default is the same).
    private func fillDefault(_ t: CoreTable, col: UInt32, _ p: ClassInfo.PropertyInfo) throws {
        guard p.kind.collection == .none, let declared = p.defaultValue,
              let value = ValueConversion.storedIfPrimitive(declared) else { return }
        let keys = try t.keys()
        guard let first = keys.first, try t.get(first, col) != value else { return }
        for k in keys { try t.set(k, col, value) }
    }

    /// The values of property h (in the old snapshot) copied over; nil becomes p's default
    /// where the property is now required.
    private func keepValues(of h: CoreProperty, from oldTable: CoreTable, into t: CoreTable, col: UInt32,
                            _ p: ClassInfo.PropertyInfo, _ w: WantedProperty) throws {
        try SchemaPlan.copyValues(from: oldTable, h.col, to: t, col, list: w.flags.contains(.list), map: w.flags.contains(.map),
                                  required: !w.flags.contains(.nullable),
                                  fallback: p.defaultValue.flatMap(ValueConversion.storedIfPrimitive))
    }

    /// Property `from` of every object of `newTable` that `oldTable` (the old snapshot) has,
    /// copied into property `to` (a list's elements appended after what it holds); where the
    /// target is required, a nil becomes `fallback` (skipped without one; a nil element of a
    /// list is dropped).
    static func copyValues(from oldTable: CoreTable, _ from: UInt32, to newTable: CoreTable, _ to: UInt32,
                           list: Bool, map: Bool = false, required: Bool, fallback: StoredValue?) throws {
        for k in try newTable.keys() where try oldTable.exists(k) {
            if map { // keys with their values; a required map drops its nils
                for i in 0..<(try oldTable.listCount(k, from)) {
                    let v = try oldTable.listGet(k, from, i)
                    if v == .null && required { continue }
                    try newTable.mapSet(k, to, try oldTable.mapKeyAt(k, from, i), v)
                }
                continue
            }
            if list {
                for i in 0..<(try oldTable.listCount(k, from)) {
                    let v = try oldTable.listGet(k, from, i)
                    if v == .null && required { continue } // a required list holds no nils
                    try newTable.listInsert(k, to, try newTable.listCount(k, to), v)
                }
                continue
            }
            var v = try oldTable.get(k, from)
            if v == .null && required {
                guard let fallback else { continue }
                v = fallback
            }
            try newTable.set(k, to, v)
        }
    }

    /// The primary key and indexes the model asks for. A new primary key over values that are
    /// not unique throws, naming the class, the property and a value held twice.
    private func setKeysAndIndexes(_ c: ClassInfo, txn: CoreTxn) throws {
        guard let t = try txn.table(c.name) else { return }
        let have = try t.properties()
        for w in c.properties.compactMap(WantedProperty.init) {
            guard let h = have.first(where: { $0.name == w.name }) else { continue }
            if w.flags.contains(.primaryKey) && !h.flags.contains(.primaryKey) {
                try t.setPrimaryKey(h.col)
            } else if !w.flags.contains(.primaryKey) && h.flags.contains(.primaryKey) {
                try t.setPrimaryKey(0)
            }
            // a full-text index goes before a general one comes, and comes after one went
            let now = try t.properties().first { $0.col == h.col }!.flags
            if !w.flags.contains(.fullText) && now.contains(.fullText) { try t.setFullText(h.col, false) }
            if !w.flags.contains(.primaryKey) && w.flags.contains(.indexed) != now.contains(.indexed) {
                try t.setIndexed(h.col, w.flags.contains(.indexed))
            }
            if w.flags.contains(.fullText) && !now.contains(.fullText) { try t.setFullText(h.col, true) }
        }
    }
}
