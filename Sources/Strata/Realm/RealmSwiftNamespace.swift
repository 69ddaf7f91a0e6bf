/// RealmSwift's module name as a namespace, so that code written against RealmSwift that
/// qualifies names with it (`RealmSwift.List<Dog>` beside SwiftUI's `List`,
/// `RealmSwift.SortDescriptor` beside Foundation's) compiles after `import RealmSwift` becomes
/// `import Strata`. Each name is Strata's own type.
public enum RealmSwift {
    public typealias Realm = Strata.Realm
    public typealias Object = Strata.Object
    public typealias EmbeddedObject = Strata.EmbeddedObject
    public typealias DynamicObject = Strata.DynamicObject
    public typealias List<Element: RealmCollectionValue> = Strata.List<Element>
    public typealias MutableSet<Element: RealmCollectionValue> = Strata.MutableSet<Element>
    public typealias Map<Key: _MapKey, Value: RealmCollectionValue> = Strata.Map<Key, Value>
    public typealias Results<Element: RealmCollectionValue> = Strata.Results<Element>
    public typealias LinkingObjects<Element: Strata.Object> = Strata.LinkingObjects<Element>
    public typealias SortDescriptor = Strata.SortDescriptor
    public typealias Property = Strata.Property
    public typealias ObjectSchema = Strata.ObjectSchema
    public typealias Schema = Strata.Schema
    public typealias Migration = Strata.Migration
    public typealias ObjectId = Strata.ObjectId
    public typealias Decimal128 = Strata.Decimal128
    public typealias AnyRealmValue = Strata.AnyRealmValue
    public typealias ThreadSafeReference<Confined: ThreadConfined> = Strata.ThreadSafeReference<Confined>
    public typealias NotificationToken = Strata.NotificationToken
}
