/// Every delivery's latency, kept whole so percentiles are exact.
///
/// Stored in microseconds as `UInt32` (4 bytes a sample; 1 M deliveries = 4 MB; up to ~71 minutes).
struct LatencySamples {
    private var micros: [UInt32] = []

    /// Records one latency, in nanoseconds.
    mutating func record(nanoseconds: UInt64) {
        micros.append(UInt32(clamping: nanoseconds / 1000))
    }

    /// Reserves room for `count` samples ahead of a run.
    mutating func reserve(_ count: Int) {
        micros.reserveCapacity(min(count, 50_000_000))
    }

    /// Percentiles and mean, in milliseconds.
    struct Summary {
        var p50 = 0.0, p90 = 0.0, p99 = 0.0, max = 0.0, mean = 0.0
    }

    /// Sorts the samples (nearest-rank percentiles); all zero when there are none.
    func summary() -> Summary {
        guard !micros.isEmpty else { return Summary() }
        let sorted = micros.sorted()
        func rank(_ fraction: Double) -> Double {
            let index = Swift.min(sorted.count - 1, Swift.max(0, Int((fraction * Double(sorted.count)).rounded(.up)) - 1))
            return Double(sorted[index]) / 1000
        }
        let total = sorted.reduce(0.0) { $0 + Double($1) }
        return Summary(p50: rank(0.50), p90: rank(0.90), p99: rank(0.99), max: Double(sorted[sorted.count - 1]) / 1000,
                       mean: total / Double(sorted.count) / 1000)
    }
}
