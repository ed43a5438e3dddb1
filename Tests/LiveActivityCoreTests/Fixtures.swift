import Foundation
@testable import LiveActivityCore
import KindFixtures

/// A fixed starting instant for every lifecycle test: 2026-11-29T17:00:00Z.
let t0 = Date(timeIntervalSince1970: 1_795_971_600)

/// Parses a JSON client message from a string literal, failing the test on a parse error.
func command(_ json: String) throws -> ClientMessage.Command {
    try ClientMessage.parse(Array(json.utf8), kinds: .builtIn).command.get()
}

/// Deterministic ids: a1, a2, …
struct IDs {
    var next = 0
    mutating func make() -> String {
        next += 1
        return "a\(next)"
    }
}

extension ActivityCenter {
    /// Applies a JSON command at `now` with ids from `ids`.
    mutating func apply(_ json: String, at now: Date, ids: inout IDs) throws -> Outcome {
        try apply(try command(json), now: now, newID: { ids.make() })
    }
}
