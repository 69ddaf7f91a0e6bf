import Foundation

/// The objects of `Element` that link to this object through a link or list property: the
/// inverse side, kept by the core (never stored by the model).
///
/// ```swift
/// class Dog: Object { @Persisted(originProperty: "dogs") var owners: LinkingObjects<Person> }
/// dog.owners.count   // the people whose dogs list holds this dog
/// ```
/// An unmanaged object has none.
public struct LinkingObjects<Element: Object>: RealmCollection {
    /// The objects, live (read again when the Realm moves), or nil for an unmanaged object's.
    private let results: Results<Element>?
    /// The object whose linking objects these are, and the property: to read them again (in
    /// another version, or another Realm of the file).
    let owner: LinkingOwner?
    /// Set while a key path is probed through these (`\.owners[0].name`).
    private var probe: _KeyPathProbe?

    init(owner: LinkingOwner?, realm: RealmInstance?) {
        self.owner = owner
        if let owner, let realm {
            results = Results(realm: realm, info: realm.tableInfo(Element.self), source: { owner.keys(in: $0) })
        } else {
            results = nil
        }
    }

    init(results: Results<Element>, owner: LinkingOwner?) {
        self.results = results
        self.owner = owner
    }

    /// An unmanaged object's: none.
    public init(fromType: Element.Type, property: String) {
        results = nil
        owner = nil
    }

    public var count: Int { results?.count ?? 0 }

    public subscript(position: Int) -> Element {
        if let probe, let e = probe.element(Element.self) { return e }
        guard let r = results else { strataTrap("Index \(position) is out of bounds: the LinkingObjects of an unmanaged object are empty") }
        return r[position]
    }

    /// The Realm of the object, or nil while it is unmanaged.
    public var realm: Realm? { results?.realm }

    public var isInvalidated: Bool { results?.isInvalidated ?? false }

    public func index(of object: Element) -> Int? { results?.index(of: object) }

    public var _strataResults: Results<Element>? { results }

    /// Iterates the objects linking here when iteration began (a loop that deletes them sees
    /// each once).
    public func makeIterator() -> IndexingIterator<[Element]> { (results.map { Array($0) } ?? []).makeIterator() }

    /// The same linking objects value (or a copy of it): as RealmSwift compares them, two
    /// reads of an object's linking objects property are not equal.
    public static func == (lhs: LinkingObjects, rhs: LinkingObjects) -> Bool {
        switch (lhs.results, rhs.results) {
        case (nil, nil): return true
        case (let a?, let b?): return a.base === b.base
        default: return false
        }
    }

    public var description: String {
        RealmDescription.collection("LinkingObjects", element: Element.self, self, identity: results?.base,
                                    depth: RealmDescription.maxDepth)
    }
}

/// Lets `@Persisted(originProperty:)` apply to linking objects only.
public protocol _LinkingObjectsProtocol {}
extension LinkingObjects: _LinkingObjectsProtocol {}

extension LinkingObjects: _Persistable {
    public static var _strataKind: _PersistedKind {
        _PersistedKind(.link, target: Element.self, collection: .linkingObjects)
    }

    public static func _strataDefault() -> LinkingObjects<Element> { LinkingObjects(owner: nil, realm: nil) }

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
        return LinkingObjects(owner: owner, realm: realm)
    }

    public static func _strataSet(_ at: _ManagedProperty, _ value: LinkingObjects<Element>) {
        strataTrap("'\(at.accessor.info.name).\(at.accessor.info.properties[at.index].name)' is linking objects: "
                   + "they follow the links, and cannot be set")
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

extension LinkingObjects: _ProbingCollection {
    static func _strataProbing(_ probe: _KeyPathProbe) -> Any {
        var l = LinkingObjects(owner: nil, realm: nil)
        l.probe = probe
        return l
    }
}
