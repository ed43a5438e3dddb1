import CLibWebSockets
import Foundation
import LiveActivityCore

/// Connections: accepting, reading whole messages, writing queued frames, closing. Service thread only.
extension LiveActivityServer {
    /// The WebSocket endpoint's path.
    static let webSocketPath = "/ws"

    /// Whether a WebSocket upgrade request may proceed: only on ``webSocketPath`` and not while stopping.
    func acceptsUpgrade(_ wsi: OpaquePointer) -> Bool {
        guard !shuttingDown else { return false }
        return header(wsi, WSI_TOKEN_GET_URI) == Self.webSocketPath
    }

    /// Registers a new client and queues its `snapshot`.
    func sessionOpened(_ wsi: OpaquePointer, sessionData: UnsafeMutableRawPointer) {
        let id = nextSessionID
        nextSessionID += 1
        sessionData.storeBytes(of: id, as: UInt64.self)
        let session = Session(id: id, wsi: wsi)
        sessions[id] = session
        if let since = queryArgument(wsi, "since").flatMap(UInt64.init) {
            resume(session, since: since, requestId: nil)
        } else {
            send(.snapshot(requestId: nil, serverTime: clock(), sequence: center.sequence, activities: center.ordered), to: session)
        }
        logger.debug("client connected", ["session.id": "\(id)", "sessions.total": "\(sessions.count)"])
    }

    /// Forgets a client whose connection has closed.
    func sessionClosed(_ id: UInt64) {
        sessions[id] = nil
        logger.debug("client disconnected", ["session.id": "\(id)", "sessions.total": "\(sessions.count)"])
    }

    /// Collects one fragment; once the message is whole, handles it.
    /// - Returns: -1 to close the connection (message over the size limit, close code 1009), else 0.
    func received(_ bytes: UnsafeRawBufferPointer, session id: UInt64, wsi: OpaquePointer) -> Int32 {
        guard let session = sessions[id] else { return -1 }
        if session.refusedOversizedMessage { return 0 }
        if session.incoming.count + bytes.count > configuration.maximumMessageBytes {
            // Returning -1 here does not close a permessage-deflate connection in lws 4.1 (it goes on
            // delivering inflated chunks), so drop the rest of the message and close from WRITEABLE.
            session.refusedOversizedMessage = true
            session.incoming = []
            session.discardOutbox()
            session.closing = (LWS_CLOSE_STATUS_MESSAGE_TOO_LARGE, "message larger than \(configuration.maximumMessageBytes) bytes")
            lws_callback_on_writable(wsi)
            return 0
        }
        session.incoming.append(contentsOf: bytes)
        guard lws_is_final_fragment(wsi) != 0 else { return 0 }
        let message = session.incoming
        session.incoming = []
        if lws_frame_is_binary(wsi) != 0 {
            send(.error(requestId: nil, ProtocolError(.unsupportedFrame, field: nil,
                 message: "binary frames are not part of the protocol; send JSON text frames")), to: session)
            return 0
        }
        handle(ClientMessage.parse(message), from: session)
        return 0
    }

    /// Writes one queued frame (one `lws_write` per WRITEABLE, as lws requires) and re-arms if more wait.
    /// - Returns: -1 to close the connection, else 0.
    func writable(session id: UInt64, wsi: OpaquePointer) -> Int32 {
        guard let session = sessions[id] else { return -1 }
        if let frame = session.next() {
            if lws_write(wsi, frame.payload, frame.count, LWS_WRITE_TEXT) < frame.count { return -1 }
        } else if let (code, reason) = session.closing {
            close(wsi, code, reason)
            return -1
        }
        if session.hasPending || session.closing != nil { lws_callback_on_writable(wsi) }
        return 0
    }

    /// Queues one message for one client.
    func send(_ message: ServerMessage, to session: Session) {
        enqueue(Frame(message.encoded()), to: session)
        lws_callback_on_writable(session.wsi)
    }

    /// Queues a frame, dropping the client (close 1008 via an async kill) when it has fallen too far behind.
    func enqueue(_ frame: Frame, to session: Session) {
        guard session.closing == nil else { return }
        if session.queued >= configuration.maximumQueuedFrames {
            logger.warning("dropping a client that does not keep up", ["session.id": "\(session.id)", "session.queued": "\(session.queued)"])
            session.closing = (LWS_CLOSE_STATUS_POLICY_VIOLATION, "client too slow")
            lws_set_timeout(session.wsi, PENDING_TIMEOUT_USER_OK, LWS_TO_KILL_ASYNC)
            return
        }
        session.enqueue(frame)
    }

    /// Sets the close code and reason lws sends in the close frame.
    func close(_ wsi: OpaquePointer, _ code: lws_close_status, _ reason: String) {
        var bytes = Array(reason.utf8.prefix(123))
        lws_close_reason(wsi, code, &bytes, bytes.count)
    }

    /// The value of `name` in the request's query string (`?since=12`), or nil.
    func queryArgument(_ wsi: OpaquePointer, _ name: String) -> String? {
        var buffer = [CChar](repeating: 0, count: 512)
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
