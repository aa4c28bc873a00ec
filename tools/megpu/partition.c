// SPDX-License-Identifier: MIT
/*
 * Dynamic work partitioning (seed 002) for users: "megpu demo partition"
 * runs a mixed workload through public task queues taken from by CPU
 * threads and engines at once, prints each consumer's share and checks
 * every result; "megpu bench partition" compares stealing with CPU only,
 * GPU only and a static split on the same workload (B1) and shows the
 * dequeue cost against dequeuers and batch size (B2).
 *
 * Queues 0 and 1 are the CPU threads' homes, 2 and 3 the engines'. The
 * engines dequeue with DEQUEUE jobs, or (--discrete, the seed's FIG. 3)
 * the driver dequeues for them whenever one asks for work.
 * A task increments a chunk of @grain elements (INCREMENT on the GPU,
 * its CPU version on the CPU; in B1's "programs" row, INCREMENT as a
 * wave program both sides run, the CPU threads with libmegpu's
 * interpreter).
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "megpu.h"
#include "megpu_hw_taskq.h"
#include "megpu_programs.h"

#define PT_QUEUES	4
/*
 * B1's batches: an engine takes 64 tasks under the lock, a CPU thread 16
 * (seed 002: each consumer's batch sized for it, the GPU's larger).
 */
#define PT_BENCH_GPU_BATCH	64
#define PT_BENCH_CPU_BATCH	16
#define PT_THREADS	2
#define PT_ENGINES	2

enum pt_mode { PT_STEAL, PT_CPU_ONLY, PT_GPU_ONLY, PT_STATIC };

/* one program-arguments block per task */
#define PT_PARGS_STRIDE	256

struct pt {
	struct megpu *gpu;
	uint32_t ntasks, grain, slots;
	struct megpu_bo *qbo, *kargs, *data, *notes, *list, *prog, *pargs;
	struct megpu_taskq q[PT_QUEUES];
	struct megpu_tq_region regions[6];
	unsigned int nregions;
	bool program;		/* tasks run the wave program, both sides */
	struct megpu_tq_agent agents[PT_THREADS];
	int engines[PT_ENGINES];
	unsigned int nengines;
	bool discrete;		/* the driver dequeues for the engines */
	uint32_t qflags;	/* MEGPU_TQ_F_* of the queues */
	/* results of a run */
	int64_t makespan, gpu_end, cpu_end;
	/* when each side started taking tasks (its submission done) */
	int64_t gpu_start, cpu_start;
	uint32_t gpu_tasks[PT_ENGINES];
	/* a static split: the other side's tasks done when one side ended */
	uint32_t gpu_done_at_cpu_end, cpu_done_at_gpu_end;
};

static int64_t pt_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000ll + ts.tv_nsec;
}

static uint64_t pt_qbytes(uint32_t slots)
{
	return (MEGPU_TQ_BYTES((uint64_t)slots) + 4095) & ~4095ull;
}

static void pt_free(struct pt *p)
{
	megpu_bo_free(p->qbo);
	megpu_bo_free(p->kargs);
	megpu_bo_free(p->data);
	megpu_bo_free(p->notes);
	megpu_bo_free(p->list);
	megpu_bo_free(p->prog);
	megpu_bo_free(p->pargs);
}

static int pt_bo(struct megpu *gpu, uint64_t size, struct megpu_bo **bo)
{
	int ret = megpu_bo_new(gpu, size, 0, bo);

	ret = ret ?: megpu_bo_map(*bo);
	if (!ret)
		memset((*bo)->map, 0, (*bo)->size);
	return ret;
}

static int pt_init(struct pt *p, struct megpu *gpu, uint32_t ntasks,
		   uint32_t grain)
{
	unsigned int engines;
	uint64_t types;
	int ret;

	memset(p, 0, sizeof(*p));
	p->gpu = gpu;
	p->ntasks = ntasks;
	p->grain = grain;
	for (p->slots = 64; p->slots < ntasks; p->slots *= 2)
		;
	ret = megpu_engines(gpu, &engines, &types);
	if (ret)
		return ret;
	for (unsigned int e = 0; e < engines && p->nengines < PT_ENGINES; e++)
		if (MEGPU_ENGINE_TYPE(types, e) == MEGPU_ENGINE_GFX ||
		    MEGPU_ENGINE_TYPE(types, e) == MEGPU_ENGINE_COMPUTE)
			p->engines[p->nengines++] = e;
	if (!p->nengines)
		return -ENODEV;
	ret = pt_bo(gpu, PT_QUEUES * pt_qbytes(p->slots), &p->qbo);
	ret = ret ?: pt_bo(gpu, 64ull * ntasks, &p->kargs);
	ret = ret ?: pt_bo(gpu, 4ull * ntasks * grain, &p->data);
	ret = ret ?: pt_bo(gpu, (uint64_t)MEGPU_TQ_NOTE_SIZE * ntasks,
			   &p->notes);
	ret = ret ?: pt_bo(gpu, 4096, &p->list);
	if (ret)
		return ret;
	for (uint32_t i = 0; i < ntasks; i++) {
		struct megpu_kargs k = { .n = grain };

		k.ptr[0] = p->data->va + 4ull * grain * i;
		megpu_kargs_pack((uint8_t *)p->kargs->map + 64ull * i, &k);
	}
	p->regions[0] = (struct megpu_tq_region) {
		p->kargs->va, p->kargs->map, p->kargs->size };
	p->regions[1] = (struct megpu_tq_region) {
		p->data->va, p->data->map, p->data->size };
	p->regions[2] = (struct megpu_tq_region) {
		p->notes->va, p->notes->map, p->notes->size };
	p->regions[3] = (struct megpu_tq_region) {
		p->qbo->va, p->qbo->map, p->qbo->size };
	p->nregions = 4;
	return 0;
}

