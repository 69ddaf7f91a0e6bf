import Foundation

/// Called when a Realm is opened with a newer `schemaVersion` than its file has (RealmSwift's
/// top-level name; `Realm.MigrationBlock` is the same type).
public typealias MigrationBlock = @Sendable (_ migration: Migration, _ oldSchemaVersion: UInt64) -> Void

extension Realm {
    /// The block a configuration runs to migrate a file from an older schema version.
    public typealias MigrationBlock = Strata.MigrationBlock
}

/// The objects a migration hands out: objects seen through their class's name.
public typealias MigrationObject = DynamicObject
/// The block `enumerateObjects` calls with each object as the old schema had it and as the new schema has it.
public typealias MigrationObjectEnumerateBlock = (_ oldObject: MigrationObject?, _ newObject: MigrationObject?) -> Void

/// The migration of a file from an older schema version, handed to the configuration's
/// `migrationBlock`. It runs inside the write that changes the schema: when the block has run,
/// the write commits; if anything fails (or the process dies) the file stays as it was.
///
/// By the time the block runs, tables of new classes exist, removed properties are gone from
/// the new objects (the old objects still have them), and added properties hold their declared
/// defaults. Primary keys and indexes of the new schema are set after the block.
///
/// ```swift
/// migrationBlock: { migration, oldSchemaVersion in
///     if oldSchemaVersion < 2 {
///         migration.enumerateObjects(ofType: "Person") { oldObject, newObject in
///             newObject!["fullName"] = "\(oldObject!["firstName"]!) \(oldObject!["lastName"]!)"
///         }
///     }
///     if oldSchemaVersion < 3 {
///         migration.renameProperty(onType: "Person", from: "yearsSinceBirth", to: "age")
///     }
/// }
/// ```
public final class Migration {
    let old: MigrationSide
    let new: MigrationSide
    /// The classes of the new schema, by name.
    let newClasses: [String: ClassInfo]
    /// The first failure of the core (a full disk, ...): thrown when the block returns.
    private var failure: Error?

    init(old: CoreTxn, new: CoreTxn, classes: [ClassInfo]) {
        self.old = MigrationSide(txn: old, label: "old")
        self.new = MigrationSide(txn: new, label: "new", columnNames: Dictionary(classes.filter(\.hasColumnNames).map {
            ($0.name, Dictionary($0.properties.map { ($0.name, $0.columnName) }, uniquingKeysWith: { a, _ in a }))
        }, uniquingKeysWith: { a, _ in a }))
        newClasses = Dictionary(classes.map { ($0.name, $0) }, uniquingKeysWith: { a, _ in a })
        self.old.migration = self
        self.new.migration = self
    }

    /// Record a failure of the core; the migration then throws it and nothing is written.
    func fail(_ error: Error) {
        if failure == nil { failure = error }
    }

    func finish() throws {
        if let failure { throw failure }
    }

    /// The classes as the file had them: every table of the old version, with its properties
    /// as stored (no declared defaults: the file keeps none).
    public var oldSchema: Schema {
        var schemas: [ObjectSchema] = []
        do {
            for name in try old.txn.tableNames() {
                guard let t = try old.txn.table(name) else { continue }
                schemas.append(ObjectSchema(className: name, objectClass: newClasses[name]?.type ?? Object.self,
                                            core: try t.properties(), embedded: try t.isEmbedded()))
            }
        } catch {
            fail(error)
        }
        return Schema(objectSchema: schemas)
    }

    /// The classes of the model the file is migrated to.
    public var newSchema: Schema {
        Schema(objectSchema: newClasses.values.sorted { $0.name < $1.name }.map { $0.schema })
    }

    /// Call `block` for each object of the class `typeName`: the object as the file held it
    /// (nil for an object created in this migration) and as it will be (nil when the class is
    /// no longer in the model, or the object was deleted here).
    public func enumerateObjects(ofType typeName: String, _ block: MigrationObjectEnumerateBlock) {
        let oldTable = old.table(typeName)
        let newTable = newClasses[typeName] != nil ? new.table(typeName) : nil
        if oldTable == nil && newTable == nil {
            strataTrap("Object type '\(typeName)' does not exist in the old or the new schema of the migration.")
        }
        do {
            if let newTable {
                for k in try newTable.core.keys() where try newTable.core.exists(k) {
                    let before = try oldTable.map { try $0.core.exists(k) } ?? false
                    block(before ? DynamicObject(old, typeName, k) : nil, DynamicObject(new, typeName, k))
                }
            } else if let oldTable {
                for k in try oldTable.core.keys() { block(DynamicObject(old, typeName, k), nil) }
            }
        } catch {
            fail(error)
        }
    }

