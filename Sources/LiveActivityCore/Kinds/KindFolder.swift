/// One kind folder's contents, read: its `kind.json`, its templates' text and its `Attributes.swift`.
///
/// A value with no I/O: the server's loader reads the files and builds it with ``make(name:path:files:)``.
public struct KindFolder: Sendable, Equatable {
    /// The template files a folder may hold, one per presentation, in listing order.
    /// (`small.html` is the small activity family: Apple Watch Smart Stack and CarPlay, iOS 18;
    /// https://developer.apple.com/documentation/activitykit/activityfamily)
    public static let templateFiles = ["lock-screen", "compact", "minimal", "expanded", "small"]

    /// The folder's path, for messages (`Kinds/workout`).
    public var path: String
    /// What `kind.json` says (defaults from the folder name when the file is absent).
    public var metadata: KindMetadata
    /// Template text by presentation (`"lock-screen"` → the text of `lock-screen.html`).
    public var templates: [String: String]
    /// The text of `Attributes.swift`, when present (read by the declaration reader).
    public var attributesSource: String?
    /// Whether the folder has a `kind.json` (without one, a declared kind's wire name is its struct's name).
    public var hasKindJSON: Bool

    /// Creates a folder value.
    public init(path: String, metadata: KindMetadata, templates: [String: String] = [:], attributesSource: String? = nil,
                hasKindJSON: Bool = true) {
        self.hasKindJSON = hasKindJSON
        self.path = path
        self.metadata = metadata
        self.templates = templates
        self.attributesSource = attributesSource
    }

    /// The presentations that have a template, in ``templateFiles`` order.
    public var presentations: [String] { Self.templateFiles.filter { templates[$0] != nil } }

    /// Reads a folder from its files' text.
    /// - Parameters:
    ///   - name: the folder's name (the wire name when `kind.json` gives none).
    ///   - path: the folder's path, for messages.
    ///   - files: file name → UTF-8 text, for the files present (`kind.json`, `Attributes.swift`, `*.html`).
    /// - Throws: ``KindFolderError`` naming the file (and line) that is wrong.
    public static func make(name: String, path: String, files: [String: String]) throws(KindFolderError) -> KindFolder {
        let metadata: KindMetadata
        if let json = files["kind.json"] {
            metadata = try KindMetadata.parse(json, file: "\(path)/kind.json", folderName: name)
        } else {
            metadata = KindMetadata(name: name)
        }
        var templates: [String: String] = [:]
        for presentation in templateFiles {
            if let text = files["\(presentation).html"] { templates[presentation] = text }
        }
        return KindFolder(path: path, metadata: metadata, templates: templates, attributesSource: files["Attributes.swift"],
                          hasKindJSON: files["kind.json"] != nil)
    }
}
