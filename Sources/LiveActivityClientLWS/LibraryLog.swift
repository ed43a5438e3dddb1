import CLibWebSockets
import Foundation
import LiveActivityCore

/// Where libwebsockets' own log lines go (process-wide, as `lws_set_log_level` is): the last error is kept
/// to explain terse connection failures (lws reports a failed certificate check only in its log), and
/// every line is echoed to standard error when asked.
enum LibraryLog {
    /// {lock} The last error line lws logged, without its timestamp; taken by ``takeLastError()``.
    private static let lastError = Locked<String?>(nil)
    /// {lock} Whether to echo each line to standard error.
    private static let echo = Locked(false)

    /// Routes lws errors and warnings here.
    /// - Parameter echoToStandardError: also print every line (`--verbose`).
    static func install(echoToStandardError: Bool) {
        echo.withLock { $0 = echoToStandardError }
        lastError.withLock { $0 = nil }
        lws_set_log_level(Int32(LLL_ERR | LLL_WARN), libraryLogLine)
    }

    /// The last error lws logged since the previous call, if any.
    static func takeLastError() -> String? {
        lastError.withLock { line in
            defer { line = nil }
            return line
        }
    }

    fileprivate static func record(_ level: Int32, _ line: String) {
        if echo.withLock({ $0 }) { try? FileHandle.standardError.write(contentsOf: Data(line.utf8)) }
        guard level & Int32(LLL_ERR) != 0 else { return }
        // "[2026/11/29 17:15:01:1738] E: SSL error: self-signed certificate (…)" → "SSL error: …"
        var text = Substring(line)
        if let marker = text.range(of: "] E: ") { text = text[marker.upperBound...] }
        let trimmed = text.trimmingCharacters(in: .whitespacesAndNewlines)
        lastError.withLock { $0 = trimmed }
    }
}

/// The `lws_set_log_level` emit function: one formatted line (with timestamp and newline) per call.
private func libraryLogLine(_ level: Int32, _ line: UnsafePointer<CChar>?) {
    guard let line else { return }
    LibraryLog.record(level, String(cString: line))
}
