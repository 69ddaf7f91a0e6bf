// TableOutput.swift — rows of text as a table for a terminal (TextTable's plain style).
import TextTable

enum TableOutput {
    static func render(headers: [String], rows: [[String]]) -> String {
        let table = TextTable<[String]> { row in
            headers.indices.map { i in Column(title: headers[i], value: i < row.count ? row[i] : "") }
        }
        return table.string(for: rows, style: Style.psql) ?? ""
    }

    /// A value for one cell: line breaks and tabs shown as escapes, so that rows stay rows.
    static func cell(_ s: String) -> String {
        guard s.contains(where: { $0 == "\n" || $0 == "\r" || $0 == "\t" || $0 == "\r\n" }) else { return s }
        return s.replacingOccurrences(of: "\r\n", with: "\\r\\n").replacingOccurrences(of: "\n", with: "\\n")
            .replacingOccurrences(of: "\r", with: "\\r").replacingOccurrences(of: "\t", with: "\\t")
    }

    /// "name: value" lines, the names aligned.
    static func pairs(_ items: [(String, String)]) -> String {
        let w = items.map(\.0.count).max() ?? 0
        return items.map { $0.0 + ":" + String(repeating: " ", count: w - $0.0.count + 1) + $0.1 }
            .joined(separator: "\n")
    }
}
