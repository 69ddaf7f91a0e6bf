import CCore
import Foundation

/// The objects of a class in a Realm: lazy (nothing is read until used) and live (after the
/// Realm writes or refreshes, the same `Results` shows the new version).
///
/// ```swift
/// let dogs = realm.objects(Dog.self)
/// dogs.count
/// for dog in dogs { print(dog.name) }
/// ```
public struct Results<Element: RealmCollectionValue>: RealmCollection {
    let base: ResultsBase

    init(realm: RealmInstance, info: TableInfo, spec: QuerySpec = QuerySpec(),
         source: ((RealmInstance) -> [Int64])? = nil, valueList: ValueList? = nil) {
        base = ResultsBase(realm: realm, info: info, spec: spec, source: source, valueList: valueList)
    }

    init(base: ResultsBase) { self.base = base }

    private func with(_ change: (inout QuerySpec) -> Void) -> Results {
        var spec = base.spec
        var source = base.source
        if base.valueList == nil && (spec.limit != nil || !spec.distinct.isEmpty) {
            /* a prefix or distinct, then more: applied in call order, as in RealmSwift (the
             * core sorts before it takes distinct values): their objects are the source */
            let limited = base
            spec = QuerySpec()
            source = { realm in limited.rebound(to: realm).keys() }
        }
        change(&spec)
        let r = Results(realm: base.realm, info: base.info, spec: spec, source: source, valueList: base.valueList)
        r.base.validate()
        return r
    }

    /// The first `maxLength` objects, as live results: with a sort, the core keeps only the
    /// best `maxLength` while it sorts (a `LIMIT`), instead of sorting every match.
    public func prefix(_ maxLength: Int) -> Results<Element> {
        precondition(maxLength >= 0, "Can't take a prefix of negative length from a collection")
        var spec = base.spec
        spec.limit = Swift.min(maxLength, spec.limit ?? .max)
        return Results(realm: base.realm, info: base.info, spec: spec, source: base.source, valueList: base.valueList)
    }

    /// The objects that also match a predicate of Realm's query language, with `%@` (the next
    /// argument), `%K` (a property name) and `$0…$n` placeholders: strings, numbers, Bool,
    /// Date, Data, ObjectId, UUID, Decimal128, nil, a managed object (link equality), or an
    /// array, List or Results of those for `IN`. An invalid predicate stops the program with a
    /// message naming the column and what was expected there, as Realm's exception does.
    ///
    /// ```swift
    /// realm.objects(Dog.self).filter("color = %@ AND name BEGINSWITH %@", "白色", "小")
    /// ```
    public func filter(_ predicateFormat: String, _ args: Any...) -> Results<Element> {
        filter(predicateFormat, arguments: args)
    }

    func filter(_ predicateFormat: String, arguments args: [Any]) -> Results<Element> {
        for a in args where !(a is String) { // (a cast to a protocol costs; the common argument first)
            if let region = a as? RLMGeospatial { Self.checkRegion(region) }
        }
        return with { $0.add(format: predicateFormat, args, root: base.info.classInfo) }
    }

    /// A region the core refuses traps when the filter is made, as RealmSwift's does.
    static func checkRegion(_ region: RLMGeospatial) {
        var err = strata_error()
        if region._strataWithGeo({ strata_geo_check($0, &err) }) != 0 {
            let message = withUnsafeBytes(of: &err.message) { String(decoding: $0.prefix(while: { $0 != 0 }), as: UTF8.self) }
            strataTrap("Invalid region in GEOWITHIN query for parameter '\(region)': \(message)")
        }
    }

    /// The position of the first element that also matches the predicate, or nil.
    func index(matching predicateFormat: String, arguments args: [Any]) -> Int? {
        let keep = Set(filter(predicateFormat, arguments: args).base.keys())
        return base.keys().firstIndex { keep.contains($0) }
    }

