import Foundation
import Testing
@_spi(StrataCore) @testable import Strata

enum Mood: String, PersistableEnum, Codable { case happy, sad, calm }
enum Level: Int, PersistableEnum { case low = 1, mid = 5, high = 9 }

struct Celsius: CustomPersistable, Hashable {
    typealias PersistedType = Double
    var degrees: Double
    init(persistedValue: Double) { degrees = persistedValue }
    var persistableValue: Double { degrees }
}

/// Accepts only http(s) addresses.
struct WebAddress: FailableCustomPersistable, Hashable {
    typealias PersistedType = String
    let text: String
    init?(persistedValue: String) {
        guard persistedValue.hasPrefix("http") else { return nil }
        text = persistedValue
    }
    var persistableValue: String { text }
}

final class Diary: Object {
    @Persisted(primaryKey: true) var id = 0
    @Persisted var mood = Mood.happy
    @Persisted var level: Level
    @Persisted var optionalMood: Mood?
    @Persisted var moods: List<Mood>
    @Persisted var optionalLevels: List<Level?>
    @Persisted var temperature = Celsius(persistedValue: 20)
    @Persisted var site: WebAddress?
}

/// A Diary file whose stored raw values no case has (as another program could write them):
/// written through a migration's dynamic objects, which see the stored types.
func diaryWithForeignRawValues(_ dir: TempDir, mood: String, optionalMood: String, site: String) throws -> Realm.Configuration {
    do {
        let realm = try Realm(configuration: config(dir, types: [Diary.self]))
        try realm.write { realm.add(Diary(value: ["id": 1])) }
    }
    var cfg = config(dir, types: [Diary.self], version: 1)
    cfg.migrationBlock = { migration, _ in
        migration.enumerateObjects(ofType: "Diary") { _, new in
            new?["mood"] = mood
            new?["optionalMood"] = optionalMood
            new?["site"] = site
        }
    }
    return cfg
}

@Suite("Swift-only types: PersistableEnum and CustomPersistable")
struct SwiftTypesTests {
    @Test func enumsAndMappedTypesRoundTripAndQuery() throws {
        let dir = TempDir()
        let cfg = config(dir, types: [Diary.self])
        do {
            let realm = try Realm(configuration: cfg)
            try realm.write {
                let d = Diary()
                d.id = 1
                d.mood = .sad
                d.level = .high
                d.moods.append(objectsIn: [.calm, .happy])
                d.optionalLevels.append(objectsIn: [nil, .mid])
                d.temperature = Celsius(persistedValue: 36.6)
                d.site = WebAddress(persistedValue: "https://example.org")
                realm.add(d)
                realm.add(Diary(value: ["id": 2, "mood": Mood.calm, "level": 5, "optionalMood": "sad"]))
            }
        }
        let realm = try Realm(configuration: cfg)
        let d = try #require(realm.object(ofType: Diary.self, forPrimaryKey: 1))
        #expect(d.mood == .sad && d.level == .high && d.optionalMood == nil)
        #expect(Array(d.moods) == [.calm, .happy] && Array(d.optionalLevels) == [nil, .mid])
        #expect(d.temperature.degrees == 36.6 && d.site?.text == "https://example.org")
        let two = try #require(realm.object(ofType: Diary.self, forPrimaryKey: 2))
        #expect(two.mood == .calm && two.level == .mid && two.optionalMood == .sad && Level() == .low)
        #expect(realm.objects(Diary.self).where { $0.mood == .sad }.map(\.id) == [1])
        #expect(realm.objects(Diary.self).where { $0.level > .mid }.map(\.id) == [1])
        #expect(realm.objects(Diary.self).filter("level == %@", Level.mid).map(\.id) == [2])
        #expect(realm.objects(Diary.self).filter("mood == 'calm'").count == 1)
        #expect(realm.objects(Diary.self).sorted(byKeyPath: "level", ascending: false).map(\.id) == [1, 2])
        #expect(realm.objects(Diary.self).max(ofProperty: "level") as Level? == .high)
    }

