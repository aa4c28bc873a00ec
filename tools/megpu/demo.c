// SPDX-License-Identifier: MIT
/*
 * megpu demo: a pipeline over every engine type, ordered only by syncobjs.
 *
 *   copy     FILL a = 3, b = 4, x = 1.5f, y = 0.25f
 *   compute  VADD c = a + b                       (waits for copy)
 *   compute  SAXPY y = 2 * x + y                  (waits for copy)
 *   gfx      COPY c -> c2, y -> y2                (waits for both computes)
 *   video    CHECKSUM c2 and y2                   (waits for gfx)
 *
 * Every result is checked on the CPU. Engines missing on this device are
 * stood in for by one that accepts the same packets.
 */

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "megpu_hw_packets.h"
#include "megpu.h"

static const char usage[] =
"usage: megpu demo [--device I] [--elements N]\n"
"       megpu demo blur-sepia [options]   (see megpu demo blur-sepia --help)\n"
"       megpu demo syscalls [options]     (see megpu demo syscalls --help)\n"
"       megpu demo partition [options]    (see megpu demo partition --help)\n"
"       megpu demo video [--frames N]     (see megpu demo video --help)\n"
"\n"
"demo: runs a five-stage pipeline that uses every engine: copy fills\n"
"inputs, compute runs VADD and SAXPY, gfx copies the results, video\n"
"checksums them. Each stage waits for the previous ones through\n"
"syncobjs. Prints what each engine did and how long it took, then PASS\n"
"or FAIL.\n"
"\n"
"  --device I      megpu device index (default 0)\n"
"  --elements N    32-bit elements per buffer (default 50000)\n"
"\n"
"demo blur-sepia: the seed's FIG. 5 chain, BLUR3X3 on one engine then\n"
"SEPIA on another that depends on it, with the host-driven flush\n"
"handshake between them (or --gpu-flush, or --no-flush to see stale\n"
"reads), checked against the CPU and written as a PPM image.\n"
"\n"
"demo syscalls: seed 003, GPU work-items call printf and fileio on the\n"
"CPU while their job runs; the output and the file are checked.\n";

enum { A, B, X, Y, C, C2, Y2, SUMS, KARGS, NBUF };
enum { FILLS, VADD, SAXPY, COPIES, CHECKSUMS, NSTAGES };

struct stage {
	const char *what;
	int prefer;		/* engine type */
	unsigned int op;	/* the packet that decides the engine */
	int kernel;
	int deps[2];		/* stages waited for, -1: none */
	int engine;
	uint32_t sync;
	int64_t submitted, signalled;
	int status;
};

static struct stage stages[NSTAGES] = {
	[FILLS] = { "FILL a, b, x, y", MEGPU_ENGINE_COPY, MEGPU_PKT_FILL, -1,
		    { -1, -1 } },
	[VADD] = { "VADD c = a + b", MEGPU_ENGINE_COMPUTE, MEGPU_PKT_DISPATCH,
		   MEGPU_KERNEL_VADD, { FILLS, -1 } },
	[SAXPY] = { "SAXPY y = 2x + y", MEGPU_ENGINE_COMPUTE,
		    MEGPU_PKT_DISPATCH, MEGPU_KERNEL_SAXPY, { FILLS, -1 } },
	[COPIES] = { "COPY c -> c2, y -> y2", MEGPU_ENGINE_GFX, MEGPU_PKT_COPY,
		     -1, { VADD, SAXPY } },
	[CHECKSUMS] = { "CHECKSUM c2, y2", MEGPU_ENGINE_VIDEO,
			MEGPU_PKT_DISPATCH, MEGPU_KERNEL_CHECKSUM,
			{ COPIES, -1 } },
};

static uint32_t *u32(struct megpu_bo *bo)
{
	return bo->map;
}

