// SPDX-License-Identifier: GPL-2.0
/*
 * Wave programs (seed 003's programmable waves) through the driver:
 * VADD, SAXPY and CHECKSUM written as programs (tools/megpu/programs/) give the
 * built-in kernels' results and the CPU reference's, over grids and
 * groups that are not multiples of the 16-lane wave; a faulting program
 * fails only its own job and the engine runs the next; a runaway loop is
 * stopped (BUDGET fault or the job timeout).
 */

#include "kselftest_harness.h"
#include "megpu_programs.h"
#include "megpu_test.h"

#define MAX_N 5003

/* Grids and groups with partial waves and partial groups. */
static const struct {
	uint32_t n, group;
} shapes[] = {
	{ 1, 1 }, { 15, 16 }, { 17, 16 }, { 100, 33 }, { 1000, 64 },
	{ MAX_N, 100 },
};

MT_FIXTURE(wave);

static void fill_inputs(struct megpu_bo *a, struct megpu_bo *b, uint32_t n)
{
	uint32_t i;

	for (i = 0; i < n; i++) {
		mt_u32(a)[i] = i * 2654435761u;
		mt_u32(b)[i] = i ^ 0x5a5a5a5a;
	}
}

/* Run @cs on @engine listing @p's BOs and @extra. */
static int run_prog(struct mt *t, unsigned int engine, struct megpu_cs *cs,
		    struct mt_prog *p, struct megpu_bo **extra,
		    unsigned int n)
{
	struct megpu_bo *bos[8];

	return mt_run(t, engine, cs, bos, mt_prog_bos(p, bos, extra, n));
}

/*
 * The program's output @prog and the built-in kernel's @kern both hold
 * the CPU's @ref in their first @count words, and the program wrote
 * nothing past them; false at the first difference (logged).
 */
static bool same_as_cpu(struct __test_metadata *_metadata,
			const uint32_t *ref, struct megpu_bo *prog,
			struct megpu_bo *kern, uint32_t count, uint32_t n,
			uint32_t group)
{
	uint32_t i;

	for (i = 0; i < count; i++) {
		EXPECT_EQ(ref[i], mt_u32(prog)[i])
			TH_LOG("n %u group %u: program [%u]", n, group, i);
		EXPECT_EQ(ref[i], mt_u32(kern)[i])
			TH_LOG("n %u group %u: kernel [%u]", n, group, i);
		if (mt_u32(prog)[i] != ref[i] || mt_u32(kern)[i] != ref[i])
			return false;
	}
	EXPECT_EQ(0xeeeeeeee, mt_u32(prog)[count])
		TH_LOG("n %u: the program wrote past its array", n);
	return mt_u32(prog)[count] == 0xeeeeeeee;
}

TEST_F(wave, vadd_program_matches_builtin_and_cpu)
{
	struct megpu_bo *a, *b, *c_prog, *c_kern, *kargs;
	int e = mt_wave_engine(&self->t, -1);
	uint32_t *ref[4] = { NULL }, i, s;
	struct megpu_kargs k;
	struct megpu_cs cs;
	struct mt_prog p;
	uint64_t kva;

	if (e < 0)
		SKIP(return, "no engine runs wave programs");
	ASSERT_EQ(0, mt_prog_load(&self->t.gpu, megpu_program("vadd"), &p));
	ASSERT_EQ(0, mt_bo(&self->t.gpu, MAX_N * 4, 0, &a));
	ASSERT_EQ(0, mt_bo(&self->t.gpu, MAX_N * 4, 0, &b));
	ASSERT_EQ(0, mt_bo(&self->t.gpu, MAX_N * 4 + 64, 0, &c_prog));
	ASSERT_EQ(0, mt_bo(&self->t.gpu, MAX_N * 4 + 64, 0, &c_kern));
	ASSERT_EQ(0, mt_bo(&self->t.gpu, 4096, 0, &kargs));
	fill_inputs(a, b, MAX_N);
	for (i = 0; i < 3; i++)
		ref[i] = calloc(MAX_N, 4);

	for (s = 0; s < sizeof(shapes) / sizeof(shapes[0]); s++) {
		uint32_t n = shapes[s].n, group = shapes[s].group;
		uint64_t user[4] = { a->va, b->va, c_prog->va, n };
		struct megpu_bo *extra[5] = { a, b, c_prog, c_kern, kargs };

		/* A guard past n: nothing may write there. */
		memset(c_prog->map, 0xee, c_prog->size);
		memset(c_kern->map, 0xee, c_kern->size);
		megpu_cs_init(&cs);
		ASSERT_EQ(0, mt_prog_dispatch(&cs, &p, 0, user, 4, n, group));
		k = (struct megpu_kargs){
			.ptr = { a->va, b->va, c_kern->va }, .n = n,
		};
		ASSERT_EQ(0, megpu_kargs_write(kargs, 0, &k, &kva));
		ASSERT_EQ(0, megpu_cs_dispatch(&cs, MEGPU_KERNEL_VADD, kva, n,
					       1, group, 1));
		ASSERT_EQ(0, run_prog(&self->t, e, &cs, &p, extra, 5));
		megpu_cs_fini(&cs);

		memcpy(ref[0], a->map, n * 4);
		memcpy(ref[1], b->map, n * 4);
		memset(ref[2], 0, n * 4);
		ASSERT_EQ(0, megpu_kernel_ref(MEGPU_KERNEL_VADD, ref, n,
					      k.param));
		ASSERT_TRUE(same_as_cpu(_metadata, ref[2], c_prog, c_kern, n,
					n, group));
	}
	for (i = 0; i < 3; i++)
		free(ref[i]);
	megpu_bo_free(kargs);
	megpu_bo_free(c_kern);
	megpu_bo_free(c_prog);
	megpu_bo_free(b);
	megpu_bo_free(a);
	mt_prog_free(&p);
}

