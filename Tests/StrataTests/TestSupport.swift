import Foundation
@testable import Strata

/// A fresh folder per test, removed when the test ends.
final class TempDir {
    let url: URL
    init() {
        url = FileManager.default.temporaryDirectory.appendingPathComponent("strata-\(UUID().uuidString)")
        try! FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    }
    deinit { try? FileManager.default.removeItem(at: url) }
    func file(_ name: String = "test.realm") -> URL { url.appendingPathComponent(name) }
}

let zooTypes: [Object.Type] = [Company.self, Person.self, Dog.self]

func config(_ dir: TempDir, _ name: String = "test.realm", types: [Object.Type] = zooTypes,
            version: UInt64 = 0) -> Realm.Configuration {
    Realm.Configuration(fileURL: dir.file(name), schemaVersion: version, objectTypes: types)
}
