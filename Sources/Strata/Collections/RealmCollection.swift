import CCore
import Foundation

// RealmSwift's collection protocols: generic code over `Results`, `List` and `LinkingObjects`
// (and `AnyRealmCollection`) compiles against `RealmCollection`. The shared members are
// written once here, over the collection's live `Results` (`_strataResults`: its objects or
// values in its order); an unmanaged List has none, and what needs a Realm traps for it
// naming the collection, while what Swift can compute (aggregates, values) works.

/// What every Realm collection is: random access, lazy, thread-confined.
public protocol RealmCollectionBase: RandomAccessCollection, LazyCollectionProtocol, CustomStringConvertible,
                                     ThreadConfined where Element: RealmCollectionValue, Index == Int {
    /// The element type (RealmSwift's older name for `Element`).
    typealias ElementType = Element
}

/// A collection of a Realm (or an unmanaged list): `Results`, `List`, `LinkingObjects`,
/// `AnyRealmCollection`.
///
/// ```swift
/// func oldest<C: RealmCollection>(_ people: C) -> Int? where C.Element == Person {
///     people.max(ofProperty: "age")
/// }
/// ```
public protocol RealmCollection: RealmCollectionBase, Equatable {
    /// The Realm of the collection, or nil for an unmanaged one.
    var realm: Realm? { get }
    /// True once the collection cannot be read any more (its object deleted, its Realm
    /// invalidated).
    var isInvalidated: Bool { get }
    /// How many elements the collection holds now (counted by the core, without reading them).
    var count: Int { get }
    var description: String { get }
    /// The position of `object` (objects: the same object), or nil.
    func index(of object: Element) -> Int?
    /// The position of the first element matching a predicate, or nil.
    func index(matching predicateFormat: String, _ args: Any...) -> Int?
    /// The elements at `indexes`, in order.
    func objects(at indexes: IndexSet) -> [Element]
    /// The elements matching a predicate of Realm's query language, as live results.
    func filter(_ predicateFormat: String, _ args: Any...) -> Results<Element>
    /// The elements sorted by these keys (the first decides, the next break ties).
    func sorted<S: Sequence>(by sortDescriptors: S) -> Results<Element> where S.Iterator.Element == SortDescriptor
    /// The first element of each distinct combination of the key paths' values.
    func distinct<S: Sequence>(by keyPaths: S) -> Results<Element> where S.Iterator.Element == String
    /// The smallest value of `property` (int, float, double, decimal, date), nil when empty. Traps on an unknown or non-comparable property.
    func min<T: _HasPersistedType>(ofProperty property: String) -> T? where T.PersistedType: MinMaxType
    /// The largest value of `property`, nil when empty. Traps on an unknown or non-comparable property.
    func max<T: _HasPersistedType>(ofProperty property: String) -> T? where T.PersistedType: MinMaxType
    /// The sum of `property` (zero when empty). Traps on an unknown or non-numeric property.
    func sum<T: _HasPersistedType>(ofProperty property: String) -> T where T.PersistedType: AddableType
    /// The average of `property`, nil when empty. Traps on an unknown or non-numeric property.
    func average<T: _HasPersistedType>(ofProperty property: String) -> T? where T.PersistedType: AddableType
    /// The value of `key` of each element (`"self"`: the elements), as an array.
    func value(forKey key: String) -> Any?
    func value(forKeyPath keyPath: String) -> Any?
    /// Set `key` of every element (objects; inside a write when managed).
    func setValue(_ value: Any?, forKey key: String)
    /// Be told of the collection now and after every version that changes it.
    func observe(keyPaths: [String]?, on queue: DispatchQueue?,
                 _ block: @escaping (RealmCollectionChange<Self>) -> Void) -> NotificationToken
    /// Whether the collection is frozen: it reads one version, from any thread, and never changes.
    var isFrozen: Bool { get }
    func freeze() -> Self
    func thaw() -> Self?
    /// Strata: the collection as live results (its objects or values in its order), nil while
    /// unmanaged.
    var _strataResults: Results<Element>? { get }
}

