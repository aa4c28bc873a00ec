// SPDX-License-Identifier: MIT
/*
 * megpu mgpu: multi-GPU coordination (seed 000) from the command line,
 * and megpu demo video, the seed's FIG. 5 on two GPUs.
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "megpu_hw_mgpu.h"
#include "megpu.h"

static const char usage[] =
"usage: megpu mgpu info\n"
"       megpu mgpu msem [--signals N] [--waits M]\n"
"\n"
"info: every megpu device's agent id and the agent count the driver\n"
"gave it, the schedule position and the MSEM/ARB counters (debugfs).\n"
"\n"
"msem: one BO made on device 0 and imported by every other device\n"
"(PRIME) holds a summed semaphore; every device signals N times\n"
"(default 3) and waits M times (default 1) on its own slot; then the\n"
"MSEM_QUERY ioctl of each device reads the slots and the summed value,\n"
"which must be devices * (N - M).\n";

static int open_all(struct megpu *gpu, unsigned int *n)
{
	*n = 0;
	while (*n < MEGPU_MGPU_MAX_AGENTS && !megpu_open(&gpu[*n], *n))
		(*n)++;
	if (!*n) {
		fprintf(stderr, "megpu: no megpu device found\n");
		return -ENODEV;
	}
	return 0;
}

static int mgpu_info(void)
{
	struct megpu gpu[MEGPU_MGPU_MAX_AGENTS];
	struct megpu_mgpu_status st;
	unsigned int n, id, count;
	int ret;

	ret = open_all(gpu, &n);
	if (ret)
		return 1;
	for (unsigned int d = 0; d < n; d++) {
		ret = megpu_mgpu_agent(&gpu[d], &id, &count);
		if (ret) {
			printf("megpu%u: %s: not an agent (%s)\n", d,
			       gpu[d].node, strerror(-ret));
			continue;
		}
		printf("megpu%u: %s: agent %u of %u\n", d, gpu[d].node, id,
		       count);
		if (megpu_mgpu_status(&gpu[d], &st))
			continue;	/* no debugfs */
		printf("  steps %u, schedule %u/%u\n", st.steps, st.sched_pos,
		       st.sched_len);
		for (unsigned int e = 0; e < st.engines; e++)
			printf("  engine %u: msem retries %u, false blocks %u, arb spins %u, failed waits %u\n",
			       e, st.msem_retries[e], st.msem_false_blocks[e],
			       st.arb_spins[e], st.arb_failed_waits[e]);
	}
	for (unsigned int d = 0; d < n; d++)
		megpu_close(&gpu[d]);
	return 0;
}

/* A BO of @size made on gpu[0], imported by the others into bo[]. */
static int shared_bo(struct megpu *gpu, unsigned int n, uint64_t size,
		     struct megpu_bo **bo)
{
	int fd, ret;

	ret = megpu_bo_new(&gpu[0], size, 0, &bo[0]);
	ret = ret ?: megpu_bo_map(bo[0]);
	if (ret)
		return ret;
	memset(bo[0]->map, 0, size);
	ret = megpu_bo_export(bo[0], &fd);
	if (ret)
		return ret;
	for (unsigned int d = 1; d < n && !ret; d++)
		ret = megpu_bo_import(&gpu[d], fd, &bo[d]);
	close(fd);
	return ret;
}

