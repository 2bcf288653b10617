// SPDX-License-Identifier: GPL-2.0
/*
 * Failures during a send: a receiver resetting, the file shrinking,
 * signals, non-blocking and timed-out sockets, a sender killed while
 * blocked in the module. Each must end with a clear result per socket and
 * the right bytes on every receiver.
 */
#define _GNU_SOURCE
#include <stdarg.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/time.h>

#include <pthread.h>

#include "harness.h"

static void receiver_closes(struct tfile *f)
{
	enum { N = 4 };
	int snd[N], rcv[N], i;
	struct swarmfan_target t[N];
	struct fan_rx rx[N] = {};
	uint64_t len = 4 * 1024 * 1024 + 5, total = sizeof(header13) + len;
	unsigned char *frame = make_frame(f, 3, len, header13, sizeof(header13));
	struct fan_rx_report rep;
	struct fan_rx_proc p;
	long ret;

	begin("%s: receiver 2 of 4 resets after 64 KiB of 4 MiB", f->path);
	fan_tcp_pairs(N, snd, rcv, 32768, 32768);
	for (i = 0; i < N; i++) {
		t[i] = (struct swarmfan_target){ .fd = snd[i] };
		rx[i].expect = frame;
		rx[i].expect_len = total;
	}
	rx[2].close_after = 65536;
	p = fan_rx_start(N, snd, rcv, rx, 0);
	ret = fan_send(dev, f->fd, 3, len, header13, sizeof(header13), t, N);
	fan_close_all(N, snd);
	CHECK(fan_rx_finish(&p, &rep) == 0, "receiver failed");
	CHECK(ret == N - 1, "ioctl returned %ld, want %d", ret, N - 1);
	CHECK(t[2].result == -EPIPE || t[2].result == -ECONNRESET,
	      "closed receiver's result %lld", (long long)t[2].result);
	for (i = 0; i < N; i++) {
		if (i == 2)
			continue;
		CHECK(t[i].result == (long long)total && rep.got[i] == (long long)total,
		      "socket %d: result %lld, received %lld", i,
		      (long long)t[i].result, rep.got[i]);
		CHECK(!rep.mismatch[i], "socket %d: wrong byte at %d", i,
		      rep.mismatch[i] - 1);
	}
	CHECK(!rep.mismatch[2], "closed socket got a wrong byte at %d",
	      rep.mismatch[2] - 1);
	free(frame);
	end();
}

/* The file shrinks while it is being sent: -ENODATA, what went out is right. */
static void file_truncated(const char *dir, const char *label)
{
	enum { N = 2 };
	int snd[N], rcv[N], i;
	struct swarmfan_target t[N];
	struct fan_rx rx[N] = {};
	struct tfile f;
	uint64_t len = 8 * 1024 * 1024, cut = 1024 * 1024;
	uint64_t total = sizeof(header13) + len;
	unsigned char *frame;
	struct fan_rx_report rep;
	struct fan_rx_proc p;
	long ret;

	tfile_create(&f, dir, "truncate-me.bin", len, 77, 0);
	frame = make_frame(&f, 0, len, header13, sizeof(header13));
	begin("%s: file truncated to 1 MiB while 8 MiB is sent to 2 sockets", label);
	fan_tcp_pairs(N, snd, rcv, 32768, 32768);
	for (i = 0; i < N; i++) {
		t[i] = (struct swarmfan_target){ .fd = snd[i] };
		rx[i].expect = frame;
		rx[i].expect_len = total;
	}
	rx[0].truncate_after = 256 * 1024;
	fan_trunc_path = f.path;
	fan_trunc_size = cut;
	p = fan_rx_start(N, snd, rcv, rx, 0);
	fan_trunc_path = NULL;
	ret = fan_send(dev, f.fd, 0, len, header13, sizeof(header13), t, N);
	fan_close_all(N, snd);
	CHECK(fan_rx_finish(&p, &rep) == 0, "receiver failed");
	CHECK(ret == -ENODATA, "ioctl returned %ld (%s), want ENODATA", ret,
	      ret < 0 ? strerror(-ret) : "-");
	for (i = 0; i < N; i++) {
		CHECK(t[i].result >= 0 &&
		      t[i].result <= (long long)(sizeof(header13) + cut),
		      "socket %d: result %lld", i, (long long)t[i].result);
		CHECK(rep.got[i] == t[i].result,
		      "socket %d: received %lld, result says %lld", i,
		      rep.got[i], (long long)t[i].result);
		CHECK(!rep.mismatch[i], "socket %d: wrong byte at %d", i,
		      rep.mismatch[i] - 1);
	}
	CHECK(t[0].result >= 256 * 1024, "socket 0 sent only %lld",
	      (long long)t[0].result);
	close(f.fd);
	unlink(f.path);
	free(frame);
	end();
}

