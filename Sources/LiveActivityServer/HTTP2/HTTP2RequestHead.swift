import Foundation
import LiveActivityCore

/// An HTTP/2 request as libnghttp2 hands it over — the decoded header list (pseudo-header fields first) and
/// the body — turned into the ``HTTPRequest`` value the route table takes, the same value the HTTP/1.1
/// adapter makes. Pure, so it can be tested and fuzzed without sockets. Thread-safe (a value).
///
/// libnghttp2 has already checked what RFC 9113 §8.2–8.3 requires of the fields (lower-case names, the
/// pseudo-header fields once each and before the others, no connection-specific fields, `content-length`
/// against the body) and resets streams that break it; this reads `:method` and `:path` (RFC 9113 §8.3.1),
/// decodes the path and query, and refuses what the route table cannot take.
struct HTTP2RequestHead: Sendable {
    /// The header fields, in the order received (names lower-case, pseudo-header fields included).
    var fields: [(name: String, value: String)] = []
    /// Their size as RFC 9113 §6.5.2 counts it: name and value bytes plus 32 per field.
    var size = 0

    /// APNs request fields that must not be sent twice (APNs: 400 `DuplicateHeaders`): ``HTTPRequest/singleFields``,
    /// the list the HTTP/1.1 adapter checks too.
    static let singleFields = HTTPRequest.singleFields

    /// Why a request cannot be handed to the route table, with the APNs-shaped answer to give instead.
    struct Refusal: Error, Equatable {
        /// HTTP status: 400 (no `:path`, `DuplicateHeaders`) or 405 (a method the table does not know).
        var status: Int
        /// APNs's reason.
        var reason: String
        /// What exactly is wrong, naming the field.
        var detail: String
    }

    /// Adds one field. - Returns: false when the list would pass `limit` bytes (the field is not kept).
    mutating func append(name: String, value: String, limit: Int) -> Bool {
        let cost = name.utf8.count + value.utf8.count + 32
        guard size + cost <= limit else { return false }
        size += cost
        fields.append((name, value))
        return true
    }

    /// The request, with `body`.
    /// - Throws: ``Refusal`` for a method the route table does not know (405 `MethodNotAllowed`), no or a
    ///   relative `:path` (404 `BadPath`, as APNs answers a bad path), or an APNs field sent twice
    ///   (400 `DuplicateHeaders`).
    func request(body: [UInt8]) throws(Refusal) -> HTTPRequest {
        var method: String?
        var target: String?
        var headers = HTTPHeaders()
        var seen: Set<String> = []
        for (name, value) in fields {
            switch name {
            case ":method": method = value
            case ":path": target = value
            case ":authority": headers["host"] = value
            default:
                if name.hasPrefix(":") { continue }
                if Self.singleFields.contains(name), !seen.insert(name).inserted {
                    throw Refusal(status: 400, reason: "DuplicateHeaders", detail: HTTPRequest.duplicateHeaderDetail(name))
                }
                if let earlier = headers[name] {
                    headers[name] = earlier + ", " + value
                } else {
                    headers[name] = value
                }
            }
        }
        guard let method, let parsed = HTTPMethod(rawValue: method) else {
            throw Refusal(status: 405, reason: "MethodNotAllowed", detail: ":method: \(method.map { "\"\($0.clipped(to: 16))\"" } ?? "missing") is not one this server answers; use POST")
        }
        guard let target, target.hasPrefix("/") else {
            throw Refusal(status: 404, reason: "BadPath", detail: ":path: \(target.map { "\"\($0.clipped(to: 64))\"" } ?? "missing") is not an absolute path")
        }
        let (path, query) = Self.split(target)
        var request = HTTPRequest(method: parsed, path: path, query: query, headers: headers, body: body)
        request.version = .http2
        return request
    }

    /// A request target split into its percent-decoded path and its query fields (`name=value`, URL-decoded:
    /// `+` as a space, `%XX` as its byte; fields without `=` dropped, as the HTTP/1.1 adapter drops them).
    static func split(_ target: String) -> (path: String, query: [HTTPRequest.QueryField]) {
        let parts = target.split(separator: "?", maxSplits: 1, omittingEmptySubsequences: false)
        let rawPath = String(parts[0])
        let path = rawPath.removingPercentEncoding ?? rawPath
        guard parts.count == 2 else { return (path, []) }
        let fragments = parts[1].split(separator: "&").map { fragment -> String in
            let plus = fragment.replacingOccurrences(of: "+", with: " ")
            return plus.removingPercentEncoding ?? plus
        }
        return (path, HTTPRequest.queryFields(fromFragments: fragments))
    }
}
