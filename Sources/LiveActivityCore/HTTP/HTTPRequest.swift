import Foundation

/// One HTTP request as handlers see it: read once from libwebsockets by `HTTPAdapter` (LiveActivityLWS) or
/// from an HTTP/2 stream by the APNs listener, then a plain value.
/// Thread-safe (a value); handlers run on the service thread.
package struct HTTPRequest: Sendable {
    /// The protocol version a request came over.
    package enum Version: Sendable, Equatable {
        /// HTTP/1.1 (or 1.0), through libwebsockets on the main port.
        case http1
        /// HTTP/2 (RFC 9113), through libnghttp2 on the APNs port.
        case http2

        /// `http` or `http2`: the inspector's `transport`.
        package var transport: String { self == .http2 ? "http2" : "http" }
    }

    /// One `name=value` field of the query, URL-decoded (`+` as a space, `%XX` as its byte).
    package struct QueryField: Sendable, Equatable {
        /// The text before the first `=`.
        package var name: String
        /// The text after the first `=` (may be empty).
        package var value: String

        /// A field named `name` with `value`.
        package init(name: String, value: String) {
            self.name = name
            self.value = value
        }
    }

    /// APNs request fields that must not be sent twice (APNs: 400 `DuplicateHeaders`), lower-case: the one
    /// list both transports check (the HTTP/2 port's request head and the HTTP/1.1 adapter).
    package static let singleFields: Set<String> = ["authorization", "apns-id", "apns-push-type", "apns-topic", "apns-priority",
                                                     "apns-expiration", "apns-collapse-id", "apns-channel-id", "apns-request-id"]

    /// What a request that sent `name` (one of ``singleFields``) more than once is told, naming it.
    package static func duplicateHeaderDetail(_ name: String) -> String { "\(name): sent more than once" }

    /// The request method.
    package var method: HTTPMethod
    /// The path, percent-decoded, without the query: `/api/activities/abc`.
    package var path: String
    /// The query's fields in the order sent. Fields without `=` (`?live`) are not kept: like
    /// `lws_get_urlarg_by_name`, which looks for `name=`, a lookup never finds them.
    package var query: [QueryField]
    /// The header fields the adapter reads (see `HTTPAdapter.knownHeaders` and `HTTPAdapter.customHeaders`:
    /// lws 4.1 cannot list the fields a request sent).
    package var headers: HTTPHeaders
    /// The body as received, in bytes: at most one byte more than the adapter's limit, so that a body larger
    /// than the limit has `count > limit` (answer 413) while no more than that is held in memory.
    package var body: [UInt8]
    /// The protocol version it came over.
    package var version: Version = .http1
    /// Fields of ``singleFields`` the HTTP/1.1 adapter saw more than once, lower-case and sorted (their
    /// ``headers`` value is then not to be trusted). The APNs endpoints refuse such a request (400
    /// `DuplicateHeaders`); the HTTP/2 port refuses it before routing and never sets this.
    package var repeatedFields: [String] = []
    /// The values of the route pattern's `{name}` segments (and `**`, the rest of the path), set by ``Router``.
    package var parameters: [String: String] = [:]
    /// State of the connection it came over that outlives one request: on the APNs port, the HTTP/2
    /// connection's provider token slot (the server's `providerTokenSlot` reads it, for 429
    /// `TooManyProviderTokenUpdates`); nil on the main port. Opaque here.
    package var connectionSlot: (any HTTPConnectionSlot)? = nil

    /// Creates a request.
    /// - Parameters:
    ///   - method: the method.
    ///   - path: the decoded path, starting with `/`, without the query.
    ///   - query: the decoded query fields, in order.
    ///   - headers: the header fields.
    ///   - body: the body bytes (empty for none).
    package init(method: HTTPMethod, path: String, query: [QueryField] = [], headers: HTTPHeaders = [:], body: [UInt8] = []) {
        self.method = method
        self.path = path
        self.query = query
        self.headers = headers
        self.body = body
    }

    /// The value of the first query field called `name` (`?since=12` → `"12"`), or nil.
    package func query(_ name: String) -> String? {
        query.first { $0.name == name }?.value
    }

    /// Query fields from lws's `WSI_TOKEN_HTTP_URI_ARGS` fragments (`name=value` each, already URL-decoded,
    /// split at `&` before decoding): split at the first `=`; fragments without one are dropped.
    package static func queryFields(fromFragments fragments: [String]) -> [QueryField] {
        fragments.compactMap { fragment in
            guard let equals = fragment.firstIndex(of: "=") else { return nil }
            return QueryField(name: String(fragment[..<equals]), value: String(fragment[fragment.index(after: equals)...]))
        }
    }

    /// The token of an `Authorization: Bearer …` header (RFC 6750 §2.1; the scheme in any case), or nil.
    package var bearerToken: String? { Self.bearer(headers["authorization"]) }

    /// The token of an `Authorization` value (`Bearer abc` → `abc`; the scheme in any case), or nil. Shared with
    /// the WebSocket handshake (``UpgradeRequest``).
    package static func bearer(_ authorization: String?) -> String? {
        guard let authorization else { return nil }
        let parts = authorization.split(separator: " ", maxSplits: 1)
        guard parts.count == 2, parts[0].lowercased() == "bearer" else { return nil }
        return String(parts[1]).trimmingCharacters(in: .whitespaces)
    }

    /// The token a client presents: the bearer token (scripts), else `?token=` (browsers, iframes), else nil.
    /// The same rule as the WebSocket handshake's.
    package var presentedToken: String? { bearerToken ?? query("token") }

    /// The path's segments between slashes, without the leading one: `/a/b/` → `["a", "b", ""]`, `/` → `[""]`.
    package var segments: [Substring] { Router.segments(of: path) }
}

/// State a connection attaches to each of its requests (``HTTPRequest/connectionSlot``), opaque to the HTTP
/// values: the APNs port's provider token slot. Thread-safe (a conforming type is `Sendable`).
package protocol HTTPConnectionSlot: AnyObject, Sendable {}
