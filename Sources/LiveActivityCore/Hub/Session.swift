import Foundation

/// One connected WebSocket client: what it may do, and where it is in the broadcast. Owned by the ``Hub``;
/// touched only by the service thread. The lws adapter reaches it through the connection's per-session data
/// (an unmanaged reference), so a write needs no lookup.
package final class Session {
    // MARK: Delivery (the hub's)
    //
    // The fields a write reads come first (the broadcast pass's checks, the connection, the scope), so that
    // they lie in the object's first 128 bytes, the pair of cache lines a core's prefetcher fetches
    // together: with thousands of sessions each write then touches one more pair than the C peer does, not
    // several (declared further down, the connection and the scope sat in the object's third and fourth lines).

    /// Next broadcast position to write, or `UInt64.max` while the client does not watch (see ``cursor``).
    @usableFromInline var rawCursor: UInt64 = .max
    /// Broadcast positions from here on are not written (set when closing with what is queued kept).
    package var cursorLimit: UInt64 = .max
    /// Replies queued and not yet written (the count of `replies` from `replyHead`).
    package var pendingReplies = 0
    /// The latest tick not yet written; a newer tick replaces it, so slow clients never pile up ticks.
    package var pendingTick: Frame?
    /// The transport connection (opaque outside the lws adapter); nil in tests without sockets.
    package let connection: ConnectionHandle?
    /// Whether ``closing`` is set.
    package private(set) var isClosing = false
    /// What permessage-deflate allows this client, when it negotiated the extension (set at ESTABLISHED);
    /// nil: every frame goes through lws as plain text. A deflate client gets every frame whole from the
    /// adapter (`LWS_WRITE_RAW`), compressed once per message for all or stored
    /// (``Frame/deflatedWire(windowBits:using:)``), so lws never creates a compressor for it.
    package var deflate: PermessageDeflate?
    /// Whether its close frame is written: nothing more is, and the connection waits for the client's.
    package var closeFrameSent = false
    /// For a share viewer: the one activity it may see.
    package var scope: String?
    /// The broadcast position `pendingTick` was made at: it is written after the frames before it and
    /// before the ones from there on, as a reply is.
    package var pendingTickPosition: UInt64 = 0

    /// Next broadcast position to write; nil while the client does not watch (no token yet).
    package var cursor: UInt64? {
        @inlinable @inline(__always) get { rawCursor == .max ? nil : rawCursor }
        @inlinable @inline(__always) set { rawCursor = newValue ?? .max }
    }
    /// Close code and reason to send once what is queued is written.
    package var closing: Closing? {
        didSet { isClosing = closing != nil }
    }
    /// Its unwritten bytes when it was closed (for the log line of a client closed as too slow).
    package var lagAtClose = 0
    /// Whether the hub no longer counts it among the watchers (closing or gone).
    package var uncounted = false
    /// Its index in ``Hub/sessionsInOrder`` while the hub has it.
    package var placeInOrder = 0
    /// A reply to this client, written once the broadcast frames before `position` are written.
    package struct Reply {
        package let position: UInt64
        /// The frame; nil while the place is reserved for an answer still being read (``Hub/reserve(for:)``):
        /// nothing after it is written until it is filled.
        package var frame: Frame?
        /// The reservation this place is kept for (0: an ordinary reply).
        package var reservation: UInt64 = 0
    }

    /// How and why the session is being closed.
    package struct Closing {
        package let code: CloseCode
        package let reason: String
    }

    /// Replies to this client, oldest first from `replyHead`.
    package var replies: [Reply] = []
    package var replyHead = 0
    /// Payload bytes in `replies` not yet written.
    package var replyBytes = 0

    /// Server-assigned id, for logs and the inspector's subscriber list.
    package let id: UInt64

    // MARK: Protocol state

    /// The message being received, across fragments.
    package var incoming: [UInt8] = []
    /// Set once a message went over the size limit; every later fragment is refused.
    package var refusedOversizedMessage = false
    /// Set once it flooded past the rate limit: nothing more is read; it closes with 1008 in its turn.
    package var flooding = false
    /// What the client may do.
    package var role: AccessPolicy.Role
    /// For a share viewer: the share it came through; it then sees ``scope`` only and may send nothing.
    package var shareId: String?
    /// The `?since=` it connected with: where to resume once it may watch (after `hello` if need be).
    package var resumeFrom: UInt64?
    /// The `?log=` it connected with: the log its `since` belongs to.
    package var resumeLog: String?
    /// Limits how fast the client may send messages, and closes it when it keeps flooding.
    package var rateLimit: MessageRateLimit

    /// Creates a session that does not watch yet (see ``Hub/watch(_:)``).
    package init(id: UInt64, connection: ConnectionHandle?, role: AccessPolicy.Role, rateLimit: MessageRateLimit) {
        self.id = id
        self.connection = connection
        self.role = role
        self.rateLimit = rateLimit
    }

    /// Replies queued and not yet written.
    package var queuedReplies: Int { pendingReplies }
}
