import CCore

/// A Strata database file (or in-memory store), opened once and shared by threads.
///
/// This is the storage layer: named ordered trees of byte keys or integer keys, in snapshot
/// read transactions and one writer at a time. The object layer builds on it.
///
/// ```swift
/// let db = try Database(path: "/tmp/app.strata")
/// try db.write { txn in try txn.tree("counters", keys: .int).put(1, [42]) }
/// let bytes = try db.read { txn in try txn.tree("counters", keys: .int).get(1) }
/// ```
public final class Database: @unchecked Sendable { // (the core handle is safe across threads)
    /// How commits reach the disk.
    public enum Durability {
        /// A commit is on disk when `write` returns.
        case full
        /// No fsync at commit: survives a process crash; a power loss may drop the last commits.
        case noSync
        /// No file: databases opened with the same path in this process share the data.
        case memory
    }

    @_spi(StrataCore) public let handle: OpaquePointer
    /// The file's path (or, in memory, the identifier).
    public let path: String

    /// Opens (creating it when missing) the database at `path`. Throws a StrataError naming the file when it cannot: not a Strata file, damaged, locked past the open timeout, a full disk.
    /// With `encryptionKey` (64 bytes) the file is encrypted: a new one is made encrypted, an
    /// existing one must have been encrypted with that key (else `.encryption`).
    public convenience init(path: String, durability: Durability = .full, readOnly: Bool = false,
                            maxVersions: UInt64 = 0, encryptionKey: [UInt8]? = nil) throws {
        try self.init(path: path, encryptionKey: encryptionKey) { opts in
            switch durability {
            case .full: opts.durability = STRATA_DURABILITY_FULL
            case .noSync: opts.durability = STRATA_DURABILITY_NO_SYNC
            case .memory: opts.durability = STRATA_DURABILITY_MEMORY
            }
            opts.read_only = readOnly
            opts.max_versions = maxVersions
        }
    }

    /// Open with the core's defaults changed by `configure` (the `strata` tool: no create, ...).
    @_spi(StrataCore) public init(path: String, encryptionKey: [UInt8]? = nil,
                                  configure: (inout strata_options) -> Void) throws {
        var opts = strata_options()
        strata_options_init_sized(&opts, MemoryLayout<strata_options>.size)
        configure(&opts)
        var db: OpaquePointer?
        if let key = encryptionKey {
            try key.withUnsafeBytes { raw in // (the core keeps a copy of the key)
                opts.encryption_key = raw.baseAddress
                opts.encryption_key_len = raw.count
                try StrataError.check { strata_db_open(path, &opts, &db, $0) }
            }
        } else {
            try StrataError.check { strata_db_open(path, &opts, &db, $0) }
        }
        self.handle = db!
        self.path = path
    }

    deinit { _ = strata_db_close(handle, nil) }

    /// Run `body` in a snapshot of the latest commit.
    public func read<T>(_ body: (Transaction) throws -> T) throws -> T {
        let txn = try Transaction(db: self, write: false)
        defer { txn.free() }
        return try body(txn)
    }

    /// Run `body` in the write transaction and commit; a thrown error aborts it.
    public func write<T>(_ body: (Transaction) throws -> T) throws -> T {
        let txn = try Transaction(db: self, write: true)
        defer { txn.free() }
        let result = try body(txn)
        try txn.commit()
        return result
    }

    /// Make every commit so far durable (`strata_db_sync`): those of a `.noSync` database, and
    /// commits made without sync through the C API (`strata_txn_commit_unsynced`).
    public func sync() throws {
        try StrataError.check { strata_db_sync(handle, $0) }
    }

    /// Make every commit published so far durable at the least cost (`strata_db_sync_commits`:
    /// one sync of the commit log when they are all in it); returns the version it covers.
    public func syncCommits() throws -> UInt64 {
        var covered: UInt64 = 0
        try StrataError.check { strata_db_sync_commits(handle, &covered, $0) }
        return covered
    }

    /// Check every page and tree of the latest version.
    public func verify() throws {
        try StrataError.check { strata_db_verify(handle, $0) }
    }

