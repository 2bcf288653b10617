// SPDX-License-Identifier: GPL-2.0
/*
 * Access: /dev/swarmfan allows no more than sendfile(2) would with the same
 * descriptors (issue 14). Each refusal is compared with what sendfile()
 * itself does on the same descriptors; the device node is root:root 0660
 * and closed to other users; a tmpfs file is read as read(2) reads it,
 * holes are sent as zeros and never allocated; a call generates the
 * fsnotify events a sendfile() does.
 */
#define _GNU_SOURCE
#include <grp.h>
#include <sys/inotify.h>
#include <sys/mman.h>
#include <sys/sendfile.h>

#include "harness.h"

#ifndef MADV_PAGEOUT
#define MADV_PAGEOUT 21
#endif

/* What the udev rule's GROUP="swarmcast" would give, by number. */
#define SWARMCAST_GID	4242
#define NOBODY		65534

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

/* Runs fn in a child with the given ids; returns its exit status. */
static int as_user(uid_t uid, gid_t gid, const gid_t *groups, int ngroups,
		   int (*fn)(const struct tfile *), const struct tfile *f)
{
	pid_t pid = fork();
	int st;

	if (pid < 0)
		fan_die("fork");
	if (pid == 0) {
		if (setgroups(ngroups, groups) || setgid(gid) || setuid(uid))
			_exit(100);
		_exit(fn(f));
	}
	while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
		;
	return WIFEXITED(st) ? WEXITSTATUS(st) : 200;
}

/* 0 if /dev/swarmfan cannot be opened at all and the error is EACCES. */
static int open_refused(const struct tfile *f)
{
	static const int modes[] = { O_RDONLY, O_WRONLY, O_RDWR };
	size_t i;

	(void)f;
	for (i = 0; i < 3; i++) {
		int fd = open(SWARMFAN_DEVICE, modes[i]);

		if (fd >= 0)
			return 1;
		if (errno != EACCES)
			return 2;
	}
	return 0;
}

/* 0 if /dev/swarmfan opens and sends 1000 bytes of f to a socket. */
static int open_and_send(const struct tfile *f)
{
	struct swarmfan_target t;
	char buf[4096];
	int d, snd, rcv, got = 0;
	ssize_t n;

	d = open(SWARMFAN_DEVICE, O_RDWR);
	if (d < 0)
		return 1;
	fan_tcp_pairs(1, &snd, &rcv, 0, 0);
	t = (struct swarmfan_target){ .fd = snd };
	if (fan_send(d, f->fd, 0, 1000, NULL, 0, &t, 1) != 1)
		return 2;
	close(snd);
	while ((n = recv(rcv, buf, sizeof(buf), 0)) > 0)
		got += n;
	return got == 1000 ? 0 : 3;
}

static void device_node(struct tfile *tm)
{
	const gid_t group = SWARMCAST_GID;
	struct stat st;
	int r;

	begin("access: %s is a char device, root:root, mode 0660", SWARMFAN_DEVICE);
	CHECK(stat(SWARMFAN_DEVICE, &st) == 0, "stat: %s", strerror(errno));
	CHECK(S_ISCHR(st.st_mode), "not a character device: 0%o", st.st_mode);
	CHECK((st.st_mode & 07777) == 0660, "mode 0%o", st.st_mode & 07777);
	CHECK(st.st_uid == 0 && st.st_gid == 0, "owner %u:%u", st.st_uid,
	      st.st_gid);
	end();

	begin("access: user nobody cannot open %s (EACCES)", SWARMFAN_DEVICE);
	r = as_user(NOBODY, NOBODY, NULL, 0, open_refused, tm);
	CHECK(r == 0, "child status %d (1: opened, 2: not EACCES, 100: setuid)", r);
	end();

	/* What the udev rule does: GROUP="swarmcast". */
	begin("access: with the device's group set, a member opens and sends, nobody still cannot");
	CHECK(chown(SWARMFAN_DEVICE, 0, SWARMCAST_GID) == 0, "chown: %s",
	      strerror(errno));
	r = as_user(NOBODY, NOBODY, &group, 1, open_and_send, tm);
	CHECK(r == 0, "member: child status %d (1: open, 2: send, 3: bytes)", r);
	r = as_user(NOBODY, NOBODY, NULL, 0, open_refused, tm);
	CHECK(r == 0, "non-member: child status %d", r);
	CHECK(chown(SWARMFAN_DEVICE, 0, 0) == 0, "chown back: %s", strerror(errno));
	end();
}

static long long blocks_of(const struct tfile *f)
{
	struct stat st;

	if (fstat(f->fd, &st))
		fan_die("fstat");
	return st.st_blocks;
}

/*
 * A tmpfs file with holes at both ends of 64 KiB of data, and a fallocated
 * but never written region: read(2) returns zeros for both without
 * allocating, and so must the module (a fallocated page's memory is not
 * even cleared: sending it would leak kernel memory).
 */
