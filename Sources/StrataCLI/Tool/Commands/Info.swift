// Info.swift — `strata info FILE`: versions, space, readers, what the open recovered.
import ArgumentParser
import CCore
import Foundation
@_spi(StrataCore) import Strata

struct Info: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Show the file's format, versions, space (file, used, free, packed bytes), readers and lock state.")

    @OptionGroup var file: FileArgument
    @OptionGroup var output: JSONFlag

    func run() throws {
        let db = try file.open()
        var info = strata_db_info()
        try StrataError.check { strata_db_info_get(db.handle, &info, $0) }
        var space = strata_space()
        space.size = MemoryLayout<strata_space>.size
        try StrataError.check { strata_db_space_get(db.handle, &space, $0) }
        var rec = strata_recovery()
        try StrataError.check { strata_db_recovery(db.handle, &rec, $0) }
        let versions = try liveVersions(db)
        let readers = try readerSlots(db)
        let (schemaVersion, classes, objects) = try reading(db) { txn -> (UInt64, Int, Int) in
            let names = try txn.tableNames()
            var n = 0
            for name in names { n += try txn.table(name)?.count() ?? 0 }
            return (try txn.schemaVersion(), names.count, n)
        }
        let writer = try writerState(file)
        let encrypted = try file.key != nil // (an encrypted file opens only with its key)
        let why = withUnsafeBytes(of: rec.why) { String(decoding: $0.prefix(while: { $0 != 0 }), as: UTF8.self) }
        let pairs: [(String, JSON)] = [
            ("file", .string(file.file)),
            ("library", .string(String(cString: strata_version()))),
            ("formatVersion", .int(Int64(strata_format_version()))),
            ("encrypted", .bool(encrypted)),
            ("version", .int(Int64(info.version))),
            ("schemaVersion", .int(Int64(schemaVersion))),
            ("classes", .int(Int64(classes))),
            ("objects", .int(Int64(objects))),
            ("pageSize", .int(Int64(info.page_size))),
            ("fileBytes", .int(Int64(space.file_bytes))),
            ("usedBytes", .int(Int64(space.used_bytes))),
            ("freeBytes", .int(Int64(space.free_bytes))),
            ("packedBytes", .int(Int64(space.packed_bytes))),
            ("liveReaders", .int(Int64(readers.filter(\.alive).count))),
            ("staleReaders", .int(Int64(readers.filter { !$0.alive }.count))),
            ("liveVersions", .array(versions.map { .int(Int64($0)) })),
            ("oldestVersion", .int(Int64(info.oldest_version))),
            ("writer", .string(writer)),
            ("recovery", .object([
                ("recovered", .bool(rec.recovered)),
                ("durableVersion", .int(Int64(rec.durable_version))),
                ("replayed", .int(Int64(rec.replayed))),
                ("dropped", .int(Int64(rec.dropped))),
                ("why", .string(why)),
            ])),
        ]
        if output.json {
            print(JSON.object(pairs).text)
            return
        }
        let recovery = !rec.recovered ? "none needed (another handle had the file open)"
            : rec.replayed > 0 ? "replayed \(rec.replayed) commits from the commit log"
            : rec.dropped > 0 ? "dropped \(rec.dropped) commits: \(why)"
            : "clean: the last commit is durable in the file"
        print(TableOutput.pairs([
            ("file", file.file),
            ("format", "\(strata_format_version()) (library \(String(cString: strata_version())))"),
            ("encrypted", encrypted ? "yes: ChaCha20-Poly1305 (the key given opens it)" : "no"),
            ("version", "\(info.version) (schema version \(schemaVersion))"),
            ("objects", "\(objects) in \(classes) classes"),
            ("file size", bytes(space.file_bytes)),
            ("used", bytes(space.used_bytes) + (space.packed_bytes > 0 ? " (packed \(bytes(space.packed_bytes)))" : "")),
            ("free", bytes(space.free_bytes)),
            ("page size", "\(info.page_size)"),
            ("readers", "\(readers.filter(\.alive).count) live, \(readers.filter { !$0.alive }.count) stale"
                + (versions.isEmpty ? "" : "; versions held: \(versions.map(String.init).joined(separator: ", "))")),
            ("writer", writer),
            ("recovery", recovery),
        ]))
    }
}

func bytes(_ n: UInt64) -> String {
    let units = ["B", "KiB", "MiB", "GiB", "TiB"]
    var x = Double(n)
    var u = 0
    while x >= 1024 && u < units.count - 1 { x /= 1024; u += 1 }
    return u == 0 ? "\(n) B" : String(format: "%.1f %@ (%llu bytes)", x, units[u], n)
}

func liveVersions(_ db: Database) throws -> [UInt64] {
    var n = 0
    try StrataError.check { strata_db_live_versions(db.handle, nil, 0, &n, $0) }
    var v = [UInt64](repeating: 0, count: n)
    var got = 0
    try v.withUnsafeMutableBufferPointer { b in try StrataError.check { strata_db_live_versions(db.handle, b.baseAddress, n, &got, $0) } }
    return Array(v.prefix(min(n, got)))
}

func readerSlots(_ db: Database) throws -> [strata_reader] {
    var n = 0
    try StrataError.check { strata_db_readers(db.handle, nil, 0, &n, $0) }
    var v = [strata_reader](repeating: strata_reader(), count: n + 8)
    var got = 0
    try v.withUnsafeMutableBufferPointer { b in try StrataError.check { strata_db_readers(db.handle, b.baseAddress, b.count, &got, $0) } }
    return Array(v.prefix(min(got, v.count)))
}

/// Whether a writer holds the file now: a try-lock write transaction on a second handle.
func writerState(_ file: FileArgument) throws -> String {
    guard let db = try? file.open(readOnly: false) else { return "unknown (the file cannot be opened for writing)" }
    do {
        let txn = try CoreTxn(db: db, write: true, wait: false)
        txn.free()
        return "idle"
    } catch let e as StrataError where e.code == .busy {
        return "busy (a write transaction is in progress)"
    }
}
