import Foundation

/// The typed form of a query, as RealmSwift writes it:
///
/// ```swift
/// realm.objects(Dog.self).where { $0.color == "黑色" && $0.name.starts(with: "小") }
/// realm.objects(Person.self).where { $0.dogs.age > 5 && $0.company.name == "星辰科技" }
/// realm.objects(Person.self).where { ($0.dogs.age > 5 && $0.dogs.color == "白色").count > 1 }
/// ```
///
/// A `Query<T>` is a node of an expression: a key path into the objects (`$0.dogs.age`), a
/// constant, or (once compared) a predicate, `Query<Bool>`. It becomes the text of Realm's query
/// language with its constants as arguments, never pasted into the text, so a string may hold
/// any character. Through a list (`$0.dogs.age > 5`) a comparison holds when it holds for any
/// element; a Bool property alone (`$0.isRead`) is a predicate. The operations offered depend on
/// the type, as in RealmSwift: comparisons for numbers, dates and strings, string operations,
/// `contains` / `containsAny(in:)` / `count` and aggregates for collections, `rawValue` for
/// enums, `persistableValue` for custom persistable types.
@dynamicMemberLookup
public struct Query<T> {
    fileprivate let node: QueryNode

    fileprivate init(_ node: QueryNode) { self.node = node }

    /// The root of a query over objects, or over the values of a collection (`self`).
    init(isPrimitive: Bool = false) {
        node = isPrimitive ? .keyPath(["self"], options: [.isCollection, .throughCollection]) : .keyPath([], options: [])
    }

    private func appending(_ name: String, options: KeyPathOptions) -> QueryNode {
        guard case let .keyPath(kp, o) = node else {
            strataTrap("Cannot apply the key path '\(name)' to \(QueryText.build(node).0)")
        }
        return .keyPath(kp + [name], options: o.union(options.contains(.isCollection) ? options.union(.throughCollection) : options))
    }

    fileprivate func erasingAny(appending name: String? = nil) -> QueryNode {
        guard case let .keyPath(kp, o) = node else {
            strataTrap("Cannot apply a key path to \(QueryText.build(node).0)")
        }
        // an aggregate or count is one value per object (comparable with another)
        let scalar: KeyPathOptions = name == nil ? [.requiresAny] : [.requiresAny, .isCollection]
        return .keyPath(kp + (name.map { [$0] } ?? []), options: o.subtracting(scalar))
    }

    fileprivate func collectionAggregate(_ aggregate: String) -> QueryNode {
        guard case let .keyPath(kp, o) = node else {
            strataTrap("Cannot apply \(aggregate) to \(QueryText.build(node).0)")
        }
        var path = kp
        if path.count > 1 { path.insert(aggregate, at: 1) } else { path.append(aggregate) }
        // one value per object: comparable with another aggregate (RealmSwift refuses that)
        return .keyPath(path, options: o.subtracting([.requiresAny, .isCollection]))
    }

    // MARK: comparing

    /// The value equals `rhs` (`==` in the predicate).
    public static func == (_ lhs: Query, _ rhs: T) -> Query<Bool> { .init(.comparison(.equal, lhs.node, .constant(rhs), [])) }
    /// The value equals another property's (`==` between two key paths).
    public static func == (_ lhs: Query, _ rhs: Query) -> Query<Bool> { .init(.comparison(.equal, lhs.node, rhs.node, [])) }
    /// The value differs from `rhs` (`!=`).
    public static func != (_ lhs: Query, _ rhs: T) -> Query<Bool> { .init(.comparison(.notEqual, lhs.node, .constant(rhs), [])) }
    /// The value differs from another property's (`!=` between two key paths).
    public static func != (_ lhs: Query, _ rhs: Query) -> Query<Bool> { .init(.comparison(.notEqual, lhs.node, rhs.node, [])) }

    /// The value is one of these (`IN`).
    public func `in`<U: Sequence>(_ collection: U) -> Query<Bool> where U.Element == T {
        .init(.comparison(.in, node, .constant(Array(collection)), []))
    }

    // MARK: key paths

    /// A property of the objects.
    public subscript<V>(dynamicMember member: KeyPath<T, V>) -> Query<V> where T: ObjectBase {
        .init(appending(_name(for: member), options: []))
    }

