import CLibWebSockets
import Foundation
import LiveActivityCore

/// The WebSocket side of libwebsockets: turns callbacks into values for the application and the hub, and
/// performs the hub's actions. Service thread only.
///
/// Each WebSocket connection's per-session data holds one unmanaged reference to its ``Session``
/// (retained at ESTABLISHED, released at CLOSED), so RECEIVE and WRITEABLE reach it with no lookup.
///
/// Every client gets every frame whole, header included, so that the frames waiting for one client go out in
/// one write (``WriteBatch``): one `send(2)` on a plain connection's socket, `LWS_WRITE_RAW` for what it does
/// not take and over TLS (``write(_:to:socket:lwsIsIdle:)``). permessage-deflate (RFC 7692): lws negotiates
/// it and inflates what clients send, but its compressor, one zlib stream per connection made on the first text
/// frame written through it, is never used: a deflate client's frames are compressed once for all. lws 4.1's
/// ws role sends `LWS_WRITE_RAW` (= `LWS_WRITE_HTTP`) straight to `lws_issue_raw`, before the extensions'
/// `PAYLOAD_TX`, so the payload is neither framed nor compressed again. A frame the socket takes only in
/// part has its rest copied to lws's `buflist_out`, which lws drains before anything else on the next
/// POLLOUT (its own pongs, pings and close frames included, which it appends behind), so frames stay whole
/// and in order. A deflate client's frames all have RSV1 set, compressed or stored (see
/// ``Deflate/writeStored(_:to:)``).
extension LWSServerAdapter {
    // MARK: Callbacks

    /// FILTER_PROTOCOL_CONNECTION: admits the handshake or answers it with an HTTP status.
    /// - Returns: 0 to accept, nonzero to refuse.
    func webSocketFilter(_ wsi: OpaquePointer, sessionData: UnsafeMutableRawPointer?) -> Int32 {
        // The per-session data may still hold what an HTTP request on this connection stored there.
        sessionData?.storeBytes(of: nil, as: UnsafeMutableRawPointer?.self)
        // A target or header lws cut at its limit (a token of 8 KB): 414 / 431, as for HTTP requests.
        if let tooLarge = HTTPAdapter.oversizedHead(wsi) {
            return refuseUpgrade(wsi, UpgradeRefusal(status: tooLarge.status.code, reason: tooLarge.message))
        }
        let upgrade = upgradeRequest(wsi)
        guard let refusal = application.admit(upgrade) else {
            sizeReceiveBuffer(wsi, for: upgrade)
            return 0
        }
        return refuseUpgrade(wsi, refusal)
    }

    /// HTTP_CONFIRM_UPGRADE, before lws reads the handshake's WebSocket headers: a handshake breaking RFC 6455
    /// §4.2.1 (``HandshakeCheck``) is answered with a status naming the header, where lws 4.1 would hang up
    /// without a word (no `Sec-WebSocket-Key`, a `Sec-WebSocket-Protocol` list without ours) or answer 101
    /// (another version, a malformed key).
    /// - Parameter upgrade: the request's `Upgrade` value (`websocket`; lws also asks about `h2c`).
    /// - Returns: 0 to go on; -1 once refused (lws then closes the connection).
    func webSocketConfirmUpgrade(_ wsi: OpaquePointer, upgrade: String) -> Int32 {
        guard upgrade.lowercased() == "websocket",
              let refusal = HandshakeCheck.refusal(key: header(wsi, WSI_TOKEN_KEY), version: header(wsi, WSI_TOKEN_VERSION),
                                                   protocols: header(wsi, WSI_TOKEN_PROTOCOL), subprotocol: LWSContextResources.subprotocol)
        else { return 0 }
        _ = refuseUpgrade(wsi, refusal)
        return -1
    }

