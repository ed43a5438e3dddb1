import Foundation
import LiveActivityCore

/// The read API as a feature: registers ``ReadAPI``'s routes (activities, history, health, metrics, and the
/// wording of misses nobody else words) with the context it was made with. Owns no state. Service thread only.
final class ReadRoutes: ServerFeature {
    /// What the read API sees of the server.
    private let context: ReadAPI.Context

    /// The read API with `context`.
    init(context: ReadAPI.Context) {
        self.context = context
    }

    /// Registers the read API's routes on the main port.
    func register(in tables: inout FeatureTables) {
        ReadAPI().register(on: &tables.routes, context: context)
    }
}
