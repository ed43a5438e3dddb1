/*
 * CLibWebSockets: the libwebsockets 4.1 API for Swift.
 *
 * Swift cannot import function-like or computed macros, so the few we need are
 * wrapped here as static inline functions, each prefixed with the module name.
 */
#ifndef CLIBWEBSOCKETS_SHIM_H
#define CLIBWEBSOCKETS_SHIM_H

#include <libwebsockets.h>

/* LWS_PRE (_LWS_PAD(4 + 10 + 2)): headroom lws needs before every lws_write payload, in bytes. */
static inline size_t clws_pre(void) { return LWS_PRE; }

/* lwsl_* are variadic macros over _lws_log; this logs one preformatted line. */
static inline void clws_log(int level, const char *message) { _lws_log(level, "%s\n", message); }

#endif
