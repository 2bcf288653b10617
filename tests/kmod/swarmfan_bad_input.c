// SPDX-License-Identifier: GPL-2.0
/*
 * Bad input to SWARMFAN_IOC_SEND: every malformed struct, limit, pointer,
 * file and socket gets its own error code, sends nothing it should not, and
 * never upsets the kernel (the guest's init checks dmesg afterwards).
 */
#define _GNU_SOURCE
#include <stdarg.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/time.h>

#include "harness.h"

static struct swarmfan_send good_req(const struct tfile *f,
				     struct swarmfan_target *t, uint32_t nr)
{
	return (struct swarmfan_send){
		.version = SWARMFAN_ABI_VERSION,
		.file_fd = f->fd,
		.header_len = sizeof(header13),
		.offset = 0,
		.length = 10000,
		.header = (uintptr_t)header13,
		.targets = (uintptr_t)t,
		.nr_targets = nr,
	};
}

static long raw_ioctl(unsigned long cmd, void *arg)
{
	int r = ioctl(dev, cmd, arg);

	return r < 0 ? -errno : r;
}

/* A call-level rejection must leave the socket untouched: nothing sent. */
static void expect_rejected(const struct tfile *f, const char *what,
			    void (*mutate)(struct swarmfan_send *), long want)
{
	int snd, rcv;
	struct swarmfan_target t;
	struct swarmfan_send req;
	char c;
	long ret;

	begin("bad input: %s -> %s", what, strerror(-want));
	fan_tcp_pairs(1, &snd, &rcv, 0, 0);
	t = (struct swarmfan_target){ .fd = snd, .result = 12345 };
	req = good_req(f, &t, 1);
	mutate(&req);
	ret = raw_ioctl(SWARMFAN_IOC_SEND, &req);
	CHECK(ret == want, "got %ld (%s)", ret, ret < 0 ? strerror(-ret) : "-");
	CHECK(t.result == 12345, "target touched: result %lld",
	      (long long)t.result);
	CHECK(recv(rcv, &c, 1, MSG_DONTWAIT) < 0 && errno == EAGAIN,
	      "bytes were sent");
	close(snd);
	close(rcv);
	end();
}

static int scratch_fd = -1;	/* an fd the mutators may use */

static void m_version0(struct swarmfan_send *r) { r->version = 0; }
static void m_version2(struct swarmfan_send *r) { r->version = 2; }
static void m_flags(struct swarmfan_send *r) { r->flags = 1; }
static void m_reserved(struct swarmfan_send *r) { r->reserved = 1; }
static void m_nr0(struct swarmfan_send *r) { r->nr_targets = 0; }
static void m_nr1025(struct swarmfan_send *r) { r->nr_targets = 1025; }
static void m_nrmax(struct swarmfan_send *r) { r->nr_targets = 0xffffffffu; }
static void m_hdr4097(struct swarmfan_send *r) { r->header_len = 4097; }
static void m_hdrmax(struct swarmfan_send *r) { r->header_len = 0xffffffffu; }
static void m_len_big(struct swarmfan_send *r) { r->length = SWARMFAN_MAX_LENGTH + 1; }
static void m_len_max(struct swarmfan_send *r) { r->length = UINT64_MAX; }
static void m_off_eof(struct swarmfan_send *r) { r->offset = 5 * 1024 * 1024; }
static void m_off_wrap(struct swarmfan_send *r) { r->offset = UINT64_MAX - 5; }
static void m_off_past0(struct swarmfan_send *r) { r->offset = 1ULL << 40; r->length = 0; }
static void m_fd_neg(struct swarmfan_send *r) { r->file_fd = -1; }
static void m_fd_closed(struct swarmfan_send *r) { r->file_fd = closed_fd(); }
static void m_fd_big(struct swarmfan_send *r) { r->file_fd = 0x7fffffff; }
static void m_fd_scratch(struct swarmfan_send *r) { r->file_fd = scratch_fd; r->length = 0; r->offset = 0; }
static void m_targets_null(struct swarmfan_send *r) { r->targets = 0; }
static void m_targets_one(struct swarmfan_send *r) { r->targets = 1; }
static void m_targets_kernel(struct swarmfan_send *r) { r->targets = 0xffffffff81000000ULL; }
static void m_targets_noncanon(struct swarmfan_send *r) { r->targets = 0x8000000000000000ULL; }
static void m_header_null(struct swarmfan_send *r) { r->header = 0; }
static void m_header_kernel(struct swarmfan_send *r) { r->header = 0xffff888000000000ULL; }