    /// A collection property of the objects: comparisons through it hold for any element.
    public subscript<V: RealmCollectionBase>(dynamicMember member: KeyPath<T, V>) -> Query<V> where T: ObjectBase {
        .init(appending(_name(for: member), options: [.isCollection, .requiresAny]))
    }

    /// A map property of the objects: comparisons through its values hold for any of them.
    public subscript<V: RealmKeyedCollection>(dynamicMember member: KeyPath<T, V>) -> Query<V> where T: ObjectBase {
        .init(appending(_name(for: member), options: [.isCollection, .requiresAny]))
    }

    /// RealmSwift's test hook: a query on nothing.
    public static func _constructForTesting() -> Query<T> { Query<T>() }

    /// The predicate text (NSPredicate's `%@` placeholders) and its arguments.
    public func _constructPredicate() -> (String, [Any]) { QueryText.build(node) }
}

// MARK: - Numbers, dates

extension Query where T: _HasPersistedType, T.PersistedType: _QueryNumeric {
    /// Greater than `rhs`.
    public static func > (_ lhs: Query, _ rhs: T) -> Query<Bool> { .init(.comparison(.greaterThan, lhs.node, .constant(rhs), [])) }
    /// Greater than another property's value.
    public static func > (_ lhs: Query, _ rhs: Query) -> Query<Bool> { .init(.comparison(.greaterThan, lhs.node, rhs.node, [])) }
    /// Greater than or equal to `rhs`.
    public static func >= (_ lhs: Query, _ rhs: T) -> Query<Bool> { .init(.comparison(.greaterThanEqual, lhs.node, .constant(rhs), [])) }
    /// Greater than or equal to another property's value.
    public static func >= (_ lhs: Query, _ rhs: Query) -> Query<Bool> { .init(.comparison(.greaterThanEqual, lhs.node, rhs.node, [])) }
    /// Less than `rhs`.
    public static func < (_ lhs: Query, _ rhs: T) -> Query<Bool> { .init(.comparison(.lessThan, lhs.node, .constant(rhs), [])) }
    /// Less than another property's value.
    public static func < (_ lhs: Query, _ rhs: Query) -> Query<Bool> { .init(.comparison(.lessThan, lhs.node, rhs.node, [])) }
    /// Less than or equal to `rhs`.
    public static func <= (_ lhs: Query, _ rhs: T) -> Query<Bool> { .init(.comparison(.lessThanEqual, lhs.node, .constant(rhs), [])) }
    /// Less than or equal to another property's value.
    public static func <= (_ lhs: Query, _ rhs: Query) -> Query<Bool> { .init(.comparison(.lessThanEqual, lhs.node, rhs.node, [])) }

    /// An aggregate over a collection the key path goes through (`$0.dogs.age.avg > 3`).
    public var min: Query { Query(collectionAggregate("@min")) }
    /// The largest value over the collection the key path goes through (`@max`).
    public var max: Query { Query(collectionAggregate("@max")) }
    /// The average over the collection the key path goes through (`@avg`).
    public var avg: Query { Query(collectionAggregate("@avg")) }
    /// The sum over the collection the key path goes through (`@sum`).
    public var sum: Query { Query(collectionAggregate("@sum")) }
}

// MARK: - Logic

extension Query where T == Bool {
    /// Negation (`NOT`).
    public static prefix func ! (_ query: Query) -> Query<Bool> { .init(.not(query.node)) }
    /// Both conditions hold (`AND`).
    public static func && (_ lhs: Query, _ rhs: Query) -> Query<Bool> { .init(.comparison(.and, lhs.node, rhs.node, [])) }
    /// Either condition holds (`OR`).
    public static func || (_ lhs: Query, _ rhs: Query) -> Query<Bool> { .init(.comparison(.or, lhs.node, rhs.node, [])) }

    /// How many elements of the collection the predicate's key paths go through satisfy it
    /// together (a SUBQUERY): `($0.dogs.age > 5 && $0.dogs.color == "白").count > 1`.
    public var count: Query<Int> { .init(.subqueryCount(node)) }
}

// MARK: - Optionals

/// An Optional in generic constraints (RealmSwift's name).
public protocol OptionalProtocol {
    /// The type the optional wraps.
    associatedtype Wrapped
}
extension Optional: OptionalProtocol {}

