import LiveActivityCore
import Synchronization

/// Work handed to the lws service thread from other threads, with one coalesced wake-up per batch.
///
/// `post` appends under a lock and reports whether the caller must wake the service thread (with
/// `lws_cancel_service`, the only lws call safe from any thread): only the first post after a drain does,
/// as NIO's `_pendingTaskPop` does. The service thread drains everything on `EVENT_WAIT_CANCELLED`, which
/// comes only at the next round of the loop; within a long round (writing to thousands of clients) it also
/// drains whenever ``hasJobs`` says there is something (checked on each WRITEABLE, and between clients when the
/// service loop writes a broadcast).
/// Thread-safe.
final class ServiceInbox: Sendable {
    /// A unit of work run on the service thread.
    typealias Job = @Sendable (LiveActivityServer) -> Void

    /// {lock} pending jobs, and whether a wake-up is already on its way.
    private let state = Locked<(jobs: [Job], wakePending: Bool)>(([], false))
    /// Set by ``post(_:)``, cleared by ``drain()``: a lock-free hint for the service thread's hot path.
    private let pending = Atomic<Bool>(false)

    /// Whether jobs may be waiting (a relaxed read: one plain load, cheap enough for every write).
    var hasJobs: Bool { pending.load(ordering: .relaxed) }

    /// Queues a job.
    /// - Returns: whether the caller must wake the service thread.
    func post(_ job: @escaping Job) -> Bool {
        state.withLock { state in
            state.jobs.append(job)
            pending.store(true, ordering: .relaxed)
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
            pending.store(false, ordering: .relaxed)
            return jobs
        }
    }
}
