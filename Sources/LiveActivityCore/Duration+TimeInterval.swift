import Foundation

extension Duration {
    /// The duration in seconds, with the fraction (for `Date`, `DispatchTime` and C timeouts).
    public var timeInterval: TimeInterval {
        let (seconds, attoseconds) = components
        return TimeInterval(seconds) + TimeInterval(attoseconds) / 1e18
    }
}
