// The classic example through `import Strata`: Company, Person (name indexed, a company, a list
// of dogs) and Dog (owners through linking objects). Run with `make demo` or
// `swift run StrataDemo [path]`.
import Foundation
import Strata

final class Company: Object {
    @Persisted(primaryKey: true) var name = ""
    @Persisted(originProperty: "company") var employees: LinkingObjects<Person>
}

final class Person: Object {
    @Persisted(primaryKey: true) var id = UUID().uuidString
    @Persisted(indexed: true) var name = ""
    @Persisted var age = 0
    @Persisted var company: Company?
    @Persisted var dogs: List<Dog>
}

final class Dog: Object {
    @Persisted var name = ""
    @Persisted(indexed: true) var color: String?
    @Persisted(originProperty: "dogs") var owners: LinkingObjects<Person>
}

let path = CommandLine.arguments.dropFirst().first ?? NSTemporaryDirectory() + "strata-demo-\(getpid()).realm"
let url = URL(fileURLWithPath: path)
defer {
    for suffix in ["", ".lock", ".log"] { try? FileManager.default.removeItem(atPath: path + suffix) }
}

do {
    let realm = try Realm(configuration: .init(fileURL: url, objectTypes: [Company.self, Person.self, Dog.self]))

    let zhang = Person(value: ["name": "张三", "age": 30, "company": ["name": "星辰科技"]])
    for (name, color) in [("小白", "白色"), ("小黑", "黑色"), ("旺财", "黄色")] {
        zhang.dogs.append(Dog(value: ["name": name, "color": color]))
    }
    try realm.write { realm.add(zhang) }          // adds the company and the dogs too
    print("added \(zhang.name) with \(zhang.dogs.count) dogs at \(zhang.company!.name)")

    for dog in realm.objects(Dog.self) {
        print("  \(dog.name) (\(dog.color ?? "?")) belongs to \(dog.owners.map(\.name).joined(separator: ", "))")
    }

    let little = realm.objects(Dog.self).filter("name BEGINSWITH %@ AND color != %@", "小", "黄色")
    print("dogs whose name starts with 小, not yellow: \(little.sorted(byKeyPath: "name").map(\.name))")

    try realm.write { zhang.name = "张三丰" }
    print("renamed: the dogs' owner is now \(realm.objects(Dog.self)[0].owners[0].name)")

    let black = zhang.dogs[1]
    try realm.write { realm.delete(black) }
    print("deleted 小黑: \(zhang.name)'s dogs are \(zhang.dogs.map(\.name)); "
          + "\(realm.objects(Dog.self).count) dogs left, \(zhang.company!.employees.count) employee(s)")

    do {
        try realm.write { realm.add(Person(value: ["id": zhang.id, "name": "冒名"])) }
    } catch {
        print("a second person with the same id is refused: \(error)")
    }
} catch {
    print("demo failed: \(error)")
    exit(1)
}
