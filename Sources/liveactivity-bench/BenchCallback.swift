import CLibWebSockets

/// The benchmark's one libwebsockets protocol callback, for every connection (the controller and the
/// watching clients). Recovers the ``FanOutBench`` from the context's user pointer and the connection's
/// index from its opaque user data (index + 1, so that 0 means none). Runs on the service thread.
func benchCallback(_ wsi: OpaquePointer?, _ reason: lws_callback_reasons, _ user: UnsafeMutableRawPointer?,
                   _ input: UnsafeMutableRawPointer?, _ length: Int) -> Int32 {
    guard let wsi, let context = lws_get_context(wsi), let owner = lws_context_user(context) else { return 0 }
    let bench = Unmanaged<FanOutBench>.fromOpaque(owner).takeUnretainedValue()
    guard let tag = lws_get_opaque_user_data(wsi) else { return 0 }
    let index = Int(bitPattern: tag) - 1
    switch reason {
    case LWS_CALLBACK_CLIENT_CONNECTION_ERROR:
        bench.connectionFailed(index)
        return 0
    case LWS_CALLBACK_CLIENT_ESTABLISHED:
        bench.established(index, wsi: wsi)
        return 0
    case LWS_CALLBACK_CLIENT_RECEIVE:
        let bytes = UnsafeRawBufferPointer(start: input, count: input == nil ? 0 : length)
        let whole = lws_is_final_fragment(wsi) != 0 && lws_remaining_packet_payload(wsi) == 0
        bench.received(bytes, connection: index, whole: whole)
        return 0
    case LWS_CALLBACK_CLIENT_WRITEABLE:
        return bench.writable(index, wsi: wsi)
    case LWS_CALLBACK_CLIENT_CLOSED:
        bench.closed(index)
        return 0
    default:
        return 0
    }
}

/// A one-shot timer on the service thread: an `lws_sorted_usec_list_t` followed, in the same allocation,
/// by an unretained pointer to this object, so the C callback can find the action.
final class BenchTimer {
    private let block: UnsafeMutableRawPointer
    private static let ownerOffset = MemoryLayout<lws_sorted_usec_list_t>.stride
    private let action: () -> Void

    /// Creates a timer that runs `action` each time it fires; the timer must outlive its schedule.
    init(_ action: @escaping () -> Void) {
        self.action = action
        let size = Self.ownerOffset + MemoryLayout<UnsafeMutableRawPointer>.stride
        block = .allocate(byteCount: size, alignment: 16)
        block.initializeMemory(as: UInt8.self, repeating: 0, count: size)
        block.storeBytes(of: Unmanaged.passUnretained(self).toOpaque(), toByteOffset: Self.ownerOffset,
                         as: UnsafeMutableRawPointer.self)
    }

    /// (Re)schedules the timer to fire once after `seconds`. Service thread only.
    func schedule(in context: OpaquePointer, after seconds: Double) {
        let micros = lws_usec_t(max(0.0, seconds) * 1_000_000)
        lws_sul_schedule(context, 0, block.assumingMemoryBound(to: lws_sorted_usec_list_t.self), benchTimerFired, max(1, micros))
    }

    /// Removes the timer from the schedule. Service thread only.
    func cancel() {
        lws_sul_cancel(block.assumingMemoryBound(to: lws_sorted_usec_list_t.self))
    }

    deinit { block.deallocate() }

    fileprivate static func fire(_ sul: UnsafeMutablePointer<lws_sorted_usec_list_t>) {
        let owner = UnsafeMutableRawPointer(sul).load(fromByteOffset: ownerOffset, as: UnsafeMutableRawPointer.self)
        Unmanaged<BenchTimer>.fromOpaque(owner).takeUnretainedValue().action()
    }
}

/// The C callback lws calls when a ``BenchTimer`` is due, on the service thread.
private func benchTimerFired(_ sul: UnsafeMutablePointer<lws_sorted_usec_list_t>?) {
    guard let sul else { return }
    BenchTimer.fire(sul)
}
