import Foundation
import Testing
@_spi(StrataCore) @testable import Strata

final class Street: EmbeddedObject {
    @Persisted var name = ""
    @Persisted var number = 0
}

final class Address: EmbeddedObject {
    @Persisted var city = ""
    @Persisted var street: Street?
}

final class Resident: Object {
    @Persisted(primaryKey: true) var name = ""
    @Persisted var home: Address?
    @Persisted var past: List<Address>
    @Persisted var byName: Map<String, Address?>
}

final class Leaf: EmbeddedObject {
    @Persisted var value = 0
}

final class Branch: EmbeddedObject {
    @Persisted var value = 0
    @Persisted var child: Leaf?
    @Persisted var children: List<Leaf>
    @Persisted(originProperty: "branch") var trees: LinkingObjects<Tree>
}

final class Tree: Object {
    @Persisted var branch: Branch?
    @Persisted var branches: List<Branch>
    @Persisted var named: Map<String, Branch?>
}

@Suite("EmbeddedObject: owned by one parent")
struct EmbeddedObjectTests {
    private func realm(_ dir: TempDir) throws -> Realm {
        try Realm(configuration: config(dir, types: [Resident.self, Address.self, Street.self]))
    }

    private func count(_ realm: Realm, _ table: String) throws -> Int {
        try realm.instance.table(realm.instance.tableInfo(table == "Address" ? Address.self : Street.self)).keys().count
    }

    @Test func embeddedObjectsAreCreatedThroughTheirParentAndDeletedWithIt() throws {
        let dir = TempDir()
        let realm = try realm(dir)
        #expect(realm.schema["Address"]?.isEmbedded == true && realm.schema["Resident"]?.isEmbedded == false)
        let ann = Resident(value: ["name": "ann", "home": ["city": "Paris", "street": ["name": "Rivoli", "number": 1]]])
        try realm.write {
            realm.add(ann)
            ann.past.append(Address(value: ["city": "Lyon"]))
            ann.past.append(Address(value: ["city": "Nice"]))
            ann.byName["work"] = Address(value: ["city": "Lille"])
            realm.create(Resident.self, value: ["name": "bob", "home": ["city": "Paris"]])
        }
        #expect(ann.home?.city == "Paris" && ann.home?.street?.number == 1 && ann.past.map(\.city) == ["Lyon", "Nice"])
        #expect(ann.byName["work"]??.city == "Lille" && ann.home?.realm != nil)
        #expect(try count(realm, "Address") == 5)
        #expect(try count(realm, "Street") == 1)
        let residents = realm.objects(Resident.self)
        #expect(residents.where { $0.home.city == "Paris" }.count == 2)
        #expect(residents.filter("ANY past.city == 'Nice'").map(\.name) == ["ann"])
        #expect(residents.where { $0.home.street.name == "Rivoli" }.map(\.name) == ["ann"])
        // letting go deletes: overwrite (with what it owns), removal from a list or map, the parent
        try realm.write { ann.home = Address(value: ["city": "Metz"]) }
        #expect(try count(realm, "Address") == 5)
        #expect(try count(realm, "Street") == 0)
        try realm.write { ann.past.remove(at: 0) }
        #expect(try count(realm, "Address") == 4)
        try realm.write { ann.byName["work"] = nil }
        #expect(try count(realm, "Address") == 3)
        try realm.write { realm.delete(ann) }
        #expect(try count(realm, "Address") == 1)
        #expect(try realm.instance.shared.db.verify() == ())
    }

    @Test func aManagedEmbeddedObjectIsCopiedByCreate() throws {
        let dir = TempDir()
        let realm = try realm(dir)
        try realm.write { realm.add(Resident(value: ["name": "ann", "home": ["city": "Paris"]])) }
        let ann = try #require(realm.object(ofType: Resident.self, forPrimaryKey: "ann"))
        try realm.write { realm.create(Resident.self, value: ["name": "bob", "home": ann.home!]) }
        #expect(try count(realm, "Address") == 2)
        #expect(realm.object(ofType: Resident.self, forPrimaryKey: "bob")?.home?.city == "Paris")
    }

