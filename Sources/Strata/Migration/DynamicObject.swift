import Foundation

/// One side of a migration: the snapshot the file had (old, read-only) or the write that
/// migrates it (new). Its tables are found by class name, with their properties by name.
final class MigrationSide {
    struct Table {
        let core: CoreTable
        let properties: [String: CoreProperty]
    }

    let txn: CoreTxn
    let label: String
    weak var migration: Migration?
    private var tables: [String: Table?] = [:]
    /// The new side's model classes' column names (`propertiesMapping()`), by class and
    /// property: a property is named as its class names it (the old side has the file's names).
    private let columnNames: [String: [String: String]]

    init(txn: CoreTxn, label: String, columnNames: [String: [String: String]] = [:]) {
        self.txn = txn
        self.label = label
        self.columnNames = columnNames
    }

    var writable: Bool { txn.isWrite }

    /// The table of class `name` in this snapshot, or nil when it has none.
    func table(_ name: String) -> Table? {
        if let t = tables[name] { return t }
        var found: Table?
        do {
            if let core = try txn.table(name) {
                let props = try core.properties()
                found = Table(core: core, properties: Dictionary(props.map { ($0.name, $0) }, uniquingKeysWith: { a, _ in a }))
            }
        } catch {
            migration?.fail(error)
        }
        tables[name] = found
        return found
    }

    func forget(_ name: String) { tables[name] = nil }

    /// The class whose table has core id `id` in this snapshot (a mixed value's link), or nil.
    func tableName(ofId id: UInt32) -> String? {
        guard let names = try? txn.tableNames() else { return nil }
        return names.first { n in table(n).map { $0.core.id == id } ?? false }
    }

    func property(_ className: String, _ name: String) -> (Table, CoreProperty) {
        guard let t = table(className) else {
            strataTrap("Object type '\(className)' does not exist in the \(label) schema of the migration.")
        }
        guard let p = t.properties[columnNames[className]?[name] ?? name] else {
            strataTrap("Invalid property name '\(name)' for class '\(className)' in the \(label) schema of the migration.")
        }
        return (t, p)
    }

    // MARK: values

    /// A stored value as Swift gives it to the migration block.
    func swiftValue(_ v: StoredValue, _ p: CoreProperty) -> Any? {
        // a mixed value as the value it holds (RealmSwift's migration objects are read through
        // key-value coding), an object as this side's DynamicObject
        if p.type == .mixed {
            if case .typedLink(let tableId, let key) = v {
                return tableName(ofId: tableId).map { DynamicObject(self, $0, key) }
            }
            return ValueConversion.keyValueCoded(AnyRealmValue(stored: v))
        }
        switch v {
        case .null: return nil
        // numbers and Bools as NSNumber, as RealmSwift's migration objects hand them out (so
        // `as? Int`, `as? Int8` and `as? Double` all read them)
        case .bool(let b): return NSNumber(value: b)
        case .int(let i): return NSNumber(value: i)
        case .float(let f): return NSNumber(value: f)
        case .double(let d): return NSNumber(value: d)
        case .string(let s): return s
        case .data(let d): return d
        case .timestamp(let s, let ns): return Date(timeIntervalSince1970: TimeInterval(s) + TimeInterval(ns) / 1e9)
        case .objectId(let o): return o
        case .uuid(let u): return u
        case .decimal(let d): return d
        case .link(let k): return DynamicObject(self, p.linkTarget ?? "", k)
        case .typedLink: return nil // (only in mixed values, read above)
        }
    }

    /// A Swift value as property p stores it (one element, for a list); traps when it does not fit.
    func stored(_ value: Any, for p: CoreProperty, in className: String) -> StoredValue {
        func invalid() -> Never {
            strataTrap("Invalid value '\(ValueConversion.describe(value))' of type '\(type(of: value))' for "
                       + "property '\(className).\(p.name)' of type \(SchemaPlan.describe(p.type, p.flags)).")
        }
        if ValueConversion.isNil(value) {
            if !p.flags.contains(.nullable) { invalid() }
            return .null
        }
        if let o = value as? DynamicObject {
            guard o.side === self else { invalid() }
            if p.type == .mixed, let t = table(o.className) { return .typedLink(t.core.id, o.key) }
            guard p.type == .link, o.className == p.linkTarget else { invalid() }
            return .link(o.key)
        }
        if let any = value as? AnyRealmValue {
            guard let s = any.stored, p.type == .mixed || s.coreType == p.type else { invalid() }
            return s
        }
        guard let s = ValueConversion.storedIfPrimitive(value) else { invalid() }
        if p.type == .mixed || s.coreType == p.type { return s }
        switch (s, p.type) {
        case (.int(let i), .double): return .double(Double(i))
        case (.int(let i), .float): return .float(Float(i))
        case (.double(let d), .float): return .float(Float(d))
        case (.float(let f), .double): return .double(Double(f))
        case (.double(let d), .int) where d.rounded() == d && abs(d) < 9.2e18: return .int(Int64(d))
        default: invalid()
        }
    }
}