    @Test func aStoredRawValueNoCaseHasReadsNilWhenOptional() throws {
        let dir = TempDir()
        let realm = try Realm(configuration: diaryWithForeignRawValues(dir, mood: "happy", optionalMood: "grumpy", site: "ftp://x"))
        let d = try #require(realm.object(ofType: Diary.self, forPrimaryKey: 1))
        #expect(d.optionalMood == nil && d.site == nil && d.mood == .happy)
    }

    @Test func aStoredRawValueNoCaseHasTrapsNamingClassPropertyAndValue() async throws {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let dir = TempDir()
            let realm = try! Realm(configuration: diaryWithForeignRawValues(dir, mood: "grumpy", optionalMood: "sad", site: "http://x"))
            _ = realm.object(ofType: Diary.self, forPrimaryKey: 1)!.mood
        }
        let err = String(decoding: try #require(result).standardErrorContent, as: UTF8.self)
        #expect(err.contains("Diary.mood") && err.contains("grumpy"))
    }
}

/// A point stored as an embedded object (RealmSwift's CGPoint example).
final class PointObject: EmbeddedObject {
    @Persisted var x = 0.0
    @Persisted var y = 0.0
}

struct Point: CustomPersistable, Equatable {
    typealias PersistedType = PointObject
    var x: Double, y: Double
    init(x: Double, y: Double) { self.x = x; self.y = y }
    init(persistedValue: PointObject) { self.init(x: persistedValue.x, y: persistedValue.y) }
    var persistableValue: PointObject { PointObject(value: [x, y]) }
}

final class Route: Object {
    @Persisted(primaryKey: true) var id = 0
    @Persisted var start: Point
    @Persisted var end: Point?
    @Persisted var stops: List<Point>
    @Persisted var named: Map<String, Point>
}

@Suite("CustomPersistable mapped to an embedded object")
struct EmbeddedMappedTests {
    @Test func propertiesListsAndMapsRoundTrip() throws {
        let dir = TempDir()
        let cfg = config(dir, types: [Route.self, PointObject.self])
        let realm = try Realm(configuration: cfg)
        let r = Route()
        #expect(r.start == Point(x: 0, y: 0) && r.end == nil) // unmanaged default: a default object's values
        try realm.write {
            r.id = 1
            r.start = Point(x: 1, y: 2)
            r.stops.append(objectsIn: [Point(x: 3, y: 4), Point(x: 5, y: 6)])
            r.named["home"] = Point(x: 7, y: 8)
            realm.add(r)
            realm.create(Route.self, value: ["id": 2, "end": PointObject(value: [9, 9]), "stops": [[1.5, 2.5]],
                                             "named": ["a": NSNull()]])
        }
        #expect(r.start == Point(x: 1, y: 2) && r.end == nil)
        #expect(Array(r.stops) == [Point(x: 3, y: 4), Point(x: 5, y: 6)] && r.named["home"] == Point(x: 7, y: 8))
        let two = try #require(realm.object(ofType: Route.self, forPrimaryKey: 2))
        // no object stored: a non-optional mapped property or map value reads a default object
        #expect(two.start == Point(x: 0, y: 0) && two.end == Point(x: 9, y: 9))
        #expect(Array(two.stops) == [Point(x: 1.5, y: 2.5)] && two.named["a"] == Point(x: 0, y: 0))
        try realm.write { r.start = Point(x: -1, y: -1); r.stops[0] = Point(x: 0, y: 1) }
        #expect(r.start == Point(x: -1, y: -1) && r.stops[0] == Point(x: 0, y: 1))
        // hashed by the values stored, as equality compares them (a new object each time)
        #expect(Set([Point(x: 1, y: 1), Point(x: 1, y: 1), Point(x: 2, y: 1)]).count == 2)
    }

