/*
 * send_batch: what handing a broadcast's sends to the kernel together is worth, without the server (issue 30).
 *
 * N = 1,000 loopback TCP connections; a writer thread on CPU 0 sends one 624-byte message to every connection,
 * RATE rounds a second for SECONDS, while a reader thread on CPU 1 drains them all through epoll (as the load
 * generator does). Prints the writer thread's CPU time per delivery (user + system, getrusage RUSAGE_THREAD):
 *   mode send     one send(2) per connection (MSG_DONTWAIT | MSG_NOSIGNAL), as the server's --io-uring off
 *   mode uring    one io_uring send per connection, BATCH of them per io_uring_enter (liburing), as --io-uring on
 *
 *   cc -O2 -o /tmp/send_batch Tests/bench/send_batch.c -luring -lpthread
 *   for i in 1 2 3 4; do /tmp/send_batch send 80 5; /tmp/send_batch uring 80 5 1000; done
 */
#define _GNU_SOURCE
#include <liburing.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

enum { N = 1000, MESSAGE = 624 };
static int server_end[N], client_end[N];
static volatile int stopping;

static void pin(int cpu) {
	cpu_set_t set;
	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	pthread_setaffinity_np(pthread_self(), sizeof set, &set);
}

static double seconds(void) {
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec + t.tv_nsec / 1e9;
}

static double thread_cpu(void) {
	struct rusage r;
	getrusage(RUSAGE_THREAD, &r);
	return r.ru_utime.tv_sec + r.ru_utime.tv_usec / 1e6 + r.ru_stime.tv_sec + r.ru_stime.tv_usec / 1e6;
}

static void *reader(void *unused) {
	(void)unused;
	pin(1);
	int ep = epoll_create1(0);
	for (int i = 0; i < N; i++) {
		struct epoll_event e = {.events = EPOLLIN, .data.fd = client_end[i]};
		epoll_ctl(ep, EPOLL_CTL_ADD, client_end[i], &e);
	}
	struct epoll_event ready[256];
	static char buffer[65536];
	while (!stopping) {
		int n = epoll_wait(ep, ready, 256, 100);
		for (int i = 0; i < n; i++) (void)!read(ready[i].data.fd, buffer, sizeof buffer);
	}
	return NULL;
}

int main(int argc, char **argv) {
	if (argc < 4 || (strcmp(argv[1], "send") != 0 && strcmp(argv[1], "uring") != 0)) {
		fprintf(stderr, "usage: send_batch send|uring RATE SECONDS [BATCH]\n");
		return 2;
	}
	int uring = strcmp(argv[1], "uring") == 0, rate = atoi(argv[2]), duration = atoi(argv[3]);
	int batch = argc > 4 ? atoi(argv[4]) : N;
	int listener = socket(AF_INET, SOCK_STREAM, 0), one = 1;
	struct sockaddr_in address = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	socklen_t length = sizeof address;
	if (bind(listener, (struct sockaddr *)&address, sizeof address) != 0 || listen(listener, N) != 0 ||
	    getsockname(listener, (struct sockaddr *)&address, &length) != 0) {
		perror("listen");
		return 1;
	}
	for (int i = 0; i < N; i++) {
		client_end[i] = socket(AF_INET, SOCK_STREAM, 0);
		if (connect(client_end[i], (struct sockaddr *)&address, sizeof address) != 0) { perror("connect"); return 1; }
		server_end[i] = accept(listener, NULL, NULL);
		setsockopt(server_end[i], IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
	}
	pin(0);
	pthread_t thread;
	pthread_create(&thread, NULL, reader, NULL);
	static char message[MESSAGE];
	memset(message, 'x', sizeof message);
	struct io_uring ring;
	if (uring && io_uring_queue_init(2048, &ring, 0) != 0) { perror("io_uring_queue_init"); return 1; }
	double cpu0 = thread_cpu(), t0 = seconds();
	long rounds = 0, delivered = 0;
	while (seconds() - t0 < duration) {
		for (int i = 0; i < N; i++) {
			if (!uring) {
				delivered += send(server_end[i], message, sizeof message, MSG_DONTWAIT | MSG_NOSIGNAL) == sizeof message;
				continue;
			}
			io_uring_prep_send(io_uring_get_sqe(&ring), server_end[i], message, sizeof message, MSG_DONTWAIT | MSG_NOSIGNAL);
			if ((i + 1) % batch != 0 && i != N - 1) continue;
			io_uring_submit(&ring);
			struct io_uring_cqe *cqe;
			unsigned head, seen = 0;
			io_uring_for_each_cqe(&ring, head, cqe) {
				delivered += cqe->res == sizeof message;
				seen++;
			}
			io_uring_cq_advance(&ring, seen);
		}
		rounds++;
		double wait = t0 + (double)rounds / rate - seconds();
		if (wait > 0) usleep((useconds_t)(wait * 1e6));
	}
	double cpu = thread_cpu() - cpu0, elapsed = seconds() - t0;
	stopping = 1;
	pthread_join(thread, NULL);
	printf("%-5s batch %4d: %ld rounds, %ld delivered (%.0f/s), writer CPU %.3f s, %.3f us/delivery\n",
	       argv[1], uring ? batch : 1, rounds, delivered, delivered / elapsed, cpu, cpu / delivered * 1e6);
	return 0;
}