static volatile sig_atomic_t alarms;
static void on_alarm(int sig)
{
	(void)sig;
	alarms++;
}

/*
 * A blocking send to a receiver that does not read is ended by a signal,
 * also under SA_RESTART (a restarted call would send the frame twice).
 */
static void interrupted(struct tfile *f, int restart)
{
	int snd, rcv;
	struct swarmfan_target t;
	struct fan_rx rx = {};
	uint64_t len = 4 * 1024 * 1024, total = sizeof(header13) + len;
	unsigned char *frame = make_frame(f, 0, len, header13, sizeof(header13));
	struct sigaction sa = { .sa_handler = on_alarm };
	struct itimerval it = { .it_value = { 0, 300000 } };
	struct itimerval off = {};
	struct fan_rx_report rep;
	struct fan_rx_proc p;
	long ret;

	begin("signal ends a blocked send (%s): EINTR, progress reported",
	      restart ? "SA_RESTART" : "no SA_RESTART");
	sa.sa_flags = restart ? SA_RESTART : 0;
	sigaction(SIGALRM, &sa, NULL);
	fan_tcp_pairs(1, &snd, &rcv, 32768, 32768);
	t = (struct swarmfan_target){ .fd = snd };
	rx.expect = frame;
	rx.expect_len = total;
	p = fan_rx_start(1, &snd, &rcv, &rx, 1);	/* holds: reads nothing */
	alarms = 0;
	setitimer(ITIMER_REAL, &it, NULL);
	ret = fan_send(dev, f->fd, 0, len, header13, sizeof(header13), &t, 1);
	setitimer(ITIMER_REAL, &off, NULL);
	fan_rx_release(&p);
	close(snd);
	CHECK(fan_rx_finish(&p, &rep) == 0, "receiver failed");
	CHECK(ret == -EINTR, "ioctl returned %ld, want EINTR", ret);
	CHECK(alarms == 1, "%d alarms", (int)alarms);
	CHECK(t.result > 0 && t.result < (long long)total,
	      "result %lld", (long long)t.result);
	CHECK(rep.got[0] == t.result, "received %lld, result %lld", rep.got[0],
	      (long long)t.result);
	CHECK(!rep.mismatch[0], "wrong byte at %d", rep.mismatch[0] - 1);
	signal(SIGALRM, SIG_DFL);
	free(frame);
	end();
}

/*
 * Non-blocking sockets: a receiver that does not read gets what fits and
 * the call moves on; a blocking, reading receiver next to it gets it all.
 * Then the stalled one is resumed from where it stopped.
 */