    /// Sorted by a property (or a key path through to-one links); a later sort comes first and
    /// the earlier ones break its ties.
    public func sorted(byKeyPath keyPath: String, ascending: Bool = true) -> Results<Element> {
        sorted(by: [SortDescriptor(keyPath: keyPath, ascending: ascending)])
    }

    public func sorted<S: Sequence>(by keyPaths: S) -> Results<Element> where S.Element == SortDescriptor {
        with { $0.sort = Array(keyPaths) + $0.sort.filter { old in !keyPaths.contains { $0.keyPath == old.keyPath } } }
    }

    /// The first object of each distinct combination of these properties' values.
    public func distinct<S: Sequence>(by keyPaths: S) -> Results<Element> where S.Element == String {
        with { $0.distinct += Array(keyPaths) }
    }

    /// The smallest value of a property over the objects (nil when there are none or all are
    /// nil).
    public func min<T: _HasPersistedType>(ofProperty property: String) -> T? where T.PersistedType: MinMaxType {
        base.aggregate(property, STRATA_AGG_MIN, as: T.self)
    }

    /// The largest value of a property over the objects.
    public func max<T: _HasPersistedType>(ofProperty property: String) -> T? where T.PersistedType: MinMaxType {
        base.aggregate(property, STRATA_AGG_MAX, as: T.self)
    }

    /// The sum of a property over the objects (0 when there are none).
    public func sum<T: _HasPersistedType>(ofProperty property: String) -> T where T.PersistedType: AddableType {
        base.aggregate(property, STRATA_AGG_SUM, as: T.self) ?? base.zero(as: T.self)
    }

    /// The mean of a property over the objects (nil when there are none).
    public func average<T: _HasPersistedType>(ofProperty property: String) -> T? where T.PersistedType: AddableType {
        base.aggregate(property, STRATA_AGG_AVG, as: T.self)
    }

    public var startIndex: Int { 0 }
    public var endIndex: Int { count }

    /// How many objects there are (counted by the core; no object is read).
    public var count: Int { base.count() }

    public subscript(position: Int) -> Element {
        let keys = base.keys()
        if position < 0 || position >= keys.count {
            strataTrap("Index \(position) is out of bounds (must be less than \(keys.count)) in \(base.what).")
        }
        if base.valueList != nil {
            return Element._strataElement(_Stored(base.values()[position]), _ElementContext(realm: base.realm, what: base.what))
        }
        return Element._strataElement(_Stored(.link(keys[position])), _ElementContext(realm: base.realm, what: base.what, info: base.info))
    }

    /// Iterates the objects of the version read when iteration began (the keys are read once,
    /// not at each step).
    ///
    /// An object handed out that nobody references any more when the next is asked for (no
    /// strong, weak or unowned reference but the iterator's) is moved to the next key instead of
    /// a new instance being made, when its class stores nothing but its properties
    /// (`ClassInfo.holdsOnlyItsPlace`): `for dog in dogs { total += dog.age }` makes one instance.
    /// Nothing can tell the difference but the count of `init`/`deinit` calls of the class.
    public struct Iterator: IteratorProtocol {
        @usableFromInline let keys: [Int64]
        /// For results of a list of values: the values, in order.
        private let values: [StoredValue]?
        private let context: _ElementContext
        @usableFromInline var i = 0
        /// The object handed out last, while its class allows moving it (see above).
        @usableFromInline var last: Object?
        @usableFromInline let reusable: Bool

        init(_ base: ResultsBase) {
            keys = base.keys()
            values = base.valueList != nil ? base.values() : nil
            context = _ElementContext(realm: base.realm, what: base.what, info: base.info)
            reusable = values == nil && base.info.classInfo.type == Element.self && base.info.classInfo.holdsOnlyItsPlace
        }

