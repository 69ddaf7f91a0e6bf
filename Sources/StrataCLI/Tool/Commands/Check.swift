// Check.swift — `strata check FILE`: strata_db_verify (every page, checksum, tree and count of
// the latest version) and a readable report; exit status 0 only for a sound file.
import ArgumentParser
import CCore
@_spi(StrataCore) import Strata

struct Check: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Check the whole file (pages, checksums, trees, objects, indexes); exit status 0 only when it is sound.")

    @OptionGroup var file: FileArgument
    @OptionGroup var output: JSONFlag

    func run() throws {
        let progress = Progress("checking", total: 0)
        var problem: String?
        var summary: [(String, JSON)] = [("file", .string(file.file))]
        do {
            let db = try file.open()
            var info = strata_db_info()
            try StrataError.check { strata_db_info_get(db.handle, &info, $0) }
            summary += [("version", .int(Int64(info.version))), ("pages", .int(Int64(info.page_count))),
                        ("freePages", .int(Int64(info.free_pages)))]
            try StrataError.check { strata_db_verify(db.handle, $0) }
            let counts = try reading(db) { txn in
                try txn.tableNames().map { ($0, JSON.int(Int64(try txn.table($0)?.count() ?? 0))) }
            }
            summary.append(("objects", .object(counts)))
        } catch {
            problem = describe(error)
        }
        progress.done(problem == nil)
        summary.append(("sound", .bool(problem == nil)))
        if let problem { summary.append(("problem", .string(problem))) }
        if output.json {
            print(JSON.object(summary).text)
        } else if problem == nil {
            var lines = ["\(file.file): sound"]
            for (k, v) in summary.dropFirst() where k != "sound" {
                if case .object(let m) = v {
                    lines.append("objects: " + m.map { "\($0.0) \(ValueCoding.text($0.1))" }.joined(separator: ", "))
                } else {
                    lines.append("\(k): \(ValueCoding.text(v))")
                }
            }
            print(lines.joined(separator: "\n"))
        }
        if let problem { throw ToolFailure("\(file.file) is damaged: \(problem)") }
    }
}
