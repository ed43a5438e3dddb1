import Foundation

/// The broadcast channels the server knows, by ID, with the checks APNs's channel-management and broadcast
/// APIs make: the ID's shape (`BadChannelId`), whether it is registered for the app (`ChannelNotRegistered`),
/// the creation body (`message-storage-policy`, `push-type`), the limit of 10,000 channels per app
/// (`CannotCreateChannelConfig`).
///
/// Pure: the server keeps the channels in its store and this registry on its service thread. Thread-safe
/// (a value). Source: "Sending channel management requests to APNs"
/// (https://developer.apple.com/documentation/usernotifications/sending-channel-management-requests-to-apns).
public struct ChannelRegistry: Sendable {
    /// Most channels one app may have (Apple: 10,000 per environment).
    public static let maximumChannels = 10_000

    /// The channels, by ID.
    public private(set) var channels: [String: BroadcastChannel]

    /// A registry holding `channels` (as the store kept them).
    public init(_ channels: [BroadcastChannel] = []) {
        self.channels = Dictionary(channels.map { ($0.id, $0) }, uniquingKeysWith: { first, _ in first })
    }

    /// The channel `id` of `bundleId`, checked as APNs checks an `apns-channel-id`.
    /// - Parameters:
    ///   - id: the `apns-channel-id` header's value, nil when absent.
    ///   - bundleId: the app of the request path; nil to accept a channel of any app (a WebSocket `start`).
    /// - Throws: ``PushRejection`` 400 `MissingChannelId` (no header), 400 `BadChannelId` (not base64 of 16
    ///   bytes), 404 `ChannelNotRegistered` (no such channel for the app, or deleted).
    public func channel(_ id: String?, bundleId: String?) throws(PushRejection) -> BroadcastChannel {
        guard let id, !id.isEmpty else {
            throw PushRejection(status: 400, reason: "MissingChannelId", detail: "apns-channel-id: the header is required here", field: "apns-channel-id")
        }
        guard BroadcastChannel.isWellFormedID(id) else {
            throw PushRejection(status: 400, reason: "BadChannelId",
                                detail: "apns-channel-id: \"\(id.clipped(to: 64))\" is not a channel ID (base64 of 16 bytes, as POST /1/apps/{bundleId}/channels hands out)",
                                field: "apns-channel-id")
        }
        guard let channel = channels[id], bundleId == nil || channel.bundleId == bundleId else {
            throw PushRejection(status: 404, reason: "ChannelNotRegistered",
                                detail: "apns-channel-id: no channel \(id) is registered\(bundleId.map { " for \($0.clipped(to: 155))" } ?? "") (deleted, or never created)",
                                field: "apns-channel-id")
        }
        return channel
    }

    /// The IDs of `bundleId`'s channels, oldest first.
    public func ids(bundleId: String) -> [String] {
        channels.values.filter { $0.bundleId == bundleId }.sorted { ($0.createdAt, $0.id) < ($1.createdAt, $1.id) }.map(\.id)
    }

    /// Checks that `bundleId` may have one more channel.
    /// - Throws: ``PushRejection`` 400 `CannotCreateChannelConfig` at ``maximumChannels``.
    public func checkRoom(bundleId: String) throws(PushRejection) {
        let count = channels.values.count { $0.bundleId == bundleId }
        if count >= Self.maximumChannels {
            throw PushRejection(status: 400, reason: "CannotCreateChannelConfig",
                                detail: "\(bundleId.clipped(to: 155)) has \(count) channels, the most APNs allows; delete some first")
        }
    }

    /// Adds (or replaces) a channel.
    public mutating func add(_ channel: BroadcastChannel) { channels[channel.id] = channel }

    /// Forgets a channel.
    public mutating func remove(id: String) { channels[id] = nil }

    /// Reads a channel-creation body, `{"message-storage-policy": 0 | 1, "push-type": "LiveActivity"}`.
    /// - Throws: ``PushRejection`` 400: `BadPayload` (not a JSON object), `MissingPushType` /
    ///   `InvalidPushType` (`push-type` absent or other than `LiveActivity`), `BadMessageStoragePolicy`
    ///   (`message-storage-policy` absent or not 0 or 1); each naming the key.
    public static func storagePolicy(fromCreationBody body: [UInt8]) throws(PushRejection) -> BroadcastChannel.StoragePolicy {
        guard !body.isEmpty else {
            throw PushRejection(status: 400, reason: "PayloadEmpty", detail: "the request has no body: send {\"message-storage-policy\":0|1,\"push-type\":\"LiveActivity\"}")
        }
        guard case .object(let object)? = try? JSONValue.parse(body) else {
            throw PushRejection(status: 400, reason: "BadPayload", detail: "the body is not a JSON object: send {\"message-storage-policy\":0|1,\"push-type\":\"LiveActivity\"}")
        }
        guard let pushType = object["push-type"] else {
            throw PushRejection(status: 400, reason: "MissingPushType", detail: "push-type: missing; channels carry \"LiveActivity\" pushes", field: "push-type")
        }
        guard case .string("LiveActivity") = pushType else {
            throw PushRejection(status: 400, reason: "InvalidPushType", detail: "push-type: channels carry \"LiveActivity\" pushes only", field: "push-type")
        }
        guard case .number(let number)? = object["message-storage-policy"], let policy = BroadcastChannel.StoragePolicy(rawValue: Int(exactly: number) ?? -1) else {
            throw PushRejection(status: 400, reason: "BadMessageStoragePolicy",
                                detail: "message-storage-policy: expected 0 (no storage) or 1 (most recent message stored)", field: "message-storage-policy")
        }
        return policy
    }
}