    @Test func queriesCompareMemberwise() throws {
        let dir = TempDir()
        let realm = try Realm(configuration: config(dir, types: [Route.self, PointObject.self]))
        try realm.write {
            realm.create(Route.self, value: ["id": 1, "start": Point(x: 1, y: 2), "stops": [Point(x: 3, y: 4)]])
            realm.create(Route.self, value: ["id": 2, "start": Point(x: 1, y: 5), "end": Point(x: 1, y: 2)])
        }
        let routes = realm.objects(Route.self)
        #expect(routes.where { $0.start == Point(x: 1, y: 2) }.map(\.id) == [1])
        #expect(routes.where { $0.start != Point(x: 1, y: 2) }.map(\.id) == [2])
        #expect(routes.where { $0.end == Point(x: 1, y: 2) }.map(\.id) == [2])
        #expect(routes.where { $0.start.persistableValue.y > 3 }.map(\.id) == [2])
        #expect(routes.filter("start == %@", Point(x: 1, y: 5)).map(\.id) == [2])
        #expect(routes.filter("ANY stops == $0", Point(x: 3, y: 4)).map(\.id) == [1])
        #expect(routes.filter("id > 0 AND start = %@", Point(x: 9, y: 9)).isEmpty)
        // collections: one element equal in every member; != holds when there are elements and
        // none is equal (RealmSwift's rule)
        try realm.write {
            realm.create(Route.self, value: ["id": 3, "stops": [Point(x: 3, y: 5), Point(x: 4, y: 4)],
                                             "named": ["a": Point(x: 3, y: 4)]])
        }
        #expect(routes.where { $0.stops == Point(x: 3, y: 4) }.map(\.id) == [1])
        #expect(routes.filter("ANY stops != %@", Point(x: 3, y: 4)).map(\.id) == [3])
        #expect(routes.filter("ANY named.@allValues == %@", Point(x: 3, y: 4)).map(\.id) == [3])
        #expect(routes.where { $0.named.values == Point(x: 3, y: 4) || $0.id == 2 }.map(\.id) == [2, 3])
    }
}

/// An `@objc enum … : Int, RealmEnum` of RealmSwift, as it is without Objective-C.
enum SensorState: Int, RealmEnum { case idle = 1, busy = 3 }

/// RealmSwift's older declarations: `let` properties of RealmProperty / RealmOptional, and the
/// primary key and indexes named by class functions.
final class Sensor: Object {
    @Persisted var name = ""
    let serial = RealmProperty<Int?>()
    let reading = RealmProperty<Double?>()
    let samples = RealmOptional<Int>()
    let extra = RealmProperty<AnyRealmValue>()
    @Persisted var state = SensorState.idle
    let lastState = RealmProperty<SensorState?>()
    override class func primaryKey() -> String? { "serial" }
    override class func indexedProperties() -> [String] { ["name"] }
}

@Suite("RealmSwift's older property declarations")
struct LegacyPropertyTests {
    @Test func realmPropertyAndRealmOptionalReadAndWriteTheRealm() throws {
        let dir = TempDir()
        let realm = try Realm(configuration: config(dir, types: [Sensor.self]))
        let s = Sensor()
        s.name = "t1"
        s.serial.value = 7
        s.reading.value = 21.5
        s.samples.value = 3
        s.extra.value = .string("calibrated")
        try realm.write { realm.add(s) }
        #expect(s.reading.value == 21.5 && s.samples.value == 3)
        try realm.write { s.reading.value = nil; s.samples.value = 4 }
        let found = try #require(realm.object(ofType: Sensor.self, forPrimaryKey: 7))
        #expect(found.reading.value == nil && found.samples.value == 4 && found.extra.value == .string("calibrated"))
        #expect(realm.objects(Sensor.self).filter("samples == 4 AND serial == 7").count == 1)
        let schema = try #require(realm.schema["Sensor"])
        #expect(schema.primaryKeyProperty?.name == "serial")
        #expect(schema.properties.first { $0.name == "name" }?.isIndexed == true)
        #expect(schema.properties.map(\.name).sorted() == ["extra", "lastState", "name", "reading", "samples", "serial", "state"])
        try realm.write { s.state = .busy; s.lastState.value = .idle }
        #expect(realm.objects(Sensor.self).where { $0.state == .busy }.count == 1)
        #expect(s.lastState.value == .idle && realm.objects(Sensor.self).filter("lastState == 1").count == 1)
        #expect(realm.objects(Sensor.self).filter("state == 3").count == 1)
        #expect(realm.objects(Sensor.self).first?.lastState.value == .idle)
        #expect(realm.objects(Sensor.self).first?.reading.value == nil)
        #expect(realm.objects(Sensor.self).first?.samples.value == 4)
        #expect(realm.objects(Sensor.self).filter("state == 3 AND lastState == 1").first?.lastState.value == .idle)
    }

