import Foundation
import LiveActivityCore

/// How a feature proposes a change to the activities: through the change pipeline, judged at once on the
/// speculative state and answered once durable (see ``ChangePipeline``). Observers are told of the committed
/// events (``ChangeObserver``) after `completion` ran, so a feature never broadcasts or fetches thumbnails
/// itself.
///
/// The composition root makes one from its pipeline (a closure, type-erased, so that feature contexts stay
/// plain structs of closures); unit tests make one that judges against an ``ActivityCenter`` of their own.
/// Service thread only.
struct ChangeProposer {
    /// The erased form: `(now, body, completion)`. `body` returns its value (any type) and the events to record;
    /// `completion` gets that value back, or what `body` threw, or the store's error.
    typealias Erased = (Date, @escaping (inout ActivityCenter) throws -> (Any, [ActivityEvent]),
                        @escaping (Result<Any, any Error>) -> Void) -> Void

    private let erased: Erased

    /// A proposer that hands every change to `erased`.
    init(_ erased: @escaping Erased) {
        self.erased = erased
    }

    /// Proposes the change `body` computes from the speculative state.
    /// - Parameters:
    ///   - now: the server time the change is judged at (what its broadcast carries as `serverTime`).
    ///   - body: computes the change; may run again when another instance recorded events first.
    ///   - completion: called once, on the service thread, in the order changes were proposed: `.success` with
    ///     what `body` returned once its events are durable, `.failure` with what `body` threw or the store's
    ///     error (nothing recorded).
    func change<Value>(at now: Date, _ body: @escaping (inout ActivityCenter) throws -> (Value, [ActivityEvent]),
                       completion: @escaping (Result<Value, any Error>) -> Void) {
        erased(now, { center in
            let (value, events) = try body(&center)
            return (value as Any, events)
        }, { result in
            // The value is the one `body` returned: the cast cannot fail.
            completion(result.map { $0 as! Value })
        })
    }
}

/// Runs a job on the service thread soon, from any thread (the server's inbox: one wake-up per batch).
typealias ServiceThreadHop = @Sendable (@escaping @Sendable () -> Void) -> Void

/// Carries a value the compiler cannot prove `Sendable` from another thread back to the service thread,
/// where alone it is used (the inbox hands it over). Thread-safe only in that use.
struct ServiceThreadBox<Value>: @unchecked Sendable {
    /// The value; touched on the service thread only.
    let value: Value
}