/* Build stage @s's IB; kernel argument blocks go at 64-byte slots. */
static void build(struct megpu_cs *cs, int s, struct megpu_bo **buf,
		  uint32_t n)
{
	uint32_t bytes = n * 4, grid = n, group = 256;
	struct megpu_kargs k;
	uint64_t args;

	switch (s) {
	case FILLS:
		megpu_cs_fill(cs, buf[A]->va, bytes, 3);
		megpu_cs_fill(cs, buf[B]->va, bytes, 4);
		megpu_cs_fill(cs, buf[X]->va, bytes, megpu_f32_bits(1.5f));
		megpu_cs_fill(cs, buf[Y]->va, bytes, megpu_f32_bits(0.25f));
		break;
	case VADD:
		k = (struct megpu_kargs){
			.ptr = { buf[A]->va, buf[B]->va, buf[C]->va }, .n = n,
		};
		megpu_kargs_write(buf[KARGS], 0, &k, &args);
		megpu_cs_dispatch(cs, MEGPU_KERNEL_VADD, args, grid, 1, group,
				  1);
		break;
	case SAXPY:
		k = (struct megpu_kargs){
			.ptr = { buf[X]->va, buf[Y]->va }, .n = n,
			.param = { megpu_f32_bits(2.0f) },
		};
		megpu_kargs_write(buf[KARGS], 64, &k, &args);
		megpu_cs_dispatch(cs, MEGPU_KERNEL_SAXPY, args, grid, 1, group,
				  1);
		break;
	case COPIES:
		megpu_cs_copy(cs, buf[C]->va, buf[C2]->va, bytes);
		megpu_cs_copy(cs, buf[Y]->va, buf[Y2]->va, bytes);
		break;
	case CHECKSUMS:
		k = (struct megpu_kargs){
			.ptr = { buf[C2]->va, buf[SUMS]->va }, .n = n,
		};
		megpu_kargs_write(buf[KARGS], 128, &k, &args);
		megpu_cs_dispatch(cs, MEGPU_KERNEL_CHECKSUM, args, grid, 1,
				  group, 1);
		k.ptr[0] = buf[Y2]->va;
		k.ptr[1] = buf[SUMS]->va + 4;
		megpu_kargs_write(buf[KARGS], 192, &k, &args);
		megpu_cs_dispatch(cs, MEGPU_KERNEL_CHECKSUM, args, grid, 1,
				  group, 1);
		break;
	}
}

/* Check every buffer against the CPU; print and count mismatches. */
static int verify(struct megpu_bo **buf, uint32_t n)
{
	uint32_t y = megpu_f32_bits(2.0f * 1.5f + 0.25f), i, bad = 0;
	uint32_t sum_c = 7 * n, sum_y = y * n;

	for (i = 0; i < n; i++) {
		bad += u32(buf[A])[i] != 3 || u32(buf[B])[i] != 4;
		bad += u32(buf[C])[i] != 7 || u32(buf[C2])[i] != 7;
		bad += u32(buf[Y])[i] != y || u32(buf[Y2])[i] != y;
	}
	printf("  check: a=3 b=4 c=c2=7 y=y2=3.25f over %u elements: %s\n",
	       n, bad ? "FAIL" : "ok");
	printf("  check: checksum(c2) = 0x%08x, expected 0x%08x: %s\n",
	       u32(buf[SUMS])[0], sum_c, u32(buf[SUMS])[0] == sum_c ?
	       "ok" : "FAIL");
	printf("  check: checksum(y2) = 0x%08x, expected 0x%08x: %s\n",
	       u32(buf[SUMS])[1], sum_y, u32(buf[SUMS])[1] == sum_y ?
	       "ok" : "FAIL");
	return bad + (u32(buf[SUMS])[0] != sum_c) +
	       (u32(buf[SUMS])[1] != sum_y);
}

