import Foundation
import Testing
@testable import LiveActivityCore
@testable import LiveActivityStore
import KindFixtures

/// The SQLite store against a real file in a temporary directory.
struct SQLiteActivityStoreTests {
    let t0 = Date(timeIntervalSince1970: 1_795_971_600)

    private func temporaryDirectory() -> URL {
        FileManager.default.temporaryDirectory.appendingPathComponent("liveactivity-\(UUID().uuidString)")
    }

    private func run(_ center: inout ActivityCenter, _ json: String, at now: Date, id: String = UUID().uuidString) throws -> ActivityCenter.Outcome {
        try center.apply(try ClientMessage.parse(Array(json.utf8), kinds: .builtIn).command.get(), now: now, newID: { id })
    }

    @Test func activitiesSequenceAndLogSurviveReopening() throws {
        let directory = temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        var center = ActivityCenter(kinds: .builtIn)
        do {
            let store = try SQLiteActivityStore(directory: directory)
            store.useKinds(.builtIn)
            try store.record(try run(&center, #"{"type":"start","attributes":{"workout":"yoga"},"durationSeconds":60}"#, at: t0, id: "a1").events)
            try store.record(try run(&center, #"{"type":"start","attributes":{"workout":"jogging"},"durationSeconds":60}"#, at: t0, id: "a2").events)
            try store.record(try run(&center, #"{"type":"update","activityId":"a1","durationSeconds":30,"alert":{"title":"T","body":"B"}}"#, at: t0 + 1).events)
            try store.record(try run(&center, #"{"type":"end","activityId":"a2","dismissalPolicy":"immediate"}"#, at: t0 + 2).events)
            try store.record(center.advance(to: t0 + 31))
        }
        let reopened = try SQLiteActivityStore(directory: directory)
        reopened.useKinds(.builtIn)
        let (activities, sequence) = try reopened.load()
        #expect(sequence == center.sequence)
        #expect(activities.map(\.id) == ["a1"])
        #expect(activities.first == center.activities["a1"], "restored exactly, timer and flags included")
        let events = try #require(try reopened.events(after: 2))
        #expect(events.map(\.sequence) == Array(3...center.sequence))
        #expect(events.first?.alert == AlertConfiguration(title: "T", body: "B"))
        #expect(try reopened.events(after: center.sequence)?.isEmpty == true)
        let history = try reopened.history(limit: 10, before: nil)
        #expect(history.map(\.id) == ["a2"])
        #expect(history.first?.outcome == .stopped)
        #expect(history.first?.plannedDurationSeconds == 60)
        #expect(history.first?.actualDurationSeconds == 2)
    }

    /// One group with several events of the same activities (a publisher's burst) writes each activity's row
    /// once, from its last event: what is restored is the state the group leaves each activity in (updated,
    /// ended, or gone once dismissed), and the log still holds every event.
    @Test func aGroupLeavesEachActivityInItsLastState() throws {
        let directory = temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        var center = ActivityCenter(kinds: .builtIn)
        var group: [ActivityEvent] = []
        group += try run(&center, #"{"type":"start","attributes":{"workout":"yoga"},"durationSeconds":60}"#, at: t0, id: "a1").events
        group += try run(&center, #"{"type":"start","attributes":{"workout":"jogging"},"durationSeconds":60}"#, at: t0, id: "a2").events
        for seconds in [50, 40, 30] {
            group += try run(&center, #"{"type":"update","activityId":"a1","durationSeconds":\#(seconds)}"#, at: t0 + 1).events
        }
        group += try run(&center, #"{"type":"start","attributes":{"workout":"aerobics"},"durationSeconds":60}"#, at: t0 + 1, id: "a3").events
        group += try run(&center, #"{"type":"end","activityId":"a2","dismissalPolicy":"immediate"}"#, at: t0 + 2).events
        group += try run(&center, #"{"type":"end","activityId":"a3"}"#, at: t0 + 2).events
        do {
            let store = try SQLiteActivityStore(directory: directory)
            store.useKinds(.builtIn)
            try store.record(group)
        }
        let reopened = try SQLiteActivityStore(directory: directory)
        reopened.useKinds(.builtIn)
        let (activities, sequence) = try reopened.load()
        #expect(sequence == center.sequence)
        #expect(Set(activities.map(\.id)) == ["a1", "a3"], "a2 was dismissed in the group")
        for activity in activities {
            #expect(activity == center.activities[activity.id], "\(activity.id) restored in its last state")
        }
        #expect(activities.first { $0.id == "a3" }?.activityState == .ended)
        let events = try #require(try reopened.events(after: 0))
        #expect(events.map(\.sequence) == group.map(\.sequence))
        #expect(Set(try reopened.history(limit: 10, before: nil).map(\.id)) == ["a2", "a3"])
    }

    /// A record that fails part-way (here its second event repeats a logged sequence) leaves none of its events
    /// and none of its activities, and the next record commits: BEGIN, COMMIT and ROLLBACK are prepared once and
    /// reused, so each must be left ready for the next transaction however the last one ended.
    @Test func aFailedRecordLeavesNothingAndTheNextOneCommits() throws {
        let directory = temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        var center = ActivityCenter(kinds: .builtIn)
        let store = try SQLiteActivityStore(directory: directory)
        store.useKinds(.builtIn)
        let started = try run(&center, #"{"type":"start","attributes":{"workout":"yoga"},"durationSeconds":60}"#, at: t0, id: "a1").events
        try store.record(started)
        let second = try run(&center, #"{"type":"start","attributes":{"workout":"jogging"},"durationSeconds":60}"#, at: t0, id: "a2").events
        #expect(throws: SQLiteError.self) { try store.record(second + started) }
        var (activities, sequence) = try store.load()
        #expect(activities.map(\.id) == ["a1"] && sequence == started.last?.sequence)
        for _ in 0..<3 { #expect(throws: SQLiteError.self) { try store.record(second + started) } }
        try store.record(second)
        (activities, sequence) = try store.load()
        #expect(Set(activities.map(\.id)) == ["a1", "a2"] && sequence == second.last?.sequence)
        #expect(try store.events(after: 0)?.map(\.sequence) == (started + second).map(\.sequence))
    }

    /// One thread commits while another reads, as the server's store and service threads do: the reader
    /// always sees a whole prefix of the log (never half a commit), and nothing waits on a shared connection.
    @Test func readsRunWhileAnotherThreadRecords() throws {
        let directory = temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let store = try SQLiteActivityStore(directory: directory, durability: .normal)
        store.useKinds(.builtIn)
        var center = ActivityCenter(maximumLive: 1000, kinds: .builtIn)
        var batches: [[ActivityEvent]] = []
        for index in 0..<100 {
            var events = try run(&center, #"{"type":"start","attributes":{"workout":"yoga"},"durationSeconds":60}"#, at: t0, id: "a\(index)").events
            events += try run(&center, #"{"type":"update","activityId":"a\#(index)","durationSeconds":30}"#, at: t0).events
            batches.append(events)
        }
        let last = center.sequence
        let writer = Thread { [batches] in for batch in batches { try? store.record(batch) } }
        writer.start()
        var seen: UInt64 = 0
        while seen < last {
            let events = try #require(try store.events(after: 0))
            #expect(events.map(\.sequence) == (0..<UInt64(events.count)).map { $0 + 1 })
            #expect(events.count % 2 == 0, "a commit is seen whole")
            let (activities, sequence) = try store.load()
            #expect(UInt64(activities.count * 2) == sequence, "activities and sequence come from the same commit")
            seen = UInt64(events.count)
        }
        #expect(try store.load().sequence == last)
    }

    @Test func logOlderThanRetentionAnswersNil() throws {
        let directory = temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        var retention = SQLiteActivityStore.Retention()
        retention.maximumEvents = 5
        let store = try SQLiteActivityStore(directory: directory, retention: retention)
        store.useKinds(.builtIn)
        var center = ActivityCenter(maximumLive: 1000, kinds: .builtIn)
        for index in 0..<150 {
            try store.record(try run(&center, #"{"type":"start","attributes":{"workout":"yoga"},"durationSeconds":60}"#, at: t0, id: "a\(index)").events)
        }
        #expect(try store.events(after: 0) == nil)
        #expect(try store.events(after: 149)?.map(\.sequence) == [150])
        #expect(try store.events(after: 151) == nil, "a sequence from the future means another database")
    }

    /// The sequence is the newest event's, not a row rewritten at every commit: when pruning leaves the log
    /// empty (a retention of no events), `meta` keeps it, through a reopening, and the next event follows it.
    @Test func theSequenceOutlivesAnEmptiedLog() throws {
        let directory = temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        var retention = SQLiteActivityStore.Retention()
        retention.maximumEvents = 0
        var center = ActivityCenter(maximumLive: 1000, kinds: .builtIn)
        do {
            let store = try SQLiteActivityStore(directory: directory, retention: retention)
            store.useKinds(.builtIn)
            for index in 0..<100 {  // the 100th commit prunes, every event included
                try store.record(try run(&center, #"{"type":"start","attributes":{"workout":"yoga"},"durationSeconds":60}"#, at: t0, id: "a\(index)").events)
            }
            #expect(try store.load().sequence == 100)
            #expect(try store.events(after: 100) == [], "up to date, although the log holds nothing")
            #expect(try store.events(after: 99) == nil, "the log no longer reaches back")
        }
        let reopened = try SQLiteActivityStore(directory: directory, retention: retention)
        reopened.useKinds(.builtIn)
        let (activities, sequence) = try reopened.load()
        #expect(sequence == 100)
        #expect(activities.count == 100, "every activity's row kept and restored")
        var restored = ActivityCenter(activities: activities, sequence: sequence, maximumLive: 1000, kinds: .builtIn)
        let next = try run(&restored, #"{"type":"update","activityId":"a7","durationSeconds":30}"#, at: t0 + 1).events
        #expect(next.map(\.sequence) == [101])
        try reopened.record(next)
        #expect(try reopened.load().sequence == 101)
        #expect(try reopened.events(after: 100)?.map(\.sequence) == [101])
    }

    @Test func unwritableDirectoryFailsAtOpen() throws {
        #expect(throws: (any Error).self) {
            _ = try SQLiteActivityStore(directory: URL(fileURLWithPath: "/proc/liveactivity-cannot-exist"))
        }
    }
}
