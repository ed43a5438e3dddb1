import Foundation

/// A small structured logger shaped like swift-log's `Logger`: a constant message plus dotted metadata.
///
/// Writes one line per entry, as text
/// (`2026-11-29T17:00:00.000Z info liveactivity: event activity.id=… event.kind=started`) or as one JSON
/// object per line (`{"time":…,"level":"info","label":…,"message":…,"activity.id":…}`), through a
/// ``LogWriter`` (standard error by default): logging never waits for the output, and when the output does not
/// drain the line is dropped and counted. Thread-safe; lines never interleave.
public struct Logger: Sendable {
    /// Severity, lowest first.
    public enum Level: String, Sendable, Comparable, CaseIterable {
        case debug, info, notice, warning, error

        private var rank: Int { Self.allCases.firstIndex(of: self)! }
        /// Orders levels by severity, `debug` lowest.
        public static func < (a: Level, b: Level) -> Bool { a.rank < b.rank }
    }

    /// How lines are written.
    public enum Format: String, Sendable, CaseIterable {
        /// Human-readable: time, level, label, message, `key=value` pairs.
        case text
        /// One JSON object per line, for log collectors.
        case json
    }

    /// Names the component that logs.
    public var label: String
    /// Entries below this level are dropped.
    public var level: Level
    /// How lines are written.
    public var format: Format
    /// Where lines go (process-wide writers are shared by every logger that writes there).
    public var writer: LogWriter

    /// Creates a logger.
    /// - Parameter writer: where lines go (default: standard error).
    public init(label: String, level: Level = .info, format: Format = .text, writer: LogWriter = .standardError) {
        self.label = label
        self.level = level
        self.format = format
        self.writer = writer
    }

    /// Logs `message` with `metadata` (keys such as `session.id`) if `level` is at or above ``level``.
    /// Returns without waiting for the output (see ``LogWriter``).
    public func log(_ level: Level, _ message: @autoclosure () -> String, _ metadata: [String: String] = [:]) {
        guard level >= self.level else { return }
        let time = ISODate.format(Date())
        var line: String
        switch format {
        case .text:
            line = "\(time) \(level.rawValue) \(label): \(Self.textEscaped(message(), quoting: false))"
            for (key, value) in metadata.sorted(by: { $0.key < $1.key }) { line += " \(key)=\(Self.textEscaped(value, quoting: true))" }
        case .json:
            var object: [String: JSONValue] = ["time": .string(time), "level": .string(level.rawValue),
                                               "label": .string(label), "message": .string(message())]
            for (key, value) in metadata { object[key] = .string(value) }
            line = String(decoding: (try? MessageEncoder.encoder.encode(JSONValue.object(object))) ?? Data(), as: UTF8.self)
        }
        // Queued, never waited for: a stalled or closed output must not stop the server (the line is dropped).
        writer.write(line)
    }

    /// Text-format escaping, as logfmt quotes: a metadata value that is not a plain token (empty, or holding a
    /// space, `"`, `=`, a backslash or a control or line-breaking character) goes in double quotes with the
    /// backslash, `"` and those characters escaped (`\n`, `\u0000`); in the message (`quoting: false`) only the control and
    /// line-breaking characters are escaped. So one entry is always one line, and text a client chose (an
    /// image URL, a name) can never pose as another field or another entry.
    static func textEscaped(_ text: String, quoting: Bool) -> String {
        func isBreaking(_ scalar: Unicode.Scalar) -> Bool {
            scalar.value < 0x20 || (0x7F...0x9F).contains(scalar.value) || scalar.value == 0x2028 || scalar.value == 0x2029
        }
        let quote = quoting && (text.isEmpty || text.unicodeScalars.contains {
            $0 == " " || $0 == "\"" || $0 == "=" || $0 == "\\" || isBreaking($0)
        })
        guard quote || text.unicodeScalars.contains(where: isBreaking) else { return text }
        var out = quote ? "\"" : ""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\"" where quote: out += "\\\""
            case "\\" where quote: out += "\\\\"
            case "\n": out += "\\n"
            case "\r": out += "\\r"
            case "\t": out += "\\t"
            case _ where isBreaking(scalar):
                let hex = String(scalar.value, radix: 16)
                out += "\\u" + String(repeating: "0", count: max(0, 4 - hex.count)) + hex
            default: out.unicodeScalars.append(scalar)
            }
        }
        return quote ? out + "\"" : out
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
