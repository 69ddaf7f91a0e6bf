import Foundation
import Testing
@_spi(StrataCore) @testable import Strata

final class SumBox: @unchecked Sendable {
    private let lock = NSLock()
    private var values: [Int] = []
    func add(_ v: Int) { lock.lock(); values.append(v); lock.unlock() }
    var all: [Int] { lock.lock(); defer { lock.unlock() }; return values }
}

@Suite("Frozen objects and thread-safe references")
struct FrozenTests {
    func dogs(_ realm: Realm, _ n: Int) throws {
        try realm.write {
            for i in 0..<n { realm.add(Dog(value: ["name": "狗\(i)", "age": i % 10, "color": i % 2 == 0 ? "白色" : "黑色"])) }
        }
    }

    @Test func frozenThingsKeepTheirValuesWhileOthersCommit() throws {
        let dir = TempDir()
        let realm = try Realm(configuration: config(dir))
        try dogs(realm, 10)
        let zhang = Person(value: ["name": "张三"])
        try realm.write { realm.add(zhang); zhang.dogs.append(objectsIn: realm.objects(Dog.self).prefix(3)) }
        let white = realm.objects(Dog.self).filter("color == '白色'").sorted(byKeyPath: "name")
        let frozenWhite = white.freeze()
        let frozenZhang = zhang.freeze()
        let frozenDogs = zhang.dogs.freeze()
        let frozenRealm = realm.freeze()
        #expect(frozenWhite.isFrozen && frozenZhang.isFrozen && frozenDogs.isFrozen && frozenRealm.isFrozen)
        #expect(!white.isFrozen && !zhang.isFrozen && !realm.isFrozen)
        #expect(frozenZhang.freeze() === frozenZhang)
        try realm.write {
            zhang.name = "张三丰"
            zhang.dogs.removeAll()
            for d in Array(white) { d.color = "花色" }
            realm.add(Dog(value: ["name": "新", "color": "白色"]))
        }
        #expect(white.map(\.name) == ["新"])
        #expect(frozenWhite.count == 5 && frozenWhite.map(\.name) == ["狗0", "狗2", "狗4", "狗6", "狗8"])
        #expect(frozenWhite.allSatisfy { $0.color == "白色" && $0.isFrozen })
        #expect(frozenZhang.name == "张三" && frozenZhang.dogs.count == 3 && frozenDogs.count == 3)
        #expect(frozenRealm.objects(Dog.self).count == 10 && realm.objects(Dog.self).count == 11)
        #expect(frozenDogs[0].owners.map(\.name) == ["张三"])
        // thawed: live again, on this thread
        #expect(frozenZhang.thaw()?.name == "张三丰")
        #expect(frozenWhite.thaw()?.map(\.name) == ["新"])
        #expect(frozenDogs.thaw()?.count == 0)
        #expect(frozenRealm.thaw() == realm)
        try realm.write { realm.delete(zhang) }
        #expect(frozenZhang.thaw() == nil && frozenZhang.name == "张三")
    }

    @Test func frozenResultsAreReadFromManyThreadsAtOnce() throws {
        let dir = TempDir()
        let realm = try Realm(configuration: config(dir))
        try dogs(realm, 2000)
        nonisolated(unsafe) let frozen = realm.objects(Dog.self).filter("age >= 5").freeze() // (read from any thread)
        let expected = frozen.reduce(0) { $0 + $1.age }
        let sums = SumBox()
        let writer = Thread { // a writer changes every dog meanwhile
            let r = try! Realm(configuration: config(dir))
            for _ in 0..<5 { try! r.write { for d in r.objects(Dog.self) { d.age += 1 } } }
        }
        writer.start()
        DispatchQueue.concurrentPerform(iterations: 8) { i in
            var sum = 0
            for d in frozen { sum += d.age }
            #expect(frozen[i].isFrozen)
            #expect(frozen.count == 1000)
            #expect(frozen.sum(ofProperty: "age") as Int == expected)
            sums.add(sum)
        }
        #expect(sums.all == Array(repeating: expected, count: 8))
        while writer.isExecuting { usleep(1000) }
    }

