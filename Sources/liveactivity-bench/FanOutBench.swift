import CLibWebSockets
import Foundation
import LWSSupport

/// One benchmark run: N watching connections and one controller in a single libwebsockets client
/// context, driven through its phases by one service thread (the caller of ``run()``).
///
/// Connection 0 is the controller; 1…N watch. Per-connection state is kept in parallel arrays indexed by
/// the connection number, which lws hands back through each connection's opaque user data. Everything
/// here is touched by the service thread only.
final class FanOutBench {
    /// Where a connection is in its life.
    enum ConnectionState: UInt8 {
        case waiting, dialing, open, ready, failed, closed
    }

    /// Where the run is.
    enum Phase: Equatable {
        case connecting, starting, probing, holding, publishing, draining, done
    }

    let options: BenchOptions
    let probe: ServerProbe
    /// The subprotocol the clients ask for (docs/PROTOCOL.md).
    static let subprotocol = "liveactivity.v1"
    /// What the clients offer with `--deflate on`: permessage-deflate, letting the server cap the client's window.
    static let deflateOffer = "permessage-deflate; client_max_window_bits"

    /// The C memory the lws context points into (tables, dial strings); outlives `lws_context_destroy`.
    let resources = LWSContextMemory()
    var context: OpaquePointer?
    var phase = Phase.connecting
    /// Why the run stopped early, if it did.
    var failure: String?

    // MARK: Connections (index 0 = controller)

    /// Connections in all: the watchers plus the controller.
    let total: Int
    var wsis: [OpaquePointer?]
    var states: [ConnectionState]
    var attempts: [UInt8]
    /// Highest sequence number each connection has received, or -1.
    var lastSeq: [Int32]
    /// Whether each connection has seen the `started` event (the probe).
    var sawStarted: [Bool]
    /// Fragments of a message not yet whole, by connection.
    var partial: [Int: [UInt8]] = [:]
    var retries: [Int] = []
    var nextToDial = 0
    var dialing = 0
    var opened = 0
    var ready = 0
    var failed = 0
    var closedEarly = 0
    var startedSeen = 0

    // MARK: Publishing

    var activityID: String?
    /// Messages the controller must write before any update (the `start`).
    var controlOutbox: [String] = []
    var sent = 0
    /// Watchers ready when publishing began: each update should reach all of them.
    var audience = 0
    /// Receipts per sequence number.
    var receipts: [Int32]
    /// Updates received by the whole audience.
    var fullyDelivered = 0
    var delivered = 0
    var duplicates = 0
    var latencies = LatencySamples()
    /// The controller waits for the window to open (closed-loop mode).
    var publisherBlocked = false
    /// Size of the last `updated` frame received, in bytes (after inflating).
    var messageBytes = 0
    var controllerErrors = 0
    var lastError: String?
    var ticksSeen = 0
    /// Ticks received by the watchers while the connections were held idle.
    var ticksWhileHeld = 0
    /// When the idle hold began and ended (monotonic ns).
    var holdStart: UInt64 = 0
    var holdEnd: UInt64 = 0
    var writeBuffer: [UInt8] = []
    /// ISO-8601 instant used for a finished countdown (`--ticks off`).
    let frozenInstant: String

    // MARK: Times (monotonic ns)

    var firstDial: UInt64 = 0
    var lastEstablished: UInt64 = 0
    var phaseStarted: UInt64 = 0
    var publishStart: UInt64 = 0
    var publishEnd: UInt64 = 0
    var lastDelivery: UInt64 = 0
    var lastProgress: UInt64 = 0

    // MARK: Server readings

    var rssBefore: Int?
    var rssConnected: Int?
    var rssAfter: Int?
    var countersBefore: ServerProbe.Counters?
    var countersAfter: ServerProbe.Counters?
    var cpuBefore: Double?
    var cpuAfter: Double?
    /// This process's own CPU time (user + system, seconds) when publishing began and when it ended.
    var ownCPUBefore = 0.0
    var ownCPUAfter = 0.0

    var housekeeping: BenchTimer?
    var publishTimer: BenchTimer?

    init(options: BenchOptions) {
        self.options = options
        probe = ServerProbe(host: options.host, port: options.port, token: options.controllerToken ?? options.viewerToken,
                            pid: options.serverPID)
        total = options.clients + 1
        wsis = Array(repeating: nil, count: total)
        states = Array(repeating: .waiting, count: total)
        attempts = Array(repeating: 0, count: total)
        lastSeq = Array(repeating: -1, count: total)
        sawStarted = Array(repeating: false, count: total)
        receipts = Array(repeating: 0, count: options.messages)
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        frozenInstant = formatter.string(from: Date())
        latencies.reserve(options.messages * options.clients)
    }