    @Test func createCopiesANestedTreeOfEmbeddedObjects() throws {
        let dir = TempDir()
        let realm = try Realm(configuration: config(dir, types: [Tree.self, Branch.self, Leaf.self]))
        realm.beginWrite()
        let tree = realm.create(Tree.self, value: [
            "branch": ["value": 5, "child": ["value": 6], "children": [[7], [8]]] as [String: Any],
            "branches": [[9], [10]], "named": ["x": [11]]])
        let copy = realm.create(Tree.self, value: tree)
        #expect(copy.branch?.value == 5 && copy.branch?.child?.value == 6)
        #expect(copy.branch?.children.map(\.value) == [7, 8] && copy.branches.map(\.value) == [9, 10])
        #expect(copy.named["x"]??.value == 11 && tree.branches.map(\.value) == [9, 10])
        #expect(copy.branch?.trees.count == 1)
        try realm.commitWrite()
        #expect(try realm.instance.shared.db.verify() == ())
    }

    @Test func anUpdateByPrimaryKeyUpdatesEmbeddedObjectsInPlace() throws {
        let dir = TempDir()
        let realm = try realm(dir)
        let first = Resident(value: ["name": "ann", "home": ["city": "Paris"], "past": [["Lyon"], ["Nice"]]])
        let second = Resident(value: ["name": "ann", "home": ["city": "Metz"], "past": [["Lille"]]])
        let home = try #require(first.home)
        let past0 = first.past[0]
        try realm.write {
            realm.add(first)
            realm.add(second, update: .modified)
        }
        // the embedded objects already there took the new values (RealmSwift's update in place)
        #expect(home.isInvalidated == false && home.city == "Metz" && second.home?.city == "Metz")
        #expect(past0.city == "Lille" && first.past.map(\.city) == ["Lille"] && second.isSameObject(as: first))
        #expect(try count(realm, "Address") == 2)
        // .all replaces them: the old ones are deleted
        let third = Resident(value: ["name": "ann", "home": ["city": "Brest"]])
        try realm.write { realm.add(third, update: .all) }
        #expect(home.isInvalidated && third.home?.city == "Brest" && first.past.isEmpty)
        #expect(try count(realm, "Address") == 1)
        #expect(try realm.instance.shared.db.verify() == ())
    }

    @Test func aSecondParentTrapsNamingTheClass() async throws {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let dir = TempDir()
            let realm = try! Realm(configuration: config(dir, types: [Resident.self, Address.self, Street.self]))
            try! realm.write {
                let ann = Resident(value: ["name": "ann", "home": ["city": "Paris"]])
                realm.add(ann)
                let bob = Resident(value: ["name": "bob"])
                realm.add(bob)
                bob.home = ann.home
            }
        }
        let err = String(decoding: try #require(result).standardErrorContent, as: UTF8.self)
        #expect(err.contains("Address") && err.contains("already has a parent"))
    }

    @Test func addingAnEmbeddedObjectOnItsOwnTraps() async throws {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let dir = TempDir()
            let realm = try! Realm(configuration: config(dir, types: [Resident.self, Address.self, Street.self]))
            try! realm.write { realm.add(Address()) }
        }
        let err = String(decoding: try #require(result).standardErrorContent, as: UTF8.self)
        #expect(err.contains("'Address' is an embedded class"))
    }

    @Test func queryingAnEmbeddedClassOnItsOwnTraps() async throws {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let dir = TempDir()
            let realm = try! Realm(configuration: config(dir, types: [Resident.self, Address.self, Street.self]))
            _ = realm.objects(Address.self)
        }
        let err = String(decoding: try #require(result).standardErrorContent, as: UTF8.self)
        #expect(err.contains("objects(Address)"))
    }
}
