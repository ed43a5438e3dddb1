import Foundation
import LiveActivityClientLWS
import LiveActivityCore

/// The conversation's side of the service thread: ``LWSClientTransport`` (LiveActivityClientLWS) owns the lws
/// context and connection and calls these with values. Service thread only, unless said otherwise.
extension ProtocolClient: LWSClientDelegate {
    /// The service thread's body: runs the transport until the connection is over, then wakes every waiter.
    func serviceMain() {
        let url = configuration.url
        let settings = LWSClientSettings(host: url.host, port: url.port, path: url.path, hostHeader: url.hostHeader, secure: url.secure,
                                         subprotocol: ClientConfiguration.subprotocol, token: configuration.token,
                                         certificateAuthorityFile: configuration.certificateAuthorityFile,
                                         allowInsecureTLS: configuration.allowInsecureTLS,
                                         timeoutSeconds: UInt32(max(1, configuration.connectTimeout.timeInterval.rounded(.up))),
                                         echoLibraryLog: configuration.libraryLogging, maximumMessageBytes: Self.maximumMessageBytes)
        LWSClientTransport(settings: settings).run(self)
    }

    /// Ends the conversation with `error` unless it already ended, and wakes every waiter.
    func finish(_ error: ClientError) {
        connectionDone = true
        condition.lock()
        if case .closed = phase {} else { phase = .closed(error) }
        condition.broadcast()
        condition.unlock()
    }

    // MARK: LWSClientDelegate

    /// Publishes the waker for other threads (``wake()``).
    /// - Returns: whether ``close()`` came first (then no connection is attempted).
    package func transportReady(_ waker: LWSClientWaker) -> Bool {
        condition.lock()
        liveContext = waker
        let abandonEarly = closeRequested
        condition.unlock()
        return abandonEarly
    }

    /// Whether the service loop goes on: the connection is not over and ``close()`` did not give up on it.
    package var keepsServicing: Bool {
        !connectionDone && !abandon.load(ordering: .sequentiallyConsistent)
    }

    /// The transport could not start.
    package func transportFailed(_ failure: LWSClientStartFailure) {
        switch failure {
        case .context: finish(ClientError(.connectionFailed, "cannot create a libwebsockets client context"))
        case .connect: finish(ClientError(.connectionFailed, "cannot connect to \(configuration.url)"))
        }
    }

    /// The connection or its handshake failed (CLIENT_CONNECTION_ERROR).
    /// - Parameters:
    ///   - reason: lws's diagnostic, e.g. `HS: ws upgrade response not 101`.
    ///   - libraryError: the last error lws logged, which names a failed certificate check.
    package func connectionFailed(reason: String?, libraryError detail: String?) {
        var why = describe(reason)
        if configuration.url.secure, why.contains("SSL") || (detail?.contains("SSL") ?? false) {
            // lws's own reason is an opaque OpenSSL code; its log line names the certificate problem.
            why = "TLS handshake failed: \(detail ?? why)"
        } else if let detail, !why.contains(detail) {
            why += " (\(detail))"
        }
        if why.contains("unauthorized") || why.contains(" 401") {
            // The server answered the handshake with 401: the token matches no role (docs/SECURITY.md).
            let message = configuration.token == nil
                ? "the server needs a token (HTTP 401 on the handshake); give --token or LIVEACTIVITY_TOKEN"
                : "the token matches no role on the server (HTTP 401 on the handshake)"
            finish(ClientError(refusal: ClientError.Refusal(code: "unauthorized", field: nil, message: message)))
            return
        }
        finish(ClientError(.connectionFailed, "cannot connect to \(configuration.url): \(why)"))
    }

    /// The handshake completed (CLIENT_ESTABLISHED).
    /// - Returns: whether frames or a close wait to be written.
    package func established() -> Bool {
        condition.lock()
        if case .connecting = phase { phase = .open }
        let pending = !outbox.isEmpty || closeRequested
        condition.broadcast()
        condition.unlock()
        return pending
    }

    /// Queues one whole message for the reader.
    package func received(message: [UInt8]) {
        let message = IncomingMessage(bytes: message)
        condition.lock()
        inbox.append(message)
        condition.broadcast()
        condition.unlock()
    }

    /// A message over ``maximumMessageBytes``: the conversation ends.
    package func receivedTooLarge() {
        finish(ClientError(.connectionClosed, "the server sent a message over \(Self.maximumMessageBytes) bytes"))
    }

    /// The oldest queued frame (one per WRITEABLE), or the close once the queue is empty and ``close()`` was
    /// called.
    package func nextWrite() -> LWSClientWrite {
        condition.lock()
        let frame = outbox.isEmpty ? nil : outbox.removeFirst()
        let more = !outbox.isEmpty
        let closing = closeRequested
        condition.unlock()
        if let frame { return .frame(frame, more: more || closing) }
        return closing ? .close : .nothing
    }

    /// The server sent a close frame; remembers its code and reason for the error message.
    /// - Parameter payload: the close frame's payload (2-byte big-endian code, then UTF-8 reason).
    package func peerClosing(_ payload: UnsafeRawBufferPointer) {
        guard payload.count >= 2 else {
            peerClose = "the server closed the connection"
            return
        }
        let code = Int(payload[0]) << 8 | Int(payload[1])
        let reason = String(decoding: payload.dropFirst(2), as: UTF8.self)
        peerClose = "the server closed the connection (\(code)\(reason.isEmpty ? "" : " \(reason)"))"
    }

    /// The connection ended (CLIENT_CLOSED), by either side or the network.
    package func closed() {
        condition.lock()
        let byUs = closeRequested
        condition.unlock()
        let why = byUs ? "the connection was closed" : (peerClose ?? "the connection to \(configuration.url) was lost")
        finish(ClientError(.connectionClosed, why))
    }

    /// Another thread queued frames or asked to close (EVENT_WAIT_CANCELLED): ask for WRITEABLE, or give
    /// up a connection that was never established.
    /// - Returns: whether to ask for WRITEABLE.
    package func woken(connected: Bool) -> Bool {
        condition.lock()
        wakeupPending = false
        let pending = !outbox.isEmpty || closeRequested
        let closing = closeRequested
        condition.unlock()
        if connected { return pending }
        if closing { finish(ClientError(.connectionClosed, "closed before the connection was established")) }
        return false
    }

    /// The context is about to go: other threads may no longer wake it.
    package func transportWillEnd() {
        condition.lock()
        liveContext = nil
        condition.unlock()
    }

    /// The context is gone: the conversation is over, and ``close()`` may return.
    package func transportEnded() {
        finish(ClientError(.connectionClosed, "the connection to \(configuration.url) was closed"))
        finished.signal()
    }

    private func describe(_ reason: String?) -> String {
        guard let reason, !reason.isEmpty else { return "connection failed" }
        return reason
    }
}
