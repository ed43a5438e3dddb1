import Foundation

/// Everything the server needs to know to run, as one value with embedded defaults.
///
/// Only the executable reads it from arguments or the environment; the server receives it whole.
public struct ServerConfiguration: Sendable {
    /// Address to listen on (an IPv4/IPv6 literal or an interface name). Default `127.0.0.1`.
    public var host: String = "127.0.0.1"
    /// TCP port; 0 lets the kernel pick a free one (read it back from ``LiveActivityServer/port``). Default 8080.
    public var port: Int = 8080
    /// Folder served over HTTP at `/`; `index.html` is the dashboard.
    public var publicDirectory: URL
    /// Largest WebSocket message accepted, in bytes; larger ones close the connection with 1009. Default 64 KiB.
    public var maximumMessageBytes: Int = 64 * 1024
    /// Most frames queued for one client before it is dropped as too slow (close 1008). Default 4096.
    public var maximumQueuedFrames: Int = 4096
    /// Most activities live (pending, active or stale) at once. Default 64.
    public var maximumLiveActivities: Int = 64
    /// How long shutdown waits for clients to take their close frame, in seconds. Default 1.
    public var shutdownGracePeriod: TimeInterval = 1

    /// Creates a configuration serving `publicDirectory`, with every other value at its default.
    public init(publicDirectory: URL) {
        self.publicDirectory = publicDirectory
    }
}
