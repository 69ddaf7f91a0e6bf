/// The indices that changed between two versions of a collection of object keys: deletions in
/// the old, insertions in the new; an object in both that changed its position relative to the
/// others is deleted and inserted (the fewest such: the objects outside a longest run kept in
/// order). Keys may repeat (a list may hold an object twice): then a list diff is used. When
/// only a commit's few changed keys can differ, `ofFew` finds the same kind of diff without
/// hashing every key.
struct IndexDiff {
    var deletions: [Int] = []
    var insertions: [Int] = []
    /// Pairs (old index, new index) of the objects in both, kept in order.
    var kept: [(old: Int, new: Int)] = []

    static func of(old: [Int64], new: [Int64]) -> IndexDiff {
        var d = IndexDiff()
        if old == new {
            d.kept = old.indices.map { ($0, $0) }
            return d
        }
        var oldIndex: [Int64: Int] = [:]
        oldIndex.reserveCapacity(old.count)
        for (i, k) in old.enumerated() where oldIndex.updateValue(i, forKey: k) != nil {
            return sequenceDiff(old: old, new: new) // a repeated key
        }
        var seen = Set<Int64>()
        seen.reserveCapacity(new.count)
        // the objects in both, in new order, with their old index
        var common: [(old: Int, new: Int)] = []
        for (j, k) in new.enumerated() {
            if !seen.insert(k).inserted { return sequenceDiff(old: old, new: new) }
            if let i = oldIndex[k] { common.append((i, j)) } else { d.insertions.append(j) }
        }
        let newKeys = seen
        for (i, k) in old.enumerated() where !newKeys.contains(k) { d.deletions.append(i) }
        // longest increasing run of old indices: those keep their place
        let keep = longestIncreasing(common.map(\.old))
        var moved: [(old: Int, new: Int)] = []
        for (n, c) in common.enumerated() {
            if keep.contains(n) { d.kept.append(c) } else { moved.append(c) }
        }
        if !moved.isEmpty {
            d.deletions = (d.deletions + moved.map(\.old)).sorted()
            d.insertions = (d.insertions + moved.map(\.new)).sorted()
        }
        return d
    }

    /// The diff when only the changed keys can have come, gone or moved: the other keys are
    /// the same sequence in both (results followed through a commit's changes). Work in
    /// proportion to the changed keys.
    /// A changed key in both is kept when it sits between the same unchanged keys and in the
    /// same order as the other changed keys there; else it is deleted and inserted. `keptChanged`
    /// are the changed keys kept (old index, new index). `po` and `pn` are where the changed
    /// keys are in the old keys and the new (those absent left out).
    static func ofFew(po: [Int64: Int], pn: [Int64: Int])
        -> (diff: IndexDiff, keptChanged: [(old: Int, new: Int)]) {
        let so = po.values.sorted(), sn = pn.values.sorted()
        /// How many unchanged keys come before index i.
        func gap(_ i: Int, _ sorted: [Int]) -> Int {
            var lo = 0, hi = sorted.count
            while lo < hi { let mid = (lo + hi) / 2; if sorted[mid] < i { lo = mid + 1 } else { hi = mid } }
            return i - lo
        }
        var d = IndexDiff()
        var groups: [Int: [(old: Int, new: Int)]] = [:]
        for (k, i) in po {
            guard let j = pn[k] else { d.deletions.append(i); continue }
            let g = gap(i, so)
            if g == gap(j, sn) { groups[g, default: []].append((i, j)) } else {
                d.deletions.append(i)
                d.insertions.append(j)
            }
        }
        for (k, j) in pn where po[k] == nil { d.insertions.append(j) }
        var kept: [(old: Int, new: Int)] = []
        for (_, g) in groups {
            let byOld = g.sorted { $0.old < $1.old }
            let keep = longestIncreasing(byOld.map(\.new))
            for (n, c) in byOld.enumerated() {
                if keep.contains(n) { kept.append(c) } else { d.deletions.append(c.old); d.insertions.append(c.new) }
            }
        }
        d.deletions.sort()
        d.insertions.sort()
        return (d, kept.sorted { $0.new < $1.new })
    }

    /// The positions (in `a`) of a longest strictly increasing subsequence of `a`.
    static func longestIncreasing(_ a: [Int]) -> Set<Int> {
        var tails: [Int] = []        // positions in a: the tail of the best run of each length
        var previous = [Int](repeating: -1, count: a.count)
        for (i, x) in a.enumerated() {
            var lo = 0, hi = tails.count
            while lo < hi {
                let mid = (lo + hi) / 2
                if a[tails[mid]] < x { lo = mid + 1 } else { hi = mid }
            }
            if lo > 0 { previous[i] = tails[lo - 1] }
            if lo == tails.count { tails.append(i) } else { tails[lo] = i }
        }
        var out = Set<Int>()
        var i = tails.last ?? -1
        while i >= 0 {
            out.insert(i)
            i = previous[i]
        }
        return out
    }

    /// A diff of two sequences with repeats: the common prefix and suffix kept, the middle by
    /// a longest common subsequence when small, else deleted and inserted whole.
    static func sequenceDiff(old: [Int64], new: [Int64]) -> IndexDiff {
        var d = IndexDiff()
        var pre = 0
        while pre < old.count, pre < new.count, old[pre] == new[pre] { pre += 1 }
        var suf = 0
        while suf < old.count - pre, suf < new.count - pre, old[old.count - 1 - suf] == new[new.count - 1 - suf] { suf += 1 }
        let a = Array(old[pre..<(old.count - suf)]), b = Array(new[pre..<(new.count - suf)])
        d.kept = (0..<pre).map { ($0, $0) }
        if a.count * b.count <= 1_000_000 {
            // LCS table
            var t = [[Int32]](repeating: [Int32](repeating: 0, count: b.count + 1), count: a.count + 1)
            for i in stride(from: a.count - 1, through: 0, by: -1) {
                for j in stride(from: b.count - 1, through: 0, by: -1) {
                    t[i][j] = a[i] == b[j] ? t[i + 1][j + 1] + 1 : max(t[i + 1][j], t[i][j + 1])
                }
            }
            var i = 0, j = 0
            while i < a.count || j < b.count {
                if i < a.count, j < b.count, a[i] == b[j] {
                    d.kept.append((pre + i, pre + j))
                    i += 1; j += 1
                } else if j == b.count || (i < a.count && t[i + 1][j] >= t[i][j + 1]) {
                    d.deletions.append(pre + i); i += 1
                } else {
                    d.insertions.append(pre + j); j += 1
                }
            }
        } else {
            d.deletions = Array(pre..<(pre + a.count))
            d.insertions = Array(pre..<(pre + b.count))
        }
        d.kept += (0..<suf).map { (old.count - suf + $0, new.count - suf + $0) }
        return d
    }
}
