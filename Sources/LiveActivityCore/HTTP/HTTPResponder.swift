/// Answers one request, at once or later: a handler calls ``respond(_:)`` exactly once, during its call or
/// afterwards (when an answer waits for work on another thread, handed back through the service inbox).
///
/// Service thread only: `respond` must be called on the service thread, which is where the adapter writes.
/// Calls after the first are ignored, as is an answer to a connection that has closed meanwhile.
package final class HTTPResponder {
    /// Where the answer goes; nil once it went.
    private var deliver: ((HTTPResponse) -> Void)?

    /// A responder that hands the response to `deliver`, once.
    package init(_ deliver: @escaping (HTTPResponse) -> Void) {
        self.deliver = deliver
    }

    /// Whether ``respond(_:)`` has been called.
    package var hasResponded: Bool { deliver == nil }

    /// Sends `response`. Only the first call counts.
    package func respond(_ response: HTTPResponse) {
        guard let deliver else { return }
        self.deliver = nil
        deliver(response)
    }
}
