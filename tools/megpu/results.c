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

#define MAX_FIGS 96

static struct fig {
	char name[64];
	char unit[16];
	double median, min, max;
	unsigned int runs;
} figs[MAX_FIGS];
static unsigned int nfigs;

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
	if (!n || nfigs == MAX_FIGS)
		return n ? bench_median(s, n) : 0;
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
