import Foundation
import LiveActivityCore

/// Who may send APNs-shaped requests (pushes, broadcasts, channel management), decided from the
/// `authorization` header as APNs decides it, plus this server's own controller token.
///
/// - `authorization: bearer <provider token>` (a JWT): its header and claims are checked as APNs checks them
///   (``ProviderToken``); with `--apns-key` its ES256 signature is verified, and `kid` must be the key's when the
///   file is named `AuthKey_<kid>.p8`. Without `--apns-key` a token is taken on its shape only, and only by an
///   open server (no tokens configured, loopback only); otherwise 403 `InvalidProviderToken`.
/// - `authorization: bearer <controller token>` (or `?token=`): accepted, as by the rest of the API.
/// - no `authorization`: accepted only by an open server without `--apns-key`; otherwise 403
///   `MissingProviderToken`.
/// Source: "Establishing a token-based connection to APNs". Thread-safe (a value; the key is immutable).
struct ProviderAuthority: Sendable {
    /// How a request was let in.
    enum Grant: Equatable, Sendable {
        /// No credentials, on an open loopback server.
        case open
        /// The controller token.
        case controllerToken
        /// A provider token; `verified` when its signature was checked with `--apns-key`.
        case providerToken(ProviderToken, verified: Bool)

        /// Whether the request came with an APNs provider token (APNs then needs `apns-topic`).
        var isProviderToken: Bool {
            if case .providerToken = self { return true }
            return false
        }
    }

    /// The server's tokens.
    var access: AccessPolicy
    /// The key provider tokens must be signed with (`--apns-key`), or nil.
    var key: ES256Key?
    /// Tokens whose signature verified: a backend sends the same token for up to an hour, so each is
    /// verified once (an ES256 check costs tens of microseconds on the service thread); the age is still
    /// checked on every request.
    let verifiedTokens = VerifiedTokens()

    /// Creates an authority.
    /// - Parameters:
    ///   - access: the server's controller and viewer tokens.
    ///   - key: the key provider tokens are verified with, or nil.
    init(access: AccessPolicy, key: ES256Key?) {
        self.access = access
        self.key = key
    }

    /// Decides whether `request` may go on.
    /// - Parameter now: the current time, for the token's age.
    /// - Returns: how it was let in.
    /// - Throws: ``PushRejection`` 403 `MissingProviderToken`, `InvalidProviderToken` or `ExpiredProviderToken`,
    ///   naming what is wrong; 429 `TooManyProviderTokenUpdates` for a new provider token on an HTTP/2
    ///   connection that took one less than 20 minutes ago (``ProviderTokenSlot``).
    func authorize(_ request: HTTPRequest, now: Date) throws(PushRejection) -> Grant {
        let bearer: String?
        if request.headers["authorization"] != nil {
            guard let token = request.bearerToken, !token.isEmpty else {
                throw ProviderToken.invalid("authorization: expected \"bearer <provider token>\", got a value without the bearer scheme")
            }
            bearer = token
        } else {
            bearer = request.query("token")
        }
        guard let bearer else {
            if access.isOpen, key == nil { return .open }
            throw PushRejection(status: 403, reason: "MissingProviderToken",
                                detail: "authorization: missing; send \"authorization: bearer <provider token>\" (a JWT signed with your .p8 key)"
                                    + (access.controllerToken != nil ? " or the controller token" : ""), field: "authorization")
        }
        if let controller = access.controllerToken, AccessPolicy.constantTimeEquals(bearer, controller) { return .controllerToken }
        guard ProviderToken.looksLikeJWT(bearer) else {
            throw ProviderToken.invalid("authorization: the bearer token is neither a provider token (a JWT) nor the controller token")
        }
        let token = try ProviderToken.parse(bearer)
        var verified = false
        if let key {
            if let keyID = key.keyID, token.keyID != keyID {
                throw ProviderToken.invalid("authorization: the provider token's kid \(token.keyID) is not the Key ID of --apns-key (\(keyID))")
            }
            if !verifiedTokens.contains(bearer) {
                guard key.verify(token.signingInput, signature: token.signature) else {
                    throw ProviderToken.invalid("authorization: the provider token's ES256 signature does not verify with --apns-key")
                }
                verifiedTokens.insert(bearer)
            }
            verified = true
        } else if !access.isOpen {
            throw ProviderToken.invalid("authorization: this server cannot verify provider tokens: start it with --apns-key AuthKey_<KeyID>.p8, or send the controller token")
        }
        try token.checkAge(now: now)
        try request.providerTokenSlot?.take(bearer, now: now)
        return .providerToken(token, verified: verified)
    }
}

