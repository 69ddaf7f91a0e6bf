import Foundation
@_spi(StrataCore) @testable import Strata

/// A fresh folder per test, removed when the test ends.
final class TempDir: Sendable {
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

/// A value shared by closures that run on other threads.
final class Locked<T>: @unchecked Sendable {
    private let lock = NSLock()
    private var value: T
    init(_ value: T) { self.value = value }
    func get() -> T { lock.lock(); defer { lock.unlock() }; return value }
    func set(_ v: T) { lock.lock(); value = v; lock.unlock() }
    func update(_ f: (inout T) -> Void) { lock.lock(); f(&value); lock.unlock() }
}
