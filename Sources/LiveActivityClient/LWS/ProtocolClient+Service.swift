import CLibWebSockets
import Foundation
import LiveActivityCore
import LWSSupport

/// The service thread: the lws context, the connection and every lws callback. Service thread only.
extension ProtocolClient {
    /// Creates the context, starts the connection, runs `lws_service` until the connection is over, then
    /// destroys the context and wakes every waiter.
    func serviceMain() {
        let url = configuration.url
        LibraryLog.install(echoToStandardError: configuration.libraryLogging)
        // Outlives lws_context_destroy below: it holds the protocols table and every string lws points at.
        let resources = LWSContextMemory()
        var info = lws_context_creation_info()
        info.port = -1 // CONTEXT_PORT_NO_LISTEN: a client-only context
        info.protocols = UnsafePointer(resources.protocols([
            .init(name: ClientConfiguration.subprotocol, callback: protocolClientCallback),
        ]))
        info.user = Unmanaged.passUnretained(self).toOpaque()
        info.uid = -1
        info.gid = -1
        info.fd_limit_per_thread = 8
        info.timeout_secs = UInt32(max(1, configuration.connectTimeout.timeInterval.rounded(.up)))
        info.connect_timeout_secs = info.timeout_secs
        if url.secure {
            info.options |= UInt64(LWS_SERVER_OPTION_DO_SSL_GLOBAL_INIT)
            if let file = configuration.certificateAuthorityFile { info.client_ssl_ca_filepath = resources.keep(file) }
        }
        guard let context = lws_create_context(&info) else {
            finish(ClientError(.connectionFailed, "cannot create a libwebsockets client context"))
            finished.signal()
            return
        }
        condition.lock()
        liveContext = ClientContextHandle(pointer: context)
        let abandonEarly = closeRequested
        condition.unlock()

        var connection = lws_client_connect_info()
        connection.context = context
        connection.address = resources.keep(url.host)
        connection.port = Int32(url.port)
        connection.path = resources.keep(url.path)
        connection.host = resources.keep(url.hostHeader)
        // No Origin: a script is not a browser page (lws would send `http://HOST` even over wss, and a server
        // that checks same-origin, ours included, refuses that for its https origin).
        connection.protocol = resources.keep(ClientConfiguration.subprotocol)
        if url.secure {
            var flags = Int32(LCCSCF_USE_SSL.rawValue)
            if configuration.allowInsecureTLS {
                flags |= Int32(LCCSCF_ALLOW_SELFSIGNED.rawValue | LCCSCF_SKIP_SERVER_CERT_HOSTNAME_CHECK.rawValue
                               | LCCSCF_ALLOW_EXPIRED.rawValue)
            }
            connection.ssl_connection = flags
        }
        if !abandonEarly, lws_client_connect_via_info(&connection) == nil {
            finish(ClientError(.connectionFailed, "cannot connect to \(url)"))
        }

        while !connectionDone, !abandon.load(ordering: .sequentiallyConsistent) {
            if lws_service(context, 0) < 0 { break }
        }

        condition.lock()
        liveContext = nil
        condition.unlock()
        lws_context_destroy(context)
        self.connection = nil
        withExtendedLifetime(resources) {}
        finish(ClientError(.connectionClosed, "the connection to \(url) was closed"))
        finished.signal()
    }

    /// Ends the conversation with `error` unless it already ended, and wakes every waiter.
    func finish(_ error: ClientError) {
        connectionDone = true
        condition.lock()
        if case .closed = phase {} else { phase = .closed(error) }
        condition.broadcast()
        condition.unlock()
    }

    // MARK: Callbacks

    /// Adds `Authorization: Bearer <token>` to the handshake when a token is configured.
    /// - Parameters:
    ///   - cursor: where lws's header buffer continues; advanced past what is written.
    ///   - space: bytes left in that buffer.
    /// - Returns: -1 (abandon the connection) when the header does not fit, else 0.
    func appendHandshakeHeaders(_ wsi: OpaquePointer, cursor: UnsafeMutablePointer<UnsafeMutablePointer<UInt8>?>,
                                space: Int) -> Int32 {
        guard let token = configuration.token, let start = cursor.pointee else { return 0 }
        let value = Array("Bearer \(token)".utf8)
        let failed = value.withUnsafeBufferPointer { buffer in
            lws_add_http_header_by_name(wsi, "authorization:", buffer.baseAddress, Int32(buffer.count), cursor, start + space)
        }
        return failed == 0 ? 0 : -1
    }

