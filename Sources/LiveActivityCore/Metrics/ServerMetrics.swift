import Foundation
import LiveActivityCore

/// The server's counters, exposed at `GET /metrics` in the Prometheus text format (version 0.0.4).
///
/// Owned by the service thread: every counter is read and written there only, so no locks.
package final class ServerMetrics {
    /// Every counter at zero.
    package init() {}

    /// Messages received from clients (whole WebSocket messages).
    package var messagesReceived = 0
    /// Payload bytes received from clients.
    package var bytesReceived = 0
    /// WebSocket messages written to clients.
    package var messagesSent = 0
    /// Payload bytes written to clients (before permessage-deflate).
    package var bytesSent = 0
    /// WebSocket frame bytes written to clients: headers included, compressed payloads as compressed.
    package var frameBytesSent = 0
    /// Writes that carried those messages: fewer than ``messagesSent`` when a client's waiting messages went
    /// out together.
    package var webSocketWrites = 0
    /// Of those, sends on a plain connection's socket that it took only in part (or not at all): lws keeps
    /// the rest and sends it before anything else once the socket has room (a client reading slowly).
    package var webSocketWritesBuffered = 0
    /// Of those writes, the ones a broadcast pass queued and handed to the kernel together (io_uring): to clients
    /// with one message waiting.
    package var webSocketWritesQueued = 0
    /// System calls that handed queued writes to the kernel (`io_uring_enter(2)`): one per broadcast pass as a rule.
    package var webSocketWriteSubmissions = 0
    /// Messages written compressed (RSV1 set), to clients that negotiated permessage-deflate.
    package var compressedMessagesSent = 0
    /// Messages written to such clients as stored deflate blocks (RSV1 set, not compressed: too short, or
    /// no smaller compressed).
    package var storedMessagesSent = 0
    /// Messages compressed (``Deflate/compressions``): once per message and window size, however many
    /// clients it goes to.
    package var deflateCompressions = 0
    /// `error` messages sent, by code.
    package var errors: [String: Int] = [:]
    /// Broadcast frames encoded: one per event and per tick, whatever the number of clients.
    package var broadcastEncodes = 0
    /// Broadcast frames queued for clients: encodes × clients.
    package var broadcastDeliveries = 0
    /// Groups of changes the store recorded, one ``ActivityStore/record(_:)`` call (one transaction) each.
    package var storeCommits = 0
    /// Changes the store recorded, in those groups: `storeChanges / storeCommits` is the mean group size.
    package var storeChanges = 0
    /// Seconds from an accepted change to its last write on the wire, for every client.
    package var changeToWire = Histogram(bounds: [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5])

    /// A cumulative histogram with fixed upper bounds, in seconds.
    package struct Histogram {
        /// The buckets' upper bounds, in seconds, ascending.
        package let bounds: [Double]
        /// Observations at or under each bound (cumulative), one count per bound.
        package private(set) var counts: [Int]
        /// The sum of every observation, in seconds.
        package private(set) var sum = 0.0
        /// Observations made.
        package private(set) var count = 0

        /// An empty histogram with `bounds` (seconds, ascending).
        package init(bounds: [Double]) {
            self.bounds = bounds
            counts = Array(repeating: 0, count: bounds.count)
        }

        /// Counts one observation of `value` seconds.
        package mutating func observe(_ value: Double) {
            for index in bounds.indices where value <= bounds[index] { counts[index] += 1 }
            sum += value
            count += 1
        }
    }

    /// The exposition text.
    /// - Parameters:
    ///   - connections: open WebSocket connections by role.
    ///   - activities: activities by state.
    ///   - slowClientsClosed: WebSocket clients closed with 1013 since the server started (``Hub/culled``).
    package func exposition(connections: [AccessPolicy.Role: Int], activities: [ActivityState: Int],
                            slowClientsClosed: Int = 0) -> String {
        var text = ""
        func metric(_ name: String, _ type: String, _ help: String, _ samples: [(String, Double)]) {
            text += "# HELP \(name) \(help)\n# TYPE \(name) \(type)\n"
            for (labels, value) in samples {
                let shown = value.rounded() == value && abs(value) < 1e15 ? String(Int64(value)) : String(value)
                text += "\(name)\(labels) \(shown)\n"
            }
        }
        metric("liveactivity_connections", "gauge", "Open WebSocket connections by role.",
               [AccessPolicy.Role.controller, .viewer, .unauthenticated].map { ("{role=\"\($0.rawValue)\"}", Double(connections[$0] ?? 0)) })
        metric("liveactivity_activities", "gauge", "Activities not yet dismissed, by state.",
               ActivityState.allCases.filter { $0 != .dismissed }.map { ("{state=\"\($0.rawValue)\"}", Double(activities[$0] ?? 0)) })
        metric("liveactivity_messages_received_total", "counter", "WebSocket messages received.", [("", Double(messagesReceived))])
        metric("liveactivity_received_bytes_total", "counter", "WebSocket payload bytes received.", [("", Double(bytesReceived))])
        metric("liveactivity_messages_sent_total", "counter", "WebSocket messages written.", [("", Double(messagesSent))])
        metric("liveactivity_sent_bytes_total", "counter", "WebSocket payload bytes written, before compression.", [("", Double(bytesSent))])
        metric("liveactivity_sent_frame_bytes_total", "counter", "WebSocket frame bytes written: headers included, after compression.",
               [("", Double(frameBytesSent))])
        metric("liveactivity_websocket_writes_total", "counter", "Writes that carried those messages: a client's waiting messages go out together.",
               [("", Double(webSocketWrites))])
        metric("liveactivity_websocket_writes_buffered_total", "counter", "Sends the client's socket took only in part: the rest is kept and sent first once it has room.",
               [("", Double(webSocketWritesBuffered))])
        metric("liveactivity_websocket_writes_queued_total", "counter", "Of those writes, the ones a broadcast handed to the kernel together (io_uring): clients with one message waiting.",
               [("", Double(webSocketWritesQueued))])
        metric("liveactivity_websocket_write_submissions_total", "counter", "System calls that handed queued writes to the kernel (io_uring_enter): about one per broadcast that had such clients.",
               [("", Double(webSocketWriteSubmissions))])
        metric("liveactivity_slow_clients_closed_total", "counter", "WebSocket clients closed with 1013 (try again later): more than --max-queued-bytes behind.",
               [("", Double(slowClientsClosed))])
        metric("liveactivity_sent_compressed_messages_total", "counter", "WebSocket messages written compressed (permessage-deflate, RSV1 set).",
               [("", Double(compressedMessagesSent))])
        metric("liveactivity_sent_stored_messages_total", "counter", "WebSocket messages written to permessage-deflate clients as stored blocks (RSV1 set, not compressed).",
               [("", Double(storedMessagesSent))])
        metric("liveactivity_deflate_compressions_total", "counter", "Messages compressed for permessage-deflate: once per message and window size, whatever the number of clients.",
               [("", Double(deflateCompressions))])
        metric("liveactivity_errors_total", "counter", "Error messages sent, by code.",
               errors.sorted { $0.key < $1.key }.map { ("{code=\"\($0.key)\"}", Double($0.value)) })
        metric("liveactivity_broadcast_encodes_total", "counter", "Broadcast frames encoded (once per event or tick).", [("", Double(broadcastEncodes))])
        metric("liveactivity_broadcast_deliveries_total", "counter", "Broadcast frames queued for clients (encodes times clients).", [("", Double(broadcastDeliveries))])
        metric("liveactivity_log_lines_dropped_total", "counter", "Log lines dropped because standard error or output did not drain.",
               [("", Double(LogWriter.standardStreamsDroppedLines))])
        metric("liveactivity_store_commits_total", "counter", "Groups of changes recorded by the store, one transaction each.", [("", Double(storeCommits))])
        metric("liveactivity_store_changes_total", "counter", "Changes recorded by the store (in those groups).", [("", Double(storeChanges))])
        let name = "liveactivity_change_to_wire_seconds"
        text += "# HELP \(name) Seconds from an accepted change to its last write on the wire.\n# TYPE \(name) histogram\n"
        for (bound, count) in zip(changeToWire.bounds, changeToWire.counts) {
            text += "\(name)_bucket{le=\"\(bound)\"} \(count)\n"
        }
        text += "\(name)_bucket{le=\"+Inf\"} \(changeToWire.count)\n\(name)_sum \(changeToWire.sum)\n\(name)_count \(changeToWire.count)\n"
        return text
    }
}
