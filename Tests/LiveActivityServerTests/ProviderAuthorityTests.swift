import Foundation
import LiveActivityCore
import Testing
@testable import LiveActivityServer

/// Who may send APNs-shaped requests: provider tokens signed and verified with a real P-256 key (OpenSSL),
/// the controller token, open loopback servers; and the APNs header checks. No sockets.
struct ProviderAuthorityTests {
    /// A throwaway P-256 key, made for these tests with
    /// `openssl ecparam -name prime256v1 -genkey -noout | openssl pkcs8 -topk8 -nocrypt`.
    static let pem = """
        -----BEGIN PRIVATE KEY-----
        MIGHAgEAMBMGByqGSM49AgEGCCqGSM49AwEHBG0wawIBAQQg7zEJ3HKLSzhJQPxc
        kV21MZL2bw82hNBKzS7atiEx+cWhRANCAAR7iZF1efFNAHDT5/y3F+9TxLmol5YS
        OJi+2qJRcOVvf6hGKVs3cbwCG5YioDxEop1fBrfsaWHMH00ylI7UT7wK
        -----END PRIVATE KEY-----
        """
    static let now = Date(timeIntervalSince1970: 1_800_000_000)

    static func key(id: String? = "ABC123DEFG") throws -> ES256Key { try ES256Key(pem: Array(pem.utf8), keyID: id) }

