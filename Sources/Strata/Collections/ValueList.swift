import Foundation

/// The list of values (`List<Int>`, `List<String?>`, …) that a `Results` of values reads: the
/// object holding it and the property. The core queries objects, not values, so the values are
/// read in order and sorted or made distinct here (`sorted()`, `distinct()`); a predicate on
/// them is refused when the results are made (ResultsBase.validate).
struct ValueList {
    let key: Int64
    let index: Int
    /// For messages: the element type ("Int").
    let elementName: String

    /// The values as `realm` reads them now (owner: the object's TableInfo in that Realm), sorted
    /// (stably) and made distinct (the first of equal values kept) as `spec` says, then limited.
    func values(in realm: RealmInstance, info owner: TableInfo, spec: QuerySpec, what: String) -> [StoredValue] {
        let a = ObjectAccessor(realm: realm, info: owner, key: key)
        a.trapIfDeleted(what)
        var values = (0..<a.listCount(index)).map { a.listGet(index, $0) }
        if let sort = spec.sort.first {
            values = values.enumerated().sorted { x, y in
                if StoredValue.precedes(x.element, y.element) { return sort.ascending }
                if StoredValue.precedes(y.element, x.element) { return !sort.ascending }
                return x.offset < y.offset
            }.map(\.element)
        }
        if !spec.distinct.isEmpty {
            var seen: [StoredValue] = []
            values = values.filter { v in
                if seen.contains(v) { return false }
                seen.append(v)
                return true
            }
        }
        if let n = spec.limit { values = Array(values.prefix(n)) }
        return values
    }
}
