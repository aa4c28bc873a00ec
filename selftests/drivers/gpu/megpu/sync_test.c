// SPDX-License-Identifier: GPL-2.0
/*
 * Explicit synchronization: binary syncobj chains and fan-in across
 * engines, timeline points, sync_file export and import, waits with a
 * timeout, the error a dependency's failure passes on, and what one
 * SUBMIT may attach: one fence per producer, from at most
 * DRM_MEGPU_MAX_SYNCS of them; more out-syncs through SUBMIT's extension.
 *
 * Jobs use DRM_MEGPU_SUBMIT_NO_IMPLICIT so that only the syncobjs order
 * them; the first job of each test holds on a gate the CPU opens.
 */

#include <linux/dma-buf.h>
#include <linux/sync_file.h>
#include <poll.h>
#include <pthread.h>
#include <stdint.h>
#include <sys/ioctl.h>
#include <xf86drm.h>

#include <inttypes.h>

#include "kselftest_harness.h"
#include "megpu_test.h"

#define NOIMP DRM_MEGPU_SUBMIT_NO_IMPLICIT
#define SETTLE_US 200000	/* long enough for an unordered job to run */

MT_FIXTURE(gpu)

/* Each job waits for the previous one's binary syncobj, engine to engine. */
TEST_F(gpu, binary_chain_across_engines)
{
	unsigned int n = self->t.engines < 2 ? 2 : self->t.engines, i;
	struct megpu_bo *bo, *gate;
	struct drm_megpu_sync prev;
	struct mt_job j[MEGPU_MAX_ENGINES];

	ASSERT_EQ(0, mt_bo(&self->t.gpu, 4096, 0, &bo));
	ASSERT_EQ(0, mt_bo(&self->t.gpu, 4096, 0, &gate));
	for (i = 0; i < n; i++) {
		ASSERT_EQ(0, mt_write_job(&self->t, &j[i],
					  i % self->t.engines, bo, 4 * i,
					  i + 1, i ? NULL : gate, &prev,
					  i ? 1 : 0, NOIMP));
		prev = (struct drm_megpu_sync){ .handle = j[i].sync };
	}
	usleep(SETTLE_US);
	for (i = 0; i < n; i++) {
		EXPECT_TRUE(mt_pending(&self->t.gpu, j[i].sync, 0))
			TH_LOG("job %u ran before its dependency", i);
		EXPECT_EQ(0, mt_u32(bo)[i]);
	}
	mt_gate_open(gate);
	for (i = 0; i < n; i++) {
		EXPECT_EQ(0, mt_job_finish(&j[i], mt_job_ns(&self->t)));
		EXPECT_EQ(i + 1, mt_u32(bo)[i]);
	}
	megpu_bo_free(gate);
	megpu_bo_free(bo);
}

/* One job waits for several syncobjs from every engine. */
TEST_F(gpu, fan_in)
{
	struct drm_megpu_sync in[MEGPU_MAX_ENGINES];
	struct mt_job j[MEGPU_MAX_ENGINES], last;
	unsigned int n = self->t.engines, i;
	struct megpu_bo *bo, *gate;

	ASSERT_EQ(0, mt_bo(&self->t.gpu, 4096, 0, &bo));
	ASSERT_EQ(0, mt_bo(&self->t.gpu, 4096, 0, &gate));
	/* The gated producer is the last one, so the others finish first. */
	for (i = 0; i < n; i++) {
		ASSERT_EQ(0, mt_write_job(&self->t, &j[i], i, bo, 4 * i,
					  0x100 + i, i == n - 1 ? gate : NULL,
					  NULL, 0, NOIMP));
		in[i] = (struct drm_megpu_sync){ .handle = j[i].sync };
	}
	ASSERT_EQ(0, mt_write_job(&self->t, &last, 0, bo, 1024, 0xf00d, NULL,
				  in, n, NOIMP));
	for (i = 0; i + 1 < n; i++)
		EXPECT_EQ(0, megpu_syncobj_wait(&self->t.gpu, j[i].sync, 0,
						mt_job_ns(&self->t)));
	usleep(SETTLE_US);
	EXPECT_TRUE(mt_pending(&self->t.gpu, last.sync, 0));
	EXPECT_EQ(0, mt_u32(bo)[256]);
	mt_gate_open(gate);
	EXPECT_EQ(0, mt_job_finish(&last, mt_job_ns(&self->t)));
	EXPECT_EQ(0xf00d, mt_u32(bo)[256]);
	for (i = 0; i < n; i++) {
		EXPECT_EQ(0, mt_job_finish(&j[i], mt_job_ns(&self->t)));
		EXPECT_EQ(0x100 + i, mt_u32(bo)[i]);
	}
	megpu_bo_free(gate);
	megpu_bo_free(bo);
}

