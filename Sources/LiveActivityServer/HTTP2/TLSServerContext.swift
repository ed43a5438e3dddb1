import CCrypto
import Foundation

/// The OpenSSL server context of the APNs listener: the server's `--tls-cert` / `--tls-key`, TLS 1.2 or
/// later (as APNs requires), and ALPN `h2` (RFC 7301; RFC 9113 §3.3) — while a client that offers no ALPN,
/// as aioapns does, is let through and expected to speak HTTP/2 all the same.
///
/// Thread-safe for its one use: made once, then only read by the listener's thread (`SSL_new`).
final class TLSServerContext: @unchecked Sendable {
    /// `SSL_CTX *`, freed in `deinit`.
    let context: OpaquePointer

    /// Loads the certificate chain and key.
    /// - Throws: ``ServerError`` naming the file OpenSSL refused, with OpenSSL's reason.
    init(certificatePath: String, keyPath: String) throws {
        guard let context = SSL_CTX_new(TLS_server_method()) else { throw ServerError("OpenSSL could not make a TLS context: \(Self.lastError())") }
        self.context = context
        guard ccrypto_ssl_ctx_configure(context) == 1 else { throw ServerError("OpenSSL refused TLS 1.2 as the lowest version: \(Self.lastError())") }
        guard SSL_CTX_use_certificate_chain_file(context, certificatePath) == 1 else {
            throw ServerError("--tls-cert \(certificatePath): OpenSSL cannot use it for the APNs port: \(Self.lastError())")
        }
        guard SSL_CTX_use_PrivateKey_file(context, keyPath, SSL_FILETYPE_PEM) == 1, SSL_CTX_check_private_key(context) == 1 else {
            throw ServerError("--tls-key \(keyPath): OpenSSL cannot use it with --tls-cert for the APNs port: \(Self.lastError())")
        }
        ccrypto_ssl_ctx_use_alpn_h2(context)
    }

    deinit { SSL_CTX_free(context) }

    /// OpenSSL's newest queued error as text (and the queue emptied), or "unknown error".
    static func lastError() -> String {
        let code = ERR_get_error()
        ERR_clear_error()
        guard code != 0 else { return "unknown error" }
        var buffer = [CChar](repeating: 0, count: 256)
        ERR_error_string_n(code, &buffer, buffer.count)
        return String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}
