import CLibWebSockets
import Foundation
import LiveActivityCore

/// The WebSocket side of libwebsockets: turns callbacks into values for the server and the hub, and
/// performs the hub's actions. Service thread only.
///
/// Each WebSocket connection's per-session data holds one unmanaged reference to its ``Session``
/// (retained at ESTABLISHED, released at CLOSED), so RECEIVE and WRITEABLE reach it with no lookup.
extension LiveActivityServer {
    // MARK: Callbacks

    /// FILTER_PROTOCOL_CONNECTION: admits the handshake or answers it with an HTTP status.
    /// - Returns: 0 to accept, nonzero to refuse.
    func webSocketFilter(_ wsi: OpaquePointer, sessionData: UnsafeMutableRawPointer?) -> Int32 {
        // The per-session data may still hold what an HTTP request on this connection stored there.
        sessionData?.storeBytes(of: nil, as: UnsafeMutableRawPointer?.self)
        guard let refusal = admit(upgradeRequest(wsi)) else { return 0 }
        return refuseUpgrade(wsi, refusal.status, refusal.reason)
    }

    /// ESTABLISHED: registers the session and keeps it in the per-session data.
    func webSocketEstablished(_ wsi: OpaquePointer, sessionData: UnsafeMutableRawPointer) {
        // zlib's smallest compression state: about 25 KB per connection instead of about 95 KB, with the
        // same wire format (measured in BENCHMARKS.md); nothing to do when deflate was not negotiated.
        _ = lws_set_extension_option(wsi, "permessage-deflate", "mem_level", "1")
        let session = sessionOpened(upgradeRequest(wsi), connection: ConnectionHandle(wsi: wsi))
        let pointer = Unmanaged.passRetained(session).toOpaque()
        liveSessionPointers.insert(pointer)
        sessionData.storeBytes(of: pointer, as: UnsafeMutableRawPointer?.self)
    }

    /// The session kept in a connection's per-session data, or nil before ESTABLISHED.
    @inline(__always)
    func session(in sessionData: UnsafeMutableRawPointer?) -> Unmanaged<Session>? {
        guard let pointer = sessionData?.load(as: UnsafeMutableRawPointer?.self) else { return nil }
        return Unmanaged<Session>.fromOpaque(pointer)
    }

    /// RECEIVE: one fragment of a client message.
    /// - Returns: -1 to close the connection, else 0.
    func webSocketReceived(_ wsi: OpaquePointer, sessionData: UnsafeMutableRawPointer?, _ bytes: UnsafeRawBufferPointer) -> Int32 {
        guard let session = session(in: sessionData) else { return -1 }
        session._withUnsafeGuaranteedRef { session in
            received(bytes, isFinal: lws_is_final_fragment(wsi) != 0, isBinary: lws_frame_is_binary(wsi) != 0, session: session)
        }
        return 0
    }

    /// SERVER_WRITEABLE: one `lws_write` (as lws requires), then re-arm if more waits.
    /// - Returns: -1 to close the connection, else 0.
    func webSocketWritable(_ wsi: OpaquePointer, sessionData: UnsafeMutableRawPointer?) -> Int32 {
        // No session (not established yet, or already closed): nothing to write, as before this adapter.
        guard let session = session(in: sessionData) else { return 0 }
        return session._withUnsafeGuaranteedRef { session in
            switch hub.nextWrite(for: session) {
            case .frame(let frame, let more):
                session.lastWritten = frame
                if lws_write(wsi, frame.payload, frame.count, LWS_WRITE_TEXT) < frame.count { return -1 }
                metrics.messagesSent += 1
                metrics.bytesSent += frame.count
                if let accepted = frame.acceptedAt {
                    frame.writesLeft -= 1
                    if frame.writesLeft == 0 {
                        metrics.changeToWire.observe(Double(DispatchTime.now().uptimeNanoseconds - accepted) / 1e9)
                    }
                }
                if more { lws_callback_on_writable(wsi) }
                return 0
            case .close(let code, let reason):
                var bytes = Array(reason.utf8.prefix(123))
                lws_close_reason(wsi, lws_close_status(rawValue: UInt32(code.rawValue)), &bytes, bytes.count)
                return -1
            case .idle:
                return 0
            }
        }
    }