extension Query where T: OptionalProtocol {
    /// A property of a to-one link's object.
    public subscript<V>(dynamicMember member: KeyPath<T.Wrapped, V>) -> Query<V> where T.Wrapped: ObjectBase {
        .init(appending(_name(for: member), options: []))
    }
}

extension Query {
    /// The value lies between lo and hi: hi excluded (`a..<b`), or included (`BETWEEN`).
    fileprivate func within(_ lo: Any, _ hi: Any, closed: Bool) -> Query<Bool> {
        if closed { return .init(.between(node, .constant(lo), .constant(hi))) }
        return .init(.comparison(.and, .comparison(.greaterThanEqual, node, .constant(lo), []),
                                 .comparison(.lessThan, node, .constant(hi), []), []))
    }
}

extension Query where T: OptionalProtocol, T.Wrapped: Comparable {
    /// The value lies in the range, its upper bound excluded (null never does).
    public func contains(_ range: Range<T.Wrapped>) -> Query<Bool> { within(range.lowerBound, range.upperBound, closed: false) }
    /// The value lies in the range, ends included (`BETWEEN`; null never does).
    public func contains(_ range: ClosedRange<T.Wrapped>) -> Query<Bool> { within(range.lowerBound, range.upperBound, closed: true) }
}

extension Query where T: Comparable {
    /// Within the range (`a..<b`: the upper bound excluded).
    public func contains(_ range: Range<T>) -> Query<Bool> { within(range.lowerBound, range.upperBound, closed: false) }
    /// Within the range, ends included (`BETWEEN`).
    public func contains(_ range: ClosedRange<T>) -> Query<Bool> { within(range.lowerBound, range.upperBound, closed: true) }
}

// MARK: - Collections

extension Query where T: RealmCollection {
    /// A property of the collection's objects (any of them).
    public subscript<V>(dynamicMember member: KeyPath<T.Element, V>) -> Query<V> where T.Element: ObjectBase {
        .init(appending(_name(for: member), options: []))
    }

    /// How many elements the collection holds.
    public var count: Query<Int> { .init(erasingAny(appending: "@count")) }

    /// The collection holds `value` (an object, or a value of a collection of values).
    public func contains(_ value: T.Element) -> Query<Bool> {
        .init(.comparison(.equal, .keyPath(erasingAny().keyPathComponents, options: [.isCollection, .requiresAny]), .constant(value), []))
    }

    /// The collection holds one of these.
    public func containsAny<U: Sequence>(in collection: U) -> Query<Bool> where U.Element == T.Element {
        .init(.comparison(.in, node, .constant(Array(collection)), []))
    }

    /// Any element equals `rhs`.
    public static func == (_ lhs: Query<T>, _ rhs: T.Element) -> Query<Bool> { .init(.comparison(.equal, lhs.node, .constant(rhs), [])) }
    /// No element equals `rhs` (a collection's `!=` is true when some element differs).
    public static func != (_ lhs: Query<T>, _ rhs: T.Element) -> Query<Bool> { .init(.comparison(.notEqual, lhs.node, .constant(rhs), [])) }

    /// The values of the collection seen as their stored type.
    public var persistableValue: Query<AnyRealmCollection<T.Element.PersistedType>> { .init(node) }
}

extension Query {
    /// Every element (a map's values) of the collection lies between lo and hi (hi included
    /// when `closed`).
    fileprivate func elementsWithin(_ lo: Any, _ hi: Any, closed: Bool) -> Query<Bool> {
        .init(.comparison(.and, .comparison(.greaterThanEqual, erasingAny(appending: "@min"), .constant(lo), []),
                          .comparison(closed ? .lessThanEqual : .lessThan, erasingAny(appending: "@max"), .constant(hi), []), []))
    }
}

extension Query where T: RealmCollection, T.Element: Comparable {
    /// Every element lies in the range.
    public func contains(_ range: Range<T.Element>) -> Query<Bool> { elementsWithin(range.lowerBound, range.upperBound, closed: false) }
    /// Every element lies in the range, ends included.
    public func contains(_ range: ClosedRange<T.Element>) -> Query<Bool> { elementsWithin(range.lowerBound, range.upperBound, closed: true) }
}

