import Foundation
import Testing
@_spi(StrataCore) @testable import Strata

final class Kennel: Object {
    @Persisted(primaryKey: true) var name = ""
    @Persisted var scores: Map<String, Int>
    @Persisted var notes: Map<String, String?>
    @Persisted var dogs: Map<String, Dog?>
}

@Suite("Map: values and objects by string key")
struct MapTests {
    private func realm(_ dir: TempDir) throws -> Realm {
        try Realm(configuration: config(dir, types: [Kennel.self, Dog.self, Person.self, Company.self]))
    }

    @Test func unmanagedMapsHoldKeysAndValues() {
        let m = Map<String, Int>()
        m["b"] = 2
        m["a"] = 1
        m.updateValue(3, forKey: "c")
        #expect(m.count == 3 && m["a"] == 1 && m["z"] == nil)
        #expect(m.keys == ["a", "b", "c"] && m.values == [1, 2, 3])
        m["b"] = nil
        #expect(m.keys == ["a", "c"] && m.max() == 3 && m.min() == 1 && m.sum() == 4)
        m.merge([(key: "a", value: 10), (key: "d", value: 4)]) { old, new in old + new }
        #expect(m["a"] == 11 && m["d"] == 4)
        #expect(m.contains { $0 == "d" && $1 == 4 } && !m.contains { $1 == 99 })
        #expect(m.map(\.key) == ["a", "c", "d"] && m.asKeyValueSequence().map(\.value) == [11, 3, 4])
        m.removeAll()
        #expect(m.count == 0)
        let o = Map<String, Int?>() // KVC: a nil value is a value of a map of optionals; nil removes
        o.setValue(NSNull(), forKey: "a")
        o.setValue(Int?.none as Any, forKey: "z")
        o.setValue(3, forKey: "b")
        #expect(o.count == 3 && o["a"] == .some(nil) && (o.value(forKey: "b") as? Int) == 3)
        #expect(o.value(forKey: "a") is NSNull && o.value(forKey: "nothing") == nil)
        o.setValue(nil, forKey: "a")
        #expect(o.count == 2 && o["a"] == nil)
        m.setValue(NSNull(), forKey: "c") // and no key in a map of values that cannot be nil
        #expect(m.count == 0)
    }

    @Test func managedMapsWriteTheFileAndQueryByKey() throws {
        let dir = TempDir()
        do {
            let realm = try realm(dir)
            let k = Kennel(value: ["name": "north", "scores": ["rex": 7, "ace": 3]])
            let rex = Dog(value: ["name": "rex", "age": 4])
            try realm.write {
                realm.add(k)
                k.scores["zed"] = 9
                k.scores["ace"] = 5          // replaced
                k.notes["rex"] = "good"
                k.notes["ace"] = nil          // removing a key it lacks
                k.notes.updateValue(nil, forKey: "odd") // a nil value is kept
                k.dogs["best"] = rex          // an unmanaged object is added
                realm.add(Kennel(value: ["name": "south", "scores": ["ace": 1]]))
            }
            #expect(k.scores.count == 3 && k.scores["ace"] == 5 && k.scores["nobody"] == nil)
            #expect(k.scores.keys == ["ace", "rex", "zed"] && k.scores.values == [5, 7, 9])
            #expect(k.notes.count == 2 && k.notes["odd"] == .some(nil) && k.notes["rex"] == "good")
            #expect(k.dogs["best"]??.name == "rex")
            #expect(realm.schema["Kennel"]?["scores"]?.isMap == true && realm.schema["Kennel"]?["scores"]?.isArray == false)
        }
        let realm = try realm(dir)
        let kennels = realm.objects(Kennel.self)
        let north = try #require(realm.object(ofType: Kennel.self, forPrimaryKey: "north"))
        #expect(north.scores.keys == ["ace", "rex", "zed"] && north.scores.sum() == 21 && north.scores.max() == 9)
        #expect(kennels.filter("scores['ace'] == 5").map(\.name) == ["north"])
        #expect(kennels.filter("ANY scores.@keys == 'zed'").map(\.name) == ["north"])
        #expect(kennels.where { $0.scores["ace"] == 1 }.map(\.name) == ["south"])
        #expect(kennels.where { $0.scores.keys == "rex" }.map(\.name) == ["north"])
        #expect(kennels.where { $0.scores.values > 8 }.map(\.name) == ["north"])
        #expect(kennels.where { $0.scores.contains(1) }.map(\.name) == ["south"])
        #expect(kennels.where { $0.scores.count == 3 }.map(\.name) == ["north"])
        #expect(kennels.where { $0.dogs.values.name == "rex" }.count == 1)
        #expect(north.scores.sorted().map { $0 } == [5, 7, 9])
        #expect(north.dogs.sorted(byKeyPath: "age").first??.name == "rex")
        try realm.write {
            north.scores.removeObject(for: "rex")
            north.scores.merge(["ace": 1, "new": 2].map { (key: $0.key, value: $0.value) }) { $0 + $1 }
        }
        #expect(north.scores.keys == ["ace", "new", "zed"] && north.scores["ace"] == 6)
        // a deleted object's key stays, with nil
        try realm.write { realm.delete(north.dogs["best"]!!) }
        #expect(north.dogs.count == 1 && north.dogs["best"] == .some(nil))
        #expect(try realm.instance.shared.db.verify() == ())
    }