    /// CLOSED: forgets the session and releases the per-session data's reference.
    func webSocketClosed(sessionData: UnsafeMutableRawPointer?) {
        guard let pointer = sessionData?.load(as: UnsafeMutableRawPointer?.self),
              liveSessionPointers.remove(pointer) != nil else { return }
        sessionData?.storeBytes(of: nil, as: UnsafeMutableRawPointer?.self)
        let session = Unmanaged<Session>.fromOpaque(pointer).takeRetainedValue()
        sessionClosed(session)
    }

    // MARK: Actions

    /// Performs the hub's actions on the connections.
    func perform(_ actions: [Hub.Action]) {
        for action in actions {
            switch action {
            case .requestWritable(let session):
                if let wsi = session.connection?.wsi { lws_callback_on_writable(wsi) }
            case .requestWritableForAll:
                guard let runtime else { continue }
                lws_callback_on_writable_all_protocol(runtime.context, runtime.webSocketProtocol)
            case .closeSoon(let session):
                if session.closing?.code == .tryAgainLater {
                    logger.warning("closing a client that does not keep up", ["session.id": "\(session.id)", "session.queued": "\(session.lagAtClose)"])
                }
                guard let wsi = session.connection?.wsi else { continue }
                lws_set_timeout(wsi, PENDING_TIMEOUT_CLOSE_SEND, 5)
                lws_callback_on_writable(wsi)
            }
        }
    }

    // MARK: Handshake

    /// Reads the handshake's values once.
    private func upgradeRequest(_ wsi: OpaquePointer) -> UpgradeRequest {
        UpgradeRequest(path: header(wsi, WSI_TOKEN_GET_URI) ?? "", origin: header(wsi, WSI_TOKEN_ORIGIN),
                       host: header(wsi, WSI_TOKEN_HOST),
                       token: HTTPRequest.bearer(header(wsi, WSI_TOKEN_HTTP_AUTHORIZATION)) ?? queryArgument(wsi, "token"),
                       shareToken: queryArgument(wsi, "share"), since: queryArgument(wsi, "since").flatMap(UInt64.init),
                       log: queryArgument(wsi, "log"))
    }

    /// Answers a refused handshake with a complete HTTP/1.1 response, its status line from ``HTTPStatus``
    /// (`HTTP/1.1 410 Gone`; lws 4.1's own helper writes an HTTP/1.0 status line at this stage, which
    /// WebSocket clients reject as malformed). The body is `410 Gone: reason`.
    /// - Returns: 1 (refused).
    private func refuseUpgrade(_ wsi: OpaquePointer, _ code: Int, _ reason: String) -> Int32 {
        let status = HTTPStatus(code)
        let body = "\(status): \(reason)\n"
        let response = "\(status.statusLine)\r\ncontent-type: text/plain; charset=utf-8\r\n"
            + "content-length: \(body.utf8.count)\r\nconnection: close\r\n\r\n" + body
        let frame = Frame(Array(response.utf8))
        _ = lws_write(wsi, frame.payload, frame.count, LWS_WRITE_HTTP_FINAL)
        return 1
    }

    /// The value of `name` in the request's query string (`?since=12`), URL-decoded, or nil.
    func queryArgument(_ wsi: OpaquePointer, _ name: String) -> String? {
        var buffer = [CChar](repeating: 0, count: 1024)
        return buffer.withUnsafeMutableBufferPointer { buffer in
            // lws copies "name=value" into the buffer and returns a pointer just after "name=".
            guard let value = lws_get_urlarg_by_name(wsi, name + "=", buffer.baseAddress, Int32(buffer.count)) else { return nil }
            return String(cString: value)
        }
    }

    /// The value of one request header, or nil.
    func header(_ wsi: OpaquePointer, _ token: lws_token_indexes) -> String? {
        let length = Int(lws_hdr_total_length(wsi, token))
        guard length > 0, length < 8192 else { return nil }
        var buffer = [CChar](repeating: 0, count: length + 1)
        guard lws_hdr_copy(wsi, &buffer, Int32(buffer.count), token) >= 0 else { return nil }
        return String(decoding: buffer.prefix(length).map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}