/* Points 1, 2, 3 of one timeline, produced and consumed across engines. */
TEST_F(gpu, timeline_points)
{
	struct megpu_bo *bo, *gate;
	struct megpu_cs cs;
	struct mt_job j[3];
	uint64_t point;
	uint32_t tl;
	int i;

	ASSERT_EQ(0, mt_bo(&self->t.gpu, 4096, 0, &bo));
	ASSERT_EQ(0, mt_bo(&self->t.gpu, 4096, 0, &gate));
	ASSERT_EQ(0, megpu_syncobj_new(&self->t.gpu, false, &tl));
	megpu_cs_init(&cs);
	for (i = 0; i < 3; i++) {
		ASSERT_EQ(0, mt_job_prepare(&self->t.gpu, &j[i],
					    i % self->t.engines, &bo, 1,
					    NOIMP));
		megpu_job_signal_sync(&j[i].job, tl, i + 1);
		megpu_cs_reset(&cs);
		if (i) {
			ASSERT_EQ(0, megpu_job_wait_sync(&j[i].job, tl, i));
		} else {
			ASSERT_EQ(0, megpu_job_add_bo(&j[i].job, gate,
						      DRM_MEGPU_BO_READ));
			mt_gate_hold(&cs, gate);
		}
		megpu_cs_write32(&cs, bo->va + 4 * i, 10 + i);
		ASSERT_EQ(0, mt_job_start(&j[i], &cs));
	}
	megpu_cs_fini(&cs);
	usleep(SETTLE_US);
	EXPECT_TRUE(mt_pending(&self->t.gpu, tl, 1));
	EXPECT_TRUE(mt_pending(&self->t.gpu, tl, 3));
	EXPECT_EQ(0, mt_u32(bo)[2]);
	ASSERT_EQ(0, drmSyncobjQuery(self->t.gpu.fd, &tl, &point, 1));
	EXPECT_EQ(0, point);

	mt_gate_open(gate);
	ASSERT_EQ(0, megpu_syncobj_wait(&self->t.gpu, tl, 3,
					mt_job_ns(&self->t)));
	ASSERT_EQ(0, drmSyncobjQuery(self->t.gpu.fd, &tl, &point, 1));
	EXPECT_EQ(3, point);
	for (i = 0; i < 3; i++) {
		EXPECT_EQ(0, megpu_fence_status(self->t.gpu.fd, tl, i + 1));
		EXPECT_EQ(10 + i, mt_u32(bo)[i]);
		mt_job_free(&j[i]);
	}
	megpu_syncobj_free(&self->t.gpu, tl);
	megpu_bo_free(gate);
	megpu_bo_free(bo);
}

/* SUBMIT of @j's uploaded IB with the extension chain @ext; errno or 0. */
static int submit_with_ext(struct mt_job *j, uint64_t ext)
{
	return -megpu_job_submit_ext(j->gpu, &j->job, ext);
}

/*
 * The out-sync extension: one job's fence reaches its out_sync, two more
 * binary syncobjs and a timeline point. A bad chain (unknown id, flags,
 * an id twice, a count of 0 or too many, a bad pointer, an unknown
 * handle, a non-zero pad) is refused with nothing run or signalled.
 */
