import Foundation

// The grouping behind SectionedResults: sections computed in one pass over a sorted Results,
// cached per version of its Realm; and, for observers, the section and row changes between two
// versions derived from the Results' own change set.
//
// Invariants: `Sections.keys` are distinct, in the order of each key's first element in the
// sorted results; every flat index is in exactly one section. When each section is one run of
// the sorted results (the key follows the sort: `sectioned(by:)`), the sections are kept as
// runs — section s is the flat indices starts[s] ..< starts[s + 1] — and an observer follows a
// commit in proportion to its changes (`Sections.following`); otherwise `items[s]` are the flat
// indices (ascending) of the elements with key `keys[s]`.

/// The sections of one version.
struct Sections<Key: Hashable> {
    var keys: [Key] = []
    var index: [Key: Int] = [:]
    /// Runs: section s is flat starts[s] ..< starts[s + 1] (keys.count + 1 entries); nil when a
    /// key's elements are not one run.
    var starts: [Int]?
    /// Without runs: each section's flat indices, each element's key and place.
    var items: [[Int]] = []
    var elementKeys: [Key] = []
    var paths: [(section: Int, item: Int)] = []

    init() { starts = [0] }

    /// Group elements by their keys, in their order.
    init(elementKeys: [Key]) {
        var runStarts: [Int] = []
        var contiguous = true
        var last: (key: Key, section: Int)?
        for (i, k) in elementKeys.enumerated() {
            if let l = last, l.key == k { continue }  // sorted by the key, neighbours share it: no hashing
            if index[k] != nil { contiguous = false; break }
            index[k] = keys.count
            keys.append(k)
            runStarts.append(i)
            last = (k, keys.count - 1)
        }
        if contiguous {
            starts = runStarts + [elementKeys.count]
            return
        }
        keys = []
        index = [:]
        self.elementKeys = elementKeys
        paths.reserveCapacity(elementKeys.count)
        last = nil
        for (i, k) in elementKeys.enumerated() {
            let s: Int
            if let l = last, l.key == k {
                s = l.section
            } else if let at = index[k] {
                s = at
            } else {
                s = keys.count
                index[k] = s
                keys.append(k)
                items.append([])
            }
            last = (k, s)
            paths.append((s, items[s].count))
            items[s].append(i)
        }
    }

    /// Sections as runs: `keys` in order, `starts` their first flat indices and the total last.
    init(keys: [Key], starts: [Int]) {
        self.keys = keys
        self.starts = starts
        for (s, k) in keys.enumerated() { index[k] = s }
    }

    /// How many elements the sections hold.
    var count: Int { starts.map { $0.last! } ?? elementKeys.count }

    /// The flat indices of section s.
    func rows(_ s: Int) -> [Int] {
        if let st = starts { return Array(st[s]..<st[s + 1]) }
        return items[s]
    }

    /// The section and the place in it of flat index i.
    func path(at i: Int) -> (section: Int, item: Int) {
        guard let st = starts else { return paths[i] }
        var lo = 0, hi = keys.count
        while lo + 1 < hi {
            let mid = (lo + hi) / 2
            if st[mid] <= i { lo = mid } else { hi = mid }
        }
        return (lo, i - st[lo])
    }

    /// The key of flat index i.
    func key(at i: Int) -> Key { starts == nil ? elementKeys[i] : keys[path(at: i).section] }
}

/// The flat changes of a commit to sorted results: deleted old indices, inserted new ones,
/// modified (kept) new ones, sorted; and how a kept element's old and new indices map.
struct FlatChange {
    let deletions: [Int], insertions: [Int], modifications: [Int]

    /// Insertions at or before each step of a walk: the new index of a kept element of old index i.
    func newIndex(ofOld i: Int, removed: [Int], added: [Int]) -> Int {
        var r = i - FlatChange.countBelow(removed, i)
        for a in added { if a <= r { r += 1 } else { break } }
        return r
    }

    /// The old index of a kept element of new index j.
    func oldIndex(ofNew j: Int, removed: [Int], added: [Int]) -> Int {
        var r = j - FlatChange.countBelow(added, j)
        for d in removed { if d <= r { r += 1 } else { break } }
        return r
    }

    /// How many of `sorted` are below x.
    static func countBelow(_ sorted: [Int], _ x: Int) -> Int {
        var lo = 0, hi = sorted.count
        while lo < hi { let mid = (lo + hi) / 2; if sorted[mid] < x { lo = mid + 1 } else { hi = mid } }
        return lo
    }
}

