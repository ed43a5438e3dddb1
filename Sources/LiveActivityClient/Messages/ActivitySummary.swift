import Foundation
import LiveActivityCore

/// The parts of a protocol activity object (docs/PROTOCOL.md, "The activity object") a script shows.
public struct ActivitySummary: Sendable, Equatable {
    /// Server-assigned identifier.
    public var id: String
    /// `attributes.workout` (`jogging`, `aerobics`, `yoga`), or the `attributesType` for other kinds.
    public var title: String
    /// `activityState`: `active`, `stale`, `ended` or `dismissed`.
    public var state: String
    /// The countdown's end (UTC), when the activity has one: `content.state.workoutTimer.end`, or for other
    /// kinds the `end` of the state's first `{"start","end"}` range (by key order).
    public var timerEnd: Date?
    /// That range's start, when the countdown is a range: before it, the countdown shows its whole length.
    public var timerStart: Date?
    /// When the countdown froze (`content.state.pausedAt`, which the server sets on `pause` and removes on
    /// `resume`), or nil while it runs.
    public var pausedAt: Date?
    /// `content.relevanceScore`; higher sorts first.
    public var relevanceScore: Double
    /// `startDate` (UTC).
    public var startDate: Date?
    /// Why the server marked the activity (`kindProblem`: its kind no longer decodes it, after a reload), or nil.
    public var kindProblem: String?

    /// Reads an activity object.
    /// - Returns: nil when `value` has no string `id`.
    public init?(_ value: JSONValue) {
        guard let id = value.member("id")?.stringValue else { return nil }
        self.id = id
        title = value.member("attributes")?.member("workout")?.stringValue
            ?? value.member("attributesType")?.stringValue ?? "?"
        state = value.member("activityState")?.stringValue ?? "?"
        let content = value.member("content")
        (timerStart, timerEnd) = Self.countdown(in: content?.member("state"))
        pausedAt = content?.member("state")?.member("pausedAt")?.stringValue.flatMap(ISODate.parse)
        relevanceScore = content?.member("relevanceScore")?.numberValue ?? 0
        startDate = value.member("startDate")?.stringValue.flatMap(ISODate.parse)
        kindProblem = value.member("kindProblem")?.stringValue
    }

    /// The end of the countdown in a content state: `workoutTimer`'s, else the first range's (keys sorted), else
    /// the state's one `Date` field (an ETA: a declared kind's `countdown` may be a plain `Date`, which the
    /// server counts down to as it does to a range's end). Several `Date` fields and no range: nil (the
    /// kind's `kind.json` picks one; `watch` then takes the end from the server's ticks, ``counting(to:)``).
    static func countdown(in state: JSONValue?) -> (start: Date?, end: Date?) {
        guard case .object(let members)? = state else { return (nil, nil) }
        let bound = { (key: String, side: String) in members[key]?.member(side)?.stringValue.flatMap(ISODate.parse) }
        if let end = bound("workoutTimer", "end") { return (bound("workoutTimer", "start"), end) }
        for key in members.keys.sorted() {
            if let start = bound(key, "start"), let end = bound(key, "end") { return (start, end) }
        }
        let dates = members.filter { $0.key != "pausedAt" }.values.compactMap { $0.stringValue.flatMap(ISODate.parse) }
        return (nil, dates.count == 1 ? dates[0] : nil)
    }

    /// This summary with the countdown's end a `tick` reports (`remainingSeconds` at its `serverTime`), when
    /// the state alone did not give one (a kind whose `countdown` is one of several `Date` fields).
    /// - Parameters:
    ///   - end: the tick's `serverTime` plus its `remainingSeconds`.
    ///   - tickedAt: the tick's `serverTime`: while paused, the tick's frozen count holds from then on.
    public func counting(to end: Date, tickedAt: Date) -> ActivitySummary {
        guard timerEnd == nil else { return self }
        var summary = self
        summary.timerEnd = end
        if summary.pausedAt != nil { summary.pausedAt = tickedAt }
        return summary
    }

    /// Whether the activity is `active` or `stale`, so its countdown runs.
    public var isRunning: Bool { state == "active" || state == "stale" }

    /// Seconds left on the countdown at `now` (server time), rounded up and never negative, as the
    /// protocol's `tick` counts them (frozen at ``pausedAt`` while paused); nil when it has no countdown or is
    /// no longer running.
    public func remainingSeconds(at now: Date) -> Int? {
        guard isRunning, let timerEnd else { return nil }
        return TimerRange.remainingSeconds(from: timerStart, until: timerEnd, pausedAt: pausedAt, at: now)
    }

    /// Presentation order, as the server's snapshot: relevance (highest first), then start date (newest first).
    public static func presentationOrder(_ a: ActivitySummary, _ b: ActivitySummary) -> Bool {
        if a.relevanceScore != b.relevanceScore { return a.relevanceScore > b.relevanceScore }
        return (a.startDate ?? .distantPast) > (b.startDate ?? .distantPast)
    }
}
