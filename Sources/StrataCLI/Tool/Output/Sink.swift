// Sink.swift — buffered output to stdout or to a new file (written as `<path>.partial` and
// renamed when complete, so that a failed export leaves no half file under the name asked for).
import Foundation
#if canImport(Glibc)
import Glibc
#endif

final class Sink {
    private let fd: Int32
    private let path: String?
    private var buffer: [UInt8] = []
    private(set) var bytes = 0

    /// stdout when `path` is nil or "-".
    init(path: String?) throws {
        if let p = path, p != "-" {
            self.path = p
            fd = open(p + ".partial", O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
            if fd < 0 { throw ToolFailure("cannot create '\(p).partial': \(String(cString: strerror(errno)))") }
        } else {
            self.path = nil
            fd = 1
        }
        buffer.reserveCapacity(1 << 20)
    }

    var isTerminal: Bool { path == nil && isatty(1) != 0 }
    var writesToStdout: Bool { path == nil }

    func write(_ s: String) throws {
        buffer.append(contentsOf: s.utf8)
        if buffer.count >= 1 << 20 { try flush() }
    }

    func line(_ s: String) throws { try write(s + "\n") }

    func flush() throws {
        var off = 0
        while off < buffer.count {
            let n = buffer[off...].withUnsafeBytes { Glibc.write(fd, $0.baseAddress, $0.count) }
            if n < 0 {
                if errno == EINTR { continue }
                throw ToolFailure("cannot write \(path.map { "'\($0)'" } ?? "stdout"): \(String(cString: strerror(errno)))")
            }
            off += n
        }
        bytes += buffer.count
        buffer.removeAll(keepingCapacity: true)
    }

    /// Flush, sync and give the file its name.
    func finish() throws {
        try flush()
        guard let p = path else { return }
        if fsync(fd) != 0 { throw ToolFailure("cannot sync '\(p).partial': \(String(cString: strerror(errno)))") }
        close(fd)
        if rename(p + ".partial", p) != 0 {
            throw ToolFailure("cannot rename '\(p).partial' to '\(p)': \(String(cString: strerror(errno)))")
        }
    }

    /// Remove the partial file after a failure.
    func abandon() {
        guard let p = path else { return }
        close(fd)
        unlink(p + ".partial")
    }
}
