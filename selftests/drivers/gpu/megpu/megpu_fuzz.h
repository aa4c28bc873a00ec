/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What the fuzzers share: a seeded generator and how a run gets its seed
 * and its length.
 *
 * Seed, first found wins: "--seed=N" on the test's command line, the
 * environment's MEGPU_FUZZ_SEED, the kernel argument megpu_test.seed=N;
 * else a new one from the clock, printed at the start. A failure prints
 * the seed, and the same seed replays the same calls (the interleaving
 * of several processes, and what the GPU does when, vary).
 *
 * Length: "--long", MEGPU_FUZZ_LONG=1 or megpu_test.fuzz_long=1 runs ten
 * times as many calls or jobs.
 */
#ifndef MEGPU_FUZZ_H
#define MEGPU_FUZZ_H

#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "megpu_test.h"

static uint64_t fz_seed;
static bool fz_long;

/* splitmix64: small, fast, and every state is a good seed. */
static inline uint64_t fz_next(uint64_t *s)
{
	uint64_t z = (*s += 0x9e3779b97f4a7c15ull);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

/* Uniform in [0, n); n > 0. */
static inline uint64_t fz_below(uint64_t *s, uint64_t n)
{
	return fz_next(s) % n;
}

/* True with probability 1 / n. */
static inline bool fz_one_in(uint64_t *s, uint64_t n)
{
	return fz_below(s, n) == 0;
}

/* A value of interesting magnitude: small, near a power of two, or any. */
static inline uint64_t fz_value(uint64_t *s)
{
	unsigned int bit = fz_below(s, 64);

	switch (fz_below(s, 6)) {
	case 0:
		return fz_below(s, 16);
	case 1:
		return (1ull << bit) - fz_below(s, 3);
	case 2:
		return (1ull << bit) + fz_below(s, 3);
	case 3:
		return ~0ull - fz_below(s, 4);
	case 4:
		return (uint32_t)fz_next(s);
	default:
		return fz_next(s);
	}
}

/*
 * Take "--seed=N" and "--long" out of argv (the harness rejects what it
 * does not know) and settle the seed and the length.
 */
static inline void fz_setup(int *argc, char **argv)
{
	const char *env = getenv("MEGPU_FUZZ_SEED");
	bool have = false;
	int i, j;

	for (i = 1, j = 1; i < *argc; i++) {
		if (!strncmp(argv[i], "--seed=", 7)) {
			fz_seed = strtoull(argv[i] + 7, NULL, 0);
			have = true;
		} else if (!strcmp(argv[i], "--long")) {
			fz_long = true;
		} else {
			argv[j++] = argv[i];
		}
	}
	*argc = j;
	argv[j] = NULL;
	if (!have && env) {
		fz_seed = strtoull(env, NULL, 0);
		have = true;
	}
	if (!have && megpu_test_cmdline("seed", -1) != -1) {
		fz_seed = (uint64_t)megpu_test_cmdline("seed", 0);
		have = true;
	}
	if (!have) {
		struct timespec ts;

		clock_gettime(CLOCK_REALTIME, &ts);
		fz_seed = (uint32_t)(ts.tv_sec * 1000003 ^ ts.tv_nsec);
	}
	if (getenv("MEGPU_FUZZ_LONG") || megpu_test_cmdline("fuzz_long", 0))
		fz_long = true;
	printf("# fuzz seed 0x%llx%s (replay: --seed=0x%llx or "
	       "megpu_test.seed=0x%llx)\n", (unsigned long long)fz_seed,
	       fz_long ? ", long run" : "", (unsigned long long)fz_seed,
	       (unsigned long long)fz_seed);
	fflush(stdout);
}

/* main() of a fuzzer: the harness with the fuzzer's own options. */
#define FZ_HARNESS_MAIN							\
	int main(int argc, char **argv)					\
	{								\
		fz_setup(&argc, argv);					\
		return test_harness_run(argc, argv);			\
	}

#endif
