/// The image formats accepted for thumbnails, recognised by their signature (magic bytes).
public enum ImageFormat: String, Sendable, CaseIterable {
    case png, jpeg, gif, webp

    /// The format whose signature `bytes` starts with, or `nil`.
    /// - PNG: `89 50 4E 47 0D 0A 1A 0A`; JPEG: `FF D8 FF`; GIF: `GIF87a` / `GIF89a`; WebP: `RIFF····WEBP`.
    public init?(sniffing bytes: some Collection<UInt8>) {
        let head = Array(bytes.prefix(12))
        func starts(_ signature: [UInt8], at offset: Int = 0) -> Bool {
            head.count >= offset + signature.count && Array(head[offset..<offset + signature.count]) == signature
        }
        if starts([0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]) {
            self = .png
        } else if starts([0xFF, 0xD8, 0xFF]) {
            self = .jpeg
        } else if starts(Array("GIF87a".utf8)) || starts(Array("GIF89a".utf8)) {
            self = .gif
        } else if starts(Array("RIFF".utf8)), starts(Array("WEBP".utf8), at: 8) {
            self = .webp
        } else {
            return nil
        }
    }

    /// Whether libvips' loader name (e.g. `VipsForeignLoadPngBuffer`) is this format's loader.
    func matches(loader: String) -> Bool {
        let name = loader.lowercased()
        switch self {
        case .png: return name.contains("png")
        case .jpeg: return name.contains("jpeg") || name.contains("jpg")
        case .gif: return name.contains("gif")
        case .webp: return name.contains("webp")
        }
    }
}
