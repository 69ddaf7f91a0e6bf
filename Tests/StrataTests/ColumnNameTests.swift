import Foundation
import Testing
@_spi(StrataCore) @testable import Strata

/// Stored under other names (RealmSwift's `propertiesMapping()`).
final class Renamed: Object {
    @Persisted(primaryKey: true) var pk: Int
    @Persisted(indexed: true) var title: String
    @Persisted var rank: Int
    @Persisted var owner: Renamed?
    @Persisted var tags: List<String>
    @Persisted var scores: Map<String, Int>
    @Persisted(originProperty: "owner") var owned: LinkingObjects<Renamed>

    override class func propertiesMapping() -> [String: String] {
        ["pk": "_id", "title": "custom_title", "owner": "custom_owner", "tags": "custom_tags",
         "scores": "custom_scores"]
    }

    convenience init(_ pk: Int, _ title: String, rank: Int, owner: Renamed? = nil) {
        self.init()
        self.pk = pk
        self.title = title
        self.rank = rank
        self.owner = owner
    }
}

/// Classes of single tests, nested so that a Realm opened without `objectTypes` does not find them
/// (two of them share a class name; two are refused on purpose).
enum ColumnModels {
    /// The same class as the file had it before its title was stored under another name.
    final class RenamedBefore: Object {
        @Persisted(primaryKey: true) var pk: Int
        @Persisted var title: String
        override class func className() -> String { "Renamed2" }
    }

    final class RenamedAfter: Object {
        @Persisted(primaryKey: true) var pk: Int
        @Persisted var title: String
        override class func className() -> String { "Renamed2" }
        override class func propertiesMapping() -> [String: String] { ["title": "custom_title"] }
    }

    final class MappingUnknownProperty: Object {
        @Persisted var name: String
        override class func propertiesMapping() -> [String: String] { ["nmae": "x"] }
    }

    final class MappingSharedColumn: Object {
        @Persisted var first: String
        @Persisted var second: String
        override class func propertiesMapping() -> [String: String] { ["first": "second"] }
    }
}

@Suite("Column names: properties stored under other names (propertiesMapping)")
struct ColumnNameTests {
    private func realm(_ dir: TempDir) throws -> Realm {
        let realm = try Realm(configuration: config(dir, types: [Renamed.self]))
        try realm.write {
            let a = realm.create(Renamed.self, value: ["pk": 1, "title": "alpha", "rank": 3])
            let b = Renamed(2, "beta", rank: 1, owner: a)
            b.tags.append(objectsIn: ["x", "y"])
            b.scores["math"] = 9
            realm.add(b)
            realm.add(Renamed(3, "alpha", rank: 2, owner: a))
        }
        return realm
    }

    /// The file's own names for the class's properties.
    private func storedNames(_ realm: Realm, _ table: String) throws -> [String] {
        let txn = try CoreTxn(db: realm.instance.shared.db, write: false)
        defer { txn.free() }
        return try txn.table(table)!.properties().map(\.name)
    }

