import CLibWebSockets
import Foundation
import LiveActivityCore

/// Routes libwebsockets' own log lines into the server's ``Logger`` (label `libwebsockets`), so they obey
/// `--log-format` and, like every log line, never block the service thread on a stalled standard error.
///
/// `lws_set_log_level` is process-wide, so the destination is too: the logger of the server that started last.
enum LibraryLogBridge {
    /// {lock} Where lws lines go; nil until a server starts.
    private static let logger = Locked<Logger?>(nil)

    /// Makes `logger`, relabelled `libwebsockets`, the destination of lws log lines. Thread-safe.
    /// - Returns: the emit function to hand to `lws_set_log_level`.
    static func emitter(for logger: Logger) -> @convention(c) (Int32, UnsafePointer<CChar>?) -> Void {
        var relabelled = logger
        relabelled.label = "libwebsockets"
        self.logger.withLock { $0 = relabelled }
        return libraryLogLine
    }

    /// The text of one lws line, without the timestamp and level tag lws may put first and the final newline:
    /// `[2026/11/29 17:15:01:1738] E: ERROR on binding fd 7 to port 8080\n` → `ERROR on binding fd 7 to port 8080`.
    static func message(ofLine line: String) -> String {
        var text = Substring(line)
        if text.hasPrefix("["), let close = text.firstIndex(of: "]") {
            text = text[text.index(after: close)...].drop(while: { $0 == " " })
            // The level tag: "E", "W", "N", or a longer one such as "CLIENT".
            if let colon = text.firstIndex(of: ":"), text[..<colon].allSatisfy({ $0.isUppercase }), !text[..<colon].isEmpty {
                text = text[text.index(after: colon)...]
            }
        }
        return text.trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// Logs one lws line at the level lws gave it.
    fileprivate static func record(_ level: Int32, _ line: String) {
        guard let logger = logger.withLock({ $0 }) else { return }
        let severity: Logger.Level = if level & Int32(LLL_ERR) != 0 {
            .error
        } else if level & Int32(LLL_WARN) != 0 {
            .warning
        } else if level & Int32(LLL_NOTICE) != 0 {
            .notice
        } else {
            .debug
        }
        logger.log(severity, message(ofLine: line))
    }
}

/// The `lws_set_log_level` emit function: one formatted line per call, on whichever thread lws logs from.
private func libraryLogLine(_ level: Int32, _ line: UnsafePointer<CChar>?) {
    guard let line else { return }
    LibraryLogBridge.record(level, String(cString: line))
}
