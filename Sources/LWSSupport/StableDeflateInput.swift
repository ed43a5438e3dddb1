import CLibWebSockets
import Foundation

/// permessage-deflate (RFC 7692) for lws 4.1, with the compressed input it has not inflated yet kept in memory
/// of the connection's own: the extension callback of every extensions table ``LWSContextMemory`` builds.
///
/// lws 4.1's `lws_extension_callback_pm_deflate` inflates at most `1 << rx_buf_size` bytes (1 KiB, or less with a
/// smaller `rx_buffer_size`) per call and keeps the rest of its input for later (`PMDR_HAS_PENDING`) by pointing
/// zlib's `next_in` at the caller's buffer. On a server the caller hands it the payload where the read left it:
/// lws's one read buffer per service thread (`pt_serv_buf_size`; `lws_ws_frame_rest_is_payload`). The rest is
/// inflated on a later service round, after other connections' reads have written over that buffer: zlib then
/// reads their bytes ("zlib error inflate -3", the connection dropped without a close frame). Any client whose
/// compressed message inflates to more than 1 KiB while another client sends 1 KiB or more, in the same round,
/// lost its connection that way.
///
/// This callback copies each new compressed input into a buffer of the connection's (kept with lws's own private
/// state, as the extension's per-connection `user`) before lws's callback sees it, so what it keeps for later
/// stays whole; everything else goes to lws's callback unchanged. Service thread only.
public enum StableDeflateInput {
    /// What the callback keeps per connection in the extension's `user` slot: lws's own state, and the copy.
    struct Connection {
        /// What `lws_extension_callback_pm_deflate` allocated at construction (its private state).
        var lwsState: UnsafeMutableRawPointer?
        /// The last compressed input handed over, copied; nil until the first.
        var copy: UnsafeMutableRawPointer?
        /// Bytes allocated at `copy`.
        var capacity: Int
        /// Whether lws's inflater still reads from `copy` (its last answer was `PMDR_HAS_PENDING`).
        var pending: Bool

        /// Whether `pointer` lies in the copy (lws hands the rest of a copied input back on its next call).
        func holds(_ pointer: UnsafeMutableRawPointer) -> Bool {
            guard let copy else { return false }
            return pointer >= copy && pointer < copy + capacity
        }
    }

    /// lws 4.1's `struct lws_ext_pm_deflate_rx_ebufs` (private-lib-roles-ws.h): what `LWS_EXT_CB_PAYLOAD_RX` gets
    /// as `in`, the compressed input (`eb_in`) and the inflated output (`eb_out`).
    struct ReceiveBuffers {
        var input: lws_tokens
        var output: lws_tokens
    }

    /// lws 4.1's `enum pmd_return` values this callback reads (private-lib-core-net.h).
    enum Answer {
        static let didNothing: Int32 = 1
        static let hasPending: Int32 = 2
        static let nothingWeShouldDo: Int32 = 5
    }

    /// Copies of inputs larger than this are freed once lws no longer reads them, so a connection keeps at most
    /// this much between messages.
    static let keptCopyBytes = 4096

    /// The extension callback (`lws_extension_callback_function`): the context, the extension's row, the
    /// connection, the reason, the connection's extension state (its slot, at construction), the reason's
    /// argument and a length. Returns what lws's callback returns.
    public static func handle(_ context: OpaquePointer?, _ ext: UnsafePointer<lws_extension>?, _ wsi: OpaquePointer?,
                       _ reason: lws_extension_callback_reasons, _ user: UnsafeMutableRawPointer?,
                       _ input: UnsafeMutableRawPointer?, _ length: Int) -> Int32 {
        switch reason {
        case LWS_EXT_CB_CONSTRUCT, LWS_EXT_CB_CLIENT_CONSTRUCT:
            // `user` is the connection's slot; lws's callback writes its private state there.
            guard let slot = user?.assumingMemoryBound(to: UnsafeMutableRawPointer?.self) else {
                return lws_extension_callback_pm_deflate(context, ext, wsi, reason, user, input, length)
            }
            var lwsState: UnsafeMutableRawPointer?
            let result = lws_extension_callback_pm_deflate(context, ext, wsi, reason, &lwsState, input, length)
            guard result == 0 else { return result }
            let connection = UnsafeMutablePointer<Connection>.allocate(capacity: 1)
            connection.initialize(to: Connection(lwsState: lwsState, copy: nil, capacity: 0, pending: false))
            slot.pointee = UnsafeMutableRawPointer(connection)
            return result
        default:
            break
        }
        // Calls for every extension at once (`lws_ext_cb_all_exts`) have no connection state.
        guard let connection = user?.assumingMemoryBound(to: Connection.self) else {
            return lws_extension_callback_pm_deflate(context, ext, wsi, reason, user, input, length)
        }
        switch reason {
        case LWS_EXT_CB_DESTROY:
            let result = lws_extension_callback_pm_deflate(context, ext, wsi, reason, connection.pointee.lwsState, input, length)
            free(connection.pointee.copy)
            connection.deinitialize(count: 1)
            connection.deallocate()
            return result
        case LWS_EXT_CB_PAYLOAD_RX:
            return receive(context, ext, wsi, reason, connection, input, length)
        default:
            return lws_extension_callback_pm_deflate(context, ext, wsi, reason, connection.pointee.lwsState, input, length)
        }
    }

    /// `LWS_EXT_CB_PAYLOAD_RX`: hands lws's callback a copy of new input, then notes whether it still reads it.
    static func receive(_ context: OpaquePointer?, _ ext: UnsafePointer<lws_extension>?, _ wsi: OpaquePointer?,
                        _ reason: lws_extension_callback_reasons, _ connection: UnsafeMutablePointer<Connection>,
                        _ input: UnsafeMutableRawPointer?, _ length: Int) -> Int32 {
        let buffers = input?.assumingMemoryBound(to: ReceiveBuffers.self)
        var original: UnsafeMutablePointer<UInt8>?
        // New input, while lws's inflater holds none of ours (it takes new input only then): copied.
        if let buffers, !connection.pointee.pending, let token = buffers.pointee.input.token, buffers.pointee.input.len > 0,
           !connection.pointee.holds(UnsafeMutableRawPointer(token)) {
            let count = Int(buffers.pointee.input.len)
            if connection.pointee.capacity < count {
                guard let grown = realloc(connection.pointee.copy, count) else {
                    return lws_extension_callback_pm_deflate(context, ext, wsi, reason, connection.pointee.lwsState, input, length)
                }
                connection.pointee.copy = grown
                connection.pointee.capacity = count
            }
            connection.pointee.copy!.copyMemory(from: token, byteCount: count)
            original = token
            buffers.pointee.input.token = connection.pointee.copy!.assumingMemoryBound(to: UInt8.self)
        }
        let result = lws_extension_callback_pm_deflate(context, ext, wsi, reason, connection.pointee.lwsState, input, length)
        if let original, let buffers, result < 0 || result == Answer.didNothing || result == Answer.nothingWeShouldDo {
            // Not taken (an uncompressed frame, a control frame, a failure): lws gets its own pointer back.
            buffers.pointee.input.token = original
        }
        connection.pointee.pending = result == Answer.hasPending
        if !connection.pointee.pending, connection.pointee.capacity > keptCopyBytes {
            free(connection.pointee.copy)
            connection.pointee.copy = nil
            connection.pointee.capacity = 0
        }
        return result
    }
}
