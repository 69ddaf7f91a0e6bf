// Dump.swift — `strata dump FILE` and `strata load FILE < DUMP`: a versioned, lossless text dump
// (JSON lines) that `load` turns back into an equal file. The lines:
//   {"strata-dump":1,"schemaVersion":N}         first: the dump's version
//   {"class":{…}}                               each class (as in an export's schema)
//   {"object":"Dog","values":{…}}               each object (values as in an export)
//   {"end":{"objects":N}}                       last: a dump cut short is refused by load
import ArgumentParser
import CCore
import Foundation
@_spi(StrataCore) import Strata

enum DumpFormat { static let version: Int64 = 1 }

struct Dump: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Write a lossless text dump of the file (schema and objects, JSON lines) to stdout.")

    @OptionGroup var file: FileArgument
    @Option(name: [.short, .customLong("output")], help: "Write here instead of stdout.") var output: String?

    func run() throws {
        let db = try file.open()
        let sink = try Sink(path: output)
        do {
            try reading(db) { txn in
                let schema = try readSchema(txn)
                let files = FileClasses(txn: txn, schema: schema)
                let enc = ObjectEncoder(files)
                try sink.line(JSON.object([("strata-dump", .int(DumpFormat.version)),
                                           ("schemaVersion", .int(Int64(try txn.schemaVersion())))]).text)
                for c in schema { try sink.line(JSON.object([("class", c.json)]).text) }
                let top = schema.filter { !$0.embedded }
                let total = try top.reduce(0) { $0 + (try files.table($1.name).count()) }
                let progress = Progress("dumping", total: total, enabled: !sink.writesToStdout)
                var n = 0
                for c in top {
                    var prefix = "{\"object\":"
                    JSON.quote(c.name, into: &prefix)
                    prefix += ",\"values\":"
                    for k in try files.table(c.name).keys() {
                        try sink.line(prefix + (try enc.encode(c, key: k)).text + "}")
                        n += 1
                        if n % 4096 == 0 { progress.update(n) }
                    }
                }
                try sink.line(JSON.object([("end", .object([("objects", .int(Int64(n)))]))]).text)
                try sink.finish()
                progress.done()
            }
        } catch {
            sink.abandon()
            throw error
        }
    }
}

struct Load: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Make a new database file from a dump read on stdin (strata load FILE < DUMP).")

    @OptionGroup var file: FileArgument
    @Option(name: [.short, .customLong("input")], help: "Read the dump from this file instead of stdin.") var input: String?
    @OptionGroup var output: JSONFlag

    func run() throws {
        if FileManager.default.fileExists(atPath: file.file) {
            throw ToolFailure("'\(file.file)' exists: load makes a new file (remove it first, or import into it)")
        }
        guard let handle = input.map({ FileHandle(forReadingAtPath: $0) }) ?? FileHandle.standardInput else {
            throw ToolFailure("cannot read '\(input ?? "stdin")'")
        }
        do {
            let db = try file.open(readOnly: false, create: true)
            let n = try writing(db) { txn in try load(LineReader(handle), txn) }
            print(output.json ? JSON.object([("loaded", .int(Int64(n)))]).text : "loaded \(n) objects into '\(file.file)'")
        } catch {
            removeDatabaseFiles(file.file)
            throw error
        }
    }

    private func load(_ lines: LineReader, _ txn: CoreTxn) throws -> Int {
        let what = input ?? "stdin"
        guard let first = try lines.next() else { throw ToolFailure("\(what): empty input, not a dump") }
        let head = try JSON.parse(first, what: "\(what) line 1")
        guard case .int(let v)? = head["strata-dump"], v <= DumpFormat.version else {
            throw ToolFailure("\(what) line 1: not a Strata dump (no \"strata-dump\": \(DumpFormat.version)), or of a newer tool")
        }
        if case .int(let sv)? = head["schemaVersion"] { try txn.setSchemaVersion(UInt64(max(0, sv))) }
        var schema: [ClassSchema] = []
        var session: ImportSession?
        var lineNo = 1
        var ended = false
        let progress = Progress("loading", total: 0)
        while let line = try lines.next() {
            lineNo += 1
            if line.isEmpty { continue }
            guard !ended else { throw ToolFailure("\(what) line \(lineNo): text after the dump's end line") }
            let j = try JSON.parse(line, what: "\(what) line \(lineNo)")
            if let c = j["class"] {
                guard session == nil else { throw ToolFailure("\(what) line \(lineNo): a class after the first object") }
                schema.append(try ClassSchema(json: c))
            } else if case .string(let cls)? = j["object"], let values = j["values"] {
                if session == nil { session = ImportSession(FileClasses(txn: txn, schema: try ensureSchema(schema, in: txn))) }
                try session!.add(cls, values, at: "\(what) line \(lineNo)")
                if session!.count % 4096 == 0 { progress.update(session!.count) }
            } else if case .int(let n)? = j["end"]?["objects"] {
                if session == nil { session = ImportSession(FileClasses(txn: txn, schema: try ensureSchema(schema, in: txn))) }
                guard n == session!.count else {
                    throw ToolFailure("\(what) line \(lineNo): the dump says \(n) objects, \(session!.count) were read")
                }
                ended = true
            } else {
                throw ToolFailure("\(what) line \(lineNo): neither a class, an object nor the end: \(line.prefix(80))")
            }
        }
        guard ended, let session else { throw ToolFailure("\(what): the dump is cut short (no end line after line \(lineNo))") }
        progress.phase("linking", total: session.pending)
        try session.finish { done, _ in progress.update(done) }
        progress.done()
        return session.count
    }
}

/// Lines of a file or stdin, read in blocks.
final class LineReader {
    private let handle: FileHandle
    private var buffer = Data()
    private var eof = false

    init(_ handle: FileHandle) { self.handle = handle }

    func next() throws -> Data? {
        while true {
            if let nl = buffer.firstIndex(of: 10) {
                let line = buffer[buffer.startIndex..<nl]
                buffer = buffer[(nl + 1)...]
                return Data(line)
            }
            if eof {
                if buffer.isEmpty { return nil }
                defer { buffer = Data() }
                return Data(buffer)
            }
            let chunk = try handle.read(upToCount: 1 << 20) ?? Data()
            if chunk.isEmpty { eof = true } else { buffer = Data(buffer) + chunk }
        }
    }
}
