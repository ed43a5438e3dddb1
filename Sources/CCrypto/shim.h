/*
 * CCrypto: OpenSSL (Debian libssl-dev) for Swift: SHA-256 digests, secure random bytes, ES256 (ECDSA P-256
 * with SHA-256) signature checks of APNs provider tokens, and TLS for the APNs listener (libssl).
 * Foundation on Linux has neither a SHA-256 nor CryptoKit, so this is the well-kept library we use.
 */
#ifndef CCRYPTO_SHIM_H
#define CCRYPTO_SHIM_H

#include <string.h>
#include <openssl/sha.h>
#include <openssl/rand.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/bio.h>
#include <openssl/bn.h>
#include <openssl/ec.h>
#include <openssl/ecdsa.h>
#include <openssl/err.h>
#include <openssl/ssl.h>

/* SSL_CTX_set_min_proto_version and SSL_CTX_set_mode are macros over SSL_CTX_ctrl, which Swift cannot
 * import: TLS 1.2 at least (as APNs requires), and writes that may be partial and retried from a moved
 * buffer (the listener keeps unsent bytes in a growing array). Returns 1 on success. */
static inline int ccrypto_ssl_ctx_configure(SSL_CTX *ctx) {
    if (SSL_CTX_set_min_proto_version(ctx, TLS1_2_VERSION) != 1) return 0;
    SSL_CTX_set_mode(ctx, SSL_MODE_ENABLE_PARTIAL_WRITE | SSL_MODE_ACCEPT_MOVING_WRITE_BUFFER);
    return 1;
}

/* ALPN (RFC 7301) selection for the APNs listener: "h2" when the client offers it; otherwise no protocol
 * is agreed and the handshake goes on (SSL_TLSEXT_ERR_NOACK), for clients that offer none and speak HTTP/2
 * anyway (aioapns) — RFC 9113 §3.3 names "h2" as the identifier. */
static int ccrypto_alpn_select_h2(SSL *ssl, const unsigned char **out, unsigned char *outlen,
                                  const unsigned char *in, unsigned int inlen, void *arg) {
    (void)ssl; (void)arg;
    unsigned int i = 0;
    while (i < inlen) {
        unsigned int len = in[i];
        if (i + 1 + len > inlen) break;
        if (len == 2 && memcmp(in + i + 1, "h2", 2) == 0) {
            *out = in + i + 1;
            *outlen = 2;
            return SSL_TLSEXT_ERR_OK;
        }
        i += 1 + len;
    }
    return SSL_TLSEXT_ERR_NOACK;
}

/* Installs ccrypto_alpn_select_h2 on a server context. */
static inline void ccrypto_ssl_ctx_use_alpn_h2(SSL_CTX *ctx) {
    SSL_CTX_set_alpn_select_cb(ctx, ccrypto_alpn_select_h2, NULL);
}

#endif
