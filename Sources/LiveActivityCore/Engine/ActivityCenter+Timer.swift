import Foundation

/// Pause, resume and extend: changes to a countdown, as `Text(timerInterval:pauseTime:)` shows them.
extension ActivityCenter {
    /// Freezes the countdown at `now` (`pausedAt`).
    /// - Throws: `invalid_state` when it is already paused, finished, pending or has no countdown.
    mutating func pause(_ id: String, now: Date) throws(ProtocolError) -> Outcome {
        var (activity, timer) = try countdown(id, running: true)
        if let pausedAt = timer.pausedAt {
            throw ProtocolError(.invalidState, field: "activityId", message: "activityId: activity \(id) is already paused (since \(ISODate.format(pausedAt)))")
        }
        guard !timer.hasFinished(at: now) else {
            throw ProtocolError(.invalidState, field: "activityId", message: "activityId: activity \(id)'s countdown has already finished")
        }
        timer.pausedAt = now
        try set(timer, on: &activity)
        activities[id] = activity
        return Outcome(activityId: id, events: [event(.paused, activity)])
    }

    /// Runs a paused countdown again, moving its end (and a stale date tied to it) by the paused time that
    /// would have counted: the time paused within the range. A range that has not begun shows its whole length
    /// (`Text(timerInterval:)`), so the time paused before its start counts for nothing: paused and resumed
    /// before it, nothing moves; resumed after it, the end moves by the time since the start.
    /// - Throws: `invalid_state` when it is not paused.
    mutating func resume(_ id: String, now: Date) throws(ProtocolError) -> Outcome {
        var (activity, timer) = try countdown(id, running: true)
        guard let pausedAt = timer.pausedAt else {
            throw ProtocolError(.invalidState, field: "activityId", message: "activityId: activity \(id) is not paused")
        }
        let paused = max(0, now.timeIntervalSince(max(pausedAt, timer.start)))
        let oldEnd = timer.end
        timer.end = timer.end.addingTimeInterval(paused)
        timer.pausedAt = nil
        moveStaleDate(of: &activity, tiedTo: oldEnd, to: timer.end, now: now)
        try set(timer, on: &activity)
        activities[id] = activity
        return Outcome(activityId: id, events: [event(.resumed, activity)])
    }

    /// Moves the countdown's end by `seconds` (negative shortens), never below now (or the pause instant
    /// while paused) nor before its start; a stale date tied to the end moves with it. Lengthening is held to
    /// ``Lifetime/maximumActive`` (8 hours) left to count down, as `durationSeconds` is; shortening always works
    /// (a countdown a content state set further out included).
    /// - Throws: `invalid_state` when the activity has no countdown; `activity_ended` once ended;
    ///   `invalid_field` (`seconds`) when lengthening would leave more than 8 hours to count down.
    mutating func extend(_ id: String, by seconds: TimeInterval, now: Date) throws(ProtocolError) -> Outcome {
        var (activity, timer) = try countdown(id, running: false)
        let floor = max(timer.start, activity.activityState == .pending ? timer.start : (timer.pausedAt ?? now))
        let oldEnd = timer.end
        let newEnd = max(timer.end.addingTimeInterval(seconds), floor)
        let left = newEnd.timeIntervalSince(floor)
        guard seconds <= 0 || left <= Lifetime.maximumActive else {
            throw .invalid("seconds", "would leave \(Int(left.rounded())) seconds on the countdown; at most \(Int(Lifetime.maximumActive)) (8 hours, as durationSeconds), so at most \(Int(max(0, Lifetime.maximumActive - oldEnd.timeIntervalSince(floor)).rounded(.down))) more now")
        }
        timer.end = newEnd
        if timer.end > (timer.pausedAt ?? now) { activity.timerFinished = false }
        moveStaleDate(of: &activity, tiedTo: oldEnd, to: timer.end, now: now)
        try set(timer, on: &activity)
        activities[id] = activity
        return Outcome(activityId: id, events: [event(.extended, activity)])
    }

    /// The live activity `id` and its countdown.
    private func countdown(_ id: String, running: Bool) throws(ProtocolError) -> (Activity, TimerRange) {
        let activity = try live(id)
        if let problem = activity.kindProblem {
            // Marked by a declaration change: kept as it is until an update gives it a state that decodes, or its
            // kind reads it again. Its attributes are fixed for its life (ActivityAttributes), so an update cannot
            // mend them.
            let remedy = problem.hasPrefix("attributes") ? "its attributes cannot change: end it, or change the declaration back"
                : problem.hasPrefix("content") ? "send an update with a state that does"
                : "load its kind again"
            throw ProtocolError(.invalidState, field: "activityId",
                                message: "activityId: activity \(id) no longer matches its kind (\(problem)); \(remedy)")
        }
        guard let timer = activity.timer else {
            throw ProtocolError(.invalidState, field: "activityId", message: "activityId: activity \(id) has no countdown")
        }
        if running, activity.activityState == .pending {
            throw ProtocolError(.invalidState, field: "activityId", message: "activityId: activity \(id) has not started yet (pending until \(ISODate.format(activity.startDate)))")
        }
        return (activity, timer)
    }

    private func set(_ timer: TimerRange, on activity: inout Activity) throws(ProtocolError) {
        activity.content.state = try kind(of: activity).state(activity.content.state, with: timer)
        activity.timer = timer
    }

    /// A stale date equal to the countdown's old end follows it; a stale activity whose stale date is now
    /// in the future is active again.
    private func moveStaleDate(of activity: inout Activity, tiedTo oldEnd: Date, to newEnd: Date, now: Date) {
        guard let stale = activity.content.staleDate, abs(stale.timeIntervalSince(oldEnd)) < 0.001 else { return }
        activity.content.staleDate = newEnd
        if activity.activityState == .stale, newEnd > now { activity.activityState = .active }
    }
}
