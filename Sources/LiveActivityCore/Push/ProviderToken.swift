import Foundation

/// An APNs provider authentication token, as a backend sends it in `authorization: bearer <token>` and as
/// APNs checks it: a JSON Web Token (RFC 7519) in compact form, `base64url(header).base64url(claims).
/// base64url(signature)`, signed with ES256 (ECDSA on P-256 with SHA-256, RFC 7518 §3.4) by the backend's
/// `AuthKey_<keyID>.p8`.
///
/// The header must hold `"alg": "ES256"` and `kid`, the 10-character Key ID; the claims `iss`, the
/// 10-character Team ID, and `iat`, the time of issue in Unix seconds, which APNs refuses once it is more
/// than one hour old. Source: "Establishing a token-based connection to APNs"
/// (https://developer.apple.com/documentation/usernotifications/establishing-a-token-based-connection-to-apns).
///
/// Parsing and the claim checks are pure; the signature is checked by whoever holds the key (the server,
/// with OpenSSL), over ``signingInput``. Thread-safe (a value).
public struct ProviderToken: Sendable, Equatable {
    /// `kid` of the header: the Key ID of the signing key (10 characters, letters and digits).
    public var keyID: String
    /// `iss` of the claims: the Team ID (10 characters, letters and digits).
    public var teamID: String
    /// `iat` of the claims: when the token was made (from Unix seconds).
    public var issuedAt: Date
    /// The bytes the signature covers: the first two parts and the dot between them, as sent (ASCII).
    public var signingInput: [UInt8]
    /// The signature: ECDSA's `r` and `s`, 32 bytes each, big-endian (RFC 7518 §3.4), 64 bytes.
    public var signature: [UInt8]

    /// How old `iat` may be: APNs refuses tokens issued more than one hour ago (`ExpiredProviderToken`).
    public static let maximumAge: TimeInterval = 3600
    /// How far `iat` may lie ahead of this server's clock (clocks differ a little), in seconds.
    public static let maximumLead: TimeInterval = 60

    /// Whether `text` has the shape of a JWT (three base64url parts separated by dots), as opposed to
    /// another bearer token (the controller token).
    public static func looksLikeJWT(_ text: String) -> Bool {
        let parts = text.split(separator: ".", omittingEmptySubsequences: false)
        return parts.count == 3 && parts.allSatisfy { !$0.isEmpty && $0.allSatisfy(isBase64URL) }
    }

    /// Reads a token and checks its header and claims (not its age nor its signature).
    /// - Parameter text: the token, without `bearer `.
    /// - Returns: the token's parts.
    /// - Throws: ``PushRejection`` 403 `InvalidProviderToken` naming what is wrong: not three base64url
    ///   parts, a header or claims that are not JSON objects, `alg` other than `ES256`, `kid` or `iss`
    ///   missing or not 10 letters and digits, `iat` missing or not a number, a signature that is not 64 bytes.
    public static func parse(_ text: String) throws(PushRejection) -> ProviderToken {
        let parts = text.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 3 else {
            throw invalid("authorization: the provider token is not a JWT (expected header.claims.signature, got \(parts.count) part\(parts.count == 1 ? "" : "s"))")
        }
        guard let headerBytes = base64URLDecode(parts[0]), case .object(let header)? = try? JSONValue.parse(headerBytes) else {
            throw invalid("authorization: the JWT header is not a base64url-encoded JSON object")
        }
        guard let claimBytes = base64URLDecode(parts[1]), case .object(let claims)? = try? JSONValue.parse(claimBytes) else {
            throw invalid("authorization: the JWT claims are not a base64url-encoded JSON object")
        }
        guard case .string(let alg)? = header["alg"] else { throw invalid("authorization: the JWT header has no alg (APNs needs \"ES256\")") }
        guard alg == "ES256" else { throw invalid("authorization: the JWT header's alg is \"\(alg.clipped(to: 16))\"; APNs needs \"ES256\"") }
        guard case .string(let kid)? = header["kid"] else { throw invalid("authorization: the JWT header has no kid (the Key ID of your .p8 key)") }
        guard isTenCharacterID(kid) else { throw invalid("authorization: the JWT header's kid \"\(kid.clipped(to: 32))\" is not a 10-character Key ID") }
        guard case .string(let iss)? = claims["iss"] else { throw invalid("authorization: the JWT claims have no iss (your Team ID)") }
        guard isTenCharacterID(iss) else { throw invalid("authorization: the JWT claims' iss \"\(iss.clipped(to: 32))\" is not a 10-character Team ID") }
        guard let iat = claims["iat"]?.numberValue else { throw invalid("authorization: the JWT claims have no numeric iat (Unix seconds)") }
        guard iat.isFinite, iat >= 0, iat < 1e11 else { throw invalid("authorization: the JWT claims' iat \(iat) is not a time in Unix seconds") }
        guard let signature = base64URLDecode(parts[2]), signature.count == 64 else {
            throw invalid("authorization: the JWT signature is not 64 bytes of ES256 (r and s)")
        }
        let signingInput = Array(text.utf8.prefix(parts[0].utf8.count + 1 + parts[1].utf8.count))
        return ProviderToken(keyID: kid, teamID: iss, issuedAt: Date(timeIntervalSince1970: iat), signingInput: signingInput,
                             signature: signature)
    }

    /// Checks `iat` against `now`.
    /// - Throws: ``PushRejection`` 403 `ExpiredProviderToken` when the token is more than ``maximumAge`` old;
    ///   403 `InvalidProviderToken` when it was issued more than ``maximumLead`` in the future.
    public func checkAge(now: Date) throws(PushRejection) {
        let age = now.timeIntervalSince(issuedAt)
        if age > Self.maximumAge {
            throw PushRejection(status: 403, reason: "ExpiredProviderToken",
                                detail: "authorization: the provider token was issued \(Int(age)) s ago (iat \(Int(issuedAt.timeIntervalSince1970))); APNs takes tokens up to one hour old: make a new one")
        }
        if age < -Self.maximumLead {
            throw Self.invalid("authorization: the provider token's iat \(Int(issuedAt.timeIntervalSince1970)) is \(Int(-age)) s in the future")
        }
    }

    /// A 403 `InvalidProviderToken` with `detail`.
    public static func invalid(_ detail: String) -> PushRejection {
        PushRejection(status: 403, reason: "InvalidProviderToken", detail: detail, field: "authorization")
    }

    /// Whether `text` is 10 ASCII letters or digits (a Key ID or Team ID).
    public static func isTenCharacterID(_ text: String) -> Bool {
        text.utf8.count == 10 && text.utf8.allSatisfy { (0x30...0x39).contains($0) || (0x41...0x5a).contains($0) || (0x61...0x7a).contains($0) }
    }

    private static func isBase64URL(_ character: Character) -> Bool {
        character.isASCII && (character.isLetter || character.isNumber || character == "-" || character == "_" || character == "=")
    }

    /// Decodes base64url (RFC 4648 §5), with or without `=` padding; nil when it is not.
    public static func base64URLDecode(_ text: some StringProtocol) -> [UInt8]? {
        var standard = text.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        while standard.hasSuffix("=") { standard.removeLast() }
        guard !standard.contains("=") else { return nil }
        standard += String(repeating: "=", count: (4 - standard.count % 4) % 4)
        return Data(base64Encoded: standard).map(Array.init)
    }

    /// Encodes base64url (RFC 4648 §5) without padding, as JWTs do.
    public static func base64URLEncode(_ bytes: [UInt8]) -> String {
        Data(bytes).base64EncodedString().replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
            .replacingOccurrences(of: "=", with: "")
    }
}