static void nonblocking(struct tfile *f)
{
	enum { N = 3 };
	int snd[N], rcv[N], i;
	struct swarmfan_target t[N];
	struct fan_rx rx[N] = {};
	uint64_t len = 4 * 1024 * 1024 + 333, total = sizeof(header13) + len;
	unsigned char *frame = make_frame(f, 11, len, header13, sizeof(header13));
	struct fan_rx_report rep;
	struct fan_rx_proc p, p0;
	double t0, took;
	long ret;

	begin("non-blocking: a stalled receiver is left behind, the others complete, then it resumes");
	fan_tcp_pairs(N, snd, rcv, 65536, 65536);
	for (i = 0; i < N; i++) {
		t[i] = (struct swarmfan_target){ .fd = snd[i] };
		rx[i].expect = frame;
		rx[i].expect_len = total;
	}
	fan_set_nonblock(snd[0], 1);	/* the stalled receiver's socket */
	fan_set_nonblock(snd[2], 1);	/* non-blocking, but read */
	/* Socket 0's receiver holds in its own process; 1 and 2 read. */
	p0 = fan_rx_start(1, snd, rcv, rx, 1);
	{
		int s12[2] = { snd[1], snd[2] }, r12[2] = { rcv[1], rcv[2] };

		p = fan_rx_start(2, s12, r12, rx + 1, 0);
	}
	t0 = fan_now_ms(CLOCK_MONOTONIC);
	ret = fan_send(dev, f->fd, 11, len, header13, sizeof(header13), t, N);
	took = fan_now_ms(CLOCK_MONOTONIC) - t0;
	CHECK(t[0].result >= 0 && t[0].result < (long long)total,
	      "stalled socket: result %lld", (long long)t[0].result);
	CHECK(t[1].result == (long long)total, "blocking socket: result %lld",
	      (long long)t[1].result);
	CHECK(t[2].result >= 0 && t[2].result <= (long long)total,
	      "non-blocking reader: result %lld", (long long)t[2].result);
	CHECK(ret == 1 + (t[2].result == (long long)total), "ioctl returned %ld", ret);
	CHECK(took < 60000, "took %.0f ms", took);

	/* Resume socket 2 (blocking now) if it fell behind, then close it. */
	if (t[2].result >= 0 && t[2].result < (long long)total) {
		struct swarmfan_target r2 = { .fd = snd[2], .start = t[2].result };

		fan_set_nonblock(snd[2], 0);
		ret = fan_send(dev, f->fd, 11, len, header13, sizeof(header13), &r2, 1);
		CHECK(ret == 1 && r2.result == (long long)(total - r2.start),
		      "resume of socket 2: %ld, result %lld", ret,
		      (long long)r2.result);
	}
	close(snd[1]);
	close(snd[2]);
	CHECK(fan_rx_finish(&p, &rep) == 0, "receivers failed");
	CHECK(rep.got[0] == (long long)total && rep.got[1] == (long long)total,
	      "received %lld / %lld", rep.got[0], rep.got[1]);
	CHECK(!rep.mismatch[0] && !rep.mismatch[1], "wrong bytes: %d %d",
	      rep.mismatch[0] - 1, rep.mismatch[1] - 1);

	/* Now the stalled receiver reads; resume socket 0 where it stopped. */
	fan_rx_release(&p0);
	{
		struct swarmfan_target r0 = { .fd = snd[0], .start = t[0].result };

		fan_set_nonblock(snd[0], 0);
		ret = fan_send(dev, f->fd, 11, len, header13, sizeof(header13), &r0, 1);
		CHECK(ret == 1 && r0.result == (long long)(total - r0.start),
		      "resume of socket 0: %ld, result %lld", ret,
		      (long long)r0.result);
	}
	close(snd[0]);
	CHECK(fan_rx_finish(&p0, &rep) == 0, "stalled receiver failed");
	CHECK(rep.got[0] == (long long)total && !rep.mismatch[0],
	      "stalled receiver got %lld, mismatch %d", rep.got[0],
	      rep.mismatch[0] - 1);
	free(frame);
	end();
}

