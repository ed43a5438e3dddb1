import Foundation
import LiveActivityCore
import LiveActivityLWS

/// The server as its lws adapter sees it (``LWSApplication``): each call goes to the server's own method.
/// A type of its own, so that the server's methods stay internal and the adapter's hold on the server is
/// unowned (the server owns the adapter, which owns this).
///
/// Service thread only, as every ``LWSApplication`` call is.
final class ServerLWSApplication: LWSApplication {
    /// The server; it outlives its adapter's service loop (the service thread's closure holds it).
    private unowned(unsafe) let server: LiveActivityServer
    /// The server's committer and inbox, which ``betweenWrites(beforeInbox:)`` checks once per client written: held here
    /// (and the committer borrowed there) so that those checks take no retain and release of them (the
    /// server owns both for as long as it has this bridge).
    private unowned(unsafe) let committer: ChangeCommitter
    private unowned(unsafe) let inbox: ServiceInbox

    /// A bridge to `server`, made once its state is wired (it reads the committer).
    init(server: LiveActivityServer) {
        self.server = server
        committer = server.committer
        inbox = server.inbox
    }

    // MARK: Life of the service loop

    func serviceThreadStarted() {
        server.serviceThread.withLock { $0 = pthread_self() }
    }

    func makeRouter() -> Router {
        server.makeRouter()
    }

    func serviceStarted(port: Int) {
        let server = self.server
        server.committer.writer.start()
        finishStartup(.success(port))
        server.features.replication.start()
        server.runInbox()
        server.logger.info("listening", ["host": server.configuration.host, "port": "\(port)",
                                         "public": server.configuration.publicDirectory.path,
                                         "event_loop": server.adapter.eventLoop?.rawValue ?? "unknown",
                                         "sends": server.adapter.sends])
        if server.configuration.ioUring, server.adapter.sends != "io_uring" {
            server.logger.warning("io_uring is not available (a kernel before 5.6, a seccomp profile, or kernel.io_uring_disabled): each write is its own send(2)", [:])
        }
        server.timing.timerFired()
        // Deadlines that passed while the server was down are durable before the first client is served.
        server.finishStoreWork()
    }

    func serviceFailedToStart(_ error: LWSStartError) {
        switch error {
        case .context:
            finishStartup(.failure(.context))
        case .listen:
            finishStartup(.failure(.listen(host: server.configuration.host, port: server.configuration.port)))
        }
    }

    func serviceWillShutDown() {
        server.features.replication.stop()
        server.finishStoreWork()
    }

    func serviceDidStop() {
        server.committer.writer.stop()
        // Reads still running hand their results to an inbox nobody drains any more; they must be done
        // before the server may go.
        server.committer.reader.drain()
        server.logger.info("stopped")
        server.finished.signal()
    }

    // MARK: Rounds

    func serviceWoken() {
        server.runInbox()
    }

    func releaseHeldSubmissions() {
        server.committer.releaseHeldSubmissions()
    }

    var storeIsRecording: Bool {
        !committer.writer.isSynchronous && !committer.pipeline.isIdle
    }

    @inline(__always)
    func betweenWrites(beforeInbox: () -> Void) {
        // A round that writes to thousands of clients lasts tens of milliseconds: changes held for the store
        // and the store's results (the inbox) are not left waiting for its end.
        // Borrowed, not loaded: a plain use of the unowned(unsafe) reference still took a retain and a
        // release around the call (the disassembly shows them), once per client written.
        Unmanaged.passUnretained(committer)._withUnsafeGuaranteedRef { $0.releaseHeldSubmissionsIfDue() }
        if inbox.hasJobs {
            beforeInbox()
            server.runInbox()
        }
    }

    func timerFired() {
        server.timing.timerFired()
    }

    // MARK: Sessions

    func admit(_ upgrade: UpgradeRequest) -> UpgradeRefusal? {
        server.sessions.admit(upgrade)
    }

    func publishes(_ upgrade: UpgradeRequest) -> Bool {
        server.sessions.role(for: upgrade) == .controller
    }

    func sessionOpened(_ upgrade: UpgradeRequest, connection: ConnectionHandle, deflate: PermessageDeflate?, offer: String?) -> Session {
        server.sessions.sessionOpened(upgrade, connection: connection, deflate: deflate, offer: offer)
    }

    func received(_ bytes: UnsafeRawBufferPointer, isFinal: Bool, isBinary: Bool, session: Session) {
        server.sessions.received(bytes, isFinal: isFinal, isBinary: isBinary, session: session)
    }

    func sessionClosed(_ session: Session) {
        server.sessions.sessionClosed(session)
    }

    /// Reports how startup went to ``LiveActivityServer/start()`` (which waits on `started`).
    private func finishStartup(_ result: Result<Int, ServerError>) {
        server.startupResult.withLock { $0 = result }
        server.started.signal()
        if case .failure = result { server.finished.signal() }
    }
}
