import Foundation

/// Where async writers (`asyncWrite`, `beginAsyncWrite`) wait for one file's writer lock without
/// holding a thread: each waiter is a continuation or a callback. When a write of this process
/// ends (`released`) the longest waiting one is woken — its own write's end wakes the next, so
/// waiters take turns in order instead of all retrying at once — and after 10 ms without such a
/// release while any waits, all are (a writer of another process ends without telling; a woken
/// one may have lost the race to a synchronous writer that released nothing here since). A woken waiter tries the lock again (`STRATA_TXN_TRY`): a wake is a
/// hint, never a grant, so a lost or spurious one costs a retry and nothing else.
final class WriteTurns: @unchecked Sendable {
    private let lock = NSLock()
    private var waiters: [(id: UInt64, wake: @Sendable () -> Void)] = [] // oldest first
    private var nextId: UInt64 = 0
    private var tickScheduled = false
    /// A release happened since the last tick: waiters are taking turns, the tick wakes nobody.
    private var releasedSinceTick = false
    private static let tick: DispatchTimeInterval = .milliseconds(10)

    /// A write of this process ended: the longest waiting writer tries again.
    func released() {
        lock.lock()
        let woken = waiters.isEmpty ? nil : waiters.removeFirst()
        releasedSinceTick = true
        lock.unlock()
        woken?.wake()
    }

    /// A tick passed: every waiter tries again.
    private func wakeAll() {
        lock.lock()
        let woken = waiters
        waiters.removeAll()
        lock.unlock()
        for w in woken { w.wake() }
    }

    /// Call `wake` once, at the next release or tick. Returns an id for `cancel`.
    @discardableResult
    func whenReleased(_ wake: @escaping @Sendable () -> Void) -> UInt64 {
        lock.lock()
        nextId += 1
        let id = nextId
        waiters.append((id, wake))
        let startTick = !tickScheduled
        tickScheduled = true
        lock.unlock()
        if startTick { scheduleTick() }
        return id
    }

    /// Forget a waiter (its task was cancelled); true when it had not been woken yet.
    @discardableResult
    func cancel(_ id: UInt64) -> Bool {
        lock.lock()
        defer { lock.unlock() }
        guard let i = waiters.firstIndex(where: { $0.id == id }) else { return false }
        waiters.remove(at: i)
        return true
    }

    /// Suspend the calling task until the next release or tick (at once when the task is
    /// cancelled).
    func wait() async {
        let box = WaiterBox()
        await withTaskCancellationHandler {
            await withCheckedContinuation { (c: CheckedContinuation<Void, Never>) in
                box.set(c) { [self] resume in self.whenReleased(resume) }
            }
        } onCancel: {
            if let id = box.id, self.cancel(id) { box.resume() }
        }
    }

    private func scheduleTick() {
        DispatchQueue.global().asyncAfter(deadline: .now() + Self.tick) { [weak self] in
            guard let self else { return }
            self.lock.lock()
            let more = !self.waiters.isEmpty
            let quiet = !self.releasedSinceTick
            self.releasedSinceTick = false
            self.tickScheduled = more
            self.lock.unlock()
            if more {
                if quiet { self.wakeAll() }
                self.scheduleTick()
            }
        }
    }
}

/// One waiting task's continuation, resumed exactly once (by a wake or by cancellation).
private final class WaiterBox: @unchecked Sendable {
    private let lock = NSLock()
    private var continuation: CheckedContinuation<Void, Never>?
    private(set) var id: UInt64?

    func set(_ c: CheckedContinuation<Void, Never>, register: (@escaping @Sendable () -> Void) -> UInt64) {
        lock.lock()
        continuation = c
        lock.unlock()
        let id = register { [self] in self.resume() }
        lock.lock()
        self.id = id
        lock.unlock()
    }

    func resume() {
        lock.lock()
        let c = continuation
        continuation = nil
        lock.unlock()
        c?.resume()
    }
}
