@_spi(Reflection) import Swift
import Foundation

/// What Strata knows of a model class, found once per class: its `@Persisted` fields in
/// declaration order (superclass fields first), where each lies in an instance, their kinds and
/// options, and their defaults (the values a fresh instance holds).
///
/// Fields are found with the runtime's field reflection (`_forEachField`), which gives each
/// stored property's name, type and offset on Linux and Apple platforms alike: no Objective-C
/// runtime is needed. A field whose type is a `Persisted<…>` is a property (its name without the
/// leading `_`); other fields are ignored.
final class ClassInfo {
    struct PropertyInfo {
        let name: String
        /// The name the file stores it under (`propertiesMapping()`; else `name`).
        let columnName: String
        let offset: Int
        let field: PersistedField.Type
        let kind: _PersistedKind
        let isPrimaryKey: Bool
        let isIndexed: Bool
        /// `@Persisted(indexed: .fullText)`: the words of the text are indexed.
        let isFullText: Bool
        let originProperty: String?
        /// The value a new object holds (the declared initial value); nil for lists and
        /// linking objects.
        let defaultValue: Any?
    }

    let type: Object.Type
    let name: String
    /// An `EmbeddedObject` subclass: its objects have one parent each.
    let isEmbedded: Bool
    let properties: [PropertyInfo]
    /// Each property's field (its offset in an instance and how to reach it), by property: what
    /// `add` walks (a PropertyInfo copy costs reference counting of its strings and values).
    let fields: [(offset: Int, field: PersistedField.Type)]
    /// The properties held by an instance in a field (`RealmProperty`) — every property of a
    /// Codable class — bound to their object when an object of the class becomes managed
    /// (Object.__accessor).
    let instanceFields: [(index: Int, offset: Int, field: PersistedField.Type)]
    let primaryKeyIndex: Int?
    /// The core type of the primary key (lookups compare a key's type with it).
    let primaryKeyType: CoreType?
    /// Every stored field of the class is a property of its schema (or Object's own): a managed
    /// instance holds nothing but its place in the Realm, so one nobody references can be moved
    /// to another object of the class without anyone telling (Results.Iterator).
    let holdsOnlyItsPlace: Bool
    private let indexByName: [String: Int]

    private init(_ type: Object.Type) {
        self.type = type
        name = type.className()
        isEmbedded = type is EmbeddedObject.Type
        var found: [(String, Int, PersistedField.Type)] = []
        var others = 0 // fields that are neither @Persisted nor Object's own
        _ = _forEachField(of: type, options: ClassInfo.classFields) { cname, offset, fieldType, _ in
            let label = String(cString: cname)
            if let f = fieldType as? InstancePropertyField.Type {
                found.append((label, offset, f)) // `let x = RealmProperty<…>()`: the field's own name
                others += 1 // its instance is the object's own: the object cannot be moved to another
            } else if let f = fieldType as? PersistedField.Type, label.hasPrefix("_") {
                found.append((String(label.dropFirst()), offset, f))
            } else if !ClassInfo.objectFields.contains(label) {
                others += 1
            }
            return true
        }
        if type is Encodable.Type { others += 1 } // its fields are bound: an instance cannot move
        let ignored = Set(type.ignoredProperties())
        // RealmSwift's older way of naming them: class functions a model overrides.
        let legacyPrimaryKey = type.primaryKey()
        let legacyIndexed = Set(type.indexedProperties())
        let columnNames = type.propertiesMapping()
        holdsOnlyItsPlace = others == 0 && !found.contains { ignored.contains($0.0) }
        let prototype = type.init()
        let base = Unmanaged.passUnretained(prototype).toOpaque()
        var props: [PropertyInfo] = []
        for (label, offset, field) in found where !ignored.contains(label) {
            let opts = field.options(at: UnsafeRawPointer(base + offset))
            let kind = field.kind
            let def: Any? = kind.collection == .none ? field.unmanagedValue(at: base + offset) : nil
            props.append(PropertyInfo(name: label, columnName: columnNames[label] ?? label, offset: offset, field: field, kind: kind,
                                      isPrimaryKey: opts.primaryKey || label == legacyPrimaryKey,
                                      isIndexed: opts.indexed || legacyIndexed.contains(label),
                                      isFullText: opts.fullText,
                                      originProperty: opts.origin, defaultValue: def))
        }
        withExtendedLifetime(prototype) {}
        properties = props
        fields = props.map { ($0.offset, $0.field) }
        // A Codable class's fields are all bound when an object becomes managed: its synthesized
        // encode(to:) reads the fields, and must never see the prototype's values (Codable.swift).
        let bindAll = type is Encodable.Type
        instanceFields = props.enumerated().filter { bindAll || $0.element.field is InstancePropertyField.Type }
            .map { ($0.offset, $0.element.offset, $0.element.field) }
        primaryKeyIndex = props.firstIndex { $0.isPrimaryKey }
        primaryKeyType = primaryKeyIndex.map { props[$0].kind.type }
        indexByName = Dictionary(props.enumerated().map { ($1.name, $0) }, uniquingKeysWith: { a, _ in a })
    }