/// Provider tokens whose ES256 signature has been verified, at most ``capacity`` (all are forgotten when it is
/// full: a token is at most an hour old anyway). Thread-safe (a lock).
final class VerifiedTokens: Sendable {
    /// Most tokens kept.
    static let capacity = 256
    /// {lock} the tokens, and how many signatures were verified in all (for tests).
    private let state = Locked<(tokens: Set<String>, verifications: Int)>(([], 0))

    /// Whether `token` was verified before.
    func contains(_ token: String) -> Bool { state.withLock { $0.tokens.contains(token) } }

    /// Remembers a verified token.
    func insert(_ token: String) {
        state.withLock { state in
            if state.tokens.count >= Self.capacity { state.tokens.removeAll() }
            state.tokens.insert(token)
            state.verifications += 1
        }
    }

    /// How many tokens were verified and remembered in all.
    var verifications: Int { state.withLock { $0.verifications } }
}

/// The APNs request header checks shared by device pushes and broadcasts, each naming the header at fault.
/// Source: "Sending notification requests to APNs" (header table) and "Handling notification responses from
/// APNs" (reasons). Pure.
enum APNsHeaderChecks {
    /// The topic suffix of Live Activity pushes: `<bundle id>.push-type.liveactivity`.
    static let liveActivityTopicSuffix = ".push-type.liveactivity"

    /// Whether `text` is a UUID in its canonical text form (8-4-4-4-12 hexadecimal digits, any case), as
    /// `apns-id` and `apns-request-id` must be.
    static func isUUID(_ text: String) -> Bool {
        let groups = text.split(separator: "-", omittingEmptySubsequences: false)
        return groups.map(\.count) == [8, 4, 4, 4, 12] && groups.allSatisfy { $0.allSatisfy(\.isHexDigit) }
    }

    /// No APNs field sent twice: the HTTP/1.1 adapter marks them (``HTTPRequest/repeatedFields``); the HTTP/2
    /// port refuses them before routing, with the same answer.
    /// - Throws: 400 `DuplicateHeaders` naming the first such field.
    static func singleFields(_ request: HTTPRequest) throws(PushRejection) {
        guard let name = request.repeatedFields.first else { return }
        throw PushRejection(status: 400, reason: "DuplicateHeaders", detail: HTTPRequest.duplicateHeaderDetail(name), field: name)
    }

    /// `apns-id` (or `apns-request-id`): nil when absent, the value when it is a UUID.
    /// - Throws: 400 `BadMessageId` naming the header otherwise.
    static func messageID(_ request: HTTPRequest, header: String = "apns-id") throws(PushRejection) -> String? {
        guard let value = request.headers[header] else { return nil }
        guard isUUID(value) else {
            throw PushRejection(status: 400, reason: "BadMessageId",
                                detail: "\(header): \"\(value.clipped(to: 64))\" is not a UUID (8-4-4-4-12 hexadecimal digits)", field: header)
        }
        return value
    }

    /// `apns-topic`: required with a provider token (as APNs requires it with token authentication), and
    /// when present `<bundle id>.push-type.liveactivity`.
    /// - Returns: the bundle ID the topic names, if any.
    /// - Throws: 400 `MissingTopic` or `TopicDisallowed`.
    static func topic(_ request: HTTPRequest, grant: ProviderAuthority.Grant) throws(PushRejection) -> String? {
        guard let topic = request.headers["apns-topic"], !topic.isEmpty else {
            if grant.isProviderToken {
                throw PushRejection(status: 400, reason: "MissingTopic",
                                    detail: "apns-topic: required with a provider token; Live Activities use <bundle id>\(liveActivityTopicSuffix)", field: "apns-topic")
            }
            return nil
        }
        let bundle = topic.hasSuffix(liveActivityTopicSuffix) ? String(topic.dropLast(liveActivityTopicSuffix.count)) : ""
        guard BroadcastChannel.isWellFormedBundleID(bundle) else {
            throw PushRejection(status: 400, reason: "TopicDisallowed",
                                detail: "apns-topic: \"\(topic.clipped(to: 160))\" is not <bundle id>\(liveActivityTopicSuffix), the topic of Live Activity pushes", field: "apns-topic")
        }
        return bundle
    }

