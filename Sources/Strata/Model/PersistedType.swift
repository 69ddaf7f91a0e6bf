import Foundation

// The types a value is stored as, and the tags RealmSwift's generic signatures constrain on
// (`T.PersistedType: MinMaxType`, `Element: _RealmCollectionValueInsideOptional`, …). Stored
// types are their own `PersistedType`; a `PersistableEnum` is stored as its raw value and a
// `CustomPersistable` as the type it maps to.

/// A type with a stored form: `PersistedType` is the type the file holds its values as.
public protocol _HasPersistedType {
    associatedtype PersistedType
}

extension Bool: _HasPersistedType {
    /// `Bool` is stored as itself.
    public typealias PersistedType = Bool
}
extension Int: _HasPersistedType {
    /// `Int` is stored as itself.
    public typealias PersistedType = Int
}
extension Int8: _HasPersistedType {
    /// `Int8` is stored as itself.
    public typealias PersistedType = Int8
}
extension Int16: _HasPersistedType {
    /// `Int16` is stored as itself.
    public typealias PersistedType = Int16
}
extension Int32: _HasPersistedType {
    /// `Int32` is stored as itself.
    public typealias PersistedType = Int32
}
extension Int64: _HasPersistedType {
    /// `Int64` is stored as itself.
    public typealias PersistedType = Int64
}
extension Float: _HasPersistedType {
    /// `Float` is stored as itself.
    public typealias PersistedType = Float
}
extension Double: _HasPersistedType {
    /// `Double` is stored as itself.
    public typealias PersistedType = Double
}
extension String: _HasPersistedType {
    /// `String` is stored as itself.
    public typealias PersistedType = String
}
extension Data: _HasPersistedType {
    /// `Data` is stored as itself.
    public typealias PersistedType = Data
}
extension Date: _HasPersistedType {
    /// `Date` is stored as itself.
    public typealias PersistedType = Date
}
extension ObjectId: _HasPersistedType {
    /// `ObjectId` is stored as itself.
    public typealias PersistedType = ObjectId
}
extension UUID: _HasPersistedType {
    /// `UUID` is stored as itself.
    public typealias PersistedType = UUID
}
extension Decimal128: _HasPersistedType {
    /// `Decimal128` is stored as itself.
    public typealias PersistedType = Decimal128
}
extension AnyRealmValue: _HasPersistedType {
    /// `AnyRealmValue` is stored as itself.
    public typealias PersistedType = AnyRealmValue
}
extension Object: _HasPersistedType {
    /// `Object` is stored as itself.
    public typealias PersistedType = Object
}
extension Optional: _HasPersistedType where Wrapped: _HasPersistedType {
    /// An optional is stored as its wrapped type's stored type, or null.
    public typealias PersistedType = Wrapped.PersistedType?
}
extension List: _HasPersistedType {
    /// `List` is stored as itself.
    public typealias PersistedType = List
}
extension LinkingObjects: _HasPersistedType {
    /// `LinkingObjects` is stored as itself.
    public typealias PersistedType = LinkingObjects
}

/// A type whose values may be stored in a property, a collection or a query (RealmSwift's tag of
/// the storable types, used as a generic constraint: `where V: _RealmSchemaDiscoverable`).
public protocol _RealmSchemaDiscoverable {
    /// The property type values of this type are stored as.
    static var _rlmType: PropertyType { get }
    /// Whether a property of this type is optional.
    static var _rlmOptional: Bool { get }
}

extension _RealmSchemaDiscoverable {
    public static var _rlmType: PropertyType {
        if self is ObjectBase.Type { return .object }
        guard let kind = (self as? any _Persistable.Type)?._strataKind ?? (self as? any RealmCollectionValue.Type)?._strataElementKind else {
            strataTrap("\(self) is not a stored type")
        }
        return kind.collection == .linkingObjects ? .linkingObjects : PropertyType(core: kind.type)
    }
    public static var _rlmOptional: Bool {
        if self is ObjectBase.Type { return false }
        return ((self as? any _Persistable.Type)?._strataKind ?? (self as? any RealmCollectionValue.Type)?._strataElementKind)?.optional ?? false
    }
}

extension Bool: _RealmSchemaDiscoverable {}
extension Int: _RealmSchemaDiscoverable {}
extension Int8: _RealmSchemaDiscoverable {}
extension Int16: _RealmSchemaDiscoverable {}
extension Int32: _RealmSchemaDiscoverable {}
extension Int64: _RealmSchemaDiscoverable {}
extension Float: _RealmSchemaDiscoverable {}
extension Double: _RealmSchemaDiscoverable {}
extension String: _RealmSchemaDiscoverable {}
extension Data: _RealmSchemaDiscoverable {}
extension Date: _RealmSchemaDiscoverable {}
extension ObjectId: _RealmSchemaDiscoverable {}
extension UUID: _RealmSchemaDiscoverable {}
extension Decimal128: _RealmSchemaDiscoverable {}
extension AnyRealmValue: _RealmSchemaDiscoverable {}
extension ObjectBase: _RealmSchemaDiscoverable {}
extension Optional: _RealmSchemaDiscoverable where Wrapped: _RealmSchemaDiscoverable {}
extension List: _RealmSchemaDiscoverable where Element: _RealmSchemaDiscoverable {}
extension LinkingObjects: _RealmSchemaDiscoverable {}

/// Types `min`/`max` aggregate (through their `PersistedType`).
@_marker public protocol MinMaxType {}
extension Int: MinMaxType {}
extension Int8: MinMaxType {}
extension Int16: MinMaxType {}
extension Int32: MinMaxType {}
extension Int64: MinMaxType {}
extension Float: MinMaxType {}
extension Double: MinMaxType {}
extension Date: MinMaxType {}
extension Decimal128: MinMaxType {}
extension AnyRealmValue: MinMaxType {}
extension Optional: MinMaxType where Wrapped: MinMaxType {}

/// Types `sum`/`average` aggregate.
@_marker public protocol AddableType {}
extension Int: AddableType {}
extension Int8: AddableType {}
extension Int16: AddableType {}
extension Int32: AddableType {}
extension Int64: AddableType {}
extension Float: AddableType {}
extension Double: AddableType {}
extension Decimal128: AddableType {}
extension AnyRealmValue: AddableType {}
extension Optional: AddableType where Wrapped: AddableType {}

/// Types a collection of values sorts by (`sorted(ascending:)`, `distinct()`).
@_marker public protocol SortableType {}
extension AnyRealmValue: SortableType {}
extension Data: SortableType {}
extension Date: SortableType {}
extension Decimal128: SortableType {}
extension Double: SortableType {}
extension Float: SortableType {}
extension Int: SortableType {}
extension Int8: SortableType {}
extension Int16: SortableType {}
extension Int32: SortableType {}
extension Int64: SortableType {}
extension String: SortableType {}
extension Optional: SortableType where Wrapped: SortableType {}

/// Element types a collection sorts by key path (objects).
@_marker public protocol KeypathSortable {}
extension ObjectBase: KeypathSortable {}
