import Foundation
import LiveActivityCore

/// The sessions' side of share links: what the WebSocket code asks of ``ShareLinks`` (which owns the links),
/// with the server as their context, and the closing of a share's viewers. Service thread only.
extension LiveActivityServer {
    /// What share links see of the server: the clock, the activities, the store and the viewers' sessions.
    /// Built once (``LiveActivityServer/shareLinksContext``): share expiry runs with every broadcast and tick.
    func makeShareLinksContext() -> ShareLinks.Context {
        ShareLinks.Context(
            now: { [unowned self] in clock() },
            access: configuration.access,
            activity: { [unowned self] id in center.activities[id] },
            keep: { [unowned self] share, done in keep(share, completion: done) },
            saveEnded: { [unowned self] share in storeWriter.save([share]) },
            viewers: { [unowned self] shareId in hub.sessions.values.count { $0.shareId == shareId } },
            closeViewers: { [unowned self] shareId, reason in closeViewers(ofShare: shareId, reason: reason) },
            storageUnavailable: { [unowned self] error in storageUnavailable(error) },
            logger: logger)
    }

    /// Closes every connection watching through the share `shareId` with 1008 and `reason`, once it has taken
    /// what was queued for it (killed after 5 s if it never becomes writable).
    func closeViewers(ofShare shareId: String, reason: String) {
        for session in hub.sessions.values where session.shareId == shareId {
            closeSoon(session, .policyViolation, reason, keepingQueued: true)
        }
    }

    /// The share a token opens, if it is known (live or ended).
    func share(forToken token: String) -> Share? { shareLinks.share(forToken: token) }

    /// Makes a link to `activityId` (see ``ShareLinks/create(activityId:expiresIn:context:completion:)``).
    func createShare(activityId: String, expiresIn: TimeInterval?, completion: @escaping (Result<ShareSummary, ProtocolError>) -> Void) {
        shareLinks.create(activityId: activityId, expiresIn: expiresIn, context: shareLinksContext, completion: completion)
    }

    /// Keeps a new share through the change pipeline: judged on the speculative state (its activity may
    /// still wait for the store), kept by the store thread in turn with the changes before it.
    private func keep(_ share: Share, completion: @escaping (ProtocolError?) -> Void) {
        carryOut(pipeline.propose({ center in
            guard center.activities[share.activityId] != nil else {
                throw ProtocolError(.unknownActivity, field: "activityId", message: "activityId: no activity with id \"\(share.activityId.prefix(128))\"")
            }
            return ChangePipeline.Verdict(shares: [share], onCommit: { completion(nil) })
        }, now: Date(), onFailure: { [self] error in completion(error as? ProtocolError ?? storageUnavailable(error)) }))
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
