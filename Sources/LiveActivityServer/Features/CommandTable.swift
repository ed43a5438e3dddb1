import Foundation
import LiveActivityCore

/// One client message on its way to the feature that handles it: the parsed message, its command and the
/// session it came from. The sender's role and scope are checked before a handler runs (a share viewer sends
/// nothing, a controller command needs the controller role).
struct CommandCall {
    /// The message as parsed (its `requestId` and raw JSON for the inspector).
    let message: ClientMessage
    /// Its command (``ClientMessage/command`` when it parsed).
    let command: ClientMessage.Command
    /// The connection it came from (still open when the handler runs).
    let session: Session
}

/// WebSocket client messages by their `type` (``ClientMessage/Command/name``), each with the feature handler
/// that answers it: a new client message is its parse case in ``ClientMessage``, one `register` call in the
/// feature that owns it, and the contract files (docs/PROTOCOL.md, Public/protocol.json).
///
/// Built once before the server reads its first message; read-only afterwards. Handlers run on the
/// service thread and answer through the sessions (`send`), now or once their change is committed.
struct CommandTable {
    /// Answers one command; the sender's role has been checked.
    typealias Handler = (CommandCall) -> Void

    /// Whether a command proposes a change (it is judged at once on the speculative state and answered once
    /// durable), or is answered without the store (a read), which waits for the changes its client sent
    /// before it so that every client gets its replies in order.
    enum Path: Sendable {
        /// A change, a push or a new share: goes through the change pipeline.
        case change
        /// A read or a reply needing no store: waits for its turn behind the client's earlier changes.
        case reply
    }

    /// A registered command.
    struct Entry {
        /// Its path (see ``Path``).
        let path: Path
        /// What answers it.
        let handler: Handler
        /// Whether the handler tells the ``RequestObserver``s itself once the command is answered (a change,
        /// with its outcome); otherwise the sessions tell them (answer nil) as soon as the handler returns.
        var reportsItself = false
    }

    private var entries: [String: Entry] = [:]

    /// Registers the handler of the command named `name` (its wire `type`, as ``ClientMessage/Command/name``
    /// spells it). Each name is registered once: a second registration is a programming error (trap).
    /// - Parameter reportsItself: the handler tells the request observers itself (see ``Entry/reportsItself``).
    mutating func register(_ name: String, _ path: Path, reportsItself: Bool = false, _ handler: @escaping Handler) {
        precondition(entries[name] == nil, "command \(name) registered twice")
        entries[name] = Entry(path: path, handler: handler, reportsItself: reportsItself)
    }

    /// The entry for `command`, if a feature registered one.
    func entry(for command: ClientMessage.Command) -> Entry? { entries[command.name] }

    /// The names registered, sorted (for tests and the unknown-type error).
    var names: [String] { entries.keys.sorted() }
}
