import Foundation
import LiveActivityCore
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// The thumbnail folder: `{key}@{scale}x.png` files, at most ``ImageSettings/cacheBytes`` in all, the least
/// recently used key evicted first (all its scales together).
///
/// Use is recorded in memory and in the files' modification times (so the order survives a restart). Files are
/// written to a temporary name and renamed, so readers never see half a file. Thread-safe.
public final class ThumbnailCache: Sendable {
    /// The folder.
    public let directory: URL
    /// Most bytes kept.
    public let capacity: Int
    private let logger: Logger

    private struct Entry {
        var bytes: Int
        var lastUsed: Date
    }

    /// {lock} every complete key in the folder.
    private let entries = Locked<[String: Entry]>([:])

    /// Opens (creating it if needed) the folder and indexes what it holds; incomplete sets and leftover
    /// temporary files are removed.
    /// - Parameters:
    ///   - directory: the folder.
    ///   - capacity: most bytes kept.
    ///   - logger: where evictions are noted.
    /// - Throws: the file system's error when the folder cannot be created or read.
    public init(directory: URL, capacity: Int, logger: Logger) throws {
        self.directory = directory
        self.capacity = capacity
        self.logger = logger
        let fileManager = FileManager.default
        try fileManager.createDirectory(at: directory, withIntermediateDirectories: true)
        var found: [String: (scales: Set<Int>, bytes: Int, lastUsed: Date)] = [:]
        for name in try fileManager.contentsOfDirectory(atPath: directory.path) {
            let path = directory.appendingPathComponent(name).path
            guard let (key, scale) = Self.parse(fileName: name) else {
                if name.hasSuffix(".tmp") { try? fileManager.removeItem(atPath: path) }
                continue
            }
            let attributes = try? fileManager.attributesOfItem(atPath: path)
            let size = (attributes?[.size] as? NSNumber)?.intValue ?? 0
            let modified = attributes?[.modificationDate] as? Date ?? .distantPast
            var entry = found[key] ?? ([], 0, .distantPast)
            entry.scales.insert(scale)
            entry.bytes += size
            entry.lastUsed = max(entry.lastUsed, modified)
            found[key] = entry
        }
        var complete: [String: Entry] = [:]
        for (key, entry) in found {
            if entry.scales == Set(ActivityThumbnail.scales) {
                complete[key] = Entry(bytes: entry.bytes, lastUsed: entry.lastUsed)
            } else {
                for scale in entry.scales { try? fileManager.removeItem(at: url(key: key, scale: scale)) }
            }
        }
        entries.withLock { $0 = complete }
        evict(keeping: nil)
    }

    /// `(key, scale)` of a file name `{key}@{scale}x.png`, or `nil` for any other name.
    public static func parse(fileName: String) -> (key: String, scale: Int)? {
        guard fileName.hasSuffix("x.png"), let at = fileName.firstIndex(of: "@") else { return nil }
        let key = String(fileName[..<at])
        let scaleText = fileName[fileName.index(after: at)..<fileName.index(fileName.endIndex, offsetBy: -"x.png".count)]
        guard key.count == 64, key.utf8.allSatisfy({ (0x30...0x39).contains($0) || (0x61...0x66).contains($0) }),
              let scale = Int(scaleText), ActivityThumbnail.scales.contains(scale) else { return nil }
        return (key, scale)
    }

    /// Whether every scale of `key` is cached; marks it used.
    public func contains(_ key: String) -> Bool {
        touch(key)
    }

    /// The bytes of `{key}@{scale}x.png`, or `nil` when it is not cached (or the name is not one of ours);
    /// marks the key used.
    public func read(fileName: String) -> [UInt8]? {
        guard let (key, scale) = Self.parse(fileName: fileName), touch(key) else { return nil }
        return FileManager.default.contents(atPath: url(key: key, scale: scale).path).map(Array.init)
    }

    /// Writes every scale of `key`, then evicts the least recently used other keys while over capacity.
    /// - Throws: ``ImageError`` `storage` when a file cannot be written.
    public func store(_ key: String, pngs: [Int: [UInt8]]) throws(ImageError) {
        var total = 0
        for (scale, png) in pngs {
            let final = url(key: key, scale: scale)
            let temporary = directory.appendingPathComponent("\(key)@\(scale)x.\(UUID().uuidString).tmp")
            do {
                try Data(png).write(to: temporary)
                guard rename(temporary.path, final.path) == 0 else {
                    throw ImageError(.storage, "cannot rename to \(final.lastPathComponent): \(String(cString: strerror(errno)))")
                }
            } catch let error as ImageError {
                try? FileManager.default.removeItem(at: temporary)
                throw error
            } catch {
                try? FileManager.default.removeItem(at: temporary)
                throw ImageError(.storage, "cannot write \(final.lastPathComponent): \(error)")
            }
            total += png.count
        }
        entries.withLock { $0[key] = Entry(bytes: total, lastUsed: Date()) }
        evict(keeping: key)
    }

    /// Bytes held now.
    public var size: Int {
        entries.withLock { $0.values.reduce(0) { $0 + $1.bytes } }
    }

    private func url(key: String, scale: Int) -> URL {
        directory.appendingPathComponent(ActivityThumbnail.fileName(key: key, scale: scale))
    }

    /// Marks `key` used now (in memory, and on disk at most once a minute). `false` when it is not cached.
    private func touch(_ key: String) -> Bool {
        let now = Date()
        let stamp: Bool? = entries.withLock { entries in
            guard var entry = entries[key] else { return nil }
            let due = now.timeIntervalSince(entry.lastUsed) > 60
            entry.lastUsed = now
            entries[key] = entry
            return due
        }
        guard let stamp else { return false }
        if stamp {
            for scale in ActivityThumbnail.scales { _ = utimes(url(key: key, scale: scale).path, nil) }
        }
        return true
    }

    /// Removes least recently used keys (never `keeping`) until the folder is within capacity.
    private func evict(keeping: String?) {
        let victims: [String] = entries.withLock { entries in
            var total = entries.values.reduce(0) { $0 + $1.bytes }
            var chosen: [String] = []
            for (key, entry) in entries.sorted(by: { $0.value.lastUsed < $1.value.lastUsed }) where total > capacity {
                if key == keeping { continue }
                chosen.append(key)
                total -= entry.bytes
            }
            for key in chosen { entries[key] = nil }
            return chosen
        }
        for key in victims {
            for scale in ActivityThumbnail.scales { try? FileManager.default.removeItem(at: url(key: key, scale: scale)) }
            logger.debug("thumbnail evicted", ["image.key": key, "cache.capacity": "\(capacity)"])
        }
    }
}