TEST_F(wave, checksum_program_matches_builtin_and_cpu)
{
	struct megpu_bo *a, *sums, *kargs;
	int e = mt_wave_engine(&self->t, -1);
	uint32_t *ref[4] = { NULL }, i, s, sum;
	struct megpu_kargs k;
	struct megpu_cs cs;
	struct mt_prog p;
	uint64_t kva;

	if (e < 0)
		SKIP(return, "no engine runs wave programs");
	ASSERT_EQ(0, mt_prog_load(&self->t.gpu, megpu_program("checksum"),
				  &p));
	ASSERT_EQ(0, mt_bo(&self->t.gpu, MAX_N * 4, 0, &a));
	ASSERT_EQ(0, mt_bo(&self->t.gpu, 4096, 0, &sums));
	ASSERT_EQ(0, mt_bo(&self->t.gpu, 4096, 0, &kargs));
	for (i = 0; i < MAX_N; i++)
		mt_u32(a)[i] = i * 2654435761u + 7;
	ref[0] = a->map;
	ref[1] = &sum;

	for (s = 0; s < sizeof(shapes) / sizeof(shapes[0]); s++) {
		uint32_t n = shapes[s].n, group = shapes[s].group;
		uint64_t user[3] = { a->va, sums->va, n };
		struct megpu_bo *extra[3] = { a, sums, kargs };

		mt_u32(sums)[0] = 0;	/* the program's */
		mt_u32(sums)[1] = 0;	/* the built-in's */
		megpu_cs_init(&cs);
		ASSERT_EQ(0, mt_prog_dispatch(&cs, &p, 0, user, 3, n, group));
		k = (struct megpu_kargs){
			.ptr = { a->va, sums->va + 4 }, .n = n,
		};
		ASSERT_EQ(0, megpu_kargs_write(kargs, 0, &k, &kva));
		ASSERT_EQ(0, megpu_cs_dispatch(&cs, MEGPU_KERNEL_CHECKSUM, kva,
					       n, 1, group, 1));
		ASSERT_EQ(0, run_prog(&self->t, e, &cs, &p, extra, 3));
		megpu_cs_fini(&cs);

		sum = 0;
		ASSERT_EQ(0, megpu_kernel_ref(MEGPU_KERNEL_CHECKSUM, ref, n,
					      k.param));
		ASSERT_EQ(sum, mt_u32(sums)[0]) TH_LOG("n %u group %u", n,
						       group);
		ASSERT_EQ(sum, mt_u32(sums)[1]) TH_LOG("n %u group %u", n,
						       group);
	}
	megpu_bo_free(kargs);
	megpu_bo_free(sums);
	megpu_bo_free(a);
	mt_prog_free(&p);
}

