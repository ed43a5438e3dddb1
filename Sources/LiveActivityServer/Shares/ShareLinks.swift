import Foundation
import LiveActivityCore

/// Share links: `/s/{token}` shows one activity, live and read-only, to anyone holding the link, until it
/// expires (at most 24 h), is revoked, or the activity is dismissed. Owns the links, live and recently ended.
/// Service thread only.
///
/// A share viewer's WebSocket (`/ws?share=TOKEN`) is scoped to that activity: its snapshot, events and ticks
/// name no other activity, and every message it sends is refused (the sessions' side, not here). Tokens are
/// 192 random bits; only their SHA-256 is kept.
///
/// - `GET /s/{token}`: the activity's live page (200), "this share has ended" (410) or "not found" (404).
/// - `POST /api/activities/{id}/shares` (body `{"expiresIn": seconds}`, optional; controllers only): 201 with
///   the link, 400, 403, 404 (unknown activity) or 503 (the store failed).
final class ShareLinks {
    /// What share links see of the server. Closures are called on the service thread.
    struct Context {
        /// The current time (the server's clock).
        var now: () -> Date
        /// Who may make links over HTTP (the controller token).
        var access: AccessPolicy
        /// The activity with this id, while it is not dismissed.
        var activity: (String) -> Activity?
        /// Keeps a new share durably, in turn with the changes before it, once its activity is known (to the
        /// state those changes leave); calls back on the service thread with nil, or `unknown_activity` /
        /// `storage_unavailable`.
        var keep: (Share, @escaping (ProtocolError?) -> Void) -> Void
        /// Records a share that changed (ended), without waiting: a failure is logged, nothing else.
        var saveEnded: (Share) -> Void
        /// How many connections watch through the share with this id.
        var viewers: (String) -> Int
        /// Closes the connections watching through a share (close code 1008, with this reason):
        /// `(shareId, reason)`.
        var closeViewers: (String, String) -> Void
        /// The `storage_unavailable` error for a store failure (the cause goes to the log, not the client).
        var storageUnavailable: (any Error) -> ProtocolError
        /// Where failures to record an ended share go.
        var logger: Logger
    }

    /// Draws the live page of a shared activity: `(activity, token, request)` (``Renderings`` does).
    typealias SharePage = (Activity, String, HTTPRequest) -> HTTPResponse

    /// Path prefix of share links.
    static let path = "/s/"

    /// Shares by id, live and recently ended.
    private(set) var shares: [String: Share] = [:]
    /// Share ids by the SHA-256 (hex) of their token.
    private var idsByHash: [String: String] = [:]

    /// Share links holding `shares` (as the store kept them).
    init(shares: [Share]) {
        for share in shares { remember(share) }
    }

    /// Keeps `share` and indexes it by its token's hash.
    private func remember(_ share: Share) {
        shares[share.id] = share
        idsByHash[share.tokenHash] = share.id
    }

    /// The share a token opens, if it is known (live or ended); nil for an empty token or one over 128 bytes.
    func share(forToken token: String) -> Share? {
        guard !token.isEmpty, token.utf8.count <= 128 else { return nil }
        return idsByHash[Digest.sha256Hex(token)].flatMap { shares[$0] }
    }

    /// Makes a link to `activityId`. Controllers only (checked by the caller).
    /// - Parameters:
    ///   - expiresIn: seconds until it stops working (at most 24 h; nil: 24 h).
    ///   - completion: called once, on the service thread, when the link is kept: the new share's summary with
    ///     its `url` (the only time the token is shown), or ``ProtocolError`` `unknown_activity`, or
    ///     `storage_unavailable` when it cannot be kept.
    func create(activityId: String, expiresIn: TimeInterval?, context: Context,
                completion: @escaping (Result<ShareSummary, ProtocolError>) -> Void) {
        let now = context.now()
        let token = Digest.randomToken(bytes: 24)
        let share = Share(id: Digest.randomToken(bytes: 9), tokenHash: Digest.sha256Hex(token), activityId: activityId,
                          createdAt: now, expiresAt: Share.expiry(now: now, expiresIn: expiresIn))
        context.keep(share) { [self] refusal in
            if let refusal {
                completion(.failure(refusal))
                return
            }
            remember(share)
            completion(.success(ShareSummary(share, viewers: 0, url: Self.path + token)))
        }
    }

    /// Revokes a link at once and closes its viewers with 1008.
    /// - Returns: the share as it was.
    /// - Throws: ``ProtocolError`` `invalid_field` for an unknown or ended share.
    func revoke(id: String, context: Context) throws(ProtocolError) -> Share {
        guard let share = shares[id], share.isLive(at: context.now()) else {
            throw ProtocolError.invalid("shareId", "no live share with id \"\(id.clipped(to: 64))\"")
        }
        end([share], reason: "share revoked", context: context)
        return share
    }

