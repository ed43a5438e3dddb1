import CLibWebSockets
import Foundation

/// The C memory libwebsockets keeps pointers into while a client context lives: the protocols table and
/// the strings of the context and connection settings.
///
/// Allocated once, before `lws_create_context`; freed in `deinit`, which must run only after
/// `lws_context_destroy`.
final class ClientContextResources {
    /// Two entries: our protocol, then the zeroed terminator.
    let protocols: UnsafeMutablePointer<lws_protocols>
    private var strings: [UnsafeMutablePointer<CChar>] = []

    init() {
        protocols = .allocate(capacity: 2)
        var entry = lws_protocols()
        entry.name = UnsafePointer(strdup(ClientConfiguration.subprotocol)!)
        entry.callback = protocolClientCallback
        entry.per_session_data_size = 0
        entry.rx_buffer_size = 0
        protocols.initialize(to: entry)
        (protocols + 1).initialize(to: lws_protocols())
        strings.append(UnsafeMutablePointer(mutating: entry.name!))
    }

    /// Copies a string into C memory owned by this object.
    func keep(_ text: String) -> UnsafePointer<CChar> {
        let copy = strdup(text)!
        strings.append(copy)
        return UnsafePointer(copy)
    }

    deinit {
        protocols.deallocate()
        for string in strings { free(string) }
    }
}