        // Inlinable: made for the element type where it is used (a generic step copies the
        // element through the type's value witnesses).
        @inlinable
        public mutating func next() -> Element? {
            guard i < keys.count else { return nil }
            defer { i += 1 }
            if reusable && isKnownUniquelyReferenced(&last) {
                let o = last.unsafelyUnwrapped
                if _ResultsIteration.noOtherReference(o) {
                    o.__move(to: keys[i])
                    return unsafeBitCast(o, to: Element.self)
                }
            }
            return fresh(keys[i])
        }

        @usableFromInline
        mutating func fresh(_ key: Int64) -> Element {
            if let values { return Element._strataElement(_Stored(values[Int(key)]), context) }
            let o = Element._strataElement(_Stored(.link(key)), context)
            // (reusable: Element is the model class; its reference read as an Object, no cast)
            if reusable { last = withUnsafeBytes(of: o) { $0.load(as: Object.self) } }
            return o
        }
    }

    public func makeIterator() -> Iterator { Iterator(base) }

    public var realm: Realm? { Realm(base.realm) }

    /// True for results of a frozen Realm (`freeze()`): they keep one version and may be read
    /// from any thread.
    public var isFrozen: Bool { base.realm.isFrozen }

    public var isInvalidated: Bool { base.realm.isInvalidated }

    public func index(of object: Element) -> Int? {
        if base.valueList != nil {
            let v = Element._strataStore(object, _ElementContext(realm: base.realm, what: base.what)).value
            return base.values().firstIndex(of: v)
        }
        guard let o = object as? Object, let a = o.__accessor, a.realm === base.realm,
              a.info.tableName == base.info.tableName else { return nil }
        return base.keys().firstIndex(of: a.key)
    }

    /// The same results: made from one another by copying (RealmSwift compares the
    /// underlying results object).
    public static func == (lhs: Results, rhs: Results) -> Bool { lhs.base === rhs.base }

    public var _strataResults: Results<Element>? { self }

    public var description: String { _strataDescription(depth: RealmDescription.maxDepth) }
}

extension Results: _QueryArgSequence {
    var _strataQueryElements: [Any] { map { $0 as Any } }
}

/// What a `Results` shares among its copies: the source, the query, and the keys of the
/// version last read.
final class ResultsBase {
    let realm: RealmInstance
    let info: TableInfo
    let spec: QuerySpec
    /// The objects of a List or LinkingObjects the results are taken from (in their order),
    /// read in the Realm given, or nil for every object of the class.
    let source: ((RealmInstance) -> [Int64])?
    /// For the results of a list of values (`List<Int>.sorted()`): the list's object (of
    /// `info`) and property. The "keys" are then positions in `cachedValues`, which holds the
    /// values sorted and made distinct as the spec says (in Swift: the core queries objects).
    let valueList: ValueList?
    private var cachedKeys: [Int64] = []
    private var cachedValues: [StoredValue] = []
    private var cachedVersion: UInt64 = .max
    private var cachedMutations: UInt64 = .max

    init(realm: RealmInstance, info: TableInfo, spec: QuerySpec = QuerySpec(),
         source: ((RealmInstance) -> [Int64])? = nil, valueList: ValueList? = nil) {
        self.realm = realm
        self.info = info
        what = valueList.map { "Results<\($0.elementName)> of \(info.propertyPaths[$0.index])" } ?? info.resultsName
        cacheLock = realm.isFrozen ? NSLock() : nil
        self.spec = spec
        self.source = source
        self.valueList = valueList
    }

    /// For messages: "Results<Person>".
    let what: String

    /// The same results read in another Realm of the same file (a queue's, a snapshot).
    func rebound(to other: RealmInstance) -> ResultsBase {
        other === realm ? self : ResultsBase(realm: other, info: other.tableInfo(info.classInfo.type), spec: spec,
                                             source: source, valueList: valueList)
    }

    /// Whether the results read through links (their objects then change with other tables).
    var followsLinks: Bool {
        source != nil || spec.text.contains(".") || spec.text.contains("@links") || spec.sort.contains { $0.keyPath.contains(".") }
    }

