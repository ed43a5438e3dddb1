import Foundation
import LiveActivityCore

/// Budget emulation for the push inspector (`--emulate-budget`): which updates a device would throttle.
/// Off by default; it only marks inspector records, never changes what the dashboard shows.
public struct BudgetEmulation: Sendable, Equatable {
    /// Whether to mark throttled updates at all. Default off.
    public var enabled = false
    /// Priority-10 pushes a device takes per hour before throttling (Apple does not document the number;
    /// `--budget-per-hour`). Default 30.
    public var priorityTenPerHour = 30
    /// Shortest interval between two rendered updates of one activity, in seconds (`--render-floor-seconds`;
    /// Home Assistant observed about one update every 15 s). Default 15.
    public var renderFloorSeconds: TimeInterval = 15

    /// Creates settings (emulation off).
    public init(enabled: Bool = false, priorityTenPerHour: Int = 30, renderFloorSeconds: TimeInterval = 15) {
        self.enabled = enabled
        self.priorityTenPerHour = priorityTenPerHour
        self.renderFloorSeconds = renderFloorSeconds
    }
}

/// One inspected push or client message: what came in, what iOS (or the server) made of it, and why.
struct Inspection: Encodable {
    /// One changed key of the content: `before` absent = added, `after` absent = removed.
    struct Change: Encodable, Equatable {
        var path: String
        var before: JSONValue?
        var after: JSONValue?
    }

    /// One activity event the record caused.
    struct EventRef: Encodable {
        var event: String
        var sequence: UInt64
        var activityId: String
    }

    /// Increasing record number (resume with `inspect` `since`).
    var id: UInt64
    /// When it came in (server clock).
    var at: Date
    /// `push` (an APNs-shaped payload) or `message` (a native protocol message).
    var source: String
    /// `websocket`, `http` (HTTP/1.1) or `http2` (the APNs port).
    var transport: String
    /// The message `type` (`push`, `start`, `update`, …; `invalid` when it could not be read).
    var type: String
    /// For a push: `aps.event` (`start`, `update`, `end`) when readable.
    var event: String?
    var requestId: JSONValue?
    /// For a push: the token it was addressed to, the `apns-id`, the `apns-priority` (absent = 10).
    var pushToken: String?
    var apnsId: String?
    var priority: Int?
    /// The activity addressed, started or changed.
    var activityId: String?
    /// For a push: the HTTP status APNs would answer.
    var status: Int?
    /// `applied`, `ignored`, `dropped` (a push the device would not show), `refused` (APNs or the server
    /// said no), or `answered` (a request that changes nothing: list, history, share links…).
    var verdict: String
    /// A stable name for why (``PushCause``, an APNs reason, or an error code).
    var cause: String?
    /// The explanation, naming the key at fault.
    var detail: String?
    /// What to beware of although it applied.
    var warning: String?
    /// The payload or message as received (tokens of `hello` hidden; cut when over 16 KB).
    var raw: JSONValue?
    /// The activity's content after it (`state`, `staleDate`, `relevanceScore`), when it names an activity.
    var decoded: JSONValue?
    /// Every date in the payload, three ways (``DateLens``).
    var dates: [DateLens.Entry]
    /// What changed in the content against the activity's previous content (applied changes only).
    var diff: [Change]?
    /// An applied update that changed nothing (same content, no alert).
    var noOp: Bool
    /// The events it caused.
    var events: [EventRef]
    /// Budget emulation: why a device would throttle it (absent when emulation is off or it would not).
    var throttled: [String]?
    /// For a broadcast: the channel it went to.
    var channelId: String? = nil
    /// For a broadcast: the activities subscribed to the channel that it reached, in order.
    var activityIds: [String]? = nil
}

/// The push inspector's memory: the last ``capacity`` records, the connections watching, when each event
/// happened, each activity's last content, and the budget emulation's clock. Service thread only.
final class Inspector {
    /// Most records kept.
    static let capacity = 500
    /// Most event times kept (for timelines of past activities).
    static let eventTimeCapacity = 50_000