/* The wave program and each task's arguments for the "programs" row. */
static int pt_init_program(struct pt *p)
{
	uint32_t len;
	int ret;

	ret = megpu_prog_load(p->gpu, megpu_program("increment"), &p->prog,
			      &len, NULL, 0);
	ret = ret ?: pt_bo(p->gpu, (uint64_t)PT_PARGS_STRIDE * p->ntasks,
			   &p->pargs);
	for (uint32_t i = 0; !ret && i < p->ntasks; i++) {
		struct megpu_pargs pa = {
			.program = p->prog->va, .len = len,
			.user = { p->data->va + 4ull * p->grain * i, p->grain },
		};

		ret = megpu_pargs_write(p->pargs, (uint64_t)PT_PARGS_STRIDE * i,
					&pa, NULL);
	}
	if (ret)
		return ret;
	p->regions[4] = (struct megpu_tq_region) {
		p->prog->va, p->prog->map, p->prog->size };
	p->regions[5] = (struct megpu_tq_region) {
		p->pargs->va, p->pargs->map, p->pargs->size };
	p->nregions = 6;
	return 0;
}

/* Mixed affinities for the demo; all ANY for the benchmark. */
static uint32_t pt_aff_mixed(uint32_t i)
{
	switch (i % 10) {
	case 0:
		return MEGPU_TQ_AFF_REQUIRE_CPU;
	case 5:
		return MEGPU_TQ_AFF_REQUIRE_GPU;
	default:
		return MEGPU_TQ_AFF_ANY;
	}
}

/*
 * Fresh queues and results; tasks distributed for @mode over the home
 * queues of the @threads CPU threads (0, 1) and of the engines (2, 3).
 */
static int pt_reset(struct pt *p, enum pt_mode mode, unsigned int threads,
		    bool mixed, uint32_t batch_gpu, uint32_t batch_cpu)
{
	uint32_t n = p->ntasks, cpu_n;
	/* first task of each queue's share: [start[q], start[q + 1]) */
	uint32_t start[PT_QUEUES + 1];
	int ret;

	memset(p->data->map, 0, p->data->size);
	memset(p->notes->map, 0, p->notes->size);
	for (unsigned int i = 0; i < PT_QUEUES; i++) {
		uint64_t off = i * pt_qbytes(p->slots);

		ret = megpu_taskq_init(&p->q[i], (uint8_t *)p->qbo->map + off,
				       p->qbo->va + off, p->slots, p->qflags,
				       batch_gpu, batch_cpu);
		if (ret)
			return ret;
		((uint64_t *)p->list->map)[i] = p->q[i].va;
	}
	/* the CPUs' share over their queues, the engines' over theirs */
	cpu_n = mode == PT_CPU_ONLY ? n : mode == PT_GPU_ONLY ? 0 : n / 2;
	start[0] = 0;
	for (unsigned int qi = 0; qi < PT_QUEUES; qi++) {
		bool cq = qi < 2;
		unsigned int users = cq ? threads : p->nengines;
		uint32_t side = cq ? cpu_n : n - cpu_n;
		unsigned int k = cq ? qi : qi - 2;

		start[qi + 1] = start[qi] + (k < users ?
			side / users + (k < side % users) : 0);
	}
	for (unsigned int qi = 0; qi < PT_QUEUES; qi++) {
		for (uint32_t i = start[qi]; i < start[qi + 1]; ) {
			struct megpu_task t[256];
			uint32_t c = start[qi + 1] - i;

			c = c < 256 ? c : 256;
			for (uint32_t j = 0; j < c; j++) {
				t[j] = (struct megpu_task) {
					.cpu_fn = MEGPU_KERNEL_INCREMENT,
					.gpu_kernel = MEGPU_KERNEL_INCREMENT,
					.data = p->kargs->va + 64ull * (i + j),
					.range_x = p->grain, .range_y = 1,
					.group_x = p->grain < 64 ? p->grain : 64,
					.group_y = 1,
					.notify = p->notes->va + (uint64_t)
						  MEGPU_TQ_NOTE_SIZE * (i + j),
					.affinity = mixed ? pt_aff_mixed(i + j) :
						    MEGPU_TQ_AFF_ANY,
					.arg_size = MEGPU_KARGS_SIZE,
				};
				if (p->program) {
					t[j].cpu_fn = MEGPU_KERNEL_PROGRAM;
					t[j].gpu_kernel = MEGPU_KERNEL_PROGRAM;
					t[j].data = p->pargs->va +
						(uint64_t)PT_PARGS_STRIDE *
						(i + j);
					t[j].arg_size = MEGPU_PARGS_SIZE;
				}
			}
			ret = megpu_taskq_push(&p->q[qi], &p->agents[0], t, c);
			if (ret != (int)c)
				return ret < 0 ? ret : -ENOSPC;
			i += c;
		}
		megpu_taskq_close(&p->q[qi]);
	}
	return 0;
}

