// OpenFile.swift — opening a file the user named: it must exist (the tool never creates one
// by accident), read-only unless the command writes; an encrypted file with the key from
// --key-file or the STRATA_KEY environment variable.
import ArgumentParser
import CCore
import Foundation
@_spi(StrataCore) import Strata

func openDatabase(_ path: String, readOnly: Bool = true, create: Bool = false,
                  key: [UInt8]? = nil) throws -> Database {
    if !create && !FileManager.default.fileExists(atPath: path) {
        throw ToolFailure("no such file: '\(path)'")
    }
    var isDir: ObjCBool = false
    if FileManager.default.fileExists(atPath: path, isDirectory: &isDir), isDir.boolValue {
        throw ToolFailure("'\(path)' is a directory, not a database file")
    }
    do {
        return try Database(path: path, encryptionKey: key) { opts in
            opts.read_only = readOnly
            opts.create = create
            opts.open_timeout_ms = 5000
        }
    } catch {
        throw ToolFailure(describe(error))
    }
}

/// Run `body` in a read transaction of the latest version.
func reading<T>(_ db: Database, _ body: (CoreTxn) throws -> T) throws -> T {
    let txn = try CoreTxn(db: db, write: false)
    defer { txn.free() }
    return try body(txn)
}

/// Run `body` in a write transaction and commit it; nothing of it stays when it throws.
func writing<T>(_ db: Database, _ body: (CoreTxn) throws -> T) throws -> T {
    let txn = try CoreTxn(db: db, write: true)
    defer { txn.free() }
    let result = try body(txn)
    try txn.commit()
    return result
}

/// Options every command shares.
struct FileArgument: ParsableArguments {
    @Argument(help: "The database file.")
    var file: String

    @Option(name: .customLong("key-file"),
            help: "An encrypted file's key: a file of 64 bytes or 128 hex digits (else $STRATA_KEY, 128 hex digits).")
    var keyFile: String?

    /// The key given (nil: none).
    var key: [UInt8]? {
        get throws {
            if let keyFile { return try readKey(file: keyFile) }
            if let hex = ProcessInfo.processInfo.environment["STRATA_KEY"], !hex.isEmpty {
                return try parseKey(Array(hex.utf8), from: "$STRATA_KEY")
            }
            return nil
        }
    }

    func open(readOnly: Bool = true, create: Bool = false) throws -> Database {
        try openDatabase(file, readOnly: readOnly, create: create, key: key)
    }
}

/// A key file: 64 bytes, or 128 hex digits (white space around them ignored).
func readKey(file path: String) throws -> [UInt8] {
    guard let data = FileManager.default.contents(atPath: path) else {
        throw ToolFailure("cannot read the key file '\(path)'")
    }
    return try parseKey([UInt8](data), from: "the key file '\(path)'")
}

func parseKey(_ bytes: [UInt8], from source: String) throws -> [UInt8] {
    if bytes.count == 64 { return bytes }
    let text = String(decoding: bytes, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
    let digits = Array(text.utf8)
    func nibble(_ c: UInt8) -> UInt8? {
        switch c {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): return c - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): return c - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): return c - UInt8(ascii: "A") + 10
        default: return nil
        }
    }
    guard digits.count == 128 else {
        throw ToolFailure("\(source) holds \(bytes.count) bytes: a key is 64 bytes or 128 hex digits")
    }
    var key: [UInt8] = []
    for i in stride(from: 0, to: 128, by: 2) {
        guard let hi = nibble(digits[i]), let lo = nibble(digits[i + 1]) else {
            throw ToolFailure("\(source): '\(Character(UnicodeScalar(digits[nibble(digits[i]) == nil ? i : i + 1])))' "
                              + "at \(nibble(digits[i]) == nil ? i + 1 : i + 2) is not a hex digit")
        }
        key.append(hi << 4 | lo)
    }
    return key
}

struct JSONFlag: ParsableArguments {
    @Flag(name: .long, help: "Print JSON for scripts instead of text for people.")
    var json = false
}