static void tmpfs_holes(const char *dir)
{
	const uint64_t hole = 1024 * 1024, data = 64 * 1024 + 3;
	const uint64_t falloc_at = 3 * 1024 * 1024, falloc_len = 256 * 1024;
	const uint64_t size = 4 * 1024 * 1024;
	struct tfile f = { .size = size, .seed = 21 };
	unsigned char *buf = malloc(data), *frame, *zeros;
	long long before, after_read, after;
	int fd, i;

	/*
	 * Freed just before the fallocate, so its pages are likely the ones
	 * fallocate gets: sending those uncleared would show as 0xA5 bytes.
	 */
	snprintf(f.path, sizeof(f.path), "%s/garbage.bin", dir);
	fd = open(f.path, O_RDWR | O_CREAT | O_TRUNC, 0644);
	if (fd < 0 || !buf)
		fan_die("garbage.bin");
	memset(buf, 0xA5, data);
	for (i = 0; i < 16; i++)
		if (write(fd, buf, data) != (ssize_t)data)
			fan_die("write garbage.bin");
	close(fd);
	unlink(f.path);

	snprintf(f.path, sizeof(f.path), "%s/holes.bin", dir);
	fd = open(f.path, O_RDWR | O_CREAT | O_TRUNC, 0644);
	if (fd < 0 || !buf)
		fan_die("holes.bin");
	fan_fill(buf, data, f.seed, hole);
	if (pwrite(fd, buf, data, hole) != (ssize_t)data || ftruncate(fd, size) ||
	    fallocate(fd, 0, falloc_at, falloc_len))
		fan_die("holes.bin: write, ftruncate, fallocate");
	f.fd = fd;
	before = blocks_of(&f);
	frame = make_frame(&f, 0, size, header13, sizeof(header13));
	after_read = blocks_of(&f);

	begin("access: tmpfs holes and a fallocated region are sent as zeros, st_blocks stays %lld",
	      before);
	zeros = calloc(1, falloc_len);
	CHECK(zeros && !memcmp(frame + sizeof(header13), zeros, 4096) &&
	      !memcmp(frame + sizeof(header13) + falloc_at, zeros, falloc_len),
	      "read(2) itself did not return zeros");
	CHECK(after_read == before, "read(2) changed st_blocks: %lld -> %lld",
	      before, after_read);
	fanout_case_frame(&f, 0, size, header13, sizeof(header13), 3, NULL, frame);
	after = blocks_of(&f);
	CHECK(after == before, "st_blocks %lld before, %lld after the send",
	      before, after);
	/* Expected: the data pages plus the fallocated ones, nothing else. */
	CHECK(before * 512 <= (long long)(falloc_len + data + 2 * 4096),
	      "unexpected blocks before: %lld", before);
	end();
	close(fd);
	unlink(f.path);
	free(zeros);
	free(frame);
	free(buf);
}

/* The Swap: figure of /proc/self/smaps for the mapping at addr, in KiB. */
static long smaps_swap_kb(void *addr)
{
	char line[256], prefix[32];
	FILE *fp = fopen("/proc/self/smaps", "r");
	long kb = -1;
	int in = 0;

	if (!fp)
		fan_die("/proc/self/smaps");
	snprintf(prefix, sizeof(prefix), "%lx-", (unsigned long)addr);
	while (fgets(line, sizeof(line), fp)) {
		if (!strncmp(line, prefix, strlen(prefix)))
			in = 1;
		else if (in && sscanf(line, "Swap: %ld kB", &kb) == 1)
			break;
	}
	fclose(fp);
	return kb;
}

/*
 * Pages of a tmpfs file that are out in swap are not holes: they must be
 * read back, not sent as zeros. MADV_PAGEOUT on a shared mapping pushes
 * them out (the guest has swap on a ramdisk).
 */
static void tmpfs_swapped(const char *dir)
{
	struct tfile f;
	unsigned char *frame;
	long long before;
	long kb;
	void *map;
	size_t i;

	tfile_create(&f, dir, "swapped.bin", 1024 * 1024 + 123, 22, 0);
	frame = make_frame(&f, 0, f.size, header13, sizeof(header13));
	before = blocks_of(&f);
	map = mmap(NULL, f.size, PROT_READ, MAP_SHARED, f.fd, 0);
	if (map == MAP_FAILED)
		fan_die("mmap swapped.bin");
	for (i = 0; i < f.size; i += 4096)
		(void)*(volatile unsigned char *)((char *)map + i);

	begin("access: tmpfs pages out in swap are read back, not sent as zeros");
	CHECK(madvise(map, f.size, MADV_PAGEOUT) == 0, "MADV_PAGEOUT: %s",
	      strerror(errno));
	kb = smaps_swap_kb(map);
	CHECK(kb >= 512, "only %ld KiB of the mapping in swap", kb);
	munmap(map, f.size);
	fanout_case_frame(&f, 0, f.size, header13, sizeof(header13), 3, NULL,
			  frame);
	CHECK(blocks_of(&f) == before, "st_blocks %lld -> %lld", before,
	      blocks_of(&f));
	end();
	close(f.fd);
	unlink(f.path);
	free(frame);
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
	sendfile_checks(tm);
	device_node(tm);
	tmpfs_holes(tm_dir);
	tmpfs_swapped(tm_dir);
	fsnotify_events(tm);
}
