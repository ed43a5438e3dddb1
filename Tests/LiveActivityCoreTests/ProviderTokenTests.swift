import Foundation
import LiveActivityCore
import Testing

/// APNs provider tokens (JWTs) read and checked as APNs checks them, without keys or sockets: shape,
/// header (`alg`, `kid`), claims (`iss`, `iat`), age.
struct ProviderTokenTests {
    /// A token from raw header and claims JSON and a signature of `signatureBytes` bytes.
    static func token(header: String = #"{"alg":"ES256","kid":"ABC123DEFG"}"#, claims: String, signatureBytes: Int = 64) -> String {
        [Array(header.utf8), Array(claims.utf8), [UInt8](repeating: 7, count: signatureBytes)]
            .map(ProviderToken.base64URLEncode).joined(separator: ".")
    }

    static let now = Date(timeIntervalSince1970: 1_800_000_000)

    @Test func aWellFormedTokenIsRead() throws {
        let text = Self.token(claims: #"{"iss":"TEAM123456","iat":1800000000}"#)
        let token = try ProviderToken.parse(text)
        #expect(token.keyID == "ABC123DEFG")
        #expect(token.teamID == "TEAM123456")
        #expect(token.issuedAt == Self.now)
        #expect(token.signature.count == 64)
        #expect(String(decoding: token.signingInput, as: UTF8.self) == text.split(separator: ".").prefix(2).joined(separator: "."))
        #expect(ProviderToken.looksLikeJWT(text))
        #expect(!ProviderToken.looksLikeJWT("ctl-token"))
    }

    @Test(arguments: [
        ("not.a", "not a JWT"),
        (token(header: #"{"alg":"HS256","kid":"ABC123DEFG"}"#, claims: #"{"iss":"TEAM123456","iat":1}"#), "alg"),
        (token(header: #"{"kid":"ABC123DEFG"}"#, claims: #"{"iss":"TEAM123456","iat":1}"#), "alg"),
        (token(header: #"{"alg":"ES256"}"#, claims: #"{"iss":"TEAM123456","iat":1}"#), "kid"),
        (token(header: #"{"alg":"ES256","kid":"short"}"#, claims: #"{"iss":"TEAM123456","iat":1}"#), "kid"),
        (token(claims: #"{"iat":1}"#), "iss"),
        (token(claims: #"{"iss":"TEAM-12345","iat":1}"#), "iss"),
        (token(claims: #"{"iss":"TEAM123456"}"#), "iat"),
        (token(claims: #"{"iss":"TEAM123456","iat":"now"}"#), "iat"),
        (token(claims: #"{"iss":"TEAM123456","iat":1}"#, signatureBytes: 70), "signature"),
        (token(header: "[1]", claims: #"{"iss":"TEAM123456","iat":1}"#), "header"),
        ("e30.bm9wZQ.AAAA", "claims"),
    ])
    func malformedTokensAreInvalidNamingTheField(text: String, field: String) {
        #expect {
            try ProviderToken.parse(text)
        } throws: { error in
            guard let rejection = error as? PushRejection else { return false }
            return rejection.status == 403 && rejection.reason == "InvalidProviderToken" && rejection.detail.contains(field)
        }
    }

    @Test func tokensOlderThanAnHourAreExpired() throws {
        let fresh = try ProviderToken.parse(Self.token(claims: #"{"iss":"TEAM123456","iat":1799996400}"#))
        try fresh.checkAge(now: Self.now)  // exactly one hour: still good
        let stale = try ProviderToken.parse(Self.token(claims: #"{"iss":"TEAM123456","iat":1799996399}"#))
        #expect(throws: PushRejection.self) { try stale.checkAge(now: Self.now) }
        do { try stale.checkAge(now: Self.now) } catch { #expect(error.reason == "ExpiredProviderToken" && error.status == 403) }
        let future = try ProviderToken.parse(Self.token(claims: #"{"iss":"TEAM123456","iat":1800000600}"#))
        do {
            try future.checkAge(now: Self.now)
            Issue.record("a token from the future was taken")
        } catch {
            #expect(error.reason == "InvalidProviderToken")
        }
    }

    @Test func base64URLRoundTrips() {
        for length in 0..<40 {
            let bytes = (0..<length).map { UInt8(($0 * 37 + 250) % 256) }
            #expect(ProviderToken.base64URLDecode(ProviderToken.base64URLEncode(bytes)) == bytes)
        }
        #expect(ProviderToken.base64URLDecode("a=b") == nil)
    }
}
