import Testing
@testable import LiveActivityLWS

/// libwebsockets' log lines as the server logs them.
struct LibraryLogBridgeTests {
    @Test(arguments: [
        ("[2026/11/29 17:15:01:1738] E: ERROR on binding fd 7 to port 8080 (-1 98)\n", "ERROR on binding fd 7 to port 8080 (-1 98)"),
        ("[2026/11/29 17:15:01:1738] W: lws_ssl_client_bio_create: [x] failed\n", "lws_ssl_client_bio_create: [x] failed"),
        ("[2026/11/29 17:15:01:1738] CLIENT: hello\n", "hello"),
        ("ERROR on binding fd 7 to port 8080\n", "ERROR on binding fd 7 to port 8080"),
    ])
    func messageDropsTheTimestampLevelAndNewline(line: String, message: String) {
        #expect(LibraryLogBridge.message(ofLine: line) == message)
    }
}