TEST_F(gpu, out_sync_extension)
{
	struct drm_megpu_sync syncs[DRM_MEGPU_MAX_SYNCS + 1];
	struct drm_megpu_ext_out_syncs x, y;
	struct megpu_bo *bo, *gate;
	struct megpu_cs cs;
	struct mt_job j;
	uint32_t b[2], tl;
	uint64_t point;
	int i;

	ASSERT_EQ(0, mt_bo(&self->t.gpu, 4096, 0, &bo));
	ASSERT_EQ(0, mt_bo(&self->t.gpu, 4096, 0, &gate));
	for (i = 0; i < 2; i++)
		ASSERT_EQ(0, megpu_syncobj_new(&self->t.gpu, false, &b[i]));
	ASSERT_EQ(0, megpu_syncobj_new(&self->t.gpu, false, &tl));
	ASSERT_EQ(0, mt_job_prepare(&self->t.gpu, &j, 0, &bo, 1, NOIMP));
	ASSERT_EQ(0, megpu_job_add_bo(&j.job, gate, DRM_MEGPU_BO_READ));
	megpu_cs_init(&cs);
	mt_gate_hold(&cs, gate);
	megpu_cs_write32(&cs, bo->va, 7);
	ASSERT_EQ(0, megpu_job_upload(&self->t.gpu, &j.job, &cs));
	megpu_cs_fini(&cs);

	syncs[0] = (struct drm_megpu_sync){ .handle = b[0] };
	syncs[1] = (struct drm_megpu_sync){ .handle = b[1] };
	syncs[2] = (struct drm_megpu_sync){ .handle = tl, .point = 5 };
	x = (struct drm_megpu_ext_out_syncs){
		.base.id = DRM_MEGPU_EXT_ID_OUT_SYNCS,
		.syncs = (uintptr_t)syncs, .count = 3,
	};
	/* refused chains */
	y = x;
	y.base.id = 77;
	EXPECT_EQ(EINVAL, submit_with_ext(&j, (uintptr_t)&y));
	y = x;
	y.base.flags = 1;
	EXPECT_EQ(EINVAL, submit_with_ext(&j, (uintptr_t)&y));
	y = x;
	y.base.next = (uintptr_t)&x;	/* the same id twice */
	EXPECT_EQ(EINVAL, submit_with_ext(&j, (uintptr_t)&y));
	y = x;
	y.base.next = (uintptr_t)&y;	/* a loop */
	EXPECT_EQ(EINVAL, submit_with_ext(&j, (uintptr_t)&y));
	y = x;
	y.count = 0;
	EXPECT_EQ(EINVAL, submit_with_ext(&j, (uintptr_t)&y));
	y.count = DRM_MEGPU_MAX_SYNCS + 1;
	EXPECT_EQ(EINVAL, submit_with_ext(&j, (uintptr_t)&y));
	y = x;
	y.pad = 1;
	EXPECT_EQ(EINVAL, submit_with_ext(&j, (uintptr_t)&y));
	EXPECT_EQ(EFAULT, submit_with_ext(&j, 8));
	y = x;
	y.syncs = 8;
	EXPECT_EQ(EFAULT, submit_with_ext(&j, (uintptr_t)&y));
	syncs[1].handle = 0xdead;
	EXPECT_EQ(ENOENT, submit_with_ext(&j, (uintptr_t)&x));
	syncs[1] = (struct drm_megpu_sync){ .handle = b[1], .pad = 1 };
	EXPECT_EQ(EINVAL, submit_with_ext(&j, (uintptr_t)&x));
	syncs[1] = (struct drm_megpu_sync){ .handle = b[1] };
	/* no syncobj got a fence (a wait not for submit fails at once) */
	for (i = 0; i < 2; i++)
		EXPECT_EQ(-EINVAL, drmSyncobjWait(self->t.gpu.fd, &b[i], 1, 0,
						  0, NULL));
	EXPECT_EQ(-EINVAL, drmSyncobjWait(self->t.gpu.fd, &j.sync, 1, 0, 0,
					  NULL));
	ASSERT_EQ(0, drmSyncobjQuery(self->t.gpu.fd, &tl, &point, 1));
	EXPECT_EQ(0, point);

	/* the good one: every syncobj gets the job's fence */
	ASSERT_EQ(0, submit_with_ext(&j, (uintptr_t)&x));
	usleep(SETTLE_US);
	EXPECT_TRUE(mt_pending(&self->t.gpu, b[0], 0));
	EXPECT_TRUE(mt_pending(&self->t.gpu, tl, 5));
	mt_gate_open(gate);
	ASSERT_EQ(0, megpu_syncobj_wait(&self->t.gpu, j.sync, 0,
					mt_job_ns(&self->t)));
	for (i = 0; i < 2; i++) {
		EXPECT_EQ(0, megpu_syncobj_wait(&self->t.gpu, b[i], 0,
						mt_job_ns(&self->t)));
	}
	EXPECT_EQ(0, megpu_syncobj_wait(&self->t.gpu, tl, 5,
					mt_job_ns(&self->t)));
	ASSERT_EQ(0, drmSyncobjQuery(self->t.gpu.fd, &tl, &point, 1));
	EXPECT_EQ(5, point);
	EXPECT_EQ(7, mt_u32(bo)[0]);
	mt_job_free(&j);
	for (i = 0; i < 2; i++)
		megpu_syncobj_free(&self->t.gpu, b[i]);
	megpu_syncobj_free(&self->t.gpu, tl);
	megpu_bo_free(gate);
	megpu_bo_free(bo);
}

/* megpu_job_add_signal_sync(): the library's way to the extension. */
TEST_F(gpu, out_sync_extension_library)
{
	struct megpu_bo *bo;
	struct megpu_cs cs;
	struct mt_job j;
	uint32_t more[MEGPU_JOB_MAX_OUTS];
	int i;

	ASSERT_EQ(0, mt_bo(&self->t.gpu, 4096, 0, &bo));
	ASSERT_EQ(0, mt_job_prepare(&self->t.gpu, &j, 0, &bo, 1, NOIMP));
	for (i = 0; i < MEGPU_JOB_MAX_OUTS; i++) {
		ASSERT_EQ(0, megpu_syncobj_new(&self->t.gpu, false, &more[i]));
		ASSERT_EQ(0, megpu_job_add_signal_sync(&j.job, more[i], 0));
	}
	EXPECT_EQ(-E2BIG, megpu_job_add_signal_sync(&j.job, more[0], 0));
	megpu_cs_init(&cs);
	megpu_cs_write32(&cs, bo->va, 9);
	ASSERT_EQ(0, mt_job_start(&j, &cs));
	megpu_cs_fini(&cs);
	for (i = 0; i < MEGPU_JOB_MAX_OUTS; i++) {
		EXPECT_EQ(0, megpu_syncobj_wait(&self->t.gpu, more[i], 0,
						mt_job_ns(&self->t)));
		megpu_syncobj_free(&self->t.gpu, more[i]);
	}
	EXPECT_EQ(0, mt_job_finish(&j, mt_job_ns(&self->t)));
	EXPECT_EQ(9, mt_u32(bo)[0]);
	megpu_bo_free(bo);
}

