import Foundation
import LiveActivityCore

/// The opening handshake's header checks of RFC 6455 §4.2.1 that lws 4.1 leaves undone, or answers by hanging
/// up without a word: a missing or malformed `Sec-WebSocket-Key`, a `Sec-WebSocket-Version` other than 13, a
/// `Sec-WebSocket-Protocol` list without ours. Each becomes an HTTP refusal naming the header, before lws
/// looks at the subprotocol (`LWS_CALLBACK_HTTP_CONFIRM_UPGRADE`). Pure: no lws, no I/O.
package enum HandshakeCheck {
    /// The one `Sec-WebSocket-Version` of RFC 6455.
    package static let version = "13"

    /// Judges a handshake's WebSocket header fields.
    /// - Parameters:
    ///   - key: `Sec-WebSocket-Key` as sent, nil when absent: 16 random bytes in base64 (24 characters; §4.1).
    ///   - version: `Sec-WebSocket-Version` as sent, nil when absent.
    ///   - protocols: `Sec-WebSocket-Protocol` as sent (a comma-separated list), nil when absent.
    ///   - subprotocol: ours; a list that names it (or no list) is accepted.
    /// - Returns: nil to go on with the handshake, else the refusal: 400 naming `Sec-WebSocket-Key` or
    ///   `Sec-WebSocket-Protocol`, 426 with `Sec-WebSocket-Version: 13` (§4.4) for another version.
    package static func refusal(key: String?, version: String?, protocols: String?, subprotocol: String) -> UpgradeRefusal? {
        guard let key, !key.isEmpty else {
            return UpgradeRefusal(status: 400, reason: "Sec-WebSocket-Key: missing; a WebSocket handshake sends 16 random bytes in base64 (RFC 6455 §4.1)")
        }
        guard key.utf8.count == 24, Data(base64Encoded: key)?.count == 16 else {
            return UpgradeRefusal(status: 400, reason: "Sec-WebSocket-Key: expected 16 bytes in base64 (24 characters, RFC 6455 §4.1), got \(quoted(key))")
        }
        guard version == Self.version else {
            return UpgradeRefusal(status: 426, reason: "Sec-WebSocket-Version: this server speaks version 13 (RFC 6455), got "
                                  + (version.map(quoted) ?? "none"), headers: ["Sec-WebSocket-Version": Self.version])
        }
        if let protocols {
            let offered = protocols.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }
            guard offered.contains(subprotocol) else {
                return UpgradeRefusal(status: 400, reason: "Sec-WebSocket-Protocol: this server speaks \(subprotocol) (or no subprotocol), got \(quoted(protocols))")
            }
        }
        return nil
    }

    /// A header value in a reason: quoted, its first 64 characters.
    private static func quoted(_ text: String) -> String {
        "\"\(text.clipped(to: 64))\""
    }
}
