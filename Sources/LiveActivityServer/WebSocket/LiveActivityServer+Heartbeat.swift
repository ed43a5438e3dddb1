import Foundation
import LiveActivityCore

/// The heartbeat (docs/PROTOCOL.md, `heartbeat`): a small message to every watching client every
/// ``ServerConfiguration/heartbeatSeconds``, whether or not anything runs, so that a page or a script can
/// tell a live connection from one that died without a close (a laptop that slept, a NAT that dropped the
/// flow). Browsers hide WebSocket pings from pages, so this has to be a message. Service thread only.
extension LiveActivityServer {
    /// Sends a heartbeat when one is due: every interval counted from the first timer pass (the server's
    /// start), on the whole-second passes of the timer. A pass that comes late sends the one it covers and
    /// the next is due one interval after it.
    /// - Parameter now: the server time of this timer pass.
    func heartbeatIfDue(at now: Date) {
        let interval = TimeInterval(configuration.heartbeatSeconds)
        let seconds = now.timeIntervalSince1970
        guard interval > 0 else { return }
        if heartbeatDue == 0 {
            heartbeatDue = seconds.rounded(.down) + interval
            return
        }
        guard seconds + 0.005 >= heartbeatDue else { return }
        broadcastHeartbeat(at: now)
        heartbeatDue = max(heartbeatDue + interval, (seconds + 0.005).rounded(.down) + 1)
    }

    /// Appends one heartbeat to the broadcast ring, in order with the events, for every watching session
    /// (share viewers too). Encoded once; not counted in the broadcast metrics, which measure changes.
    /// Nothing is sent while nobody watches.
    /// - Parameter now: the server time it carries as `serverTime`.
    func broadcastHeartbeat(at now: Date) {
        guard hub.watching > 0 else { return }
        let message = ServerMessage.heartbeat(serverTime: now, intervalSeconds: configuration.heartbeatSeconds)
        perform(hub.broadcast(Frame(message.encoded()), activityId: nil))
    }
}
