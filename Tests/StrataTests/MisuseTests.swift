import Foundation
import Testing
@_spi(StrataCore) @testable import Strata

final class Orphan: Object {
    @Persisted var name = ""
    @Persisted var friend: Lonely?
}

final class Lonely: Object {
    @Persisted var name = ""
}

/// A later version of Lonely (the same class name, one more property).
enum V2 {
    final class Lonely: Object {
        @Persisted var name = ""
        @Persisted var age = 0
    }
}

@Suite("Objects: bad input is an error that names it")
struct BadInputTests {
    @Test func aLinkToAClassMissingFromObjectTypesNamesBoth() throws {
        let dir = TempDir()
        do {
            _ = try Realm(configuration: config(dir, types: [Orphan.self]))
            Issue.record("opened a Realm whose class links outside its objectTypes")
        } catch let e as StrataError {
            #expect(e.message.contains("Orphan.friend") && e.message.contains("'Lonely'"))
        }
    }

    @Test func aReadOnlyRealmReadsAndRefusesEveryWrite() throws {
        let dir = TempDir()
        do {
            let realm = try Realm(configuration: config(dir))
            try realm.write { realm.add(Dog(value: ["name": "rex"])) }
        }
        var cfg = config(dir)
        cfg.readOnly = true
        let ro = try Realm(configuration: cfg)
        #expect(ro.objects(Dog.self).first?.name == "rex")
        #expect(throws: StrataError.self) { try ro.write { ro.add(Dog()) } }
    }

    @Test func beginningAWriteInAReadOnlyRealmOrTwiceTraps() async throws {
        let readOnly = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let dir = TempDir()
            var cfg = config(dir)
            _ = try! Realm(configuration: cfg)
            cfg.readOnly = true
            let ro = try! Realm(configuration: cfg)
            ro.beginWrite()
        }
        #expect(String(decoding: try #require(readOnly).standardErrorContent, as: UTF8.self).contains("read-only"))
        let twice = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let dir = TempDir()
            let realm = try! Realm(configuration: config(dir))
            realm.beginWrite()
            realm.beginWrite()
        }
        #expect(String(decoding: try #require(twice).standardErrorContent, as: UTF8.self).contains("already in a write transaction"))
    }

    @Test func anInvalidatedRealmReadsAgainButItsOldObjectsStayInvalid() throws {
        let dir = TempDir()
        let realm = try Realm(configuration: config(dir))
        let dog = Dog(value: ["name": "old"])
        try realm.write { realm.add(dog) }
        realm.beginWrite()
        realm.invalidate()                       // cancels the write
        #expect(!realm.isInWriteTransaction && dog.isInvalidated)
        try realm.write { realm.add(Dog(value: ["name": "new"])) }
        #expect(realm.objects(Dog.self).count == 2)
        #expect(try Realm(configuration: config(dir)) == realm) // the thread's Realm is the new one
    }

    @Test func aThreadThatEndsInAWriteRollsItBackAndFreesTheWriter() throws {
        let dir = TempDir()
        let cfg = config(dir)
        let t = Thread {
            let realm = try! Realm(configuration: cfg)
            realm.beginWrite()
            realm.add(Dog(value: ["name": "never committed"]))
        } // the thread ends with its write open
        t.start()
        while !t.isFinished { Thread.sleep(forTimeInterval: 0.01) }
        Thread.sleep(forTimeInterval: 0.05) // the thread's dictionary goes as the thread exits
        let realm = try Realm(configuration: cfg)
        try realm.write { realm.add(Dog(value: ["name": "mine"])) } // the writer lock is free
        #expect(realm.objects(Dog.self).map(\.name) == ["mine"])
    }

    @Test func aWriteBegunThroughAValueNobodyKeepsGoesOnInTheNextValue() throws {
        let dir = TempDir()
        try Realm(configuration: config(dir)).beginWrite()
        try Realm(configuration: config(dir)).add(Dog(value: ["name": "kept"]))
        try Realm(configuration: config(dir)).commitWrite()
        #expect(try Realm(configuration: config(dir)).objects(Dog.self).count == 1)
    }

    @Test func aSchemaChangeWithoutANewVersionNeedsAMigration() throws {
        let dir = TempDir()
        do { _ = try Realm(configuration: config(dir, types: [Lonely.self])) }
        // Adding a class needs no migration.
        do { _ = try Realm(configuration: config(dir, types: [Lonely.self, Book.self])) }
        // The same class with another property, same schema version: refused, naming it.
        do {
            _ = try Realm(configuration: config(dir, types: [V2.Lonely.self, Book.self]))
            Issue.record("a changed class opened without a migration")
        } catch let e as StrataError {
            #expect(e.message.contains("migration is required") && e.message.contains("Lonely.age"))
        }
        // A higher schema version migrates: the property is added, the block runs.
        let ran = Locked<UInt64>(99)
        var cfg = config(dir, types: [V2.Lonely.self, Book.self], version: 1)
        cfg.migrationBlock = { _, old in ran.set(old) }
        let v1 = try Realm(configuration: cfg)
        #expect(ran.get() == 0)
        try v1.write { v1.add(V2.Lonely(value: ["name": "x", "age": 3])) }
        #expect(v1.objects(V2.Lonely.self)[0].age == 3)
        // A lower version than the file's is refused.
        #expect(throws: StrataError.self) {
            _ = try Realm(configuration: config(dir, "test.realm", types: [V2.Lonely.self, Book.self], version: 0))
        }
    }

    @Test func wrongValueTypesInUntypedInputTrap() async {
        await #expect(processExitsWith: .failure) {
            _ = Dog(value: ["name": 42])
        }
        await #expect(processExitsWith: .failure) {
            _ = Dog(value: ["a", "b", "c", "d", "e"])
        }
    }

    @Test func changingAManagedObjectOutsideAWriteTraps() async throws {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let realm = try! Realm(configuration: Realm.Configuration(
                inMemoryIdentifier: "outside-write", objectTypes: [Company.self, Person.self, Dog.self]))
            let dog = Dog()
            try! realm.write { realm.add(dog) }
            dog.name = "changed outside a write"
        }
        let stderr = String(decoding: try #require(result).standardErrorContent, as: UTF8.self)
        #expect(stderr.contains("outside of a write transaction") && stderr.contains("Dog.name"))
    }

    @Test func touchingADeletedObjectTraps() async throws {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let realm = try! Realm(configuration: Realm.Configuration(
                inMemoryIdentifier: "deleted", objectTypes: [Company.self, Person.self, Dog.self]))
            let dog = Dog()
            try! realm.write { realm.add(dog) }
            try! realm.write { realm.delete(dog) }
            _ = dog.name
        }
        let stderr = String(decoding: try #require(result).standardErrorContent, as: UTF8.self)
        #expect(stderr.contains("deleted or invalidated") && stderr.contains("Dog.name"))
    }

    @Test func aRealmUsedFromAnotherThreadTraps() async throws {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let realm = try! Realm(configuration: Realm.Configuration(
                inMemoryIdentifier: "threads", objectTypes: [Company.self, Person.self, Dog.self]))
            let added = Dog()
            try! realm.write { realm.add(added) }
            let dog = Unchecked(added) // (misuse on purpose)
            let done = DispatchSemaphore(value: 0)
            let t = Thread {
                _ = dog.value.name
                done.signal()
            }
            t.start()
            _ = done.wait(timeout: .now() + 10)
        }
        let stderr = String(decoding: try #require(result).standardErrorContent, as: UTF8.self)
        #expect(stderr.contains("incorrect thread") && stderr.contains("Dog.name"))
    }
}

