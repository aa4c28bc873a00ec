// SPDX-License-Identifier: GPL-2.0
/*
 * Recovery: a job that never completes times out with -ETIMEDOUT in about
 * DRM_MEGPU_PARAM_JOB_TIMEOUT_MS, its engine is reset and runs the next
 * job, and the other engines keep working meanwhile; the hung job's file
 * is banned, so N hung jobs of a client cost one timeout, not N; a
 * faulting job ends with -EFAULT, the rest of its IB does not run, and
 * the next job works; a fault still being handled when its job times out
 * blames that job, never an innocent one the reset put back in the ring.
 */

#include <stdint.h>

#include "kselftest_harness.h"
#include "megpu_test.h"

#define SLACK_MS 5000	/* scheduler tick, reset and a slow TCG guest */
#define BUDGET_MS 25000	/* hang tests on as many engines as fit */

MT_FIXTURE(gpu)

/*
 * Hang @engine from a client of its own; check the others meanwhile and
 * the engine afterwards. The hung client is banned: its job queued behind
 * is cancelled and its next submit fails; another client's job queued
 * behind runs after the reset.
 */
static void hang_one(struct __test_metadata *_metadata, struct mt *t,
		     unsigned int engine)
{
	struct megpu_bo *never, *probe, *queued_bo, *innocent_bo;
	struct mt_job hung, queued, innocent;
	struct megpu_cs cs;
	int64_t took_ms;
	struct mt c;
	unsigned int e;

	ASSERT_EQ(0, mt_open_client(t, &c));
	ASSERT_EQ(0, mt_bo(&c.gpu, 4096, 0, &never));
	ASSERT_EQ(0, mt_bo(&c.gpu, 4096, 0, &queued_bo));
	ASSERT_EQ(0, mt_bo(&t->gpu, 4096, 0, &probe));
	ASSERT_EQ(0, mt_bo(&t->gpu, 4096, 0, &innocent_bo));
	megpu_cs_init(&cs);
	megpu_cs_wait(&cs, never->va, 1);	/* nobody ever signals it */
	megpu_cs_write32(&cs, never->va + 64, 1);
	ASSERT_EQ(0, mt_submit(&c.gpu, &hung, engine, &cs, &never, 1, 0));
	megpu_cs_fini(&cs);
	/* Queued behind the hung job on the same engine, independent. */
	ASSERT_EQ(0, mt_write_job(&c, &queued, engine, queued_bo, 0, 0x9e,
				  NULL, NULL, 0, 0));
	ASSERT_EQ(0, mt_write_job(t, &innocent, engine, innocent_bo, 0, 0x1c,
				  NULL, NULL, 0, 0));

	/* The other engines work while this one hangs. */
	for (e = 0; e < t->engines; e++) {
		if (e == engine)
			continue;
		EXPECT_EQ(0, mt_probe_engine(t, e, probe, 4 * e, 0x100 + e))
			TH_LOG("engine %u while engine %u hangs", e, engine);
	}
	EXPECT_TRUE(mt_pending(&c.gpu, hung.sync, 0));

	EXPECT_EQ(0, megpu_syncobj_wait(&c.gpu, hung.sync, 0,
					(int64_t)(t->timeout_ms + SLACK_MS) *
					1000000))
		TH_LOG("engine %u: hung job not stopped in %llu + %u ms",
		       engine, (unsigned long long)t->timeout_ms, SLACK_MS);
	took_ms = (megpu_now_ns() - hung.submitted) / 1000000;
	EXPECT_EQ(-ETIMEDOUT, mt_job_finish(&hung, mt_job_ns(t)));
	EXPECT_LE((int64_t)t->timeout_ms * 9 / 10, took_ms);
	EXPECT_EQ(0, mt_u32(never)[16]);

	/* The hung client's next job is cancelled, and it is banned. */
	EXPECT_EQ(-ECANCELED, mt_job_finish(&queued, mt_job_ns(t)));
	EXPECT_EQ(0, mt_u32(queued_bo)[0]);
	EXPECT_EQ(-EIO, mt_write_job(&c, &queued, engine, queued_bo, 0, 1,
				     NULL, NULL, 0, 0));

	/* Another client's jobs behind it run after the reset, new ones too. */
	EXPECT_EQ(0, mt_job_finish(&innocent, mt_job_ns(t)));
	EXPECT_EQ(0x1c, mt_u32(innocent_bo)[0]);
	EXPECT_EQ(0, mt_probe_engine(t, engine, probe, 1024, 0x600d))
		TH_LOG("engine %u after its reset", engine);
	megpu_bo_free(innocent_bo);
	megpu_bo_free(queued_bo);
	megpu_bo_free(probe);
	megpu_bo_free(never);
	mt_close(&c);
}

