import CLibEv
import CLibWebSockets
import LiveActivityCore

/// Which system call waits for the server's sockets (`serve --event-loop`).
package enum LWSEventLoop: String, Sendable, CaseIterable {
    /// epoll, through libev and lws's libev event-library plugin (`LWS_SERVER_OPTION_LIBEV` with a loop the
    /// server makes and runs, `info.foreign_loops`): a wait costs the same whatever the number of clients. The
    /// default. Falls back to ``poll`` (with a warning) when libev or the plugin (`libwebsockets-evlib-ev`) is
    /// missing.
    case epoll
    /// lws 4.1's own loop: `poll(2)` over every socket in every round. Each wait hands the kernel all N
    /// descriptors and registers on all N wait queues: at 1,000 clients about 0.9 µs of a 12 µs delivery when
    /// updates come one at a time (BENCHMARKS.md, issue 30).
    case poll
}

/// The loop an lws context runs on, made with it and destroyed after it. Service thread only.
///
/// With ``LWSEventLoop/epoll`` the server owns a libev loop (epoll backend) and hands it to lws as a foreign
/// loop: lws puts a watcher per socket, its cancel pipe and its timer on it, and the service loop turns it
/// once (`ev_run(EVRUN_ONCE)`) where it would call `lws_service`, then does its own work between turns
/// (``LWSServerAdapter``'s `finishRound`), as before. With ``LWSEventLoop/poll`` a turn is `lws_service`.
final class ServiceEventLoop {
    /// The loop in use (``LWSEventLoop/poll`` when epoll was asked for but could not be had).
    let kind: LWSEventLoop
    /// The libev loop (`struct ev_loop *`), for ``LWSEventLoop/epoll`` only.
    private let libev: OpaquePointer?

    private init(kind: LWSEventLoop, libev: OpaquePointer?) {
        self.kind = kind
        self.libev = libev
    }

    /// Creates the lws context with `info` on the loop `wanted` names; when that is epoll and libev or lws's
    /// libev plugin cannot be had, warns through `logger` and creates it on lws's poll loop instead.
    /// - Returns: the context and its loop, or nil when lws could not create a context at all.
    static func makeContext(_ info: inout lws_context_creation_info, wanted: LWSEventLoop,
                            logger: Logger) -> (context: OpaquePointer, loop: ServiceEventLoop)? {
        if wanted == .epoll {
            if let libev = clibev_loop_new() {
                let options = info.options
                info.options |= UInt64(LWS_SERVER_OPTION_LIBEV)
                var foreignLoops: [UnsafeMutableRawPointer?] = [UnsafeMutableRawPointer(libev)]
                let context = foreignLoops.withUnsafeMutableBufferPointer { loops in
                    info.foreign_loops = loops.baseAddress
                    return lws_create_context(&info)
                }
                info.foreign_loops = nil
                info.options = options
                if let context { return (context, ServiceEventLoop(kind: .epoll, libev: libev)) }
                clibev_loop_destroy(libev)
            }
            logger.warning("epoll event loop unavailable (libev and libwebsockets-evlib-ev are needed); using poll()")
        }
        guard let context = lws_create_context(&info) else { return nil }
        return (context, ServiceEventLoop(kind: .poll, libev: nil))
    }

    /// One turn: waits for the next socket event, timer or `lws_cancel_service`, and runs lws's callbacks
    /// for what is ready.
    /// - Returns: `lws_service`'s result with poll (negative when the loop broke), 0 with epoll.
    func turn(_ context: OpaquePointer) -> Int32 {
        guard let libev else { return lws_service(context, 0) }
        clibev_run_once(libev)
        return 0
    }

    /// A turn that does not wait: runs lws's callbacks for whatever is ready now (``LWSEventLoop/epoll`` only).
    /// - Returns: false, having done nothing, on ``LWSEventLoop/poll`` (lws 4.1's `lws_service` always waits
    ///   for something).
    @discardableResult
    func turnWithoutWaiting() -> Bool {
        guard let libev else { return false }
        clibev_run_nowait(libev)
        return true
    }

    /// Frees the libev loop; call after `lws_context_destroy`, which stops lws's watchers on it.
    func destroy() {
        if let libev { clibev_loop_destroy(libev) }
    }
}