    @Test func mapsAreObservedByKey() throws {
        let dir = TempDir()
        let realm = try realm(dir)
        let k = Kennel(value: ["name": "north"])
        try realm.write { realm.add(k) }
        var changes: [String] = []
        let token = k.scores.observe { change in
            switch change {
            case .initial(let m): changes.append("initial \(m.count)")
            case .update(let m, let del, let ins, let mod): changes.append("update \(m.count) -\(del) +\(ins) ~\(mod)")
            case .error(let e): Issue.record("\(e)")
            }
        }
        realm.refresh()
        try realm.write { k.scores["a"] = 1; k.scores["b"] = 2 }
        try realm.write { k.scores["a"] = 1 } // no change
        try realm.write { k.scores["a"] = 5; k.scores["b"] = nil; k.scores["c"] = 3 }
        #expect(changes == ["initial 0", "update 2 -[] +[\"a\", \"b\"] ~[]", "update 2 -[\"b\"] +[\"c\"] ~[\"a\"]"])
        token.invalidate()
    }

    @Test func badKeysTrapNamingTheMap() async throws {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let dir = TempDir()
            let realm = try! Realm(configuration: config(dir, types: [Kennel.self, Dog.self, Person.self, Company.self]))
            let k = Kennel(value: ["name": "north"])
            try! realm.write {
                realm.add(k)
                k.scores["a.b"] = 1
            }
        }
        let err = String(decoding: try #require(result).standardErrorContent, as: UTF8.self)
        #expect(err.contains("Kennel.scores") && err.contains("'.'"))
    }

    @Test func changingAMapOutsideAWriteTraps() async throws {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let dir = TempDir()
            let realm = try! Realm(configuration: config(dir, types: [Kennel.self, Dog.self, Person.self, Company.self]))
            let k = Kennel(value: ["name": "north"])
            try! realm.write { realm.add(k) }
            k.scores["x"] = 1
        }
        let err = String(decoding: try #require(result).standardErrorContent, as: UTF8.self)
        #expect(err.contains("Kennel.scores") && err.contains("write transaction"))
    }
}

final class Shelf: Object {
    @Persisted var item: AnyRealmValue
    @Persisted var items: List<AnyRealmValue>
    @Persisted var byName: Map<String, AnyRealmValue>
}

@Suite("AnyRealmValue.object: a mixed value links to an object of any class")
struct AnyRealmValueObjectTests {
    @Test func objectsOfAnyClassAreHeldAndLetGoWhenDeleted() throws {
        let dir = TempDir()
        let realm = try Realm(configuration: config(dir, types: [Shelf.self, Kennel.self, Dog.self, Person.self, Company.self]))
        let shelf = Shelf()
        let rex = Dog(value: ["name": "rex"])
        try realm.write {
            realm.add(shelf)
            shelf.item = .object(rex)                       // an unmanaged object is added
            shelf.items.append(objectsIn: [.object(Kennel(value: ["name": "north"])), .int(3), .object(rex)])
            shelf.byName["dog"] = .object(rex)
        }
        #expect((shelf.item.object(Dog.self))?.name == "rex")
        #expect(shelf.items[0].object(Kennel.self)?.name == "north" && shelf.items[1] == .int(3))
        #expect(shelf.byName["dog"]?.object(Dog.self)?.isSameObject(as: rex) == true)
        #expect(realm.objects(Shelf.self).filter("item == %@", rex).count == 1)
        #expect(realm.objects(Shelf.self).filter("item == %@", AnyRealmValue.object(rex)).count == 1)
        #expect(rex.realm != nil && realm.objects(Dog.self).count == 1)
        try realm.write { realm.delete(rex) }
        #expect(shelf.item == .none && shelf.items.count == 3 && shelf.items[2] == .none)
        #expect(shelf.byName["dog"] == .some(AnyRealmValue.none))
        #expect(try realm.instance.shared.db.verify() == ())
        // sums of mixed values: Decimal128, as realm-core's; an empty map's is the integer 0 and
        // an empty list's a Decimal128 0, as RealmSwift reads them
        let empty = Shelf()
        try realm.write { realm.add(empty) }
        #expect(empty.byName.sum() == .int(0) && empty.items.sum().intValue == nil)
        try realm.write { empty.items.append(objectsIn: [.int(2), .double(0.5)]); empty.byName["a"] = .int(3) }
        #expect(empty.items.sum() == .decimal128(Decimal128(2.5)) && empty.byName.sum() == .decimal128(Decimal128(3)))
        #expect(shelf.items.sum() == .decimal128(Decimal128(3))) // (an object counts for nothing)
    }
}
