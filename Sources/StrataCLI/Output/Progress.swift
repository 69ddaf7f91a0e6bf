// Progress.swift — a progress bar with rate and time left (console-kit's ProgressBar) for long
// work, on a terminal only: nothing when stdout is a pipe or carries the command's data.
import ConsoleKitTerminal
import Foundation
#if canImport(Glibc)
import Glibc
#endif

final class Progress {
    private let bar: ActivityIndicator<ProgressBar>?
    private let title: String
    private let total: Int
    private let start = Date()

    /// `total` 0: the amount is unknown (the bar shows the count and the rate only).
    init(_ title: String, total: Int, enabled: Bool = true) {
        self.title = title
        self.total = total
        if enabled && isatty(1) != 0 && ProcessInfo.processInfo.environment["STRATA_NO_PROGRESS"] == nil {
            let b = Terminal().progressBar(title: title)
            b.start(refreshRate: 100)
            bar = b
        } else {
            bar = nil
        }
    }

    func update(_ done: Int) {
        guard let bar else { return }
        let secs = Date().timeIntervalSince(start)
        let rate = secs > 0 ? Double(done) / secs : 0
        var text = "\(title) \(done)\(total > 0 ? "/\(total)" : "") · \(Progress.short(rate))/s"
        if total > 0 && rate > 0 { text += " · \(Int((Double(total - done) / rate).rounded(.up))) s left" }
        bar.activity.title = text
        bar.activity.currentProgress = total > 0 ? Double(done) / Double(total) : 0
    }

    func done(_ ok: Bool = true) {
        guard let bar else { return }
        update(total)
        if ok { bar.succeed() } else { bar.fail() }
    }

    static func short(_ x: Double) -> String {
        x >= 1e6 ? String(format: "%.1fM", x / 1e6) : x >= 1e3 ? String(format: "%.1fk", x / 1e3) : String(format: "%.0f", x)
    }
}
