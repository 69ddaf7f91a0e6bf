import Foundation

/// A type that can be the key of a `Map`: `String`, as in RealmSwift.
public protocol _MapKey: Hashable {
    /// The key as the file stores it.
    var _strataKey: String { get }
    init(_strataKey: String)
}

extension String: _MapKey {
    public var _strataKey: String { self }
    public init(_strataKey: String) { self = _strataKey }
}

/// String keys to values or objects (`Map<String, Int>`, `Map<String, Dog?>`), as RealmSwift
/// declares it. Unmanaged, it is held in the object; managed, every read and change goes to the
/// file, changes inside a write. Keys must not contain '.' nor start with '$' (the change is a
/// trap naming the map and the key); a key's value of a deleted object becomes nil. Iteration
/// and `keys` follow the keys' byte order.
///
/// ```swift
/// class Person: Object { @Persisted var scores: Map<String, Int> }
/// try realm.write { person.scores["maths"] = 18 }
/// realm.objects(Person.self).where { $0.scores["maths"] > 15 }
/// ```
public final class Map<Key: _MapKey, Value: RealmCollectionValue>: RealmKeyedCollection {
    /// Unmanaged: the entries.
    private var storage: [Key: Value]
    private(set) var managed: _ManagedProperty?
    /// Set while a key path is probed through this map (`\.byName[""]??.city`).
    private var probe: _KeyPathProbe?

    /// An empty, unmanaged map.
    public init() {
        storage = [:]
        managed = nil
    }

    init(managed: _ManagedProperty) {
        storage = [:]
        self.managed = managed
    }

    private var context: _ElementContext { managed!.elementContext }

    /// The Realm of the object holding the map, or nil while unmanaged.
    public var realm: Realm? { managed.map { Realm($0.accessor.realm) } }
    /// Whether the map can no longer be read: its object was deleted or its Realm invalidated.
    public var isInvalidated: Bool { managed?.accessor.isInvalidated ?? false }

    /// How many keys the map holds.
    public var count: Int {
        guard let m = managed else { return storage.count }
        return m.accessor.listCount(m.index)
    }

    /// The keys of an unmanaged map in the file's order (by UTF-8 bytes).
    private var unmanagedKeys: [Key] {
        storage.keys.sorted { $0._strataKey.utf8.lexicographicallyPrecedes($1._strataKey.utf8) }
    }

    /// Every key, in the file's order (by their UTF-8 bytes).
    public var keys: [Key] {
        guard let m = managed else { return unmanagedKeys }
        return readCore(m) { t, key, col in try (0..<t.listCount(key, col)).map { Key(_strataKey: try t.mapKeyAt(key, col, $0)) } }
    }

    /// Every value, in the order of `keys`.
    public var values: [Value] { entries.map(\.value) }

    /// The entries when this is called, in the order of `keys`.
    var entries: [(key: Key, value: Value)] {
        guard let m = managed else { return unmanagedKeys.map { ($0, storage[$0]!) } }
        let ctx = context
        return readCore(m) { t, key, col in
            try (0..<t.listCount(key, col)).map {
                (Key(_strataKey: try t.mapKeyAt(key, col, $0)), Value._strataElement(_Stored(try t.listGet(key, col, $0)), ctx))
            }
        }
    }

    /// A read of the managed map; a failure traps naming it (a deleted object, a damaged file).
    private func readCore<R>(_ m: _ManagedProperty, _ body: (CoreTable, Int64, UInt32) throws -> R) -> R {
        let a = m.accessor
        a.realm.checkThread(context.what)
        do { return try body(a.realm.table(a.info), a.key, a.info.cols[m.index]) } catch {
            a.trapIfDeleted(context.what)
            strataTrap("cannot read \(context.what): \(error)")
        }
    }

    // MARK: reading and changing by key

