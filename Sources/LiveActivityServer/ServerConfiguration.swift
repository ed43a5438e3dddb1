import Foundation
import LiveActivityCore
import LiveActivityImages

/// The APNs listener: APNs's provider API over HTTP/2 (RFC 9113) on a port of its own, for backends whose
/// APNs library speaks HTTP/2 only; and the key provider tokens are checked with. Thread-safe (a value).
public struct APNsSettings: Sendable, Equatable {
    /// TCP port of the HTTP/2 listener; 0 lets the kernel pick; nil = no listener (`--apns-port`). Default nil.
    public var port: Int?
    /// PEM file of the key provider tokens are signed with (`--apns-key AuthKey_<KeyID>.p8`), or nil: tokens
    /// are then checked for shape and age only, and taken only by an open loopback server. Default nil.
    public var keyPath: String?
    /// Most streams one connection may have open at once (SETTINGS_MAX_CONCURRENT_STREAMS, RFC 9113 §6.5.2);
    /// more are refused (`--apns-max-streams`). Default 100.
    public var maximumStreams = 100
    /// Largest header list one request may send, in bytes as RFC 9113 §6.5.2 counts them (name + value + 32
    /// per field); a larger one resets the stream (`--apns-max-header-bytes`). Default 16,384.
    public var maximumHeaderBytes = 16 * 1024
    /// Largest request body read, in bytes (`--apns-max-body-bytes`); a larger one is answered 413
    /// `PayloadTooLarge` at once. At least 5,120 (a broadcast's limit). Default 8,192.
    public var maximumBodyBytes = 8 * 1024
    /// Most connections at once; more are closed as soon as they are accepted (`--apns-max-connections`).
    /// Default 256.
    public var maximumConnections = 256
    /// Seconds a connection may take for its TLS handshake and HTTP/2 preface. Default 10.
    public var handshakeTimeoutSeconds = 10
    /// Seconds an established connection may sit with no stream and no bytes before it gets GOAWAY (NO_ERROR)
    /// and is closed, so idle clients do not hold the connection slots; APNs clients reconnect. Default 600.
    public var idleTimeoutSeconds = 600

    /// The defaults: no listener, no key.
    public init() {}

