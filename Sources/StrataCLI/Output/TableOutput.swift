// TableOutput.swift — rows of text as a table for a terminal (TextTable's plain style).
import TextTable

enum TableOutput {
    static func render(headers: [String], rows: [[String]]) -> String {
        let table = TextTable<[String]> { row in
            headers.indices.map { i in Column(title: headers[i], value: i < row.count ? row[i] : "") }
        }
        return table.string(for: rows, style: Style.psql) ?? ""
    }

    /// "name: value" lines, the names aligned.
    static func pairs(_ items: [(String, String)]) -> String {
        let w = items.map(\.0.count).max() ?? 0
        return items.map { $0.0 + ":" + String(repeating: " ", count: w - $0.0.count + 1) + $0.1 }
            .joined(separator: "\n")
    }
}
