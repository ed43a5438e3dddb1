/// Whether a broadcast due is written now or waits for the changes the store is recording, as a state
/// machine with no clock of its own (times are monotonic nanoseconds, passed in). Service thread only.
///
/// A store that acknowledges after its commit (the durable one) broadcasts a group of changes when the
/// store thread reports it. A publisher that keeps updates in flight sends its next ones as their acks
/// arrive, so while one group's pass is written the next group is recorded, and the two settled into
/// halves of the publisher's window taking turns (16 frames a write at N = 1,000 with 32 in flight, where
/// a store in memory wrote 31; CPU per delivery 1.55× the store in memory's). Holding a due broadcast while
/// the store records the changes just handed to it (its report wakes the loop) lets one pass carry both;
/// the hold never lasts longer than ``longest``, so a slow disk delays a broadcast by at most that.
public struct BroadcastHold: Sendable, Equatable {
    /// What to do with the broadcast due at the end of a round.
    public enum Decision: Equatable, Sendable {
        /// Write it now.
        case write
        /// Leave it for a later round; when `armTimerAfter` is given, the hold has just begun and a timer must
        /// write it after that many nanoseconds if no round has by then.
        case hold(armTimerAfter: UInt64?)
    }

    /// Longest a broadcast due waits for the store (ns): 1 ms, several commits on an SSD (about 0.2 ms each
    /// on these machines).
    public static let longest: UInt64 = 1_000_000

    /// When the broadcast due was first held back (monotonic ns); nil: it is not held.
    public private(set) var heldSince: UInt64?

    /// No broadcast held.
    public init() {}

    /// Decides at the end of a round whose broadcast is due.
    /// - Parameters:
    ///   - storeIsRecording: whether changes handed to the store have not been reported yet (their events
    ///     will be broadcast when they are).
    ///   - now: monotonic nanoseconds.
    /// - Returns: ``Decision/write`` when the store records nothing or the broadcast has waited ``longest``;
    ///   otherwise ``Decision/hold(armTimerAfter:)``, with the timer's delay the first time.
    public mutating func decide(storeIsRecording: Bool, now: UInt64) -> Decision {
        guard storeIsRecording else { return .write }
        guard let heldSince else {
            self.heldSince = now
            return .hold(armTimerAfter: Self.longest)
        }
        return now &- heldSince < Self.longest ? .hold(armTimerAfter: nil) : .write
    }

    /// The broadcast is being written (by a round, the hold's timer or anything else): the hold ends.
    /// - Returns: whether one was on (its timer, if still scheduled, may be cancelled).
    public mutating func end() -> Bool {
        defer { heldSince = nil }
        return heldSince != nil
    }
}