    /// Runs every phase to the end and returns the result.
    func run() -> BenchResult {
        raiseFileLimit()
        rssBefore = probe.residentKiB()
        var info = lws_context_creation_info()
        info.port = -1 // CONTEXT_PORT_NO_LISTEN: a client-only context
        info.protocols = UnsafePointer(resources.protocols([.init(name: Self.subprotocol, callback: benchCallback)]))
        if options.deflate { info.extensions = UnsafePointer(resources.permessageDeflate(clientOffer: Self.deflateOffer)) }
        info.user = Unmanaged.passUnretained(self).toOpaque()
        info.uid = -1
        info.gid = -1
        info.fd_limit_per_thread = UInt32(total + 64)
        info.timeout_secs = 30
        info.connect_timeout_secs = 30
        lws_set_log_level(Int32(LLL_ERR), nil)
        guard let context = lws_create_context(&info) else {
            failure = "cannot create a libwebsockets client context"
            return result()
        }
        self.context = context
        let housekeeping = BenchTimer { [unowned self] in self.housekeepingFired() }
        let publishTimer = BenchTimer { [unowned self] in self.requestPublisherWrite() }
        self.housekeeping = housekeeping
        self.publishTimer = publishTimer
        firstDial = MonotonicClock.now()
        enter(.connecting)
        housekeeping.schedule(in: context, after: 0.005)
        while phase != .done {
            if lws_service(context, 0) < 0 { break }
            step()
        }
        housekeeping.cancel()
        publishTimer.cancel()
        ownCPUAfter = Self.ownCPUSeconds()
        countersAfter = probe.counters()
        cpuAfter = probe.cpuSeconds()
        rssAfter = probe.residentKiB()
        lws_context_destroy(context)
        self.context = nil
        withExtendedLifetime(resources) {}
        return result()
    }

    /// Keeps `lws_service` returning at least every 5 ms so ``step()`` runs.
    private func housekeepingFired() {
        if let context { housekeeping?.schedule(in: context, after: 0.005) }
    }

    private func enter(_ next: Phase) {
        phase = next
        phaseStarted = MonotonicClock.now()
    }

    private func seconds(since start: UInt64) -> Double {
        Double(MonotonicClock.now() &- start) / 1e9
    }

    /// Moves the run along: dials, checks each phase's end and its timeouts. Service thread only.
    func step() {
        switch phase {
        case .connecting:
            while dialing < options.dials, let index = nextDial() { dial(index) }
            let allTried = nextToDial == total && retries.isEmpty && dialing == 0
            if allTried, ready == opened || seconds(since: lastEstablished) > 10 {
                guard states[0] == .ready else { return stop("the controller could not connect") }
                enter(.starting)
                controlOutbox.append(startMessage())
                lws_callback_on_writable(wsis[0])
            } else if seconds(since: phaseStarted) > 120 {
                stop("connecting took over 120 s (\(opened) of \(total) open)")
            }
        case .starting:
            if activityID != nil {
                enter(.probing)
            } else if seconds(since: phaseStarted) > 10 {
                stop("no ack for start within 10 s (\(lastError ?? "no error"))")
            }
        case .probing:
            let watchersReady = states.dropFirst().filter { $0 == .ready }.count
            if startedSeen >= watchersReady || seconds(since: phaseStarted) > 10 {
                enter(.holding)
                holdStart = phaseStarted
            }
        case .holding:
            guard seconds(since: phaseStarted) >= options.idleSeconds else { return }
            holdEnd = MonotonicClock.now()
            rssConnected = probe.residentKiB()
            countersBefore = probe.counters()
            cpuBefore = probe.cpuSeconds()
            ownCPUBefore = Self.ownCPUSeconds()
            guard options.messages > 0 else { return enter(.done) }
            audience = states.dropFirst().filter { $0 == .ready }.count
            enter(.publishing)
            publishStart = MonotonicClock.now()
            lastProgress = publishStart
            requestPublisherWrite()
        case .publishing:
            let now = MonotonicClock.now()
            if sent >= options.messages || durationOver(now) {
                publishEnd = now
                enter(.draining)
            } else if publisherBlocked, Double(now &- lastProgress) / 1e9 > options.quietTimeout {
                publishEnd = now
                failure = "publishing stalled: nothing delivered for \(options.quietTimeout) s"
                enter(.draining)
            }
        case .draining:
            let now = MonotonicClock.now()
            let quiet = Double(now &- max(lastProgress, publishEnd)) / 1e9
            if delivered + duplicates >= sent * audience || quiet > options.quietTimeout
                || Double(now &- publishEnd) / 1e9 > options.drainTimeout {
                enter(.done)
            }
        case .done:
            break
        }
    }