    /// Sets the receive buffer lws is about to allocate for this connection (issue 30): lws 4.1 reads it
    /// from the protocol's `rx_buffer_size` right after this callback (`lws_server_init_wsi_for_ws`), keeps
    /// it for the connection's life, and reads at most that much from the socket per service round. A
    /// controller (it publishes) gets ``LWSContextResources/controllerReceiveBufferBytes``, so a round still
    /// takes several of its updates into one broadcast batch; every other client, a viewer that sends little,
    /// ``LWSContextResources/receiveBufferBytes``. The row is the vhost's own (`lws_get_protocol`), written
    /// only here, on the service thread, before each allocation that reads it. lws 4.1.6 also reads the row
    /// later, for connections made before: as the largest piece of a plain client's message handed to one
    /// RECEIVE (the session joins pieces of any size), and as the point at which a frame collected byte by
    /// byte is handed over, which only control frames (at most 125 bytes) are; it never writes past a
    /// connection's own buffer ("Attempted overflow" is checked against the size allocated).
    private func sizeReceiveBuffer(_ wsi: OpaquePointer, for upgrade: UpgradeRequest) {
        guard let row = lws_get_protocol(wsi) else { return }
        UnsafeMutablePointer(mutating: row).pointee.rx_buffer_size = application.publishes(upgrade)
            ? LWSContextResources.controllerReceiveBufferBytes : LWSContextResources.receiveBufferBytes
    }

    /// ADD_HEADERS while answering a WebSocket handshake: completes lws's permessage-deflate answer with the
    /// `server_max_window_bits` the offer asked for (``PermessageDeflate/answeredWindowBits``), which lws 4.1
    /// leaves out although the server keeps to it. RFC 7692 §7.1.2.1: a server that accepts an offer with
    /// that parameter answers it, and strict clients (Python `websockets`, for one) refuse an answer without
    /// it. lws has just written its `Sec-WebSocket-Extensions` line, the last one before `args.p`, and its
    /// line end; the parameter goes before that line end.
    /// - Returns: whether this was a WebSocket handshake (nothing else to do with the callback).
    func webSocketHandshakeHeaders(_ wsi: OpaquePointer, _ args: UnsafeMutablePointer<lws_process_html_args>) -> Bool {
        guard lws_hdr_total_length(wsi, WSI_TOKEN_KEY) > 0 else { return false }
        guard let offer = header(wsi, WSI_TOKEN_EXTENSIONS),
              let bits = PermessageDeflate(offer: offer)?.answeredWindowBits,
              let end = args.pointee.p else { return true }
        let line = UnsafeMutableRawPointer(end).assumingMemoryBound(to: UInt8.self)
        // The line lws wrote last: from after the previous line end to its own "\r\n".
        guard line[-2] == 0x0D, line[-1] == 0x0A else { return true }
        var start = -3
        while start > -400, line[start] != 0x0A { start -= 1 }
        guard line[start] == 0x0A else { return true }
        let written = String(decoding: UnsafeBufferPointer(start: line + start + 1, count: -start - 3), as: UTF8.self)
        guard written.lowercased().hasPrefix("sec-websocket-extensions: permessage-deflate") else { return true }
        let parameter = Array("; server_max_window_bits=\(bits)\r\n".utf8)
        guard Int(args.pointee.max_len) >= parameter.count else { return true }
        (line - 2).update(from: parameter, count: parameter.count)
        args.pointee.p = UnsafeMutableRawPointer(line - 2 + parameter.count).assumingMemoryBound(to: CChar.self)
        args.pointee.max_len -= Int32(parameter.count - 2)
        return true
    }

    /// ESTABLISHED: registers the session (with what permessage-deflate allows it) and keeps it in the
    /// per-session data.
    func webSocketEstablished(_ wsi: OpaquePointer, sessionData: UnsafeMutableRawPointer) {
        // lws 4.1 has no call that says which extensions a connection negotiated; setting an option of one
        // succeeds only when it is active there. mem_level 1 would size lws's compressor at its smallest
        // were it ever made (it is not: see webSocketWritable).
        let negotiated = lws_set_extension_option(wsi, "permessage-deflate", "mem_level", "1") == 0
        // The offer is read for its server_max_window_bits, which lws 4.1 neither applies nor answers; one
        // it cannot read gets stored frames (they need no window).
        let offer = negotiated ? header(wsi, WSI_TOKEN_EXTENSIONS) ?? "" : nil
        let deflate = offer.map { PermessageDeflate(offer: $0) ?? PermessageDeflate(windowBits: nil) }
        if let deflate {
            // lws 4.1 ends its inflater after each client message when *server_no_context_takeover* was
            // negotiated, which constrains the server's compressor, not the client's: a client that asked it
            // and keeps its own context then fails on its second message ("invalid distance too far back").
            // Its inflater may forget between messages exactly when the client resets its compressor
            // (client_no_context_takeover, RFC 7692 §7.1.1.2), which also frees its window (about 40 KB)
            // between messages.
            _ = lws_set_extension_option(wsi, "permessage-deflate", "server_no_context_takeover",
                                         deflate.clientNoContextTakeover ? "1" : "0")
        }
        let session = application.sessionOpened(upgradeRequest(wsi), connection: ConnectionHandle(wsi: wsi), deflate: deflate, offer: offer)
        let pointer = Unmanaged.passRetained(session).toOpaque()
        liveSessionPointers.insert(pointer)
        sessionData.storeBytes(of: pointer, as: UnsafeMutableRawPointer?.self)
    }