/* Run cs[d] on engine eng[d] of every device at once; 0 if all ok. */
static int run_all(struct megpu *gpu, unsigned int n, struct megpu_bo **bo,
		   const unsigned int *eng, struct megpu_cs *cs)
{
	struct megpu_job job[MEGPU_MGPU_MAX_AGENTS];
	uint32_t sync[MEGPU_MGPU_MAX_AGENTS];
	int ret = 0, st;

	for (unsigned int d = 0; d < n; d++) {
		megpu_job_init(&job[d], eng[d]);
		/* jobs on the shared BO must overlap: no implicit sync */
		job[d].flags = DRM_MEGPU_SUBMIT_NO_IMPLICIT;
		ret = ret ?: megpu_job_add_bo(&job[d], bo[d], DRM_MEGPU_BO_READ |
					      DRM_MEGPU_BO_WRITE);
		ret = ret ?: megpu_syncobj_new(&gpu[d], false, &sync[d]);
		if (ret)
			return ret;
		megpu_job_signal_sync(&job[d], sync[d], 0);
		ret = megpu_job_upload(&gpu[d], &job[d], &cs[d]);
		ret = ret ?: megpu_job_submit(&gpu[d], &job[d]);
		if (ret)
			return ret;
	}
	for (unsigned int d = 0; d < n; d++) {
		st = megpu_syncobj_wait(&gpu[d], sync[d], 0,
					30ll * 1000 * 1000 * 1000);
		st = st ?: megpu_fence_status(gpu[d].fd, sync[d], 0);
		if (st && !ret)
			ret = st;
		megpu_syncobj_free(&gpu[d], sync[d]);
		megpu_job_fini(&job[d]);
	}
	return ret;
}

static int mgpu_msem(int argc, char **argv)
{
	struct megpu gpu[MEGPU_MGPU_MAX_AGENTS];
	struct megpu_bo *bo[MEGPU_MGPU_MAX_AGENTS] = { NULL };
	struct megpu_cs cs[MEGPU_MGPU_MAX_AGENTS];
	unsigned int eng[MEGPU_MGPU_MAX_AGENTS] = { 0 };
	uint64_t signals = 3, waits = 1;
	unsigned int n, id, count;
	uint32_t sum, want, mask;
	int ret, bad = 0;

	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--signals") && i + 1 < argc &&
		    tool_parse_u64(argv[i + 1], &signals) && signals < 100000) {
			i++;
		} else if (!strcmp(argv[i], "--waits") && i + 1 < argc &&
			   tool_parse_u64(argv[i + 1], &waits) && waits < 100000) {
			i++;
		} else {
			fputs(usage, stderr);
			return 2;
		}
	}
	if (waits > signals) {
		fprintf(stderr, "megpu: more waits than signals would block\n");
		return 2;
	}
	if (open_all(gpu, &n))
		return 1;
	ret = megpu_mgpu_agent(&gpu[0], &id, &count);
	if (ret || count != n) {
		fprintf(stderr, "megpu: devices are not numbered agents\n");
		return 1;
	}
	mask = (1u << n) - 1;
	ret = shared_bo(gpu, n, 4096, bo);
	for (unsigned int d = 0; d < n && !ret; d++) {
		megpu_cs_init(&cs[d]);
		for (uint64_t i = 0; i < signals && !ret; i++)
			ret = megpu_cs_msem_signal(&cs[d], bo[d]->va);
		for (uint64_t i = 0; i < waits && !ret; i++)
			ret = megpu_cs_msem_wait(&cs[d], bo[d]->va, mask);
	}
	ret = ret ?: run_all(gpu, n, bo, eng, cs);
	if (ret) {
		fprintf(stderr, "megpu: %s\n", strerror(-ret));
		return 1;
	}
	want = n * (uint32_t)(signals - waits);
	for (unsigned int d = 0; d < n; d++) {
		ret = megpu_msem_query(bo[d], 0, mask, &sum);
		megpu_mgpu_agent(&gpu[d], &id, &count);
		printf("megpu%u (agent %u): slot %d, summed value %d%s\n", d, id,
		       (int32_t)((uint32_t *)bo[0]->map)[id], (int32_t)sum,
		       ret ? " (query failed)" : "");
		if (ret || sum != want)
			bad++;
		megpu_cs_fini(&cs[d]);
	}
	printf("megpu mgpu msem: %u agents, %llu signals and %llu waits each: %s\n",
	       n, (unsigned long long)signals, (unsigned long long)waits,
	       bad ? "FAIL" : "PASS");
	for (unsigned int d = n; d-- > 0;) {
		megpu_bo_free(bo[d]);
		megpu_close(&gpu[d]);
	}
	return bad ? 1 : 0;
}

/* --- megpu bench mgpu: handoffs of one lock among agents --- */

