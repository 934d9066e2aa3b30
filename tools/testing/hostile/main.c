// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * sroce-hostile - a hostile local user of an rxe-ABI RDMA device
 *
 *   sroce-hostile -d DEV SCENARIO
 *
 * SCENARIO is one of (the letters of the guest suite t_hostile.sh):
 *
 *   caps      a) raw WQEs on QPs of the smallest capacities
 *   opcodes   b) every opcode byte on RC, UC and UD QPs
 *   race      c) producer/consumer indices rewritten during flush/destroy
 *   destroy   d) objects destroyed while traffic flows
 *   cross     e) AHs, MRs, MWs of another PD and another process
 *   verbs     f) verbs at the boundaries tied to the same defects
 *
 * Output is TAP without numbers ("ok - ..." / "not ok - ...", diagnostics
 * as "# ..." lines) and a last line "hostile SCENARIO done"; the suite
 * numbers them.  Exit status 0 when every check passed.
 *
 * Every wait is bounded (WAIT_MS per completion): a missing completion
 * fails a check instead of hanging.  A hang inside the kernel cannot be
 * bounded from here; the suite runs each scenario under timeout(1).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "hostile.h"

struct env g;

static pthread_mutex_t out_lock = PTHREAD_MUTEX_INITIALIZER;
static int nfailed;

bool tap(bool ok, const char *fmt, ...)
{
	va_list ap;

	pthread_mutex_lock(&out_lock);
	fputs(ok ? "ok - " : "not ok - ", stdout);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	putchar('\n');
	fflush(stdout);
	if (!ok)
		nfailed++;
	pthread_mutex_unlock(&out_lock);
	return ok;
}

void diag(const char *fmt, ...)
{
	va_list ap;

	pthread_mutex_lock(&out_lock);
	fputs("# ", stdout);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	putchar('\n');
	fflush(stdout);
	pthread_mutex_unlock(&out_lock);
}

/* Completion status as "NAME(n)"; a rotating set of buffers. */
const char *st(int status)
{
	static __thread char buf[4][48];
	static __thread int i;
	char *b = buf[i++ & 3];

	if (status < 0)
		snprintf(b, sizeof(buf[0]), "none");
	else
		snprintf(b, sizeof(buf[0]), "%s(%d)",
			 ibv_wc_status_str(status), status);
	return b;
}

uint64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* xorshift32: reproducible garbage (seeded from -s, default 1). */
static uint32_t rnd_state = 1;

uint32_t rnd32(void)
{
	uint32_t x = rnd_state;

	x ^= x << 13;
	x ^= x >> 17;
	x ^= x << 5;
	rnd_state = x;
	return x;
}

static const struct {
	const char *name;
	const char *letter;
	int (*run)(void);
} scenarios[] = {
	{ "caps", "a", sc_caps },
	{ "opcodes", "b", sc_opcodes },
	{ "race", "c", sc_race },
	{ "destroy", "d", sc_destroy },
	{ "cross", "e", sc_cross },
	{ "verbs", "f", sc_verbs },
};

static void usage(void)
{
	size_t i;

	fprintf(stderr, "usage: sroce-hostile -d DEV [-s SEED] SCENARIO\n"
		"scenarios:");
	for (i = 0; i < ARRAY_SIZE(scenarios); i++)
		fprintf(stderr, " %s", scenarios[i].name);
	fputc('\n', stderr);
	exit(2);
}

int main(int argc, char **argv)
{
	const char *dev = NULL;
	size_t i;
	int c;

	while ((c = getopt(argc, argv, "d:s:")) != -1) {
		switch (c) {
		case 'd':
			dev = optarg;
			break;
		case 's':
			rnd_state = strtoul(optarg, NULL, 0) | 1;
			break;
		default:
			usage();
		}
	}
	if (!dev || optind != argc - 1)
		usage();
	setvbuf(stdout, NULL, _IOLBF, 0);
	for (i = 0; i < ARRAY_SIZE(scenarios); i++)
		if (!strcmp(argv[optind], scenarios[i].name) ||
		    !strcmp(argv[optind], scenarios[i].letter))
			break;
	if (i == ARRAY_SIZE(scenarios))
		usage();
	if (env_open(dev)) {
		tap(false, "open %s and find its IPv4 RoCE v2 GID", dev);
		return 1;
	}
	scenarios[i].run();
	printf("hostile %s done\n", scenarios[i].name);
	fflush(stdout);
	return nfailed ? 1 : 0;
}
