/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* Minimal KTAP/TAP emitter for the native unit tests. */
#ifndef SROCE_KTAP_H
#define SROCE_KTAP_H

#include <stdio.h>

static int ktap_n, ktap_failed;

#define KTAP_START() printf("TAP version 13\n")

/* One assertion = one TAP line, named after the expression. */
#define CHECK(cond, ...) do {						\
	ktap_n++;							\
	if (cond) {							\
		printf("ok %d - ", ktap_n);				\
	} else {							\
		ktap_failed++;						\
		printf("not ok %d - ", ktap_n);				\
	}								\
	printf(__VA_ARGS__);						\
	printf("\n");							\
	if (!(cond))							\
		printf("# failed: %s (%s:%d)\n", #cond, __FILE__, __LINE__); \
} while (0)

/* Trailing plan: TAP allows it, and nobody has to count assertions. */
#define KTAP_DONE() (printf("1..%d\n", ktap_n), ktap_failed ? 1 : 0)

#endif