#define BENCH_ARB	0	/* the ARB block */
#define BENCH_MSEM	256	/* the summed semaphore's slots */
#define BENCH_HOLDER	512	/* the critical section writes its agent */

/* Every agent takes and gives back the lock @h times; handoffs/s. */
static int bench_gpu_lock(struct megpu *gpu, unsigned int k,
			  struct megpu_bo **bo, bool arb, unsigned int h,
			  double *rate)
{
	struct megpu_cs cs[MEGPU_MGPU_MAX_AGENTS];
	unsigned int eng[MEGPU_MGPU_MAX_AGENTS] = { 0 };
	unsigned int id, count;
	uint32_t mask = 0;
	int64_t t0;
	int ret = 0;

	/* the participants' slots: agent ids need not follow device order */
	for (unsigned int d = 0; d < k && !ret; d++) {
		ret = megpu_mgpu_agent(&gpu[d], &id, &count);
		mask |= 1u << id;
	}
	memset(bo[0]->map, 0, 4096);
	for (unsigned int d = 0; d < k; d++) {
		uint64_t va = bo[d]->va;

		megpu_cs_init(&cs[d]);
		/* the summed semaphore starts at 1: one holder at a time */
		if (!arb && !d)
			ret = ret ?: megpu_cs_msem_signal(&cs[d], va + BENCH_MSEM);
		for (unsigned int i = 0; i < h && !ret; i++) {
			ret = arb ? megpu_cs_arb(&cs[d], true, va + BENCH_ARB, 0) :
			      megpu_cs_msem_wait(&cs[d], va + BENCH_MSEM, mask);
			ret = ret ?: megpu_cs_write32(&cs[d], va + BENCH_HOLDER,
						      d);
			ret = ret ?: arb ?
			      megpu_cs_arb(&cs[d], false, va + BENCH_ARB, 0) :
			      megpu_cs_msem_signal(&cs[d], va + BENCH_MSEM);
		}
	}
	t0 = megpu_now_ns();
	ret = ret ?: run_all(gpu, k, bo, eng, cs);
	*rate = (double)k * h * 1e9 / (double)(megpu_now_ns() - t0);
	for (unsigned int d = 0; d < k; d++)
		megpu_cs_fini(&cs[d]);
	return ret;
}

struct cpu_agent {
	struct megpu *gpu;
	struct megpu_bo *bo;
	pthread_mutex_t *lock;
	unsigned int h, id;
	int ret;
};

/* The CPU-mediated lock: take a futex, run a one-write job, give it back. */
static void *cpu_agent_run(void *arg)
{
	struct cpu_agent *a = arg;
	struct megpu_job job;
	struct megpu_cs cs;
	uint32_t sync;

	a->ret = megpu_syncobj_new(a->gpu, false, &sync);
	if (a->ret)
		return NULL;
	megpu_cs_init(&cs);
	megpu_cs_write32(&cs, a->bo->va + BENCH_HOLDER, a->id);
	for (unsigned int i = 0; i < a->h && !a->ret; i++) {
		pthread_mutex_lock(a->lock);
		megpu_job_init(&job, 0);
		job.flags = DRM_MEGPU_SUBMIT_NO_IMPLICIT;
		megpu_job_signal_sync(&job, sync, 0);
		a->ret = megpu_job_add_bo(&job, a->bo, DRM_MEGPU_BO_WRITE);
		a->ret = a->ret ?: megpu_job_run(a->gpu, &job, &cs);
		a->ret = a->ret ?: megpu_syncobj_wait(a->gpu, sync, 0,
						      30ll * 1000 * 1000 * 1000);
		megpu_job_fini(&job);
		pthread_mutex_unlock(a->lock);
	}
	megpu_cs_fini(&cs);
	megpu_syncobj_free(a->gpu, sync);
	return NULL;
}

static int bench_cpu_lock(struct megpu *gpu, unsigned int k,
			  struct megpu_bo **bo, unsigned int h, double *rate)
{
	pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
	struct cpu_agent a[MEGPU_MGPU_MAX_AGENTS];
	pthread_t t[MEGPU_MGPU_MAX_AGENTS];
	int64_t t0 = megpu_now_ns();
	int ret = 0;

