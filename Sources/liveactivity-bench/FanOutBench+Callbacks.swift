import CLibWebSockets
import Foundation

/// What each connection does on each lws callback. Service thread only.
extension FanOutBench {
    /// A dial failed (CLIENT_CONNECTION_ERROR): retried up to 3 times, then counted as failed.
    func connectionFailed(_ index: Int) {
        guard states[index] == .dialing else { return }
        dialing -= 1
        wsis[index] = nil
        if attempts[index] < 3 {
            states[index] = .waiting
            retries.append(index)
        } else {
            states[index] = .failed
            failed += 1
        }
    }

    /// The handshake completed (CLIENT_ESTABLISHED).
    func established(_ index: Int, wsi: OpaquePointer) {
        guard states[index] == .dialing else { return }
        dialing -= 1
        opened += 1
        states[index] = .open
        wsis[index] = wsi
        lastEstablished = MonotonicClock.now()
    }

    /// The connection ended (CLIENT_CLOSED).
    func closed(_ index: Int) {
        if states[index] == .dialing { return connectionFailed(index) }
        if phase != .done, states[index] == .open || states[index] == .ready { closedEarly += 1 }
        states[index] = .closed
        wsis[index] = nil
    }

    /// One piece of a message arrived (CLIENT_RECEIVE); a whole message is handled at once.
    /// - Parameter whole: whether this piece ends the message.
    func received(_ bytes: UnsafeRawBufferPointer, connection index: Int, whole: Bool) {
        if !whole || partial[index] != nil {
            partial[index, default: []].append(contentsOf: bytes)
            guard whole, let message = partial.removeValue(forKey: index) else { return }
            message.withUnsafeBytes { handle($0, connection: index) }
            return
        }
        handle(bytes, connection: index)
    }

    /// Handles one whole message from the server.
    private func handle(_ message: UnsafeRawBufferPointer, connection index: Int) {
        if states[index] == .open {
            states[index] = .ready
            ready += 1
        }
        if index == 0 { return controllerReceived(message) }
        if let (seq, ts) = FrameScanner.sequenceAndTimestamp(message) {
            guard seq < sent else { return }
            let now = MonotonicClock.now()
            if Int32(seq) <= lastSeq[index] {
                duplicates += 1
                return
            }
            lastSeq[index] = Int32(seq)
            delivered += 1
            messageBytes = message.count
            latencies.record(nanoseconds: now &- ts)
            lastDelivery = now
            lastProgress = now
            receipts[seq] += 1
            if Int(receipts[seq]) == audience {
                fullyDelivered += 1
                if publisherBlocked {
                    publisherBlocked = false
                    requestPublisherWrite()
                }
            }
        } else if phase == .holding {
            if FrameScanner.contains(#""type":"tick""#, in: message) { ticksWhileHeld += 1 }
        } else if !sawStarted[index], FrameScanner.contains(#""event":"started""#, in: message) {
            sawStarted[index] = true
            startedSeen += 1
        }
    }

    /// The controller's messages: the `ack` of `start` (the activity id), errors, ticks.
    private func controllerReceived(_ message: UnsafeRawBufferPointer) {
        if activityID == nil, FrameScanner.contains(#""requestId":"bench-start""#, in: message) {
            if FrameScanner.contains(#""type":"ack""#, in: message) {
                activityID = FrameScanner.stringValue("activityId", in: message)
            }
        }
        if FrameScanner.contains(#""type":"error""#, in: message) {
            controllerErrors += 1
            lastError = String(decoding: message.prefix(300), as: UTF8.self)
        } else if phase == .publishing || phase == .draining, FrameScanner.contains(#""type":"tick""#, in: message) {
            ticksSeen += 1
        }
    }

    /// The controller may write (CLIENT_WRITEABLE): the `start`, then the next update when it is due
    /// (rate mode) or the window has room (closed loop). One `lws_write` per callback.
    /// - Returns: -1 to drop the connection (a failed write), else 0.
    func writable(_ index: Int, wsi: OpaquePointer) -> Int32 {
        guard index == 0 else { return 0 }
        if !controlOutbox.isEmpty {
            let text = controlOutbox.removeFirst()
            if write(text, wsi) < 0 { return -1 }
            if !controlOutbox.isEmpty { lws_callback_on_writable(wsi) }
            return 0
        }
        guard phase == .publishing, let activityID, sent < options.messages else { return 0 }
        let now = MonotonicClock.now()
        if durationOver(now) { return 0 }
        if options.rate > 0 {
            let due = publishStart + UInt64(Double(sent) / options.rate * 1e9)
            if now < due {
                if let context { publishTimer?.schedule(in: context, after: Double(due - now) / 1e9) }
                return 0
            }
        } else if sent - fullyDelivered >= options.window {
            publisherBlocked = true
            return 0
        }
        if write(updateMessage(activityID: activityID, seq: sent, ts: MonotonicClock.now()), wsi) < 0 { return -1 }
        sent += 1
        guard sent < options.messages else { return 0 }
        if options.rate > 0 {
            let due = publishStart + UInt64(Double(sent) / options.rate * 1e9)
            let after = MonotonicClock.now()
            if after >= due {
                lws_callback_on_writable(wsi)
            } else if let context {
                publishTimer?.schedule(in: context, after: Double(due - after) / 1e9)
            }
        } else if sent - fullyDelivered < options.window {
            lws_callback_on_writable(wsi)
        } else {
            publisherBlocked = true
        }
        return 0
    }

    /// One update: the alert body carries the sequence number and the send time (monotonic ns).
    private func updateMessage(activityID: String, seq: Int, ts: UInt64) -> String {
        let body = #"{\"seq\":\#(seq),\"ts\":\#(ts)}"#
        let content = options.ticks ? #""durationSeconds":600"# : #""content":\#(frozenContent())"#
        return #"{"type":"update","activityId":"\#(activityID)",\#(content),"alert":{"title":"bench","body":"\#(body)"}}"#
    }

    /// Writes one text frame from a buffer with `LWS_PRE` headroom.
    /// - Returns: -1 when lws wrote less than the whole frame.
    private func write(_ text: String, _ wsi: OpaquePointer) -> Int32 {
        let headroom = clws_pre()
        writeBuffer.removeAll(keepingCapacity: true)
        writeBuffer.append(contentsOf: repeatElement(0, count: headroom))
        writeBuffer.append(contentsOf: text.utf8)
        let count = writeBuffer.count - headroom
        let written = writeBuffer.withUnsafeMutableBufferPointer { storage in
            lws_write(wsi, storage.baseAddress! + headroom, count, LWS_WRITE_TEXT)
        }
        return written < count ? -1 : 0
    }
}
