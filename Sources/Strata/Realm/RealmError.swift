import Foundation

/// RealmSwift's error type is Strata's: `Realm.Error` is `StrataError`, with RealmSwift's codes
/// beside the core's. Opening a Realm throws with RealmSwift's codes (`.fileNotFound`,
/// `.filePermissionDenied`, `.invalidDatabase`, `.schemaMismatch`, …) and `fileURL`; other
/// failures keep the core's code. `catch Realm.Error.fileNotFound { }` works as in RealmSwift.
extension Realm {
    /// RealmSwift's error type: Strata's, with RealmSwift's codes beside the core's.
    public typealias Error = StrataError
}

extension StrataError.Code {
    /// RealmSwift's codes are RLMError's values above this base (apart from the core's).
    static let realmBase: Int32 = 1000
    /// A failure of no more precise kind.
    public static let fail = Self(rawValue: realmBase + 1)
    /// The file could not be opened or read.
    public static let fileAccess = Self(rawValue: realmBase + 2)
    /// The process may not open the file (or its directory).
    public static let filePermissionDenied = Self(rawValue: realmBase + 3)
    /// A file to create exists already.
    public static let fileExists = Self(rawValue: realmBase + 4)
    /// No file at the path (and the configuration does not create one).
    public static let fileNotFound = Self(rawValue: realmBase + 5)
    /// The file needs an upgrade that a read-only Realm cannot write.
    public static let fileFormatUpgradeRequired = Self(rawValue: realmBase + 6)
    /// Another library version holds the file's lock file.
    public static let incompatibleLockFile = Self(rawValue: realmBase + 8)
    /// The file cannot be mapped: no address space left.
    public static let addressSpaceExhausted = Self(rawValue: realmBase + 9)
    /// The file's schema differs from the classes' and no migration is allowed (a read-only Realm, or the same schema version).
    public static let schemaMismatch = Self(rawValue: realmBase + 10)
    /// The file is open with another configuration.
    public static let alreadyOpen = Self(rawValue: realmBase + 12)
    /// An argument was not valid.
    public static let invalidInput = Self(rawValue: realmBase + 13)
    /// The disk is full.
    public static let outOfDiskSpace = Self(rawValue: realmBase + 14)
    /// The file's format is newer or unknown.
    public static let unsupportedFileFormatVersion = Self(rawValue: realmBase + 16)
    /// A file operation (copy, delete, compaction) failed.
    public static let fileOperationFailed = Self(rawValue: realmBase + 19)
    /// The file is not a Strata database, or is damaged.
    public static let invalidDatabase = Self(rawValue: realmBase + 20)
}

extension StrataError {
    /// A failure of no more precise kind (`Realm.Error.` spelling of the code).
    public static let fail = Code.fail
    /// The file could not be opened or read (`Realm.Error.` spelling of the code).
    public static let fileAccess = Code.fileAccess
    /// The process may not open the file (or its directory) (`Realm.Error.` spelling of the code).
    public static let filePermissionDenied = Code.filePermissionDenied
    /// A file to create exists already (`Realm.Error.` spelling of the code).
    public static let fileExists = Code.fileExists
    /// No file at the path (and the configuration does not create one) (`Realm.Error.` spelling of the code).
    public static let fileNotFound = Code.fileNotFound
    /// The file needs an upgrade that a read-only Realm cannot write (`Realm.Error.` spelling of the code).
    public static let fileFormatUpgradeRequired = Code.fileFormatUpgradeRequired
    /// Another library version holds the file's lock file (`Realm.Error.` spelling of the code).
    public static let incompatibleLockFile = Code.incompatibleLockFile
    /// The file cannot be mapped: no address space left (`Realm.Error.` spelling of the code).
    public static let addressSpaceExhausted = Code.addressSpaceExhausted
    /// The file's schema differs from the classes' and no migration is allowed (a read-only Realm, or the same schema version) (`Realm.Error.` spelling of the code).
    public static let schemaMismatch = Code.schemaMismatch
    /// The file is open with another configuration (`Realm.Error.` spelling of the code).
    public static let alreadyOpen = Code.alreadyOpen
    /// An argument was not valid (`Realm.Error.` spelling of the code).
    public static let invalidInput = Code.invalidInput
    /// The disk is full (`Realm.Error.` spelling of the code).
    public static let outOfDiskSpace = Code.outOfDiskSpace
    /// The file's format is newer or unknown (`Realm.Error.` spelling of the code).
    public static let unsupportedFileFormatVersion = Code.unsupportedFileFormatVersion
    /// A file operation (copy, delete, compaction) failed (`Realm.Error.` spelling of the code).
    public static let fileOperationFailed = Code.fileOperationFailed
    /// The file is not a Strata database, or is damaged (`Realm.Error.` spelling of the code).
    public static let invalidDatabase = Code.invalidDatabase

