import Foundation
import LiveActivityClientLWS
import LiveActivityCore
import Synchronization

/// A connection to a LiveActivityServer over the WebSocket protocol (docs/PROTOCOL.md), synchronous from
/// the caller's side.
///
/// ```swift
/// let client = ProtocolClient(configuration: ClientConfiguration(url: try WebSocketURL("ws://127.0.0.1:8080/ws")))
/// try client.connect()
/// let ack = try client.request(["type": .string("list")], timeout: .seconds(10))
/// client.close()
/// ```
///
/// Threading: ``connect()`` starts one service thread that runs the transport (``LWSClientTransport``,
/// LiveActivityClientLWS), which owns the libwebsockets context and connection and makes every lws call. The public methods are thread-safe: they hand outgoing frames over through
/// a locked queue and wake the service thread with `lws_cancel_service` (once per batch), and wait for
/// received messages on a condition variable.
public final class ProtocolClient: @unchecked Sendable {
    /// Where and how it connects.
    public let configuration: ClientConfiguration

    /// Where the connection is in its life.
    enum Phase {
        case idle, connecting, open
        case closed(ClientError)
    }

    // MARK: Shared between threads, all {condition}

    /// Guards every field below up to the service-thread section, and signals changes to them.
    let condition = NSCondition()
    /// {condition}
    var phase: Phase = .idle
    /// {condition} Messages received and not yet taken, oldest first.
    var inbox: [IncomingMessage] = []
    /// {condition} Encoded frames waiting for WRITEABLE, oldest first.
    var outbox: [[UInt8]] = []
    /// {condition} Set by ``close()``: send a close frame once the outbox is written.
    var closeRequested = false
    /// {condition} A `lws_cancel_service` is on its way; no need for another.
    var wakeupPending = false
    /// {condition} The live context, for `lws_cancel_service`; nil before start and once destroyed.
    var liveContext: LWSClientWaker?
    /// {condition} Counter behind ``makeRequestID()``.
    private var requestCounter = 0
    /// Tells the service loop to stop at once, whatever the connection is doing.
    let abandon = Atomic<Bool>(false)
    /// Signalled once when the service thread has destroyed its context.
    let finished = DispatchSemaphore(value: 0)
    /// {lock} the service thread, joined once it has finished.
    private let serviceThread = Locked<JoinableThread?>(nil)

    // MARK: Service-thread state

    /// Close code and reason the server sent, for the error message when the connection ends.
    var peerClose: String?
    /// Set when the connection is over (error or closed); ends the service loop.
    var connectionDone = false

    /// Largest message accepted from the server, in bytes.
    static let maximumMessageBytes = 16 << 20

    /// Creates a client; nothing happens until ``connect()``.
    public init(configuration: ClientConfiguration) {
        self.configuration = configuration
    }

    // MARK: Connecting and closing

    /// Connects and completes the WebSocket handshake, waiting at most `configuration.connectTimeout`.
    ///
    /// Call once. Thread-safe.
    /// - Throws: ``ClientError`` of kind `connectionFailed` (refused, DNS, TLS, handshake) or `timedOut`.
    public func connect() throws(ClientError) {
        condition.lock()
        guard case .idle = phase else {
            condition.unlock()
            preconditionFailure("ProtocolClient.connect() called twice")
        }
        phase = .connecting
        condition.unlock()

        let thread = JoinableThread(name: "lws-client") { [self] in serviceMain() }
        serviceThread.withLock { $0 = thread }
        thread.start()

        let deadline = Date().addingTimeInterval(configuration.connectTimeout.timeInterval)
        condition.lock()
        while case .connecting = phase {
            if !condition.wait(until: deadline) { break }
        }
        let outcome = phase
        if case .connecting = outcome {
            phase = .closed(ClientError(.timedOut, "no WebSocket handshake with \(configuration.url) within \(configuration.connectTimeout)"))
        }
        condition.unlock()
        switch outcome {
        case .open: return
        case .closed(let error):
            // The service loop ends by itself once the connection failed; join it before the caller exits.
            stopServiceThread()
            throw error
        case .idle, .connecting:
            stopServiceThread()
            throw ClientError(.timedOut, "no WebSocket handshake with \(configuration.url) within \(configuration.connectTimeout)")
        }
    }

