// SPDX-License-Identifier: MIT
/*
 * megpu bench programs: each kernel as a wave program (seed 003's
 * programmable waves; seed 002's tasks run the same programs), as the
 * device's built-in C kernel and as a loop on the guest CPU, over the
 * same arrays in the same run. The figure that matters is the ratio
 * program / built-in at 64k elements and more, where the job's fixed
 * cost no longer hides the interpreter's.
 */

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "megpu_hw_packets.h"
#include "megpu_hw_wave.h"
#include "megpu_programs.h"
#include "megpu.h"

#define PB_GROUP	64
#define PB_MAX_REPS	9

/* A kernel and the program that computes the same. */
static const struct pb_kernel {
	const char *name;
	unsigned int kernel;
} pb_kernels[] = {
	{ "vadd", MEGPU_KERNEL_VADD },
	{ "saxpy", MEGPU_KERNEL_SAXPY },
	{ "checksum", MEGPU_KERNEL_CHECKSUM },
};

static const uint32_t pb_sizes[] = { 4096, 65536, 1048576 };

struct pb {
	struct megpu *gpu;
	unsigned int engine, reps;
	struct megpu_bo *arr[3], *args, *code[3];
	uint32_t len[3];
	uint32_t *ref;		/* the CPU's expected output array */
};

/* Inputs: ints for VADD and CHECKSUM, small floats for SAXPY. */
static void pb_fill(struct pb *b, const struct pb_kernel *k, uint32_t n)
{
	uint32_t *a = b->arr[0]->map, *y = b->arr[1]->map;
	uint32_t i;

	for (i = 0; i < n; i++) {
		if (k->kernel == MEGPU_KERNEL_SAXPY) {
			a[i] = megpu_f32_bits((float)(i % 1000) * 0.25f);
			y[i] = megpu_f32_bits((float)(i % 77));
		} else {
			a[i] = i * 2654435761u;
			y[i] = ~i;
		}
	}
	memset(b->arr[2]->map, 0, (size_t)n * 4);
	if (k->kernel == MEGPU_KERNEL_CHECKSUM)
		y[0] = 0;	/* the sum */
}

/* The array the kernel writes, and how many of its words. */
static uint32_t *pb_out(struct pb *b, const struct pb_kernel *k, uint32_t n,
			uint32_t *words)
{
	*words = k->kernel == MEGPU_KERNEL_CHECKSUM ? 1 : n;
	return b->arr[k->kernel == MEGPU_KERNEL_VADD ? 2 : 1]->map;
}

/* One job of the kernel: built-in (@program false) or the program. */
static int pb_job(struct pb *b, const struct pb_kernel *k, unsigned int ki,
		  uint32_t n, bool program, struct megpu_job *job,
		  uint32_t sync)
{
	const uint32_t a_bits = megpu_f32_bits(1.5f);
	struct megpu_cs cs;
	uint64_t va;
	unsigned int i;
	int ret;

	megpu_job_init(job, b->engine);
	megpu_job_signal_sync(job, sync, 0);
	for (i = 0; i < 3; i++)
		megpu_job_add_bo(job, b->arr[i], DRM_MEGPU_BO_READ |
				 DRM_MEGPU_BO_WRITE);
	megpu_job_add_bo(job, b->args, DRM_MEGPU_BO_READ);
	megpu_cs_init(&cs);
	if (program) {
		struct megpu_pargs pa = {
			.program = b->code[ki]->va, .len = b->len[ki],
			.user = { b->arr[0]->va, b->arr[1]->va },
		};

		if (k->kernel == MEGPU_KERNEL_VADD) {
			pa.user[2] = b->arr[2]->va;
			pa.user[3] = n;
		} else {
			pa.user[2] = n;
			pa.user[3] = a_bits;
		}
		megpu_job_add_bo(job, b->code[ki], DRM_MEGPU_BO_READ);
		ret = megpu_pargs_write(b->args, 0, &pa, &va);
		ret = ret ?: megpu_cs_dispatch_program(&cs, va, n, 1, PB_GROUP,
						       1);
	} else {
		struct megpu_kargs ka = {
			.ptr = { b->arr[0]->va, b->arr[1]->va, b->arr[2]->va },
			.n = n, .param = { a_bits },
		};

		ret = megpu_kargs_write(b->args, 0, &ka, &va);
		ret = ret ?: megpu_cs_dispatch(&cs, k->kernel, va, n, 1,
					       PB_GROUP, 1);
	}
	ret = ret ?: megpu_job_upload(b->gpu, job, &cs);
	megpu_cs_fini(&cs);
	if (ret)
		megpu_job_fini(job);
	return ret;
}