int cmd_demo(int argc, char **argv)
{
	uint64_t device = 0, n = 50000;
	struct megpu_bo *buf[NBUF] = { NULL };
	struct megpu_job jobs[NSTAGES];
	int64_t t0, deadline;
	struct megpu_cs cs;
	struct megpu gpu;
	int i, d, ret = 0, failed = 0;

	if (argc > 1 && !strcmp(argv[1], "blur-sepia"))
		return cmd_demo_blur_sepia(argc - 1, argv + 1);
	if (argc > 1 && !strcmp(argv[1], "video"))
		return cmd_demo_video(argc - 1, argv + 1);
	if (argc > 1 && !strcmp(argv[1], "syscalls"))
		return cmd_demo_syscalls(argc - 1, argv + 1);
	if (argc > 1 && !strcmp(argv[1], "partition"))
		return cmd_demo_partition(argc - 1, argv + 1);
	if (tool_help(argc, argv, usage))
		return 0;
	for (i = 1; i < argc; i++) {
		if (i + 1 < argc && !strcmp(argv[i], "--device") &&
		    tool_parse_u64(argv[i + 1], &device)) {
			i++;
		} else if (i + 1 < argc && !strcmp(argv[i], "--elements") &&
			   tool_parse_u64(argv[i + 1], &n) && n &&
			   n <= (1 << 24)) {
			i++;
		} else {
			fputs(usage, stderr);
			return 2;
		}
	}
	if (tool_open(&gpu, device))
		return 1;

	memset(jobs, 0, sizeof(jobs));
	for (i = 0; i < NSTAGES; i++) {
		stages[i].engine = tool_pick_engine(&gpu, stages[i].prefer,
						    stages[i].op,
						    stages[i].kernel);
		if (stages[i].engine < 0) {
			fprintf(stderr, "megpu demo: no engine can %s\n",
				stages[i].what);
			megpu_close(&gpu);
			return 1;
		}
	}
	for (i = 0; i < NBUF && !ret; i++) {
		ret = megpu_bo_new(&gpu, i == KARGS || i == SUMS ? 4096 :
				   n * 4, 0, &buf[i]);
		ret = ret ?: megpu_bo_map(buf[i]);
	}
	if (ret) {
		fprintf(stderr, "megpu demo: buffers: %s\n", strerror(-ret));
		goto out;
	}
	for (i = 0; i < NBUF; i++)
		memset(buf[i]->map, 0, buf[i]->size);

	printf("megpu demo: %llu elements, pipeline of %d jobs on %s\n",
	       (unsigned long long)n, NSTAGES, gpu.node);
	megpu_cs_init(&cs);
	/*
	 * Submit everything at once; only the syncobjs order the stages
	 * (NO_IMPLICIT), so the driver's dependency handling is what runs.
	 */
	t0 = megpu_now_ns();
	for (i = 0; i < NSTAGES; i++) {
		struct stage *s = &stages[i];
		int b;

		megpu_job_init(&jobs[i], s->engine);
		jobs[i].flags = DRM_MEGPU_SUBMIT_NO_IMPLICIT;
		for (b = 0; b < NBUF; b++)
			megpu_job_add_bo(&jobs[i], buf[b], DRM_MEGPU_BO_READ |
					 DRM_MEGPU_BO_WRITE);
		ret = megpu_syncobj_new(&gpu, false, &s->sync);
		for (d = 0; !ret && d < 2; d++)
			if (s->deps[d] >= 0)
				ret = megpu_job_wait_sync(&jobs[i],
					stages[s->deps[d]].sync, 0);
		megpu_job_signal_sync(&jobs[i], s->sync, 0);
		megpu_cs_reset(&cs);
		build(&cs, i, buf, (uint32_t)n);
		s->submitted = megpu_now_ns();
		ret = ret ?: megpu_job_run(&gpu, &jobs[i], &cs);
		if (ret) {
			fprintf(stderr, "megpu demo: submitting '%s': %s\n",
				s->what, strerror(-ret));
			goto out_jobs;
		}
	}
	/* Stages finish in order: waiting in order sees each one signal. */
	deadline = 60000000000ll;
	for (i = 0; i < NSTAGES; i++) {
		struct stage *s = &stages[i];

		ret = megpu_syncobj_wait(&gpu, s->sync, 0, deadline);
		s->signalled = megpu_now_ns();
		s->status = ret ?: megpu_fence_status(gpu.fd, s->sync, 0);
		failed |= s->status != 0;
		ret = 0;
	}

	printf("\n  %-6s %-10s %-24s %-10s %10s %10s\n", "stage", "engine",
	       "work", "waits for", "done at", "ran for");
	for (i = 0; i < NSTAGES; i++) {
		struct stage *s = &stages[i];
		char name[16], waits[16] = "-";
		int64_t ready = s->submitted;

		for (d = 0; d < 2; d++)
			if (s->deps[d] >= 0 &&
			    stages[s->deps[d]].signalled > ready)
				ready = stages[s->deps[d]].signalled;
		if (s->deps[0] >= 0)
			snprintf(waits, sizeof(waits), s->deps[1] >= 0 ?
				 "%d, %d" : "%d", s->deps[0] + 1,
				 s->deps[1] + 1);
		snprintf(name, sizeof(name), "%d:%s", s->engine,
			 tool_engine_name(&gpu, s->engine));
		printf("  %-6d %-10s %-24s %-10s %8.2f ms %7.2f ms%s%s\n",
		       i + 1, name, s->what, waits,
		       (s->signalled - t0) / 1e6,
		       (s->signalled - ready) / 1e6,
		       s->status ? "  " : "",
		       s->status ? tool_status(s->status) : "");
	}
	printf("  (done at: submit of the pipeline to the stage's signal;"
	       " ran for: since its\n   last dependency signalled)\n\n");
	if (!failed)
		failed = verify(buf, (uint32_t)n) != 0;
	printf("megpu demo: %s\n", failed ? "FAIL" : "PASS");
	ret = failed ? 1 : 0;
out_jobs:
	for (i = 0; i < NSTAGES; i++) {
		megpu_job_fini(&jobs[i]);
		megpu_syncobj_free(&gpu, stages[i].sync);
	}
	megpu_cs_fini(&cs);
out:
	for (i = 0; i < NBUF; i++)
		megpu_bo_free(buf[i]);
	megpu_close(&gpu);
	return ret ? 1 : 0;
}
