import Foundation

/// One way iOS shows a Live Activity, as the render route names it
/// (`GET /activities/{id}/render/{presentation}`).
///
/// Source: https://developer.apple.com/design/human-interface-guidelines/live-activities
public enum Presentation: String, Sendable, CaseIterable {
    /// The Lock Screen view (also the banner on iPhones without a Dynamic Island).
    case lockScreen = "lock-screen"
    /// The Dynamic Island with one activity: leading and trailing regions beside the camera.
    case compact
    /// The Dynamic Island with several activities: a small circle or pill.
    case minimal
    /// The Dynamic Island after a long press: leading, center, trailing and bottom regions.
    case expanded
    /// The small activity family (iOS 18): the Apple Watch Smart Stack and CarPlay
    /// (`ActivityFamily.small`, https://developer.apple.com/documentation/activitykit/activityfamily).
    case small

    /// A human name, e.g. "Lock Screen".
    public var title: String {
        switch self {
        case .lockScreen: "Lock Screen"
        case .compact: "Compact"
        case .minimal: "Minimal"
        case .expanded: "Expanded"
        case .small: "Small (Watch, CarPlay)"
        }
    }
}

/// The page around a rendering: light or dark, or whatever the viewer's system prefers.
public enum RenderTheme: String, Sendable, CaseIterable {
    case light, dark
}

/// How to render: appearance, scale and the instant to show.
public struct RenderOptions: Sendable, Hashable {
    /// Light or dark; `nil` follows `prefers-color-scheme`.
    public var theme: RenderTheme?
    /// Zoom factor for the presentation: 1, 2 or 3 (for OBS sources, kiosks, screenshots).
    public var scale: Int
    /// Whether to add the small script that keeps the rendering live when scripts run (off for a fixed `now`).
    public var live: Bool
    /// The script's CSP nonce (base64 characters only); required when ``live`` is true.
    public var nonce: String?
    /// The activity's rendering settings.
    public var settings: RenderingSettings
    /// For a live document: a WebSocket path (`/ws?share=…`) whose `activity` events refresh it at once
    /// (instead of waiting for the 5 s poll); a close with 1008 (the share ended) reloads it.
    public var socketPath: String?
    /// Draw no page background (for OBS browser sources and overlays).
    public var transparent: Bool = false

    /// Creates options; `scale` is clamped to 1…3.
    public init(theme: RenderTheme? = nil, scale: Int = 1, live: Bool = false, nonce: String? = nil,
                settings: RenderingSettings = RenderingSettings()) {
        self.theme = theme
        self.scale = min(3, max(1, scale))
        self.live = live
        self.nonce = nonce
        self.settings = settings
    }
}

/// The per-activity styling ActivityKit takes from SwiftUI modifiers, with the seed design's values as defaults.
///
/// Each colour becomes a CSS custom property of Public/css/presentations.css; `nil` keeps that file's default.
/// Colours are validated (`#rgb`, `#rrggbb`, `#rrggbbaa`) so nothing else can reach the stylesheet.
public struct RenderingSettings: Sendable, Hashable {
    /// `.activityBackgroundTint(_:)`: the Lock Screen background (default cyan). `--activity-background-tint`.
    public var activityBackgroundTint: String?
    /// `.activitySystemActionForegroundColor(_:)`: the system's dismiss button text (default black / gray).
    /// `--activity-system-action-foreground`.
    public var activitySystemActionForegroundColor: String?
    /// `DynamicIsland.keylineTint(_:)`: the island's border tint (default red). `--keyline-tint`.
    public var keylineTint: String?
    /// Accent of the island's text and icons (default indigo). `--island-accent`.
    public var islandAccent: String?
    /// `.widgetURL(_:)`: where a tap leads; `nil` = no link. Only `http`, `https` or a path are kept.
    public var widgetURL: String?

    /// Creates settings; invalid colours and URLs are dropped (the defaults apply).
    public init(activityBackgroundTint: String? = nil, activitySystemActionForegroundColor: String? = nil,
                keylineTint: String? = nil, islandAccent: String? = nil, widgetURL: String? = nil) {
        self.activityBackgroundTint = activityBackgroundTint.flatMap(Self.color)
        self.activitySystemActionForegroundColor = activitySystemActionForegroundColor.flatMap(Self.color)
        self.keylineTint = keylineTint.flatMap(Self.color)
        self.islandAccent = islandAccent.flatMap(Self.color)
        self.widgetURL = widgetURL.flatMap(Self.url)
    }

    /// The CSS declarations that override presentations.css's defaults ("" when none do).
    var customProperties: String {
        [("--activity-background-tint", activityBackgroundTint),
         ("--activity-system-action-foreground", activitySystemActionForegroundColor),
         ("--keyline-tint", keylineTint),
         ("--island-accent", islandAccent)]
            .compactMap { name, value in value.map { "\(name): \($0);" } }
            .joined(separator: " ")
    }

    /// A CSS hex colour, or nil.
    static func color(_ text: String) -> String? {
        let hex = text.hasPrefix("#") ? text.dropFirst() : Substring(text)
        guard [3, 4, 6, 8].contains(hex.count), hex.allSatisfy(\.isHexDigit) else { return nil }
        return "#" + hex.lowercased()
    }

    /// An http(s) URL or an absolute path, or nil.
    static func url(_ text: String) -> String? {
        let lower = text.lowercased()
        guard lower.hasPrefix("https://") || lower.hasPrefix("http://") || (text.hasPrefix("/") && !text.hasPrefix("//")) else { return nil }
        guard text.count <= 2048, !text.contains(where: { $0.isWhitespace || $0.isNewline }) else { return nil }
        return text
    }
}
