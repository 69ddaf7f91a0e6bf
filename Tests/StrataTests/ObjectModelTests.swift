import Foundation
import Testing
@_spi(StrataCore) @testable import Strata

@Suite("Objects: the seeds' Company, Person and Dog")
struct ZooTests {
    @Test func zhangSanWithThreeDogsThroughBacklinksARenameAndADelete() throws {
        let dir = TempDir()
        let realm = try Realm(configuration: config(dir))
        let company = Company(value: ["name": "星辰科技"])
        let p = Person()
        p.name = "张三"
        p.age = 30
        p.company = company
        for (n, c) in [("小白", "白色"), ("小黑", "黑色"), ("旺财", "黄色")] {
            p.dogs.append(Dog(value: ["name": n, "color": c, "age": 2]))
        }
        try realm.write { realm.add(p) }        // adds the company and the dogs too
        #expect(p.realm != nil)
        #expect(realm.objects(Dog.self).count == 3)
        #expect(realm.objects(Company.self).count == 1)
        let dogs = realm.objects(Dog.self)
        #expect(dogs.map(\.name).sorted() == ["小白", "小黑", "旺财"].sorted())
        for d in dogs { #expect(d.owners.map(\.name) == ["张三"]) }
        #expect(company.employees.count == 1)
        try realm.write { p.name = "张三丰" }
        #expect(realm.objects(Dog.self)[0].owners.first?.name == "张三丰")
        let black = realm.objects(Dog.self).first { $0.name == "小黑" }!
        try realm.write { realm.delete(black) }
        #expect(black.isInvalidated)
        #expect(p.dogs.map(\.name) == ["小白", "旺财"])
        #expect(realm.object(ofType: Person.self, forPrimaryKey: p.id)?.dogs.count == 2)
        #expect(try realm.instance.shared.db.verify() == ())
    }
}

@Suite("Objects: what keeps a Realm open")
struct RealmLifetimeTests {
    /// Objects hold their Realm through its hold count (one retain for them all): it stays open
    /// while any object or Realm value is left, wherever they are dropped, and closes with the
    /// last.
    @Test func objectsKeepTheirRealmOpenUntilTheLastGoesOnAnyThread() throws {
        let dir = TempDir()
        weak var instance: RealmInstance?
        var dogs: [Dog] = []
        do {
            let realm = try Realm(configuration: config(dir))
            try realm.write {
                for i in 0..<4 { realm.add(Dog(value: ["name": "狗\(i)", "age": i])) }
            }
            dogs = Array(realm.objects(Dog.self))
            instance = realm.instance
            // objects read and dropped one at a time while the Realm value is kept
            for _ in 0..<3 { #expect(realm.objects(Dog.self).first?.age == 0) }
        }
        #expect(instance != nil)                     // the Realm value went; the objects hold it
        #expect(dogs.map(\.age) == [0, 1, 2, 3])
        dogs.removeFirst(3)
        #expect(instance != nil)
        // the last holds dropped on another thread
        final class Carrier: @unchecked Sendable { var dogs: [Dog] = [] }
        let carrier = Carrier()
        do {
            let again = try Realm(configuration: config(dir)) // the same open Realm, from the cache
            #expect(again.instance === instance)
            carrier.dogs = dogs + [again.objects(Dog.self).first!]
            dogs = []
        }
        #expect(instance != nil)
        let t = Thread { carrier.dogs = [] }
        t.start()
        while !t.isFinished { usleep(1000) }
        #expect(instance == nil)
    }
}

@Suite("Objects: every type, through a closed and reopened file")
struct TypeRoundTripTests {
    static let big = Data((0..<(1 << 20)).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ 7) })
    static let longString = String(repeating: "长文本 long text ✓ ", count: 150_000 / 24)

