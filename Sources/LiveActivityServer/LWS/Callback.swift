import CLibWebSockets

/// The one libwebsockets protocol callback, for WebSocket and HTTP alike (our protocol is protocols[0],
/// so clients that ask for no subprotocol are bound to it). Recovers the server from the context's user
/// pointer and hands each reason to it; everything else goes to `lws_callback_http_dummy`, which serves
/// the static-file mount. Runs on the service thread.
func liveActivityCallback(_ wsi: OpaquePointer?, _ reason: lws_callback_reasons, _ user: UnsafeMutableRawPointer?,
                          _ input: UnsafeMutableRawPointer?, _ length: Int) -> Int32 {
    guard let wsi, let context = lws_get_context(wsi), let owner = lws_context_user(context) else {
        return lws_callback_http_dummy(wsi, reason, user, input, length)
    }
    let server = Unmanaged<LiveActivityServer>.fromOpaque(owner).takeUnretainedValue()
    switch reason {
    case LWS_CALLBACK_EVENT_WAIT_CANCELLED:
        server.runInbox()
        return 0
    case LWS_CALLBACK_FILTER_PROTOCOL_CONNECTION:
        return server.webSocketFilter(wsi, sessionData: user)
    case LWS_CALLBACK_ESTABLISHED:
        guard let user else { return -1 }
        server.webSocketEstablished(wsi, sessionData: user)
        return 0
    case LWS_CALLBACK_RECEIVE:
        return server.webSocketReceived(wsi, sessionData: user, UnsafeRawBufferPointer(start: input, count: input == nil ? 0 : length))
    case LWS_CALLBACK_SERVER_WRITEABLE:
        return server.webSocketWritable(wsi, sessionData: user)
    case LWS_CALLBACK_CLOSED:
        server.webSocketClosed(sessionData: user)
        return 0
    case LWS_CALLBACK_HTTP:
        guard let user, server.isAPIRequest(wsi) else { return lws_callback_http_dummy(wsi, reason, user, input, length) }
        return server.httpRequest(wsi, sessionData: user)
    case LWS_CALLBACK_HTTP_BODY:
        guard let id = user?.load(as: UInt64.self), let input, server.isReceivingBody(id) else {
            return lws_callback_http_dummy(wsi, reason, user, input, length)
        }
        server.receivedBody(UnsafeRawBufferPointer(start: input, count: length), id: id)
        return 0
    case LWS_CALLBACK_HTTP_BODY_COMPLETION:
        guard let id = user?.load(as: UInt64.self), server.isReceivingBody(id) else {
            return lws_callback_http_dummy(wsi, reason, user, input, length)
        }
        return server.bodyComplete(wsi, id: id)
    case LWS_CALLBACK_HTTP_WRITEABLE:
        guard let id = user?.load(as: UInt64.self), server.hasHTTPResponse(id) else {
            return lws_callback_http_dummy(wsi, reason, user, input, length)
        }
        return server.httpWritable(wsi, id: id)
    case LWS_CALLBACK_CLOSED_HTTP:
        if let id = user?.load(as: UInt64.self), server.isAPIConnection(id) { server.httpClosed(id) }
        return lws_callback_http_dummy(wsi, reason, user, input, length)
    default:
        return lws_callback_http_dummy(wsi, reason, user, input, length)
    }
}
