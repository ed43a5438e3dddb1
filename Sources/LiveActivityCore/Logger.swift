import Foundation

/// A small structured logger shaped like swift-log's `Logger`: a constant message plus dotted metadata.
///
/// Writes one line per entry to standard error: `2026-11-29T17:00:00.000Z info server: message key=value`.
/// Thread-safe (each line is one `write`).
public struct Logger: Sendable {
    /// Severity, lowest first.
    public enum Level: Int, Sendable, Comparable {
        case debug, info, notice, warning, error
        public static func < (a: Level, b: Level) -> Bool { a.rawValue < b.rawValue }
    }

    /// Names the component that logs.
    public var label: String
    /// Entries below this level are dropped.
    public var level: Level

    /// Creates a logger.
    public init(label: String, level: Level = .info) {
        self.label = label
        self.level = level
    }

    /// Logs `message` with `metadata` (keys such as `session.id`) if `level` is at or above ``level``.
    public func log(_ level: Level, _ message: @autoclosure () -> String, _ metadata: [String: String] = [:]) {
        guard level >= self.level else { return }
        var line = "\(ISODate.format(Date())) \(level) \(label): \(message())"
        for (key, value) in metadata.sorted(by: { $0.key < $1.key }) { line += " \(key)=\(value)" }
        line += "\n"
        FileHandle.standardError.write(Data(line.utf8))
    }

    /// Logs at `info`.
    public func info(_ message: @autoclosure () -> String, _ metadata: [String: String] = [:]) { log(.info, message(), metadata) }
    /// Logs at `warning`.
    public func warning(_ message: @autoclosure () -> String, _ metadata: [String: String] = [:]) { log(.warning, message(), metadata) }
    /// Logs at `error`.
    public func error(_ message: @autoclosure () -> String, _ metadata: [String: String] = [:]) { log(.error, message(), metadata) }
    /// Logs at `debug`.
    public func debug(_ message: @autoclosure () -> String, _ metadata: [String: String] = [:]) { log(.debug, message(), metadata) }
}
