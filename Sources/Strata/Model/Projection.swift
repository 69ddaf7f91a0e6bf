import Foundation

// RealmSwift's projections: a view model over an object, whose `@Projected` properties read (and
// write) key paths of the root object, through links and, with `projectTo`, the elements of its
// collections. Results of a projection class are the root class's objects, each wrapped;
// observing a projection observes its root and reports the projected properties that changed.
//
//     class PersonProjection: Projection<Person> {
//         @Projected(\Person.firstName) var firstName
//         @Projected(\Person.address.city) var homeCity
//         @Projected(\Person.friends.projectTo.firstName) var friendsNames: ProjectedCollection<String>
//     }
//     let people = realm.objects(PersonProjection.self).filter("firstName BEGINSWITH 'J'")

/// A projected property of any value type (the schema's view of `@Projected`).
private protocol AnyProjected {
    var projectedKeyPath: AnyKeyPath { get }
}

/// A property of a ``Projection`` that reads `projectedKeyPath` of the root object (and writes
/// it, inside a write, when the key path is writable).
@propertyWrapper
public struct Projected<T: ObjectBase, Value>: AnyProjected {
    fileprivate let _projectedKeyPath: KeyPath<T, Value>
    var projectedKeyPath: AnyKeyPath { _projectedKeyPath }

    /// Not available: `@Projected` reads through its projection's root object.
    @available(*, unavailable, message: "@Projected can only be used on a Projection")
    public var wrappedValue: Value {
        get { fatalError("@Projected can only be used on a Projection") }
        // swiftlint:disable:next unused_setter_value
        set { fatalError("@Projected can only be used on a Projection") }
    }

    /// The value at the key path of the projection's root object; setting it writes the root
    /// (traps outside a write, or when the key path cannot be written).
    public static subscript<EnclosingSelf: Projection<T>>(
        _enclosingInstance observed: EnclosingSelf,
        wrapped wrappedKeyPath: ReferenceWritableKeyPath<EnclosingSelf, Value>,
        storage storageKeyPath: ReferenceWritableKeyPath<EnclosingSelf, Projected<T, Value>>
    ) -> Value {
        get { observed.rootObject[keyPath: observed[keyPath: storageKeyPath]._projectedKeyPath] }
        set {
            guard let kp = observed[keyPath: storageKeyPath]._projectedKeyPath as? ReferenceWritableKeyPath<T, Value> else {
                strataTrap("Cannot set \(type(of: observed)).\(wrappedKeyPath): its projected key path cannot be written")
            }
            observed.rootObject[keyPath: kp] = newValue
        }
    }

    /// A projected property reading `projectedKeyPath` of the root object.
    public init(_ projectedKeyPath: KeyPath<T, Value>) {
        _projectedKeyPath = projectedKeyPath
    }
}

/// What a projection can be observed as: an object with a root.
public protocol ProjectionObservable: AnyObject, ThreadConfined {
    /// The root object's class.
    associatedtype Root: ObjectBase
    /// The object the projection reads.
    var rootObject: Root { get }
}

/// A view model over an object of class `Root`: subclass it and declare `@Projected`
/// properties. `realm.objects(MyProjection.self)` gives one per object of the root class;
/// queries and sorts name the root's properties.
open class Projection<Root: ObjectBase & RealmCollectionValue & ThreadConfined>: RealmCollectionValue, ProjectionObservable {
    /// A projection is stored as its root object.
    public typealias PersistedType = Root

    /// The object the projection reads.
    public let rootObject: Root

    /// A projection of `object`.
    public required init(projecting object: Root) {
        rootObject = object
    }

    /// Two projections are equal when they project the same object (the same row, for managed ones).
    public static func == (lhs: Projection, rhs: Projection) -> Bool {
        if let a = lhs.rootObject as? Object, let b = rhs.rootObject as? Object {
            return a.isSameObject(as: b) && a.isFrozen == b.isFrozen // a frozen copy is another version
        }
        return lhs.rootObject == rhs.rootObject
    }

