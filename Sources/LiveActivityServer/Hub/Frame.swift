/// One outgoing WebSocket text message, encoded once and written to any number of clients.
///
/// The payload sits after ``headroom`` bytes, where libwebsockets writes the frame header in place
/// (`LWS_PRE`), so the same bytes go to every client with no copy. Immutable after creation except for that
/// headroom, which only the service thread touches.
final class Frame: @unchecked Sendable {
    /// Bytes reserved before every payload for the frame header: `LWS_PRE`, read once from the lws adapter.
    static let headroom = LWSConstants.headroom

    private let storage: UnsafeMutablePointer<UInt8>
    /// Payload length in bytes.
    let count: Int
    /// For a broadcast event: when the change was accepted (monotonic ns), and how many clients have yet
    /// to take it; the last write records the change-to-wire time.
    var acceptedAt: UInt64?
    var writesLeft = 0

    /// Copies `bytes` once into a buffer with ``headroom`` zeroed bytes before it.
    init(_ bytes: [UInt8]) {
        let headroom = Self.headroom
        count = bytes.count
        storage = .allocate(capacity: headroom + bytes.count)
        storage.initialize(repeating: 0, count: headroom)
        bytes.withUnsafeBufferPointer { source in
            if let base = source.baseAddress { (storage + headroom).initialize(from: base, count: source.count) }
        }
    }

    deinit { storage.deallocate() }

    /// Start of the payload (after the headroom), as `lws_write` wants it.
    var payload: UnsafeMutablePointer<UInt8> { storage + Self.headroom }

    /// The payload's bytes (a copy), for tests and logs.
    var bytes: [UInt8] { Array(UnsafeBufferPointer(start: payload, count: count)) }
}
