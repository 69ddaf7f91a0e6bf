/// RealmSwift's module name as a namespace, so that code written against RealmSwift that
/// qualifies names with it (`RealmSwift.List<Dog>` beside SwiftUI's `List`,
/// `RealmSwift.SortDescriptor` beside Foundation's) compiles after `import RealmSwift` becomes
/// `import Strata`. Each name is Strata's own type.
public enum RealmSwift {
    /// `RealmSwift.Realm` is Strata's ``Realm``.
    public typealias Realm = Strata.Realm
    /// `RealmSwift.Object` is Strata's ``Object``.
    public typealias Object = Strata.Object
    /// `RealmSwift.EmbeddedObject` is Strata's ``EmbeddedObject``.
    public typealias EmbeddedObject = Strata.EmbeddedObject
    /// `RealmSwift.DynamicObject` is Strata's ``DynamicObject``.
    public typealias DynamicObject = Strata.DynamicObject
    /// `RealmSwift.List` is Strata's ``List``.
    public typealias List<Element: RealmCollectionValue> = Strata.List<Element>
    /// `RealmSwift.MutableSet` is Strata's ``MutableSet``.
    public typealias MutableSet<Element: RealmCollectionValue> = Strata.MutableSet<Element>
    /// `RealmSwift.Map` is Strata's ``Map``.
    public typealias Map<Key: _MapKey, Value: RealmCollectionValue> = Strata.Map<Key, Value>
    /// `RealmSwift.Results` is Strata's ``Results``.
    public typealias Results<Element: RealmCollectionValue> = Strata.Results<Element>
    /// `RealmSwift.LinkingObjects` is Strata's ``LinkingObjects``.
    public typealias LinkingObjects<Element: Strata.Object> = Strata.LinkingObjects<Element>
    /// `RealmSwift.SortDescriptor` is Strata's ``SortDescriptor``.
    public typealias SortDescriptor = Strata.SortDescriptor
    /// `RealmSwift.Property` is Strata's ``Property``.
    public typealias Property = Strata.Property
    /// `RealmSwift.ObjectSchema` is Strata's ``ObjectSchema``.
    public typealias ObjectSchema = Strata.ObjectSchema
    /// `RealmSwift.Schema` is Strata's ``Schema``.
    public typealias Schema = Strata.Schema
    /// `RealmSwift.Migration` is Strata's ``Migration``.
    public typealias Migration = Strata.Migration
    /// `RealmSwift.ObjectId` is Strata's ``ObjectId``.
    public typealias ObjectId = Strata.ObjectId
    /// `RealmSwift.Decimal128` is Strata's ``Decimal128``.
    public typealias Decimal128 = Strata.Decimal128
    /// `RealmSwift.AnyRealmValue` is Strata's ``AnyRealmValue``.
    public typealias AnyRealmValue = Strata.AnyRealmValue
    /// `RealmSwift.ThreadSafeReference` is Strata's ``ThreadSafeReference``.
    public typealias ThreadSafeReference<Confined: ThreadConfined> = Strata.ThreadSafeReference<Confined>
    /// `RealmSwift.NotificationToken` is Strata's ``NotificationToken``.
    public typealias NotificationToken = Strata.NotificationToken
}
