/*
 * CCrypto: OpenSSL's libcrypto (Debian libssl-dev) for Swift: SHA-256 digests and secure random bytes.
 * Foundation on Linux has neither a SHA-256 nor CryptoKit, so this is the well-kept library we use.
 */
#ifndef CCRYPTO_SHIM_H
#define CCRYPTO_SHIM_H

#include <openssl/sha.h>
#include <openssl/rand.h>

#endif
