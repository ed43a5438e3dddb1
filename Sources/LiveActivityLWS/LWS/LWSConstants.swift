import CLibWebSockets
import LiveActivityCore

/// Values of libwebsockets' C macros that code outside the adapter needs, read once.
enum LWSConstants {
    /// `LWS_PRE`: bytes lws needs before every `lws_write` payload for the frame header.
    static let headroom: Int = clws_pre()
    /// `LWS_WRITE_RAW`, a `#define` of `LWS_WRITE_HTTP` that Swift does not import: bytes sent as they are,
    /// past the ws role's framing and extensions (how deflate clients get whole frames).
    static let writeRaw = LWS_WRITE_HTTP
}

/// A session's lws connection: the Core handle (``ConnectionHandle``) holds the `wsi` as an opaque pointer;
/// only this folder opens it.
extension ConnectionHandle {
    /// Wraps an lws connection. Its socket is kept for direct writes (``LWSServerAdapter``'s `write`) when
    /// the connection is plain TCP and its own network connection: not over TLS (lws encrypts), not a
    /// stream of a multiplexed (HTTP/2) connection, whose socket is its parent's.
    init(wsi: OpaquePointer) {
        let socket = lws_get_socket_fd(wsi)
        let direct = lws_is_ssl(wsi) == 0 && lws_get_network_wsi(wsi) == wsi && socket >= 0
        self.init(pointer: wsi, directSocket: direct ? socket : -1)
    }

    /// The lws connection; valid until its CLOSED callback.
    var wsi: OpaquePointer { pointer }
}