    /// Compile the query now, so that a bad predicate or argument stops the program where it
    /// was written (Realm raises there too).
    func validate() {
        realm.checkThread(what)
        if let v = valueList {
            if !spec.predicates.isEmpty {
                strataTrap("\(what): a list of values cannot be filtered with a predicate (filter or where): "
                           + "filter its values in Swift")
            }
            for k in spec.sort.map(\.keyPath) + spec.distinct where k != "self" {
                strataTrap("\(what): a list of \(v.elementName) values sorts and is made distinct by 'self' only, not '\(k)'")
            }
            return
        }
        do { try withQuery { _, _, _ in } } catch { strataTrap("Invalid query on \(info.name): \(error)") }
    }

    /// The core's text of the query (the spec never changes).
    private var coreText: String {
        var text = Self.linkingObjectsSpelledOut(spec.text, info)
        if let n = spec.limit, source == nil { text += " LIMIT(\(n))" } /* a source: limited after */
        return text
    }

    /// What `withQuery` made before, kept for the next run (results used again and again, and
    /// `filter(…).count`, which compiles when made and runs at once): the query compiled in this
    /// Realm (and the generation of its cache then: a cleared cache freed it),
    /// and the arguments converted when none reads the file (an object's key, a live List or
    /// Results given for IN are converted at each run). Not kept for a frozen Realm's results,
    /// which several threads may run at once.
    private var keptQuery: (query: OpaquePointer, generation: Int)?
    private var keptArgs: QueryArgs?

    /// Run body with the compiled query and its arguments in the Realm's transaction.
    private func withQuery<R>(_ body: (OpaquePointer, OpaquePointer, QueryArgs) throws -> R) throws -> R {
        if realm.isFrozen {
            let q = try realm.compiledQuery(table: info.tableName, text: coreText)
            return try body(realm.coreTxnHandle, q, try QueryArgs(spec.args, what: "a query on \(self.info.name)"))
        }
        let q: OpaquePointer
        if let kept = keptQuery, kept.generation == realm.compiledQueriesGeneration {
            q = kept.query
        } else {
            q = try realm.compiledQuery(table: info.tableName, text: coreText)
            keptQuery = (q, realm.compiledQueriesGeneration)
        }
        let args: QueryArgs
        if let kept = keptArgs {
            args = kept
        } else {
            args = try QueryArgs(spec.args, what: "a query on \(self.info.name)")
            if args.isConstant { keptArgs = args }
        }
        return try body(realm.coreTxnHandle, q, args)
    }

    /// A `LinkingObjects` property of the class named at the start of a key path
    /// (`owners.@count`, `ANY owners.age > 40`) becomes the core's `@links.Person.dogs`.
    static func linkingObjectsSpelledOut(_ text: String, _ info: TableInfo) -> String {
        let links = info.linkingObjectsPaths
        if links.isEmpty { return text }
        var out = ""
        var quote: Character?
        var word = ""
        var before: Character = " "
        func flush() {
            if let l = links[word], before != ".", before != "$", before != "@" { out += l } else { out += word }
            if let last = word.last { before = last }
            word = ""
        }
        for c in text {
            if let q = quote {
                out.append(c)
                if c == q { quote = nil }
                continue
            }
            if c.isLetter || c == "_" || (c.isNumber && !word.isEmpty) {
                word.append(c)
                continue
            }
            flush()
            if c == "'" || c == "\"" { quote = c }
            out.append(c)
            if !c.isWhitespace { before = c }
        }
        flush()
        return out
    }

    /// The query's results (the caller frees them).
    private func run() throws -> OpaquePointer {
        try withQuery { txn, q, args in
            var res: OpaquePointer?
            try args.values.withUnsafeBufferPointer { a in
                try StrataError.check { strata_query_run(q, txn, a.baseAddress, a.count, &res, $0) }
            }
            return res!
        }
    }

