import Dispatch
import Foundation
import LiveActivityCore
import Synchronization

/// Makes 48-point thumbnails of remote images, in the background: fetch once, fit at 1×, 2× and 3×, cache.
///
/// - Requests for the same key while one is under way share it; a cached key answers at once.
/// - At most ``ImageSettings/maximumConcurrentFetches`` fetches run at once, on worker threads (never the
///   caller's thread).
/// - Transient failures are retried after ``ImageSettings/retryDelays`` (with jitter), never in a tight loop;
///   a final failure is remembered for ``ImageSettings/failureMemory`` seconds, during which requests for the
///   same key fail at once.
///
/// Thread-safe. Completions run on a worker thread; hand their results to the thread that owns your state.
public final class ThumbnailService: Sendable {
    /// What one request produces: the cache key's thumbnail, or why there is none.
    public typealias Completion = @Sendable (Result<ActivityThumbnail, ImageError>) -> Void

    /// The settings it runs with.
    public let settings: ImageSettings
    /// The cache folder (served at `/images/`).
    public let cache: ThumbnailCache
    private let logger: Logger
    private let fetcher: ImageFetcher
    private let thumbnailer: Thumbnailer
    /// Runs fetches; the semaphore bounds how many run at once.
    private let workers = DispatchQueue(label: "liveactivity.images", qos: .utility, attributes: .concurrent)
    /// Admits one job at a time to the workers, waiting for a free slot.
    private let gate = DispatchQueue(label: "liveactivity.images.gate", qos: .utility)
    private let slots: DispatchSemaphore

    private struct State {
        /// Completions waiting for each key under way.
        var waiting: [String: [Completion]] = [:]
        /// Final failures, by key, and when they happened.
        var failures: [String: (error: ImageError, at: Date)] = [:]
    }

    /// {lock} requests under way and failures remembered.
    private let state = Locked(State())

    /// Opens the cache folder. libcurl and libvips are not loaded yet: the first fetch opens them (about 28 MB
    /// of libraries an idle server, or one that only serves cached thumbnails, never maps); when one cannot be
    /// loaded, every fetch fails with ``ImageError`` `unavailable`, logged, and pages keep the fallback icon.
    /// - Parameters:
    ///   - settings: limits and the folder; ``ImageSettings/cacheDirectory`` must be set.
    ///   - logger: where fetch failures and retries are logged.
    /// - Throws: the file system's error when the folder cannot be created or read.
    public init(settings: ImageSettings, logger: Logger) throws {
        guard let directory = settings.cacheDirectory else {
            throw ImageError(.storage, "no image cache folder configured")
        }
        self.settings = settings
        self.logger = logger
        cache = try ThumbnailCache(directory: directory, capacity: settings.cacheBytes, logger: logger)
        fetcher = ImageFetcher(settings: settings)
        thumbnailer = Thumbnailer(settings: settings)
        slots = DispatchSemaphore(value: max(1, settings.maximumConcurrentFetches))
    }

    /// Asks for the thumbnail of `url`, cached under `key`; returns at once.
    /// - Parameters:
    ///   - url: the image URL (http or https).
    ///   - key: its cache key, the SHA-256 of `url` (64 lowercase hex digits).
    ///   - completion: called once, on a worker thread (or at once when the key is cached or failed recently).
    public func thumbnail(for url: String, key: String, completion: @escaping Completion) {
        if cache.contains(key) {
            completion(.success(ActivityThumbnail(key: key)))
            return
        }
        enum Next { case start, wait, fail(ImageError) }
        let now = Date()
        let next: Next = state.withLock { state in
            if let failure = state.failures[key] {
                if now.timeIntervalSince(failure.at) < settings.failureMemory { return .fail(failure.error) }
                state.failures[key] = nil
            }
            if state.waiting[key] != nil {
                state.waiting[key]!.append(completion)
                return .wait
            }
            state.waiting[key] = [completion]
            return .start
        }
        switch next {
        case .start: schedule(url: url, key: key, attempt: 0)
        case .wait: break
        case .fail(let error): completion(.failure(error))
        }
    }

    /// Whether a request for `key` is under way (for tests and metrics).
    public func isFetching(_ key: String) -> Bool {
        state.withLock { $0.waiting[key] != nil }
    }

    // MARK: Workers

    private func schedule(url: String, key: String, attempt: Int) {
        gate.async { [self] in
            slots.wait()
            workers.async { [self] in
                defer { slots.signal() }
                run(url: url, key: key, attempt: attempt)
            }
        }
    }

    private func run(url: String, key: String, attempt: Int) {
        let started = Date()
        let result: Result<ActivityThumbnail, ImageError>
        do throws(ImageError) {
            let bytes = try fetcher.fetch(url)
            let pngs = try thumbnailer.thumbnails(of: bytes, side: ActivityThumbnail.sidePoints, scales: ActivityThumbnail.scales)
            try cache.store(key, pngs: pngs)
            logger.info("thumbnail ready", ["image.key": key, "image.bytes": "\(bytes.count)",
                                            "image.ms": "\(Int(Date().timeIntervalSince(started) * 1000))"])
            result = .success(ActivityThumbnail(key: key))
        } catch {
            if error.isTransient, attempt < settings.retryDelays.count {
                let delay = settings.retryDelays[attempt] * Double.random(in: 0.8...1.2)
                logger.warning("image fetch failed; will retry", ["image.key": key, "image.url": String(url.prefix(200)),
                                                                  "error": error.description, "retry.attempt": "\(attempt + 1)",
                                                                  "retry.seconds": String(format: "%.1f", delay)])
                DispatchQueue.global(qos: .utility).asyncAfter(deadline: .now() + delay) { [self] in
                    schedule(url: url, key: key, attempt: attempt + 1)
                }
                return
            }
            logger.warning("image fetch failed; the fallback icon stays", ["image.key": key, "image.url": String(url.prefix(200)),
                                                                          "error": error.description, "attempts": "\(attempt + 1)"])
            result = .failure(error)
        }
        let completions: [Completion] = state.withLock { state in
            if case .failure(let error) = result { state.failures[key] = (error, Date()) }
            return state.waiting.removeValue(forKey: key) ?? []
        }
        for completion in completions { completion(result) }
    }
}
