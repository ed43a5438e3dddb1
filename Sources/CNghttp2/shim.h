/*
 * CNghttp2: libnghttp2 (Debian libnghttp2-dev) for Swift: the HTTP/2 framing, HPACK and stream state
 * machine (RFC 9113, RFC 7541) of the APNs listener (`serve --apns-port`). libwebsockets 4.1 speaks HTTP/2
 * too, but drops header names it does not know on HTTP/2 streams, so it cannot read `apns-*` headers.
 * Only LiveActivityServer/HTTP2 imports it.
 */
#ifndef CNGHTTP2_SHIM_H
#define CNGHTTP2_SHIM_H

#include <nghttp2/nghttp2.h>

/* The connection preface a client sends first (RFC 9113 §3.4), 24 bytes: a macro Swift cannot import. */
static inline const char *cnghttp2_client_magic(void) { return NGHTTP2_CLIENT_MAGIC; }
static inline size_t cnghttp2_client_magic_length(void) { return NGHTTP2_CLIENT_MAGIC_LEN; }

#endif
