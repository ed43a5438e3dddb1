import CCrypto
import Foundation
import LiveActivityCore

/// A P-256 key for ES256 (ECDSA on P-256 with SHA-256, RFC 7518 §3.4), read from a PEM file: the
/// `AuthKey_<keyID>.p8` a backend signs its APNs provider tokens with (PKCS#8 private key), or its public key
/// (`-----BEGIN PUBLIC KEY-----`). Checks provider-token signatures the way APNs does (`serve --apns-key`).
///
/// Thread-safe: OpenSSL 3 allows a key to be used for verification from several threads; the key never
/// changes after `init`.
final class ES256Key: @unchecked Sendable {
    /// The OpenSSL key (`EVP_PKEY *`), freed in `deinit`.
    private let key: OpaquePointer
    /// The Key ID the file name gives (`AuthKey_ABC123DEFG.p8` → `ABC123DEFG`), or nil for another name.
    let keyID: String?

    /// Reads the key in the PEM file at `path`.
    /// - Throws: ``ServerError`` naming `--apns-key` and the file when it cannot be read or holds no P-256 key.
    convenience init(file path: String) throws {
        guard let data = FileManager.default.contents(atPath: path) else {
            throw ServerError("cannot read --apns-key \(path)")
        }
        let name = URL(fileURLWithPath: path).deletingPathExtension().lastPathComponent
        let keyID = name.hasPrefix("AuthKey_") ? String(name.dropFirst("AuthKey_".count)) : nil
        try self.init(pem: Array(data), keyID: keyID.flatMap { ProviderToken.isTenCharacterID($0) ? $0 : nil }, source: path)
    }

    /// Reads a PEM key from memory.
    /// - Parameters:
    ///   - pem: the PEM text (a PKCS#8 private key or a public key).
    ///   - keyID: the Key ID tokens must name in `kid`, when known.
    ///   - source: where it came from, for the error message.
    /// - Throws: ``ServerError`` when it is not a P-256 key in PEM.
    init(pem: [UInt8], keyID: String?, source: String = "the key") throws {
        func read(_ reader: (OpaquePointer) -> OpaquePointer?) -> OpaquePointer? {
            pem.withUnsafeBytes { bytes -> OpaquePointer? in
                guard let bio = BIO_new_mem_buf(bytes.baseAddress, Int32(bytes.count)) else { return nil }
                defer { BIO_free(bio) }
                return reader(bio)
            }
        }
        guard let key = read({ PEM_read_bio_PrivateKey($0, nil, nil, nil) }) ?? read({ PEM_read_bio_PUBKEY($0, nil, nil, nil) }) else {
            ERR_clear_error()
            throw ServerError("--apns-key \(source) holds no PEM key (expected the AuthKey_<KeyID>.p8 from Apple, \"-----BEGIN PRIVATE KEY-----\")")
        }
        guard EVP_PKEY_get_base_id(key) == NID_X9_62_id_ecPublicKey, EVP_PKEY_get_bits(key) == 256 else {
            EVP_PKEY_free(key)
            throw ServerError("--apns-key \(source) is not a P-256 (ES256) key, as APNs keys are")
        }
        self.key = key
        self.keyID = keyID
    }

    deinit { EVP_PKEY_free(key) }

    /// Whether `signature` (ECDSA's `r` and `s`, 32 bytes each, as a JWT carries it) signs `input` with this key.
    func verify(_ input: [UInt8], signature: [UInt8]) -> Bool {
        guard signature.count == 64, let der = Self.der(fromRaw: signature) else { return false }
        guard let context = EVP_MD_CTX_new() else { return false }
        defer { EVP_MD_CTX_free(context) }
        guard EVP_DigestVerifyInit(context, nil, EVP_sha256(), nil, key) == 1 else { ERR_clear_error(); return false }
        let result = der.withUnsafeBufferPointer { signature in
            input.withUnsafeBufferPointer { input in
                EVP_DigestVerify(context, signature.baseAddress, signature.count, input.baseAddress, input.count)
            }
        }
        ERR_clear_error()
        return result == 1
    }

    /// Signs `input` (for tests and examples): ECDSA's `r` and `s`, 32 bytes each; nil for a public key.
    func sign(_ input: [UInt8]) -> [UInt8]? {
        guard let context = EVP_MD_CTX_new() else { return nil }
        defer { EVP_MD_CTX_free(context) }
        guard EVP_DigestSignInit(context, nil, EVP_sha256(), nil, key) == 1 else { ERR_clear_error(); return nil }
        var length = 0
        guard input.withUnsafeBufferPointer({ EVP_DigestSign(context, nil, &length, $0.baseAddress, $0.count) }) == 1 else {
            ERR_clear_error()
            return nil
        }
        var der = [UInt8](repeating: 0, count: length)
        guard der.withUnsafeMutableBufferPointer({ der in
            input.withUnsafeBufferPointer { EVP_DigestSign(context, der.baseAddress, &length, $0.baseAddress, $0.count) }
        }) == 1 else { ERR_clear_error(); return nil }
        return Self.raw(fromDER: Array(der.prefix(length)))
    }

    /// A JWS ES256 signature (`r || s`) as the DER `ECDSA-Sig-Value` OpenSSL verifies.
    private static func der(fromRaw raw: [UInt8]) -> [UInt8]? {
        guard let signature = ECDSA_SIG_new() else { return nil }
        defer { ECDSA_SIG_free(signature) }
        let r = raw.withUnsafeBufferPointer { BN_bin2bn($0.baseAddress, 32, nil) }
        let s = raw.withUnsafeBufferPointer { BN_bin2bn($0.baseAddress! + 32, 32, nil) }
        guard let r, let s else { BN_free(r); BN_free(s); return nil }
        guard ECDSA_SIG_set0(signature, r, s) == 1 else { BN_free(r); BN_free(s); return nil }
        var out: UnsafeMutablePointer<UInt8>?
        let length = i2d_ECDSA_SIG(signature, &out)
        guard length > 0, let out else { return nil }
        defer { CRYPTO_free(out, nil, 0) }
        return Array(UnsafeBufferPointer(start: out, count: Int(length)))
    }

    /// A DER `ECDSA-Sig-Value` as JWS's `r || s` (32 bytes each).
    private static func raw(fromDER der: [UInt8]) -> [UInt8]? {
        der.withUnsafeBufferPointer { buffer -> [UInt8]? in
            var pointer: UnsafePointer<UInt8>? = buffer.baseAddress
            guard let signature = d2i_ECDSA_SIG(nil, &pointer, buffer.count) else { return nil }
            defer { ECDSA_SIG_free(signature) }
            var r: OpaquePointer?
            var s: OpaquePointer?
            ECDSA_SIG_get0(signature, &r, &s)
            var out = [UInt8](repeating: 0, count: 64)
            let ok = out.withUnsafeMutableBufferPointer { out in
                BN_bn2binpad(r, out.baseAddress, 32) == 32 && BN_bn2binpad(s, out.baseAddress! + 32, 32) == 32
            }
            return ok ? out : nil
        }
    }
}
