import Foundation

/// The objects of a class in a Realm: lazy (nothing is read until used) and live (after the
/// Realm writes or refreshes, the same `Results` shows the new version).
///
/// ```swift
/// let dogs = realm.objects(Dog.self)
/// dogs.count
/// for dog in dogs { print(dog.name) }
/// ```
public struct Results<Element: RealmCollectionValue>: RandomAccessCollection, CustomStringConvertible {
    let base: ResultsBase

    init(realm: RealmInstance, info: TableInfo) {
        base = ResultsBase(realm: realm, info: info)
    }

    public var startIndex: Int { 0 }
    public var endIndex: Int { count }

    /// How many objects there are (counted by the core; no object is read).
    public var count: Int { base.count() }

    public subscript(position: Int) -> Element {
        let keys = base.keys()
        if position < 0 || position >= keys.count {
            strataTrap("Index \(position) is out of bounds (must be less than \(keys.count)) in Results<\(base.info.name)>.")
        }
        return Element._strataElement(_Stored(.link(keys[position])),
                                      _ElementContext(realm: base.realm, what: "Results<\(base.info.name)>"))
    }

    public var realm: Realm? { Realm(base.realm) }

    /// False: results follow their Realm (frozen results come with part 2).
    public var isFrozen: Bool { false }

    public var isInvalidated: Bool { base.realm.isInvalidated }

    public func index(of object: Element) -> Int? {
        guard let o = object as? Object, let a = o.__accessor, a.realm === base.realm,
              a.info.tableName == base.info.tableName else { return nil }
        return base.keys().firstIndex(of: a.key)
    }

    public var description: String { "Results<\(base.info.name)> (\(count) objects)" }
}

/// What a `Results` shares among its copies: the source and the keys of the version last read.
final class ResultsBase {
    let realm: RealmInstance
    let info: TableInfo
    private var cachedKeys: [Int64] = []
    private var cachedVersion: UInt64 = .max
    private var cachedMutations: UInt64 = .max

    init(realm: RealmInstance, info: TableInfo) {
        self.realm = realm
        self.info = info
    }

    func count() -> Int {
        realm.checkThread("Results<\(info.name)>")
        do { return try realm.table(info).count() } catch { strataTrap("cannot count \(info.name): \(error)") }
    }

    /// The keys in the Realm's current snapshot (read again whenever it moved or a write
    /// changed something since).
    func keys() -> [Int64] {
        realm.checkThread("Results<\(info.name)>")
        if cachedVersion != realm.version || cachedMutations != realm.mutationCount {
            do { cachedKeys = try realm.table(info).keys() } catch {
                strataTrap("cannot read \(info.name): \(error)")
            }
            cachedVersion = realm.version
            cachedMutations = realm.mutationCount
        }
        return cachedKeys
    }
}