    /// The session kept in a connection's per-session data, or nil before ESTABLISHED.
    @inline(__always)
    func session(in sessionData: UnsafeMutableRawPointer?) -> Unmanaged<Session>? {
        guard let pointer = sessionData?.load(as: UnsafeMutableRawPointer?.self) else { return nil }
        return Unmanaged<Session>.fromOpaque(pointer)
    }

    /// RECEIVE: one fragment of a client message.
    /// - Returns: -1 to close the connection, else 0.
    func webSocketReceived(_ wsi: OpaquePointer, sessionData: UnsafeMutableRawPointer?, _ bytes: UnsafeRawBufferPointer) -> Int32 {
        guard let session = session(in: sessionData) else { return -1 }
        session._withUnsafeGuaranteedRef { session in
            application.received(bytes, isFinal: lws_is_final_fragment(wsi) != 0, isBinary: lws_frame_is_binary(wsi) != 0, session: session)
        }
        return 0
    }

    /// SERVER_WRITEABLE: one write (as lws requires), then re-arm if more waits (``writeWaiting(to:on:lwsIsIdle:)``).
    /// - Returns: -1 to close the connection, else 0.
    func webSocketWritable(_ wsi: OpaquePointer, sessionData: UnsafeMutableRawPointer?) -> Int32 {
        // No session (not established yet, or already closed): nothing to write, as before this adapter.
        guard let session = session(in: sessionData) else { return 0 }
        // A round that writes to thousands of clients lasts tens of milliseconds: changes held for the store
        // and the store's results (the inbox) are not left waiting for its end.
        application.betweenWrites(beforeInbox: {})
        return session._withUnsafeGuaranteedRef { writeWaiting(to: $0, on: wsi) }
    }

