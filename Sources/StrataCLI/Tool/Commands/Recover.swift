// Recover.swift — `strata recover FILE OUT`: every object still readable from a damaged file,
// copied into a new file, and a report of what was lost (objects that cannot be read, links to
// them, classes whose objects cannot be listed).
import ArgumentParser
import CCore
import Foundation
@_spi(StrataCore) import Strata

struct Recover: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Copy every object still readable from a damaged file into a new file and report what was lost.")

    @OptionGroup var file: FileArgument
    @Argument(help: "The new file.") var out: String
    @OptionGroup var output: JSONFlag

    func run() throws {
        if FileManager.default.fileExists(atPath: out) { throw ToolFailure("'\(out)' exists: recover writes a new file") }
        guard FileManager.default.fileExists(atPath: file.file) else { throw ToolFailure("no such file: '\(file.file)'") }
        let src: Database
        do {
            // Past a damaged commit log: open at the last version the file holds on its own.
            src = try Database(path: file.file, encryptionKey: file.key) { o in
                o.read_only = true
                o.create = false
                o.accept_rollback = true
            }
        } catch {
            throw ToolFailure("'\(file.file)' cannot be opened at all: \(describe(error))")
        }
        var lost: [String] = []
        var copied: [(String, Int)] = []
        let dst = try openDatabase(out, readOnly: false, create: true, key: file.key) /* as the source */
        do {
            try reading(src) { txn in
                let schema: [ClassSchema]
                do { schema = try readSchema(txn) } catch {
                    throw ToolFailure("the schema of '\(file.file)' cannot be read: \(describe(error))")
                }
                let files = FileClasses(txn: txn, schema: schema)
                let enc = ObjectEncoder(files)
                var objects: [(String, [JSON])] = []
                for c in schema where !c.embedded {
                    var items: [JSON] = []
                    var after: Int64 = -1
                    let t: CoreTable
                    do { t = try files.table(c.name) } catch {
                        lost.append("class \(c.name): cannot be opened (\(describe(error)))")
                        continue
                    }
                    while true {
                        var key: Int64 = 0
                        do {
                            guard try StrataError.found({ strata_obj_next(t.handle, after, &key, $0) }) else { break }
                        } catch {
                            lost.append("class \(c.name): objects after key \(after) cannot be listed (\(describe(error)))")
                            break
                        }
                        after = key
                        do { items.append(try enc.encode(c, key: key)) } catch {
                            lost.append("\(c.name) key \(key): unreadable (\(describe(error)))")
                        }
                    }
                    objects.append((c.name, items))
                    copied.append((c.name, items.count))
                }
                try writing(dst) { w in
                    let classes = FileClasses(txn: w, schema: try ensureSchema(schema, in: w))
                    try w.setSchemaVersion(try txn.schemaVersion())
                    let session = ImportSession(classes)
                    session.lenient = true
                    for (cls, items) in objects {
                        for (i, obj) in items.enumerated() { try session.add(cls, obj, at: "\(cls) #\(i)") }
                    }
                    try session.finish()
                    lost += session.losses
                }
            }
        } catch {
            removeDatabaseFiles(out)
            throw error
        }
        if output.json {
            print(JSON.object([("copied", .object(copied.map { ($0.0, .int(Int64($0.1))) })),
                               ("lost", .array(lost.map { .string($0) }))]).text)
        } else {
            print("recovered into '\(out)': " + copied.map { "\($0.1) \($0.0)" }.joined(separator: ", "))
            print(lost.isEmpty ? "nothing lost" : "lost:\n" + lost.map { "  " + $0 }.joined(separator: "\n"))
        }
    }
}
