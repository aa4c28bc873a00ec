// SPDX-License-Identifier: MIT
/*
 * megpu bench: tables, never verdicts. Every number is shown beside a
 * reference measured in the same run (a no-op ioctl, a CPU memcpy), so
 * ratios stay meaningful on a slow emulator.
 */

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "megpu_hw_packets.h"
#include "megpu_hw_wave.h"
#include "megpu.h"

static const char usage[] =
"usage: megpu bench [fast|sem|flush|programs|syscall|partition|mgpu]\n"
"                   [--device I] [--jobs N] [--rounds N] [--quick]\n"
"\n"
"Prints (with sem, flush, programs, syscall, partition or mgpu, only\n"
"that table; with fast, the tables up to the semaphores'):\n"
"  - the floor of a job: a no-op ioctl (GET_PARAM), a doorbell and an\n"
"    interrupt round trip (debugfs \"floor\", timed in the kernel)\n"
"  - submit-to-completion latency of empty jobs (one NOP), one at a time,\n"
"    as a multiple of the floor\n"
"  - empty jobs per second on 1..N engines in parallel (a thread each)\n"
"  - copy-engine COPY bandwidth for 1, 4 and 16 MiB beside a CPU memcpy,\n"
"    in relaxed and (with debugfs write_mode) strict write mode\n"
"  - dependencies between engines waited for with GPU semaphores beside\n"
"    CPU-side waits (module parameter gpu_semaphores, restored after):\n"
"    a chain ping-ponging between two engines and a fan-in of every\n"
"    engine into one job, each submitted as fast as possible and queued\n"
"    behind a gate (debugfs delay_us) that opens once all are in rings\n"
"  - dependent launches producer -> consumer on two engines in the\n"
"    device's relaxed write mode: the host-driven flush handshake\n"
"    (HOST_FLUSH), the GPU-internal flush (default), no flush (unsafe)\n"
"    and, when debugfs has the write_mode knob, strict mode without\n"
"    flushes (the write mode is restored after); then the flush's\n"
"    cost against the posted data's drain time (the producer alone)\n"
"  - wave programs (VADD, SAXPY, CHECKSUM as programs/*.s) beside the\n"
"    same built-in kernels and a loop on the guest CPU, at 4k, 64k and\n"
"    1M elements: times, program/built-in ratio, instructions per second\n"
"  - GPU-to-CPU calls (seed 003) for 1, 8 and 64 callers: rounds of\n"
"    in-batch SYSCALLs (ECHO answered in the kernel, a user op answered\n"
"    by a service thread) beside the phased way (end the job, do the\n"
"    work on the CPU, submit a new job), with the ratio\n"
"  - work partitioning (seed 002): makespans of CPU-only, GPU-only, a\n"
"    static split (half to each side, stealing only within a side) and\n"
"    dynamic dequeuing with stealing (B1, with every consumer and with\n"
"    one CPU thread and one engine), against the ideal of summed\n"
"    throughput and against the ideal of the rates both sides have\n"
"    together (measured in the static split), and GPU-only on one\n"
"    engine beside it (the engines' scaling); B2\n"
"  - with 2 or more GPUs (seed 000): handoffs per second of one lock\n"
"    among 2, 4 and 8 GPUs (as many as there are) by the arbiter and\n"
"    by the summed semaphore (no CPU in the loop) beside a\n"
"    CPU-mediated lock (a futex, each critical section a job waited\n"
"    for), with the ratios\n"
"\n"
"  --device I   megpu device index (default 0)\n"
"  --jobs N     empty jobs per engine for the throughput table (default\n"
"               1000)\n"
"  --rounds N   rounds per row of the GPU-to-CPU call table (default 30;\n"
"               an in-batch row is one job: too many rounds of 64\n"
"               callers can outlast the job timeout)\n"
"  --slots N    mailbox slots of the bench's file (module parameter\n"
"               mailbox_slots, set for its open and restored; root)\n"
"  --tasks N    tasks of the work-partitioning tables (default 12000)\n"
"  --grain N    elements per task there (default 2048)\n"
"  --quick      fewer repetitions\n"
"\n"
"Figures are medians of repeated runs; the last line of the output,\n"
"\"MEGPU-BENCH-JSON {...}\", holds each with its min and max (make bench\n"
"writes it to build/bench.json).\n";

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