extension RealmCollection {
    /// The position of the first element (always 0).
    public var startIndex: Int { 0 }
    /// The position after the last element (the count).
    public var endIndex: Int { count }
    /// The position after `i`.
    public func index(after i: Int) -> Int { i + 1 }
    /// The position before `i`.
    public func index(before i: Int) -> Int { i - 1 }

    /// The live results behind the collection, or a trap naming `what` for an unmanaged one.
    func managedResults(_ what: String) -> Results<Element> {
        guard let r = _strataResults else {
            strataTrap("\(what) on an unmanaged \(Self.self): this method may only be called on collections of "
                       + "objects managed by a Realm")
        }
        return r
    }

    public func index(matching predicateFormat: String, _ args: Any...) -> Int? {
        managedResults("index(matching:)").index(matching: predicateFormat, arguments: args)
    }

    public func objects(at indexes: IndexSet) -> [Element] {
        indexes.map { i in
            if i >= count { strataTrap("Index \(i) is out of bounds (must be less than \(count)) in \(Self.self).") }
            return self[i]
        }
    }

    public func filter(_ predicateFormat: String, _ args: Any...) -> Results<Element> {
        managedResults("filter").filter(predicateFormat, arguments: args)
    }

    public func sorted<S: Sequence>(by sortDescriptors: S) -> Results<Element> where S.Iterator.Element == SortDescriptor {
        managedResults("sorted").sorted(by: sortDescriptors)
    }

    /// The elements with distinct values of the key paths (the first of each group, in the collection's order). Traps on an unknown key path.
    public func distinct<S: Sequence>(by keyPaths: S) -> Results<Element> where S.Iterator.Element == String {
        managedResults("distinct").distinct(by: keyPaths)
    }

    /// The smallest value of `property`, nil when empty. Traps on an unknown or non-comparable property.
    public func min<T: _HasPersistedType>(ofProperty property: String) -> T? where T.PersistedType: MinMaxType {
        if let r = _strataResults { return r.min(ofProperty: property) }
        return unmanagedAggregate(property, STRATA_AGG_MIN)
    }

    /// The largest value of `property`, nil when empty. Traps on an unknown or non-comparable property.
    public func max<T: _HasPersistedType>(ofProperty property: String) -> T? where T.PersistedType: MinMaxType {
        if let r = _strataResults { return r.max(ofProperty: property) }
        return unmanagedAggregate(property, STRATA_AGG_MAX)
    }

    /// The sum of `property` (zero when empty). Traps on an unknown or non-numeric property.
    public func sum<T: _HasPersistedType>(ofProperty property: String) -> T where T.PersistedType: AddableType {
        if let r = _strataResults { return r.sum(ofProperty: property) }
        return unmanagedAggregate(property, STRATA_AGG_SUM) ?? ResultsBase.zero(as: T.self, "sum of \(Self.self)")
    }

    /// The average of `property`, nil when empty. Traps on an unknown or non-numeric property.
    public func average<T: _HasPersistedType>(ofProperty property: String) -> T? where T.PersistedType: AddableType {
        if let r = _strataResults { return r.average(ofProperty: property) }
        return unmanagedAggregate(property, STRATA_AGG_AVG)
    }

    /// An aggregate of the elements' values (`"self"`: the elements) computed here.
    private func unmanagedAggregate<T>(_ property: String, _ agg: strata_aggregate) -> T? {
        let values: [StoredValue] = map { e -> StoredValue in
            let v = property == "self" ? e as Any : Self.property(property, of: e, in: Self.self)
            return ValueConversion.storedIfPrimitive(v) ?? .null
        }.filter { $0 != .null }
        // (an unmanaged list's empty sum stays the integer 0, as RealmSwift's does)
        let total = ResultsBase.aggregate(values, agg)
        let stored = values.isEmpty ? total : ResultsBase.asMixed(total, agg, T.self)
        if stored == .null { return nil }
        guard let v = ValueConversion.convert(stored.anyValue, to: T.self)
                ?? ResultsBase.truncated(stored).flatMap({ ValueConversion.convert($0.anyValue, to: T.self) }) else {
            strataTrap("\(Self.self): the aggregate of '\(property)' (\(stored)) is not a \(T.self)")
        }
        return v
    }

