/*
 * CZlib: zlib (Debian zlib1g-dev) for Swift: raw deflate for WebSocket permessage-deflate (RFC 7692).
 *
 * deflateInit2 and inflateInit2 are function-like macros (they pass ZLIB_VERSION and sizeof(z_stream)
 * to deflateInit2_ / inflateInit2_), which Swift cannot import; these wrap them.
 */
#ifndef CZLIB_SHIM_H
#define CZLIB_SHIM_H

#include <zlib.h>

/* deflateInit2 with method Z_DEFLATED and strategy Z_DEFAULT_STRATEGY. windowBits -9..-15 is raw deflate
 * (no zlib header or trailer) with a window of 2^|windowBits| bytes; memLevel 1..9 sizes the hash tables.
 * Returns Z_OK, Z_MEM_ERROR or Z_STREAM_ERROR. */
static inline int czlib_deflate_init2(z_stream *stream, int level, int windowBits, int memLevel) {
    return deflateInit2(stream, level, Z_DEFLATED, windowBits, memLevel, Z_DEFAULT_STRATEGY);
}

/* inflateInit2: windowBits -8..-15 reads raw deflate with a window of 2^|windowBits| bytes.
 * Returns Z_OK, Z_MEM_ERROR or Z_STREAM_ERROR. */
static inline int czlib_inflate_init2(z_stream *stream, int windowBits) {
    return inflateInit2(stream, windowBits);
}

#endif
