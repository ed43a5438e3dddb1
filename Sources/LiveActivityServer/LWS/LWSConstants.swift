import CLibWebSockets

/// Values of libwebsockets' C macros that code outside the adapter needs, read once.
enum LWSConstants {
    /// `LWS_PRE`: bytes lws needs before every `lws_write` payload for the frame header.
    static let headroom: Int = clws_pre()
}

/// A session's lws connection, opaque outside this folder: the hub and the features hold it, only the
/// adapter opens it.
struct ConnectionHandle: @unchecked Sendable {
    /// The lws connection; valid until its CLOSED callback.
    let wsi: OpaquePointer
}
