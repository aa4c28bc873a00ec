// SPDX-License-Identifier: MIT
/*
 * megpu bench: tables, never verdicts. Every number is shown beside a
 * reference measured in the same run (a no-op ioctl, a CPU memcpy), so
 * ratios stay meaningful on a slow emulator.
 */

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "megpu_hw.h"
#include "megpu.h"

static const char usage[] =
"usage: megpu bench [--device I] [--jobs N] [--quick]\n"
"\n"
"Prints:\n"
"  - the cost of a no-op ioctl (GET_PARAM)\n"
"  - submit-to-completion latency of empty jobs (one NOP), one at a time\n"
"  - empty jobs per second on 1..N engines in parallel (a thread each)\n"
"  - copy-engine COPY bandwidth for 1, 4 and 16 MiB beside a CPU memcpy\n"
"\n"
"  --device I   megpu device index (default 0)\n"
"  --jobs N     empty jobs per engine for the throughput table (default\n"
"               1000)\n"
"  --quick      fewer repetitions\n";

static double ms(int64_t ns)
{
	return ns / 1e6;
}

static int cmp64(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;

	return x < y ? -1 : x > y;
}

/* A job whose IB is one NOP, uploaded once and submitted many times. */
static int nop_job(struct megpu *gpu, struct megpu_job *job,
		   unsigned int engine)
{
	struct megpu_cs cs;
	int ret;

	megpu_job_init(job, engine);
	job->flags = DRM_MEGPU_SUBMIT_NO_IMPLICIT;
	megpu_cs_init(&cs);
	megpu_cs_nop(&cs, 0);
	ret = megpu_job_upload(gpu, job, &cs);
	megpu_cs_fini(&cs);
	return ret;
}

static int bench_ioctl(struct megpu *gpu, unsigned int reps, double *ns)
{
	uint64_t v;
	int64_t t0 = megpu_now_ns();
	unsigned int i;
	int ret;

	for (i = 0; i < reps; i++) {
		ret = megpu_get_param(gpu, DRM_MEGPU_PARAM_ENGINE_COUNT, &v);
		if (ret)
			return ret;
	}
	*ns = (double)(megpu_now_ns() - t0) / reps;
	return 0;
}

static int bench_latency(struct megpu *gpu, unsigned int engine,
			 unsigned int reps, int64_t *lat)
{
	struct megpu_job job = { 0 };
	uint32_t sync = 0;
	unsigned int i;
	int64_t t0;
	int ret;

	ret = megpu_syncobj_new(gpu, false, &sync);
	ret = ret ?: nop_job(gpu, &job, engine);
	megpu_job_signal_sync(&job, sync, 0);
	for (i = 0; !ret && i < reps; i++) {
		t0 = megpu_now_ns();
		ret = megpu_job_submit(gpu, &job);
		ret = ret ?: megpu_syncobj_wait(gpu, sync, 0, 10000000000ll);
		lat[i] = megpu_now_ns() - t0;
	}
	megpu_job_fini(&job);
	megpu_syncobj_free(gpu, sync);
	return ret;
}

struct thr {
	struct megpu *gpu;
	unsigned int engine, jobs;
	int ret;
};

/* Keep one engine busy: submit @jobs NOPs on a timeline, wait the last. */
static void *thr_main(void *arg)
{
	struct thr *t = arg;
	struct megpu_job job = { 0 };
	uint32_t tl = 0;
	unsigned int i;

	t->ret = megpu_syncobj_new(t->gpu, false, &tl);
	t->ret = t->ret ?: nop_job(t->gpu, &job, t->engine);
	for (i = 0; !t->ret && i < t->jobs; i++) {
		megpu_job_signal_sync(&job, tl, i + 1);
		t->ret = megpu_job_submit(t->gpu, &job);
	}
	t->ret = t->ret ?: megpu_syncobj_wait(t->gpu, tl, t->jobs,
					      120000000000ll);
	megpu_job_fini(&job);
	megpu_syncobj_free(t->gpu, tl);
	return NULL;
}

