// SPDX-License-Identifier: GPL-2.0
/*
 * swarmfan_test: functional and bad-input tests of /dev/swarmfan, run as
 * root inside the test VM (tools/vm/run-kmod-vm). Every case talks to the
 * real module over real loopback TCP and checks what the receivers got.
 *
 *   swarmfan_test TMPFS_DIR EXT4_DIR
 *
 * Prints one "ok"/"not ok" line per case and exits 0 only if all passed.
 * This file: the functional cases (identical bytes on every receiver) and
 * main(); swarmfan_bad_input.c, swarmfan_failures.c and swarmfan_access.c
 * hold the rest.
 * Dropping the page cache (cold-cache cases) needs /proc/sys/vm/drop_caches.
 */
#define _GNU_SOURCE
#include <stdarg.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/time.h>

#include "harness.h"

static void functional(struct tfile *tm, struct tfile *ext, struct tfile *tm_sparse,
		       struct tfile *ext_sparse)
{
	static const int counts[] = { 1, 2, 3, 4, 7, 8, 16, 31, 64 };
	struct tfile *files[] = { tm, ext };
	size_t c, fi;

	for (fi = 0; fi < 2; fi++) {
		struct tfile *f = files[fi];

		for (c = 0; c < sizeof(counts) / sizeof(counts[0]); c++) {
			int n = counts[c];
			/* ~3 MiB of traffic per case, never page-aligned. */
			uint64_t len = 3 * 1024 * 1024 / n + 4097 + 13 * c;
			uint64_t off = 4096 * c + 123 + fi;
			int cold = fi == 1 && (c % 2 == 0);

			if (cold) {
				make_cold(f);
				begin("%s: %d sockets, offset %llu, length %llu, cold cache",
				      f->path, n, (unsigned long long)off,
				      (unsigned long long)len);
				CHECK(cached_fraction(f) < 0.05,
				      "file still cached (%.2f)", cached_fraction(f));
			} else {
				begin("%s: %d sockets, offset %llu, length %llu, warm cache",
				      f->path, n, (unsigned long long)off,
				      (unsigned long long)len);
			}
			fanout_case(f, off, len, header13, c % 3 ? sizeof(header13) : 0,
				    n, NULL);
			end();
		}
		begin("%s: whole file, 5 sockets, max header", f->path);
		fanout_case(f, 0, f->size, header_max, sizeof(header_max), 5, NULL);
		end();
		begin("%s: last byte only, 3 sockets", f->path);
		fanout_case(f, f->size - 1, 1, header13, sizeof(header13), 3, NULL);
		end();
		begin("%s: header only (length 0), 4 sockets", f->path);
		fanout_case(f, f->size, 0, header13, sizeof(header13), 4, NULL);
		end();
		{
			uint64_t len = 300000, hl = sizeof(header13);
			uint64_t start[6] = { 0, 5, hl, hl + 1000, hl + 4096 * 3 + 7,
					      hl + len };

			begin("%s: resume, sockets starting at 6 different frame points",
			      f->path);
			fanout_case(f, 777, len, header13, hl, 6, start);
			end();
		}
	}
	{
		/* A memfd is a shmem file without a mount: also the tmpfs path. */
		struct tfile mf = { .path = "memfd", .size = 1000000, .seed = 9 };
		unsigned char *buf = malloc(mf.size);

		mf.fd = memfd_create("swarmfan-test", 0);
		if (mf.fd < 0 || !buf)
			fan_die("memfd_create");
		fan_fill(buf, mf.size, mf.seed, 0);
		if (write(mf.fd, buf, mf.size) != (ssize_t)mf.size)
			fan_die("write memfd");
		begin("memfd: 6 sockets, unaligned range");
		fanout_case(&mf, 4095, mf.size - 4095 - 3, header13,
			    sizeof(header13), 6, NULL);
		end();
		close(mf.fd);
		free(buf);
	}
	begin("%s: 1024 sockets (the maximum), 16 KiB frame", tm->path);
	fanout_case(tm, 5000, 16 * 1024 + 7, header13, sizeof(header13),
		    SWARMFAN_MAX_TARGETS, NULL);
	end();
	begin("%s: sparse tmpfs file across its hole, 3 sockets", tm_sparse->path);
	fanout_case(tm_sparse, 1000, tm_sparse->size - 2000, header13,
		    sizeof(header13), 3, NULL);
	end();
	make_cold(ext_sparse);
	begin("%s: sparse ext4 file across its hole, 3 sockets, cold", ext_sparse->path);
	CHECK(cached_fraction(ext_sparse) < 0.05, "file still cached (%.2f)",
	      cached_fraction(ext_sparse));
	fanout_case(ext_sparse, 1000, ext_sparse->size - 2000, header13,
		    sizeof(header13), 3, NULL);
	end();
}