    /// The value of `key`, or nil when the map lacks it; assigning nil removes the key.
    public subscript(key: Key) -> Value? {
        get {
            if let probe, let e = probe.element(Value.self) { return e }
            guard let m = managed else { return storage[key] }
            let ctx = context
            let found = readCore(m) { t, k, col in try t.mapGet(k, col, key._strataKey) }
            if found == nil { m.accessor.trapIfDeleted(ctx.what) }
            return found.map { Value._strataElement(_Stored($0), ctx) }
        }
        set {
            if let v = newValue { updateValue(v, forKey: key) } else { removeObject(for: key) }
        }
    }

    /// Set the value of `key`, adding the key when the map lacks it (managed: inside a write;
    /// an unmanaged object is added to the Realm).
    public func updateValue(_ value: Value, forKey key: Key) {
        guard let m = managed else { storage[key] = value; return }
        let v = Value._strataStore(value, context).value
        m.accessor.edit(m.index) { t, k, col in try t.mapSet(k, col, key._strataKey, v) }
    }

    /// Remove `key` and its value, if the map holds it.
    public func removeObject(for key: Key) {
        guard let m = managed else { storage[key] = nil; return }
        m.accessor.edit(m.index) { t, k, col in try t.mapErase(k, col, key._strataKey) }
    }

    /// Remove every key (linked objects stay in the Realm).
    public func removeAll() {
        guard let m = managed else { storage.removeAll(); return }
        m.accessor.edit(m.index) { t, key, col in try t.listClear(key, col) }
    }

    /// Add the pairs of `sequence`; for a key the map holds, `combine` gets both values and
    /// returns the one kept.
    public func merge<S>(_ sequence: S, uniquingKeysWith combine: (Value, Value) throws -> Value) rethrows
    where S: Sequence, S.Element == (key: Key, value: Value) {
        for (key, value) in sequence {
            updateValue(try self[key].map { try combine($0, value) } ?? value, forKey: key)
        }
    }

    /// Add the entries of `other`, as `merge(_:uniquingKeysWith:)` with a sequence.
    public func merge(_ other: Map<Key, Value>, uniquingKeysWith combine: (Value, Value) throws -> Value) rethrows {
        try merge(other.entries.map { (key: $0.key, value: $0.value) }, uniquingKeysWith: combine)
    }

    /// Whether a key and its value satisfy `predicate`.
    public func contains(where predicate: @escaping (_ key: Key, _ value: Value) -> Bool) -> Bool {
        entries.contains { predicate($0.key, $0.value) }
    }

    // MARK: KVC

    /// The value of `key` (untyped, NSNull for a nil value), or nil when the map lacks it.
    public func object(forKey key: AnyObject) -> AnyObject? {
        guard let k = key as? String else { return nil }
        return value(forKey: k)
    }

    /// The value of `key`, untyped (RealmSwift's KVC on a map reads its keys): NSNull for a nil
    /// value, nil when the map lacks the key.
    public func value(forKey key: String) -> AnyObject? {
        self[Key(_strataKey: key)].map { ValueConversion.flattened($0) as AnyObject }
    }

    /// The value of the first key of `keyPath`, then the rest of the path on it.
    public func value(forKeyPath keyPath: String) -> AnyObject? {
        let parts = keyPath.split(separator: ".", maxSplits: 1).map(String.init)
        guard let first = parts.first, let v = self[Key(_strataKey: first)] else { return nil }
        guard parts.count == 2 else { return ValueConversion.flattened(v) as AnyObject }
        guard let o = (v as Any) as? Object else { return nil }
        return o.value(forKeyPath: parts[1]) as AnyObject?
    }

    /// Set `key` to `value` (converted to the map's value type), as RealmSwift's KVC does: nil
    /// removes the key; a nil value (NSNull, an empty optional) is stored as nil in a map of
    /// optionals and removes the key from any other.
    public func setValue(_ value: Any?, forKey key: String) {
        guard let value else { return removeObject(for: Key(_strataKey: key)) }
        if ValueConversion.isNil(value) {
            guard let none = ValueConversion.convert(NSNull(), to: Value.self) else { return removeObject(for: Key(_strataKey: key)) }
            return updateValue(none, forKey: Key(_strataKey: key))
        }
        guard let v = ValueConversion.convert(value, to: Value.self) else {
            strataTrap("Cannot set the key '\(key)' of \(Self.self) to '\(value)': it is not a \(Value.self)")
        }
        updateValue(v, forKey: Key(_strataKey: key))
    }