    @Test func sharedSchemaAndKeyPathSortDescriptorsNameTheClassProperties() throws {
        let schema = try #require(Sensor.sharedSchema())
        #expect(schema == Sensor().objectSchema && schema.className == "Sensor")
        let dir = TempDir()
        let realm = try Realm(configuration: config(dir, types: [Sensor.self]))
        try realm.write {
            for (serial, name) in [(1, "b"), (2, "c"), (3, "a")] {
                let s = Sensor()
                s.serial.value = serial
                s.name = name
                realm.add(s)
            }
        }
        let byName = realm.objects(Sensor.self).sorted(by: [Strata.SortDescriptor(keyPath: \Sensor.name, ascending: false)])
        #expect(byName.map(\.name) == ["c", "b", "a"])
        #expect(_name(for: \Sensor.samples) == "samples" && _name(for: \Sensor.lastState) == "lastState")
        #expect(_name(for: \Sensor.state) == "state")
        let literal: [Strata.SortDescriptor] = ["name"]
        #expect(realm.objects(Sensor.self).sorted(by: literal).map(\.name) == ["a", "b", "c"])
    }

    @Test func aPrimaryKeyNamedByTheClassThatIsNoPropertyIsRefused() throws {
        final class Broken: Object {
            @Persisted var id = 0
            override class func primaryKey() -> String? { "identifier" }
        }
        let dir = TempDir()
        #expect(throws: StrataError.self) { _ = try Realm(configuration: config(dir, types: [Broken.self])) }
    }
}

final class Note: Object, Codable {
    @Persisted(primaryKey: true) var id: ObjectId
    @Persisted var title = ""
    @Persisted var stars: Int?
    @Persisted var mood: Mood?
    @Persisted var price: Decimal128
    @Persisted var tags: List<String>
}

@Suite("Codable models")
struct CodableModelTests {
    @Test func decodedObjectsAreUnmanagedAndEncodeBack() throws {
        let json = #"{"id":"61184062c1d8f096a3695045","title":"t","price":"1.25","tags":["a","b"],"mood":"sad"}"#
        let note = try JSONDecoder().decode(Note.self, from: Data(json.utf8))
        #expect(note.id.stringValue == "61184062c1d8f096a3695045" && note.title == "t" && note.stars == nil)
        #expect(note.price == Decimal128("1.25") && Array(note.tags) == ["a", "b"] && note.mood == .sad)
        let back = try JSONDecoder().decode(Note.self, from: try JSONEncoder().encode(note))
        #expect(back.id == note.id && back.title == "t" && Array(back.tags) == ["a", "b"] && back.price == note.price)

        let dir = TempDir()
        let realm = try Realm(configuration: config(dir, types: [Note.self]))
        try realm.write { realm.add(note) }
        // a managed object's synthesized encoding refuses (as RealmSwift's does), never encodes defaults
        #expect(throws: EncodingError.self) { try JSONEncoder().encode(note) }
        let handedOut = try #require(realm.objects(Note.self).first)
        #expect(throws: EncodingError.self) { try JSONEncoder().encode(handedOut) }
        #expect(handedOut.title == "t" && Array(handedOut.tags) == ["a", "b"])
    }
}