/// An object seen through its class's name and the file's schema rather than a Swift class:
/// the objects a migration hands out, and those of `Realm.dynamicObjects(_:)`.
/// `object["name"]` (or `object.name`) reads a property (nil for nil; for a migration's
/// objects a `DynamicObject` for a link and an array for a list); `object["name"] = value` sets
/// it (a migration's new objects, or inside a write). A migration's old objects are read-only:
/// they show the file as it was.
@dynamicMemberLookup
public final class DynamicObject: Object {
    /// A migration's object: its side, class and key (nil for an object of a Realm, whose
    /// accessor says them).
    private let migrated: (side: MigrationSide, className: String, key: Int64)?

    init(_ side: MigrationSide, _ className: String, _ key: Int64) {
        migrated = (side, className, key)
        super.init()
    }

    /// An unmanaged dynamic object (migration code gets managed ones from `Migration`).
    public required init() {
        migrated = nil
        super.init()
    }

    /// The class (table) name.
    public var className: String { migrated?.className ?? __accessor?.info.name ?? "DynamicObject" }

    var side: MigrationSide { migrated!.side }
    var key: Int64 { migrated!.key }

    /// For a migration's object: whether `other` is the same object of the same side (nil for
    /// an object of a Realm).
    func isSameMigrationObject(_ other: Object) -> Bool? {
        guard let m = migrated else { return nil }
        guard let o = other as? DynamicObject, let n = o.migrated else { return false }
        return m.side === n.side && m.className == n.className && m.key == n.key
    }

    /// A property's value by name (`object.name`), nil when it is null. Traps on an unknown property.
    public subscript(dynamicMember member: String) -> Any? {
        get { self[member] }
        set { self[member] = newValue }
    }

    public override subscript(key: String) -> Any? {
        get {
            guard migrated != nil else { return dynamicValue(key) }
            return migrationValue(key)
        }
        set {
            guard migrated != nil else { super[key] = newValue; return }
            setMigrationValue(key, newValue)
        }
    }

    public override var description: String {
        guard migrated != nil else { return super.description }
        return migrationDescription
    }

    /// Key-value coding of a name the class does not declare (RealmSwift's DynamicObject): the
    /// property of that name.
    public func value(forUndefinedKey key: String) -> Any? { self[key] }

    /// Set the property named `key` (RealmSwift's DynamicObject).
    public func setValue(_ value: Any?, forUndefinedKey key: String) { self[key] = value }
}

extension DynamicObject {
    private func migrationValue(_ key: String) -> Any? {
        let (t, p) = side.property(className, key)
        do {
            if p.flags.contains(.list) {
                let n = try t.core.listCount(self.key, p.col)
                return try (0..<n).map { side.swiftValue(try t.core.listGet(self.key, p.col, $0), p) as Any }
            }
            return side.swiftValue(try t.core.get(self.key, p.col), p)
        } catch {
            side.migration?.fail(error)
            return nil
        }
    }

    private func setMigrationValue(_ key: String, _ newValue: Any?) {
        guard side.writable else {
            strataTrap("Cannot set '\(className).\(key)' of an old object: old objects of a migration are read-only.")
        }
        let (t, p) = side.property(className, key)
        do {
            if p.flags.contains(.list) {
                let items: [Any]
                if let a = newValue as? [Any] { items = a } else if let s = newValue as? any Sequence {
                    items = s.map { $0 as Any }
                } else if newValue == nil { items = [] } else {
                    strataTrap("Invalid value for list property '\(className).\(key)': give an array.")
                }
                let values = items.map { side.stored($0, for: p, in: className) }
                try t.core.listClear(self.key, p.col)
                for (i, v) in values.enumerated() { try t.core.listInsert(self.key, p.col, i, v) }
                return
            }
            let v = side.stored(newValue as Any, for: p, in: className)
            try t.core.set(self.key, p.col, v)
        } catch {
            side.migration?.fail(error)
        }
    }

    private var migrationDescription: String {
        guard let t = side.table(className) else { return "\(className) (deleted)" }
        let names = t.properties.keys.sorted()
        func shown(_ v: Any?) -> String {
            guard let v else { return "nil" }
            if let o = v as? DynamicObject { return "\(o.className)(\(o.key))" } // links may cycle
            if let a = v as? [Any] { return "[" + a.map { shown($0) }.joined(separator: ", ") + "]" }
            return ValueConversion.describe(v)
        }
        let body = names.map { "\t\($0) = \(shown(self[$0]));" }
        return "\(className) {\n" + body.joined(separator: "\n") + "\n}"
    }
}