@Suite("Realms: threads, snapshots and the class list")
struct RealmThreadTests {
    @Test func aReaderSeesTheOldNameUntilTheWriterCommits() throws {
        let dir = TempDir()
        let cfg = config(dir)
        let realm = try Realm(configuration: cfg)
        let p = Person(value: ["name": "张三"])
        try realm.write { realm.add(p) }
        let id = p.id
        let inWrite = DispatchSemaphore(value: 0), readDone = DispatchSemaphore(value: 0)
        let writer = Thread {
            let r = try! Realm(configuration: cfg)
            try! r.write {
                r.object(ofType: Person.self, forPrimaryKey: id)!.name = "张三丰"
                inWrite.signal()
                readDone.wait()                 // a long write: the reader reads meanwhile
            }
            inWrite.signal()
        }
        writer.start()
        inWrite.wait()
        realm.refresh()
        #expect(p.name == "张三")                // not committed yet
        readDone.signal()
        inWrite.wait()                           // committed
        #expect(p.name == "张三")                // this Realm's snapshot has not moved
        #expect(realm.refresh())
        #expect(p.name == "张三丰")
    }

    @Test func oneRealmPerConfigurationAndThread() throws {
        let dir = TempDir()
        let a = try Realm(configuration: config(dir))
        let b = try Realm(configuration: config(dir))
        #expect(a == b)
        a.beginWrite()
        #expect(b.isInWriteTransaction)         // the same Realm: the write of one is the other's
        b.add(Dog(value: ["name": "shared"]))
        try a.commitWrite()
        #expect(b.objects(Dog.self).count == 1)
    }

    @Test func withoutObjectTypesTheLinkedClassesAreFound() throws {
        let dir = TempDir()
        let realm = try Realm(configuration: Realm.Configuration(fileURL: dir.file()))
        let names = Set(realm.schema.objectSchema.map(\.className))
        #expect(names.isSuperset(of: ["Company", "Person", "Dog", "Book", "Message", "AllTypes", "Orphan", "Lonely"]))
        #expect(realm.schema["Person"]?.primaryKeyProperty?.name == "id")
        #expect(realm.schema["Dog"]?["owners"]?.type == .linkingObjects)
        // linking objects are computed properties, as RealmSwift lists them
        #expect(realm.schema["Dog"]?.computedProperties.map(\.name) == ["owners"])
        #expect(realm.schema["Dog"]?.properties.map(\.name) == ["name", "color", "age"])
        try realm.write { realm.add(Person(value: ["name": "王五"])) }
        #expect(realm.objects(Person.self).count == 1)
    }
}
