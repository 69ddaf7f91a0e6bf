import Foundation

// Decimal128's arithmetic and literals, as RealmSwift's `Decimal128` offers them (`Numeric`,
// `Strideable`, string literals). The arithmetic is Foundation's `Decimal` (38 significant
// digits, exponents −128…127), whose results are rounded to Decimal128's 34 digits (half to
// even). An operand or result outside Decimal's exponent range gives NaN, never a wrong
// finite number; NaN and infinities propagate as IEEE 754 says.

extension Decimal128: ExpressibleByStringLiteral {
    /// A literal such as `"1.25"`: a literal that is not a number is a programmer error and traps
    /// naming it (RealmSwift aborts too). Text known only at run time: `init(string:)`.
    public init(stringLiteral value: String) {
        do { try self.init(string: value) } catch { fatalError("Decimal128(\"\(value)\"): \(error)") }
    }
}

extension Decimal128 {
    /// The number an NSNumber holds (its decimal text: 3.14159 stays 3.14159).
    public init(number: NSNumber) {
        self = (try? Decimal128(string: number.stringValue)) ?? .nan
    }

    /// A number given untyped, as RealmSwift accepts it: an integer, a floating-point number, an
    /// NSNumber, a Foundation Decimal, a Decimal128 or a numeric string. Anything else is a
    /// programmer error and traps naming it.
    public init(value: Any) {
        switch value {
        case let d as Decimal128: self = d
        case let n as NSNumber where !(value is Int || value is Double || value is Float): self.init(number: n)
        case let i as Int: self.init(value: Int64(i))
        case let i as Int64: self.init(value: i)
        case let d as Double: self.init(value: d)
        case let f as Float: self.init(value: Double(f))
        case let d as Decimal: self = (try? Decimal128(string: "\(d)")) ?? .nan
        case is NSNull: self = .nan
        case let s as String:
            guard let d = try? Decimal128(string: s) else { fatalError("Decimal128(value:): '\(s)' is not a number") }
            self = d
        default:
            if let i = value as? any BinaryInteger, let d = Decimal128(exactly: i) { self = d; return }
            fatalError("Decimal128(value:): a \(type(of: value)) is not a number")
        }
    }
}

extension Decimal128: Numeric {
    public init?<T: BinaryInteger>(exactly source: T) {
        guard let v = Int64(exactly: source) else {
            guard let d = try? Decimal128(string: String(source)) else { return nil }
            self = d
            return
        }
        self.init(value: v)
    }

    public typealias Magnitude = Decimal128

    /// The absolute value.
    public var magnitude: Decimal128 {
        Decimal128(bits: (bits.low, bits.high & ~(1 << 63)))
    }

    public static func + (lhs: Decimal128, rhs: Decimal128) -> Decimal128 {
        arithmetic(lhs, rhs, +) { a, b in
            a.isInfinite && b.isInfinite && a.isSignMinus != b.isSignMinus ? .nan : (a.isInfinite ? a : b)
        }
    }

    public static func - (lhs: Decimal128, rhs: Decimal128) -> Decimal128 { lhs + (-rhs) }

    public static func * (lhs: Decimal128, rhs: Decimal128) -> Decimal128 {
        arithmetic(lhs, rhs, *) { a, b in
            if a.isZero || b.isZero { return .nan }
            return a.isSignMinus != b.isSignMinus ? -Decimal128.infinity : .infinity
        }
    }

    /// The quotient, rounded half to even to 34 digits (NaN for 0/0, an infinity for x/0).
    public static func / (lhs: Decimal128, rhs: Decimal128) -> Decimal128 {
        if rhs.isZero && !lhs.isNaN && !lhs.isInfinite {
            return lhs.isZero ? .nan : (lhs.isSignMinus != rhs.isSignMinus ? -Decimal128.infinity : .infinity)
        }
        return arithmetic(lhs, rhs, /) { a, b in
            if a.isInfinite && b.isInfinite { return .nan }
            if b.isInfinite { return Decimal128() }
            return a.isSignMinus != b.isSignMinus ? -Decimal128.infinity : .infinity
        }
    }

    public static func += (lhs: inout Decimal128, rhs: Decimal128) { lhs = lhs + rhs }
    public static func -= (lhs: inout Decimal128, rhs: Decimal128) { lhs = lhs - rhs }
    public static func *= (lhs: inout Decimal128, rhs: Decimal128) { lhs = lhs * rhs }
    /// Divides in place.
    public static func /= (lhs: inout Decimal128, rhs: Decimal128) { lhs = lhs / rhs }

    public static prefix func - (x: Decimal128) -> Decimal128 {
        if x.isNaN { return x }
        return Decimal128(bits: (x.bits.low, x.bits.high ^ (1 << 63)))
    }

    /// Not a number (RealmSwift's `isSignaling`: every NaN counts).
    public var isSignaling: Bool { isNaN }
    /// Whether the value is a NaN (decimal128 NaNs read as quiet and signaling alike).
    public var isSignalingNaN: Bool { isNaN }

    static let nan = Decimal128(bits: (0, 0x7C00_0000_0000_0000))
    static let infinity = Decimal128(bits: (0, 0x7800_0000_0000_0000))

    var isZero: Bool { !isNaN && !isInfinite && self == Decimal128() }

    /// Through Foundation's Decimal; `special` answers when an operand is infinite.
    private static func arithmetic(_ a: Decimal128, _ b: Decimal128, _ op: (Decimal, Decimal) -> Decimal,
                                   special: (Decimal128, Decimal128) -> Decimal128) -> Decimal128 {
        if a.isNaN || b.isNaN { return .nan }
        if a.isInfinite || b.isInfinite { return special(a, b) }
        guard let x = a.foundationDecimal, let y = b.foundationDecimal else { return .nan }
        let r = op(x, y)
        if r.isNaN { return .nan }
        return (try? Decimal128(string: "\(r)")) ?? .nan
    }

    /// The same number as a Foundation Decimal, or nil outside its range.
    private var foundationDecimal: Decimal? {
        guard let d = Decimal(string: description, locale: Locale(identifier: "en_US_POSIX")), !d.isNaN else { return nil }
        return d
    }
}

extension Decimal128: SignedNumeric {}

extension Decimal128: Strideable {
    public typealias Stride = Decimal128
    public func distance(to other: Decimal128) -> Decimal128 { other - self }
    public func advanced(by n: Decimal128) -> Decimal128 { self + n }
}

extension Decimal128 {
    /// The smallest and largest finite Decimal128 values.
    public static var min: Decimal128 { try! Decimal128(string: "-9.999999999999999999999999999999999E+6144") }
    /// The largest finite decimal128 (9.999…E+6144).
    public static var max: Decimal128 { try! Decimal128(string: "9.999999999999999999999999999999999E+6144") }
}
