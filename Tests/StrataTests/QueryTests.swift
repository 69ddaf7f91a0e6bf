import Foundation
import Testing
@_spi(StrataCore) @testable import Strata

/// The zoo with five dogs, two owners and two companies.
private func zoo(_ dir: TempDir) throws -> Realm {
    let realm = try Realm(configuration: config(dir))
    let star = Company(value: ["name": "星辰科技"])
    let moon = Company(value: ["name": "Moon Inc"])
    let zhang = Person(value: ["name": "张三", "age": 30])
    zhang.company = star
    for (n, c, a) in [("小白", "白色", 2), ("小黑", "黑色", 5), ("旺财", "黄色", 9)] {
        zhang.dogs.append(Dog(value: ["name": n, "color": c, "age": a]))
    }
    let li = Person(value: ["name": "李四", "age": 41])
    li.company = moon
    li.dogs.append(Dog(value: ["name": "小花", "color": "白色", "age": 1]))
    let lonely = Person(value: ["name": "José", "age": 19])
    try realm.write {
        realm.add(zhang)
        realm.add(li)
        realm.add(lonely)
        realm.add(Dog(value: ["name": "Rex", "age": 7]))   // no owner, no color
    }
    return realm
}

@Suite("Results: predicate strings, sorting, distinct, aggregates")
struct QueryTests {
    /// Iteration moves an instance to the next object only when nobody can see it: one held
    /// strongly, weakly or unowned stays the object it was, and a class with a field of its own
    /// (Person.selected) always gets fresh instances.
    @Test func iterationMovesOnlyInstancesNobodyHolds() throws {
        let dir = TempDir()
        let realm = try zoo(dir)
        let dogs = realm.objects(Dog.self)
        let names = ["小白", "小黑", "旺财", "小花", "Rex"]
        var seen: [String] = []
        for d in dogs { seen.append(d.name) }
        #expect(seen == names)

        var held: [Dog] = []
        for d in dogs { held.append(d) }
        #expect(held.map(\.name) == names)
        #expect(Set(held.map(ObjectIdentifier.init)).count == 5)
        #expect(held[0].isSameObject(as: dogs[0]) && held[4].isSameObject(as: dogs[4]))

        final class WeakDog { weak var dog: Dog? }
        var weak: [WeakDog] = []
        var weakNames: [String] = []
        for d in dogs {
            if let previous = weak.last?.dog { weakNames.append(previous.name) }
            let w = WeakDog()
            w.dog = d
            weak.append(w)
        }
        #expect(weakNames.isEmpty) // each went when the loop left it, none became the next dog
        #expect(weak.allSatisfy { $0.dog == nil })

        struct UnownedDog { unowned let dog: Dog }
        var unowned: [UnownedDog] = []
        var ids: [ObjectIdentifier] = []
        for d in dogs {
            unowned.append(UnownedDog(dog: d))
            ids.append(ObjectIdentifier(d))
        }
        #expect(Set(ids).count == 5) // an instance with an unowned reference is never moved
        withExtendedLifetime(unowned) {}

        var selectedSeen: [Bool] = []
        for p in realm.objects(Person.self) {
            selectedSeen.append(p.selected)
            p.selected = true
        }
        #expect(selectedSeen == [false, false, false])
    }

