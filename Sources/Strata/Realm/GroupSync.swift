import Foundation

/// Group commit: commits made visible but not yet durable (`commitAsyncWrite(allowGrouping:
/// true)`: the core appends their log records without a sync, `strata_txn_commit_unsynced`) wait
/// here for one sync of the commit log (`strata_db_sync_commits`, made without the writer lock, so
/// writers go on committing meanwhile). The first waiter starts a sync on a thread of its own;
/// those that arrive while it runs share the next one. Each waiter is told after a sync that
/// covers its version, with that sync's error if it failed: a completion never runs before its
/// data is durable, and commits that arrive together share one sync.
final class GroupSync: @unchecked Sendable {
    private struct Waiter {
        let version: UInt64
        let done: @Sendable (Error?) -> Void
    }
    private let lock = NSLock()
    private var waiting: [Waiter] = []
    private var running = false
    private let queue = DispatchQueue(label: "strata.group-commit")
    private(set) var syncs = 0
    private(set) var covered = 0

    /// Call `done` after a sync of `db` that covers `version` (a version this process committed).
    func afterSync(of db: Database, version: UInt64, turns: WriteTurns, _ done: @escaping @Sendable (Error?) -> Void) {
        lock.lock()
        waiting.append(Waiter(version: version, done: done))
        let start = !running
        running = true
        lock.unlock()
        guard start else { return }
        queue.async { [self] in
            while true {
                lock.lock()
                if waiting.isEmpty {
                    running = false
                    lock.unlock()
                    return
                }
                lock.unlock()
                var failure: Error?
                var through: UInt64 = 0
                do { through = try db.syncCommits() } catch { failure = error }
                lock.lock()
                // those the sync covered (all, when it failed: each is told the error)
                let done = waiting.filter { failure != nil || $0.version <= through }
                waiting.removeAll { failure != nil || $0.version <= through }
                syncs += 1
                covered += done.count
                lock.unlock()
                turns.released() // (a sync that fell back to the file's held the writer lock)
                for w in done { w.done(failure) }
            }
        }
    }

    var stats: (syncs: Int, commits: Int) {
        lock.lock()
        defer { lock.unlock() }
        return (syncs, covered)
    }
}

extension Realm {
    /// Syncs made by group commit for this file in this process, and the commits they covered
    /// (for benchmarks: syncs per commit).
    @_spi(Benchmark) public var groupCommitStats: (syncs: Int, commits: Int) { instance.shared.groupSync.stats }
}
