import CLibWebSockets
import Foundation
import LiveActivityCore

/// The sessions' side of share links: what the WebSocket code asks of ``ShareLinks`` (which owns the links),
/// with the server as their context, and the closing of a share's viewers. Service thread only.
extension LiveActivityServer {
    /// What share links see of the server: the clock, the activities, the store and the viewers' sessions.
    var shareLinksContext: ShareLinks.Context {
        ShareLinks.Context(
            now: { [unowned self] in clock() },
            access: configuration.access,
            activity: { [unowned self] id in center.activities[id] },
            save: { [unowned self] share in try store.save(share) },
            viewers: { [unowned self] shareId in sessions.values.count { $0.shareId == shareId } },
            closeViewers: { [unowned self] shareId, reason in closeViewers(ofShare: shareId, reason: reason) },
            storageUnavailable: { [unowned self] error in storageUnavailable(error) },
            logger: logger)
    }

    /// Closes every connection watching through the share `shareId` with 1008 and `reason`, once it has taken
    /// what was queued for it (killed after 5 s if it never becomes writable).
    func closeViewers(ofShare shareId: String, reason: String) {
        for session in sessions.values where session.shareId == shareId {
            session.closing = (LWS_CLOSE_STATUS_POLICY_VIOLATION, reason)
            lws_set_timeout(session.wsi, PENDING_TIMEOUT_CLOSE_SEND, 5)
            lws_callback_on_writable(session.wsi)
        }
    }

    /// The share a token opens, if it is known (live or ended).
    func share(forToken token: String) -> Share? { shareLinks.share(forToken: token) }

    /// Makes a link to `activityId` (see ``ShareLinks/create(activityId:expiresIn:context:)``).
    func createShare(activityId: String, expiresIn: TimeInterval?) throws(ProtocolError) -> ShareSummary {
        try shareLinks.create(activityId: activityId, expiresIn: expiresIn, context: shareLinksContext)
    }

    /// Revokes a link at once and closes its viewers with 1008 (see ``ShareLinks/revoke(id:context:)``).
    func revokeShare(id: String) throws(ProtocolError) -> Share {
        try shareLinks.revoke(id: id, context: shareLinksContext)
    }

    /// The live shares (of one activity, or all), with their viewer counts.
    func shareSummaries(activityId: String?) -> [ShareSummary] {
        shareLinks.summaries(activityId: activityId, context: shareLinksContext)
    }

    /// Ends the shares that expired by `now` and those whose activity was dismissed in `events`.
    func expireShares(now: Date, events: [ActivityEvent] = []) {
        shareLinks.expire(now: now, events: events, context: shareLinksContext)
    }
}
