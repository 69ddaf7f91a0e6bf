import Foundation

/// A 128-bit decimal floating-point number (IEEE 754-2008 decimal128, binary integer decimal
/// encoding, as Realm and MongoDB store it): up to 34 significant digits, exact for decimal
/// fractions such as money.
///
/// ```swift
/// let price = try Decimal128(string: "19.99")
/// price.description            // "19.99"
/// Decimal128(value: 3) < price // true
/// ```
public struct Decimal128: Hashable, Comparable, Sendable, CustomStringConvertible,
                          ExpressibleByIntegerLiteral, ExpressibleByFloatLiteral {
    /// The encoding: bits 0..<64 and 64..<128.
    public let bits: (low: UInt64, high: UInt64)

    /// The value of these IEEE 754-2008 decimal128 bits (BID encoding), stored as given.
    public init(bits: (low: UInt64, high: UInt64)) { self.bits = bits }

    private static let bias = 6176
    private static let maxDigits = 34
    private static let nanHigh: UInt64 = 0x7C00_0000_0000_0000
    private static let infHigh: UInt64 = 0x7800_0000_0000_0000

    /// Zero.
    public init() { self.init(negative: false, coefficient: (0, 0), exponent: 0) }

    public init(integerLiteral value: Int64) { self.init(value: value) }
    public init(floatLiteral value: Double) { self.init(value: value) }

    /// An integer, exactly.
    public init(value: Int64) {
        self.init(negative: value < 0, coefficient: (value.magnitude, 0), exponent: 0)
    }

    /// The integer, exactly.
    public init(value: Int) { self.init(value: Int64(value)) }

    /// A Double through its shortest decimal form ("0.1" for 0.1).
    public init(value: Double) {
        if value.isNaN { self.init(bits: (0, Decimal128.nanHigh)); return }
        if value.isInfinite {
            self.init(bits: (0, Decimal128.infHigh | (value < 0 ? 1 << 63 : 0)))
            return
        }
        // "\(value)" is the shortest round-tripping form; it always parses.
        self = (try? Decimal128(string: "\(value)")) ?? Decimal128()
    }

    /// A number from text: an optional sign, digits with an optional point, an optional
    /// exponent (`e`/`E`), or `NaN`, `Inf`, `Infinity`. More than 34 significant digits are
    /// rounded (half to even); throws naming the text when it is not a number or out of range.
    public init(string: String) throws {
        let s = string.trimmingCharacters(in: .whitespaces)
        var chars = Substring(s)
        var negative = false
        if let c = chars.first, c == "+" || c == "-" {
            negative = c == "-"
            chars = chars.dropFirst()
        }
        switch chars.lowercased() {
        case "nan": self.init(bits: (0, Decimal128.nanHigh)); return
        case "inf", "infinity":
            self.init(bits: (0, Decimal128.infHigh | (negative ? 1 << 63 : 0)))
            return
        default: break
        }
        var digits: [UInt8] = []
        var exponent = 0
        var sawPoint = false, sawDigit = false
        var rest = chars[...]
        while let c = rest.first {
            if let d = c.wholeNumberValue, c.isASCII {
                sawDigit = true
                if !(digits.isEmpty && d == 0) { digits.append(UInt8(d)) }
                if sawPoint { exponent -= 1 }
            } else if c == "." && !sawPoint {
                sawPoint = true
            } else {
                break
            }
            rest = rest.dropFirst()
        }
        guard sawDigit else { throw Decimal128.invalid(string) }
        if let e = rest.first, e == "e" || e == "E" {
            guard let x = Int(rest.dropFirst()), abs(x) < 100_000 else { throw Decimal128.invalid(string) }
            exponent += x
        } else if !rest.isEmpty {
            throw Decimal128.invalid(string)
        }
        // Round to 34 digits, half to even.
        if digits.count > Decimal128.maxDigits {
            let drop = digits.count - Decimal128.maxDigits
            let first = digits[Decimal128.maxDigits]
            let tail = digits[(Decimal128.maxDigits + 1)...].contains { $0 != 0 }
            digits.removeLast(drop)
            exponent += drop
            let odd = digits.last.map { $0 % 2 == 1 } ?? false
            if first > 5 || (first == 5 && (tail || odd)) {
                var i = digits.count - 1
                while i >= 0 {
                    if digits[i] == 9 { digits[i] = 0; i -= 1 } else { digits[i] += 1; break }
                }
                if i < 0 { digits.insert(1, at: 0); digits.removeLast(); exponent += 1 }
            }
        }
        // Trailing zeros may go into the exponent when it is above range (and leading into it
        // when below): keep the value, move the scale.
        while exponent + Decimal128.bias > 6111 + Decimal128.bias, digits.count < Decimal128.maxDigits,
              !digits.isEmpty {
            digits.append(0)
            exponent -= 1
        }
        if digits.isEmpty { exponent = Swift.max(Swift.min(exponent, 6111), -6176) }
        guard exponent >= -6176, exponent <= 6111 else { throw Decimal128.invalid(string) }
        var coef: (UInt64, UInt64) = (0, 0)
        for d in digits { coef = Decimal128.mulAdd(coef, 10, UInt64(d)) }
        self.init(negative: negative, coefficient: coef, exponent: exponent)
    }

    private init(negative: Bool, coefficient c: (low: UInt64, high: UInt64), exponent: Int) {
        let e = UInt64(exponent + Decimal128.bias)
        bits = (c.low, (negative ? 1 << 63 : 0) | e << 49 | (c.high & ((1 << 49) - 1)))
    }

    /// Whether the value is NaN.
    public var isNaN: Bool { bits.high & Decimal128.nanHigh == Decimal128.nanHigh }
    /// Whether the value is an infinity.
    public var isInfinite: Bool { !isNaN && bits.high & Decimal128.infHigh == Decimal128.infHigh }
    /// Whether the sign bit is set (negative values, -0, -Inf).
    public var isSignMinus: Bool { bits.high >> 63 == 1 }

    /// Coefficient digits (most significant first, none for zero) and exponent of a finite value.
    private var parts: (digits: [UInt8], exponent: Int) {
        var hi = bits.high & ~(1 << 63)
        let exp: Int
        if hi >> 61 & 3 == 3 { // large-coefficient form: non-canonical, read as zero
            exp = Int(hi >> 47 & 0x3FFF) - Decimal128.bias
            return ([], exp)
        }
        exp = Int(hi >> 49) - Decimal128.bias
        hi &= (1 << 49) - 1
        var c = (bits.low, hi)
        if hi >= 0x1_ED09_BEAD_87C0 && !(hi == 0x1_ED09_BEAD_87C0 && bits.low < 0x378D_8E64_0000_0000) {
            return ([], exp) // coefficient >= 10^34: non-canonical, zero
        }
        var digits: [UInt8] = []
        while c.0 != 0 || c.1 != 0 {
            let (q, r) = Decimal128.divMod10(c)
            digits.append(UInt8(r))
            c = q
        }
        return (digits.reversed(), exp)
    }

    public var description: String {
        if isNaN { return "NaN" }
        if isInfinite { return isSignMinus ? "-Inf" : "Inf" }
        let (digits, exp) = parts
        let sign = isSignMinus ? "-" : ""
        let text = digits.isEmpty ? "0" : String(digits.map { Character(String($0)) })
        let n = text.count
        if exp == 0 { return sign + text }
        if exp > 0 || n + exp < -5 { // scientific, as Realm writes it: "1.23456789E132", "1E-7"
            let adjusted = exp + n - 1
            var digitsText = Substring(text)
            while digitsText.count > 1, digitsText.last == "0" { digitsText = digitsText.dropLast() }
            let mantissa = digitsText.count > 1 ? "\(digitsText.prefix(1)).\(digitsText.dropFirst())" : String(digitsText)
            return "\(sign)\(mantissa)E\(adjusted)"
        }
        let point = n + exp
        if point > 0 { return "\(sign)\(text.prefix(point)).\(text.dropFirst(point))" }
        return sign + "0." + String(repeating: "0", count: -point) + text
    }

    /// The nearest Double.
    public var doubleValue: Double {
        if isNaN { return .nan }
        if isInfinite { return isSignMinus ? -.infinity : .infinity }
        return Double(description.replacingOccurrences(of: "E+", with: "E")) ?? .nan
    }

    /// Same number, whatever the scale (1.0 == 1.00); NaN equals nothing.
    public static func == (a: Decimal128, b: Decimal128) -> Bool {
        if a.isNaN || b.isNaN { return false }
        return compare(a, b) == 0
    }

    public func hash(into h: inout Hasher) {
        if isNaN { h.combine(0x7C); return }
        if isInfinite { h.combine(isSignMinus); h.combine(0x78); return }
        var (digits, exp) = parts
        while let last = digits.last, last == 0 { digits.removeLast(); exp += 1 }
        if digits.isEmpty { h.combine(0); return }
        h.combine(isSignMinus)
        h.combine(digits)
        h.combine(exp)
    }

    public static func < (a: Decimal128, b: Decimal128) -> Bool {
        if a.isNaN || b.isNaN { return false }
        return compare(a, b) < 0
    }

    private static func compare(_ a: Decimal128, _ b: Decimal128) -> Int {
        func rank(_ x: Decimal128) -> Int { x.isInfinite ? (x.isSignMinus ? -2 : 2) : 0 }
        let ra = rank(a), rb = rank(b)
        if ra != 0 || rb != 0 { return ra == rb ? 0 : (ra < rb ? -1 : 1) }
        let (da, ea) = a.parts, (db, eb) = b.parts
        let za = da.isEmpty, zb = db.isEmpty
        if za && zb { return 0 }
        let sa = za ? 0 : (a.isSignMinus ? -1 : 1), sb = zb ? 0 : (b.isSignMinus ? -1 : 1)
        if sa != sb { return sa < sb ? -1 : 1 }
        // Same sign, both non-zero: compare magnitudes by their leading position, then digits.
        let ma = da.count + ea, mb = db.count + eb
        var mag = 0
        if ma != mb {
            mag = ma < mb ? -1 : 1
        } else {
            let len = Swift.max(da.count, db.count)
            for i in 0..<len {
                let x = i < da.count ? da[i] : 0, y = i < db.count ? db[i] : 0
                if x != y { mag = x < y ? -1 : 1; break }
            }
        }
        return sa < 0 ? -mag : mag
    }

    private static func mulAdd(_ c: (UInt64, UInt64), _ m: UInt64, _ a: UInt64) -> (UInt64, UInt64) {
        let lo = c.0.multipliedFullWidth(by: m)
        let (low, carry) = lo.low.addingReportingOverflow(a)
        let high = c.1 &* m &+ lo.high &+ (carry ? 1 : 0)
        return (low, high)
    }

    private static func divMod10(_ c: (UInt64, UInt64)) -> ((UInt64, UInt64), UInt64) {
        let qh = c.1 / 10, rh = c.1 % 10
        let (ql, rl) = UInt64(10).dividingFullWidth((rh, c.0))
        return ((ql, qh), rl)
    }

    private static func invalid(_ s: String) -> StrataError {
        StrataError(code: .invalidArgument, message: "'\(s)' is not a Decimal128 number")
    }
}
