import CLibWebSockets
import Foundation
import LiveActivityCore
import LWSSupport

/// Where and how the client connects, as libwebsockets needs it. Thread-safe (a value).
package struct LWSClientSettings: Sendable {
    /// The server's host name or address, to connect to.
    package var host: String
    /// The server's TCP port.
    package var port: Int
    /// The request path (`/ws`, with its query if any).
    package var path: String
    /// The `Host` header (`host:port`).
    package var hostHeader: String
    /// Whether to connect with TLS (`wss://`).
    package var secure: Bool
    /// The WebSocket subprotocol asked for.
    package var subprotocol: String
    /// Sent as `Authorization: Bearer …` in the handshake, when set.
    package var token: String?
    /// PEM bundle of the certificate authorities to trust (TLS), when set.
    package var certificateAuthorityFile: String?
    /// Accept a self-signed, expired or misnamed server certificate (TLS).
    package var allowInsecureTLS: Bool
    /// Seconds lws allows the connection and the handshake (at least 1).
    package var timeoutSeconds: UInt32
    /// Echo every lws log line to standard error.
    package var echoLibraryLog: Bool
    /// Largest message accepted from the server, in bytes; a larger one drops the connection.
    package var maximumMessageBytes: Int

    /// Settings with every value given (see each property).
    package init(host: String, port: Int, path: String, hostHeader: String, secure: Bool, subprotocol: String, token: String?,
                 certificateAuthorityFile: String?, allowInsecureTLS: Bool, timeoutSeconds: UInt32, echoLibraryLog: Bool,
                 maximumMessageBytes: Int) {
        self.host = host
        self.port = port
        self.path = path
        self.hostHeader = hostHeader
        self.secure = secure
        self.subprotocol = subprotocol
        self.token = token
        self.certificateAuthorityFile = certificateAuthorityFile
        self.allowInsecureTLS = allowInsecureTLS
        self.timeoutSeconds = timeoutSeconds
        self.echoLibraryLog = echoLibraryLog
        self.maximumMessageBytes = maximumMessageBytes
    }
}

/// Why the transport could not start (``LWSClientDelegate/transportFailed(_:)``).
package enum LWSClientStartFailure: Sendable, Equatable {
    /// `lws_create_context` failed.
    case context
    /// `lws_client_connect_via_info` failed at once (no connection attempt).
    case connect
}

/// What the transport's next WRITEABLE writes (``LWSClientDelegate/nextWrite()``).
package enum LWSClientWrite {
    /// One text frame; `more`: ask for WRITEABLE again afterwards.
    case frame([UInt8], more: Bool)
    /// Send a close frame (1000 "client done") and end the connection.
    case close
    /// Nothing waits.
    case nothing
}

/// The client as its lws transport sees it: the conversation's state and policy, with no lws. Every method
/// runs on the transport's service thread (the thread that called ``LWSClientTransport/run(_:)``).
package protocol LWSClientDelegate: AnyObject {
    /// The context exists: `waker` may now wake the service thread from any thread.
    /// - Returns: whether to give up before connecting (the caller already asked to close).
    func transportReady(_ waker: LWSClientWaker) -> Bool
    /// Whether the service loop goes on (the conversation is not over and nobody abandoned it).
    var keepsServicing: Bool { get }
    /// The transport could not start: no context, or no connection attempt.
    func transportFailed(_ failure: LWSClientStartFailure)
    /// The connection or its handshake failed (CLIENT_CONNECTION_ERROR).
    /// - Parameters:
    ///   - reason: lws's diagnostic, e.g. `HS: ws upgrade response not 101`.
    ///   - libraryError: the last error line lws logged, if any (a failed certificate check is said only there).
    func connectionFailed(reason: String?, libraryError: String?)
    /// The handshake completed (CLIENT_ESTABLISHED).
    /// - Returns: whether something waits to be written (the transport then asks for WRITEABLE).
    func established() -> Bool
    /// One whole message from the server.
    func received(message: [UInt8])
    /// The server sent a message over ``LWSClientSettings/maximumMessageBytes``; the connection is dropped.
    func receivedTooLarge()
    /// What to write at this WRITEABLE.
    func nextWrite() -> LWSClientWrite
    /// The server sent a close frame.
    /// - Parameter payload: its payload (2-byte big-endian code, then UTF-8 reason), valid during the call.
    func peerClosing(_ payload: UnsafeRawBufferPointer)
    /// The connection ended (CLIENT_CLOSED), by either side or the network.
    func closed()
    /// Another thread woke the service thread (EVENT_WAIT_CANCELLED).
    /// - Parameter connected: whether the connection is established.
    /// - Returns: whether to ask for WRITEABLE (only heeded when connected).
    func woken(connected: Bool) -> Bool
    /// The context is about to be destroyed: the waker must not be used any more.
    func transportWillEnd()
    /// The context is destroyed; ``LWSClientTransport/run(_:)`` returns after this call.
    func transportEnded()
}

