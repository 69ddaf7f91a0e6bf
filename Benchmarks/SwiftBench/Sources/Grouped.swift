// Group commit: W writers (one queue-confined Realm each) make C small durable commits each,
//   one_by_one  `try realm.write { create }`: each commit syncs (the commit log's fdatasync)
//   grouped     `beginAsyncWrite { create; commitAsyncWrite(allowGrouping: true) { next } }`:
//               the async path (each commit still syncs its own log record: sharing one sync
//               needs the log to sync a group of records, not built yet)
// Output: `bench-swift group_commit writers=W one_by_one=<commits/s> grouped=<commits/s> ratio=<x>`;
// every commit is durable when counted.
import Foundation
import Strata

final class Tick: Object {
    @Persisted var writer = 0
    @Persisted var n = 0
}

func groupCommitBench(writers: Int, each: Int, dir: String) throws {
    var runs = 0
    func run(grouped: Bool) throws -> Double {
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
        return Double(writers * each) / dt
    }
    var one: [Double] = [], grouped: [Double] = []
    for _ in 0..<3 {
        one.append(try run(grouped: false))
        grouped.append(try run(grouped: true))
    }
    let o = median(one), g = median(grouped)
    print(String(format: "bench-swift group_commit writers=%d one_by_one=%.0f grouped=%.0f ratio=%.2f",
                 writers, o, g, g / o))
}
