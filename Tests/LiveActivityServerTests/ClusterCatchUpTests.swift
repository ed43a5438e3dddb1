import Foundation
import Testing
import LiveActivityCore
@testable import LiveActivityServer
import KindFixtures

/// Two real servers sharing one log, the way `--cluster` instances share Redis, but with the live feed
/// switched off: each instance learns of the other's changes only by reading the log. This is the moment
/// between an `ack` on one instance and the other's stream read, held open.
struct ClusterCatchUpTests {
    /// A shared in-memory log with Redis's optimistic concurrency (a write must follow the last sequence,
    /// else ``StoreConflict``) and a feed that never delivers. Thread-safe: both servers' service threads use it.
    final class SharedLog: ReplicatedStore, @unchecked Sendable {
        private let inner = Locked(InMemoryActivityStore())

        func load() throws -> (activities: [Activity], sequence: UInt64) { try inner.withLock { try $0.load() } }
        func record(_ events: [ActivityEvent]) throws {
            try inner.withLock { store in
                let last = try store.load().sequence
                if let first = events.first, first.sequence != last + 1 { throw StoreConflict(sequence: last) }
                try store.record(events)
            }
        }
        func events(after sequence: UInt64) throws -> [ActivityEvent]? { try inner.withLock { try $0.events(after: sequence) } }
        func history(limit: Int, before: Date?, beforeId: String?) throws -> [HistoryEntry] {
            try inner.withLock { try $0.history(limit: limit, before: before, beforeId: beforeId) }
        }
        func pushToStartToken() throws -> String { try inner.withLock { try $0.pushToStartToken() } }
        func logID() throws -> String { try inner.withLock { try $0.logID() } }
        func shares() throws -> [Share] { try inner.withLock { try $0.shares() } }
        func save(_ share: Share) throws { try inner.withLock { try $0.save(share) } }
        func channels() throws -> [BroadcastChannel] { try inner.withLock { try $0.channels() } }
        func save(_ channel: BroadcastChannel) throws { try inner.withLock { try $0.save(channel) } }
        func deleteChannel(id: String) throws { try inner.withLock { try $0.deleteChannel(id: id) } }
        func follow(from sequence: UInt64, deliver: @escaping @Sendable ([ActivityEvent]) -> Void) {}
        func stopFollowing() {}
    }

    private let publicDirectory: URL = {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("liveactivity-public-\(UUID().uuidString)")
        try? FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        try? Data("<!doctype html><title>test</title>".utf8).write(to: folder.appendingPathComponent("index.html"))
        return folder
    }()

    /// Applies one JSON client message on `server`'s service thread, as a connection's message would be.
    /// - Returns: the outcome, or the refusal.
    private func apply(_ json: String, on server: LiveActivityServer) -> Result<ActivityCenter.Outcome, ProtocolError> {
        let done = DispatchSemaphore(value: 0)
        let result = Locked<Result<ActivityCenter.Outcome, ProtocolError>?>(nil)
        server.perform { server in
            func finish(_ outcome: Result<ActivityCenter.Outcome, ProtocolError>) {
                result.withLock { $0 = outcome }
                done.signal()
            }
            let command: ClientMessage.Command
            switch ClientMessage.parse(Array(json.utf8), kinds: .builtIn).command {
            case .success(let parsed): command = parsed
            case .failure(let error): return finish(.failure(error))
            }
            // Answered once the store has spoken (on the store thread, through the inbox).
            server.committer.change(judgedAt: Date(), { center in
                let outcome = try center.apply(command, now: Date(), newID: { UUID().uuidString })
                return (outcome, outcome.events)
            }) { outcome in
                switch outcome {
                case .success(let outcome): finish(.success(outcome))
                case .failure(let error as ProtocolError): finish(.failure(error))
                case .failure(let error): finish(.failure(ProtocolError(.invalidField, field: nil, message: "\(error)")))
                }
            }
        }
        _ = done.wait(timeout: .now() + 10)
        return result.withLock { $0 } ?? .failure(ProtocolError(.invalidField, field: nil, message: "no answer in 10 s"))
    }

    @Test func aChangeRightAfterAnotherInstancesAckIsJudgedOnTheSharedLog() throws {
        let log = SharedLog()
        var configuration = ServerConfiguration(publicDirectory: publicDirectory)
        configuration.kindsDirectory = repositoryKindsDirectory
        configuration.port = 0
        let a = try LiveActivityServer(configuration: configuration, store: log)
        let b = try LiveActivityServer(configuration: configuration, store: log)
        _ = try a.start()
        _ = try b.start()
        defer { a.stop(); b.stop(); a.waitUntilStopped(); b.waitUntilStopped() }

        let started = try apply(#"{"type":"start","attributes":{"workout":"yoga"},"durationSeconds":600}"#, on: a).get()
        let id = try #require(started.activityId)
        // B has not seen the start (no feed): it must read the log rather than answer unknown_activity.
        let updated = apply(#"{"type":"update","activityId":"\#(id)","durationSeconds":300}"#, on: b)
        #expect(throws: Never.self) { try updated.get() }
        #expect((try? updated.get().events.map(\.sequence)) == [2])
        // A refusal that stands after catching up is still a refusal, with nothing recorded.
        let unknown = apply(#"{"type":"update","activityId":"nope","durationSeconds":300}"#, on: b)
        #expect(throws: ProtocolError.self) { try unknown.get() }
        #expect(try log.load().sequence == 2)
    }
}
