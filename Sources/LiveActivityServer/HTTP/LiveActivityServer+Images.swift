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
        return respondImmutable(wsi, id: id, body: png, contentType: "image/png")
    }

    /// Writes a 200 with `cache-control: public, max-age=31536000, immutable`, and queues `body` for the next
    /// HTTP_WRITEABLE (as ``respond(_:id:status:body:contentType:headers:)`` does for `no-store` answers).
    /// - Returns: nonzero to close the connection.
    private func respondImmutable(_ wsi: OpaquePointer, id: UInt64, body: [UInt8], contentType: String) -> Int32 {
        let headroom = clws_pre()
        var buffer = [UInt8](repeating: 0, count: headroom + 2048)
        let failed = buffer.withUnsafeMutableBufferPointer { buffer -> Bool in
            let start = buffer.baseAddress! + headroom
            let end = buffer.baseAddress! + buffer.count
            var position: UnsafeMutablePointer<UInt8>? = start
            if lws_add_http_common_headers(wsi, 200, contentType, lws_filepos_t(body.count), &position, end) != 0 {
                return true
            }
            let cacheControl = Array(Self.immutableCacheControl.utf8)
            if lws_add_http_header_by_token(wsi, WSI_TOKEN_HTTP_CACHE_CONTROL, cacheControl, Int32(cacheControl.count),
                                            &position, end) != 0 {
                return true
            }
            return lws_finalize_write_http_header(wsi, start, &position, end) != 0
        }
        if failed { return 1 }
        httpResponses[id] = Frame(body)
        lws_callback_on_writable(wsi)
        return 0
    }
}