    func count() -> Int {
        realm.checkThread(what)
        do {
            if source != nil || valueList != nil { return keys().count }
            if spec.isEmpty { return try realm.table(info).count() }
            if !spec.sort.isEmpty || !spec.distinct.isEmpty || spec.limit != nil { return keys().count }
            return try withQuery { txn, q, args in
                var n: UInt64 = 0
                try args.values.withUnsafeBufferPointer { a in
                    try StrataError.check { strata_query_count(q, txn, a.baseAddress, a.count, &n, $0) }
                }
                return Int(n)
            }
        } catch { strataTrap("cannot count \(info.name): \(error)") }
    }

    /// The keys in the Realm's current snapshot (read again whenever it moved or a write
    /// changed something since). Frozen results may be read by several threads at once: their
    /// cache is then locked.
    func keys() -> [Int64] {
        realm.checkThread(what)
        if realm.isFrozen {
            cacheLock?.lock()
            defer { cacheLock?.unlock() }
            return keysUnlocked()
        }
        return keysUnlocked()
    }

    private let cacheLock: NSLock? // (a frozen Realm's results only)

    /// The values of a list of values' results, in their order (read with `keys()`).
    func values() -> [StoredValue] {
        if realm.isFrozen {
            cacheLock?.lock()
            defer { cacheLock?.unlock() }
            _ = keysUnlocked()
            return cachedValues
        }
        _ = keysUnlocked()
        return cachedValues
    }

    private func keysUnlocked() -> [Int64] {
        if cachedVersion != realm.version || cachedMutations != realm.mutationCount {
            do {
                if let v = valueList {
                    cachedValues = v.values(in: realm, info: info, spec: spec, what: what)
                    cachedKeys = Array(0..<Int64(cachedValues.count))
                } else if let source {
                    cachedKeys = try restricted(source(realm))
                    if let n = spec.limit { cachedKeys = Array(cachedKeys.prefix(n)) }
                } else if spec.isEmpty {
                    cachedKeys = try realm.table(info).keys()
                } else {
                    let res = try run()
                    defer { strata_results_free(res) }
                    let n = strata_results_size(res)
                    cachedKeys = (0..<n).map { strata_results_key(res, $0) }
                }
            } catch {
                strataTrap("cannot read \(info.name): \(error)")
            }
            cachedVersion = realm.version
            cachedMutations = realm.mutationCount
        }
        return cachedKeys
    }

    /// The keys after a commit, followed from `keys` (those of the version the changes start
    /// from, which `oldTxn` reads; on success they become the current version's) without running
    /// the query again: the changed objects come out, and those that match now go back where the
    /// query's sort puts them (`strata_query_matches`, `strata_query_position`) — work in
    /// proportion to the change, plus moving keys in memory: where a changed object was is
    /// searched for (by key, or where the sort placed it in the old version), not scanned for,
    /// and one object that moves (the common commit) moves the keys between its two places
    /// only, in place. Returns where the changed objects were (`oldAt`) and are (`newAt`), or
    /// nil, `keys` untouched, when the results cannot be followed so (a list's or linking
    /// objects' results, a list of values, DISTINCT, LIMIT, key paths through links, many
    /// changes): the caller reads them again.
    func following(_ keys: inout [Int64], changes: TableChanges, from oldTxn: CoreTxn)
        -> (oldAt: [Int64: Int], newAt: [Int64: Int])? {
        guard source == nil, valueList == nil, spec.distinct.isEmpty, spec.limit == nil, !followsLinks,
              !realm.isFrozen else { return nil }
        let back = changes.inserted.union(changes.modified.keys)
        let out = changes.deleted.union(back)
        if out.count > max(16, keys.count / 64) { return nil } // a run costs about as much
        // Where the changed objects were (an inserted one was no object then), and those the
        // results hold now (they match), in key order.
        var oldAt: [Int64: Int] = [:]
        var placing: [Int64] = []
        do {
            for key in changes.deleted.union(changes.modified.keys) { // (just before where it goes)
                let after = try position(of: key, among: keys, in: oldTxn)
                if after > 0 && keys[after - 1] == key { oldAt[key] = after - 1 }
            }
            let table = realm.table(info)
            try withQuery { txn, q, args in
                for key in back.sorted() where try table.exists(key) {
                    if !spec.predicates.isEmpty {
                        var matches = false
                        try args.values.withUnsafeBufferPointer { a in
                            try StrataError.check { strata_query_matches(q, txn, a.baseAddress, a.count, key, &matches, $0) }
                        }
                        if !matches { continue }
                    }
                    placing.append(key)
                }
            }
        } catch {
            return nil // read again by the caller, which reports what fails
        }
        // The keys change in place when nothing else shares them: let go of this base's copy.
        cachedKeys = []
        cachedVersion = .max
        var newAt: [Int64: Int] = [:]
        do {
            if oldAt.count <= 1 && placing.count <= 1 {
                if let at = try moveOne(&keys, from: oldAt.values.first, placing: placing.first) {
                    newAt[placing[0]] = at
                }
            } else {
                newAt = try copyMoving(&keys, removing: oldAt.values.sorted(), placing: placing)
            }
        } catch {
            return nil
        }
        cachedKeys = keys
        cachedVersion = realm.version
        cachedMutations = realm.mutationCount
        return (oldAt, newAt)
    }

