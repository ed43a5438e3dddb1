import Foundation

/// Tells a live connection from one that died without a close, by the server's `heartbeat` messages
/// (docs/PROTOCOL.md, `heartbeat`): the server sends one every `intervalSeconds` whatever runs, so once the
/// interval is known, a silence of ``deadAfterIntervals`` intervals means nothing is getting through.
///
/// Times are wall-clock dates on purpose: after the machine slept, the silence includes the sleep, so the
/// first check after waking finds the connection dead at once (a TCP connection rarely survives that).
/// A value type with no I/O; the caller feeds it every message and asks it at any time.
public struct ConnectionLiveness: Sendable, Equatable {
    /// Silent intervals after which the connection counts as dead: a heartbeat late by more than one and
    /// a half intervals (so a dead connection is noticed within three).
    public static let deadAfterIntervals = 2.5

    /// The server's heartbeat interval, in seconds: `heartbeatSeconds` of the connection's first message
    /// (`snapshot`, `caughtUp` or `hello`), or `intervalSeconds` of the last `heartbeat`; nil until one says
    /// it (until then silence proves nothing: a server without heartbeats would look dead).
    public private(set) var intervalSeconds: Double?
    /// When the last message (any message) arrived, or the connection opened.
    public private(set) var lastHeard: Date

    /// Starts watching a connection that has just opened.
    /// - Parameters:
    ///   - now: when it opened.
    ///   - intervalSeconds: the interval learned on an earlier connection to the same server, if any.
    public init(openedAt now: Date, intervalSeconds: Double? = nil) {
        lastHeard = now
        self.intervalSeconds = intervalSeconds
    }

    /// The messages that say the heartbeat interval: `heartbeat` (`intervalSeconds`) and those that start a
    /// connection's conversation (`heartbeatSeconds`).
    public static let intervalMessages: Set<String> = ["heartbeat", "snapshot", "caughtUp", "hello"]

    /// Records a message: anything proves the connection alive; a `heartbeat`, `snapshot`, `caughtUp` or
    /// `hello` also gives the interval.
    public mutating func heard(_ message: IncomingMessage) {
        lastHeard = max(lastHeard, message.receivedAt)
        guard let type = message.type, Self.intervalMessages.contains(type) else { return }
        let key = type == "heartbeat" ? "intervalSeconds" : "heartbeatSeconds"
        if let seconds = message.member(key)?.numberValue, seconds > 0 { intervalSeconds = seconds }
    }

    /// How long the connection may stay silent before it counts as dead, in seconds; nil while the interval
    /// is unknown.
    public var deadAfterSeconds: Double? { intervalSeconds.map { $0 * Self.deadAfterIntervals } }

    /// The silence so far, in seconds, when it is long enough to call the connection dead; else nil.
    /// - Parameter now: the current wall-clock time.
    public func deadSilence(at now: Date) -> TimeInterval? {
        guard let limit = deadAfterSeconds else { return nil }
        let silence = now.timeIntervalSince(lastHeard)
        return silence > limit ? silence : nil
    }
}
