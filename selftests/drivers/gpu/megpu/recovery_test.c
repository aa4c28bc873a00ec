// SPDX-License-Identifier: GPL-2.0
/*
 * Recovery: a job that never completes times out with -ETIMEDOUT in about
 * DRM_MEGPU_PARAM_JOB_TIMEOUT_MS, its engine is reset and runs the next
 * job, and the other engines keep working meanwhile; a faulting job ends
 * with -EFAULT, the rest of its IB does not run, and the next job works.
 */

#include <stdint.h>

#include "kselftest_harness.h"
#include "megpu_test.h"

#define SLACK_MS 5000	/* scheduler tick, reset and a slow TCG guest */
#define BUDGET_MS 25000	/* hang tests on as many engines as fit */

MT_FIXTURE(gpu)

/* Hang @engine; check the others meanwhile and the engine afterwards. */
static void hang_one(struct __test_metadata *_metadata, struct mt *t,
		     unsigned int engine)
{
	struct megpu_bo *never, *probe, *queued_bo;
	struct mt_job hung, queued;
	struct megpu_cs cs;
	int64_t took_ms;
	unsigned int e;

	ASSERT_EQ(0, mt_bo(&t->gpu, 4096, 0, &never));
	ASSERT_EQ(0, mt_bo(&t->gpu, 4096, 0, &probe));
	ASSERT_EQ(0, mt_bo(&t->gpu, 4096, 0, &queued_bo));
	megpu_cs_init(&cs);
	megpu_cs_wait(&cs, never->va, 1);	/* nobody ever signals it */
	megpu_cs_write32(&cs, never->va + 64, 1);
	ASSERT_EQ(0, mt_submit(&t->gpu, &hung, engine, &cs, &never, 1, 0));
	megpu_cs_fini(&cs);
	/* Queued behind the hung job on the same engine, independent. */
	ASSERT_EQ(0, mt_write_job(t, &queued, engine, queued_bo, 0, 0x9e, NULL,
				  NULL, 0, 0));

	/* The other engines work while this one hangs. */
	for (e = 0; e < t->engines; e++) {
		if (e == engine)
			continue;
		EXPECT_EQ(0, mt_probe_engine(t, e, probe, 4 * e, 0x100 + e))
			TH_LOG("engine %u while engine %u hangs", e, engine);
	}
	EXPECT_TRUE(mt_pending(&t->gpu, hung.sync, 0));

	EXPECT_EQ(0, megpu_syncobj_wait(&t->gpu, hung.sync, 0,
					(int64_t)(t->timeout_ms + SLACK_MS) *
					1000000))
		TH_LOG("engine %u: hung job not stopped in %llu + %u ms",
		       engine, (unsigned long long)t->timeout_ms, SLACK_MS);
	took_ms = (megpu_now_ns() - hung.submitted) / 1000000;
	EXPECT_EQ(-ETIMEDOUT, mt_job_finish(&hung, mt_job_ns(t)));
	EXPECT_LE((int64_t)t->timeout_ms * 9 / 10, took_ms);
	EXPECT_EQ(0, mt_u32(never)[16]);

	/* Innocent jobs behind it run after the reset, and new ones too. */
	EXPECT_EQ(0, mt_job_finish(&queued, mt_job_ns(t)));
	EXPECT_EQ(0x9e, mt_u32(queued_bo)[0]);
	EXPECT_EQ(0, mt_probe_engine(t, engine, probe, 1024, 0x600d))
		TH_LOG("engine %u after its reset", engine);
	megpu_bo_free(queued_bo);
	megpu_bo_free(probe);
	megpu_bo_free(never);
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

TEST_HARNESS_MAIN