extension Sections {
    /// The sections after a commit and their change, followed from `old` (runs) in proportion
    /// to the commit's flat changes: the key block is called only for inserted and modified
    /// elements, and the new runs are found from the few places where a key can change — old
    /// section starts and the changed elements. nil when `old` is not runs or the new sections
    /// are not (the caller groups the results again).
    static func following(_ old: Sections, flat: FlatChange, newCount: Int,
                          keyOf: (Int) -> Key) -> (Sections, SectionChange<Key>)? {
        guard let oldStarts = old.starts else { return nil }
        // Elements whose key changed leave their old place and come to their new one.
        var newKeys: [Int: Key] = [:]      // new flat index -> key, for inserted and modified
        var keyChanged: [(old: Int, new: Int)] = []
        var kept: [(old: Int, new: Int)] = []
        for j in flat.insertions { newKeys[j] = keyOf(j) }
        for j in flat.modifications {
            let i = flat.oldIndex(ofNew: j, removed: flat.deletions, added: flat.insertions)
            guard i < old.count else { return nil }
            let k = keyOf(j)
            newKeys[j] = k
            if k == old.key(at: i) { kept.append((i, j)) } else { keyChanged.append((i, j)) }
        }
        let removed = (flat.deletions + keyChanged.map(\.old)).sorted()
        let added = (flat.insertions + keyChanged.map(\.new)).sorted()
        let addedSet = Set(added)
        // Where a key can change in the new order: each old section's first survivor, each added
        // element and the one after it.
        var points = Set<Int>()
        for s in old.keys.indices {
            var x = oldStarts[s]
            var at = FlatChange.countBelow(removed, x)
            while x < oldStarts[s + 1], at < removed.count, removed[at] == x { x += 1; at += 1 }
            if x < oldStarts[s + 1] { points.insert(flat.newIndex(ofOld: x, removed: removed, added: added)) }
        }
        for a in added {
            points.insert(a)
            if a + 1 < newCount { points.insert(a + 1) }
        }
        var keys: [Key] = []
        var starts: [Int] = []
        var index: [Key: Int] = [:]
        for p in points.sorted() {
            let k: Key
            if addedSet.contains(p), let nk = newKeys[p] {
                k = nk
            } else {
                let i = flat.oldIndex(ofNew: p, removed: removed, added: added)
                guard i < old.count else { return nil }
                k = old.key(at: i)
            }
            if let l = keys.last, l == k { continue }
            if index[k] != nil { return nil } // a key in two runs: not runs any more
            index[k] = keys.count
            keys.append(k)
            starts.append(p)
        }
        starts.append(newCount)
        let new = Sections(keys: keys, starts: starts)
        return (new, SectionChange(old: old, new: new, removed: removed, added: added, kept: kept))
    }
}

/// Row and section changes between two versions of sectioned results.
struct SectionChange<Key: Hashable> {
    var deletions: [IndexPath] = []
    var insertions: [IndexPath] = []
    var modifications: [IndexPath] = []
    var sectionsToInsert = IndexSet()
    var sectionsToDelete = IndexSet()
    /// The key of each section index named above (old sections for deletions and deleted
    /// sections, new ones for the rest).
    var oldKeys: [Key] = []
    var newKeys: [Key] = []

    var isEmpty: Bool {
        deletions.isEmpty && insertions.isEmpty && modifications.isEmpty && sectionsToInsert.isEmpty
            && sectionsToDelete.isEmpty
    }

    /// Only what concerns the section of `key` (a ResultsSection's observer).
    func restricted(to key: Key) -> SectionChange {
        var c = SectionChange()
        c.oldKeys = oldKeys
        c.newKeys = newKeys
        let old = oldKeys.firstIndex(of: key), new = newKeys.firstIndex(of: key)
        c.deletions = deletions.filter { $0.section == old }
        c.insertions = insertions.filter { $0.section == new }
        c.modifications = modifications.filter { $0.section == new }
        if let old, sectionsToDelete.contains(old) { c.sectionsToDelete = [old] }
        if let new, sectionsToInsert.contains(new) { c.sectionsToInsert = [new] }
        return c
    }