extension Query where T: RealmCollection, T.Element: OptionalProtocol, T.Element.Wrapped: Comparable {
    /// Every element lies in the range, its upper bound excluded.
    public func contains(_ range: Range<T.Element.Wrapped>) -> Query<Bool> { elementsWithin(range.lowerBound, range.upperBound, closed: false) }
    /// Every element lies in the range, ends included.
    public func contains(_ range: ClosedRange<T.Element.Wrapped>) -> Query<Bool> { elementsWithin(range.lowerBound, range.upperBound, closed: true) }
}

extension Query where T: RealmCollection, T.Element: _HasPersistedType, T.Element.PersistedType: _QueryNumeric {
    /// Any element compares so.
    public static func > (_ lhs: Query<T>, _ rhs: T.Element) -> Query<Bool> { .init(.comparison(.greaterThan, lhs.node, .constant(rhs), [])) }
    /// Any element is greater than or equal to `rhs`.
    public static func >= (_ lhs: Query<T>, _ rhs: T.Element) -> Query<Bool> { .init(.comparison(.greaterThanEqual, lhs.node, .constant(rhs), [])) }
    /// Any element is less than `rhs`.
    public static func < (_ lhs: Query<T>, _ rhs: T.Element) -> Query<Bool> { .init(.comparison(.lessThan, lhs.node, .constant(rhs), [])) }
    /// Any element is less than or equal to `rhs`.
    public static func <= (_ lhs: Query<T>, _ rhs: T.Element) -> Query<Bool> { .init(.comparison(.lessThanEqual, lhs.node, .constant(rhs), [])) }

    /// An aggregate of the collection's values.
    public var min: Query<T.Element> { .init(erasingAny(appending: "@min")) }
    /// The largest of the collection's values (`@max`).
    public var max: Query<T.Element> { .init(erasingAny(appending: "@max")) }
    /// The average of the collection's values (`@avg`).
    public var avg: Query<T.Element> { .init(erasingAny(appending: "@avg")) }
    /// The sum of the collection's values (`@sum`).
    public var sum: Query<T.Element> { .init(erasingAny(appending: "@sum")) }
}

// MARK: - Enums and mapped types

extension Query where T: PersistableEnum, T.RawValue: _RealmSchemaDiscoverable {
    /// The enum's raw value (`$0.mood.rawValue == "sad"`).
    public var rawValue: Query<T.RawValue> { .init(node) }
}

extension Query where T: OptionalProtocol, T.Wrapped: PersistableEnum, T.Wrapped.RawValue: _RealmSchemaDiscoverable {
    /// The optional enum's raw value (nil when the property is nil).
    public var rawValue: Query<T.Wrapped.RawValue?> { .init(node) }
}

extension Query where T: RealmCollection, T.Element: PersistableEnum, T.Element.RawValue: RealmCollectionValue {
    /// The raw values of a collection of enums.
    public var rawValue: Query<AnyRealmCollection<T.Element.RawValue>> { .init(node) }
}

extension Query where T: RealmCollection, T.Element: OptionalProtocol, T.Element.Wrapped: PersistableEnum,
                      T.Element.Wrapped.RawValue: _RealmCollectionValueInsideOptional {
    /// The raw values of a collection of optional enums.
    public var rawValue: Query<AnyRealmCollection<T.Element.Wrapped.RawValue?>> { .init(node) }
}

extension Query where T: _HasPersistedType {
    /// The value seen as its stored type (a `CustomPersistable`'s `persistableValue`).
    public var persistableValue: Query<T.PersistedType> { .init(node) }
}

// MARK: - Strings and bytes

/// How string comparisons treat case and diacritics (`[c]`, `[d]`).
public struct StringOptions: OptionSet, Sendable {
    public let rawValue: Int8
    public init(rawValue: Int8) { self.rawValue = rawValue }
    /// Letters compare without regard to case (`[c]`).
    public static let caseInsensitive = StringOptions(rawValue: 1)
    /// Letters compare without regard to diacritics (`[d]`).
    public static let diacriticInsensitive = StringOptions(rawValue: 2)
}

