import CCore
import Foundation

extension Realm {
    /// What `add` and `create` do with an object whose primary key is taken.
    public enum UpdatePolicy: Int, Sendable {
        /// The write fails (it throws when it commits), naming the class and the value.
        case error = 1
        /// The existing object takes the new values of the properties that differ.
        case modified = 3
        /// The existing object takes every new value.
        case all = 2
    }

    /// Add an unmanaged object (and the unmanaged objects it links to, and those of its lists):
    /// from now on it is managed by this Realm. Inside a write; a duplicate primary key with
    /// `.error` fails the write (`write` / `commitWrite` throw, naming the class and value).
    public func add(_ object: Object, update: UpdatePolicy = .error) {
        Realm.refuseEmbedded(type(of: object), "add")
        borrowingInstance { $0.add(object, update: update) }
    }

    /// Adds the objects (and what they link to) in one go, as `add(_:update:)` does each. Traps outside a write.
    public func add<S: Sequence>(_ objects: S, update: UpdatePolicy = .error) where S.Element: Object {
        for o in objects {
            Realm.refuseEmbedded(type(of: o), "add")
            instance.add(o, update: update)
        }
    }

    /// Embedded objects are reached through their parent: adding, creating or listing them on
    /// their own is a programmer error (RealmSwift refuses it at compile time).
    static func refuseEmbedded(_ type: Object.Type, _ what: String) {
        guard type is EmbeddedObject.Type else { return }
        strataTrap("\(what)(\(type.className())): '\(type.className())' is an embedded class: its objects are "
                   + "created, reached and queried through the parent object that holds them")
    }

    /// RealmSwift's older form: `update: true` is `.all`, false `.error`.
    @available(*, deprecated, message: "Pass .error, .modified or .all rather than a boolean. .error is equivalent to false and .all is equivalent to true.")
    public func add(_ object: Object, update: Bool) { add(object, update: update ? .all : .error) }

    /// Adds the objects, upserting by primary key when `update` is true (RealmSwift's older spelling).
    @available(*, deprecated, message: "Pass .error, .modified or .all rather than a boolean. .error is equivalent to false and .all is equivalent to true.")
    public func add<S: Sequence>(_ objects: S, update: Bool) where S.Element: Object {
        add(objects, update: update ? .all : .error)
    }

    /// A new managed object of `type` with properties from `value` (a dictionary, an array in
    /// property order, or an object), or the existing one updated, per `update`.
    @discardableResult
    public func create<T: Object>(_ type: T.Type, value: Any = [String: Any](), update: UpdatePolicy = .error) -> T {
        Realm.refuseEmbedded(type, "create")
        let o = type.init()
        ObjectCopy.fill(o, from: value, copyingInto: instance)
        instance.add(o, update: update)
        return o
    }

    /// Delete an object: it leaves every list and link to it becomes nil.
    public func delete(_ object: ObjectBase) { instance.delete(Realm.model(object, "delete")) }

    /// Deletes the objects. Traps outside a write, or on an object of another Realm.
    public func delete<S: Sequence>(_ objects: S) where S.Element: ObjectBase {
        for o in Array(objects) { instance.delete(Realm.model(o, "delete")) }
    }

    /// Deletes the list's objects from the Realm (not only from the list). Traps outside a write.
    public func delete<Element: ObjectBase>(_ objects: List<Element>) {
        for o in Array(objects) { instance.delete(Realm.model(o, "delete")) }
    }

    /// Deletes every object of the results. Traps outside a write.
    public func delete<Element: ObjectBase>(_ objects: Results<Element>) {
        for o in Array(objects) { instance.delete(Realm.model(o, "delete")) }
    }

    /// An ObjectBase that is a model object (every one a Realm hands out is).
    static func model(_ o: ObjectBase, _ what: String) -> Object {
        guard let m = o as? Object else { strataTrap("\(what): a \(type(of: o)) is not an Object subclass") }
        return m
    }

    /// Delete every object of this Realm's classes.
    public func deleteAll() { instance.deleteAll() }

    /// Every object of `type`.
    public func objects<Element: Object>(_ type: Element.Type) -> Results<Element> {
        instance.checkThread("objects(\(type.className()))")
        Realm.refuseEmbedded(type, "objects")
        return Results(realm: instance, info: instance.tableInfo(type))
    }

    /// The object of `type` whose primary key is `key`, or nil.
    public func object<Element: Object, KeyType>(ofType type: Element.Type, forPrimaryKey key: KeyType) -> Element? {
        // the common key types without a dynamic cast (a cast costs more than the lookup)
        if KeyType.self == Int.self {
            return borrowingInstance { $0.object(type, intPrimaryKey: Int64(unsafeBitCast(key, to: Int.self))) }
        }
        if KeyType.self == String.self {
            return borrowingInstance { $0.object(type, primaryKey: key, stored: .string(key as! String)) }
        }
        return instance.object(type, primaryKey: key)
    }
}

