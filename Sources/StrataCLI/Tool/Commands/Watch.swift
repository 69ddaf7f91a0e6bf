// Watch.swift — `strata watch FILE [CLASS]`: each commit's change set (objects inserted,
// deleted and modified, with the properties changed), from any process, as it happens. The
// wait is the core's commit futex (no polling); the change set is the copy-on-write diff of
// two versions (strata_changes_get), so its cost follows the change.
import ArgumentParser
import CCore
import Foundation
@_spi(StrataCore) import Strata

struct Watch: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Print each commit's changes (inserted, deleted, modified objects and properties) until interrupted.")

    @OptionGroup var file: FileArgument
    @Argument(help: "Only this class.") var className: String?
    @Option(help: "Stop after this many commits.") var commits: Int?
    @Option(help: "Stop after this many seconds without a commit.") var timeout: Double?
    @OptionGroup var output: JSONFlag

    func run() throws {
        let db = try file.open()
        var old = try CoreTxn(db: db, write: false)
        if let className, try old.table(className) == nil { throw ToolFailure("no class '\(className)' in '\(file.file)'") }
        if output.json {
            print(JSON.object([("watching", .string(file.file)), ("version", .int(Int64(old.version)))]).text)
        } else {
            print("watching '\(file.file)' from version \(old.version) (Ctrl-C stops)")
        }
        fflush(nil)
        var seen = 0
        var idleSince = Date()
        while commits.map({ seen < $0 }) ?? true {
            var v: UInt64 = 0
            do {
                try StrataError.check { strata_db_wait_commit(db.handle, old.version, 500, &v, $0) }
            } catch let e as StrataError where e.code == .timeout {
                if let timeout, Date().timeIntervalSince(idleSince) >= timeout { break }
                continue
            }
            let new = try CoreTxn(db: db, write: false)
            try report(old, new)
            fflush(nil)  // each commit's lines reach a pipe as they happen
            old.free()
            old = new
            seen += 1
            idleSince = Date()
        }
        old.free()
    }

    private func report(_ old: CoreTxn, _ new: CoreTxn) throws {
        let schema = try readSchema(new)
        let newClasses = FileClasses(txn: new, schema: schema)
        let oldClasses = FileClasses(txn: old, schema: try readSchema(old))
        var entries: [JSON] = []
        for c in schema where className == nil || c.name == className {
            var changes: OpaquePointer?
            try StrataError.check { strata_changes_get(old.handle, new.handle, c.name, &changes, $0) }
            defer { strata_changes_free(changes) }
            func keys(_ kind: Int32) -> [Int64] {
                (0..<strata_changes_count(changes, kind)).map { strata_changes_key(changes, kind, $0) }
            }
            let ins = keys(Int32(STRATA_CHANGE_INSERTED)), del = keys(Int32(STRATA_CHANGE_DELETED))
            let mod = keys(Int32(STRATA_CHANGE_MODIFIED))
            if ins.isEmpty && del.isEmpty && mod.isEmpty { continue }
            let modified: [JSON] = try mod.enumerated().map { (i, k) in
                let props = c.properties.filter { strata_changes_property_changed(changes, i, $0.col) }.map { JSON.string($0.name) }
                return .object([("ref", try ref(k, c, newClasses)), ("properties", .array(props))])
            }
            let deleted: [JSON] = try del.map { k in
                oldClasses.schema[c.name] == nil ? .int(k) : try ref(k, oldClasses.cls(c.name), oldClasses)
            }
            entries.append(.object([("class", .string(c.name)), ("inserted", .array(try ins.map { try ref($0, c, newClasses) })),
                                    ("deleted", .array(deleted)), ("modified", .array(modified))]))
        }
        if output.json {
            print(JSON.object([("version", .int(Int64(new.version))), ("changes", .array(entries))]).text)
            return
        }
        print("version \(new.version):" + (entries.isEmpty ? " (no object changed)" : ""))
        for e in entries {
            guard case .string(let name)? = e["class"] else { continue }
            var parts: [String] = []
            for kind in ["inserted", "deleted"] {
                if case .array(let a)? = e[kind], !a.isEmpty { parts.append("\(kind) \(a.map { ValueCoding.text($0) }.joined(separator: ", "))") }
            }
            if case .array(let a)? = e["modified"], !a.isEmpty {
                parts.append("modified " + a.map { m in
                    let props: [String]
                    if case .array(let p)? = m["properties"] { props = p.map { ValueCoding.text($0) } } else { props = [] }
                    return ValueCoding.text(m["ref"] ?? .null) + " (" + props.joined(separator: ", ") + ")"
                }.joined(separator: ", "))
            }
            print("  \(name): " + parts.joined(separator: "; "))
        }
    }

    /// An object as the watch names it: its primary key, else its key.
    private func ref(_ key: Int64, _ c: ClassSchema, _ classes: FileClasses) throws -> JSON {
        guard let pk = c.primaryKey else { return .int(key) }
        let v = (try? classes.table(c.name).get(key, pk.col)) ?? .int(key)
        return (try? ValueCoding.json(v, pk, links: NoLinks())) ?? .int(key)
    }
}
