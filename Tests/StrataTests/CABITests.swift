import CCore
import Foundation
import XCTest

/// The C ABI called directly from Swift, as another language's binding would.
final class CABITests: XCTestCase {
    var dir: URL!

    override func setUpWithError() throws {
        dir = FileManager.default.temporaryDirectory
            .appendingPathComponent("strata-swift-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
    }

    override func tearDownWithError() throws {
        try? FileManager.default.removeItem(at: dir)
    }

    func path(_ name: String) -> String { dir.appendingPathComponent(name).path }

    func message(_ err: inout strata_error) -> String {
        withUnsafeBytes(of: &err.message) { String(decoding: $0.prefix(while: { $0 != 0 }), as: UTF8.self) }
    }

    func testCommittedValuesSurviveReopenAndVerify() throws {
        var db: OpaquePointer?
        var err = strata_error()
        XCTAssertEqual(strata_db_open(path("abi.db"), nil, &db, &err), 0, message(&err))
        var txn: OpaquePointer?
        XCTAssertEqual(strata_txn_begin(db, UInt32(STRATA_TXN_WRITE), &txn, &err), 0)
        var tree: OpaquePointer?
        XCTAssertEqual(strata_tree_open(txn, "people", STRATA_KEY_BYTES, UInt32(STRATA_TREE_CREATE), &tree, &err), 0)
        let name = Array("张三".utf8)
        XCTAssertEqual(strata_tree_put(tree, "p1", 2, name, name.count, &err), 0)
        XCTAssertEqual(strata_txn_commit(txn, &err), 0)
        strata_txn_free(txn)
        XCTAssertEqual(strata_db_close(db, &err), 0)

        XCTAssertEqual(strata_db_open(path("abi.db"), nil, &db, &err), 0)
        XCTAssertEqual(strata_db_verify(db, &err), 0, message(&err))
        XCTAssertEqual(strata_txn_begin(db, UInt32(STRATA_TXN_READ), &txn, &err), 0)
        XCTAssertEqual(strata_tree_open(txn, "people", STRATA_KEY_BYTES, 0, &tree, &err), 0)
        var value: UnsafeRawPointer?
        var len = 0
        XCTAssertEqual(strata_tree_get(tree, "p1", 2, &value, &len, &err), 0)
        XCTAssertEqual(Array(UnsafeRawBufferPointer(start: value, count: len)), name)
        strata_txn_free(txn)
        XCTAssertEqual(strata_db_close(db, &err), 0)
    }

    func testErrorsNameTheOffendingThing() {
        var db: OpaquePointer?
        var err = strata_error()
        XCTAssertEqual(strata_db_open(path("nope/none.db"), nil, &db, &err), Int32(STRATA_ERR_IO.rawValue))
        XCTAssertTrue(message(&err).contains("none.db"), message(&err))
        XCTAssertEqual(strata_txn_begin(nil, 0, nil, &err), Int32(STRATA_ERR_INVALID_ARGUMENT.rawValue))
        XCTAssertEqual(String(cString: strata_status_name(Int32(STRATA_ERR_CORRUPT.rawValue))), "STRATA_ERR_CORRUPT")
        XCTAssertEqual(String(cString: strata_version()), "0.14.0")
    }
}
