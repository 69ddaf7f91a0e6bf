import Foundation
import Testing
@_spi(StrataCore) @testable import Strata

// Versions of the same classes (a class's name is its unqualified Swift name).
enum MV1 {
    final class Contact: Object {
        @Persisted var firstName = ""
        @Persisted var lastName = ""
        @Persisted var age = 0
        @Persisted var yearsSinceBirth = 0
        @Persisted var nick: String?
        @Persisted var count = 0
        @Persisted var code = ""
    }
    final class Account: Object {
        @Persisted var email = ""
        @Persisted(indexed: true) var name = ""
        @Persisted var age = 0
    }
    final class Legacy: Object {
        @Persisted var note = ""
    }
}

enum MV2 {
    final class Contact: Object {
        @Persisted var fullName = "?"
        @Persisted var age = 0
        @Persisted var years = 0                 // renamed from yearsSinceBirth
        @Persisted var city = "北京"              // added: every old object gets "北京"
        @Persisted var score = 1.5
        @Persisted var born = Date(timeIntervalSince1970: -86_400 * 365)
        @Persisted var nick = "无名"              // String? -> String: nil becomes the default
        @Persisted var count: Int?                // Int -> Int?: values kept
        @Persisted var code = 0                   // String -> Int: converted by the block
    }
    final class Account: Object {
        @Persisted(primaryKey: true) var email = ""
        @Persisted var name = ""                  // index removed
        @Persisted(indexed: true) var age = 0     // index added
    }
}

enum MV4 { // Account's primary key moved from email to name, then removed
    final class Account: Object {
        @Persisted var email = ""
        @Persisted(primaryKey: true) var name = ""
        @Persisted var age: Int?                   // optional now
    }
}

enum MV5 {
    final class Account: Object {
        @Persisted var email = ""
        @Persisted var name = ""
        @Persisted var age: Int?
    }
}

enum MV3 {
    final class Contact: Object {
        @Persisted var fullName = "?"
        @Persisted var age = 0
        @Persisted var years = 0
        @Persisted var city = "北京"
        @Persisted var score = 1.5
        @Persisted var born = Date(timeIntervalSince1970: -86_400 * 365)
        @Persisted var nick = "无名"
        @Persisted var count: Int?
        @Persisted var code = 0
        @Persisted var label = ""                 // V3: fullName + city, made by the block
    }
}

private func v1Contacts(_ dir: TempDir) throws {
    let realm = try Realm(configuration: config(dir, types: [MV1.Contact.self, MV1.Legacy.self], version: 1))
    try realm.write {
        realm.create(MV1.Contact.self, value: ["firstName": "三", "lastName": "张", "age": 40,
                                               "yearsSinceBirth": 40, "nick": "老张", "count": 7, "code": "12"])
        realm.create(MV1.Contact.self, value: ["firstName": "Zoë", "lastName": "Ardent", "age": 31,
                                               "yearsSinceBirth": 31, "count": 0, "code": "x"])
        realm.create(MV1.Legacy.self, value: ["note": "old"])
    }
}

/// The migration block of the app at schema version `target`: the steps from V1 to V2 and
/// (from version 3 on) from V2 to V3, written as an app writes them.
private func contactMigration(upTo target: UInt64) -> Realm.MigrationBlock {
  { migration, old in
    if old < 2 {
        migration.renameProperty(onType: "Contact", from: "yearsSinceBirth", to: "years")
        migration.enumerateObjects(ofType: "Contact") { oldObject, newObject in
            let first = oldObject!["firstName"] as! String, last = oldObject!["lastName"] as! String
            newObject!["fullName"] = last + " " + first
            newObject!["code"] = Int(oldObject!["code"] as! String) ?? -1
        }
        migration.create("Contact", value: ["fullName": "新人", "age": 1])
        migration.deleteData(forType: "Legacy")
    }
    if old < 3 && target >= 3 {
        migration.enumerateObjects(ofType: "Contact") { _, newObject in
            newObject!["label"] = "\(newObject!["fullName"]!)@\(newObject!["city"]!)"
        }
    }
  }
}

private func migratingConfig(_ dir: TempDir, _ types: [Object.Type], _ version: UInt64) -> Realm.Configuration {
    var cfg = config(dir, types: types, version: version)
    cfg.migrationBlock = contactMigration(upTo: version)
    return cfg
}

