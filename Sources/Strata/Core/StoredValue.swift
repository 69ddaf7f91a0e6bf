import CCore
import Foundation

/// A value as the core stores it: the Swift side of `strata_value`. Strings and bytes are copied
/// out of the map when read (a `strata_value` points into it only until its transaction ends).
@_spi(StrataCore) public enum StoredValue: Equatable, Sendable {
    case null
    case bool(Bool)
    case int(Int64)
    case float(Float)
    case double(Double)
    case string(String)
    case data(Data)
    /// Seconds and nanoseconds since 1970 (nanoseconds in 0..<1e9, also before 1970).
    case timestamp(Int64, Int32)
    case objectId(ObjectId)
    case uuid(UUID)
    case decimal(Decimal128)
    /// The key of an object of the property's target table.
    case link(Int64)
    /// A mixed value's link: the table (by id) and the key of the object.
    case typedLink(UInt32, Int64)

    /// The value as the Swift type that stores it (`Int64` for integers, `Date` for
    /// timestamps, the key for a link; NSNull for null): untyped input to `ValueConversion`.
    @_spi(StrataCore) public var anyValue: Any {
        switch self {
        case .null: return NSNull()
        case .bool(let b): return b
        case .int(let i): return i
        case .float(let f): return f
        case .double(let d): return d
        case .string(let s): return s
        case .data(let d): return d
        case .timestamp: return Date(_strata: _Stored(self))
        case .objectId(let o): return o
        case .uuid(let u): return u
        case .decimal(let d): return d
        case .link(let k), .typedLink(_, let k): return k
        }
    }

    /// The order of values of one property (sorting a list of values): null first, then numbers
    /// by value (across int, float, double and decimal), strings, bytes, dates, ids by their
    /// natural order; values of different kinds by kind.
    @_spi(StrataCore) public static func precedes(_ a: StoredValue, _ b: StoredValue) -> Bool {
        switch (a, b) {
        case (.null, .null): return false
        case (.null, _): return true
        case (_, .null): return false
        case (.bool(let x), .bool(let y)): return !x && y
        case (.int(let x), .int(let y)): return x < y
        case (.string(let x), .string(let y)): return x < y
        case (.data(let x), .data(let y)): return x.lexicographicallyPrecedes(y)
        case (.timestamp(let s1, let n1), .timestamp(let s2, let n2)): return (s1, n1) < (s2, n2)
        case (.objectId(let x), .objectId(let y)): return x < y
        case (.uuid(let x), .uuid(let y)): return x.uuidString < y.uuidString
        case (.decimal(let x), .decimal(let y)): return x < y
        case (.link(let x), .link(let y)): return x < y
        case (.typedLink(let t1, let k1), .typedLink(let t2, let k2)): return (t1, k1) < (t2, k2)
        default:
            if let x = a.number, let y = b.number { return x < y }
            return a.kindRank < b.kindRank
        }
    }

    private var number: Double? {
        switch self {
        case .int(let i): return Double(i)
        case .float(let f): return Double(f)
        case .double(let d): return d
        case .decimal(let d): return d.doubleValue
        default: return nil
        }
    }

    private var kindRank: Int {
        switch self {
        case .null: return 0
        case .bool: return 1
        case .int, .float, .double, .decimal: return 2
        case .string: return 3
        case .data: return 4
        case .timestamp: return 5
        case .objectId: return 6
        case .uuid: return 7
        case .link, .typedLink: return 8
        }
    }

    /// The core's type of this value (`.null` has none of its own).
    @_spi(StrataCore) public var coreType: CoreType {
        switch self {
        case .null: return .null
        case .bool: return .bool
        case .int: return .int
        case .float: return .float
        case .double: return .double
        case .string: return .string
        case .data: return .binary
        case .timestamp: return .timestamp
        case .objectId: return .objectId
        case .uuid: return .uuid
        case .decimal: return .decimal128
        case .link, .typedLink: return .link
        }
    }

