import Foundation
import Testing
@_spi(StrataCore) @testable import Strata

@Suite("Results: the typed where { } form")
struct TypedQueryTests {
    private func zoo(_ dir: TempDir) throws -> Realm {
        let realm = try Realm(configuration: config(dir))
        let star = Company(value: ["name": "星辰科技"])
        let zhang = Person(value: ["name": "张三", "age": 30])
        zhang.company = star
        for (n, c, a) in [("小狗子", "黑色", 2), ("小黑", "黑色", 5), ("大白", "白色", 9), ("Zoë", "white", 4)] {
            zhang.dogs.append(Dog(value: ["name": n, "color": c, "age": a]))
        }
        let li = Person(value: ["name": "李四", "age": 41])
        li.dogs.append(Dog(value: ["name": "大花", "color": "白色", "age": 1]))
        try realm.write {
            realm.add(zhang)
            realm.add(li)
            realm.add(Dog(value: ["name": "Rex", "age": 7]))
        }
        return realm
    }

    @Test func theSeedsQueriesInBothForms() throws {
        let dir = TempDir()
        let realm = try zoo(dir)
        let dogs = realm.objects(Dog.self)
        let typed = dogs.where { $0.color == "黑色" && $0.name.starts(with: "小") }.sorted(byKeyPath: "name")
        let string = dogs.filter("color = '黑色' AND name BEGINSWITH '小'").sorted(byKeyPath: "name")
        #expect(typed.map(\.name) == ["小狗子", "小黑"])
        #expect(string.map(\.name) == typed.map(\.name))
        // a list's where is the same query over its objects
        #expect(realm.objects(Person.self)[0].dogs.where { $0.age > 4 }.count == dogs.where { $0.age > 4 && $0.owners.count > 0 }.count)
        for d in typed { #expect(d.owners.map(\.name) == ["张三"]) }
        // the update of every 白色 dog whose name begins with 大, in one write
        let white = dogs.where { $0.color == "白色" && $0.name.starts(with: "大") }
        #expect(white.count == 2)
        try realm.write { for d in Array(white) { d.color = "花色" } }
        #expect(white.isEmpty)
        let other = try DispatchQueue(label: "other").sync {
            try Realm(configuration: config(dir)).objects(Dog.self).where { $0.color == "花色" }.count
        }
        #expect(other == 2)
    }

    @Test func everyOperatorOnStringsNumbersNilsLinksAndLists() throws {
        let dir = TempDir()
        let realm = try zoo(dir)
        let dogs = realm.objects(Dog.self)
        func names(_ r: Results<Dog>) -> [String] { r.map(\.name) }
        #expect(names(dogs.where { $0.age > 4 }) == ["小黑", "大白", "Rex"])
        #expect(names(dogs.where { $0.age >= 4 && $0.age < 9 }) == ["小黑", "Zoë", "Rex"])
        #expect(names(dogs.where { !($0.age <= 4) || $0.name == "Zoë" }) == ["小黑", "大白", "Zoë", "Rex"])
        #expect(names(dogs.where { $0.age.contains(2...5) }) == ["小狗子", "小黑", "Zoë"])
        #expect(names(dogs.where { $0.color == nil }) == ["Rex"])
        #expect(names(dogs.where { $0.color != nil && $0.color != "黑色" }) == ["大白", "Zoë", "大花"])
        #expect(names(dogs.where { $0.name.in(["Rex", "Zoë", "nobody"]) }) == ["Zoë", "Rex"])
        #expect(names(dogs.where { $0.name.ends(with: "白") }) == ["大白"])
        #expect(names(dogs.where { $0.name.contains("OE", options: [.caseInsensitive, .diacriticInsensitive]) }) == ["Zoë"])
        #expect(names(dogs.where { $0.name.contains("OE", options: .caseInsensitive) }).isEmpty)
        #expect(names(dogs.where { $0.name.equals("zoe", options: [.caseInsensitive, .diacriticInsensitive]) }) == ["Zoë"])
        #expect(names(dogs.where { $0.name.like("?o*") }) == ["Zoë"])
        #expect(names(dogs.where { $0.name.like("r*", caseInsensitive: true) }) == ["Rex"])
        // a string argument may hold any character: it is never pasted into the text
        #expect(names(dogs.where { $0.name == "it's \"quoted\" %@ $0" }).isEmpty)
        // links, lists, linking objects, aggregates
        let people = realm.objects(Person.self)
        #expect(people.where { $0.company.name == "星辰科技" }.map(\.name) == ["张三"])
        #expect(people.where { $0.company == nil }.map(\.name) == ["李四"])
        #expect(people.where { $0.dogs.color == "白色" }.map(\.name) == ["张三", "李四"])
        #expect(people.where { $0.dogs.count > 1 }.map(\.name) == ["张三"])
        #expect(people.where { $0.dogs.age.sum > 10 }.map(\.name) == ["张三"])
        #expect(people.where { $0.dogs.age.max < 5 }.map(\.name) == ["李四"])
        #expect(people.where { $0.dogs.age.avg == 1 }.map(\.name) == ["李四"])
        #expect(names(dogs.where { $0.owners.age > 40 }) == ["大花"])
        #expect(names(dogs.where { $0.owners.count == 0 }) == ["Rex"])
        let star = realm.objects(Company.self).first!
        #expect(people.where { $0.company == star }.map(\.name) == ["张三"])
        // two properties compared, and typed queries on a list
        #expect(people.where { $0.dogs.age.max > $0.dogs.age.min }.map(\.name) == ["张三"])
        #expect(people.where { $0.dogs.age.max == $0.dogs.age.min }.map(\.name) == ["李四"])
        #expect(people.where { $0.dogs.age.max > $0.dogs.age.avg }.map(\.name) == ["张三"])   // Int with Double
        #expect(people.where { $0.age > $0.dogs.age.sum }.map(\.name) == ["张三", "李四"])
        let zhang = people.where { $0.name == "张三" }.first!
        #expect(zhang.dogs.where { $0.age < 5 }.map(\.name) == ["小狗子", "Zoë"])
    }

    @Test func boolsAloneListsOfValuesSubqueriesEnumsAndRanges() throws {
        let dir = TempDir()
        let realm = try Realm(configuration: config(dir, types: [Book.self, Message.self, Company.self, Person.self, Dog.self]))
        try realm.write {
            realm.add(Book(value: ["title": "a", "price": 10.0, "tags": ["x", "y"]]))
            realm.add(Book(value: ["title": "b", "price": 20.0, "tags": ["y"]]))
            realm.add(Book(value: ["title": "c", "price": 30.0, "tags": []]))
            realm.add(Message(value: ["id": 1, "text": "hi", "read": true]))
            realm.add(Message(value: ["id": 2, "text": "yo", "read": false]))
        }
        let books = realm.objects(Book.self)
        func titles(_ r: Results<Book>) -> [String] { r.map(\.title).sorted() }
        #expect(realm.objects(Message.self).where { $0.read }.map(\.id) == [1])
        #expect(realm.objects(Message.self).where { !$0.read }.map(\.id) == [2])
        #expect(realm.objects(Message.self).where { $0.read || $0.id == 2 }.count == 2)
        #expect(titles(books.where { $0.tags.contains("x") }) == ["a"])
        #expect(titles(books.where { $0.tags.containsAny(in: ["x", "y"]) }) == ["a", "b"])
        #expect(titles(books.where { $0.tags == "y" }) == ["a", "b"])
        #expect(titles(books.where { $0.tags.count == 0 }) == ["c"])
        #expect(titles(books.where { $0.price.contains(10.0..<30.0) }) == ["a", "b"])
        #expect(titles(books.where { $0.price.contains(10.0...30.0) }) == ["a", "b", "c"])
        #expect(titles(books.where { $0.title.in(["a", "c"]) }) == ["a", "c"])
        let zooRealm = try zoo(TempDir())
        let people = zooRealm.objects(Person.self)
        // two conditions on the same dog (a SUBQUERY), not on any two dogs
        #expect(people.where { ($0.dogs.color == "黑色" && $0.dogs.age > 4).count == 1 }.map(\.name) == ["张三"])
        #expect(people.where { ($0.dogs.color == "白色" && $0.dogs.age < 2).count > 0 }.map(\.name) == ["李四"])
        // key path literals through dynamic members (RealmSwift's tests build them so)
        let path = \Query<Person>.company.name
        #expect((Query<Person>._constructForTesting()[keyPath: path] == "星辰科技")._constructPredicate().0 == "(company.name == %@)")
        let count = \Query<Person>.company.employees.count
        #expect((Query<Person>._constructForTesting()[keyPath: count] > 1)._constructPredicate().0 == "(company.employees.@count > %@)")
        let (text, args) = Query<Dog>._constructForTesting().name.starts(with: "小", options: [.caseInsensitive])._constructPredicate()
        #expect(text == "(name BEGINSWITH[c] %@)" && args.count == 1)
    }

    @Test func indexMatchingElementsAndValues() throws {
        let dir = TempDir()
        let realm = try zoo(dir)
        let dogs = realm.objects(Dog.self).sorted(byKeyPath: "age")
        #expect(dogs.map(\.name) == ["大花", "小狗子", "Zoë", "小黑", "Rex", "大白"])
        #expect(dogs.index(matching: "color == '黑色'") == 1)
        #expect(dogs.index(matching: { $0.age > 6 }) == 4)
        #expect(dogs.index(matching: "age > 100") == nil)
        #expect(dogs.objects(at: IndexSet([0, 5])).map(\.name) == ["大花", "大白"])
        #expect(dogs.value(forKey: "age") as? [Int] == [1, 2, 4, 5, 7, 9])
        #expect(dogs.filter("age == %d", 9).count == 1 && dogs.filter("age > %ld AND age < %lld", 1, 5).count == 2)
        #expect(realm.objects(Person.self).filter("ANY dogs == %@", Dog()).count == 0) // an unmanaged object: no match
        #expect(dogs.value(forKeyPath: "@max.age") as? Int == 9 && dogs.value(forKeyPath: "@count") as? Int == 6)
        #expect(dogs.value(forKeyPath: "@avg.age") as? Double == 28.0 / 6)
    }

    @Test func subqueriesThroughCountsAndMapsOfOptionalObjects() throws {
        let dir = TempDir()
        let realm = try Realm(configuration: config(dir, types: zooTypes + [Kennel.self, AllTypes.self]))
        try realm.write {
            let owner = realm.create(Person.self, value: ["name": "王", "dogs": [["name": "a", "age": 3], ["name": "b", "age": 8]]])
            let k = realm.create(Kennel.self, value: ["name": "k"])
            k.dogs["x"] = owner.dogs[1]
            k.dogs["none"] = .some(nil)
            let holder = realm.create(AllTypes.self, value: ["int": 1])
            holder.links.append(realm.create(AllTypes.self, value: ["int": 2, "ints": [1, 2, 3]]))
            holder.links.append(realm.create(AllTypes.self, value: ["int": 3, "ints": [4]]))
        }
        // a subquery ranges over the collection its key paths go through, counts included
        let found = realm.objects(AllTypes.self).where { ($0.links.ints.count > 1 && $0.links.int > 1).count == 1 }
        #expect(found.map(\.int) == [1])
        #expect(realm.objects(AllTypes.self).where { ($0.links.ints.count > 5).count > 0 }.isEmpty)
        // a map of optional objects queried by its objects' properties
        let kennel = try #require(realm.objects(Kennel.self).first)
        #expect(kennel.dogs.where { $0.age > 5 }.map { $0?.name } == ["b"])
    }

    @Test func randomTypedAndStringQueriesAgreeWithBruteForce() throws {
        let dir = TempDir()
        let realm = try Realm(configuration: config(dir))
        var rng = SystemRandomNumberGenerator()
        let words = ["", "a", "ab", "小白", "小黑", "Zoë", "ZOE", "é"]
        try realm.write {
            for i in 0..<300 {
                let d = Dog()
                d.name = words[i % words.count] + String(i % 7)
                d.color = i % 5 == 0 ? nil : words[(i / 3) % words.count]
                d.age = Int.random(in: 0..<20, using: &rng)
                realm.add(d)
            }
        }
        let all = Array(realm.objects(Dog.self))
        for _ in 0..<200 {
            let k = Int.random(in: 0..<20, using: &rng)
            let w = words.randomElement(using: &rng)!
            let pick = Int.random(in: 0..<6, using: &rng)
            let typed: Results<Dog>, string: Results<Dog>, brute: [Dog]
            switch pick {
            case 0:
                typed = realm.objects(Dog.self).where { $0.age > k && $0.color != nil }
                string = realm.objects(Dog.self).filter("age > %@ AND color != nil", k)
                brute = all.filter { $0.age > k && $0.color != nil }
            case 1:
                typed = realm.objects(Dog.self).where { $0.name.starts(with: w) || $0.age == k }
                string = realm.objects(Dog.self).filter("name BEGINSWITH %@ OR age == %@", w, k)
                brute = all.filter { $0.name.hasPrefix(w) || $0.age == k }
            case 2:
                typed = realm.objects(Dog.self).where { $0.color == w }
                string = realm.objects(Dog.self).filter("color == %@", w)
                brute = all.filter { $0.color == w }
            case 3:
                typed = realm.objects(Dog.self).where { !$0.name.contains(w) && $0.age <= k }
                string = realm.objects(Dog.self).filter("NOT name CONTAINS %@ AND age <= %@", w, k)
                brute = all.filter { !(w.isEmpty || $0.name.utf8.contains(w.utf8)) && $0.age <= k }
            case 4:
                typed = realm.objects(Dog.self).where { $0.age.contains(k...(k + 3)) }
                string = realm.objects(Dog.self).filter("age BETWEEN {%@, %@}", k, k + 3)
                brute = all.filter { (k...(k + 3)).contains($0.age) }
            default:
                typed = realm.objects(Dog.self).where { $0.color.in([w, "小白"]) }
                string = realm.objects(Dog.self).filter("color IN %@", [w, "小白"])
                brute = all.filter { $0.color == w || $0.color == "小白" }
            }
            let want = brute.map(\.name)
            #expect(typed.map(\.name) == want, "case \(pick), k \(k), w '\(w)'")
            #expect(string.map(\.name) == want, "case \(pick), k \(k), w '\(w)'")
        }
    }
}

private extension Sequence where Element: Equatable {
    func contains<S: Sequence>(_ other: S) -> Bool where S.Element == Element {
        let a = Array(self), b = Array(other)
        if b.isEmpty { return true }
        if b.count > a.count { return false }
        return (0...(a.count - b.count)).contains { i in Array(a[i..<(i + b.count)]) == b }
    }
}
