// SPDX-License-Identifier: GPL-2.0
/*
 * swarmfan_bench: what it costs the sender to push one file range to N
 * loopback TCP sockets, four ways:
 *   kmod      one SWARMFAN_IOC_SEND for all N sockets
 *   sendfile  one sendfile() per socket
 *   splice    splice file -> pipe once per chunk, tee() to one pipe per
 *             socket, splice each pipe -> its socket
 *   copy      pread a chunk into a buffer once, send() it to every socket
 *
 *   swarmfan_bench DIR [MiB]     (file of MiB, default 16, created in DIR)
 *
 * Two scenarios: the whole file as one range without a header, and the
 * file as 256 KiB frames each after a 13-byte header (the node's push
 * frames): one call per frame for kmod, header + payload per socket and
 * frame for the others.
 *
 * Run by tools/vm/run-kmod-vm --mode bench inside a VM under qemu
 * -icount shift=0,sleep=off with one vCPU, where guest time counts executed
 * instructions, so the figures repeat from boot to boot.
 *
 * A separate receiver process drains every socket (recv MSG_TRUNC: the
 * kernel discards the bytes, so receiving costs little) and acknowledges
 * each round once every socket has the whole range. Wall time runs from
 * the start of the send to that acknowledgement; sender CPU is the sending
 * process's own CPU time (CLOCK_PROCESS_CPUTIME_ID, user + system) over the
 * send (its user-space share from getrusage). Each case: one untimed
 * warm-up round, then the median of 3.
 */
#define _GNU_SOURCE
#include <sys/resource.h>
#include <sys/sendfile.h>

#include "fan_util.h"

enum { ROUNDS = 3, CHUNK = 1 << 20, MAX_N = 64 };

static const int counts[] = { 1, 4, 8, 16 };
static const char *const methods[] = { "kmod", "sendfile", "splice", "copy" };
enum { NMETHODS = 4 };

struct figures {
	double wall_ms;
	double cpu_ms;
	double user_ms;
};

static int dev = -1;

static void send_all(int fd, const char *buf, size_t len)
{
	while (len) {
		ssize_t n = send(fd, buf, len, MSG_NOSIGNAL);

		if (n <= 0)
			fan_die("send");
		buf += n;
		len -= n;
	}
}

static void splice_all(int from, int to, size_t len)
{
	while (len) {
		ssize_t n = splice(from, NULL, to, NULL, len, SPLICE_F_MOVE);

		if (n <= 0)
			fan_die("splice pipe -> socket");
		len -= n;
	}
}

/* One frame: the header, then file bytes [off, off + len). */
struct frame {
	uint64_t off;
	uint64_t len;
	const char *hdr;
	uint32_t hlen;
};

static void run_kmod(int file, const struct frame *f, int n, const int *snd)
{
	struct swarmfan_target t[MAX_N];
	long ret;
	int i;

	for (i = 0; i < n; i++)
		t[i] = (struct swarmfan_target){ .fd = snd[i] };
	ret = fan_send(dev, file, f->off, f->len, f->hdr, f->hlen, t, n);
	if (ret != n) {
		errno = ret < 0 ? -ret : EIO;
		fan_die("SWARMFAN_IOC_SEND");
	}
}

static void send_header(int sock, const struct frame *f)
{
	if (f->hlen) {
		ssize_t n = send(sock, f->hdr, f->hlen, MSG_MORE | MSG_NOSIGNAL);

		if (n != (ssize_t)f->hlen)
			fan_die("send header");
	}
}

static void run_sendfile(int file, const struct frame *f, int n, const int *snd)
{
	int i;

	for (i = 0; i < n; i++) {
		off_t off = f->off, end = f->off + f->len;

		send_header(snd[i], f);
		while (off < end) {
			ssize_t r = sendfile(snd[i], file, &off, end - off);

			if (r <= 0)
				fan_die("sendfile");
		}
	}
}

/* pipes[0] is fed from the file; pipes[1..n-1] get tee()d copies. */
static void run_splice(int file, const struct frame *f, int n, const int *snd,
		       int (*pipes)[2])
{
	loff_t off = f->off, end = f->off + f->len;
	int i;

	for (i = 0; i < n; i++)
		send_header(snd[i], f);
	while (off < end) {
		size_t want = end - off < CHUNK ? end - off : CHUNK;
		ssize_t got = splice(file, &off, pipes[0][1], NULL, want,
				     SPLICE_F_MOVE);

		if (got <= 0)
			fan_die("splice file -> pipe");
		for (i = 1; i < n; i++) {
			ssize_t t = tee(pipes[0][0], pipes[i][1], got, 0);

			if (t != got)
				fan_die("tee");
			splice_all(pipes[i][0], snd[i], got);
		}
		splice_all(pipes[0][0], snd[0], got);
	}
}

