/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Helpers shared by the in-guest programs (swarmfan_test, swarmfan_bench):
 * test files with known content, loopback TCP pairs, the ioctl wrapper, and
 * a receiver process that drains and checks many sockets at once.
 * Header-only so each program stays one static binary built by one gcc call.
 */
#ifndef SWARMFAN_FAN_UTIL_H
#define SWARMFAN_FAN_UTIL_H

#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <linux/swarmfan.h>

#define FAN_MAX_SOCKS SWARMFAN_MAX_TARGETS

static inline void fan_die(const char *what)
{
	fprintf(stderr, "fatal: %s: %s\n", what, strerror(errno));
	exit(2);
}

/* Deterministic pseudo-random bytes: a misplaced page never matches. */
static inline void fan_fill(unsigned char *buf, size_t len, uint64_t seed, uint64_t pos)
{
	size_t i;

	for (i = 0; i < len; i++) {
		uint64_t x = (pos + i) / 8 * 0x9E3779B97F4A7C15ULL ^ seed;

		x ^= x >> 29;
		x *= 0xBF58476D1CE4E5B9ULL;
		x ^= x >> 32;
		buf[i] = (unsigned char)(x >> (8 * ((pos + i) % 8)));
	}
}

/* Writes size bytes of fan_fill(seed) to path, fsync'd. */
static inline void fan_make_file(const char *path, uint64_t size, uint64_t seed)
{
	static unsigned char chunk[1 << 20];
	uint64_t pos = 0;
	int fd;

	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	if (fd < 0)
		fan_die(path);
	while (pos < size) {
		size_t n = size - pos < sizeof(chunk) ? size - pos : sizeof(chunk);

		fan_fill(chunk, n, seed, pos);
		if (write(fd, chunk, n) != (ssize_t)n)
			fan_die("write test file");
		pos += n;
	}
	if (fsync(fd))
		fan_die("fsync");
	close(fd);
}

