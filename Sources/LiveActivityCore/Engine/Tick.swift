import Foundation

/// The once-per-second countdown report for every running timer, built once for all clients.
public struct Tick: Sendable, Hashable {
    /// One running countdown.
    public struct Timer: Sendable, Hashable, Encodable {
        /// The activity whose timer this is.
        public var activityId: String
        /// Whole seconds left, rounded up, never negative.
        public var remainingSeconds: Int
    }

    /// The server's clock when the tick was built (UTC).
    public var serverTime: Date
    /// Every running countdown, in presentation order.
    public var timers: [Timer]
}
