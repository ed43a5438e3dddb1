import CLibWebSockets
import Foundation
import LiveActivityCore

/// Share links: `/s/{token}` shows one activity, live and read-only, to anyone holding the link, until it
/// expires (at most 24 h), is revoked, or the activity is dismissed. Service thread only.
///
/// A share viewer's WebSocket (`/ws?share=TOKEN`) is scoped to that activity: its snapshot, events and ticks
/// name no other activity, and every message it sends is refused. Tokens are 192 random bits; only their
/// SHA-256 is kept.
extension LiveActivityServer {
    /// Path prefix of share links.
    static let sharePath = "/s/"

    /// The share a token opens, if it is known (live or ended).
    func share(forToken token: String) -> Share? {
        guard !token.isEmpty, token.utf8.count <= 128 else { return nil }
        return sharesByHash[Digest.sha256Hex(token)].flatMap { shares[$0] }
    }

    /// Makes a link to `activityId` (known to the speculative state: it may still wait for the store), kept by
    /// the store thread in turn with the changes before it. Controllers only (checked by the caller).
    /// - Parameter completion: called once, on the service thread: the new share's summary with its `url` (the
    ///   only time the token is shown), or ``ProtocolError`` `unknown_activity`, or `storage_unavailable` when
    ///   it cannot be kept.
    func createShare(activityId: String, expiresIn: TimeInterval?, completion: @escaping (Result<ShareSummary, ProtocolError>) -> Void) {
        let now = clock()
        let token = Digest.randomToken(bytes: 24)
        let share = Share(id: Digest.randomToken(bytes: 9), tokenHash: Digest.sha256Hex(token), activityId: activityId,
                          createdAt: now, expiresAt: Share.expiry(now: now, expiresIn: expiresIn))
        carryOut(pipeline.propose({ center in
            guard center.activities[activityId] != nil else {
                throw ProtocolError(.unknownActivity, field: "activityId", message: "activityId: no activity with id \"\(activityId.prefix(128))\"")
            }
            return ChangePipeline.Verdict(shares: [share], onCommit: { [self] in
                shares[share.id] = share
                sharesByHash[share.tokenHash] = share.id
                completion(.success(ShareSummary(share, viewers: 0, url: Self.sharePath + token)))
            })
        }, now: Date(), onFailure: { [self] error in completion(.failure(error as? ProtocolError ?? storageUnavailable(error))) }))
    }

    /// Revokes a link at once and closes its viewers with 1008.
    /// - Throws: ``ProtocolError`` `invalid_field` for an unknown or ended share.
    func revokeShare(id: String) throws(ProtocolError) -> Share {
        guard let share = shares[id], share.isLive(at: clock()) else {
            throw ProtocolError.invalid("shareId", "no live share with id \"\(id.prefix(64))\"")
        }
        endShares([share], reason: "share revoked")
        return share
    }

    /// The live shares (of one activity, or all), with their viewer counts.
    func shareSummaries(activityId: String?) -> [ShareSummary] {
        let now = clock()
        return shares.values
            .filter { $0.isLive(at: now) && (activityId == nil || $0.activityId == activityId) }
            .sorted { ($0.createdAt, $0.id) < ($1.createdAt, $1.id) }
            .map { share in ShareSummary(share, viewers: hub.sessions.values.count { $0.shareId == share.id }) }
    }

    /// Ends shares (revoked, expired, activity dismissed): remembered as ended, viewers closed with 1008
    /// once they have taken what was queued for them.
    func endShares(_ ended: [Share], reason: String) {
        guard !ended.isEmpty else { return }
        let now = clock()
        var kept: [Share] = []
        defer { storeWriter.save(kept) }  // by the store thread; a failure is logged there
        for var share in ended {
            share.endedAt = share.endedAt ?? now
            shares[share.id] = share
            kept.append(share)
            for session in hub.sessions.values where session.shareId == share.id {
                closeSoon(session, .policyViolation, reason, keepingQueued: true)
            }
        }
    }

