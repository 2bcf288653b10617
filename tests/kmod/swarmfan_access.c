// SPDX-License-Identifier: GPL-2.0
/*
 * Access: /dev/swarmfan allows no more than sendfile(2) would with the same
 * descriptors (issue 14). Each refusal is compared with what sendfile()
 * itself does on the same descriptors; a call generates the fsnotify
 * events a sendfile() does.
 */
#define _GNU_SOURCE
#include <sys/inotify.h>
#include <sys/sendfile.h>

#include "harness.h"

/* One send of [off, off+len) of fd to a fresh socket pair, by the module. */
static long module_send(int fd, uint64_t off, uint64_t len, int *sent)
{
	struct swarmfan_target t;
	int snd, rcv;
	char buf[4096];
	long ret;
	ssize_t n;

	fan_tcp_pairs(1, &snd, &rcv, 0, 0);
	t = (struct swarmfan_target){ .fd = snd, .result = 12345 };
	ret = fan_send(dev, fd, off, len, NULL, 0, &t, 1);
	close(snd);
	*sent = 0;
	while ((n = recv(rcv, buf, sizeof(buf), 0)) > 0)
		*sent += n;
	close(rcv);
	return ret;
}

/* The same with sendfile(): its result, or -errno; *sent as above. */
static long sendfile_send(int fd, uint64_t off, uint64_t len, int *sent)
{
	off_t pos = (off_t)off;
	int snd, rcv;
	char buf[4096];
	long ret;
	ssize_t n;

	fan_tcp_pairs(1, &snd, &rcv, 0, 0);
	ret = sendfile(snd, fd, &pos, len);
	if (ret < 0)
		ret = -errno;
	close(snd);
	*sent = 0;
	while ((n = recv(rcv, buf, sizeof(buf), 0)) > 0)
		*sent += n;
	close(rcv);
	return ret;
}

static const char *err_name(long r)
{
	return r < 0 ? strerror(-r) : "no error";
}

/* A refused range or descriptor: both calls fail alike, nothing is sent. */
static void same_refusal(const char *what, int fd, uint64_t off, uint64_t len,
			 long want)
{
	int msent, ssent;
	long m, s;

	begin("access: %s -> %s, as sendfile", what, err_name(want));
	m = module_send(fd, off, len, &msent);
	s = sendfile_send(fd, off, len, &ssent);
	CHECK(m == want, "module: %ld (%s)", m, err_name(m));
	CHECK(s == want, "sendfile: %ld (%s)", s, err_name(s));
	CHECK(msent == 0 && ssent == 0, "bytes sent: module %d, sendfile %d",
	      msent, ssent);
	end();
}

static void sendfile_checks(struct tfile *tm)
{
	int wr = open(tm->path, O_WRONLY);
	int msent, ssent;
	long m, s;

	if (wr < 0)
		fan_die("open O_WRONLY");
	same_refusal("file opened O_WRONLY", wr, 0, 10000, -EBADF);
	close(wr);
	same_refusal("offset -4096", tm->fd, -4096ULL, 10000, -EINVAL);
	same_refusal("offset 2^64-6, length 10000", tm->fd, UINT64_MAX - 5,
		     10000, -EINVAL);
	same_refusal("offset 2^63-100 + length 10000 overflows loff_t", tm->fd,
		     (1ULL << 63) - 100, 10000, -EINVAL);

	/*
	 * Past the end: sendfile() sends what there is (a short count, 0 at
	 * or past EOF); a frame is all or nothing, so the module refuses the
	 * call and sends nothing. Never a byte past EOF from either.
	 */
	begin("access: range past EOF -> ENXIO, nothing sent (sendfile: 0 bytes)");
	m = module_send(tm->fd, tm->size + 1, 100, &msent);
	s = sendfile_send(tm->fd, tm->size + 1, 100, &ssent);
	CHECK(m == -ENXIO, "module: %ld (%s)", m, err_name(m));
	CHECK(s == 0, "sendfile: %ld (%s)", s, err_name(s));
	CHECK(msent == 0 && ssent == 0, "bytes sent: module %d, sendfile %d",
	      msent, ssent);
	end();
	begin("access: range over EOF -> ENXIO, nothing sent (sendfile: the 10 bytes before EOF)");
	m = module_send(tm->fd, tm->size - 10, 100, &msent);
	s = sendfile_send(tm->fd, tm->size - 10, 100, &ssent);
	CHECK(m == -ENXIO, "module: %ld (%s)", m, err_name(m));
	CHECK(s == 10 && ssent == 10, "sendfile: %ld (%s), %d bytes", s,
	      err_name(s), ssent);
	CHECK(msent == 0, "module sent %d bytes", msent);
	end();
}

/* 1 if an event with mask bit `want` arrives on the inotify fd in time. */
static int inotify_saw(int in, uint32_t want, int timeout_ms)
{
	char buf[4096] __attribute__((aligned(8)));
	struct pollfd p = { .fd = in, .events = POLLIN };
	double deadline = fan_now_ms(CLOCK_MONOTONIC) + timeout_ms;
	int seen = 0;

	for (;;) {
		int left = deadline - fan_now_ms(CLOCK_MONOTONIC);
		ssize_t n;
		char *at;

		if (left < 0)
			left = 0;
		if (poll(&p, 1, left) <= 0)
			return seen;
		n = read(in, buf, sizeof(buf));
		for (at = buf; n > 0 && at < buf + n;) {
			struct inotify_event *ev = (struct inotify_event *)at;

			seen |= !!(ev->mask & want);
			at += sizeof(*ev) + ev->len;
		}
		if (seen || left == 0)
			return seen;
	}
}

static void fsnotify_events(struct tfile *tm)
{
	int in = inotify_init1(IN_NONBLOCK);
	int sent, saw;
	long r;

	if (in < 0 || inotify_add_watch(in, tm->path, IN_ACCESS) < 0)
		fan_die("inotify");
	begin("access: a call that sends file bytes makes IN_ACCESS, as sendfile; header only does not");
	r = sendfile_send(tm->fd, 0, 5000, &sent);
	CHECK(r == 5000, "sendfile: %ld", r);
	CHECK(inotify_saw(in, IN_ACCESS, 10000), "no IN_ACCESS from sendfile");
	r = module_send(tm->fd, 0, 5000, &sent);
	CHECK(r == 1 && sent == 5000, "module: %ld, %d bytes", r, sent);
	CHECK(inotify_saw(in, IN_ACCESS, 10000), "no IN_ACCESS from the module");
	/* Events are queued before the call returns: none now means none. */
	r = module_send(tm->fd, 0, 0, &sent);
	saw = inotify_saw(in, IN_ACCESS, 0);
	CHECK(r == 1 && !saw, "header-only call: %ld, IN_ACCESS %d", r, saw);
	end();
	close(in);
}

void access_cases(struct tfile *tm, const char *tm_dir)
{
	(void)tm_dir;
	sendfile_checks(tm);
	fsnotify_events(tm);
}
