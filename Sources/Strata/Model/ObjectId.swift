import Foundation

/// A 12-byte identifier as MongoDB and Realm make them: a 4-byte big-endian timestamp (seconds),
/// 5 random bytes fixed per process, and a 3-byte counter. Sorts by creation time.
///
/// ```swift
/// class Note: Object { @Persisted(primaryKey: true) var _id = ObjectId.generate() }
/// let id = try ObjectId(string: "507f1f77bcf86cd799439011")
/// ```
public struct ObjectId: Hashable, Comparable, Sendable, CustomStringConvertible {
    /// The 12 bytes, most significant first.
    public let bytes: [UInt8]

    init(bytes: [UInt8]) {
        precondition(bytes.count == 12, "an ObjectId has 12 bytes")
        self.bytes = bytes
    }

    /// The all-zero id.
    public init() { bytes = [UInt8](repeating: 0, count: 12) }

    /// An id from its 24 hexadecimal digits; throws on anything else.
    /// An ObjectId from a literal of 24 hexadecimal digits (RealmSwift's `ObjectId("…")`): a
    /// literal of another form is a programmer error and traps naming it. A string known only
    /// at run time goes through `init(string:)`, which throws.
    public init(_ str: StaticString) {
        let text = str.withUTF8Buffer { String(decoding: $0, as: UTF8.self) }
        do { try self.init(string: text) } catch { fatalError("ObjectId(\"\(text)\"): \(error)") }
    }

    /// The ObjectId of 24 hexadecimal digits; throws naming the string when it is not one.
    public init(string: String) throws {
        let digits = Array(string.utf8)
        guard digits.count == 24 else { throw ObjectId.invalid(string) }
        var out = [UInt8]()
        out.reserveCapacity(12)
        for i in stride(from: 0, to: 24, by: 2) {
            guard let hi = ObjectId.nibble(digits[i]), let lo = ObjectId.nibble(digits[i + 1]) else {
                throw ObjectId.invalid(string)
            }
            out.append(hi << 4 | lo)
        }
        bytes = out
    }

    /// A new id: the current time, this process's random bytes, and the next count.
    public static func generate() -> ObjectId {
        let seconds = UInt32(truncatingIfNeeded: Int(Date().timeIntervalSince1970))
        let n = counter.next()
        var b = [UInt8](repeating: 0, count: 12)
        for i in 0..<4 { b[i] = UInt8(truncatingIfNeeded: seconds >> (24 - 8 * UInt32(i))) }
        for i in 0..<5 { b[4 + i] = processBytes[i] }
        for i in 0..<3 { b[9 + i] = UInt8(truncatingIfNeeded: n >> (16 - 8 * UInt32(i))) }
        return ObjectId(bytes: b)
    }

    /// When the id was made (to the second).
    public var timestamp: Date {
        let s = bytes[0..<4].reduce(UInt32(0)) { $0 << 8 | UInt32($1) }
        return Date(timeIntervalSince1970: TimeInterval(s))
    }

    /// The 24 lowercase hexadecimal digits.
    public var stringValue: String { bytes.map { String(format: "%02x", $0) }.joined() }
    public var description: String { stringValue }

    public static func < (a: ObjectId, b: ObjectId) -> Bool { a.bytes.lexicographicallyPrecedes(b.bytes) }

    private static func nibble(_ c: UInt8) -> UInt8? {
        switch c {
        case 48...57: return c - 48
        case 97...102: return c - 87
        case 65...70: return c - 55
        default: return nil
        }
    }

    private static func invalid(_ s: String) -> StrataError {
        StrataError(code: .invalidArgument, message: "'\(s)' is not an ObjectId (24 hexadecimal digits)")
    }

    private static let processBytes: [UInt8] = (0..<5).map { _ in UInt8.random(in: 0...255) }
    private static let counter = Counter(start: UInt32.random(in: 0..<0xFFFFFF))

    private final class Counter: @unchecked Sendable {
        private var value: UInt32
        private let lock = NSLock()
        init(start: UInt32) { value = start }
        func next() -> UInt32 {
            lock.lock()
            defer { lock.unlock() }
            value = (value &+ 1) & 0xFFFFFF
            return value
        }
    }
}