    /// The changes from `old` to `new` sections, given the flat changes of the sorted results
    /// (deleted old indices, inserted and modified new ones) and which old index each surviving
    /// new index was (`survivorOld[new]`, nil for inserted ones).
    init(old: Sections<Key>, new: Sections<Key>, deletions del: [Int], insertions ins: [Int],
         modifications mod: [Int], survivorOld: [Int?]) {
        oldKeys = old.keys
        newKeys = new.keys
        sectionChanges(old, new)
        let moved = movedSections(old, new)
        let insertedRows = Set(ins)
        for i in del { if let p = oldPath(old, i) { deletions.append(p) } }
        for j in ins { insertions.append(newPath(new, j)) }
        insertMovedRows(new, moved, except: insertedRows)
        // A surviving element whose key changed moved to another section: deleted and inserted.
        for (j, i) in survivorOld.enumerated() {
            guard let i, old.key(at: i) != new.key(at: j) else { continue }
            if let p = oldPath(old, i) { deletions.append(p) }
            if !moved.contains(new.path(at: j).section) { insertions.append(newPath(new, j)) } // (else inserted with its section)
        }
        for j in mod where !insertedRows.contains(j) && !moved.contains(new.path(at: j).section) {
            if let i = survivorOld[j] {
                if old.key(at: i) != new.key(at: j) { continue }
                if placeChanged(old, i, new, j) { continue }
            }
            modifications.append(newPath(new, j))
        }
        deletions.sort()
        insertions.sort()
        modifications.sort()
    }

    /// The changes from `old` to `new` sections when both are runs: `removed` old indices (deleted,
    /// or whose key changed), `added` new ones (inserted, or whose key changed), `kept` modified
    /// elements with the same key (old index, new index). In proportion to those.
    init(old: Sections<Key>, new: Sections<Key>, removed: [Int], added: [Int], kept: [(old: Int, new: Int)]) {
        oldKeys = old.keys
        newKeys = new.keys
        sectionChanges(old, new)
        let moved = movedSections(old, new)
        for i in removed { if let p = oldPath(old, i) { deletions.append(p) } }
        for j in added where !moved.contains(new.path(at: j).section) { insertions.append(newPath(new, j)) }
        insertMovedRows(new, moved, except: [])
        for (i, j) in kept where !moved.contains(new.path(at: j).section) {
            if !placeChanged(old, i, new, j) { modifications.append(newPath(new, j)) }
        }
        deletions.sort()
        insertions.sort()
        modifications.sort()
    }

    /// Sections gone, come, and (both versions have them, in another order) deleted and inserted
    /// whole: the change has no section moves.
    private mutating func sectionChanges(_ old: Sections<Key>, _ new: Sections<Key>) {
        for (s, k) in old.keys.enumerated() where new.index[k] == nil { sectionsToDelete.insert(s) }
        for (s, k) in new.keys.enumerated() where old.index[k] == nil { sectionsToInsert.insert(s) }
        for k in SectionChange.outOfOrder(old.keys.compactMap { new.index[$0] }.map { new.keys[$0] }, new.index) {
            sectionsToDelete.insert(old.index[k]!)
            sectionsToInsert.insert(new.index[k]!)
        }
    }

    /// Sections inserted whole that were there before (moved).
    private func movedSections(_ old: Sections<Key>, _ new: Sections<Key>) -> Set<Int> {
        Set(sectionsToInsert.filter { old.index[new.keys[$0]] != nil })
    }

    /// Every row of a moved section is inserted (but those in `except`, inserted already).
    private mutating func insertMovedRows(_ new: Sections<Key>, _ moved: Set<Int>, except: Set<Int>) {
        for s in moved.sorted() {
            for (item, j) in new.rows(s).enumerated() where !except.contains(j) {
                insertions.append(IndexPath(item: item, section: s))
            }
        }
    }

    private func oldPath(_ old: Sections<Key>, _ i: Int) -> IndexPath? {
        let p = old.path(at: i)
        return sectionsToDelete.contains(p.section) ? nil : IndexPath(item: p.item, section: p.section)
    }

    private func newPath(_ new: Sections<Key>, _ j: Int) -> IndexPath {
        let p = new.path(at: j)
        return IndexPath(item: p.item, section: p.section)
    }

    /// A modified element whose place in its section changed is reported moved (deleted and
    /// inserted), as realm-core reports a modified row whose index moved: true when it was.
    private mutating func placeChanged(_ old: Sections<Key>, _ i: Int, _ new: Sections<Key>, _ j: Int) -> Bool {
        guard old.path(at: i).item != new.path(at: j).item else { return false }
        if let p = oldPath(old, i) { deletions.append(p) }
        insertions.append(newPath(new, j))
        return true
    }

    init() {}

