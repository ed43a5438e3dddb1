import CLibWebSockets
import Foundation

/// The server's one timer, on the lws service thread: an `lws_sorted_usec_list_t` scheduled with
/// `lws_sul_schedule`, followed in the same allocation by an unretained pointer to the adapter, so the
/// C callback can find it.
final class ServiceTimer {
    private let block: UnsafeMutableRawPointer
    private var sul: UnsafeMutablePointer<lws_sorted_usec_list_t> { block.assumingMemoryBound(to: lws_sorted_usec_list_t.self) }
    private static let adapterOffset = MemoryLayout<lws_sorted_usec_list_t>.stride

    /// Creates the timer for `adapter`, which must outlive it.
    init(adapter: LWSServerAdapter) {
        let size = Self.adapterOffset + MemoryLayout<UnsafeMutableRawPointer>.stride
        block = .allocate(byteCount: size, alignment: 16)
        block.initializeMemory(as: UInt8.self, repeating: 0, count: size)
        block.storeBytes(of: Unmanaged.passUnretained(adapter).toOpaque(), toByteOffset: Self.adapterOffset,
                         as: UnsafeMutableRawPointer.self)
    }

    /// (Re)schedules the timer to fire once after `seconds`. Service thread only.
    func schedule(in context: OpaquePointer, after seconds: TimeInterval) {
        let micros = lws_usec_t(max(0.001, seconds) * 1_000_000)
        lws_sul_schedule(context, 0, sul, serviceTimerFired, micros)
    }

    /// Removes the timer from the schedule. Service thread only.
    func cancel() {
        lws_sul_cancel(sul)
    }

    deinit { block.deallocate() }

    fileprivate static func adapter(of sul: UnsafeMutablePointer<lws_sorted_usec_list_t>) -> LWSServerAdapter {
        let pointer = UnsafeMutableRawPointer(sul).load(fromByteOffset: adapterOffset, as: UnsafeMutableRawPointer.self)
        return Unmanaged<LWSServerAdapter>.fromOpaque(pointer).takeUnretainedValue()
    }
}

/// The C callback lws calls when the timer is due, on the service thread. lws runs timers before it polls,
/// and that poll may last until the next timer: what the timer broadcast (released ticks, deadline events
/// of a store in memory) is written now, not after the poll (``LWSServerAdapter/writeBroadcast()``).
private func serviceTimerFired(_ sul: UnsafeMutablePointer<lws_sorted_usec_list_t>?) {
    guard let sul else { return }
    let adapter = ServiceTimer.adapter(of: sul)
    adapter.application.timerFired()
    adapter.writeBroadcast()
}
