import Foundation
import Synchronization

/// A bounded, non-blocking queue of log lines in front of one file descriptor (standard error, standard output).
///
/// ``write(_:)`` copies a line into the queue and returns at once; one background thread, started at the first
/// write, writes the queue to the descriptor in order, a batch at a time; while lines come faster than 100 a
/// second it pauses 10 ms after each batch, so that they share one `write(2)`. The queue holds at most ``capacityLines`` lines and
/// ``capacityBytes`` bytes, counting the batch being written: when the descriptor does not drain (a pipe nobody
/// reads, a terminal stopped with Ctrl-S, a stalled log shipper), a line that does not fit is dropped and
/// counted in ``droppedLines`` rather than making the caller wait. No lock is held across `write(2)`.
///
/// Each line is written whole and lines never interleave: only this writer's thread writes them, one batch of
/// whole lines after the other. The writer neither closes nor changes the descriptor. Its thread, once
/// started, lives as long as the process, so writers are made once (``standardError``, ``standardOutput``).
/// Thread-safe.
public final class LogWriter: @unchecked Sendable {
    /// The descriptor lines are written to (not owned: never closed).
    public let fileDescriptor: Int32
    /// Most lines held at once, queued plus being written.
    public let capacityLines: Int
    /// Most bytes held at once, queued plus being written, newlines included.
    public let capacityBytes: Int

    /// Guards the fields marked {condition}; waited on by the writer thread (for lines) and by ``flush(timeout:)``
    /// (for an empty queue).
    private let condition = NSCondition()
    /// {condition} Whole lines, each ending in a newline, not yet taken by the writer thread.
    private var queued: [UInt8] = []
    /// {condition} How many lines ``queued`` holds.
    private var queuedLines = 0
    /// {condition} Bytes of the batch the writer thread is writing now (0 when idle).
    private var writingBytes = 0
    /// {condition} Lines of the batch the writer thread is writing now.
    private var writingLines = 0
    /// {condition} Whether the writer thread was started.
    private var threadStarted = false
    /// {condition} Whether the writer thread waits for lines (only then does a new line wake it).
    private var parked = false
    /// While batches follow each other closer than this (lines coming faster than 40 a second: a line per
    /// activity event under load), the writer thread pauses this long after each, in nanoseconds, so that the
    /// lines share one `write(2)` and one wake-up instead of costing a context switch each. A line after a
    /// quiet spell is written at once.
    private static let gatherNanoseconds: UInt64 = 25_000_000
    /// Lines dropped: refused because the queue was full, or lost to a write error (a closed descriptor).
    private let dropped = Atomic<Int>(0)

    /// Standard error (descriptor 2), where ``Logger`` writes by default. Process-wide.
    public static let standardError = LogWriter(fileDescriptor: 2)
    /// Standard output (descriptor 1), for the lines `serve` prints while the server runs. Process-wide.
    public static let standardOutput = LogWriter(fileDescriptor: 1)

    /// Creates a writer; its thread starts at the first ``write(_:)``.
    /// - Parameters:
    ///   - fileDescriptor: where lines go; it must stay open as long as lines are written.
    ///   - capacityLines: most lines held at once (default 4096).
    ///   - capacityBytes: most bytes held at once, in bytes (default 1 MiB).
    public init(fileDescriptor: Int32, capacityLines: Int = 4096, capacityBytes: Int = 1 << 20) {
        self.fileDescriptor = fileDescriptor
        self.capacityLines = capacityLines
        self.capacityBytes = capacityBytes
    }

    /// Lines dropped so far: the queue was full (the descriptor did not drain) or writing failed. Thread-safe.
    public var droppedLines: Int { dropped.load(ordering: .relaxed) }

    /// Lines dropped so far by ``standardError`` and ``standardOutput`` together (`liveactivity_log_lines_dropped_total`).
    public static var standardStreamsDroppedLines: Int { standardError.droppedLines + standardOutput.droppedLines }

