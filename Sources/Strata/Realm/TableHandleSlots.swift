import CCore

/// A Realm's table handles in its current transaction, by TableInfo ordinal. Every property
/// access reads one, so they are kept in a flat buffer (no copy-on-write check, reference
/// counting or exclusivity check on that path). Used by the Realm's thread only; an ordinal
/// past the slots (a class another Realm of the file added later) is not kept.
struct TableHandleSlots {
    private let slots: UnsafeMutablePointer<OpaquePointer?>
    private let count: Int

    init(count: Int) {
        self.count = count
        slots = .allocate(capacity: max(1, count))
        slots.initialize(repeating: nil, count: max(1, count))
    }

    /// Give the buffer back (the Realm's deinit).
    func free() { slots.deallocate() }

    @inline(__always)
    subscript(ordinal: Int) -> CoreTable? {
        guard ordinal < count, let h = slots[ordinal] else { return nil }
        return CoreTable(handle: h)
    }

    func keep(_ table: CoreTable, at ordinal: Int) {
        if ordinal < count { slots[ordinal] = table.handle }
    }

    /// Forget every handle (the transaction changed).
    func clear() { slots.update(repeating: nil, count: max(1, count)) }
}
