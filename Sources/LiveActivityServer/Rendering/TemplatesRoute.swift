import Foundation
import LiveActivityCore
import LiveActivityRendering

/// `GET /kinds/{name}/templates/{presentation}`: a kind's Mustache template for one presentation, as text, for
/// the dashboard, which renders it with `Public/js/mustache.js` over `Public/js/render-context.js`'s context
/// (the same template and context the static renderings use).
///
/// Answers 200 `text/plain` with the template's text only when the server could parse it (a declared kind's
/// presentation without a usable template answers its generated layout, ``GeneratedLayout``); 404 (a JSON
/// `unknown_activity`-shaped error naming the path) when the kind has no such template or its templates failed to
/// parse, so that the page falls back to the generated default layout exactly when the renderings do. No token
/// needed: a template shows no activity. Handlers run on the service thread.
struct TemplatesRoute {
    /// The current catalog (swapped on reload). Unused since the parsed templates carry their text; kept so
    /// the server's route table (LiveActivityServer+Routes.swift) needs no change.
    var catalog: () -> KindCatalog
    /// The current catalog's parsed templates: which are usable, and their text (the generated layout's included).
    var templates: () -> KindTemplates

    /// Registers `GET /kinds/{name}/templates/{presentation}`.
    func register(on router: inout Router) {
        router.add([.get], "/kinds/{name}/templates/{presentation}") { request in
            let name = request.parameters["name"] ?? ""
            let file = request.parameters["presentation"] ?? ""
            guard let presentation = Presentation(rawValue: file), let text = templates().text(kind: name, presentation: presentation) else {
                return .error(.notFound, ProtocolError(.invalidField, field: "presentation",
                                                       message: "no usable template \(name.clipped(to: 64))/\(file.clipped(to: 32)).html"))
            }
            return HTTPResponse(status: .ok, contentType: "text/plain; charset=utf-8", body: Array(text.utf8))
        }
    }
}
