/// Which property a `@Persisted` field's storage key path reads, per table: a field of a managed
/// object finds its property here on every read and write, so it is kept in flat buffers (no
/// array copies, reference counting or exclusivity checks on that path). A Realm's cache is used
/// by its thread only (a frozen Realm's under its lock). A table with more key paths than it has
/// room for is not cached past that room (the caller then finds the property from the field's
/// offset each time).
final class KeyPathIndexCache {
    private struct Entry {
        var keyPath: UInt
        var index: Int
    }

    private let tables: Int
    private let capacity: Int
    private let entries: UnsafeMutablePointer<Entry>
    private let counts: UnsafeMutablePointer<Int>

    /// Room for `tables` tables (by ordinal) of at most `properties` properties each (twice
    /// that many key paths: a subclass's key paths to inherited fields are other instances).
    init(tables: Int, properties: Int) {
        self.tables = tables
        capacity = max(8, properties * 2)
        entries = .allocate(capacity: max(1, tables * capacity))
        counts = .allocate(capacity: max(1, tables))
        counts.initialize(repeating: 0, count: max(1, tables))
    }

    deinit {
        entries.deallocate()
        counts.deallocate()
    }

    @inline(__always)
    func index(table: Int, keyPath: ObjectIdentifier) -> Int? {
        guard table < tables else { return nil }
        let id = UInt(bitPattern: keyPath)
        let base = entries + table * capacity
        for i in 0..<counts[table] where base[i].keyPath == id { return base[i].index }
        return nil
    }

    func insert(table: Int, keyPath: ObjectIdentifier, index: Int) {
        guard table < tables, counts[table] < capacity else { return }
        (entries + table * capacity + counts[table]).initialize(to: Entry(keyPath: UInt(bitPattern: keyPath), index: index))
        counts[table] += 1
    }
}
