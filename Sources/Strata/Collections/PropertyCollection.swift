import Foundation

/// What a collection property (`List`, `MutableSet`, `Map`) is once managed: its object and the
/// property's place, reached again in another Realm of the file (frozen, thawed, on another
/// thread). Written once here for all of them.
protocol PropertyCollection: AnyObject {
    /// The object and property, or nil while unmanaged.
    var managed: _ManagedProperty? { get }
    init(managed: _ManagedProperty)
    /// For messages: "List", "MutableSet" or "Map".
    static var kindName: String { get }
}

extension PropertyCollection {
    /// The elements (a map's values) as live results: their objects (nil ones left out), or
    /// their values, in the collection's order; nil while unmanaged.
    func elementResults<E: RealmCollectionValue>(_: E.Type) -> Results<E>? {
        guard let m = managed else { return nil }
        let realm = m.accessor.realm
        let (owner, key, index) = (m.accessor.info, m.accessor.key, m.index)
        guard let target = E._strataElementKind.target, E._strataElementKind.type == .link else {
            return Results(realm: realm, info: owner, valueList: ValueList(key: key, index: index, elementName: "\(E.self)"))
        }
        return Results(realm: realm, info: realm.tableInfo(target), source: { r in
            let a = ObjectAccessor(realm: r, info: r.tableInfo(owner.classInfo.type), key: key)
            return (0..<a.listCount(index)).compactMap {
                if case .link(let k) = a.listGet(index, $0) { return k } else { return nil }
            }
        })
    }

    /// The same collection: one unmanaged instance, or the same property of the same object.
    func isSameCollection(as other: Self) -> Bool {
        if self === other { return true }
        guard let a = managed, let b = other.managed else { return false }
        return a.index == b.index && a.accessor.key == b.accessor.key
            && a.accessor.info.tableName == b.accessor.info.tableName && a.accessor.realm === b.accessor.realm
    }

    /// The same property of the same object, in another Realm of the file.
    func rebound(_ m: _ManagedProperty, to realm: RealmInstance) -> Self {
        let a = m.accessor
        let o = a.info.classInfo.type.init()
        o.__accessor = ObjectAccessor(realm: realm, info: realm.tableInfo(a.info.classInfo.type), key: a.key)
        return Self(managed: _ManagedProperty(object: o, index: m.index))
    }

    var frozenCopy: Self {
        guard let m = managed else {
            strataTrap("Only \(Self.kindName)s of objects managed by a Realm can be frozen (\(Self.self)).")
        }
        if m.accessor.realm.isFrozen { return self }
        return rebound(m, to: m.accessor.realm.frozenRealm())
    }

    var thawedCopy: Self? {
        guard let m = managed else { return nil }
        if !m.accessor.realm.isFrozen { return self }
        let live = m.accessor.realm.liveRealm()
        guard (try? live.table(m.accessor.info).exists(m.accessor.key)) == true else { return nil }
        return rebound(m, to: live)
    }

    func found(in realm: Realm) -> Self? {
        guard let m = managed else { return nil }
        let r = realm.instance
        guard (try? r.table(m.accessor.info).exists(m.accessor.key)) == true else { return nil }
        return rebound(m, to: r)
    }
}
