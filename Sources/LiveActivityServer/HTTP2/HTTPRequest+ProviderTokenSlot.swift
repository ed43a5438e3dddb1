import LiveActivityCore

/// The APNs port's provider token slot, carried by each request of an HTTP/2 connection in the request's
/// opaque ``HTTPRequest/connectionSlot`` (the HTTP values live in LiveActivityCore, which does not know
/// push). Thread-safe (the slot has its own lock).
extension ProviderTokenSlot: HTTPConnectionSlot {}

extension HTTPRequest {
    /// The provider token of the HTTP/2 connection the request came over (APNs port only; nil on the main
    /// port), for 429 `TooManyProviderTokenUpdates`.
    var providerTokenSlot: ProviderTokenSlot? {
        get { connectionSlot as? ProviderTokenSlot }
        set { connectionSlot = newValue }
    }
}
