// ObjectEncoder.swift — one object as a JSON object: its properties in schema order, embedded
// objects inline, links as references (References.swift).
import CCore
@_spi(StrataCore) import Strata

struct ObjectEncoder {
    let classes: FileClasses
    let refs: ExportReferences

    init(_ classes: FileClasses) {
        self.classes = classes
        refs = ExportReferences(classes)
    }

    func encode(_ cls: ClassSchema, key: Int64, only: [String]? = nil) throws -> JSON {
        let t = try classes.table(cls.name)
        var members: [(String, JSON)] = []
        for p in cls.properties where only == nil || only!.contains(p.name) {
            members.append((p.name, try encode(t, key, p)))
        }
        return .object(members)
    }

    func encode(_ t: CoreTable, _ key: Int64, _ p: PropertySchema) throws -> JSON {
        switch p.collection {
        case nil:
            return try element(t.get(key, p.col), p)
        case .list?, .set?:
            let n = try t.listCount(key, p.col)
            return .array(try (0..<n).map { try element(t.listGet(key, p.col, $0), p) })
        case .map?:
            let n = try t.listCount(key, p.col)
            return .object(try (0..<n).map { i in
                (try t.mapKeyAt(key, p.col, i), try element(t.listGet(key, p.col, i), p))
            })
        }
    }

    private func element(_ v: StoredValue, _ p: PropertySchema) throws -> JSON {
        if case .link(let k) = v, let target = p.target, let tc = classes.schema[target], tc.embedded {
            return try encode(tc, key: k)
        }
        return try ValueCoding.json(v, p, links: refs)
    }
}