/* A timeline point of a faulting job reports the fault. */
TEST_F(gpu, timeline_point_carries_error)
{
	struct megpu_bo *bo;
	struct megpu_cs cs;
	struct mt_job j;
	uint32_t tl;

	ASSERT_EQ(0, mt_bo(&self->t.gpu, 4096, 0, &bo));
	ASSERT_EQ(0, megpu_syncobj_new(&self->t.gpu, false, &tl));
	ASSERT_EQ(0, mt_job_prepare(&self->t.gpu, &j, 0, &bo, 1, 0));
	megpu_job_signal_sync(&j.job, tl, 5);
	megpu_cs_init(&cs);
	megpu_cs_packet(&cs, MT_PKT_UNKNOWN, 0, NULL, 0);
	ASSERT_EQ(0, mt_job_start(&j, &cs));
	megpu_cs_fini(&cs);
	ASSERT_EQ(0, megpu_syncobj_wait(&self->t.gpu, tl, 5,
					mt_job_ns(&self->t)));
	EXPECT_EQ(-EFAULT, megpu_fence_status(self->t.gpu.fd, tl, 5));
	mt_job_free(&j);
	megpu_syncobj_free(&self->t.gpu, tl);
	megpu_bo_free(bo);
}

/* An out-fence leaves as a sync_file and comes back as an in-fence. */
TEST_F(gpu, sync_file_export_import)
{
	int other = mt_other_engine(&self->t, 0);
	struct megpu_bo *bo, *gate;
	struct drm_megpu_sync in;
	struct mt_job a, b;
	struct pollfd pfd;
	uint32_t imported;
	int fd;

	ASSERT_EQ(0, mt_bo(&self->t.gpu, 4096, 0, &bo));
	ASSERT_EQ(0, mt_bo(&self->t.gpu, 4096, 0, &gate));
	ASSERT_EQ(0, mt_write_job(&self->t, &a, 0, bo, 0, 1, gate, NULL, 0,
				  NOIMP));
	ASSERT_EQ(0, megpu_syncobj_export(&self->t.gpu, a.sync, 0, &fd));
	pfd = (struct pollfd){ .fd = fd, .events = POLLIN };
	EXPECT_EQ(0, poll(&pfd, 1, 0));
	EXPECT_EQ(1, megpu_sync_file_status(fd));

	ASSERT_EQ(0, megpu_syncobj_new(&self->t.gpu, false, &imported));
	ASSERT_EQ(0, megpu_syncobj_import(&self->t.gpu, imported, fd));
	in = (struct drm_megpu_sync){ .handle = imported };
	ASSERT_EQ(0, mt_write_job(&self->t, &b, other < 0 ? 0 : other, bo, 4,
				  2, NULL, &in, 1, NOIMP));
	usleep(SETTLE_US);
	EXPECT_TRUE(mt_pending(&self->t.gpu, b.sync, 0));
	EXPECT_EQ(0, mt_u32(bo)[1]);

	mt_gate_open(gate);
	EXPECT_EQ(0, mt_job_finish(&b, mt_job_ns(&self->t)));
	EXPECT_EQ(0, mt_job_finish(&a, mt_job_ns(&self->t)));
	EXPECT_EQ(1, poll(&pfd, 1, 1000));
	EXPECT_EQ(0, megpu_sync_file_status(fd));
	EXPECT_EQ(1, mt_u32(bo)[0]);
	EXPECT_EQ(2, mt_u32(bo)[1]);
	close(fd);
	megpu_syncobj_free(&self->t.gpu, imported);
	megpu_bo_free(gate);
	megpu_bo_free(bo);
}

TEST_F(gpu, wait_with_timeout)
{
	struct megpu_bo *bo, *gate;
	struct mt_job j;
	int64_t t0, waited;

	ASSERT_EQ(0, mt_bo(&self->t.gpu, 4096, 0, &bo));
	ASSERT_EQ(0, mt_bo(&self->t.gpu, 4096, 0, &gate));
	ASSERT_EQ(0, mt_write_job(&self->t, &j, 0, bo, 0, 7, gate, NULL, 0,
				  0));
	t0 = megpu_now_ns();
	EXPECT_EQ(-ETIME, megpu_syncobj_wait(&self->t.gpu, j.sync, 0,
					     100000000));
	waited = megpu_now_ns() - t0;
	/*
	 * It waited rather than returning at once. Not 90% of it: the
	 * kernel's timeout runs in jiffies, which a TCG guest catches up in
	 * bursts (89.4 ms measured for 100 ms in one make check).
	 */
	EXPECT_LE(50000000, waited);
	EXPECT_EQ(0, mt_u32(bo)[0]);
	mt_gate_open(gate);
	EXPECT_EQ(0, mt_job_finish(&j, mt_job_ns(&self->t)));
	EXPECT_EQ(7, mt_u32(bo)[0]);
	megpu_bo_free(gate);
	megpu_bo_free(bo);
}

