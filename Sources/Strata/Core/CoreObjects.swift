import CCore

/// One transaction of the core for the object layer (`strata_txn_*`), owned by one thread at a
/// time. Table handles it opens die with it; `generation` moves whenever that happens (commit,
/// abort, refresh), so that callers know to open them again.
@_spi(StrataCore) public final class CoreTxn {
    @_spi(StrataCore) public let handle: OpaquePointer
    @_spi(StrataCore) public let isWrite: Bool
    private var freed = false

    @_spi(StrataCore) public init(db: Database, write: Bool, wait: Bool = true) throws {
        isWrite = write
        var txn: OpaquePointer?
        let flags = write ? UInt32(STRATA_TXN_WRITE) | (wait ? 0 : UInt32(STRATA_TXN_TRY)) : UInt32(STRATA_TXN_READ)
        try StrataError.check { strata_txn_begin(db.handle, flags, &txn, $0) }
        handle = txn!
    }

    /// A write transaction, or nil when `wait` is false and another writer holds the file.
    @_spi(StrataCore) public convenience init?(writeOn db: Database, wait: Bool) throws {
        do {
            try self.init(db: db, write: true, wait: wait)
        } catch let e as StrataError where e.code == .busy && !wait {
            return nil
        }
    }

    /// Another read transaction of `other`'s version (`strata_txn_clone`), for another thread.
    @_spi(StrataCore) public init(cloneOf other: CoreTxn) throws {
        isWrite = false
        var txn: OpaquePointer?
        try StrataError.check { strata_txn_clone(other.handle, &txn, $0) }
        handle = txn!
    }

    deinit { if !freed { strata_txn_free(handle) } }

    /// Commit (write) or end (read); either way the handle is freed. `unsynced`: visible now,
    /// durable after the next `Database.syncCommits` (`strata_txn_commit_unsynced`).
    @_spi(StrataCore) public func commit(unsynced: Bool = false) throws {
        defer { free() }
        if unsynced {
            try StrataError.check { strata_txn_commit_unsynced(handle, $0) }
        } else {
            try StrataError.check { strata_txn_commit(handle, $0) }
        }
    }

    @_spi(StrataCore) public func free() {
        if freed { return }
        freed = true
        strata_txn_free(handle)
    }

    /// A read transaction moves to the latest version.
    @_spi(StrataCore) public func refresh() throws { try StrataError.check { strata_txn_refresh(handle, $0) } }

    @_spi(StrataCore) public var version: UInt64 { strata_txn_version(handle) }

    @_spi(StrataCore) public func schemaVersion() throws -> UInt64 {
        var v: UInt64 = 0
        try StrataError.check { strata_schema_version(handle, &v, $0) }
        return v
    }

    @_spi(StrataCore) public func setSchemaVersion(_ v: UInt64) throws {
        try StrataError.check { strata_schema_set_version(handle, v, $0) }
    }

    @_spi(StrataCore) public func tableNames() throws -> [String] {
        var n = 0
        try StrataError.check { strata_table_count_all(handle, &n, $0) }
        return try (0..<n).map { i in
            var name: UnsafePointer<CChar>?
            try StrataError.check { strata_table_name_at(handle, i, &name, $0) }
            return String(cString: name!)
        }
    }

    /// The table, or nil when the file has none of that name.
    @_spi(StrataCore) public func table(_ name: String) throws -> CoreTable? {
        var t: OpaquePointer?
        guard try StrataError.found({ strata_table_open(handle, name, &t, $0) }) else { return nil }
        return CoreTable(handle: t!)
    }

    @_spi(StrataCore) public func dropTable(_ name: String) throws {
        try StrataError.check { strata_table_drop(handle, name, $0) }
    }

    @_spi(StrataCore) public func createTable(_ name: String) throws -> CoreTable {
        var t: OpaquePointer?
        try StrataError.check { strata_table_create(handle, name, &t, $0) }
        return CoreTable(handle: t!)
    }
}