extension Query where T: _HasPersistedType, T.PersistedType: _QueryString {
    /// `*` any run of characters, `?` one.
    public func like(_ value: T, caseInsensitive: Bool = false) -> Query<Bool> {
        .init(.comparison(.like, node, .constant(value), caseInsensitive ? [.caseInsensitive] : []))
    }
    /// Matches another property's value as a pattern (`*` any run of characters, `?` one).
    public func like<U>(_ column: Query<U>, caseInsensitive: Bool = false) -> Query<Bool> {
        .init(.comparison(.like, node, column.node, caseInsensitive ? [.caseInsensitive] : []))
    }
}

extension Query where T: _HasPersistedType, T.PersistedType: _QueryBinary {
    /// Contains `value` (`CONTAINS`).
    public func contains(_ value: T, options: StringOptions = []) -> Query<Bool> {
        .init(.comparison(.contains, node, .constant(value), options))
    }
    /// Contains another property's value.
    public func contains<U>(_ column: Query<U>, options: StringOptions = []) -> Query<Bool> {
        .init(.comparison(.contains, node, column.node, options))
    }
    /// Starts with `value` (`BEGINSWITH`).
    public func starts(with value: T, options: StringOptions = []) -> Query<Bool> {
        .init(.comparison(.beginsWith, node, .constant(value), options))
    }
    /// Starts with another property's value.
    public func starts<U>(with column: Query<U>, options: StringOptions = []) -> Query<Bool> {
        .init(.comparison(.beginsWith, node, column.node, options))
    }
    /// Ends with `value` (`ENDSWITH`).
    public func ends(with value: T, options: StringOptions = []) -> Query<Bool> {
        .init(.comparison(.endsWith, node, .constant(value), options))
    }
    /// Ends with another property's value.
    public func ends<U>(with column: Query<U>, options: StringOptions = []) -> Query<Bool> {
        .init(.comparison(.endsWith, node, column.node, options))
    }
    /// Equals `value` under the options (`==[c]`, `==[d]`).
    public func equals(_ value: T, options: StringOptions = []) -> Query<Bool> {
        .init(.comparison(.equal, node, .constant(value), options))
    }
    /// Equals another property's value under the options.
    public func equals<U>(_ column: Query<U>, options: StringOptions = []) -> Query<Bool> {
        .init(.comparison(.equal, node, column.node, options))
    }
    /// Differs from `value` under the options.
    public func notEquals(_ value: T, options: StringOptions = []) -> Query<Bool> {
        .init(.comparison(.notEqual, node, .constant(value), options))
    }
    /// Differs from another property's value under the options.
    public func notEquals<U>(_ column: Query<U>, options: StringOptions = []) -> Query<Bool> {
        .init(.comparison(.notEqual, node, column.node, options))
    }

    /// Sorts after `rhs` (strings and bytes compare by their UTF-8 bytes).
    public static func > (_ lhs: Query, _ rhs: T) -> Query<Bool> { .init(.comparison(.greaterThan, lhs.node, .constant(rhs), [])) }
    /// Sorts after another property's value.
    public static func > (_ lhs: Query, _ rhs: Query) -> Query<Bool> { .init(.comparison(.greaterThan, lhs.node, rhs.node, [])) }
    /// Sorts after or equals `rhs`.
    public static func >= (_ lhs: Query, _ rhs: T) -> Query<Bool> { .init(.comparison(.greaterThanEqual, lhs.node, .constant(rhs), [])) }
    /// Sorts after or equals another property's value.
    public static func >= (_ lhs: Query, _ rhs: Query) -> Query<Bool> { .init(.comparison(.greaterThanEqual, lhs.node, rhs.node, [])) }
    /// Sorts before `rhs`.
    public static func < (_ lhs: Query, _ rhs: T) -> Query<Bool> { .init(.comparison(.lessThan, lhs.node, .constant(rhs), [])) }
    /// Sorts before another property's value.
    public static func < (_ lhs: Query, _ rhs: Query) -> Query<Bool> { .init(.comparison(.lessThan, lhs.node, rhs.node, [])) }
    /// Sorts before or equals `rhs`.
    public static func <= (_ lhs: Query, _ rhs: T) -> Query<Bool> { .init(.comparison(.lessThanEqual, lhs.node, .constant(rhs), [])) }
    /// Sorts before or equals another property's value.
    public static func <= (_ lhs: Query, _ rhs: Query) -> Query<Bool> { .init(.comparison(.lessThanEqual, lhs.node, rhs.node, [])) }
}

