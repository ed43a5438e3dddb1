import Foundation
import LiveActivityCore

/// What a presentation shows of one activity at one instant: read once, then turned into markup.
struct ActivityFacts {
    /// The activity's id.
    var id: String
    /// The kind's metadata (its folder's `kind.json`, or defaults for a kind the server does not know).
    var kind: KindMetadata
    /// The values the kind's templates see (``RenderContext``).
    var context: JSONValue
    /// The icon's name: the enum value's icon from `kind.json` (`jogging`…), else the kind's fallback icon.
    var workout: String
    /// The name shown, e.g. "Yoga" or an emoji activity's name (not escaped): the kind's `title` template.
    var name: String
    /// The name with its kind where the name is an enum label ("Yoga workout"), else the name ("Morning run").
    var heading: String
    /// The state to show at `now`: as stored, except that a running activity is `stale` exactly when its stale
    /// date is not after `now`.
    var state: ActivityState
    /// The state's text fields (not the countdown), joined: an emoji activity's emoji.
    var stateText: String
    /// The published thumbnail of the kind's image field, if any.
    var thumbnail: ActivityThumbnail?
    /// Whether the countdown is frozen by a pause.
    var paused: Bool
    /// "Ended", "Dismissed", "Scheduled", "Paused", "Stale" or "".
    var badge: String
    /// Seconds left, `nil` without a countdown.
    var seconds: Int?
    /// The countdown's bounds and freeze instant, in epoch milliseconds, for the live script.
    var startMs: Int64?
    var endMs: Int64?
    var freezeMs: Int64?
    /// The attributes and state merged (state wins), as sent: the other date fields' bounds.
    var fields: [String: JSONValue]
    /// The activity's `startDate` (a `Date` field counts from it), and its `endDate` once ended, epoch ms.
    var startDateMs: Int64?
    var endedMs: Int64?

    /// The display name of a workout key: "yoga" → "Yoga".
    static func name(ofWorkout workout: String) -> String {
        guard let first = workout.first else { return "Workout" }
        return first.uppercased() + workout.dropFirst()
    }

    /// Reads what `activity` shows at `now`.
    /// - Parameter kind: its kind's metadata; `nil` when the server does not know the kind (defaults then).
    init(_ activity: Activity, now: Date, kind: KindMetadata?) {
        id = activity.id
        let kind = kind ?? KindMetadata(name: activity.attributesType)
        self.kind = kind
        context = RenderContext.build(activity, kind: kind, now: now)
        workout = context["activity"]?["icon"]?.stringValue ?? kind.fallbackIcon
        name = context["activity"]?["title"]?.stringValue ?? kind.label
        // "Yoga workout"; but "Ride", not "Ride ride", when the title already says what the kind is.
        heading = kind.enums.isEmpty || name.lowercased().contains(kind.label.lowercased()) ? name : "\(name) \(kind.label.lowercased())"
        let skipped: Set<String> = [kind.countdown ?? "", "pausedAt"]
        stateText = (activity.content.state.objectValue ?? [:]).sorted { $0.key < $1.key }
            .compactMap { key, value in skipped.contains(key) ? nil : value.stringValue }.joined(separator: " ")
        thumbnail = activity.thumbnail
        // A running activity is stale exactly when its stale date has passed (an update with a later stale date
        // makes it active again), so the state at `now` follows from the content, even for a past or future `now`.
        var state = activity.activityState
        if state.isRunning {
            state = activity.content.staleDate.map { $0 <= now } == true ? .stale : .active
        }
        self.state = state
        paused = activity.timer?.isPaused ?? false
        switch state {
        case .ended: badge = "Ended"
        case .dismissed: badge = "Dismissed"
        case .pending: badge = "Scheduled"
        case _ where paused: badge = "Paused"
        case .stale: badge = "Stale"
        default: badge = ""
        }
        let attributes = activity.attributes.objectValue ?? [:]
        fields = attributes.merging(activity.content.state.objectValue ?? [:]) { _, fromState in fromState }
        startDateMs = Self.milliseconds(activity.startDate)
        endedMs = state == .ended || state == .dismissed ? activity.endDate.map(Self.milliseconds) : nil
        seconds = Countdown.remainingSeconds(activity, at: now)
        if let timer = activity.timer {
            startMs = Self.milliseconds(timer.start)
            endMs = Self.milliseconds(timer.end)
            var freeze = timer.pausedAt
            if state == .ended || state == .dismissed, let ended = activity.endDate { freeze = min(freeze ?? ended, ended) }
            freezeMs = freeze.map(Self.milliseconds)
        }
    }

    /// The countdown text: m:ss or h:mm:ss.
    var countdown: String { Countdown.format(seconds) }

    /// A sentence for assistive technology, e.g. "Yoga workout, 0:50 left, paused".
    var summary: String {
        var parts = [heading]
        if seconds != nil { parts.append(state == .pending ? "\(countdown) planned" : "\(countdown) left") }
        if seconds == nil, !stateText.isEmpty { parts.append(stateText) }
        if !badge.isEmpty { parts.append(badge.lowercased()) }
        return parts.joined(separator: ", ")
    }

    /// Changes whenever what the page shows changes, other than the countdown ticking (for the live script):
    /// also when a date comes near (`display.F.near`: a generated layout shows it as a countdown from then on).
    var signature: String {
        [id, state.rawValue, badge, name, stateText, thumbnail?.key ?? "", startMs.map(String.init) ?? "", endMs.map(String.init) ?? "",
         freezeMs.map(String.init) ?? "", nearFields].joined(separator: "|")
    }

    /// The date fields near at the instant shown (``DisplayValues``), sorted, comma-separated.
    var nearFields: String {
        (context["display"]?.objectValue ?? [:]).filter { $0.value["near"] == .bool(true) }.keys.sorted().joined(separator: ",")
    }

    private static func milliseconds(_ date: Date) -> Int64 {
        Int64((date.timeIntervalSince1970 * 1000).rounded())
    }
}
