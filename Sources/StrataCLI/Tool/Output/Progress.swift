// Progress.swift — progress for long work, on a terminal only (nothing when stdout is a pipe or
// carries the command's data): console-kit's progress bar with the count, rate and time left
// when the amount is known (export, import, dump, load), its loading bar with the elapsed time
// when it is not (check, compact, copy: one call of the core each).
import ConsoleKitTerminal
import Foundation
#if canImport(Glibc)
import Glibc
#endif

final class Progress {
    private var title: String
    private var total: Int
    private var start = Date()
    private let bar: ActivityIndicator<ProgressBar>?
    private let spinner: ActivityIndicator<LoadingBar>?
    private let timer: DispatchSourceTimer?

    /// `total` 0: the amount is unknown.
    init(_ title: String, total: Int, enabled: Bool = true) {
        self.title = title
        self.total = total
        let on = enabled && isatty(1) != 0 && ProcessInfo.processInfo.environment["STRATA_NO_PROGRESS"] == nil
        if on && total > 0 {
            bar = Terminal().progressBar(title: title)
            bar!.start(refreshRate: 100)
            spinner = nil
            timer = nil
        } else if on {
            bar = nil
            let s = Terminal().loadingBar(title: title)
            s.start(refreshRate: 100)
            spinner = s
            // The elapsed seconds in the title, since the work reports nothing on its way.
            let t = DispatchSource.makeTimerSource(queue: .global())
            let begun = Date()
            t.schedule(deadline: .now() + 1, repeating: 1)
            t.setEventHandler { s.activity.title = "\(title) \(Int(Date().timeIntervalSince(begun))) s" }
            t.resume()
            timer = t
        } else {
            bar = nil
            spinner = nil
            timer = nil
        }
    }

    /// A new phase of the work (its own amount, its own rate).
    func phase(_ title: String, total: Int) {
        self.title = title
        self.total = total
        start = Date()
        update(0)
    }

    func update(_ done: Int) {
        guard let bar else { return }
        let secs = Date().timeIntervalSince(start)
        let rate = secs > 0 ? Double(done) / secs : 0
        var text = "\(title) \(done)/\(total) · \(Progress.short(rate))/s"
        if rate > 0 { text += " · \(Int((Double(max(0, total - done)) / rate).rounded(.up))) s left" }
        bar.activity.title = text
        bar.activity.currentProgress = total > 0 ? Double(done) / Double(total) : 0
    }

    func done(_ ok: Bool = true) {
        timer?.cancel()
        if let bar {
            update(total)
            if ok { bar.succeed() } else { bar.fail() }
        }
        if let spinner {
            if ok { spinner.succeed() } else { spinner.fail() }
        }
    }

    static func short(_ x: Double) -> String {
        x >= 1e6 ? String(format: "%.1fM", x / 1e6) : x >= 1e3 ? String(format: "%.1fk", x / 1e3) : String(format: "%.0f", x)
    }
}
