import Foundation

/// One thread per open file (started by the first observer) that sleeps until a commit — by
/// any thread of this process or by another process — makes a newer version, then tells every
/// Realm notifier of the file, which wakes its own thread or queue. It sleeps on the core's
/// commit futex (`strata_db_wait_commit`): no polling. It ends when the file closes
/// (`strata_db_stop_waits` wakes it).
final class CommitWatcher: @unchecked Sendable {
    /// Not retained: the file's owner stops this watcher (and waits for its thread) before the
    /// handle closes, so the handle closes where and when the file's last Realm goes (an
    /// in-memory store's data goes with it).
    private unowned let db: Database
    private let lock = NSLock()
    private var listeners: [ObjectIdentifier: Weak] = [:]
    private var started = false
    private var stopped = false
    private let finished = DispatchSemaphore(value: 0)

    private struct Weak { weak var notifier: RealmNotifier? }

    init(db: Database) { self.db = db }

    func add(_ n: RealmNotifier) {
        lock.lock()
        defer { lock.unlock() }
        listeners[ObjectIdentifier(n)] = Weak(notifier: n)
        if started || stopped { return }
        started = true
        // from the version now: a commit between here and the thread's start is not missed
        let from = db.latestVersion
        let thread = Thread { [self] in run(from: from) }
        thread.name = "strata.commits"
        thread.start()
    }

    private func run(from: UInt64) {
        var seen = from
        while true {
            lock.lock()
            let stop = stopped
            lock.unlock()
            if stop { break }
            let version: UInt64?
            do { version = try db.waitCommit(after: seen, timeoutMs: 5000) } catch {
                Thread.sleep(forTimeInterval: 0.05) // the lock file failed: try again shortly
                continue
            }
            guard let v = version else { continue }
            seen = v
            lock.lock()
            listeners = listeners.filter { $0.value.notifier != nil }
            let all = listeners.values.compactMap(\.notifier)
            lock.unlock()
            for n in all { n.commitSeen() }
        }
        finished.signal()
    }

    /// End the thread (before the file closes) and wait for it.
    func stop() {
        lock.lock()
        stopped = true
        let wasStarted = started
        lock.unlock()
        guard wasStarted else { return }
        db.stopWaits()
        finished.wait()
    }
}