/// Numbers and dates (and their optionals) in typed queries: ordered comparisons and aggregates.
public protocol _QueryNumeric: _RealmSchemaDiscoverable {}
extension Int: _QueryNumeric {}
extension Int8: _QueryNumeric {}
extension Int16: _QueryNumeric {}
extension Int32: _QueryNumeric {}
extension Int64: _QueryNumeric {}
extension Float: _QueryNumeric {}
extension Double: _QueryNumeric {}
extension Decimal128: _QueryNumeric {}
extension Date: _QueryNumeric {}
extension AnyRealmValue: _QueryNumeric {}
extension Optional: _QueryNumeric where Wrapped: _HasPersistedType & _RealmSchemaDiscoverable, Wrapped.PersistedType: _QueryNumeric {}

/// Strings in typed queries: `like` and the string operations.
public protocol _QueryString: _QueryBinary {}
extension String: _QueryString {}
extension Optional: _QueryString where Wrapped: _HasPersistedType, Wrapped.PersistedType: _QueryString {}

/// Strings and bytes in typed queries: contains, starts, ends, equals with options.
public protocol _QueryBinary {}
extension Data: _QueryBinary {}
extension Optional: _QueryBinary where Wrapped: _HasPersistedType, Wrapped.PersistedType: _QueryBinary {}

// MARK: - The expression and its text

struct KeyPathOptions: OptionSet {
    let rawValue: Int8
    static let isCollection = KeyPathOptions(rawValue: 1)
    static let requiresAny = KeyPathOptions(rawValue: 2)
    /// The path went through a collection (kept when a count or aggregate makes it one value):
    /// what a subquery ranges over (`($0.list.ints.count > 0).count`).
    static let throughCollection = KeyPathOptions(rawValue: 4)
}

// MARK: - Maps

extension Query where T: RealmKeyedCollection {
    /// The map holds one of these values.
    public func containsAny<U: Sequence>(in collection: U) -> Query<Bool> where U.Element == T.Value {
        .init(.comparison(.in, node, .constant(Array(collection)), []))
    }

    /// The map holds `value` among its values.
    public func contains(_ value: T.Value) -> Query<Bool> {
        .init(.comparison(.equal, .keyPath(erasingAny().keyPathComponents, options: [.isCollection, .requiresAny]), .constant(value), []))
    }

    /// The map's values (any of them, in comparisons).
    public var values: Query<T.Value> { .init(appending("@allValues", options: [])) }

    /// The value of one key (nil when the map lacks it).
    public subscript(member: T.Key) -> Query<T.Value> { .init(.mapSubscript(erasingAny(), key: member._strataKey)) }

    /// How many keys the map holds.
    public var count: Query<Int> { .init(erasingAny(appending: "@count")) }
}

extension Query where T: RealmKeyedCollection, T.Key == String {
    /// The map's keys (any of them, in comparisons).
    public var keys: Query<String> { .init(appending("@allKeys", options: [])) }
}

extension Query where T: RealmKeyedCollection, T.Value: Comparable {
    /// Every value lies in the range.
    public func contains(_ range: Range<T.Value>) -> Query<Bool> { elementsWithin(range.lowerBound, range.upperBound, closed: false) }
    /// Every value lies in the range, ends included.
    public func contains(_ range: ClosedRange<T.Value>) -> Query<Bool> { elementsWithin(range.lowerBound, range.upperBound, closed: true) }
}

extension Query where T: RealmKeyedCollection, T.Value: OptionalProtocol, T.Value.Wrapped: Comparable {
    /// Every value lies in the range.
    public func contains(_ range: Range<T.Value.Wrapped>) -> Query<Bool> { elementsWithin(range.lowerBound, range.upperBound, closed: false) }
    /// Every value lies in the range, ends included.
    public func contains(_ range: ClosedRange<T.Value.Wrapped>) -> Query<Bool> { elementsWithin(range.lowerBound, range.upperBound, closed: true) }
}

