import Foundation

/// The monotonic clock (`CLOCK_MONOTONIC`) in nanoseconds: send timestamps and receive times share it,
/// since the publisher and every client live in this one process.
enum MonotonicClock {
    /// Nanoseconds since an arbitrary fixed point (boot).
    static func now() -> UInt64 {
        var spec = timespec()
        clock_gettime(CLOCK_MONOTONIC, &spec)
        return UInt64(spec.tv_sec) * 1_000_000_000 + UInt64(spec.tv_nsec)
    }
}
