import Foundation

/// Identifies a queued async write or commit completion (`cancelAsyncWrite`).
public typealias AsyncTransactionId = UInt32

/// The async writes of one Realm (`beginAsyncWrite`, `writeAsync`, `commitAsyncWrite`): blocks run
/// in the order queued, each inside a write begun when the file's writer lock is free — tried
/// from the Realm's home (its run loop, queue or actor), waited for without blocking it
/// (`WriteTurns`) — and completions called on the home after their commit.
final class AsyncWriteQueue {
    private struct Pending {
        let id: AsyncTransactionId
        let block: () -> Void
    }
    private var pending: [Pending] = []
    private var completions: [AsyncTransactionId: (Error?) -> Void] = [:]
    private var nextId: AsyncTransactionId = 0
    /// The block running now (inside its write).
    private(set) var running: AsyncTransactionId?
    /// A try of the lock is scheduled (on the home) or waited for (in WriteTurns).
    private var tryScheduled = false
    /// The Realm, kept while work is queued (a Realm value nobody keeps still runs its async
    /// writes, as RealmSwift's does).
    private var keepAlive: RealmInstance?

    var isBusy: Bool { !pending.isEmpty || running != nil || !completions.isEmpty }

    private func updateKeepAlive(_ realm: RealmInstance) {
        keepAlive = isBusy ? realm : nil
    }

    private func newId() -> AsyncTransactionId {
        nextId &+= 1
        if nextId == 0 { nextId = 1 }
        return nextId
    }

    func begin(_ block: @escaping () -> Void, on realm: RealmInstance) -> AsyncTransactionId {
        let id = newId()
        pending.append(Pending(id: id, block: block))
        updateKeepAlive(realm)
        scheduleTry(realm)
        return id
    }

    /// A completion to call on the home after a commit (`error`: the commit's), or, for an
    /// unsynced commit of version `afterSyncOf`, after a log sync that covers it (with its error).
    func completion(_ body: @escaping (Error?) -> Void, error: Error?, afterSyncOf version: UInt64? = nil,
                    on realm: RealmInstance) -> AsyncTransactionId {
        let id = newId()
        completions[id] = body
        updateKeepAlive(realm)
        let home = WeakRealm(realm)
        // (the group sync's thread reaches the home as the commit watcher's does: perform)
        let place = Unchecked(realm.notifications().home)
        let deliver: @Sendable (Error?) -> Void = { error in
            let failure = Unchecked(error)
            place.value.perform {
                guard let r = home.instance else { return }
                r.asyncWrites.runCompletion(id, failure.value, r)
            }
        }
        if let version {
            realm.shared.groupSync.afterSync(of: realm.shared.db, version: version, turns: realm.shared.writeTurns, deliver)
        } else {
            deliver(error)
        }
        return id
    }

    private func runCompletion(_ id: AsyncTransactionId, _ error: Error?, _ realm: RealmInstance) {
        completions.removeValue(forKey: id)?(error)
        updateKeepAlive(realm)
    }

    /// Forget a queued begin or completion; true when there was one (a running block is not
    /// stopped).
    func cancel(_ id: AsyncTransactionId, _ realm: RealmInstance) -> Bool {
        defer { updateKeepAlive(realm) }
        if let i = pending.firstIndex(where: { $0.id == id }) {
            pending.remove(at: i)
            return true
        }
        return completions.removeValue(forKey: id) != nil
    }

    /// Try the next block from the home, once.
    private func scheduleTry(_ realm: RealmInstance) {
        if tryScheduled || running != nil { return }
        tryScheduled = true
        let home = WeakRealm(realm)
        realm.notifications().home.perform {
            guard let r = home.instance else { return }
            r.asyncWrites.tryNext(r)
        }
    }