    // MARK: results of the values

    /// The values as live results: its objects (nil values left out), or its values, in key
    /// order; nil while unmanaged.
    var valueResults: Results<Value>? { elementResults(Value.self) }

    private func managedResults(_ what: String) -> Results<Value> {
        guard let r = valueResults else {
            strataTrap("\(what) on an unmanaged \(Self.self): this method may only be called on maps of "
                       + "objects managed by a Realm")
        }
        return r
    }

    /// The values matching a predicate string (`%@` arguments), as live results.
    public func filter(_ predicateFormat: String, _ args: Any...) -> Results<Value> {
        managedResults("filter").filter(predicateFormat, arguments: args)
    }

    /// The values for which the typed predicate holds.
    public func `where`(_ isIncluded: (Query<Value>) -> Query<Bool>) -> Results<Value> {
        managedResults("where").where(isIncluded)
    }

    /// The values sorted by themselves.
    public func sorted(ascending: Bool = true) -> Results<Value> {
        sorted(byKeyPath: "self", ascending: ascending)
    }

    /// The values (objects) sorted by a property.
    public func sorted(byKeyPath keyPath: String, ascending: Bool = true) -> Results<Value> {
        managedResults("sorted").sorted(byKeyPath: keyPath, ascending: ascending)
    }

    /// The values sorted by several descriptors.
    public func sorted<S: Sequence>(by sortDescriptors: S) -> Results<Value> where S.Iterator.Element == SortDescriptor {
        managedResults("sorted").sorted(by: sortDescriptors)
    }

    /// The values as an unmanaged list, for aggregates of an unmanaged map.
    private var unmanagedValues: List<Value> {
        let l = List<Value>()
        l.append(objectsIn: unmanagedKeys.map { storage[$0]! })
        return l
    }

    /// The smallest value of `property` among the map's objects, nil when there are none. Traps on an unknown property.
    public func min<T: _HasPersistedType>(ofProperty property: String) -> T? where T.PersistedType: MinMaxType {
        valueResults?.min(ofProperty: property) ?? (managed == nil ? unmanagedValues.min(ofProperty: property) : nil)
    }

    /// The largest value of `property` among the map's objects, nil when there are none. Traps on an unknown property.
    public func max<T: _HasPersistedType>(ofProperty property: String) -> T? where T.PersistedType: MinMaxType {
        valueResults?.max(ofProperty: property) ?? (managed == nil ? unmanagedValues.max(ofProperty: property) : nil)
    }

    /// The sum of `property` over the map's objects (zero when there are none). Traps on an unknown property.
    public func sum<T: _HasPersistedType>(ofProperty property: String) -> T where T.PersistedType: AddableType {
        // mixed values sum to a Decimal128, as in Realm, but an empty map's mixed sum is the
        // integer 0 (realm-core's dictionary sum of nothing, as RealmSwift reads it; its lists'
        // and sets' is a Decimal128 0)
        if T.self == AnyRealmValue.self, managed != nil, count == 0 { return ResultsBase.zero(as: T.self, "sum") }
        return valueResults?.sum(ofProperty: property) ?? unmanagedValues.sum(ofProperty: property)
    }

    /// The average of `property` over the map's objects, nil when there are none. Traps on an unknown property.
    public func average<T: _HasPersistedType>(ofProperty property: String) -> T? where T.PersistedType: AddableType {
        valueResults?.average(ofProperty: property) ?? (managed == nil ? unmanagedValues.average(ofProperty: property) : nil)
    }

    // MARK: notifications, freezing