    /// Hashes the root object's row (managed) or identity.
    public func hash(into hasher: inout Hasher) {
        if let a = (rootObject as? Object)?.__accessor {
            hasher.combine(a.info.name)
            hasher.combine(a.key)
        } else {
            hasher.combine(ObjectIdentifier(rootObject))
        }
    }

    /// The projection's class, its root's class, and each property with its key path and value.
    open var description: String {
        let address = String(UInt(bitPattern: ObjectIdentifier(self).hashValue), radix: 16)
        // (RealmSwift's layout, to the tab: the first property's line has one more)
        var out = "\(type(of: self))<\(type(of: rootObject))> <0x\(address)> {\n\t"
        for p in ProjectionSchema.properties(of: self) {
            out += "\t\(p.label)(\\.\(p.rootPath)) = \(ProjectionSchema.describe(rootObject[keyPath: p.keyPath]));\n"
        }
        return out + "}"
    }

    /// Elements are stored as their root object.
    public static var _strataElementKind: _PersistedKind { Root._strataElementKind }

    /// A projection of the object read from the file.
    public static func _strataElement(_ v: _Stored, _ ctx: _ElementContext) -> Self {
        let p = Self(projecting: Root._strataElement(v, ctx))
        _ = ProjectionSchema.properties(of: p) // a @Projected key path that reads nothing stored traps here
        return p
    }

    /// Stores the root object.
    public static func _strataStore(_ v: Projection, _ ctx: _ElementContext) -> _Stored {
        Root._strataStore(v.rootObject, ctx)
    }
}

extension Projection: ThreadConfined {
    /// The root object's Realm.
    public var realm: Realm? { rootObject.realm }
    /// Whether the root object can no longer be read.
    public var isInvalidated: Bool { rootObject.isInvalidated }
    /// Whether the root object is frozen.
    public var isFrozen: Bool { rootObject.isFrozen }
    /// A projection of the frozen root object.
    public func freeze() -> Self { Self(projecting: rootObject.freeze()) }
    /// A projection of the live root object on this thread, nil when it is gone.
    public func thaw() -> Self? { rootObject.thaw().map { Self(projecting: $0) } }
    /// A projection of the same object in `realm`.
    public func _strataFound(in realm: Realm) -> Self? { rootObject._strataFound(in: realm).map { Self(projecting: $0) } }
}

extension Projection {
    /// Calls `block` after each commit that changes a projected property (only those whose root
    /// key path `keyPaths` names, when given): `.change` with the projection and
    /// the projected properties that changed (by their projection names), or `.deleted`.
    public func observe(keyPaths: [String]? = nil, on queue: DispatchQueue? = nil,
                        _ block: @escaping (ObjectChange<Projection>) -> Void) -> NotificationToken {
        let schema = ProjectionSchema.properties(of: self)
        // (RealmSwift's rule: the names are the root's key paths; an empty list is all)
        let chosen = keyPaths.flatMap { names in names.isEmpty ? nil : schema.filter { names.contains($0.rootPath) } } ?? schema
        guard let root = rootObject as? Object else { strataTrap("A projection's root must be an Object") }
        let make = type(of: self)
        return root.observe(keyPaths: chosen.map(\.rootPath), on: queue) { (change: ObjectChange<Object>) in
            switch change {
            case .error(let e): block(.error(e))
            case .deleted: block(.deleted)
            case .change(let object, let properties):
                guard let r = object as? Root else { return }
                let projection = make.init(projecting: r)
                var out: [PropertyChange] = []
                for p in chosen {
                    let first = String(p.rootPath.split(separator: ".").first ?? "")
                    guard let c = properties.first(where: { $0.name == first }) else { continue }
                    let direct = !p.rootPath.contains(".")
                    out.append(PropertyChange(name: p.label, oldValue: direct ? c.oldValue : nil,
                                              newValue: r[keyPath: p.keyPath]))
                }
                if !out.isEmpty { block(.change(projection, out)) }
            }
        }
    }

