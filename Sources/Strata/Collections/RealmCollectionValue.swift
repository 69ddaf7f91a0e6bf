import Foundation

/// A type that can be an element of a `List` or a `Results`: the primitive types, their
/// optionals, `AnyRealmValue`, and `Object` subclasses.
public protocol RealmCollectionValue: Hashable, _HasPersistedType where PersistedType: RealmCollectionValue {
    /// How elements of this type are stored.
    static var _strataElementKind: _PersistedKind { get }
    /// An element read from the file.
    static func _strataElement(_ v: _Stored, _ ctx: _ElementContext) -> Self
    /// An element about to be written (objects are added to the Realm first when unmanaged).
    static func _strataStore(_ v: Self, _ ctx: _ElementContext) -> _Stored
}

/// Where elements are read or written (opaque outside Strata).
public struct _ElementContext {
    let realm: RealmInstance
    /// For messages: the collection ("Person.dogs").
    let what: String
    /// The table of the elements when they are objects and the collection knows it (saves
    /// looking it up for each element).
    var info: TableInfo? = nil
    /// The collection property (its class's table and the property's index), when known: where
    /// a collection of DynamicObjects finds its elements' class.
    var property: (owner: TableInfo, index: Int)? = nil
}

extension RealmCollectionValue where Self: _PrimitivePersistable {
    public static var _strataElementKind: _PersistedKind { _PersistedKind(_strataCoreType.type) }
    public static func _strataElement(_ v: _Stored, _ ctx: _ElementContext) -> Self { Self(_strata: v) }
    public static func _strataStore(_ v: Self, _ ctx: _ElementContext) -> _Stored { v._strata }
}

/// A type that can be the element of a collection of optionals (`List<Int?>`).
public protocol _RealmCollectionValueInsideOptional: RealmCollectionValue
where PersistedType: _RealmCollectionValueInsideOptional {}

extension Bool: _RealmCollectionValueInsideOptional {}
extension Int: _RealmCollectionValueInsideOptional {}
extension Int8: _RealmCollectionValueInsideOptional {}
extension Int16: _RealmCollectionValueInsideOptional {}
extension Int32: _RealmCollectionValueInsideOptional {}
extension Int64: _RealmCollectionValueInsideOptional {}
extension Float: _RealmCollectionValueInsideOptional {}
extension Double: _RealmCollectionValueInsideOptional {}
extension String: _RealmCollectionValueInsideOptional {}
extension Data: _RealmCollectionValueInsideOptional {}
extension Date: _RealmCollectionValueInsideOptional {}
extension ObjectId: _RealmCollectionValueInsideOptional {}
extension UUID: _RealmCollectionValueInsideOptional {}
extension Decimal128: _RealmCollectionValueInsideOptional {}
extension Object: _RealmCollectionValueInsideOptional {}

extension Optional: RealmCollectionValue where Wrapped: _RealmCollectionValueInsideOptional {
    public static var _strataElementKind: _PersistedKind {
        let k = Wrapped._strataElementKind
        return _PersistedKind(k.type, optional: true, target: k.target)
    }
    public static func _strataElement(_ v: _Stored, _ ctx: _ElementContext) -> Wrapped? {
        if case .null = v.value { return nil }
        return Wrapped._strataElement(v, ctx)
    }
    public static func _strataStore(_ v: Wrapped?, _ ctx: _ElementContext) -> _Stored {
        v.map { Wrapped._strataStore($0, ctx) } ?? _Stored(.null)
    }
}

extension Object: RealmCollectionValue {
    public static var _strataElementKind: _PersistedKind { _PersistedKind(.link, target: self) }

    public static func _strataElement(_ v: _Stored, _ ctx: _ElementContext) -> Self {
        guard case .link(let key) = v.value else {
            strataTrap("\(ctx.what): an element is not a link to a '\(className())'")
        }
        if let info = ctx.info, info.classInfo.type == self || self == DynamicObject.self {
            return ctx.realm.managedObject(self, info: info, key: key)
        }
        if self == DynamicObject.self, let (owner, i) = ctx.property, let target = owner.properties[i].kind.target {
            return ctx.realm.managedObject(self, info: ctx.realm.tableInfo(target), key: key)
        }
        return ctx.realm.managedObject(self, key: key)
    }

    public static func _strataStore(_ v: Object, _ ctx: _ElementContext) -> _Stored {
        _Stored(.link(ctx.realm.keyForLink(v, what: ctx.what)))
    }
}