extension Query where T: RealmKeyedCollection, T.Value.PersistedType: _QueryNumeric {
    /// The least value.
    public var min: Query<T.Value> { .init(erasingAny(appending: "@min")) }
    /// The greatest value.
    public var max: Query<T.Value> { .init(erasingAny(appending: "@max")) }
    /// The average of the values.
    public var avg: Query<T.Value> { .init(erasingAny(appending: "@avg")) }
    /// The sum of the values.
    public var sum: Query<T.Value> { .init(erasingAny(appending: "@sum")) }
}

extension Query where T: RealmKeyedCollection, T.Value: PersistableEnum, T.Value.RawValue: RealmCollectionValue {
    /// The map's values as their raw values.
    public var rawValue: Query<Map<T.Key, T.Value.RawValue>> { .init(node) }
}

extension Query where T: RealmKeyedCollection, T.Value: OptionalProtocol, T.Value.Wrapped: PersistableEnum,
                      T.Value.Wrapped.RawValue: _RealmCollectionValueInsideOptional {
    /// The map's values as their raw values.
    public var rawValue: Query<Map<T.Key, T.Value.Wrapped.RawValue?>> { .init(node) }
}

extension Query where T: RealmKeyedCollection {
    /// The map's values seen as their stored type.
    public var persistableValue: Query<Map<T.Key, T.Value.PersistedType>> { .init(node) }
}

// MARK: - Full-text search

extension Query where T: _HasPersistedType, T.PersistedType: _QueryString {
    /// The string's words match `terms` (`TEXT`; beyond RealmSwift): every word of `terms` is
    /// among them, a word with a leading `-` is not, a word ending in `*` is a prefix, and words
    /// joined by punctuation or written in Chinese or Japanese characters must follow each other.
    /// Case and diacritics never matter. A property with `@Persisted(indexed: .fullText)` answers
    /// from its index; another one reads each string. nil never matches.
    ///
    ///     realm.objects(Note.self).where { $0.body.fullTextMatches("swift -objc data*") }
    public func fullTextMatches(_ terms: String) -> Query<Bool> {
        .init(.comparison(.text, node, .constant(terms), []))
    }
}

// MARK: - Geospatial

extension Query where T: OptionalProtocol, T.Wrapped: EmbeddedObject {
    /// The embedded point (`type` "Point", `coordinates` [longitude, latitude]) lies in the
    /// region (`GEOWITHIN`); an object without one never does. A class without those properties,
    /// or a region the core refuses, traps naming it when the results are read.
    public func geoWithin<U: RLMGeospatial>(_ value: U) -> Query<Bool> {
        .init(.comparison(.geoWithin, node, .constant(value), []))
    }
}

fileprivate indirect enum QueryNode {
    enum Operator: String {
        case or = "||", and = "&&", equal = "==", notEqual = "!=", lessThan = "<", lessThanEqual = "<="
        case greaterThan = ">", greaterThanEqual = ">=", `in` = "IN", contains = "CONTAINS"
        case beginsWith = "BEGINSWITH", endsWith = "ENDSWITH", like = "LIKE", geoWithin = "GEOWITHIN"
        case text = "TEXT"
    }

    case not(QueryNode)
    case constant(Any?)
    case keyPath([String], options: KeyPathOptions)
    case comparison(Operator, QueryNode, QueryNode, StringOptions)
    case between(QueryNode, QueryNode, QueryNode)
    case subqueryCount(QueryNode)
    case mapSubscript(QueryNode, key: String)

    var keyPathComponents: [String] {
        if case let .keyPath(kp, _) = self { return kp }
        return []
    }
}