/* Tasks whose notification says done, by the engines or by the CPUs. */
static uint32_t pt_count_done(const struct pt *p, bool engines)
{
	uint32_t n = 0;

	for (uint32_t i = 0; i < p->ntasks; i++) {
		const uint32_t *nt = (const uint32_t *)((const uint8_t *)
			p->notes->map + (uint64_t)MEGPU_TQ_NOTE_SIZE * i);
		uint32_t by = __atomic_load_n(&nt[MEGPU_TQ_NOTE_BY / 4],
					      __ATOMIC_RELAXED);

		if (__atomic_load_n(&nt[MEGPU_TQ_NOTE_DONE / 4],
				    __ATOMIC_ACQUIRE) &&
		    MEGPU_TQ_OWNER_IS_GPU(by) == engines)
			n++;
	}
	return n;
}

/*
 * The GPU side of a run, in a thread of its own: it submits the engines'
 * DEQUEUE jobs (or attaches the driver's dequeuer) and waits for them,
 * so that the CPU dequeuers start at once, beside the submission.
 */
struct pt_gpu {
	struct pt *p;
	uint32_t flags;		/* MEGPU_DEQ_* */
	bool split;		/* static split: the engines' queues only */
	unsigned int nsync;
	uint32_t sync[PT_ENGINES];
	struct megpu_job jobs[PT_ENGINES];
	bool attached;		/* the driver's dequeuer */
	int64_t t0;
	int ret;
	/* the submission is over (g->ret holds its result) */
	pthread_mutex_t lock;
	pthread_cond_t cond;
	bool submitted;
};

static int pt_gpu_submit(struct pt_gpu *g)
{
	struct pt *p = g->p;
	struct megpu_bo *bos[5] = {
		p->qbo, p->kargs, p->data, p->notes, p->list,
	};
	int ret = 0;

	if (p->discrete) {
		/* the engines' queues first; unless split the CPUs' too */
		struct drm_megpu_taskq_queue refs[PT_QUEUES];
		unsigned int count = g->split ? 2 : PT_QUEUES;
		uint32_t mask = 0;

		for (unsigned int i = 0; i < PT_QUEUES; i++)
			refs[i] = (struct drm_megpu_taskq_queue) {
				.handle = p->qbo->handle, .slots = p->slots,
				.offset = ((i + 2) % PT_QUEUES) *
					  pt_qbytes(p->slots),
			};
		for (unsigned int k = 0; k < p->nengines; k++)
			mask |= 1u << p->engines[k];
		ret = megpu_taskq_attach(p->gpu, refs, count, mask);
		g->attached = !ret;
		return ret;
	}
	for (unsigned int k = 0; k < p->nengines && !ret; k++) {
		struct megpu_job *j = &g->jobs[k];
		struct megpu_cs cs;

		megpu_cs_init(&cs);
		/* split: the list's last two entries, the engines' queues */
		if (g->split)
			megpu_cs_dequeue(&cs, p->list->va + 16, 2, k, g->flags);
		else
			megpu_cs_dequeue(&cs, p->list->va, PT_QUEUES, 2 + k,
					 g->flags);
		megpu_job_init(j, p->engines[k]);
		/* the queues synchronize: no implicit BO fences */
		j->flags = DRM_MEGPU_SUBMIT_NO_IMPLICIT;
		for (unsigned int b = 0; b < 5 && !ret; b++)
			ret = megpu_job_add_bo(j, bos[b], DRM_MEGPU_BO_READ |
					       DRM_MEGPU_BO_WRITE);
		ret = ret ?: megpu_syncobj_new(p->gpu, false, &g->sync[k]);
		if (!ret) {
			g->nsync = k + 1;
			megpu_job_signal_sync(j, g->sync[k], 0);
		}
		ret = ret ?: megpu_job_upload(p->gpu, j, &cs);
		ret = ret ?: megpu_job_submit(p->gpu, j);
		megpu_cs_fini(&cs);
	}
	return ret;
}

