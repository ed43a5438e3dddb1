import Foundation

/// A broadcast channel (iOS 18): one push to it reaches every Live Activity subscribed to it. Made through
/// APNs's channel-management API (`POST /1/apps/{bundleId}/channels`), kept by the store, and lives on its
/// own, whether or not any activity is subscribed, until it is deleted.
///
/// Source: "Sending channel management requests to APNs"
/// (https://developer.apple.com/documentation/usernotifications/sending-channel-management-requests-to-apns).
/// Thread-safe (a value).
public struct BroadcastChannel: Sendable, Equatable, Codable {
    /// `message-storage-policy`: whether APNs keeps the newest push for a device it cannot reach at once.
    public enum StoragePolicy: Int, Sendable, Codable, CaseIterable {
        /// 0: nothing is stored; broadcasts must carry `apns-expiration: 0`.
        case noStorage = 0
        /// 1: the most recent push is stored.
        case mostRecent = 1
    }

    /// The channel ID APNs hands out (`apns-channel-id`): 16 random bytes in standard base64, 24 characters.
    public var id: String
    /// The app the channel belongs to (the `{bundleId}` of the management path).
    public var bundleId: String
    /// The message storage policy.
    public var storagePolicy: StoragePolicy
    /// When it was created (UTC).
    public var createdAt: Date

    /// Creates a channel record.
    public init(id: String, bundleId: String, storagePolicy: StoragePolicy, createdAt: Date) {
        self.id = id
        self.bundleId = bundleId
        self.storagePolicy = storagePolicy
        self.createdAt = createdAt
    }

    /// A new channel ID: 16 bytes from the system's secure random number generator, base64.
    public static func newID() -> String {
        var generator = SystemRandomNumberGenerator()
        return Data((0..<16).map { _ in UInt8.random(in: 0...255, using: &generator) }).base64EncodedString()
    }

    /// Whether `text` has the shape of a channel ID: standard base64 (with its padding) of 16 bytes.
    public static func isWellFormedID(_ text: String) -> Bool {
        text.utf8.count == 24 && Data(base64Encoded: text)?.count == 16
    }

    /// Whether `text` has the shape of a bundle ID (reverse DNS: letters, digits, `-` and `.`; 1…155 bytes).
    public static func isWellFormedBundleID(_ text: String) -> Bool {
        !text.isEmpty && text.utf8.count <= 155
            && text.utf8.allSatisfy { (0x30...0x39).contains($0) || (0x41...0x5a).contains($0) || (0x61...0x7a).contains($0) || $0 == 0x2d || $0 == 0x2e }
    }
}
