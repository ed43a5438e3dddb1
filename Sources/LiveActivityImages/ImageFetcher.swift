import CCurl
import Foundation

/// Downloads one image over http or https with libcurl, safely: a time limit, a size limit, at most a few
/// redirects (each one checked again), and every host resolved first, checked against the private-address
/// policy and pinned to the checked addresses (`CURLOPT_RESOLVE`), so the connection goes where the check
/// looked (no DNS rebinding). Proxies from the environment are ignored, since they would bypass the check.
///
/// Blocking; runs on a fetch worker, never on the service thread. Thread-safe (each fetch has its own handle).
struct ImageFetcher: Sendable {
    /// Limits and the private-address policy.
    let settings: ImageSettings

    /// Opens libcurl (it is not linked: see Sources/CCurl/shim.h) and starts it, once per process
    /// (`curl_global_init` is not thread-safe, so it runs before any fetch).
    private static let started: Result<Void, ImageError> = {
        var reason = [CChar](repeating: 0, count: 256)
        guard ccurl_load(&reason, reason.count) == 0 else {
            let text = reason.withUnsafeBufferPointer { String(cString: $0.baseAddress!) }
            return .failure(ImageError(.unavailable, "libcurl cannot be loaded: \(text)"))
        }
        let code = ccurl_global_init(Int(CURL_GLOBAL_DEFAULT))
        guard code == CURLE_OK else {
            return .failure(ImageError(.unavailable, "libcurl could not be initialised: \(String(cString: ccurl_easy_strerror(code)))"))
        }
        return .success(())
    }()

    /// Opens and starts libcurl the first time; later calls only repeat the outcome.
    /// - Throws: ``ImageError`` `unavailable` when libcurl is missing or does not start.
    static func start() throws(ImageError) {
        try started.get()
    }

    /// The image's bytes, after following at most ``ImageSettings/maximumRedirects`` redirects.
    /// - Parameter url: an http or https URL.
    /// - Returns: the body of the final 200 response, at most ``ImageSettings/maximumImageBytes`` long.
    /// - Throws: ``ImageError``: `invalidURL`, `refusedHost`, `unresolvable`, `network`, `httpStatus`,
    ///   `tooManyRedirects`, `tooLarge` or `unavailable` (libcurl cannot be loaded).
    func fetch(_ url: String) throws(ImageError) -> [UInt8] {
        try Self.start()
        let deadline = Date().addingTimeInterval(settings.fetchTimeout)
        var current = url
        for hop in 0...settings.maximumRedirects {
            let remaining = deadline.timeIntervalSinceNow
            guard remaining > 0 else { throw ImageError(.network, "timed out after \(Int(settings.fetchTimeout)) s", transient: true) }
            switch try fetchOnce(current, timeout: remaining) {
            case .body(let bytes):
                return bytes
            case .redirect(let location):
                guard hop < settings.maximumRedirects else { break }
                current = location
            }
        }
        throw ImageError(.tooManyRedirects, "more than \(settings.maximumRedirects) redirects from \(url.prefix(200))")
    }

    private enum Answer {
        case body([UInt8])
        case redirect(String)
    }

    /// Where a URL points: scheme, host (brackets removed), port.
    private struct Target {
        var host: String
        var port: Int
    }

    private func target(of url: String) throws(ImageError) -> Target {
        guard let components = URLComponents(string: url), let scheme = components.scheme?.lowercased(),
              scheme == "http" || scheme == "https" else {
            throw ImageError(.invalidURL, "only absolute http and https URLs are fetched: \(url.prefix(200))")
        }
        guard var host = components.host, !host.isEmpty else { throw ImageError(.invalidURL, "no host in \(url.prefix(200))") }
        if host.hasPrefix("["), host.hasSuffix("]") { host = String(host.dropFirst().dropLast()) }
        guard components.user == nil, components.password == nil else {
            throw ImageError(.invalidURL, "URLs with a user name or password are not fetched")
        }
        return Target(host: host, port: components.port ?? (scheme == "https" ? 443 : 80))
    }

    /// Resolves the host and keeps the addresses the policy allows.
    private func allowedAddresses(_ target: Target) throws(ImageError) -> [HostAddress] {
        let addresses = try HostAddress.resolve(target.host)
        if settings.allowPrivateHosts { return addresses }
        let allowed = addresses.filter { !$0.isPrivate }
        guard !allowed.isEmpty else {
            let list = addresses.map(\.description).joined(separator: ", ")
            throw ImageError(.refusedHost, "\(target.host.prefix(100)) resolves to a loopback, link-local or private address (\(list)); pass --allow-private-image-hosts to allow it")
        }
        return allowed
    }