    /// Calls `block` with the map, then after each commit that changed it with the keys deleted,
    /// inserted and modified (a changed value, or a changed linked object).
    public func observe(keyPaths: [String]? = nil, on queue: DispatchQueue? = nil,
                        _ block: @escaping (RealmMapChange<Map>) -> Void) -> NotificationToken {
        guard let m = managed else {
            strataTrap("Only Maps of objects managed by a Realm support change notifications (\(Self.self)).")
        }
        let a = m.accessor
        let (info, key, index) = (a.info, a.key, m.index)
        return Observation.register(a.realm, queue: queue, what: "observe \(info.name).\(info.properties[index].name)",
                                    onError: { block(.error($0)) }) { home, token in
            let map = home === a.realm ? self : self.rebound(m, to: home)
            let owner = home === a.realm ? a : ObjectAccessor(realm: home, info: home.tableInfo(info.classInfo.type), key: key)
            return MapObserver(map: map, owner: owner, index: index, keyPaths: keyPaths, token: token, block: block)
        }
    }

    /// Whether the map is frozen: it reads one version, from any thread, and never changes.
    public var isFrozen: Bool { managed?.accessor.realm.isFrozen ?? false }
    public func freeze() -> Map { frozenCopy }
    public func thaw() -> Map? { thawedCopy }
    public func _strataFound(in realm: Realm) -> Map? { found(in: realm) }

    public var description: String { _strataDescription(depth: RealmDescription.maxDepth) }

    // MARK: iterating

    /// Iterates the entries the map held when iteration began, in key order.
    public func makeIterator() -> RLMMapIterator<SingleMapEntry<Key, Value>> {
        RLMMapIterator(entries.map { SingleMapEntry(key: $0.key, value: $0.value) })
    }

    /// The map as a sequence of `(key: Key, value: Value)`.
    public struct KeyValueSequence: Sequence {
        private let map: Map<Key, Value>
        fileprivate init(_ map: Map<Key, Value>) { self.map = map }
        public func makeIterator() -> RLMKeyValueIterator<Key, Value> { RLMKeyValueIterator(map.entries) }
    }

    /// This map as a sequence of `(key: Key, value: Value)`.
    public func asKeyValueSequence() -> KeyValueSequence { KeyValueSequence(self) }
}

extension Map: PropertyCollection {
    static var kindName: String { "Map" }
}

extension Map: _ProbingCollection {
    static func _strataProbing(_ probe: _KeyPathProbe) -> Any {
        let m = Map()
        m.probe = probe
        return m
    }
}

extension Map: Equatable {
    /// RealmSwift's equality: two unmanaged maps with the same keys and values, else the same
    /// map (the same property of the same object).
    public static func == (lhs: Map, rhs: Map) -> Bool {
        guard lhs.managed == nil && rhs.managed == nil else { return lhs.isSameCollection(as: rhs) }
        return lhs.storage.count == rhs.storage.count && lhs.storage.allSatisfy { rhs.storage[$0.key] == $0.value }
    }

    /// NSObject's equality (RealmSwift's maps are NSObjects): `==` with another Map.
    public func isEqual(_ object: Any?) -> Bool {
        guard let other = object as? Map else { return false }
        return self == other
    }
}

/// The iterator of a `Map`: its entries when iteration began.
public struct RLMMapIterator<Element: _RealmMapValue>: IteratorProtocol {
    private var items: IndexingIterator<[Element]>
    init(_ items: [Element]) { self.items = items.makeIterator() }
    public mutating func next() -> Element? { items.next() }
}

/// The iterator of `Map.KeyValueSequence`: `(key, value)` pairs.
public struct RLMKeyValueIterator<Key: _MapKey, Value: RealmCollectionValue>: IteratorProtocol {
    private var items: IndexingIterator<[(key: Key, value: Value)]>
    init(_ items: [(key: Key, value: Value)]) { self.items = items.makeIterator() }
    public mutating func next() -> (key: Key, value: Value)? { items.next() }
}

/// An entry of a map as a value (`SingleMapEntry`).
public protocol _RealmMapValue {
    associatedtype Key: _MapKey
    associatedtype Value: RealmCollectionValue
    var key: Key { get }
    var value: Value { get }
}