    /// Queues `line` and a newline for the writer thread; returns at once, never waiting for the descriptor.
    ///
    /// A line with newlines inside is still one entry: written whole, or dropped whole.
    /// - Parameter line: the text, without its final newline.
    /// - Returns: false if the line was dropped because the queue is full.
    @discardableResult
    public func write(_ line: String) -> Bool {
        let size = line.utf8.count + 1
        condition.lock()
        guard queuedLines + writingLines < capacityLines, queued.count + writingBytes + size <= capacityBytes else {
            condition.unlock()
            dropped.add(1, ordering: .relaxed)
            return false
        }
        queued.append(contentsOf: line.utf8)
        queued.append(UInt8(ascii: "\n"))
        queuedLines += 1
        if !threadStarted {
            threadStarted = true
            let thread = Thread.named("log-writer-\(fileDescriptor)") { [self] in run() }
            thread.start()
        }
        // The parked writer is woken once, after the lock is let go: woken under it, it would block on the
        // lock at once, and letting go would cost this thread a second futex call to wake it again.
        let wake = parked
        parked = false
        condition.unlock()
        if wake { condition.broadcast() }
        return true
    }

    /// Waits until every queued line was written (or dropped), or until `timeout` has passed: best effort before
    /// the process exits. Thread-safe; must not be called by the writer's own thread.
    /// - Parameter timeout: the longest wait.
    /// - Returns: true if nothing is left to write; false if the descriptor is still stalled at the deadline.
    @discardableResult
    public func flush(timeout: Duration) -> Bool {
        let deadline = Date(timeIntervalSinceNow: timeout.timeInterval)
        condition.lock()
        defer { condition.unlock() }
        while !queued.isEmpty || writingBytes > 0 {
            if !condition.wait(until: deadline) { break }
        }
        return queued.isEmpty && writingBytes == 0
    }

    /// Flushes ``standardOutput`` then ``standardError``, both within `timeout` in all (see ``flush(timeout:)``).
    /// - Returns: true if both were fully written.
    @discardableResult
    public static func flushStandardStreams(timeout: Duration) -> Bool {
        let start = ContinuousClock.now
        let output = standardOutput.flush(timeout: timeout)
        let remaining = max(timeout - (ContinuousClock.now - start), .zero)
        return standardError.flush(timeout: remaining) && output
    }

    /// The writer thread: takes everything queued as one batch, writes it without the lock, repeats.
    private func run() {
        var batch: [UInt8] = []
        var previousStart: UInt64 = 0
        while true {
            condition.lock()
            while queued.isEmpty {
                parked = true
                condition.wait()
                parked = false
            }
            swap(&batch, &queued)
            writingBytes = batch.count
            writingLines = queuedLines
            queuedLines = 0
            condition.unlock()

            let start = DispatchTime.now().uptimeNanoseconds
            let unwritten = writeFully(fileDescriptor, batch)
            if unwritten > 0 {
                let lost = batch[(batch.count - unwritten)...].reduce(0) { $0 + ($1 == UInt8(ascii: "\n") ? 1 : 0) }
                dropped.add(lost, ordering: .relaxed)
            }
            batch.removeAll(keepingCapacity: true)

            condition.lock()
            writingBytes = 0
            writingLines = 0
            condition.broadcast()
            condition.unlock()
            if start &- previousStart < Self.gatherNanoseconds { usleep(UInt32(Self.gatherNanoseconds / 1000)) }
            previousStart = start
        }
    }
}

/// Writes all of `bytes` to `descriptor`, retrying after signals and partial writes and waiting with `poll` on a
/// non-blocking descriptor. Blocks while the descriptor does not drain (writer thread only).
/// - Returns: how many bytes at the end could not be written (0 unless `write(2)` failed: a closed descriptor).
private func writeFully(_ descriptor: Int32, _ bytes: [UInt8]) -> Int {
    bytes.withUnsafeBytes { buffer in
        guard let base = buffer.baseAddress else { return 0 }
        var offset = 0
        while offset < buffer.count {
            let written = write(descriptor, base + offset, buffer.count - offset)
            if written > 0 {
                offset += written
            } else if written < 0, errno == EINTR {
                continue
            } else if written < 0, errno == EAGAIN || errno == EWOULDBLOCK {
                var wanted = pollfd(fd: descriptor, events: Int16(POLLOUT), revents: 0)
                _ = poll(&wanted, 1, -1)
            } else {
                return buffer.count - offset
            }
        }
        return 0
    }
}