static void *pt_gpu_thread(void *arg)
{
	struct pt_gpu *g = arg;

	g->ret = pt_gpu_submit(g);
	g->p->gpu_start = pt_now() - g->t0;
	pthread_mutex_lock(&g->lock);
	g->submitted = true;
	pthread_cond_signal(&g->cond);
	pthread_mutex_unlock(&g->lock);
	/* the driver's dequeuer: no fence, its completion (TASKQ_WAIT) */
	if (g->attached && !g->ret)
		g->ret = megpu_taskq_wait(g->p->gpu, MEGPU_FOREVER);
	for (unsigned int k = 0; k < g->nsync && !g->ret; k++) {
		int ret = megpu_syncobj_wait(g->p->gpu, g->sync[k], 0,
					     MEGPU_FOREVER);

		g->ret = ret ?: megpu_fence_status(g->p->gpu->fd, g->sync[k],
						   0);
	}
	g->p->gpu_end = pt_now() - g->t0;
	/* a static split: how far the CPUs got while the engines ran */
	if (g->split)
		g->p->cpu_done_at_gpu_end = pt_count_done(g->p, false);
	return NULL;
}

/* After the thread: free what it made. */
static int pt_gpu_fini(struct pt_gpu *g)
{
	struct pt *p = g->p;
	int ret = g->ret;

	for (unsigned int k = 0; k < g->nsync; k++)
		megpu_syncobj_free(p->gpu, g->sync[k]);
	if (g->attached) {
		ret = megpu_taskq_detach(p->gpu) ?: ret;
	} else if (!p->discrete) {
		for (unsigned int k = 0; k < p->nengines; k++)
			megpu_job_fini(&g->jobs[k]);
	}
	return ret;
}

/* One run; every task must have been taken and run exactly once. */
static int pt_run(struct pt *p, enum pt_mode mode, unsigned int threads,
		  bool mixed, uint32_t batch_gpu, uint32_t batch_cpu)
{
	/*
	 * A static split is static between the sides: CPU threads steal
	 * only from the CPUs' queues, engines only from the engines'.
	 */
	bool split = mode == PT_STATIC;
	const uint32_t flags = MEGPU_DEQ_STEAL;
	bool cpu = mode != PT_GPU_ONLY, gpu = mode != PT_CPU_ONLY;
	struct pt_gpu g = { .p = p, .flags = flags, .split = split };
	uint32_t *data = p->data->map;
	pthread_t gpu_thread;
	int64_t t0;
	int ret;

	for (unsigned int i = 0; i < PT_THREADS; i++)
		p->agents[i] = (struct megpu_tq_agent) {
			.owner = 1 + i, .regions = p->regions,
			.nregions = p->nregions,
			.notify = megpu_taskq_wake_cb, .notify_priv = p->gpu,
			.sleep = megpu_taskq_sleep_cb,
			/* GPU-only tasks left by engines that failed */
			.give_up_ns = 30000000000ull,
		};
	ret = pt_reset(p, mode, threads, mixed, batch_gpu, batch_cpu);
	if (ret)
		return ret;
	memset(g.jobs, 0, sizeof(g.jobs));
	p->gpu_end = 0;
	p->gpu_start = 0;
	pthread_mutex_init(&g.lock, NULL);
	pthread_cond_init(&g.cond, NULL);
	t0 = g.t0 = pt_now();
	if (gpu && pthread_create(&gpu_thread, NULL, pt_gpu_thread, &g))
		return -EAGAIN;
	/*
	 * The CPU dequeuers start beside the submission when a CPU is left
	 * for it; else after it, or they would keep the submitting thread
	 * off the CPUs until they ran out of tasks.
	 */
	if (gpu && cpu && threads >= sysconf(_SC_NPROCESSORS_ONLN)) {
		pthread_mutex_lock(&g.lock);
		while (!g.submitted)
			pthread_cond_wait(&g.cond, &g.lock);
		pthread_mutex_unlock(&g.lock);
	}
	p->cpu_end = 0;
	p->cpu_start = pt_now() - t0;
	if (cpu) {
		ret = megpu_taskq_threads(p->agents, threads, p->q,
					  split ? 2 : PT_QUEUES, flags);
		p->cpu_end = pt_now() - t0;
		/* a static split: how far the engines got meanwhile */
		if (gpu && split)
			p->gpu_done_at_cpu_end = pt_count_done(p, true);
	}
	if (gpu) {
		pthread_join(gpu_thread, NULL);
		ret = pt_gpu_fini(&g) ?: ret;
	}
	pthread_cond_destroy(&g.cond);
	pthread_mutex_destroy(&g.lock);
	/* when the last task was done; tearing the jobs down is not work */
	p->makespan = p->cpu_end > p->gpu_end ? p->cpu_end : p->gpu_end;
	if (ret)
		return ret;
	memset(p->gpu_tasks, 0, sizeof(p->gpu_tasks));
	for (uint32_t i = 0; i < p->ntasks; i++) {
		uint32_t *nt = (uint32_t *)((uint8_t *)p->notes->map +
					    (uint64_t)MEGPU_TQ_NOTE_SIZE * i);
		uint32_t by = nt[MEGPU_TQ_NOTE_BY / 4];
		bool by_gpu = MEGPU_TQ_OWNER_IS_GPU(by);

		if (nt[MEGPU_TQ_NOTE_DONE / 4] != 1 ||
		    nt[MEGPU_TQ_NOTE_STATUS / 4])
			return -EIO;
		/* split: the first half is the CPUs' (pt_reset), the rest not */
		if (split && by_gpu == (i < p->ntasks / 2))
			return -EPERM;
		if (by_gpu) {
			for (unsigned int k = 0; k < p->nengines; k++)
				if ((by & 0xff) == (uint32_t)p->engines[k])
					p->gpu_tasks[k]++;
			if (mixed && pt_aff_mixed(i) ==
			    MEGPU_TQ_AFF_REQUIRE_CPU)
				return -EPERM;
		} else if (mixed && pt_aff_mixed(i) ==
			   MEGPU_TQ_AFF_REQUIRE_GPU) {
			return -EPERM;
		}
	}
	for (uint64_t i = 0; i < (uint64_t)p->ntasks * p->grain; i++)
		if (data[i] != 1)
			return -EIO;
	return 0;
}

