import Foundation

// Codable, as RealmSwift has it: `class Dog: Object, Codable { @Persisted var name: String }`
// gets a synthesized `init(from:)` and `encode(to:)`. Decoding makes an unmanaged object (add it
// to a Realm after). Encoding works on unmanaged objects; a managed object's synthesized
// encoding throws, as RealmSwift's does (write `encode(to:)` for managed objects) — the fields
// of a managed object of a Codable class are bound to their properties (Object.__accessor), so
// it can never encode values it does not hold.

extension Persisted: Decodable where Value: Decodable {
    public init(from decoder: Decoder) throws {
        self.init(wrappedValue: try decoder.singleValueContainer().decode(Value.self))
    }
}

extension Persisted: Encodable where Value: Encodable {
    public func encode(to encoder: Encoder) throws {
        var container = encoder.singleValueContainer()
        switch storage {
        case .unmanaged(let value): try container.encode(value)
        case .unmanagedNoDefault: try container.encode(Value._strataDefault())
        case .managed:
            throw EncodingError.invalidValue(self, .init(codingPath: encoder.codingPath, debugDescription:
                "Only unmanaged Realm objects can be encoded using automatic Codable synthesis. You must "
                + "explicitly define encode(to:) on your model class to support managed Realm objects."))
        }
    }
}

/// A property wrapper whose value may be missing from the encoded form (decoded as nil).
public protocol OptionalCodingWrapper {
    /// The optional type the wrapper holds.
    associatedtype WrappedType: ExpressibleByNilLiteral
    /// A wrapper holding `wrappedValue`.
    init(wrappedValue: WrappedType)
}

extension Persisted: OptionalCodingWrapper where Value: ExpressibleByNilLiteral {}

extension KeyedDecodingContainer {
    /// A missing key decodes an optional property as nil (instead of a missing-key error).
    public func decode<T>(_ type: T.Type, forKey key: Key) throws -> T where T: Decodable, T: OptionalCodingWrapper {
        try decodeIfPresent(T.self, forKey: key) ?? T(wrappedValue: nil)
    }
}

extension List: Decodable where Element: Decodable {
    public convenience init(from decoder: Decoder) throws {
        self.init()
        var container = try decoder.unkeyedContainer()
        while !container.isAtEnd { append(try container.decode(Element.self)) }
    }
}

extension List: Encodable where Element: Encodable {}
extension Results: Encodable where Element: Encodable {}
extension LinkingObjects: Encodable where Element: Encodable {}
extension AnyRealmCollection: Encodable where Element: Encodable {}

extension LinkingObjects: Decodable {
    /// Linking objects are never encoded values: an unmanaged object's are empty.
    public init(from decoder: Decoder) throws { self.init(owner: nil, realm: nil) }
}

extension ObjectId: Codable {
    /// From its 24 hexadecimal digits.
    public init(from decoder: Decoder) throws {
        let container = try decoder.singleValueContainer()
        let text = try container.decode(String.self)
        do { try self.init(string: text) } catch {
            throw DecodingError.dataCorruptedError(in: container, debugDescription: "'\(text)' is not an ObjectId")
        }
    }
    public func encode(to encoder: Encoder) throws {
        var c = encoder.singleValueContainer()
        try c.encode(stringValue)
    }
}

extension Decimal128: Codable {
    /// From a string, an integer or a floating-point number.
    public init(from decoder: Decoder) throws {
        let container = try decoder.singleValueContainer()
        if let s = try? container.decode(String.self) {
            do { try self.init(string: s) } catch {
                throw DecodingError.dataCorruptedError(in: container, debugDescription: "'\(s)' is not a Decimal128")
            }
        } else if let i = try? container.decode(Int64.self) {
            self.init(value: i)
        } else if let d = try? container.decode(Double.self) {
            self.init(number: d as NSNumber)
        } else {
            throw DecodingError.dataCorruptedError(in: container, debugDescription: "Cannot convert value to Decimal128")
        }
    }
    /// As its decimal text.
    public func encode(to encoder: Encoder) throws {
        var c = encoder.singleValueContainer()
        try c.encode(description)
    }
}

extension AnyRealmValue: Codable {
    /// nil, a Bool, an integer, a floating-point number, a string (as RealmSwift decodes them).
    public init(from decoder: Decoder) throws {
        let c = try decoder.singleValueContainer()
        if c.decodeNil() { self = .none } else if let b = try? c.decode(Bool.self) { self = .bool(b) } else if let i = try? c.decode(Int.self) {
            self = .int(i)
        } else if let d = try? c.decode(Double.self) { self = .double(d) } else if let s = try? c.decode(String.self) {
            self = .string(s)
        } else {
            throw DecodingError.dataCorruptedError(in: c, debugDescription: "Cannot convert value to AnyRealmValue")
        }
    }
    public func encode(to encoder: Encoder) throws {
        var c = encoder.singleValueContainer()
        switch self {
        case .none: try c.encodeNil()
        case .int(let v): try c.encode(v)
        case .bool(let v): try c.encode(v)
        case .float(let v): try c.encode(v)
        case .double(let v): try c.encode(v)
        case .string(let v): try c.encode(v)
        case .data(let v): try c.encode(v)
        case .date(let v): try c.encode(v)
        case .objectId(let v): try c.encode(v)
        case .decimal128(let v): try c.encode(v)
        case .uuid(let v): try c.encode(v)
        case .object(let o):
            throw EncodingError.invalidValue(o, .init(codingPath: encoder.codingPath, debugDescription:
                "An object held in an AnyRealmValue is not encoded"))
        }
    }
}
