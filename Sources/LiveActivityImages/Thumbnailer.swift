import CVips
import Foundation

/// Fits an image to a square with libvips: scaled to fill, centre-cropped, first frame only, encoded as PNG.
///
/// Thread-safe (libvips is; each call has its own images). Blocking and CPU-bound: runs on a fetch worker.
struct Thumbnailer: Sendable {
    /// The pixel-count limit.
    let settings: ImageSettings

    /// Opens libvips (it is not linked: see Sources/CVips/shim.h) and starts it, once per process.
    private static let started: Result<Void, ImageError> = {
        var reason = [CChar](repeating: 0, count: 256)
        guard cvips_load(&reason, reason.count) == 0 else {
            let text = reason.withUnsafeBufferPointer { String(cString: $0.baseAddress!) }
            return .failure(ImageError(.unavailable, "libvips cannot be loaded: \(text)"))
        }
        guard cvips_init("liveactivity") == 0 else {
            return .failure(ImageError(.unavailable, "libvips could not be initialised: \(vipsError())"))
        }
        return .success(())
    }()

    /// Opens and starts libvips the first time; later calls only repeat the outcome.
    /// - Throws: ``ImageError`` `unavailable` when libvips is missing, incompatible or does not start.
    static func start() throws(ImageError) {
        try started.get()
    }

    /// PNG thumbnails of `data`, one per scale: `side × scale` pixels square.
    /// - Parameters:
    ///   - data: the fetched bytes.
    ///   - side: the side in points (48).
    ///   - scales: the scales (1, 2, 3).
    /// - Returns: the PNG bytes by scale.
    /// - Throws: ``ImageError`` `unsupportedFormat` (not PNG, JPEG, GIF or WebP by signature and by libvips'
    ///   loader), `undecodable` (corrupt, too many pixels, or libvips failed) or `unavailable` (libvips cannot be
    ///   loaded).
    func thumbnails(of data: [UInt8], side: Int, scales: [Int]) throws(ImageError) -> [Int: [UInt8]] {
        try Self.start()
        guard let format = ImageFormat(sniffing: data) else {
            throw ImageError(.unsupportedFormat, "not a PNG, JPEG, GIF or WebP image (\(data.count) bytes)")
        }
        return try data.withUnsafeBytes { buffer in
            Result { () throws(ImageError) in try fit(buffer, format: format, side: side, scales: scales) }
        }.get()
    }

    private func fit(_ buffer: UnsafeRawBufferPointer, format: ImageFormat, side: Int, scales: [Int]) throws(ImageError) -> [Int: [UInt8]] {
        guard let loader = cvips_loader_for(buffer.baseAddress, buffer.count).map({ String(cString: $0) }),
              format.matches(loader: loader) else {
            _ = cvips_error_take()
            throw ImageError(.unsupportedFormat, "looks like \(format.rawValue) but libvips cannot load it")
        }
        var width: Int32 = 0, height: Int32 = 0, pages: Int32 = 0
        guard cvips_header(buffer.baseAddress, buffer.count, &width, &height, &pages) == 0 else {
            throw ImageError(.undecodable, "unreadable \(format.rawValue) header: \(Self.vipsError())")
        }
        guard width > 0, height > 0, Int(width) * Int(height) <= settings.maximumPixels else {
            throw ImageError(.undecodable, "\(width)×\(height) pixels is more than the limit of \(settings.maximumPixels)")
        }
        var results: [Int: [UInt8]] = [:]
        for scale in scales {
            let pixels = Int32(side * scale)
            var png: UnsafeMutableRawPointer?
            var length = 0
            guard cvips_fill_png(buffer.baseAddress, buffer.count, pixels, pixels, &png, &length) == 0, let png else {
                throw ImageError(.undecodable, "cannot fit the \(format.rawValue) image: \(Self.vipsError())")
            }
            results[scale] = Array(UnsafeRawBufferPointer(start: png, count: length))
            cvips_free(png)
        }
        return results
    }

    private static func vipsError() -> String {
        String(cString: cvips_error_take()).trimmingCharacters(in: .whitespacesAndNewlines).prefix(300).description
    }
}
