/// A session's transport connection, opaque to everything but the transport adapter: the hub and the
/// features hold it, only the lws adapter opens it (its `wsi`, an `lws *`). Core does not import
/// libwebsockets; the pointer is just an address here. Valid until the connection's CLOSED callback.
package struct ConnectionHandle: @unchecked Sendable {
    /// The transport's own pointer for the connection (for lws, the `struct lws *`).
    package let pointer: OpaquePointer
    /// The connection's own socket (a file descriptor) when the adapter may send whole frames on it itself,
    /// a plain TCP connection; -1 when every write must go through the transport (TLS).
    package let directSocket: Int32

    /// Wraps the transport's pointer; `directSocket` -1 (the default): writes go through the transport.
    package init(pointer: OpaquePointer, directSocket: Int32 = -1) {
        self.pointer = pointer
        self.directSocket = directSocket
    }
}