    /// Observes with typed key paths of the projection (`\PersonProjection.firstName`).
    public func observe(keyPaths: [PartialKeyPath<Projection>], on queue: DispatchQueue? = nil,
                        _ block: @escaping (ObjectChange<Projection>) -> Void) -> NotificationToken {
        let schema = ProjectionSchema.properties(of: self)
        let labels = keyPaths.map { ProjectionSchema.label(of: $0) }
        return observe(keyPaths: schema.filter { labels.contains($0.label) }.map(\.rootPath), on: queue, block)
    }
}

/// The projected properties of a projection class, read once per class from its stored
/// `@Projected` wrappers (reflection).
enum ProjectionSchema {
    struct Property {
        /// The projection's property name.
        let label: String
        /// The key path of the root object.
        let keyPath: AnyKeyPath
        /// Its property names ("address.city").
        let rootPath: String
    }

    /// The property a key path of a projection names (`\\P.firstName` → "firstName"), from the
    /// key path's own description.
    static func label(of keyPath: AnyKeyPath) -> String {
        String(String(describing: keyPath).split(separator: ".").last ?? "")
    }

    private static let lock = NSLock()
    nonisolated(unsafe) private static var cache: [ObjectIdentifier: [Property]] = [:]

    static func properties(of projection: AnyObject) -> [Property] {
        let id = ObjectIdentifier(type(of: projection))
        lock.lock()
        if let p = cache[id] {
            lock.unlock()
            return p
        }
        lock.unlock()
        var out: [Property] = []
        var mirror: Mirror? = Mirror(reflecting: projection)
        var levels: [[Property]] = []
        while let m = mirror {
            var level: [Property] = []
            for child in m.children {
                guard let label = child.label, let p = child.value as? AnyProjected else { continue }
                let name = label.hasPrefix("_") ? String(label.dropFirst()) : label
                level.append(Property(label: name, keyPath: p.projectedKeyPath,
                                      rootPath: rootPath(p.projectedKeyPath, name, projection)))
            }
            levels.append(level)
            mirror = m.superclassMirror
        }
        for level in levels.reversed() { out += level } // the base class's properties first
        lock.lock()
        cache[id] = out
        lock.unlock()
        return out
    }

    /// The property names a key path of a model class goes through; one that reads no stored
    /// property traps, naming the projection's property.
    private static func rootPath(_ kp: AnyKeyPath, _ label: String, _ projection: AnyObject) -> String {
        guard let root = type(of: kp).rootType as? Object.Type else {
            strataTrap("@Projected property '\(label)' of \(type(of: projection)) does not start at an Object class")
        }
        guard KeyPathNames.readsStored(kp, of: root) else {
            strataTrap("@Projected property '\(label)' of \(type(of: projection)) reads no @Persisted property of \(root.className())")
        }
        return KeyPathNames.name(kp, of: root, throughComputed: true)
    }

    /// A value as a description shows it.
    static func describe(_ value: Any?) -> String {
        guard let v = value else { return "nil" }
        return String(describing: v)
    }
}

// MARK: - Collections projected to one property of their elements

/// The collection behind a ProjectedCollection, its element type erased.
private protocol ProjectedBase {
    var count: Int { get }
    func value(at i: Int) -> Any?
    func set(_ value: Any?, at i: Int)
    var realm: Realm? { get }
    var isInvalidated: Bool { get }
    var isFrozen: Bool { get }
    func freeze() -> ProjectedBase
    func thaw() -> ProjectedBase?
    func found(in realm: Realm) -> ProjectedBase?
    func observe(keyPaths: [String]?, on queue: DispatchQueue?,
                 _ block: @escaping (ProjectedBase, RealmCollectionChange<Void>) -> Void) -> NotificationToken
}

private struct ProjectedBox<C: RealmCollection>: ProjectedBase where C.Element: Object {
    let base: C
    let keyPath: AnyKeyPath
    let name: String

