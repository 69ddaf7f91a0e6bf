import Foundation

/// An unordered collection of unique values or objects (`MutableSet<String>`, `MutableSet<Dog>`),
/// as RealmSwift declares it. Unmanaged, it is held in the object; managed, every read and change
/// goes to the file (the core keeps the elements unique), changes inside a write.
///
/// ```swift
/// class Person: Object { @Persisted var tags: MutableSet<String> }
/// try realm.write { person.tags.insert("a"); person.tags.formUnion(other.tags) }
/// realm.objects(Person.self).where { $0.tags.contains("a") }
/// ```
/// Positions (`set[0]`) follow the file's order, which has no meaning and changes as the set
/// does; `index(of:)` is not offered, as in RealmSwift.
public final class MutableSet<Element: RealmCollectionValue>: RealmCollection {
    /// Unmanaged: the elements, unique, in the order they were inserted.
    private var items: [Element]
    private(set) var managed: _ManagedProperty?
    /// Set while a key path is probed through this set (`\.tags[0].name`).
    private var probe: _KeyPathProbe?

    /// An empty, unmanaged set.
    public init() {
        items = []
        managed = nil
    }

    init(managed: _ManagedProperty) {
        items = []
        self.managed = managed
    }

    private var context: _ElementContext { managed!.elementContext }

    /// The Realm of the object holding the set, or nil while unmanaged.
    public var realm: Realm? { managed.map { Realm($0.accessor.realm) } }
    public var isInvalidated: Bool { managed?.accessor.isInvalidated ?? false }

    public var count: Int {
        guard let m = managed else { return items.count }
        return m.accessor.listCount(m.index)
    }

    /// The element at a position of the file's (meaningless) order.
    public subscript(position: Int) -> Element {
        if let probe, let e = probe.element(Element.self) { return e }
        guard let m = managed else { return items[position] }
        let n = count
        if position < 0 || position >= n {
            strataTrap("Index \(position) is out of bounds (must be less than \(n)) in \(context.what).")
        }
        return Element._strataElement(_Stored(m.accessor.listGet(m.index, position)), context)
    }

    /// Iterates the elements the set held when iteration began.
    public func makeIterator() -> RLMIterator<Element> {
        managed.map { RLMIterator(managed: $0) } ?? RLMIterator(unmanaged: items)
    }

    /// Not offered by RealmSwift on a set (its order has no meaning): a programmer error.
    public func index(of object: Element) -> Int? {
        strataTrap("index(of:) is not available on MutableSet")
    }

    /// The core's value of `e` to look it up: nil when it cannot be in the set (an object this
    /// Realm does not manage). Looking up never adds an object to the Realm.
    private func lookupValue(_ e: Element) -> StoredValue? {
        if let o = e as? Object {
            guard let a = o.__accessor, a.realm === managed?.accessor.realm else { return nil }
            return .link(a.key)
        }
        return Element._strataStore(e, context).value
    }

    /// Whether the set holds `object` (for objects: that object).
    public func contains(_ object: Element) -> Bool {
        guard let m = managed else { return items.contains(object) }
        guard let v = lookupValue(object) else { return false }
        let a = m.accessor
        a.realm.checkThread(context.what)
        do { return try a.realm.table(a.info).setFind(a.key, a.info.cols[m.index], v) != nil } catch {
            a.trapIfDeleted(context.what)
            strataTrap("cannot read \(context.what): \(error)")
        }
    }

    /// Whether every element of this set is in `possibleSuperset`.
    public func isSubset(of possibleSuperset: MutableSet<Element>) -> Bool {
        allSatisfy { possibleSuperset.contains($0) }
    }

    /// Whether the two sets share an element.
    public func intersects(_ otherSet: MutableSet<Element>) -> Bool {
        contains { otherSet.contains($0) }
    }

    /// Add `object` unless the set holds it (managed: inside a write; an unmanaged object is
    /// added to the Realm).
    public func insert(_ object: Element) {
        guard let m = managed else {
            if !items.contains(object) { items.append(object) }
            return
        }
        let v = Element._strataStore(object, context).value
        m.accessor.edit(m.index) { t, key, col in try t.setInsert(key, col, v) }
    }

    /// Add each element of `objects` the set does not hold.
    public func insert<S: Sequence>(objectsIn objects: S) where S.Iterator.Element == Element {
        for o in objects { insert(o) }
    }

    /// Remove `object` if the set holds it.
    public func remove(_ object: Element) {
        guard let m = managed else {
            items.removeAll { $0 == object }
            return
        }
        guard let v = lookupValue(object) else { return m.accessor.realm.requireWrite(context.what) }
        m.accessor.edit(m.index) { t, key, col in try t.setErase(key, col, v) }
    }

    /// Remove every element.
    public func removeAll() {
        guard let m = managed else { items.removeAll(); return }
        m.accessor.edit(m.index) { t, key, col in try t.listClear(key, col) }
    }

    /// Keep only the elements `other` holds too.
    public func formIntersection(_ other: MutableSet<Element>) {
        for e in Array(self) where !other.contains(e) { remove(e) }
    }

