// SPDX-License-Identifier: MIT
/*
 * Bench figures for machines: each figure is the median of repeated runs
 * with its spread (min, max), printed at the end as one JSON line behind
 * a marker, which tools/vm/run.sh copies from the serial console into
 * build/bench.json, so that two commits can be compared.
 */

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "megpu.h"

/*
 * As many as the tables make: a fixed 96 silently dropped every figure
 * after the wave programs' table (the syscall, partition and multi-GPU
 * ones) from a full run's build/bench.json.
 */
static struct fig {
	char name[64];
	char unit[16];
	double median, min, max;
	unsigned int runs;
} *figs;
static unsigned int nfigs, figs_cap;

static int cmpd(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

double bench_median(double *v, unsigned int n)
{
	if (!n)
		return 0;
	qsort(v, n, sizeof(*v), cmpd);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

double bench_fig(const char *name, const char *unit, const double *v,
		 unsigned int n)
{
	double s[64];
	struct fig *f;
	unsigned int i;

	if (n > 64)
		n = 64;
	memcpy(s, v, n * sizeof(*v));
	if (!n)
		return 0;
	if (nfigs == figs_cap) {
		unsigned int cap = figs_cap ? 2 * figs_cap : 64;
		struct fig *more = realloc(figs, cap * sizeof(*figs));

		if (!more) {
			fprintf(stderr, "megpu bench: no memory for figure %s\n",
				name);
			return bench_median(s, n);
		}
		figs = more;
		figs_cap = cap;
	}
	f = &figs[nfigs++];
	snprintf(f->name, sizeof(f->name), "%s", name);
	snprintf(f->unit, sizeof(f->unit), "%s", unit);
	f->median = bench_median(s, n);
	f->min = s[0];
	f->max = s[n - 1];
	f->runs = n;
	for (i = 0; i < nfigs - 1; i++)
		if (!strcmp(figs[i].name, name)) {
			figs[i] = *f;
			nfigs--;
			return figs[i].median;
		}
	return f->median;
}

double bench_fig1(const char *name, const char *unit, double v)
{
	return bench_fig(name, unit, &v, 1);
}

void bench_json(FILE *out)
{
	unsigned int i;

	if (!nfigs)
		return;
	fprintf(out, "MEGPU-BENCH-JSON {\"figures\":{");
	for (i = 0; i < nfigs; i++)
		fprintf(out, "%s\"%s\":{\"unit\":\"%s\",\"median\":%.6g,"
			"\"min\":%.6g,\"max\":%.6g,\"runs\":%u}",
			i ? "," : "", figs[i].name, figs[i].unit,
			figs[i].median, figs[i].min, figs[i].max,
			figs[i].runs);
	fprintf(out, "}}\n");
	fflush(out);
}