@Suite struct MigrationTests {
    @Test func addedPropertiesGetTheirDeclaredDefaultsAndTheBlockSeesOldAndNewObjects() throws {
        let dir = TempDir()
        try v1Contacts(dir)
        let realm = try Realm(configuration: migratingConfig(dir, [MV2.Contact.self], 2))
        let all = realm.objects(MV2.Contact.self).sorted(byKeyPath: "age")
        #expect(all.count == 3)
        let newcomer = all[0], zoe = all[1], zhang = all[2]
        #expect(zhang.fullName == "张 三" && zoe.fullName == "Ardent Zoë")
        // declared defaults, not "" or 0, on objects that existed and on the one created
        for c in [zhang, zoe, newcomer] {
            #expect(c.city == "北京" && c.score == 1.5)
            #expect(c.born == Date(timeIntervalSince1970: -86_400 * 365))
        }
        #expect(newcomer.fullName == "新人" && newcomer.nick == "无名")
        // renamed: the data kept
        #expect(zhang.years == 40 && zoe.years == 31)
        // optionality changed: values kept, nil became the default
        #expect(zhang.nick == "老张" && zoe.nick == "无名")
        #expect(zhang.count == 7 && zoe.count == 0)
        // type changed: converted by the block
        #expect(zhang.code == 12 && zoe.code == -1)
        // the class removed from the model had its data deleted
        let txn = try CoreTxn(db: realm.instance.shared.db, write: false)
        defer { txn.free() }
        #expect(try !txn.tableNames().contains("Legacy"))
        #expect(try schemaVersionAtURL(dir.file()) == 2)
    }

    @Test func oneStepAndTwoStepsGiveTheSameData() throws {
        func dump(_ realm: Realm) -> [String] {
            realm.objects(MV3.Contact.self).sorted(byKeyPath: "age").map {
                "\($0.fullName)|\($0.age)|\($0.years)|\($0.city)|\($0.nick)|\($0.count.map(String.init) ?? "nil")|\($0.code)|\($0.label)"
            }
        }
        let direct = TempDir(), stepped = TempDir()
        try v1Contacts(direct)
        try v1Contacts(stepped)
        let a = dump(try Realm(configuration: migratingConfig(direct, [MV3.Contact.self], 3)))
        do { _ = try Realm(configuration: migratingConfig(stepped, [MV2.Contact.self], 2)) }
        let b = dump(try Realm(configuration: migratingConfig(stepped, [MV3.Contact.self], 3)))
        #expect(a == b)
        #expect(a.count == 3 && a.contains("张 三|40|40|北京|老张|7|12|张 三@北京"))
    }

    @Test func oldObjectsShowTheFileAsItWas() throws {
        let dir = TempDir()
        try v1Contacts(dir)
        let seen = Locked<[String]>([])
        var cfg = config(dir, types: [MV2.Contact.self], version: 2)
        cfg.migrationBlock = { migration, _ in
            #expect(migration.oldSchema["Contact"]?["firstName"]?.type == .string)
            #expect(migration.oldSchema["Contact"]?["nick"]?.isOptional == true)
            #expect(migration.oldSchema["Legacy"]?.objectClass == Object.self)
            #expect(migration.newSchema["Contact"]?["firstName"] == nil)
            #expect(migration.newSchema["Contact"]?["city"]?.defaultValue as? String == "北京")
            migration.enumerateObjects(ofType: "Contact") { oldObject, newObject in
                newObject!["age"] = 99
                seen.update { $0.append("\(oldObject!["age"]!)->\(newObject!["age"]!)") }
                #expect(oldObject!["yearsSinceBirth"] != nil && oldObject!["nick"] != nil || oldObject!["count"] as? Int == 0)
            }
        }
        let realm = try Realm(configuration: cfg)
        #expect(seen.get().sorted() == ["31->99", "40->99"])
        #expect(realm.objects(MV2.Contact.self).allSatisfy { $0.age == 99 })
    }

    @Test func aPrimaryKeyOverDuplicatesFailsNamingAValueAndChangesNothing() throws {
        let dir = TempDir()
        do {
            let realm = try Realm(configuration: config(dir, types: [MV1.Account.self], version: 1))
            try realm.write {
                for (e, n) in [("a@x.cn", "甲"), ("b@x.cn", "乙"), ("a@x.cn", "丙")] {
                    realm.create(MV1.Account.self, value: ["email": e, "name": n, "age": 20])
                }
            }
        }
        do {
            _ = try Realm(configuration: config(dir, types: [MV2.Account.self], version: 2))
            Issue.record("a primary key over duplicate values was accepted")
        } catch let e as StrataError {
            #expect(e.message.contains("'Account.email' has duplicate values") && e.message.contains("a@x.cn"))
        }
        #expect(try schemaVersionAtURL(dir.file()) == 1)
        do { // the file opens at its old version with its data
            let realm = try Realm(configuration: config(dir, types: [MV1.Account.self], version: 1))
            #expect(realm.objects(MV1.Account.self).count == 3)
        }
        // a block that makes the values unique lets the key be set
        var cfg = config(dir, types: [MV2.Account.self], version: 2)
        cfg.migrationBlock = { migration, _ in
            migration.enumerateObjects(ofType: "Account") { oldObject, newObject in
                if oldObject!["name"] as? String == "丙" { migration.delete(newObject!) }
            }
        }
        let realm = try Realm(configuration: cfg)
        #expect(realm.objects(MV2.Account.self).count == 2)
        #expect(realm.object(ofType: MV2.Account.self, forPrimaryKey: "a@x.cn")?.name == "甲")
        // indexes: removed from name, added to age
        let txn = try CoreTxn(db: realm.instance.shared.db, write: false)
        defer { txn.free() }
        let props = try txn.table("Account")!.properties()
        #expect(props.first { $0.name == "age" }!.flags.contains(.indexed))
        #expect(!props.first { $0.name == "name" }!.flags.contains(.indexed))
        #expect(props.first { $0.name == "email" }!.flags.contains(.primaryKey))
    }

