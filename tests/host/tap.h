/* SPDX-License-Identifier: MIT */
/*
 * A minimal TAP producer for the host unit tests: CHECK() records a
 * failed expectation in the current test, TEST_RUN() prints one TAP line
 * per test and tap_done() the plan and the "N passed, M failed" summary.
 */
#ifndef MEGPU_TAP_H
#define MEGPU_TAP_H

#include <stdio.h>

static int tap_n, tap_pass, tap_fail, tap_cur_fail;

#define CHECK(cond) do {						\
	if (!(cond)) {							\
		printf("#   %s:%d: CHECK(%s) failed\n", __FILE__,	\
		       __LINE__, #cond);				\
		tap_cur_fail = 1;					\
	}								\
} while (0)

#define CHECK_EQ(a, b) do {						\
	unsigned long long _a = (a), _b = (b);				\
	if (_a != _b) {							\
		printf("#   %s:%d: %s == %s: 0x%llx != 0x%llx\n",	\
		       __FILE__, __LINE__, #a, #b, _a, _b);		\
		tap_cur_fail = 1;					\
	}								\
} while (0)

#define TEST_RUN(fn) do {						\
	tap_cur_fail = 0;						\
	fn();								\
	tap_n++;							\
	if (tap_cur_fail) {						\
		tap_fail++;						\
		printf("not ok %d %s\n", tap_n, #fn);			\
	} else {							\
		tap_pass++;						\
		printf("ok %d %s\n", tap_n, #fn);			\
	}								\
	fflush(stdout);							\
} while (0)

static inline int tap_done(void)
{
	printf("1..%d\n", tap_n);
	printf("%d passed, %d failed\n", tap_pass, tap_fail);
	return tap_fail ? 1 : 0;
}

#endif
