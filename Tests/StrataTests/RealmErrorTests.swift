import Foundation
import Testing
@_spi(StrataCore) @testable import Strata

@Suite("Realm.Error: opening failures with RealmSwift's codes")
struct RealmErrorTests {
    @Test func aMissingReadOnlyFileIsFileNotFound() throws {
        let dir = TempDir()
        var c = config(dir, "missing.realm")
        c.readOnly = true
        do {
            _ = try Realm(configuration: c)
            Issue.record("a missing read-only file opened")
        } catch Realm.Error.fileNotFound {
            // RealmSwift's pattern: the code matches the error
        }
        do { _ = try Realm(configuration: c) } catch let e as Realm.Error {
            #expect(e.code == .fileNotFound && e.fileURL == dir.file("missing.realm"))
            #expect(e.localizedDescription == "Failed to open Realm file at path '\(dir.file("missing.realm").path)': No such file or directory")
        }
    }

    @Test func aFileThatIsNoDatabaseIsInvalidDatabase() throws {
        let dir = TempDir()
        _ = FileManager.default.createFile(atPath: dir.file("junk.realm").path, contents: Data("not a database at all".utf8))
        do {
            _ = try Realm(configuration: config(dir, "junk.realm"))
            Issue.record("junk opened")
        } catch let e as Realm.Error {
            #expect(e.code == .invalidDatabase && e.fileURL == dir.file("junk.realm"))
            #expect(e.message.contains("junk.realm"))
        }
        _ = FileManager.default.createFile(atPath: dir.file("tiny.realm").path, contents: Data([0x31]))
        do {
            _ = try Realm(configuration: config(dir, "tiny.realm"))
            Issue.record("a one-byte file opened")
        } catch let e as Realm.Error {
            #expect(e.code == .invalidDatabase && e.message.hasSuffix(": file is non-empty but too small (1 bytes) to be a valid Realm."))
        }
    }

    @Test func schemaVersionAtURLSaysWhatIsWrongWithTheFile() throws {
        let dir = TempDir()
        #expect(throws: StrataError.self) { _ = try schemaVersionAtURL(dir.file("nothing.realm")) }
        do { _ = try schemaVersionAtURL(dir.file("nothing.realm")) } catch Realm.Error.invalidDatabase {}
        do { _ = try schemaVersionAtURL(URL(fileURLWithPath: "/dev/null")) } catch Realm.Error.fileAccess {}
    }

    @Test func aChangedSchemaWithoutANewVersionIsSchemaMismatch() throws {
        let dir = TempDir()
        do { _ = try Realm(configuration: config(dir, types: [Lonely.self])) }
        do {
            _ = try Realm(configuration: config(dir, types: [V2.Lonely.self]))
            Issue.record("a changed class opened without a migration")
        } catch Realm.Error.schemaMismatch {
        }
        #expect(Realm.Error(.fail) == Realm.Error(.fail) && Realm.Error.callFailed.localizedDescription == "Call failed")
    }
}
