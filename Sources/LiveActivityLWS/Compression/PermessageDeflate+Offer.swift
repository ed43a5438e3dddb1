import LiveActivityCore

/// Reading a client's permessage-deflate offer (RFC 7692), beside the compressor whose window sizes it
/// clamps to (``Deflate/windowBits(allowing:)``). The negotiation itself is a Core value the session holds.
extension PermessageDeflate {
    /// Reads a `Sec-WebSocket-Extensions` request header (RFC 7692 §5: comma-separated offers, each the
    /// extension's name and `;`-separated parameters, a value optionally quoted).
    /// - Returns: nil when no offer in it is permessage-deflate.
    init?(offer: String) {
        var allowed: Int? = 15
        var asked = false
        var found = false
        var everyOfferResets = true
        for element in offer.split(separator: ",") {
            let parts = element.split(separator: ";").map { $0.trimmed(" \t") }
            guard parts.first?.lowercased() == "permessage-deflate" else { continue }
            found = true
            everyOfferResets = everyOfferResets && parts.dropFirst().contains { $0.lowercased() == "client_no_context_takeover" }
            for parameter in parts.dropFirst() {
                let pair = parameter.split(separator: "=", maxSplits: 1).map { $0.trimmed(" \t") }
                guard pair.first?.lowercased() == "server_max_window_bits" else { continue }
                asked = true
                let text = pair.count == 2 ? Substring(pair[1]).trimmed("\"") : ""
                if let bits = Int(text), (8...15).contains(bits), text.first != "0" {
                    allowed = allowed.map { min($0, bits) }
                } else {
                    allowed = nil
                }
            }
        }
        guard found else { return nil }
        self.init(windowBits: allowed.map(Deflate.windowBits(allowing:)), clientNoContextTakeover: everyOfferResets,
                  answeredWindowBits: asked ? allowed : nil)
    }

}

private extension Substring {
    /// The text without leading and trailing characters of `set` (spaces and tabs, quotes).
    func trimmed(_ set: String) -> String {
        var text = self
        while let first = text.first, set.contains(first) { text.removeFirst() }
        while let last = text.last, set.contains(last) { text.removeLast() }
        return String(text)
    }
}