static const char demo_usage[] =
	"usage: megpu demo partition [--device N] [--tasks N] [--grain N]\n"
	"                            [--discrete]\n"
	"\n"
	"Seed 002: CPU threads and GPU engines take tasks from shared task\n"
	"queues at once, in batches of their own size, respecting affinity\n"
	"(10% REQUIRE_CPU, 10% REQUIRE_GPU, the rest ANY), and steal from\n"
	"each other's queues. Prints each consumer's share; checks that\n"
	"every task ran exactly once, on an allowed side, and its result.\n"
	"--discrete: the engines do not dequeue themselves; the driver\n"
	"takes tasks for them whenever one asks for work (seed 002, FIG. 3).\n";

static int pt_open(int argc, char **argv, const char *usage,
		   struct megpu *gpu, uint64_t *tasks, uint64_t *grain,
		   bool *discrete)
{
	uint64_t device = 0;

	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--discrete")) {
			*discrete = true;
		} else if (i + 1 < argc && !strcmp(argv[i], "--device") &&
		    tool_parse_u64(argv[i + 1], &device)) {
			i++;
		} else if (i + 1 < argc && !strcmp(argv[i], "--tasks") &&
			   tool_parse_u64(argv[i + 1], tasks) && *tasks &&
			   *tasks <= MEGPU_TQ_MAX_SLOTS * 2ull) {
			i++;
		} else if (i + 1 < argc && !strcmp(argv[i], "--grain") &&
			   tool_parse_u64(argv[i + 1], grain) && *grain &&
			   *grain <= 65536) {
			i++;
		} else {
			fputs(usage, stderr);
			return 2;
		}
	}
	return tool_open(gpu, device) ? 1 : 0;
}

static void pt_print_shares(struct pt *p, unsigned int threads)
{
	for (unsigned int i = 0; i < threads; i++)
		printf("  cpu%u     %6llu tasks (%5.1f%%) in %llu batches, "
		       "%llu stolen, busy %.1f ms\n", i,
		       (unsigned long long)p->agents[i].tasks,
		       100.0 * p->agents[i].tasks / p->ntasks,
		       (unsigned long long)p->agents[i].batches,
		       (unsigned long long)p->agents[i].steals,
		       p->agents[i].busy_ns / 1e6);
	for (unsigned int k = 0; k < p->nengines; k++)
		printf("  %-8s %6u tasks (%5.1f%%)\n",
		       tool_engine_name(p->gpu, p->engines[k]),
		       p->gpu_tasks[k], 100.0 * p->gpu_tasks[k] / p->ntasks);
}

