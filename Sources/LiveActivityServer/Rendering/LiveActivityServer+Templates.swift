import Foundation
import LiveActivityCore
import LiveActivityRendering

extension LiveActivityServer {
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
