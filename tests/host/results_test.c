// SPDX-License-Identifier: MIT
/*
 * Host unit tests of the bench figures (tools/megpu/results.c): every
 * figure a run makes reaches the JSON line that becomes build/bench.json,
 * however many the tables make, and a figure made again replaces the
 * first.
 */

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../tools/megpu/results.c"
#include "tap.h"

static unsigned int count(const char *hay, const char *needle)
{
	unsigned int n = 0;

	for (const char *p = hay; (p = strstr(p, needle)); p++)
		n++;
	return n;
}

/* 300 figures, more than a full make bench makes: all in the JSON. */
static void test_every_figure_kept(void)
{
	const char *head = "MEGPU-BENCH-JSON {\"figures\":{";
	char *buf = NULL, name[64];
	size_t len = 0;
	FILE *out = open_memstream(&buf, &len);
	double v[3] = { 3, 1, 2 };

	for (unsigned int i = 0; i < 300; i++) {
		snprintf(name, sizeof(name), "t.fig%u", i);
		CHECK_EQ(bench_fig(name, "x", v, 3), 2);
	}
	/* made again: replaces, the count stays */
	v[0] = 10;
	bench_fig("t.fig7", "x", v, 3);
	bench_json(out);
	fclose(out);
	CHECK(!strncmp(buf, head, strlen(head)));
	CHECK_EQ(count(buf, "\"unit\":\"x\""), 300);
	CHECK(strstr(buf, "\"t.fig0\":{") != NULL);
	CHECK(strstr(buf, "\"t.fig299\":{\"unit\":\"x\",\"median\":2,"
		      "\"min\":1,\"max\":3,\"runs\":3}") != NULL);
	CHECK_EQ(count(buf, "\"t.fig7\":"), 1);
	CHECK(strstr(buf, "\"t.fig7\":{\"unit\":\"x\",\"median\":2,"
		      "\"min\":1,\"max\":10,\"runs\":3}") != NULL);
	free(buf);
}

int main(void)
{
	TEST_RUN(test_every_figure_kept);
	return tap_done();
}
