import Foundation
import Testing
@testable import Strata

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