	for (unsigned int d = 0; d < k; d++) {
		a[d] = (struct cpu_agent){ &gpu[d], bo[d], &lock, h, d, 0 };
		pthread_create(&t[d], NULL, cpu_agent_run, &a[d]);
	}
	for (unsigned int d = 0; d < k; d++) {
		pthread_join(t[d], NULL);
		ret = ret ?: a[d].ret;
	}
	*rate = (double)k * h * 1e9 / (double)(megpu_now_ns() - t0);
	return ret;
}

/* One row of the table in build/bench.json. */
static void mgpu_figs(unsigned int agents, double arb, double msem, double cpu)
{
	char name[64];

	snprintf(name, sizeof(name), "mgpu.%u_agents.arbiter_per_s", agents);
	bench_fig1(name, "1/s", arb);
	snprintf(name, sizeof(name), "mgpu.%u_agents.msem_per_s", agents);
	bench_fig1(name, "1/s", msem);
	snprintf(name, sizeof(name), "mgpu.%u_agents.cpu_futex_per_s", agents);
	bench_fig1(name, "1/s", cpu);
}

/*
 * The seed's point in numbers: a lock handed among 2, 4 and 8 GPUs by the
 * arbiter and by the summed semaphore, with no CPU in the loop, beside a
 * CPU-mediated lock (a futex; each critical section a job waited for).
 */
int bench_mgpu(bool quick)
{
	struct megpu gpu[MEGPU_MGPU_MAX_AGENTS];
	struct megpu_bo *bo[MEGPU_MGPU_MAX_AGENTS] = { NULL };
	/* every job must end well inside the job timeout (2 s by default) */
	unsigned int n, h = quick ? 30 : 100;
	int ret;

	if (open_all(gpu, &n))
		return -ENODEV;
	if (n < 2) {
		printf("\nmulti-GPU (seed 000): needs 2 megpu GPUs, %u here\n", n);
		megpu_close(&gpu[0]);
		return 0;
	}
	ret = shared_bo(gpu, n, 4096, bo);
	printf("\nmulti-GPU lock handoffs (seed 000), %u in all per row, same run:\n",
	       2 * h);
	printf("  %-6s %14s %14s %14s %10s %10s\n", "agents", "arbiter/s",
	       "summed sem/s", "CPU futex/s", "arb/cpu", "msem/cpu");
	for (unsigned int k = 2; k <= n && k <= MEGPU_MGPU_MAX_AGENTS && !ret;
	     k *= 2) {
		double arb, msem, cpu;

		ret = bench_gpu_lock(gpu, k, bo, true, 2 * h / k, &arb);
		ret = ret ?: bench_gpu_lock(gpu, k, bo, false, 2 * h / k, &msem);
		ret = ret ?: bench_cpu_lock(gpu, k, bo, 2 * h / k, &cpu);
		if (ret)
			break;
		printf("  %-6u %14.0f %14.0f %14.0f %10.2f %10.2f\n", k,
		       arb, msem, cpu, arb / cpu, msem / cpu);
		mgpu_figs(k, arb, msem, cpu);
	}

	for (unsigned int d = n; d-- > 0;) {
		megpu_bo_free(bo[d]);
		megpu_close(&gpu[d]);
	}
	return ret;
}

int cmd_mgpu(int argc, char **argv)
{
	if (tool_help(argc, argv, usage))
		return 0;
	if (argc > 1 && !strcmp(argv[1], "info") && argc == 2)
		return mgpu_info();
	if (argc > 1 && !strcmp(argv[1], "msem"))
		return mgpu_msem(argc - 1, argv + 1);
	fputs(usage, stderr);
	return 2;
}

/* --- megpu demo video: FIG. 5 --- */