    func index(named name: String) -> Int? { indexByName[name] }

    /// Some property is stored under another name (`propertiesMapping()`).
    var hasColumnNames: Bool { properties.contains { $0.columnName != $0.name } }

    /// The property whose field lies at `offset` in an instance.
    func index(atOffset offset: Int) -> Int? { properties.firstIndex { $0.offset == offset } }
    func property(named name: String) -> PropertyInfo? { indexByName[name].map { properties[$0] } }

    /// The property of `object` whose field holds `instance` (a `RealmProperty`), or nil.
    static func instanceField(of object: Object, holding instance: AnyObject) -> PropertyInfo? {
        let info = ClassInfo.of(Swift.type(of: object))
        let base = UnsafeRawPointer(Unmanaged.passUnretained(object).toOpaque())
        for f in info.instanceFields where f.field is InstancePropertyField.Type {
            let held = (base + f.offset).assumingMemoryBound(to: AnyObject.self).pointee
            if held === instance { return info.properties[f.index] }
        }
        return nil
    }

    /// The schema as users see it (`Realm.schema`, `Object.objectSchema`).
    lazy var schema: ObjectSchema = ObjectSchema(info: self)

    /// The address of field `p` of object `o`.
    func fieldAddress(_ o: Object, _ p: PropertyInfo) -> UnsafeMutableRawPointer {
        Unmanaged.passUnretained(o).toOpaque() + p.offset
    }

    /// The value of property p of o, managed or not, type-erased.
    func value(of o: Object, _ p: PropertyInfo) -> Any {
        if o.__accessor != nil, let i = index(named: p.name) {
            return p.field.read(_ManagedProperty(object: o, index: i))
        }
        return p.field.unmanagedValue(at: fieldAddress(o, p))
    }

    func setValue(_ v: Any?, of o: Object, _ p: PropertyInfo) {
        let value: Any = v ?? Optional<Any>.none as Any
        if o.__accessor != nil, let i = index(named: p.name) {
            p.field.write(value, to: _ManagedProperty(object: o, index: i))
        } else if !p.field.setUnmanaged(at: fieldAddress(o, p), value) {
            strataTrap("Invalid value '\(value)' of type '\(Swift.type(of: value))' for property '\(name).\(p.name)'.")
        }
    }

    // MARK: the cache

    private static let lock = NSLock()
    nonisolated(unsafe) private static var cache: [ObjectIdentifier: ClassInfo] = [:] // under `lock`

    /// `_EachFieldOptions.classType` (the stdlib declares it a `static var`, which strict
    /// concurrency refuses to read).
    static let classFields = _EachFieldOptions(rawValue: 1 << 0)

    /// The names of Object's own stored fields.
    private static let objectFields: Set<String> = {
        var names: Set<String> = []
        _ = _forEachField(of: Object.self, options: ClassInfo.classFields) { cname, _, _, _ in
            names.insert(String(cString: cname))
            return true
        }
        return names
    }()

    static func of(_ type: Object.Type) -> ClassInfo {
        lock.lock()
        if let c = cache[ObjectIdentifier(type)] {
            lock.unlock()
            return c
        }
        lock.unlock()
        let info = ClassInfo(type) // outside the lock: making the prototype may read other classes
        lock.lock()
        defer { lock.unlock() }
        if let c = cache[ObjectIdentifier(type)] { return c }
        cache[ObjectIdentifier(type)] = info
        return info
    }

    /// "Dog" for Module.Dog and for Module.Outer.Dog.
    static func unqualifiedName(of type: Any.Type) -> String {
        let full = String(reflecting: type)
        return String(full.split(separator: ".").last ?? Substring(full))
    }
}
