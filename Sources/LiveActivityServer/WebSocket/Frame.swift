import CLibWebSockets

/// One outgoing WebSocket text message, encoded once and written to any number of clients.
///
/// The payload sits after `LWS_PRE` bytes of headroom, where libwebsockets writes the frame header in
/// place, so the same bytes go to every client with no copy. Immutable after creation except for that
/// headroom, which only the service thread touches.
final class Frame: @unchecked Sendable {
    private let storage: UnsafeMutablePointer<UInt8>
    /// Payload length in bytes.
    let count: Int
    /// For a broadcast event: when the change was accepted (monotonic ns), and how many clients have yet
    /// to take it; the last write records the change-to-wire time.
    var acceptedAt: UInt64?
    var writesLeft = 0

    /// Copies `bytes` once into a buffer with `LWS_PRE` headroom.
    init(_ bytes: [UInt8]) {
        let headroom = clws_pre()
        count = bytes.count
        storage = .allocate(capacity: headroom + bytes.count)
        storage.initialize(repeating: 0, count: headroom)
        bytes.withUnsafeBufferPointer { source in
            (storage + headroom).initialize(from: source.baseAddress!, count: source.count)
        }
    }

    deinit { storage.deallocate() }

    /// Start of the payload (after the headroom), as `lws_write` wants it.
    var payload: UnsafeMutablePointer<UInt8> { storage + clws_pre() }
}
