import CCore
import Foundation

/// What a managed object holds: its Realm, how its class lives in the file, and its key. Every
/// read and write of a `@Persisted` property of a managed object goes through here.
///
/// A plain value whose references are not counted (a property read copies it and calls into
/// its Realm without retaining anything): whoever keeps one keeps its Realm and TableInfo
/// alive — an object holds them (`Object.__accessor` sets `__holds`), and a temporary accessor
/// lives while its maker holds the Realm (whose TableInfos live as long as it).
struct ObjectAccessor {
    private let realmRef: Unmanaged<RealmInstance>
    private let infoRef: Unmanaged<TableInfo>
    let key: Int64

    init(realm: RealmInstance, info: TableInfo, key: Int64) {
        realmRef = .passUnretained(realm)
        infoRef = .passUnretained(info)
        self.key = key
    }

    var realm: RealmInstance { realmRef.takeUnretainedValue() }
    /// The Realm, not retained (an object's hold on it: Object.hold).
    var realmReference: Unmanaged<RealmInstance> { realmRef }
    var info: TableInfo { infoRef.takeUnretainedValue() }

    /// `body` with the Realm and TableInfo borrowed (not retained: the hot paths).
    @inline(__always)
    private func borrowing<R>(_ body: (RealmInstance, TableInfo) -> R) -> R {
        realmRef._withUnsafeGuaranteedRef { realm in infoRef._withUnsafeGuaranteedRef { body(realm, $0) } }
    }

    var table: CoreTable { realm.table(info) }

    var isInvalidated: Bool {
        if realm.isInvalidated { return true }
        realm.checkThread(info.name)
        return (try? table.exists(key)) != true
    }

    private func what(_ index: Int) -> String { info.propertyPaths[index] }

    /// Trap naming the property when the object is gone (deleted, or its Realm invalidated).
    func trapIfDeleted(_ what: @autoclosure () -> String) {
        if (try? table.exists(key)) != true {
            strataTrap("Object has been deleted or invalidated (\(what())).")
        }
    }

    /// A read failed: the object was deleted, or the file failed.
    private func failRead(_ error: Error, _ index: Int) -> Never {
        trapIfDeleted(what(index))
        strataTrap("cannot read \(what(index)): \(error)")
    }

    /// Property `index`'s value (`threadChecked`: the caller checked the thread).
    func get(_ index: Int, threadChecked: Bool = false) -> StoredValue {
        StoredValue(getRaw(index, threadChecked: threadChecked))
    }

    /// The core's value of property `index` as it hands it out (bytes in the mapped file, valid
    /// while this Realm stays on its version): the typed getters of Int, Double, Bool and
    /// String read it without making a StoredValue.
    func getRaw(_ index: Int, threadChecked: Bool) -> strata_value {
        borrowing { realm, info in
            if !threadChecked { realm.checkThread(info.propertyPaths[index]) }
            do {
                return try realm.table(info).getRaw(key, info.cols[index])
            } catch {
                failRead(error, index)
            }
        }
    }

    /// The property of the field whose storage key path is `keyPath`, if this Realm saw it.
    @inline(__always)
    func cachedPropertyIndex(_ keyPath: ObjectIdentifier, _ what: @autoclosure () -> String) -> Int? {
        borrowing { realm, info in realm.cachedPropertyIndex(info, keyPath, what()) }
    }

    func set(_ index: Int, _ value: StoredValue) {
        if index == info.classInfo.primaryKeyIndex {
            strataTrap("Primary key can't be changed after an object is inserted (\(what(index))).")
        }
        edit(index) { t, key, col in try t.set(key, col, value) }
    }

    /// A change to property `index` (a value or a list): inside a write, on a live object;
    /// failures go to the write (thrown when it commits).
    func edit(_ index: Int, _ body: (CoreTable, Int64, UInt32) throws -> Void) {
        borrowing { realm, info in
            realm.checkThread(info.propertyPaths[index])
            realm.requireWrite(info.propertyPaths[index])
            do {
                try body(realm.table(info), key, info.cols[index])
            } catch {
                trapIfDeleted(what(index))
                realm.fail(error, "cannot change \(what(index))")
            }
        }
    }

    // Lists

    func listCount(_ index: Int) -> Int {
        realm.checkThread(what(index))
        do { return try table.listCount(key, info.cols[index]) } catch { failRead(error, index) }
    }

    func listGet(_ index: Int, _ i: Int) -> StoredValue {
        realm.checkThread(what(index))
        do { return try table.listGet(key, info.cols[index], i) } catch { failRead(error, index) }
    }
}

extension RealmInstance {
    /// A managed object of `type` for `key` (not checked to exist). Its fields are left as
    /// `init()` made them: a managed object's accessors find their property by key path.
    func managedObject<T: Object>(_ type: T.Type, key: Int64) -> T {
        managedObject(type, info: tableInfo(type), key: key)
    }

    /// The object of `a` (another Realm's object of this file) in this Realm, as a `T`: the
    /// class of `a`'s table, which a DynamicObject views without being it.
    func sameObject<T: Object>(_ type: T.Type, as a: ObjectAccessor) -> T {
        managedObject(type, info: tableInfo(a.info.classInfo.type), key: a.key)
    }

    /// The same, with the class's table known.
    func managedObject<T: Object>(_ type: T.Type, info: TableInfo, key: Int64) -> T {
        let o = type.init()
        o.__accessor = ObjectAccessor(realm: self, info: info, key: key)
        return o
    }
}
