import Foundation
import Testing
@testable import LiveActivityCore

/// The hub's broadcast, ordering and slow-client policy, with no sockets: sessions without connections,
/// writes taken with `nextWrite` as the adapter would on WRITEABLE.
struct HubTests {
    private func session(_ id: UInt64, role: AccessPolicy.Role = .viewer, scope: String? = nil) -> Session {
        let session = Session(id: id, connection: nil, role: role, rateLimit: MessageRateLimit(bucket: TokenBucket(capacity: 10, rate: 10), closeAfter: 100))
        session.scope = scope
        return session
    }

    private func frame(_ text: String) -> Frame { Frame(Array(text.utf8)) }

    /// Everything `session` would be written now, as text, and how it ends (`close:1013`, or nothing).
    private func drain(_ hub: Hub, _ session: Session) -> [String] {
        var written: [String] = []
        while true {
            switch hub.nextWrite(for: session) {
            case .frame(let frame, _): written.append(String(decoding: frame.bytes, as: UTF8.self))
            case .close(let code, _): written.append("close:\(code.rawValue)"); return written
            case .idle: return written
            }
        }
    }

    @Test func everyWatcherReadsTheSameEncodedFrameInOrder() {
        let hub = Hub(maximumQueuedBytes: 1 << 20)
        let a = session(1), b = session(2)
        for s in [a, b] { hub.add(s); hub.watch(s) }
        let first = frame("e1")
        #expect(hub.broadcast(first, activityId: "x") == [.requestWritableForAll])
        _ = hub.broadcast(frame("e2"), activityId: "x")
        guard case .frame(let written, let more) = hub.nextWrite(for: a) else { Issue.record("nothing to write"); return }
        #expect(written === first)
        #expect(more)
        #expect(drain(hub, a) == ["e2"])
        #expect(drain(hub, b) == ["e1", "e2"])
        #expect(hub.nextWrite(for: b).isIdle)
    }

    /// The run a batching writer takes straight from the ring is what `nextWrite` would return, and only when
    /// nothing of the session's own (reply, tick, scope) is among it.
    @Test func aPlainBroadcastRunIsExactlyWhatNextWriteWouldReturn() {
        let hub = Hub(maximumQueuedBytes: 1 << 20)
        let a = session(1), b = session(2), scoped = session(3, scope: "x")
        for s in [a, b, scoped] { hub.add(s); hub.watch(s) }
        #expect(hub.plainBroadcastRun(for: a).isEmpty)
        for text in ["e1", "e2", "e3"] { _ = hub.broadcast(frame(text), activityId: "x") }
        let run = hub.plainBroadcastRun(for: a)
        #expect(run.map { String(decoding: hub.ring.frame(at: $0).bytes, as: UTF8.self) } == drain(hub, b))
        #expect(hub.plainBroadcastRun(for: b).isEmpty)
        #expect(hub.plainBroadcastRun(for: scoped).isEmpty)
        // A reply or a tick among the frames: no run; nextWrite keeps them in order.
        _ = hub.send(frame("r"), to: b)
        _ = hub.broadcast(frame("e4"), activityId: "x")
        #expect(hub.plainBroadcastRun(for: b).isEmpty)
        #expect(drain(hub, b) == ["r", "e4"])
        _ = hub.tick(frame("t"), scoped: { _ in nil })
        #expect(hub.plainBroadcastRun(for: a).isEmpty)
        // Closing with what is queued kept: the run stops at the close's limit.
        let c = session(4)
        hub.add(c); hub.watch(c)
        _ = hub.broadcast(frame("e5"), activityId: "x")
        _ = hub.close(c, .goingAway, "bye", keepingQueued: true)
        _ = hub.broadcast(frame("e6"), activityId: "x")
        #expect(hub.plainBroadcastRun(for: c).count == 1)
    }