    /// Sends a close frame (1000) once every queued message is written, and waits for the service thread
    /// to finish, at most `grace`. Thread-safe; later calls do nothing.
    /// - Parameter grace: how long to wait for the close handshake before dropping the connection.
    public func close(grace: Duration = .seconds(2)) {
        condition.lock()
        let running: Bool
        switch phase {
        case .idle:
            phase = .closed(ClientError(.connectionClosed, "closed"))
            condition.unlock()
            return
        case .open, .connecting:
            running = true
            closeRequested = true
        case .closed:
            running = false
        }
        wake()
        condition.unlock()
        if running, finished.wait(timeout: .now() + grace.timeInterval) == .success {
            finished.signal()
            joinServiceThread()
            return
        }
        stopServiceThread()
    }

    /// Stops the service loop at once and waits (at most two seconds) for the context to be destroyed.
    private func stopServiceThread() {
        abandon.store(true, ordering: .sequentiallyConsistent)
        condition.lock()
        liveContext?.cancelService()
        condition.unlock()
        if finished.wait(timeout: .now() + 2) == .success {
            finished.signal()
            joinServiceThread()
        }
    }

    /// Joins the service thread once it has said it finished: its OpenSSL state must be freed before the
    /// process exits (see ``JoinableThread``). Never called for a thread that has not finished.
    private func joinServiceThread() {
        serviceThread.withLock { $0 }?.join()
    }

    // MARK: Sending and receiving

    /// Queues one message for sending as a JSON text frame. Thread-safe; returns before it is written.
    /// - Throws: ``ClientError`` of kind `connectionClosed` when the connection is not open.
    public func send(_ message: JSONValue) throws(ClientError) {
        let bytes: [UInt8]
        do { bytes = Array(try JSONEncoder().encode(message)) } catch {
            throw ClientError(.connectionClosed, "cannot encode the message: \(error)")
        }
        condition.lock()
        defer { condition.unlock() }
        switch phase {
        case .open where !closeRequested:
            outbox.append(bytes)
            wake()
        case .closed(let error): throw error
        default: throw ClientError(.connectionClosed, "the connection is not open")
        }
    }

    /// Takes the oldest received message that `matches`, waiting for one at most `timeout`.
    ///
    /// Messages that do not match stay queued, in order, for later calls. Thread-safe.
    /// - Parameters:
    ///   - timeout: how long to wait; nil waits as long as the connection lasts.
    ///   - matches: which message to take; every message by default.
    /// - Returns: the message, or nil when none arrived in time.
    /// - Throws: ``ClientError`` (`connectionClosed`, `connectionFailed`…) once the connection is over and no
    ///   queued message matches.
    public func next(timeout: Duration?, where matches: (IncomingMessage) -> Bool = { _ in true }) throws(ClientError) -> IncomingMessage? {
        let deadline = timeout.map { Date().addingTimeInterval($0.timeInterval) }
        condition.lock()
        defer { condition.unlock() }
        while true {
            if let index = inbox.firstIndex(where: matches) {
                return inbox.remove(at: index)
            }
            if case .closed(let error) = phase { throw error }
            if let deadline {
                if !condition.wait(until: deadline) {
                    if let index = inbox.firstIndex(where: matches) { return inbox.remove(at: index) }
                    return nil
                }
            } else {
                condition.wait()
            }
        }
    }

    /// Sends a request with a fresh `requestId` and waits for the reply carrying it (`ack`, `error`, or the
    /// `snapshot` answering `list`). Other messages stay queued for ``next(timeout:where:)``.
    ///
    /// - Parameters:
    ///   - message: the request's members (`type` and the rest); `requestId` is added.
    ///   - timeout: how long to wait for the reply.
    /// - Returns: the reply (never an `error`).
    /// - Throws: ``ClientError`` of kind `refused` with the server's `error`, `timedOut` when no reply came in
    ///   time, or `connectionClosed` when the connection ended first.
    public func request(_ message: [String: JSONValue], timeout: Duration) throws(ClientError) -> IncomingMessage {
        let id = makeRequestID()
        var object = message
        object["requestId"] = .string(id)
        try send(.object(object))
        guard let reply = try next(timeout: timeout, where: { $0.requestId == id }) else {
            throw ClientError(.timedOut, "no reply from \(configuration.url) within \(timeout)")
        }
        if let refusal = reply.refusal { throw ClientError(refusal: refusal) }
        return reply
    }

    /// A request id unique within this client: `cli-1`, `cli-2`, …
    public func makeRequestID() -> String {
        condition.lock()
        defer { condition.unlock() }
        requestCounter += 1
        return "cli-\(requestCounter)"
    }

    /// Asks the service thread to run (EVENT_WAIT_CANCELLED), unless a wakeup is already pending.
    /// Call with `condition` held.
    func wake() {
        guard !wakeupPending, let liveContext else { return }
        wakeupPending = true
        liveContext.cancelService()
    }
}
