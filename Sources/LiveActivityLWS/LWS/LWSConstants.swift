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
    /// Wraps an lws connection.
    init(wsi: OpaquePointer) {
        self.init(pointer: wsi)
    }

    /// The lws connection; valid until its CLOSED callback.
    var wsi: OpaquePointer { pointer }
}