final class Setting: Object {
    @Persisted(primaryKey: true) var key = ""
    @Persisted(indexed: true) var value: AnyRealmValue
}

@Suite("Indexed AnyRealmValue")
struct IndexedMixedTests {
    @Test func anIndexedMixedPropertyHoldsAndFindsValuesOfEveryType() throws {
        let dir = TempDir()
        let realm = try Realm(configuration: config(dir, types: [Setting.self]))
        let values: [AnyRealmValue] = [.int(5), .double(5), .string("five"), .bool(true), .none, .uuid(UUID()), .decimal128(Decimal128(value: 2))]
        try realm.write {
            for (i, v) in values.enumerated() { realm.add(Setting(value: ["key": "k\(i)", "value": v])) }
        }
        try realm.write { realm.object(ofType: Setting.self, forPrimaryKey: "k0")!.value = .string("changed") }
        #expect(realm.schema["Setting"]?["value"]?.isIndexed == true)
        #expect(realm.objects(Setting.self).filter("value == 5").map(\.key) == ["k1"])
        #expect(realm.objects(Setting.self).filter("value == 'changed'").map(\.key) == ["k0"])
        #expect(realm.objects(Setting.self).filter("value == nil").map(\.key) == ["k4"])
        #expect(try realm.instance.shared.db.verify() == ())
    }
}

final class LegacyFoundation: Object {
    @Persisted var name: NSString?
    @Persisted var bytes: NSData?
    @Persisted var when: NSDate?
}

@Suite("Foundation reference types in older models")
struct FoundationTypesTests {
    @Test func nsStringNSDataAndNSDateAreStoredAsTheirSwiftTypes() throws {
        let dir = TempDir()
        let realm = try Realm(configuration: config(dir, types: [LegacyFoundation.self]))
        let o = LegacyFoundation()
        o.name = "名前"
        o.bytes = NSData(data: Data([1, 2, 3]))
        o.when = NSDate(timeIntervalSince1970: 1000)
        try realm.write { realm.add(o) }
        let read = try #require(realm.objects(LegacyFoundation.self).first)
        #expect(read.name == "名前" && read.bytes == NSData(data: Data([1, 2, 3])) && read.when?.timeIntervalSince1970 == 1000)
        #expect(realm.objects(LegacyFoundation.self).filter("name == %@", NSString(string: "名前")).count == 1)
        #expect(realm.schema["LegacyFoundation"]?["name"]?.type == .string)
        try realm.write { read.name = nil }
        #expect(read.name == nil)
    }
}

@Suite("Dynamic objects of a Realm")
struct DynamicObjectTests {
    @Test func objectsSeenThroughTheirClassName() throws {
        let dir = TempDir()
        let realm = try Realm(configuration: config(dir))
        try realm.write {
            realm.add(Dog(value: ["name": "旺财", "age": 3]))
            realm.dynamicCreate("Person", value: ["id": "p1", "name": "张三", "age": 30])
        }
        let dogs = realm.dynamicObjects("Dog")
        #expect(dogs.count == 1 && dogs[0]["name"] as? String == "旺财" && dogs[0].age as? Int == 3)
        #expect(dogs[0].className == "Dog" && dogs[0].objectSchema.className == "Dog")
        let zhang = try #require(realm.dynamicObject(ofType: "Person", forPrimaryKey: "p1"))
        #expect(zhang.name as? String == "张三")
        try realm.write { zhang["age"] = 31 }
        #expect(realm.object(ofType: Person.self, forPrimaryKey: "p1")?.age == 31)
        #expect(realm.dynamicObjects("Person").filter("age > 30").count == 1)
        let frozen = dogs[0].freeze()
        try realm.write { realm.objects(Dog.self)[0].name = "新" }
        #expect(frozen["name"] as? String == "旺财" && dogs[0]["name"] as? String == "新")
    }
}

