import Foundation
import Testing
@_spi(StrataCore) @testable import Strata

final class Reader: Object {
    @Persisted(primaryKey: true) var name = ""
    @Persisted var tags: MutableSet<String>
    @Persisted var scores: MutableSet<Int?>
    @Persisted var favorites: MutableSet<Dog>
}

@Suite("MutableSet: unique values and objects")
struct MutableSetTests {
    private func realm(_ dir: TempDir) throws -> Realm {
        try Realm(configuration: config(dir, types: [Reader.self, Dog.self, Person.self, Company.self]))
    }

    @Test func unmanagedSetsKeepEachElementOnce() {
        let s = MutableSet<String>()
        s.insert("a"); s.insert("b"); s.insert("a")
        #expect(s.count == 2 && s.contains("a") && !s.contains("z"))
        let t = MutableSet<String>()
        t.insert(objectsIn: ["b", "c"])
        #expect(s.intersects(t) && !s.isSubset(of: t))
        s.formUnion(t)
        #expect(Set(s) == ["a", "b", "c"])
        s.subtract(t)
        #expect(Array(s) == ["a"])
        s.formUnion(t); s.formIntersection(t)
        #expect(Set(s) == ["b", "c"] && s.isSubset(of: t))
        let u = MutableSet<String>()
        u.insert(objectsIn: ["c", "b"])
        #expect(s == u && MutableSet<String>() == MutableSet<String>() && s != MutableSet<String>()) // by content, unmanaged
        let l1 = List<Int>(), l2 = List<Int>()
        l1.append(objectsIn: [1, 2]); l2.append(objectsIn: [1, 2])
        #expect(l1 == l2 && l1.isEqual(l2))
    }

    @Test func collectionsKeptFromBeforeAddReadAndWriteTheRealmAfter() throws {
        let dir = TempDir()
        let realm = try realm(dir)
        let r = Reader(value: ["name": "ann", "tags": ["x", "y", "x"]])
        let tags = r.tags
        #expect(tags.realm == nil)
        try realm.write { realm.add(r) }
        #expect(tags.realm != nil && tags.count == 2)
        try realm.write { tags.insert("z") }
        #expect(Set(r.tags) == ["x", "y", "z"])
        // key-value coding as RealmSwift's (NSObject's `value(forKey:) as Any?` is a set)
        #expect((tags.value(forKey: "self") as Any?) as? Set<AnyHashable> == ["x", "y", "z"])
        #expect(Set((tags.value(forKey: "self") as [AnyObject]).compactMap { $0 as? String }) == ["x", "y", "z"])
    }

    @Test func managedSetsWriteTheFileAndQueryAsCollections() throws {
        let dir = TempDir()
        do {
            let realm = try realm(dir)
            let r = Reader(value: ["name": "ann", "tags": ["x", "y", "x"]])
            let rex = Dog(value: ["name": "rex"])
            try realm.write {
                realm.add(r)
                r.tags.insert("z")
                r.tags.insert("x")        // already there
                r.scores.insert(objectsIn: [1, nil, 1, 3])
                r.favorites.insert(rex)   // an unmanaged object is added
                r.favorites.insert(rex)
                realm.add(Reader(value: ["name": "bob", "tags": ["y"]]))
            }
            #expect(r.tags.count == 3 && r.tags.contains("z") && !r.tags.contains("w"))
            #expect(r.scores.count == 3 && r.scores.contains(nil) && r.favorites.count == 1)
            try realm.write { r.tags.remove("y"); r.tags.remove("not there") }
            #expect(Set(r.tags) == ["x", "z"])
            #expect(realm.schema["Reader"]?["tags"]?.isSet == true && realm.schema["Reader"]?["tags"]?.isArray == false)
        }
        let realm = try realm(dir)
        let readers = realm.objects(Reader.self)
        let ann = try #require(realm.object(ofType: Reader.self, forPrimaryKey: "ann"))
        #expect(Set(ann.tags) == ["x", "z"] && Set(ann.scores) == [1, nil, 3])
        #expect(readers.filter("ANY tags == 'y'").map(\.name) == ["bob"])
        #expect(readers.where { $0.tags.contains("x") }.map(\.name) == ["ann"])
        #expect(readers.where { $0.favorites.name == "rex" }.count == 1)
        #expect(readers.filter("tags.@count > 1").map(\.name) == ["ann"])
        #expect(ann.tags.sorted().map { $0 } == ["x", "z"] && ann.scores.max() == 3)
        // set algebra between managed sets
        let bob = try #require(realm.object(ofType: Reader.self, forPrimaryKey: "bob"))
        try realm.write { bob.tags.formUnion(ann.tags) }
        #expect(Set(bob.tags) == ["x", "y", "z"] && ann.tags.isSubset(of: bob.tags))
        try realm.write { bob.tags.formIntersection(ann.tags) }
        #expect(Set(bob.tags) == ["x", "z"])
        try realm.write { bob.tags.subtract(ann.tags) }
        #expect(bob.tags.isEmpty)
        #expect(try realm.instance.shared.db.verify() == ())
    }

    @Test func setsAreObservedLikeLists() throws {
        let dir = TempDir()
        let realm = try realm(dir)
        let r = Reader(value: ["name": "ann"])
        try realm.write { realm.add(r) }
        var changes: [String] = []
        let token = r.tags.observe { change in
            switch change {
            case .initial(let s): changes.append("initial \(s.count)")
            case .update(let s, let del, let ins, _): changes.append("update \(s.count) -\(del) +\(ins)")
            case .error(let e): Issue.record("\(e)")
            }
        }
        realm.refresh()
        try realm.write { r.tags.insert("a"); r.tags.insert("b") }
        try realm.write { r.tags.insert("a") } // no change
        try realm.write { r.tags.remove("a") }
        #expect(changes == ["initial 0", "update 2 -[] +[0, 1]", "update 1 -[0] +[]"])
        token.invalidate()
    }

    @Test func changingASetOutsideAWriteTraps() async throws {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let dir = TempDir()
            let realm = try! Realm(configuration: config(dir, types: [Reader.self, Dog.self, Person.self, Company.self]))
            let r = Reader(value: ["name": "ann"])
            try! realm.write { realm.add(r) }
            r.tags.insert("x")
        }
        let err = String(decoding: try #require(result).standardErrorContent, as: UTF8.self)
        #expect(err.contains("Reader.tags") && err.contains("write transaction"))
    }
}
