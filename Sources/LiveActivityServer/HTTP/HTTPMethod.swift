/// An HTTP request method (RFC 9110 §9.3), among those libwebsockets 4.1 tells apart.
enum HTTPMethod: String, Sendable, Hashable, CaseIterable {
    case get = "GET"
    case head = "HEAD"
    case post = "POST"
    case put = "PUT"
    case delete = "DELETE"
    case patch = "PATCH"
    case options = "OPTIONS"

    /// Whether a request with this method may carry a body that must be read before answering (HTTP/1.1
    /// keeps the connection in step only if it is): POST, PUT, PATCH and DELETE.
    var mayHaveBody: Bool {
        switch self {
        case .post, .put, .patch, .delete: true
        case .get, .head, .options: false
        }
    }

    /// Methods written in a fixed order (that of ``allCases``), comma-separated: an `allow` header's value
    /// (RFC 9110 §10.2.1).
    static func list(_ methods: Set<HTTPMethod>) -> String {
        allCases.filter(methods.contains).map(\.rawValue).joined(separator: ", ")
    }
}
