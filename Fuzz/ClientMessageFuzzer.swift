// libFuzzer entry for the message decoder and the activity lifecycle (issue 4).
//
// Compiled together with every file of Sources/LiveActivityCore (and Tests/KindFixtures, the built-in kinds
// read from Kinds/) into one module (see Fuzz/run.sh), so it can reach internal API. Each input is split at '\n' into up to 12 client messages. Each one is parsed
// with `ClientMessage.parse` (arbitrary bytes: must never crash) and, when valid, applied to one
// `ActivityCenter` driven by a fixed clock, as the server's service thread would: apply (or applyPush),
// then advance the clock by a step chosen from the input, `advance(to:)`, `tick(at:)`, the wire encoding
// of every event and tick, and a `StoredActivity` round trip of every activity and event.
//
// Any broken invariant calls `fatalError` with a reason (libFuzzer reports a deadly signal and writes the
// input as crash-<sha1>). Invariants:
// - event sequences are consecutive: each event is the previous sequence + 1, and the center's `sequence`
//   ends at the last one; the sequence never goes down;
// - after `advance(to: now)` no deadline is overdue: no pending activity with a past start, no running
//   activity past its 8 h cap or stale date, no finished countdown without `timerFinished`, no ended
//   activity past its dismissal date; `nextDeadline` is in the future;
// - states are consistent: live ⇔ no endDate/endReason; ended ⇒ endDate, endReason and a dismissal date
//   at most 4 h after the end; dismissed activities are gone; at most `maximumLive` live ones;
// - ticks: `remainingSeconds` and `startsInSeconds` never negative, every timer names a known activity;
// - every server message encodes to JSON that parses back (never the encoder's fallback error);
// - StoredActivity: encode → decode → encode gives the same text for every event (and so every activity
//   that changed).
// With FUZZ_STRICT_ROLLBACK=1 in the environment it also checks the documented contract of
// `ActivityCenter.apply`: "nothing has changed when it throws".
import Foundation

private let epoch = Date(timeIntervalSince1970: 1_795_971_600)  // 2026-11-29T17:00:00Z
private let pushToStart = String(repeating: "f", count: 64)
private let strictRollback = getenv("FUZZ_STRICT_ROLLBACK") != nil
/// Clock steps (seconds), picked by the byte after each message's newline.
private let steps: [TimeInterval] = [0, 0.001, 0.5, 1, 59.999, 60, 600, 3600, 4 * 3600, 8 * 3600 + 1, 86_400]

private func check(_ condition: @autoclosure () -> Bool, _ message: @autoclosure () -> String) {
    if !condition() { fatalError("invariant: \(message())") }
}

private struct Harness {
    var center = ActivityCenter(maximumLive: 4, kinds: .builtIn)
    var now = epoch
    var ids = 0
    var lastSequence: UInt64 = 0