TEST_F_TIMEOUT(gpu, hang_times_out_and_engine_recovers, 150)
{
	unsigned int e, n = self->t.engines;
	uint64_t per = self->t.timeout_ms + 1000;

	/* Engines 0-3 are one of each type; more only if time allows. */
	if (per * n > BUDGET_MS)
		n = per > BUDGET_MS ? 1 : BUDGET_MS / per;
	if (n > self->t.engines)
		n = self->t.engines;
	for (e = 0; e < n; e++) {
		TH_LOG("hanging engine %u (%s)", e, mt_name(&self->t, e));
		hang_one(_metadata, &self->t, e);
	}
}

TEST_F(gpu, fault_then_good_job)
{
	struct megpu_bo *bo, *probe;
	struct megpu_cs cs;
	unsigned int e;

	ASSERT_EQ(0, mt_bo(&self->t.gpu, 4096, 0, &bo));
	ASSERT_EQ(0, mt_bo(&self->t.gpu, 4096, 0, &probe));
	megpu_cs_init(&cs);
	for (e = 0; e < self->t.engines; e++) {
		/* Writes before the fault stay, the rest is not run. */
		megpu_cs_reset(&cs);
		megpu_cs_write32(&cs, bo->va + 16 * e, 1);
		megpu_cs_packet(&cs, MT_PKT_UNKNOWN, 0, NULL, 1);
		megpu_cs_write32(&cs, bo->va + 16 * e + 4, 2);
		EXPECT_EQ(-EFAULT, mt_run(&self->t, e, &cs, &bo, 1))
			TH_LOG("engine %u (%s)", e, mt_name(&self->t, e));
		EXPECT_EQ(1, mt_u32(bo)[4 * e]);
		EXPECT_EQ(0, mt_u32(bo)[4 * e + 1]);
		EXPECT_EQ(0, mt_probe_engine(&self->t, e, probe, 4 * e, e + 7))
			TH_LOG("engine %u after a fault", e);
	}
	megpu_cs_fini(&cs);
	megpu_bo_free(probe);
	megpu_bo_free(bo);
}

/* Faults and hangs are per client: another client's job is unaffected. */
TEST_F(gpu, other_client_unaffected_by_fault)
{
	struct megpu_bo *bo, *theirs;
	struct mt_job bad;
	struct megpu_cs cs;
	struct mt other;

	ASSERT_EQ(0, mt_open_client(&self->t, &other));
	ASSERT_EQ(0, mt_bo(&self->t.gpu, 4096, 0, &bo));
	ASSERT_EQ(0, mt_bo(&other.gpu, 4096, 0, &theirs));
	megpu_cs_init(&cs);
	megpu_cs_packet(&cs, MT_PKT_UNKNOWN, 0, NULL, 0);
	ASSERT_EQ(0, mt_submit(&self->t.gpu, &bad, 0, &cs, &bo, 1, 0));
	megpu_cs_fini(&cs);
	EXPECT_EQ(0, mt_probe_engine(&other, 0, theirs, 0, 0xc1));
	EXPECT_EQ(-EFAULT, mt_job_finish(&bad, mt_job_ns(&self->t)));
	megpu_bo_free(theirs);
	megpu_bo_free(bo);
	mt_close(&other);
}

/*
 * Issue 15 item 5: a fault and a reset of the same engine at once. The
 * fault handler is held (debugfs fault_hold_ms) past the faulting job's
 * timeout, so the timeout handler runs while the fault is being handled.
 * Another client's innocent job queued behind, which waits on a gate the
 * test opens only after the fault handler finished, must complete: the
 * reset must not put it back in the ring for the fault handler to blame.
 */