    @Test func predicateStringsWithArgumentsOfEveryKind() throws {
        let dir = TempDir()
        let realm = try zoo(dir)
        let dogs = realm.objects(Dog.self)
        #expect(dogs.filter("color = '白色' AND name BEGINSWITH '小'").map(\.name) == ["小白", "小花"])
        #expect(dogs.filter("color = %@ AND name BEGINSWITH %@", "白色", "小").count == 2)
        #expect(dogs.filter("age > $0 AND age < $1", 1, 9).map(\.name) == ["小白", "小黑", "Rex"])
        #expect(dogs.filter("color == nil").map(\.name) == ["Rex"])
        #expect(dogs.filter("color == %@", NSNull()).count == 1)
        #expect(dogs.filter("color == %@", Optional<String>.none as Any).count == 1)
        #expect(dogs.filter("%K > %@", "age", 6).map(\.name) == ["旺财", "Rex"])
        #expect(dogs.filter("name IN %@", ["Rex", "小黑", "nobody"]).map(\.name) == ["小黑", "Rex"])
        #expect(dogs.filter("name CONTAINS[c] 'REX'").count == 1)
        // chained filters are ANDed; their placeholders stay their own
        let young = dogs.filter("age < %@", 6).filter("name != $0", "小白")
        #expect(young.map(\.name) == ["小黑", "小花"])
        // a quoted %@ is text, not a placeholder
        #expect(dogs.filter("name != '%@' AND age == %@", 7).map(\.name) == ["Rex"])
        // through links, lists and backlinks
        let people = realm.objects(Person.self)
        #expect(people.filter("ANY dogs.color == '黄色'").map(\.name) == ["张三"])
        #expect(people.filter("company.name BEGINSWITH 'Moon'").map(\.name) == ["李四"])
        #expect(people.filter("dogs.@count == 0").map(\.name) == ["José"])
        #expect(people.filter("dogs.@sum.age > 10").map(\.name) == ["张三"])
        #expect(dogs.filter("owners.@count == 0").map(\.name) == ["Rex"])
        #expect(dogs.filter("ANY owners.age > 40").map(\.name) == ["小花"])
        // an object for link equality, a Results for IN
        let star = realm.object(ofType: Company.self, forPrimaryKey: "星辰科技")!
        #expect(people.filter("company == %@", star).map(\.name) == ["张三"])
        let whiteDogs = dogs.filter("color == '白色'")
        #expect(people.filter("ANY dogs IN %@", whiteDogs).map(\.name) == ["张三", "李四"])
        // dates, data and the other primitives
        try realm.write { star.founded = Date(timeIntervalSince1970: 1_000_000) }
        let companies = realm.objects(Company.self)
        #expect(companies.filter("founded > %@", Date(timeIntervalSince1970: 999_999)).count == 1)
        #expect(companies.filter("founded == nil").map(\.name) == ["Moon Inc"])
    }

    @Test func resultsStayLive() throws {
        let dir = TempDir()
        let realm = try zoo(dir)
        let old = realm.objects(Dog.self).filter("age >= 5")
        #expect(old.count == 3)
        try realm.write { realm.add(Dog(value: ["name": "Old Yeller", "age": 12])) }
        #expect(old.count == 4)
        #expect(old.last?.name == "Old Yeller")
        try realm.write { realm.delete(realm.objects(Dog.self).filter("name == 'Rex'")) }
        #expect(old.map(\.name) == ["小黑", "旺财", "Old Yeller"])
    }

