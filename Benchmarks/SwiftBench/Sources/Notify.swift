// The latency from a commit in another process to the callback of a Results observer on this
// process's thread (which runs its run loop, as an app's main thread does): a child process
// (this executable, `--commit-child PATH N`) adds N messages, one per durable commit, 2 ms apart,
// printing the monotonic time each commit returned; the parent notes when each insertion reached
// its callback.
import Foundation
import Strata

final class ChatMessage: Object {
    @Persisted(primaryKey: true) var id = 0
    @Persisted var text = ""
}

func chatConfig(_ path: String) -> Realm.Configuration {
    Realm.Configuration(fileURL: URL(fileURLWithPath: path), objectTypes: [ChatMessage.self])
}

/// The child: N commits, each one's return time on its own line.
func commitChild(_ path: String, _ count: Int) -> Never {
    let realm = try! Realm(configuration: chatConfig(path))
    for i in 1...count {
        usleep(2000)
        try! realm.write { realm.add(ChatMessage(value: ["id": i, "text": "message \(i)"])) }
        print(String(format: "%.9f", now()))
    }
    exit(0)
}

/// Median and 99th percentile, in microseconds, and how many commits were seen.
func notifyLatency(_ path: String, commits: Int = 300) throws -> (median: Double, p99: Double, seen: Int) {
    removeFiles(path)
    _ = try Realm(configuration: chatConfig(path)) // the schema, before the child opens it
    final class Seen: @unchecked Sendable {
        let lock = NSLock()
        var times: [Double] = []
        var ready = DispatchSemaphore(value: 0)
    }
    let seen = Seen()
    let stop = Atomic()
    let observer = Thread {
        let realm = try! Realm(configuration: chatConfig(path))
        let token = realm.objects(ChatMessage.self).observe { change in
            let t = now()
            switch change {
            case .initial: seen.ready.signal()
            case .update(_, _, let insertions, _):
                seen.lock.lock()
                seen.times += insertions.map { _ in t }
                seen.lock.unlock()
            case .error(let e): fatalError("\(e)")
            }
        }
        while !stop.isSet { _ = RunLoop.current.run(mode: .default, before: Date(timeIntervalSinceNow: 0.1)) }
        token.invalidate()
    }
    observer.start()
    seen.ready.wait()
    let child = Process()
    child.executableURL = URL(fileURLWithPath: CommandLine.arguments[0]).standardizedFileURL
    child.arguments = ["--commit-child", path, "\(commits)"]
    let out = Pipe()
    child.standardOutput = out
    try child.run()
    let data = out.fileHandleForReading.readDataToEndOfFile()
    child.waitUntilExit()
    let committed = String(decoding: data, as: UTF8.self).split(separator: "\n").compactMap { Double($0) }
    let deadline = now() + 5
    while now() < deadline {
        seen.lock.lock()
        let got = seen.times.count
        seen.lock.unlock()
        if got >= committed.count { break }
        usleep(1000)
    }
    stop.set()
    seen.lock.lock()
    let times = seen.times
    seen.lock.unlock()
    let lat = zip(committed, times).map { ($1 - $0) * 1e6 }.sorted()
    removeFiles(path)
    guard !lat.isEmpty else { return (0, 0, 0) }
    return (lat[lat.count / 2], lat[min(lat.count - 1, lat.count * 99 / 100)], min(committed.count, times.count))
}

final class Atomic: @unchecked Sendable {
    private let lock = NSLock()
    private var value = false
    var isSet: Bool { lock.lock(); defer { lock.unlock() }; return value }
    func set() { lock.lock(); value = true; lock.unlock() }
}