    /// Where `key` goes among `keys` as `txn` (default: this Realm's) reads the objects: before
    /// the first that sorts after it (key order without a sort; ties in key order).
    private func position(of key: Int64, among keys: [Int64], in txn: CoreTxn? = nil) throws -> Int {
        if spec.sort.isEmpty {
            var lo = 0, hi = keys.count
            while lo < hi { let mid = (lo + hi) / 2; if keys[mid] <= key { lo = mid + 1 } else { hi = mid } }
            return lo
        }
        var at = 0
        try withQuery { current, q, _ in
            try keys.withUnsafeBufferPointer { k in
                try StrataError.check { strata_query_position(q, txn?.handle ?? current, k.baseAddress, k.count, key, &at, $0) }
            }
        }
        return at
    }

    /// One object out of `keys` (at index `i`) and one in (`x`, where it goes), in place: the
    /// keys between the two places move by one. Where x went, or nil. Throws with `keys` as
    /// they were.
    private func moveOne(_ keys: inout [Int64], from i: Int?, placing x: Int64?) throws -> Int? {
        guard let x else {
            if let i { keys.remove(at: i) }
            return nil
        }
        guard let i else {
            let at = try position(of: x, among: keys)
            keys.insert(x, at: at)
            return at
        }
        // Where x goes among the keys without the one at i: asked with that one standing in
        // for a neighbour (so the keys stay in order and the object it was is not read), then
        // counted without it.
        var at = 0
        if keys.count > 1 {
            let was = keys[i]
            keys[i] = keys[i > 0 ? i - 1 : 1]
            defer { keys[i] = was }
            at = try position(of: x, among: keys)
            if i < at { at -= 1 }
        }
        keys.withUnsafeMutableBufferPointer { b in
            let base = b.baseAddress!, size = MemoryLayout<Int64>.stride
            if at > i {
                memmove(base + i, base + i + 1, (at - i) * size)     // left by one
            } else if at < i {
                memmove(base + at + 1, base + at, (i - at) * size)   // right by one
            }
            b[at] = x
        }
        return at
    }

    /// Several objects out (at `removing`, ascending) and in: the keys copied without them,
    /// then each placed in turn. Where each went.
    private func copyMoving(_ keys: inout [Int64], removing: [Int], placing: [Int64]) throws -> [Int64: Int] {
        var out: [Int64] = []
        out.reserveCapacity(keys.count - removing.count + placing.count)
        var from = 0
        for i in removing {
            out.append(contentsOf: keys[from..<i])
            from = i + 1
        }
        out.append(contentsOf: keys[from...])
        var placed: [(key: Int64, at: Int)] = []
        for key in placing {
            let at = try position(of: key, among: out)
            out.insert(key, at: at)
            for p in placed.indices where placed[p].at >= at { placed[p].at += 1 }
            placed.append((key, at))
        }
        keys = out
        return Dictionary(placed.map { ($0.key, $0.at) }, uniquingKeysWith: { a, _ in a })
    }

