import Foundation
import LiveActivityCore

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
    /// The text of every usable template, by kind wire name and presentation (generated ones included).
    public private(set) var texts: [String: [Presentation: String]] = [:]

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
            if !failed, !parsed.isEmpty {
                byKind[kind] = parsed
                for presentation in parsed.keys { texts[kind, default: [:]][presentation] = folder.templates[presentation.rawValue] }
            }
        }
    }

    /// These templates plus, for each declared kind in `registry`, the generated layout (``GeneratedLayout``) of
    /// every presentation it has no usable template for.
    public func withGenerated(for registry: KindRegistry) -> KindTemplates {
        var result = self
        for kind in registry.all {
            guard let declared = kind as? DeclaredKind else { continue }
            let plan = LayoutPlan(declaration: declared.declaration, metadata: declared.metadata)
            for presentation in Presentation.allCases where result.byKind[kind.attributesType]?[presentation] == nil {
                let text = GeneratedLayout.template(plan, presentation)
                guard let parsed = try? MustacheTemplate(parsing: text, name: "\(kind.attributesType)/\(presentation.rawValue).html (generated)") else { continue }
                result.byKind[kind.attributesType, default: [:]][presentation] = parsed
                result.texts[kind.attributesType, default: [:]][presentation] = text
            }
        }
        return result
    }

    /// The generated layout of the declared kind `kind` in `registry` for `presentation`, parsed; `nil` for a
    /// kind that is not declared (or not there).
    static func generated(kind: String, presentation: Presentation, in registry: KindRegistry) -> MustacheTemplate? {
        guard let declared = registry.all.first(where: { $0.attributesType == kind }) as? DeclaredKind else { return nil }
        let text = GeneratedLayout.template(LayoutPlan(declaration: declared.declaration, metadata: declared.metadata), presentation)
        return try? MustacheTemplate(parsing: text, name: "\(kind)/\(presentation.rawValue).html (generated)")
    }

    /// The text of `kind`'s usable template for `presentation` (its own or generated), or `nil`.
    public func text(kind: String, presentation: Presentation) -> String? {
        texts[kind]?[presentation]
    }

    /// The template of `kind` for `presentation`, or `nil` (no such file, or the kind's templates failed).
    public func template(kind: String, presentation: Presentation) -> MustacheTemplate? {
        byKind[kind]?[presentation]
    }
}
