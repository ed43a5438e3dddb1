import CHiredis
import Foundation

/// Where the cluster's Redis is: `redis://HOST:PORT[/DB]`.
public struct RedisEndpoint: Sendable, Equatable, CustomStringConvertible {
    /// Host name or address.
    public var host: String
    /// TCP port (default 6379).
    public var port: Int
    /// Database number (default 0).
    public var database: Int

    /// Parses `redis://HOST:PORT[/DB]`.
    /// - Throws: ``ClusterError`` naming what is wrong with the URL.
    public init(_ url: String) throws {
        guard url.hasPrefix("redis://") else { throw ClusterError("--cluster must look like redis://HOST:PORT[/DB], got \"\(url)\"") }
        var rest = url.dropFirst("redis://".count)
        var database = 0
        if let slash = rest.firstIndex(of: "/") {
            let tail = rest[rest.index(after: slash)...]
            guard tail.isEmpty || Int(tail) != nil else { throw ClusterError("the database in \"\(url)\" must be a number") }
            database = Int(tail) ?? 0
            rest = rest[..<slash]
        }
        let parts = rest.split(separator: ":", omittingEmptySubsequences: false)
        guard let host = parts.first, !host.isEmpty, parts.count <= 2 else { throw ClusterError("no host in \"\(url)\"") }
        let port = parts.count == 2 ? Int(parts[1]) : 6379
        guard let port, (1...65535).contains(port) else { throw ClusterError("bad port in \"\(url)\"") }
        self.host = String(host)
        self.port = port
        self.database = database
    }

    /// The endpoint as `redis://HOST:PORT/DB`.
    public var description: String { "redis://\(host):\(port)/\(database)" }
}

/// A cluster failure: Redis unreachable, a script error, or a concurrent change (see ``isConflict``).
public struct ClusterError: Error, Sendable, CustomStringConvertible {
    /// What went wrong.
    public let description: String
    /// For a conflict: the sequence number Redis holds, ahead of ours.
    public var conflictSequence: UInt64?

    /// Whether another instance changed the activities first (catch up, then retry).
    public var isConflict: Bool { conflictSequence != nil }

    init(_ description: String, conflictSequence: UInt64? = nil) {
        self.description = description
        self.conflictSequence = conflictSequence
    }
}

/// One blocking connection to Redis (hiredis), reconnecting on demand. Not thread-safe: one owner.
final class RedisConnection {
    let endpoint: RedisEndpoint
    /// Longest a command may block, in seconds (the service thread must never hang on Redis).
    let timeout: TimeInterval
    private var context: UnsafeMutablePointer<redisContext>?
    /// When a command last succeeded on this connection (monotonic seconds).
    private var lastUsed: TimeInterval = 0
    /// A connection idle longer than this (seconds) is checked with PING before a command, so a Redis that
    /// restarted meanwhile is noticed before a write, whose outcome would then be unknown.
    static let idleCheckAfter: TimeInterval = 0.5

    init(endpoint: RedisEndpoint, timeout: TimeInterval) {
        self.endpoint = endpoint
        self.timeout = timeout
    }

    deinit { disconnect() }

    /// Closes the connection; the next command reconnects.
    func disconnect() {
        if let context { redisFree(context) }
        context = nil
    }

    private func connect() throws(ClusterError) -> UnsafeMutablePointer<redisContext> {
        if let context { return context }
        let seconds = Int(timeout)
        let tv = timeval(tv_sec: seconds, tv_usec: Int((timeout - Double(seconds)) * 1_000_000))
        guard let made = redisConnectWithTimeout(endpoint.host, Int32(endpoint.port), tv) else {
            throw ClusterError("cannot reach Redis at \(endpoint): out of memory")
        }
        if made.pointee.err != 0 {
            let reason = withUnsafeBytes(of: made.pointee.errstr) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
            redisFree(made)
            throw ClusterError("cannot reach Redis at \(endpoint): \(reason)")
        }
        redisSetTimeout(made, tv)
        context = made
        if endpoint.database != 0 {
            let reply = try command(["SELECT", String(endpoint.database)])
            if case .error(let message) = reply { throw ClusterError("SELECT \(endpoint.database) failed: \(message)") }
        }
        return made
    }

    /// Runs one command (binary-safe arguments).
    /// - Returns: the reply; Redis errors come back as `.error`, not thrown.
    /// - Throws: ``ClusterError`` when Redis cannot be reached or the connection breaks (it is dropped).
    @discardableResult
    func command(_ arguments: [String]) throws(ClusterError) -> RedisReply {
        let now = ProcessInfo.processInfo.systemUptime
        if self.context != nil, now - lastUsed > Self.idleCheckAfter, arguments.first != "PING" {
            do { try send(["PING"]) } catch { disconnect() }
        }
        let reply = try send(arguments)
        lastUsed = ProcessInfo.processInfo.systemUptime
        return reply
    }

    private func send(_ arguments: [String]) throws(ClusterError) -> RedisReply {
        let context = try connect()
        let bytes = arguments.map { Array($0.utf8) }
        let reply: UnsafeMutableRawPointer? = withCStrings(bytes) { pointers, lengths in
            redisCommandArgv(context, Int32(bytes.count), pointers, lengths)
        }
        guard let reply else {
            let reason = withUnsafeBytes(of: context.pointee.errstr) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
            disconnect()
            throw ClusterError("Redis at \(endpoint) failed: \(reason.isEmpty ? "connection lost" : reason)")
        }
        defer { freeReplyObject(reply) }
        return RedisReply(reply.assumingMemoryBound(to: redisReply.self))
    }

    private func withCStrings<R>(_ arguments: [[UInt8]], _ body: (UnsafeMutablePointer<UnsafePointer<CChar>?>, UnsafePointer<Int>) -> R) -> R {
        let buffers = arguments.map { bytes -> UnsafeMutablePointer<CChar> in
            let buffer = UnsafeMutablePointer<CChar>.allocate(capacity: max(bytes.count, 1))
            bytes.withUnsafeBufferPointer { source in
                if let base = source.baseAddress { UnsafeMutableRawPointer(buffer).copyMemory(from: base, byteCount: bytes.count) }
            }
            return buffer
        }
        defer { buffers.forEach { $0.deallocate() } }
        var pointers: [UnsafePointer<CChar>?] = buffers.map { UnsafePointer($0) }
        let lengths = arguments.map(\.count)
        return pointers.withUnsafeMutableBufferPointer { pointers in
            lengths.withUnsafeBufferPointer { lengths in body(pointers.baseAddress!, lengths.baseAddress!) }
        }
    }
}
