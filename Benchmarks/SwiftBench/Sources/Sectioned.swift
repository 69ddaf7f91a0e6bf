// Sectioned results after a one-object commit (issue 44): the cost of the observer's callback
// beside a plain sorted Results observer's (the core's diff, which sectioning starts from), and
// beside grouping the whole results again. `bench-swift sectioned n=<> initial_ms=<> ...`.
import Foundation
import Strata

final class SectionedItem: Object {
    @Persisted var name = ""
    @Persisted var rank = 0
}

func sectionedBench(n: Int, rounds: Int, dir: String) throws {
    let path = dir + "/sectioned.db"
    removeFiles(path)
    let cfg = Realm.Configuration(fileURL: URL(fileURLWithPath: path), objectTypes: [SectionedItem.self])
    let realm = try Realm(configuration: cfg)
    let letters = Array("abcdefghijklmnopqrstuvwxyz")
    try realm.write {
        for i in 0..<n {
            realm.add(SectionedItem(value: ["name": "\(letters[i % 26])\(i)", "rank": i]))
        }
    }
    let sorted = realm.objects(SectionedItem.self).sorted(byKeyPath: "name")
    func key(_ o: SectionedItem) -> String { String(o.name.prefix(1)) }
    var t0 = now()
    let initial = sorted.sectioned(sortDescriptors: [SortDescriptor(keyPath: "name")], key)
    _ = initial.count
    let initialMs = (now() - t0) * 1000
    // A commit renaming one object, observed three ways (one at a time).
    func commits(_ observe: ((@escaping () -> Void) -> NotificationToken)?) throws -> Double {
        var calls = 0
        let token = observe? { calls += 1 }
        realm.refresh()
        var times: [Double] = []
        for r in 0..<rounds {
            let o = sorted[(r * 7919) % n]
            let start = now()
            try realm.write { o.name = "\(letters[(r * 3) % 26])x\(r)" }
            times.append((now() - start) * 1000)
        }
        token?.invalidate()
        precondition(observe == nil || calls > rounds / 2, "the observer was not called")
        return median(times)
    }
    let none = try commits(nil)
    let plain = try commits { done in sorted.observe { _ in done() } }
    let sectioned = try commits { done in
        sorted.sectioned(sortDescriptors: [SortDescriptor(keyPath: "name")], key).observe { _ in done() }
    }
    t0 = now()
    let again = sorted.sectioned(sortDescriptors: [SortDescriptor(keyPath: "name")], key)
    _ = again.count
    let recompute = (now() - t0) * 1000
    print(String(format: "bench-swift sectioned n=%d initial_ms=%.1f commit_ms=%.2f commit_results_observer_ms=%.2f commit_sectioned_observer_ms=%.2f regroup_ms=%.1f (one rename per commit, medians of %d)",
                 n, initialMs, none, plain, sectioned, recompute, rounds))
    removeFiles(path)
}