static const char video_usage[] =
"usage: megpu demo video [--frames N] [--no-vsync [--lag K]]\n"
"\n"
"The seed's FIG. 5 on two GPUs, no CPU in the loop: the video engine of\n"
"GPU B writes each frame twice (one copy per display) into an 8-frame\n"
"ring in memory shared by PRIME and signals one summed semaphore (one\n"
"slot per GPU) twice; the display engines of GPU A and GPU B each wait\n"
"on it once per frame, take their copy and give the ring slot back. The\n"
"displays scan out at one refresh rate (a vsync barrier between them).\n"
"Every frame must reach each display exactly once, in order, and the\n"
"semaphore's slots must end as the figure's numbers say (checked), then\n"
"PASS or FAIL.\n"
"\n"
"  --frames N   frames to play (default 32)\n"
"  --no-vsync   no common refresh: a display that runs ahead takes the\n"
"               other display's signal (the demo shows it FAIL)\n"
"  --lag K      with --no-vsync: GPU B's display starts only after GPU\n"
"               A's has taken K signals, so A surely runs ahead\n";

/*
 * FIG. 5: one READY semaphore that the video engine signals twice per
 * frame and both displays wait on once per frame. A summed semaphore's
 * signals are not addressed to a waiter, so the figure is correct only
 * because its displays scan out at one refresh rate: neither can wait
 * for frame f + 1 before the other has taken its signal for frame f. We
 * model the common refresh with a barrier per frame (VSYNC: each display
 * signals the other's and waits on its own). Without it (--no-vsync) a
 * display that runs ahead takes the other's signals: it scans out ring
 * slots the video engine has not written yet, and the other display,
 * starved, never gives its ring slots back (the jobs hang until the
 * scheduler's timeout). --lag K makes the first certain and, with
 * --frames K, avoids the second: A's frames 8 to K-1 (at least) are
 * stale. The ring's
 * back-pressure (FREE, one per display) is ours; the figure has none.
 * After N frames READY's slots are the figure's numbers times N: A's
 * slot -N (each A wait pre-decrements A's own slot), B's slot 2N - N.
 */
enum { RING = 8, FRAME_BYTES = 256 };
/* the shared BO: semaphores (one slot per agent each), ring, outputs */
#define READY		0x000			/* a frame copy is ready */
#define FREE(c)		(0x100 + 0x40 * (c))	/* ring slot free for c */
#define VSYNC(c)	(0x200 + 0x40 * (c))	/* display c may go on */
#define GATE		0x300			/* --lag: B's display may start */
#define SLOT(f, c)	(0x1000 + ((f) % RING) * 2 * FRAME_BYTES + \
			 (c) * FRAME_BYTES)
#define OUT(c, f)	(0x2000 + ((c) * 1024 + (f)) * FRAME_BYTES)
#define FRAME_WORD(f)	(0xf0000000u | (f))

/* display c's program: FREE announcements, then per frame wait, copy, vsync */
static int video_display(struct megpu_cs *cs, uint64_t va, int c,
			 unsigned int frames, bool vsync, unsigned int lag)
{
	const uint32_t mask = 0x3;
	int ret = 0;

	for (int i = 0; i < RING && !ret; i++)
		ret = megpu_cs_msem_signal(cs, va + FREE(c));
	if (lag && c == 1)
		ret = ret ?: megpu_cs_msem_wait(cs, va + GATE, mask);
	for (unsigned int f = 0; f < frames && !ret; f++) {
		ret = megpu_cs_msem_wait(cs, va + READY, mask);
		if (lag && c == 0 && f + 1 == lag)
			ret = ret ?: megpu_cs_msem_signal(cs, va + GATE);
		ret = ret ?: megpu_cs_copy(cs, va + SLOT(f, c), va + OUT(c, f),
					   FRAME_BYTES);
		ret = ret ?: megpu_cs_flush(cs);
		ret = ret ?: megpu_cs_msem_signal(cs, va + FREE(c));
		if (vsync) {
			ret = ret ?: megpu_cs_msem_signal(cs, va + VSYNC(!c));
			ret = ret ?: megpu_cs_msem_wait(cs, va + VSYNC(c), mask);
		}
	}
	/* a lag past the last frame: B must still start */
	if (lag && c == 0 && lag > frames)
		ret = ret ?: megpu_cs_msem_signal(cs, va + GATE);
	return ret;
}

