import Foundation

extension Realm {
    /// Where a Realm lives and what it holds, as in RealmSwift.
    ///
    /// ```swift
    /// var config = Realm.Configuration(fileURL: url, schemaVersion: 2)
    /// config.objectTypes = [Person.self, Dog.self]
    /// let realm = try Realm(configuration: config)
    /// ```
    public struct Configuration: Sendable {
        /// The file (`default.realm` in the current directory unless set). Setting it clears
        /// `inMemoryIdentifier`.
        public var fileURL: URL? {
            get { _inMemoryIdentifier == nil ? _fileURL : nil }
            set {
                _fileURL = newValue
                if newValue != nil { _inMemoryIdentifier = nil }
            }
        }

        /// An in-memory Realm: instances with the same identifier share its data (across
        /// threads), which goes with the last instance. Setting it clears `fileURL`.
        public var inMemoryIdentifier: String? {
            get { _inMemoryIdentifier }
            set {
                _inMemoryIdentifier = newValue
                if newValue != nil { _fileURL = nil }
            }
        }

        /// Reads work; every write throws.
        public var readOnly = false
        /// The version of the model classes; a file with an older one is migrated on open.
        public var schemaVersion: UInt64 = 0
        /// The block that migrates a file whose schema version is lower than `schemaVersion`.
        public var migrationBlock: MigrationBlock?
        /// Delete the file instead of migrating it when its schema differs.
        public var deleteRealmIfMigrationNeeded = false
        /// Asked when the file is first opened in this process, with its size and the bytes its
        /// data uses: true rewrites it packed (compaction) before it is used. Not asked for
        /// in-memory or read-only Realms; skipped while another process has the file open.
        public var shouldCompactOnLaunch: (@Sendable (_ totalBytes: Int, _ usedBytes: Int) -> Bool)?
        /// The classes of this Realm's schema; nil: every `Object` subclass linked into the
        /// program.
        public var objectTypes: [ObjectBase.Type]?
        /// 64 bytes: the Realm's file is encrypted with this key (a new file), or must have been
        /// (an existing one); its pages, commit log and copies are sealed with
        /// ChaCha20-Poly1305. A missing, wrong or unexpected key fails the open with
        /// `Realm.Error.invalidDatabase`; another length throws `.invalidArgument`. Not used by
        /// an in-memory Realm.
        public var encryptionKey: Data?
        /// A commit fails (throws) rather than let more versions than this be pinned by
        /// readers; 0 or nil: no limit.
        public var maximumNumberOfActiveVersions: UInt?

        private var _fileURL: URL?
        private var _inMemoryIdentifier: String?

        /// A configuration (RealmSwift's parameters; `syncConfiguration` is not supported). Nothing is checked until a Realm opens with it.
        public init(fileURL: URL? = Configuration.defaultFileURL,
                    inMemoryIdentifier: String? = nil,
                    encryptionKey: Data? = nil,
                    readOnly: Bool = false,
                    schemaVersion: UInt64 = 0,
                    migrationBlock: MigrationBlock? = nil,
                    deleteRealmIfMigrationNeeded: Bool = false,
                    shouldCompactOnLaunch: (@Sendable (Int, Int) -> Bool)? = nil,
                    objectTypes: [ObjectBase.Type]? = nil) {
            _fileURL = fileURL
            _inMemoryIdentifier = inMemoryIdentifier
            self.encryptionKey = encryptionKey
            self.readOnly = readOnly
            self.schemaVersion = schemaVersion
            self.migrationBlock = migrationBlock
            self.deleteRealmIfMigrationNeeded = deleteRealmIfMigrationNeeded
            self.shouldCompactOnLaunch = shouldCompactOnLaunch
            self.objectTypes = objectTypes
        }

        /// `default.realm` in the current directory.
        public static var defaultFileURL: URL {
            URL(fileURLWithPath: FileManager.default.currentDirectoryPath)
                .appendingPathComponent("default.realm")
        }

        private static let defaultLock = NSLock()
        nonisolated(unsafe) private static var _default = Configuration()

        /// The configuration `Realm()` uses.
        public static var defaultConfiguration: Configuration {
            get {
                defaultLock.lock()
                defer { defaultLock.unlock() }
                return _default
            }
            set {
                defaultLock.lock()
                defer { defaultLock.unlock() }
                _default = newValue
            }
        }

        /// What identifies the file: its path, or the memory store's identifier.
        var storeKey: String { (_inMemoryIdentifier != nil ? "memory:" : "file:") + path }

        var path: String {
            if let id = _inMemoryIdentifier { return id }
            return (_fileURL ?? Configuration.defaultFileURL).standardizedFileURL.path
        }
    }
}
