import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The transactions of a frozen Realm: one version, read from any thread. The thread that froze
/// it reads through the first transaction; each other thread gets its own clone of it
/// (`strata_txn_clone`: the same version, held on its own), since a core transaction belongs to
/// one thread at a time. Clones live as long as the frozen Realm (one reader slot per thread
/// that read it).
final class FrozenReads: @unchecked Sendable {
    /// One thread's transaction and the table handles opened in it (used by that thread only).
    final class Reader {
        let txn: CoreTxn
        var tables: [CoreTable?] = []
        init(_ txn: CoreTxn) { self.txn = txn }
    }

    private let lock = NSLock()
    private let anchor: Reader
    private let anchorThread: pthread_t
    private var others: [UInt: Reader] = [:]
    /// Guards the frozen Realm's caches (compiled queries, key paths) shared by its threads.
    let cacheLock = NSLock()

    init(anchor: CoreTxn) {
        self.anchor = Reader(anchor)
        anchorThread = pthread_self()
    }

    var version: UInt64 { anchor.txn.version }

    /// The calling thread's reader (made on its first read).
    func reader() -> Reader {
        let me = pthread_self()
        if pthread_equal(me, anchorThread) != 0 { return anchor }
        let id = FrozenReads.number(me)
        lock.lock()
        defer { lock.unlock() }
        if let r = others[id] { return r }
        do {
            let r = Reader(try CoreTxn(cloneOf: anchor.txn))
            others[id] = r
            return r
        } catch {
            strataTrap("cannot read a frozen Realm from this thread: \(error)")
        }
    }

    private static func number(_ t: pthread_t) -> UInt {
        #if canImport(Darwin)
        return UInt(bitPattern: t)
        #else
        return UInt(t)
        #endif
    }
}
