import Foundation

/// A value guarded by a lock, for state shared across threads.
///
/// Uses `NSLock` (a pthread mutex), which ThreadSanitizer understands; the Synchronization module's
/// `Mutex` is futex-based on Linux and shows up as false data races in the sanitizer runs. Thread-safe.
public final class Locked<Value>: @unchecked Sendable {
    /// {lock} the value.
    private var value: Value
    private let lock = NSLock()

    /// Wraps `value`.
    public init(_ value: Value) { self.value = value }

    /// Runs `body` with exclusive access to the value.
    /// - Returns: what `body` returns.
    public func withLock<Result>(_ body: (inout Value) throws -> Result) rethrows -> Result {
        lock.lock()
        defer { lock.unlock() }
        return try body(&value)
    }
}
