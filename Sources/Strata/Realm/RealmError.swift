import Foundation

/// RealmSwift's error type is Strata's: `Realm.Error` is `StrataError`, with RealmSwift's codes
/// beside the core's. Opening a Realm throws with RealmSwift's codes (`.fileNotFound`,
/// `.filePermissionDenied`, `.invalidDatabase`, `.schemaMismatch`, …) and `fileURL`; other
/// failures keep the core's code. `catch Realm.Error.fileNotFound { }` works as in RealmSwift.
extension Realm {
    public typealias Error = StrataError
}

extension StrataError.Code {
    /// RealmSwift's codes are RLMError's values above this base (apart from the core's).
    static let realmBase: Int32 = 1000
    public static let fail = Self(rawValue: realmBase + 1)
    public static let fileAccess = Self(rawValue: realmBase + 2)
    public static let filePermissionDenied = Self(rawValue: realmBase + 3)
    public static let fileExists = Self(rawValue: realmBase + 4)
    public static let fileNotFound = Self(rawValue: realmBase + 5)
    public static let fileFormatUpgradeRequired = Self(rawValue: realmBase + 6)
    public static let incompatibleLockFile = Self(rawValue: realmBase + 8)
    public static let addressSpaceExhausted = Self(rawValue: realmBase + 9)
    public static let schemaMismatch = Self(rawValue: realmBase + 10)
    public static let alreadyOpen = Self(rawValue: realmBase + 12)
    public static let invalidInput = Self(rawValue: realmBase + 13)
    public static let outOfDiskSpace = Self(rawValue: realmBase + 14)
    public static let unsupportedFileFormatVersion = Self(rawValue: realmBase + 16)
    public static let fileOperationFailed = Self(rawValue: realmBase + 19)
    public static let invalidDatabase = Self(rawValue: realmBase + 20)
}

extension StrataError {
    public static let fail = Code.fail
    public static let fileAccess = Code.fileAccess
    public static let filePermissionDenied = Code.filePermissionDenied
    public static let fileExists = Code.fileExists
    public static let fileNotFound = Code.fileNotFound
    public static let fileFormatUpgradeRequired = Code.fileFormatUpgradeRequired
    public static let incompatibleLockFile = Code.incompatibleLockFile
    public static let addressSpaceExhausted = Code.addressSpaceExhausted
    public static let schemaMismatch = Code.schemaMismatch
    public static let alreadyOpen = Code.alreadyOpen
    public static let invalidInput = Code.invalidInput
    public static let outOfDiskSpace = Code.outOfDiskSpace
    public static let unsupportedFileFormatVersion = Code.unsupportedFileFormatVersion
    public static let fileOperationFailed = Code.fileOperationFailed
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
        case .notStrata, .corrupt:
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