/// A query expression as predicate text with `%@` placeholders and its arguments (the same
/// text RealmSwift builds; `filter(_:_:)` takes it as any predicate string).
fileprivate enum QueryText {
    static func build(_ root: QueryNode) -> (String, [Any]) {
        var text = ""
        var args: [Any] = []
        var subqueries = 0

        func options(_ o: StringOptions) -> String {
            o.isEmpty ? "" : "[\(o.contains(.caseInsensitive) ? "c" : "")\(o.contains(.diacriticInsensitive) ? "d" : "")]"
        }

        func boolean(_ node: QueryNode, not: Bool = false) {
            text += node.keyPathComponents.joined(separator: ".") + " == \(not ? "false" : "true")"
        }

        func build(_ node: QueryNode, prefix: String? = nil, isNewNode: Bool = false) {
            switch node {
            case .constant(let value):
                text += "%@"
                args.append(value.map { $0 } ?? NSNull())
            case .keyPath(let kp, let o):
                if isNewNode { return boolean(node) }
                if o.contains(.requiresAny) { text += "ANY " }
                text += kp.joined(separator: ".")
            case .not(let child):
                if case .keyPath = child, isNewNode { return boolean(child, not: true) }
                build(child, prefix: "NOT ", isNewNode: true)
            case .comparison(let op, let lhs, let rhs, let o):
                switch op {
                case .and, .or:
                    text += (prefix ?? "") + "("
                    build(lhs, isNewNode: true)
                    text += " \(op.rawValue) "
                    build(rhs, isNewNode: true)
                    text += ")"
                default:
                    if case let .keyPath(_, a) = lhs, case let .keyPath(_, b) = rhs,
                       a.contains(.isCollection), b.contains(.isCollection) {
                        strataTrap("Comparing two collection columns is not permitted.")
                    }
                    text += "(" + (prefix ?? "")
                    build(lhs)
                    text += " \(op.rawValue)\(options(o)) "
                    build(rhs)
                    text += ")"
                }
            case .between(let lhs, let lower, let upper):
                text += (prefix ?? "") + "("
                build(lhs)
                text += " BETWEEN {"
                build(lower)
                text += ", "
                build(upper)
                text += "})"
            case .mapSubscript(let path, let key):
                build(path)
                text += "[%@]"
                args.append(key)
            case .subqueryCount(let inner):
                subqueries += 1
                let (collection, rewritten) = SubqueryRewriter.rewrite(inner, subqueries)
                text += "SUBQUERY(\(collection), $col\(subqueries), "
                build(rewritten, isNewNode: true)
                text += ").@count"
            }
        }
        build(root, isNewNode: true)
        return (text, args)
    }
}

/// A SUBQUERY's predicate: key paths through its collection start with its variable.
fileprivate struct SubqueryRewriter {
    private var collection: String?
    private let counter: Int

    private mutating func rewrite(_ node: QueryNode) -> QueryNode {
        switch node {
        case .keyPath(let kp, let o):
            guard o.contains(.isCollection) || o.contains(.throughCollection), let first = kp.first else { return node }
            collection = first
            var copy = kp
            copy[0] = "$col\(counter)"
            return .keyPath(copy, options: o.contains(.isCollection) ? [.isCollection] : o.subtracting([.requiresAny, .throughCollection]))
        case .not(let child): return .not(rewrite(child))
        case .comparison(let op, let lhs, let rhs, let o): return .comparison(op, rewrite(lhs), rewrite(rhs), o)
        case .between(let lhs, let lower, let upper): return .between(rewrite(lhs), rewrite(lower), rewrite(upper))
        case .subqueryCount, .constant: return node
        case .mapSubscript: strataTrap("Subqueries do not support map subscripts.")
        }
    }

    static func rewrite(_ node: QueryNode, _ counter: Int) -> (String, QueryNode) {
        var r = SubqueryRewriter(counter: counter)
        let rewritten = r.rewrite(node)
        guard let collection = r.collection else {
            strataTrap("Subqueries must contain a keypath starting with a collection.")
        }
        return (collection, rewritten)
    }
}

// MARK: - Where

extension RealmCollection {
    /// The root of a typed query over this collection's elements: its objects (a map's values
    /// `Object?` too), else its values (`self`).
    private static var queryRoot: Query<Element> {
        let objects = Element.self is ObjectBase.Type || ((Element.self as? _OptionalMetatype.Type)?.wrappedType is ObjectBase.Type)
        return Query<Element>(isPrimitive: !objects)
    }

    /// The elements for which the typed predicate holds.
    public func `where`(_ isIncluded: (Query<Element>) -> Query<Bool>) -> Results<Element> {
        let (text, args) = isIncluded(Self.queryRoot)._constructPredicate()
        return managedResults("where").filter(text, arguments: args)
    }

    /// The position of the first element for which the typed predicate holds, or nil.
    public func index(matching isIncluded: (Query<Element>) -> Query<Bool>) -> Int? {
        let (text, args) = isIncluded(Self.queryRoot)._constructPredicate()
        return managedResults("index(matching:)").index(matching: text, arguments: args)
    }
}