/// A property as the core has it.
@_spi(StrataCore) public struct CoreProperty: Sendable {
    @_spi(StrataCore) public let col: UInt32
    @_spi(StrataCore) public let name: String
    @_spi(StrataCore) public let type: CoreType
    @_spi(StrataCore) public let flags: CoreFlags
    @_spi(StrataCore) public let linkTarget: String?

    @_spi(StrataCore) public init(col: UInt32, name: String, type: CoreType, flags: CoreFlags, linkTarget: String?) {
        self.col = col
        self.name = name
        self.type = type
        self.flags = flags
        self.linkTarget = linkTarget
    }
}

/// A table handle of one transaction (`strata_table_*`, `strata_obj_*`, `strata_list_*`).
@_spi(StrataCore) public struct CoreTable {
    @_spi(StrataCore) public let handle: OpaquePointer

    @_spi(StrataCore) public var name: String { String(cString: strata_table_name(handle)) }
    /// The table's id in its file (what a mixed value's link names).
    @_spi(StrataCore) public var id: UInt32 { strata_table_id(handle) }

    /// Whether the table is embedded (one parent per object).
    @_spi(StrataCore) public func isEmbedded() throws -> Bool {
        var e = false
        try StrataError.check { strata_table_is_embedded(handle, &e, $0) }
        return e
    }

    /// Make the table embedded (every object must have exactly one parent; those with none are
    /// deleted when `deleteOrphans`, else refused) or top-level.
    @_spi(StrataCore) public func setEmbedded(_ embedded: Bool, deleteOrphans: Bool = false) throws {
        let flags = deleteOrphans ? UInt32(STRATA_EMBED_DELETE_ORPHANS) : 0
        try StrataError.check { strata_table_set_embedded(handle, embedded, flags, $0) }
    }

    @_spi(StrataCore) public func properties() throws -> [CoreProperty] {
        var n = 0
        try StrataError.check { strata_table_property_count(handle, &n, $0) }
        return try (0..<n).map { i in
            var info = strata_property_info()
            try StrataError.check { strata_table_property_at(handle, i, &info, $0) }
            return CoreProperty(col: info.col, name: String(cString: info.name),
                                type: CoreType(rawValue: info.type.rawValue) ?? .null,
                                flags: CoreFlags(rawValue: UInt32(info.flags)),
                                linkTarget: info.link_target.map { String(cString: $0) })
        }
    }

    @_spi(StrataCore) public func addProperty(_ name: String, type: CoreType, flags: CoreFlags, linkTarget: String?) throws -> UInt32 {
        var col: UInt32 = 0
        try StrataError.check {
            strata_table_add_property(handle, name, type.cValue, flags.rawValue, linkTarget, &col, $0)
        }
        return col
    }

    @_spi(StrataCore) public func removeProperty(_ col: UInt32) throws {
        try StrataError.check { strata_table_remove_property(handle, col, $0) }
    }

    @_spi(StrataCore) public func setPrimaryKey(_ col: UInt32) throws {
        try StrataError.check { strata_table_set_primary_key(handle, col, $0) }
    }

    @_spi(StrataCore) public func setIndexed(_ col: UInt32, _ on: Bool) throws {
        try StrataError.check { strata_table_set_indexed(handle, col, on, $0) }
    }

    @_spi(StrataCore) public func setFullText(_ col: UInt32, _ on: Bool) throws {
        try StrataError.check { strata_table_set_fulltext(handle, col, on, $0) }
    }

    @_spi(StrataCore) public func count() throws -> Int {
        var n: UInt64 = 0
        try StrataError.check { strata_table_size(handle, &n, $0) }
        return Int(n)
    }

    @_spi(StrataCore) public func create() throws -> Int64 {
        var key: Int64 = 0
        try StrataError.check { strata_obj_create(handle, &key, $0) }
        return key
    }

    @_spi(StrataCore) public func create(primaryKey pk: StoredValue) throws -> Int64 {
        var key: Int64 = 0
        try pk.withCValue { v in try StrataError.check { strata_obj_create_pk(handle, v, &key, $0) } }
        return key
    }