    /// Remove the elements `other` holds.
    public func subtract(_ other: MutableSet<Element>) {
        for e in Array(other) { remove(e) }
    }

    /// Add the elements of `other`.
    public func formUnion(_ other: MutableSet<Element>) {
        for e in Array(other) { insert(e) }
    }

    public var description: String { _strataDescription(depth: RealmDescription.maxDepth) }

    // RealmCollection

    public var _strataResults: Results<Element>? { listResults }

    /// The same set: one unmanaged instance, or the same property of the same object.
    /// The same set (the same property of the same object), or two unmanaged sets with the same
    /// elements, as RealmSwift compares them.
    public static func == (lhs: MutableSet, rhs: MutableSet) -> Bool { lhs.isEqual(to: rhs, ordered: false) }

    /// NSObject's equality (RealmSwift's sets are NSObjects): `==` with another MutableSet.
    public func isEqual(_ object: Any?) -> Bool { isEqualCollection(object) }

    public func observe(keyPaths: [String]? = nil, on queue: DispatchQueue? = nil,
                        _ block: @escaping (RealmCollectionChange<MutableSet<Element>>) -> Void) -> NotificationToken {
        observeList(keyPaths: keyPaths, on: queue, block)
    }

    /// Whether the set is frozen: it reads one version, from any thread, and never changes.
    public var isFrozen: Bool { managed?.accessor.realm.isFrozen ?? false }
    public func freeze() -> MutableSet<Element> { frozenCopy }
    public func thaw() -> MutableSet<Element>? { thawedCopy }
    public func _strataFound(in realm: Realm) -> MutableSet<Element>? { found(in: realm) }
}

extension MutableSet: ListBacked {
    static var kindName: String { "MutableSet" }

    /// Key-value coding as RealmSwift's MutableSet has it (a set's values: each distinct value once,
    /// as NSSet gives them): the elements' values for `key` ("self": the elements), as objects.
    public func value(forKey key: String) -> [AnyObject] { ValueConversion.distinct(objectValues(forKeyPath: key)).map { $0 as AnyObject } }

    /// Key-value coding as RealmSwift's MutableSet inherits it from NSObject (`value(forKey:) as
    /// Any?`, and generic code over `RealmCollection`): the elements' distinct values for `key`
    /// as a set (nil as NSNull), as NSSet gives them.
    public func value(forKey key: String) -> Any? {
        Set(keyPathValues(key).map { v -> AnyHashable in
            if ValueConversion.isNil(v) { return AnyHashable(NSNull()) }
            return (v as? AnyHashable) ?? AnyHashable(ObjectIdentifier(v as AnyObject))
        })
    }
}

extension MutableSet: _Persistable {
    public static var _strataKind: _PersistedKind {
        let e = Element._strataElementKind
        return _PersistedKind(e.type, optional: e.optional, target: e.target, collection: .set)
    }

    public static func _strataDefault() -> MutableSet<Element> { MutableSet() }

    public static func _strataGet(_ at: _ManagedProperty) -> MutableSet<Element> { MutableSet(managed: at) }

    /// Assigning a set copies its elements.
    public static func _strataSet(_ at: _ManagedProperty, _ value: MutableSet<Element>) {
        if let m = value.managed, m.object === at.object, m.index == at.index { return }
        let elements = Array(value)
        let target = MutableSet(managed: at)
        target.removeAll()
        for e in elements { target.insert(e) }
    }
}

extension MutableSet: _HasPersistedType {
    /// A set is stored as itself.
    public typealias PersistedType = MutableSet
}
extension MutableSet: _RealmSchemaDiscoverable where Element: _RealmSchemaDiscoverable {}

extension MutableSet: _QueryArgSequence where Element: Object {
    var _strataQueryElements: [Any] { map { $0 as Any } }
}

extension MutableSet: _StrataListType {
    /// From an array or another sequence of convertible elements (Object(value:)).
    static func _strataFrom(_ value: Any) -> Any? {
        let items: [Any]
        if ValueConversion.isNil(value) { items = [] } else if let a = value as? [Any] { items = a } else if let s = value as? any Sequence { items = s.map { $0 as Any } } else {
            return nil
        }
        let set = MutableSet<Element>()
        for x in items {
            guard let e = ValueConversion.convert(x, to: Element.self) else { return nil }
            set.insert(e)
        }
        return set
    }
}

extension MutableSet: Decodable where Element: Decodable {
    public convenience init(from decoder: Decoder) throws {
        self.init()
        var container = try decoder.unkeyedContainer()
        while !container.isAtEnd { insert(try container.decode(Element.self)) }
    }
}

extension MutableSet: Encodable where Element: Encodable {}

extension MutableSet: _Describable {
    func _strataDescription(depth: Int) -> String {
        RealmDescription.collection("MutableSet", element: Element.self, self, identity: self, depth: depth)
    }
}

extension MutableSet: _ProbingCollection {
    static func _strataProbing(_ probe: _KeyPathProbe) -> Any {
        let s = MutableSet()
        s.probe = probe
        return s
    }
}

extension MutableSet: _AdoptedOnAdd {
    func _strataAdopt(_ at: _ManagedProperty) {
        guard managed == nil else { return }
        managed = at
        items = []
    }
}
