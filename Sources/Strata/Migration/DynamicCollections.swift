import Foundation

/// Objects of a Realm seen without their Swift classes (RealmSwift's `dynamicList`,
/// `dynamicMutableSet`, `dynamicMap`, and a DynamicObject's links and collections of links):
/// the same stored property, its objects handed out as DynamicObjects.
extension Object {
    /// The list of objects named `propertyName`, its elements as DynamicObjects. The object must
    /// be managed and the property a list (else a trap naming the class and property); reading
    /// an element of a list of values traps.
    public func dynamicList(_ propertyName: String) -> List<DynamicObject> {
        List(managed: dynamicCollection(propertyName, .list, "dynamicList"))
    }

    /// The set of objects named `propertyName`, its elements as DynamicObjects.
    public func dynamicMutableSet(_ propertyName: String) -> MutableSet<DynamicObject> {
        MutableSet(managed: dynamicCollection(propertyName, .set, "dynamicMutableSet"))
    }

    /// The map of objects named `propertyName`, its values as DynamicObjects.
    public func dynamicMap<Key: _MapKey>(_ propertyName: String) -> Map<Key, DynamicObject?> {
        Map(managed: dynamicCollection(propertyName, .map, "dynamicMap"))
    }

    /// Property `name` of this managed object, checked to be a collection of objects of `kind`.
    private func dynamicCollection(_ name: String, _ kind: _PersistedKind.Collection, _ what: String) -> _ManagedProperty {
        let className = Swift.type(of: self) == DynamicObject.self ? (self as! DynamicObject).className
                                                                   : Swift.type(of: self).className()
        guard let a = __accessor else {
            strataTrap("\(what)(\"\(name)\"): the '\(className)' is not managed by a Realm (only a managed object's collections can be seen dynamically)")
        }
        a.realm.checkThread("\(what)(\"\(name)\")")
        guard let i = a.info.classInfo.index(named: name) else {
            strataTrap("\(what)(\"\(name)\"): '\(a.info.name)' has no property '\(name)'")
        }
        let k = a.info.properties[i].kind
        guard k.collection == kind else { // (of objects to read its elements; any, to count them)
            strataTrap("\(what)(\"\(name)\"): '\(a.info.name).\(name)' is not a \(kind == .list ? "list" : kind == .set ? "set" : "map")")
        }
        return _ManagedProperty(object: self, index: i)
    }
}

extension DynamicObject {
    /// A managed DynamicObject's property: collections of links as collections of DynamicObjects
    /// (as RealmSwift's dynamic API hands them out), other values, links included (an object of
    /// its class, as RealmSwift's accessors give it), as `Object`'s subscript gives them.
    func dynamicValue(_ key: String) -> Any? {
        guard let a = __accessor, let i = a.info.classInfo.index(named: key) else { return super[key] }
        let k = a.info.properties[i].kind
        guard k.type == .link else { return super[key] }
        switch k.collection {
        case .list: return dynamicList(key)
        case .set: return dynamicMutableSet(key)
        case .map: return dynamicMap(key) as Map<String, DynamicObject?>
        default: return super[key]
        }
    }
}

extension AnyRealmValue {
    /// The object held, seen as a DynamicObject (a managed object: the same object; unmanaged:
    /// nil, as it has no class in a Realm); nil for other values.
    public var dynamicObject: DynamicObject? {
        guard case .object(let o) = self else { return nil }
        if let d = o as? DynamicObject { return d }
        guard let a = o.__accessor else { return nil }
        return a.realm.managedObject(DynamicObject.self, info: a.info, key: a.key)
    }
}