    /// Writes what waits for `session` in one write (``write(_:to:socket:lwsIsIdle:)``), and asks for WRITEABLE again
    /// if more waits. Every frame goes out whole, header included, past lws's framing: ``Frame/wire`` for a plain
    /// client, its permessage-deflate form for the others. When more than one frame waits, they go out together, up to
    /// ``WriteBatch/limit`` bytes (``writeGathered(from:to:socket:lwsIsIdle:_:)``). A closing session gets its close
    /// frame once the rest is written. Nothing is written once lws is closing the connection itself.
    /// - Parameters:
    ///   - lwsIsIdle: the caller has just seen that lws holds none of the connection's bytes and has not begun its own
    ///     close (the broadcast pass, ``writeBroadcast()``); otherwise both are checked here.
    ///   - sendQueue: the broadcast pass's queue (with `lwsIsIdle`), held by the caller (unmanaged: an optional
    ///     reference cost a retain and a release per client): a single broadcast frame is queued
    ///     there (its bytes stay put in the hub's ring until the pass submits them, before the inbox runs) rather
    ///     than sent at once.
    /// - Returns: -1 when the connection must close (a write failed), else 0.
    private func writeWaiting(to session: Session, on wsi: OpaquePointer, lwsIsIdle: Bool = false, sendQueue: Unmanaged<SendQueue>? = nil) -> Int32 {
        // After the close frame nothing more is written (RFC 6455 §5.5.1): not a tick, not a reply.
        // (`isClosing` first: it shares the first cache line with the other fields a write reads.)
        if session.isClosing, session.closeFrameSent { return 0 }
        // Nor after lws's own (invalid UTF-8, a protocol error, a client that stopped answering pings): lws
        // still calls WRITEABLE while it waits for the client's close.
        if !lwsIsIdle, lws_get_close_length(wsi) != 0 { return 0 }
        let socket = session.connection?.directSocket ?? -1
        // Broadcast frames with nothing of the session's own before or among them, the usual case: borrowed
        // from the ring (no retain and release per frame and client), one written straight from its frame,
        // several gathered.
        let run = hub.plainBroadcastRun(for: session)
        if !run.isEmpty {
            let sent: Bool?
            if run.count == 1 {
                let whole: Bool
                if let sendQueue, socket >= 0 {
                    // In a broadcast pass, the client's frame is queued with the others': its bytes (plain or deflate),
                    // kept by the frame the ring holds, stay put until the pass submits them.
                    let bytes = hub.withBroadcastFrame(at: run.lowerBound) { frame in withWire(of: frame, for: session) { $0 } }
                    whole = sendQueue._withUnsafeGuaranteedRef { queueSend(bytes, to: wsi, socket: socket, $0) }
                } else {
                    whole = hub.withBroadcastFrame(at: run.lowerBound) { frame in
                        withWire(of: frame, for: session) { write($0, to: wsi, socket: socket, lwsIsIdle: lwsIsIdle) }
                    }
                }
                session.cursor = run.upperBound
                sent = whole ? hub.hasPending(session) : nil
            } else {
                sent = writeGathered(from: nil, to: wsi, socket: socket, lwsIsIdle: lwsIsIdle, session)
            }
            guard let more = sent else { return -1 }
            if more { lws_callback_on_writable(wsi) }
            return 0
        }
        switch hub.nextWrite(for: session) {
        case .frame(let frame, let more):
            // Nothing keeps `frame` past this write: lws copies what the socket does not take
            // (buflist_out), and its own compressor, which would read the payload on later POLLOUTs, is
            // never made (every frame is written whole).
            let rearm: Bool
            if more {
                guard let left = writeGathered(from: frame, to: wsi, socket: socket, lwsIsIdle: lwsIsIdle, session) else { return -1 }
                rearm = left
            } else {
                guard withWire(of: frame, for: session, { write($0, to: wsi, socket: socket, lwsIsIdle: lwsIsIdle) }) else { return -1 }
                rearm = false
            }
            if rearm { lws_callback_on_writable(wsi) }
            return 0
        case .close(let code, let reason):
            let reasonBytes = Array(reason.utf8.prefix(123))
            if isShuttingDown {
                // Stopping: lws writes the close frame and drops the connection at once.
                var bytes = reasonBytes
                lws_close_reason(wsi, lws_close_status(rawValue: UInt32(code.rawValue)), &bytes, bytes.count)
                return -1
            }
            return writeCloseFrame(wsi, code: code, reason: reasonBytes, session: session)
        case .idle:
            return 0
        }
    }

