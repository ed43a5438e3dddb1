import Foundation
import LiveActivityCore
import LiveActivityImages

/// Thumbnails of activities' `image` URLs as a feature: an observer of committed changes that requests the
/// image of every activity started or scheduled without one; fetched and resized on worker threads
/// (``ThumbnailService``), then published through the change pipeline with an `updated` event. Start never
/// waits: until then (and for good when the image cannot be had) pages show the fallback icon. Registers
/// `GET /images/{key}@{scale}x.png` (``ThumbnailRoutes``). Service thread only, except where noted.
final class Thumbnails: ServerFeature, ChangeObserver {
    /// What thumbnails see of the server.
    struct Context {
        /// Remote images: the cache folder (nil: thumbnails off) and fetch limits.
        var settings: ImageSettings
        /// The current time (the server's clock). Service thread.
        var now: () -> Date
        /// The committed activities (for the images restored activities still lack). Service thread.
        var center: () -> ActivityCenter
        /// Proposes the change that sets a thumbnail. Service thread.
        var change: ChangeProposer
        /// Runs a job on the service thread; called from the fetchers' worker threads.
        var onServiceThread: ServiceThreadHop
        /// Where diagnostics go.
        var logger: Logger
    }

    /// What it sees of the server.
    private let context: Context
    /// Fetches and caches the images, or nil when thumbnails are off (no cache folder) or the folder is
    /// unusable. Opened by the first use (``register(in:)``, when the server starts): the cache folder is
    /// read then (the routes serve it), libcurl and libvips only when an image has to be fetched.
    private(set) lazy var service: ThumbnailService? = makeService()

    /// Thumbnails as `context` configures them; nothing is opened yet.
    init(context: Context) {
        self.context = context
    }

    /// Opens the thumbnail service, or nil when thumbnails are off or the folder is unusable (logged). Also
    /// asks, soon, for the thumbnails that activities restored from the store still lack.
    private func makeService() -> ThumbnailService? {
        guard context.settings.cacheDirectory != nil else { return nil }
        do {
            let service = try ThumbnailService(settings: context.settings, logger: context.logger)
            let me = ServiceThreadBox(value: self)
            context.onServiceThread { me.value.requestMissingThumbnails() }
            return service
        } catch {
            context.logger.error("thumbnails are off: the image cache folder cannot be used",
                                 ["image.cache": context.settings.cacheDirectory?.path ?? "", "error": "\(error)"])
            return nil
        }
    }

    /// Registers `GET /images/{key}@{scale}x.png`.
    func register(in tables: inout FeatureTables) {
        ThumbnailRoutes().register(on: &tables.routes, context: ThumbnailRoutes.Context(
            thumbnail: { [unowned self] name in service?.cache.read(fileName: name) }))
    }

    /// A published thumbnail's PNG by file name, from the cache (for renderings); any thread once the
    /// service is open. Nil when thumbnails are off.
    var cache: ThumbnailCache? { service?.cache }

    // MARK: Observing

    /// Starts fetching the image of every activity that `events` started or scheduled and that has no
    /// thumbnail yet. Returns at once; each result comes back through the service thread.
    func committed(_ events: [ActivityEvent], at now: Date) {
        let urls = events.filter { $0.kind == .started || $0.kind == .scheduled }
            .filter { $0.activity.thumbnail == nil }
            .compactMap(\.activity.imageURL)
        guard !urls.isEmpty, let service else { return }
        for url in Set(urls) { requestThumbnail(url, from: service) }
    }

    /// Another instance's events: it fetches their images and publishes the thumbnails itself.
    func replicated(_ events: [ActivityEvent], at now: Date) {}

    /// Asks for every image that live or ended activities still show the fallback for (after a restart).
    func requestMissingThumbnails() {
        guard let service else { return }
        for url in context.center().imagesWithoutThumbnail { requestThumbnail(url, from: service) }
    }

    /// Fetches one image on a worker thread; the thumbnail is published on the service thread.
    private func requestThumbnail(_ url: String, from service: ThumbnailService) {
        let me = ServiceThreadBox(value: self)
        let hop = context.onServiceThread
        service.thumbnail(for: url, key: Digest.sha256Hex(url)) { result in
            // A worker thread: hand the result to the service thread.
            guard case .success(let thumbnail) = result else { return }
            hop { me.value.publishThumbnail(thumbnail, forImage: url) }
        }
    }

    /// Records the thumbnail on every activity showing `url`'s fallback, through the change pipeline (its
    /// `updated` events are broadcast once durable, by the sessions).
    func publishThumbnail(_ thumbnail: ActivityThumbnail, forImage url: String) {
        context.change.change(at: context.now(), { center in
            let events = center.setThumbnail(thumbnail, forImage: url)
            return (events, events)
        }) { [context] result in
            if case .failure(let error) = result {
                context.logger.error("thumbnail not recorded", ["image.key": thumbnail.key, "error": "\(error)"])
            }
        }
    }
}