/// One key and its value, the element a `Map` iterates (RealmSwift's type: equal when the values
/// are, hashed by the key).
public struct SingleMapEntry<Key: _MapKey, Value: RealmCollectionValue>: _RealmMapValue, Hashable {
    public static func == (lhs: SingleMapEntry, rhs: SingleMapEntry) -> Bool { lhs.value == rhs.value }
    public func hash(into hasher: inout Hasher) { hasher.combine(key) }
    /// The key of this entry.
    public var key: Key
    /// The value of this entry.
    public var value: Value
}

/// The position of an entry in a map.
public struct MapIndex {
    /// The position of the element in the map.
    public var offset: UInt
}

/// What a map observer receives: first the map, then after each commit that changed it the keys
/// removed, added and whose values (or linked objects) changed.
@frozen public enum RealmMapChange<Collection: RealmKeyedCollection> {
    /// The map as it was when observing began.
    case initial(Collection)
    /// The map after a commit, with the keys removed, added and whose values changed.
    case update(Collection, deletions: [Collection.Key], insertions: [Collection.Key], modifications: [Collection.Key])
    /// Observing failed; no more changes come.
    case error(Error)
}

extension Map: _Persistable {
    public static var _strataKind: _PersistedKind {
        let e = Value._strataElementKind
        // a map's values of objects may be null (a mapped type's too: it reads a default object)
        return _PersistedKind(e.type, optional: e.optional || e.type == .link, target: e.target, collection: .map)
    }

    public static func _strataDefault() -> Map<Key, Value> { Map() }

    public static func _strataGet(_ at: _ManagedProperty) -> Map<Key, Value> { Map(managed: at) }

    /// Assigning a map copies its entries.
    public static func _strataSet(_ at: _ManagedProperty, _ value: Map<Key, Value>) {
        if let m = value.managed, m.object === at.object, m.index == at.index { return }
        let entries = value.entries
        let target = Map(managed: at)
        target.removeAll()
        for (k, v) in entries { target.updateValue(v, forKey: k) }
    }
}

extension Map: _HasPersistedType {
    /// A map is stored as itself.
    public typealias PersistedType = Map
}
extension Map: _RealmSchemaDiscoverable where Value: _RealmSchemaDiscoverable {}

extension Map: _StrataListType {
    /// From a dictionary, another map, or pairs of convertible values (Object(value:)).
    static func _strataFrom(_ value: Any) -> Any? {
        let map = Map<Key, Value>()
        if ValueConversion.isNil(value) { return map }
        var pairs: [(String, Any)] = []
        if let d = value as? [String: Any] {
            pairs = d.map { ($0.key, $0.value) }
        } else if let d = value as? NSDictionary {
            for (k, v) in d { guard let k = k as? String else { return nil }; pairs.append((k, v)) }
        } else if let m = value as? any _MapEntries { // a map of these or other (convertible) values
            pairs = m._strataEntries.map { ($0.key, $0.value) }
        } else {
            return nil
        }
        for (k, x) in pairs {
            guard let e = ValueConversion.convert(x, to: Value.self) else { return nil }
            map.updateValue(e, forKey: Key(_strataKey: k))
        }
        return map
    }
}

extension Map: Decodable where Value: Decodable {
    public convenience init(from decoder: Decoder) throws {
        self.init()
        let container = try decoder.singleValueContainer()
        for (k, v) in try container.decode([String: Value].self) { updateValue(v, forKey: Key(_strataKey: k)) }
    }
}

extension Map: Encodable where Value: Encodable {
    public func encode(to encoder: Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(Dictionary(uniqueKeysWithValues: entries.map { ($0.key._strataKey, $0.value) }))
    }
}

extension Map: _Describable {
    func _strataDescription(depth: Int) -> String {
        RealmDescription.map(element: Value.self, entries.map { ($0.key._strataKey, $0.value as Any) }, identity: self, depth: depth)
    }
}

extension Map: _AdoptedOnAdd {
    func _strataAdopt(_ at: _ManagedProperty) {
        guard managed == nil else { return }
        managed = at
        storage = [:]
    }
}
