// Timestamps.swift — seconds and nanoseconds since 1970 (UTC) as ISO 8601 text and back:
// "2024-05-01T12:00:00Z", with as many fraction digits as the nanoseconds need (up to 9).
import Foundation
#if canImport(Glibc)
import Glibc
#endif

enum Timestamps {
    static func text(seconds: Int64, nanoseconds: Int32) -> String {
        var t = time_t(seconds)
        var tm = tm()
        gmtime_r(&t, &tm)
        var s = String(format: "%04d-%02d-%02dT%02d:%02d:%02d", Int(tm.tm_year) + 1900, Int(tm.tm_mon) + 1,
                       Int(tm.tm_mday), Int(tm.tm_hour), Int(tm.tm_min), Int(tm.tm_sec))
        if nanoseconds != 0 {
            var frac = String(format: "%09d", Int(nanoseconds))
            while frac.hasSuffix("0") { frac.removeLast() }
            s += "." + frac
        }
        return s + "Z"
    }

    /// "YYYY-MM-DDTHH:MM:SS[.fraction](Z|±HH:MM)", or nil.
    static func parse(_ s: String) -> (seconds: Int64, nanoseconds: Int32)? {
        let u = Array(s.utf8)
        func num(_ from: Int, _ len: Int) -> Int? {
            guard from + len <= u.count else { return nil }
            var v = 0
            for c in u[from..<from + len] {
                guard c >= 48 && c <= 57 else { return nil }
                v = v * 10 + Int(c - 48)
            }
            return v
        }
        var i = 0
        var negativeYear = false
        if u.first == UInt8(ascii: "-") { negativeYear = true; i = 1 }
        guard let year = num(i, 4), u.count > i + 18, u[i + 4] == 45, u[i + 7] == 45,
              u[i + 10] == 84 || u[i + 10] == 32, u[i + 13] == 58, u[i + 16] == 58,
              let mon = num(i + 5, 2), let day = num(i + 8, 2), let hh = num(i + 11, 2),
              let mm = num(i + 14, 2), let ss = num(i + 17, 2),
              (1...12).contains(mon), (1...31).contains(day), hh < 24, mm < 60, ss < 61 else { return nil }
        i += 19
        var nanos = 0
        if i < u.count && u[i] == UInt8(ascii: ".") {
            i += 1
            var digits = 0
            while i < u.count, u[i] >= 48, u[i] <= 57 {
                if digits < 9 { nanos = nanos * 10 + Int(u[i] - 48) }
                digits += 1
                i += 1
            }
            guard digits > 0 && digits <= 9 else { return nil }
            for _ in digits..<9 { nanos *= 10 }
        }
        var offset = 0
        if i < u.count && u[i] == UInt8(ascii: "Z") {
            i += 1
        } else if i < u.count && (u[i] == 43 || u[i] == 45), let oh = num(i + 1, 2), u.count > i + 5,
                  u[i + 3] == 58, let om = num(i + 4, 2) {
            offset = (oh * 3600 + om * 60) * (u[i] == 45 ? -1 : 1)
            i += 6
        } else {
            return nil
        }
        guard i == u.count else { return nil }
        // Days from the civil date (proleptic Gregorian), as Howard Hinnant's days_from_civil.
        let y = (negativeYear ? -year : year) - (mon <= 2 ? 1 : 0)
        let era = (y >= 0 ? y : y - 399) / 400
        let yoe = y - era * 400
        let doy = (153 * (mon + (mon > 2 ? -3 : 9)) + 2) / 5 + day - 1
        let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy
        let days = era * 146097 + doe - 719468
        let secs = Int64(days) * 86400 + Int64(hh * 3600 + mm * 60 + ss) - Int64(offset)
        return (secs, Int32(nanos))
    }
}