static inline double fan_now_ms(clockid_t clock)
{
	struct timespec ts;

	clock_gettime(clock, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

/*
 * n connected loopback TCP pairs: snd[i] is the client end, rcv[i] the
 * accepted end. One connect then one accept, so the pairs match up.
 * sndbuf/rcvbuf > 0 shrink the socket buffers (to force blocking early).
 */
static inline void fan_tcp_pairs(int n, int *snd, int *rcv, int sndbuf, int rcvbuf)
{
	struct sockaddr_in addr = { .sin_family = AF_INET };
	socklen_t len = sizeof(addr);
	int one = 1;
	int lfd, i;

	addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	lfd = socket(AF_INET, SOCK_STREAM, 0);
	if (lfd < 0)
		fan_die("socket");
	setsockopt(lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (rcvbuf > 0)
		setsockopt(lfd, SOL_SOCKET, SO_RCVBUF, &rcvbuf, sizeof(rcvbuf));
	if (bind(lfd, (struct sockaddr *)&addr, sizeof(addr)) ||
	    listen(lfd, 4) ||
	    getsockname(lfd, (struct sockaddr *)&addr, &len))
		fan_die("listen");
	for (i = 0; i < n; i++) {
		snd[i] = socket(AF_INET, SOCK_STREAM, 0);
		if (snd[i] < 0)
			fan_die("socket");
		if (sndbuf > 0)
			setsockopt(snd[i], SOL_SOCKET, SO_SNDBUF, &sndbuf,
				   sizeof(sndbuf));
		if (connect(snd[i], (struct sockaddr *)&addr, sizeof(addr)))
			fan_die("connect");
		rcv[i] = accept(lfd, NULL, NULL);
		if (rcv[i] < 0)
			fan_die("accept");
	}
	close(lfd);
}

static inline void fan_close_all(int n, int *fds)
{
	int i;

	for (i = 0; i < n; i++) {
		if (fds[i] >= 0)
			close(fds[i]);
		fds[i] = -1;
	}
}

static inline void fan_close_except(int n, const int *keep, int keep1, int keep2)
{
	int fd, i;

	for (fd = 3; fd < 4096; fd++) {
		int k = fd == keep1 || fd == keep2;

		for (i = 0; i < n && !k; i++)
			k = fd == keep[i];
		if (!k)
			close(fd);
	}
}

static inline void fan_set_nonblock(int fd, int on)
{
	int fl = fcntl(fd, F_GETFL);

	fcntl(fd, F_SETFL, on ? fl | O_NONBLOCK : fl & ~O_NONBLOCK);
}

/* The ioctl: returns its result, or -errno. */
static inline long fan_send(int dev, int file_fd, uint64_t offset, uint64_t length,
		     const void *header, uint32_t header_len,
		     struct swarmfan_target *targets, uint32_t nr)
{
	struct swarmfan_send req = {
		.version = SWARMFAN_ABI_VERSION,
		.file_fd = file_fd,
		.header_len = header_len,
		.offset = offset,
		.length = length,
		.header = (uintptr_t)header,
		.targets = (uintptr_t)targets,
		.nr_targets = nr,
	};
	int ret = ioctl(dev, SWARMFAN_IOC_SEND, &req);

	return ret < 0 ? -errno : ret;
}

/* What the receiver process is told about one socket. */
struct fan_rx {
	const unsigned char *expect;	/* bytes it must receive, in order */
	size_t expect_len;		/* at most this many */
	size_t close_after;		/* >0: reset the connection after this */
	size_t truncate_after;		/* >0: truncate trunc_path after this */
	int discard;			/* MSG_TRUNC: count, do not check */
};

struct fan_rx_report {
	long long got[FAN_MAX_SOCKS];
	int mismatch[FAN_MAX_SOCKS];	/* first differing byte + 1, or 0 */
	int timed_out;
};

struct fan_rx_proc {
	pid_t pid;
	int report_fd;
	int hold_fd;			/* write end: receiver waits for EOF */
};

static const char *fan_trunc_path;
static off_t fan_trunc_size;

static inline void fan_rx_loop(int n, const int *rcv, const struct fan_rx *rx,
			struct fan_rx_report *rep)
{
	static unsigned char buf[1 << 16];
	struct pollfd pfd[FAN_MAX_SOCKS];
	int open_count = n, i;

	for (i = 0; i < n; i++) {
		pfd[i].fd = rcv[i];
		pfd[i].events = POLLIN;
	}
	while (open_count > 0) {
		int r = poll(pfd, n, 120000);

		if (r == 0) {
			rep->timed_out = 1;
			return;
		}
		if (r < 0) {
			if (errno == EINTR)
				continue;
			fan_die("poll");
		}
		for (i = 0; i < n; i++) {
			size_t want = sizeof(buf);
			ssize_t got;

			if (pfd[i].fd < 0 || !pfd[i].revents)
				continue;
			if (rx[i].close_after &&
			    rx[i].close_after - rep->got[i] < want)
				want = rx[i].close_after - rep->got[i];
			got = recv(pfd[i].fd, buf, want,
				   rx[i].discard ? MSG_TRUNC : 0);
			if (got < 0 && errno == EAGAIN)
				continue;
			if (got <= 0) {
				close(pfd[i].fd);
				pfd[i].fd = -1;
				open_count--;
				continue;
			}
			if (!rx[i].discard && !rep->mismatch[i] &&
			    (rep->got[i] + got > (long long)rx[i].expect_len ||
			     memcmp(buf, rx[i].expect + rep->got[i], got))) {
				size_t k;

				/* Rare: find the first wrong byte to report. */
				for (k = 0; k < (size_t)got; k++) {
					size_t at = rep->got[i] + k;

					if (at >= rx[i].expect_len ||
					    buf[k] != rx[i].expect[at]) {
						rep->mismatch[i] = at + 1;
						break;
					}
				}
			}
			rep->got[i] += got;
			if (rx[i].truncate_after &&
			    rep->got[i] >= (long long)rx[i].truncate_after &&
			    fan_trunc_path) {
				if (truncate(fan_trunc_path, fan_trunc_size))
					fan_die("truncate");
				fan_trunc_path = NULL;
			}
			if (rx[i].close_after &&
			    rep->got[i] >= (long long)rx[i].close_after) {
				struct linger lg = { 1, 0 };

				/* An abortive close: the sender sees a reset. */
				setsockopt(pfd[i].fd, SOL_SOCKET, SO_LINGER,
					   &lg, sizeof(lg));
				close(pfd[i].fd);
				pfd[i].fd = -1;
				open_count--;
			}
		}
	}
}

/*
 * Forks a process that reads rcv[0..n) to EOF, checking each stream against
 * rx[i]. With hold, it first waits until fan_rx_release(). The parent's
 * copies of rcv are closed; snd (the sender ends) are closed in the child so
 * that the parent closing them is what ends the streams.
 */
static inline struct fan_rx_proc fan_rx_start(int n, int *snd, int *rcv,
				       const struct fan_rx *rx, int hold)
{
	struct fan_rx_proc p = { .hold_fd = -1 };
	int rep_pipe[2], hold_pipe[2] = { -1, -1 };

	if (pipe(rep_pipe) || (hold && pipe(hold_pipe)))
		fan_die("pipe");
	p.pid = fork();
	if (p.pid < 0)
		fan_die("fork");
	if (p.pid == 0) {
		static struct fan_rx_report rep;
		char c;

		/*
		 * Keep only our sockets and pipes: a sender end or another
		 * receiver's socket held here would keep a stream open.
		 */
		fan_close_except(n, rcv, rep_pipe[1], hold_pipe[0]);
		(void)snd;
		if (hold) {
			while (read(hold_pipe[0], &c, 1) > 0)
				;
		}
		fan_rx_loop(n, rcv, rx, &rep);
		if (write(rep_pipe[1], &rep, sizeof(rep)) != sizeof(rep))
			_exit(3);
		_exit(0);
	}
	close(rep_pipe[1]);
	if (hold) {
		close(hold_pipe[0]);
		p.hold_fd = hold_pipe[1];
	}
	fan_close_all(n, rcv);
	p.report_fd = rep_pipe[0];
	return p;
}

static inline void fan_rx_release(struct fan_rx_proc *p)
{
	if (p->hold_fd >= 0)
		close(p->hold_fd);
	p->hold_fd = -1;
}

/* Waits for the receiver; 0 when it reported, -1 otherwise. */
static inline int fan_rx_finish(struct fan_rx_proc *p, struct fan_rx_report *rep)
{
	size_t have = 0;
	int status;

	fan_rx_release(p);
	memset(rep, 0, sizeof(*rep));
	while (have < sizeof(*rep)) {
		ssize_t r = read(p->report_fd, (char *)rep + have,
				 sizeof(*rep) - have);

		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			break;
		have += r;
	}
	close(p->report_fd);
	while (waitpid(p->pid, &status, 0) < 0 && errno == EINTR)
		;
	if (have != sizeof(*rep) || !WIFEXITED(status) ||
	    WEXITSTATUS(status) != 0)
		return -1;
	return 0;
}

#endif /* SWARMFAN_FAN_UTIL_H */