TEST_F_TIMEOUT(gpu, fault_meeting_a_reset_blames_the_faulting_job, 120)
{
	struct megpu_bo *bad_bo, *bo, *gate;
	struct mt *t = &self->t;
	struct mt_job bad, innocent;
	char hold[16];
	long faults;
	struct megpu_cs cs;
	int64_t end;
	struct mt c;
	int ret;

	faults = mt_engine_count(t, 0, " faults ");
	if (faults < 0)
		SKIP(return, "no debugfs \"engines\"");
	ASSERT_EQ(0, mt_open_client(t, &c));
	ASSERT_EQ(0, mt_bo(&c.gpu, 4096, 0, &bad_bo));
	ASSERT_EQ(0, mt_bo(&t->gpu, 4096, 0, &bo));
	ASSERT_EQ(0, mt_bo(&t->gpu, 4096, 0, &gate));
	snprintf(hold, sizeof(hold), "%llu",
		 (unsigned long long)t->timeout_ms + 1500);
	ASSERT_EQ(0, megpu_debugfs_write(&t->gpu, "fault_hold_ms", hold));

	megpu_cs_init(&cs);
	megpu_cs_packet(&cs, MT_PKT_UNKNOWN, 0, NULL, 0);
	ret = mt_submit(&c.gpu, &bad, 0, &cs, &bad_bo, 1, 0);
	megpu_cs_fini(&cs);
	if (!ret)
		ret = mt_write_job(t, &innocent, 0, bo, 0, 0x1c, gate, NULL, 0,
				   0);
	EXPECT_EQ(0, ret);

	/* the handler ends after the hold, whatever the reset did */
	end = megpu_now_ns() + (int64_t)(2 * t->timeout_ms + 1500 +
					 SLACK_MS) * 1000000;
	while (!ret && mt_engine_count(t, 0, " faults ") == faults &&
	       megpu_now_ns() < end)
		usleep(20000);
	EXPECT_EQ(0, megpu_debugfs_write(&t->gpu, "fault_hold_ms", "0"));
	ASSERT_EQ(0, ret);
	EXPECT_EQ(faults + 1, mt_engine_count(t, 0, " faults "));
	mt_gate_open(gate);

	/* the faulting job failed, by its fault or its timeout */
	ret = mt_job_finish(&bad, mt_job_ns(t));
	EXPECT_TRUE(ret == -EFAULT || ret == -ETIMEDOUT) TH_LOG("bad: %d", ret);
	EXPECT_EQ(0, mt_job_finish(&innocent, mt_job_ns(t)))
		TH_LOG("the innocent job was blamed for the fault");
	EXPECT_EQ(0x1c, mt_u32(bo)[0]);
	EXPECT_EQ(0, mt_probe_engine(t, 0, bo, 64, 0x600d));
	megpu_bo_free(gate);
	megpu_bo_free(bo);
	megpu_bo_free(bad_bo);
	mt_close(&c);
}

/* A semaphore of the driver's pool: the address a frame SIGNALs. */
static uint64_t pool_address(struct __test_metadata *_metadata, struct mt *t)
{
	static struct megpu_debug_packet k[512];
	struct megpu_bo *probe;
	int n, i;

	if (mt_bo(&t->gpu, 4096, 0, &probe))
		return 0;
	EXPECT_EQ(0, mt_probe_engine(t, 0, probe, 0, 1));
	megpu_bo_free(probe);
	n = mt_ring_packets(t, 0, k, 512);
	for (i = 0; i < n; i++)
		if (k[i].op == MEGPU_PKT_SIGNAL)
			return k[i].a;
	return 0;
}

/* the guest has 1 GiB: a BO as large as this still fits */
#define POOL_BO_MAX (640u << 20)

/*
 * Raise a pinning limit to @mb for the test (it may pin a quarter of RAM
 * by default); the old value in *@old, put back by pin_limit_restore().
 */
static void pin_limit_raise(const char *name, unsigned int mb, char **old)
{
	char path[128], val[16];

	snprintf(path, sizeof(path), MT_PARAM_DIR "%s", name);
	snprintf(val, sizeof(val), "%u", mb);
	*old = mt_slurp(path);
	if (*old)
		mt_write_file(path, val);
}

static void pin_limit_restore(const char *name, char *old)
{
	char path[128];

	snprintf(path, sizeof(path), MT_PARAM_DIR "%s", name);
	if (old)
		mt_write_file(path, old);
	free(old);
}

/* The test below raises the pinning limits; its teardown puts them back. */
FIXTURE(pool) {
	struct mt t;
	char *old_client, *old_all;
};

FIXTURE_SETUP(pool)
{
	ASSERT_EQ(0, mt_open(&self->t));
	ASSERT_LT(0, self->t.engines);
}

FIXTURE_TEARDOWN(pool)
{
	pin_limit_restore("pinned_mb", self->old_all);
	pin_limit_restore("client_pinned_mb", self->old_client);
	mt_close(&self->t);
}

/*
 * A client maps a BO over the GPU address equal to the bus address of
 * the driver's semaphore pool and WAITs there in its IB. That is its own
 * WAIT, not a frame's waiting for another engine: it times out like any
 * hang (the driver tells the two apart by the ring position, not by the
 * address).
 */
