import CLibWebSockets
import Foundation
import LiveActivityCore

/// One connected WebSocket client. Owned and touched only by the service thread.
final class Session {
    /// Server-assigned id, also stored in the lws per-session data.
    let id: UInt64
    /// The lws connection; valid until the CLOSED callback.
    let wsi: OpaquePointer
    /// Frames waiting for WRITEABLE, oldest first, from `head`.
    private var outbox: [Frame] = []
    private var head = 0
    /// The latest tick not yet written; a newer tick replaces it, so slow clients never pile up ticks.
    var pendingTick: Frame?
    /// The message being received, across fragments.
    var incoming: [UInt8] = []
    /// Set once a message went over the size limit; every later fragment is refused.
    var refusedOversizedMessage = false
    /// Close code and reason to send once the outbox is written (1001 at shutdown).
    var closing: (code: lws_close_status, reason: String)?

    /// What the client may do.
    var role: AccessPolicy.Role
    /// For a share viewer: the share it came through; it then sees ``scope`` only and may send nothing.
    var shareId: String?
    /// For a share viewer: the one activity it may see.
    var scope: String?
    /// The `?since=` it connected with: where to resume once it may watch (after `hello` if need be).
    var resumeFrom: UInt64?
    /// The `?log=` it connected with: the log its `since` belongs to.
    var resumeLog: String?
    /// Limits how fast the client may send messages.
    var bucket: TokenBucket
    /// Messages refused by the rate limit in the current window, and when that window began.
    var refusals = 0
    var refusalWindowStart = Date.distantPast
    /// Bytes queued in `outbox` and not yet written.
    private(set) var queuedBytes = 0

    init(id: UInt64, wsi: OpaquePointer, role: AccessPolicy.Role, bucket: TokenBucket) {
        self.id = id
        self.wsi = wsi
        self.role = role
        self.bucket = bucket
    }

    /// The frame written last. permessage-deflate may go on reading a written payload on later
    /// POLLOUTs (zlib keeps `next_in` into it while it drains), so it must outlive `lws_write`: it is
    /// kept until the next write or the end of the session.
    var lastWritten: Frame?

    /// Frames queued and not yet written (ticks excluded).
    var queued: Int { outbox.count - head }

    /// Queues a frame; the caller asks lws for WRITEABLE.
    func enqueue(_ frame: Frame) {
        outbox.append(frame)
        queuedBytes += frame.count
    }

    /// The next frame to write: queued messages first, then the latest tick.
    func next() -> Frame? {
        if head < outbox.count {
            let frame = outbox[head]
            head += 1
            queuedBytes -= frame.count
            if head == outbox.count {
                outbox.removeAll(keepingCapacity: true)
                head = 0
            } else if head >= 1024 {
                outbox.removeFirst(head)
                head = 0
            }
            return frame
        }
        defer { pendingTick = nil }
        return pendingTick
    }

    /// Drops everything not yet written (before closing with an error code).
    func discardOutbox() {
        outbox.removeAll()
        head = 0
        queuedBytes = 0
        pendingTick = nil
    }

    /// Whether anything is left to write.
    var hasPending: Bool { head < outbox.count || pendingTick != nil }
}
