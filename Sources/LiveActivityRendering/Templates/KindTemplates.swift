import Foundation

/// The kinds' templates, parsed once per catalog load: one ``MustacheTemplate`` per kind and presentation.
///
/// A value with no I/O: the server builds it from the kind folders' text whenever it (re)loads them and hands
/// it to ``ActivityRenderer``. A kind with a template that does not parse keeps none of its templates (it is
/// drawn with the generated default layout, as a kind without templates is) and the failure is kept in
/// ``errors`` as `file:line:column: reason`, for the log.
public struct KindTemplates: Sendable {
    /// Parsed templates by kind wire name, then presentation.
    public private(set) var byKind: [String: [Presentation: MustacheTemplate]] = [:]
    /// The templates that failed to parse (their kinds fall back to the default layout).
    public private(set) var errors: [TemplateError] = []

    /// No templates: every kind gets the generated default layout.
    public static let none = KindTemplates()

    private init() {}

    /// Parses every kind's template text.
    /// - Parameter sources: by kind wire name, the kind folder's path (for messages: the template's name is
    ///   `path/lock-screen.html`) and its template text by presentation file name (`"lock-screen"` → text).
    public init(parsing sources: [String: (path: String, templates: [String: String])]) {
        for (kind, folder) in sources.sorted(by: { $0.key < $1.key }) {
            var parsed: [Presentation: MustacheTemplate] = [:]
            var failed = false
            for (file, text) in folder.templates.sorted(by: { $0.key < $1.key }) {
                guard let presentation = Presentation(rawValue: file) else { continue }
                do throws(TemplateError) {
                    parsed[presentation] = try MustacheTemplate(parsing: text, name: "\(folder.path)/\(file).html")
                } catch {
                    errors.append(error)
                    failed = true
                }
            }
            if !failed, !parsed.isEmpty { byKind[kind] = parsed }
        }
    }

    /// The template of `kind` for `presentation`, or `nil` (no such file, or the kind's templates failed).
    public func template(kind: String, presentation: Presentation) -> MustacheTemplate? {
        byKind[kind]?[presentation]
    }
}