    @Test func sessionsAreWalkedInTheOrderTheyConnectedAndARemovedOnesPlaceIsTakenByTheLast() {
        let hub = Hub(maximumQueuedBytes: 1 << 20)
        let all = (1...5).map { session(UInt64($0)) }
        for s in all { hub.add(s) }
        hub.add(all[2])  // a second add changes nothing
        #expect(hub.sessionsInOrder.map(\.id) == [1, 2, 3, 4, 5])
        hub.remove(all[1])
        hub.remove(all[1])  // nor does a second remove
        #expect(hub.sessionsInOrder.map(\.id) == [1, 5, 3, 4])
        hub.remove(all[3])
        hub.remove(all[4])
        #expect(hub.sessionsInOrder.map(\.id) == [1, 3])
        #expect(hub.sessionsInOrder.enumerated().allSatisfy { $0.element.placeInOrder == $0.offset })
        #expect(Set(hub.sessions.keys) == [1, 3])
        hub.remove(all[0])
        hub.remove(all[2])
        #expect(hub.sessionsInOrder.isEmpty)
    }

    @Test func repliesKeepTheirPlaceAmongBroadcasts() {
        let hub = Hub(maximumQueuedBytes: 1 << 20)
        let requester = session(1, role: .controller), other = session(2)
        for s in [requester, other] { hub.add(s); hub.watch(s) }
        _ = hub.broadcast(frame("before"), activityId: nil)
        #expect(hub.send(frame("ack"), to: requester) == [.requestWritable(requester)])
        _ = hub.broadcast(frame("after"), activityId: nil)
        #expect(drain(hub, requester) == ["before", "ack", "after"])
        #expect(drain(hub, other) == ["before", "after"])
    }

    @Test func aReservedAnswerKeepsItsPlaceAndHoldsBackWhatCameAfterIt() {
        let hub = Hub(maximumQueuedBytes: 1 << 20)
        let reader = session(1), other = session(2)
        for s in [reader, other] { hub.add(s); hub.watch(s) }
        _ = hub.broadcast(frame("before"), activityId: nil)
        guard let reservation = hub.reserve(for: reader) else { Issue.record("no reservation"); return }
        _ = hub.send(frame("later reply"), to: reader)
        _ = hub.broadcast(frame("after"), activityId: nil)
        _ = hub.tick(frame("tick")) { _ in nil }
        // Until the answer is read, only what came before it goes out, to the reader; the others are not held.
        #expect(drain(hub, reader) == ["before"])
        #expect(drain(hub, other) == ["before", "after", "tick"])
        #expect(hub.fill(reservation, with: [frame("e1"), frame("e2"), frame("caughtUp")]) == [.requestWritable(reader)])
        #expect(drain(hub, reader) == ["e1", "e2", "caughtUp", "later reply", "after", "tick"])
        #expect(hub.lag(of: reader) == 0)
    }

    @Test func twoReservationsAreFilledInEitherOrderAndWrittenInTheirOwn() {
        let hub = Hub(maximumQueuedBytes: 1 << 20)
        let reader = session(1)
        hub.add(reader)
        hub.watch(reader)
        guard let first = hub.reserve(for: reader), let second = hub.reserve(for: reader) else { Issue.record("no reservation"); return }
        _ = hub.fill(second, with: [frame("history")])
        #expect(drain(hub, reader) == [])
        _ = hub.fill(first, with: [frame("e1"), frame("caughtUp")])
        #expect(drain(hub, reader) == ["e1", "caughtUp", "history"])
    }

    @Test func anAnswerTooLargeForTheQueueClosesWith1013AndOneForAClosedSessionIsDropped() {
        let hub = Hub(maximumQueuedBytes: 10)
        let reader = session(1), gone = session(2)
        for s in [reader, gone] { hub.add(s); hub.watch(s) }
        guard let big = hub.reserve(for: reader), let late = hub.reserve(for: gone) else { Issue.record("no reservation"); return }
        #expect(hub.fill(big, with: [frame("0123456789abc")]) == [.closeSoon(reader)])
        #expect(drain(hub, reader) == ["close:1013"])
        hub.remove(gone)
        #expect(hub.fill(late, with: [frame("x")]) == [])
        #expect(hub.reserve(for: gone) == nil)
    }