    @Test func extremesNilsAndBigValuesComeBackByteForByte() throws {
        let dir = TempDir()
        let cfg = config(dir, types: [AllTypes.self])
        let oid = ObjectId.generate()
        let uuid = UUID()
        let dec = try Decimal128(string: "-1234567890.123456789")
        let before1970 = Date(timeIntervalSince1970: -1_234_567.123456)
        do {
            let realm = try Realm(configuration: cfg)
            try realm.write {
                let maxes = AllTypes(value: [
                    "bool": true, "int": Int.max, "int8": Int8.min, "int16": Int16.max, "int32": Int32.min,
                    "int64": Int64.min, "float": Float.greatestFiniteMagnitude, "double": -Double.leastNonzeroMagnitude,
                    "string": TypeRoundTripTests.longString, "data": TypeRoundTripTests.big, "date": before1970,
                    "objectId": oid, "uuid": uuid, "decimal": dec,
                    "optBool": false, "optInt": 0, "optInt8": Int8.max, "optInt16": Int16.min, "optInt32": Int32.max,
                    "optInt64": Int64.max, "optFloat": -0.5, "optDouble": Double.infinity, "optString": "",
                    "optData": Data(), "optDate": Date(timeIntervalSince1970: 1e9 + 0.000001), "optObjectId": oid,
                    "optUuid": uuid, "optDecimal": Decimal128(value: 42),
                    "ints": [Int.min, 0, Int.max], "optStrings": ["a", nil, ""],
                    "dates": [before1970], "datas": [Data([0, 1, 2]), Data()],
                    "any": AnyRealmValue.string("mixed ✓"), "anys": [AnyRealmValue.int(1), .none, .double(2.5), .uuid(uuid)],
                ] as [String: Any])
                realm.add(maxes)
                let nils = AllTypes()
                realm.add(nils)
                maxes.link = nils
                maxes.links.append(nils)
                maxes.links.append(maxes)
            }
        }
        let realm = try Realm(configuration: cfg)
        let all = realm.objects(AllTypes.self)
        #expect(all.count == 2)
        let m = all[0], n = all[1]
        #expect(m.bool == true && m.int == Int.max && m.int8 == Int8.min && m.int16 == Int16.max)
        #expect(m.int32 == Int32.min && m.int64 == Int64.min)
        #expect(m.float == Float.greatestFiniteMagnitude && m.double == -Double.leastNonzeroMagnitude)
        #expect(m.string == TypeRoundTripTests.longString)
        #expect(m.data == TypeRoundTripTests.big)
        #expect(abs(m.date.timeIntervalSince1970 - before1970.timeIntervalSince1970) < 1e-6)
        #expect(m.objectId == oid && m.uuid == uuid && m.decimal == dec)
        #expect(m.decimal.description == "-1234567890.123456789")
        #expect(m.optBool == false && m.optInt == 0 && m.optInt8 == Int8.max && m.optInt16 == Int16.min)
        #expect(m.optInt32 == Int32.max && m.optInt64 == Int64.max && m.optFloat == -0.5)
        #expect(m.optDouble == Double.infinity)
        #expect(m.optString == "" && m.optData == Data())   // empty is not nil
        #expect(abs(m.optDate!.timeIntervalSince1970 - (1e9 + 0.000001)) < 1e-6)
        #expect(m.optObjectId == oid && m.optUuid == uuid && m.optDecimal == Decimal128(value: 42))
        #expect(Array(m.ints) == [Int.min, 0, Int.max])
        #expect(Array(m.optStrings) == ["a", nil, ""])
        #expect(m.dates.count == 1 && abs(m.dates[0].timeIntervalSince1970 - before1970.timeIntervalSince1970) < 1e-6)
        #expect(Array(m.datas) == [Data([0, 1, 2]), Data()])
        #expect(m.any == .string("mixed ✓") && Array(m.anys) == [.int(1), .none, .double(2.5), .uuid(uuid)])
        #expect(n.any == .none)
        #expect(m.link?.isSameObject(as: n) == true && m.links.count == 2 && m.links[1].isSameObject(as: m))
        // The defaults and nils of a fresh object.
        #expect(n.bool == false && n.int == 0 && n.string == "" && n.data == Data())
        #expect(n.optBool == nil && n.optInt == nil && n.optString == nil && n.optData == nil)
        #expect(n.optDate == nil && n.optObjectId == nil && n.optUuid == nil && n.optDecimal == nil)
        #expect(n.link == nil && n.ints.isEmpty && n.links.isEmpty)
        try realm.instance.shared.db.verify()
    }

