import Foundation
import LiveActivityCore

/// The provider token one HTTP/2 connection of the APNs port is using, and since when, so that a connection
/// that changes its token too often is answered as APNs answers it: 429 `TooManyProviderTokenUpdates`.
/// APNs takes a new provider token on a connection at most about once every 20 minutes; a request with
/// another token sooner is refused, and the connection goes on with the token it had.
/// Source: "Establishing a token-based connection to APNs" ("Refresh your token regularly") and "Handling
/// notification responses from APNs" (reason table).
///
/// One per connection, made by ``HTTP2Connection`` and carried by each of its requests; used by
/// ``ProviderAuthority`` on the service thread. Thread-safe (a lock).
final class ProviderTokenSlot: Sendable {
    /// Shortest time between two provider tokens on one connection, in seconds (APNs: 20 minutes).
    static let minimumInterval: TimeInterval = 20 * 60

    /// {lock} the token the connection uses (its JWT text) and when it was first accepted (wall clock).
    private let state = Locked<(token: String, since: Date)?>(nil)

    /// An empty slot: the connection's first accepted token becomes its token.
    init() {}

    /// Takes `token`, already accepted as a provider token, as the connection's token: the first one, the
    /// same one again, or a new one at least ``minimumInterval`` after the current one was taken.
    /// - Parameter now: the current time.
    /// - Throws: ``PushRejection`` 429 `TooManyProviderTokenUpdates` when the connection's token was taken
    ///   less than ``minimumInterval`` ago; the connection keeps that token.
    func take(_ token: String, now: Date) throws(PushRejection) {
        let refusal: TimeInterval? = state.withLock { state in
            guard let current = state, current.token != token else {
                if state == nil { state = (token, now) }
                return nil
            }
            let age = now.timeIntervalSince(current.since)
            guard age < Self.minimumInterval else {
                state = (token, now)
                return nil
            }
            return age
        }
        guard let age = refusal else { return }
        throw PushRejection(status: 429, reason: "TooManyProviderTokenUpdates",
                            detail: "authorization: this connection took a new provider token \(Int(age)) s ago; APNs accepts a new one "
                                + "at most once every 20 minutes per connection: keep sending the previous token until then",
                            field: "authorization")
    }
}