    /// Where the file's bytes go (`strata_db_space_get`).
    public struct Space {
        /// The file's size.
        public let fileBytes: UInt64
        /// Bytes of the pages the latest version uses: what a compaction keeps.
        public let usedBytes: UInt64
        /// Free pages inside the file.
        public let freeBytes: UInt64
        /// Of `usedBytes`, the packed region's (LZ4-compressed pages a compaction wrote).
        public let packedBytes: UInt64
    }

    /// Where the file's bytes go now: its size, the latest version's pages, free pages, packed pages.
    public func space() throws -> Space {
        var s = strata_space()
        s.size = MemoryLayout<strata_space>.size
        try StrataError.check { strata_db_space_get(handle, &s, $0) }
        return Space(fileBytes: s.file_bytes, usedBytes: s.used_bytes, freeBytes: s.free_bytes,
                     packedBytes: s.packed_bytes)
    }

    /// How a copy is encrypted.
    public enum CopyEncryption: Sendable {
        /// As the file is, with its key.
        case same
        /// Not encrypted.
        case none
        /// With this 64-byte key.
        case key([UInt8])
    }

    private func withCopyOptions(pack: Bool, encryption: CopyEncryption,
                                 _ body: (inout strata_copy_options) throws -> Void) rethrows {
        var o = strata_copy_options()
        strata_copy_options_init_sized(&o, MemoryLayout<strata_copy_options>.size)
        o.pack = pack
        switch encryption {
        case .same: try body(&o)
        case .none:
            o.set_encryption = true
            try body(&o)
        case .key(let key):
            o.set_encryption = true
            try key.withUnsafeBytes { raw in
                o.encryption_key = raw.baseAddress
                o.encryption_key_len = raw.count
                try body(&o)
            }
        }
    }

    /// Write a copy of the latest version to a new file at `path` (it must not exist): pages in
    /// tree order, no free space, tree and column pages LZ4-compressed when `pack` (then sealed,
    /// in an encrypted copy); synced, a database of its own, encrypted as `encryption` says.
    public func writeCopy(to path: String, pack: Bool = true, encryption: CopyEncryption = .same) throws {
        try withCopyOptions(pack: pack, encryption: encryption) { o in
            try StrataError.check { strata_db_write_copy(handle, path, &o, $0) }
        }
    }

    /// Rewrite the file, in place, as such a copy of its latest version (encrypting, decrypting
    /// or re-keying it as `encryption` says; the handle goes on with the new key). Throws
    /// `.busy` while this handle has a transaction or another handle or process has the file open.
    public func compact(pack: Bool = true, encryption: CopyEncryption = .same) throws {
        try withCopyOptions(pack: pack, encryption: encryption) { o in
            try StrataError.check { strata_db_compact(handle, &o, $0) }
        }
    }

    /// The latest version, page counts and readers.
    public func info() throws -> strata_db_info {
        var info = strata_db_info()
        try StrataError.check { strata_db_info_get(handle, &info, $0) }
        return info
    }
}

/// A read or write transaction; it belongs to the thread that runs the closure.
public final class Transaction {
    let core: CoreTxn
    var handle: OpaquePointer { core.handle }
    var isWrite: Bool { core.isWrite }

    init(db: Database, write: Bool) throws { core = try CoreTxn(db: db, write: write) }

    func commit() throws { try core.commit() }
    func free() { core.free() }

    /// The version this transaction reads (or, writing, will commit).
    public var version: UInt64 { core.version }

    /// The tree named `name`, created in a write transaction when missing.
    public func tree(_ name: String, keys: Tree.Keys) throws -> Tree {
        var tree: OpaquePointer?
        let kind = keys == .int ? STRATA_KEY_INT : STRATA_KEY_BYTES
        let flags = isWrite ? UInt32(STRATA_TREE_CREATE) : 0
        try StrataError.check { strata_tree_open(handle, name, kind, flags, &tree, $0) }
        return Tree(handle: tree!, keys: keys)
    }
}