int cmd_demo_partition(int argc, char **argv)
{
	uint64_t tasks = 4000, grain = 256;
	bool discrete = false;
	struct megpu gpu;
	struct pt p;
	int ret;

	if (tool_help(argc, argv, demo_usage))
		return 0;
	ret = pt_open(argc, argv, demo_usage, &gpu, &tasks, &grain,
		      &discrete);
	if (ret)
		return ret;
	ret = pt_init(&p, &gpu, tasks, grain);
	if (!ret) {
		p.discrete = discrete;
		printf("megpu demo partition: %llu tasks of %llu elements, "
		       "%u CPU threads, %u engines (%s), 4 queues\n",
		       (unsigned long long)tasks, (unsigned long long)grain,
		       PT_THREADS, p.nengines, discrete ?
		       "the driver dequeues for them" : "DEQUEUE jobs");
		ret = pt_run(&p, PT_STEAL, PT_THREADS, true, 16, 4);
	}
	if (ret) {
		fprintf(stderr, "megpu demo partition: %s\n", strerror(-ret));
	} else {
		pt_print_shares(&p, PT_THREADS);
		printf("  done in %.1f ms; every task ran once, on an allowed "
		       "side: ok\n", p.makespan / 1e6);
	}
	pt_free(&p);
	megpu_close(&gpu);
	return ret ? 1 : 0;
}

/* One B1 measurement: a variant's makespan, CPU share and idle times. */
struct pt_row {
	double t, cpu_share, cpu_idle, gpu_idle, cpu_end, gpu_end;
	/* a static split: the ideal with each side's rate beside the other */
	double shared;
};

#define PT_ROUNDS	5
#define PT_VARIANTS	7	/* the modes, by the driver, as programs */
#define PT_DRIVER	4
#define PT_PROGRAMS	5
#define PT_GPU_ONE	6	/* GPU only on the first engine alone */

static const char *const pt_variant_names[PT_VARIANTS] = {
	"stealing", "CPU only", "GPU only", "static split",
	"stealing, driver", "stealing, programs", "GPU only, 1 engine",
};

/*
 * The work over the summed rates of both sides while both run: in a
 * static split, up to the end of whichever side ends first, what each
 * side did over that time. On a host whose cores run the guest's CPUs
 * and the engines alike, these are the rates the sides really have
 * together, where CPU only and GPU only each have the host to itself.
 */
static double pt_shared_ideal(const struct pt *p, uint32_t cpu_tasks,
			      uint32_t gpu_tasks)
{
	int64_t first = p->cpu_end <= p->gpu_end ? p->cpu_end : p->gpu_end;
	double rc, rg;

	/* each side's rate from its own start: submitting is not work */
	if (first <= p->cpu_start || first <= p->gpu_start)
		return 0;
	rc = (p->cpu_end <= p->gpu_end ? cpu_tasks : p->cpu_done_at_gpu_end) /
	     ((first - p->cpu_start) / 1e6);
	rg = (p->cpu_end <= p->gpu_end ? p->gpu_done_at_cpu_end : gpu_tasks) /
	     ((first - p->gpu_start) / 1e6);
	return rc + rg > 0 ? p->ntasks / (rc + rg) : 0;
}

static int pt_measure(struct pt *p, unsigned int v, unsigned int threads,
		      struct pt_row *r)
{
	enum pt_mode m = v == PT_GPU_ONE ? PT_GPU_ONLY :
			 v >= PT_DRIVER ? PT_STEAL : (enum pt_mode)v;
	unsigned int engines = p->nengines;
	uint64_t cpu_tasks = 0, busy = 0;
	int ret;

	memset(r, 0, sizeof(*r));
	/* stealing with the driver dequeuing for the engines */
	p->discrete = v == PT_DRIVER;
	/* the same work as a wave program on both sides */
	p->program = v == PT_PROGRAMS;
	if (v == PT_GPU_ONE)
		p->nengines = 1;
	ret = pt_run(p, m, threads, false, PT_BENCH_GPU_BATCH,
		     PT_BENCH_CPU_BATCH);
	p->nengines = engines;
	p->discrete = false;
	p->program = false;
	if (ret)
		return ret;
	for (unsigned int i = 0; i < threads; i++) {
		cpu_tasks += p->agents[i].tasks;
		busy += p->agents[i].busy_ns;
	}
	r->t = p->makespan / 1e6;
	r->cpu_end = p->cpu_end / 1e6;
	r->gpu_end = p->gpu_end / 1e6;
	r->cpu_share = 100.0 * cpu_tasks / p->ntasks;
	/* idle: the time a device was not running tasks until the end */
	r->cpu_idle = m == PT_GPU_ONLY ? r->t :
		      r->t - busy / 1e6 / threads;
	r->gpu_idle = m == PT_CPU_ONLY ? r->t : r->t - p->gpu_end / 1e6;
	if (m == PT_STATIC)
		r->shared = pt_shared_ideal(p, cpu_tasks,
					    p->ntasks - cpu_tasks);
	return 0;
}

