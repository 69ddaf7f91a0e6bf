import CCore

/// An ordered map of keys to bytes inside one transaction. Values are copied out of the map
/// into Swift arrays.
public struct Tree {
    /// Integer keys (sorted numerically) or byte keys (sorted like memcmp).
    public enum Keys {
        /// Keys are UInt64, sorted numerically.
        case int
        /// Keys are byte strings up to 480 bytes, sorted like memcmp.
        case bytes
    }

    let handle: OpaquePointer
    /// The tree's kind of keys.
    public let keys: Keys

    /// Sets the value of an integer key. Throws in a read transaction or on an oversized value.
    public func put(_ key: UInt64, _ value: [UInt8]) throws {
        try value.withUnsafeBytes { v in
            try StrataError.check { strata_tree_put_int(handle, key, v.baseAddress, v.count, $0) }
        }
    }

    /// Sets the value of a byte key (up to 480 bytes). Throws in a read transaction or on an oversized key or value.
    public func put(_ key: [UInt8], _ value: [UInt8]) throws {
        try key.withUnsafeBytes { k in
            try value.withUnsafeBytes { v in
                try StrataError.check {
                    strata_tree_put(handle, k.baseAddress, k.count, v.baseAddress, v.count, $0)
                }
            }
        }
    }

    /// The value of an integer key, nil when absent.
    public func get(_ key: UInt64) throws -> [UInt8]? {
        var k = key
        return try withUnsafeBytes(of: &k) { try getRaw($0) }
    }

    /// The value of a byte key, nil when absent.
    public func get(_ key: [UInt8]) throws -> [UInt8]? {
        try key.withUnsafeBytes { try getRaw($0) }
    }

    private func getRaw(_ k: UnsafeRawBufferPointer) throws -> [UInt8]? {
        var value: UnsafeRawPointer?
        var len = 0
        let found = try StrataError.found {
            strata_tree_get(handle, k.baseAddress, k.count, &value, &len, $0)
        }
        guard found else { return nil }
        return len == 0 ? [] : Array(UnsafeRawBufferPointer(start: value, count: len))
    }

    /// Remove `key`; false when it was not there.
    @discardableResult
    public func delete(_ key: UInt64) throws -> Bool {
        try StrataError.found { strata_tree_delete_int(handle, key, $0) }
    }

    /// How many entries the tree holds.
    public var count: UInt64 {
        get throws {
            var n: UInt64 = 0
            try StrataError.check { strata_tree_count(handle, &n, $0) }
            return n
        }
    }

    /// Every entry in key order, starting at the first key >= `from` (byte keys).
    public func entries(from start: [UInt8]? = nil) throws -> [(key: [UInt8], value: [UInt8])] {
        var cursor: OpaquePointer?
        try StrataError.check { strata_cursor_open(handle, &cursor, $0) }
        defer { strata_cursor_close(cursor) }
        var out: [(key: [UInt8], value: [UInt8])] = []
        var more: Bool
        if let start {
            more = try start.withUnsafeBytes { s in
                try StrataError.found { strata_cursor_seek(cursor, s.baseAddress, s.count, $0) }
            }
        } else {
            more = try StrataError.found { strata_cursor_first(cursor, $0) }
        }
        while more {
            var k: UnsafeRawPointer?, v: UnsafeRawPointer?
            var kl = 0, vl = 0
            try StrataError.check { strata_cursor_get(cursor, &k, &kl, &v, &vl, $0) }
            out.append((kl == 0 ? [] : Array(UnsafeRawBufferPointer(start: k, count: kl)),
                        vl == 0 ? [] : Array(UnsafeRawBufferPointer(start: v, count: vl))))
            more = try StrataError.found { strata_cursor_next(cursor, $0) }
        }
        return out
    }
}
