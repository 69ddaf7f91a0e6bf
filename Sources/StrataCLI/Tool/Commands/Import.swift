// Import.swift — `strata import FILE IN.json` and `strata import FILE --class C IN.csv`: in one
// write, all or nothing. A missing FILE is created (and removed again if the import fails).
import ArgumentParser
import CCore
import Foundation
@_spi(StrataCore) import Strata
import SwiftCSV

struct Import: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Import a JSON export (creating the file and its classes when missing) or a CSV file into one class.")

    @OptionGroup var file: FileArgument
    @Argument(help: "The JSON or CSV file to read.") var input: String
    @Option(name: .customLong("class"), help: "The class a CSV file's rows become.") var className: String?
    @Option(help: "json or csv (default: by the input's extension).") var format: TransferFormat?
    @OptionGroup var output: JSONFlag

    func run() throws {
        let fmt = format ?? (input.lowercased().hasSuffix(".csv") ? .csv : .json)
        guard let data = FileManager.default.contents(atPath: input) else { throw ToolFailure("cannot read '\(input)'") }
        let created = !FileManager.default.fileExists(atPath: file.file)
        if created && fmt == .csv { throw ToolFailure("no such file: '\(file.file)' (a CSV file has no schema: import JSON first, or make the class)") }
        do {
            let db = try file.open(readOnly: false, create: created)
            let n = try writing(db) { txn -> Int in
                fmt == .json ? try importJSON(data, txn, created: created) : try importCSV(data, txn)
            }
            print(output.json ? JSON.object([("imported", .int(Int64(n)))]).text : "imported \(n) objects into '\(file.file)'")
        } catch {
            if created { removeDatabaseFiles(file.file) }
            throw error
        }
    }

    private func importJSON(_ data: Data, _ txn: CoreTxn, created: Bool) throws -> Int {
        let doc = try JSON.parse(data, what: input)
        let (version, schema, objects) = try JSONDocument.read(doc, what: input)
        let classes = FileClasses(txn: txn, schema: try ensureSchema(schema, in: txn))
        if created { try txn.setSchemaVersion(version) }
        let total = objects.reduce(0) { $0 + $1.1.count }
        let progress = Progress("importing", total: total)
        let session = ImportSession(classes)
        for (cls, items) in objects {
            for (i, obj) in items.enumerated() {
                try session.add(cls, obj, at: "\(input): \(cls) #\(i)")
                if session.count % 4096 == 0 { progress.update(session.count) }
            }
        }
        progress.phase("linking", total: session.pending)
        try session.finish { done, _ in progress.update(done) }
        progress.done()
        return session.count
    }

    private func importCSV(_ data: Data, _ txn: CoreTxn) throws -> Int {
        guard let className else { throw ToolFailure("a CSV import needs --class NAME") }
        guard let text = String(data: data, encoding: .utf8) else { throw ToolFailure("'\(input)' is not UTF-8 text") }
        let csv: EnumeratedCSV
        do {
            csv = try EnumeratedCSV(string: text, loadColumns: false)
        } catch {
            throw ToolFailure("'\(input)' is not valid CSV: \(error)")
        }
        let classes = FileClasses(txn: txn, schema: try readSchema(txn))
        let cls = try classes.cls(className)
        let props = try csv.header.enumerated().map { (i, name) -> PropertySchema in
            guard let p = cls.property(name) else {
                throw ToolFailure("\(input) line 1, column \(i + 1): class \(className) has no property '\(name)'")
            }
            return p
        }
        let progress = Progress("importing", total: csv.rows.count)
        let session = ImportSession(classes, positionsInFile: true)
        for (r, row) in csv.rows.enumerated() {
            let line = r + 2
            guard row.count == props.count else {
                throw ToolFailure("\(input) line \(line): \(row.count) fields where the header has \(props.count)")
            }
            var members: [(String, JSON)] = []
            for (c, p) in props.enumerated() {
                members.append((p.name, try ValueCoding.json(cell: row[c], p, at: "\(input) line \(line), column \(c + 1) (\(p.name))")))
            }
            try session.add(className, .object(members), at: "\(input) line \(line)")
            if r % 4096 == 0 { progress.update(r) }
        }
        progress.phase("linking", total: session.pending)
        try session.finish { done, _ in progress.update(done) }
        progress.done()
        return session.count
    }
}

/// Remove a database file and its lock file and commit log (a file this command created).
func removeDatabaseFiles(_ path: String) {
    for suffix in ["", ".lock", ".log"] { try? FileManager.default.removeItem(atPath: path + suffix) }
}