    /// The objects of a list or linking objects that the query keeps: in the query's order when
    /// it sorts (or is distinct), else in the collection's (repeats kept).
    private func restricted(_ all: [Int64]) throws -> [Int64] {
        if spec.predicates.isEmpty && spec.sort.isEmpty && spec.distinct.isEmpty { return all }
        let res = try run()
        defer { strata_results_free(res) }
        let matched = (0..<strata_results_size(res)).map { strata_results_key(res, $0) }
        if spec.sort.isEmpty && spec.distinct.isEmpty { /* the collection's order */
            let keep = Set(matched)
            return all.filter { keep.contains($0) }
        }
        let inSource = Set(all)
        return matched.filter { inSource.contains($0) }
    }

    /// An aggregate of the values of a list's or linking objects' results, read one by one.
    private func aggregateRead(_ col: UInt32?, _ agg: strata_aggregate) throws -> StoredValue {
        let all: [StoredValue]
        if let col {
            let table = realm.table(info)
            all = try keys().map { try table.get($0, col) }
        } else {
            all = self.values()
        }
        return Self.aggregate(all.filter { $0 != .null }, agg)
    }

    /// An aggregate of values read one by one (a list's or linking objects' results, a list of
    /// values, an unmanaged list).
    static func aggregate(_ values: [StoredValue], _ agg: strata_aggregate) -> StoredValue {
        // a sum or mean counts the numbers only (mixed values may hold others)
        let values = agg == STRATA_AGG_SUM || agg == STRATA_AGG_AVG ? values.filter {
            switch $0 { case .int, .float, .double, .decimal: return true; default: return false }
        } : values
        func number(_ v: StoredValue) -> Double {
            switch v {
            case .int(let i): return Double(i)
            case .float(let f): return Double(f)
            case .double(let d): return d
            case .timestamp(let s, let ns): return Double(s) + Double(ns) / 1e9
            default: return .nan
            }
        }
        if let d = values.first, case .decimal = d {
            let decimals = values.compactMap { v -> Decimal128? in if case .decimal(let x) = v { return x } else { return nil } }
            switch agg {
            case STRATA_AGG_SUM: return .decimal(decimals.reduce(Decimal128(), +))
            case STRATA_AGG_AVG: return decimals.isEmpty ? .null : .decimal(decimals.reduce(Decimal128(), +) / Decimal128(value: decimals.count))
            case STRATA_AGG_MIN: return decimals.min().map { .decimal($0) } ?? .null
            default: return decimals.max().map { .decimal($0) } ?? .null
            }
        }
        switch agg {
        case STRATA_AGG_SUM:
            if values.allSatisfy({ if case .int = $0 { return true } else { return false } }) {
                return .int(values.reduce(0) { if case .int(let i) = $1 { return $0 &+ i } else { return $0 } })
            }
            return .double(values.reduce(0) { $0 + number($1) })
        case STRATA_AGG_AVG:
            return values.isEmpty ? .null : .double(values.reduce(0) { $0 + number($1) } / Double(values.count))
        default:
            let best = agg == STRATA_AGG_MIN ? values.min { number($0) < number($1) }
                                             : values.max { number($0) < number($1) }
            return best ?? .null
        }
    }

