import Foundation
import Testing
@testable import LiveActivityCore
import KindFixtures

/// The change pipeline driven by hand: fake store results, no threads, no store.
struct ChangePipelineTests {
    /// What the completions did, in order ("ack u1", "fail u2: …", "reply list", "replicated 3").
    final class Log {
        var lines: [String] = []
        /// The sequence of the last ``ChangePipeline/Step/publish(_:)`` run.
        var published: UInt64?
    }

    /// A pipeline over a center holding one running activity `a1` (sequence 1), and a log.
    private func pipeline() throws -> (ChangePipeline, Log) {
        var center = ActivityCenter(kinds: .builtIn)
        var ids = IDs()
        _ = try center.apply(#"{"type":"start","attributes":{"workout":"yoga"},"durationSeconds":600}"#, at: t0, ids: &ids)
        return (ChangePipeline(center), Log())
    }

    /// Runs the steps, logging broadcasts of others' events; returns the submissions.
    @discardableResult
    private func run(_ effects: ChangePipeline.Effects, _ log: Log) -> [ChangePipeline.Submission] {
        for step in effects.steps {
            switch step {
            case .publish(let center): log.published = center.sequence
            case .run(let completion): completion()
            case .replicated(let events): log.lines.append("replicated \(events.map(\.sequence))")
            case .reloaded: log.lines.append("reloaded")
            }
        }
        return effects.submissions
    }

    /// Proposes `json` (applied as a client command at t0 + 1), logging "ack NAME" or "fail NAME: code".
    private func propose(_ json: String, _ name: String, into pipeline: inout ChangePipeline, _ log: Log,
                         catchUp: Bool = false, now: Date = t0 + 1) throws -> [ChangePipeline.Submission] {
        let command = try command(json)
        let effects = pipeline.propose({ center in
            let outcome = try center.apply(command, now: t0 + 1, newID: { "new" })
            return .init(events: outcome.events, onCommit: { log.lines.append("ack \(name)") })
        }, catchUpOnRefusal: catchUp, now: now, onFailure: { error in
            let code = (error as? ProtocolError)?.code.rawValue ?? (error is StoreConflict ? "conflict" : "store")
            log.lines.append("fail \(name): \(code)")
        })
        return run(effects, log)
    }

    private func update(_ id: String = "a1", seconds: Int) -> String {
        #"{"type":"update","activityId":"\#(id)","durationSeconds":\#(seconds)}"#
    }

    @Test func changesWaitingForTheStoreAreJudgedOnEachOtherAndAckedInOrderOnceRecorded() throws {
        var (pipeline, log) = try pipeline()
        let first = try propose(update(seconds: 10), "u1", into: &pipeline, log)
        let second = try propose(update(seconds: 20), "u2", into: &pipeline, log)
        let third = try propose(update(seconds: 30), "u3", into: &pipeline, log)
        #expect(log.lines.isEmpty, "nothing is acknowledged before it is durable")
        #expect((first + second + third).map { $0.events.map(\.sequence) } == [[2], [3], [4]])
        #expect(Set((first + second + third).map(\.generation)).count == 1)
        #expect(pipeline.committed.sequence == 1)
        #expect(pipeline.speculative.sequence == 4)

        // The store records the first two as one group.
        run(pipeline.resolve([(first[0].ticket, .recorded), (second[0].ticket, .recorded)], now: t0 + 1), log)
        #expect(log.lines == ["ack u1", "ack u2"])
        #expect(pipeline.committed.sequence == 3)
        #expect(pipeline.committed.activities["a1"]?.timer?.end == t0 + 1 + 20)
        #expect(!pipeline.isIdle)

        run(pipeline.resolve([(third[0].ticket, .recorded)], now: t0 + 1), log)
        #expect(log.lines == ["ack u1", "ack u2", "ack u3"])
        #expect(pipeline.isIdle)
        #expect(pipeline.committed.sequence == 4)
        #expect(pipeline.speculative.sequence == 4)
    }

    @Test func aBarrierBetweenTwoChangesSettledTogetherSeesOnlyTheFirst() throws {
        // A `list` sent between two updates is answered between their events: its snapshot must show the
        // first and not the second, though the store recorded both in one commit.
        var (pipeline, log) = try pipeline()
        let first = try propose(update(seconds: 10), "u1", into: &pipeline, log)
        run(pipeline.barrier { log.lines.append("list sees \(log.published.map(String.init) ?? "start")") }, log)
        let second = try propose(update(seconds: 20), "u2", into: &pipeline, log)
        run(pipeline.resolve([(first[0].ticket, .recorded), (second[0].ticket, .recorded)], now: t0 + 1), log)
        #expect(log.lines == ["ack u1", "list sees 2", "ack u2"])
        #expect(log.published == 3 && pipeline.committed.sequence == 3)
    }

    @Test func aRefusalOrABarrierWaitsForTheChangesBeforeIt() throws {
        var (pipeline, log) = try pipeline()
        let first = try propose(update(seconds: 10), "u1", into: &pipeline, log)
        // Refused at once (no such activity), but answered only after u1's ack.
        #expect(try propose(update("nope", seconds: 10), "bad", into: &pipeline, log).isEmpty)
        run(pipeline.barrier { log.lines.append("reply list") }, log)
        let second = try propose(update(seconds: 20), "u2", into: &pipeline, log)
        #expect(log.lines.isEmpty)

        run(pipeline.resolve([(first[0].ticket, .recorded)], now: t0 + 1), log)
        #expect(log.lines == ["ack u1", "fail bad: unknown_activity", "reply list"])
        run(pipeline.resolve([(second[0].ticket, .recorded)], now: t0 + 1), log)
        #expect(log.lines.last == "ack u2")
    }

    @Test func withNothingWaitingRefusalsAndBarriersAreAnsweredAtOnce() throws {
        var (pipeline, log) = try pipeline()
        _ = try propose(update("nope", seconds: 10), "bad", into: &pipeline, log)
        run(pipeline.barrier { log.lines.append("reply list") }, log)
        #expect(log.lines == ["fail bad: unknown_activity", "reply list"])
        #expect(pipeline.isIdle)
    }

    @Test func aChangeWithNothingToRecordCommitsInTurnWithoutTheStore() throws {
        var (pipeline, log) = try pipeline()
        let first = try propose(update(seconds: 10), "u1", into: &pipeline, log)
        let effects = pipeline.propose({ _ in .init(onCommit: { log.lines.append("ack quiet") }) }, now: t0, onFailure: { _ in })
        #expect(effects.submissions.isEmpty)
        #expect(log.lines.isEmpty)
        run(pipeline.resolve([(first[0].ticket, .recorded)], now: t0 + 1), log)
        #expect(log.lines == ["ack u1", "ack quiet"])
    }

    @Test func aFailedCommitRollsBackAndFailsEveryChangeJudgedOnIt() throws {
        var (pipeline, log) = try pipeline()
        let generation = pipeline.generation
        let start = try propose(#"{"type":"start","attributes":{"workout":"yoga"},"durationSeconds":60}"#, "s", into: &pipeline, log)
        // Judged on the start that is not durable yet.
        let dependent = try propose(update("new", seconds: 5), "u", into: &pipeline, log)
        run(pipeline.barrier { log.lines.append("reply list") }, log)
        #expect(pipeline.speculative.activities["new"] != nil)

        run(pipeline.resolve([(start[0].ticket, .failed(.init("disk full")))], now: t0 + 1), log)
        #expect(log.lines == ["fail s: store", "fail u: store", "reply list"])
        #expect(pipeline.isIdle)
        #expect(pipeline.committed.sequence == 1)
        #expect(pipeline.speculative.activities["new"] == nil)
        #expect(pipeline.generation > generation)

        // The store refused the dependent one without trying (same generation): nothing more happens.
        run(pipeline.resolve([(dependent[0].ticket, .failed(.init("depends on a failed change")))], now: t0 + 1), log)
        #expect(log.lines.count == 3)

        // A new change is judged on the committed state, under the new generation.
        let retry = try propose(update(seconds: 7), "again", into: &pipeline, log)
        #expect(retry.map(\.generation) == [pipeline.generation])
        #expect(retry[0].events.map(\.sequence) == [2])
        run(pipeline.resolve([(retry[0].ticket, .recorded)], now: t0 + 1), log)
        #expect(log.lines.last == "ack again")
    }

    @Test func aShareThatCouldNotBeKeptFailsAloneAndTheChangesAroundItCommit() throws {
        var (pipeline, log) = try pipeline()
        let first = try propose(update(seconds: 10), "u1", into: &pipeline, log)
        let share = Share(id: "s1", tokenHash: "h", activityId: "a1", createdAt: t0, expiresAt: t0 + 60)
        let saved = pipeline.propose({ _ in .init(shares: [share], onCommit: { log.lines.append("ack share") }) },
                                     now: t0, onFailure: { _ in log.lines.append("fail share") }).submissions
        let second = try propose(update(seconds: 20), "u2", into: &pipeline, log)
        run(pipeline.resolve([(first[0].ticket, .recorded), (saved[0].ticket, .notSaved(.init("no"))),
                              (second[0].ticket, .recorded)], now: t0 + 1), log)
        #expect(log.lines == ["ack u1", "fail share", "ack u2"])
        #expect(pipeline.committed.sequence == 3)
    }

    @Test func aConflictJudgesTheWaitingChangesAgainOnTheOtherInstancesEvents() throws {
        var (pipeline, log) = try pipeline()
        let first = try propose(update(seconds: 10), "u1", into: &pipeline, log)
        let second = try propose(update(seconds: 20), "u2", into: &pipeline, log)
        let generation = pipeline.generation

        // Another instance recorded sequence 2 first (an update of a1).
        var theirs = pipeline.committed
        let foreign = try theirs.apply(command(update(seconds: 99)), now: t0 + 1, newID: { "x" }).events
        let again = run(pipeline.resolve([(first[0].ticket, .conflict(.events(foreign))),
                                          (second[0].ticket, .conflict(.events(foreign)))], now: t0 + 1.5), log)
        #expect(log.lines == ["replicated [2]"])
        #expect(pipeline.committed.sequence == 2)
        #expect(again.map { $0.events.map(\.sequence) } == [[3], [4]])
        #expect(again.allSatisfy { $0.generation == generation + 1 })

        // Late results for the old tickets change nothing.
        run(pipeline.resolve([(second[0].ticket, .failed(.init("superseded")))], now: t0 + 1.5), log)
        #expect(log.lines == ["replicated [2]"])

        run(pipeline.resolve([(again[0].ticket, .recorded), (again[1].ticket, .recorded)], now: t0 + 1.5), log)
        #expect(log.lines == ["replicated [2]", "ack u1", "ack u2"])
        #expect(pipeline.committed.sequence == 4)
        #expect(pipeline.committed.activities["a1"]?.timer?.end == t0 + 1 + 20)
    }

    @Test func aChangeThatKeepsLosingRacesFailsAfterThePatience() throws {
        var (pipeline, log) = try pipeline()
        let first = try propose(update(seconds: 10), "u1", into: &pipeline, log, now: t0)
        let again = run(pipeline.resolve([(first[0].ticket, .conflict(.events([])))], now: t0 + 1), log)
        #expect(again.count == 1)
        #expect(log.lines.isEmpty)
        let last = run(pipeline.resolve([(again[0].ticket, .conflict(.events([])))], now: t0 + 2.5), log)
        #expect(last.isEmpty)
        #expect(log.lines == ["fail u1: conflict"])
        #expect(pipeline.isIdle)
    }

    @Test func aConflictAfterWhichTheChangeNoLongerHoldsIsARefusal() throws {
        var (pipeline, log) = try pipeline()
        let first = try propose(update(seconds: 10), "u1", into: &pipeline, log)
        var theirs = pipeline.committed
        let ended = try theirs.apply(command(#"{"type":"end","activityId":"a1","dismissalPolicy":"immediate"}"#),
                                     now: t0 + 1, newID: { "x" }).events
        let again = run(pipeline.resolve([(first[0].ticket, .conflict(.events(ended)))], now: t0 + 1), log)
        #expect(again.isEmpty)
        #expect(log.lines == ["replicated [2, 3]", "fail u1: unknown_activity"])
    }

    @Test func aRefusalInAClusterIsJudgedAgainWhenTheSharedLogHeldNewEvents() throws {
        var (pipeline, log) = try pipeline()
        // "b1" was started on another instance; this one has not heard of it yet.
        let read = try propose(update("b1", seconds: 10), "u", into: &pipeline, log, catchUp: true)
        guard case .catchUp(let after)? = read.first?.work else { Issue.record("expected a catch-up read"); return }
        #expect(after == 1)
        #expect(log.lines.isEmpty)

        var theirs = pipeline.committed
        let started = try theirs.apply(command(#"{"type":"start","attributes":{"workout":"yoga"},"durationSeconds":60}"#),
                                       now: t0 + 1, newID: { "b1" }).events
        let again = run(pipeline.resolve([(read[0].ticket, .caughtUp(.events(started)))], now: t0 + 1), log)
        #expect(log.lines == ["replicated [2]"])
        #expect(again.map { $0.events.map(\.sequence) } == [[3]])
        run(pipeline.resolve([(again[0].ticket, .recorded)], now: t0 + 1), log)
        #expect(log.lines == ["replicated [2]", "ack u"])
    }

    @Test func aRefusalInAClusterStandsWhenTheSharedLogHadNothingNew() throws {
        var (pipeline, log) = try pipeline()
        let read = try propose(update("nope", seconds: 10), "u", into: &pipeline, log, catchUp: true)
        #expect(read.count == 1)
        run(pipeline.resolve([(read[0].ticket, .caughtUp(.events([])))], now: t0 + 1), log)
        #expect(log.lines == ["fail u: unknown_activity"])
        #expect(pipeline.isIdle)
    }

    @Test func othersEventsFromTheFeedCommitAndTheWaitingChangesAreJudgedAgain() throws {
        var (pipeline, log) = try pipeline()
        let first = try propose(update(seconds: 10), "u1", into: &pipeline, log)
        var theirs = pipeline.committed
        let foreign = try theirs.apply(command(update(seconds: 99)), now: t0 + 1, newID: { "x" }).events
        let again = run(pipeline.receive(replicated: foreign, now: t0 + 1), log)
        #expect(log.lines == ["replicated [2]"])
        #expect(again.map { $0.events.map(\.sequence) } == [[3]])
        #expect(again[0].generation > first[0].generation)

        // A gap asks for a catch-up read.
        var later = theirs
        let gapped = try later.apply(command(update(seconds: 5)), now: t0 + 1, newID: { "x" }).events
            + (try later.apply(command(update(seconds: 6)), now: t0 + 1, newID: { "x" }).events)
        let read = run(pipeline.receive(replicated: Array(gapped.dropFirst()), now: t0 + 1), log)
        #expect(read.count == 1)
        if case .catchUp(let after)? = read.first?.work { #expect(after == 2) } else { Issue.record("expected a catch-up read") }
    }

    @Test func aReloadReplacesTheCommittedStateAndSaysSo() throws {
        var (pipeline, log) = try pipeline()
        let read = pipeline.catchUp().submissions
        run(pipeline.resolve([(read[0].ticket, .caughtUp(.reload(activities: [], sequence: 40)))], now: t0), log)
        #expect(log.lines == ["reloaded"])
        #expect(pipeline.committed.sequence == 40)
        #expect(pipeline.committed.activities.isEmpty)
        #expect(pipeline.speculative.sequence == 40)
    }
}