    /// Writes the broadcast to every session now, from the service loop between two `lws_service` calls
    /// (``broadcastWritesDue``), rather than asking lws for WRITEABLE on every connection: that costs a
    /// `poll` over every socket, a pass of lws's dispatch and two poll-set changes per client, about a tenth
    /// of a delivery's CPU at 10,000 clients. Everything a round broadcast goes out together, as it did in the
    /// WRITEABLE round. A session is left to its WRITEABLE callback when
    /// - it is closing (its close frame is written only from WRITEABLE),
    /// - lws is closing it itself (`lws_get_close_length`: nothing may follow lws's close frame, and
    ///   ``writeWaiting(to:on:lwsIsIdle:)`` writes nothing then),
    /// - lws still holds part of an earlier write (`lws_partial_buffered`: lws drains it first on POLLOUT,
    ///   then calls WRITEABLE, so frames stay in order and a slow client's lag stays in the hub, where the
    ///   slow-client policy sees it),
    /// - or a batch filled up (``writeWaiting(to:on:lwsIsIdle:)`` asked for WRITEABLE).
    /// A failed write kills the connection at the next service (`LWS_TO_KILL_ASYNC`; CLOSED then forgets the
    /// session). The store's results (the inbox) are taken between clients, as WRITEABLE does; one that
    /// broadcasts again makes another pass for the clients already written. Changes that writing took from
    /// the inbox then go to the store at once, rather than wait for the next `poll`. Does nothing when no
    /// broadcast is due.
    func writeBroadcast() {
        guard broadcastWritesDue else { return }
        if broadcastHold.end() { runtime?.holdTimer.cancel() }
        // The hub, the application and the sessions' array are held once for the pass, and each session is
        // borrowed from that array (it holds them): no retain and release per client (2 % of the fixed load's
        // samples, though most of it was the first touch of the session's line, which its next read now takes).
        //
        // Two loops: the first only reads which sessions may be written (the session, then lws's `wsi` and its
        // websocket state: three or four cache lines a client, each depending on the one before), the second
        // writes to those without reading lws's state again. With no system call between them, the first
        // loop's iterations overlap in the processor and their cache misses with them; in one loop each miss
        // stood alone between two sends, and the sends had evicted the lines again by the time the write read
        // them (2 % of the fixed load's samples, 0.3 % now). Nothing the second loop runs in between (writes,
        // the inbox) makes lws hold bytes or start its own close for another session (lws is not serviced
        // during the pass), and a session the inbox closes meanwhile is skipped there.
        let hub = self.hub, application = self.application!
        while broadcastWritesDue {
            // Held for the pass (no retain per client); a queue the kernel refused stays held here but takes nothing.
            let heldQueue = self.sendQueue
            let sendQueue = heldQueue.map { Unmanaged.passUnretained($0) }
            defer { withExtendedLifetime(heldQueue) {} }
            broadcastWritesDue = false
            let sessions = hub.sessionsInOrder
            var ready = readyToWrite, answering = answeringFirst
            readyToWrite = []
            answeringFirst = []
            ready.removeAll(keepingCapacity: true)
            answering.removeAll(keepingCapacity: true)
            for index in sessions.indices {
                Unmanaged.passUnretained(sessions[index])._withUnsafeGuaranteedRef { session in
                    guard !session.isClosing, hub.hasPending(session), let wsi = session.connection?.wsi,
                          lws_partial_buffered(wsi) == 0, lws_get_close_length(wsi) == 0 else { return }
                    if session.pendingReplies > 0 { answering.append(index) } else { ready.append(index) }
                }
            }
            // Sessions with replies first: a publisher learns at once that its updates were taken (its acks come
            // after what it is owed of the broadcast, in its own order as always) and sends its next ones while
            // the pass writes to everyone else; last in the order it connected, it waited for the whole pass.
            if !answering.isEmpty { ready.insert(contentsOf: answering, at: 0) }
            answeringFirst = answering
            for (place, index) in ready.enumerated() {
                // The sends since the first loop have evicted the next session's lines: fetched while this
                // one is written (the session's write fields are in its first 128 bytes).
                if place + 1 < ready.count {
                    clws_prefetch(Unmanaged.passUnretained(sessions[ready[place + 1]]).toOpaque())
                }
                Unmanaged.passUnretained(sessions[index])._withUnsafeGuaranteedRef { session in
                    guard !session.isClosing, let wsi = session.connection?.wsi else { return }
                    if writeWaiting(to: session, on: wsi, lwsIsIdle: true, sendQueue: sendQueue) < 0 {
                        lws_set_timeout(wsi, PENDING_TIMEOUT_CLOSE_SEND, LWS_TO_KILL_ASYNC)
                    }
                    // The adapter borrowed, not captured: a method reference retained it once per client.
                    Unmanaged.passUnretained(self)._withUnsafeGuaranteedRef { adapter in
                        application.betweenWrites(beforeInbox: { adapter.submitQueuedSends() })
                    }
                }
            }
            readyToWrite = ready
            // Before another pass writes to the same clients again, and before lws is serviced.
            submitQueuedSends()
        }
        application.releaseHeldSubmissions()
    }

    /// Writes `first` (when given) and the frames after it in one write (``write(_:to:socket:lwsIsIdle:)``), gathered
    /// in ``outgoingBatch`` until the hub has no more frames for `session` or the batch passes ``WriteBatch/limit``. A
    /// close frame the hub returns is left for the next WRITEABLE (``Hub/nextWrite(for:)`` returns it again).
    /// - Returns: whether more waits (ask for WRITEABLE again), or nil when the write failed and the connection must
    ///   close.
    private func writeGathered(from first: Frame?, to wsi: OpaquePointer, socket: Int32, lwsIsIdle: Bool, _ session: Session) -> Bool? {
        // The hub read once per batch, and each frame a constant of one iteration (no reassigned `var`, which
        // cost a retain and a release per frame).
        let hub = self.hub
        let batch = outgoingBatch
        batch.reset()
        if let first { withWire(of: first, for: session) { batch.append($0) } }
        var more = true  // called only when more than one frame waits
        while more, batch.hasRoom {
            // Broadcast frames with nothing of the session's own among them: straight from the ring, borrowed.
            let run = hub.plainBroadcastRun(for: session)
            if !run.isEmpty {
                var position = run.lowerBound
                while position < run.upperBound, batch.hasRoom {
                    hub.withBroadcastFrame(at: position) { frame in withWire(of: frame, for: session) { batch.append($0) } }
                    position += 1
                }
                session.cursor = position
                more = hub.hasPending(session)
                continue
            }
            guard case .frame(let next, let nextMore) = hub.nextWrite(for: session) else { break }
            withWire(of: next, for: session) { batch.append($0) }
            more = nextMore
        }
        let bytes = batch.bytes
        return write(UnsafeRawBufferPointer(bytes), to: wsi, socket: socket, lwsIsIdle: lwsIsIdle) ? more : nil
    }

