// Schema.swift — `strata schema FILE [--swift | --json]`: classes, properties, links, lists,
// backlinks; --swift prints the RealmSwift-style model classes that open the file.
import ArgumentParser
import CCore
@_spi(StrataCore) import Strata

struct Schema: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Show the classes and properties (type, optional, primary key, indexed, full-text), links, lists and backlinks.")

    @OptionGroup var file: FileArgument
    @OptionGroup var output: JSONFlag
    @Flag(name: .long, help: "Print Swift model classes (Object subclasses with @Persisted properties) for this file.")
    var swift = false

    func run() throws {
        let db = try file.open()
        let (classes, version) = try reading(db) { txn in (try readSchema(txn), try txn.schemaVersion()) }
        if output.json {
            print(JSON.object([("schemaVersion", .int(Int64(version))), ("classes", .array(classes.map(\.json)))]).text)
        } else if swift {
            print(SwiftModel.source(classes, schemaVersion: version), terminator: "")
        } else {
            print("schema version \(version), \(classes.count) classes")
            for c in classes {
                print("")
                print("class \(c.name)\(c.embedded ? " (embedded)" : "")")
                var rows = c.properties.map { p -> [String] in
                    [p.name, p.typeText, p.primaryKey ? "primary key" : p.indexed ? "indexed" : p.fullText ? "full-text" : ""]
                }
                for b in backlinks(to: c.name, in: classes) { rows.append([b, "backlinks", ""]) }
                print(TableOutput.render(headers: ["property", "type", ""], rows: rows), terminator: "")
            }
        }
    }

    /// "Person.dogs" for every link property of any class that targets `name`.
    func backlinks(to name: String, in classes: [ClassSchema]) -> [String] {
        classes.flatMap { c in c.properties.filter { $0.type == .link && $0.target == name }.map { "@links.\(c.name).\($0.name)" } }
    }
}
