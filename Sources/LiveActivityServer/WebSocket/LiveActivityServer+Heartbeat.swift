import Foundation
import LiveActivityCore

/// The heartbeat (docs/PROTOCOL.md, `heartbeat`): a small message to every watching client every
/// ``ServerConfiguration/heartbeatSeconds``, whether or not anything runs, so that a page or a script can
/// tell a live connection from one that died without a close (a laptop that slept, a NAT that dropped the
/// flow). Browsers hide WebSocket pings from pages, so this has to be a message. When one is due (every
/// interval from the server's start, a late pass sending the one it covers) is ``ServiceTiming``'s rule;
/// its ``ServiceTiming/Action/sendHeartbeat`` lands here. Service thread only.
extension LiveActivityServer {
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