static int bench_parallel(struct megpu *gpu, unsigned int engines,
			  unsigned int jobs, double *secs)
{
	struct thr t[MEGPU_MAX_ENGINES];
	pthread_t th[MEGPU_MAX_ENGINES];
	int64_t t0 = megpu_now_ns();
	unsigned int e;
	int ret = 0;

	for (e = 0; e < engines; e++) {
		t[e] = (struct thr){ .gpu = gpu, .engine = e, .jobs = jobs };
		if (pthread_create(&th[e], NULL, thr_main, &t[e]))
			return -EAGAIN;
	}
	for (e = 0; e < engines; e++) {
		pthread_join(th[e], NULL);
		ret = ret ?: t[e].ret;
	}
	*secs = (megpu_now_ns() - t0) / 1e9;
	return ret;
}

/* Best of @reps GPU COPYs of @bytes, and of CPU memcpys of the same. */
static int bench_copy(struct megpu *gpu, int engine, uint32_t bytes,
		      unsigned int reps, int64_t *gpu_ns, int64_t *cpu_ns)
{
	struct megpu_bo *src = NULL, *dst = NULL;
	struct megpu_job job;
	struct megpu_cs cs;
	unsigned int i;
	uint32_t sync = 0;
	char *a, *b;
	int64_t t0;
	int ret;

	megpu_job_init(&job, engine);
	megpu_cs_init(&cs);
	ret = megpu_syncobj_new(gpu, false, &sync);
	ret = ret ?: megpu_bo_new(gpu, bytes, 0, &src);
	ret = ret ?: megpu_bo_new(gpu, bytes, 0, &dst);
	ret = ret ?: megpu_bo_map(src);
	if (ret)
		goto out;
	memset(src->map, 0x5a, bytes);
	megpu_job_add_bo(&job, src, DRM_MEGPU_BO_READ);
	megpu_job_add_bo(&job, dst, DRM_MEGPU_BO_WRITE);
	megpu_job_signal_sync(&job, sync, 0);
	megpu_cs_copy(&cs, src->va, dst->va, bytes);
	ret = megpu_job_upload(gpu, &job, &cs);
	*gpu_ns = INT64_MAX;
	for (i = 0; !ret && i < reps; i++) {
		t0 = megpu_now_ns();
		ret = megpu_job_submit(gpu, &job);
		ret = ret ?: megpu_syncobj_wait(gpu, sync, 0, 60000000000ll);
		ret = ret ?: megpu_fence_status(gpu->fd, sync, 0);
		t0 = megpu_now_ns() - t0;
		if (t0 < *gpu_ns)
			*gpu_ns = t0;
	}
	a = malloc(bytes);
	b = malloc(bytes);
	*cpu_ns = INT64_MAX;
	if (!a || !b)
		ret = ret ?: -ENOMEM;
	for (i = 0; !ret && i < reps; i++) {
		memset(a, i, bytes);	/* touch: no first-use faults timed */
		memset(b, 0, bytes);
		t0 = megpu_now_ns();
		memcpy(b, a, bytes);
		__asm__ volatile("" : : "r"(b) : "memory");
		t0 = megpu_now_ns() - t0;
		if (t0 < *cpu_ns)
			*cpu_ns = t0;
	}
	free(a);
	free(b);
out:
	megpu_cs_fini(&cs);
	megpu_job_fini(&job);
	megpu_bo_free(src);
	megpu_bo_free(dst);
	megpu_syncobj_free(gpu, sync);
	return ret;
}

static void progress(const char *what)
{
	fprintf(stderr, "megpu bench: %s...\n", what);
}

