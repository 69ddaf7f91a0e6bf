import CCore
import Foundation

/// Where a RealmInstance can be found without a weak reference to it. The caches of open Realms
/// (RealmCache, SharedFile's frozen Realms) and the parts that must not keep a Realm alive
/// (RealmNotifier, async write deliveries) used to hold `weak` references: the runtime then
/// moves the instance's reference count to a side table, and every retain and release of it —
/// each Results made and dropped takes one of each — goes through the runtime's slow path (a
/// sixth of `filter(…).count`'s time). They hold the instance's slot instead: the instance
/// fills it when made and empties it first thing in its deinit; a load retains the instance
/// only if its deinit has not begun (the runtime's conditional retain), under the slot's lock,
/// which the deinit takes too, so the instance cannot be freed between the two.
final class RealmSlot: @unchecked Sendable { // (its pointer is guarded by its lock)
    private let lock = NSLock()
    private var pointer: UnsafeMutableRawPointer?

    /// The instance, retained, or nil once its deinit has begun.
    var instance: RealmInstance? {
        lock.lock()
        defer { lock.unlock() }
        guard let p = pointer, strata_swift_try_retain(p) else { return nil }
        return Unmanaged<RealmInstance>.fromOpaque(p).takeRetainedValue()
    }

    /// The instance is made (the end of its init).
    func fill(_ instance: RealmInstance) {
        lock.lock()
        pointer = Unmanaged.passUnretained(instance).toOpaque()
        lock.unlock()
    }

    /// The instance goes (the start of its deinit).
    func empty() {
        lock.lock()
        pointer = nil
        lock.unlock()
    }
}

/// A reference to a RealmInstance that does not keep it alive (through its slot: RealmSlot).
struct WeakRealm: Sendable { // (its slot is locked: any thread may read it)
    private let slot: RealmSlot

    init(_ instance: RealmInstance) { slot = instance.slot }

    /// The instance, or nil once it is gone.
    var instance: RealmInstance? { slot.instance }
}
