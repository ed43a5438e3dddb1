import Foundation
import LiveActivityCore
import LiveActivityImages
import LiveActivityRendering

/// Renderings and kinds as a feature: owns the kind catalog and its parsed templates (swapped on reload,
/// ``replaceKinds(_:templates:)``), and registers `GET /kinds` (``KindsRoute``), the templates
/// (``TemplatesRoute``) and the renderings and gallery (``Renderings``, whose assets are read once, when the
/// routes are registered). Draws share pages for the share feature (``sharePage(_:token:request:)``).
/// Service thread only once the server runs.
final class RenderingsFeature: ServerFeature {
    /// What renderings see of the server. Closures are called on the service thread.
    struct Context {
        /// The folder holding the stylesheet and icons the renderings share with the page.
        var publicDirectory: URL
        /// What the renderings' routes see (the clock, access, activities, the store's reads, the inspector's
        /// `activity(asOf:)`).
        var routes: Renderings.Context
        /// The thumbnail cache the renderings draw published thumbnails from (nil: thumbnails off); asked once,
        /// by ``register(in:)``.
        var thumbnailCache: () -> ThumbnailCache?
        /// Where template errors go.
        var logger: Logger
    }

    /// The activity kinds and their folders (Kinds/, `--kinds`).
    private(set) var catalog: KindCatalog
    /// The catalog's templates, parsed when it was loaded (a kind whose template fails to parse is drawn with
    /// the generated layout).
    private(set) var templates: KindTemplates
    /// What it sees of the server.
    private let context: Context
    /// The renderings' routes, made (and their assets read) by ``register(in:)``.
    private var renderings: Renderings?

    /// Renderings of `catalog`'s kinds with their parsed `templates`.
    init(catalog: KindCatalog, templates: KindTemplates, context: Context) {
        self.catalog = catalog
        self.templates = templates
        self.context = context
    }

    /// Registers `GET /kinds`, the templates route and the renderings (reading their assets once, here).
    func register(in tables: inout FeatureTables) {
        KindsRoute(catalog: { [unowned self] in catalog }).register(on: &tables.routes)
        TemplatesRoute(catalog: { [unowned self] in catalog }, templates: { [unowned self] in templates }).register(on: &tables.routes)
        let cache = context.thumbnailCache()
        let renderings = Renderings(assets: Renderings.loadAssets(from: context.publicDirectory),
                                    kinds: { [unowned self] in catalog.registry },
                                    templates: { [unowned self] in templates },
                                    thumbnailPNG: { name in cache?.read(fileName: name) })
        renderings.register(on: &tables.routes, context: context.routes)
        self.renderings = renderings
    }

    /// The live page of a shared activity (`GET /s/{token}`), drawn with the current kinds.
    func sharePage(_ activity: Activity, token: String, request: HTTPRequest) -> HTTPResponse {
        guard let renderings else { return .document(.notFound, html: "") }
        return renderings.sharePage(activity, token: token, request: request, context: context.routes)
    }

    /// Swaps in newly loaded kinds and their templates (parsed here when not given): listings and
    /// renderings use them from the next request on.
    func replaceKinds(_ catalog: KindCatalog, templates: KindTemplates? = nil) {
        self.catalog = catalog
        self.templates = templates ?? Self.parseTemplates(catalog, logger: context.logger)
    }

    /// Parses the templates of `catalog`'s kind folders, once per load. A template that does not parse is
    /// logged at `error` as `template skipped` with `file:line:column: reason`; its kind is drawn with the
    /// generated layout, and the server and the other kinds carry on. A declared kind's presentation without a
    /// usable template gets its generated layout (``KindTemplates/withGenerated(for:)``). Any thread.
    static func parseTemplates(_ catalog: KindCatalog, logger: Logger) -> KindTemplates {
        var sources: [String: (path: String, templates: [String: String])] = [:]
        for (name, folder) in catalog.folders {
            sources[name] = (folder.path, folder.templates)
        }
        let templates = KindTemplates(parsing: sources)
        for error in templates.errors {
            logger.error("template skipped", ["error": error.description])
        }
        return templates.withGenerated(for: catalog.registry)
    }
}