extension RealmInstance {
    func add(_ o: Object, update: Realm.UpdatePolicy) {
        let type = Swift.type(of: o)
        checkThread("add(\(type.className()))")
        requireWrite("add(\(type.className()))")
        if let a = o.__accessor {
            if a.realm === self { return }
            strataTrap("Object of type '\(type.className())' is already managed by another Realm: "
                       + "use create(_:value:update:) to copy it into this one")
        }
        let info = tableInfo(type)
        let cls = info.classInfo
        let key: Int64
        var existed = false
        do {
            let table = self.table(info)
            if let pk = cls.primaryKeyIndex {
                let f = cls.fields[pk]
                let pkValue = f.field.unmanagedStored(at: Unmanaged.passUnretained(o).toOpaque() + f.offset) ?? .null
                if update == .error { // one search of the key's index: the core refuses a duplicate
                    do {
                        key = try table.create(primaryKey: pkValue)
                    } catch let e as StrataError where e.code == .exists {
                        throw StrataError(code: .exists, message: "Attempting to create an object of type "
                            + "'\(cls.name)' with an existing primary key value '\(ValueConversion.describe(pkValue))'.")
                    }
                } else if let k = try table.find(primaryKey: pkValue) {
                    key = k
                    existed = true
                } else {
                    key = try table.create(primaryKey: pkValue)
                }
            } else {
                key = try table.create()
            }
        } catch {
            fail(error, "add(\(cls.name))")
            return
        }
        mutationCount &+= 1
        adopt(o, key: key, info: info, update: update, existed: existed)
    }

    /// `o` becomes the object `key` of its class: its fields are bound and written there.
    /// Updating an existing object with `.modified`, the embedded objects it holds are updated in
    /// place (updatingExisting); with `.all` they are replaced — both as RealmSwift does.
    private func adopt(_ o: Object, key: Int64, info: TableInfo, update: Realm.UpdatePolicy, existed: Bool) {
        let cls = info.classInfo
        o.__adopt(ObjectAccessor(realm: self, info: info, key: key))
        addPolicy.append(update)
        let updating = existed && update == .modified
        if updating { updatingExisting += 1 }
        let base = Unmanaged.passUnretained(o).toOpaque()
        let skipIfEqual = update == .modified && existed
        for (i, f) in cls.fields.enumerated() {
            if i == cls.primaryKeyIndex {
                f.field.bind(at: base + f.offset, to: _ManagedProperty(object: o, index: i))
                continue
            }
            f.field.transfer(from: base + f.offset, to: _ManagedProperty(object: o, index: i), skipIfEqual: skipIfEqual)
        }
        withExtendedLifetime(o) {}
        if updating { updatingExisting -= 1 }
        addPolicy.removeLast()
    }

    /// While an existing object is updated by `add(_:update:)`: an unmanaged embedded object set
    /// where an embedded object is becomes that object (its values written into it), not a new
    /// one; nil when no update is in progress.
    func embeddedInPlace(_ o: Object, replacing key: Int64?) -> Int64? {
        guard updatingExisting > 0, let key, o is EmbeddedObject, o.__accessor == nil else { return nil }
        adopt(o, key: key, info: tableInfo(type(of: o)), update: .modified, existed: true)
        return key
    }

    /// The key of `o` for a link from this Realm: o itself if managed here, else o once added
    /// (with the policy of the add in progress, if any).
    /// The typed link a mixed value holds to `o` (added when unmanaged).
    func typedLink(_ o: Object, what: @autoclosure () -> String) -> StoredValue {
        if o is EmbeddedObject {
            strataTrap("\(what()): an AnyRealmValue cannot hold an embedded object ('\(type(of: o).className())')")
        }
        let key = keyForLink(o, what: what())
        let info = o.__accessor?.info ?? tableInfo(type(of: o))
        return .typedLink(table(info).id, key)
    }

    /// The object a mixed value's typed link names, or nil when its table is no class of this
    /// Realm.
    func object(typedLink tableId: UInt32, key: Int64) -> Object? {
        for e in infos where table(e.info).id == tableId {
            return managedObject(e.info.classInfo.type, info: e.info, key: key)
        }
        return nil
    }

    func keyForLink(_ o: Object, what: @autoclosure () -> String) -> Int64 {
        if let a = o.__accessor, o is EmbeddedObject, a.realm.shared === shared {
            // owned by one parent: a managed one cannot be linked again (RealmSwift's trap)
            strataTrap("Cannot add an existing managed embedded object ('\(type(of: o).className())') to \(what()): "
                       + "it already has a parent; assign an unmanaged copy instead")
        }
        if let a = o.__accessor {
            if a.realm === self { return a.key }
            if a.realm.shared === shared && !a.realm.isInWriteTransaction { return a.key }
            strataTrap("\(what()): the object is managed by another Realm")
        }
        add(o, update: addPolicy.last ?? .error)
        return o.__accessor?.key ?? -1
    }