/* Busy and total jiffies of all CPUs so far (/proc/stat), or false. */
static bool cpu_jiffies(unsigned long long *busy, unsigned long long *all)
{
	unsigned long long v[8] = { 0 };
	FILE *f = fopen("/proc/stat", "r");
	int n;

	if (!f)
		return false;
	n = fscanf(f, "cpu %llu %llu %llu %llu %llu %llu %llu %llu", &v[0],
		   &v[1], &v[2], &v[3], &v[4], &v[5], &v[6], &v[7]);
	fclose(f);
	if (n < 5)
		return false;
	*all = v[0] + v[1] + v[2] + v[3] + v[4] + v[5] + v[6] + v[7];
	*busy = *all - v[3] - v[4];	/* idle, iowait */
	return true;
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

/* --- semaphores between engines (seed 001) --- */

#define SEM_PARAM "/sys/module/megpu/parameters/gpu_semaphores"
#define SEM_IB_STRIDE 32	/* one WRITE_DATA of one dword */

/* gpu_semaphores: 1 (Y), 0 (N), or -errno when it cannot be read. */
static int sem_param_get(void)
{
	char c = 0;
	int fd = open(SEM_PARAM, O_RDONLY);

	if (fd < 0)
		return -errno;
	if (read(fd, &c, 1) != 1)
		c = 0;
	close(fd);
	return c == 'Y' || c == 'y' || c == '1';
}

static int sem_param_set(bool on)
{
	int fd = open(SEM_PARAM, O_WRONLY);
	ssize_t n;

	if (fd < 0)
		return -errno;
	n = write(fd, on ? "Y" : "N", 1);
	close(fd);
	return n == 1 ? 0 : -EIO;
}

/*
 * Submit a job on @engine writing @value at @addr, IB in slot @slot of
 * @ibs, using @n BOs with @flags, with @out_sync (0: none).
 */
static int sem_submit(struct megpu *gpu, unsigned int engine,
		      struct megpu_bo *ibs, unsigned int slot,
		      struct megpu_bo **bos, const uint32_t *flags,
		      unsigned int n, uint64_t addr, uint32_t value,
		      uint32_t out_sync)
{
	struct megpu_job job;
	struct megpu_cs cs;
	unsigned int i;
	int ret = 0;

	megpu_job_init(&job, engine);
	for (i = 0; !ret && i < n; i++)
		ret = megpu_job_add_bo(&job, bos[i], flags[i]);
	megpu_job_set_ib(&job, ibs, (uint64_t)slot * SEM_IB_STRIDE);
	if (out_sync)
		megpu_job_signal_sync(&job, out_sync, 0);
	megpu_cs_init(&cs);
	megpu_cs_write32(&cs, addr, value);
	ret = ret ?: megpu_job_run(gpu, &job, &cs);
	megpu_cs_fini(&cs);
	return ret;
}

static int sem_wait(struct megpu *gpu, uint32_t sync)
{
	int ret = megpu_syncobj_wait(gpu, sync, 0, 60000000000ll);

	return ret ?: megpu_fence_status(gpu->fd, sync, 0);
}

/*
 * The gate: debugfs delay_us holds @engine before its next packet (up to
 * a second; re-armed until opened) and writing 0 releases it at once.
 */
static int gate_set(struct megpu *gpu, unsigned int engine, unsigned int us)
{
	char path[256], buf[32];
	int fd, n, ret;

	ret = megpu_debugfs_path(gpu, "delay_us", path, sizeof(path));
	if (ret)
		return ret;
	fd = open(path, O_WRONLY);
	if (fd < 0)
		return -errno;
	n = snprintf(buf, sizeof(buf), "%u %u", engine, us);
	ret = write(fd, buf, n) == n ? 0 : -errno;
	close(fd);
	return ret;
}

#define GATE_US 1000000

/*
 * @hops jobs alternating between engines @a and @b, each writing BO @x
 * after the previous one (implicitly, through @x), all submitted at once:
 * the time per hop once the last one is done, and how much of it the
 * submitting loop took (*@submit_ns: the chain cannot go faster).
 */
static int sem_chain(struct megpu *gpu, unsigned int a, unsigned int b,
		     unsigned int hops, struct megpu_bo *ibs,
		     struct megpu_bo *x, uint32_t sync, double *ns_per_hop,
		     double *submit_ns)
{
	const uint32_t flags = DRM_MEGPU_BO_READ | DRM_MEGPU_BO_WRITE;
	int64_t t0 = megpu_now_ns();
	unsigned int h;
	int ret = 0;

	for (h = 0; !ret && h < hops; h++)
		ret = sem_submit(gpu, h % 2 ? b : a, ibs, h, &x, &flags, 1,
				 x->va, h, h == hops - 1 ? sync : 0);
	*submit_ns = (double)(megpu_now_ns() - t0) / hops;
	ret = ret ?: sem_wait(gpu, sync);
	*ns_per_hop = (double)(megpu_now_ns() - t0) / hops;
	return ret;
}

/*
 * The same chain queued behind a gate on @a: every job is submitted while
 * @a is held, then the time from opening the gate to the last fence, per
 * hop: the hop without the submission cost.
 */
static int sem_chain_gated(struct megpu *gpu, unsigned int a, unsigned int b,
			   unsigned int hops, struct megpu_bo *ibs,
			   struct megpu_bo *x, uint32_t sync, double *ns_per_hop)
{
	const uint32_t flags = DRM_MEGPU_BO_READ | DRM_MEGPU_BO_WRITE;
	int64_t t0, base = tool_emitted_jobs(gpu);
	unsigned int h;
	int ret;

	ret = gate_set(gpu, a, GATE_US);
	for (h = 0; !ret && h < hops; h++)
		ret = sem_submit(gpu, h % 2 ? b : a, ibs, h, &x, &flags, 1,
				 x->va, h, h == hops - 1 ? sync : 0);
	/* with CPU waits, only the first job can go in */
	if (!ret)
		tool_gate_settle(gpu, base, sem_param_get() == 0 ? 1 : hops);
	t0 = megpu_now_ns();
	if (gate_set(gpu, a, 0))
		ret = ret ?: -EIO;
	ret = ret ?: sem_wait(gpu, sync);
	*ns_per_hop = (double)(megpu_now_ns() - t0) / hops;
	return ret;
}

/*
 * One fan-in round: every engine but @c writes its BO @p[e], then a job
 * on @c reads them all and writes @y. IBs from slot @slot on.
 */
static int sem_fanin_round(struct megpu *gpu, unsigned int engines,
			   unsigned int c, struct megpu_bo *ibs,
			   unsigned int slot, struct megpu_bo **p,
			   struct megpu_bo *y, uint32_t round, uint32_t sync)
{
	struct megpu_bo *bos[MEGPU_MAX_ENGINES];
	uint32_t flags[MEGPU_MAX_ENGINES];
	const uint32_t wr = DRM_MEGPU_BO_WRITE;
	unsigned int e, n = 0;
	int ret = 0;

	for (e = 0; !ret && e < engines; e++) {
		if (e == c)
			continue;
		ret = sem_submit(gpu, e, ibs, slot + n, &p[e], &wr, 1,
				 p[e]->va, round, 0);
		bos[n] = p[e];
		flags[n++] = DRM_MEGPU_BO_READ;
	}
	bos[n] = y;
	flags[n] = DRM_MEGPU_BO_WRITE;
	return ret ?: sem_submit(gpu, c, ibs, slot + n, bos, flags, n + 1,
				 y->va, round, sync);
}

/*
 * @rounds fan-in rounds queued behind gates on every producer engine:
 * the time per round from opening the gates to the last fence.
 */
static int sem_fanin_gated(struct megpu *gpu, unsigned int engines,
			   unsigned int rounds, struct megpu_bo *ibs,
			   struct megpu_bo **p, struct megpu_bo *y,
			   uint32_t sync, double *ns_per_round)
{
	int64_t t0, base = tool_emitted_jobs(gpu);
	unsigned int r, e;
	int ret = 0;

	for (e = 1; !ret && e < engines; e++)
		ret = gate_set(gpu, e, GATE_US);
	for (r = 0; !ret && r < rounds; r++)
		ret = sem_fanin_round(gpu, engines, 0, ibs, r * engines, p, y,
				      r, r == rounds - 1 ? sync : 0);
	/* with CPU waits, only the first round's producers can go in */
	if (!ret)
		tool_gate_settle(gpu, base, sem_param_get() == 0 ?
				 engines - 1 : (int64_t)rounds * engines);
	t0 = megpu_now_ns();
	for (e = 1; e < engines; e++)
		if (gate_set(gpu, e, 0))
			ret = ret ?: -EIO;
	ret = ret ?: sem_wait(gpu, sync);
	*ns_per_round = (double)(megpu_now_ns() - t0) / rounds;
	return ret;
}

#define FANIN_ROUNDS_MAX 400

/*
 * Median latency of one round at a time. With @cpu_ns, the rounds with
 * GPU semaphores (*@lat_ns) and with CPU waits (*@cpu_ns) take turns,
 * round by round, which of the two goes first alternating: a round is
 * under a millisecond, and this host's speed moves more than the two
 * ways differ from one run to the next (gains 0.66-1.25 in four runs of
 * an hour). Leaves GPU semaphores on.
 */
static int sem_fanin_rounds(struct megpu *gpu, unsigned int engines,
			    unsigned int rounds, struct megpu_bo *ibs,
			    struct megpu_bo **p, struct megpu_bo *y,
			    uint32_t sync, double *lat_ns, double *cpu_ns)
{
	static int64_t lat[2][FANIN_ROUNDS_MAX];
	unsigned int r, k, ways = cpu_ns ? 2 : 1;
	unsigned int n = rounds < FANIN_ROUNDS_MAX ? rounds : FANIN_ROUNDS_MAX;
	int64_t t0;
	int ret = 0;

	for (r = 0; !ret && r < n; r++) {
		for (k = 0; !ret && k < ways; k++) {
			/* way 0: GPU semaphores; the first way alternates */
			unsigned int way = (r + k) % ways;

			if (cpu_ns)
				ret = sem_param_set(way == 0);
			t0 = megpu_now_ns();
			ret = ret ?: sem_fanin_round(gpu, engines, 0, ibs, 0, p,
						     y, r, sync);
			ret = ret ?: sem_wait(gpu, sync);
			lat[way][r] = megpu_now_ns() - t0;
		}
	}
	if (cpu_ns)
		ret = sem_param_set(true) ?: ret;
	if (ret)
		return ret;
	for (k = 0; k < ways; k++)
		qsort(lat[k], n, sizeof(lat[k][0]), cmp64);
	*lat_ns = lat[0][n / 2];
	if (cpu_ns)
		*cpu_ns = lat[1][n / 2];
	return 0;
}

#define FANIN_CHUNK 25

/*
 * Pipelined rounds per second: FANIN_CHUNK rounds submitted back to
 * back, then their end awaited. With @cpu_per_s, chunks with GPU
 * semaphores (*@per_s) and with CPU waits take turns, as the one-round
 * rows do. Leaves GPU semaphores on.
 */
static int sem_fanin_pipelined(struct megpu *gpu, unsigned int engines,
			       unsigned int rounds, struct megpu_bo *ibs,
			       struct megpu_bo **p, struct megpu_bo *y,
			       uint32_t sync, double *per_s, double *cpu_per_s)
{
	unsigned int r0, r, k, n, ways = cpu_per_s ? 2 : 1;
	int64_t t0, ns[2] = { 0, 0 };
	unsigned int done[2] = { 0, 0 };
	int ret = 0;

	for (r0 = 0; !ret && r0 < rounds; r0 += FANIN_CHUNK) {
		n = rounds - r0 < FANIN_CHUNK ? rounds - r0 : FANIN_CHUNK;
		for (k = 0; !ret && k < ways; k++) {
			unsigned int way = (r0 / FANIN_CHUNK + k) % ways;

			if (cpu_per_s)
				ret = sem_param_set(way == 0);
			t0 = megpu_now_ns();
			for (r = r0; !ret && r < r0 + n; r++)
				ret = sem_fanin_round(gpu, engines, 0, ibs,
						      r * engines, p, y, r,
						      r == r0 + n - 1 ? sync :
									0);
			ret = ret ?: sem_wait(gpu, sync);
			ns[way] += megpu_now_ns() - t0;
			done[way] += n;
		}
	}
	if (cpu_per_s)
		ret = sem_param_set(true) ?: ret;
	if (ret)
		return ret;
	*per_s = done[0] / (ns[0] / 1e9);
	if (cpu_per_s)
		*cpu_per_s = done[1] / (ns[1] / 1e9);
	return 0;
}

#define SEM_RUNS_MAX 9

/* What one mode measured, one entry per run. */
struct sem_result {
	double hop_ns[SEM_RUNS_MAX], gated_hop_ns[SEM_RUNS_MAX];
	double submit_ns[SEM_RUNS_MAX];	/* the chain's submitting loop */
	double fanin_ns[SEM_RUNS_MAX], fanin_per_s[SEM_RUNS_MAX];
	double gated_fanin_ns[SEM_RUNS_MAX];
};

/*
 * Gated chains stay below the scheduler's credits (127 jobs an engine), so
 * that every job of the chain is in a ring before the gate opens.
 */
#define GATED_HOPS_MAX 200

/*
 * One run of one way. With @fanin, the ungated fan-in rows (one round at
 * a time and pipelined) too; with @cpu_res as well, those of CPU waits
 * (into @cpu_res), in turns with its own. bench_sem() asks the GPU
 * semaphores' run for both and the CPU waits' run for neither; where the
 * way cannot be switched, for the fan-in alone.
 */
static int bench_sem_mode(struct megpu *gpu, unsigned int engines,
			  unsigned int a, unsigned int b, unsigned int hops,
			  unsigned int rounds, unsigned int run,
			  struct sem_result *res, struct sem_result *cpu_res,
			  bool fanin)
{
	unsigned int ghops = hops < GATED_HOPS_MAX ? hops : GATED_HOPS_MAX;
	double warm, warm_submit;
	struct megpu_bo *ibs = NULL, *x = NULL, *y = NULL;
	struct megpu_bo *p[MEGPU_MAX_ENGINES] = { NULL };
	unsigned int slots = hops > rounds * engines ? hops : rounds * engines;
	uint32_t sync = 0;
	unsigned int e;
	int ret;

	ret = megpu_syncobj_new(gpu, false, &sync);
	ret = ret ?: megpu_bo_new(gpu, (uint64_t)slots * SEM_IB_STRIDE, 0,
				  &ibs);
	ret = ret ?: megpu_bo_new(gpu, 4096, 0, &x);
	ret = ret ?: megpu_bo_new(gpu, 4096, 0, &y);
	for (e = 0; !ret && e < engines; e++)
		ret = megpu_bo_new(gpu, 4096, 0, &p[e]);
	/* a first short run: page tables, caches and schedulers warm */
	ret = ret ?: sem_chain(gpu, a, b, 8, ibs, x, sync, &warm,
			       &warm_submit);
	ret = ret ?: sem_chain(gpu, a, b, hops, ibs, x, sync,
			       &res->hop_ns[run], &res->submit_ns[run]);
	ret = ret ?: sem_chain_gated(gpu, a, b, ghops, ibs, x, sync,
				     &res->gated_hop_ns[run]);
	if (fanin && !ret)
		ret = sem_fanin_rounds(gpu, engines, rounds, ibs, p, y, sync,
				       &res->fanin_ns[run],
				       cpu_res ? &cpu_res->fanin_ns[run] :
						 NULL);
	if (fanin && !ret)
		ret = sem_fanin_pipelined(gpu, engines, rounds, ibs, p, y, sync,
					  &res->fanin_per_s[run],
					  cpu_res ? &cpu_res->fanin_per_s[run] :
						    NULL);
	ret = ret ?: sem_fanin_gated(gpu, engines, rounds, ibs, p, y, sync,
				     &res->gated_fanin_ns[run]);
	for (e = 0; e < engines; e++)
		megpu_bo_free(p[e]);
	megpu_bo_free(y);
	megpu_bo_free(x);
	megpu_bo_free(ibs);
	megpu_syncobj_free(gpu, sync);
	return ret;
}

static void sem_row(const char *what, double gpu, double cpu, bool rate,
		    bool both)
{
	printf("  %-40s %12.1f ", what, gpu);
	if (both)
		printf("%12.1f %10.2f\n", cpu, rate ? gpu / cpu : cpu / gpu);
	else
		printf("%12s %10s\n", "-", "-");
}

/*
 * GPU semaphores against CPU-side waits, measured in the same run by
 * toggling the gpu_semaphores parameter (put back as it was).
 */
static int bench_sem(struct megpu *gpu, bool quick)
{
	unsigned int hops = quick ? 100 : 400, rounds = quick ? 30 : 100;
	unsigned int runs = quick ? 3 : 5, run;
	static struct sem_result res[2];
	double m[2][6];
	unsigned int engines, a, b, k;
	uint64_t types;
	int was, ret = 0, mode;
	char na[16], nb[16], what[80];
	static const char *const key[6] = {
		"sem.chain.%s.us_per_hop", "sem.chain_gated.%s.us_per_hop",
		"sem.fanin.%s.us_per_round", "sem.fanin_gated.%s.us_per_round",
		"sem.fanin_pipelined.%s.rounds_per_s",
		"sem.chain.%s.submit_us_per_hop",
	};
	bool both;

	ret = megpu_engines(gpu, &engines, &types);
	if (ret)
		return ret;
	if (engines < 2) {
		printf("\none engine: no semaphores between engines to "
		       "measure\n");
		return 0;
	}
	a = 0;
	b = engines > 2 ? 2 : 1;
	was = sem_param_get();
	both = was >= 0 && !sem_param_set(was);
	if (!both)
		fprintf(stderr, "megpu bench: cannot set %s: GPU semaphores "
			"only\n", SEM_PARAM);
	/* the modes alternate run by run: a slow spell hits both */
	for (run = 0; !ret && run < runs; run++) {
		for (mode = 0; mode < (both ? 2 : 1); mode++) {
			snprintf(what, sizeof(what), "dependencies with %s, "
				 "run %u of %u", mode ? "CPU waits" :
				 "GPU semaphores", run + 1, runs);
			progress(what);
			if (both) {
				ret = sem_param_set(mode == 0);
				if (ret)
					break;
			}
			/* the ungated fan-in: both ways, in the GPU run */
			ret = bench_sem_mode(gpu, engines, a, b, hops, rounds,
					     run, &res[mode],
					     both && !mode ? &res[1] : NULL,
					     !mode);
			if (ret)
				break;
		}
	}
	if (both)
		sem_param_set(was);
	if (ret)
		return ret;

	for (mode = 0; mode < (both ? 2 : 1); mode++) {
		const char *mn = mode ? "cpu" : "gpu";
		double *v[6] = {
			res[mode].hop_ns, res[mode].gated_hop_ns,
			res[mode].fanin_ns, res[mode].gated_fanin_ns,
			res[mode].fanin_per_s, res[mode].submit_ns,
		};

		for (k = 0; k < 6; k++) {
			double us[SEM_RUNS_MAX];

			for (run = 0; run < runs; run++)
				us[run] = k == 4 ? v[k][run] : v[k][run] / 1e3;
			snprintf(what, sizeof(what), key[k], mn);
			m[mode][k] = bench_fig(what, k == 4 ? "1/s" : "us", us,
					       runs);
		}
	}
	if (both) {
		const char *rk[4] = {
			"sem.chain.gain", "sem.chain_gated.gain",
			"sem.fanin.gain", "sem.fanin_gated.gain",
		};
		double pg[SEM_RUNS_MAX];

		for (k = 0; k < 4; k++) {
			double g[SEM_RUNS_MAX];
			double *gv = k == 0 ? res[0].hop_ns : k == 1 ?
				     res[0].gated_hop_ns : k == 2 ?
				     res[0].fanin_ns : res[0].gated_fanin_ns;
			double *cv = k == 0 ? res[1].hop_ns : k == 1 ?
				     res[1].gated_hop_ns : k == 2 ?
				     res[1].fanin_ns : res[1].gated_fanin_ns;

			for (run = 0; run < runs; run++)
				g[run] = cv[run] / gv[run];
			bench_fig(rk[k], "x", g, runs);
		}
		/* pipelined: rounds per second, so GPU over CPU */
		for (run = 0; run < runs; run++)
			pg[run] = res[0].fanin_per_s[run] / res[1].fanin_per_s[run];
		bench_fig("sem.fanin_pipelined.gain", "x", pg, runs);
	}

	megpu_engine_name(types, a, na, sizeof(na));
	megpu_engine_name(types, b, nb, sizeof(nb));
	printf("\ndependencies between engines: GPU semaphores (WAIT in the "
	       "frame) beside\nCPU-side waits (gpu_semaphores=N), same run, "
	       "median of %u runs\n", runs);
	printf("  %-40s %12s %12s %10s\n", "", "GPU sems", "CPU waits",
	       "GPU gain");
	snprintf(what, sizeof(what), "chain %s<->%s, %u hops: us/hop", na,
		 nb, hops);
	sem_row(what, m[0][0], m[1][0], false, both);
	if (both)
		printf("  %-40s %12.1f %12.1f %10s\n",
		       "  of which submitting: us/hop", m[0][5], m[1][5], "-");
	snprintf(what, sizeof(what), "  gated, %u hops: us/hop",
		 hops < GATED_HOPS_MAX ? hops : GATED_HOPS_MAX);
	sem_row(what, m[0][1], m[1][1], false, both);
	megpu_engine_name(types, 0, na, sizeof(na));
	snprintf(what, sizeof(what), "fan-in %u->1 (%s): us/round",
		 engines - 1, na);
	sem_row(what, m[0][2], m[1][2], false, both);
	snprintf(what, sizeof(what), "  gated, %u rounds: us/round", rounds);
	sem_row(what, m[0][3], m[1][3], false, both);
	snprintf(what, sizeof(what), "  pipelined, %u rounds: rounds/s",
		 rounds);
	sem_row(what, m[0][4], m[1][4], true, both);
	printf("  (chain: submitted as fast as possible, the submission "
	       "included; where\n  submitting takes most of the hop both "
	       "ways wait for the submitting\n  thread, and the gain is "
	       "about 1; gated: every job queued behind a\n  delay_us gate, "
	       "timed from opening it to the last fence, the hop\n  without "
	       "the submission; fan-in us/round: one round at a time, the "
	       "two ways\n  in turns round by round; its four SUBMITs take "
	       "about as long as\n  the producers run, so the consumer's "
	       "WAITs seldom stall and both\n  ways do the same (gain about "
	       "1); pipelined: 25 rounds submitted back\n  to back, the ways "
	       "in turns; GPU gain: how many times faster GPU\n  semaphores "
	       "are)\n");
	return 0;
}

/* --- flushes for dependent launches (seed 004) --- */

#define FLUSH_BYTES (64 * 1024)		/* 16 pages: 16 posted writes */
#define FLUSH_MAX_ITERS 400

enum { FL_HOST, FL_GPU, FL_STRICT, FL_NONE, FL_MODES };

static const char *const fl_names[FL_MODES] = {
	[FL_HOST] = "host-driven flush (HOST_FLUSH)",
	[FL_GPU] = "GPU-internal flush (default)",
	[FL_STRICT] = "strict write mode, no flush",
	[FL_NONE] = "relaxed, no flush (unsafe)",
};

struct fl_result {
	bool ran;
	double median_ns, mean_ns;
	unsigned int stale;	/* chains whose consumer read old data */
};

/* The producer fills @src with a value, the consumer copies it to @dst. */
struct fl_pair {
	struct megpu *gpu;
	unsigned int a, b;
	bool copy_packet;	/* else the COPY kernel */
	struct megpu_bo *src, *dst, *kargs;
	uint32_t psync, csync;
	struct megpu_job prod, cons;
};

/* One chain: the producer with @flags, the consumer after its fence. */
static int fl_iter(struct fl_pair *p, uint32_t flags, uint32_t value,
		   int64_t *ns, bool *stale)
{
	struct megpu_cs cs;
	unsigned int i;
	int64_t t0;
	int ret;

	*stale = false;
	*ns = 0;
	p->prod.flags = DRM_MEGPU_SUBMIT_NO_IMPLICIT | flags;
	megpu_cs_init(&cs);
	megpu_cs_fill(&cs, p->src->va, FLUSH_BYTES, value);
	ret = megpu_job_upload(p->gpu, &p->prod, &cs);
	megpu_cs_fini(&cs);
	if (ret)
		return ret;
	t0 = megpu_now_ns();
	ret = megpu_job_submit(p->gpu, &p->prod) ?:
	      megpu_job_submit(p->gpu, &p->cons) ?:
	      sem_wait(p->gpu, p->csync);
	*ns = megpu_now_ns() - t0;
	ret = ret ?: sem_wait(p->gpu, p->psync);
	for (i = 0; !ret && i < FLUSH_BYTES / 4; i++)
		if (((uint32_t *)p->dst->map)[i] != value) {
			*stale = true;
			break;
		}
	return ret;
}

/* The two jobs; the consumer's IB never changes. */
static int fl_jobs(struct fl_pair *p)
{
	struct megpu_cs cs;
	uint64_t args;
	int ret;

	megpu_job_init(&p->prod, p->a);
	megpu_job_init(&p->cons, p->b);
	p->cons.flags = DRM_MEGPU_SUBMIT_NO_IMPLICIT;
	ret = megpu_job_add_bo(&p->prod, p->src, DRM_MEGPU_BO_WRITE) ?:
	      megpu_job_add_bo(&p->cons, p->src, DRM_MEGPU_BO_READ) ?:
	      megpu_job_add_bo(&p->cons, p->dst, DRM_MEGPU_BO_WRITE) ?:
	      megpu_job_add_bo(&p->cons, p->kargs, DRM_MEGPU_BO_READ) ?:
	      megpu_job_wait_sync(&p->cons, p->psync, 0);
	if (ret)
		return ret;
	megpu_job_signal_sync(&p->prod, p->psync, 0);
	megpu_job_signal_sync(&p->cons, p->csync, 0);
	megpu_cs_init(&cs);
	if (p->copy_packet) {
		megpu_cs_copy(&cs, p->src->va, p->dst->va, FLUSH_BYTES);
	} else {
		struct megpu_kargs k = {
			.ptr = { p->src->va, p->dst->va }, .n = FLUSH_BYTES / 4,
		};

		ret = megpu_kargs_write(p->kargs, 0, &k, &args);
		megpu_cs_dispatch(&cs, MEGPU_KERNEL_COPY, args, FLUSH_BYTES / 4,
				  1, 256, 1);
	}
	ret = ret ?: megpu_job_upload(p->gpu, &p->cons, &cs);
	megpu_cs_fini(&cs);
	return ret;
}

/* Median and mean of @n latencies (sorted), the figure @name in us. */
static void fl_stats(const char *name, int64_t *lat, unsigned int n,
		     struct fl_result *r)
{
	double us[FLUSH_MAX_ITERS], sum = 0;
	unsigned int i;

	for (i = 0; i < n; i++) {
		us[i] = lat[i] / 1e3;
		sum += lat[i];
	}
	qsort(lat, n, sizeof(lat[0]), cmp64);
	r->median_ns = lat[n / 2];
	r->mean_ns = sum / n;
	r->ran = true;
	if (name)
		bench_fig(name, "us", us, n);
}

static int fl_mode(struct fl_pair *p, uint32_t flags, unsigned int iters,
		   uint32_t *value, const char *name, struct fl_result *r)
{
	int64_t lat[FLUSH_MAX_ITERS];
	unsigned int i;
	bool stale = false;
	int ret = 0;

	r->stale = 0;
	for (i = 0; !ret && i < iters; i++) {
		ret = fl_iter(p, flags, ++*value, &lat[i], &stale);
		r->stale += stale;
	}
	if (!ret)
		fl_stats(name, lat, iters, r);
	return ret;
}

/*
 * The producer alone: submit to fence, with its frame's FLUSH (@flags 0)
 * or without (NO_FLUSH). With @visible, also the time from submit until
 * the CPU sees the last of the 64 KiB: without a flush, when the posted
 * data reached memory by itself.
 */
static int fl_alone(struct fl_pair *p, uint32_t flags, uint32_t value,
		    int64_t *fence_ns, int64_t *visible)
{
	volatile uint32_t *src = p->src->map;
	struct megpu_job prod;
	struct megpu_cs cs;
	int64_t t0, end;
	unsigned int w;
	int ret;

	megpu_job_init(&prod, p->a);
	prod.flags = DRM_MEGPU_SUBMIT_NO_IMPLICIT | flags;
	megpu_cs_init(&cs);
	megpu_cs_fill(&cs, p->src->va, FLUSH_BYTES, value);
	ret = megpu_job_add_bo(&prod, p->src, DRM_MEGPU_BO_WRITE);
	megpu_job_signal_sync(&prod, p->psync, 0);
	ret = ret ?: megpu_job_upload(p->gpu, &prod, &cs);
	megpu_cs_fini(&cs);
	t0 = megpu_now_ns();
	ret = ret ?: megpu_job_submit(p->gpu, &prod) ?:
	      sem_wait(p->gpu, p->psync);
	*fence_ns = megpu_now_ns() - t0;
	megpu_job_fini(&prod);
	if (ret || !visible)
		return ret;
	/* the last word to land, scanning on from the last one seen */
	end = t0 + 1000000000ll;
	for (w = 0; w < FLUSH_BYTES / 4 && megpu_now_ns() < end;)
		if (src[w] == value)
			w++;
	*visible = megpu_now_ns() - t0;
	return w < FLUSH_BYTES / 4 ? -ETIMEDOUT : 0;
}

/*
 * What a flush costs against what it saves: the producer alone in strict
 * mode (no posted data: the baseline), relaxed with its FLUSH, relaxed
 * without (until its data is in memory), interleaved round by round so
 * that the host's load hits all three alike. The flush cost is FLUSH -
 * strict, the drain time NO_FLUSH-in-memory - strict.
 */
struct fl_cost_res {
	bool ran;
	double strict_us, flush_us, none_us, none_mem_us;
	double cost_us, drain_us, ratio;
};

static double fl_median_us(int64_t *v, unsigned int n)
{
	qsort(v, n, sizeof(v[0]), cmp64);
	return v[n / 2] / 1e3;
}

static int fl_cost(struct megpu *gpu, struct fl_pair *p, unsigned int iters,
		   uint32_t *value, struct fl_cost_res *r)
{
	int64_t st[FLUSH_MAX_ITERS], fl[FLUSH_MAX_ITERS];
	int64_t nf[FLUSH_MAX_ITERS], vis[FLUSH_MAX_ITERS], junk;
	double cost[FLUSH_MAX_ITERS], drain[FLUSH_MAX_ITERS];
	unsigned int i;
	int ret = megpu_bo_map(p->src);

	/* each switch is followed by an untimed job (@junk) */
	for (i = 0; !ret && i < iters; i++) {
		ret = megpu_write_mode_set(gpu, true) ?:
		      fl_alone(p, DRM_MEGPU_SUBMIT_NO_FLUSH, ++*value, &junk,
			       NULL) ?:
		      fl_alone(p, DRM_MEGPU_SUBMIT_NO_FLUSH, ++*value, &st[i],
			       NULL);
		ret = megpu_write_mode_set(gpu, false) ?: ret ?:
		      fl_alone(p, 0, ++*value, &junk, NULL) ?:
		      fl_alone(p, 0, ++*value, &fl[i], NULL) ?:
		      fl_alone(p, DRM_MEGPU_SUBMIT_NO_FLUSH, ++*value, &nf[i],
			       &vis[i]);
		cost[i] = (fl[i] - st[i]) / 1e3;
		drain[i] = (vis[i] - st[i]) / 1e3;
	}
	if (ret)
		return ret;
	r->cost_us = bench_fig("flush.cost_us", "us", cost, iters);
	r->drain_us = bench_fig("flush.drain_us", "us", drain, iters);
	for (i = 0; i < iters; i++)
		cost[i] /= drain[i] > 0 ? drain[i] : 1;
	r->ratio = bench_fig("flush.cost_over_drain", "x", cost, iters);
	r->strict_us = fl_median_us(st, iters);
	r->flush_us = fl_median_us(fl, iters);
	r->none_us = fl_median_us(nf, iters);
	r->none_mem_us = fl_median_us(vis, iters);
	r->ran = true;
	return 0;
}

static void fl_cost_print(const struct fl_cost_res *r, const char *na,
			  unsigned int iters)
{
	printf("\nthe flush against the drain: %s FILLs %u KiB alone, %u "
	       "rounds of three,\ntime from submit, medians\n", na,
	       FLUSH_BYTES / 1024, iters);
	printf("  %-42s %9.1f us\n", "strict: to the fence (data in memory)",
	       r->strict_us);
	printf("  %-42s %9.1f us\n", "relaxed, FLUSH: to the fence",
	       r->flush_us);
	printf("  %-42s %9.1f us\n", "relaxed, NO_FLUSH: to the fence",
	       r->none_us);
	printf("  %-42s %9.1f us\n", "relaxed, NO_FLUSH: to the data in memory",
	       r->none_mem_us);
	printf("  %-42s %9.1f us\n", "flush cost (FLUSH - strict)",
	       r->cost_us);
	printf("  %-42s %9.1f us\n", "drain time (in memory - strict)",
	       r->drain_us);
	printf("  %-42s %9.2f\n", "flush cost / drain time (per round)",
	       r->ratio);
	printf("  (what posting and flushing the data adds, against the "
	       "time the same\n  posted data takes to reach memory by "
	       "itself; target: at most 1)\n");
}

/* Producer: FILL, preferably on the copy engine; consumer: COPY elsewhere. */
static int fl_engines(struct megpu *gpu, struct fl_pair *p)
{
	unsigned int n = 0, e, t;
	uint64_t types = 0;
	int a;

	a = tool_pick_engine(gpu, MEGPU_ENGINE_COPY, MEGPU_PKT_FILL, -1);
	if (a < 0 || megpu_engines(gpu, &n, &types))
		return -ENODEV;
	for (e = 0; e < n; e++) {
		t = MEGPU_ENGINE_TYPE(types, e);
		if ((int)e == a)
			continue;
		p->copy_packet = megpu_engine_packets(t) &
				 MEGPU_BIT(MEGPU_PKT_COPY);
		if (p->copy_packet ||
		    (megpu_engine_kernels(t) & MEGPU_BIT(MEGPU_KERNEL_COPY))) {
			p->a = (unsigned int)a;
			p->b = e;
			return 0;
		}
	}
	return -ENODEV;
}

/*
 * Dependent launches with each kind of flush, in the same run: the
 * host-driven handshake, the engine's own flush, none (the unsafe
 * reference) and, when debugfs can switch the device to strict mode,
 * strict mode without flushes (the write mode is restored after).
 */
static int bench_flush(struct megpu *gpu, bool quick)
{
	unsigned int iters = quick ? 30 : 100, m;
	struct fl_result res[FL_MODES] = { 0 }, warm;
	struct fl_cost_res cost = { 0 };
	struct fl_pair p = { .gpu = gpu };
	uint64_t types = 0, feat = 0;
	bool was_strict = false, knob;
	char na[16], nb[16];
	uint32_t value = 0;
	int ret;

	ret = megpu_get_param(gpu, DRM_MEGPU_PARAM_FEATURES, &feat);
	ret = ret ?: megpu_engines(gpu, NULL, &types);
	if (ret)
		return ret;
	if (!(feat & MEGPU_CAP_FLUSH)) {
		printf("\nthe device has no posted writes (no CAP_FLUSH): no "
		       "flush table\n");
		return 0;
	}
	if (fl_engines(gpu, &p)) {
		printf("\nno two engines for a producer (FILL) and a consumer "
		       "(COPY): no flush table\n");
		return 0;
	}
	ret = megpu_syncobj_new(gpu, false, &p.psync) ?:
	      megpu_syncobj_new(gpu, false, &p.csync) ?:
	      megpu_bo_new(gpu, FLUSH_BYTES, 0, &p.src) ?:
	      megpu_bo_new(gpu, FLUSH_BYTES, 0, &p.dst) ?:
	      megpu_bo_new(gpu, 4096, 0, &p.kargs) ?:
	      megpu_bo_map(p.dst) ?: megpu_bo_map(p.kargs) ?: fl_jobs(&p);
	if (ret)
		goto out;

	/* warm up: page tables, schedulers */
	ret = fl_mode(&p, 0, 4, &value, NULL, &warm);
	progress("dependent launches with host-driven flushes");
	ret = ret ?: fl_mode(&p, DRM_MEGPU_SUBMIT_HOST_FLUSH, iters, &value,
			     "flush.chain_host_us", &res[FL_HOST]);
	progress("dependent launches with GPU-internal flushes");
	ret = ret ?: fl_mode(&p, 0, iters, &value, "flush.chain_gpu_us",
			     &res[FL_GPU]);
	progress("dependent launches without flushes");
	ret = ret ?: fl_mode(&p, DRM_MEGPU_SUBMIT_NO_FLUSH, iters, &value,
			     "flush.chain_none_us", &res[FL_NONE]);
	if (ret)
		goto out;
	knob = !megpu_write_mode_get(gpu, &was_strict);
	if (knob) {
		progress("dependent launches in strict write mode");
		ret = megpu_write_mode_set(gpu, true);
		ret = ret ?: fl_mode(&p, DRM_MEGPU_SUBMIT_NO_FLUSH, iters,
				     &value, "flush.chain_strict_us",
				     &res[FL_STRICT]);
		if (!ret) {
			progress("the producer alone: its flush, its drain");
			ret = fl_cost(gpu, &p, iters, &value, &cost);
		}
		if (megpu_write_mode_set(gpu, was_strict))
			fprintf(stderr, "megpu bench: could not restore the "
				"write mode (%s)\n", was_strict ? "strict" :
				"relaxed");
		if (ret)
			goto out;
	}

	megpu_engine_name(types, p.a, na, sizeof(na));
	megpu_engine_name(types, p.b, nb, sizeof(nb));
	printf("\ndependent launch: %s FILLs %u KiB, %s copies it after "
	       "its fence (in-sync),\n%u chains each, time from the "
	       "producer's submit to the consumer's fence;\nwrite mode "
	       "%s except for the strict row\n", na, FLUSH_BYTES / 1024, nb,
	       iters, was_strict ? "strict" : "relaxed");
	printf("  %-32s %10s %10s %12s %8s\n", "", "median us", "mean us",
	       "x GPU flush", "stale");
	for (m = 0; m < FL_MODES; m++) {
		if (!res[m].ran) {
			printf("  %-32s %s\n", m == FL_STRICT ? "strict:" :
			       fl_names[m], m == FL_STRICT ?
			       "n/a (no runtime knob)" : "n/a");
			continue;
		}
		printf("  %-32s %10.1f %10.1f %12.2f %4u/%u\n", fl_names[m],
		       res[m].median_ns / 1e3, res[m].mean_ns / 1e3,
		       res[m].median_ns / res[FL_GPU].median_ns, res[m].stale,
		       iters);
	}
	printf("  (x GPU flush: median over the GPU-internal flush's; stale:"
	       " chains whose\n  consumer copied old data; strict mode makes "
	       "writes visible at once)\n");
	if (was_strict)
		printf("  note: the device was in strict mode, so no row can "
		       "show stale data\n");
	if (cost.ran)
		fl_cost_print(&cost, na, iters);
out:
	megpu_job_fini(&p.prod);
	megpu_job_fini(&p.cons);
	megpu_bo_free(p.kargs);
	megpu_bo_free(p.dst);
	megpu_bo_free(p.src);
	if (p.csync)
		megpu_syncobj_free(gpu, p.csync);
	if (p.psync)
		megpu_syncobj_free(gpu, p.psync);
	return ret;
}

/* One run of a floor probe (debugfs "floor"): ns per operation. */
static int bench_floor(struct megpu *gpu, const char *op, unsigned int n,
		       double *ns)
{
	char path[256], buf[64], name[16];
	unsigned long long total;
	unsigned int got;
	int fd, len, ret;
	ssize_t r;

	ret = megpu_debugfs_path(gpu, "floor", path, sizeof(path));
	if (ret)
		return ret;
	fd = open(path, O_RDWR);
	if (fd < 0)
		return -errno;
	len = snprintf(buf, sizeof(buf), "%s %u", op, n);
	ret = write(fd, buf, len) == len ? 0 : -errno;
	if (!ret && lseek(fd, 0, SEEK_SET))
		ret = -errno;
	r = ret ? -1 : read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (ret)
		return ret;
	if (r <= 0)
		return -EIO;
	buf[r] = '\0';
	if (sscanf(buf, "%15s %u %llu", name, &got, &total) != 3 ||
	    strcmp(name, op) || got != n)
		return -EIO;
	*ns = (double)total / n;
	return 0;
}

#define BASIC_RUNS_MAX 9
#define IRQ_PARAM "/sys/module/megpu/parameters/irq_retire"
#define SLOTS_PARAM "/sys/module/megpu/parameters/mailbox_slots"

/*
 * Write @v to the module parameter @path; its old value, the newline cut,
 * in @was (optional, @len bytes). -errno without the parameter.
 */
static int param_swap(const char *path, const char *v, char *was,
		      size_t len)
{
	int fd = open(path, O_RDWR);
	ssize_t n = 0;
	int ret = 0;

	if (fd < 0)
		return -errno;
	if (was) {
		n = read(fd, was, len - 1);
		if (n <= 0)
			ret = -EIO;
		was[n > 0 ? n : 0] = '\0';
		was[strcspn(was, "\n")] = '\0';
	}
	n = (ssize_t)strlen(v);
	if (!ret && (lseek(fd, 0, SEEK_SET) || write(fd, v, n) != n))
		ret = -EIO;
	close(fd);
	return ret;
}

/*
 * The no-op ioctl, the floor (doorbell, interrupt round trip), empty-job
 * latency, jobs/s on 1..N engines and COPY bandwidth: each the median of
 * @runs runs, runs interleaved so that a slow spell hits every figure.
 */
static int bench_basics(struct megpu *gpu, unsigned int engines,
			unsigned int jobs, bool quick)
{
	static const uint32_t sizes[] = { 1 << 20, 4 << 20, 16 << 20 };
	unsigned int runs = quick ? 3 : 5, reps = quick ? 50 : 200;
	double ioctl[BASIC_RUNS_MAX], db[BASIC_RUNS_MAX], irq[BASIC_RUNS_MAX];
	double med[BASIC_RUNS_MAX], p10[BASIC_RUNS_MAX], p90[BASIC_RUNS_MAX];
	double floor_x[BASIC_RUNS_MAX], tput[MEGPU_MAX_ENGINES][BASIC_RUNS_MAX];
	double cpu_busy[MEGPU_MAX_ENGINES][BASIC_RUNS_MAX];
	unsigned long long b0, a0, b1, a1;
	bool have_cpu = true;
	double scale[BASIC_RUNS_MAX], gbw[3][BASIC_RUNS_MAX];
	double cbw[3][BASIC_RUNS_MAX], ratio[3][BASIC_RUNS_MAX];
	double sbw[3][BASIC_RUNS_MAX], sratio[3][BASIC_RUNS_MAX];
	double thr_med[BASIC_RUNS_MAX];
	bool have_thr = true;
	char irq_was[8] = "Y";
	bool knob, was_strict = false;
	double m_ioctl, m_db, m_irq, m_med, m_floor, m_tput[MEGPU_MAX_ENGINES];
	bool have_floor = true;
	int64_t lat[400], gns = 1, cns = 1;
	unsigned int run, e, i;
	char what[80];
	double secs;
	int ret = 0, ce;

	ce = tool_pick_engine(gpu, MEGPU_ENGINE_COPY, MEGPU_PKT_COPY, -1);
	knob = !megpu_write_mode_get(gpu, &was_strict);
	for (run = 0; run < runs; run++) {
		snprintf(what, sizeof(what), "ioctl, floor, latency, "
			 "throughput, copy: run %u of %u", run + 1, runs);
		progress(what);
		ret = bench_ioctl(gpu, quick ? 2000 : 10000, &ioctl[run]);
		if (ret)
			return ret;
		if (have_floor &&
		    (bench_floor(gpu, "doorbell", 2000, &db[run]) ||
		     bench_floor(gpu, "irq", 500, &irq[run]))) {
			fprintf(stderr, "megpu bench: no debugfs floor probe: "
				"no floor\n");
			have_floor = false;
		}
		ret = bench_latency(gpu, 0, reps, lat);
		if (ret)
			return ret;
		qsort(lat, reps, sizeof(lat[0]), cmp64);
		med[run] = lat[reps / 2];
		/* the same with completions retired in the IRQ thread */
		if (have_thr && param_swap(IRQ_PARAM, "N", irq_was,
					   sizeof(irq_was))) {
			have_thr = false;
		} else if (have_thr) {
			ret = bench_latency(gpu, 0, reps, lat);
			if (param_swap(IRQ_PARAM, irq_was, NULL, 0))
				fprintf(stderr, "megpu bench: could not restore "
					"irq_retire\n");
			if (ret)
				return ret;
			qsort(lat, reps, sizeof(lat[0]), cmp64);
			thr_med[run] = lat[reps / 2] / 1e3;
		}
		p10[run] = lat[reps / 10];
		p90[run] = lat[reps * 9 / 10];
		if (have_floor)
			floor_x[run] = med[run] / (ioctl[run] + db[run] +
						   irq[run]);
		for (e = 1; e <= engines; e++) {
			have_cpu = cpu_jiffies(&b0, &a0) && have_cpu;
			ret = bench_parallel(gpu, e, jobs, &secs);
			if (ret)
				return ret;
			have_cpu = cpu_jiffies(&b1, &a1) && a1 > a0 && have_cpu;
			tput[e - 1][run] = jobs * e / secs;
			cpu_busy[e - 1][run] = have_cpu ?
				100.0 * (b1 - b0) / (a1 - a0) : 0;
		}
		scale[run] = engines > 1 ? tput[1][run] / tput[0][run] : 1;
		for (i = 0; ce >= 0 && i < 3; i++) {
			ret = knob ? megpu_write_mode_set(gpu, false) : 0;
			ret = ret ?: bench_copy(gpu, ce, sizes[i],
						quick ? 2 : 3, &gns, &cns);
			if (ret)
				break;
			gbw[i][run] = sizes[i] / 1048576.0 / (gns / 1e9);
			cbw[i][run] = sizes[i] / 1048576.0 / (cns / 1e9);
			ratio[i][run] = (double)cns / gns;
			if (!knob)
				continue;
			/* strict: every write in memory at once, no queue */
			ret = megpu_write_mode_set(gpu, true);
			ret = ret ?: bench_copy(gpu, ce, sizes[i],
						quick ? 2 : 3, &gns, &cns);
			if (ret)
				break;
			sbw[i][run] = sizes[i] / 1048576.0 / (gns / 1e9);
			sratio[i][run] = (double)cns / gns;
		}
		if (knob && megpu_write_mode_set(gpu, was_strict))
			fprintf(stderr, "megpu bench: could not restore the "
				"write mode\n");
		if (ret)
			return ret;
	}

	for (run = 0; run < runs; run++) {
		ioctl[run] /= 1e3;
		db[run] /= 1e3;
		irq[run] /= 1e3;
		med[run] /= 1e3;
		p10[run] /= 1e3;
		p90[run] /= 1e3;
	}
	m_ioctl = bench_fig("noop_ioctl.us", "us", ioctl, runs);
	m_med = bench_fig("empty_job.median_us", "us", med, runs);
	bench_fig("empty_job.p10_us", "us", p10, runs);
	bench_fig("empty_job.p90_us", "us", p90, runs);
	printf("\nsubmit-to-completion of an empty job (engine 0, %s) and "
	       "its floor,\nmedians of %u runs (%u jobs each)\n",
	       tool_engine_name(gpu, 0), runs, reps);
	printf("  %-34s %12s %12s\n", "", "time", "x floor");
	if (have_floor) {
		m_db = bench_fig("floor.doorbell_us", "us", db, runs);
		m_irq = bench_fig("floor.irq_round_trip_us", "us", irq, runs);
		m_floor = m_ioctl + m_db + m_irq;
		bench_fig1("floor.sum_us", "us", m_floor);
		printf("  %-34s %9.1f us\n", "no-op ioctl (GET_PARAM)",
		       m_ioctl);
		printf("  %-34s %9.1f us\n", "doorbell (RING_TAIL write)",
		       m_db);
		printf("  %-34s %9.1f us\n", "interrupt round trip (IRQ_TEST)",
		       m_irq);
		printf("  %-34s %9.1f us %12.1f\n", "floor: their sum", m_floor,
		       1.0);
		printf("  %-34s %9.1f us %12.1f\n", "empty job, median", m_med,
		       bench_fig("empty_job.x_floor", "x", floor_x, runs));
	} else {
		printf("  %-34s %9.1f us\n", "no-op ioctl (GET_PARAM)",
		       m_ioctl);
		printf("  %-34s %9.1f us %12s\n", "empty job, median", m_med,
		       "-");
	}
	if (have_thr)
		printf("  %-34s %9.1f us\n", "  retired in the IRQ thread",
		       bench_fig("empty_job.irq_thread_retire.median_us", "us",
				 thr_med, runs));
	printf("  %-34s %9.1f us\n", "empty job, 10th pct",
	       bench_median(p10, runs));
	printf("  %-34s %9.1f us\n", "empty job, 90th pct",
	       bench_median(p90, runs));
	printf("  (doorbell and interrupt timed in the kernel, debugfs "
	       "\"floor\": no syscall\n  counted twice; the empty job's "
	       "median of each run, then the median of runs)\n");

	printf("\nempty jobs in parallel, %u per engine, one thread each, "
	       "median of %u runs\n", jobs, runs);
	printf("  %-8s %10s %12s %12s %14s\n", "engines", "jobs", "jobs/s",
	       "x 1 engine", "guest CPU busy");
	for (e = 1; e <= engines; e++) {
		double busy = 0;

		snprintf(what, sizeof(what), "jobs_per_s.%u_engines", e);
		m_tput[e - 1] = bench_fig(what, "1/s", tput[e - 1], runs);
		if (have_cpu) {
			snprintf(what, sizeof(what),
				 "jobs_per_s.%u_engines.cpu_busy_pct", e);
			busy = bench_fig(what, "%", cpu_busy[e - 1], runs);
		}
		printf("  %-8u %10u %12.0f %12.2f %13.0f%%\n", e, jobs * e,
		       m_tput[e - 1], m_tput[e - 1] / m_tput[0], busy);
	}
	printf("  (guest CPU busy: all vCPUs, /proc/stat; near 100%% the "
	       "guest's CPUs, not the\n  engines, bound the rate)\n");
	if (engines > 1)
		bench_fig("jobs_per_s.2_vs_1", "x", scale, runs);

	if (ce < 0) {
		printf("\nno engine accepts COPY: no bandwidth table\n");
		return 0;
	}
	printf("\nCOPY on engine %d (%s) beside CPU memcpy, best of %u per "
	       "run, median of %u runs\n", ce, tool_engine_name(gpu, ce),
	       quick ? 2 : 3, runs);
	printf("  %-8s %12s %12s %10s %14s %10s\n", "size", "gpu MiB/s",
	       "cpu MiB/s", "gpu/cpu", "strict MiB/s", "gpu/cpu");
	for (i = 0; i < 3; i++) {
		double g, c, r, sg = 0, sr = 0;

		snprintf(what, sizeof(what), "copy.%uMiB.gpu_mib_s",
			 sizes[i] >> 20);
		g = bench_fig(what, "MiB/s", gbw[i], runs);
		snprintf(what, sizeof(what), "copy.%uMiB.cpu_mib_s",
			 sizes[i] >> 20);
		c = bench_fig(what, "MiB/s", cbw[i], runs);
		snprintf(what, sizeof(what), "copy.%uMiB.gpu_vs_cpu",
			 sizes[i] >> 20);
		r = bench_fig(what, "x", ratio[i], runs);
		if (knob) {
			snprintf(what, sizeof(what),
				 "copy.%uMiB.strict.gpu_mib_s", sizes[i] >> 20);
			sg = bench_fig(what, "MiB/s", sbw[i], runs);
			snprintf(what, sizeof(what),
				 "copy.%uMiB.strict.gpu_vs_cpu",
				 sizes[i] >> 20);
			sr = bench_fig(what, "x", sratio[i], runs);
		}
		printf("  %-5u MiB %12.1f %12.1f %10.3f %14.1f %10.3f\n",
		       sizes[i] >> 20, g, c, r, sg, sr);
	}
	printf("  (gpu: relaxed write mode, the device's default: COPY posts "
	       "its writes page by\n  page through the write queues; strict"
	       ": straight to memory%s)\n", knob ? "" :
	       "; n/a: no write_mode knob");
	return 0;
}

int cmd_bench(int argc, char **argv)
{
	uint64_t device = 0, jobs = 1000, rounds = 0, tasks = 0, grain = 0;
	uint64_t slots = 0;
	char slots_was[16], slots_v[16];
	unsigned int engines, i;
	struct megpu gpu;
	bool quick = false, only_sem = false, only_flush = false;
	bool only_syscall = false, only_programs = false;
	bool only_partition = false, only_mgpu = false, only_fast = false;
	int ret;

	if (argc > 1 && !strcmp(argv[1], "sem")) {
		only_sem = true;
		argc--;
		argv++;
	} else if (argc > 1 && !strcmp(argv[1], "flush")) {
		only_flush = true;
		argc--;
		argv++;
	} else if (argc > 1 && !strcmp(argv[1], "programs")) {
		only_programs = true;
		argc--;
		argv++;
	} else if (argc > 1 && !strcmp(argv[1], "syscall")) {
		only_syscall = true;
		argc--;
		argv++;
	} else if (argc > 1 && !strcmp(argv[1], "partition")) {
		only_partition = true;
		argc--;
		argv++;
	} else if (argc > 1 && !strcmp(argv[1], "fast")) {
		only_fast = true;
		argc--;
		argv++;
	} else if (argc > 1 && !strcmp(argv[1], "mgpu")) {
		only_mgpu = true;
		argc--;
		argv++;
	}
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
		} else if (i + 1 < (unsigned int)argc &&
			   !strcmp(argv[i], "--rounds") &&
			   tool_parse_u64(argv[i + 1], &rounds) && rounds &&
			   rounds <= 100000) {
			i++;
		} else if (i + 1 < (unsigned int)argc &&
			   !strcmp(argv[i], "--tasks") &&
			   tool_parse_u64(argv[i + 1], &tasks) && tasks &&
			   tasks <= 65536) {
			i++;
		} else if (i + 1 < (unsigned int)argc &&
			   !strcmp(argv[i], "--grain") &&
			   tool_parse_u64(argv[i + 1], &grain) && grain &&
			   grain <= 65536) {
			i++;
		} else if (i + 1 < (unsigned int)argc &&
			   !strcmp(argv[i], "--slots") &&
			   tool_parse_u64(argv[i + 1], &slots) && slots &&
			   slots <= MEGPU_MBOX_MAX_SLOTS) {
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
	/* the mailbox is sized when the file is opened */
	snprintf(slots_v, sizeof(slots_v), "%u", (unsigned int)slots);
	if (slots && param_swap(SLOTS_PARAM, slots_v, slots_was,
				sizeof(slots_was))) {
		fprintf(stderr, "megpu bench: cannot set %s\n", SLOTS_PARAM);
		return 1;
	}
	ret = tool_open(&gpu, device);
	if (slots && param_swap(SLOTS_PARAM, slots_was, NULL, 0))
		fprintf(stderr, "megpu bench: could not restore mailbox_slots\n");
	if (ret)
		return 1;
	ret = megpu_engines(&gpu, &engines, NULL);
	if (ret)
		goto fail;

	if (only_sem)
		goto sem;
	if (only_flush)
		goto flush;
	if (only_programs)
		goto programs;
	if (only_syscall)
		goto syscall;
	if (only_partition)
		goto partition;
	if (only_mgpu)
		goto mgpu;

	ret = bench_basics(&gpu, engines, (unsigned int)jobs, quick);
	if (ret)
		goto fail;
sem:
	ret = bench_sem(&gpu, quick);
	if (ret)
		goto fail;
	if (only_sem || only_fast)
		goto done;
flush:
	ret = bench_flush(&gpu, quick);
	if (ret)
		goto fail;
	if (only_flush)
		goto done;
programs:
	progress("wave programs");
	ret = bench_programs(&gpu, quick);
	if (ret)
		goto fail;
	if (only_programs)
		goto done;
syscall:
	progress("syscalls");
	ret = bench_syscalls(&gpu, rounds ? rounds : quick ? 10 : 30);
	if (ret)
		goto fail;
	if (only_syscall)
		goto done;
partition:
	progress("work partitioning");
	ret = bench_partition(&gpu, quick, (uint32_t)tasks, (uint32_t)grain);
	if (ret)
		goto fail;
	if (only_partition)
		goto done;
mgpu:
	progress("multi-GPU lock handoffs");
	ret = bench_mgpu(quick);
	if (ret)
		goto fail;
done:
	bench_json(stdout);
	megpu_close(&gpu);
	return 0;
fail:
	fprintf(stderr, "megpu bench: %s\n", tool_status(ret));
	megpu_close(&gpu);
	return 1;
}
