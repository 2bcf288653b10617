// SPDX-License-Identifier: GPL-2.0
/* The in-guest test harness of swarmfan_test (see harness.h). */
#define _GNU_SOURCE
#include <stdarg.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/time.h>

#include "harness.h"

int dev;
int failures, passes;
char case_name[160];
int case_failed;

void begin(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(case_name, sizeof(case_name), fmt, ap);
	va_end(ap);
	case_failed = 0;
}

void end(void)
{
	if (case_failed) {
		failures++;
	} else {
		passes++;
		printf("ok - %s\n", case_name);
	}
	fflush(stdout);
}

void tfile_create(struct tfile *f, const char *dir, const char *name,
		  uint64_t size, uint64_t seed, uint64_t hole)
{
	snprintf(f->path, sizeof(f->path), "%s/%s", dir, name);
	f->size = size;
	f->seed = seed;
	f->sparse_hole = hole;
	if (hole) {
		/* A hole first, then data: the module must send zeros. */
		unsigned char *buf = malloc(size - hole);
		int fd = open(f->path, O_WRONLY | O_CREAT | O_TRUNC, 0644);

		if (!buf || fd < 0)
			fan_die("sparse file");
		fan_fill(buf, size - hole, seed, hole);
		if (pwrite(fd, buf, size - hole, hole) != (ssize_t)(size - hole) ||
		    fsync(fd))
			fan_die("pwrite sparse");
		close(fd);
		free(buf);
	} else {
		fan_make_file(f->path, size, seed);
	}
	f->fd = open(f->path, O_RDONLY);
	if (f->fd < 0)
		fan_die("open test file");
}

/* The frame (header + file range) as the receivers must see it. */
unsigned char *make_frame(const struct tfile *f, uint64_t off, uint64_t len,
			  const unsigned char *hdr, uint32_t hlen)
{
	unsigned char *frame = malloc(hlen + len + 1);

	if (!frame)
		fan_die("malloc frame");
	memcpy(frame, hdr, hlen);
	if (pread(f->fd, frame + hlen, len, off) != (ssize_t)len)
		fan_die("pread frame");
	return frame;
}

/*
 * Empties the page cache. drop_caches skips pages still sitting in another
 * CPU's LRU batch; fadvise(DONTNEED) on the file drains those and retries.
 */
static void drop_caches(const struct tfile *f)
{
	int fd;

	sync();
	fd = open("/proc/sys/vm/drop_caches", O_WRONLY);
	if (fd < 0 || write(fd, "3", 1) != 1)
		fan_die("drop_caches");
	close(fd);
	if (posix_fadvise(f->fd, 0, 0, POSIX_FADV_DONTNEED))
		fan_die("fadvise");
}

/*
 * Pages the previous case sent can stay pinned for a moment by socket
 * buffers still being released (see main() on skb_defer_max); retry until
 * the file is cold.
 */
void make_cold(const struct tfile *f)
{
	int i;

	drop_caches(f);
	for (i = 0; i < 30 && cached_fraction(f) >= 0.05; i++) {
		usleep(100 * 1000);
		drop_caches(f);
	}
}

/* Fraction of the file's pages in the page cache (mincore). */
double cached_fraction(const struct tfile *f)
{
	size_t pages = (f->size + 4095) / 4096, i, in = 0;
	unsigned char *vec = malloc(pages);
	void *map = mmap(NULL, f->size, PROT_READ, MAP_SHARED, f->fd, 0);

	if (!vec || map == MAP_FAILED)
		fan_die("mincore map");
	if (mincore(map, f->size, vec))
		fan_die("mincore");
	for (i = 0; i < pages; i++)
		in += vec[i] & 1;
	munmap(map, f->size);
	free(vec);
	return (double)in / pages;
}

unsigned char header13[13] = "SWRMhdr-0001";
unsigned char header_max[SWARMFAN_MAX_HEADER];

/*
 * Sends file range [off, off+len) after hdr to n fresh loopback sockets
 * (socket i starting at frame byte start[i], or 0) and checks that every
 * receiver got exactly the rest of the frame.
 */
void fanout_case(const struct tfile *f, uint64_t off, uint64_t len,
		 const unsigned char *hdr, uint32_t hlen, int n,
		 const uint64_t *start)
{
	unsigned char *frame = make_frame(f, off, len, hdr, hlen);

	fanout_case_frame(f, off, len, hdr, hlen, n, start, frame);
	free(frame);
}

void fanout_case_frame(const struct tfile *f, uint64_t off, uint64_t len,
		       const unsigned char *hdr, uint32_t hlen, int n,
		       const uint64_t *start, const unsigned char *frame)
{
	int snd[FAN_MAX_SOCKS], rcv[FAN_MAX_SOCKS], i, complete = 0;
	struct swarmfan_target t[FAN_MAX_SOCKS];
	struct fan_rx rx[FAN_MAX_SOCKS] = {};
	uint64_t total = hlen + len;
	struct fan_rx_report rep;
	struct fan_rx_proc p;
	long ret;

	fan_tcp_pairs(n, snd, rcv, 0, 0);
	for (i = 0; i < n; i++) {
		uint64_t s = start ? start[i] : 0;

		t[i] = (struct swarmfan_target){ .fd = snd[i], .start = s };
		rx[i].expect = frame + s;
		rx[i].expect_len = total - s;
	}
	p = fan_rx_start(n, snd, rcv, rx, 0);
	ret = fan_send(dev, f->fd, off, len, hdr, hlen, t, n);
	fan_close_all(n, snd);
	CHECK(fan_rx_finish(&p, &rep) == 0, "receiver process failed");
	for (i = 0; i < n; i++) {
		uint64_t s = start ? start[i] : 0;

		complete += s + t[i].result == total;
		CHECK(t[i].result == (long long)(total - s),
		      "socket %d: result %lld, want %llu", i,
		      (long long)t[i].result, (unsigned long long)(total - s));
		CHECK(rep.got[i] == (long long)(total - s),
		      "socket %d: received %lld of %llu", i, rep.got[i],
		      (unsigned long long)(total - s));
		CHECK(!rep.mismatch[i], "socket %d: wrong byte at %d", i,
		      rep.mismatch[i] - 1);
	}
	CHECK(ret == complete && ret == n, "ioctl returned %ld (%s), want %d",
	      ret, ret < 0 ? strerror(-ret) : "-", n);
	CHECK(!rep.timed_out, "receiver timed out");
}

/* An fd number that is closed and stays closed (new fds take low numbers). */
int closed_fd(void)
{
	int fd = dup2(0, 900);

	close(fd);
	return 900;
}
