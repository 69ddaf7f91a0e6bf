import CCore
import Foundation

/// The one error type of Strata: the core's status code and its message, which names the
/// offending thing (file, page, tree, key).
///
/// ```swift
/// do { try db.write { txn in try txn.tree("t", keys: .int).put(1, Array("x".utf8)) } }
/// catch let error as StrataError where error.code == .busy { /* another writer */ }
/// ```
public struct StrataError: Error, CustomStringConvertible, Equatable, LocalizedError {
    /// A status of the core (`STRATA_ERR_*`), or a RealmSwift error code.
    public struct Code: RawRepresentable, Hashable, Sendable {
        public let rawValue: Int32
        public init(rawValue: Int32) { self.rawValue = rawValue }

        /// A NULL handle, a bad option, an empty name.
        public static let invalidArgument = Code(rawValue: Int32(STRATA_ERR_INVALID_ARGUMENT.rawValue))
        /// No such key, tree, table, property or file.
        public static let notFound = Code(rawValue: Int32(STRATA_ERR_NOT_FOUND.rawValue))
        /// The thing to create exists (a duplicate primary key, a table name, a copy's file).
        public static let exists = Code(rawValue: Int32(STRATA_ERR_EXISTS.rawValue))
        /// Out of memory.
        public static let noMemory = Code(rawValue: Int32(STRATA_ERR_NO_MEMORY.rawValue))
        /// Every reader slot of the lock file is held by a live read transaction.
        public static let readersFull = Code(rawValue: Int32(STRATA_ERR_READERS_FULL.rawValue))
        /// The file would outgrow the address space reserved for its map.
        public static let mapFull = Code(rawValue: Int32(STRATA_ERR_MAP_FULL.rawValue))
        /// A read, write, sync or lock failed.
        public static let io = Code(rawValue: Int32(STRATA_ERR_IO.rawValue))
        /// The disk is full.
        public static let noSpace = Code(rawValue: Int32(STRATA_ERR_NO_SPACE.rawValue))
        /// The file contradicts itself; the message names the page and what is wrong.
        public static let corrupt = Code(rawValue: Int32(STRATA_ERR_CORRUPT.rawValue))
        /// The file is not a Strata database.
        public static let notStrata = Code(rawValue: Int32(STRATA_ERR_NOT_STRATA.rawValue))
        /// An unknown file format, or a lock file of an incompatible library.
        public static let formatVersion = Code(rawValue: Int32(STRATA_ERR_FORMAT_VERSION.rawValue))
        /// Another writer holds the file, or an open waited past its timeout.
        public static let busy = Code(rawValue: Int32(STRATA_ERR_BUSY.rawValue))
        /// A write on a read-only database or transaction.
        public static let readOnly = Code(rawValue: Int32(STRATA_ERR_READ_ONLY.rawValue))
        /// The transaction has ended or failed.
        public static let transactionState = Code(rawValue: Int32(STRATA_ERR_TXN_STATE.rawValue))
        /// A commit would keep more versions alive than `maxVersions` allows.
        public static let tooManyVersions = Code(rawValue: Int32(STRATA_ERR_TOO_MANY_VERSIONS.rawValue))
        /// A value of the wrong type for the property or call.
        public static let wrongType = Code(rawValue: Int32(STRATA_ERR_WRONG_TYPE.rawValue))
        /// A key or value over the limits.
        public static let tooLarge = Code(rawValue: Int32(STRATA_ERR_TOO_LARGE.rawValue))
        /// No commit came in the time given.
        public static let timeout = Code(rawValue: Int32(STRATA_ERR_TIMEOUT.rawValue))
        /// The file is encrypted and no key was given, the key does not open it, or a key was
        /// given for a file that is not encrypted.
        public static let encryption = Code(rawValue: Int32(STRATA_ERR_ENCRYPTION.rawValue))
    }

    /// What failed.
    public let code: Code
    /// The core's message, naming the offending file, table, property, value or position.
    public let message: String
    /// The file the error is about, when it is one (opening a Realm).
    public var fileURL: URL? = nil

    /// The message (which names the offending thing), as `localizedDescription` gives it.
    public var errorDescription: String? { message.isEmpty ? description : message }
    public var _code: Int { Int(code.rawValue) }

    public var description: String {
        let name = code.rawValue < StrataError.Code.realmBase ? String(cString: strata_status_name(code.rawValue))
                                                              : "Realm.Error \(code.rawValue - StrataError.Code.realmBase)"
        return "\(name): \(message)"
    }

    /// Run a C call that takes a `strata_error *` last; throw when it fails.
    @_spi(StrataCore) public static func check(_ call: (UnsafeMutablePointer<strata_error>) -> Int32) throws {
        let (rc, text) = withErrorRecord(call, answer: 0)
        if rc != 0 { throw StrataError(code: Code(rawValue: rc), message: text) }
    }

    /// `call` given an error record, and its result with the record's message when it failed
    /// (other than with `answer`, a result that is an answer: not found). The record is not
    /// filled first (260 bytes: 1.4% of a Swift insert's profile): the core writes it when a
    /// call fails; its message starts empty in case a failure does not.
    @inline(__always)
    private static func withErrorRecord(_ call: (UnsafeMutablePointer<strata_error>) -> Int32,
                                        answer: Int32) -> (Int32, String) {
        withUnsafeTemporaryAllocation(of: strata_error.self, capacity: 1) { buf in
            let err = buf.baseAddress!
            err.pointee.message.0 = 0
            let rc = call(err)
            return (rc, rc == 0 || rc == answer ? "" : message(of: &err.pointee))
        }
    }

    /// Like `check`, for a read that can be made again: first without an error record (filling
    /// its 260 bytes costs more than a small read), and again with one only when it failed.
    @inline(__always)
    @_spi(StrataCore) public static func checkRead(_ call: (UnsafeMutablePointer<strata_error>?) -> Int32) throws {
        if call(nil) == 0 { return }
        try check { call($0) }
    }

    /// Like `found`, for a lookup that can be made again: first without an error record (not
    /// found is an answer: no message is made for it), again with one only when it failed.
    @inline(__always)
    @_spi(StrataCore) public static func foundRead(_ call: (UnsafeMutablePointer<strata_error>?) -> Int32) throws -> Bool {
        switch call(nil) {
        case 0: return true
        case Int32(STRATA_ERR_NOT_FOUND.rawValue): return false
        default: return try found { call($0) }
        }
    }

    /// Like `check`, but STRATA_ERR_NOT_FOUND gives false instead of throwing.
    @_spi(StrataCore) public static func found(_ call: (UnsafeMutablePointer<strata_error>) -> Int32) throws -> Bool {
        let notFound = Int32(STRATA_ERR_NOT_FOUND.rawValue)
        let (rc, text) = withErrorRecord(call, answer: notFound)
        if rc == notFound { return false }
        if rc != 0 { throw StrataError(code: Code(rawValue: rc), message: text) }
        return true
    }

    private static func message(of err: inout strata_error) -> String {
        withUnsafeBytes(of: &err.message) { raw in
            String(decoding: raw.prefix(while: { $0 != 0 }), as: UTF8.self)
        }
    }
}
