/// Why a remote image could not be made into a thumbnail.
///
/// ``isTransient`` says whether trying again later may help (network errors, timeouts, HTTP 5xx/408/429);
/// everything else (a refused host, a 404, a file that is too large or not an image) is final.
public struct ImageError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The kinds of failure.
    public enum Kind: String, Sendable {
        /// Not an absolute http/https URL with a host.
        case invalidURL = "invalid_url"
        /// The host resolves only to loopback, link-local or private addresses (without `--allow-private-image-hosts`).
        case refusedHost = "refused_host"
        /// The host name did not resolve.
        case unresolvable
        /// Connecting or reading failed, or the fetch took too long.
        case network
        /// The server answered with an HTTP status other than 200.
        case httpStatus = "http_status"
        /// More redirects than allowed (or a redirect without a location).
        case tooManyRedirects = "too_many_redirects"
        /// The body is larger than the limit.
        case tooLarge = "too_large"
        /// The body is not a PNG, JPEG, GIF or WebP image.
        case unsupportedFormat = "unsupported_format"
        /// The image is too large in pixels, or it could not be decoded or encoded.
        case undecodable
        /// The cache folder could not be written.
        case storage
        /// A library thumbnails need (libcurl, libvips, opened when thumbnails are turned on) cannot be loaded
        /// or started: thumbnails are off.
        case unavailable
    }

    /// The kind of failure.
    public var kind: Kind
    /// A sentence for logs.
    public var message: String
    /// Whether a later retry may succeed.
    public var isTransient: Bool

    /// Creates an error.
    public init(_ kind: Kind, _ message: String, transient: Bool = false) {
        self.kind = kind
        self.message = message
        self.isTransient = transient
    }

    /// `kind: message`.
    public var description: String { "\(kind.rawValue): \(message)" }
}