@Suite("Key paths through links")
struct ChainedKeyPathTests {
    @Test func keyPathsThroughCollectionsNameTheirPath() {
        #expect(_name(for: \Person.dogs[0].name) == "dogs.name")
        #expect(_name(for: \Dog.owners[0].company?.name) == "owners.company.name")
        #expect(_name(for: \Tree.branches[0].child?.value) == "branches.child.value")
        #expect(_name(for: \Tree.named[""]??.children[0].value) == "named.children.value")
        #expect(_name(for: \Person.dogs) == "dogs")
    }

    @Test func keyPathsThroughToOneLinksNameTheirPath() throws {
        #expect(_name(for: \Person.company?.name) == "company.name")
        #expect(_name(for: \Person.name) == "name")
        let dir = TempDir()
        let realm = try Realm(configuration: config(dir))
        try realm.write {
            for (n, c) in [("a", "y"), ("b", "x"), ("c", "y")] {
                realm.add(Person(value: ["name": n, "company": ["name": c]]), update: .modified)
            }
        }
        let people = realm.objects(Person.self)
        #expect(people.sorted(by: \.company?.name).map(\.name).first == "b")
        #expect(people.distinct(by: [\Person.company?.name]).count == 2)
    }
}

@Suite("Dates")
struct DateRoundTripTests {
    @Test func aDateReadsBackAsTheVerySameDate() throws {
        let dir = TempDir()
        let realm = try Realm(configuration: config(dir, types: [Message.self]))
        let dates = [Date(), Date(timeIntervalSince1970: -1.5), Date(timeIntervalSince1970: 0.1),
                     Date(timeIntervalSinceReferenceDate: 123_456_789.987_654_321), Date.distantPast]
        try realm.write {
            for (i, d) in dates.enumerated() { realm.add(Message(value: ["id": i, "text": "", "sentAt": d])) }
        }
        for (i, d) in dates.enumerated() {
            #expect(realm.object(ofType: Message.self, forPrimaryKey: i)?.sentAt == d)
        }
    }
}

final class Ticket: Object {
    @Persisted(primaryKey: true) var id: ObjectId
    @Persisted var token: UUID
    @Persisted var labels: List<String>
}

@Suite("RealmSwift's defaults and key-value coding")
struct DefaultsAndKVCTests {
    @Test func objectIdsAndUUIDsDeclaredWithoutAValueAreNewOnes() throws {
        let a = Ticket(), b = Ticket()
        #expect(a.id != b.id && a.token != b.token && a.id != ObjectId())
        let dir = TempDir()
        let realm = try Realm(configuration: config(dir, types: [Ticket.self]))
        try realm.write { realm.add([a, b]) } // two primary keys, not one zero twice
        #expect(realm.objects(Ticket.self).count == 2)
        let c = Ticket(value: ["labels": NSNull()]) // NSNull: an empty list
        #expect(c.labels.isEmpty)
    }

    @Test func keyValueCodingHandsOutNSNumbersAndCollectionOperators() throws {
        let dir = TempDir()
        let realm = try Realm(configuration: config(dir))
        try realm.write {
            for (n, a) in [("a", 3), ("b", 5), ("c", 3)] { realm.add(Dog(value: ["name": n, "age": a])) }
        }
        let dog = try #require(realm.objects(Dog.self).first)
        #expect(dog["age"] as? NSNumber == 3 && dog["age"] as? Int8 == 3 && dog["color"] == nil)
        let dogs = realm.objects(Dog.self)
        #expect((dogs.value(forKeyPath: "@unionOfObjects.age") as? [Int])?.sorted() == [3, 3, 5])
        #expect((dogs.value(forKeyPath: "@distinctUnionOfObjects.age") as? [Int])?.sorted() == [3, 5])
        #expect(dogs.value(forKeyPath: "@sum.age") as? Int == 11)
    }
}