TEST_F_TIMEOUT(pool, ib_wait_on_pool_address_times_out, 120)
{
	struct megpu_bo *big;
	struct megpu_cs cs;
	struct mt_job j;
	uint64_t pool;
	struct mt c;
	int ret;

	pool = pool_address(_metadata, &self->t);
	if (!pool)
		SKIP(return, "no debugfs \"rings\" with a SIGNAL");
	if (pool + 8 > POOL_BO_MAX)
		SKIP(return, "pool at 0x%llx: beyond a %u MiB BO",
		     (unsigned long long)pool, POOL_BO_MAX >> 20);
	ASSERT_EQ(0, mt_open_client(&self->t, &c));
	/*
	 * A new file's first BO starts at the first page, so it must be as
	 * large as the pool's address (which moves from boot to boot): the
	 * limits are raised for it, not the BO made smaller.
	 */
	pin_limit_raise("client_pinned_mb", (POOL_BO_MAX >> 20) + 64,
			&self->old_client);
	pin_limit_raise("pinned_mb", (POOL_BO_MAX >> 20) + 128,
			&self->old_all);
	ret = megpu_bo_new(&c.gpu, pool + 4096, 0, &big);
	ASSERT_EQ(0, ret) TH_LOG("a BO of %llu MiB",
				 (unsigned long long)(pool + 4096) >> 20);
	ksft_print_msg("pool at %llu MiB\n", (unsigned long long)pool >> 20);
	ASSERT_LE(big->va, pool);
	ASSERT_GT(big->va + big->size, pool + 8);
	megpu_cs_init(&cs);
	megpu_cs_wait(&cs, pool, 1);	/* the BO's zeroed page: never 1 */
	ASSERT_EQ(0, mt_submit(&c.gpu, &j, 0, &cs, &big, 1, 0));
	megpu_cs_fini(&cs);
	EXPECT_EQ(-ETIMEDOUT, mt_job_finish(&j, (int64_t)(self->t.timeout_ms +
						SLACK_MS) * 1000000))
		TH_LOG("an IB's WAIT at 0x%llx was taken for a frame's",
		       (unsigned long long)pool);
	megpu_bo_free(big);
	mt_close(&c);
}

#define HUNG_JOBS 6

/*
 * A client queues HUNG_JOBS jobs that hang on engine 0, then exits (or
 * stays). Another client's job queued behind them completes within about
 * one timeout, not HUNG_JOBS of them: the hang bans the hung client.
 */
FIXTURE(hung_client) {
	struct mt t;
};

FIXTURE_VARIANT(hung_client) {
	bool exits;
};

FIXTURE_VARIANT_ADD(hung_client, exits) { .exits = true };
FIXTURE_VARIANT_ADD(hung_client, stays) { .exits = false };

FIXTURE_SETUP(hung_client)
{
	ASSERT_EQ(0, mt_open(&self->t));
}

FIXTURE_TEARDOWN(hung_client)
{
	mt_close(&self->t);
}

TEST_F_TIMEOUT(hung_client, costs_one_timeout, 120)
{
	struct mt_job hung[HUNG_JOBS], mine;
	struct megpu_bo *never, *bo;
	struct mt *t = &self->t;
	struct megpu_cs cs;
	int64_t took_ms;
	struct mt c;
	int i;

	ASSERT_EQ(0, mt_open_client(t, &c));
	ASSERT_EQ(0, mt_bo(&c.gpu, 4096, 0, &never));
	ASSERT_EQ(0, mt_bo(&t->gpu, 4096, 0, &bo));
	megpu_cs_init(&cs);
	megpu_cs_wait(&cs, never->va, 1);	/* nobody ever signals it */
	for (i = 0; i < HUNG_JOBS; i++)
		ASSERT_EQ(0, mt_submit(&c.gpu, &hung[i], 0, &cs, &never, 1,
				       DRM_MEGPU_SUBMIT_NO_IMPLICIT));
	megpu_cs_fini(&cs);
	ASSERT_EQ(0, mt_write_job(t, &mine, 0, bo, 0, 0x600d, NULL, NULL, 0,
				  0));
	if (variant->exits) {
		for (i = 0; i < HUNG_JOBS; i++)
			mt_job_free(&hung[i]);
		megpu_bo_free(never);
		mt_close(&c);
	}

	EXPECT_EQ(0, mt_job_finish(&mine, mt_job_ns(t)));
	took_ms = (megpu_now_ns() - mine.submitted) / 1000000;
	EXPECT_EQ(0x600d, mt_u32(bo)[0]);
	EXPECT_GT((int64_t)(2 * t->timeout_ms + SLACK_MS), took_ms)
		TH_LOG("%d hung jobs held another client for %lld ms (timeout %llu ms)",
		       HUNG_JOBS, (long long)took_ms,
		       (unsigned long long)t->timeout_ms);
	if (!variant->exits) {
		/* one timed out, the others were cancelled without running */
		int timedout = 0, cancelled = 0, ret;

		for (i = 0; i < HUNG_JOBS; i++) {
			ret = mt_job_finish(&hung[i], mt_job_ns(t));
			timedout += ret == -ETIMEDOUT;
			cancelled += ret == -ECANCELED;
		}
		EXPECT_EQ(1, timedout);
		EXPECT_EQ(HUNG_JOBS - 1, cancelled);
		EXPECT_EQ(-EIO, mt_write_job(&c, &hung[0], 0, never, 0, 1,
					     NULL, NULL, 0, 0));
		megpu_bo_free(never);
		mt_close(&c);
	}
	megpu_bo_free(bo);
}

TEST_HARNESS_MAIN
