import Foundation

/// A collection of values or objects by key (`Map`), as RealmSwift declares it: generic code
/// over maps is written against this protocol.
public protocol RealmKeyedCollection: Sequence, ThreadConfined, CustomStringConvertible {
    associatedtype Key: _MapKey
    associatedtype Value: RealmCollectionValue

    var realm: Realm? { get }
    var isInvalidated: Bool { get }
    var count: Int { get }
    var description: String { get }

    func updateValue(_ value: Value, forKey key: Key)
    func removeObject(for key: Key)
    func removeAll()
    subscript(key: Key) -> Value? { get set }

    func value(forKey key: String) -> AnyObject?
    func value(forKeyPath keyPath: String) -> AnyObject?
    func setValue(_ value: Any?, forKey key: String)

    func filter(_ predicateFormat: String, _ args: Any...) -> Results<Value>
    func contains(where predicate: @escaping (_ key: Key, _ value: Value) -> Bool) -> Bool

    func sorted(ascending: Bool) -> Results<Value>
    func sorted(byKeyPath keyPath: String, ascending: Bool) -> Results<Value>
    func sorted<S: Sequence>(by sortDescriptors: S) -> Results<Value> where S.Iterator.Element == SortDescriptor

    var keys: [Key] { get }
    var values: [Value] { get }

    func min<T: _HasPersistedType>(ofProperty property: String) -> T? where T.PersistedType: MinMaxType
    func max<T: _HasPersistedType>(ofProperty property: String) -> T? where T.PersistedType: MinMaxType
    func sum<T: _HasPersistedType>(ofProperty property: String) -> T where T.PersistedType: AddableType
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
