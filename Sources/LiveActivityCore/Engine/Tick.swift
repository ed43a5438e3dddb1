import Foundation

/// The once-per-second countdown report for every running timer, built once for all clients.
public struct Tick: Sendable, Hashable {
    /// One running countdown.
    public struct Timer: Sendable, Hashable, Encodable {
        /// The activity whose timer this is.
        public var activityId: String
        /// Whole seconds left, rounded up, never negative (frozen while paused).
        public var remainingSeconds: Int
        /// Whether the countdown is paused.
        public var paused: Bool = false
        /// For a `pending` activity: whole seconds until it starts.
        public var startsInSeconds: Int?

        private enum CodingKeys: String, CodingKey { case activityId, remainingSeconds, paused, startsInSeconds }

        /// Encodes `paused` only when true and `startsInSeconds` only when pending.
        public func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: CodingKeys.self)
            try container.encode(activityId, forKey: .activityId)
            try container.encode(remainingSeconds, forKey: .remainingSeconds)
            if paused { try container.encode(true, forKey: .paused) }
            try container.encodeIfPresent(startsInSeconds, forKey: .startsInSeconds)
        }
    }

    /// The server's clock when the tick was built (UTC).
    public var serverTime: Date
    /// Every running countdown, in presentation order.
    public var timers: [Timer]

    /// Creates a tick.
    public init(serverTime: Date, timers: [Timer]) {
        self.serverTime = serverTime
        self.timers = timers
    }
}
