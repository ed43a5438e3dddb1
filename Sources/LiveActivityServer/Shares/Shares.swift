import Foundation
import LiveActivityCore

/// Share links as a feature: owns the links (``ShareLinks``), registers their routes (`GET /s/{token}`,
/// `POST /api/activities/{id}/shares`) and the WebSocket commands `share` (a change: the link is kept in turn
/// with the changes before it), `unshare` and `shares` (replies). Ends the links of dismissed activities as
/// an observer of committed changes; the timer ends expired ones (``expire(now:)``); the sessions look up the
/// token of a `/ws?share=` upgrade (``share(forToken:)``). Service thread only.
final class Shares: ServerFeature, ChangeObserver {
    /// What the share feature sees of the server. Closures are called on the service thread.
    struct Context {
        /// What the links see: the clock, the activities, the store, the viewers' sessions.
        var links: ShareLinks.Context
        /// Queues a reply for a WebSocket client now.
        var send: (ServerMessage, Session) -> Void
        /// Queues a reply for a WebSocket client, unless its connection closed meanwhile (after the store).
        var sendIfOpen: (ServerMessage, Session) -> Void
        /// Draws the live page of a shared activity (the renderings feature does).
        var sharePage: ShareLinks.SharePage
    }

    /// The links, live and recently ended.
    let links: ShareLinks
    /// What it sees of the server.
    private let context: Context

    /// Share links holding `shares` (as the store kept them).
    init(shares: [Share], context: Context) {
        links = ShareLinks(shares: shares)
        self.context = context
    }

    /// Registers the share routes and the `share`, `unshare` and `shares` commands.
    func register(in tables: inout FeatureTables) {
        links.register(on: &tables.routes, context: context.links, sharePage: context.sharePage)
        tables.commands.register("share", .change) { [unowned self] call in share(call) }
        tables.commands.register("unshare", .reply) { [unowned self] call in unshare(call) }
        tables.commands.register("shares", .reply) { [unowned self] call in summaries(call) }
    }

    // MARK: Commands

    /// `share`: makes a link to the activity; answers `shares` with the new link (its only showing of the
    /// token) once it is kept, or an error.
    func share(_ call: CommandCall) {
        guard case .share(let activityId, let expiresIn) = call.command else { return }
        let requestId = call.message.requestId
        let session = call.session
        links.create(activityId: activityId, expiresIn: expiresIn, context: context.links) { [context] result in
            switch result {
            case .success(let summary): context.sendIfOpen(.shares(requestId: requestId, shares: [summary]), session)
            case .failure(let error): context.sendIfOpen(.error(requestId: requestId, error), session)
            }
        }
    }

    /// `unshare`: revokes a live link at once, closes its viewers with 1008, and acknowledges with the
    /// activity's id; an unknown or ended share is an `invalid_field` error.
    func unshare(_ call: CommandCall) {
        guard case .unshare(let shareId) = call.command else { return }
        do {
            let share = try links.revoke(id: shareId, context: context.links)
            context.send(.ack(requestId: call.message.requestId, activityId: share.activityId, activityIds: nil), call.session)
        } catch {
            context.send(.error(requestId: call.message.requestId, error), call.session)
        }
    }

    /// `shares`: the live links (of one activity, or all), oldest first, with their viewer counts.
    func summaries(_ call: CommandCall) {
        guard case .shares(let activityId) = call.command else { return }
        context.send(.shares(requestId: call.message.requestId, shares: links.summaries(activityId: activityId, context: context.links)),
                     call.session)
    }

    // MARK: Lookups, expiry

    /// The share a token opens, if it is known (live or ended); for the sessions' upgrades (`/ws?share=`).
    func share(forToken token: String) -> Share? { links.share(forToken: token) }

    /// Ends the shares that expired by `now` (the timer, once a second).
    func expire(now: Date) {
        links.expire(now: now, context: context.links)
    }

    /// Ends the shares that expired by `now` and those whose activity `events` dismissed.
    func committed(_ events: [ActivityEvent], at now: Date) {
        links.expire(now: now, events: events, context: context.links)
    }
}
