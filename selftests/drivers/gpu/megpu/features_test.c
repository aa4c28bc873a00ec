// SPDX-License-Identifier: GPL-2.0
/*
 * A device without the optional features: the host boots this test on a
 * megpu that shows only what the driver needs (x-caps=0xf: interrupt
 * test, engines, MMU, semaphores; no FLUSH, no wave programs, no
 * multi-GPU semaphores, no task queues), as an older model would. The
 * driver binds, reports the features it found, refuses every ioctl of a
 * missing feature with -EOPNOTSUPP (not -EINVAL, not a hang), gives no
 * mailbox, and runs jobs across engines with semaphores and no flushes
 * (such a device posts no writes). On a device with every feature the
 * test skips.
 */

#include <errno.h>

#include "kselftest_harness.h"
#include "megpu_hw_regs.h"
#include "megpu_drm.h"
#include "libmegpu.h"
#include "megpu_test.h"

#define OPTIONAL_CAPS	(MEGPU_CAP_FLUSH | MEGPU_CAP_WAVES | \
			 MEGPU_CAP_MGPU | MEGPU_CAP_TASKQ)

MT_FIXTURE(features);

#define NEED_OLD_DEVICE(t)						\
	do {								\
		if (mt_has_cap(t, OPTIONAL_CAPS))			\
			SKIP(return, "the device has its optional features (the features boot hides them: x-caps=0xf)"); \
	} while (0)

static int raw(struct mt *t, unsigned long req, void *arg)
{
	return drmIoctl(t->gpu.fd, req, arg) ? -errno : 0;
}

TEST_F(features, params)
{
	uint64_t feat = 0, v = 0;
	uint32_t slots = 1;

	NEED_OLD_DEVICE(&self->t);
	ASSERT_EQ(0, megpu_get_param(&self->t.gpu, DRM_MEGPU_PARAM_FEATURES,
				     &feat));
	EXPECT_EQ(MEGPU_CAP_IRQ_TEST | MEGPU_CAP_ENGINES | MEGPU_CAP_MMU |
		  MEGPU_CAP_SEMAPHORE, feat);
	/* no programs, so no mailbox for system calls */
	ASSERT_EQ(0, megpu_mailbox_slots(&self->t.gpu, &slots));
	EXPECT_EQ(0, slots);
	/* no multi-GPU agent */
	EXPECT_EQ(-EOPNOTSUPP, megpu_get_param(&self->t.gpu,
					       DRM_MEGPU_PARAM_MGPU_AGENT_ID,
					       &v));
	EXPECT_EQ(-EOPNOTSUPP,
		  megpu_get_param(&self->t.gpu,
				  DRM_MEGPU_PARAM_MGPU_AGENT_COUNT, &v));
}

/* Every ioctl of a missing feature: -EOPNOTSUPP, with valid arguments. */
TEST_F(features, missing_ioctls_are_not_supported)
{
	struct drm_megpu_taskq_queue ref = { .slots = 64 };
	struct drm_megpu_syscall calls[2];
	struct drm_megpu_flush flush = { 0 };
	struct drm_megpu_syscall_wait sw = {
		.calls = (uintptr_t)calls, .count = 2,
	};
	struct drm_megpu_syscall_return sr = { 0 };
	struct drm_megpu_msem_query mq = { .mask = 1 };
	struct drm_megpu_taskq_check tc = { .slots = 64 };
	struct drm_megpu_taskq_notify tn = { 0 };
	struct drm_megpu_taskq_attach ta = {
		.queues = (uintptr_t)&ref, .count = 1, .engines = 1,
	};
	struct drm_megpu_taskq_wait tw = { 0 };
	struct drm_megpu_taskq_sleep ts = { 0 };
	struct drm_megpu_taskq_detach td = { 0 };
	struct megpu_bo *bo;

	NEED_OLD_DEVICE(&self->t);
	ASSERT_EQ(0, mt_bo(&self->t.gpu, 4096, 0, &bo));
	ref.handle = bo->handle;
	mq.handle = bo->handle;
	tc.handle = bo->handle;

	EXPECT_EQ(-EOPNOTSUPP, raw(&self->t, DRM_IOCTL_MEGPU_FLUSH, &flush));
	EXPECT_EQ(-EOPNOTSUPP, megpu_flush(&self->t.gpu, NULL));
	EXPECT_EQ(-EOPNOTSUPP, raw(&self->t, DRM_IOCTL_MEGPU_SYSCALL_WAIT, &sw));
	EXPECT_EQ(-EOPNOTSUPP,
		  raw(&self->t, DRM_IOCTL_MEGPU_SYSCALL_RETURN, &sr));
	EXPECT_EQ(-EOPNOTSUPP, raw(&self->t, DRM_IOCTL_MEGPU_MSEM_QUERY, &mq));
	EXPECT_EQ(-EOPNOTSUPP, raw(&self->t, DRM_IOCTL_MEGPU_TASKQ_CHECK, &tc));
	EXPECT_EQ(-EOPNOTSUPP,
		  raw(&self->t, DRM_IOCTL_MEGPU_TASKQ_NOTIFY, &tn));
	EXPECT_EQ(-EOPNOTSUPP,
		  raw(&self->t, DRM_IOCTL_MEGPU_TASKQ_ATTACH, &ta));
	EXPECT_EQ(-EOPNOTSUPP, raw(&self->t, DRM_IOCTL_MEGPU_TASKQ_WAIT, &tw));
	EXPECT_EQ(-EOPNOTSUPP, raw(&self->t, DRM_IOCTL_MEGPU_TASKQ_SLEEP, &ts));
	EXPECT_EQ(-EOPNOTSUPP,
		  raw(&self->t, DRM_IOCTL_MEGPU_TASKQ_DETACH, &td));
	megpu_bo_free(bo);
}