    /// Property `key` of element e (an object), or a trap naming it.
    private static func property(_ key: String, of e: Element, in: Self.Type) -> Any {
        guard let o = e as? Object else {
            strataTrap("\(Self.self): '\(key)' of a value: the values of a collection are named 'self'")
        }
        let info = o.__accessor?.info.classInfo ?? ClassInfo.of(type(of: o))
        guard info.property(named: key) != nil else {
            strataTrap("Invalid property name '\(key)' for class '\(info.name)'.")
        }
        return o[key] as Any // nil as Optional.none: `as! [T?]` reads it as nil, as RealmSwift's NSNull bridges
    }

    public func value(forKey key: String) -> Any? { elementValues(forKey: key) }

    /// The elements' values for `key` ("self": the elements), in order.
    func elementValues(forKey key: String) -> [Any] {
        map { e -> Any in
            if key == "self" { return ValueConversion.flattened(e) }
            return Self.property(key, of: e, in: Self.self)
        }
    }

    /// Values through links (`"dog.name"`), or a key-value coding collection operator over a
    /// property: `"@count"`, `"@min.age"`, `"@max.age"`, `"@sum.age"`, `"@avg.age"` (as NSNumber,
    /// nil when there is no value), `"@unionOfObjects.name"`, `"@distinctUnionOfObjects.name"`.
    public func value(forKeyPath keyPath: String) -> Any? {
        if keyPath.hasPrefix("@") {
            let parts = keyPath.split(separator: ".", maxSplits: 1).map(String.init)
            if parts[0] == "@count" { return NSNumber(value: count) }
            guard parts.count == 2 else { strataTrap("value(forKeyPath: '\(keyPath)'): the operator names no property") }
            let property = parts[1]
            if parts[0] == "@unionOfObjects" || parts[0] == "@distinctUnionOfObjects" {
                let values = property.hasPrefix("@") ? [] : keyPathValues(property)
                guard parts[0] == "@distinctUnionOfObjects" else { return values }
                return ValueConversion.distinct(values)
            }
            let v: Double?
            switch parts[0] {
            case "@min": v = min(ofProperty: property)
            case "@max": v = max(ofProperty: property)
            case "@sum": v = sum(ofProperty: property) as Double
            case "@avg": v = average(ofProperty: property)
            default: strataTrap("value(forKeyPath: '\(keyPath)'): unknown collection operator '\(parts[0])'")
            }
            return v.map { NSNumber(value: $0) }
        }
        return keyPathValues(keyPath)
    }

    /// The elements' values through `keyPath` (no collection operator), in order.
    func keyPathValues(_ keyPath: String) -> [Any] {
        let parts = keyPath.split(separator: ".", maxSplits: 1).map(String.init)
        guard parts.count == 2 else { return elementValues(forKey: keyPath) }
        // nil (through a nil link, or a nil value) as Optional.none: `as! [T?]` reads it as nil, as
        // RealmSwift's NSNull bridges
        let values: [Any] = map { e -> Any in
            guard let next = Self.property(parts[0], of: e, in: Self.self) as? Object else { return Optional<Any>.none as Any }
            return next.value(forKeyPath: parts[1]) ?? Optional<Any>.none as Any
        }
        return values
    }

    public func setValue(_ value: Any?, forKey key: String) {
        for e in self {
            guard let o = e as? Object else {
                strataTrap("\(Self.self): setValue(_:forKey:) sets a property of objects; these are values")
            }
            o[key] = value
        }
    }

    /// `observe(keyPaths:on:_:)` with its defaults (RealmSwift declares them here).
    public func observe(keyPaths: [String]? = nil, on queue: DispatchQueue? = nil,
                        _ block: @escaping (RealmCollectionChange<Self>) -> Void) -> NotificationToken {
        observe(keyPaths: keyPaths, on: queue, block)
    }
}

// MARK: - Typed forms