static void run_copy(int file, const struct frame *f, int n, const int *snd,
		     char *buf)
{
	uint64_t off = f->off, end = f->off + f->len;
	int i;

	for (i = 0; i < n; i++)
		send_header(snd[i], f);
	while (off < end) {
		size_t want = end - off < CHUNK ? end - off : CHUNK;
		ssize_t got = pread(file, buf, want, off);

		if (got <= 0)
			fan_die("pread");
		for (i = 0; i < n; i++)
			send_all(snd[i], buf, got);
		off += got;
	}
}

/*
 * The receiver: drains all sockets, writes one byte to ack after every
 * round in which each socket received len bytes, until the sockets close.
 */
static pid_t start_receiver(int n, int *snd, int *rcv, uint64_t len, int *ack_rd)
{
	int ack[2];
	pid_t pid;

	if (pipe(ack))
		fan_die("pipe");
	pid = fork();
	if (pid < 0)
		fan_die("fork");
	if (pid == 0) {
		long long got[MAX_N] = { 0 };
		struct pollfd pfd[MAX_N];
		long long round = 1;
		int i, open_count = n;

		fan_close_except(n, rcv, ack[1], -1);
		for (i = 0; i < n; i++)
			pfd[i] = (struct pollfd){ .fd = rcv[i], .events = POLLIN };
		while (open_count) {
			int done = 1;

			if (poll(pfd, n, -1) < 0 && errno != EINTR)
				_exit(3);
			for (i = 0; i < n; i++) {
				ssize_t r;

				if (pfd[i].fd < 0 || !pfd[i].revents)
					continue;
				r = recv(pfd[i].fd, NULL, 1 << 30, MSG_TRUNC | MSG_DONTWAIT);
				if (r < 0 && errno == EAGAIN)
					continue;
				if (r <= 0) {
					close(pfd[i].fd);
					pfd[i].fd = -1;
					open_count--;
					continue;
				}
				got[i] += r;
			}
			for (i = 0; i < n; i++)
				done &= got[i] >= round * (long long)len;
			if (done && open_count == n) {
				for (i = 0; i < n; i++)
					if (got[i] != round * (long long)len)
						_exit(4);	/* more than sent */
				if (write(ack[1], "a", 1) != 1)
					_exit(5);
				round++;
			}
		}
		_exit(0);
	}
	close(ack[1]);
	fan_close_all(n, rcv);
	(void)snd;
	*ack_rd = ack[0];
	return pid;
}

