// ImportSession.swift — objects from JSON into a write transaction, in two passes: each object
// is created with its plain values as it comes (`add`), and the values that name other objects
// (links, mixed values, embedded objects) are set at the end (`finish`), when every object of
// the input exists. The caller commits once: an import is all or nothing.
import CCore
@_spi(StrataCore) import Strata

final class ImportSession {
    let classes: FileClasses
    let refs: ImportReferences
    private var waiting: [(cls: ClassSchema, key: Int64, values: [(PropertySchema, JSON)], at: String)] = []
    private(set) var count = 0
    /// Objects whose links, mixed values or embedded objects wait for `finish`.
    var pending: Int { waiting.count }
    /// Recovery: a value that names an object the input lacks is left out (and listed in
    /// `losses`) instead of failing the import.
    var lenient = false
    private(set) var losses: [String] = []

    /// `positionsInFile`: references by position name the file's objects (CSV), not the input's.
    init(_ classes: FileClasses, positionsInFile: Bool = false) {
        self.classes = classes
        refs = ImportReferences(classes, positionsInFile: positionsInFile)
    }

    /// Create one object of `clsName` from a JSON object; `at` says where it was read (errors).
    func add(_ clsName: String, _ obj: JSON, at: String) throws {
        let cls = try classes.cls(clsName)
        guard !cls.embedded else {
            throw ToolFailure("\(at): \(clsName) is embedded: its objects come inside their parent's")
        }
        guard case .object(let members) = obj else { throw ToolFailure("\(at): an object must be a JSON object, not \(obj.text)") }
        for (name, _) in members where cls.property(name) == nil {
            throw ToolFailure("\(at): class \(clsName) has no property '\(name)'")
        }
        let t = try classes.table(clsName)
        let key: Int64
        if let pk = cls.primaryKey {
            guard let j = obj[pk.name] else { throw ToolFailure("\(at): the primary key '\(pk.name)' is missing") }
            key = try t.create(primaryKey: ValueCoding.value(j, pk, links: refs, at: "\(at) .\(pk.name)"))
        } else {
            key = try t.create()
            refs.created[clsName, default: []].append(key)
        }
        var later: [(PropertySchema, JSON)] = []
        for (name, j) in members {
            let p = cls.property(name)!
            if p.primaryKey { continue }
            if namesObjects(p) { later.append((p, j)) } else { try set(t, key, p, j, at: "\(at) .\(name)") }
        }
        if !later.isEmpty { waiting.append((cls, key, later, at)) }
        count += 1
    }

    /// Set the values that name other objects, now that every object exists.
    func finish(progress: ((Int, Int) -> Void)? = nil) throws {
        for (i, item) in waiting.enumerated() {
            let t = try classes.table(item.cls.name)
            for (p, j) in item.values {
                do {
                    try set(t, item.key, p, j, at: "\(item.at) .\(p.name)")
                } catch let e as ToolFailure where lenient {
                    losses.append(e.description)
                }
            }
            if i % 4096 == 0 { progress?(i, waiting.count) }
        }
        waiting.removeAll()
    }

    private func namesObjects(_ p: PropertySchema) -> Bool { p.type == .link || p.type == .mixed }

    private func set(_ t: CoreTable, _ key: Int64, _ p: PropertySchema, _ j: JSON, at: String) throws {
        switch p.collection {
        case nil:
            try t.set(key, p.col, try element(j, p, at: at))
        case .list?, .set?:
            guard case .array(let items) = j else { throw ToolFailure("\(at): a \(p.collection!.rawValue) must be a JSON array, not \(j.text)") }
            try t.listClear(key, p.col)
            for (i, item) in items.enumerated() {
                let v = try element(item, p, at: "\(at)[\(i)]")
                if p.collection == .set { try t.setInsert(key, p.col, v) } else { try t.listInsert(key, p.col, i, v) }
            }
        case .map?:
            guard case .object(let members) = j else { throw ToolFailure("\(at): a map must be a JSON object, not \(j.text)") }
            try t.listClear(key, p.col)
            for (k, item) in members { try t.mapSet(key, p.col, k, try element(item, p, at: "\(at)[\(k)]")) }
        }
    }

    /// The value of one element: an embedded object is created (and filled) first.
    private func element(_ j: JSON, _ p: PropertySchema, at: String) throws -> StoredValue {
        if p.type == .link, let target = p.target, let tc = classes.schema[target], tc.embedded {
            if case .null = j { return .null }
            guard case .object(let members) = j else {
                throw ToolFailure("\(at): an embedded \(target) must be a JSON object, not \(j.text)")
            }
            let et = try classes.table(target)
            let k = try et.create()
            for (name, v) in members {
                guard let ep = tc.property(name) else { throw ToolFailure("\(at): class \(target) has no property '\(name)'") }
                try set(et, k, ep, v, at: "\(at).\(name)")
            }
            return .link(k)
        }
        return try ValueCoding.value(j, p, links: refs, at: at)
    }
}