/* the video engine's program: per frame two copies, two signals */
static int video_decoder(struct megpu_cs *cs, uint64_t va,
			 unsigned int frames)
{
	const uint32_t mask = 0x3;
	int ret = 0;

	for (unsigned int f = 0; f < frames && !ret; f++) {
		for (int c = 0; c < 2 && !ret; c++)
			ret = megpu_cs_msem_wait(cs, va + FREE(c), mask);
		for (int c = 0; c < 2 && !ret; c++)
			ret = megpu_cs_fill(cs, va + SLOT(f, c), FRAME_BYTES,
					    FRAME_WORD(f));
		for (int c = 0; c < 2 && !ret; c++)
			ret = megpu_cs_msem_signal(cs, va + READY);
	}
	return ret;
}

int cmd_demo_video(int argc, char **argv)
{
	struct megpu gpu[2];
	struct megpu_bo *bo[2] = { NULL, NULL };
	struct megpu_cs cs[3];
	unsigned int n, id[2], count, frames = 32, eng[3], lag = 0;
	bool vsync = true;
	uint64_t types = 0;
	uint64_t v;
	uint32_t *w;
	int ret = 0, bad = 0, j, a_dev, b_dev;

	if (tool_help(argc, argv, video_usage))
		return 0;
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--frames") && i + 1 < argc &&
		    tool_parse_u64(argv[i + 1], &v) && v > 0 && v <= 1024) {
			frames = v;
			i++;
		} else if (!strcmp(argv[i], "--lag") && i + 1 < argc &&
			   tool_parse_u64(argv[i + 1], &v) && v > 0 &&
			   v <= 1024) {
			lag = v;
			i++;
		} else if (!strcmp(argv[i], "--no-vsync")) {
			vsync = false;
		} else {
			fputs(video_usage, stderr);
			return 2;
		}
	}
	/* with the barrier, a held display B would hold A at frame 0 */
	if (lag && vsync) {
		fputs("megpu demo video: --lag needs --no-vsync\n", stderr);
		return 2;
	}
	/* GPU A: agent 0 (gpu[0]), GPU B: agent 1 (gpu[1]), whatever index */
	n = 0;
	for (unsigned int d = 0; d < MEGPU_MGPU_MAX_AGENTS && n < 2; d++) {
		struct megpu g;

		if (megpu_open(&g, d))
			break;
		if (!megpu_mgpu_agent(&g, &id[0], &count) && id[0] < 2) {
			gpu[id[0]] = g;
			n++;
		} else {
			megpu_close(&g);
		}
	}
	if (n < 2) {
		fprintf(stderr, "megpu demo video: needs 2 megpu GPUs (GPUS=2)\n");
		return 1;
	}
	a_dev = 0;
	b_dev = 1;
	ret = shared_bo(gpu, 2, 0x2000 + 2 * 1024 * FRAME_BYTES, bo);
	if (ret)
		goto out;
	w = bo[0]->map;
	/* job 0: UVD on B; jobs 1, 2: DISP on A (copy 0) and on B (copy 1) */
	{
		struct megpu *g[3] = { &gpu[b_dev], &gpu[a_dev], &gpu[b_dev] };
		struct megpu_bo *b[3] = { bo[b_dev], bo[a_dev], bo[b_dev] };
		struct megpu_job job[3];
		uint32_t sync[3];

		j = tool_pick_engine(g[0], MEGPU_ENGINE_VIDEO, MEGPU_PKT_FILL, -1);
		eng[0] = j < 0 ? 0 : j;
		j = tool_pick_engine(g[1], MEGPU_ENGINE_GFX, MEGPU_PKT_COPY, -1);
		eng[1] = j < 0 ? 0 : j;
		j = tool_pick_engine(g[2], MEGPU_ENGINE_GFX, MEGPU_PKT_COPY, -1);
		eng[2] = j < 0 ? 0 : j;
		/* GPU B's display needs an engine of its own that copies */
		if (eng[2] == eng[0] && !megpu_engines(g[0], &count, &types)) {
			for (unsigned int e = 0; e < count; e++)
				if (e != eng[0] &&
				    megpu_engine_packets(MEGPU_ENGINE_TYPE(types, e)) &
				    MEGPU_BIT(MEGPU_PKT_COPY)) {
					eng[2] = e;
					break;
				}
		}
		if (eng[2] == eng[0]) {
			fprintf(stderr, "megpu demo video: GPU B needs two engines that copy\n");
			ret = -EOPNOTSUPP;
			goto out;
		}
		for (int k = 0; k < 3; k++)
			megpu_cs_init(&cs[k]);
		ret = video_decoder(&cs[0], b[0]->va, frames);
		for (int c = 0; c < 2 && !ret; c++)
			ret = video_display(&cs[1 + c], b[1 + c]->va, c, frames,
					    vsync, lag);
		for (int k = 0; k < 3 && !ret; k++) {
			megpu_job_init(&job[k], eng[k]);
			job[k].flags = DRM_MEGPU_SUBMIT_NO_IMPLICIT;
			ret = megpu_job_add_bo(&job[k], b[k], DRM_MEGPU_BO_READ |
					       DRM_MEGPU_BO_WRITE);
			ret = ret ?: megpu_syncobj_new(g[k], false, &sync[k]);
			if (ret)
				break;
			megpu_job_signal_sync(&job[k], sync[k], 0);
			ret = megpu_job_upload(g[k], &job[k], &cs[k]);
			ret = ret ?: megpu_job_submit(g[k], &job[k]);
		}
		for (int k = 0; k < 3 && !ret; k++) {
			int st = megpu_syncobj_wait(g[k], sync[k], 0,
						    30ll * 1000 * 1000 * 1000);

			st = st ?: megpu_fence_status(g[k]->fd, sync[k], 0);
			printf("  %s on GPU %c (%s): %s\n",
			       k ? "display" : "video  ", k == 1 ? 'A' : 'B',
			       tool_engine_name(g[k], eng[k]), tool_status(st));
			if (st)
				bad++;
			megpu_syncobj_free(g[k], sync[k]);
			megpu_job_fini(&job[k]);
		}
		for (int k = 0; k < 3; k++)
			megpu_cs_fini(&cs[k]);
	}
	if (ret)
		goto out;
	megpu_flush(&gpu[0], NULL);
	for (int c = 0; c < 2; c++) {
		unsigned int good = 0;

		for (unsigned int f = 0; f < frames; f++) {
			const uint32_t *o = w + OUT(c, f) / 4;
			bool ok = true;

			for (unsigned int i = 0; i < FRAME_BYTES / 4; i++)
				ok &= o[i] == FRAME_WORD(f);
			good += ok;
		}
		printf("  display on GPU %c: %u of %u frames, in order: %s\n",
		       c ? 'B' : 'A', good, frames,
		       good == frames ? "ok" : "FAIL");
		if (good != frames)
			bad++;
	}
	/* FIG. 5's numbers, N times: A's slot -N, B's slot 2N - N = N */
	printf("  READY slots: A %d, B %d (want -%u, %u), free sums %d/%d (8 each)\n",
	       (int32_t)w[READY / 4], (int32_t)w[READY / 4 + 1], frames, frames,
	       (int32_t)(w[FREE(0) / 4] + w[FREE(0) / 4 + 1]),
	       (int32_t)(w[FREE(1) / 4] + w[FREE(1) / 4 + 1]));
	if (w[READY / 4] != -frames || w[READY / 4 + 1] != frames ||
	    w[FREE(0) / 4] + w[FREE(0) / 4 + 1] != RING ||
	    w[FREE(1) / 4] + w[FREE(1) / 4 + 1] != RING)
		bad++;
out:
	if (ret) {
		fprintf(stderr, "megpu demo video: %s\n", strerror(-ret));
		bad++;
	}
	printf("megpu demo video: %s\n", bad ? "FAIL" : "PASS");
	for (int d = 1; d >= 0; d--) {
		megpu_bo_free(bo[d]);
		megpu_close(&gpu[d]);
	}
	return bad ? 1 : 0;
}