/* SAXPY in place: program and built-in each on their own copy of y. */
TEST_F(wave, saxpy_program_matches_builtin_and_cpu)
{
	struct megpu_bo *x, *y_prog, *y_kern, *kargs;
	int e = mt_wave_engine(&self->t, -1);
	uint32_t *ref[4] = { NULL }, i, s, a = megpu_f32_bits(-2.75f);
	struct megpu_kargs k;
	struct megpu_cs cs;
	struct mt_prog p;
	uint64_t kva;

	if (e < 0)
		SKIP(return, "no engine runs wave programs");
	ASSERT_EQ(0, mt_prog_load(&self->t.gpu, megpu_program("saxpy"), &p));
	ASSERT_EQ(0, mt_bo(&self->t.gpu, MAX_N * 4, 0, &x));
	ASSERT_EQ(0, mt_bo(&self->t.gpu, MAX_N * 4 + 64, 0, &y_prog));
	ASSERT_EQ(0, mt_bo(&self->t.gpu, MAX_N * 4 + 64, 0, &y_kern));
	ASSERT_EQ(0, mt_bo(&self->t.gpu, 4096, 0, &kargs));
	ref[0] = x->map;
	ref[1] = calloc(MAX_N, 4);
	ASSERT_NE(NULL, ref[1]);

	for (s = 0; s < sizeof(shapes) / sizeof(shapes[0]); s++) {
		uint32_t n = shapes[s].n, group = shapes[s].group;
		uint64_t user[4] = { x->va, y_prog->va, n, a };
		struct megpu_bo *extra[4] = { x, y_prog, y_kern, kargs };

		for (i = 0; i < MAX_N; i++) {
			/* not exact in binary32: rounding shows */
			mt_u32(x)[i] = megpu_f32_bits(i * 0.1f - 17.0f);
			ref[1][i] = megpu_f32_bits(1.0f / (i + 3));
		}
		memset(y_prog->map, 0xee, y_prog->size);
		memcpy(y_prog->map, ref[1], MAX_N * 4);
		memcpy(y_kern->map, ref[1], MAX_N * 4);
		megpu_cs_init(&cs);
		ASSERT_EQ(0, mt_prog_dispatch(&cs, &p, 0, user, 4, n, group));
		k = (struct megpu_kargs){
			.ptr = { x->va, y_kern->va }, .n = n, .param = { a },
		};
		ASSERT_EQ(0, megpu_kargs_write(kargs, 0, &k, &kva));
		ASSERT_EQ(0, megpu_cs_dispatch(&cs, MEGPU_KERNEL_SAXPY, kva, n,
					       1, group, 1));
		ASSERT_EQ(0, run_prog(&self->t, e, &cs, &p, extra, 4));
		megpu_cs_fini(&cs);

		ASSERT_EQ(0, megpu_kernel_ref(MEGPU_KERNEL_SAXPY, ref, n,
					      k.param));
		/* all of y: nothing past n changed either */
		ASSERT_TRUE(same_as_cpu(_metadata, ref[1], y_prog, y_kern,
					MAX_N, n, group));
	}
	free(ref[1]);
	megpu_bo_free(kargs);
	megpu_bo_free(y_kern);
	megpu_bo_free(y_prog);
	megpu_bo_free(x);
	mt_prog_free(&p);
}

/*
 * The program bench runs each kernel as a program and built in, and
 * checks both against the CPU's result before it times them; its
 * numbers are for reading, not testing.
 */
TEST_F_TIMEOUT(wave, tool_bench_programs, 300)
{
	char buf[8192];

	if (mt_wave_engine(&self->t, -1) < 0)
		SKIP(return, "no engine runs wave programs");
	EXPECT_EQ(0, mt_tool("bench programs --quick", buf, sizeof(buf)));
	EXPECT_NE(NULL, strstr(buf, "Wave programs vs the device's built-in"));
	EXPECT_NE(NULL, strstr(buf, "saxpy"));
	EXPECT_NE(NULL, strstr(buf, "1048576"));
}

/*
 * Run @src (user[0] = a scratch BO) on @engine: it must fault only its
 * own job. Returns the job's status; then a probe job on the same engine
 * must work.
 */
static int run_bad(struct __test_metadata *_metadata, struct mt *t,
		   unsigned int engine, const char *src)
{
	struct megpu_bo *scratch;
	struct megpu_cs cs;
	struct mt_prog p;
	uint64_t user[1];
	int status;

	EXPECT_EQ(0, mt_prog_load(&t->gpu, src, &p));
	EXPECT_EQ(0, mt_bo(&t->gpu, 4096, 0, &scratch));
	user[0] = scratch->va;
	megpu_cs_init(&cs);
	EXPECT_EQ(0, mt_prog_dispatch(&cs, &p, 0, user, 1, 40, 20));
	status = run_prog(t, engine, &cs, &p, &scratch, 1);
	megpu_cs_fini(&cs);
	/*
	 * The engine runs the next job, and so do the others. A job that
	 * timed out (a loaded host may reach the job timeout before the
	 * wave budget) banned its file: probe from another client then.
	 */
	if (status == -ETIMEDOUT) {
		struct megpu_bo *probe;
		struct mt o;

		ASSERT_EQ(0, mt_open_client(t, &o));
		ASSERT_EQ(0, mt_bo(&o.gpu, 4096, 0, &probe));
		EXPECT_EQ(0, mt_probe_engine(&o, engine, probe, 64, 0x600d));
		megpu_bo_free(probe);
		mt_close(&o);
	} else {
		EXPECT_EQ(0, mt_probe_engine(t, engine, scratch, 64, 0x600d));
	}
	megpu_bo_free(scratch);
	mt_prog_free(&p);
	return status;
}

