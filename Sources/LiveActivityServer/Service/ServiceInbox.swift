import LiveActivityCore

/// Work handed to the lws service thread from other threads, with one coalesced wake-up per batch.
///
/// `post` appends under a lock and reports whether the caller must wake the service thread (with
/// `lws_cancel_service`, the only lws call safe from any thread): only the first post after a drain does,
/// as NIO's `_pendingTaskPop` does. The service thread drains everything on `EVENT_WAIT_CANCELLED`.
/// Thread-safe.
final class ServiceInbox: Sendable {
    /// A unit of work run on the service thread.
    typealias Job = @Sendable (LiveActivityServer) -> Void

    /// {lock} pending jobs, and whether a wake-up is already on its way.
    private let state = Locked<(jobs: [Job], wakePending: Bool)>(([], false))

    /// Queues a job.
    /// - Returns: whether the caller must wake the service thread.
    func post(_ job: @escaping Job) -> Bool {
        state.withLock { state in
            state.jobs.append(job)
            if state.wakePending { return false }
            state.wakePending = true
            return true
        }
    }

    /// Takes every queued job. Service thread only.
    func drain() -> [Job] {
        state.withLock { state in
            let jobs = state.jobs
            state.jobs = []
            state.wakePending = false
            return jobs
        }
    }
}