    private func fetchOnce(_ url: String, timeout: TimeInterval) throws(ImageError) -> Answer {
        let target = try target(of: url)
        let addresses = try allowedAddresses(target)
        guard let handle = ccurl_easy_init() else { throw ImageError(.network, "curl_easy_init failed", transient: true) }
        defer { ccurl_easy_cleanup(handle) }

        // Pin the connection to the addresses just checked. A numeric host needs no pinning.
        var resolveList: UnsafeMutablePointer<curl_slist>?
        if HostAddress(target.host) == nil {
            let entry = "\(target.host):\(target.port):\(addresses.map(\.resolveForm).joined(separator: ","))"
            resolveList = ccurl_slist_append(nil, entry)
        }
        let headers = ccurl_slist_append(nil, "Accept: image/png, image/jpeg, image/gif, image/webp")
        defer {
            ccurl_slist_free_all(resolveList)
            ccurl_slist_free_all(headers)
        }
        let body = ResponseBody(limit: settings.maximumImageBytes)
        let bodyPointer = Unmanaged.passUnretained(body).toOpaque()
        var failed = false
        func set(_ code: CURLcode) { if code != CURLE_OK { failed = true } }
        set(ccurl_setopt_string(handle, CURLOPT_URL, url))
        set(ccurl_setopt_string(handle, CURLOPT_PROTOCOLS_STR, "http,https"))
        set(ccurl_setopt_long(handle, CURLOPT_FOLLOWLOCATION, 0))
        set(ccurl_setopt_long(handle, CURLOPT_NOSIGNAL, 1))
        set(ccurl_setopt_long(handle, CURLOPT_TIMEOUT_MS, max(1, Int(timeout * 1000))))
        set(ccurl_setopt_long(handle, CURLOPT_CONNECTTIMEOUT_MS, max(1, Int(min(timeout, settings.connectTimeout) * 1000))))
        set(ccurl_setopt_offset(handle, CURLOPT_MAXFILESIZE_LARGE, curl_off_t(settings.maximumImageBytes)))
        set(ccurl_setopt_string(handle, CURLOPT_NOPROXY, "*"))
        set(ccurl_setopt_string(handle, CURLOPT_USERAGENT, "liveactivity-thumbnails/1"))
        set(ccurl_setopt_pointer(handle, CURLOPT_HTTPHEADER, UnsafeMutableRawPointer(headers)))
        if let resolveList { set(ccurl_setopt_pointer(handle, CURLOPT_RESOLVE, UnsafeMutableRawPointer(resolveList))) }
        set(ccurl_setopt_pointer(handle, CURLOPT_WRITEDATA, bodyPointer))
        set(ccurl_setopt_write_function(handle) { data, size, count, user in
            guard let data, let user else { return 0 }
            let body = Unmanaged<ResponseBody>.fromOpaque(user).takeUnretainedValue()
            return body.append(UnsafeRawBufferPointer(start: data, count: size * count)) ? size * count : 0
        })
        guard !failed else { throw ImageError(.network, "libcurl refused an option") }

        let code = withExtendedLifetime(body) { ccurl_easy_perform(handle) }
        if body.overflowed || code == CURLE_FILESIZE_EXCEEDED {
            throw ImageError(.tooLarge, "the image is larger than \(settings.maximumImageBytes) bytes")
        }
        guard code == CURLE_OK else {
            let reason = String(cString: ccurl_easy_strerror(code))
            throw ImageError(.network, "\(reason) (\(url.prefix(200)))", transient: true)
        }
        // Belt and braces: the connection must have gone to an address the policy allowed.
        var primary: UnsafePointer<CChar>?
        _ = ccurl_getinfo_string(handle, CURLINFO_PRIMARY_IP, &primary)
        if let primary, let used = HostAddress(String(cString: primary)), !addresses.contains(used) {
            throw ImageError(.refusedHost, "connected to \(used), which was not the checked address of \(target.host.prefix(100))")
        }
        var status = 0
        _ = ccurl_getinfo_long(handle, CURLINFO_RESPONSE_CODE, &status)
        switch status {
        case 200:
            return .body(body.bytes)
        case 301, 302, 303, 307, 308:
            var location: UnsafePointer<CChar>?
            _ = ccurl_getinfo_string(handle, CURLINFO_REDIRECT_URL, &location)
            guard let location else { throw ImageError(.tooManyRedirects, "HTTP \(status) without a usable Location") }
            return .redirect(String(cString: location))
        default:
            let transient = status >= 500 || status == 408 || status == 429
            throw ImageError(.httpStatus, "HTTP \(status) from \(url.prefix(200))", transient: transient)
        }
    }
}

/// The body being received, capped at `limit` bytes. Touched only by the thread running the transfer.
private final class ResponseBody {
    let limit: Int
    var bytes: [UInt8] = []
    var overflowed = false

    init(limit: Int) {
        self.limit = limit
    }

    /// Appends a chunk; `false` (abort the transfer) once the total passes the limit.
    func append(_ chunk: UnsafeRawBufferPointer) -> Bool {
        guard bytes.count + chunk.count <= limit else {
            overflowed = true
            return false
        }
        bytes.append(contentsOf: chunk)
        return true
    }
}