    @Test func primaryKeysChangeAndGoAndOptionalityChanges() throws {
        let dir = TempDir()
        do {
            let realm = try Realm(configuration: config(dir, types: [MV2.Account.self], version: 2))
            try realm.write {
                realm.create(MV2.Account.self, value: ["email": "a@x.cn", "name": "甲", "age": 30])
                realm.create(MV2.Account.self, value: ["email": "b@x.cn", "name": "乙", "age": 40])
            }
        }
        do { // the key moves to name: values kept, lookups by the new key
            let realm = try Realm(configuration: config(dir, types: [MV4.Account.self], version: 3))
            #expect(realm.object(ofType: MV4.Account.self, forPrimaryKey: "乙")?.email == "b@x.cn")
            #expect(realm.objects(MV4.Account.self).map { $0.age ?? -1 }.sorted() == [30, 40])
            #expect(throws: StrataError.self) {
                try realm.write { realm.create(MV4.Account.self, value: ["name": "甲"]) } // still unique
            }
        }
        // no key at all: duplicates are fine now
        let realm = try Realm(configuration: config(dir, types: [MV5.Account.self], version: 4))
        try realm.write { realm.create(MV5.Account.self, value: ["name": "甲", "email": "c@x.cn"]) }
        #expect(realm.objects(MV5.Account.self).filter("name == '甲'").count == 2)
        let txn = try CoreTxn(db: realm.instance.shared.db, write: false)
        defer { txn.free() }
        let props = try txn.table("Account")!.properties()
        #expect(!props.contains { $0.flags.contains(.primaryKey) })
        #expect(props.first { $0.name == "age" }!.flags.contains(.nullable))
    }

    @Test func aFailureInsideTheBlockRollsEverythingBack() throws {
        let dir = TempDir()
        try v1Contacts(dir)
        var cfg = config(dir, types: [MV2.Account.self, MV2.Contact.self], version: 2)
        cfg.migrationBlock = { migration, _ in
            migration.create("Account", value: ["email": "same@x.cn"])
            migration.create("Account", value: ["email": "same@x.cn"]) // the key set after: duplicate
        }
        #expect(throws: StrataError.self) { _ = try Realm(configuration: cfg) }
        #expect(try schemaVersionAtURL(dir.file()) == 1)
        let realm = try Realm(configuration: config(dir, types: [MV1.Contact.self, MV1.Legacy.self], version: 1))
        #expect(realm.objects(MV1.Contact.self).map(\.firstName).sorted() == ["Zoë", "三"])
    }

    @Test func deleteRealmIfMigrationNeededWipesOnlyWhenNeeded() throws {
        let dir = TempDir()
        try v1Contacts(dir)
        var cfg = config(dir, types: [MV1.Contact.self, MV1.Legacy.self], version: 1)
        cfg.deleteRealmIfMigrationNeeded = true
        do { #expect(try Realm(configuration: cfg).objects(MV1.Contact.self).count == 2) }
        cfg = config(dir, types: [MV2.Contact.self], version: 1)
        cfg.deleteRealmIfMigrationNeeded = true
        let realm = try Realm(configuration: cfg)
        #expect(realm.objects(MV2.Contact.self).isEmpty)
    }

    @Test func migrationMisuseTrapsNamingIt() async {
        await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let dir = TempDir()
            try! v1Contacts(dir)
            var cfg = config(dir, types: [MV2.Contact.self], version: 2)
            cfg.migrationBlock = { migration, _ in
                migration.enumerateObjects(ofType: "Contact") { _, newObject in newObject!["nosuch"] = 1 }
            }
            _ = try! Realm(configuration: cfg)
        }
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let dir = TempDir()
            try! v1Contacts(dir)
            var cfg = config(dir, types: [MV2.Contact.self], version: 2)
            cfg.migrationBlock = { migration, _ in
                migration.enumerateObjects(ofType: "Contact") { _, newObject in newObject!["age"] = "old" }
            }
            _ = try! Realm(configuration: cfg)
        }
        let text = String(decoding: result?.standardErrorContent ?? [], as: UTF8.self)
        #expect(text.contains("Contact.age"))
    }

    @Test func compactionOnLaunchCopiesAndDeletedFiles() throws {
        let dir = TempDir()
        let cfg = config(dir, types: [Message.self])
        do {
            let realm = try Realm(configuration: cfg)
            try realm.write {
                for i in 0..<5000 {
                    realm.create(Message.self, value: ["id": i, "text": "消息 \(i) " + String(repeating: "字", count: 60)])
                }
            }
            try realm.write { realm.delete(realm.objects(Message.self).filter("id >= 1000")) }
        }
        let before = try FileManager.default.attributesOfItem(atPath: dir.file().path)[.size] as! Int
        let asking = Locked<(Int, Int)?>(nil)
        var compacting = cfg
        compacting.shouldCompactOnLaunch = { total, used in
            asking.set((total, used))
            return used * 2 < total
        }
        let realm = try Realm(configuration: compacting)
        let after = try FileManager.default.attributesOfItem(atPath: dir.file().path)[.size] as! Int
        let asked = asking.get()
        #expect(asked != nil && asked!.0 == before && asked!.1 < before)
        #expect(after < before / 2)
        #expect(realm.objects(Message.self).count == 1000)
        // a copy, with the same objects
        let copyURL = dir.file("copy.realm")
        try realm.writeCopy(toFile: copyURL)
        #expect(throws: StrataError.self) { try realm.writeCopy(toFile: copyURL) }
        let copy = try Realm(configuration: config(dir, "copy.realm", types: [Message.self]))
        #expect(copy.objects(Message.self).count == 1000)
        // files are deleted only when no Realm has them open
        #expect(throws: StrataError.self) { try Realm.deleteFiles(for: cfg) }
        #expect(try schemaVersionAtURL(copyURL) == 0)
        #expect(throws: StrataError.self) { _ = try schemaVersionAtURL(dir.file("nothing.realm")) }
    }

    @Test func anInMemoryRealmIsWrittenToAFileAndNotAskedToCompact() throws {
        let dir = TempDir()
        let asked = Locked(false)
        var cfg = Realm.Configuration(inMemoryIdentifier: "copy-me-\(UUID().uuidString)", objectTypes: [Message.self])
        cfg.shouldCompactOnLaunch = { _, _ in asked.set(true); return true }
        let memory = try Realm(configuration: cfg)
        try memory.write { for i in 0..<100 { memory.create(Message.self, value: ["id": i, "text": "第\(i)条"]) } }
        #expect(!asked.get())
        try memory.writeCopy(toFile: dir.file("from-memory.realm"))
        let file = try Realm(configuration: config(dir, "from-memory.realm", types: [Message.self]))
        #expect(file.objects(Message.self).count == 100)
        #expect(file.object(ofType: Message.self, forPrimaryKey: 42)?.text == "第42条")
    }

    @Test func deleteFilesRemovesAClosedRealm() throws {
        let dir = TempDir()
        let cfg = config(dir, types: [Message.self])
        do {
            let realm = try Realm(configuration: cfg)
            try realm.write { realm.create(Message.self, value: ["id": 1, "text": "x"]) }
        }
        #expect(try Realm.deleteFiles(for: cfg))
        #expect(!FileManager.default.fileExists(atPath: dir.file().path))
        #expect(!FileManager.default.fileExists(atPath: dir.file().path + ".lock"))
        #expect(try !Realm.deleteFiles(for: cfg))
        #expect(try Realm(configuration: cfg).objects(Message.self).isEmpty)
    }
}


@Suite("Migrations: mixed values holding objects")
struct MigrationMixedTests {
    @Test func aMigrationStoresAndReadsAnObjectInAMixedValue() throws {
        let dir = TempDir()
        do {
            let realm = try Realm(configuration: config(dir, types: [AllTypes.self]))
            try realm.write { realm.create(AllTypes.self, value: ["int": 1]) }
        }
        var cfg = config(dir, types: [AllTypes.self], version: 1)
        cfg.migrationBlock = { migration, _ in
            let made = migration.create("AllTypes", value: ["int": 7])
            migration.enumerateObjects(ofType: "AllTypes") { _, new in
                guard let new, new["int"] as? Int == 1 else { return }
                new["any"] = made
                #expect((new["any"] as? DynamicObject)?["int"] as? Int == 7)
                #expect((new["any"] as? DynamicObject)?.isSameObject(as: made) == true && !new.isSameObject(as: made))
            }
        }
        let realm = try Realm(configuration: cfg)
        let first = try #require(realm.objects(AllTypes.self).filter("int == 1").first)
        guard case .object(let o) = first.any else { Issue.record("not an object: \(first.any)"); return }
        #expect((o as? AllTypes)?.int == 7)
    }
}