TEST_F(wave, bad_opcode_faults_only_its_job)
{
	int e = mt_wave_engine(&self->t, -1);

	if (e < 0)
		SKIP(return, "no engine runs wave programs");
	/* 0x7f is no opcode of the ISA */
	ASSERT_EQ(-EFAULT, run_bad(_metadata, &self->t, e,
				   "s2r r1, global_id\n"
				   ".quad 0x7f\n"
				   "end\n"));
}

/*
 * SLEEP and INTERRUPT are the device's raw primitives: nobody restarts a
 * wave a program parks by itself, and the driver has no use for its
 * interrupt. The driver leaves them disabled (WAVE_CONTROL.RAW), so the
 * job faults at once: not a wave parked until the job timeout resets
 * the engine and bans the file, not an interrupt storm. Programs stop
 * for the CPU only in SYSCALL.
 */
TEST_F(wave, sleep_faults_only_its_job)
{
	int e = mt_wave_engine(&self->t, -1);

	if (e < 0)
		SKIP(return, "no engine runs wave programs");
	ASSERT_EQ(-EFAULT, run_bad(_metadata, &self->t, e,
				   "s2r r1, global_id\n"
				   "sleep irq\n"
				   "end\n"));
	ASSERT_EQ(-EFAULT, run_bad(_metadata, &self->t, e, "sleep\nend\n"));
}

TEST_F(wave, interrupt_faults_only_its_job)
{
	int e = mt_wave_engine(&self->t, -1);

	if (e < 0)
		SKIP(return, "no engine runs wave programs");
	ASSERT_EQ(-EFAULT, run_bad(_metadata, &self->t, e,
				   "loop: interrupt\n"
				   "jmp loop\n"));
}

TEST_F(wave, misaligned_load_faults_only_its_job)
{
	int e = mt_wave_engine(&self->t, -1);

	if (e < 0)
		SKIP(return, "no engine runs wave programs");
	ASSERT_EQ(-EFAULT, run_bad(_metadata, &self->t, e,
				   "ldarg r1, 0\n"
				   "ld32 r2, [r1+2]\n"
				   "end\n"));
}

TEST_F(wave, runaway_loop_is_stopped)
{
	int e = mt_wave_engine(&self->t, -1), status;

	if (e < 0)
		SKIP(return, "no engine runs wave programs");
	/* BUDGET faults it (-EFAULT); without a budget the timeout does */
	status = run_bad(_metadata, &self->t, e,
			 "loop: add r1, r1, 1\n"
			 "jmp loop\n");
	ASSERT_TRUE(status == -EFAULT || status == -ETIMEDOUT)
		TH_LOG("status %d", status);
}

TEST_F(wave, fault_leaves_other_engines_running)
{
	int e = mt_wave_engine(&self->t, -1), o, status;
	struct megpu_bo *scratch, *bos[3];
	struct megpu_cs cs;
	struct mt_job bad;
	struct mt_prog p;
	uint64_t user[1];
	unsigned int nbos;

	if (e < 0)
		SKIP(return, "no engine runs wave programs");
	o = mt_other_engine(&self->t, e);
	if (o < 0)
		SKIP(return, "needs 2 engines");
	ASSERT_EQ(0, mt_prog_load(&self->t.gpu, ".quad 0x7f\n", &p));
	ASSERT_EQ(0, mt_bo(&self->t.gpu, 4096, 0, &scratch));
	user[0] = scratch->va;
	megpu_cs_init(&cs);
	ASSERT_EQ(0, mt_prog_dispatch(&cs, &p, 0, user, 1, 16, 16));
	nbos = mt_prog_bos(&p, bos, &scratch, 1);
	ASSERT_EQ(0, mt_submit(&self->t.gpu, &bad, e, &cs, bos, nbos, 0));
	ASSERT_EQ(0, mt_probe_engine(&self->t, o, scratch, 0, 0xabc));
	status = mt_job_finish(&bad, mt_job_ns(&self->t));
	ASSERT_EQ(-EFAULT, status);
	megpu_cs_fini(&cs);
	megpu_bo_free(scratch);
	mt_prog_free(&p);
}

TEST_HARNESS_MAIN
