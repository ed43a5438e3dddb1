import CLibWebSockets
import Foundation

/// The C memory libwebsockets keeps pointers into while the benchmark's client context lives: the
/// protocols table, the permessage-deflate extension table and the connection strings.
///
/// Allocated once, before `lws_create_context`; freed in `deinit`, which must run only after
/// `lws_context_destroy`.
final class BenchContextResources {
    /// The subprotocol the clients ask for (docs/PROTOCOL.md).
    static let subprotocol = "liveactivity.v1"

    /// Two entries: the benchmark's protocol, then the zeroed terminator.
    let protocols: UnsafeMutablePointer<lws_protocols>
    /// Two entries: permessage-deflate, then the zeroed terminator.
    let extensions: UnsafeMutablePointer<lws_extension>
    private var strings: [UnsafeMutablePointer<CChar>] = []

    init() {
        protocols = .allocate(capacity: 2)
        extensions = .allocate(capacity: 2)
        var entry = lws_protocols()
        entry.callback = benchCallback
        entry.per_session_data_size = 0
        entry.rx_buffer_size = 0
        protocols.initialize(to: entry)
        (protocols + 1).initialize(to: lws_protocols())
        var deflate = lws_extension()
        deflate.callback = lws_extension_callback_pm_deflate
        extensions.initialize(to: deflate)
        (extensions + 1).initialize(to: lws_extension())
        protocols.pointee.name = keep(Self.subprotocol)
        extensions.pointee.name = keep("permessage-deflate")
        extensions.pointee.client_offer = keep("permessage-deflate; client_max_window_bits")
    }

    /// Copies a string into C memory owned by this object.
    func keep(_ text: String) -> UnsafePointer<CChar> {
        let copy = strdup(text)!
        strings.append(copy)
        return UnsafePointer(copy)
    }

    deinit {
        protocols.deallocate()
        extensions.deallocate()
        for string in strings { free(string) }
    }
}
