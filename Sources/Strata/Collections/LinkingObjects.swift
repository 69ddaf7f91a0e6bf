import Foundation

/// The objects of `Element` that link to this object through a link or list property: the
/// inverse side, kept by the core (never stored by the model).
///
/// ```swift
/// class Dog: Object { @Persisted(originProperty: "dogs") var owners: LinkingObjects<Person> }
/// dog.owners.count   // the people whose dogs list holds this dog
/// ```
/// An unmanaged object has none.
public struct LinkingObjects<Element: Object>: RandomAccessCollection, CustomStringConvertible {
    private let keys: [Int64]
    private let realmInstance: RealmInstance?
    /// The object whose linking objects these are, and the property: to read them again (in
    /// another version, or another Realm of the file).
    let owner: LinkingOwner?

    init(keys: [Int64], realm: RealmInstance?, owner: LinkingOwner? = nil) {
        self.keys = keys
        realmInstance = realm
        self.owner = owner
    }

    public var startIndex: Int { 0 }
    public var endIndex: Int { keys.count }

    public subscript(position: Int) -> Element {
        guard let r = realmInstance else { fatalError("LinkingObjects of an unmanaged object are empty") }
        return r.managedObject(Element.self, key: keys[position])
    }

    /// The Realm of the object, or nil while it is unmanaged.
    public var realm: Realm? { realmInstance.map(Realm.init) }

    public func index(of object: Element) -> Int? {
        guard let a = object.__accessor, a.realm === realmInstance else { return nil }
        return keys.firstIndex(of: a.key)
    }

    public var description: String {
        "LinkingObjects<\(Element.className())> (\(count) objects)"
    }
}

/// Lets `@Persisted(originProperty:)` apply to linking objects only.
public protocol _LinkingObjectsProtocol {}
extension LinkingObjects: _LinkingObjectsProtocol {}

extension LinkingObjects: _Persistable {
    public static var _strataKind: _PersistedKind {
        _PersistedKind(.link, target: Element.self, collection: .linkingObjects)
    }

    public static func _strataDefault() -> LinkingObjects<Element> { LinkingObjects(keys: [], realm: nil) }

    /// The backlinks as they are in the Realm's snapshot now.
    public static func _strataGet(_ at: _ManagedProperty) -> LinkingObjects<Element> {
        let a = at.accessor
        let realm = a.realm
        let p = a.info.properties[at.index]
        let origin = realm.tableInfo(Element.self)
        guard let originIndex = origin.classInfo.index(named: p.originProperty ?? "") else {
            strataTrap("\(a.info.name).\(p.name): '\(Element.className()).\(p.originProperty ?? "")' is not a property")
        }
        realm.checkThread("\(a.info.name).\(p.name)")
        let owner = LinkingOwner(info: a.info, key: a.key, index: at.index, origin: origin, originCol: origin.cols[originIndex])
        return LinkingObjects(keys: owner.keys(in: realm), realm: realm, owner: owner)
    }

    public static func _strataSet(_ at: _ManagedProperty, _ value: LinkingObjects<Element>) {
        strataTrap("'\(at.accessor.info.name).\(at.accessor.info.properties[at.index].name)' is linking objects: "
                   + "they follow the links, and cannot be set")
    }
}

extension LinkingObjects: _QueryableObjects {
    public var _queryResults: Results<Element> {
        guard let r = realmInstance else {
            strataTrap("LinkingObjects<\(Element.className())> of an unmanaged object cannot be queried")
        }
        let keys = self.keys
        if let owner { return Results(realm: r, info: r.tableInfo(Element.self), source: { owner.keys(in: $0) }) }
        return Results(realm: r, info: r.tableInfo(Element.self), source: { _ in keys })
    }
}

extension LinkingObjects: _QueryArgSequence {
    var _strataQueryElements: [Any] { map { $0 as Any } }
}

/// Where linking objects come from: an object (its class and key), its `LinkingObjects`
/// property, and the origin class and property whose links they follow back.
struct LinkingOwner {
    let info: TableInfo
    let key: Int64
    let index: Int
    let origin: TableInfo
    let originCol: UInt32

    /// The linking objects' keys as `realm` reads them now.
    func keys(in realm: RealmInstance) -> [Int64] {
        let what = "\(info.name).\(info.properties[index].name)"
        do {
            return try realm.table(info).backlinks(key, origin: realm.table(origin), col: originCol)
        } catch {
            ObjectAccessor(realm: realm, info: info, key: key).trapIfDeleted(what)
            strataTrap("cannot read \(what): \(error)")
        }
    }
}