    @Test func aSessionThatDoesNotWatchGetsRepliesOnly() {
        let hub = Hub(maximumQueuedBytes: 1 << 20)
        let stranger = session(1, role: .unauthenticated)
        hub.add(stranger)
        _ = hub.send(frame("unauthorized"), to: stranger)
        _ = hub.broadcast(frame("event"), activityId: nil)
        #expect(drain(hub, stranger) == ["unauthorized"])
        hub.watch(stranger)
        _ = hub.send(frame("snapshot"), to: stranger)
        _ = hub.broadcast(frame("next"), activityId: nil)
        #expect(drain(hub, stranger) == ["snapshot", "next"])
    }

    @Test func ticksAreReplacedNotQueued() {
        let hub = Hub(maximumQueuedBytes: 1 << 20)
        let slow = session(1)
        hub.add(slow); hub.watch(slow)
        _ = hub.broadcast(frame("before"), activityId: nil)
        for second in 1...5 { _ = hub.tick(frame("tick\(second)")) { _ in nil } }
        _ = hub.broadcast(frame("after"), activityId: nil)
        #expect(drain(hub, slow) == ["before", "tick5", "after"], "the newest tick only, in its place")
    }

    @Test func aTickNeverFollowsAnEventMadeAfterIt() {
        let hub = Hub(maximumQueuedBytes: 1 << 20)
        let lagging = session(1), current = session(2)
        for s in [lagging, current] { hub.add(s); hub.watch(s) }
        _ = hub.broadcast(frame("e1"), activityId: nil)
        #expect(drain(hub, current) == ["e1"])
        _ = hub.tick(frame("tick listing the activity")) { _ in nil }
        _ = hub.broadcast(frame("ended and dismissed"), activityId: nil)
        #expect(drain(hub, current) == ["tick listing the activity", "ended and dismissed"])
        #expect(drain(hub, lagging) == ["e1", "tick listing the activity", "ended and dismissed"])
    }

    @Test func aTickWaitsForTheNextBroadcastToCarryItOrForItsRelease() {
        let hub = Hub(maximumQueuedBytes: 1 << 20)
        let watcher = session(1)
        hub.add(watcher); hub.watch(watcher)
        #expect(hub.releaseTicks().isEmpty, "no tick, nothing to release")
        #expect(hub.tick(frame("tick1")) { _ in nil } == 1)
        #expect(hub.ticksHeld, "no WRITEABLE is asked for a tick alone")
        #expect(hub.broadcast(frame("event"), activityId: nil) == [.requestWritableForAll])
        #expect(!hub.ticksHeld, "the broadcast's WRITEABLE carries it")
        #expect(hub.releaseTicks().isEmpty)
        guard case .frame(let first, let more) = hub.nextWrite(for: watcher) else { Issue.record("no tick"); return }
        #expect(String(decoding: first.bytes, as: UTF8.self) == "tick1", "made before the event, written before it")
        #expect(more, "the event follows in the same write")
        #expect(drain(hub, watcher) == ["event"])

        _ = hub.tick(frame("tick2")) { _ in nil }
        #expect(hub.releaseTicks() == [.requestWritableForAll], "no broadcast came: released on its own")
        #expect(!hub.ticksHeld)
        #expect(drain(hub, watcher) == ["tick2"])
    }

    @Test func aTickForNobodyIsNotHeld() {
        let hub = Hub(maximumQueuedBytes: 1 << 20)
        let viewer = session(1, scope: "mine")
        hub.add(viewer); hub.watch(viewer)
        #expect(hub.tick(frame("tick")) { _ in nil } == 0)
        #expect(!hub.ticksHeld)
    }