    /// The live shares (of one activity, or all), oldest first, with their viewer counts.
    func summaries(activityId: String?, context: Context) -> [ShareSummary] {
        let now = context.now()
        return shares.values
            .filter { $0.isLive(at: now) && (activityId == nil || $0.activityId == activityId) }
            .sorted { ($0.createdAt, $0.id) < ($1.createdAt, $1.id) }
            .map { share in ShareSummary(share, viewers: context.viewers(share.id)) }
    }

    /// Ends shares (revoked, expired, activity dismissed): remembered as ended (and stored so), viewers closed
    /// with 1008 once they have taken what was queued for them.
    func end(_ ended: [Share], reason: String, context: Context) {
        guard !ended.isEmpty else { return }
        let now = context.now()
        for var share in ended {
            share.endedAt = share.endedAt ?? now
            shares[share.id] = share
            context.saveEnded(share)
            context.closeViewers(share.id, reason)
        }
    }

    /// Ends the shares that expired by `now` and those whose activity was dismissed in `events`.
    func expire(now: Date, events: [ActivityEvent] = [], context: Context) {
        let dismissed = Set(events.filter { $0.kind == .dismissed }.map(\.activity.id))
        let live = shares.values.filter { $0.endedAt == nil }
        end(live.filter { now >= $0.expiresAt }, reason: "share expired", context: context)
        end(live.filter { now < $0.expiresAt && dismissed.contains($0.activityId) }, reason: "activity dismissed", context: context)
    }

    // MARK: HTTP

    /// Registers `GET /s/{token}`, `POST /api/activities/{id}/shares`, and the share pages' 404 / 405 under `/s`.
    /// - Parameter sharePage: draws the page of a live share.
    func register(on router: inout Router, context: Context, sharePage: @escaping SharePage) {
        router.add([.get], "/s/{token}") { [self] request in page(request, context: context, sharePage: sharePage) }
        router.add([.post], "/api/activities/{id}/shares") { [self] request, responder in
            createRequest(request, context: context, responder: responder)
        }
        router.onMiss(under: "/s") { _, miss in
            miss == .notFound ? Self.notFound
                : .document(.methodNotAllowed, html: Self.message(title: "Not allowed", text: "Share links are opened with GET."))
        }
    }

    /// `GET /s/{token}`: the shared activity's live page (200), "this share has ended" (410) or "not found"
    /// (404). The same 404 for every unknown token, so a guess reveals nothing about other links.
    func page(_ request: HTTPRequest, context: Context, sharePage: SharePage) -> HTTPResponse {
        let token = request.parameters["token"] ?? ""
        guard let share = share(forToken: token) else { return Self.notFound }
        guard share.isLive(at: context.now()), let activity = context.activity(share.activityId) else {
            return .document(.gone, html: Self.message(title: "This share has ended",
                text: "The person who shared this workout has stopped sharing it, or it is over."))
        }
        return sharePage(activity, token, request)
    }

    /// Largest body of a share request (`{"expiresIn": seconds}`), in bytes.
    static let maximumRequestBodyBytes = 1024

    /// `POST /api/activities/{id}/shares`: 201 with the link (`{"type":"shares","shares":[…]}`) once it is kept,
    /// 403 without the controller token, 400 for a bad body, 413 for a body over ``maximumRequestBodyBytes``,
    /// 404 for an unknown activity, 503 when the store fails.
    func createRequest(_ request: HTTPRequest, context: Context, responder: HTTPResponder) {
        func refusal(_ error: ProtocolError) -> HTTPResponse {
            let status: HTTPStatus = error.code == .unknownActivity ? .notFound : error.code == .storageUnavailable ? .serviceUnavailable : .badRequest
            return .error(status, error)
        }
        guard context.access.role(presenting: request.presentedToken) == .controller else {
            responder.respond(.error(.forbidden, ProtocolError(.forbidden, field: "token",
                                     message: "token: sharing needs the controller token (Authorization: Bearer …)")))
            return
        }
        guard request.body.count <= Self.maximumRequestBodyBytes else {
            // The adapter keeps only the first few KB of a body: what was cut off must not be parsed as if whole.
            responder.respond(.error(.contentTooLarge, ProtocolError(.limitExceeded, field: "body",
                message: "body: a share request's body is at most \(Self.maximumRequestBodyBytes) bytes ({\"expiresIn\": seconds})")))
            return
        }
        var expiresIn: TimeInterval?
        do throws(ProtocolError) {
            if !request.body.isEmpty { expiresIn = try Share.expiresIn(try FieldReader(try JSONValue.parse(request.body), path: "")) }
        } catch {
            responder.respond(refusal(error))
            return
        }
        create(activityId: request.parameters["id"] ?? "", expiresIn: expiresIn, context: context) { result in
            switch result {
            case .success(let summary): responder.respond(.message(.created, .shares(requestId: nil, shares: [summary])))
            case .failure(let error): responder.respond(refusal(error))
            }
        }
    }

    /// The page for a token that opens nothing.
    private static let notFound = HTTPResponse.document(.notFound, html: message(title: "Share link not found",
        text: "This link does not open anything. Check that it was copied whole."))

    /// A small self-contained page with a title and a sentence.
    private static func message(title: String, text: String) -> String {
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