/*
 * A job whose in-sync failed does not run and completes with -ECANCELED
 * (uAPI: it must not use its producer's unfinished output).
 */
TEST_F(gpu, dependency_failure_cancels)
{
	int other = mt_other_engine(&self->t, 0);
	struct megpu_bo *bo, *out;
	struct drm_megpu_sync in;
	struct megpu_cs cs;
	struct mt_job a, b;

	ASSERT_EQ(0, mt_bo(&self->t.gpu, 4096, 0, &bo));
	ASSERT_EQ(0, mt_bo(&self->t.gpu, 4096, 0, &out));
	megpu_cs_init(&cs);
	megpu_cs_packet(&cs, MT_PKT_UNKNOWN, 0, NULL, 0);
	ASSERT_EQ(0, mt_submit(&self->t.gpu, &a, 0, &cs, &bo, 1, 0));
	megpu_cs_fini(&cs);
	in = (struct drm_megpu_sync){ .handle = a.sync };
	ASSERT_EQ(0, mt_write_job(&self->t, &b, other < 0 ? 0 : other, out,
				  0, 9, NULL, &in, 1, NOIMP));
	EXPECT_EQ(-ECANCELED, mt_job_finish(&b, mt_job_ns(&self->t)));
	EXPECT_EQ(-EFAULT, mt_job_finish(&a, mt_job_ns(&self->t)));
	EXPECT_EQ(0, mt_u32(out)[0]);
	megpu_bo_free(out);
	megpu_bo_free(bo);
}

#define CANCEL_CHAIN 24

/*
 * A producer fails with a chain of consumers in the rings, each on the
 * other engine from the one before (in-syncs): every one completes with
 * -ECANCELED and none writes. The fault handler cancels them in one pass
 * over the rings in the order the jobs entered them: it looks at each job
 * about once (debugfs cancel_checks), where a walk repeated until nothing
 * changed looked at every job once per link of the chain.
 */
TEST_F_TIMEOUT(gpu, failure_cancels_a_chain_in_one_pass, 120)
{
	int e1 = mt_other_engine(&self->t, 0), prev;
	struct mt_job p, j[CANCEL_CHAIN];
	struct megpu_bo *gate, *out;
	struct mt *t = &self->t;
	struct drm_megpu_sync in;
	uint64_t checks0, checks;
	struct megpu_cs cs;
	int i;

	if (e1 < 0)
		SKIP(return, "needs 2 engines");
	if (megpu_debugfs_counter(&t->gpu, "cancel_checks", &checks0))
		SKIP(return, "no debugfs cancel_checks");
	ASSERT_EQ(0, mt_bo(&t->gpu, 4096, 0, &gate));
	ASSERT_EQ(0, mt_bo(&t->gpu, 4096, 0, &out));
	/* the producer faults once the gate opens, its consumers queued */
	megpu_cs_init(&cs);
	mt_gate_hold(&cs, gate);
	megpu_cs_packet(&cs, MT_PKT_UNKNOWN, 0, NULL, 0);
	ASSERT_EQ(0, mt_submit(&t->gpu, &p, e1, &cs, &gate, 1, NOIMP));
	megpu_cs_fini(&cs);
	prev = p.sync;
	for (i = 0; i < CANCEL_CHAIN; i++) {
		in = (struct drm_megpu_sync){ .handle = prev };
		ASSERT_EQ(0, mt_write_job(t, &j[i], i % 2 ? e1 : 0, out, 4 * i,
					  i + 1, NULL, &in, 1, NOIMP));
		prev = j[i].sync;
	}
	usleep(200000);
	mt_gate_open(gate);
	EXPECT_EQ(-EFAULT, mt_job_finish(&p, mt_job_ns(t)));
	for (i = 0; i < CANCEL_CHAIN; i++) {
		EXPECT_EQ(-ECANCELED, mt_job_finish(&j[i], mt_job_ns(t)))
			TH_LOG("consumer %d", i);
		EXPECT_EQ(0, mt_u32(out)[i]);
	}
	ASSERT_EQ(0, megpu_debugfs_counter(&t->gpu, "cancel_checks", &checks));
	EXPECT_GE(2 * (CANCEL_CHAIN + 1), checks - checks0)
		TH_LOG("%" PRIu64 " jobs looked at to cancel a chain of %d",
		       checks - checks0, CANCEL_CHAIN);
	megpu_bo_free(out);
	megpu_bo_free(gate);
}

/* In-sync fences jobs hold now (debugfs "counters"). */
static int in_fences(struct mt *t, uint64_t *n)
{
	return megpu_debugfs_counter(&t->gpu, "in_fences", n);
}

