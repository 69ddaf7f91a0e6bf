import Foundation
import Testing
@_spi(StrataCore) @testable import Strata

/// A random sequence of adds, sets, deletes and list operations through the Swift API, checked
/// against a plain in-memory model after every commit, and again after the file is reopened.
@Suite("Objects: random operations against a model")
struct RandomizedModelTests {
    struct Rng {
        var state: UInt64
        mutating func next() -> UInt64 {
            state &+= 0x9E37_79B9_7F4A_7C15
            var z = state
            z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
            z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
            return z ^ (z >> 31)
        }
        mutating func below(_ n: Int) -> Int { Int(next() % UInt64(n)) }
    }

    /// The model: people by id (name, age, dog names in order), dogs by their unique name.
    struct Model {
        var people: [String: (name: String, age: Int, dogs: [String])] = [:]
        var dogs: [String: Int] = [:] // name -> age
    }

    static func check(_ realm: Realm, _ m: Model, _ step: Int) {
        let people = realm.objects(Person.self)
        #expect(people.count == m.people.count, "step \(step): people")
        for p in people {
            guard let want = m.people[p.id] else {
                Issue.record("step \(step): unexpected person \(p.id)")
                continue
            }
            #expect(p.name == want.name && p.age == want.age, "step \(step): person \(p.id)")
            #expect(p.dogs.map(\.name) == want.dogs, "step \(step): dogs of \(p.id)")
        }
        let dogs = realm.objects(Dog.self)
        #expect(dogs.count == m.dogs.count, "step \(step): dogs")
        for d in dogs {
            #expect(m.dogs[d.name] == d.age, "step \(step): dog \(d.name)")
            let owners = Set(d.owners.map(\.id))
            let want = Set(m.people.filter { $0.value.dogs.contains(d.name) }.map(\.key))
            #expect(owners == want, "step \(step): owners of \(d.name)")
        }
    }

    @Test(arguments: [1, 2, 3])
    func randomOperationsMatchTheModel(seed: UInt64) throws {
        let dir = TempDir()
        let cfg = config(dir)
        var rng = Rng(state: seed)
        var m = Model()
        var nextDog = 0
        do {
            let realm = try Realm(configuration: cfg)
            for step in 0..<150 {
                try realm.write {
                    for _ in 0..<(1 + rng.below(4)) {
                        let ids = m.people.keys.sorted(), dogNames = m.dogs.keys.sorted()
                        switch rng.below(9) {
                        case 0, 1: // a person, maybe with new dogs
                            let p = Person(value: ["name": "p\(rng.below(1000))", "age": rng.below(100)])
                            var names: [String] = []
                            for _ in 0..<rng.below(3) {
                                let n = "d\(nextDog)"; nextDog += 1
                                let age = rng.below(20)
                                p.dogs.append(Dog(value: ["name": n, "age": age]))
                                m.dogs[n] = age
                                names.append(n)
                            }
                            realm.add(p)
                            m.people[p.id] = (p.name, p.age, names)
                        case 2 where !ids.isEmpty: // set properties
                            let id = ids[rng.below(ids.count)]
                            let p = realm.object(ofType: Person.self, forPrimaryKey: id)!
                            p.age = rng.below(100)
                            p.name = "n\(rng.below(1000))"
                            m.people[id]!.age = p.age
                            m.people[id]!.name = p.name
                        case 3 where !ids.isEmpty && !dogNames.isEmpty: // append an existing dog
                            let id = ids[rng.below(ids.count)], d = dogNames[rng.below(dogNames.count)]
                            let dog = realm.objects(Dog.self).first { $0.name == d }!
                            realm.object(ofType: Person.self, forPrimaryKey: id)!.dogs.append(dog)
                            m.people[id]!.dogs.append(d)
                        case 4 where !ids.isEmpty: // remove from a list
                            let id = ids[rng.below(ids.count)]
                            guard !m.people[id]!.dogs.isEmpty else { break }
                            let i = rng.below(m.people[id]!.dogs.count)
                            realm.object(ofType: Person.self, forPrimaryKey: id)!.dogs.remove(at: i)
                            m.people[id]!.dogs.remove(at: i)
                        case 5 where !ids.isEmpty: // move within a list
                            let id = ids[rng.below(ids.count)]
                            let n = m.people[id]!.dogs.count
                            guard n > 1 else { break }
                            let a = rng.below(n), b = rng.below(n)
                            realm.object(ofType: Person.self, forPrimaryKey: id)!.dogs.move(from: a, to: b)
                            let x = m.people[id]!.dogs.remove(at: a)
                            m.people[id]!.dogs.insert(x, at: b)
                        case 6 where !dogNames.isEmpty: // delete a dog: it leaves every list
                            let d = dogNames[rng.below(dogNames.count)]
                            realm.delete(realm.objects(Dog.self).first { $0.name == d }!)
                            m.dogs[d] = nil
                            for k in m.people.keys { m.people[k]!.dogs.removeAll { $0 == d } }
                        case 7 where !ids.isEmpty: // delete a person
                            let id = ids[rng.below(ids.count)]
                            realm.delete(realm.object(ofType: Person.self, forPrimaryKey: id)!)
                            m.people[id] = nil
                        case 8 where !dogNames.isEmpty: // change a dog
                            let d = dogNames[rng.below(dogNames.count)]
                            let age = rng.below(20)
                            realm.objects(Dog.self).first { $0.name == d }!.age = age
                            m.dogs[d] = age
                        default: break
                        }
                    }
                }
                RandomizedModelTests.check(realm, m, step) // after every commit
            }
            try realm.instance.shared.db.verify()
        }
        RandomizedModelTests.check(try Realm(configuration: cfg), m, -1) // after reopening
    }
}