    @Test func datesKeepMicrosecondsBeforeAndAfter1970() throws {
        let dir = TempDir()
        let realm = try Realm(configuration: config(dir, types: [AllTypes.self]))
        let stamps: [TimeInterval] = [-1.5, -0.000001, 0, 0.000001, -62_135_596_800.25, 4_102_444_800.999999]
        try realm.write {
            for s in stamps { realm.add(AllTypes(value: ["date": Date(timeIntervalSince1970: s)])) }
        }
        let back = realm.objects(AllTypes.self).map { $0.date.timeIntervalSince1970 }
        for (a, b) in zip(stamps, back) { #expect(abs(a - b) <= 1e-6 * max(1, abs(a) / 1e9), "\(a) vs \(b)") }
    }

    @Test func decimal128CompareAndSortByValueInQueries() throws {
        let dir = TempDir()
        let realm = try Realm(configuration: config(dir, types: [AllTypes.self]))
        let values = ["1.5", "-2", "10", "0.25", "1e3", "1.50", "-0.001"]
        try realm.write {
            for v in values { realm.add(AllTypes(value: ["decimal": try Decimal128(string: v)])) }
        }
        let all = realm.objects(AllTypes.self)
        #expect(all.filter("decimal > %@", Decimal128(value: 1)).count == 4)       // 1.5, 10, 1e3, 1.50
        #expect(all.filter("decimal == %@", try Decimal128(string: "1.5")).count == 2) // 1.5 and 1.50
        #expect(all.filter("decimal BETWEEN {%@, %@}", Decimal128(value: -1), Decimal128(value: 1)).count == 2)
        #expect(all.where { $0.decimal < Decimal128(value: 0) }.count == 2)
        let sorted: [Double] = Array(all.sorted(byKeyPath: "decimal").map { $0.decimal.doubleValue })
        #expect(sorted == [-2, -0.001, 0.25, 1.5, 1.5, 10, 1000])
        #expect((all.max(ofProperty: "decimal") as Decimal128?) == Decimal128(value: 1000))
        #expect((all.sum(ofProperty: "decimal") as Decimal128) == (try Decimal128(string: "1011.249")))
    }

    @Test func decimal128ParsesPrintsAndCompares() throws {
        #expect(try Decimal128(string: "0.1").description == "0.1")
        #expect(try Decimal128(string: "1.50") == Decimal128(string: "1.5"))
        #expect(try Decimal128(string: "-2") < Decimal128(string: "-1.999"))
        #expect(try Decimal128(string: "1e3").description == "1E3")  // as Realm writes it
        #expect(try Decimal128(string: "1234567890e123").description == "1.23456789E132")
        #expect(Decimal128(value: 0.25).description == "0.25")
        #expect(try Decimal128(string: "NaN").isNaN)
        #expect(throws: StrataError.self) { try Decimal128(string: "12abc") }
        #expect(try Decimal128(string: "1234567890123456789012345678901234").description
                == "1234567890123456789012345678901234")
        // a string stands for a Decimal128 in Object(value:), as in RealmSwift; a bad one is refused
        #expect(AllTypes(value: ["decimal": "2.5"]).decimal == Decimal128(value: 2.5))
        #expect(ValueConversion.convert("12abc", to: Decimal128.self) == nil)
    }
}

@Suite("Objects: primary keys, upserts, in-memory Realms, unmanaged copies")
struct ManagedObjectTests {
    @Test func booksWithUUIDStringKeysUpsertByPolicy() throws {
        let dir = TempDir()
        let realm = try Realm(configuration: config(dir, types: [Book.self]))
        let key = UUID().uuidString
        try realm.write { realm.add(Book(value: ["isbn": key, "title": "三体", "price": 23.0, "tags": ["科幻"]])) }
        // .error: a second object with the key fails the write, naming class and value
        do {
            try realm.write { realm.add(Book(value: ["isbn": key, "title": "dup"])) }
            Issue.record("a duplicate primary key was accepted")
        } catch let e as StrataError {
            #expect(e.code == .exists)
            #expect(e.message.contains("'Book'") && e.message.contains(key))
        }
        #expect(realm.objects(Book.self).count == 1)
        #expect(realm.objects(Book.self)[0].title == "三体")   // rolled back
        try realm.write { realm.add(Book(value: ["isbn": key, "title": "三体 II", "price": 25.5]), update: .modified) }
        let b = realm.object(ofType: Book.self, forPrimaryKey: key)!
        #expect(b.title == "三体 II" && b.price == 25.5 && b.tags.isEmpty)
        try realm.write { realm.create(Book.self, value: ["isbn": key, "title": "三体 III", "tags": ["a", "b"]], update: .all) }
        #expect(b.title == "三体 III" && Array(b.tags) == ["a", "b"])
        #expect(realm.objects(Book.self).count == 1)
        #expect(realm.object(ofType: Book.self, forPrimaryKey: "missing") == nil)
    }