    @Test func theFileStoresColumnNamesAndTheSchemaShowsBoth() throws {
        let dir = TempDir()
        let realm = try realm(dir)
        #expect(try storedNames(realm, "Renamed").sorted()
                == ["_id", "custom_owner", "custom_scores", "custom_tags", "custom_title", "rank"])
        let schema = try #require(realm.schema["Renamed"])
        #expect(schema.primaryKeyProperty?.name == "pk" && schema.primaryKeyProperty?.columnName == "_id")
        #expect(schema["title"]?.columnName == "custom_title" && schema["rank"]?.columnName == "rank")
        #expect(schema.description.contains("columnName = custom_owner;"))
    }

    @Test func queriesSortsAndKeyValueCodingUsePropertyNames() throws {
        let dir = TempDir()
        let realm = try realm(dir)
        let all = realm.objects(Renamed.self)
        #expect(all.filter("title == 'alpha'").count == 2)
        #expect(all.where { $0.title == "beta" }.first?.pk == 2)
        #expect(all.filter("owner.title == 'alpha' AND ANY tags == 'y'").map(\.pk) == [2])
        #expect(all.filter("scores['math'] > 5").map(\.pk) == [2])
        #expect(all.filter("owned.@count == 2").map(\.pk) == [1])
        #expect(all.filter("ANY owned.title == 'beta'").map(\.pk) == [1])
        #expect(all.sorted(byKeyPath: "title", ascending: false).map(\.pk).first == 2)
        #expect(all.sorted(by: \.rank).map(\.pk) == [2, 3, 1])
        #expect(all.distinct(by: ["title"]).count == 2)
        #expect(all.sum(ofProperty: "rank") as Int == 6)
        #expect(all.max(of: \.pk) == 3)
        #expect(realm.object(ofType: Renamed.self, forPrimaryKey: 2)?.owner?.pk == 1)
        #expect(realm.object(ofType: Renamed.self, forPrimaryKey: 1)?.owned.count == 2)
        #expect((all.sorted(byKeyPath: "pk").value(forKey: "title") as? [String]) == ["alpha", "beta", "alpha"])
        try realm.write { all.setValue("gamma", forKey: "title") }
        #expect(all.filter("title == 'gamma'").count == 3)
        let o = try #require(realm.object(ofType: Renamed.self, forPrimaryKey: 2))
        try realm.write { o.setValue(7, forKey: "rank"); o["title"] = "delta" }
        #expect(o.rank == 7 && o.title == "delta" && (o.value(forKey: "title") as? String) == "delta")
        let dynamic = try #require(realm.dynamicObjects("Renamed").filter("pk == 2").first)
        #expect(dynamic["title"] as? String == "delta")
        // the column's own name is still found by a predicate (as realm-core's key-path mapping does)
        #expect(all.filter("custom_title == 'delta'").count == 1)
    }

    @Test func observingAKeyPathByItsPropertyName() throws {
        let dir = TempDir()
        let realm = try realm(dir)
        let o = try #require(realm.object(ofType: Renamed.self, forPrimaryKey: 1))
        var seen: [String] = []
        let token = o.observe(keyPaths: ["title"]) { change in
            if case .change(_, let props) = change { seen += props.map(\.name) }
        }
        defer { token.invalidate() }
        try realm.write { o.rank = 10 }
        realm.refresh()
        try realm.write { o.title = "omega" }
        realm.refresh()
        #expect(seen == ["title"])
    }

    @Test func aMigrationMovesValuesIntoTheNewColumn() throws {
        let dir = TempDir()
        do {
            let realm = try Realm(configuration: config(dir, types: [ColumnModels.RenamedBefore.self]))
            try realm.write { realm.create(ColumnModels.RenamedBefore.self, value: ["pk": 1, "title": "kept"]) }
        }
        var cfg = config(dir, types: [ColumnModels.RenamedAfter.self], version: 1)
        cfg.migrationBlock = { migration, _ in
            migration.enumerateObjects(ofType: "Renamed2") { old, new in
                new!["title"] = old!["title"] // the old object has the file's names, the new one the class's
            }
        }
        let realm = try Realm(configuration: cfg)
        #expect(realm.object(ofType: ColumnModels.RenamedAfter.self, forPrimaryKey: 1)?.title == "kept")
        #expect(try storedNames(realm, "Renamed2").sorted() == ["custom_title", "pk"])
    }

    @Test func aMappingThatNamesNoPropertyOrSharesAColumnIsRefused() throws {
        let dir = TempDir()
        #expect {
            _ = try Realm(configuration: config(dir, types: [ColumnModels.MappingUnknownProperty.self]))
        } throws: { "\($0)".contains("names property 'nmae', which 'MappingUnknownProperty' does not have") }
        #expect {
            _ = try Realm(configuration: config(dir, "b.realm", types: [ColumnModels.MappingSharedColumn.self]))
        } throws: { "\($0)".contains("'MappingSharedColumn.first' and 'MappingSharedColumn.second' are both stored as column 'second'") }
    }
}