    /// Queues one write of whole frames on a plain TCP connection whose earlier bytes lws has all sent, to go out
    /// with the pass's other sends (``SendQueue``, ``submitQueuedSends()``): the same bytes the `send(2)` of
    /// ``write(_:to:socket:lwsIsIdle:)`` would send, which must stay put until then. A full queue is submitted
    /// first; once the kernel has refused the ring, the bytes are written at once instead.
    /// - Returns: whether they were queued, sent or buffered; false: the connection is broken and must close.
    @inline(__always)
    private func queueSend(_ bytes: UnsafeRawBufferPointer, to wsi: OpaquePointer, socket: Int32, _ sendQueue: SendQueue) -> Bool {
        if sendQueue.isFull { submitQueuedSends() }
        if sendQueue.isBroken { return write(bytes, to: wsi, socket: socket, lwsIsIdle: true) }
        metrics.webSocketWrites += 1
        metrics.webSocketWritesQueued += 1
        sendQueue.queue(bytes, on: socket, of: wsi)
        return true
    }

    /// Submits the sends the broadcast pass queued (``queueSend(_:to:socket:_:)``) and settles each: what a socket
    /// did not take goes to lws (`LWS_WRITE_RAW`, kept in its `buflist_out` and sent first at the next POLLOUT), as
    /// after a short `send(2)`; a broken connection is killed at the next service. Should the kernel refuse the
    /// ring, later passes send each write themselves.
    func submitQueuedSends() {
        guard let sendQueue, !sendQueue.isEmpty else { return }
        metrics.webSocketWriteSubmissions += 1
        sendQueue.submit(sendCompleted)
        if sendQueue.isBroken {
            logger.warning("io_uring refused the server's sends: sending each write with send(2) from now on", [:])
            self.sendQueue = nil
        }
    }

    /// One queued send's result (``submitQueuedSends()``): the bytes the socket took, or `-errno`.
    private func sendCompleted(_ send: SendQueue.Send, _ result: Int) {
        if result == send.bytes.count { return }
        guard result >= 0 || result == -Int(EAGAIN) else {
            lws_set_timeout(send.wsi, PENDING_TIMEOUT_CLOSE_SEND, LWS_TO_KILL_ASYNC)
            return
        }
        metrics.webSocketWritesBuffered += 1
        if !handToLWS(send.bytes, after: max(result, 0), on: send.wsi) {
            lws_set_timeout(send.wsi, PENDING_TIMEOUT_CLOSE_SEND, LWS_TO_KILL_ASYNC)
        }
    }

    /// Calls `body` with `frame` whole as `session` gets it: ``Frame/wire`` for a plain client; for a
    /// permessage-deflate client, compressed, made once for every client with the same window, or stored
    /// when compressing does not pay (``Frame/deflatedWire(windowBits:using:)``; RSV1 set either way). Counts
    /// it as sent in ``metrics`` (the write that follows either takes it all or closes the connection).
    @inline(__always)
    private func withWire<R>(of frame: Frame, for session: Session, _ body: (UnsafeRawBufferPointer) -> R) -> R {
        let result: R
        let wireBytes: Int
        if let negotiated = session.deflate {
            let (wire, compressed) = frame.deflatedWire(windowBits: negotiated.windowBits, using: deflate)
            result = body(wire)
            wireBytes = wire.count
            metrics.deflateCompressions = deflate.compressions
            if compressed {
                metrics.compressedMessagesSent += 1
            } else {
                metrics.storedMessagesSent += 1
            }
        } else {
            let wire = frame.wire
            result = body(wire)
            wireBytes = wire.count
        }
        metrics.frameBytesSent += wireBytes
        metrics.messagesSent += 1
        metrics.bytesSent += frame.count
        if let accepted = frame.acceptedAt {
            frame.writesLeft -= 1
            if frame.writesLeft == 0 {
                metrics.changeToWire.observe(Double(DispatchTime.now().uptimeNanoseconds - accepted) / 1e9)
            }
        }
        return result
    }

