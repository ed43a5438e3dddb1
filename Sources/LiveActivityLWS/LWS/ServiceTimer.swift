import CLibWebSockets
import Foundation

/// A timer on the lws service thread: an `lws_sorted_usec_list_t` scheduled with `lws_sul_schedule`,
/// followed in the same allocation by an unretained pointer to the adapter, so the C callback can find it.
/// Two run: the server's timer (``serviceTimerFired``) and the end of a held broadcast
/// (``broadcastHoldEnded``, ``BroadcastHold``).
final class ServiceTimer {
    /// The C function lws calls when the timer is due, on the service thread; it finds the adapter with
    /// ``adapter(of:)``.
    typealias Fired = @convention(c) (UnsafeMutablePointer<lws_sorted_usec_list_t>?) -> Void

    private let block: UnsafeMutableRawPointer
    private var sul: UnsafeMutablePointer<lws_sorted_usec_list_t> { block.assumingMemoryBound(to: lws_sorted_usec_list_t.self) }
    private static let adapterOffset = MemoryLayout<lws_sorted_usec_list_t>.stride
    private let fired: Fired

    /// Creates a timer for `adapter`, which must outlive it, that calls `fired` when due.
    init(adapter: LWSServerAdapter, fired: @escaping Fired) {
        self.fired = fired
        let size = Self.adapterOffset + MemoryLayout<UnsafeMutableRawPointer>.stride
        block = .allocate(byteCount: size, alignment: 16)
        block.initializeMemory(as: UInt8.self, repeating: 0, count: size)
        block.storeBytes(of: Unmanaged.passUnretained(adapter).toOpaque(), toByteOffset: Self.adapterOffset,
                         as: UnsafeMutableRawPointer.self)
    }

    /// (Re)schedules the timer to fire once after `seconds`. Service thread only.
    func schedule(in context: OpaquePointer, after seconds: TimeInterval) {
        let micros = lws_usec_t(max(0.001, seconds) * 1_000_000)
        lws_sul_schedule(context, 0, sul, fired, micros)
    }

    /// Removes the timer from the schedule (nothing happens if it is not scheduled or has fired). Service
    /// thread only.
    func cancel() {
        lws_sul_cancel(sul)
    }

    deinit { block.deallocate() }

    /// The adapter of the timer whose list entry `sul` is, as it fires (no longer scheduled).
    fileprivate static func adapter(of sul: UnsafeMutablePointer<lws_sorted_usec_list_t>) -> LWSServerAdapter {
        let pointer = UnsafeMutableRawPointer(sul).load(fromByteOffset: adapterOffset, as: UnsafeMutableRawPointer.self)
        return Unmanaged<LWSServerAdapter>.fromOpaque(pointer).takeUnretainedValue()
    }
}

/// The C callback lws calls when the timer is due, on the service thread. lws runs timers before it polls,
/// and that poll may last until the next timer: what the timer broadcast (released ticks, deadline events
/// of a store in memory) is written now, not after the poll (``LWSServerAdapter/writeBroadcast()``).
func serviceTimerFired(_ sul: UnsafeMutablePointer<lws_sorted_usec_list_t>?) {
    guard let sul else { return }
    let adapter = ServiceTimer.adapter(of: sul)
    adapter.application.timerFired()
    adapter.writeBroadcast()
}

/// The C callback of the broadcast hold's timer: the commit the broadcast waited for took longer than
/// ``BroadcastHold/longest``; the broadcast due is written now without it.
func broadcastHoldEnded(_ sul: UnsafeMutablePointer<lws_sorted_usec_list_t>?) {
    guard let sul else { return }
    ServiceTimer.adapter(of: sul).writeBroadcast()
}