/* Time @reps runs of one variant; checks the first run's result. */
static int pb_gpu(struct pb *b, const struct pb_kernel *k, unsigned int ki,
		  uint32_t n, bool program, double *us)
{
	struct megpu_job job;
	uint32_t sync = 0, words, *out;
	unsigned int r;
	int64_t t0;
	int ret;

	ret = megpu_syncobj_new(b->gpu, false, &sync);
	ret = ret ?: pb_job(b, k, ki, n, program, &job, sync);
	if (ret) {
		megpu_syncobj_free(b->gpu, sync);
		return ret;
	}
	for (r = 0; !ret && r < b->reps; r++) {
		pb_fill(b, k, n);
		t0 = megpu_now_ns();
		ret = megpu_job_submit(b->gpu, &job);
		ret = ret ?: megpu_syncobj_wait(b->gpu, sync, 0,
						120000000000ll);
		ret = ret ?: megpu_fence_status(b->gpu->fd, sync, 0);
		us[r] = (double)(megpu_now_ns() - t0) / 1e3;
		out = pb_out(b, k, n, &words);
		if (!ret && r == 0 && memcmp(out, b->ref, (size_t)words * 4)) {
			fprintf(stderr, "megpu bench: %s %s at %u elements: "
				"wrong result\n", k->name,
				program ? "program" : "built-in", n);
			ret = -EIO;
		}
	}
	megpu_job_fini(&job);
	megpu_syncobj_free(b->gpu, sync);
	return ret;
}

/* The guest CPU's loop (megpu_kernel_ref) on the same arrays. */
static int pb_cpu(struct pb *b, const struct pb_kernel *k, uint32_t n,
		  double *us)
{
	uint32_t *const ptr[4] = { b->arr[0]->map, b->arr[1]->map,
				   b->arr[2]->map, NULL };
	const uint32_t param[3] = { megpu_f32_bits(1.5f) };
	uint32_t words, *out;
	unsigned int r;
	int64_t t0;
	int ret = 0;

	for (r = 0; !ret && r < b->reps; r++) {
		pb_fill(b, k, n);
		t0 = megpu_now_ns();
		ret = megpu_kernel_ref(k->kernel, ptr, n, param);
		us[r] = (double)(megpu_now_ns() - t0) / 1e3;
		if (r == 0) {
			out = pb_out(b, k, n, &words);
			memcpy(b->ref, out, (size_t)words * 4);
		}
	}
	return ret;
}