    /// The kept records, oldest first (at most ``capacity``).
    var records: ArraySlice<Inspection> { stored.suffix(Self.capacity) }
    /// The records, with up to ``capacity`` older ones not yet dropped: dropping them in one go once they are
    /// as many as the kept ones moves each record once, where dropping the oldest on every append moved all
    /// ``capacity`` records each time (a third of the inspector's cost per update under load).
    private var stored: [Inspection] = []
    private(set) var nextID: UInt64 = 1
    /// Sessions that sent `inspect`, by id.
    var subscribers: Set<UInt64> = []
    /// When each event (by sequence) happened, as seen by a request that caused it.
    private(set) var eventTimes: [UInt64: Date] = [:]
    /// Each activity's content after its last change seen here.
    var contents: [String: JSONValue] = [:]
    /// Priority-10 pushes delivered in the last hour (budget emulation).
    private var priorityTen: [Date] = []
    /// When each activity was last updated (render floor emulation).
    private var lastUpdate: [String: Date] = [:]

    /// Adds a record, giving it its id; the oldest goes once ``capacity`` is reached.
    @discardableResult
    func append(_ record: Inspection) -> Inspection {
        var record = record
        record.id = nextID
        nextID += 1
        stored.append(record)
        if stored.count >= 2 * Self.capacity { stored.removeFirst(stored.count - Self.capacity) }
        for event in record.events { eventTimes[event.sequence] = record.at }
        if eventTimes.count > Self.eventTimeCapacity, let cut = eventTimes.keys.sorted().dropLast(Self.eventTimeCapacity / 2).last {
            eventTimes = eventTimes.filter { $0.key > cut }
        }
        return record
    }

    /// The records after `since` (all kept when `nil`), oldest first.
    func records(after since: UInt64?) -> ArraySlice<Inspection> {
        guard let since else { return records }
        return records.drop { $0.id <= since }
    }

    /// When the request that caused event `sequence` came in, if it was seen here.
    func time(ofEvent sequence: UInt64) -> Date? { eventTimes[sequence] }

    /// Budget emulation: why a device would throttle an applied update of `activityId` at `now`.
    /// - Parameter priorityTen: whether it is a push at priority 10 (APNs's default).
    func throttling(_ settings: BudgetEmulation, activityId: String, priorityTen isPriorityTen: Bool, now: Date) -> [String]? {
        guard settings.enabled else { return nil }
        var reasons: [String] = []
        if isPriorityTen {
            priorityTen.removeAll { now.timeIntervalSince($0) >= 3600 }
            priorityTen.append(now)
            if priorityTen.count > settings.priorityTenPerHour {
                reasons.append("priority-10 budget exceeded: \(priorityTen.count) priority-10 pushes in the last hour, "
                               + "budget \(settings.priorityTenPerHour) (send apns-priority 5 for updates that can wait)")
            }
        }
        if let last = lastUpdate[activityId], now.timeIntervalSince(last) < settings.renderFloorSeconds {
            reasons.append(String(format: "%.1f s after the previous update; a device renders at most one update every %g s",
                                  now.timeIntervalSince(last), settings.renderFloorSeconds))
        }
        lastUpdate[activityId] = now
        if lastUpdate.count > 4096 { lastUpdate = lastUpdate.filter { now.timeIntervalSince($0.value) < 3600 } }
        return reasons.isEmpty ? nil : reasons
    }

    // MARK: Diffs

    /// The changed leaves between two JSON values, by key path (`state.workoutTimer.end`).
    static func diff(_ before: JSONValue?, _ after: JSONValue?, path: String = "") -> [Inspection.Change] {
        if before == after { return [] }
        switch (before, after) {
        case (.object(let a)?, .object(let b)?):
            return Set(a.keys).union(b.keys).sorted().flatMap { key in
                diff(a[key], b[key], path: path.isEmpty ? key : "\(path).\(key)")
            }
        default:
            return [Inspection.Change(path: path.isEmpty ? "(content)" : path, before: before, after: after)]
        }
    }
}