/* A blocking socket whose SO_SNDTIMEO expires is treated as would-block. */
static void send_timeout(struct tfile *f)
{
	int snd, rcv;
	struct swarmfan_target t;
	struct fan_rx rx = {};
	struct timeval tv = { 0, 200 * 1000 };
	uint64_t len = 4 * 1024 * 1024, total = sizeof(header13) + len;
	unsigned char *frame = make_frame(f, 0, len, header13, sizeof(header13));
	struct fan_rx_report rep;
	struct fan_rx_proc p;
	long ret;

	begin("SO_SNDTIMEO expires on a stalled receiver: short result, no error");
	fan_tcp_pairs(1, &snd, &rcv, 32768, 32768);
	setsockopt(snd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
	t = (struct swarmfan_target){ .fd = snd };
	rx.expect = frame;
	rx.expect_len = total;
	p = fan_rx_start(1, &snd, &rcv, &rx, 1);	/* holds: reads nothing */
	ret = fan_send(dev, f->fd, 0, len, header13, sizeof(header13), &t, 1);
	fan_rx_release(&p);
	close(snd);
	CHECK(fan_rx_finish(&p, &rep) == 0, "receiver failed");
	CHECK(ret == 0, "ioctl returned %ld", ret);
	CHECK(t.result > 0 && t.result < (long long)total, "result %lld",
	      (long long)t.result);
	CHECK(rep.got[0] == t.result && !rep.mismatch[0],
	      "received %lld, mismatch %d", rep.got[0], rep.mismatch[0] - 1);
	free(frame);
	end();
}

struct close_later {
	int fd;
	struct fan_rx_proc *rx;
};

static void *close_then_release(void *arg)
{
	struct close_later *c = arg;

	usleep(200 * 1000);
	close(c->fd);
	usleep(200 * 1000);
	fan_rx_release(c->rx);
	return NULL;
}

/*
 * Another thread closes a target's fd while the send is blocked on it: the
 * call holds its own reference, so the frame still goes out whole, and the
 * connection closes once the call drops that reference.
 */
static void fd_closed_during_send(struct tfile *f)
{
	int snd, rcv;
	struct swarmfan_target t;
	struct fan_rx rx = {};
	uint64_t len = 2 * 1024 * 1024, total = sizeof(header13) + len;
	unsigned char *frame = make_frame(f, 0, len, header13, sizeof(header13));
	struct fan_rx_report rep;
	struct fan_rx_proc p;
	struct close_later cl;
	pthread_t th;
	long ret;

	begin("target fd closed by another thread mid-send: frame completes, connection then closes");
	fan_tcp_pairs(1, &snd, &rcv, 32768, 32768);
	t = (struct swarmfan_target){ .fd = snd };
	rx.expect = frame;
	rx.expect_len = total;
	p = fan_rx_start(1, &snd, &rcv, &rx, 1);	/* holds until released */
	cl = (struct close_later){ .fd = snd, .rx = &p };
	if (pthread_create(&th, NULL, close_then_release, &cl))
		fan_die("pthread_create");
	ret = fan_send(dev, f->fd, 0, len, header13, sizeof(header13), &t, 1);
	pthread_join(th, NULL);
	CHECK(fan_rx_finish(&p, &rep) == 0, "receiver failed");
	CHECK(ret == 1 && t.result == (long long)total, "ioctl %ld, result %lld",
	      ret, (long long)t.result);
	CHECK(rep.got[0] == (long long)total && !rep.mismatch[0] &&
	      !rep.timed_out, "received %lld, mismatch %d, timed out %d",
	      rep.got[0], rep.mismatch[0] - 1, rep.timed_out);
	free(frame);
	end();
}

/*
 * A send blocked inside the module: the module cannot be removed under it,
 * and SIGKILL ends it (the process dies, its references are dropped; the
 * final rmmod in the guest's init shows the module refcount is back to 0).
 */
static void killed_in_flight(struct tfile *f)
{
	int snd, rcv, st, rc;
	struct fan_rx rx = {};
	unsigned char *frame = make_frame(f, 0, f->size, NULL, 0);
	struct fan_rx_report rep;
	struct fan_rx_proc p;
	pid_t pid;

	begin("send blocked in the module: rmmod refused, SIGKILL ends it");
	fan_tcp_pairs(1, &snd, &rcv, 32768, 32768);
	rx.expect = frame;
	rx.expect_len = f->size;
	p = fan_rx_start(1, &snd, &rcv, &rx, 1);	/* holds: reads nothing */
	pid = fork();
	if (pid == 0) {
		struct swarmfan_target t = { .fd = snd };

		fan_send(dev, f->fd, 0, f->size, NULL, 0, &t, 1);
		_exit(0);	/* only if the send did not block */
	}
	close(snd);
	close(dev);		/* only the blocked child holds the device now */
	usleep(500 * 1000);
	CHECK(waitpid(pid, &st, WNOHANG) == 0, "the send did not block");
	rc = system("rmmod swarmfan 2>/dev/null");
	CHECK(rc != 0, "rmmod succeeded under a blocked send");
	kill(pid, SIGKILL);
	CHECK(waitpid(pid, &st, 0) == pid && WIFSIGNALED(st) &&
	      WTERMSIG(st) == SIGKILL, "sender status %#x", st);
	dev = open(SWARMFAN_DEVICE, O_RDWR);
	CHECK(dev >= 0, "/dev/swarmfan gone after the refused rmmod");
	CHECK(fan_rx_finish(&p, &rep) == 0, "receiver failed");
	CHECK(rep.got[0] > 0 && rep.got[0] < (long long)f->size,
	      "received %lld", rep.got[0]);
	CHECK(!rep.mismatch[0], "wrong byte at %d", rep.mismatch[0] - 1);
	free(frame);
	end();
}

void failure_cases(struct tfile *tm, struct tfile *ext, const char *tm_dir,
		   const char *ext_dir)
{
	receiver_closes(tm);
	receiver_closes(ext);
	file_truncated(tm_dir, "tmpfs");
	file_truncated(ext_dir, "ext4");
	interrupted(tm, 0);
	interrupted(ext, 1);
	nonblocking(tm);
	send_timeout(tm);
	fd_closed_during_send(ext);
	killed_in_flight(ext);
}
