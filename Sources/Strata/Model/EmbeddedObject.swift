import Foundation

/// A model class whose objects are owned by one parent object, as RealmSwift declares it:
///
/// ```swift
/// class Address: EmbeddedObject { @Persisted var city = "" }
/// class Person: Object { @Persisted var home: Address?; @Persisted var past: List<Address> }
/// try realm.write { person.home = Address(value: ["city": "Paris"]) }
/// realm.objects(Person.self).where { $0.home.city == "Paris" }
/// ```
///
/// An embedded object is created by assigning an unmanaged one to a parent's link, or adding it
/// to a parent's `List` or `Map`; it is deleted with its parent, or when the parent lets go of
/// it (the link overwritten, the element removed). It has no primary key. `realm.add`,
/// `realm.create` and `realm.objects` on an embedded class trap, as do linking a managed
/// embedded object from a second parent (the message names the class and the parent).
///
/// Strata's `EmbeddedObject` is an `Object` subclass (RealmSwift's derives from its object base
/// directly): code that compiles with RealmSwift compiles unchanged, and the calls RealmSwift
/// refuses at compile time (`realm.add(address)`) trap at run time instead.
open class EmbeddedObject: Object {}