    /// One write of whole frames. On a plain TCP connection (``ConnectionHandle/directSocket``) whose earlier bytes lws
    /// has all sent (`lwsIsIdle`: the caller has just seen it; else checked here), one `send(2)` on its socket
    /// (`clws_send_now`: the system call itself, without glibc's cancellation bracket), and `lws_write` only for what
    /// the socket did not take; over TLS, or behind bytes lws still holds, all of it through `lws_write`
    /// (`LWS_WRITE_RAW`). What lws is given it sends or keeps in its `buflist_out`, which it drains before anything
    /// else at the next POLLOUT (its own pongs and close frames included) and only then calls WRITEABLE, so frames stay
    /// whole and in order either way: the same bytes lws's `lws_issue_raw` would have sent, without its per-write work
    /// (issue 30).
    /// - Returns: whether they were all sent or buffered; false: the connection is broken and must close.
    @inline(__always)
    private func write(_ bytes: UnsafeRawBufferPointer, to wsi: OpaquePointer, socket: Int32, lwsIsIdle: Bool) -> Bool {
        metrics.webSocketWrites += 1
        var sent = 0
        if socket >= 0, lwsIsIdle || lws_partial_buffered(wsi) == 0 {
            sent = clws_send_now(socket, bytes.baseAddress, bytes.count)
            if sent == bytes.count { return true }
            if sent < 0 { return false }
            metrics.webSocketWritesBuffered += 1
        }
        return handToLWS(bytes, after: sent, on: wsi)
    }

    /// Gives lws what the socket did not take of `bytes` (all of them past the first `sent`), `LWS_WRITE_RAW`: lws
    /// sends it or keeps it in its `buflist_out`, sent first at the next POLLOUT.
    /// - Returns: whether lws took it all; false: the connection is broken and must close.
    @inline(__always)
    private func handToLWS(_ bytes: UnsafeRawBufferPointer, after sent: Int, on wsi: OpaquePointer) -> Bool {
        let rest = UnsafeMutablePointer(mutating: bytes.baseAddress!.assumingMemoryBound(to: UInt8.self)) + sent
        return Int(lws_write(wsi, rest, bytes.count - sent, LWSConstants.writeRaw)) >= bytes.count - sent
    }

    /// Writes the close frame (RFC 6455 §5.5.1: status code, then the reason in UTF-8) and keeps the
    /// connection until the client answers with its own close frame (then ``webSocketPeerClosed(sessionData:)``
    /// drops it) or for 5 seconds, reading and dropping what the client still sends. lws's own close
    /// (`lws_close_reason`, then -1) closes the socket right after the frame: a client still writing (a
    /// flooding one) then got a reset, and Linux drops what a client has not read yet when a reset
    /// arrives, close frame included, so the client saw no close code at all.
    /// - Returns: 0, or -1 if the frame could not be written (the connection is then dropped).
    private func writeCloseFrame(_ wsi: OpaquePointer, code: CloseCode, reason: [UInt8], session: Session) -> Int32 {
        // A whole frame, written raw: lws 4.1 has no public write type for a close frame that leaves the
        // connection open. FIN and opcode 8, unmasked, a length under 126 (2 + at most 123 bytes).
        var buffer = [UInt8](repeating: 0, count: LWSConstants.headroom)
        buffer += [0x88, UInt8(2 + reason.count), UInt8(code.rawValue >> 8), UInt8(code.rawValue & 0xff)] + reason
        session.closeFrameSent = true
        let length = buffer.count - LWSConstants.headroom
        let written = buffer.withUnsafeMutableBufferPointer { frame in
            lws_write(wsi, frame.baseAddress! + LWSConstants.headroom, length, LWSConstants.writeRaw)
        }
        if written < length { return -1 }
        lws_set_timeout(wsi, PENDING_TIMEOUT_CLOSE_ACK, 5)
        return 0
    }

    /// WS_PEER_INITIATED_CLOSE: the client's close frame. After ours it is the answer, and the connection
    /// ends now (-1: lws then closes without a frame of its own). Otherwise lws answers it (0).
    func webSocketPeerClosed(sessionData: UnsafeMutableRawPointer?) -> Int32 {
        guard let session = session(in: sessionData) else { return 0 }
        return session.takeUnretainedValue().closeFrameSent ? -1 : 0
    }

