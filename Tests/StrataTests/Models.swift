import Foundation
import Strata

// The models of the tests: the seeds' Company/Person/Dog, Book, Message, and one of every type.

final class Company: Object {
    @Persisted(primaryKey: true) var name = ""
    @Persisted var founded: Date?
    @Persisted(originProperty: "company") var employees: LinkingObjects<Person>
}

final class Person: Object {
    @Persisted(primaryKey: true) var id = UUID().uuidString
    @Persisted(indexed: true) var name = ""
    @Persisted var age = 0
    @Persisted var company: Company?
    @Persisted var dogs: List<Dog>
    var selected = false // no @Persisted: ignored, never stored
}

final class Dog: Object {
    @Persisted var name = ""
    @Persisted(indexed: true) var color: String?
    @Persisted var age = 0
    @Persisted(originProperty: "dogs") var owners: LinkingObjects<Person>
}

final class Book: Object {
    @Persisted(primaryKey: true) var isbn = UUID().uuidString
    @Persisted var title = ""
    @Persisted var price: Double = 0
    @Persisted var tags: List<String>
}

final class Message: Object {
    @Persisted(primaryKey: true) var id = 0
    @Persisted var text: String
    @Persisted var sender = "anonymous"
    @Persisted var sentAt = Date(timeIntervalSince1970: 0)
    @Persisted var read = false
    var draft = "" // ignored
}

final class AllTypes: Object {
    @Persisted var bool = false
    @Persisted var int = 0
    @Persisted var int8: Int8 = 0
    @Persisted var int16: Int16 = 0
    @Persisted var int32: Int32 = 0
    @Persisted var int64: Int64 = 0
    @Persisted var float: Float = 0
    @Persisted var double: Double = 0
    @Persisted var string = ""
    @Persisted var data = Data()
    @Persisted var date = Date(timeIntervalSince1970: 0)
    @Persisted var objectId = ObjectId()
    @Persisted var uuid = UUID()
    @Persisted var decimal = Decimal128()
    @Persisted var optBool: Bool?
    @Persisted var optInt: Int?
    @Persisted var optInt8: Int8?
    @Persisted var optInt16: Int16?
    @Persisted var optInt32: Int32?
    @Persisted var optInt64: Int64?
    @Persisted var optFloat: Float?
    @Persisted var optDouble: Double?
    @Persisted var optString: String?
    @Persisted var optData: Data?
    @Persisted var optDate: Date?
    @Persisted var optObjectId: ObjectId?
    @Persisted var optUuid: UUID?
    @Persisted var optDecimal: Decimal128?
    @Persisted var any: AnyRealmValue
    @Persisted var anys: List<AnyRealmValue>
    @Persisted var link: AllTypes?
    @Persisted var ints: List<Int>
    @Persisted var optStrings: List<String?>
    @Persisted var dates: List<Date>
    @Persisted var datas: List<Data>
    @Persisted var links: List<AllTypes>
}