    /// Ends the shares that expired by `now` and those whose activity was dismissed in `events`.
    func expireShares(now: Date, events: [ActivityEvent] = []) {
        let dismissed = Set(events.filter { $0.kind == .dismissed }.map(\.activity.id))
        let live = shares.values.filter { $0.endedAt == nil }
        endShares(live.filter { now >= $0.expiresAt }, reason: "share expired")
        endShares(live.filter { now < $0.expiresAt && dismissed.contains($0.activityId) }, reason: "activity dismissed")
    }

    /// Answers `GET /s/{token}`: the shared activity's live page (200), "this share has ended" (410) or "not
    /// found" (404). The same 404 for every unknown token, so a guess reveals nothing about other links.
    func sharePage(_ wsi: OpaquePointer, id: UInt64, path: String) -> Int32 {
        let token = String(path.dropFirst(Self.sharePath.count))
        guard let share = share(forToken: token) else {
            return respondHTML(wsi, id: id, status: 404, html: Self.sharePageMessage(title: "Share link not found",
                text: "This link does not open anything. Check that it was copied whole."))
        }
        guard share.isLive(at: clock()), let activity = center.activities[share.activityId] else {
            return respondHTML(wsi, id: id, status: 410, html: Self.sharePageMessage(title: "This share has ended",
                text: "The person who shared this workout has stopped sharing it, or it is over."))
        }
        return shareDocument(wsi, id: id, activity: activity, token: token)
    }

    private static func sharePageMessage(title: String, text: String) -> String {
        """
        <!doctype html>
        <html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
        <title>\(title)</title><style>body{font:16px/1.4 system-ui,sans-serif;margin:0;display:grid;place-items:center;\
        min-height:100vh;color:#1c1c1e;background:#f2f2f7}main{max-width:32rem;padding:24px;text-align:center}\
        @media (prefers-color-scheme: dark){body{color:#f2f2f7;background:#1c1c1e}}</style></head>
        <body><main><h1>\(title)</h1><p>\(text)</p></main></body></html>
        """
    }
}

// MARK: - HTTP: POST /api/activities/{id}/shares

extension LiveActivityServer {
    /// Starts `POST /api/activities/{id}/shares` (body `{"expiresIn": seconds}`, optional): controllers only.
    /// - Returns: nonzero to close the connection.
    func shareRequest(_ wsi: OpaquePointer, id: UInt64, path: String) -> Int32 {
        guard configuration.access.role(presenting: presentedToken(wsi)) == .controller else {
            return refuseAfterBody(id: id, status: 403, body: ServerMessage.error(requestId: nil, ProtocolError(.forbidden, field: "token",
                message: "token: sharing needs the controller token (Authorization: Bearer …)")).encoded())
        }
        let activityId = String(path.dropFirst("/api/activities/".count).dropLast("/shares".count))
        httpBodies[id] = []
        bodyTargets[id] = .share(activityId: activityId)
        return 0
    }

    /// Makes the share once its (possibly empty) body is in; answers 201 with the link once it is kept.
    func shareBodyComplete(_ wsi: OpaquePointer, id: UInt64, body: [UInt8], activityId: String) -> Int32 {
        func refusal(_ error: ProtocolError) -> HTTPAnswer {
            let status: UInt32 = error.code == .unknownActivity ? 404 : error.code == .storageUnavailable ? 503 : 400
            return HTTPAnswer(status: status, body: ServerMessage.error(requestId: nil, error).encoded())
        }
        var expiresIn: TimeInterval?
        do throws(ProtocolError) {
            if !body.isEmpty { expiresIn = try Share.expiresIn(try FieldReader(try JSONValue.parse(body), path: "")) }
        } catch {
            let answer = refusal(error)
            return respond(wsi, id: id, status: answer.status, body: answer.body)
        }
        return answerWhenReady(wsi, id: id) { [self] reply in
            createShare(activityId: activityId, expiresIn: expiresIn) { result in
                switch result {
                case .success(let summary): reply(HTTPAnswer(status: 201, body: ServerMessage.shares(requestId: nil, shares: [summary]).encoded()))
                case .failure(let error): reply(refusal(error))
                }
            }
        }
    }
}
