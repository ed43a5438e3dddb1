/// The broadcast frames every watching client reads, each encoded once, in order, with a read position per
/// client (the shape of libwebsockets' `minimal-ws-server-ring`: one ring, one tail per session).
///
/// Positions are global and never reused (`UInt64`, starting at 0); the ring keeps the frames from the oldest
/// position any client still needs up to ``head`` (exclusive). It also keeps each frame's offset in a running
/// byte count, so how far a client lags, in bytes, is one subtraction. Pure value; service thread only. In Core beside the ``Hub``; the hot reads are `@inlinable`, so
/// the lws adapter's write path inlines them as before the move.
package struct BroadcastRing {
    /// One broadcast frame.
    package struct Entry {
        /// The encoded message.
        package let frame: Frame
        /// The activity it is about, for share viewers that see one activity only; nil for every client.
        package let activityId: String?
        /// Payload bytes of every frame before this one (a running total since the ring began).
        package let offset: Int
    }

    @usableFromInline var entries: [Entry] = []
    /// Position of `entries[0]`.
    @usableFromInline package private(set) var base: UInt64 = 0
    /// Payload bytes of every frame appended so far.
    package private(set) var totalBytes = 0

    /// The position the next frame gets: a client at ``head`` has read everything.
    @inlinable package var head: UInt64 { base + UInt64(entries.count) }
    /// Frames kept.
    package var count: Int { entries.count }

    /// Appends a frame at ``head``.
    /// - Returns: its position.
    @discardableResult
    package mutating func append(_ frame: Frame, activityId: String?) -> UInt64 {
        entries.append(Entry(frame: frame, activityId: activityId, offset: totalBytes))
        totalBytes += frame.count
        return head - 1
    }

    /// The frame at `position`. - Precondition: `base <= position < head`.
    package func entry(at position: UInt64) -> Entry {
        entries[Int(position - base)]
    }

    /// The frame at `position` (without copying the rest of its entry). - Precondition: `base <= position < head`.
    @inlinable @inline(__always)
    package func frame(at position: UInt64) -> Frame {
        entries[Int(position - base)].frame
    }

    /// The frame at `position`, unretained: the ring holds it until the frames before a later position are
    /// discarded, so a caller may borrow it (`_withUnsafeGuaranteedRef`) while it does not change the ring. No
    /// retain and release of it, which a fan-out pays once per frame and client otherwise.
    /// - Precondition: `base <= position < head`.
    @inlinable @inline(__always)
    package func unmanagedFrame(at position: UInt64) -> Unmanaged<Frame> {
        Unmanaged.passUnretained(entries[Int(position - base)].frame)
    }

    /// Whether the frame at `position` is for a viewer of `activityId` only: it names another activity.
    /// - Precondition: `base <= position < head`.
    @inlinable package func isAbout(anotherActivityThan activityId: String, at position: UInt64) -> Bool {
        guard let about = entries[Int(position - base)].activityId else { return false }
        return about != activityId
    }

    /// Payload bytes from `position` to ``head``: how far a client at `position` lags.
    package func bytes(from position: UInt64) -> Int {
        guard position < head else { return 0 }
        return totalBytes - entry(at: max(position, base)).offset
    }

    /// Forgets the frames before `position` (no client needs them any more).
    package mutating func discard(before position: UInt64) {
        let drop = Int(min(position, head) - min(base, position))
        guard drop > 0 else { return }
        // Amortised: compact only once the dropped part is at least half of the storage.
        entries.removeFirst(drop)
        base += UInt64(drop)
    }
}