    /// The object whose primary key is pk, or nil.
    @_spi(StrataCore) public func find(primaryKey pk: StoredValue) throws -> Int64? {
        var key: Int64 = 0
        let found = try pk.withCValue { v in
            try StrataError.foundRead { strata_obj_find_pk(handle, v, &key, $0) }
        }
        return found ? key : nil
    }

    @_spi(StrataCore) public func find(intPrimaryKey pk: Int64) throws -> Int64? {
        var v = strata_value()
        v.type = STRATA_TYPE_INT
        v.u.i = pk
        var key: Int64 = 0
        return try StrataError.foundRead { strata_obj_find_pk(handle, &v, &key, $0) } ? key : nil
    }

    @_spi(StrataCore) public func exists(_ key: Int64) throws -> Bool {
        try StrataError.foundRead { strata_obj_exists(handle, key, $0) }
    }

    @_spi(StrataCore) public func delete(_ key: Int64) throws { try StrataError.check { strata_obj_delete(handle, key, $0) } }
    @_spi(StrataCore) public func clear() throws { try StrataError.check { strata_table_clear(handle, $0) } }

    /// The first key after `after` (-1: the first object), or nil at the end.
    @_spi(StrataCore) public func next(after: Int64) throws -> Int64? {
        var key: Int64 = 0
        return try StrataError.found({ strata_obj_next(handle, after, &key, $0) }) ? key : nil
    }

    /// Every key, ascending.
    /// Every key, ascending (`strata_table_keys`: one pass over the clusters' key leaves).
    @_spi(StrataCore) public func keys() throws -> [Int64] {
        var n = 0
        try StrataError.check { strata_table_keys(handle, nil, 0, &n, $0) }
        var out = [Int64](repeating: 0, count: n)
        var got = 0
        try out.withUnsafeMutableBufferPointer { buf in
            try StrataError.check { strata_table_keys(handle, buf.baseAddress, n, &got, $0) }
        }
        return got >= n ? out : Array(out.prefix(got))
    }

    @_spi(StrataCore) public func get(_ key: Int64, _ col: UInt32) throws -> StoredValue {
        StoredValue(try getRaw(key, col))
    }

    /// The value as the core hands it out (its bytes in the mapped file: copy them before the
    /// transaction moves).
    @inline(__always)
    @_spi(StrataCore) public func getRaw(_ key: Int64, _ col: UInt32) throws -> strata_value {
        var v = strata_value()
        try StrataError.checkRead { strata_obj_get(handle, key, col, &v, $0) }
        return v
    }

    @_spi(StrataCore) public func set(_ key: Int64, _ col: UInt32, _ value: StoredValue) throws {
        try value.withCValue { v in try StrataError.check { strata_obj_set(handle, key, col, v, $0) } }
    }

    // Lists

    @_spi(StrataCore) public func listCount(_ key: Int64, _ col: UInt32) throws -> Int {
        var n = 0
        try StrataError.checkRead { strata_list_size(handle, key, col, &n, $0) }
        return n
    }

    @_spi(StrataCore) public func listGet(_ key: Int64, _ col: UInt32, _ i: Int) throws -> StoredValue {
        var v = strata_value()
        try StrataError.checkRead { strata_list_get(handle, key, col, i, &v, $0) }
        return StoredValue(v)
    }

    @_spi(StrataCore) public func listInsert(_ key: Int64, _ col: UInt32, _ i: Int, _ value: StoredValue) throws {
        try value.withCValue { v in try StrataError.check { strata_list_insert(handle, key, col, i, v, $0) } }
    }

    @_spi(StrataCore) public func listSet(_ key: Int64, _ col: UInt32, _ i: Int, _ value: StoredValue) throws {
        try value.withCValue { v in try StrataError.check { strata_list_set(handle, key, col, i, v, $0) } }
    }

    @_spi(StrataCore) public func listMove(_ key: Int64, _ col: UInt32, from: Int, to: Int) throws {
        try StrataError.check { strata_list_move(handle, key, col, from, to, $0) }
    }

