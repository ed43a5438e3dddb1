import LiveActivityCore

/// `GET /images/{key}@{scale}x.png`: the thumbnails in the cache folder. Handlers run on the service thread.
///
/// `key` is the SHA-256 of the image URL (64 lowercase hex digits) and `scale` 1, 2 or 3; the files never
/// change once written, so they are sent with `cache-control: public, max-age=31536000, immutable`. Like the
/// page's static files they need no token (the key is only known to those who saw the activity). Anything
/// else under `/images` is 404; methods other than GET are 405.
struct ThumbnailRoutes {
    /// What the thumbnail routes see of the server.
    struct Context {
        /// The PNG bytes of a cached thumbnail by file name (`{key}@{scale}x.png`), or nil when there is
        /// none (or thumbnails are off).
        var thumbnail: (String) -> [UInt8]?
    }

    /// Long-lived caching for content-addressed files.
    static let immutableCacheControl = "public, max-age=31536000, immutable"

    /// Registers `GET /images/{file}` and the 404 / 405 of everything under `/images`.
    func register(on router: inout Router, context: Context) {
        router.add([.get], "/images/{file}") { request in
            guard let png = context.thumbnail(request.parameters["file"] ?? "") else { return Self.notFound(request) }
            return HTTPResponse(status: .ok, contentType: "image/png", cacheControl: Self.immutableCacheControl, body: png)
        }
        router.onMiss(under: "/images") { request, miss in
            if case .methodNotAllowed(let allowed) = miss { return .methodNotAllowed(allowed) }
            return Self.notFound(request)
        }
    }

    /// 404 naming the path.
    private static func notFound(_ request: HTTPRequest) -> HTTPResponse {
        .error(.notFound, ProtocolError(.invalidField, field: "path", message: "path: no thumbnail at \(request.path.clipped(to: 120))"))
    }
}
