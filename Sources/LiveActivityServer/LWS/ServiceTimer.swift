import CLibWebSockets
import Foundation

/// The server's one timer, on the lws service thread: an `lws_sorted_usec_list_t` scheduled with
/// `lws_sul_schedule`, followed in the same allocation by an unretained pointer to the server, so the
/// C callback can find it.
final class ServiceTimer {
    private let block: UnsafeMutableRawPointer
    private var sul: UnsafeMutablePointer<lws_sorted_usec_list_t> { block.assumingMemoryBound(to: lws_sorted_usec_list_t.self) }
    private static let serverOffset = MemoryLayout<lws_sorted_usec_list_t>.stride

    /// Creates the timer for `server`, which must outlive it.
    init(server: LiveActivityServer) {
        let size = Self.serverOffset + MemoryLayout<UnsafeMutableRawPointer>.stride
        block = .allocate(byteCount: size, alignment: 16)
        block.initializeMemory(as: UInt8.self, repeating: 0, count: size)
        block.storeBytes(of: Unmanaged.passUnretained(server).toOpaque(), toByteOffset: Self.serverOffset,
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

    fileprivate static func server(of sul: UnsafeMutablePointer<lws_sorted_usec_list_t>) -> LiveActivityServer {
        let pointer = UnsafeMutableRawPointer(sul).load(fromByteOffset: serverOffset, as: UnsafeMutableRawPointer.self)
        return Unmanaged<LiveActivityServer>.fromOpaque(pointer).takeUnretainedValue()
    }
}

/// The C callback lws calls when the timer is due, on the service thread. lws runs timers before it polls,
/// and that poll may last until the next timer: what the timer broadcast (released ticks, deadline events
/// of a store in memory) is written now, not after the poll (``LiveActivityServer/writeBroadcast()``).
private func serviceTimerFired(_ sul: UnsafeMutablePointer<lws_sorted_usec_list_t>?) {
    guard let sul else { return }
    let server = ServiceTimer.server(of: sul)
    server.timing.timerFired()
    server.writeBroadcast()
}
