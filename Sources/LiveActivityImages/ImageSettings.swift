import Foundation

/// How the server fetches, fits and keeps remote images, as one value with embedded defaults.
public struct ImageSettings: Sendable {
    /// The cache folder; `{key}@{scale}x.png` files live directly in it. `nil` = thumbnails are off.
    public var cacheDirectory: URL?
    /// Most bytes the cache folder may hold; the least recently used thumbnails go first. Default 64 MiB.
    public var cacheBytes: Int = 64 * 1024 * 1024
    /// Fetch images from hosts that resolve to loopback, link-local or private addresses (tests, intranets).
    /// Default `false`: such hosts are refused.
    public var allowPrivateHosts = false
    /// Largest image body fetched, in bytes; larger ones are refused. Default 8 MiB.
    public var maximumImageBytes: Int = 8 * 1024 * 1024
    /// Largest decoded image, in pixels (width × height of the first frame). Default 40 megapixels.
    public var maximumPixels: Int = 40_000_000
    /// Most seconds one fetch (connect, redirects and body) may take. Default 10.
    public var fetchTimeout: TimeInterval = 10
    /// Most seconds to connect to a host. Default 5.
    public var connectTimeout: TimeInterval = 5
    /// Most redirects followed per fetch. Default 3.
    public var maximumRedirects = 3
    /// Most fetches running at once. Default 3.
    public var maximumConcurrentFetches = 3
    /// Seconds to wait before each retry of a transient failure (network error, timeout, HTTP 5xx/408/429);
    /// its count is the number of retries. Default 2, 10 and 60 seconds (each with ±20 % jitter).
    public var retryDelays: [TimeInterval] = [2, 10, 60]
    /// Seconds a URL that failed for good is not tried again. Default 600.
    public var failureMemory: TimeInterval = 600

    /// Creates settings with thumbnails off (no cache folder) and every other value at its default.
    public init(cacheDirectory: URL? = nil) {
        self.cacheDirectory = cacheDirectory
    }
}
