import CLibWebSockets
import Foundation
import LWSSupport

/// The C memory libwebsockets keeps pointers into for the whole life of a context: the protocols table,
/// the extensions table, the static-file mount, its extra MIME types and their strings.
///
/// Allocated once, before `lws_create_context`; freed in `deinit`, which must run only after
/// `lws_context_destroy`. The strings and the protocols and extensions tables live in the shared
/// `LWSContextMemory` (LWSSupport); the mounts, MIME types, idle policy and header limits here.
final class LWSContextResources {
    /// The WebSocket subprotocol name; clients that ask for none are bound to it too (it is protocols[0]).
    static let subprotocol = "liveactivity.v1"

    /// lws's receive buffer per WebSocket connection (`rx_buffer_size`), in bytes, for a client that is not a
    /// controller (``LWSServerAdapter/webSocketFilter(_:sessionData:)`` sets the row per handshake): lws 4.1
    /// allocates it at ESTABLISHED for the connection's life, hands a message over in pieces of at most this
    /// size (the session joins them, ``Session/incoming``) and reads at most this much from the socket per
    /// service round. 0 meant `pt_serv_buf_size`, 4 KiB: two thirds of what a connection cost (issue 30).
    /// 512 holds any control frame (at most 125 bytes) and a viewer's requests.
    static let receiveBufferBytes = 512
    /// The same for a controller: it publishes, and each service round reads at most this much of its
    /// updates into the round's one broadcast batch (at 512 the fast case fell to a third of its rate). At
    /// 4 KiB a round took about 13 updates of 300 bytes and each client's write carried 11 frames; at 16 KiB
    /// (with ``serviceBufferBytes``) a publisher's 32 updates in flight fit one round, a write carries 21
    /// and the server's CPU per delivery fell by a sixth (0.84×; BENCHMARKS.md, issue 30).
    static let controllerReceiveBufferBytes = 16384
    /// lws's one buffer per service thread (`pt_serv_buf_size`; 4 KiB when 0): every WebSocket read goes
    /// through it, so it caps a round's read from any client below the client's `rx_buffer_size`. As large
    /// as the controller's receive buffer; one per thread, not per connection.
    static let serviceBufferBytes = controllerReceiveBufferBytes

    /// Most bytes lws 4.1 hands to one `send()` (`tx_packet_size`; 0 meant `rx_buffer_size`, else
    /// `pt_serv_buf_size`): `lws_issue_raw` cuts every write at this size plus LWS_PRE + 4 and copies the
    /// rest into the connection's `buflist_out`, sent on later WRITEABLEs. The broadcast's batches are up to
    /// ``WriteBatch/limit`` (32 KiB) and at most twice that with a large frame, so one write is one `send()`;
    /// it was cut at 4 KiB before (issue 30), and at 512 bytes once ``receiveBufferBytes`` set the size.
    static let sendChunkBytes = 2 * WriteBatch.limit

    /// MIME types lws 4.1 does not know (it answers 415 for them otherwise), and the text types with their
    /// charset (lws's own table says `text/html`, leaving a browser to guess from the page; lws reads this list
    /// before its own).
    static let extraMimeTypes: [(String, String)] = [
        (".html", "text/html; charset=utf-8"), (".css", "text/css; charset=utf-8"),
        (".js", "text/javascript; charset=utf-8"), (".svg", "image/svg+xml; charset=utf-8"),
        (".mjs", "text/javascript; charset=utf-8"), (".map", "application/json"), (".webp", "image/webp"),
        (".webmanifest", "application/manifest+json"), (".wasm", "application/wasm"),
    ]

    /// Owns the kept strings and the protocols and extensions tables; freed after this object's `deinit`.
    private let memory = LWSContextMemory()
    let protocols: UnsafeMutablePointer<lws_protocols>
    /// permessage-deflate, for `info.extensions`; nil with `--deflate off` (lws then offers no extension).
    /// lws negotiates it and inflates what clients send; the server's own frames bypass lws's compressor
    /// (see ``LWSServerAdapter/webSocketWritable(_:sessionData:)``).
    let extensions: UnsafeMutablePointer<lws_extension>?
    /// The mounts, chained: the dynamic ones (our callback) first, then `/` (static files).
    let mount: UnsafeMutablePointer<lws_http_mount>
    private let mimeTypes: UnsafeMutablePointer<lws_protocol_vhost_options>
    /// Idle policy: lws pings a silent connection, then hangs up if nothing comes back.
    let idlePolicy: UnsafeMutablePointer<lws_retry_bo_t>
    /// Per-header limits for lws (`info.token_limits`): every header token, the request target included, is
    /// cut at ``HTTPAdapter/maximumFieldBytes`` + 1 bytes and the rest of its line skipped, instead of filling
    /// lws's header buffer (lws 4.1 then closes the connection without a word); ``HTTPAdapter`` answers such a
    /// request 414 or 431.
    let tokenLimits: UnsafeMutablePointer<lws_token_limits>