extension RealmCollection where Element: Object {
    /// Calls `block` with the collection's changes after each commit that changes the elements or, for modifications, the properties at `keyPaths`; delivered on `queue` (a serial queue) or the observing thread's run loop. Keep the token: releasing it stops the notifications.
    public func observe(keyPaths: [PartialKeyPath<Element>], on queue: DispatchQueue? = nil,
                        _ block: @escaping (RealmCollectionChange<Self>) -> Void) -> NotificationToken {
        observe(keyPaths: keyPaths.map { KeyPathNames.name($0) }, on: queue, block)
    }
}

extension RealmCollection where Element: ObjectBase {
    /// The smallest value at `keyPath`, nil when empty.
    public func min<T: _HasPersistedType>(of keyPath: KeyPath<Element, T>) -> T? where T.PersistedType: MinMaxType {
        min(ofProperty: _name(for: keyPath))
    }
    /// The largest value at `keyPath`, nil when empty.
    public func max<T: _HasPersistedType>(of keyPath: KeyPath<Element, T>) -> T? where T.PersistedType: MinMaxType {
        max(ofProperty: _name(for: keyPath))
    }
    /// The sum of the values at `keyPath` (zero when empty).
    public func sum<T: _HasPersistedType>(of keyPath: KeyPath<Element, T>) -> T where T.PersistedType: AddableType {
        sum(ofProperty: _name(for: keyPath))
    }
    /// The average of the values at `keyPath`, nil when empty.
    public func average<T: _HasPersistedType>(of keyPath: KeyPath<Element, T>) -> T? where T.PersistedType: AddableType {
        average(ofProperty: _name(for: keyPath))
    }
}

extension RealmCollection where Element: KeypathSortable {
    /// Sorted by a property (or a key path through to-one links).
    public func sorted(byKeyPath keyPath: String, ascending: Bool = true) -> Results<Element> {
        sorted(by: [SortDescriptor(keyPath: keyPath, ascending: ascending)])
    }

    /// Sorted by a property named by key path (`\.age`).
    public func sorted<T: _HasPersistedType>(by keyPath: KeyPath<Element, T>, ascending: Bool = true) -> Results<Element>
    where T.PersistedType: SortableType, Element: ObjectBase {
        sorted(byKeyPath: _name(for: keyPath), ascending: ascending)
    }

    /// The first element of each distinct combination of these properties' values.
    public func distinct<S: Sequence>(by keyPaths: S) -> Results<Element>
    where S.Iterator.Element == PartialKeyPath<Element>, Element: ObjectBase {
        distinct(by: keyPaths.map { _name(for: $0) })
    }
}

extension RealmCollection where Element.PersistedType: SortableType {
    /// The values sorted (a collection of values).
    public func sorted(ascending: Bool = true) -> Results<Element> {
        sorted(by: [SortDescriptor(keyPath: "self", ascending: ascending)])
    }

    /// The distinct values, first occurrences kept.
    public func distinct() -> Results<Element> { distinct(by: ["self"]) }
}

extension RealmCollection where Element.PersistedType: MinMaxType {
    /// The least value (nil when empty or all nil).
    public func min() -> Element? { min(ofProperty: "self") }
    /// The greatest value.
    public func max() -> Element? { max(ofProperty: "self") }
}

extension RealmCollection where Element.PersistedType: AddableType {
    /// The sum of the values (0 when empty).
    public func sum() -> Element { sum(ofProperty: "self") }
    /// The mean of the values (nil when empty).
    public func average<T: _HasPersistedType>() -> T? where T.PersistedType: AddableType { average(ofProperty: "self") }
}

extension RealmCollection where Element: Encodable {
    /// Encodes the elements as an unkeyed container (an array), as RealmSwift does.
    public func encode(to encoder: Encoder) throws {
        var container = encoder.unkeyedContainer()
        for value in self { try container.encode(value) }
    }
}

/// The name of the property a key path reads (`\Person.dog.name` → "dog.name").
public func _name<T: ObjectBase>(for keyPath: PartialKeyPath<T>) -> String {
    guard let model = T.self as? Object.Type else {
        strataTrap("key path of \(T.self): only key paths of Object subclasses name properties")
    }
    return KeyPathNames.name(keyPath, of: model)
}
