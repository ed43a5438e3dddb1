import Foundation
import LiveActivityCore

/// A part of the server that owns its state and answers its own requests (push and channels, share links,
/// the inspector, renderings and kinds, thumbnails, the activity commands, replication).
///
/// A feature is built by the composition root (``LiveActivityServer``) with only what it needs (the clock,
/// the change pipeline, the sessions), registers its HTTP routes and WebSocket commands in the server's tables
/// (``FeatureTables``), and learns what other features did by observing (``ChangeObserver``,
/// ``RequestObserver``), never by calling them. Service thread only, except where a feature says otherwise.
protocol ServerFeature: AnyObject {
    /// Adds the feature's routes and commands to `tables`. Called once, on the service thread, before the
    /// first request is read.
    func register(in tables: inout FeatureTables)
}

/// The tables the server dispatches through, filled by the features (``ServerFeature/register(in:)``).
struct FeatureTables {
    /// HTTP routes of the main port (the dashboard, the API, renderings, APNs-shaped pushes over HTTP/1.1).
    var routes = Router()
    /// HTTP routes of the APNs listener (`--apns-port`, HTTP/2): APNs's own paths only.
    var apnsRoutes = Router()
    /// WebSocket client messages, by their `type`.
    var commands = CommandTable()
}
