import CCore

/// What changed in one table between two versions (`strata_changes_get`): keys deleted and
/// inserted, and for each modified object the property ids (columns) that changed.
struct TableChanges {
    var deleted: Set<Int64> = []
    var inserted: Set<Int64> = []
    var modified: [Int64: Set<UInt32>] = [:]

    var isEmpty: Bool { deleted.isEmpty && inserted.isEmpty && modified.isEmpty }

    static let none = TableChanges()
}

extension CoreTxn {
    /// The changes of `table` from `older`'s version to this transaction's, with the changed
    /// columns among `cols` for each modified object.
    func changes(since older: CoreTxn, table: String, cols: [UInt32]) throws -> TableChanges {
        var c: OpaquePointer?
        try StrataError.check { strata_changes_get(older.handle, handle, table, &c, $0) }
        defer { strata_changes_free(c) }
        var out = TableChanges()
        func keys(_ kind: Int32) -> [Int64] {
            (0..<strata_changes_count(c, kind)).map { strata_changes_key(c, kind, $0) }
        }
        out.deleted = Set(keys(Int32(STRATA_CHANGE_DELETED)))
        out.inserted = Set(keys(Int32(STRATA_CHANGE_INSERTED)))
        for (i, key) in keys(Int32(STRATA_CHANGE_MODIFIED)).enumerated() {
            out.modified[key] = Set(cols.filter { strata_changes_property_changed(c, i, $0) })
        }
        return out
    }

    /// The elements of list property `col` of object `key` deleted from `older`'s list (indices
    /// there) and inserted into this transaction's (indices here), ascending.
    func listChanges(since older: CoreTxn, table: String, key: Int64, col: UInt32) throws
        -> (deleted: [Int], inserted: [Int]) {
        var c: OpaquePointer?
        try StrataError.check { strata_list_changes_get(older.handle, handle, table, key, col, &c, $0) }
        defer { strata_list_changes_free(c) }
        func indices(_ kind: Int32) -> [Int] {
            (0..<strata_list_changes_count(c, kind)).map { Int(strata_list_changes_index(c, kind, $0)) }
        }
        return (indices(Int32(STRATA_CHANGE_DELETED)), indices(Int32(STRATA_CHANGE_INSERTED)))
    }
}

extension Database {
    /// Wait until a commit (by any handle of any process) makes the latest version newer than
    /// `after`: the new version, or nil after `timeoutMs` or once waits were stopped.
    func waitCommit(after: UInt64, timeoutMs: UInt32) throws -> UInt64? {
        var version: UInt64 = 0
        var timedOut = false
        try StrataError.check { err in
            let rc = strata_db_wait_commit(handle, after, timeoutMs, &version, err)
            if rc == Int32(STRATA_ERR_TIMEOUT.rawValue) { timedOut = true; return 0 }
            return rc
        }
        return timedOut ? nil : version
    }

    /// Make every wait of this handle (in progress and later) return at once.
    func stopWaits() { _ = strata_db_stop_waits(handle, nil) }

    /// The latest committed version.
    var latestVersion: UInt64 { (try? info().version) ?? 0 }
}