/// Wakes the client's service thread (EVENT_WAIT_CANCELLED) with `lws_cancel_service`, the one lws call safe
/// from any thread. Thread-safe; valid until ``LWSClientDelegate/transportWillEnd()``.
package struct LWSClientWaker: @unchecked Sendable {
    let pointer: OpaquePointer

    /// Wakes the client's service thread. Thread-safe.
    package func cancelService() { lws_cancel_service(pointer) }
}

/// The script client's edge to libwebsockets: its context, its one connection and the callback, on one
/// service thread. The conversation (queues, waiters, errors) is the delegate's.
///
/// Threading: ``run(_:)`` is the service thread's whole life; the delegate is called on that thread only.
package final class LWSClientTransport {
    /// What to connect to and how.
    let settings: LWSClientSettings
    /// The delegate, for the length of ``run(_:)``.
    private(set) var delegate: (any LWSClientDelegate)!
    /// The established connection; nil before CLIENT_ESTABLISHED and after CLIENT_CLOSED.
    private var connection: OpaquePointer?
    /// The message being received, across fragments.
    private var incoming: [UInt8] = []

    /// A transport for `settings`; nothing happens until ``run(_:)``.
    package init(settings: LWSClientSettings) {
        self.settings = settings
    }

    /// Creates the context, starts the connection, runs `lws_service` while the delegate says so, then
    /// destroys the context and tells the delegate. Call once, on the thread that is to be the service thread.
    package func run(_ delegate: any LWSClientDelegate) {
        self.delegate = delegate
        defer { self.delegate = nil }
        LibraryLog.install(echoToStandardError: settings.echoLibraryLog)
        // Outlives lws_context_destroy below: it holds the protocols table and every string lws points at.
        let resources = LWSContextMemory()
        var info = lws_context_creation_info()
        info.port = -1 // CONTEXT_PORT_NO_LISTEN: a client-only context
        info.protocols = UnsafePointer(resources.protocols([
            .init(name: settings.subprotocol, callback: protocolClientCallback),
        ]))
        info.user = Unmanaged.passUnretained(self).toOpaque()
        info.uid = -1
        info.gid = -1
        info.fd_limit_per_thread = 8
        info.timeout_secs = settings.timeoutSeconds
        info.connect_timeout_secs = info.timeout_secs
        if settings.secure {
            info.options |= UInt64(LWS_SERVER_OPTION_DO_SSL_GLOBAL_INIT)
            if let file = settings.certificateAuthorityFile { info.client_ssl_ca_filepath = resources.keep(file) }
        }
        guard let context = lws_create_context(&info) else {
            delegate.transportFailed(.context)
            delegate.transportEnded()
            return
        }
        let abandonEarly = delegate.transportReady(LWSClientWaker(pointer: context))

        var connection = lws_client_connect_info()
        connection.context = context
        connection.address = resources.keep(settings.host)
        connection.port = Int32(settings.port)
        connection.path = resources.keep(settings.path)
        connection.host = resources.keep(settings.hostHeader)
        // No Origin: a script is not a browser page (lws would send `http://HOST` even over wss, and a server
        // that checks same-origin, ours included, refuses that for its https origin).
        connection.protocol = resources.keep(settings.subprotocol)
        if settings.secure {
            var flags = Int32(LCCSCF_USE_SSL.rawValue)
            if settings.allowInsecureTLS {
                flags |= Int32(LCCSCF_ALLOW_SELFSIGNED.rawValue | LCCSCF_SKIP_SERVER_CERT_HOSTNAME_CHECK.rawValue
                               | LCCSCF_ALLOW_EXPIRED.rawValue)
            }
            connection.ssl_connection = flags
        }
        if !abandonEarly, lws_client_connect_via_info(&connection) == nil {
            delegate.transportFailed(.connect)
        }

        while delegate.keepsServicing {
            if lws_service(context, 0) < 0 { break }
        }

        delegate.transportWillEnd()
        lws_context_destroy(context)
        self.connection = nil
        withExtendedLifetime(resources) {}
        delegate.transportEnded()
    }

    // MARK: Callbacks

    /// Adds `Authorization: Bearer <token>` to the handshake when a token is configured.
    /// - Parameters:
    ///   - cursor: where lws's header buffer continues; advanced past what is written.
    ///   - space: bytes left in that buffer.
    /// - Returns: -1 (abandon the connection) when the header does not fit, else 0.
    func appendHandshakeHeaders(_ wsi: OpaquePointer, cursor: UnsafeMutablePointer<UnsafeMutablePointer<UInt8>?>,
                                space: Int) -> Int32 {
        guard let token = settings.token, let start = cursor.pointee else { return 0 }
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
        delegate.connectionFailed(reason: reason, libraryError: LibraryLog.takeLastError())
    }

    /// The handshake completed (CLIENT_ESTABLISHED).
    func established(_ wsi: OpaquePointer) {
        connection = wsi
        if delegate.established() { lws_callback_on_writable(wsi) }
    }

    /// Collects one fragment; once the message is whole, hands it to the delegate.
    /// - Returns: -1 to drop the connection when a message exceeds the limit, else 0.
    func received(_ bytes: UnsafeRawBufferPointer, wsi: OpaquePointer) -> Int32 {
        guard incoming.count + bytes.count <= settings.maximumMessageBytes else {
            incoming = []
            delegate.receivedTooLarge()
            return -1
        }
        incoming.append(contentsOf: bytes)
        guard lws_is_final_fragment(wsi) != 0, lws_remaining_packet_payload(wsi) == 0 else { return 0 }
        let message = incoming
        incoming = []
        delegate.received(message: message)
        return 0
    }

    /// Writes one queued frame (one `lws_write` per WRITEABLE), or the close frame once the queue is empty
    /// and the client asked to close; re-arms while more is pending.
    /// - Returns: -1 to close the connection, else 0.
    func writable(_ wsi: OpaquePointer) -> Int32 {
        switch delegate.nextWrite() {
        case .frame(let frame, let more):
            let headroom = clws_pre()
            var buffer = [UInt8](repeating: 0, count: headroom + frame.count)
            buffer.replaceSubrange(headroom..., with: frame)
            let written = buffer.withUnsafeMutableBufferPointer { storage in
                lws_write(wsi, storage.baseAddress! + headroom, frame.count, LWS_WRITE_TEXT)
            }
            if written < frame.count { return -1 }
            if more { lws_callback_on_writable(wsi) }
            return 0
        case .close:
            var reason = Array("client done".utf8)
            lws_close_reason(wsi, LWS_CLOSE_STATUS_NORMAL, &reason, reason.count)
            return -1
        case .nothing:
            return 0
        }
    }

    /// The server sent a close frame (WS_PEER_INITIATED_CLOSE).
    func peerClosing(_ payload: UnsafeRawBufferPointer) {
        delegate.peerClosing(payload)
    }

    /// The connection ended (CLIENT_CLOSED).
    func closed(_ wsi: OpaquePointer) {
        connection = nil
        delegate.closed()
    }

    /// Another thread woke the service thread (EVENT_WAIT_CANCELLED): ask for WRITEABLE if the delegate wants.
    func wakeupReceived() {
        let wantsWrite = delegate.woken(connected: connection != nil)
        if let wsi = connection, wantsWrite { lws_callback_on_writable(wsi) }
    }
}
