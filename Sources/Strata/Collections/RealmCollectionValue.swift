import Foundation

/// A type that can be an element of a `List` or a `Results`: the primitive types, their
/// optionals, `AnyRealmValue`, and `Object` subclasses.
public protocol RealmCollectionValue: Hashable {
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
}

extension RealmCollectionValue where Self: _PrimitivePersistable {
    public static var _strataElementKind: _PersistedKind { _PersistedKind(_strataCoreType.type) }
    public static func _strataElement(_ v: _Stored, _ ctx: _ElementContext) -> Self { Self(_strata: v) }
    public static func _strataStore(_ v: Self, _ ctx: _ElementContext) -> _Stored { v._strata }
}

extension Bool: RealmCollectionValue {}
extension Int: RealmCollectionValue {}
extension Int8: RealmCollectionValue {}
extension Int16: RealmCollectionValue {}
extension Int32: RealmCollectionValue {}
extension Int64: RealmCollectionValue {}
extension Float: RealmCollectionValue {}
extension Double: RealmCollectionValue {}
extension String: RealmCollectionValue {}
extension Data: RealmCollectionValue {}
extension Date: RealmCollectionValue {}
extension ObjectId: RealmCollectionValue {}
extension UUID: RealmCollectionValue {}
extension Decimal128: RealmCollectionValue {}

extension Optional: RealmCollectionValue where Wrapped: _PrimitivePersistable & RealmCollectionValue {
    public static var _strataElementKind: _PersistedKind {
        _PersistedKind(Wrapped._strataCoreType.type, optional: true)
    }
    public static func _strataElement(_ v: _Stored, _ ctx: _ElementContext) -> Wrapped? {
        if case .null = v.value { return nil }
        return Wrapped(_strata: v)
    }
    public static func _strataStore(_ v: Wrapped?, _ ctx: _ElementContext) -> _Stored {
        v.map { $0._strata } ?? _Stored(.null)
    }
}

extension Object: RealmCollectionValue {
    public static var _strataElementKind: _PersistedKind { _PersistedKind(.link, target: self) }

    public static func _strataElement(_ v: _Stored, _ ctx: _ElementContext) -> Self {
        guard case .link(let key) = v.value else {
            strataTrap("\(ctx.what): an element is not a link to a '\(className())'")
        }
        if let info = ctx.info, info.classInfo.type == self {
            return ctx.realm.managedObject(self, info: info, key: key)
        }
        return ctx.realm.managedObject(self, key: key)
    }

    public static func _strataStore(_ v: Object, _ ctx: _ElementContext) -> _Stored {
        _Stored(.link(ctx.realm.keyForLink(v, what: ctx.what)))
    }
}