/*
 * A pending foreign fence as a sync_file: a vgem BO with a write fence
 * (its id in *@fence for mt_vgem_signal()), exported from the BO's
 * dma-buf. Every vgem fence has a fence context of its own, and being
 * no job, it never times out as a held job would (10 s: vgem's).
 */
static int vgem_sync_file(int vgem, uint32_t *fence)
{
	struct dma_buf_export_sync_file e = { .flags = DMA_BUF_SYNC_READ };
	struct drm_mode_create_dumb dumb = { .width = 16, .height = 1,
					     .bpp = 32 };
	int dmabuf, ret;

	if (drmIoctl(vgem, DRM_IOCTL_MODE_CREATE_DUMB, &dumb))
		return -errno;
	ret = mt_vgem_fence(vgem, dumb.handle, fence);
	if (ret)
		return ret;
	if (drmPrimeHandleToFD(vgem, dumb.handle, DRM_CLOEXEC, &dmabuf))
		return -errno;
	ret = ioctl(dmabuf, DMA_BUF_IOCTL_EXPORT_SYNC_FILE, &e) ? -errno : 0;
	close(dmabuf);
	return ret ?: e.fd;
}

/* A new syncobj holding a pending vgem fence (its id in *@fence). */
static int vgem_syncobj(struct megpu *gpu, int vgem, uint32_t *fence,
			uint32_t *handle)
{
	int fd = vgem_sync_file(vgem, fence), ret;

	if (fd < 0)
		return fd;
	ret = megpu_syncobj_new(gpu, false, handle) ?:
	      megpu_syncobj_import(gpu, *handle, fd);
	close(fd);
	return ret;
}

struct late_signal {
	int vgem;
	uint32_t fence;
};

static void *signal_later(void *arg)
{
	struct late_signal *l = arg;

	usleep(200 * 1000);
	mt_vgem_signal(l->vgem, l->fence);
	return NULL;
}

/*
 * Closing a file lets its queued jobs reach their engines (as v3d,
 * panfrost or amdgpu do), for up to a second in all: a job whose in-fence
 * comes 200 ms into the close runs and its write lands; a job whose fence
 * does not come within the second is cancelled (-ESRCH) and the close
 * returns. An early driver cancelled every queued job at once: "submit
 * and exit" lost its work.
 */
TEST_F(gpu, close_lets_queued_jobs_run)
{
	struct drm_megpu_sync in = { 0 };
	struct megpu_bo *bo, *imp;
	uint32_t fence[2], held[2];
	struct late_signal late;
	int vgem, fd, sf[2], i;
	struct mt_job j[2];
	int64_t t0, took;
	pthread_t th;
	struct mt b;

	if (self->t.engines < 2)
		SKIP(return, "one engine");
	vgem = mt_vgem_open();
	if (vgem < 0)
		SKIP(return, "no vgem");
	ASSERT_EQ(0, mt_open_client(&self->t, &b));
	ASSERT_EQ(0, mt_bo(&b.gpu, 4096, 0, &bo));
	ASSERT_EQ(0, megpu_bo_export(bo, &fd));
	ASSERT_EQ(0, megpu_bo_import(&self->t.gpu, fd, &imp));
	close(fd);
	ASSERT_EQ(0, megpu_bo_map(imp));
	/* engine 0's job gets its fence late, engine 1's never in time */
	for (i = 0; i < 2; i++) {
		ASSERT_EQ(0, vgem_syncobj(&b.gpu, vgem, &fence[i], &held[i]));
		in.handle = held[i];
		ASSERT_EQ(0, mt_write_job(&b, &j[i], i, bo, 4 * i, 0x600d + i,
					  NULL, &in, 1, NOIMP));
		ASSERT_EQ(0, megpu_syncobj_export(&b.gpu, j[i].sync, 0,
						  &sf[i]));
		mt_job_free(&j[i]);
		megpu_syncobj_free(&b.gpu, held[i]);
	}
	megpu_bo_free(bo);

	late = (struct late_signal){ vgem, fence[0] };
	ASSERT_EQ(0, pthread_create(&th, NULL, signal_later, &late));
	t0 = megpu_now_ns();
	mt_close(&b);
	took = megpu_now_ns() - t0;
	pthread_join(th, NULL);

	ASSERT_EQ(0, mt_sync_file_wait(sf[0], 10000));
	EXPECT_EQ(0, megpu_sync_file_status(sf[0]))
		TH_LOG("a job whose fence came during the close did not run");
	EXPECT_EQ(0x600d, mt_u32(imp)[0]);
	ASSERT_EQ(0, mt_sync_file_wait(sf[1], 10000));
	EXPECT_EQ(-ESRCH, megpu_sync_file_status(sf[1]));
	EXPECT_EQ(0, mt_u32(imp)[1]);
	/* one second in all, whatever waits behind a fence */
	EXPECT_GT(3000000000ll, took) TH_LOG("close took %lld ns",
					     (long long)took);
	mt_vgem_signal(vgem, fence[1]);
	close(sf[0]);
	close(sf[1]);
	megpu_bo_free(imp);
	close(vgem);
}

