import Foundation

/// Any Realm collection of `Element`s behind one type (RealmSwift's type-erased collection):
/// code that keeps a `Results`, a `List` or a `LinkingObjects` in one property.
///
/// ```swift
/// let dogs: AnyRealmCollection<Dog> = someCondition ? AnyRealmCollection(person.dogs)
///                                                   : AnyRealmCollection(realm.objects(Dog.self))
/// ```
public struct AnyRealmCollection<Element: RealmCollectionValue>: RealmCollection {
    private let box: _AnyRealmCollectionBox<Element>

    /// Wraps `base`: every call goes to it.
    public init<C: RealmCollection>(_ base: C) where C.Element == Element {
        box = _AnyRealmCollectionImpl(base)
    }

    private init(box: _AnyRealmCollectionBox<Element>) { self.box = box }

    public var realm: Realm? { box.realm }
    public var isInvalidated: Bool { box.isInvalidated }
    public var count: Int { box.count }
    public subscript(position: Int) -> Element { box[position] }
    /// Iterates the elements the collection held when iteration began (as the wrapped
    /// collection's own iterator does).
    public func makeIterator() -> IndexingIterator<[Element]> { box.elements().makeIterator() }
    public var description: String {
        RealmDescription.collection("AnyRealmCollection", element: Element.self, self, identity: box)
    }
    public func index(of object: Element) -> Int? { box.index(of: object) }
    /// Whether the collection is frozen: it reads one version, from any thread, and never changes.
    public var isFrozen: Bool { box.isFrozen }
    public func freeze() -> AnyRealmCollection { AnyRealmCollection(box: box.freeze()) }
    public func thaw() -> AnyRealmCollection? { box.thaw().map { AnyRealmCollection(box: $0) } }
    public var _strataResults: Results<Element>? { box.results }
    public func _strataFound(in realm: Realm) -> AnyRealmCollection? {
        box.found(in: realm).map { AnyRealmCollection(box: $0) }
    }

    /// Changes of the underlying collection, reported as changes of this one.
    public func observe(keyPaths: [String]?, on queue: DispatchQueue?,
                        _ block: @escaping (RealmCollectionChange<AnyRealmCollection>) -> Void) -> NotificationToken {
        box.observe(keyPaths: keyPaths, on: queue) { change in
            switch change {
            case .initial(let c): block(.initial(AnyRealmCollection(box: c)))
            case .update(let c, let d, let i, let m):
                block(.update(AnyRealmCollection(box: c), deletions: d, insertions: i, modifications: m))
            case .error(let e): block(.error(e))
            }
        }
    }

    /// Two wrappers of the same collection.
    public static func == (lhs: AnyRealmCollection, rhs: AnyRealmCollection) -> Bool { lhs.box.isEqual(rhs.box) }
}

/// The wrapped collection's calls (the base of `_AnyRealmCollectionImpl`).
class _AnyRealmCollectionBox<Element: RealmCollectionValue> {
    var realm: Realm? { fatalError() }
    var isInvalidated: Bool { fatalError() }
    var count: Int { fatalError() }
    subscript(position: Int) -> Element { fatalError() }
    func elements() -> [Element] { fatalError() }
    var description: String { fatalError() }
    func index(of object: Element) -> Int? { fatalError() }
    var isFrozen: Bool { fatalError() }
    func freeze() -> _AnyRealmCollectionBox { fatalError() }
    func thaw() -> _AnyRealmCollectionBox? { fatalError() }
    var results: Results<Element>? { fatalError() }
    func found(in realm: Realm) -> _AnyRealmCollectionBox? { fatalError() }
    func observe(keyPaths: [String]?, on queue: DispatchQueue?,
                 _ block: @escaping (RealmCollectionChange<_AnyRealmCollectionBox>) -> Void) -> NotificationToken { fatalError() }
    func isEqual(_ other: _AnyRealmCollectionBox) -> Bool { fatalError() }
}

final class _AnyRealmCollectionImpl<C: RealmCollection>: _AnyRealmCollectionBox<C.Element> {
    let base: C
    init(_ base: C) { self.base = base }

    override var realm: Realm? { base.realm }
    override var isInvalidated: Bool { base.isInvalidated }
    override var count: Int { base.count }
    override subscript(position: Int) -> C.Element { base[position] }
    override func elements() -> [C.Element] { Array(base) }
    override var description: String { base.description }
    override func index(of object: C.Element) -> Int? { base.index(of: object) }
    override var isFrozen: Bool { base.isFrozen }
    override func freeze() -> _AnyRealmCollectionBox<C.Element> { _AnyRealmCollectionImpl(base.freeze()) }
    override func thaw() -> _AnyRealmCollectionBox<C.Element>? { base.thaw().map { _AnyRealmCollectionImpl($0) } }
    override var results: Results<C.Element>? { base._strataResults }
    override func found(in realm: Realm) -> _AnyRealmCollectionBox<C.Element>? {
        base._strataFound(in: realm).map { _AnyRealmCollectionImpl($0) }
    }
    override func observe(keyPaths: [String]?, on queue: DispatchQueue?,
                          _ block: @escaping (RealmCollectionChange<_AnyRealmCollectionBox<C.Element>>) -> Void) -> NotificationToken {
        base.observe(keyPaths: keyPaths, on: queue) { change in
            switch change {
            case .initial(let c): block(.initial(_AnyRealmCollectionImpl(c)))
            case .update(let c, let d, let i, let m):
                block(.update(_AnyRealmCollectionImpl(c), deletions: d, insertions: i, modifications: m))
            case .error(let e): block(.error(e))
            }
        }
    }
    override func isEqual(_ other: _AnyRealmCollectionBox<C.Element>) -> Bool {
        guard let o = other as? _AnyRealmCollectionImpl<C> else { return false }
        return base == o.base
    }
}
