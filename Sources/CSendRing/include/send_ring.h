/*
 * CSendRing: io_uring sends for the server's broadcast pass (liburing 2, Debian's liburing-dev, linked through
 * the CLibURing module). Plain C types only, so that Swift never sees liburing's own headers (send_ring.c says
 * why).
 */
#ifndef CSENDRING_H
#define CSENDRING_H

#include <stddef.h>

/* An io_uring with its submission and completion queues. */
struct csendring;

/* A ring for `entries` sends (a power of two, at most 32768), or NULL when the kernel refuses io_uring (a kernel
 * before 5.6, a seccomp filter, kernel.io_uring_disabled) or memory runs out. IORING_SETUP_SUBMIT_ALL (5.18): a
 * send that fails does not stop the ones queued after it; an older kernel gets a ring without it. */
struct csendring *csendring_open(unsigned entries);

/* Frees a ring made by csendring_open, with nothing queued or in flight. */
void csendring_close(struct csendring *ring);

/* Queues one send(2) of `length` bytes at `bytes` on socket `fd`, whose result comes back with `tag`. It never
 * waits for room (MSG_DONTWAIT: a full socket gives -EAGAIN or a short count at once) and raises no SIGPIPE
 * (MSG_NOSIGNAL: a closed peer gives -EPIPE). The bytes must stay put until csendring_submit returns.
 * Returns 0, or -1 when the submission queue is full (nothing queued). */
int csendring_queue_send(struct csendring *ring, int fd, const void *bytes, size_t length, unsigned long long tag);

/* Hands every queued send to the kernel, in one io_uring_enter(2) as a rule (again after a signal, or when the
 * kernel took only part). Each send completes during the call (none waits for its socket), so their results are
 * then there to read. Returns 0, or -errno when the kernel refused the ring itself (then the sends not taken stay
 * queued and the ring must not be entered again). */
int csendring_submit(struct csendring *ring);

/* The next result: 1 with its tag and its result (bytes sent, or -errno), 0 when none is there; `wait` waits for
 * one (retrying after a signal) rather than answer 0. */
int csendring_next_result(struct csendring *ring, int wait, unsigned long long *tag, int *result);

#endif