static int pb_row(struct pb *b, unsigned int ki, uint32_t n)
{
	const struct pb_kernel *k = &pb_kernels[ki];
	double cpu[PB_MAX_REPS], bi[PB_MAX_REPS], pr[PB_MAX_REPS];
	double t_cpu, t_bi, t_pr, insns;
	char name[64];
	int ret;

	/* the CPU first: its result is the reference */
	ret = pb_cpu(b, k, n, cpu);
	ret = ret ?: pb_gpu(b, k, ki, n, false, bi);
	ret = ret ?: pb_gpu(b, k, ki, n, true, pr);
	if (ret)
		return ret;
	snprintf(name, sizeof(name), "programs.%s.%u.builtin", k->name, n);
	t_bi = bench_fig(name, "us", bi, b->reps);
	snprintf(name, sizeof(name), "programs.%s.%u.program", k->name, n);
	t_pr = bench_fig(name, "us", pr, b->reps);
	snprintf(name, sizeof(name), "programs.%s.%u.cpu", k->name, n);
	t_cpu = bench_fig(name, "us", cpu, b->reps);
	/* straight-line programs: every wave runs each instruction once */
	insns = (double)b->len[ki] * ((n + MEGPU_WAVE_LANES - 1) /
				      MEGPU_WAVE_LANES);
	snprintf(name, sizeof(name), "programs.%s.%u.ratio", k->name, n);
	bench_fig1(name, "x", t_pr / t_bi);
	snprintf(name, sizeof(name), "programs.%s.%u.minsn_s", k->name, n);
	bench_fig1(name, "Minsn/s", insns / t_pr);
	printf("  %-9s %8u %11.0f us %11.0f us %7.2fx %11.0f us %9.1f\n",
	       k->name, n, t_bi, t_pr, t_pr / t_bi, t_cpu, insns / t_pr);
	return 0;
}

static int pb_setup(struct pb *b, uint32_t max)
{
	char err[128] = "";
	unsigned int i;
	int ret = 0;

	for (i = 0; !ret && i < 3; i++) {
		ret = megpu_bo_new(b->gpu, (uint64_t)max * 4, 0, &b->arr[i]);
		ret = ret ?: megpu_bo_map(b->arr[i]);
	}
	ret = ret ?: megpu_bo_new(b->gpu, 4096, 0, &b->args);
	ret = ret ?: megpu_bo_map(b->args);
	for (i = 0; !ret && i < 3; i++) {
		ret = megpu_prog_load(b->gpu,
				      megpu_program(pb_kernels[i].name),
				      &b->code[i], &b->len[i], err,
				      sizeof(err));
		if (ret)
			fprintf(stderr, "megpu bench: %s.s: %s\n",
				pb_kernels[i].name, err);
	}
	b->ref = ret ? NULL : malloc((size_t)max * 4);
	return ret ?: b->ref ? 0 : -ENOMEM;
}

static void pb_teardown(struct pb *b)
{
	unsigned int i;

	for (i = 0; i < 3; i++) {
		megpu_bo_free(b->arr[i]);
		megpu_bo_free(b->code[i]);
	}
	megpu_bo_free(b->args);
	free(b->ref);
}

int bench_programs(struct megpu *gpu, bool quick)
{
	struct pb b = { .gpu = gpu, .reps = quick ? 3 : 5 };
	uint32_t max = pb_sizes[sizeof(pb_sizes) / sizeof(pb_sizes[0]) - 1];
	unsigned int s, ki;
	int engine, ret;

	engine = tool_wave_engine(gpu);
	if (engine < 0) {
		printf("\nno wave programs: no program table\n");
		return 0;
	}
	b.engine = (unsigned int)engine;
	ret = pb_setup(&b, max);
	if (ret)
		goto out;
	printf("\nWave programs vs the device's built-in kernels on engine %u "
	       "(%s), groups of %u, medians of %u\n", b.engine,
	       tool_engine_name(gpu, b.engine), PB_GROUP, b.reps);
	printf("  %-9s %8s %14s %14s %8s %14s %9s\n", "kernel", "elements",
	       "built-in", "program", "ratio", "guest CPU", "Minsn/s");
	for (s = 0; !ret && s < sizeof(pb_sizes) / sizeof(pb_sizes[0]); s++)
		for (ki = 0; !ret && ki < 3; ki++)
			ret = pb_row(&b, ki, pb_sizes[s]);
	printf("  (submit to fence of one job each; ratio: program / "
	       "built-in; Minsn/s:\n   wave instructions (16 lanes each) per "
	       "second of the program's job)\n");
out:
	pb_teardown(&b);
	return ret;
}
