/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The in-guest test harness of swarmfan_test: a CHECK that records a
 * failure and goes on, one "ok"/"not ok" line per case, test files with
 * known content, and fanout_case(), which sends a frame to fresh loopback
 * sockets and checks what every receiver got.
 */
#ifndef SWARMFAN_HARNESS_H
#define SWARMFAN_HARNESS_H

#include "fan_util.h"

extern int dev;			/* the open /dev/swarmfan */
extern int failures, passes;
extern char case_name[160];
extern int case_failed;

#define CHECK(cond, ...)                                                   \
	do {                                                               \
		if (!(cond)) {                                             \
			if (!case_failed)                                  \
				printf("not ok - %s\n", case_name);        \
			printf("    %s:%d: %s: ", __FILE__, __LINE__, #cond); \
			printf(__VA_ARGS__);                               \
			printf("\n");                                      \
			case_failed = 1;                                   \
		}                                                          \
	} while (0)

/* Starts a case; end() prints its ok / not ok line and counts it. */
void begin(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void end(void);

/* A test file: its path, an O_RDONLY fd, its size and its content seed. */
struct tfile {
	char path[256];
	int fd;
	uint64_t size;
	uint64_t seed;
	int sparse_hole;	/* bytes [0, hole) are a hole (read as zeros) */
};

void tfile_create(struct tfile *f, const char *dir, const char *name,
		  uint64_t size, uint64_t seed, uint64_t hole);
unsigned char *make_frame(const struct tfile *f, uint64_t off, uint64_t len,
			  const unsigned char *hdr, uint32_t hlen);
/* Drops the file from the page cache; cached_fraction() says how far. */
void make_cold(const struct tfile *f);
double cached_fraction(const struct tfile *f);
void fanout_case(const struct tfile *f, uint64_t off, uint64_t len,
		 const unsigned char *hdr, uint32_t hlen, int n,
		 const uint64_t *start);
/* The same with the expected frame given (header + range, as read(2) sees it). */
void fanout_case_frame(const struct tfile *f, uint64_t off, uint64_t len,
		       const unsigned char *hdr, uint32_t hlen, int n,
		       const uint64_t *start, const unsigned char *frame);
int closed_fd(void);

extern unsigned char header13[13];
extern unsigned char header_max[SWARMFAN_MAX_HEADER];

/* The case groups, one file each. */
void bad_input_cases(struct tfile *tm);
void failure_cases(struct tfile *tm, struct tfile *ext, const char *tm_dir,
		   const char *ext_dir);
void access_cases(struct tfile *tm, const char *tm_dir);

#endif /* SWARMFAN_HARNESS_H */
