import CLibWebSockets
import Foundation
import LiveActivityCore
import LiveActivityImages

/// `GET /images/{key}@{scale}x.png`: the thumbnails in the cache folder. Service thread only.
///
/// `key` is the SHA-256 of the image URL (64 lowercase hex digits) and `scale` 1, 2 or 3; the files never
/// change once written, so they are sent with `cache-control: public, max-age=31536000, immutable`. Like the
/// page's static files they need no token (the key is only known to those who saw the activity). Anything
/// else under `/images/` is 404; methods other than GET are 405.
extension LiveActivityServer {
    /// Long-lived caching for content-addressed files.
    static let immutableCacheControl = "public, max-age=31536000, immutable"

    /// Answers one `/images/…` request.
    /// - Returns: nonzero to close the connection.
    func imageRequest(_ wsi: OpaquePointer, id: UInt64, path: String) -> Int32 {
        guard header(wsi, WSI_TOKEN_GET_URI) != nil else {
            return respond(wsi, id: id, status: 405, body: ServerMessage.error(requestId: nil, ProtocolError(.invalidField,
                field: "method", message: "method: only GET is allowed here")).encoded())
        }
        let name = String(path.dropFirst(ActivityThumbnail.pathPrefix.count))
        guard let thumbnails, let png = thumbnails.cache.read(fileName: name) else {
            return respond(wsi, id: id, status: 404, body: ServerMessage.error(requestId: nil, ProtocolError(.invalidField,
                field: "path", message: "path: no thumbnail at \(path.prefix(120))")).encoded())
        }
        return respond(wsi, id: id, status: 200, body: png, contentType: "image/png", cacheControl: Self.immutableCacheControl)
    }
}
