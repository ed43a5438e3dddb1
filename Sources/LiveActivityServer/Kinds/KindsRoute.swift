import Foundation
import LiveActivityCore

/// `GET /kinds`: the activity kinds the server accepts, for the dashboard, the CLI and the gallery.
///
/// Answers `{"kinds": [{"name", "label", "swiftNames", "countdown", "durationShortcut", "title", "image",
/// "fallbackIcon", "enums", "presentations"}]}` (docs/TEMPLATES.md). No token needed: it shows no
/// activity. Handlers run on the service thread.
struct KindsRoute {
    /// The current catalog (swapped on reload).
    var catalog: () -> KindCatalog

    /// Registers `GET /kinds`.
    func register(on router: inout Router) {
        router.add([.get], "/kinds") { _ in
            let body = (try? MessageEncoder.encoder.encode(catalog().json)) ?? Data(#"{"kinds":[]}"#.utf8)
            return .json(.ok, Array(body))
        }
    }
}
