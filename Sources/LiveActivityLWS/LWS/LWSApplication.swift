import LiveActivityCore

/// The server as the lws adapter (``LWSServerAdapter``) sees it: the policies and state behind the
/// connections, reached with values (``UpgradeRequest``, ``Session``, bytes) and never with lws's own.
///
/// One call per session event or per round of the service loop, none per frame: the write path reads the
/// ``Hub`` directly. Every method runs on the service thread (the thread that called
/// ``LWSServerAdapter/run()``), in the order lws delivers its callbacks.
package protocol LWSApplication: AnyObject {
    // MARK: Life of the service loop

    /// The service thread has started, before anything else (the application may record which thread it is).
    func serviceThreadStarted()
    /// The HTTP entry point: the route table for requests on the main port (static files are lws's). Called
    /// once, before the context is made; its first segments become lws's dynamic mounts.
    func makeRouter() -> Router
    /// The server listens on `port` (the kernel's pick when the settings said 0). The application starts what
    /// runs beside the loop and runs its first timer pass; the adapter then enters the loop.
    func serviceStarted(port: Int)
    /// Starting failed (no context, or the address could not be bound); ``LWSServerAdapter/run()`` returns
    /// right after this call.
    func serviceFailedToStart(_ error: LWSStartError)
    /// ``LWSServerAdapter/requestStop()`` was seen: the last call before the adapter closes every client
    /// (the application finishes what the store still has to say, so clients get their acknowledgements).
    func serviceWillShutDown()
    /// The context is destroyed and every session released; ``LWSServerAdapter/run()`` returns after this.
    func serviceDidStop()

    // MARK: Rounds

    /// `lws_cancel_service` woke the loop (``LWSServerAdapter/wake()``): run what other threads handed over.
    func serviceWoken()
    /// The end of a round of `lws_service` (and of a broadcast written from the loop): hand what the round
    /// accepted to the store as one group.
    func releaseHeldSubmissions()
    /// Whether the store is recording changes now (handed over, not reported yet): their events will be
    /// broadcast when it reports, so a broadcast due may wait for them (at most 1 ms) and go out in the same
    /// pass. Always false for a store that records at once. Called once a round.
    var storeIsRecording: Bool { get }
    /// Between two clients' writes in a long round (each WRITEABLE, each session of ``LWSServerAdapter``'s
    /// broadcast pass): hand held changes over if they waited long enough, and run the inbox if it has jobs.
    /// Called once per session written, so it must be cheap when there is nothing to do.
    /// - Parameter beforeInbox: called first when the inbox has jobs (they may broadcast, and so move the hub's
    ///   frames, or close sessions): the adapter submits the sends it queued (``SendQueue``), whose bytes it borrows
    ///   from the hub.
    func betweenWrites(beforeInbox: () -> Void)
    /// The timer scheduled with ``LWSServerAdapter/scheduleTimer(after:)`` is due. What it broadcasts is
    /// written right after it returns.
    func timerFired()

    // MARK: Sessions

    /// Decides whether a WebSocket handshake may proceed.
    /// - Returns: nil to accept, else the refusal the adapter answers with (an HTTP/1.1 status and body).
    func admit(_ upgrade: UpgradeRequest) -> UpgradeRefusal?
    /// Whether an accepted client is expected to send much (a controller publishing updates), which sizes the
    /// receive buffer lws keeps for the connection (``LWSContextResources/controllerReceiveBufferBytes`` rather
    /// than ``LWSContextResources/receiveBufferBytes``). A wrong guess costs only speed: messages arrive in
    /// more pieces, which the session joins.
    func publishes(_ upgrade: UpgradeRequest) -> Bool
    /// A handshake completed: registers the client and queues its first message.
    /// - Parameters:
    ///   - upgrade: the handshake's values.
    ///   - connection: the opaque handle the hub's actions name the connection by.
    ///   - deflate: what permessage-deflate allows the client, when it negotiated it (nil: plain).
    ///   - offer: the client's `Sec-WebSocket-Extensions`, for the debug log.
    /// - Returns: the session, which the adapter keeps (retained) in the connection's per-session data until
    ///   ``sessionClosed(_:)``.
    func sessionOpened(_ upgrade: UpgradeRequest, connection: ConnectionHandle, deflate: PermessageDeflate?,
                       offer: String?) -> Session
    /// One fragment of a client message (inflated when permessage-deflate is on).
    /// - Parameters:
    ///   - bytes: valid only during the call.
    ///   - isFinal: whether this fragment ends the message.
    ///   - isBinary: whether the message is a binary one.
    func received(_ bytes: UnsafeRawBufferPointer, isFinal: Bool, isBinary: Bool, session: Session)
    /// The connection has closed: the session is released right after this call.
    func sessionClosed(_ session: Session)
}

/// Why a WebSocket handshake is refused: an HTTP answer instead of `101 Switching Protocols`, by the
/// application (``LWSApplication/admit(_:)``) or by the header checks (``HandshakeCheck``). Thread-safe (a value).
package struct UpgradeRefusal: Error, Equatable, Sendable {
    /// 400, 401, 403, 404, 410, 426 or 503.
    package let status: Int
    /// The sentence after the status in the plain-text body (`410 Gone: reason`), naming the header or
    /// parameter at fault.
    package let reason: String
    /// Header fields the answer carries besides the usual ones (426: the versions spoken, RFC 6455 §4.4).
    package let headers: [String: String]

    /// A refusal with `status`, `reason` and any extra `headers`.
    package init(status: Int, reason: String, headers: [String: String] = [:]) {
        self.status = status
        self.reason = reason
        self.headers = headers
    }
}