/* A sync_file merging two (SYNC_IOC_MERGE); both stay open. */
static int sync_file_merge(int a, int b)
{
	struct sync_merge_data m = { .name = "mt", .fd2 = b };

	return ioctl(a, SYNC_IOC_MERGE, &m) ? -errno : m.fence;
}

/*
 * A timeline whose CHAIN points all hold one pending (vgem) fence, named
 * by every in-sync of a job: the chains unwrap to CHAIN x 64 fences of
 * one producer, and the job keeps one (one per fence context: the walks
 * in run_job and on a fault stay short). The job still waits for it.
 */
#define CHAIN 512
TEST_F(gpu, chained_in_syncs_keep_one_fence_per_producer)
{
	struct drm_megpu_sync in[DRM_MEGPU_MAX_SYNCS];
	uint64_t base, held, after;
	uint32_t tl, one, fence;
	int vgem, i;
	struct megpu_bo *bo;
	struct mt_job c;

	vgem = mt_vgem_open();
	if (vgem < 0)
		SKIP(return, "no vgem");
	ASSERT_EQ(0, in_fences(&self->t, &base))
		TH_LOG("no \"in_fences\" in debugfs counters");
	ASSERT_EQ(0, mt_bo(&self->t.gpu, 4096, 0, &bo));
	ASSERT_EQ(0, vgem_syncobj(&self->t.gpu, vgem, &fence, &one));
	ASSERT_EQ(0, megpu_syncobj_new(&self->t.gpu, false, &tl));
	for (i = 1; i <= CHAIN; i++)
		ASSERT_EQ(0, megpu_syncobj_transfer(&self->t.gpu, tl, i, one,
						    0));
	for (i = 0; i < DRM_MEGPU_MAX_SYNCS; i++)
		in[i] = (struct drm_megpu_sync){ .handle = tl, .point = CHAIN };
	ASSERT_EQ(0, mt_write_job(&self->t, &c, 0, bo, 4, 2, NULL, in,
				  DRM_MEGPU_MAX_SYNCS, NOIMP));
	ASSERT_EQ(0, in_fences(&self->t, &held));
	EXPECT_EQ(base + 1, held)
		TH_LOG("%d in-syncs of a %d-point chain over one fence: "
		       "the job holds %llu fences", DRM_MEGPU_MAX_SYNCS,
		       CHAIN, (unsigned long long)(held - base));
	usleep(SETTLE_US);
	EXPECT_TRUE(mt_pending(&self->t.gpu, c.sync, 0));
	EXPECT_EQ(0, mt_u32(bo)[1]);

	ASSERT_EQ(0, mt_vgem_signal(vgem, fence));
	EXPECT_EQ(0, mt_job_finish(&c, mt_job_ns(&self->t)));
	EXPECT_EQ(2, mt_u32(bo)[1]);
	megpu_syncobj_free(&self->t.gpu, tl);
	megpu_syncobj_free(&self->t.gpu, one);
	megpu_bo_free(bo);
	close(vgem);
	/* the job's references went with it */
	for (i = 0; i < 500; i++) {
		ASSERT_EQ(0, in_fences(&self->t, &after));
		if (after == base)
			break;
		usleep(10000);
	}
	EXPECT_EQ(base, after);
}

#define JOB_LIMIT_PARAM "/sys/module/megpu/parameters/job_limit"
#define JOB_LIMIT 64

/*
 * Jobs queued behind a fence that never comes (here a vgem fence) are
 * bounded per file: the module parameter job_limit's number of them, then
 * SUBMIT fails with -EBUSY, while another file still submits; once they
 * are done, the file submits again. An early driver queued any number
 * (kernel memory without bound).
 */
