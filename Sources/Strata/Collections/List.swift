import Foundation

/// An ordered list property: of primitives (`List<Int>`, `List<String?>`, …) or of objects
/// (`List<Dog>`). Unmanaged, it is an array in the object; managed, every read and change goes
/// to the file (changes inside a write).
///
/// ```swift
/// class Person: Object { @Persisted var dogs: List<Dog> }
/// try realm.write { person.dogs.append(dog); person.dogs.move(from: 0, to: 2) }
/// ```
public final class List<Element: RealmCollectionValue>: RealmCollection, RangeReplaceableCollection, MutableCollection {
    private var items: [Element]
    private(set) var managed: _ManagedProperty?
    /// Set while a key path is probed through this list (`\.dogs[0].name`).
    private var probe: _KeyPathProbe?

    /// An empty, unmanaged list.
    public init() {
        items = []
        managed = nil
    }

    init(managed: _ManagedProperty) {
        items = []
        self.managed = managed
    }

    private var context: _ElementContext { managed!.elementContext }

    /// The Realm of the object holding the list, or nil while unmanaged.
    public var realm: Realm? { managed.map { Realm($0.accessor.realm) } }

    /// True once the object holding the list was deleted.
    public var isInvalidated: Bool { managed?.accessor.isInvalidated ?? false }

    // MARK: reading

    public var startIndex: Int { 0 }
    public var endIndex: Int { count }

    public var count: Int {
        guard let m = managed else { return items.count }
        return m.accessor.listCount(m.index)
    }

    public subscript(position: Int) -> Element {
        get {
            if let probe, let e = probe.element(Element.self) { return e }
            guard let m = managed else { return items[position] }
            checkIndex(position, count)
            return Element._strataElement(_Stored(m.accessor.listGet(m.index, position)), context)
        }
        set { replace(index: position, object: newValue) }
    }

    /// The first index of an element equal to `object` (objects: the same object), or nil.
    public func index(of object: Element) -> Int? {
        if managed != nil, let o = object as? Object {
            return firstIndex { ($0 as? Object)?.isSameObject(as: o) == true }
        }
        if managed != nil, let a = object as? AnyRealmValue, case .object(let o) = a { // a mixed value's object
            return firstIndex { e in
                guard let x = e as? AnyRealmValue, case .object(let eo) = x else { return false }
                return eo.isSameObject(as: o)
            }
        }
        return firstIndex(of: object)
    }

    // MARK: changing

    /// Iterates the elements the list held when iteration began.
    public func makeIterator() -> RLMIterator<Element> {
        managed.map { RLMIterator(managed: $0) } ?? RLMIterator(unmanaged: items)
    }

    /// Replace the elements in `subrange` with `newElements` (a managed list: inside a write).
    public func replaceSubrange<C: Collection>(_ subrange: Range<Int>, with newElements: C) where C.Element == Element {
        guard managed != nil else { items.replaceSubrange(subrange, with: newElements); return }
        let n = count
        if subrange.lowerBound < 0 || subrange.upperBound > n {
            strataTrap("Range \(subrange) is out of bounds (the count is \(n)) in \(context.what).")
        }
        for _ in subrange { remove(at: subrange.lowerBound) }
        for (i, e) in newElements.enumerated() { insert(e, at: subrange.lowerBound + i) }
    }

    public typealias SubSequence = Slice<List>

    /// The elements in `bounds` (get), or replaces them with others of any count (set).
    public subscript(bounds: Range<Int>) -> Slice<List> {
        get { Slice(base: self, bounds: bounds) }
        set { replaceSubrange(bounds, with: Array(newValue)) }
    }

    /// Remove the first `number` elements (more than the list holds traps naming both).
    public func removeFirst(_ number: Int = 1) {
        checkRemoval(number)
        for _ in 0..<number { remove(at: 0) }
    }

    /// Remove the last `number` elements.
    public func removeLast(_ number: Int = 1) {
        checkRemoval(number)
        for _ in 0..<number { remove(at: count - 1) }
    }

    private func checkRemoval(_ number: Int) {
        if number < 0 { strataTrap("Cannot pass a negative value (\(number)) to remove elements of List<\(Element.self)>.") }
        if number > count {
            strataTrap("It is not possible to remove more objects (\(number)) from a list than it already contains (\(count)).")
        }
    }

    /// Insert the elements of `newElements` before `i`.
    public func insert<C: Collection>(contentsOf newElements: C, at i: Int) where C.Element == Element {
        for (offset, e) in newElements.enumerated() { insert(e, at: i + offset) }
    }

    /// Remove the elements in a range.
    public func removeSubrange<R: RangeExpression>(_ bounds: R) where R.Bound == Int {
        let r = bounds.relative(to: self)
        for _ in r { remove(at: r.lowerBound) }
    }

    /// Remove the elements at these positions.
    public func remove(atOffsets offsets: IndexSet) {
        for offset in offsets.reversed() { remove(at: offset) }
    }

    /// Move the elements at `offsets` to before `destination` (SwiftUI's list editing).
    public func move(fromOffsets offsets: IndexSet, toOffset destination: Int) {
        for offset in offsets { move(from: offset, to: destination > offset ? destination - 1 : destination) }
    }

    /// Append at the end.
    public func append(_ object: Element) { insert(object, at: count) }

    public func append<S: Sequence>(contentsOf objects: S) where S.Element == Element {
        for o in objects { append(o) }
    }

