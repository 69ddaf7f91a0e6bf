import Foundation
import Testing
@_spi(StrataCore) @testable import Strata

enum EncV1 {
    final class Diary: Object {
        @Persisted(primaryKey: true) var id = 0
        @Persisted var text = ""
    }
}

enum EncV2 {
    final class Diary: Object {
        @Persisted(primaryKey: true) var id = 0
        @Persisted var text = ""
        @Persisted var mood = "calm"
    }
}

/// `Realm.Configuration.encryptionKey`: RealmSwift's behaviour (EncryptionTests.mm of realm-swift)
/// — the same key reopens, a missing, wrong or unexpected key is `invalidDatabase`, `writeCopy`
/// with no key decrypts and with a new key re-keys, a second key for an open file is refused —
/// and nothing of the data readable in any file.
@Suite("Encryption: encryptionKey opens, refuses and copies as RealmSwift's does")
struct EncryptionTests {
    static func key(_ seed: UInt8) -> Data { Data((0..<64).map { UInt8(truncatingIfNeeded: Int($0) * 31 + Int(seed)) }) }
    static let marker = "Kilimanjaro-secret-4417"

    func cfg(_ dir: TempDir, _ name: String = "enc.realm", key: Data?, types: [Object.Type] = [EncV1.Diary.self],
             version: UInt64 = 0) -> Realm.Configuration {
        Realm.Configuration(fileURL: dir.file(name), encryptionKey: key, schemaVersion: version, objectTypes: types)
    }

    func fill(_ config: Realm.Configuration, count: Int = 50) throws {
        let realm = try Realm(configuration: config)
        try realm.write {
            for i in 0..<count {
                realm.add(EncV1.Diary(value: ["id": i, "text": "\(Self.marker) \(i) " + String(repeating: "x", count: i * 100)]))
            }
        }
    }

    /// Whether any file beside the Realm (database, lock, log) holds the bytes.
    func onDisk(_ dir: TempDir, _ needle: String) throws -> Bool {
        let bytes = Data(needle.utf8)
        for name in try FileManager.default.contentsOfDirectory(atPath: dir.url.path) {
            let data = try Data(contentsOf: dir.url.appendingPathComponent(name))
            if data.range(of: bytes) != nil { return true }
        }
        return false
    }

    func openError(_ config: Realm.Configuration) -> StrataError? {
        do {
            _ = try Realm(configuration: config)
            return nil
        } catch {
            return error as? StrataError
        }
    }

    @Test func theSameKeyReopensAndNothingIsReadableOnDisk() throws {
        let dir = TempDir(), plainDir = TempDir()
        try fill(cfg(plainDir, key: nil))
        #expect(try onDisk(plainDir, Self.marker)) // the search can find it
        try fill(cfg(dir, key: Self.key(1)))
        #expect(try !onDisk(dir, Self.marker))
        #expect(try !onDisk(dir, "Diary"))
        let realm = try Realm(configuration: cfg(dir, key: Self.key(1)))
        #expect(realm.objects(EncV1.Diary.self).count == 50)
        #expect(realm.object(ofType: EncV1.Diary.self, forPrimaryKey: 49)?.text.hasPrefix("\(Self.marker) 49") == true)
        #expect(realm.objects(EncV1.Diary.self).filter("text CONTAINS %@", "secret-4417 7").count == 1)
    }

