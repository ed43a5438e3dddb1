import Foundation
import LiveActivityCore

/// The answers read from the store: resume (`?since=`, `catchUp`) and `history`, read on the reader thread
/// (``StoreReader``) and put in the place they would have had if read at once (``Hub/reserve(for:)``).
/// Service thread only.
extension WebSocketSessions {
    /// Most events a resume (`since`, `catchUp`) replays; a client further behind gets a fresh snapshot
    /// (`reset: true`) instead, as when the log no longer reaches back that far. 10,000 events (about 6 MB of
    /// workout events) are read in well under a second, off the service thread.
    static let maximumResumeEvents = 10_000

    /// What the reader thread found for a resume.
    enum ResumeRead: Sendable {
        /// The events after `since`, encoded: replay them, then `caughtUp`.
        case replay([Frame])
        /// The log does not reach back that far, or the gap is too long to replay: a reset snapshot.
        case reset
        /// The store failed.
        case failed(StoreReadError)
    }

    /// Sends a client every event after `since`, then `caughtUp`; or, when the log no longer reaches back
    /// that far, the gap is longer than ``maximumResumeEvents`` or than half of `--max-queued-bytes`, `since`
    /// is ahead of the server, or `log` names another log, a snapshot with `reset: true`. The log is read on
    /// the reader thread (``StoreReader``); the answer takes the place it would have had if read at once
    /// (``Hub/reserve(for:)``): after the broadcast frames sent before the request, before those after it.
    func resume(_ session: Session, since: UInt64, log: String? = nil, requestId: JSONValue?) {
        let now = clock()
        let told = committer.center
        let upTo = told.sequence
        let logID = self.logID
        let role = session.role
        func resetSnapshot() -> ServerMessage {
            .snapshot(requestId: requestId, serverTime: now, sequence: told.sequence, activities: told.ordered,
                      reset: true, role: role, logId: logID)
        }
        if since > upTo || (log != nil && log != logID) {
            send(resetSnapshot(), to: session)
            return
        }
        let caughtUp = ServerMessage.caughtUp(requestId: requestId, serverTime: now, sequence: upTo, role: role, logId: logID)
        if since == upTo {
            send(caughtUp, to: session)
            return
        }
        guard let reservation = hub.reserve(for: session) else { return }
        let allowance = configuration.maximumQueuedBytes / 2
        committer.reader.read({ store -> ResumeRead in
            do {
                guard let events = try store.events(after: since, limit: Self.maximumResumeEvents) else { return .reset }
                var frames: [Frame] = []
                var bytes = 0
                for event in events where event.sequence <= upTo {
                    let frame = Frame(ServerMessage.activity(event, serverTime: now).encoded())
                    bytes += frame.count
                    if bytes > allowance { return .reset }
                    frames.append(frame)
                }
                return .replay(frames)
            } catch {
                return .failed(StoreReadError(error))
            }
        }) { [self] read in
            let frames: [Frame]
            switch read {
            case .replay(let events):
                frames = events + [frame(for: caughtUp)]
            case .reset:
                frames = [frame(for: resetSnapshot())]
            case .failed(let error):
                frames = [frame(for: .error(requestId: requestId, committer.storageUnavailable(error)))]
            }
            performHubActions(hub.fill(reservation, with: frames))
        }
    }

    /// Answers `history` from the reader thread (read and encoded there), in its place among the session's
    /// replies.
    func answerHistory(_ query: HistoryQuery, requestId: JSONValue?, to session: Session) {
        guard let reservation = hub.reserve(for: session) else { return }
        committer.reader.read({ store -> Result<Frame, StoreReadError> in
            Result { try store.history(limit: query.limit, before: query.before, beforeId: query.beforeId) }
                .map { Frame(ServerMessage.history(requestId: requestId, entries: $0).encoded()) }
                .mapError { StoreReadError($0) }
        }) { [self] result in
            let answer: Frame
            switch result {
            case .success(let history): answer = history
            case .failure(let error): answer = frame(for: .error(requestId: requestId, committer.storageUnavailable(error)))
            }
            performHubActions(hub.fill(reservation, with: [answer]))
        }
    }
}
