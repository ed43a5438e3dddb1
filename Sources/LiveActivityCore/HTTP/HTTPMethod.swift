/// An HTTP request method (RFC 9110 §9.3), among those libwebsockets 4.1 tells apart.
package enum HTTPMethod: String, Sendable, Hashable, CaseIterable {
    /// RFC 9110 §9.3.1.
    case get = "GET"
    /// RFC 9110 §9.3.2: as GET, without the body.
    case head = "HEAD"
    /// RFC 9110 §9.3.3.
    case post = "POST"
    /// RFC 9110 §9.3.4.
    case put = "PUT"
    /// RFC 9110 §9.3.5.
    case delete = "DELETE"
    /// RFC 5789.
    case patch = "PATCH"
    /// RFC 9110 §9.3.7.
    case options = "OPTIONS"

    /// Whether a request with this method may carry a body that must be read before answering (HTTP/1.1
    /// keeps the connection in step only if it is): POST, PUT, PATCH and DELETE.
    package var mayHaveBody: Bool {
        switch self {
        case .post, .put, .patch, .delete: true
        case .get, .head, .options: false
        }
    }

    /// Methods written in a fixed order (that of ``allCases``), comma-separated: an `allow` header's value
    /// (RFC 9110 §10.2.1).
    package static func list(_ methods: Set<HTTPMethod>) -> String {
        allCases.filter(methods.contains).map(\.rawValue).joined(separator: ", ")
    }
}