    @Test func aMissingWrongOrUnexpectedKeyIsInvalidDatabase() throws {
        let dir = TempDir()
        try fill(cfg(dir, key: Self.key(1)))
        try fill(cfg(dir, "plain.realm", key: nil))
        let path = dir.file("enc.realm").path
        for bad in [cfg(dir, key: nil), cfg(dir, key: Self.key(2))] {
            let e = openError(bad)
            #expect(e?.code == Realm.Error.invalidDatabase)
            #expect(e?.message.hasPrefix("Failed to open Realm file at path '\(path)'") == true)
            #expect(e?.fileURL?.path == path)
        }
        #expect(openError(cfg(dir, key: nil))?.message.contains("is encrypted") == true)
        #expect(openError(cfg(dir, key: Self.key(2)))?.message.contains("does not open") == true)
        let plain = openError(cfg(dir, "plain.realm", key: Self.key(1)))
        #expect(plain?.code == Realm.Error.invalidDatabase)
        #expect(plain?.message.contains("not encrypted") == true)
        let short = openError(cfg(dir, key: Data(count: 32)))
        #expect(short?.code == .invalidArgument)
        #expect(short?.message.contains("64 bytes; this one is 32") == true)
        // the file is untouched: the right key still opens it
        #expect(try Realm(configuration: cfg(dir, key: Self.key(1))).objects(EncV1.Diary.self).count == 50)
    }

    @Test func aSecondKeyForAnOpenFileIsRefused() throws {
        let dir = TempDir()
        let realm = try Realm(configuration: cfg(dir, key: Self.key(1)))
        let e = openError(cfg(dir, key: Self.key(2)))
        #expect(e?.message.contains("already opened with different encryption key") == true)
        #expect(openError(cfg(dir, key: nil)) != nil)
        _ = realm
    }

    @Test func writeCopyDecryptsWithNoKeyAndReKeysWithANewOne() throws {
        let dir = TempDir(), plainDir = TempDir(), otherDir = TempDir()
        try fill(cfg(dir, key: Self.key(1)))
        let realm = try Realm(configuration: cfg(dir, key: Self.key(1)))
        try realm.writeCopy(toFile: plainDir.file("enc.realm"), encryptionKey: nil)
        try realm.writeCopy(configuration: cfg(otherDir, key: Self.key(3)))
        #expect(throws: StrataError.self) { try realm.writeCopy(toFile: dir.file("x.realm"), encryptionKey: Data()) }
        #expect(try onDisk(plainDir, Self.marker))
        #expect(try !onDisk(otherDir, Self.marker))
        #expect(try Realm(configuration: cfg(plainDir, key: nil)).objects(EncV1.Diary.self).count == 50)
        #expect(openError(cfg(otherDir, key: Self.key(1)))?.code == Realm.Error.invalidDatabase)
        #expect(try Realm(configuration: cfg(otherDir, key: Self.key(3))).objects(EncV1.Diary.self).count == 50)
        #expect(try schemaVersionAtURL(otherDir.file("enc.realm"), encryptionKey: Self.key(3)) == 0)
        #expect(throws: StrataError.self) { try schemaVersionAtURL(otherDir.file("enc.realm")) }
    }

    @Test func migrationsAndCompactionOnLaunchKeepTheFileEncrypted() throws {
        let dir = TempDir()
        try fill(cfg(dir, key: Self.key(1)), count: 200)
        do { // deletes leave free space for the compaction
            let realm = try Realm(configuration: cfg(dir, key: Self.key(1)))
            try realm.write { realm.delete(realm.objects(EncV1.Diary.self).filter("id >= 20")) }
        }
        var c = cfg(dir, key: Self.key(1), types: [EncV2.Diary.self], version: 1)
        c.migrationBlock = { migration, old in
            migration.enumerateObjects(ofType: "Diary") { _, new in new?["mood"] = "migrated" }
        }
        let asked = Locked(false)
        c.shouldCompactOnLaunch = { _, _ in asked.set(true); return true }
        let realm = try Realm(configuration: c)
        #expect(asked.get())
        #expect(realm.objects(EncV2.Diary.self).count == 20)
        #expect(realm.objects(EncV2.Diary.self).allSatisfy { $0.mood == "migrated" })
        try realm.write { realm.add(EncV2.Diary(value: ["id": 1000, "text": Self.marker])) }
        #expect(try !onDisk(dir, Self.marker))
    }
}
