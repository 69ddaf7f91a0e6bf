// Group commit: W writers (one queue-confined Realm each) make C small durable commits each,
//   one_by_one  `try realm.write { create }`: each commit syncs (the commit log's fdatasync)
//   grouped     `beginAsyncWrite { create; commitAsyncWrite(allowGrouping: true) { next } }`:
//               each commit's log record appended without a sync; one sync of the log, made
//               without the writer lock, covers those that arrive meanwhile; each completion
//               runs after the sync that covers it
// Output: `bench-swift group_commit writers=W one_by_one=<commits/s> grouped=<commits/s> ratio=<x>
//          syncs_per_commit=<grouped>`; every commit is durable when counted.
import Foundation
@_spi(Benchmark) import Strata

final class Tick: Object {
    @Persisted var writer = 0
    @Persisted var n = 0
}

func groupCommitBench(writers: Int, each: Int, dir: String) throws {
    var runs = 0
    func run(grouped: Bool) throws -> (rate: Double, syncsPerCommit: Double) {
        runs += 1 // a file per run: the Realms of the last one may still hold theirs open
        let path = dir + "/group-\(runs).realm"
        removeFiles(path)
        let config = Realm.Configuration(fileURL: URL(fileURLWithPath: path), objectTypes: [Tick.self])
        let keeper = try Realm(configuration: config) // the schema; the file stays open throughout
        let done = DispatchSemaphore(value: 0)
        let t = now()
        for w in 0..<writers {
            let queue = DispatchQueue(label: "writer-\(w)")
            queue.async {
                let realm = try! Realm(configuration: config, queue: queue)
                if !grouped {
                    for i in 0..<each { try! realm.write { realm.create(Tick.self, value: ["writer": w, "n": i]) } }
                    done.signal()
                    return
                }
                func next(_ i: Int) {
                    if i == each { done.signal(); return }
                    realm.beginAsyncWrite {
                        realm.create(Tick.self, value: ["writer": w, "n": i])
                        realm.commitAsyncWrite(allowGrouping: true) { error in
                            if let error { fatalError("grouped commit failed: \(error)") }
                            next(i + 1)
                        }
                    }
                }
                next(0)
            }
        }
        for _ in 0..<writers { done.wait() }
        let dt = now() - t
        keeper.refresh()
        let found = keeper.objects(Tick.self).count
        if found != writers * each { fatalError("group commit: \(found) of \(writers * each) commits (grouped: \(grouped))") }
        let stats = keeper.groupCommitStats
        return (Double(writers * each) / dt, grouped ? Double(stats.syncs) / Double(max(stats.commits, 1)) : 1)
    }
    var one: [Double] = [], grouped: [Double] = [], perCommit: [Double] = []
    for _ in 0..<3 {
        one.append(try run(grouped: false).rate)
        let g = try run(grouped: true)
        grouped.append(g.rate)
        perCommit.append(g.syncsPerCommit)
    }
    let o = median(one), g = median(grouped)
    print(String(format: "bench-swift group_commit writers=%d one_by_one=%.0f grouped=%.0f ratio=%.2f syncs_per_commit=%.3f",
                 writers, o, g, g / o, median(perCommit)))
}
