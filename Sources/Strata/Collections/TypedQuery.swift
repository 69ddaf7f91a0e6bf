import Foundation

/// The typed form of a query, as RealmSwift writes it:
///
/// ```swift
/// realm.objects(Dog.self).where { $0.color == "黑色" && $0.name.starts(with: "小") }
/// realm.objects(Person.self).where { $0.dogs.age > 5 && $0.company.name == "星辰科技" }
/// ```
///
/// A `Query<T>` is either a key path into the objects (`$0.dogs.age`) or, once compared, a
/// predicate (`Query<Bool>`). Values are passed to the core as arguments, never pasted into the
/// text, so a string may hold any character. Through a list (`$0.dogs.age > 5`) a comparison
/// holds when it holds for any element, as in a predicate string.
@dynamicMemberLookup
public struct Query<T> {
    /// The core's text: a key path, or a predicate with `$n` placeholders into `args`.
    let text: String
    let args: [Any]
    /// A key path through a list: the part up to and including the list (for aggregates).
    let listPath: String?
    let rest: String?

    init(text: String, args: [Any] = [], listPath: String? = nil, rest: String? = nil) {
        self.text = text
        self.args = args
        self.listPath = listPath
        self.rest = rest
    }

    private func member<V>(_ name: String, crossesList: Bool = false) -> Query<V> {
        let path = text.isEmpty ? name : "\(text).\(name)"
        if crossesList { return Query<V>(text: path, listPath: path, rest: nil) }
        if let l = listPath { return Query<V>(text: path, listPath: l, rest: rest.map { "\($0).\(name)" } ?? name) }
        return Query<V>(text: path)
    }

    /// A property of the objects.
    public subscript<V>(dynamicMember keyPath: KeyPath<T, V>) -> Query<V> where T: Object {
        member(KeyPathNames.name(keyPath), crossesList: V.self is any _QueryCollection.Type)
    }

    /// A property of a to-one link's object.
    public subscript<V>(dynamicMember keyPath: KeyPath<T.Wrapped, V>) -> Query<V>
    where T: _QueryOptional, T.Wrapped: Object {
        member(KeyPathNames.name(keyPath), crossesList: V.self is any _QueryCollection.Type)
    }

    /// A property of the objects of a list or of linking objects (any of them).
    public subscript<V>(dynamicMember keyPath: KeyPath<T.Element, V>) -> Query<V>
    where T: _QueryCollection, T.Element: Object {
        member(KeyPathNames.name(keyPath))
    }

    /// A predicate with one more argument: `$n` numbered after the arguments of both sides.
    fileprivate static func predicate(_ lhs: Query, _ op: String, value: Any) -> Query<Bool> {
        Query<Bool>(text: "\(lhs.text) \(op) $\(lhs.args.count)", args: lhs.args + [value])
    }

    fileprivate static func predicate<U>(_ lhs: Query, _ op: String, _ rhs: Query<U>) -> Query<Bool> {
        Query<Bool>(text: "\(lhs.text) \(op) \(rhs.shifted(by: lhs.args.count))", args: lhs.args + rhs.args)
    }

    /// This query's text with its placeholders moved up by n.
    func shifted(by n: Int) -> String {
        if n == 0 || args.isEmpty { return text }
        var spec = QuerySpec()
        spec.args = Array(repeating: Optional<Int>.none as Any, count: n)
        spec.add(format: text, args)
        return spec.predicates[0]
    }

    private func aggregate<V>(_ name: String) -> Query<V> {
        if let l = listPath {
            return Query<V>(text: rest.map { "\(l).\(name).\($0)" } ?? "\(l).\(name)", args: args)
        }
        return Query<V>(text: "\(text).\(name)", args: args)
    }
}

// MARK: comparing

extension Query {
    public static func == (lhs: Query, rhs: T) -> Query<Bool> { predicate(lhs, "==", value: rhs) }
    public static func != (lhs: Query, rhs: T) -> Query<Bool> { predicate(lhs, "!=", value: rhs) }
    /// Two properties compared.
    public static func == (lhs: Query, rhs: Query) -> Query<Bool> { predicate(lhs, "==", rhs) }
    public static func != (lhs: Query, rhs: Query) -> Query<Bool> { predicate(lhs, "!=", rhs) }

    /// The value is one of these (`IN`).
    public func `in`<S: Sequence>(_ values: S) -> Query<Bool> where S.Element == T {
        Query.predicate(self, "IN", value: Array(values))
    }
}

extension Query where T: Comparable {
    public static func < (lhs: Query, rhs: T) -> Query<Bool> { predicate(lhs, "<", value: rhs) }
    public static func <= (lhs: Query, rhs: T) -> Query<Bool> { predicate(lhs, "<=", value: rhs) }
    public static func > (lhs: Query, rhs: T) -> Query<Bool> { predicate(lhs, ">", value: rhs) }
    public static func >= (lhs: Query, rhs: T) -> Query<Bool> { predicate(lhs, ">=", value: rhs) }
    public static func < (lhs: Query, rhs: Query) -> Query<Bool> { predicate(lhs, "<", rhs) }
    public static func <= (lhs: Query, rhs: Query) -> Query<Bool> { predicate(lhs, "<=", rhs) }
    public static func > (lhs: Query, rhs: Query) -> Query<Bool> { predicate(lhs, ">", rhs) }
    public static func >= (lhs: Query, rhs: Query) -> Query<Bool> { predicate(lhs, ">=", rhs) }

    /// Within the range, ends included (`BETWEEN`).
    public func contains(_ range: ClosedRange<T>) -> Query<Bool> {
        Query<Bool>(text: "\(text) BETWEEN {$\(args.count), $\(args.count + 1)}",
                    args: args + [range.lowerBound, range.upperBound])
    }
}