    /// The connection or its handshake failed (CLIENT_CONNECTION_ERROR).
    /// - Parameter reason: lws's diagnostic, e.g. `HS: ws upgrade response not 101`.
    func connectionFailed(_ reason: String?) {
        connection = nil
        let detail = LibraryLog.takeLastError()
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
    func established(_ wsi: OpaquePointer) {
        connection = ClientConnectionHandle(wsi: wsi)
        condition.lock()
        if case .connecting = phase { phase = .open }
        let pending = !outbox.isEmpty || closeRequested
        condition.broadcast()
        condition.unlock()
        if pending { lws_callback_on_writable(wsi) }
    }

    /// Collects one fragment; once the message is whole, queues it for the reader.
    /// - Returns: -1 to drop the connection when a message exceeds ``maximumMessageBytes``, else 0.
    func received(_ bytes: UnsafeRawBufferPointer, wsi: OpaquePointer) -> Int32 {
        guard incoming.count + bytes.count <= Self.maximumMessageBytes else {
            incoming = []
            finish(ClientError(.connectionClosed, "the server sent a message over \(Self.maximumMessageBytes) bytes"))
            return -1
        }
        incoming.append(contentsOf: bytes)
        guard lws_is_final_fragment(wsi) != 0, lws_remaining_packet_payload(wsi) == 0 else { return 0 }
        let message = IncomingMessage(bytes: incoming)
        incoming = []
        condition.lock()
        inbox.append(message)
        condition.broadcast()
        condition.unlock()
        return 0
    }

    /// Writes one queued frame (one `lws_write` per WRITEABLE), or the close frame once the queue is empty
    /// and ``close()`` was called; re-arms while more is pending.
    /// - Returns: -1 to close the connection, else 0.
    func writable(_ wsi: OpaquePointer) -> Int32 {
        condition.lock()
        let frame = outbox.isEmpty ? nil : outbox.removeFirst()
        let more = !outbox.isEmpty
        let closing = closeRequested
        condition.unlock()
        if let frame {
            let headroom = clws_pre()
            var buffer = [UInt8](repeating: 0, count: headroom + frame.count)
            buffer.replaceSubrange(headroom..., with: frame)
            let written = buffer.withUnsafeMutableBufferPointer { storage in
                lws_write(wsi, storage.baseAddress! + headroom, frame.count, LWS_WRITE_TEXT)
            }
            if written < frame.count { return -1 }
            if more || closing { lws_callback_on_writable(wsi) }
            return 0
        }
        if closing {
            var reason = Array("client done".utf8)
            lws_close_reason(wsi, LWS_CLOSE_STATUS_NORMAL, &reason, reason.count)
            return -1
        }
        return 0
    }

    /// The server sent a close frame; remembers its code and reason for the error message.
    /// - Parameter payload: the close frame's payload (2-byte big-endian code, then UTF-8 reason).
    func peerClosing(_ payload: UnsafeRawBufferPointer) {
        guard payload.count >= 2 else {
            peerClose = "the server closed the connection"
            return
        }
        let code = Int(payload[0]) << 8 | Int(payload[1])
        let reason = String(decoding: payload.dropFirst(2), as: UTF8.self)
        peerClose = "the server closed the connection (\(code)\(reason.isEmpty ? "" : " \(reason)"))"
    }

    /// The connection ended (CLIENT_CLOSED), by either side or the network.
    func closed(_ wsi: OpaquePointer) {
        connection = nil
        condition.lock()
        let byUs = closeRequested
        condition.unlock()
        let why = byUs ? "the connection was closed" : (peerClose ?? "the connection to \(configuration.url) was lost")
        finish(ClientError(.connectionClosed, why))
    }

    /// Another thread queued frames or asked to close (EVENT_WAIT_CANCELLED): ask for WRITEABLE, or give
    /// up a connection that was never established.
    func wakeupReceived() {
        condition.lock()
        wakeupPending = false
        let pending = !outbox.isEmpty || closeRequested
        let closing = closeRequested
        condition.unlock()
        if let wsi = connection?.wsi {
            if pending { lws_callback_on_writable(wsi) }
        } else if closing {
            finish(ClientError(.connectionClosed, "closed before the connection was established"))
        }
    }

    private func describe(_ reason: String?) -> String {
        guard let reason, !reason.isEmpty else { return "connection failed" }
        return reason
    }
}

/// The client's lws context, for `lws_cancel_service` from other threads (the one lws call safe from any
/// thread); opaque outside this folder.
struct ClientContextHandle: @unchecked Sendable {
    let pointer: OpaquePointer

    /// Wakes the client's service thread (EVENT_WAIT_CANCELLED). Thread-safe.
    func cancelService() { lws_cancel_service(pointer) }
}

/// The client's established lws connection; opaque outside this folder. Service thread only.
struct ClientConnectionHandle {
    let wsi: OpaquePointer
}