    /// The keys of `common` (sections both versions have, in the old order) that leave the new
    /// order: all but a longest run that is in ascending new order (patience sorting, O(n log n)).
    static func outOfOrder(_ common: [Key], _ newIndex: [Key: Int]) -> [Key] {
        let keep = IndexDiff.longestIncreasing(common.map { newIndex[$0]! })
        return common.indices.filter { !keep.contains($0) }.map { common[$0] }
    }
}

/// A sorted Results and the key block that groups it; sections are computed once per version
/// of its Realm (and locked, for frozen results read by several threads).
final class SectionGrouping<Key: _Persistable & Hashable, Element: RealmCollectionValue> {
    let results: Results<Element>
    let keyBlock: (Element) -> Key
    /// The key path the sections follow (the first sort key): its changes always count, so that
    /// an element changing section is seen whatever key paths an observer names.
    let keyPath: String
    private let lock = NSLock()
    private var cached = Sections<Key>()
    private var cachedVersion: UInt64 = .max
    private var cachedMutations: UInt64 = .max

    init(_ results: Results<Element>, keyBlock: @escaping (Element) -> Key, keyPath: String) {
        self.results = results
        self.keyBlock = keyBlock
        self.keyPath = keyPath
    }

    /// The same grouping over other results (frozen, thawed, or a queue's).
    func with(_ other: Results<Element>) -> SectionGrouping {
        SectionGrouping(other, keyBlock: keyBlock, keyPath: keyPath)
    }

    /// The sections of the results' current version.
    func sections() -> Sections<Key> {
        lock.lock()
        defer { lock.unlock() }
        let realm = results.base.realm
        if cachedVersion != realm.version || cachedMutations != realm.mutationCount {
            cached = Sections(elementKeys: results.map(keyBlock))
            cachedVersion = realm.version
            cachedMutations = realm.mutationCount
        }
        return cached
    }

    /// Sections already computed for the current version (an observer's).
    func prime(_ s: Sections<Key>) {
        lock.lock()
        defer { lock.unlock() }
        cached = s
        cachedVersion = results.base.realm.version
        cachedMutations = results.base.realm.mutationCount
    }

    /// Observe the sections: `handler` gets the grouping of the delivered results with nil
    /// first, then the changes of each version that changed the results.
    func observe(keyPaths: [String]?, on queue: DispatchQueue?,
                 _ handler: @escaping (SectionGrouping, SectionChange<Key>?) -> Void) -> NotificationToken {
        var paths = keyPaths
        if let p = paths, !p.contains(keyPath), keyPath != "self" { paths = p + [keyPath] }
        let keyBlock = self.keyBlock, keyPath = self.keyPath
        var previous: Sections<Key>?
        return results.observe(keyPaths: paths, on: queue) { change in
            switch change {
            case .initial(let now):
                let g = SectionGrouping(now, keyBlock: keyBlock, keyPath: keyPath)
                previous = g.sections()
                handler(g, nil)
            case .update(let now, let del, let ins, let mod):
                let g = SectionGrouping(now, keyBlock: keyBlock, keyPath: keyPath)
                guard let old = previous else {
                    previous = g.sections()
                    return handler(g, nil)
                }
                // Runs followed through the flat changes, in proportion to them.
                if let (new, change) = Sections.following(
                    old, flat: FlatChange(deletions: del, insertions: ins, modifications: mod),
                    newCount: now.count, keyOf: { keyBlock(now[$0]) }) {
                    g.prime(new)
                    previous = new
                    return handler(g, change)
                }
                // The survivors keep their keys; only inserted and modified elements are keyed.
                let count = now.count
                var survivorOld = [Int?](repeating: nil, count: count)
                var deleted = Set(del), inserted = Set(ins)
                var i = 0
                for j in 0..<count where !inserted.contains(j) {
                    while deleted.contains(i) { i += 1 }
                    survivorOld[j] = i
                    i += 1
                }
                deleted.removeAll()
                let modified = Set(mod)
                inserted.formUnion(modified)
                var keys = [Key]()
                keys.reserveCapacity(count)
                for j in 0..<count {
                    if let o = survivorOld[j], !inserted.contains(j), o < old.count {
                        keys.append(old.key(at: o))
                    } else {
                        keys.append(keyBlock(now[j]))
                    }
                }
                let new = Sections(elementKeys: keys)
                g.prime(new)
                previous = new
                handler(g, SectionChange(old: old, new: new, deletions: del, insertions: ins,
                                         modifications: mod, survivorOld: survivorOld))
            case .error:
                break
            }
        }
    }
}