    /// RealmSwift's `Realm.Error(.fail)` (the message and file from `userInfo`, under
    /// `NSLocalizedDescriptionKey` and `NSFilePathErrorKey`).
    public init(_ code: Code, userInfo: [String: Any] = [:]) {
        self.code = code
        message = userInfo[NSLocalizedDescriptionKey] as? String ?? ""
        fileURL = (userInfo[NSFilePathErrorKey] as? String).map { URL(fileURLWithPath: $0) }
    }

    /// RealmSwift's error for a call that failed.
    public static let callFailed = StrataError(.fail, userInfo: [NSLocalizedDescriptionKey: "Call failed"])

    /// A failure to open the Realm at `path`, with RealmSwift's code and wording where it has one
    /// (the core's message, naming the file and the reason, otherwise kept).
    static func opening(_ e: StrataError, path: String) -> StrataError {
        if e.code.rawValue >= Code.realmBase { return e.at(path) }
        let failed = "Failed to open Realm file at path '\(path)'"
        func ends(_ reason: String) -> Bool { e.message.hasSuffix(reason) }
        switch e.code {
        case .notFound where e.message.contains("does not exist"), .io where ends("No such file or directory"):
            return StrataError(code: .fileNotFound, message: "\(failed): No such file or directory").at(path)
        case .io where ends("Permission denied") || ends("Operation not permitted") || ends("Read-only file system"):
            let reason = e.message.split(separator: ":").last.map { $0.trimmingCharacters(in: .whitespaces) } ?? ""
            return StrataError(code: .filePermissionDenied, message: "\(failed): \(reason). Please use a path "
                               + "where your app has read-write permissions.").at(path)
        case .io where ends("Not a directory") || ends("Is a directory"):
            let lock = path + ".lock"
            let onLock = e.message.contains(lock)
            return StrataError(code: .fileOperationFailed, message: "Failed to open file at path '\(onLock ? lock : path)': "
                               + "parent path is not a directory").at(onLock ? lock : path)
        case let c where c == .io || (c == .notStrata && e.message.hasSuffix("is not a regular file")): // (a device, a directory)
            return StrataError(code: .fileAccess, message: "\(failed): \(e.message)").at(path)
        case .noSpace: return StrataError(code: .outOfDiskSpace, message: "\(failed): \(e.message)").at(path)
        case .notStrata where e.message.contains("is non-empty but too small ("):
            // RealmSwift's wording, with the size the core names
            let size = e.message.split(separator: "(").last?.split(separator: " ").first ?? "?"
            return StrataError(code: .invalidDatabase, message: "\(failed): file is non-empty but too small (\(size) bytes) "
                               + "to be a valid Realm.").at(path)
        case .notStrata, .corrupt, .encryption:
            return StrataError(code: .invalidDatabase, message: "\(failed): \(e.message)").at(path)
        case .formatVersion:
            return StrataError(code: .unsupportedFileFormatVersion, message: "\(failed): \(e.message)").at(path)
        default: return e
        }
    }

    private func at(_ path: String) -> StrataError {
        var e = self
        if e.fileURL == nil { e.fileURL = URL(fileURLWithPath: path) }
        return e
    }
}

/// `catch Realm.Error.fileNotFound { }`: an error whose code is this one.
public func ~= (code: StrataError.Code, error: Error) -> Bool {
    (error as? StrataError)?.code == code
}
