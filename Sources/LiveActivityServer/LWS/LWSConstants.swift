import CLibWebSockets

/// Values of libwebsockets' C macros that code outside the adapter needs, read once.
enum LWSConstants {
    /// `LWS_PRE`: bytes lws needs before every `lws_write` payload for the frame header.
    static let headroom: Int = clws_pre()
    /// `LWS_WRITE_RAW`, a `#define` of `LWS_WRITE_HTTP` that Swift does not import: bytes sent as they are,
    /// past the ws role's framing and extensions (how deflate clients get whole frames).
    static let writeRaw = LWS_WRITE_HTTP
}

/// A session's lws connection, opaque outside this folder: the hub and the features hold it, only the
/// adapter opens it.
struct ConnectionHandle: @unchecked Sendable {
    /// The lws connection; valid until its CLOSED callback.
    let wsi: OpaquePointer
}
