import Foundation

/// What `List` and `MutableSet` share beyond `PropertyCollection`: a collection property stored
/// by the core as a list (a set's elements unique). Their live results, equality and
/// observation are written once here.
protocol ListBacked: PropertyCollection, RealmCollection {}

extension ListBacked {
    /// The collection as live results: its objects, or its values (sorted and made distinct in
    /// Swift), in its order; nil while unmanaged.
    var listResults: Results<Element>? { elementResults(Element.self) }

    /// NSObject's equality, as RealmSwift's collections have it (`==` with a collection of the
    /// same type, false for anything else).
    func isEqualCollection(_ object: Any?) -> Bool {
        guard let other = object as? Self else { return false }
        return self == other
    }

    /// RealmSwift's equality: two unmanaged collections with the same elements (`ordered`: in
    /// the same order), else the same collection.
    func isEqual(to other: Self, ordered: Bool) -> Bool {
        if managed == nil && other.managed == nil {
            guard count == other.count else { return false }
            if ordered { return zip(self, other).allSatisfy { $0 == $1 } }
            let mine = Array(self)
            return other.allSatisfy { e in mine.contains(e) }
        }
        return isSameCollection(as: other)
    }

    /// `value(forKeyPath:)` of RealmCollection as an array of objects (List's and MutableSet's
    /// own key-value coding): an operator's single value is the one element.
    func objectValues(forKeyPath keyPath: String) -> [AnyObject] {
        guard keyPath.hasPrefix("@") else { return keyPathValues(keyPath).map { $0 as AnyObject } }
        guard let v = (self as any RealmCollection).value(forKeyPath: keyPath) else { return [] }
        if let a = v as? [Any] { return a.map { $0 as AnyObject } }
        return [v as AnyObject]
    }

    /// Observe the collection (List.observe, MutableSet.observe).
    func observeList(keyPaths: [String]?, on queue: DispatchQueue?,
                     _ block: @escaping (RealmCollectionChange<Self>) -> Void) -> NotificationToken {
        guard let m = managed else {
            strataTrap("Only \(Self.kindName)s of objects managed by a Realm support change notifications (\(Self.kindName)<\(Element.self)>).")
        }
        let a = m.accessor
        let (info, key, index) = (a.info, a.key, m.index)
        return Observation.register(a.realm, queue: queue, what: "observe \(info.name).\(info.properties[index].name)",
                                    onError: { block(.error($0)) }) { home, token in
            let collection: Self
            let owner: ObjectAccessor
            if home === a.realm {
                collection = self
                owner = a
            } else {
                owner = ObjectAccessor(realm: home, info: home.tableInfo(info.classInfo.type), key: key)
                collection = self.rebound(m, to: home)
            }
            return ListObserver(list: collection, owner: owner, index: index, keyPaths: keyPaths, token: token, block: block)
        }
    }
}

/// The iterator of `List` and `MutableSet` (RealmSwift's name): it walks the elements the
/// collection held when iteration began, so a loop that deletes or moves them (`for d in
/// person.dogs { realm.delete(d) }`) sees each once.
public struct RLMIterator<Element: RealmCollectionValue>: IteratorProtocol {
    private let unmanaged: [Element]
    /// Managed: the elements' values when iteration began, and where they are read.
    private let values: [StoredValue]
    private let context: _ElementContext?
    private var i = 0

    init(unmanaged items: [Element]) {
        unmanaged = items
        values = []
        context = nil
    }

    init(managed m: _ManagedProperty) {
        let a = m.accessor
        unmanaged = []
        values = (0..<a.listCount(m.index)).map { a.listGet(m.index, $0) }
        context = m.elementContext
    }

    public mutating func next() -> Element? {
        defer { i += 1 }
        guard let context else { return i < unmanaged.count ? unmanaged[i] : nil }
        return i < values.count ? Element._strataElement(_Stored(values[i]), context) : nil
    }
}

