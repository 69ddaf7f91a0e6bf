import Foundation

// Foundation's reference types that RealmSwift's older models declare (`@objc dynamic var
// name: NSString?`): optional properties stored as their Swift counterparts (String, Data,
// Date). Reads hand out new instances.

extension NSString: _OptionalPersistable {
    public static var _strataKindWhenOptional: _PersistedKind { _PersistedKind(.string, optional: true) }
    public static func _strataFromStored(_ v: _Stored, _ at: _ManagedProperty) -> Self? {
        guard case .string(let s) = v.value else { return nil }
        return NSString(string: s) as? Self
    }
    public static func _strataToStored(_ value: NSString, _ at: _ManagedProperty) -> _Stored {
        _Stored(.string(String(value)))
    }
}

extension NSData: _OptionalPersistable {
    public static var _strataKindWhenOptional: _PersistedKind { _PersistedKind(.binary, optional: true) }
    public static func _strataFromStored(_ v: _Stored, _ at: _ManagedProperty) -> Self? {
        guard case .data(let d) = v.value else { return nil }
        return NSData(data: d) as? Self
    }
    public static func _strataToStored(_ value: NSData, _ at: _ManagedProperty) -> _Stored {
        _Stored(.data(Data(referencing: value)))
    }
}

extension NSDate: _OptionalPersistable {
    public static var _strataKindWhenOptional: _PersistedKind { _PersistedKind(.timestamp, optional: true) }
    public static func _strataFromStored(_ v: _Stored, _ at: _ManagedProperty) -> Self? {
        guard case .timestamp = v.value else { return nil }
        return NSDate(timeIntervalSinceReferenceDate: Date(_strata: v).timeIntervalSinceReferenceDate) as? Self
    }
    public static func _strataToStored(_ value: NSDate, _ at: _ManagedProperty) -> _Stored {
        Date(timeIntervalSinceReferenceDate: value.timeIntervalSinceReferenceDate)._strata
    }
}

extension NSString: _HasPersistedType {
    /// `NSString` is stored as `String`.
    public typealias PersistedType = String
}
extension NSData: _HasPersistedType {
    /// `NSData` is stored as `Data`.
    public typealias PersistedType = Data
}
extension NSDate: _HasPersistedType {
    /// `NSDate` is stored as `Date`.
    public typealias PersistedType = Date
}
extension NSString: _RealmSchemaDiscoverable {}
extension NSData: _RealmSchemaDiscoverable {}
extension NSDate: _RealmSchemaDiscoverable {}
