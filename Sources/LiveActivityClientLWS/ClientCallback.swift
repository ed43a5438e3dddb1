import CLibWebSockets
import Foundation

/// The client's one libwebsockets protocol callback. Recovers the ``LWSClientTransport`` from the context's
/// user pointer and hands it each reason it handles; runs on the client's service thread.
func protocolClientCallback(_ wsi: OpaquePointer?, _ reason: lws_callback_reasons, _ user: UnsafeMutableRawPointer?,
                            _ input: UnsafeMutableRawPointer?, _ length: Int) -> Int32 {
    guard let wsi, let context = lws_get_context(wsi), let owner = lws_context_user(context) else { return 0 }
    let client = Unmanaged<LWSClientTransport>.fromOpaque(owner).takeUnretainedValue()
    switch reason {
    case LWS_CALLBACK_CLIENT_APPEND_HANDSHAKE_HEADER:
        guard let input else { return 0 }
        let cursor = input.assumingMemoryBound(to: Optional<UnsafeMutablePointer<UInt8>>.self)
        return client.appendHandshakeHeaders(wsi, cursor: cursor, space: length)
    case LWS_CALLBACK_CLIENT_CONNECTION_ERROR:
        client.connectionFailed(input.map { cString($0, length: length) })
        return 0
    case LWS_CALLBACK_CLIENT_ESTABLISHED:
        client.established(wsi)
        return 0
    case LWS_CALLBACK_CLIENT_RECEIVE:
        let bytes = UnsafeRawBufferPointer(start: input, count: input == nil ? 0 : length)
        return client.received(bytes, wsi: wsi)
    case LWS_CALLBACK_CLIENT_WRITEABLE:
        return client.writable(wsi)
    case LWS_CALLBACK_WS_PEER_INITIATED_CLOSE:
        client.peerClosing(UnsafeRawBufferPointer(start: input, count: input == nil ? 0 : length))
        return 0
    case LWS_CALLBACK_CLIENT_CLOSED:
        client.closed(wsi)
        return 0
    case LWS_CALLBACK_EVENT_WAIT_CANCELLED:
        client.wakeupReceived()
        return 0
    default:
        return 0
    }
}

/// The error text lws passes with CONNECTION_ERROR: `length` bytes, or up to the NUL when `length` is 0.
private func cString(_ pointer: UnsafeMutableRawPointer, length: Int) -> String {
    let characters = pointer.assumingMemoryBound(to: CChar.self)
    let count = length > 0 ? strnlen(characters, length) : strlen(characters)
    return String(decoding: UnsafeRawBufferPointer(start: pointer, count: count), as: UTF8.self)
}
