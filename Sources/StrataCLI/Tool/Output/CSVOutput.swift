// CSVOutput.swift — objects as CSV (RFC 4180): a header of property names, one row per object;
// collections and mixed values as JSON text in their cell, null as an empty cell.
import CCore
@_spi(StrataCore) import Strata

enum CSVOutput {
    static func write(_ cls: ClassSchema, keys: [Int64], encoder: ObjectEncoder, to sink: Sink,
                      progress: Progress? = nil) throws {
        try sink.line(cls.properties.map { field($0.name) }.joined(separator: ","))
        for (i, k) in keys.enumerated() {
            guard case .object(let m) = try encoder.encode(cls, key: k) else { continue }
            try sink.line(m.map { field(ValueCoding.text($0.1)) }.joined(separator: ","))
            if i % 4096 == 0 { progress?.update(i) }
        }
    }

    static func field(_ s: String) -> String {
        guard s.contains(where: { $0 == "," || $0 == "\"" || $0 == "\n" || $0 == "\r" }) || s.hasPrefix(" ") || s.hasSuffix(" ") else { return s }
        return "\"" + s.replacingOccurrences(of: "\"", with: "\"\"") + "\""
    }
}