extension Query where T: _QueryOptional, T.Wrapped: Comparable {
    public static func < (lhs: Query, rhs: T.Wrapped) -> Query<Bool> { predicate(lhs, "<", value: rhs) }
    public static func <= (lhs: Query, rhs: T.Wrapped) -> Query<Bool> { predicate(lhs, "<=", value: rhs) }
    public static func > (lhs: Query, rhs: T.Wrapped) -> Query<Bool> { predicate(lhs, ">", value: rhs) }
    public static func >= (lhs: Query, rhs: T.Wrapped) -> Query<Bool> { predicate(lhs, ">=", value: rhs) }
}

// MARK: strings

/// How string comparisons treat case and diacritics (`[c]`, `[d]`).
public struct StringOptions: OptionSet, Sendable {
    public let rawValue: Int
    public init(rawValue: Int) { self.rawValue = rawValue }
    public static let caseInsensitive = StringOptions(rawValue: 1)
    public static let diacriticInsensitive = StringOptions(rawValue: 2)

    var modifier: String {
        switch (contains(.caseInsensitive), contains(.diacriticInsensitive)) {
        case (true, true): return "[cd]"
        case (true, false): return "[c]"
        case (false, true): return "[d]"
        case (false, false): return ""
        }
    }
}

extension Query where T: _QueryString {
    public func starts(with prefix: String, options: StringOptions = []) -> Query<Bool> {
        Query.predicate(self, "BEGINSWITH" + options.modifier, value: prefix)
    }
    public func ends(with suffix: String, options: StringOptions = []) -> Query<Bool> {
        Query.predicate(self, "ENDSWITH" + options.modifier, value: suffix)
    }
    public func contains(_ part: String, options: StringOptions = []) -> Query<Bool> {
        Query.predicate(self, "CONTAINS" + options.modifier, value: part)
    }
    public func equals(_ other: String, options: StringOptions = []) -> Query<Bool> {
        Query.predicate(self, "==" + options.modifier, value: other)
    }
    /// `*` any run of characters, `?` one.
    public func like(_ pattern: String, caseInsensitive: Bool = false) -> Query<Bool> {
        Query.predicate(self, caseInsensitive ? "LIKE[c]" : "LIKE", value: pattern)
    }
}

// MARK: collections and aggregates

extension Query where T: _QueryCollection {
    /// How many objects (or values) the list holds.
    public var count: Query<Int> { Query<Int>(text: "\(text).@count", args: args) }
}

extension Query {
    /// The sum, mean, least or greatest of the values a path through a list reaches
    /// (`$0.dogs.age.sum > 10`), or of a list of numbers.
    public var sum: Query<T> { aggregate("@sum") }
    public var avg: Query<Double> { aggregate("@avg") }
    public var min: Query<T> { aggregate("@min") }
    public var max: Query<T> { aggregate("@max") }
}

// MARK: logic

extension Query where T == Bool {
    public static func && (lhs: Query, rhs: Query) -> Query {
        Query(text: "(\(lhs.text)) AND (\(rhs.shifted(by: lhs.args.count)))", args: lhs.args + rhs.args)
    }
    public static func || (lhs: Query, rhs: Query) -> Query {
        Query(text: "(\(lhs.text)) OR (\(rhs.shifted(by: lhs.args.count)))", args: lhs.args + rhs.args)
    }
    public static prefix func ! (q: Query) -> Query { Query(text: "NOT (\(q.text))", args: q.args) }
}

// MARK: helper protocols

/// `Optional` in typed queries (a to-one link, an optional value).
public protocol _QueryOptional { associatedtype Wrapped }
extension Optional: _QueryOptional {}

/// `String` and `String?` in typed queries.
public protocol _QueryString {}
extension String: _QueryString {}
extension Optional: _QueryString where Wrapped == String {}

/// `List` and `LinkingObjects` in typed queries.
public protocol _QueryCollection { associatedtype Element }
extension List: _QueryCollection {}
extension LinkingObjects: _QueryCollection {}

/// Numbers (and their optionals) in typed queries: compared across types
/// (`$0.dogs.age.max > $0.dogs.age.avg`).
public protocol _QueryNumeric {}
extension Int: _QueryNumeric {}
extension Int8: _QueryNumeric {}
extension Int16: _QueryNumeric {}
extension Int32: _QueryNumeric {}
extension Int64: _QueryNumeric {}
extension Float: _QueryNumeric {}
extension Double: _QueryNumeric {}
extension Optional: _QueryNumeric where Wrapped: _QueryNumeric {}

extension Query where T: _QueryNumeric {
    public static func == <U: _QueryNumeric>(lhs: Query, rhs: Query<U>) -> Query<Bool> { predicate(lhs, "==", rhs) }
    public static func != <U: _QueryNumeric>(lhs: Query, rhs: Query<U>) -> Query<Bool> { predicate(lhs, "!=", rhs) }
    public static func < <U: _QueryNumeric>(lhs: Query, rhs: Query<U>) -> Query<Bool> { predicate(lhs, "<", rhs) }
    public static func <= <U: _QueryNumeric>(lhs: Query, rhs: Query<U>) -> Query<Bool> { predicate(lhs, "<=", rhs) }
    public static func > <U: _QueryNumeric>(lhs: Query, rhs: Query<U>) -> Query<Bool> { predicate(lhs, ">", rhs) }
    public static func >= <U: _QueryNumeric>(lhs: Query, rhs: Query<U>) -> Query<Bool> { predicate(lhs, ">=", rhs) }
}