/* The median of a variant's rounds, by makespan (or by @shared). */
static const struct pt_row *pt_median(struct pt_row *rows, bool shared)
{
	const struct pt_row *r[PT_ROUNDS];

	for (unsigned int i = 0; i < PT_ROUNDS; i++) {
		unsigned int j = i;

		for (; j && (shared ? r[j - 1]->shared > rows[i].shared :
			     r[j - 1]->t > rows[i].t); j--)
			r[j] = r[j - 1];
		r[j] = &rows[i];
	}
	return r[PT_ROUNDS / 2];
}

/*
 * One B1 table: every variant with @threads CPU threads and the first
 * @engines engines, rounds interleaved so that a change of host load
 * hits all.
 */
static int pt_b1(struct pt *p, unsigned int threads, unsigned int engines,
		 const char *key)
{
	static const unsigned int order[PT_VARIANTS] = {
		PT_CPU_ONLY, PT_GPU_ONLY, PT_GPU_ONE, PT_STATIC, PT_STEAL,
		PT_DRIVER, PT_PROGRAMS,
	};
	/* GPU only on one engine: beside GPU only on several, if several */
	const unsigned int variants = PT_VARIANTS - (engines == 1);
	unsigned int all = p->nengines;
	struct pt_row rows[PT_VARIANTS][PT_ROUNDS];
	double ms[PT_VARIANTS], ideal, shared;
	char name[64];
	int ret;

	p->nengines = engines;
	printf("\nB1 work partitioning (seed 002): %u tasks of %u elements, "
	       "%u CPU thread%s, %u engine%s; batches %u (GPU) and %u (CPU)%s;"
	       " median of %u rounds\n", p->ntasks, p->grain, threads,
	       threads == 1 ? "" : "s", engines, engines == 1 ? "" : "s",
	       PT_BENCH_GPU_BATCH, PT_BENCH_CPU_BATCH,
	       p->qflags & MEGPU_TQ_F_GUIDED ? ", guided" : "", PT_ROUNDS);
	/* a warm-up run: the guest's first run pays for code translation */
	ret = pt_run(p, PT_STEAL, threads, false, PT_BENCH_GPU_BATCH,
		     PT_BENCH_CPU_BATCH);
	for (unsigned int k = 0; k < PT_ROUNDS && !ret; k++)
		for (unsigned int o = 0; o < PT_VARIANTS && !ret; o++)
			if (variants == PT_VARIANTS || order[o] != PT_GPU_ONE)
				ret = pt_measure(p, order[o], threads,
						 &rows[order[o]][k]);
	p->nengines = all;
	if (ret)
		return ret;
	printf("  %-18s %10s %9s %9s %12s %12s %9s %9s\n", "variant",
	       "makespan", "CPU share", "GPU share", "CPU idle", "GPU idle",
	       "CPU end", "GPU end");
	for (unsigned int o = 0; o < PT_VARIANTS; o++) {
		const struct pt_row *r;

		if (variants < PT_VARIANTS && order[o] == PT_GPU_ONE)
			continue;
		r = pt_median(rows[order[o]], false);
		ms[order[o]] = r->t;
		printf("  %-18s %7.1f ms %8.1f%% %8.1f%% %9.1f ms %9.1f ms "
		       "%6.1f ms %6.1f ms\n", pt_variant_names[order[o]], r->t,
		       r->cpu_share, 100.0 - r->cpu_share, r->cpu_idle,
		       r->gpu_idle, r->cpu_end, r->gpu_end);
	}
	/* total work over summed throughput */
	ideal = 1.0 / (1.0 / ms[PT_CPU_ONLY] + 1.0 / ms[PT_GPU_ONLY]);
	printf("  ideal (work / summed throughput) %.1f ms; stealing %.2fx "
	       "ideal (driver dequeuing %.2fx, wave programs %.2fx), static "
	       "%.2fx, CPU only %.2fx, GPU only %.2fx\n", ideal,
	       ms[PT_STEAL] / ideal, ms[PT_DRIVER] / ideal,
	       ms[PT_PROGRAMS] / ideal, ms[PT_STATIC] / ideal,
	       ms[PT_CPU_ONLY] / ideal, ms[PT_GPU_ONLY] / ideal);
	snprintf(name, sizeof(name), "partition.%s.programs_over_ideal", key);
	bench_fig1(name, "x", ms[PT_PROGRAMS] / ideal);
	/* the same with the rates both sides have while both run */
	shared = pt_median(rows[PT_STATIC], true)->shared;
	snprintf(name, sizeof(name), "partition.%s.steal_over_ideal", key);
	bench_fig1(name, "x", ms[PT_STEAL] / ideal);
	snprintf(name, sizeof(name), "partition.%s.driver_over_ideal", key);
	bench_fig1(name, "x", ms[PT_DRIVER] / ideal);
	/* issue 25's row: the driver's dequeuer against DEQUEUE */
	snprintf(name, sizeof(name), "partition.%s.driver_over_steal", key);
	bench_fig1(name, "x", ms[PT_DRIVER] / ms[PT_STEAL]);
	/* 0: a side ended before the other had started (a tiny run) */
	if (shared > 0) {
		printf("  ideal on shared cores (work / the rates both sides "
		       "had together in the static split) %.1f ms; stealing "
		       "%.2fx that (driver dequeuing %.2fx)\n", shared,
		       ms[PT_STEAL] / shared, ms[PT_DRIVER] / shared);
		snprintf(name, sizeof(name),
			 "partition.%s.steal_over_shared_ideal", key);
		bench_fig1(name, "x", ms[PT_STEAL] / shared);
	} else {
		printf("  ideal on shared cores: not measured (in the static "
		       "split one side ended before the other started)\n");
	}
	snprintf(name, sizeof(name), "partition.%s.steal_ms", key);
	bench_fig1(name, "ms", ms[PT_STEAL]);
	if (variants == PT_VARIANTS) {
		/* the engines' scaling, rounds interleaved with the rest */
		printf("  GPU only on %u engines %.2fx faster than on one\n",
		       engines, ms[PT_GPU_ONE] / ms[PT_GPU_ONLY]);
		snprintf(name, sizeof(name), "partition.%s.gpu_engines_gain",
			 key);
		bench_fig1(name, "x", ms[PT_GPU_ONE] / ms[PT_GPU_ONLY]);
	}
	return 0;
}