static void *readonly_page;

static void bad_call_level(struct tfile *tm)
{
	const struct {
		const char *what;
		void (*mutate)(struct swarmfan_send *);
		long want;
	} cases[] = {
		{ "version 0", m_version0, -EINVAL },
		{ "version 2", m_version2, -EINVAL },
		{ "flags set", m_flags, -EINVAL },
		{ "reserved set", m_reserved, -EINVAL },
		{ "no targets", m_nr0, -EINVAL },
		{ "1025 targets", m_nr1025, -E2BIG },
		{ "2^32-1 targets", m_nrmax, -E2BIG },
		{ "header of 4097 bytes", m_hdr4097, -EMSGSIZE },
		{ "header of 2^32-1 bytes", m_hdrmax, -EMSGSIZE },
		{ "length 1 GiB + 1", m_len_big, -EFBIG },
		{ "length 2^64-1", m_len_max, -EFBIG },
		{ "range past EOF", m_off_eof, -ENXIO },
		/* A negative loff_t: rw_verify_area() refuses it, as for sendfile. */
		{ "offset + length wraps 2^64", m_off_wrap, -EINVAL },
		{ "offset past EOF, length 0", m_off_past0, -ENXIO },
		{ "file fd -1", m_fd_neg, -EBADF },
		{ "closed file fd", m_fd_closed, -EBADF },
		{ "file fd 2^31-1", m_fd_big, -EBADF },
		{ "targets NULL", m_targets_null, -EFAULT },
		{ "targets at address 1", m_targets_one, -EFAULT },
		{ "targets in kernel space", m_targets_kernel, -EFAULT },
		{ "targets non-canonical", m_targets_noncanon, -EFAULT },
		{ "header NULL", m_header_null, -EFAULT },
		{ "header in kernel space", m_header_kernel, -EFAULT },
	};
	struct { const char *what; int fd; long want; } files[6];
	int sp[2], pp[2], wr, nf = 0;
	size_t i;

	readonly_page = mmap(NULL, 4096, PROT_READ | PROT_WRITE,
			     MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (readonly_page == MAP_FAILED)
		fan_die("mmap");
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		expect_rejected(tm, cases[i].what, cases[i].mutate, cases[i].want);

	/* Readable but not writable: the results could not be returned. */
	{
		int snd, rcv;
		struct swarmfan_target *ro = readonly_page;
		struct swarmfan_send req;
		char c;
		long ret;

		begin("bad input: targets array read-only -> %s", strerror(EFAULT));
		fan_tcp_pairs(1, &snd, &rcv, 0, 0);
		memset(ro, 0, 4096);
		ro->fd = snd;
		mprotect(readonly_page, 4096, PROT_READ);
		req = good_req(tm, ro, 1);
		ret = raw_ioctl(SWARMFAN_IOC_SEND, &req);
		CHECK(ret == -EFAULT, "got %ld", ret);
		CHECK(recv(rcv, &c, 1, MSG_DONTWAIT) < 0 && errno == EAGAIN,
		      "bytes were sent although results cannot be written");
		mprotect(readonly_page, 4096, PROT_READ | PROT_WRITE);
		close(snd);
		close(rcv);
		end();
	}

	/* Files that are not sendable. */
	if (socketpair(AF_UNIX, SOCK_STREAM, 0, sp) || pipe(pp))
		fan_die("socketpair/pipe");
	wr = open(tm->path, O_WRONLY);
	files[nf++] = (typeof(files[0])){ "file opened write-only", wr, -EBADF };
	files[nf++] = (typeof(files[0])){ "file is a directory", open("/", O_RDONLY | O_DIRECTORY), -EINVAL };
	files[nf++] = (typeof(files[0])){ "file is a pipe", pp[0], -EINVAL };
	files[nf++] = (typeof(files[0])){ "file is a socket", sp[0], -EINVAL };
	files[nf++] = (typeof(files[0])){ "file is /proc (no page cache)", open("/proc/self/status", O_RDONLY), -EOPNOTSUPP };
	files[nf++] = (typeof(files[0])){ "file opened O_PATH", open(tm->path, O_PATH), -EBADF };
	for (i = 0; i < (size_t)nf; i++) {
		if (files[i].fd < 0)
			fan_die(files[i].what);
		scratch_fd = files[i].fd;
		expect_rejected(tm, files[i].what, m_fd_scratch, files[i].want);
		close(files[i].fd);
	}
	close(sp[1]);
	close(pp[1]);

	{
		struct swarmfan_send req = good_req(tm, NULL, 1);
		struct { struct swarmfan_send s; uint64_t extra; } bigger = { req, 0 };
		long ret;

		begin("bad input: unknown ioctl and wrong struct size -> ENOTTY");
		ret = raw_ioctl(_IO(SWARMFAN_IOC_MAGIC, 2), &req);
		CHECK(ret == -ENOTTY, "unknown cmd: %ld", ret);
		ret = raw_ioctl(_IOW(SWARMFAN_IOC_MAGIC, 1, bigger), &bigger);
		CHECK(ret == -ENOTTY, "bigger struct: %ld", ret);
		ret = raw_ioctl(_IOW(SWARMFAN_IOC_MAGIC, 1, uint32_t), &req);
		CHECK(ret == -ENOTTY, "smaller struct: %ld", ret);
		end();

		begin("bad input: struct pointer invalid -> EFAULT");
		ret = raw_ioctl(SWARMFAN_IOC_SEND, NULL);
		CHECK(ret == -EFAULT, "NULL: %ld", ret);
		ret = raw_ioctl(SWARMFAN_IOC_SEND, (void *)0xffffffff81000000ULL);
		CHECK(ret == -EFAULT, "kernel address: %ld", ret);
		end();
	}
}

/*
 * Bad targets next to good ones: each bad one gets its own error, the good
 * ones still get the whole frame.
 */
static void bad_targets(struct tfile *tm)
{
	enum { NGOOD = 3 };
	int snd[NGOOD], rcv[NGOOD], udp, unconn, lsn, us[2], dupfd, i, n = 0;
	struct swarmfan_target t[16];
	long want[16];
	struct fan_rx rx[NGOOD] = {};
	struct sockaddr_in a = { .sin_family = AF_INET };
	socklen_t alen = sizeof(a);
	uint64_t len = 200001, total = sizeof(header13) + len;
	unsigned char *frame = make_frame(tm, 99, len, header13, sizeof(header13));
	struct fan_rx_report rep;
	struct fan_rx_proc p;
	long ret;

	begin("bad targets among good ones: each gets its errno, good ones complete");
	fan_tcp_pairs(NGOOD, snd, rcv, 0, 0);
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	udp = socket(AF_INET, SOCK_DGRAM, 0);
	/* A connected UDP socket: connected, but not a stream. */
	if (bind(udp, (struct sockaddr *)&a, sizeof(a)) ||
	    getsockname(udp, (struct sockaddr *)&a, &alen) ||
	    connect(udp, (struct sockaddr *)&a, sizeof(a)))
		fan_die("udp");
	unconn = socket(AF_INET, SOCK_STREAM, 0);
	lsn = socket(AF_INET6, SOCK_STREAM, 0);
	if (lsn < 0)
		lsn = socket(AF_INET, SOCK_STREAM, 0);
	if (listen(lsn, 1) || socketpair(AF_UNIX, SOCK_STREAM, 0, us))
		fan_die("listen/socketpair");
	dupfd = dup(snd[1]);

#define ADD(fdv, w) do { t[n] = (struct swarmfan_target){ .fd = (fdv) }; want[n++] = (w); } while (0)
	ADD(snd[0], total);
	ADD(tm->fd, -ENOTSOCK);
	ADD(udp, -EPROTOTYPE);
	ADD(us[0], -EPROTOTYPE);
	ADD(unconn, -ENOTCONN);
	ADD(lsn, -ENOTCONN);
	ADD(closed_fd(), -EBADF);
	ADD(-1, -EBADF);
	ADD(snd[1], total);
	ADD(snd[0], -EINVAL);		/* the same fd again */
	ADD(dupfd, -EINVAL);		/* the same socket through dup() */
	ADD(snd[2], -EINVAL);
	t[n - 1].reserved = 7;		/* reserved field set */
	ADD(snd[2], -EINVAL);
	t[n - 1].start = total + 1;	/* start beyond the frame */
	ADD(snd[2], total);		/* now fine */
#undef ADD

	for (i = 0; i < NGOOD; i++) {
		rx[i].expect = frame;
		rx[i].expect_len = total;
	}
	p = fan_rx_start(NGOOD, snd, rcv, rx, 0);
	ret = fan_send(dev, tm->fd, 99, len, header13, sizeof(header13), t, n);
	fan_close_all(NGOOD, snd);
	close(dupfd);
	CHECK(fan_rx_finish(&p, &rep) == 0, "receiver failed");
	CHECK(ret == NGOOD, "ioctl returned %ld, want %d", ret, NGOOD);
	for (i = 0; i < n; i++)
		CHECK(t[i].result == want[i], "target %d: result %lld, want %ld",
		      i, (long long)t[i].result, want[i]);
	for (i = 0; i < NGOOD; i++)
		CHECK(rep.got[i] == (long long)total && !rep.mismatch[i],
		      "receiver %d: got %lld, mismatch at %d", i, rep.got[i],
		      rep.mismatch[i] - 1);
	close(udp);
	close(unconn);
	close(lsn);
	close(us[0]);
	close(us[1]);
	free(frame);
	end();

	{
		/* 1024 targets, all the same socket: one sends, 1023 refused. */
		static struct swarmfan_target many[SWARMFAN_MAX_TARGETS];
		struct fan_rx one = { .expect = NULL, .discard = 1 };
		int s, r, bad = 0;

		begin("1024 targets (the maximum), all one socket: 1 sent, 1023 -EINVAL");
		fan_tcp_pairs(1, &s, &r, 0, 0);
		for (i = 0; i < SWARMFAN_MAX_TARGETS; i++)
			many[i] = (struct swarmfan_target){ .fd = s };
		p = fan_rx_start(1, &s, &r, &one, 0);
		ret = fan_send(dev, tm->fd, 0, 100000, NULL, 0, many,
			       SWARMFAN_MAX_TARGETS);
		close(s);
		CHECK(fan_rx_finish(&p, &rep) == 0, "receiver failed");
		CHECK(ret == 1, "ioctl returned %ld", ret);
		CHECK(many[0].result == 100000, "first: %lld", (long long)many[0].result);
		for (i = 1; i < SWARMFAN_MAX_TARGETS; i++)
			bad += many[i].result != -EINVAL;
		CHECK(bad == 0, "%d duplicates not refused", bad);
		CHECK(rep.got[0] == 100000, "received %lld", rep.got[0]);
		end();
	}
}

/* A receiver resets its connection mid-send; the others are unaffected. */

void bad_input_cases(struct tfile *tm)
{
	bad_call_level(tm);
	bad_targets(tm);
}