    /// A provider token signed with `key`.
    static func token(_ key: ES256Key, kid: String = "ABC123DEFG", iat: Double = 1_800_000_000) -> String {
        let input = ProviderToken.base64URLEncode(Array(#"{"alg":"ES256","kid":"\#(kid)"}"#.utf8)) + "."
            + ProviderToken.base64URLEncode(Array(#"{"iss":"TEAM123456","iat":\#(Int(iat))}"#.utf8))
        return input + "." + ProviderToken.base64URLEncode(key.sign(Array(input.utf8)) ?? [])
    }

    static func request(_ authorization: String?) -> HTTPRequest {
        var headers = HTTPHeaders()
        headers["authorization"] = authorization.map { "bearer \($0)" }
        return HTTPRequest(method: .post, path: "/3/device/x", headers: headers)
    }

    private func outcome(_ authority: ProviderAuthority, _ authorization: String?) -> String {
        do {
            switch try authority.authorize(Self.request(authorization), now: Self.now) {
            case .open: return "open"
            case .controllerToken: return "controller"
            case .providerToken(_, let verified): return verified ? "verified" : "unverified"
            }
        } catch {
            return error.reason
        }
    }

    @Test func signaturesVerifyWithTheKeyAndNotOtherwise() throws {
        let key = try Self.key()
        let input = Array("header.claims".utf8)
        let signature = try #require(key.sign(input))
        #expect(signature.count == 64)
        #expect(key.verify(input, signature: signature))
        #expect(!key.verify(Array("header.claimz".utf8), signature: signature))
        var flipped = signature
        flipped[10] ^= 1
        #expect(!key.verify(input, signature: flipped))
        #expect(!key.verify(input, signature: Array(signature.prefix(63))))
    }

    @Test func badKeyFilesAreRefusedNamingTheOption() {
        #expect(throws: ServerError.self) { try ES256Key(pem: Array("not a key".utf8), keyID: nil) }
        do { _ = try ES256Key(pem: [], keyID: nil) } catch { #expect("\(error)".contains("--apns-key")) }
    }

    @Test func withAKeyOnlySignedFreshTokensOfThatKeyPass() throws {
        let key = try Self.key()
        let authority = ProviderAuthority(access: AccessPolicy(), key: key)
        let token = Self.token(key)
        #expect(outcome(authority, token) == "verified")
        #expect(outcome(authority, token) == "verified")
        #expect(authority.verifiedTokens.verifications == 1, "the same token is verified once")
        #expect(outcome(authority, nil) == "MissingProviderToken")
        #expect(outcome(authority, Self.token(key, kid: "ZZZ123DEFG")) == "InvalidProviderToken")
        #expect(outcome(authority, Self.token(key, iat: 1_800_000_000 - 3601)) == "ExpiredProviderToken")
        let forged = Self.token(key).dropLast(4) + "AAAA"
        #expect(outcome(authority, String(forged)) == "InvalidProviderToken")
        #expect(outcome(authority, "some-other-token") == "InvalidProviderToken")
    }

    @Test func withoutAKeyTokensAreTakenOnTheirShapeByAnOpenServerOnly() throws {
        let key = try Self.key()
        let open = ProviderAuthority(access: AccessPolicy(), key: nil)
        #expect(outcome(open, nil) == "open")
        #expect(outcome(open, Self.token(key)) == "unverified")
        #expect(outcome(open, Self.token(key, iat: 1)) == "ExpiredProviderToken")
        let guarded = ProviderAuthority(access: AccessPolicy(controllerToken: "ctl"), key: nil)
        #expect(outcome(guarded, "ctl") == "controller")
        #expect(outcome(guarded, nil) == "MissingProviderToken")
        #expect(outcome(guarded, Self.token(key)) == "InvalidProviderToken")
        #expect(outcome(guarded, "wrong") == "InvalidProviderToken")
    }

    @Test func headerChecksNameTheHeader() {
        func reason(_ headers: HTTPHeaders, grant: ProviderAuthority.Grant = .open) -> String? {
            let request = HTTPRequest(method: .post, path: "/3/device/x", headers: headers)
            do throws(PushRejection) {
                try APNsHeaderChecks.pushType(request)
                _ = try APNsHeaderChecks.messageID(request)
                _ = try APNsHeaderChecks.topic(request, grant: grant)
                _ = try APNsHeaderChecks.priority(request)
                _ = try APNsHeaderChecks.expiration(request)
                try APNsHeaderChecks.collapseID(request)
                return nil
            } catch {
                #expect(error.detail.hasPrefix(error.field ?? "?"), "the detail names the header: \(error.detail)")
                return error.reason
            }
        }
        let good: HTTPHeaders = ["apns-push-type": "liveactivity", "apns-topic": "com.example.app.push-type.liveactivity"]
        #expect(reason(good) == nil)
        var headers = good
        headers["apns-push-type"] = "alert"
        #expect(reason(headers) == "InvalidPushType")
        headers = good
        headers["apns-id"] = "1234"
        #expect(reason(headers) == "BadMessageId")
        headers["apns-id"] = "123e4567-e89b-12d3-a456-426614174000"
        #expect(reason(headers) == nil)
        headers = good
        headers["apns-topic"] = "com.example.app"
        #expect(reason(headers) == "TopicDisallowed")
        headers["apns-topic"] = nil
        #expect(reason(headers) == nil)
        let token = try! ProviderToken.parse(ProviderTokenShapes.sample)
        #expect(reason(headers, grant: .providerToken(token, verified: false)) == "MissingTopic")
        headers = good
        headers["apns-priority"] = "7"
        #expect(reason(headers) == "BadPriority")
        headers = good
        headers["apns-expiration"] = "soon"
        #expect(reason(headers) == "BadExpirationDate")
        headers["apns-expiration"] = "0"
        #expect(reason(headers) == nil)
        headers["apns-collapse-id"] = String(repeating: "c", count: 65)
        #expect(reason(headers) == "BadCollapseId")
    }
}

/// A token of the right shape (unsigned), for checks that only need one.
enum ProviderTokenShapes {
    static let sample = [#"{"alg":"ES256","kid":"ABC123DEFG"}"#, #"{"iss":"TEAM123456","iat":1800000000}"#]
        .map { ProviderToken.base64URLEncode(Array($0.utf8)) }.joined(separator: ".") + "." + ProviderToken.base64URLEncode([UInt8](repeating: 1, count: 64))
}

/// 429 `TooManyProviderTokenUpdates`: a new provider token on one connection at most every 20 minutes (issue 29 item 2).
struct ProviderTokenSlotTests {
    let t0 = Date(timeIntervalSince1970: 1_800_000_000)

    @Test func aNewTokenWithinTwentyMinutesIsRefusedAndTheOldOneStays() throws {
        let slot = ProviderTokenSlot()
        try slot.take("a", now: t0)
        try slot.take("a", now: t0 + 60)
        #expect(throws: PushRejection.self) { try slot.take("b", now: t0 + 19 * 60) }
        do {
            try slot.take("b", now: t0 + 19 * 60)
        } catch {
            #expect(error.status == 429 && error.reason == "TooManyProviderTokenUpdates")
        }
        try slot.take("a", now: t0 + 19 * 60 + 30)
        try slot.take("b", now: t0 + 20 * 60)
        #expect(throws: PushRejection.self) { try slot.take("a", now: t0 + 21 * 60) }
    }
}