/* Several processes fanning out from the same files at the same time. */
static void concurrent(struct tfile *tm, struct tfile *ext)
{
	pid_t pids[4];
	int i, bad = 0;

	begin("4 concurrent callers x 8 sockets (tmpfs and ext4)");
	fflush(stdout);
	for (i = 0; i < 4; i++) {
		pids[i] = fork();
		if (pids[i] == 0) {
			struct tfile *f = i % 2 ? ext : tm;

			case_failed = 0;
			fanout_case(f, 1000 * i + 1, 700000 + i, header13,
				    sizeof(header13), 8, NULL);
			fflush(stdout);
			_exit(case_failed);
		}
	}
	for (i = 0; i < 4; i++) {
		int st;

		waitpid(pids[i], &st, 0);
		bad += !WIFEXITED(st) || WEXITSTATUS(st);
	}
	CHECK(bad == 0, "%d callers failed", bad);
	end();
}

int main(int argc, char **argv)
{
	struct tfile tm, ext, tm_sparse, ext_sparse;

	if (argc != 3) {
		fprintf(stderr, "usage: %s TMPFS_DIR EXT4_DIR\n", argv[0]);
		return 2;
	}
	setvbuf(stdout, NULL, _IOLBF, 0);
	{
		/* 1024 loopback pairs need 2048 descriptors and a few more. */
		struct rlimit rl = { 4096, 4096 };

		if (setrlimit(RLIMIT_NOFILE, &rl))
			fan_die("RLIMIT_NOFILE 4096");
	}
	signal(SIGPIPE, SIG_IGN);
	dev = open(SWARMFAN_DEVICE, O_RDWR);
	if (dev < 0)
		fan_die(SWARMFAN_DEVICE);
	memset(header_max, 0xA5, sizeof(header_max));
	/*
	 * Since 5.19 recv() hands a consumed skb back to the CPU that built
	 * it, which frees it on its next network softirq. On a loopback
	 * zero-copy send those skbs hold page-cache pages, so without this a
	 * "cold cache" case can find pages of the previous case still pinned.
	 */
	{
		int fd = open("/proc/sys/net/core/skb_defer_max", O_WRONLY);

		if (fd >= 0) {
			if (write(fd, "0", 1) != 1)
				fan_die("skb_defer_max");
			close(fd);
		}
	}

	tfile_create(&tm, argv[1], "data.bin", 5 * 1024 * 1024 + 1234, 1, 0);
	tfile_create(&ext, argv[2], "data.bin", 5 * 1024 * 1024 + 4321, 2, 0);
	tfile_create(&tm_sparse, argv[1], "sparse.bin", 3 * 1024 * 1024 + 5,
		     3, 2 * 1024 * 1024);
	tfile_create(&ext_sparse, argv[2], "sparse.bin", 3 * 1024 * 1024 + 5,
		     4, 2 * 1024 * 1024);

	functional(&tm, &ext, &tm_sparse, &ext_sparse);
	concurrent(&tm, &ext);
	bad_input_cases(&tm);
	failure_cases(&tm, &ext, argv[1], argv[2]);
	access_cases(&tm, argv[1]);

	printf("swarmfan_test: %d passed, %d failed\n", passes, failures);
	return failures ? 1 : 0;
}