    private func stop(_ why: String) {
        failure = why
        enter(.done)
    }

    func durationOver(_ now: UInt64) -> Bool {
        guard let duration = options.duration else { return false }
        return Double(now &- publishStart) / 1e9 >= duration
    }

    /// The next connection to dial: a retry first, then the next never tried.
    private func nextDial() -> Int? {
        if let index = retries.popLast() { return index }
        guard nextToDial < total else { return nil }
        defer { nextToDial += 1 }
        return nextToDial
    }

    /// Starts connection `index` (0 = controller, with the controller token).
    private func dial(_ index: Int) {
        guard let context else { return }
        states[index] = .dialing
        attempts[index] += 1
        dialing += 1
        let endpoint = endpoint(of: index)
        let strings = dialStrings[endpoint]!
        var path = endpoint.path
        let token = index == 0 ? options.controllerToken : options.viewerToken
        if let token { path += (path.contains("?") ? "&" : "?") + "token=" + token }
        var connection = lws_client_connect_info()
        connection.context = context
        connection.address = strings.address
        connection.port = Int32(endpoint.port)
        connection.host = strings.host
        connection.protocol = subprotocolName
        connection.ietf_version_or_minus_one = -1
        connection.opaque_user_data = UnsafeMutableRawPointer(bitPattern: index + 1)
        // lws copies the path into the new connection before returning.
        let made = path.withCString { pathPointer -> OpaquePointer? in
            connection.path = pathPointer
            return lws_client_connect_via_info(&connection)
        }
        if made == nil, states[index] == .dialing { connectionFailed(index) }
    }

    /// The server connection `index` dials: the publish server for the controller (0), the `--server`s
    /// round-robin for the watchers.
    func endpoint(of index: Int) -> BenchOptions.Endpoint {
        index == 0 ? options.publishServer : options.servers[(index - 1) % options.servers.count]
    }

    /// The C strings each server's dials share (address, `Host:`), kept in ``resources``.
    private lazy var dialStrings: [BenchOptions.Endpoint: (address: UnsafePointer<CChar>, host: UnsafePointer<CChar>)] = {
        var strings: [BenchOptions.Endpoint: (address: UnsafePointer<CChar>, host: UnsafePointer<CChar>)] = [:]
        for endpoint in options.servers + [options.publishServer] where strings[endpoint] == nil {
            strings[endpoint] = (resources.keep(endpoint.host), resources.keep("\(endpoint.host):\(endpoint.port)"))
        }
        return strings
    }()
    private lazy var subprotocolName = resources.keep(Self.subprotocol)

    /// Asks lws for the controller's WRITEABLE (the next update is due or the window opened).
    func requestPublisherWrite() {
        if let wsi = wsis[0], states[0] == .ready { lws_callback_on_writable(wsi) }
    }

    /// The `start` message: a 600 s countdown, or (`--ticks off`) one that is already over.
    private func startMessage() -> String {
        if options.ticks {
            return #"{"type":"start","requestId":"bench-start","attributes":{"workout":"jogging"},"durationSeconds":600}"#
        }
        return #"{"type":"start","requestId":"bench-start","attributes":{"workout":"jogging"},"content":\#(frozenContent())}"#
    }

    /// Content whose countdown ends when it starts: no ticks for it.
    func frozenContent() -> String {
        #"{"state":{"workoutTimer":{"start":"\#(frozenInstant)","end":"\#(frozenInstant)"}},"staleDate":null,"relevanceScore":0}"#
    }

    /// This process's CPU time so far (user + system), in seconds.
    static func ownCPUSeconds() -> Double {
        var usage = rusage()
        getrusage(RUSAGE_SELF.rawValue, &usage)
        return Double(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec) + Double(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) / 1e6
    }

    /// Lets the process open a descriptor per connection (soft limit up to the hard limit).
    private func raiseFileLimit() {
        var limit = rlimit()
        guard getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit) == 0 else { return }
        limit.rlim_cur = limit.rlim_max
        _ = setrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit)
    }
}
