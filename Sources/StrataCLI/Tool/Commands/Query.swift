// Query.swift — `strata query FILE CLASS ['PREDICATE'] [ARGS…]`: the objects that match, as a
// table, JSON or CSV. ARGS fill $0…$n: JSON values (5, 2.5, true, null, "text") or plain text.
import ArgumentParser
import CCore
import Foundation
@_spi(StrataCore) import Strata

enum OutputFormat: String, ExpressibleByArgument, CaseIterable { case table, json, csv }

struct Query: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Run a predicate (Realm's query language) on a class and print the matching objects.",
        discussion: """
            Example: strata query app.strata Person 'age > $0 AND name BEGINSWITH[c] $1' 30 an --sort -age
            Links show as the target's primary key (or its position among its class's objects).
            """)

    @OptionGroup var file: FileArgument
    @Argument(help: "The class to query.") var className: String
    @Argument(help: "The predicate; all objects when left out.") var predicate: String = "TRUEPREDICATE"
    @Argument(help: "Values for $0, $1, …: JSON (5, 2.5, true, null, \"text\") or plain text.") var args: [String] = []
    @Option(help: "Sort by a property: 'age', 'age DESC' or --sort=-age for descending. Repeat for more keys.")
    var sort: [String] = []
    @Option(help: "At most this many objects.") var limit: Int?
    @Option(help: "table, json or csv (default: table on a terminal, else json).") var format: OutputFormat?
    @Flag(name: .long, help: "Same as --format json.") var json = false
    @Flag(name: .long, help: "Print only how many objects match.") var count = false

    func run() throws {
        let db = try file.open()
        try reading(db) { txn in
            let classes = FileClasses(txn: txn, schema: try readSchema(txn))
            let cls = try classes.cls(className)
            var text = predicate.isEmpty ? "TRUEPREDICATE" : predicate
            if !sort.isEmpty {
                text += " SORT(" + sort.map(sortKey).joined(separator: ", ") + ")"
            }
            if let limit { text += " LIMIT(\(limit))" }
            let keys = try runQuery(txn, cls.name, text, args.map(argumentJSON))
            if count {
                print(json ? JSON.object([("count", .int(Int64(keys.count)))]).text : "\(keys.count)")
                return
            }
            let enc = ObjectEncoder(classes)
            let fmt = json ? .json : format ?? (isatty(1) != 0 ? .table : .json)
            let sink = try Sink(path: nil)
            switch fmt {
            case .json:
                try sink.write("[")
                for (i, k) in keys.enumerated() {
                    try sink.write((i > 0 ? ",\n" : "\n") + (try enc.encode(cls, key: k)).text)
                }
                try sink.line(keys.isEmpty ? "]" : "\n]")
            case .csv:
                try CSVOutput.write(cls, keys: keys, encoder: enc, to: sink)
            case .table:
                let rows = try keys.map { k -> [String] in
                    guard case .object(let m) = try enc.encode(cls, key: k) else { return [] }
                    return m.map { TableOutput.cell(ValueCoding.text($0.1)) }
                }
                try sink.write(TableOutput.render(headers: cls.properties.map(\.name), rows: rows))
                try sink.line("(\(keys.count) object\(keys.count == 1 ? "" : "s"))")
            }
            try sink.finish()
        }
    }
}

/// "age", "-age", "age desc" → the SORT clause's "age ASC" / "age DESC".
func sortKey(_ s: String) -> String {
    let words = s.split(separator: " ")
    if words.count == 2, ["ASC", "DESC"].contains(words[1].uppercased()) { return "\(words[0]) \(words[1].uppercased())" }
    return s.hasPrefix("-") ? "\(s.dropFirst()) DESC" : "\(s) ASC"
}

/// A query argument from the command line: a JSON value, else the text as a string.
func argumentJSON(_ s: String) -> JSON {
    (try? JSON.parse(Data(s.utf8), what: "argument")) ?? .string(s)
}

/// The keys of the objects of `cls` matching `predicate` with `args` ($0…), in its order.
func runQuery(_ txn: CoreTxn, _ cls: String, _ predicate: String, _ args: [JSON]) throws -> [Int64] {
    var q: OpaquePointer?
    do {
        try StrataError.check { strata_query_compile(txn.handle, cls, predicate, &q, $0) }
    } catch {
        throw ToolFailure("the predicate does not compile: \(describe(error))")
    }
    defer { strata_query_free(q) }
    let need = strata_query_arg_count(q)
    guard args.count >= need else {
        throw ToolFailure("the predicate takes \(need) argument\(need == 1 ? "" : "s") ($0…$\(need - 1)), \(args.count) given")
    }
    let values: [StoredValue] = try args.prefix(need).map { j in
        try ValueCoding.mixedValue(j, links: NoLinks(), at: "argument")
    }
    var results: OpaquePointer?
    try withCValues(values) { ptr in
        try StrataError.check { strata_query_run(q, txn.handle, ptr, values.count, &results, $0) }
    }
    defer { strata_results_free(results) }
    return (0..<strata_results_size(results)).map { strata_results_key(results, $0) }
}

/// Hand several values to a C call at once (their bytes live during `body`).
func withCValues<R>(_ values: [StoredValue], _ body: (UnsafePointer<strata_value>?) throws -> R) throws -> R {
    var out = [strata_value](repeating: strata_value(), count: values.count)
    func go(_ i: Int) throws -> R {
        if i == values.count { return try out.withUnsafeBufferPointer { try body($0.baseAddress) } }
        return try values[i].withCValue { v in
            out[i] = v.pointee
            return try go(i + 1)
        }
    }
    return try go(0)
}

/// Query arguments name no objects.
struct NoLinks: LinkCoding {
    func reference(to key: Int64, in cls: String) throws -> JSON { .int(key) }
    func key(for ref: JSON, in cls: String) throws -> Int64 { throw ToolFailure("an argument cannot name an object") }
    func className(ofTable id: UInt32) throws -> String { throw ToolFailure("an argument cannot name an object") }
    func tableId(of cls: String) throws -> UInt32 { throw ToolFailure("an argument cannot name an object") }
}
