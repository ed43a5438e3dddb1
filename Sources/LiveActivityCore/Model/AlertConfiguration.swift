/// The alert that an update can carry, as ActivityKit's `AlertConfiguration`.
///
/// Source: https://developer.apple.com/documentation/activitykit/alertconfiguration
public struct AlertConfiguration: Sendable, Hashable, Codable {
    /// Short title (what Apple Watch shows first).
    public var title: String
    /// Body text.
    public var body: String
    /// Sound name; `nil` = the default sound.
    public var sound: String?

    /// Creates an alert.
    public init(title: String, body: String, sound: String? = nil) {
        self.title = title
        self.body = body
        self.sound = sound
    }
}
