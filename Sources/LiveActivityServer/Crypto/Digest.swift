import CCrypto
import Foundation

/// SHA-256 (FIPS 180-4) through OpenSSL's libcrypto, and secure random tokens.
enum Digest {
    /// The SHA-256 of `text`'s UTF-8 bytes, as 64 lowercase hex digits.
    static func sha256Hex(_ text: String) -> String {
        var digest = [UInt8](repeating: 0, count: Int(SHA256_DIGEST_LENGTH))
        let bytes = Array(text.utf8)
        _ = bytes.withUnsafeBufferPointer { SHA256($0.baseAddress, $0.count, &digest) }
        return digest.map { String(format: "%02x", $0) }.joined()
    }

    /// `count` random bytes from OpenSSL's CSPRNG, as URL-safe base64 without padding.
    /// - Precondition: the CSPRNG works (it traps otherwise: a server without randomness must not hand out tokens).
    static func randomToken(bytes count: Int = 24) -> String {
        var bytes = [UInt8](repeating: 0, count: count)
        precondition(RAND_bytes(&bytes, Int32(count)) == 1, "OpenSSL RAND_bytes failed")
        return Data(bytes).base64EncodedString()
            .replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_").replacingOccurrences(of: "=", with: "")
    }
}