static double tv_ms(struct timeval tv)
{
	return tv.tv_sec * 1e3 + tv.tv_usec / 1e3;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

struct scenario {
	const char *what;
	uint64_t piece;		/* payload bytes per frame */
	uint32_t hlen;		/* header bytes per frame */
};

static const struct scenario scenarios[] = {
	{ "one range, no header", 0, 0 },
	{ "256 KiB frames, 13-byte header each", 256 << 10, 13 },
};
enum { NSCEN = sizeof(scenarios) / sizeof(scenarios[0]) };

static uint64_t round_bytes(const struct scenario *sc, uint64_t len)
{
	uint64_t piece = sc->piece ? sc->piece : len;

	return len + (len + piece - 1) / piece * sc->hlen;
}

/* Sends the whole file once, frame by frame, with one method. */
static void run_round(int method, const struct scenario *sc, int file,
		      uint64_t len, int n, const int *snd, int (*pipes)[2],
		      char *buf)
{
	static const char hdr[SWARMFAN_MAX_HEADER] = "SWRMhdr-piece";
	uint64_t piece = sc->piece ? sc->piece : len, off;

	for (off = 0; off < len; off += piece) {
		struct frame f = {
			.off = off,
			.len = len - off < piece ? len - off : piece,
			.hdr = hdr,
			.hlen = sc->hlen,
		};

		switch (method) {
		case 0: run_kmod(file, &f, n, snd); break;
		case 1: run_sendfile(file, &f, n, snd); break;
		case 2: run_splice(file, &f, n, snd, pipes); break;
		default: run_copy(file, &f, n, snd, buf); break;
		}
	}
}

static struct figures measure(int method, const struct scenario *sc, int file,
			      uint64_t len, int n, const int *snd, int ack,
			      int (*pipes)[2], char *buf)
{
	double wall[ROUNDS], cpu[ROUNDS], user[ROUNDS];
	struct figures f;
	int r;

	for (r = -1; r < ROUNDS; r++) {
		double w0 = fan_now_ms(CLOCK_MONOTONIC);
		double c0 = fan_now_ms(CLOCK_PROCESS_CPUTIME_ID);
		struct rusage u0, u1;
		double c1;
		char c;

		getrusage(RUSAGE_SELF, &u0);
		run_round(method, sc, file, len, n, snd, pipes, buf);
		c1 = fan_now_ms(CLOCK_PROCESS_CPUTIME_ID);
		getrusage(RUSAGE_SELF, &u1);
		if (read(ack, &c, 1) != 1)
			fan_die("receiver ack");
		if (r < 0)
			continue;	/* warm-up round */
		wall[r] = fan_now_ms(CLOCK_MONOTONIC) - w0;
		cpu[r] = c1 - c0;
		user[r] = tv_ms(u1.ru_utime) - tv_ms(u0.ru_utime);
	}
	qsort(wall, ROUNDS, sizeof(double), cmp_double);
	qsort(cpu, ROUNDS, sizeof(double), cmp_double);
	qsort(user, ROUNDS, sizeof(double), cmp_double);
	f.wall_ms = wall[ROUNDS / 2];
	f.cpu_ms = cpu[ROUNDS / 2];
	f.user_ms = user[ROUNDS / 2];
	return f;
}

int main(int argc, char **argv)
{
	enum { NCOUNTS = sizeof(counts) / sizeof(counts[0]) };
	static struct figures fig[NSCEN][NCOUNTS][NMETHODS];
	int (*pipes)[2] = calloc(MAX_N, sizeof(*pipes));
	char *buf = malloc(CHUNK);
	char path[512];
	uint64_t mib = 16, len;
	size_t c, sc;
	int file, m;

	if (argc < 2 || argc > 3) {
		fprintf(stderr, "usage: %s DIR [MiB]\n", argv[0]);
		return 2;
	}
	if (argc == 3)
		mib = strtoull(argv[2], NULL, 10);
	if (!pipes || !buf || mib < 1 || mib > 1024)
		return 2;
	len = mib << 20;
	setvbuf(stdout, NULL, _IOLBF, 0);
	signal(SIGPIPE, SIG_IGN);
	dev = open(SWARMFAN_DEVICE, O_RDWR);
	if (dev < 0)
		fan_die(SWARMFAN_DEVICE);
	snprintf(path, sizeof(path), "%s/bench.bin", argv[1]);
	fan_make_file(path, len, 42);
	file = open(path, O_RDONLY);
	if (file < 0)
		fan_die(path);
	for (m = 0; m < MAX_N; m++) {
		if (pipe(pipes[m]) || fcntl(pipes[m][1], F_SETPIPE_SZ, CHUNK) < CHUNK)
			fan_die("pipe of 1 MiB");
	}

	for (sc = 0; sc < NSCEN; sc++) {
		for (c = 0; c < NCOUNTS; c++) {
			int n = counts[c], snd[MAX_N], rcv[MAX_N];
			int ack, st;
			pid_t pid;

			fan_tcp_pairs(n, snd, rcv, 0, 0);
			pid = start_receiver(n, snd, rcv,
					     round_bytes(&scenarios[sc], len), &ack);
			for (m = 0; m < NMETHODS; m++) {
				struct figures *f = &fig[sc][c][m];

				*f = measure(m, &scenarios[sc], file, len, n,
					     snd, ack, pipes, buf);
				printf("BENCH scenario=%zu sockets=%d method=%s wall_ms=%.2f cpu_ms=%.2f user_ms=%.2f\n",
				       sc, n, methods[m], f->wall_ms, f->cpu_ms,
				       f->user_ms);
			}
			fan_close_all(n, snd);
			close(ack);
			if (waitpid(pid, &st, 0) != pid || !WIFEXITED(st) ||
			    WEXITSTATUS(st)) {
				fprintf(stderr, "receiver failed (status %d)\n", st);
				return 1;
			}
		}
	}

	printf("BENCH-TABLE-BEGIN\n");
	printf("%llu MiB file on tmpfs to N loopback TCP sockets; median of %d rounds after 1 warm-up;\n",
	       (unsigned long long)mib, ROUNDS);
	printf("guest milliseconds under qemu -icount shift=0,sleep=off (1 ns per instruction), 1 vCPU.\n");
	for (sc = 0; sc < NSCEN; sc++) {
		printf("\n%s:\n\n", scenarios[sc].what);
		printf("| sockets | method | wall ms | sender CPU ms | of which user ms | wall / sendfile | sender CPU / sendfile |\n");
		printf("|---:|---|---:|---:|---:|---:|---:|\n");
		for (c = 0; c < NCOUNTS; c++) {
			for (m = 0; m < NMETHODS; m++) {
				struct figures *f = &fig[sc][c][m];
				struct figures *sf = &fig[sc][c][1];

				printf("| %d | %s | %.1f | %.1f | %.1f | %.2f | %.2f |\n",
				       counts[c], methods[m], f->wall_ms, f->cpu_ms,
				       f->user_ms, f->wall_ms / sf->wall_ms,
				       sf->cpu_ms > 0 ? f->cpu_ms / sf->cpu_ms : 0.0);
			}
		}
	}
	printf("BENCH-TABLE-END\n");
	unlink(path);
	return 0;
}