    var count: Int { base.count }
    func value(at i: Int) -> Any? { base[i][keyPath: keyPath] }
    func set(_ value: Any?, at i: Int) { base[i].setValue(value, forKeyPath: name) }
    var realm: Realm? { base.realm }
    var isInvalidated: Bool { base.isInvalidated }
    var isFrozen: Bool { base.isFrozen }
    func freeze() -> ProjectedBase { ProjectedBox(base: base.freeze(), keyPath: keyPath, name: name) }
    func thaw() -> ProjectedBase? { base.thaw().map { ProjectedBox(base: $0, keyPath: keyPath, name: name) } }
    func found(in realm: Realm) -> ProjectedBase? {
        base._strataFound(in: realm).map { ProjectedBox(base: $0, keyPath: keyPath, name: name) }
    }
    func observe(keyPaths: [String]?, on queue: DispatchQueue?,
                 _ block: @escaping (ProjectedBase, RealmCollectionChange<Void>) -> Void) -> NotificationToken {
        let keyPath = self.keyPath, name = self.name
        return base.observe(keyPaths: keyPaths, on: queue) { change in
            switch change {
            case .initial(let c): block(ProjectedBox(base: c, keyPath: keyPath, name: name), .initial(()))
            case .update(let c, let d, let i, let m):
                block(ProjectedBox(base: c, keyPath: keyPath, name: name), .update((), deletions: d, insertions: i, modifications: m))
            case .error(let e): block(self, .error(e))
            }
        }
    }
}

/// A collection's elements mapped through a key path (`\Person.friends.projectTo.firstName`):
/// live, in the collection's order; setting an element writes the property of the collection's
/// element (inside a write).
public struct ProjectedCollection<Element>: RandomAccessCollection, CustomStringConvertible, ThreadConfined
where Element: RealmCollectionValue {
    /// Positions are integers.
    public typealias Index = Int
    private let backing: ProjectedBase

    init<C: RealmCollection>(_ base: C, _ keyPath: PartialKeyPath<C.Element>) where C.Element: Object {
        backing = ProjectedBox(base: base, keyPath: keyPath, name: KeyPathNames.name(keyPath, of: C.Element.self, throughComputed: true))
    }

    private init(backing: ProjectedBase) { self.backing = backing }

    /// The first position (0).
    public var startIndex: Int { 0 }
    /// The position after the last element.
    public var endIndex: Int { backing.count }
    /// The mapped value of the collection's element at `position`; setting it writes that
    /// element's property (traps outside a write).
    public subscript(position: Int) -> Element {
        get { backing.value(at: position) as! Element }
        nonmutating set { backing.set(newValue, at: position) }
    }

    /// The position of the first element equal to `object`, or nil.
    public func index(of object: Element) -> Int? { firstIndex(of: object) }

    /// The Realm of the collection.
    public var realm: Realm? { backing.realm }
    /// Whether the collection can no longer be read.
    public var isInvalidated: Bool { backing.isInvalidated }
    /// Whether the collection is frozen.
    public var isFrozen: Bool { backing.isFrozen }
    /// A frozen copy, readable from any thread.
    public func freeze() -> ProjectedCollection { ProjectedCollection(backing: backing.freeze()) }
    /// The live collection of a frozen one, on this thread (nil when it is gone).
    public func thaw() -> ProjectedCollection? { backing.thaw().map { ProjectedCollection(backing: $0) } }
    /// The same collection read in `realm`.
    public func _strataFound(in realm: Realm) -> ProjectedCollection? {
        backing.found(in: realm).map { ProjectedCollection(backing: $0) }
    }

    /// Calls `block` with the collection now and after each commit that changes its elements
    /// (indices as the collection's own observer gives them).
    public func observe(keyPaths: [String]? = nil, on queue: DispatchQueue? = nil,
                        _ block: @escaping (RealmCollectionChange<ProjectedCollection<Element>>) -> Void) -> NotificationToken {
        backing.observe(keyPaths: keyPaths, on: queue) { b, change in
            let c = ProjectedCollection(backing: b)
            switch change {
            case .initial: block(.initial(c))
            case .update(_, let d, let i, let m): block(.update(c, deletions: d, insertions: i, modifications: m))
            case .error(let e): block(.error(e))
            }
        }
    }

    /// The class and the values, one per line.
    public var description: String {
        var out = "ProjectedCollection<\(Element.self)> {\n"
        for (i, e) in enumerated() { out += "\t[\(i)] \(e)\n" }
        return out + "}"
    }
}