    /// Checks the settings.
    /// - Throws: ``ServerError`` naming the option: a port out of range, limits out of range, an unreadable
    ///   key, a listener on a host that is not an IP address.
    func validate(host: String) throws {
        if let port, !(0...65535).contains(port) { throw ServerError("--apns-port must be from 0 to 65535, got \(port)") }
        if port != nil, !ServerConfiguration.isIPv4(host), !ServerConfiguration.isIPv6(host) {
            throw ServerError("--apns-port needs --host to be an IP address (127.0.0.1, 0.0.0.0, ::1), got \"\(host)\"")
        }
        if maximumStreams < 1 { throw ServerError("--apns-max-streams must be at least 1") }
        if maximumHeaderBytes < 1024 { throw ServerError("--apns-max-header-bytes must be at least 1024") }
        if maximumBodyBytes < 5120 { throw ServerError("--apns-max-body-bytes must be at least 5120 (a broadcast payload's limit)") }
        if maximumConnections < 1 { throw ServerError("--apns-max-connections must be at least 1") }
        if let keyPath, !FileManager.default.isReadableFile(atPath: keyPath) { throw ServerError("cannot read --apns-key \(keyPath)") }
    }
}

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
    /// The folder of built-in kind folders (`Kinds/workout/`, `Kinds/emoji/`); `nil`: the `Kinds` folder
    /// beside ``publicDirectory`` (the layout of a checkout and of the installed share folder).
    public var kindsDirectory: URL?
    /// More folders of kind folders (`serve --kinds DIR`), loaded after the built-in ones.
    public var extraKindsDirectories: [URL] = []

    /// The folders of kind folders to load, built-in first.
    public var allKindsDirectories: [URL] {
        [kindsDirectory ?? publicDirectory.deletingLastPathComponent().appendingPathComponent("Kinds")] + extraKindsDirectories
    }
    /// Largest WebSocket message accepted, in bytes; larger ones close the connection with 1009. Default 64 KiB.
    public var maximumMessageBytes: Int = 64 * 1024
    /// Most bytes queued for one client before it is closed as too slow (close 1013, try again later).
    /// Ticks are not counted: only the newest is kept. Default 4 MiB.
    public var maximumQueuedBytes: Int = 4 * 1024 * 1024
    /// Most WebSocket connections at once; over it the handshake gets HTTP 503. Default 20,000.
    public var maximumConnections: Int = 20_000
    /// Messages a connection may send per second, sustained (token bucket rate). Default 20.
    public var messagesPerSecond: Double = 20
    /// Messages a connection may send in one burst (token bucket capacity). Default 40.
    public var messageBurst: Double = 40
    /// Messages refused within 10 s after which a flooding connection is closed with 1008. Default 100.
    public var rateLimitedBeforeClose: Int = 100
    /// Who may watch and who may control.
    public var access = AccessPolicy()
    /// Origins (`scheme://host[:port]`) allowed to open WebSockets besides the server's own. Default none.
    public var allowedOrigins: [String] = []
    /// PEM certificate chain for https/wss on the same port; `nil` = plain http/ws.
    public var tlsCertificatePath: String?
    /// PEM private key for ``tlsCertificatePath``.
    public var tlsPrivateKeyPath: String?
    /// Seconds a connection may be silent before the server sends a WebSocket ping. Default 30.
    public var pingIntervalSeconds: Int = 30
    /// Seconds without any frame (pong included) after which a connection is dropped. Default 75.
    public var idleTimeoutSeconds: Int = 75
    /// Seconds between two `heartbeat` messages to every watching client (docs/PROTOCOL.md); clients treat
    /// a silence of about three as a dead connection. Default 15.
    public var heartbeatSeconds: Int = 15
    /// Most activities live (pending, active or stale) at once. Default 64.
    public var maximumLiveActivities: Int = 64
    /// How long shutdown waits for clients to take their close frame, in seconds. Default 1.
    public var shutdownGracePeriod: TimeInterval = 1
    /// Remote images: the thumbnail cache folder and fetch limits (see ``ImageSettings``). Default: thumbnails off.
    public var images = ImageSettings()
    /// Whether WebSocket clients may negotiate permessage-deflate (RFC 7692; `--deflate on|off`). On, every
    /// message is compressed once for all of them (see ``Deflate``); off, lws does not offer the extension
    /// and every client gets plain frames. Default on.
    public var permessageDeflate = true
    /// Which system call waits for the sockets (`--event-loop epoll|poll`): epoll (through libev and lws's
    /// libev plugin; one wait costs the same whatever the number of clients) or lws's own `poll(2)` over every
    /// socket. epoll falls back to poll, with a warning, when libev or `libwebsockets-evlib-ev` is missing.
    /// Default epoll.
    public var eventLoop: EventLoop = .epoll
    /// The choices of ``eventLoop``.
    public enum EventLoop: String, Sendable, CaseIterable {
        /// epoll through libev (the default).
        case epoll
        /// libwebsockets' own `poll(2)` loop.
        case poll
    }
    /// Whether a broadcast pass hands its sends to the kernel together, in one `io_uring_enter(2)` (`--io-uring
    /// on|off`): the same bytes as one `send(2)` per client, for 4–15 % less CPU per delivery on loopback
    /// (BENCHMARKS.md, issue 30). Clients with one message waiting, with or without permessage-deflate: a client
    /// lagging by several gets them in one `send(2)` either way. Off, or when the kernel refuses io_uring (a kernel
    /// before 5.6, a container's seccomp profile, `kernel.io_uring_disabled`; a warning says so at startup), each
    /// write is its own `send(2)`. Default on.
    public var ioUring = true
    /// Budget emulation for the push inspector (`--emulate-budget`; see ``BudgetEmulation``). Default off.
    public var budget = BudgetEmulation()
    /// The APNs listener (`--apns-port`, HTTP/2) and how provider tokens are checked (`--apns-key`).
    public var apns = APNsSettings()

    /// Creates a configuration serving `publicDirectory`, with every other value at its default.
    public init(publicDirectory: URL) {
        self.publicDirectory = publicDirectory
    }

    /// Whether the server speaks TLS (https/wss).
    public var usesTLS: Bool { tlsCertificatePath != nil }

    /// What the listening socket binds: ``host`` with `localhost` read as `127.0.0.1`.
    public var listenAddress: String { host.lowercased() == "localhost" ? "127.0.0.1" : host }

    /// Whether `text` is a dotted IPv4 address (`127.0.0.1`, `0.0.0.0`).
    static func isIPv4(_ text: String) -> Bool {
        var address = in_addr()
        return inet_pton(AF_INET, text, &address) == 1
    }

    /// Whether `text` is an IPv6 address, with or without brackets (`::1`, `[::]`).
    static func isIPv6(_ text: String) -> Bool {
        var address = in6_addr()
        return inet_pton(AF_INET6, text.trimmingCharacters(in: CharacterSet(charactersIn: "[]")), &address) == 1
    }

    /// Checks the settings that would make the server unsafe or unable to run.
    /// - Throws: ``ServerError`` naming the setting: a `--host` that is neither an IP address nor a network
    ///   interface, no controller token on a non-loopback host, half a TLS pair, unreadable TLS files, limits
    ///   out of range.
    public func validate() throws {
        let address = listenAddress
        if !Self.isIPv4(address), !Self.isIPv6(address), if_nametoindex(address) == 0 {
            throw ServerError("--host must be an IP address (127.0.0.1, 0.0.0.0, ::1), localhost or a network interface name, got \"\(host)\"")
        }
        if access.controllerToken == nil, !AccessPolicy.isLoopback(host) {
            throw ServerError("refusing to listen on \(host) without a controller token: anyone who can reach it could start and end activities. Set --controller-token (or LIVEACTIVITY_CONTROLLER_TOKEN), or listen on 127.0.0.1")
        }
        if (tlsCertificatePath == nil) != (tlsPrivateKeyPath == nil) {
            throw ServerError("TLS needs both --tls-cert and --tls-key")
        }
        for path in [tlsCertificatePath, tlsPrivateKeyPath].compactMap({ $0 }) where !FileManager.default.isReadableFile(atPath: path) {
            throw ServerError("cannot read the TLS file \(path)")
        }
        if maximumMessageBytes < 1024 { throw ServerError("--max-message-bytes must be at least 1024") }
        if maximumConnections < 1 { throw ServerError("--max-connections must be at least 1") }
        if messagesPerSecond <= 0 || messageBurst < 1 { throw ServerError("--rate must be above 0 and --burst at least 1") }
        try apns.validate(host: listenAddress)
    }
}
