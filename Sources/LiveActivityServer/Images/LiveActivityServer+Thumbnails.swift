import Foundation
import LiveActivityCore
import LiveActivityImages

/// Thumbnails of activities' `image` URLs: requested after a start is broadcast, published with an `updated`
/// event when ready. Start never waits: until then (and for good when the image cannot be had) pages show the
/// fallback icon. Service thread only, except where noted.
extension LiveActivityServer {
    /// Opens the thumbnail service, or `nil` when thumbnails are off (no cache folder) or the folder is unusable.
    /// libcurl and libvips are opened by the first fetch, not here: the cache folder is read at start (the
    /// routes serve it), the libraries only when an image has to be fetched.
    /// Also asks for the thumbnails that activities restored from the store still lack.
    func makeThumbnailService() -> ThumbnailService? {
        guard configuration.images.cacheDirectory != nil else { return nil }
        do {
            let service = try ThumbnailService(settings: configuration.images, logger: logger)
            perform { server in server.requestMissingThumbnails() }
            return service
        } catch {
            logger.error("thumbnails are off: the image cache folder cannot be used",
                         ["image.cache": configuration.images.cacheDirectory?.path ?? "", "error": "\(error)"])
            return nil
        }
    }

    /// Starts fetching the image of every activity that `events` started or scheduled and that has no
    /// thumbnail yet. Returns at once; each result comes back through ``perform(_:)``.
    func requestThumbnails(for events: [ActivityEvent]) {
        let urls = events.filter { $0.kind == .started || $0.kind == .scheduled }
            .filter { $0.activity.thumbnail == nil }
            .compactMap(\.activity.imageURL)
        guard !urls.isEmpty, let thumbnails else { return }
        for url in Set(urls) { requestThumbnail(url, from: thumbnails) }
    }

    /// Asks for every image that live or ended activities still show the fallback for (after a restart).
    func requestMissingThumbnails() {
        guard let thumbnails else { return }
        for url in center.imagesWithoutThumbnail { requestThumbnail(url, from: thumbnails) }
    }

    private func requestThumbnail(_ url: String, from thumbnails: ThumbnailService) {
        thumbnails.thumbnail(for: url, key: Digest.sha256Hex(url)) { [self] result in
            // A worker thread: hand the result to the service thread.
            guard case .success(let thumbnail) = result else { return }
            perform { server in server.publishThumbnail(thumbnail, forImage: url) }
        }
    }

    /// Records and broadcasts the thumbnail on every activity showing `url`'s fallback (through the change
    /// pipeline: broadcast once durable).
    func publishThumbnail(_ thumbnail: ActivityThumbnail, forImage url: String) {
        let now = clock()
        change({ center in let events = center.setThumbnail(thumbnail, forImage: url); return (events, events) }) { [self] result in
            switch result {
            case .success(let events): broadcast(events, at: now)
            case .failure(let error): logger.error("thumbnail not recorded", ["image.key": thumbnail.key, "error": "\(error)"])
            }
        }
    }
}
