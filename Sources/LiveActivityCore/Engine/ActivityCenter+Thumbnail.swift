import Foundation

/// Remote images: which activities want a thumbnail, and publishing one once it is ready.
extension ActivityCenter {
    /// Publishes `thumbnail` on every activity (not yet dismissed) whose `attributes.image` is `imageURL` and
    /// that does not show it yet: one `updated` event each (no alert).
    /// - Parameters:
    ///   - thumbnail: the fitted image, cached under the SHA-256 of `imageURL`.
    ///   - imageURL: the `image` attribute it was fetched from, exactly as stored.
    /// - Returns: the events, in order; empty when no activity needs it (all dismissed, or already set).
    public mutating func setThumbnail(_ thumbnail: ActivityThumbnail, forImage imageURL: String) -> [ActivityEvent] {
        let waiting = ordered.filter { $0.imageURL == imageURL && $0.thumbnail != thumbnail }
        return waiting.map { original in
            var activity = original
            activity.thumbnail = thumbnail
            activities[activity.id] = activity
            return event(.updated, activity)
        }
    }

    /// The image URLs of activities (not yet dismissed) that still show the fallback icon.
    public var imagesWithoutThumbnail: Set<String> {
        Set(activities.values.filter { $0.thumbnail == nil }.compactMap(\.imageURL))
    }
}

extension Activity {
    /// The `image` attribute (an http/https URL, validated by the kind), when the activity's attributes carry one.
    public var imageURL: String? {
        guard case .object(let object) = attributes, case .string(let url)? = object["image"], !url.isEmpty else { return nil }
        return url
    }
}
