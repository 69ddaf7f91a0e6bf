import Foundation
import Strata
import XCTest

/// The Swift storage layer: closures that commit or abort, snapshots, errors as StrataError.
final class DatabaseTests: XCTestCase {
    var path: String!

    override func setUpWithError() throws {
        path = FileManager.default.temporaryDirectory
            .appendingPathComponent("strata-\(UUID().uuidString).db").path
    }

    override func tearDownWithError() throws {
        try? FileManager.default.removeItem(atPath: path)
        try? FileManager.default.removeItem(atPath: path + ".lock")
        try? FileManager.default.removeItem(atPath: path + ".log")
    }

    func testWriteCommitsAndAThrowingWriteAbortsEverything() throws {
        let db = try Database(path: path)
        try db.write { txn in
            let t = try txn.tree("t", keys: .int)
            for i in 0..<1000 { try t.put(UInt64(i), Array(repeating: UInt8(i % 256), count: i % 50)) }
        }
        struct Oops: Error {}
        XCTAssertThrowsError(try db.write { txn in
            try txn.tree("t", keys: .int).delete(5)
            throw Oops()
        })
        try db.read { txn in
            let t = try txn.tree("t", keys: .int)
            XCTAssertEqual(try t.count, 1000)
            XCTAssertEqual(try t.get(5), Array(repeating: 5, count: 5))
            XCTAssertNil(try t.get(5000))
        }
        try db.verify()
    }

    func testASnapshotKeepsItsViewWhileAnotherThreadCommits() throws {
        let db = try Database(path: path, durability: .noSync)
        try db.write { try $0.tree("c", keys: .int).put(0, [0]) }
        try db.read { snapshot in
            let before = try snapshot.tree("c", keys: .int)
            let done = expectation(description: "writer")
            Thread.detachNewThread {
                try? db.write { try $0.tree("c", keys: .int).put(0, [1]) }
                done.fulfill()
            }
            wait(for: [done], timeout: 10)
            XCTAssertEqual(try before.get(0), [0])
        }
        XCTAssertEqual(try db.read { try $0.tree("c", keys: .int).get(0) }, [1])
    }

    func testEntriesComeInKeyOrderAndErrorsAreTyped() throws {
        let db = try Database(path: "swift-mem", durability: .memory)
        try db.write { txn in
            let t = try txn.tree("names", keys: .bytes)
            for name in ["小白", "Ana", "ana", "Zoë"] { try t.put(Array(name.utf8), []) }
        }
        let keys = try db.read { try $0.tree("names", keys: .bytes).entries().map { String(decoding: $0.key, as: UTF8.self) } }
        XCTAssertEqual(keys, ["Ana", "Zoë", "ana", "小白"])
        XCTAssertThrowsError(try db.read { try $0.tree("missing", keys: .bytes) }) { error in
            XCTAssertEqual((error as? StrataError)?.code, .notFound)
            XCTAssertTrue("\(error)".contains("missing"))
        }
        XCTAssertThrowsError(try db.write { try $0.tree("names", keys: .int) }) { error in
            XCTAssertEqual((error as? StrataError)?.code, .wrongType)
        }
    }
}
