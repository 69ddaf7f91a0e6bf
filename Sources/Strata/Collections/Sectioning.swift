import Foundation

// The grouping behind SectionedResults: sections computed in one pass over a sorted Results,
// cached per version of its Realm; and, for observers, the section and row changes between two
// versions derived from the Results' own change set.
//
// Invariants: `Sections.keys` are distinct, in the order of each key's first element in the
// sorted results; `items[s]` are the flat indices (ascending) of the elements with key
// `keys[s]`; every flat index is in exactly one section.

/// The sections of one version.
struct Sections<Key: Hashable> {
    var keys: [Key] = []
    var index: [Key: Int] = [:]
    var items: [[Int]] = []
    /// The key of each flat element.
    var elementKeys: [Key] = []
    /// Where each flat element is: its section and its position there.
    var paths: [(section: Int, item: Int)] = []

    init() {}

    /// Group elements by their keys, in their order.
    init(elementKeys: [Key]) {
        self.elementKeys = elementKeys
        paths.reserveCapacity(elementKeys.count)
        var last: (key: Key, section: Int)?
        for (i, k) in elementKeys.enumerated() {
            let s: Int
            if let l = last, l.key == k {  // sorted by the key, neighbours share it: no hashing
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
        for (s, k) in old.keys.enumerated() where new.index[k] == nil { sectionsToDelete.insert(s) }
        for (s, k) in new.keys.enumerated() where old.index[k] == nil { sectionsToInsert.insert(s) }
        // Sections both versions have but in another order (keys that do not follow the sort):
        // the change has no section moves, so those out of order are deleted and inserted whole.
        for k in SectionChange.outOfOrder(old.keys.compactMap { new.index[$0] }.map { new.keys[$0] }, new.index) {
            sectionsToDelete.insert(old.index[k]!)
            sectionsToInsert.insert(new.index[k]!)
        }
        func oldPath(_ i: Int) -> IndexPath? {
            let p = old.paths[i]
            return sectionsToDelete.contains(p.section) ? nil : IndexPath(item: p.item, section: p.section)
        }
        func newPath(_ j: Int) -> IndexPath {
            let p = new.paths[j]
            return IndexPath(item: p.item, section: p.section)
        }
        for i in del { if let p = oldPath(i) { deletions.append(p) } }
        for j in ins { insertions.append(newPath(j)) }
        // Every row of a section inserted as a whole that was there before (moved) is inserted.
        let moved = Set(sectionsToInsert.filter { old.index[new.keys[$0]] != nil })
        let insertedRows = Set(ins)
        for (j, p) in new.paths.enumerated() where moved.contains(p.section) && !insertedRows.contains(j) {
            insertions.append(IndexPath(item: p.item, section: p.section))
        }
        // A surviving element whose key changed moved to another section: deleted and inserted.
        for (j, i) in survivorOld.enumerated() {
            guard let i, old.elementKeys[i] != new.elementKeys[j] else { continue }
            if moved.contains(new.paths[j].section) {  // inserted with its section already
                if let p = oldPath(i) { deletions.append(p) }
                continue
            }
            if let p = oldPath(i) { deletions.append(p) }
            insertions.append(newPath(j))
        }
        for j in mod where !insertedRows.contains(j) && !moved.contains(new.paths[j].section) {
            if let i = survivorOld[j] {
                if old.elementKeys[i] != new.elementKeys[j] { continue }
                // A modified element whose place in its section changed is reported moved
                // (deleted and inserted), as realm-core reports a modified row whose index moved.
                if old.paths[i].item != new.paths[j].item {
                    if let p = oldPath(i) { deletions.append(p) }
                    insertions.append(newPath(j))
                    continue
                }
            }
            modifications.append(newPath(j))
        }
        deletions.sort()
        insertions.sort()
        modifications.sort()
    }

    init() {}

    /// The keys of `common` (sections both versions have, in the old order) that leave the new
    /// order: all but a longest run that is in ascending new order (patience sorting, O(n log n)).
    static func outOfOrder(_ common: [Key], _ newIndex: [Key: Int]) -> [Key] {
        let pos = common.map { newIndex[$0]! }
        var tails: [Int] = []          // indices into pos: the smallest tail of each run length
        var prev = [Int](repeating: -1, count: pos.count)
        for (i, p) in pos.enumerated() {
            var lo = 0, hi = tails.count
            while lo < hi {
                let mid = (lo + hi) / 2
                if pos[tails[mid]] < p { lo = mid + 1 } else { hi = mid }
            }
            if lo > 0 { prev[i] = tails[lo - 1] }
            if lo == tails.count { tails.append(i) } else { tails[lo] = i }
        }
        var keep = Set<Int>()
        var i = tails.last ?? -1
        while i >= 0 { keep.insert(i); i = prev[i] }
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
                    if let o = survivorOld[j], !inserted.contains(j), o < old.elementKeys.count {
                        keys.append(old.elementKeys[o])
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
