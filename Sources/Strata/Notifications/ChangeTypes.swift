import Foundation

/// What a collection observer receives (`Results`, `List`, `LinkingObjects`): first the
/// collection as it is, then after each version that changed it the new collection with the
/// indices that changed, as RealmSwift defines them (and as `UITableView` batch updates take
/// them): `deletions` are indices in the previous version of the collection, `insertions` and
/// `modifications` indices in the new one. An object that moved (in a sorted collection, or
/// moved in a list) is a deletion at its old index and an insertion at its new one.
public enum RealmCollectionChange<CollectionType> {
    /// The collection as it was when observing began.
    case initial(CollectionType)
    /// The collection after a commit: indices deleted (in the old collection), inserted and modified (in the new).
    case update(CollectionType, deletions: [Int], insertions: [Int], modifications: [Int])
    /// Observing failed; no more changes come.
    case error(Error)
}

/// One property of an observed object that changed: its value before and after. `oldValue` is
/// nil for list properties.
public struct PropertyChange {
    /// The property's name.
    public let name: String
    /// Its value before the change (nil for a change this thread committed, as in RealmSwift).
    public let oldValue: Any?
    /// Its value after the change.
    public let newValue: Any?
}

/// What an object observer receives: the properties that changed, or that the object was
/// deleted (after which nothing more comes).
public enum ObjectChange<T> {
    /// Observing failed; no more changes come.
    case error(Error)
    /// The object changed: the object and the properties that changed.
    case change(T, [PropertyChange])
    /// The object was deleted; no more changes come.
    case deleted
}

extension Realm {
    /// What a `Realm.observe` block is told.
    public enum Notification: String {
        /// The Realm moved to a newer version: a write committed (on this thread or another, or
        /// in another process) and the Realm refreshed to it.
        case didChange = "RLMRealmDidChangeNotification"
        /// A newer version exists but the Realm does not refresh by itself (autorefresh off).
        case refreshRequired = "RLMRealmRefreshRequiredNotification"
    }

    /// The block `Realm.observe` calls after each commit.
    public typealias NotificationBlock = Strata.NotificationBlock
}

/// What `Realm.observe` calls (RealmSwift's top-level name).
public typealias NotificationBlock = (_ notification: Realm.Notification, _ realm: Realm) -> Void

/// Keeps an observation going: notifications are delivered while the token is retained and
/// `invalidate()` was not called. Invalidating (or releasing) it stops them at once, from any
/// thread.
public final class NotificationToken: @unchecked Sendable {
    let state = ObservationState()

    init() {}

    /// Stop the notifications of this token: no block runs for it from now on. Returns whether
    /// it was still active (false: invalidated already, or never registered because the task
    /// that asked was cancelled), as RealmSwift's does.
    @discardableResult
    public func invalidate() -> Bool { state.invalidate() }

    deinit { state.invalidate() }
}

/// Whether an observation goes on, shared by its token and its observer (which must not keep
/// the token alive: releasing the token ends the observation).
final class ObservationState: @unchecked Sendable {
    private let lock = NSLock()
    private var stop: (() -> Void)?
    private var invalidated = false

    /// Called once when the observation ends (or at once if it has).
    func onInvalidate(_ body: @escaping () -> Void) {
        lock.lock()
        if invalidated {
            lock.unlock()
            body()
            return
        }
        stop = body
        lock.unlock()
    }

    var isInvalidated: Bool {
        lock.lock()
        defer { lock.unlock() }
        return invalidated
    }

    @discardableResult
    func invalidate() -> Bool {
        lock.lock()
        if invalidated {
            lock.unlock()
            return false
        }
        invalidated = true
        let body = stop
        stop = nil
        lock.unlock()
        body?()
        return true
    }
}
