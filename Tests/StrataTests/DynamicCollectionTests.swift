import Foundation
import Testing
@_spi(StrataCore) @testable import Strata

@Suite("DynamicObject: objects and their links seen without their classes")
struct DynamicCollectionTests {
    private func realm(_ dir: TempDir) throws -> Realm {
        let realm = try Realm(configuration: config(dir, types: [Person.self, Dog.self, Company.self, Kennel.self,
                                                                 Reader.self, AllTypes.self]))
        try realm.write {
            let rex = realm.create(Dog.self, value: ["name": "Rex", "age": 3])
            let zoe = realm.create(Dog.self, value: ["name": "Zoë", "age": 5])
            let ann = realm.create(Person.self, value: ["id": "ann", "name": "Ann", "dogs": [rex, zoe]])
            ann.company = realm.create(Company.self, value: ["name": "Acme"])
            let k = realm.create(Kennel.self, value: ["name": "north"])
            k.dogs["first"] = rex
            let r = realm.create(Reader.self, value: ["name": "r"])
            r.favorites.insert(zoe)
            realm.create(AllTypes.self).any = .object(rex)
        }
        return realm
    }

    @Test func collectionsOfLinksAreSeenAsDynamicObjects() throws {
        let dir = TempDir()
        let realm = try realm(dir)
        let ann = try #require(realm.object(ofType: Person.self, forPrimaryKey: "ann"))
        let dogs = ann.dynamicList("dogs")
        #expect(dogs.count == 2 && dogs.map { $0["name"] as? String } == ["Rex", "Zoë"])
        #expect(dogs[0].className == "Dog" && (dogs.last?.age as? Int) == 5)
        let kennel = try #require(realm.object(ofType: Kennel.self, forPrimaryKey: "north"))
        let byName: Map<String, DynamicObject?> = kennel.dynamicMap("dogs")
        #expect(byName.count == 1 && (byName["first"]??["name"] as? String) == "Rex")
        let reader = try #require(realm.object(ofType: Reader.self, forPrimaryKey: "r"))
        #expect(reader.dynamicMutableSet("favorites").map { $0["name"] as? String } == ["Zoë"])
        // a dynamic object's own links and lists are dynamic too
        let dynamicAnn = try #require(realm.dynamicObject(ofType: "Person", forPrimaryKey: "ann"))
        #expect((dynamicAnn["dogs"] as? List<DynamicObject>)?.count == 2)
        #expect((dynamicAnn.company as? Company)?.name == "Acme") // a link: an object of its class
        #expect(dynamicAnn.dynamicList("dogs").first?.className == "Dog")
        // changes through a dynamic list reach the typed one
        let rex = try #require(dogs.first)
        try realm.write { dogs.append(rex); rex["age"] = 4 }
        #expect(ann.dogs.count == 3 && ann.dogs[2].age == 4)
    }

    @Test func anyRealmValueHandsItsObjectOutDynamically() throws {
        let dir = TempDir()
        let realm = try realm(dir)
        let holder = try #require(realm.objects(AllTypes.self).first)
        let dog = try #require(holder.any.dynamicObject)
        #expect(dog.className == "Dog" && dog["name"] as? String == "Rex")
        try realm.write { dog.setValue(9, forUndefinedKey: "age") }
        #expect(dog.value(forUndefinedKey: "age") as? Int == 9)
        #expect(realm.objects(Dog.self).filter("name == 'Rex'").first?.age == 9)
        #expect(AnyRealmValue.int(1).dynamicObject == nil && AnyRealmValue.object(Dog()).dynamicObject == nil)
    }

    @Test func misuseTrapsNamingTheProperty() async {
        await #expect(processExitsWith: .failure) {
            let dir = TempDir()
            let realm = try! Realm(configuration: config(dir, types: [Person.self, Dog.self, Company.self]))
            let p = try! realm.write { realm.create(Person.self, value: ["name": "x"]) }
            _ = p.dynamicList("name") // not a list of objects
        }
        await #expect(processExitsWith: .failure) {
            _ = Person().dynamicList("dogs") // unmanaged
        }
    }
}