    @_spi(StrataCore) public func listRemove(_ key: Int64, _ col: UInt32, _ i: Int) throws {
        try StrataError.check { strata_list_remove(handle, key, col, i, $0) }
    }

    @_spi(StrataCore) public func listClear(_ key: Int64, _ col: UInt32) throws {
        try StrataError.check { strata_list_clear(handle, key, col, $0) }
    }

    // Sets (stored as lists of unique elements)

    /// Add `value` unless the set holds it; whether it was added.
    @discardableResult
    @_spi(StrataCore) public func setInsert(_ key: Int64, _ col: UInt32, _ value: StoredValue) throws -> Bool {
        var added = false
        try value.withCValue { v in try StrataError.check { strata_set_insert(handle, key, col, v, &added, $0) } }
        return added
    }

    /// Remove `value` if the set holds it; whether it was removed.
    @discardableResult
    @_spi(StrataCore) public func setErase(_ key: Int64, _ col: UInt32, _ value: StoredValue) throws -> Bool {
        var removed = false
        try value.withCValue { v in try StrataError.check { strata_set_erase(handle, key, col, v, &removed, $0) } }
        return removed
    }

    /// The position of `value` in the set, or nil.
    @_spi(StrataCore) public func setFind(_ key: Int64, _ col: UInt32, _ value: StoredValue) throws -> Int? {
        var at = 0
        let found = try value.withCValue { v in try StrataError.found { strata_set_find(handle, key, col, v, &at, $0) } }
        return found ? at : nil
    }

    // Maps (string keys in ascending order; their values read as a list in that order)

    /// Set the value of `mapKey`; whether the key was added.
    @discardableResult
    @_spi(StrataCore) public func mapSet(_ key: Int64, _ col: UInt32, _ mapKey: String, _ value: StoredValue) throws -> Bool {
        var added = false
        let n = mapKey.utf8.count
        try mapKey.withCString { k in
            try value.withCValue { v in try StrataError.check { strata_map_set(handle, key, col, k, n, v, &added, $0) } }
        }
        return added
    }

    /// The value of `mapKey`, or nil when the map lacks it (or the object is gone).
    @_spi(StrataCore) public func mapGet(_ key: Int64, _ col: UInt32, _ mapKey: String) throws -> StoredValue? {
        var v = strata_value()
        let n = mapKey.utf8.count
        let found = try mapKey.withCString { k in
            try StrataError.foundRead { strata_map_get(handle, key, col, k, n, &v, $0) }
        }
        return found ? StoredValue(v) : nil
    }

    /// Remove `mapKey`; whether the map held it.
    @discardableResult
    @_spi(StrataCore) public func mapErase(_ key: Int64, _ col: UInt32, _ mapKey: String) throws -> Bool {
        var removed = false
        let n = mapKey.utf8.count
        try mapKey.withCString { k in
            try StrataError.check { strata_map_erase(handle, key, col, k, n, &removed, $0) }
        }
        return removed
    }

    /// The key at position `i` of the map's (ascending) key order.
    @_spi(StrataCore) public func mapKeyAt(_ key: Int64, _ col: UInt32, _ i: Int) throws -> String {
        var v = strata_value()
        try StrataError.checkRead { strata_map_key_at(handle, key, col, i, &v, $0) }
        guard case .string(let s) = StoredValue(v) else { return "" }
        return s
    }

    /// The keys of the objects of `origin` that link to object `key` through `col`, ascending.
    @_spi(StrataCore) public func backlinks(_ key: Int64, origin: CoreTable, col: UInt32) throws -> [Int64] {
        var n = 0
        try StrataError.check { strata_obj_backlinks(handle, key, origin.handle, col, nil, 0, &n, $0) }
        if n == 0 { return [] }
        var keys = [Int64](repeating: 0, count: n)
        try keys.withUnsafeMutableBufferPointer { buf in
            try StrataError.check {
                strata_obj_backlinks(handle, key, origin.handle, col, buf.baseAddress, n, &n, $0)
            }
        }
        return Array(keys.prefix(n))
    }
}
