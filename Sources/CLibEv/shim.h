/*
 * CLibEv: libev 4 (Debian's libev-dev), the epoll loop libwebsockets runs on through its libev
 * event-library plugin (libwebsockets-evlib-ev, LWS_SERVER_OPTION_LIBEV with a foreign loop).
 *
 * ev_run's flags are an enum Swift imports poorly and the loop constructor takes backend bit masks,
 * so the calls the server makes are wrapped here, prefixed with the module name.
 */
#ifndef CLIBEV_SHIM_H
#define CLIBEV_SHIM_H

#include <ev.h>

/* A new loop on epoll (the LIBEV_FLAGS environment variable ignored), or NULL when the kernel has none. */
static inline struct ev_loop *clibev_loop_new(void) { return ev_loop_new(EVBACKEND_EPOLL | EVFLAG_NOENV); }

/* One turn of the loop: waits for at least one event (or timer), runs every callback due, returns. */
static inline void clibev_run_once(struct ev_loop *loop) { (void)ev_run(loop, EVRUN_ONCE); }

/* One turn that does not wait: runs the callbacks of whatever is ready now (nothing when nothing is), returns. */
static inline void clibev_run_nowait(struct ev_loop *loop) { (void)ev_run(loop, EVRUN_NOWAIT); }

/* Frees a loop made by clibev_loop_new once nothing watches on it any more. */
static inline void clibev_loop_destroy(struct ev_loop *loop) { ev_loop_destroy(loop); }

#endif