    /// An aggregate of a property over the results, as T (nil when it is null).
    func aggregate<T>(_ property: String, _ agg: strata_aggregate, as: T.Type) -> T? {
        realm.checkThread(what)
        if valueList != nil {
            guard property == "self" else {
                strataTrap("\(what): the values of a list are aggregated by 'self', not '\(property)'")
            }
            do { return converted(try aggregateRead(nil, agg), property, agg, as: T.self) } catch {
                strataTrap("cannot aggregate \(what): \(error)")
            }
        }
        guard let i = info.properties.firstIndex(where: { $0.name == property }) else {
            strataTrap("Invalid property name '\(property)' for class '\(info.name)'.")
        }
        do {
            let stored: StoredValue
            let numeric: Set<CoreType> = [.int, .float, .double, .timestamp, .decimal128]
            let decimal = info.properties[i].kind.type == .decimal128 // (summed with Decimal128's arithmetic)
            if source != nil || decimal {
                if !numeric.contains(info.properties[i].kind.type) || info.properties[i].kind.collection != .none {
                    strataTrap("\(what): '\(info.name).\(property)' is not a number or a date: it cannot be aggregated")
                }
                stored = try aggregateRead(info.cols[i], agg)
            } else {
                let table = realm.table(info)
                let res = try run()
                defer { strata_results_free(res) }
                var out = strata_value()
                try StrataError.check { strata_results_aggregate(res, table.handle, info.cols[i], agg, &out, $0) }
                stored = StoredValue(out)
            }
            return converted(stored, property, agg, as: T.self)
        } catch { strataTrap("cannot aggregate \(info.name).\(property): \(error)") }
    }

    /// An aggregate's value as T (nil for null).
    private func converted<T>(_ stored: StoredValue, _ property: String, _ agg: strata_aggregate, as: T.Type) -> T? {
        let stored = Self.asMixed(stored, agg, T.self)
        if stored == .null { return nil }
        guard let v = ValueConversion.convert(stored.anyValue, to: T.self)
                ?? Self.truncated(stored).flatMap({ ValueConversion.convert($0.anyValue, to: T.self) }) else {
            strataTrap("\(what): the \(agg == STRATA_AGG_AVG ? "average" : "aggregate") of '\(property)' (\(stored)) is not a \(T.self)")
        }
        return v
    }

    /// The sum and mean of mixed values are Decimal128, as in Realm.
    static func asMixed<T>(_ s: StoredValue, _ agg: strata_aggregate, _: T.Type) -> StoredValue {
        guard T.self == AnyRealmValue.self || T.self == AnyRealmValue?.self,
              agg == STRATA_AGG_SUM || agg == STRATA_AGG_AVG else { return s }
        switch s {
        case .int(let i): return .decimal(Decimal128(value: i))
        case .double(let d): return .decimal(Decimal128(value: d))
        case .float(let f): return .decimal(Decimal128(value: Double(f)))
        default: return s
        }
    }

    /// An average asked for as an integer type is truncated, as RealmSwift's NSNumber is.
    static func truncated(_ v: StoredValue) -> StoredValue? {
        if case .double(let d) = v, d.isFinite, abs(d) < 9.2e18 { return .int(Int64(d.rounded(.towardZero))) }
        return nil
    }

    func zero<T>(as: T.Type) -> T { Self.zero(as: T.self, what) }

    /// The sum of no values, as T.
    static func zero<T>(as: T.Type, _ what: String) -> T {
        guard let v = ValueConversion.convert(Int64(0), to: T.self) ?? ValueConversion.convert(0.0, to: T.self)
                   ?? ValueConversion.convert(Decimal128(), to: T.self) else {
            strataTrap("\(what): no zero of \(T.self)")
        }
        return v
    }
}

/// Whether an iterator's last object can be moved to the next key: besides the strong
/// references (the iterator checks it holds the only one), no weak or unowned reference
/// (Results.Iterator).
public enum _ResultsIteration {
    @inlinable @inline(__always)
    public static func noOtherReference(_ o: Object) -> Bool {
        _getWeakRetainCount(o) == 1 && _getUnownedRetainCount(o) == 1
    }
}

extension Results: _Describable {
    func _strataDescription(depth: Int) -> String {
        RealmDescription.collection("Results", element: Element.self, self, identity: base, depth: depth)
    }
}