    @Test func shareViewersSeeTheirActivityOnly() {
        let hub = Hub(maximumQueuedBytes: 1 << 20)
        let viewer = session(1, scope: "mine"), everyone = session(2)
        for s in [viewer, everyone] { hub.add(s); hub.watch(s) }
        _ = hub.broadcast(frame("other"), activityId: "theirs")
        _ = hub.broadcast(frame("own"), activityId: "mine")
        #expect(hub.audience(activityId: "mine") == 2)
        #expect(hub.audience(activityId: "theirs") == 1)
        let delivered = hub.tick(frame("tick-all")) { scope in scope == "mine" ? self.frame("tick-mine") : nil }
        #expect(delivered == 2)
        #expect(drain(hub, viewer) == ["own", "tick-mine"])
        #expect(drain(hub, everyone) == ["other", "own", "tick-all"])
    }

    @Test func aClientThatFallsBehindIsClosedWith1013AndTheOthersGoOn() {
        let hub = Hub(maximumQueuedBytes: 100, scanInterval: 1000)
        let slow = session(1), fast = session(2)
        for s in [slow, fast] { hub.add(s); hub.watch(s) }
        var closed: [Hub.Action] = []
        for index in 0..<12 {
            closed += hub.broadcast(frame(String(repeating: "x", count: 9) + "\(index % 10)"), activityId: nil).filter { $0 != .requestWritableForAll }
            _ = drain(hub, fast)
        }
        #expect(closed == [.closeSoon(slow)])
        #expect(slow.closing?.code == .tryAgainLater)
        #expect(slow.lagAtClose > 100, "the log line names how far behind it was")
        #expect(drain(hub, slow) == ["close:1013"])
        #expect(hub.culled == 1)
        _ = hub.broadcast(frame("later"), activityId: nil)
        #expect(drain(hub, fast) == ["later"])
        // Frames every remaining session has read are dropped from the ring.
        _ = hub.broadcast(frame(String(repeating: "y", count: 200)), activityId: nil)
        #expect(hub.ring.count <= 2)
    }

    @Test func aReplyThatWouldPassTheLimitClosesTheSession() {
        let hub = Hub(maximumQueuedBytes: 10)
        let client = session(1)
        hub.add(client); hub.watch(client)
        _ = hub.send(frame("12345"), to: client)
        #expect(hub.send(frame("123456"), to: client) == [.closeSoon(client)])
        #expect(drain(hub, client) == ["close:1013"])
    }

    @Test func closingKeepingQueuedWritesWhatWasQueuedThenTheCloseFrame() {
        let hub = Hub(maximumQueuedBytes: 1 << 20)
        let flooder = session(1, role: .controller)
        hub.add(flooder); hub.watch(flooder)
        _ = hub.broadcast(frame("event"), activityId: nil)
        _ = hub.send(frame("error"), to: flooder)
        #expect(hub.close(flooder, .policyViolation, "too many", keepingQueued: true) == [.closeSoon(flooder)])
        #expect(hub.send(frame("dropped"), to: flooder).isEmpty)
        _ = hub.broadcast(frame("not-for-it"), activityId: nil)
        #expect(drain(hub, flooder) == ["event", "error", "close:1008"])
    }

    @Test func closeAllSendsWhatIsQueuedThenGoingAway() {
        // At shutdown the acks of changes the store finished last are still queued: a client must get them
        // (it cannot otherwise know that they were applied), and the broadcast so far, before 1001.
        let hub = Hub(maximumQueuedBytes: 1 << 20)
        let a = session(1)
        hub.add(a); hub.watch(a)
        _ = hub.broadcast(frame("unread"), activityId: nil)
        _ = hub.send(frame("ack"), to: a)
        #expect(hub.closeAll(reason: "bye") == [.closeSoon(a)])
        _ = hub.broadcast(frame("after-close"), activityId: nil)
        #expect(hub.send(frame("late-reply"), to: a).isEmpty)
        #expect(drain(hub, a) == ["unread", "ack", "close:1001"])
        hub.remove(a)
        #expect(hub.sessions.isEmpty)
        #expect(hub.watching == 0)
    }
}

extension Hub.Write {
    var isIdle: Bool { if case .idle = self { true } else { false } }
}
