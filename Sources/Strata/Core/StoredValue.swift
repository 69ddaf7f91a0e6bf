import CCore
import Foundation

/// A value as the core stores it: the Swift side of `strata_value`. Strings and bytes are copied
/// out of the map when read (a `strata_value` points into it only until its transaction ends).
enum StoredValue: Equatable {
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

    /// The core's type of this value (`.null` has none of its own).
    var coreType: CoreType {
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
        case .link: return .link
        }
    }

    /// Read a value the core handed out (copying its bytes).
    init(_ v: strata_value) {
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
        default: self = .null
        }
    }

    /// Hand the value to a C call as a `strata_value` (its bytes live during `body`).
    func withCValue<R>(_ body: (UnsafePointer<strata_value>) throws -> R) rethrows -> R {
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
        }
        return try body(&v)
    }
}

/// The core's value types (`strata_type`), as the Swift model names them.
enum CoreType: UInt32 {
    case null = 0, bool, int, float, double, string, binary, timestamp, objectId, uuid,
         decimal128, link, mixed

    var cValue: strata_type { strata_type(rawValue) }
    var name: String { String(cString: strata_type_name(cValue)) }
}

/// Property flags of the core (`STRATA_PROP_*`).
struct CoreFlags: OptionSet, Hashable {
    let rawValue: UInt32
    static let nullable = CoreFlags(rawValue: UInt32(STRATA_PROP_NULLABLE))
    static let indexed = CoreFlags(rawValue: UInt32(STRATA_PROP_INDEXED))
    static let primaryKey = CoreFlags(rawValue: UInt32(STRATA_PROP_PRIMARY_KEY))
    static let list = CoreFlags(rawValue: UInt32(STRATA_PROP_LIST))
}