    /// A new object of the class `typeName` with the values given as a dictionary (by property
    /// name) or an array (in the model's property order); properties not given hold their
    /// declared defaults.
    @discardableResult
    public func create(_ typeName: String, value: Any = [Any]()) -> MigrationObject {
        guard let info = newClasses[typeName], let table = new.table(typeName) else {
            strataTrap("Cannot create an object of type '\(typeName)': it is not in the new schema.")
        }
        let settable = info.properties.filter { $0.kind.collection != .linkingObjects }
        var values: [(String, Any)] = []
        if let dict = value as? [String: Any] {
            values = settable.compactMap { p in dict[p.name].map { (p.name, $0) } }
            if let unknown = dict.keys.first(where: { info.property(named: $0) == nil }) {
                strataTrap("Invalid property name '\(unknown)' for class '\(typeName)'.")
            }
        } else if let array = value as? [Any] {
            if array.count > settable.count {
                strataTrap("Invalid array of \(array.count) values for class '\(typeName)', which has "
                           + "\(settable.count) properties.")
            }
            values = zip(settable, array).map { ($0.name, $1) }
        } else {
            strataTrap("Invalid value '\(value)' to create an object of type '\(typeName)': give a "
                       + "dictionary or an array.")
        }
        do {
            let key: Int64
            if let pk = table.properties.values.first(where: { $0.flags.contains(.primaryKey) }),
               let given = values.first(where: { $0.0 == pk.name }) {
                key = try table.core.create(primaryKey: new.stored(given.1, for: pk, in: typeName))
                values.removeAll { $0.0 == pk.name }
            } else {
                key = try table.core.create()
            }
            for p in settable where p.kind.collection == .none && !values.contains(where: { $0.0 == p.name }) {
                guard let col = table.properties[p.name], let declared = p.defaultValue,
                      let v = ValueConversion.storedIfPrimitive(declared), !col.flags.contains(.primaryKey) else { continue }
                try table.core.set(key, col.col, v)
            }
            let object = DynamicObject(new, typeName, key)
            for (name, v) in values { object[name] = v }
            return object
        } catch {
            fail(error)
            return DynamicObject(new, typeName, -1)
        }
    }

    /// Delete an object of the new schema (a `newObject` of `enumerateObjects`, or one made by
    /// `create`).
    public func delete(_ object: MigrationObject) {
        guard object.side === new else {
            strataTrap("Cannot delete '\(object.className)' object \(object.key): only new objects of a migration can be deleted.")
        }
        guard let table = new.table(object.className) else { return }
        do { try table.core.delete(object.key) } catch { fail(error) }
    }

    /// Delete every object of the class `typeName`, and its table when the class is no longer
    /// in the model. Returns whether there was such a class in the file.
    @discardableResult
    public func deleteData(forType typeName: String) -> Bool {
        guard let table = new.table(typeName) else { return false }
        do {
            try table.core.clear()
            if newClasses[typeName] == nil {
                do { try new.txn.dropTable(typeName) } catch let e as StrataError where e.code != .io {
                    // still the target of another table's links: its objects are gone, it stays
                }
                new.forget(typeName)
            }
        } catch {
            fail(error)
        }
        return true
    }

    /// Move the values of property `oldName` of the old objects to property `newName` of the
    /// new ones (the property was renamed in the model: its data is kept). The two must store
    /// the same type; a required property that was optional takes its default where it was nil.
    public func renameProperty(onType typeName: String, from oldName: String, to newName: String) {
        guard let oldTable = old.table(typeName), let from = oldTable.properties[oldName] else {
            strataTrap("Cannot rename property '\(typeName).\(oldName)': it does not exist in the old schema.")
        }
        guard newClasses[typeName] != nil, let newTable = new.table(typeName),
              let to = newTable.properties[newName] else {
            strataTrap("Cannot rename property '\(typeName).\(oldName)' to '\(newName)': '\(newName)' "
                       + "is not a property of '\(typeName)' in the new schema.")
        }
        if newTable.properties[oldName] != nil && oldName != newName {
            strataTrap("Cannot rename property '\(typeName).\(oldName)' to '\(newName)': '\(oldName)' "
                       + "is still a property of '\(typeName)' in the new schema.")
        }
        if from.type != to.type || from.flags.contains(.list) != to.flags.contains(.list)
            || from.linkTarget != to.linkTarget {
            strataTrap("Cannot rename property '\(typeName).\(oldName)' to '\(newName)': it would change from "
                       + "\(SchemaPlan.describe(from.type, from.flags)) to \(SchemaPlan.describe(to.type, to.flags)).")
        }
        let fallback = newClasses[typeName]?.property(named: newName)?.defaultValue
            .flatMap(ValueConversion.storedIfPrimitive)
        do {
            if to.flags.contains(.list) { // the list added empty: the old elements replace it
                for k in try newTable.core.keys() where try oldTable.core.exists(k) { try newTable.core.listClear(k, to.col) }
            }
            try SchemaPlan.copyValues(from: oldTable.core, from.col, to: newTable.core, to.col,
                                      list: to.flags.contains(.list), map: to.flags.contains(.map),
                                      required: !to.flags.contains(.nullable), fallback: fallback)
        } catch {
            fail(error)
        }
    }
}
