import Testing
@testable import LiveActivityClient

/// `--server` URLs, split for `lws_client_connect_info`.
struct WebSocketURLTests {
    @Test func splitsAPlainURL() throws {
        let url = try WebSocketURL("ws://127.0.0.1:8080/ws")
        #expect(url == WebSocketURL(secure: false, host: "127.0.0.1", port: 8080, path: "/ws"))
        #expect(url.hostHeader == "127.0.0.1:8080")
        #expect(url.description == "ws://127.0.0.1:8080/ws")
    }

    @Test func defaultsPortAndPath() throws {
        let url = try WebSocketURL("wss://example.org")
        #expect(url == WebSocketURL(secure: true, host: "example.org", port: 443, path: "/ws"))
        #expect(url.hostHeader == "example.org")
    }

    @Test func keepsTheQueryAndBracketsIPv6() throws {
        let url = try WebSocketURL("ws://[::1]:9000/ws?x=1")
        #expect(url.host == "::1")
        #expect(url.path == "/ws?x=1")
        #expect(url.hostHeader == "[::1]:9000")
    }

    @Test(arguments: ["http://127.0.0.1:8080/ws", "127.0.0.1:8080", "ws://", "ws://host:0/ws", "not a url", ""])
    func refusesWhatIsNotAWebSocketURL(text: String) {
        #expect { try WebSocketURL(text) } throws: { ($0 as? ClientError)?.kind == .invalidURL }
    }
}