    /// Read a value the core handed out (copying its bytes).
    @_spi(StrataCore) public init(_ v: strata_value) {
        switch v.type {
        case STRATA_TYPE_BOOL: self = .bool(v.u.b)
        case STRATA_TYPE_INT: self = .int(v.u.i)
        case STRATA_TYPE_FLOAT: self = .float(v.u.f)
        case STRATA_TYPE_DOUBLE: self = .double(v.u.d)
        case STRATA_TYPE_STRING:
            let b = v.u.bytes
            if b.len == 0 {
                self = .string("")
            } else {
                let raw = UnsafeRawBufferPointer(start: b.data, count: b.len)
                self = .string(String(decoding: raw, as: UTF8.self))
            }
        case STRATA_TYPE_BINARY:
            let b = v.u.bytes
            self = .data(b.len == 0 ? Data() : Data(bytes: b.data!, count: b.len))
        case STRATA_TYPE_TIMESTAMP: self = .timestamp(v.u.timestamp.seconds, v.u.timestamp.nanoseconds)
        case STRATA_TYPE_OBJECT_ID:
            var id = v.u.object_id
            self = .objectId(withUnsafeBytes(of: &id) { ObjectId(bytes: Array($0)) })
        case STRATA_TYPE_UUID: self = .uuid(UUID(uuid: v.u.uuid))
        case STRATA_TYPE_DECIMAL128:
            self = .decimal(Decimal128(bits: (v.u.decimal.low, v.u.decimal.high)))
        case STRATA_TYPE_LINK: self = .link(v.u.link)
        case STRATA_TYPE_TYPED_LINK: self = .typedLink(v.u.typed_link.table, v.u.typed_link.key)
        default: self = .null
        }
    }

    /// Hand the value to a C call as a `strata_value` (its bytes live during `body`).
    @_spi(StrataCore) public func withCValue<R>(_ body: (UnsafePointer<strata_value>) throws -> R) rethrows -> R {
        var v = strata_value()
        switch self {
        case .null: v.type = STRATA_TYPE_NULL
        case .bool(let b): v.type = STRATA_TYPE_BOOL; v.u.b = b
        case .int(let i): v.type = STRATA_TYPE_INT; v.u.i = i
        case .float(let f): v.type = STRATA_TYPE_FLOAT; v.u.f = f
        case .double(let d): v.type = STRATA_TYPE_DOUBLE; v.u.d = d
        case .string(var s):
            v.type = STRATA_TYPE_STRING
            return try s.withUTF8 { buf in
                v.u.bytes.data = UnsafeRawPointer(buf.baseAddress)
                v.u.bytes.len = buf.count
                return try body(&v)
            }
        case .data(let d):
            v.type = STRATA_TYPE_BINARY
            return try d.withUnsafeBytes { buf in
                v.u.bytes.data = buf.baseAddress
                v.u.bytes.len = buf.count
                return try body(&v)
            }
        case .timestamp(let s, let ns):
            v.type = STRATA_TYPE_TIMESTAMP
            v.u.timestamp.seconds = s
            v.u.timestamp.nanoseconds = ns
        case .objectId(let id):
            v.type = STRATA_TYPE_OBJECT_ID
            withUnsafeMutableBytes(of: &v.u.object_id) { dst in
                for (i, b) in id.bytes.enumerated() { dst[i] = b }
            }
        case .uuid(let u): v.type = STRATA_TYPE_UUID; v.u.uuid = u.uuid
        case .decimal(let d):
            v.type = STRATA_TYPE_DECIMAL128
            v.u.decimal.low = d.bits.low
            v.u.decimal.high = d.bits.high
        case .link(let k): v.type = STRATA_TYPE_LINK; v.u.link = k
        case .typedLink(let t, let k):
            v.type = STRATA_TYPE_TYPED_LINK
            v.u.typed_link.table = t
            v.u.typed_link.key = k
        }
        return try body(&v)
    }
}

/// The core's value types (`strata_type`), as the Swift model names them.
@_spi(StrataCore) public enum CoreType: UInt32, Sendable {
    case null = 0, bool, int, float, double, string, binary, timestamp, objectId, uuid,
         decimal128, link, mixed

    @_spi(StrataCore) public var cValue: strata_type { strata_type(rawValue) }
    @_spi(StrataCore) public var name: String { String(cString: strata_type_name(cValue)) }
}

/// Property flags of the core (`STRATA_PROP_*`).
@_spi(StrataCore) public struct CoreFlags: OptionSet, Hashable, Sendable {
    @_spi(StrataCore) public let rawValue: UInt32
    @_spi(StrataCore) public init(rawValue: UInt32) { self.rawValue = rawValue }
    @_spi(StrataCore) public static let nullable = CoreFlags(rawValue: UInt32(STRATA_PROP_NULLABLE))
    @_spi(StrataCore) public static let indexed = CoreFlags(rawValue: UInt32(STRATA_PROP_INDEXED))
    @_spi(StrataCore) public static let primaryKey = CoreFlags(rawValue: UInt32(STRATA_PROP_PRIMARY_KEY))
    @_spi(StrataCore) public static let list = CoreFlags(rawValue: UInt32(STRATA_PROP_LIST))
    @_spi(StrataCore) public static let set = CoreFlags(rawValue: UInt32(STRATA_PROP_SET))
    @_spi(StrataCore) public static let map = CoreFlags(rawValue: UInt32(STRATA_PROP_MAP))
    @_spi(StrataCore) public static let fullText = CoreFlags(rawValue: UInt32(STRATA_PROP_FULLTEXT))
}