    /// On the home: begin the next block's write if the lock is free, else wait for a release.
    private func tryNext(_ realm: RealmInstance) {
        tryScheduled = false
        guard running == nil, !pending.isEmpty, !realm.isInvalidated else { return }
        if realm.isInWriteTransaction { return } // a synchronous write of this Realm: tried when it ends
        let began: Bool
        do {
            began = try realm.beginWrite(wait: false)
        } catch {
            strataTrap("Cannot begin an async write transaction: \(error)")
        }
        if !began {
            tryScheduled = true
            let home = WeakRealm(realm)
            realm.shared.writeTurns.whenReleased {
                guard let r = home.instance else { return }
                r.notifications().home.perform {
                    guard let r = home.instance else { return }
                    r.asyncWrites.tryNext(r)
                }
            }
            return
        }
        let next = pending.removeFirst()
        running = next.id
        next.block()
        running = nil
        // a block that neither committed nor cancelled: its write is cancelled (RealmSwift's rule)
        if realm.isInWriteTransaction { realm.cancelWrite() }
        if !pending.isEmpty { scheduleTry(realm) }
        updateKeepAlive(realm)
    }

    /// A write of the Realm ended: the next queued block may try.
    func writeEnded(_ realm: RealmInstance) {
        if !pending.isEmpty && running == nil { scheduleTry(realm) }
    }
}

extension Realm {
    /// Run `block` inside a write begun without blocking this thread (when no other writer holds
    /// the file), on this Realm's thread, queue or actor, in the order queued; the write is then
    /// committed (`commitAsyncWrite`) unless the block committed or cancelled it, and
    /// `onComplete` is called there with the commit's error or nil. The Realm's thread must run
    /// its run loop (or be its queue, or its actor).
    @discardableResult
    public func writeAsync(_ block: @escaping () -> Void, onComplete: ((Swift.Error?) -> Void)? = nil) -> AsyncTransactionId {
        beginAsyncWrite {
            block()
            if self.isInWriteTransaction { self.commitAsyncWrite(onComplete) }
        }
    }

    /// Queue `asyncWriteBlock` to run inside a write begun without blocking this thread; the block
    /// should end with `commitAsyncWrite` or `commitWrite` (returning without one cancels the
    /// write). Calls made inside a block are queued after it. Returns an id for
    /// `cancelAsyncWrite`.
    @discardableResult
    public func beginAsyncWrite(_ asyncWriteBlock: @escaping () -> Void) -> AsyncTransactionId {
        let r = instance
        r.checkThread("beginAsyncWrite")
        if r.isFrozen || r.configuration.readOnly {
            strataTrap("beginAsyncWrite(): '\(r.configuration.path)' is \(r.isFrozen ? "frozen" : "read-only") and cannot write")
        }
        return r.asyncWrites.begin(asyncWriteBlock, on: r)
    }

    /// Commit the current write (begun by `beginAsyncWrite` or `beginWrite`) and call `onComplete`
    /// later on this Realm's thread, queue or actor, with the commit's error or nil; the commit is
    /// durable before `onComplete` runs. With `allowGrouping` the commit is visible at once and
    /// made durable by one sync of the commit log that it shares with the grouped commits of
    /// every thread of the process arriving meanwhile (group commit); a power loss before that
    /// sync loses them together, never half of one, and no `onComplete` has run for them.
    /// Outside a write it traps.
    @discardableResult
    public func commitAsyncWrite(allowGrouping: Bool = false, _ onComplete: ((Swift.Error?) -> Void)? = nil) -> AsyncTransactionId {
        let r = instance
        r.checkThread("commitAsyncWrite")
        if !r.isInWriteTransaction { strataTrap("commitAsyncWrite() called outside of a write transaction") }
        var failure: Swift.Error?
        do { try r.commitWrite(unsynced: allowGrouping) } catch { failure = error }
        let version = allowGrouping && failure == nil ? r.version : nil // (at least the commit's)
        return r.asyncWrites.completion({ onComplete?($0) }, error: failure, afterSyncOf: version, on: r)
    }

    /// Cancel a queued `beginAsyncWrite` (its block never runs) or the completion of a
    /// `commitAsyncWrite` (the commit stands). A block already running, or an id already done,
    /// is left as it is.
    public func cancelAsyncWrite(_ asyncTransactionId: AsyncTransactionId) throws {
        instance.checkThread("cancelAsyncWrite")
        _ = instance.asyncWrites.cancel(asyncTransactionId, instance)
    }

    /// True while async writes of this Realm are queued, running or awaiting their completion.
    public var isPerformingAsynchronousWriteOperations: Bool {
        instance.asyncWrites.isBusy || instance.asyncWriters > 0
    }
}
