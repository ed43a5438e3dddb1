import Testing
import LiveActivityCore
@testable import LiveActivityServer

/// The HTTP values: the one status table, request lookups.
struct HTTPValueTests {
    @Test(arguments: [
        (200, "OK"), (201, "Created"), (400, "Bad Request"), (401, "Unauthorized"), (403, "Forbidden"), (404, "Not Found"),
        (405, "Method Not Allowed"), (410, "Gone"), (413, "Content Too Large"), (429, "Too Many Requests"),
        (500, "Internal Server Error"), (503, "Service Unavailable"),
    ])
    func everyStatusWeSendHasItsStandardPhrase(code: Int, phrase: String) {
        #expect(HTTPStatus(code).reasonPhrase == phrase)
        #expect(HTTPStatus(code).statusLine == "HTTP/1.1 \(code) \(phrase)")
        #expect("\(HTTPStatus(code))" == "\(code) \(phrase)")
    }

    @Test func theNamedStatusesAreTheirCodes() {
        let named: [(HTTPStatus, Int)] = [(.ok, 200), (.created, 201), (.badRequest, 400), (.unauthorized, 401), (.forbidden, 403),
                                          (.notFound, 404), (.methodNotAllowed, 405), (.gone, 410), (.contentTooLarge, 413),
                                          (.tooManyRequests, 429), (.internalServerError, 500), (.serviceUnavailable, 503)]
        for (status, code) in named { #expect(status.code == code) }
    }

    @Test func anUnknownCodeHasAnEmptyPhrase() {
        #expect(HTTPStatus(299).reasonPhrase == "")
        #expect(HTTPStatus(299).statusLine == "HTTP/1.1 299 ")
    }

    @Test func queryFieldsSplitAtTheFirstEqualsAndTheFirstWins() {
        let fields = HTTPRequest.queryFields(fromFragments: ["before=a b+c&d=e", "live", "before=zz", "token=", "url=/x?y=1"])
        let request = HTTPRequest(method: .get, path: "/api/history", query: fields)
        #expect(request.query("before") == "a b+c&d=e")
        #expect(request.query("live") == nil, "a field without = is not a pair")
        #expect(request.query("token") == "")
        #expect(request.query("url") == "/x?y=1")
        #expect(request.query("missing") == nil)
    }

    @Test func headersAreLookedUpInAnyCase() {
        var headers: HTTPHeaders = ["APNs-Push-Type": "liveactivity"]
        #expect(headers["apns-push-type"] == "liveactivity")
        #expect(headers["APNS-PUSH-TYPE"] == "liveactivity")
        headers["Authorization"] = "Bearer x"
        #expect(headers.names == ["apns-push-type", "authorization"])
    }

    @Test(arguments: [
        ("Bearer abc", nil, "abc"), ("bearer  abc ", nil, "abc"), ("Basic abc", "q", "q"), (nil, "q", "q"), (nil, nil, nil),
        ("Bearer", "q", "q"),
    ] as [(String?, String?, String?)])
    func thePresentedTokenIsTheBearerElseTheQuery(authorization: String?, query: String?, expected: String?) {
        var headers = HTTPHeaders()
        headers["authorization"] = authorization
        let fields = query.map { [HTTPRequest.QueryField(name: "token", value: $0)] } ?? []
        #expect(HTTPRequest(method: .get, path: "/", query: fields, headers: headers).presentedToken == expected)
    }

    @Test func aDocumentCarriesItsOwnSecurityHeaders() {
        let response = HTTPResponse.document(.ok, html: "<p>hi</p>", scriptNonce: "n1")
        #expect(response.securityHeaders == .own)
        #expect(response.contentType == "text/html; charset=utf-8")
        #expect(response.header("content-security-policy")?.contains("script-src 'nonce-n1'") == true)
        #expect(response.header("x-content-type-options") == "nosniff")
        #expect(HTTPResponse.json(.ok, []).securityHeaders == .bestPractice)
    }

    @Test func methodNotAllowedNamesTheMethodsButHead() {
        let response = HTTPResponse.methodNotAllowed([.get, .head])
        #expect(String(decoding: response.body, as: UTF8.self).contains("method: only GET is allowed here"))
        #expect(HTTPMethod.list([.post, .get, .head]) == "GET, HEAD, POST")
    }
}

/// The one serializer of whole HTTP/1.1 responses written past lws (refused handshakes, the APNs port's 505).
struct HTTPResponseWireTests {
    @Test func aPlainTextResponseIsAStatusLineFieldsAnEmptyLineAndTheBody() {
        let bytes = HTTPResponse.plainText(HTTPStatus(410), "410 Gone: this share has ended\n").http1Bytes(closing: true)
        #expect(String(decoding: bytes, as: UTF8.self) == "HTTP/1.1 410 Gone\r\ncontent-type: text/plain; charset=utf-8\r\n"
            + "content-length: 31\r\ncache-control: no-store\r\nconnection: close\r\n\r\n410 Gone: this share has ended\n")
    }

    @Test func fieldValuesKeepOnlyVisibleASCII() {
        var response = HTTPResponse.plainText(HTTPStatus(505), "")
        response.headers = [("x-note", "a\r\nset-cookie: b\u{7f}é")]
        let text = String(decoding: response.http1Bytes(closing: false), as: UTF8.self)
        #expect(text.contains("x-note: aset-cookie: b\\u{E9}\r\n") && !text.contains("connection"))
    }
}
