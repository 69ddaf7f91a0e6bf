// References.swift — links as references (a primary key's value, or a position among the
// class's objects) when exporting, and references back to keys when importing.
import CCore
@_spi(StrataCore) import Strata

/// The classes of one file's snapshot, by name, with their table handles (alive as `txn`).
final class FileClasses {
    let txn: CoreTxn
    let schema: [String: ClassSchema]
    private var tables: [String: CoreTable] = [:]
    private var names: [UInt32: String] = [:]

    init(txn: CoreTxn, schema: [ClassSchema]) {
        self.txn = txn
        self.schema = Dictionary(uniqueKeysWithValues: schema.map { ($0.name, $0) })
    }

    init(txn: CoreTxn, schema: [String: ClassSchema]) {
        self.txn = txn
        self.schema = schema
    }

    func cls(_ name: String) throws -> ClassSchema {
        guard let c = schema[name] else { throw ToolFailure("no class '\(name)' in the file") }
        return c
    }

    func table(_ name: String) throws -> CoreTable {
        if let t = tables[name] { return t }
        guard let t = try txn.table(name) else { throw ToolFailure("no class '\(name)' in the file") }
        tables[name] = t
        return t
    }

    func className(ofTable id: UInt32) throws -> String {
        if names.isEmpty {
            for name in schema.keys { names[try table(name).id] = name }
        }
        guard let n = names[id] else { throw ToolFailure("a mixed link names table id \(id), which the file lacks") }
        return n
    }

    func tableId(of cls: String) throws -> UInt32 { try table(cls).id }
}

/// Export: a linked object's reference.
final class ExportReferences: LinkCoding {
    let classes: FileClasses
    private var ordinals: [String: [Int64: Int]] = [:]

    init(_ classes: FileClasses) { self.classes = classes }

    func reference(to key: Int64, in cls: String) throws -> JSON {
        let c = try classes.cls(cls)
        let t = try classes.table(cls)
        if let pk = c.primaryKey {
            return try ValueCoding.json(t.get(key, pk.col), pk, links: self)
        }
        if ordinals[cls] == nil {
            var map: [Int64: Int] = [:]
            for (i, k) in try t.keys().enumerated() { map[k] = i }
            ordinals[cls] = map
        }
        guard let n = ordinals[cls]![key] else {
            throw ToolFailure("a link to \(cls) key \(key) names no object")
        }
        return .int(Int64(n))
    }

    func key(for ref: JSON, in cls: String) throws -> Int64 { throw ToolFailure("export reads no references") }
    func className(ofTable id: UInt32) throws -> String { try classes.className(ofTable: id) }
    func tableId(of cls: String) throws -> UInt32 { try classes.tableId(of: cls) }
}

/// Import: the key of the object a reference names. A primary key names an object of the input
/// or one the file had before. A position names, in a JSON export, an object of the input (its
/// position among the input's objects of its class); in a CSV file, which holds one class, an
/// object of the file (its position among the file's objects of its class, as CSV export wrote it).
final class ImportReferences: LinkCoding {
    let classes: FileClasses
    let positionsInFile: Bool
    /// New keys of the input's objects of classes without a primary key, in input order.
    var created: [String: [Int64]] = [:]
    private var fileKeys: [String: [Int64]] = [:]

    init(_ classes: FileClasses, positionsInFile: Bool = false) {
        self.classes = classes
        self.positionsInFile = positionsInFile
    }

    func key(for ref: JSON, in cls: String) throws -> Int64 {
        let c = try classes.cls(cls)
        let t = try classes.table(cls)
        if let pk = c.primaryKey {
            let v = try ValueCoding.value(ref, pk, links: self, at: "a link to \(cls)")
            guard let k = try t.find(primaryKey: v) else {
                throw ToolFailure("a link names \(cls) with primary key \(ref.text), which is neither in the input nor in the file")
            }
            return k
        }
        guard case .int(let n) = ref else {
            throw ToolFailure("a link to \(cls) (no primary key) must be the object's position in the input, not \(ref.text)")
        }
        if positionsInFile && fileKeys[cls] == nil { fileKeys[cls] = try t.keys() }
        let keys = positionsInFile ? fileKeys[cls]! : created[cls] ?? []
        guard n >= 0 && Int(n) < keys.count else {
            throw ToolFailure("a link names \(cls) #\(n), but the \(positionsInFile ? "file" : "input") has \(keys.count) \(cls) objects")
        }
        return keys[Int(n)]
    }

    func reference(to key: Int64, in cls: String) throws -> JSON { .int(key) }
    func className(ofTable id: UInt32) throws -> String { try classes.className(ofTable: id) }
    func tableId(of cls: String) throws -> UInt32 { try classes.tableId(of: cls) }
}