    @Test func threadSafeReferencesCrossThreadsOnce() throws {
        let dir = TempDir()
        let realm = try Realm(configuration: config(dir))
        try dogs(realm, 6)
        let zhang = Person(value: ["name": "张三", "age": 40])
        try realm.write { realm.add(zhang); zhang.dogs.append(objectsIn: realm.objects(Dog.self).prefix(2)) }
        let person = ThreadSafeReference(to: zhang)
        let results = ThreadSafeReference(to: realm.objects(Dog.self).filter("age > 2").sorted(byKeyPath: "age", ascending: false))
        let list = ThreadSafeReference(to: zhang.dogs)
        let gone = Dog(value: ["name": "gone"])
        try realm.write { realm.add(gone) }
        let goneRef = ThreadSafeReference(to: gone)
        try realm.write { realm.delete(gone) }
        // a write after the references: the other thread sees at least their version
        try realm.write { zhang.age = 41 }
        final class Seen: @unchecked Sendable { var text: [String] = [] }
        let seen = Seen()
        try DispatchQueue(label: "other").sync {
            let other = try Realm(configuration: config(dir))
            let p = try #require(other.resolve(person))
            seen.text.append("\(p.name) \(p.age)")
            seen.text.append(other.resolve(results)!.map(\.name).joined(separator: ","))
            seen.text.append(other.resolve(list)!.map(\.name).joined(separator: ","))
            seen.text.append(other.resolve(goneRef) == nil ? "nil" : "found")
            #expect(person.isInvalidated)
        }
        #expect(seen.text == ["张三 41", "狗5,狗4,狗3", "狗0,狗1", "nil"])
    }

    /// A reference made inside a write resolves after the commit to the object the write made;
    /// in a Realm of another file it finds nothing (RealmSwift's nil).
    @Test func aReferenceMadeInAWriteResolvesAfterTheCommit() throws {
        let dir = TempDir(), elsewhere = TempDir()
        let realm = try Realm(configuration: config(dir))
        realm.beginWrite()
        let dog = realm.create(Dog.self, value: ["name": "new"])
        let ref = ThreadSafeReference(to: dog), stray = ThreadSafeReference(to: dog)
        try realm.commitWrite()
        final class Seen: @unchecked Sendable { var names: [String?] = [] }
        let seen = Seen()
        try DispatchQueue(label: "other").sync {
            seen.names.append(try Realm(configuration: config(dir)).resolve(ref)?.name)
            seen.names.append(try Realm(configuration: config(elsewhere)).resolve(stray)?.name)
        }
        #expect(seen.names == ["new", nil])
    }

    /// maximumNumberOfActiveVersions: a frozen Realm pins its version; commits that would keep
    /// more versions alive than allowed throw, naming the limit, until it goes.
    @Test func aFrozenVersionCountsAgainstTheActiveVersionLimit() throws {
        let dir = TempDir()
        var cfg = config(dir)
        cfg.maximumNumberOfActiveVersions = 4
        let realm = try Realm(configuration: cfg)
        try dogs(realm, 1)
        var frozen: Realm? = realm.freeze()
        var refused: StrataError?
        for i in 0..<10 {
            do {
                try realm.write { realm.add(Dog(value: ["name": "d\(i)"])) }
            } catch let e as StrataError {
                refused = e
                break
            }
        }
        let e = try #require(refused)
        #expect(e.code == .tooManyVersions && e.message.contains("max_versions 4"))
        #expect(frozen?.objects(Dog.self).count == 1)
        #expect(realm.objects(Dog.self).count > 1 && realm.objects(Dog.self).count < 6)
        frozen = nil // the pinned version goes: writes go on
        try realm.write { realm.add(Dog(value: ["name": "after"])) }
        #expect(realm.objects(Dog.self).filter("name == 'after'").count == 1)
    }

    @Test func misuseOfFrozenThingsAndReferencesTraps() async throws {
        let write = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let realm = try! Realm(configuration: Realm.Configuration(inMemoryIdentifier: "frozen-write", objectTypes: [Company.self, Person.self, Dog.self]))
            let dog = Dog(value: ["name": "x"])
            try! realm.write { realm.add(dog) }
            let frozen = dog.freeze()
            try! realm.write { frozen.name = "y" }
        }
        let e1 = String(decoding: try #require(write).standardErrorContent, as: UTF8.self)
        #expect(e1.contains("frozen") && e1.contains("Dog.name"))
        let twice = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let realm = try! Realm(configuration: Realm.Configuration(inMemoryIdentifier: "resolve-twice", objectTypes: [Company.self, Person.self, Dog.self]))
            let dog = Dog(value: ["name": "x"])
            try! realm.write { realm.add(dog) }
            let ref = ThreadSafeReference(to: dog)
            _ = realm.resolve(ref)
            _ = realm.resolve(ref)
        }
        let e2 = String(decoding: try #require(twice).standardErrorContent, as: UTF8.self)
        #expect(e2.contains("only resolve a thread safe reference once"))
        await #expect(processExitsWith: .failure) {
            _ = ThreadSafeReference(to: Dog()) // unmanaged: pass it directly
        }
    }
}
