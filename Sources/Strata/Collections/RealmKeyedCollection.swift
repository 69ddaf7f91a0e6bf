import Foundation

/// A collection of values or objects by key (`Map`), as RealmSwift declares it: generic code
/// over maps is written against this protocol.
public protocol RealmKeyedCollection: Sequence, ThreadConfined, CustomStringConvertible {
    /// The key type (String).
    associatedtype Key: _MapKey
    /// The value type.
    associatedtype Value: RealmCollectionValue

    /// The Realm the map belongs to, nil when unmanaged.
    var realm: Realm? { get }
    /// Whether the map can no longer be read (its object was deleted or its Realm invalidated).
    var isInvalidated: Bool { get }
    /// How many entries the map holds.
    var count: Int { get }
    var description: String { get }

    /// Sets the value of `key`, adding the key when it is missing. Traps outside a write on a managed map, and on a key that starts with `$` or holds a `.`.
    func updateValue(_ value: Value, forKey key: Key)
    /// Removes `key` and its value (nothing when the map lacks it). Traps outside a write on a managed map.
    func removeObject(for key: Key)
    /// Removes every entry. Traps outside a write on a managed map.
    func removeAll()
    /// The value of `key`, nil when the map lacks it; setting nil removes the key.
    subscript(key: Key) -> Value? { get set }

    /// Key-value coding: the value of `key` as an object (nil when the map lacks it).
    func value(forKey key: String) -> AnyObject?
    /// Key-value coding through a key path (`"key.property"`).
    func value(forKeyPath keyPath: String) -> AnyObject?
    /// Key-value coding: sets the value of `key` (nil removes it).
    func setValue(_ value: Any?, forKey key: String)

    /// The map's values that match the predicate (Realm's query language, `%@` arguments), as live Results. Traps on an invalid predicate.
    func filter(_ predicateFormat: String, _ args: Any...) -> Results<Value>
    /// Whether an entry satisfies `predicate`.
    func contains(where predicate: @escaping (_ key: Key, _ value: Value) -> Bool) -> Bool

    /// The values sorted by themselves (maps of values), ascending or not.
    func sorted(ascending: Bool) -> Results<Value>
    /// The values sorted by a property of the objects they are (maps of objects).
    func sorted(byKeyPath keyPath: String, ascending: Bool) -> Results<Value>
    /// The values sorted by several sort descriptors, the first deciding first.
    func sorted<S: Sequence>(by sortDescriptors: S) -> Results<Value> where S.Iterator.Element == SortDescriptor

    /// The keys, in ascending order.
    var keys: [Key] { get }
    /// The values, in the order of their keys.
    var values: [Value] { get }

    /// The smallest value of `property` among the values, nil when empty. Traps on an unknown property.
    func min<T: _HasPersistedType>(ofProperty property: String) -> T? where T.PersistedType: MinMaxType
    /// The largest value of `property` among the values, nil when empty. Traps on an unknown property.
    func max<T: _HasPersistedType>(ofProperty property: String) -> T? where T.PersistedType: MinMaxType
    /// The sum of `property` over the values (zero when empty). Traps on an unknown property.
    func sum<T: _HasPersistedType>(ofProperty property: String) -> T where T.PersistedType: AddableType
    /// The average of `property` over the values, nil when empty. Traps on an unknown property.
    func average<T: _HasPersistedType>(ofProperty property: String) -> T? where T.PersistedType: AddableType

    func observe(keyPaths: [String]?, on queue: DispatchQueue?,
                 _ block: @escaping (RealmMapChange<Self>) -> Void) -> NotificationToken
}

extension RealmKeyedCollection where Value: OptionalProtocol, Value.Wrapped: ObjectBase {
    /// The least value of a property of the map's objects.
    public func min<T: _HasPersistedType>(of keyPath: KeyPath<Value.Wrapped, T>) -> T? where T.PersistedType: MinMaxType {
        min(ofProperty: _name(for: keyPath))
    }
    /// The greatest value of a property of the map's objects.
    public func max<T: _HasPersistedType>(of keyPath: KeyPath<Value.Wrapped, T>) -> T? where T.PersistedType: MinMaxType {
        max(ofProperty: _name(for: keyPath))
    }
    /// The sum of a property of the map's objects.
    public func sum<T: _HasPersistedType>(of keyPath: KeyPath<Value.Wrapped, T>) -> T where T.PersistedType: AddableType {
        sum(ofProperty: _name(for: keyPath))
    }
    /// The average of a property of the map's objects.
    public func average<T: _HasPersistedType>(of keyPath: KeyPath<Value.Wrapped, T>) -> T? where T.PersistedType: AddableType {
        average(ofProperty: _name(for: keyPath))
    }
}

extension RealmKeyedCollection where Value: OptionalProtocol, Value.Wrapped: ObjectBase, Value.Wrapped: RealmCollectionValue {
    /// The map's objects sorted by a property.
    public func sorted<T: _HasPersistedType>(by keyPath: KeyPath<Value.Wrapped, T>, ascending: Bool) -> Results<Value>
    where T.PersistedType: SortableType {
        sorted(byKeyPath: _name(for: keyPath), ascending: ascending)
    }
}

extension RealmKeyedCollection where Value.PersistedType: MinMaxType {
    /// The least value, or nil when the map is empty.
    public func min() -> Value? { min(ofProperty: "self") }
    /// The greatest value, or nil when the map is empty.
    public func max() -> Value? { max(ofProperty: "self") }
}

extension RealmKeyedCollection where Value.PersistedType: AddableType {
    /// The sum of the values (0 for an empty map).
    public func sum() -> Value { sum(ofProperty: "self") }
    /// The average of the values, or nil when the map is empty.
    public func average<T: _HasPersistedType>() -> T? where T.PersistedType: AddableType { average(ofProperty: "self") }
}

extension RealmKeyedCollection {
    /// `observe(keyPaths:on:_:)` with its defaults: every change, on this thread.
    public func observe(keyPaths: [String]? = nil, on queue: DispatchQueue? = nil,
                        _ block: @escaping (RealmMapChange<Self>) -> Void) -> NotificationToken {
        observe(keyPaths: keyPaths, on: queue, block)
    }
}
