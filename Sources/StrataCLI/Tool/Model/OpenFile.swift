// OpenFile.swift — opening a file the user named: it must exist (the tool never creates one
// by accident), read-only unless the command writes.
import ArgumentParser
import CCore
import Foundation
@_spi(StrataCore) import Strata

func openDatabase(_ path: String, readOnly: Bool = true, create: Bool = false) throws -> Database {
    if !create && !FileManager.default.fileExists(atPath: path) {
        throw ToolFailure("no such file: '\(path)'")
    }
    var isDir: ObjCBool = false
    if FileManager.default.fileExists(atPath: path, isDirectory: &isDir), isDir.boolValue {
        throw ToolFailure("'\(path)' is a directory, not a database file")
    }
    do {
        return try Database(path: path) { opts in
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
}

struct JSONFlag: ParsableArguments {
    @Flag(name: .long, help: "Print JSON for scripts instead of text for people.")
    var json = false
}
