import Testing
@testable import LiveActivityLWS

/// The opening handshake's header checks (RFC 6455 §4.2.1), with no sockets.
struct HandshakeCheckTests {
    private static let key = "dGhlIHNhbXBsZSBub25jZQ=="  // RFC 6455 §1.3's sample: 16 bytes in base64

    private func judge(key: String? = Self.key, version: String? = "13", protocols: String? = nil) -> UpgradeRefusal? {
        HandshakeCheck.refusal(key: key, version: version, protocols: protocols, subprotocol: "liveactivity.v1")
    }

    @Test(arguments: [nil, "liveactivity.v1", "chat, liveactivity.v1", "liveactivity.v1 ,chat"])
    func aWellFormedHandshakeGoesOn(protocols: String?) {
        #expect(judge(protocols: protocols) == nil)
    }

    @Test(arguments: [(nil, "Sec-WebSocket-Key: missing"), ("", "Sec-WebSocket-Key: missing"),
                      ("short", #"Sec-WebSocket-Key: expected 16 bytes in base64 (24 characters, RFC 6455 §4.1), got "short""#),
                      ("dGhlIHNhbXBsZSBub25jZQ", "Sec-WebSocket-Key: expected 16 bytes"),
                      ("dGhlIHNhbXBsZSBub25jZSBub25jZQ==", "Sec-WebSocket-Key: expected 16 bytes"),
                      ("!!!!!!!!!!!!!!!!!!!!!!==", "Sec-WebSocket-Key: expected 16 bytes")])
    func aMissingOrMalformedKeyIsA400NamingIt(key: String?, reason: String) throws {
        let refusal = try #require(judge(key: key))
        #expect(refusal.status == 400)
        #expect(refusal.reason.hasPrefix(reason))
        #expect(refusal.headers.isEmpty)
    }

    @Test(arguments: [("8", #"got "8""#), (nil, "got none"), ("13, 8", #"got "13, 8""#)])
    func anotherVersionIsA426NamingTheOneSpoken(version: String?, got: String) throws {
        let refusal = try #require(judge(version: version))
        #expect(refusal.status == 426)
        #expect(refusal.reason == "Sec-WebSocket-Version: this server speaks version 13 (RFC 6455), \(got)")
        #expect(refusal.headers == ["Sec-WebSocket-Version": "13"], "RFC 6455 §4.4: the versions the server speaks")
    }

    @Test(arguments: ["chat", "LiveActivity.v1", "liveactivity.v2, chat"])
    func aSubprotocolListWithoutOursIsA400NamingIt(protocols: String) throws {
        let refusal = try #require(judge(protocols: protocols))
        #expect(refusal.status == 400)
        #expect(refusal.reason == "Sec-WebSocket-Protocol: this server speaks liveactivity.v1 (or no subprotocol), got \"\(protocols)\"")
    }

    @Test func aLongValueIsCutInTheReason() throws {
        let refusal = try #require(judge(protocols: String(repeating: "x", count: 100)))
        #expect(refusal.reason.hasSuffix("got \"\(String(repeating: "x", count: 64))…\""))
    }
}
