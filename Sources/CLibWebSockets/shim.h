/*
 * CLibWebSockets: the libwebsockets 4.1 API for Swift.
 *
 * Swift cannot import function-like or computed macros, so the few we need are
 * wrapped here as static inline functions, each prefixed with the module name.
 */
#ifndef CLIBWEBSOCKETS_SHIM_H
#define CLIBWEBSOCKETS_SHIM_H

#include <libwebsockets.h>
#include <errno.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <unistd.h>

/* LWS_PRE (_LWS_PAD(4 + 10 + 2)): headroom lws needs before every lws_write payload, in bytes. */
static inline size_t clws_pre(void) { return LWS_PRE; }

/* lwsl_* are variadic macros over _lws_log; this logs one preformatted line. */
static inline void clws_log(int level, const char *message) { _lws_log(level, "%s\n", message); }

/*
 * Asks the processor to start loading the two cache lines at `address` (a read, kept in every cache
 * level), so that a loop can fetch the next item's memory while it waits on the current one.
 */
static inline void clws_prefetch(const void *address) {
	__builtin_prefetch(address, 0, 3);
	__builtin_prefetch((const char *)address + 64, 0, 3);
}

/*
 * send(2) of `length` bytes on a non-blocking stream socket, MSG_NOSIGNAL, as lws's own
 * lws_ssl_capable_write_no_ssl() sends, but as the system call itself: glibc's send() is a
 * cancellation point, and in a process with threads it brackets every call with
 * __pthread_enable_asynccancel / __pthread_disable_asynccancel (about a tenth of the user time of a
 * fan-out to 1,000 clients). Nothing here is ever cancelled.
 * Returns the bytes taken (possibly fewer than `length`), 0 when the socket takes none now
 * (EAGAIN, EWOULDBLOCK, EINTR), or -1 on any other error (the connection is broken).
 */
static inline long clws_send_now(int fd, const void *bytes, size_t length) {
	long sent = syscall(SYS_sendto, fd, bytes, length, MSG_NOSIGNAL, (void *)0, 0);
	if (sent >= 0) return sent;
	return (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR) ? 0 : -1;
}

#endif