    /// - Parameters:
    ///   - publicDirectory: absolute path of the folder served at `/`.
    ///   - dynamicMountpoints: paths answered by our callback rather than by files (`/api`, `/3`, …): the
    ///     route table's first segments (``Router/mountpoints``), so the two cannot drift apart.
    ///   - pingAfter: seconds of silence before lws sends a WebSocket ping.
    ///   - hangUpAfter: seconds of silence after which lws drops the connection.
    ///   - permessageDeflate: whether clients may negotiate permessage-deflate.
    init(publicDirectory: String, dynamicMountpoints: [String], pingAfter: Int, hangUpAfter: Int, permessageDeflate: Bool) {
        idlePolicy = .allocate(capacity: 1)
        var policy = lws_retry_bo_t()
        policy.secs_since_valid_ping = UInt16(clamping: pingAfter)
        policy.secs_since_valid_hangup = UInt16(clamping: hangUpAfter)
        idlePolicy.initialize(to: policy)
        var limits = lws_token_limits()
        withUnsafeMutableBytes(of: &limits.token_limit) { raw in
            for offset in stride(from: 0, to: raw.count, by: MemoryLayout<UInt16>.stride) {
                raw.storeBytes(of: UInt16(HTTPAdapter.maximumFieldBytes + 1), toByteOffset: offset, as: UInt16.self)
            }
        }
        tokenLimits = .allocate(capacity: 1)
        tokenLimits.initialize(to: limits)
        protocols = memory.protocols([
            // The WebSocket session, then the HTTP exchange (see HTTPAdapter).
            .init(name: Self.subprotocol, callback: liveActivityCallback, perSessionDataSize: HTTPAdapter.sessionDataSize),
        ])
        protocols.pointee.rx_buffer_size = Self.controllerReceiveBufferBytes
        protocols.pointee.tx_packet_size = Self.sendChunkBytes
        extensions = permessageDeflate
            ? memory.permessageDeflate(clientOffer: "permessage-deflate; client_no_context_takeover; client_max_window_bits")
            : nil
        let mountpoints = dynamicMountpoints
        mount = .allocate(capacity: mountpoints.count + 1)
        mimeTypes = .allocate(capacity: Self.extraMimeTypes.count)

        for (index, (suffix, type)) in Self.extraMimeTypes.enumerated() {
            var option = lws_protocol_vhost_options()
            option.next = index + 1 < Self.extraMimeTypes.count ? UnsafePointer(mimeTypes + index + 1) : nil
            option.name = UnsafePointer(keep(suffix))
            option.value = UnsafePointer(keep(type))
            (mimeTypes + index).initialize(to: option)
        }

        var files = lws_http_mount()
        files.mountpoint = UnsafePointer(keep("/"))
        files.mountpoint_len = 1
        files.origin = UnsafePointer(keep(publicDirectory))
        files.def = UnsafePointer(keep("index.html"))
        files.origin_protocol = UInt8(LWSMPRO_FILE.rawValue)
        files.extra_mimetypes = UnsafePointer(mimeTypes)
        (mount + mountpoints.count).initialize(to: files)

        for (index, path) in mountpoints.enumerated() {
            var dynamic = lws_http_mount()
            dynamic.mount_next = UnsafePointer(mount + index + 1)
            dynamic.mountpoint = UnsafePointer(keep(path))
            dynamic.mountpoint_len = UInt8(path.utf8.count)
            dynamic.origin = UnsafePointer(keep(Self.subprotocol))
            dynamic.origin_protocol = UInt8(LWSMPRO_CALLBACK.rawValue)
            (mount + index).initialize(to: dynamic)
        }
    }

    /// Copies a string into C memory owned by this object.
    func keep(_ text: String) -> UnsafeMutablePointer<CChar> {
        UnsafeMutablePointer(mutating: memory.keep(text))
    }

    /// Frees the mounts, the MIME types and the idle policy; `memory` then frees the strings and tables.
    deinit {
        mount.deallocate()
        idlePolicy.deallocate()
        tokenLimits.deallocate()
        mimeTypes.deallocate()
    }
}