/// What `projectTo` gives: a key path through it names a property of the elements, and yields a
/// ``ProjectedCollection`` of that property's values.
@dynamicMemberLookup
public struct ElementMapper<Element> where Element: Object {
    let collection: AnyRealmCollection<Element>

    /// The collection's elements' values at `member`.
    public subscript<V: RealmCollectionValue>(dynamicMember member: KeyPath<Element, V>) -> ProjectedCollection<V> {
        ProjectedCollection(collection, member)
    }
}

extension List where Element: Object {
    /// The list's elements mapped through a key path, for `@Projected`.
    public var projectTo: ElementMapper<Element> { ElementMapper(collection: AnyRealmCollection(self)) }
}

extension Realm {
    /// Every object of the projection's root class, each as a projection.
    public func objects<P: ProjectionObservable & RealmCollectionValue>(_ type: P.Type) -> Results<P> where P.Root: Object {
        instance.checkThread("objects(\(P.self))")
        return Results(realm: instance, info: instance.tableInfo(P.Root.self))
    }
}

extension MutableSet where Element: Object {
    /// The set's elements mapped through a key path, for `@Projected`.
    public var projectTo: ElementMapper<Element> { ElementMapper(collection: AnyRealmCollection(self)) }
}

// MARK: - Sections of projections

extension RealmCollection {
    /// Projections sorted by the root property `keyPath` reads and grouped by its value.
    public func sectioned<Key: _Persistable & Hashable, O: ObjectBase>(by keyPath: KeyPath<Element, Key>,
                                                                      ascending: Bool = true) -> SectionedResults<Key, Element> where Element: Projection<O> {
        sectioned(sortDescriptors: [SortDescriptor(keyPath: ProjectionSchema.rootName(keyPath, Element.self), ascending: ascending)]) {
            $0[keyPath: keyPath]
        }
    }

    /// Projections sorted by `sortDescriptors` (the first must be the root property `keyPath`
    /// reads) and grouped by its value. Traps on an empty list or another first key path.
    public func sectioned<Key: _Persistable & Hashable, O: ObjectBase>(by keyPath: KeyPath<Element, Key>,
                                                                      sortDescriptors: [SortDescriptor]) -> SectionedResults<Key, Element> where Element: Projection<O> {
        guard let first = sortDescriptors.first else {
            strataTrap("Can not section Results with empty sortDescriptor parameter.")
        }
        guard first.keyPath == ProjectionSchema.rootName(keyPath, Element.self) else {
            strataTrap("The section key path must match the primary sort descriptor.")
        }
        return sectioned(sortDescriptors: sortDescriptors) { $0[keyPath: keyPath] }
    }

    /// Projections sorted by `sortDescriptors` and grouped by the key `block` gives each.
    public func sectioned<Key: _Persistable & Hashable, O: ObjectBase>(by block: @escaping ((Element) -> Key),
                                                                      sortDescriptors: [SortDescriptor]) -> SectionedResults<Key, Element> where Element: Projection<O> {
        sectioned(sortDescriptors: sortDescriptors, block)
    }
}

extension ProjectionSchema {
    /// The root's property names a key path of projection class `P` reads (probed through a
    /// projection of a probe object).
    static func rootName<P: ProjectionObservable & RealmCollectionValue, O: ObjectBase>(_ keyPath: AnyKeyPath, _ type: P.Type) -> String where P: Projection<O> {
        guard let root = O.self as? Object.Type else { strataTrap("A projection's root must be an Object") }
        return KeyPathNames.name(keyPath, of: root, wrap: { P(projecting: $0 as! O) })
    }
}
