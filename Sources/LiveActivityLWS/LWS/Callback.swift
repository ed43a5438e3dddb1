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
    // The context holds the adapter for its whole life: borrow it, without a retain and release per callback.
    return Unmanaged<LWSServerAdapter>.fromOpaque(owner)._withUnsafeGuaranteedRef { adapter in
        serve(adapter, wsi, reason, user, input, length)
    }
}

/// Hands one callback reason to the adapter (see ``liveActivityCallback(_:_:_:_:_:)``). Service thread.
private func serve(_ server: LWSServerAdapter, _ wsi: OpaquePointer, _ reason: lws_callback_reasons, _ user: UnsafeMutableRawPointer?,
                   _ input: UnsafeMutableRawPointer?, _ length: Int) -> Int32 {
    switch reason {
    case LWS_CALLBACK_EVENT_WAIT_CANCELLED:
        server.application.serviceWoken()
        return 0
    case LWS_CALLBACK_HTTP_CONFIRM_UPGRADE:
        guard let input else { return 0 }
        return server.webSocketConfirmUpgrade(wsi, upgrade: String(cString: input.assumingMemoryBound(to: CChar.self)))
    case LWS_CALLBACK_FILTER_PROTOCOL_CONNECTION:
        return server.webSocketFilter(wsi, sessionData: user)
    case LWS_CALLBACK_ADD_HEADERS:
        guard let input, server.webSocketHandshakeHeaders(wsi, input.assumingMemoryBound(to: lws_process_html_args.self)) else {
            return lws_callback_http_dummy(wsi, reason, user, input, length)
        }
        return 0
    case LWS_CALLBACK_ESTABLISHED:
        guard let user else { return -1 }
        server.webSocketEstablished(wsi, sessionData: user)
        return 0
    case LWS_CALLBACK_RECEIVE:
        return server.webSocketReceived(wsi, sessionData: user, UnsafeRawBufferPointer(start: input, count: input == nil ? 0 : length))
    case LWS_CALLBACK_SERVER_WRITEABLE:
        return server.webSocketWritable(wsi, sessionData: user)
    case LWS_CALLBACK_WS_PEER_INITIATED_CLOSE:
        return server.webSocketPeerClosed(sessionData: user)
    case LWS_CALLBACK_CLOSED:
        server.webSocketClosed(sessionData: user)
        return 0
    case LWS_CALLBACK_FILTER_HTTP_CONNECTION:
        // Before lws picks a mount: a request whose target or a header was cut at its limit gets 414 / 431.
        if let refused = server.http?.refuseOversizedHead(wsi) { return refused }
        return lws_callback_http_dummy(wsi, reason, user, input, length)
    case LWS_CALLBACK_HTTP:
        guard let user, let http = server.http, http.claims(wsi) else { return lws_callback_http_dummy(wsi, reason, user, input, length) }
        return http.request(wsi, sessionData: user)
    case LWS_CALLBACK_HTTP_BODY:
        guard let user, let input, let http = server.http,
              http.receivedBody(UnsafeRawBufferPointer(start: input, count: length), sessionData: user) else {
            return lws_callback_http_dummy(wsi, reason, user, input, length)
        }
        return 0
    case LWS_CALLBACK_HTTP_BODY_COMPLETION:
        guard let user, let result = server.http?.bodyComplete(wsi, sessionData: user) else {
            return lws_callback_http_dummy(wsi, reason, user, input, length)
        }
        return result
    case LWS_CALLBACK_HTTP_WRITEABLE:
        guard let user, let result = server.http?.writable(wsi, sessionData: user) else {
            return lws_callback_http_dummy(wsi, reason, user, input, length)
        }
        return result
    case LWS_CALLBACK_HTTP_DROP_PROTOCOL, LWS_CALLBACK_CLOSED_HTTP:
        if let user { server.http?.release(sessionData: user) }
        return lws_callback_http_dummy(wsi, reason, user, input, length)
    default:
        return lws_callback_http_dummy(wsi, reason, user, input, length)
    }
}