int cmd_bench(int argc, char **argv)
{
	static const uint32_t sizes[] = { 1 << 20, 4 << 20, 16 << 20 };
	uint64_t device = 0, jobs = 1000;
	unsigned int engines, reps, i, e;
	int64_t lat[400], gns = 1, cns = 1;
	double ioctl_ns, secs, one = 0;
	struct megpu gpu;
	bool quick = false;
	int ret, ce;

	if (tool_help(argc, argv, usage))
		return 0;
	for (i = 1; i < (unsigned int)argc; i++) {
		if (i + 1 < (unsigned int)argc && !strcmp(argv[i], "--device")
		    && tool_parse_u64(argv[i + 1], &device)) {
			i++;
		} else if (i + 1 < (unsigned int)argc &&
			   !strcmp(argv[i], "--jobs") &&
			   tool_parse_u64(argv[i + 1], &jobs) && jobs &&
			   jobs <= 1000000) {
			i++;
		} else if (!strcmp(argv[i], "--quick")) {
			quick = true;
		} else {
			fputs(usage, stderr);
			return 2;
		}
	}
	if (quick && jobs > 200)
		jobs = 200;
	reps = quick ? 50 : 400;
	if (tool_open(&gpu, device))
		return 1;
	ret = megpu_engines(&gpu, &engines, NULL);
	if (ret)
		goto fail;

	progress("no-op ioctl");
	ret = bench_ioctl(&gpu, quick ? 2000 : 20000, &ioctl_ns);
	if (ret)
		goto fail;
	progress("empty-job latency");
	ret = bench_latency(&gpu, 0, reps, lat);
	if (ret)
		goto fail;
	qsort(lat, reps, sizeof(lat[0]), cmp64);
	printf("\nsubmit-to-completion of an empty job (engine 0, %s), "
	       "%u runs\n", tool_engine_name(&gpu, 0), reps);
	printf("  %-22s %12s %12s\n", "", "time", "x no-op ioctl");
	printf("  %-22s %9.1f us %12s\n", "no-op ioctl", ioctl_ns / 1e3,
	       "1.0");
	printf("  %-22s %9.1f us %12.1f\n", "empty job, median",
	       lat[reps / 2] / 1e3, lat[reps / 2] / ioctl_ns);
	printf("  %-22s %9.1f us %12.1f\n", "empty job, 10th pct",
	       lat[reps / 10] / 1e3, lat[reps / 10] / ioctl_ns);
	printf("  %-22s %9.1f us %12.1f\n", "empty job, 90th pct",
	       lat[reps * 9 / 10] / 1e3, lat[reps * 9 / 10] / ioctl_ns);

	printf("\nempty jobs in parallel, %llu per engine, one thread each\n",
	       (unsigned long long)jobs);
	printf("  %-8s %10s %10s %12s %12s\n", "engines", "jobs", "seconds",
	       "jobs/s", "x 1 engine");
	for (e = 1; e <= engines; e++) {
		char what[64];

		snprintf(what, sizeof(what), "throughput on %u engine%s", e,
			 e > 1 ? "s" : "");
		progress(what);
		ret = bench_parallel(&gpu, e, jobs, &secs);
		if (ret)
			goto fail;
		if (e == 1)
			one = jobs / secs;
		printf("  %-8u %10llu %10.2f %12.0f %12.2f\n", e,
		       (unsigned long long)(jobs * e), secs, jobs * e / secs,
		       jobs * e / secs / one);
	}

	ce = tool_pick_engine(&gpu, MEGPU_ENGINE_COPY, MEGPU_PKT_COPY, -1);
	if (ce < 0) {
		printf("\nno engine accepts COPY: no bandwidth table\n");
		goto out;
	}
	printf("\nCOPY on engine %d (%s) beside CPU memcpy, best of %u\n", ce,
	       tool_engine_name(&gpu, ce), quick ? 2 : 5);
	printf("  %-8s %12s %12s %12s %12s %10s\n", "size", "gpu time",
	       "gpu MiB/s", "cpu time", "cpu MiB/s", "gpu/cpu");
	for (i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		double mib = sizes[i] / 1048576.0;

		progress("copy bandwidth");
		ret = bench_copy(&gpu, ce, sizes[i], quick ? 2 : 5, &gns,
				 &cns);
		if (ret)
			goto fail;
		printf("  %-5.0f MiB %9.2f ms %12.1f %9.3f ms %12.1f %10.3f\n",
		       mib, ms(gns), mib / (gns / 1e9), ms(cns),
		       mib / (cns / 1e9), (double)cns / gns);
	}
out:
	megpu_close(&gpu);
	return 0;
fail:
	fprintf(stderr, "megpu bench: %s\n", tool_status(ret));
	megpu_close(&gpu);
	return 1;
}
