import CLibWebSockets
import Foundation

/// The C memory libwebsockets keeps pointers into for the whole life of a context, shared by the server,
/// the script client and the benchmark: copied strings, the protocols table and the extensions table.
///
/// lws does not copy what `lws_context_creation_info` and `lws_client_connect_info` point at (protocol
/// names, the tables, hosts, paths, certificate paths); it reads them for as long as the context lives.
/// Everything made here is owned by this object and freed in `deinit`, so **this object must outlive
/// `lws_context_destroy`** of every context built from it: keep it in a property of the context's owner,
/// or in a local of the function that destroys the context.
///
/// Not thread-safe: build the tables and keep the strings on one thread (in practice the service thread,
/// before `lws_create_context` and while dialing); lws then only reads them.
public final class LWSContextMemory {
    /// An lws protocol callback as a C function pointer (`lws_callback_function *`): the connection, the
    /// reason, the per-session data, the input and its length in bytes; returns 0 to go on, -1 to close.
    public typealias Callback = @convention(c) (OpaquePointer?, lws_callback_reasons, UnsafeMutableRawPointer?,
                                                UnsafeMutableRawPointer?, Int) -> Int32

    /// One row of a protocols table.
    public struct ProtocolEntry {
        /// The protocol's name; for WebSocket, the subprotocol (`Sec-WebSocket-Protocol`).
        public var name: String
        /// The lws callback for every connection bound to this protocol; it runs on the service thread.
        public var callback: Callback
        /// Bytes lws allocates, zeroed, per connection and hands to the callback as `user` (0: none).
        public var perSessionDataSize: Int

        /// - Parameters:
        ///   - name: the protocol's name (copied into C memory by ``LWSContextMemory/protocols(_:)``).
        ///   - callback: the lws callback for this protocol, run on the service thread.
        ///   - perSessionDataSize: bytes of per-connection user data, 0 for none.
        public init(name: String, callback: Callback, perSessionDataSize: Int = 0) {
            self.name = name
            self.callback = callback
            self.perSessionDataSize = perSessionDataSize
        }
    }

    /// Every `strdup`'d string, freed in `deinit`.
    private var strings: [UnsafeMutablePointer<CChar>] = []
    /// Every protocols table, each `count` rows long, freed in `deinit`.
    private var protocolTables: [(table: UnsafeMutablePointer<lws_protocols>, count: Int)] = []
    /// Every extensions table (two rows each), freed in `deinit`.
    private var extensionTables: [UnsafeMutablePointer<lws_extension>] = []

    /// An owner with nothing in it yet.
    public init() {}

    /// Copies `text` into C memory (NUL-terminated, `strdup`) owned by this object.
    /// - Returns: the copy (for lws's `const char *` fields), valid until this object is deinitialized.
    public func keep(_ text: String) -> UnsafePointer<CChar> {
        let copy = strdup(text)!
        strings.append(copy)
        return UnsafePointer(copy)
    }

    /// Builds a protocols table for `lws_context_creation_info.protocols`: one row per entry, in order,
    /// then the zeroed terminator lws stops at. The names are kept here too; `rx_buffer_size` is 0 (lws's
    /// default).
    /// - Returns: `entries.count + 1` rows, valid until this object is deinitialized.
    public func protocols(_ entries: [ProtocolEntry]) -> UnsafeMutablePointer<lws_protocols> {
        let table = UnsafeMutablePointer<lws_protocols>.allocate(capacity: entries.count + 1)
        table.initialize(repeating: lws_protocols(), count: entries.count + 1)
        protocolTables.append((table, entries.count + 1))
        for (index, entry) in entries.enumerated() {
            var row = lws_protocols()
            row.name = keep(entry.name)
            row.callback = entry.callback
            row.per_session_data_size = entry.perSessionDataSize
            row.rx_buffer_size = 0
            table[index] = row
        }
        return table
    }

    /// Builds the extensions table for `lws_context_creation_info.extensions`: permessage-deflate (lws's
    /// `lws_extension_callback_pm_deflate`, through ``StableDeflateInput``), then the zeroed terminator.
    /// - Parameter clientOffer: what a client context offers in its `Sec-WebSocket-Extensions` request
    ///   header, e.g. `permessage-deflate; client_max_window_bits` (only a client context sends it; a
    ///   server context answers a client's offer by the extension's name).
    /// - Returns: two rows, valid until this object is deinitialized.
    public func permessageDeflate(clientOffer: String) -> UnsafeMutablePointer<lws_extension> {
        let table = UnsafeMutablePointer<lws_extension>.allocate(capacity: 2)
        table.initialize(repeating: lws_extension(), count: 2)
        extensionTables.append(table)
        var deflate = lws_extension()
        deflate.name = keep("permessage-deflate")
        deflate.callback = { StableDeflateInput.handle($0, $1, $2, $3, $4, $5, $6) }
        deflate.client_offer = keep(clientOffer)
        table[0] = deflate
        return table
    }

    /// Frees every table and string. Must run only after `lws_context_destroy` (see the type's doc).
    deinit {
        for (table, count) in protocolTables {
            table.deinitialize(count: count)
            table.deallocate()
        }
        for table in extensionTables {
            table.deinitialize(count: 2)
            table.deallocate()
        }
        for string in strings { free(string) }
    }
}
