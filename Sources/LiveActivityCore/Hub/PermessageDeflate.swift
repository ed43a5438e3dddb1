/// What one connection's permessage-deflate (RFC 7692) allows the server to send, read from the client's
/// offer once libwebsockets has negotiated the extension. Pure value with no references (read on every
/// write); any thread. The offer is read by the server (`PermessageDeflate+Offer.swift`, beside the
/// compressor).
///
/// libwebsockets 4.1 answers a permessage-deflate offer with the extension's name and the arg-less
/// parameters it was offered (`client_no_context_takeover`, `server_no_context_takeover`); it neither
/// applies nor answers `server_max_window_bits=N` (its handshake only handles parameters without a value).
/// So the server reads the offer itself and never uses a larger window than any permessage-deflate offer in
/// the header allows: the smallest `server_max_window_bits` of them all (RFC 7692 §7.1.2.1), 15 when none
/// says; and the handshake adds that parameter to lws's answer (``answeredWindowBits``), since a server
/// that accepts an offer with it must answer it (§7.1.2.1; strict clients refuse the connection otherwise).
package struct PermessageDeflate: Equatable, Sendable {
    /// The window, in bits, to compress this client's messages with (9...15, see
    /// ``Deflate/windowBits(allowing:)``); nil when an offer's `server_max_window_bits` is malformed
    /// (RFC 7692 §7.1.2.1 allows only 8 to 15): then every message goes as stored blocks, which need no
    /// window.
    @inlinable package var windowBits: Int? { storedWindowBits == 0 ? nil : Int(storedWindowBits) }
    /// ``windowBits`` in one byte (0: nil), so that the whole negotiation fits the session's first cache line.
    @usableFromInline let storedWindowBits: UInt8
    /// Whether every permessage-deflate offer says `client_no_context_takeover` (RFC 7692 §7.1.1.2), which
    /// lws echoes: the client then compresses each message from a fresh state, and the server's inflater
    /// need not keep a window between them.
    package let clientNoContextTakeover: Bool

    /// The `server_max_window_bits` the handshake's answer must carry: the smallest any permessage-deflate
    /// offer asked for (8...15), or nil when none asked (or one asked it malformed: then no value is
    /// answerable, and every message goes stored).
    package var answeredWindowBits: Int? { storedAnswer == 0 ? nil : Int(storedAnswer) }
    /// ``answeredWindowBits`` in one byte (0: nil), for the same reason.
    private let storedAnswer: UInt8

    /// A negotiation as given.
    /// - Parameters:
    ///   - windowBits: the window to compress with, 9...15; nil: never compress.
    ///   - clientNoContextTakeover: the client resets its compressor after each message.
    ///   - answeredWindowBits: the `server_max_window_bits` the client asked for, if it did.
    package init(windowBits: Int?, clientNoContextTakeover: Bool = false, answeredWindowBits: Int? = nil) {
        storedWindowBits = windowBits.map { UInt8(clamping: $0) } ?? 0
        self.clientNoContextTakeover = clientNoContextTakeover
        storedAnswer = answeredWindowBits.map { UInt8(clamping: $0) } ?? 0
    }

    /// For the debug log: `window 15` (bits compressed with) or `stored only`, and `client resets` when the
    /// client compresses each message from a fresh state.
    package var summary: String {
        (windowBits.map { "window \($0)" } ?? "stored only") + (clientNoContextTakeover ? ", client resets" : "")
    }
}