/*
 * Jobs still run, across engines: gfx0 (held back) writes, copy0 (engine
 * 2) copies what it wrote; the copy waits for the write on a semaphore and
 * the data is there at the fence with no FLUSH anywhere. NO_FLUSH and
 * HOST_FLUSH are accepted and change nothing.
 */
TEST_F(features, jobs_across_engines_without_flushes)
{
	static const uint32_t flags[] = {
		0, DRM_MEGPU_SUBMIT_NO_FLUSH, DRM_MEGPU_SUBMIT_HOST_FLUSH,
	};
	struct megpu_bo *src, *dst, *bos[2];
	struct mt_job w, c;
	struct megpu_cs cs;
	uint64_t engines = 0;
	unsigned int i;

	NEED_OLD_DEVICE(&self->t);
	ASSERT_EQ(0, megpu_get_param(&self->t.gpu,
				     DRM_MEGPU_PARAM_ENGINE_COUNT, &engines));
	ASSERT_LE(3, engines);
	ASSERT_EQ(0, mt_bo(&self->t.gpu, 4096, 0, &src));
	ASSERT_EQ(0, mt_bo(&self->t.gpu, 4096, 0, &dst));
	bos[0] = src;
	bos[1] = dst;
	for (i = 0; i < sizeof(flags) / sizeof(flags[0]); i++) {
		uint32_t value = 0xfea70000u + i;

		ASSERT_EQ(0, mt_delay_us(&self->t, 0, 20000));
		megpu_cs_init(&cs);
		megpu_cs_write32(&cs, src->va + 128, value);
		ASSERT_EQ(0, mt_submit(&self->t.gpu, &w, 0, &cs, &src, 1,
				       flags[i]));
		megpu_cs_fini(&cs);
		megpu_cs_init(&cs);
		megpu_cs_copy(&cs, src->va + 128, dst->va + 64 * i, 4);
		ASSERT_EQ(0, mt_submit(&self->t.gpu, &c, 2, &cs, bos, 2,
				       flags[i]));
		megpu_cs_fini(&cs);
		EXPECT_EQ(0, mt_job_finish(&c, mt_job_ns(&self->t))) {
			char *faults = mt_debugfs(&self->t, "faults");

			TH_LOG("faults:\n%s", faults ? faults : "?");
			free(faults);
		}
		EXPECT_EQ(0, mt_job_finish(&w, mt_job_ns(&self->t)));
		EXPECT_EQ(value, mt_u32(dst)[16 * i]) TH_LOG("flags 0x%x",
							    flags[i]);
		ASSERT_EQ(0, mt_delay_us(&self->t, 0, 0));
	}
	megpu_bo_free(dst);
	megpu_bo_free(src);
}

TEST_HARNESS_MAIN
