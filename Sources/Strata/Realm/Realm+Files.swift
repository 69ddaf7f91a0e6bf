import Foundation

extension Realm {
    /// Write a copy of the Realm's latest committed version to a new file (which must not
    /// exist), synced before it appears: a Realm file of its own, opened with a configuration
    /// naming it (and `encryptionKey`). Writers may go on meanwhile. The copy is encrypted with
    /// `encryptionKey` (64 bytes), or not encrypted when it is nil, as in RealmSwift; its pages
    /// are packed (LZ4) where that pays.
    public func writeCopy(toFile fileURL: URL, encryptionKey: Data? = nil) throws {
        instance.checkThread("writeCopy")
        if let key = encryptionKey, key.count != 64 {
            throw StrataError(code: .invalidArgument, message: "'\(fileURL.path)': an encryption key is "
                              + "64 bytes; this one is \(key.count)")
        }
        try instance.shared.db.writeCopy(to: fileURL.standardizedFileURL.path,
                                         encryption: encryptionKey.map { .key([UInt8]($0)) } ?? .none)
    }

    /// Write a copy to the file of `configuration` (its `fileURL`, encrypted with its
    /// `encryptionKey`; an in-memory configuration is refused naming why).
    public func writeCopy(configuration: Realm.Configuration) throws {
        guard configuration.inMemoryIdentifier == nil, let url = configuration.fileURL else {
            throw StrataError(code: .invalidArgument, message: "writeCopy(configuration:): the configuration names no file "
                              + "(an in-memory Realm cannot be the copy)")
        }
        try writeCopy(toFile: url, encryptionKey: configuration.encryptionKey)
    }

    /// Whether the configuration's Realm file exists (an in-memory Realm: whether it is open).
    public static func fileExists(for config: Configuration) -> Bool {
        if config.inMemoryIdentifier != nil { return SharedFile.isOpen(config) }
        return FileManager.default.fileExists(atPath: config.path)
    }

    /// Open the configuration's Realm once, running its migration if its schema version is
    /// newer than the file's (and compaction if it asks), then close it.
    public static func performMigration(for configuration: Realm.Configuration = Realm.Configuration.defaultConfiguration) throws {
        _ = try Realm(configuration: configuration)
    }

    /// Delete the files of the configuration's Realm (the database, its lock file and commit
    /// log). Returns whether there was a database file. Throws while a Realm of this process has
    /// it open.
    @discardableResult
    public static func deleteFiles(for config: Configuration) throws -> Bool {
        if config.inMemoryIdentifier != nil { return false }
        if SharedFile.isOpen(config) {
            throw StrataError(code: .busy, message: "'\(config.path)' is open: close every Realm of it "
                              + "before deleting its files")
        }
        let fm = FileManager.default
        let path = config.path
        let existed = fm.fileExists(atPath: path)
        for p in [path, path + ".log", path + ".lock"] where fm.fileExists(atPath: p) {
            try fm.removeItem(atPath: p)
        }
        return existed
    }
}

/// The schema version of the Realm file at `fileURL` (it is opened read-only). Throws when
/// there is no such file or it is not a Strata database.
public func schemaVersionAtURL(_ fileURL: URL, encryptionKey: Data? = nil) throws -> UInt64 {
    let path = fileURL.standardizedFileURL.path
    guard FileManager.default.fileExists(atPath: path) else { // RealmSwift's code and wording
        var e = StrataError(code: .invalidDatabase, message: "Realm at path '\(path)' has not been initialized.")
        e.fileURL = URL(fileURLWithPath: path)
        throw e
    }
    do {
        let db = try Database(path: path, readOnly: true, encryptionKey: encryptionKey.map { [UInt8]($0) })
        let txn = try CoreTxn(db: db, write: false)
        defer { txn.free() }
        return try txn.schemaVersion()
    } catch let e as StrataError {
        throw StrataError.opening(e, path: path)
    }
}
