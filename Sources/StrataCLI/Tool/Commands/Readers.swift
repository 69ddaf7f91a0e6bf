// Readers.swift — `strata readers FILE [--clear-stale]`: the lock file's reader slots (process,
// version held, for how long) and freeing the slots of processes that are gone.
import ArgumentParser
import CCore
import Foundation
@_spi(StrataCore) import Strata

struct Readers: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "List the reader slots (pid, version, age, alive) of every process; --clear-stale frees those of dead processes.")

    @OptionGroup var file: FileArgument
    @Flag(name: .customLong("clear-stale"), help: "Free the slots of processes that are gone.") var clearStale = false
    @OptionGroup var output: JSONFlag

    func run() throws {
        let db = try file.open()
        var cleared = 0
        if clearStale { try StrataError.check { strata_db_clear_stale_readers(db.handle, &cleared, $0) } }
        let slots = try readerSlots(db)
        let now = Int64(Date().timeIntervalSince1970 * 1000)
        func age(_ r: strata_reader) -> Int64? { r.since_ms > 0 ? max(0, now - r.since_ms) : nil }
        func version(_ r: strata_reader) -> JSON { r.version == UInt64.max ? .null : .int(Int64(r.version)) }
        if output.json {
            print(JSON.object([
                ("readers", .array(slots.map { r in
                    .object([("slot", .int(Int64(r.slot))), ("pid", .int(Int64(r.pid))), ("version", version(r)),
                             ("ageMs", age(r).map { .int($0) } ?? .null), ("alive", .bool(r.alive))])
                })),
                ("cleared", .int(Int64(cleared))),
            ]).text)
            return
        }
        if clearStale { print("cleared \(cleared) stale slot\(cleared == 1 ? "" : "s")") }
        if slots.isEmpty { print("no readers"); return }
        print(TableOutput.render(headers: ["slot", "pid", "version", "age", "state"], rows: slots.map { r in
            [String(r.slot), String(r.pid), r.version == UInt64.max ? "-" : String(r.version),
             age(r).map { String(format: "%.1f s", Double($0) / 1000) } ?? "?", r.alive ? "alive" : "stale (process gone)"]
        }), terminator: "")
    }
}