    @Test func sortingDistinctAndAggregates() throws {
        let dir = TempDir()
        let realm = try zoo(dir)
        let dogs = realm.objects(Dog.self)
        #expect(dogs.sorted(byKeyPath: "age").map(\.age) == [1, 2, 5, 7, 9])
        #expect(dogs.sorted(byKeyPath: "age", ascending: false).first?.name == "旺财")
        #expect(dogs.filter("age > 1").sorted(byKeyPath: "name").map(\.name) == ["Rex", "小白", "小黑", "旺财"])
        // a later sort comes first, the earlier breaks its ties
        let colored = dogs.filter("color != nil")
        let byColorThenAge = colored.sorted(byKeyPath: "age", ascending: false).sorted(byKeyPath: "color")
        #expect(byColorThenAge.map(\.name) == ["小白", "小花", "旺财", "小黑"])   // 黄 < 黑 by code point
        #expect(colored.sorted(by: [SortDescriptor(keyPath: "color"), SortDescriptor(keyPath: "age", ascending: false)])
                    .map(\.name) == ["小白", "小花", "旺财", "小黑"])
        #expect(realm.objects(Person.self).filter("company != nil").sorted(byKeyPath: "company.name")
                    .map(\.name) == ["李四", "张三"])
        #expect(dogs.distinct(by: ["color"]).count == 4)
        #expect(dogs.distinct(by: ["color"]).map(\.name) == ["小白", "小黑", "旺财", "Rex"])
        // in call order: distinct, then sorted / sorted, then distinct
        #expect(dogs.distinct(by: ["color"]).sorted(byKeyPath: "age").map(\.name) == ["小白", "小黑", "Rex", "旺财"])
        #expect(dogs.sorted(byKeyPath: "age").distinct(by: ["color"]).map(\.name) == ["小花", "小黑", "Rex", "旺财"])
        #expect(dogs.distinct(by: ["color"]).filter("age < 6").map(\.name) == ["小白", "小黑"])
        // aggregates over the results
        #expect(dogs.sum(ofProperty: "age") as Int == 24)
        #expect(dogs.filter("color == '白色'").sum(ofProperty: "age") as Int == 3)
        #expect(dogs.min(ofProperty: "age") as Int? == 1)
        #expect(dogs.max(ofProperty: "age") as Int? == 9)
        #expect(dogs.average(ofProperty: "age") as Double? == 4.8)
        #expect(dogs.filter("age > 100").average(ofProperty: "age") as Double? == nil)
        #expect(dogs.filter("age > 100").sum(ofProperty: "age") as Int == 0)
        #expect(dogs.filter("age > 100").max(ofProperty: "age") as Int? == nil)
        try realm.write { realm.objects(Company.self).first!.founded = Date(timeIntervalSince1970: 5) }
        #expect(realm.objects(Company.self).max(ofProperty: "founded") as Date? == Date(timeIntervalSince1970: 5))
    }

    @Test func listsAndLinkingObjectsAreQueriedInTheirOrder() throws {
        let dir = TempDir()
        let realm = try zoo(dir)
        let zhang = realm.objects(Person.self).filter("name == '张三'").first!
        #expect(zhang.dogs.filter("age > 3").map(\.name) == ["小黑", "旺财"])
        #expect(zhang.dogs.sorted(byKeyPath: "age", ascending: false).map(\.name) == ["旺财", "小黑", "小白"])
        #expect(zhang.dogs.sum(ofProperty: "age") as Int == 16)
        #expect(zhang.dogs.filter("color == '白色'").max(ofProperty: "age") as Int? == 2)
        #expect(zhang.dogs.average(ofProperty: "age") as Double? == 16.0 / 3)
        try realm.write { zhang.dogs.move(from: 2, to: 0) }          // list order, not key order
        #expect(zhang.dogs.filter("age > 1").map(\.name) == ["旺财", "小白", "小黑"])
        let white = realm.objects(Dog.self).filter("name == '小白'").first!
        #expect(white.owners.filter("age > 20").map(\.name) == ["张三"])
        #expect(white.owners.filter("age > 40").isEmpty)
        #expect(realm.objects(Person.self).filter("ANY dogs IN %@", zhang.dogs).count == 1)
        let li = realm.objects(Person.self).filter("name == '李四'").first!
        #expect(li.dogs.filter("age < 0").sum(ofProperty: "age") as Int == 0)
        #expect(li.dogs.filter("age < 0").min(ofProperty: "age") as Int? == nil)
    }

    @Test func typedKeyPathsForSortingAndAggregates() throws {
        let dir = TempDir()
        let realm = try zoo(dir)
        let dogs = realm.objects(Dog.self)
        #expect(dogs.sorted(by: \.age).map(\.name) == ["小花", "小白", "小黑", "Rex", "旺财"])
        #expect(dogs.sorted(by: \.name, ascending: false).first?.name == "旺财")
        #expect(dogs.filter("color != nil").sorted(by: \.color).map(\.name) == ["小白", "小花", "旺财", "小黑"])
        #expect(dogs.sum(of: \.age) == 24)
        #expect(dogs.max(of: \.age) == 9)
        #expect(dogs.min(of: \.age) == 1)
        #expect(dogs.average(of: \.age) == 4)              // an Int property: truncated, as RealmSwift
        #expect(dogs.average(ofProperty: "age") as Double? == 4.8)
        #expect(dogs.distinct(by: [\Dog.color]).count == 4)
        let zhang = realm.objects(Person.self).filter("name == '张三'").first!
        #expect(zhang.dogs.sorted(by: \.age, ascending: false).map(\.age) == [9, 5, 2])
        #expect(zhang.dogs.sum(of: \.age) == 16)
        #expect(KeyPathNames.name(\Person.company) == "company")
        #expect(KeyPathNames.name(\Dog.owners) == "owners")
    }

    @Test func aPrefixIsLiveAndKeepsItsMeaningWhenFilteredAfter() throws {
        let dir = TempDir()
        let realm = try zoo(dir)
        let byAge = realm.objects(Dog.self).sorted(byKeyPath: "age")
        let young = byAge.prefix(2)
        #expect(young.map(\.name) == ["小花", "小白"])
        #expect(young.count == 2)
        #expect(byAge.prefix(0).isEmpty)
        #expect(byAge.prefix(99).count == 5)
        #expect(young.sum(ofProperty: "age") as Int == 3)
        // filtered after: within the first three, not the first three of the filtered
        #expect(byAge.prefix(3).filter("color == '白色'").map(\.name) == ["小花", "小白"])
        #expect(byAge.prefix(3).sorted(byKeyPath: "age", ascending: false).map(\.name) == ["小黑", "小白", "小花"])
        try realm.write { realm.add(Dog(value: ["name": "Puppy", "age": 0])) }
        #expect(young.map(\.name) == ["Puppy", "小花"])                       // live
        let zhang = realm.objects(Person.self).filter("name == '张三'").first!
        #expect(zhang.dogs.sorted(byKeyPath: "age", ascending: false).prefix(1).map(\.name) == ["旺财"])
        #expect(zhang.dogs.filter("age > 0").prefix(2).map(\.name) == ["小白", "小黑"])
    }

    @Test func resultsOfADeletedObjectsListSayWhy() async throws {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let realm = try! Realm(configuration: Realm.Configuration(
                inMemoryIdentifier: "deleted-list", objectTypes: [Company.self, Person.self, Dog.self]))
            let p = Person(value: ["name": "张三", "dogs": [["name": "小白"]]])
            try! realm.write { realm.add(p) }
            let dogs = p.dogs.filter("name BEGINSWITH '小'")
            try! realm.write { realm.delete(p) }
            _ = dogs.count
        }
        let stderr = String(decoding: try #require(result).standardErrorContent, as: UTF8.self)
        #expect(stderr.contains("deleted") && stderr.contains("Person.dogs"))
    }

    @Test func aKeyPathToNoPersistedPropertyTrapsNamingIt() async throws {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            _ = KeyPathNames.name(\Person.selected) // not @Persisted: no property
        }
        let stderr = String(decoding: try #require(result).standardErrorContent, as: UTF8.self)
        #expect(stderr.contains("Person") && stderr.contains("string form"))
    }

    @Test func anInvalidPredicateStopsTheProgramNamingTheColumn() async throws {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let realm = try! Realm(configuration: Realm.Configuration(
                inMemoryIdentifier: "bad-query", objectTypes: [Company.self, Person.self, Dog.self]))
            _ = realm.objects(Dog.self).filter("age > 3 AND colour == 'x'")
        }
        let stderr = String(decoding: try #require(result).standardErrorContent, as: UTF8.self)
        #expect(stderr.contains("column 13") && stderr.contains("no property 'colour'"))
        let wrong = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let realm = try! Realm(configuration: Realm.Configuration(
                inMemoryIdentifier: "bad-arg", objectTypes: [Company.self, Person.self, Dog.self]))
            _ = realm.objects(Dog.self).filter("age > %@", "three").count // arguments: at first use
        }
        let err2 = String(decoding: try #require(wrong).standardErrorContent, as: UTF8.self)
        #expect(err2.contains("int") && err2.contains("string"))
    }

    @Test func badArgumentsThrowWhereTheyCanBeCaught() throws {
        let dir = TempDir()
        let realm = try zoo(dir)
        // the builder piece that throws: an argument that cannot be one (an unmanaged object is
        // one: it matches no link, as in RealmSwift)
        #expect(throws: StrataError.self) { _ = try QueryArgs([NSObject()], what: "test") }
        #expect(realm.objects(Person.self).filter("ANY dogs == %@", Dog()).count == 0)
        var spec = QuerySpec()
        spec.add(format: "%K == %@ AND c == '%@'", ["a", 1])
        #expect(spec.text == "a == $1 AND c == '%@'")
        spec.add(format: "e == %@ OR f == $0", [3])
        #expect(spec.text == "(a == $1 AND c == '%@') AND (e == $2 OR f == $2)")
        #expect(spec.args.count == 3)
        let info = realm.instance.tableInfo(Dog.self)
        #expect(ResultsBase.linkingObjectsSpelledOut("ANY owners.age > 3 AND name == 'owners' AND x.owners == 1", info)
                    == "ANY @links.Person.dogs.age > 3 AND name == 'owners' AND x.owners == 1")
        _ = realm
    }

    /// What a Results keeps between runs (its text, compiled query and constant arguments) and
    /// the formats parsed before stay right: a query freed when the Realm's cache of compiled
    /// queries filled up is compiled again, a live Results given for IN is read at each run, an
    /// object argument is read by its key at each run, and a format with `%K` is parsed anew for
    /// each key path.
    @Test func keptQueriesAndParsedFormatsStayRight() throws {
        let dir = TempDir()
        let realm = try zoo(dir)
        let older = realm.objects(Dog.self).filter("age > %@", 4)
        #expect(older.count == 3)
        for i in 0..<300 { _ = realm.objects(Dog.self).filter("age > \(i % 10) AND name != 'q\(i)'").count }
        #expect(older.count == 3) // (its kept query was freed with the cache: compiled again)
        try realm.write { realm.add(Dog(value: ["name": "老黄", "age": 12])) }
        #expect(older.count == 4)

        let young = realm.objects(Dog.self).filter("age < 3")
        let ownersOfYoung = realm.objects(Person.self).filter("ANY dogs IN %@", young)
        #expect(ownersOfYoung.count == 2)
        try realm.write {
            realm.objects(Person.self).filter("name == %@", "José").first!.dogs.append(Dog(value: ["name": "豆豆", "age": 1]))
        }
        #expect(ownersOfYoung.count == 3) // (the Results given is read again)
        let shelf = try Realm(configuration: config(dir, "books.realm", types: [Book.self]))
        let wanted = Book(value: ["title": "wanted", "tags": ["a"]])
        try shelf.write {
            shelf.add(wanted)
            for t in ["a", "b", "c"] { shelf.add(Book(value: ["title": t])) }
        }
        let named = shelf.objects(Book.self).filter("title IN %@", wanted.tags)
        #expect(named.count == 1)
        try shelf.write { wanted.tags.append("b") }
        #expect(named.count == 2) // (a List of values too)

        let li = Person(value: ["name": "王五", "age": 50])
        let lisDogs = realm.objects(Dog.self).filter("ANY owners == %@", li)
        #expect(lisDogs.count == 0) // unmanaged: no object of the file
        try realm.write {
            realm.add(li)
            li.dogs.append(realm.objects(Dog.self).filter("name == %@", "老黄").first!)
        }
        #expect(lisDogs.count == 1)

        #expect(realm.objects(Person.self).filter("%K == %@", "name", "李四").count == 1)
        #expect(realm.objects(Person.self).filter("%K == %@", "age", 19).count == 1)
        #expect(realm.objects(Person.self).filter("%K > %@", "age", 20).filter("%K > %@", "age", 40).count == 2)
        // the same format as a first filter and after another (its arguments numbered after)
        #expect(realm.objects(Person.self).filter("age > %@", 20).count == 3)
        #expect(realm.objects(Person.self).filter("name != %@", "x").filter("age > %@", 40).count == 2)
    }
}