    /// `apns-priority`: nil when absent (10), else 1, 5 or 10.
    /// - Throws: 400 `BadPriority`.
    static func priority(_ request: HTTPRequest) throws(PushRejection) -> Int? {
        guard let text = request.headers["apns-priority"] else { return nil }
        guard let priority = Int(text), [1, 5, 10].contains(priority) else {
            throw PushRejection(status: 400, reason: "BadPriority", detail: "apns-priority: must be 1, 5 or 10, got \"\(text.clipped(to: 16))\"",
                                field: "apns-priority")
        }
        return priority
    }

    /// `apns-expiration`: nil when absent, else Unix seconds (0: deliver once, store nothing).
    /// - Throws: 400 `BadExpirationDate`.
    static func expiration(_ request: HTTPRequest) throws(PushRejection) -> Int? {
        guard let text = request.headers["apns-expiration"] else { return nil }
        guard !text.isEmpty, text.utf8.count <= 11, text.allSatisfy(\.isASCII), let seconds = Int(text), seconds >= 0 else {
            throw PushRejection(status: 400, reason: "BadExpirationDate",
                                detail: "apns-expiration: expected Unix seconds (0 or more), got \"\(text.clipped(to: 32))\"", field: "apns-expiration")
        }
        return seconds
    }

    /// `apns-collapse-id`: at most 64 bytes.
    /// - Throws: 400 `BadCollapseId`.
    static func collapseID(_ request: HTTPRequest) throws(PushRejection) {
        guard let text = request.headers["apns-collapse-id"], text.utf8.count > 64 else { return }
        throw PushRejection(status: 400, reason: "BadCollapseId",
                            detail: "apns-collapse-id: \(text.utf8.count) bytes; APNs allows at most 64", field: "apns-collapse-id")
    }

    /// `apns-push-type`: must be `liveactivity`.
    /// - Throws: 400 `InvalidPushType`.
    static func pushType(_ request: HTTPRequest) throws(PushRejection) {
        guard request.headers["apns-push-type"] != "liveactivity" else { return }
        let got = request.headers["apns-push-type"].map { "got \"\($0.clipped(to: 32))\"" } ?? "it is missing"
        throw PushRejection(status: 400, reason: "InvalidPushType",
                            detail: "apns-push-type: this server previews Live Activities: send apns-push-type: liveactivity (\(got))",
                            field: "apns-push-type")
    }

    /// An APNs-shaped answer: the status, the id header (`apns-id` or `apns-request-id`), `apns-unique-id`,
    /// our `liveactivity-*` headers, and for a refusal `{"reason": …, "detail": …}` (sorted keys), plus
    /// `"timestamp"` (milliseconds since 1970) for 410 `Unregistered`.
    static func response(_ result: PushResult, idHeader: String = "apns-id", uniqueID: String?,
                         extraHeaders: [(name: String, value: String)] = []) -> HTTPResponse {
        var headers: [(name: String, value: String)] = [(idHeader, result.apnsId)]
        if let uniqueID { headers.append(("apns-unique-id", uniqueID)) }
        headers += extraHeaders
        if let verdict = result.verdict { headers.append(("liveactivity-verdict", verdict)) }
        if let detail = result.detail { headers.append(("liveactivity-detail", detail)) }
        if let activityId = result.activityId { headers.append(("liveactivity-activity-id", activityId)) }
        if let activityIds = result.activityIds { headers.append(("liveactivity-activity-ids", activityIds.joined(separator: ","))) }
        if let cause = result.cause { headers.append(("liveactivity-cause", cause)) }
        if let warning = result.warning { headers.append(("liveactivity-warning", warning)) }
        var body: [UInt8] = []
        if result.status >= 300 {
            var object: [String: JSONValue] = ["reason": .string(result.reason ?? "BadRequest")]
            if let detail = result.detail { object["detail"] = .string(detail) }
            if let timestamp = result.timestamp { object["timestamp"] = .number(Double(timestamp)) }
            body = Array((try? bodyEncoder.encode(JSONValue.object(object))) ?? Data())
        }
        return .json(HTTPStatus(result.status), body, headers: headers)
    }

    /// Encodes JSON bodies with sorted keys (`{"detail":…,"reason":…}`), so the same answer always reads the
    /// same (a dictionary's own order changes from run to run).
    static let bodyEncoder: JSONEncoder = {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return encoder
    }()
}
