import Foundation

/// Group commit: commits made visible but not yet durable (`commitAsyncWrite(allowGrouping:
/// true)`, the core's `strata_txn_commit_unsynced`) wait here for one sync of the file
/// (`strata_db_sync`). The first waiter starts a sync on a thread of its own; those that arrive
/// while it runs share the next one. Each waiter is told after the sync that covers its commit,
/// with that sync's error if it failed. So a completion never runs before its data is durable,
/// and N commits that arrive together cost one sync instead of N.
final class GroupSync: @unchecked Sendable {
    private let lock = NSLock()
    private var waiting: [@Sendable (Error?) -> Void] = []
    private var running = false
    private let queue = DispatchQueue(label: "strata.group-sync")
    /// Syncs made, and commits they covered (the benchmark's syncs per commit).
    private(set) var syncs = 0
    private(set) var covered = 0

    /// Call `done` after the next sync of `db` that starts after now.
    func afterSync(of db: Database, turns: WriteTurns, _ done: @escaping @Sendable (Error?) -> Void) {
        lock.lock()
        waiting.append(done)
        let start = !running
        running = true
        lock.unlock()
        guard start else { return }
        queue.async { [self] in
            while true {
                lock.lock()
                let batch = waiting
                waiting.removeAll()
                if batch.isEmpty {
                    running = false
                    lock.unlock()
                    return
                }
                lock.unlock()
                var failure: Error?
                do { try db.sync() } catch { failure = error }
                lock.lock()
                syncs += 1
                covered += batch.count
                lock.unlock()
                turns.released() // the sync held the writer lock: writers waiting may go
                for d in batch { d(failure) }
            }
        }
    }

    var stats: (syncs: Int, commits: Int) {
        lock.lock()
        defer { lock.unlock() }
        return (syncs, covered)
    }
}