    init() {
        // Known activities the fuzzer can name: "A" (a running 10-minute countdown) and "P" (pending).
        run(#"{"type":"start","attributes":{"workout":"yoga"},"durationSeconds":600}"#)
        run(#"{"type":"start","attributes":{"workout":1},"durationSeconds":60,"startDate":"2026-11-29T17:05:00Z"}"#)
    }

    /// Ids handed out in order: "A", "P", "B", "C", "D", then "X5", "X6", …
    static func name(_ n: Int) -> String {
        let names = ["A", "P", "B", "C", "D"]
        return n < names.count ? names[n] : "X\(n)"
    }

    mutating func run(_ text: String) { step(Array(text.utf8)) }

    mutating func step(_ bytes: [UInt8]) {
        let message = ClientMessage.parse(bytes, kinds: .builtIn)
        _ = ServerMessage.error(requestId: message.requestId, ProtocolError(.invalidJSON, field: nil, message: "x")).encoded()
        guard case .success(let command) = message.command else {
            if case .failure(let error) = message.command { encodes(.error(requestId: message.requestId, error)) }
            return
        }
        let before = center
        var events: [ActivityEvent] = []
        switch command {
        case .push(let token, let payload):
            let target = token == "A" || token == "P" ? center.activities[token]?.pushToken ?? token : token
            do {
                let push = try APNsPush.parse(payload)
                var next = center
                var counter = ids
                let outcome = try next.applyPush(push, pushToken: target == "start" ? pushToStart : target,
                                                 pushToStartToken: pushToStart, now: now,
                                                 newID: { defer { counter += 1 }; return Harness.name(counter) })
                ids = counter
                if outcome.verdict != .applied { check(outcome.events.isEmpty, "a push not applied has events") }
                encodes(.pushResult(requestId: nil, result: PushResult(outcome, apnsId: "id")))
                if outcome.verdict == .applied, let id = outcome.activityId, next.activities[id] == nil {
                    check(outcome.events.contains { $0.kind == .dismissed }, "applied push to a vanished activity")
                }
                center = next
                events = outcome.events
            } catch {
                encodes(.pushResult(requestId: nil, result: PushResult(error, apnsId: "id")))
            }
        default:
            do {
                var counter = ids
                let outcome = try center.apply(command, now: now, newID: { defer { counter += 1 }; return Harness.name(counter) })
                ids = counter
                events = outcome.events
                if let id = outcome.activityId, case .start = command {
                    check(events.first?.activity.id == id, "start's first event is not the new activity")
                }
            } catch {
                if strictRollback {
                    check(center.activities == before.activities && center.sequence == before.sequence,
                          "apply threw \(error.code.rawValue) but changed the center")
                }
                center = before  // as the server does: it applies to a copy and drops it on error
                encodes(.error(requestId: nil, error))
            }
        }
        record(events)
        verify()
    }

    mutating func advance(by seconds: TimeInterval) {
        now = now.addingTimeInterval(seconds)
        record(center.advance(to: now))
        verify()
    }

    mutating func record(_ events: [ActivityEvent]) {
        for event in events {
            check(event.sequence == lastSequence + 1, "event \(event.kind) has sequence \(event.sequence) after \(lastSequence)")
            lastSequence = event.sequence
            switch event.kind {
            case .dismissed:
                check(event.activity.activityState == .dismissed, "dismissed event with state \(event.activity.activityState)")
                check(center.activities[event.activity.id] == nil, "dismissed activity still listed")
            case .ended:
                check(event.activity.activityState == .ended, "ended event with state \(event.activity.activityState)")
            case .scheduled:
                check(event.activity.activityState == .pending, "scheduled event not pending")
            case .started, .stale, .timerFinished, .updated, .paused, .resumed, .extended:
                check(event.activity.activityState != .dismissed, "\(event.kind) event of a dismissed activity")
            }
            encodes(.activity(event, serverTime: now))
            let stored = StoredActivity.encode(event)
            do {
                let again = StoredActivity.encode(try StoredActivity.decodeEvent(stored, kinds: .builtIn))
                check(again == stored, "StoredActivity event round trip differs:\n\(stored)\n\(again)")
            } catch {
                fatalError("invariant: stored event does not decode: \(error)\n\(stored)")
            }
        }
        check(center.sequence == lastSequence, "center.sequence \(center.sequence) != last event \(lastSequence)")
    }

    func verify() {
        let live = center.activities.values.filter { $0.activityState.isLive }.count
        check(live <= center.maximumLive, "\(live) live activities, limit \(center.maximumLive)")
        for (id, a) in center.activities {
            check(id == a.id, "activity stored under another id")
            switch a.activityState {
            case .dismissed:
                fatalError("invariant: dismissed activity \(id) still listed")
            case .pending:
                check(a.startDate > now, "pending activity \(id) past its start")
                check(a.endDate == nil && a.endReason == nil && a.dismissalDate == nil, "pending activity with end data")
            case .active, .stale:
                check(a.endDate == nil && a.endReason == nil && a.dismissalDate == nil, "running activity with end data")
                check(a.startDate.addingTimeInterval(Lifetime.maximumActive) > now, "running activity \(id) past 8 h")
                if a.activityState == .active, let stale = a.content.staleDate { check(stale > now, "active activity past its stale date") }
                if let timer = a.timer, !timer.isPaused, timer.end <= now { check(a.timerFinished, "finished countdown not reported") }
            case .ended:
                guard let end = a.endDate, let dismissal = a.dismissalDate else { fatalError("invariant: ended \(id) without dates") }
                check(a.endReason != nil, "ended without a reason")
                check(dismissal > now, "ended activity \(id) past its dismissal date")
                check(dismissal <= end.addingTimeInterval(Lifetime.endedVisibility + 0.001), "dismissal more than 4 h after end")
            }
            if let timer = a.timer {
                check(timer.end >= timer.start, "timer ends before it starts")
                check(timer.remainingSeconds(at: now) >= 0, "negative remaining")
            }
        }
        if let deadline = center.nextDeadline { check(deadline > now, "deadline \(deadline) overdue at \(now)") }
        if let tick = center.tick(at: now) {
            for timer in tick.timers {
                check(timer.remainingSeconds >= 0, "tick with negative remainingSeconds \(timer.remainingSeconds)")
                check((timer.startsInSeconds ?? 0) >= 0, "tick with negative startsInSeconds")
                check(center.activities[timer.activityId] != nil, "tick for an unknown activity")
            }
            encodes(.tick(tick))
        }
        encodes(.snapshot(requestId: nil, serverTime: now, sequence: center.sequence, activities: center.ordered))
    }

    func encodes(_ message: ServerMessage) {
        let bytes = message.encoded()
        check(!String(decoding: bytes, as: UTF8.self).contains(#""code":"internal""#), "server message failed to encode: \(message)")
        do { _ = try JSONSerialization.jsonObject(with: Data(bytes)) } catch { fatalError("invariant: encoded message is not JSON: \(error)") }
    }
}

@_cdecl("LLVMFuzzerTestOneInput")
public func clientMessageFuzzer(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let input = Array(UnsafeBufferPointer(start: data, count: size))
    var harness = Harness()
    var start = 0
    var count = 0
    while start <= input.count, count < 12 {
        let end = input[start...].firstIndex(of: 0x0A) ?? input.count
        harness.step(Array(input[start..<end]))
        count += 1
        // The byte after the newline picks the clock step (and is part of the next message too).
        let selector = end + 1 < input.count ? Int(input[end + 1]) : count
        let step = steps[selector % steps.count]
        harness.advance(by: step)
        start = end + 1
    }
    return 0
}