    /// CLOSED: forgets the session and releases the per-session data's reference.
    func webSocketClosed(sessionData: UnsafeMutableRawPointer?) {
        guard let pointer = sessionData?.load(as: UnsafeMutableRawPointer?.self),
              liveSessionPointers.remove(pointer) != nil else { return }
        sessionData?.storeBytes(of: nil, as: UnsafeMutableRawPointer?.self)
        let session = Unmanaged<Session>.fromOpaque(pointer).takeRetainedValue()
        application.sessionClosed(session)
    }

    // MARK: Actions

    /// Performs the hub's actions on the connections: WRITEABLE asked for one session, the broadcast written
    /// to all after this round (``writeBroadcast()``), or a close at the next WRITEABLE (killed after 5 s if
    /// it never comes). Service thread only.
    package func perform(_ actions: [Hub.Action]) {
        for action in actions {
            switch action {
            case .requestWritable(let session):
                if let wsi = session.connection?.wsi { lws_callback_on_writable(wsi) }
            case .requestWritableForAll:
                // Written by the service loop once this round's callbacks are done (writeBroadcast()).
                broadcastWritesDue = true
            case .closeSoon(let session):
                if session.closing?.code == .tryAgainLater {
                    logger.warning("closing a client that does not keep up", ["session.id": "\(session.id)", "session.queued": "\(session.lagAtClose)"])
                }
                guard let wsi = session.connection?.wsi else { continue }
                lws_set_timeout(wsi, PENDING_TIMEOUT_CLOSE_SEND, 5)
                lws_callback_on_writable(wsi)
            }
        }
    }

    // MARK: Handshake

    /// Reads the handshake's values once.
    private func upgradeRequest(_ wsi: OpaquePointer) -> UpgradeRequest {
        let since = UpgradeRequest.since(queryArgument(wsi, "since"))
        return UpgradeRequest(path: header(wsi, WSI_TOKEN_GET_URI) ?? "", origin: header(wsi, WSI_TOKEN_ORIGIN),
                       host: header(wsi, WSI_TOKEN_HOST),
                       token: HTTPRequest.bearer(header(wsi, WSI_TOKEN_HTTP_AUTHORIZATION)) ?? queryArgument(wsi, "token"),
                       shareToken: queryArgument(wsi, "share"), since: since.value, log: queryArgument(wsi, "log"),
                       sinceText: since.text)
    }

    /// Answers a refused handshake with a complete HTTP/1.1 response, its status line from ``HTTPStatus``
    /// (`HTTP/1.1 410 Gone`; lws 4.1's own helper writes an HTTP/1.0 status line at this stage, which
    /// WebSocket clients reject as malformed). The body is `410 Gone: reason`; the refusal's `headers` are
    /// added to the usual ones (426's `Sec-WebSocket-Version`).
    /// - Returns: 1 (refused).
    private func refuseUpgrade(_ wsi: OpaquePointer, _ refusal: UpgradeRefusal) -> Int32 {
        let status = HTTPStatus(refusal.status)
        var response = HTTPResponse.plainText(status, "\(status): \(refusal.reason)\n")
        response.headers += refusal.headers.sorted { $0.key < $1.key }.map { (name: $0.key, value: $0.value) }
        let frame = Frame(response.http1Bytes(closing: true))
        _ = lws_write(wsi, frame.payload, frame.count, LWS_WRITE_HTTP_FINAL)
        return 1
    }

    /// The value of `name` in the request's query string (`?since=12`), URL-decoded, or nil.
    func queryArgument(_ wsi: OpaquePointer, _ name: String) -> String? {
        var buffer = [CChar](repeating: 0, count: 1024)
        return buffer.withUnsafeMutableBufferPointer { buffer in
            // lws copies "name=value" into the buffer and returns a pointer just after "name=".
            guard let value = lws_get_urlarg_by_name(wsi, name + "=", buffer.baseAddress, Int32(buffer.count)) else { return nil }
            return String(cString: value)
        }
    }

    /// The value of one request header, or nil.
    func header(_ wsi: OpaquePointer, _ token: lws_token_indexes) -> String? {
        let length = Int(lws_hdr_total_length(wsi, token))
        guard length > 0, length < 8192 else { return nil }
        var buffer = [CChar](repeating: 0, count: length + 1)
        guard lws_hdr_copy(wsi, &buffer, Int32(buffer.count), token) >= 0 else { return nil }
        return String(decoding: buffer.prefix(length).map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}
