// Compact.swift — `strata compact FILE [OUT]` (in place, refused while the file is in use; or a
// compacting copy) and `strata copy FILE OUT` (a compacted copy while others read and write).
import ArgumentParser
import CCore
import Foundation
@_spi(StrataCore) import Strata

struct PackOptions: ParsableArguments {
    @Flag(name: .customLong("no-pack"), help: "Store every page plain (no LZ4-packed pages).") var noPack = false
    @Option(help: "LZ4 level of packed pages: 0 fast, 1…12 LZ4HC (smaller, slower to write).") var level: Int32 = 1

    var options: strata_copy_options {
        var o = strata_copy_options()
        strata_copy_options_init_sized(&o, MemoryLayout<strata_copy_options>.size)
        o.pack = !noPack
        o.pack_level = level
        return o
    }
}

struct Compact: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Rewrite the file without free space (refused while another process has it open), or write a compacted copy to OUT.")

    @OptionGroup var file: FileArgument
    @Argument(help: "Write a compacted copy here instead of compacting in place.") var out: String?
    @OptionGroup var pack: PackOptions
    @OptionGroup var output: JSONFlag

    func run() throws {
        if let out { return try copyFile(file, to: out, pack: pack, json: output.json) }
        let before = fileSize(file.file)
        let db = try file.open(readOnly: false)
        let progress = Progress("compacting", total: 0)
        var opts = pack.options
        do {
            try StrataError.check { strata_db_compact(db.handle, &opts, $0) }
        } catch {
            progress.done(false)
            throw ToolFailure(describe(error))
        }
        progress.done()
        report(file.file, before: before, after: fileSize(file.file), json: output.json)
    }
}

struct Copy: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Write a compacted copy of the latest version to a new file while others go on reading and writing.")

    @OptionGroup var file: FileArgument
    @Argument(help: "The new file.") var out: String
    @OptionGroup var pack: PackOptions
    @OptionGroup var output: JSONFlag

    func run() throws { try copyFile(file, to: out, pack: pack, json: output.json) }
}

private func copyFile(_ file: FileArgument, to out: String, pack: PackOptions, json: Bool) throws {
    let path = file.file
    let db = try file.open()
    let progress = Progress("copying", total: 0)
    var opts = pack.options
    do {
        try StrataError.check { strata_db_write_copy(db.handle, out, &opts, $0) }
    } catch {
        progress.done(false)
        throw ToolFailure(describe(error))
    }
    progress.done()
    report(out, before: fileSize(path), after: fileSize(out), json: json)
}

private func report(_ path: String, before: UInt64, after: UInt64, json: Bool) {
    if json {
        print(JSON.object([("file", .string(path)), ("bytesBefore", .int(Int64(before))), ("bytesAfter", .int(Int64(after)))]).text)
    } else {
        print("\(path): \(bytes(after)) (was \(bytes(before)))")
    }
}

func fileSize(_ path: String) -> UInt64 {
    ((try? FileManager.default.attributesOfItem(atPath: path))?[.size] as? NSNumber)?.uint64Value ?? 0
}
