/*
 * CSendRing: the few liburing calls the server's send queue makes (LiveActivityLWS's SendQueue), compiled
 * here rather than in a module map's header: liburing.h defines _GNU_SOURCE and _XOPEN_SOURCE before it
 * includes the system headers, which then declare their types differently (fd_set's field names) from the
 * other C modules' copies, and Swift refuses the mismatch.
 */
#include "send_ring.h"

#include <liburing.h>
#include <errno.h>
#include <stdlib.h>
#include <sys/socket.h>

/* See send_ring.h for what each function does. */
struct csendring { struct io_uring ring; };

struct csendring *csendring_open(unsigned entries) {
	struct csendring *ring = calloc(1, sizeof *ring);
	if (ring == NULL) return NULL;
	if (io_uring_queue_init(entries, &ring->ring, IORING_SETUP_SUBMIT_ALL) == 0) return ring;
	if (io_uring_queue_init(entries, &ring->ring, 0) == 0) return ring;
	free(ring);
	return NULL;
}

void csendring_close(struct csendring *ring) {
	io_uring_queue_exit(&ring->ring);
	free(ring);
}

int csendring_queue_send(struct csendring *ring, int fd, const void *bytes, size_t length, unsigned long long tag) {
	struct io_uring_sqe *sqe = io_uring_get_sqe(&ring->ring);
	if (sqe == NULL) return -1;
	io_uring_prep_send(sqe, fd, bytes, length, MSG_DONTWAIT | MSG_NOSIGNAL);
	io_uring_sqe_set_data64(sqe, tag);
	return 0;
}

int csendring_submit(struct csendring *ring) {
	while (io_uring_sq_ready(&ring->ring) > 0) {
		int submitted = io_uring_submit(&ring->ring);
		if (submitted < 0 && submitted != -EINTR && submitted != -EAGAIN) return submitted;
	}
	return 0;
}

int csendring_next_result(struct csendring *ring, int wait, unsigned long long *tag, int *result) {
	struct io_uring_cqe *cqe = NULL;
	int status;
	if (wait) {
		do { status = io_uring_wait_cqe(&ring->ring, &cqe); } while (status == -EINTR);
	} else {
		status = io_uring_peek_cqe(&ring->ring, &cqe);
	}
	if (status != 0 || cqe == NULL) return 0;
	*tag = io_uring_cqe_get_data64(cqe);
	*result = cqe->res;
	io_uring_cqe_seen(&ring->ring, cqe);
	return 1;
}