TEST_F(gpu, queued_jobs_per_file_are_bounded)
{
	struct mt_job j[JOB_LIMIT + 1], other;
	struct drm_megpu_sync in = { 0 };
	struct megpu_bo *bo, *bo_b;
	uint32_t fence, held;
	char limit[16] = "";
	struct mt b;
	int vgem, i, ret;
	FILE *f;

	vgem = mt_vgem_open();
	if (vgem < 0)
		SKIP(return, "no vgem");
	f = fopen(JOB_LIMIT_PARAM, "r");
	if (f) {
		if (!fgets(limit, sizeof(limit), f))
			limit[0] = 0;
		fclose(f);
	}
	ASSERT_EQ(0, mt_write_file(JOB_LIMIT_PARAM, "64"))
		TH_LOG("no job_limit: a file's queued jobs are unbounded");
	ASSERT_EQ(0, mt_bo(&self->t.gpu, 4096, 0, &bo));
	ASSERT_EQ(0, vgem_syncobj(&self->t.gpu, vgem, &fence, &held));
	in.handle = held;
	for (i = 0; i < JOB_LIMIT; i++)
		ASSERT_EQ(0, mt_write_job(&self->t, &j[i], 0, bo, 4 * i, i + 1,
					  NULL, &in, 1, NOIMP))
			TH_LOG("job %d", i);
	EXPECT_EQ(-EBUSY, mt_write_job(&self->t, &j[JOB_LIMIT], 0, bo, 0, 0,
				       NULL, &in, 1, NOIMP));

	/* the bound is the file's */
	ASSERT_EQ(0, mt_open_client(&self->t, &b));
	ASSERT_EQ(0, mt_bo(&b.gpu, 4096, 0, &bo_b));
	ASSERT_EQ(0, mt_write_job(&b, &other, 0, bo_b, 0, 7, NULL, NULL, 0, 0));
	EXPECT_EQ(0, mt_job_finish(&other, mt_job_ns(&b)));
	EXPECT_EQ(7, mt_u32(bo_b)[0]);

	ASSERT_EQ(0, mt_vgem_signal(vgem, fence));
	for (i = 0; i < JOB_LIMIT; i++)
		EXPECT_EQ(0, mt_job_finish(&j[i], mt_job_ns(&self->t)));
	EXPECT_EQ(JOB_LIMIT, mt_u32(bo)[JOB_LIMIT - 1]);
	/* the done jobs are released a little later, by a worker */
	for (i = 0; i < 500; i++) {
		ret = mt_write_job(&self->t, &j[0], 0, bo, 0, 0x5a, NULL,
				   NULL, 0, NOIMP);
		if (ret != -EBUSY)
			break;
		usleep(10000);
	}
	ASSERT_EQ(0, ret);
	EXPECT_EQ(0, mt_job_finish(&j[0], mt_job_ns(&self->t)));
	EXPECT_EQ(0x5a, mt_u32(bo)[0]);

	mt_write_file(JOB_LIMIT_PARAM, limit);
	megpu_bo_free(bo_b);
	mt_close(&b);
	megpu_syncobj_free(&self->t.gpu, held);
	megpu_bo_free(bo);
	close(vgem);
}

/*
 * The fences of one in-sync come from more producers (fence contexts)
 * than DRM_MEGPU_MAX_SYNCS: -EINVAL, the bound on what one SUBMIT
 * attaches. DRM_MEGPU_MAX_SYNCS producers are accepted, and waited for.
 * The producers: vgem fences, each its own context, in one sync_file.
 */
#define PRODUCERS (DRM_MEGPU_MAX_SYNCS + 1)
TEST_F(gpu, in_sync_producers_are_bounded)
{
	uint32_t fence[PRODUCERS], sync;
	struct drm_megpu_sync in;
	int vgem, merged = -1, fd, next, i;
	struct mt_job c, refused;
	struct megpu_bo *bo;

	vgem = mt_vgem_open();
	if (vgem < 0)
		SKIP(return, "no vgem");
	ASSERT_EQ(0, mt_bo(&self->t.gpu, 4096, 0, &bo));
	ASSERT_EQ(0, megpu_syncobj_new(&self->t.gpu, false, &sync));
	in = (struct drm_megpu_sync){ .handle = sync };
	for (i = 0; i < PRODUCERS; i++) {
		fd = vgem_sync_file(vgem, &fence[i]);
		ASSERT_LE(0, fd);
		if (merged < 0) {
			merged = fd;
		} else {
			next = sync_file_merge(merged, fd);
			ASSERT_LE(0, next);
			close(merged);
			close(fd);
			merged = next;
		}
		if (i + 1 == DRM_MEGPU_MAX_SYNCS) {
			/* as many producers as allowed: accepted, waits */
			ASSERT_EQ(0, megpu_syncobj_import(&self->t.gpu, sync,
							  merged));
			ASSERT_EQ(0, mt_write_job(&self->t, &c, 0, bo, 4, 2,
						  NULL, &in, 1, NOIMP));
		}
	}
	ASSERT_EQ(0, megpu_syncobj_import(&self->t.gpu, sync, merged));
	close(merged);
	EXPECT_EQ(-EINVAL, mt_write_job(&self->t, &refused, 0, bo, 8, 4,
					NULL, &in, 1, NOIMP))
		TH_LOG("one in-sync over %d producers was accepted",
		       PRODUCERS);
	usleep(SETTLE_US);
	EXPECT_TRUE(mt_pending(&self->t.gpu, c.sync, 0));

	for (i = 0; i < PRODUCERS; i++)
		ASSERT_EQ(0, mt_vgem_signal(vgem, fence[i]));
	EXPECT_EQ(0, mt_job_finish(&c, mt_job_ns(&self->t)));
	EXPECT_EQ(2, mt_u32(bo)[1]);
	EXPECT_EQ(0, mt_u32(bo)[2]);
	megpu_syncobj_free(&self->t.gpu, sync);
	megpu_bo_free(bo);
	close(vgem);
}

TEST_HARNESS_MAIN