/* B1 and B2 on an open device. */
int bench_partition(struct megpu *gpu, bool quick, uint32_t ntasks,
		    uint32_t grain)
{
	struct pt p;
	int ret;

	if (!ntasks)
		ntasks = quick ? 2000 : 12000;
	/* tasks big enough that an engine's per-task cost does not rule */
	if (!grain)
		grain = 2048;

	/*
	 * Every consumer, then one CPU thread and one engine: on a 2-core
	 * host only that pair has a core each, as the ideal (summed
	 * throughput) assumes of independent processors.
	 */
	ret = pt_init(&p, gpu, ntasks, grain);
	ret = ret ?: pt_init_program(&p);
	/* the end of a run: nobody sits on a full batch while others idle */
	p.qflags = MEGPU_TQ_F_GUIDED;
	ret = ret ?: pt_b1(&p, PT_THREADS, p.nengines, "all");
	ret = ret ?: pt_b1(&p, 1, 1, "one_each");
	if (ret)
		goto out;
	pt_free(&p);

	/* B2: dequeue cost against dequeuers and batch size */
	ret = pt_init(&p, gpu, ntasks, 1);
	if (ret)
		goto out;
	printf("\nB2 dequeue cost (%u one-element tasks, engines dequeuing "
	       "too)\n", ntasks);
	printf("  %-7s %5s %10s %8s %10s %8s  %s\n", "threads", "batch",
	       "makespan", "takes", "take mean", "retries",
	       "take latency <1/4/16/64/256/more us");
	for (unsigned int threads = 1; threads <= PT_THREADS; threads++) {
		static const uint32_t batches[] = { 1, 4, 16 };

		for (unsigned int b = 0; b < 3; b++) {
			uint64_t takes = 0, ns = 0, retries = 0, h[6] = { 0 };

			ret = pt_run(&p, PT_STEAL, threads, false, 16,
				     batches[b]);
			if (ret)
				goto out;
			for (unsigned int i = 0; i < threads; i++) {
				takes += p.agents[i].batches;
				ns += p.agents[i].take_ns;
				retries += p.agents[i].lock_retries;
				for (unsigned int j = 0; j < 6; j++)
					h[j] += p.agents[i].take_hist[j];
			}
			printf("  %-7u %5u %7.1f ms %8llu %7.1f us %8llu  "
			       "%llu/%llu/%llu/%llu/%llu/%llu\n", threads,
			       batches[b], p.makespan / 1e6,
			       (unsigned long long)takes,
			       takes ? ns / 1e3 / takes : 0.0,
			       (unsigned long long)retries,
			       (unsigned long long)h[0],
			       (unsigned long long)h[1],
			       (unsigned long long)h[2],
			       (unsigned long long)h[3],
			       (unsigned long long)h[4],
			       (unsigned long long)h[5]);
		}
	}
out:
	if (ret)
		fprintf(stderr, "megpu bench partition: %s\n", strerror(-ret));
	pt_free(&p);
	return ret;
}