    /// Append every element of `objects` (RealmSwift's spelling).
    public func append<S: Sequence>(objectsIn objects: S) where S.Element == Element {
        for o in objects { append(o) }
    }

    /// Insert before `index` (`count` appends).
    public func insert(_ object: Element, at index: Int) {
        guard let m = managed else { items.insert(object, at: index); return }
        checkIndex(index, count + 1)
        let ctx = context
        let v = Element._strataStore(object, ctx).value
        m.accessor.edit(m.index) { t, key, col in try t.listInsert(key, col, index, v) }
    }

    /// Replace the element at `index`.
    public func replace(index: Int, object: Element) {
        guard let m = managed else { items[index] = object; return }
        checkIndex(index, count)
        let v = Element._strataStore(object, context).value
        m.accessor.edit(m.index) { t, key, col in try t.listSet(key, col, index, v) }
    }

    @discardableResult
    public func remove(at index: Int) -> Element {
        guard let m = managed else { return items.remove(at: index) }
        let old = self[index]
        m.accessor.edit(m.index) { t, key, col in try t.listRemove(key, col, index) }
        return old
    }


    /// Removes every element (objects stay in the Realm; embedded ones are deleted). Traps outside a write.
    public func removeAll() {
        guard let m = managed else { items.removeAll(); return }
        m.accessor.edit(m.index) { t, key, col in try t.listClear(key, col) }
    }

    /// Move the element at `from` so that it ends up at `to`.
    public func move(from: Int, to: Int) {
        guard let m = managed else {
            let x = items.remove(at: from)
            items.insert(x, at: to)
            return
        }
        let n = count
        checkIndex(from, n)
        checkIndex(to, n)
        m.accessor.edit(m.index) { t, key, col in try t.listMove(key, col, from: from, to: to) }
    }

    /// Exchange the elements at `index1` and `index2`.
    public func swapAt(_ index1: Int, _ index2: Int) {
        guard managed != nil else { items.swapAt(index1, index2); return }
        if index1 == index2 { return }
        let (lo, hi) = (Swift.min(index1, index2), Swift.max(index1, index2))
        move(from: lo, to: hi)
        move(from: hi - 1, to: lo)
    }

    private func checkIndex(_ i: Int, _ n: Int) {
        if i < 0 || i >= n {
            strataTrap("Index \(i) is out of bounds (must be less than \(n)) in \(context.what).")
        }
    }

    public var description: String { _strataDescription(depth: RealmDescription.maxDepth) }
}

extension List: _Persistable {
    public static var _strataKind: _PersistedKind {
        let e = Element._strataElementKind
        return _PersistedKind(e.type, optional: e.optional, target: e.target, collection: .list)
    }

    public static func _strataDefault() -> List<Element> { List() }

    public static func _strataGet(_ at: _ManagedProperty) -> List<Element> { List(managed: at) }

    /// Assigning a list copies its elements (a list of another object, or an unmanaged one).
    public static func _strataSet(_ at: _ManagedProperty, _ value: List<Element>) {
        if let m = value.managed, m.object === at.object, m.index == at.index { return }
        let elements = Array(value)
        let target = List(managed: at)
        let realm = at.accessor.realm
        if realm.updatingExisting > 0, Element.self is EmbeddedObject.Type {
            // add(_:update:) of an existing object: its embedded elements take the new values in place
            let old = (0..<target.count).map { i -> Int64? in
                if case .link(let k) = at.accessor.listGet(at.index, i) { return k } else { return nil }
            }
            for (i, e) in elements.enumerated() {
                if i < old.count, let o = e as? Object, realm.embeddedInPlace(o, replacing: old[i]) != nil { continue }
                if i < old.count { target.replace(index: i, object: e) } else { target.append(e) }
            }
            while target.count > elements.count { target.remove(at: target.count - 1) }
            return
        }
        target.removeAll()
        for e in elements { target.append(e) }
    }
}

extension List: ListBacked {
    static var kindName: String { "List" }

    public var _strataResults: Results<Element>? { listResults }

    /// The same list (the same property of the same object), or two unmanaged lists with the
    /// same elements in the same order, as RealmSwift compares them.
    public static func == (lhs: List, rhs: List) -> Bool { lhs.isEqual(to: rhs, ordered: true) }

    /// NSObject's equality (RealmSwift's lists are NSObjects): `==` with another List.
    public func isEqual(_ object: Any?) -> Bool { isEqualCollection(object) }

    /// Key-value coding as RealmSwift's List has it: each element's value for `key` ("self": the
    /// elements), as objects.
    public func value(forKey key: String) -> [AnyObject] { objectValues(forKeyPath: key) }

    /// Values through links (`"dog.name"`) or a collection operator (`"@count"`), as objects.
    public func value(forKeyPath keyPath: String) -> [AnyObject] { objectValues(forKeyPath: keyPath) }
}

extension List: _QueryArgSequence where Element: Object {
    var _strataQueryElements: [Any] { map { $0 as Any } }
}

extension List: _Describable {
    func _strataDescription(depth: Int) -> String {
        RealmDescription.collection("List", element: Element.self, self, identity: self, depth: depth)
    }
}

extension List: _ProbingCollection {
    static func _strataProbing(_ probe: _KeyPathProbe) -> Any {
        let l = List()
        l.probe = probe
        return l
    }
}

extension List: _AdoptedOnAdd {
    func _strataAdopt(_ at: _ManagedProperty) {
        guard managed == nil else { return }
        managed = at
        items = []
    }
}