    func delete(_ o: Object) {
        let type = Swift.type(of: o)
        checkThread("delete(\(type.className()))")
        requireWrite("delete(\(type.className()))")
        guard let a = o.__accessor else {
            strataTrap("Can only delete an object from the Realm it belongs to (this '\(type.className())' is unmanaged).")
        }
        guard a.realm === self else {
            strataTrap("Can only delete an object from the Realm it belongs to ('\(type.className())').")
        }
        do {
            try table(a.info).delete(a.key)
            mutationCount &+= 1
        } catch let e as StrataError where e.code == .notFound {
            strataTrap("Object has been deleted or invalidated ('\(type.className())').")
        } catch {
            fail(error, "delete(\(type.className()))")
        }
    }

    func deleteAll() {
        checkThread("deleteAll")
        requireWrite("deleteAll")
        for c in classes {
            do { try table(tableInfo(c.type)).clear() } catch { fail(error, "deleteAll") }
        }
        mutationCount &+= 1
    }

    /// An Int key (the common case, without boxing it or making a StoredValue).
    func object<T: Object>(_ type: T.Type, intPrimaryKey key: Int64) -> T? {
        checkThread("object(ofType: \(type.className()))")
        let info = tableInfo(type)
        guard info.classInfo.primaryKeyType == .int else { return object(type, primaryKey: Int(key), stored: .int(key)) }
        return found(type, info) { try $0.find(intPrimaryKey: key) }
    }

    /// The object `find` finds in the table of `info`. (Its values are not asked of memory
    /// ahead, strata_obj_prefetch: at 100,000 objects, in the processor's caches, the hint
    /// cost more than the misses it hid — Swift lookups 7% faster without it, the median of
    /// 24 alternated runs; at 1M objects the C API's five reads ran as fast with it.)
    @inline(__always)
    private func found<T: Object>(_ type: T.Type, _ info: TableInfo, _ find: (CoreTable) throws -> Int64?) -> T? {
        do {
            let table = self.table(info)
            guard let key = try find(table) else { return nil }
            return managedObject(type, info: info, key: key)
        } catch {
            strataTrap("cannot look up '\(info.name)': \(error)")
        }
    }

    /// `stored`: the key already converted (Int and String keys), checked against the property.
    func object<T: Object>(_ type: T.Type, primaryKey: Any, stored: StoredValue? = nil) -> T? {
        checkThread("object(ofType: \(type.className()))")
        return object(type, info: tableInfo(type), primaryKey: primaryKey, stored: stored)
    }

    /// The same in the table of `info` (a DynamicObject's class).
    func object<T: Object>(_ type: T.Type, info: TableInfo, primaryKey: Any, stored: StoredValue? = nil) -> T? {
        let cls = info.classInfo
        guard let pk = cls.primaryKeyIndex else {
            strataTrap("'\(info.name)' does not have a primary key")
        }
        let fast = stored.flatMap { $0.coreType == cls.primaryKeyType ? $0 : nil }
        guard let value = fast ?? ValueConversion.convertAny(primaryKey, toKindOf: cls.properties[pk]) else {
            let p = cls.properties[pk]
            strataTrap("Invalid value '\(primaryKey)' of type '\(Swift.type(of: primaryKey))' for "
                       + "primary key '\(info.name).\(p.name)'.")
        }
        return found(type, info) { try $0.find(primaryKey: value) }
    }
}

extension Realm {
    /// Every object of the class named `typeName`, seen as DynamicObjects (`object["name"]`).
    /// A name that is no class of this Realm traps naming it.
    public func dynamicObjects(_ typeName: String) -> Results<DynamicObject> {
        instance.checkThread("dynamicObjects(\(typeName))")
        return Results(realm: instance, info: instance.tableInfo(named: typeName))
    }

    /// The object of class `typeName` whose primary key is `key`, as a DynamicObject, or nil.
    public func dynamicObject(ofType typeName: String, forPrimaryKey key: Any) -> DynamicObject? {
        instance.checkThread("dynamicObject(ofType: \(typeName))")
        return instance.object(DynamicObject.self, info: instance.tableInfo(named: typeName), primaryKey: key)
    }

    /// A new object of class `typeName` (values as `create(_:value:update:)` takes them), as a
    /// DynamicObject.
    @discardableResult
    public func dynamicCreate(_ typeName: String, value: Any = [String: Any](), update: UpdatePolicy = .error) -> DynamicObject {
        let info = instance.tableInfo(named: typeName)
        let o = create(info.classInfo.type, value: value, update: update)
        guard let a = o.__accessor else { strataTrap("dynamicCreate(\(typeName)): the object was not added") }
        return instance.managedObject(DynamicObject.self, info: info, key: a.key)
    }
}
