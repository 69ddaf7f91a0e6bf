import Foundation
import Testing
@_spi(StrataCore) @testable import Strata

final class ProjAddress: EmbeddedObject {
    @Persisted var city = ""
}

final class ProjPerson: Object {
    @Persisted var firstName = ""
    @Persisted var lastName = ""
    @Persisted var age = 0
    @Persisted var address: ProjAddress?
    @Persisted var friends: List<ProjPerson>
}

final class PersonProjection: Projection<ProjPerson> {
    @Projected(\ProjPerson.firstName) var firstName
    @Projected(\ProjPerson.lastName.localizedUppercase) var lastNameCaps
    @Projected(\ProjPerson.address?.city) var homeCity
    @Projected(\ProjPerson.friends.projectTo.firstName) var friendsNames: ProjectedCollection<String>
}

/// Projections (RealmSwift's `Projection` / `@Projected`): results of a projection class, key
/// paths through links and `projectTo`, writes through a projection, observation, freezing.
@Suite("Projections: view models over objects")
struct ProjectionTests {
    static func realm(_ dir: TempDir) throws -> Realm {
        let realm = try Realm(configuration: config(dir, types: [ProjPerson.self, ProjAddress.self]))
        try realm.write {
            let jon = ProjPerson(value: ["firstName": "Jon", "lastName": "Snow", "age": 20, "address": ["city": "Winterfell"]])
            let dany = ProjPerson(value: ["firstName": "Daenerys", "lastName": "Targaryen", "age": 21])
            jon.friends.append(dany)
            realm.add([jon, dany])
        }
        return realm
    }

    @Test func resultsPropertiesAndWrites() throws {
        let dir = TempDir()
        let realm = try Self.realm(dir)
        let people = realm.objects(PersonProjection.self)
        #expect(people.count == 2)
        let jon = people.filter("firstName == 'Jon'").first!
        #expect(jon.firstName == "Jon" && jon.lastNameCaps == "SNOW" && jon.homeCity == "Winterfell")
        #expect(Array(jon.friendsNames) == ["Daenerys"])
        #expect(people.sorted(byKeyPath: "age", ascending: false).map(\.firstName) == ["Daenerys", "Jon"])
        #expect(jon == PersonProjection(projecting: jon.rootObject))
        let again = realm.objects(PersonProjection.self).filter("lastName == 'Snow'").first!
        #expect(again == jon && again.hashValue == jon.hashValue) // the same row: equal
        #expect(again != people.filter("firstName == 'Daenerys'").first!)
        #expect(jon.description.contains("firstName(\\.firstName) = Jon;"))
        #expect(jon.description.contains("homeCity(\\.address.city)"))
        try realm.write { jon.firstName = "Aegon" }   // writes the root
        #expect(jon.rootObject.firstName == "Aegon")
        // frozen: readable from any thread
        let frozen = jon.freeze()
        try realm.write { jon.rootObject.firstName = "Jon" }
        #expect(frozen.isFrozen && frozen.firstName == "Aegon" && jon.firstName == "Jon")
        #expect(frozen.thaw()?.firstName == "Jon")
        // a projected collection: frozen, observed, written through
        let names = jon.friendsNames
        let frozenNames = names.freeze()
        var seen: [[String]] = []
        let token = names.observe { change in
            if case .update(let c, _, _, let mods) = change, !mods.isEmpty { seen.append(Array(c)) }
        }
        realm.refresh()
        try realm.write { jon.friendsNames[0] = "Dany" }
        #expect(Array(frozenNames) == ["Daenerys"] && frozenNames.isFrozen)
        #expect(Array(names) == ["Dany"] && seen == [["Dany"]])
        #expect(names.index(of: "Dany") == 0 && frozenNames.thaw().map(Array.init) == ["Dany"])
        token.invalidate()
    }

    @Test func observingReportsProjectedNames() throws {
        let dir = TempDir()
        let realm = try Self.realm(dir)
        let jon = realm.objects(PersonProjection.self).filter("firstName == 'Jon'").first!
        var changes: [[String]] = []
        let token = jon.observe { change in
            if case .change(_, let props) = change { changes.append(props.map(\.name)) }
        }
        realm.refresh()
        try realm.write { jon.rootObject.lastName = "Stark" }
        try realm.write { jon.rootObject.age = 30 }       // not projected: no notification
        try realm.write { jon.rootObject.address?.city = "The Wall" }
        #expect(changes == [["lastNameCaps"], ["homeCity"]])
        // key paths name the root's properties (RealmSwift's rule): only lastName now
        var only: [[String]] = []
        let t2 = jon.observe(keyPaths: ["lastName"]) { change in
            if case .change(_, let props) = change { only.append(props.map(\.name)) }
        }
        realm.refresh()
        try realm.write { jon.rootObject.firstName = "Aegon" }
        try realm.write { jon.rootObject.lastName = "Targaryen" }
        #expect(only == [["lastNameCaps"]])
        t2.invalidate()
        #expect(jon.lastNameCaps == "TARGARYEN" && jon.homeCity == "The Wall")
        token.invalidate()
    }
}
