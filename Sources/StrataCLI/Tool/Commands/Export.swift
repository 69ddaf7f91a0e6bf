// Export.swift — `strata export FILE [--class C…] --format json|csv [-o OUT]`: the whole file
// (or some classes) as one JSON document with its schema, lossless for every type; or one
// class as CSV.
import ArgumentParser
import CCore
@_spi(StrataCore) import Strata

enum TransferFormat: String, ExpressibleByArgument, CaseIterable { case json, csv }

struct Export: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Export objects as JSON (schema and objects, lossless) or one class as CSV.")

    @OptionGroup var file: FileArgument
    @Option(name: .customLong("class"), help: "Export only this class (repeat for more). CSV takes exactly one.")
    var classes: [String] = []
    @Option(help: "json or csv.") var format: TransferFormat = .json
    @Option(name: [.short, .customLong("output")], help: "Write here instead of stdout (a new file, complete or absent).")
    var output: String?

    func run() throws {
        let db = try file.open()
        let sink = try Sink(path: output)
        do {
            try reading(db) { txn in
                let schema = try readSchema(txn)
                let files = FileClasses(txn: txn, schema: schema)
                for c in classes where files.schema[c] == nil { throw ToolFailure("no class '\(c)' in '\(file.file)'") }
                let chosen = schema.filter { classes.isEmpty ? !$0.embedded : classes.contains($0.name) }
                let total = try chosen.reduce(0) { $0 + (try files.table($1.name).count()) }
                let progress = Progress("exporting", total: total, enabled: !sink.writesToStdout)
                let enc = ObjectEncoder(files)
                switch format {
                case .csv:
                    guard chosen.count == 1 else { throw ToolFailure("CSV export takes exactly one class (--class NAME)") }
                    try CSVOutput.write(chosen[0], keys: try files.table(chosen[0].name).keys(), encoder: enc,
                                        to: sink, progress: progress)
                case .json:
                    try JSONDocument.write(schema: classes.isEmpty ? schema : schema.filter { classes.contains($0.name) || $0.embedded },
                                           objectsOf: chosen, schemaVersion: try txn.schemaVersion(),
                                           files: files, encoder: enc, to: sink, progress: progress)
                }
                try sink.finish()
                progress.done()
            }
        } catch {
            sink.abandon()
            throw error
        }
    }
}

/// The JSON document of `strata export`, written a line per object:
///   {"strata":1,"schemaVersion":N,
///   "schema":[{class}, …],
///   "objects":{
///   "Dog":[
///   {object},
///   …],
///   "Person":[]}}
enum JSONDocument {
    static let version: Int64 = 1

    static func write(schema: [ClassSchema], objectsOf chosen: [ClassSchema], schemaVersion: UInt64,
                      files: FileClasses, encoder: ObjectEncoder, to sink: Sink, progress: Progress) throws {
        try sink.line("{\"strata\":\(version),\"schemaVersion\":\(schemaVersion),")
        try sink.line("\"schema\":[")
        for (i, c) in schema.enumerated() { try sink.line(c.json.text + (i + 1 < schema.count ? "," : "")) }
        try sink.line("],")
        try sink.line("\"objects\":{")
        var done = 0
        for (ci, c) in chosen.enumerated() {
            var name = ""
            JSON.quote(c.name, into: &name)
            try sink.line(name + ":[")
            let keys = try files.table(c.name).keys()
            for (i, k) in keys.enumerated() {
                try sink.line(try encoder.encode(c, key: k).text + (i + 1 < keys.count ? "," : ""))
                done += 1
                if done % 4096 == 0 { progress.update(done) }
            }
            try sink.line("]" + (ci + 1 < chosen.count ? "," : ""))
        }
        try sink.line("}}")
    }

    /// The schema and the objects by class of a document (whole, in memory).
    static func read(_ doc: JSON, what: String) throws -> (schemaVersion: UInt64, schema: [ClassSchema], objects: [(String, [JSON])]) {
        guard case .int(let v)? = doc["strata"], v <= version else {
            throw ToolFailure("\(what): not a Strata export (no \"strata\": \(version) member), or of a newer tool")
        }
        guard case .array(let classes)? = doc["schema"] else { throw ToolFailure("\(what): no \"schema\" array") }
        let schema = try classes.map(ClassSchema.init(json:))
        var objects: [(String, [JSON])] = []
        if case .object(let byClass)? = doc["objects"] {
            for (name, list) in byClass {
                guard case .array(let items) = list else { throw ToolFailure("\(what): objects of \(name) must be an array") }
                objects.append((name, items))
            }
        }
        var sv: UInt64 = 0
        if case .int(let s)? = doc["schemaVersion"] { sv = UInt64(max(0, s)) }
        return (sv, schema, objects)
    }
}
