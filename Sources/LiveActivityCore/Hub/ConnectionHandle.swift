/// A session's transport connection, opaque to everything but the transport adapter: the hub and the
/// features hold it, only the lws adapter opens it (its `wsi`, an `lws *`). Core does not import
/// libwebsockets; the pointer is just an address here. Valid until the connection's CLOSED callback.
package struct ConnectionHandle: @unchecked Sendable {
    /// The transport's own pointer for the connection (for lws, the `struct lws *`).
    package let pointer: OpaquePointer

    /// Wraps the transport's pointer.
    package init(pointer: OpaquePointer) {
        self.pointer = pointer
    }
}