    @Test func messagesInMemoryAreSharedAndGoWithTheLastInstance() throws {
        let id = "messages-\(UUID().uuidString)"
        let cfg = Realm.Configuration(inMemoryIdentifier: id, objectTypes: [Message.self])
        do {
            let realm = try Realm(configuration: cfg)
            try realm.write {
                let m = Message()
                m.id = 1
                m.text = "你好"
                m.draft = "not stored"
                realm.add(m)
            }
            let got = realm.objects(Message.self)[0]
            #expect(got.text == "你好" && got.sender == "anonymous" && got.read == false)
            #expect(got.draft == "")                    // ignored: never stored
            #expect(got.objectSchema.properties.map(\.name) == ["id", "text", "sender", "sentAt", "read"])
            // Another thread's Realm of the same identifier sees the data.
            let seen = try onAnotherThread {
                let r = try Realm(configuration: cfg)
                return r.objects(Message.self).count
            }
            #expect(seen == 1)
        }
        let again = try Realm(configuration: cfg)
        #expect(again.objects(Message.self).isEmpty)     // the last instance took the data
    }

    @Test func unmanagedCopiesFromDictionariesArraysAndObjects() throws {
        let dir = TempDir()
        let realm = try Realm(configuration: config(dir))
        let a = Dog(value: ["name": "a", "color": "red", "age": 3])
        let b = Dog(value: ["b", "blue", 4])
        #expect(a.realm == nil && a.name == "a" && b.color == "blue" && b.age == 4)
        try realm.write { realm.add(a) }
        let copy = Dog(value: a)                      // a detached copy of a managed object
        #expect(copy.realm == nil && copy.name == "a" && copy.age == 3)
        copy.name = "changed"                         // outside a write: it is unmanaged
        #expect(a.name == "a")
        let p = Person(value: ["name": "李四", "dogs": [["name": "x"], b], "company": ["name": "C"]])
        #expect(p.dogs.count == 2 && p.dogs[0].name == "x" && p.company?.name == "C")
        try realm.write { realm.add(p) }
        #expect(realm.objects(Dog.self).count == 3 && realm.objects(Company.self).count == 1)
        #expect(p["name"] as? String == "李四")
        #expect(p.description.contains("name = 李四") && p.description.hasPrefix("Person {"))
        #expect(Dog(value: ["name": "n"]).description.contains("color = (null);"))  // as RealmSwift writes nil
    }

    @Test func writesReturnTheirValueAndAThrowingBlockRollsBack() throws {
        let dir = TempDir()
        let realm = try Realm(configuration: config(dir))
        let n = try realm.write { () -> Int in
            realm.add(Dog(value: ["name": "a"]))
            return 7
        }
        #expect(n == 7)
        struct Stop: Error {}
        #expect(throws: Stop.self) {
            try realm.write {
                realm.add(Dog(value: ["name": "b"]))
                throw Stop()
            }
        }
        #expect(realm.objects(Dog.self).count == 1 && !realm.isInWriteTransaction)
        realm.beginWrite()
        realm.add(Dog(value: ["name": "c"]))
        #expect(realm.isInWriteTransaction && realm.objects(Dog.self).count == 2)
        realm.cancelWrite()
        #expect(realm.objects(Dog.self).count == 1)
        try realm.write { realm.deleteAll() }
        #expect(realm.isEmpty)
    }
}

/// Run body on a new thread and wait for it.
func onAnotherThread<T>(_ body: @escaping () throws -> T) throws -> T {
    let box = ThreadResult<T>()
    let done = DispatchSemaphore(value: 0)
    let body = Unchecked(body) // (run on the new thread while this one waits)
    let t = Thread {
        box.result = Result { try body.value() }
        done.signal()
    }
    t.start()
    done.wait()
    return try box.result!.get()
}

final class ThreadResult<T>: @unchecked Sendable { var result: Result<T, Error>? }
