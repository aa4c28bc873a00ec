// SPDX-License-Identifier: GPL-2.0
/* Copyright 2026 The megpu authors */
/**
 * DOC: Semaphores between engines with resource tracking (seed 001)
 *
 *
 * Each engine's current timestamp is the seqno its last frame wrote; its
 * next timestamp is the seqno run_job gives the next job. Every job takes
 * a free semaphore object of the pool and tags it (engine, timestamp);
 * every BO has a resource object naming the jobs that last wrote and read
 * it. When a job is put in the ring, the planner (megpu_sem_plan.c) fills
 * the wait bucket from the job's BOs and from the in-syncs whose producers
 * run on other engines, and the frame becomes
 *
 *	WAIT* SET_CONTEXT IB SIGNAL(own) TIMESTAMP(seqno, irq)
 *
 * so the engine waits for the others on the GPU, with no CPU round trip.
 *
 * Our choices where the seed is silent: a semaphore object is a 64-bit
 * slot of coherent memory; SIGNAL writes the timestamp, WAIT waits until
 * the slot reaches it (wrap-safe). An object is reused only when its tag
 * has expired and every frame that waits on it has completed, and its slot
 * is zeroed before the new tag is signalled.
 */

#include <linux/debugfs.h>
#include <linux/delay.h>
#include <linux/dma-mapping.h>
#include <linux/seq_file.h>
#include <linux/slab.h>
#include <drm/drm_debugfs.h>
#include <drm/drm_file.h>
#include <drm/drm_print.h>
#include <drm/megpu_drm.h>

#include "megpu_drv.h"

int megpu_sem_init(struct megpu_device *mdev)
{
	mutex_init(&mdev->sem_lock);
	megpu_bo_registry_init(mdev);
	mdev->sem_cursor = 1;
	mdev->sems = kvcalloc(MEGPU_SEM_COUNT, sizeof(*mdev->sems), GFP_KERNEL);
	if (!mdev->sems)
		return -ENOMEM;
	mdev->sem_cpu = dma_alloc_coherent(mdev->drm.dev,
					   MEGPU_SEM_COUNT * sizeof(u64),
					   &mdev->sem_dma, GFP_KERNEL);
	if (!mdev->sem_cpu) {
		kvfree(mdev->sems);
		return -ENOMEM;
	}
	return 0;
}

void megpu_sem_fini(struct megpu_device *mdev)
{
	dma_free_coherent(mdev->drm.dev, MEGPU_SEM_COUNT * sizeof(u64),
			  mdev->sem_cpu, mdev->sem_dma);
	kvfree(mdev->sems);
}

u64 megpu_sem_addr(struct megpu_device *mdev, u32 sem)
{
	return mdev->sem_dma + sem * sizeof(u64);
}

static void megpu_current_ts(struct megpu_device *mdev, u64 *cur)
{
	unsigned int i;

	for (i = 0; i < mdev->num_engines; i++)
		cur[i] = READ_ONCE(*mdev->engines[i].seqno_cpu);
}

static bool megpu_sem_free(struct megpu_device *mdev, u32 sem, const u64 *cur)
{
	struct megpu_sem_obj *obj = &mdev->sems[sem];
	unsigned int i;

	if (!obj->tag.sem)
		return true;
	if (obj->tag.ts > cur[obj->tag.engine])
		return false;
	for (i = 0; i < mdev->num_engines; i++)
		if (obj->waiters[i] > cur[i])
			return false;
	return true;
}

/*
 * A free semaphore object, or 0 when the whole pool is in use. debugfs
 * sem_pool_limit (tests) makes the pool smaller, so that it fills.
 */
static u32 megpu_sem_alloc(struct megpu_device *mdev, const u64 *cur)
{
	u32 size = READ_ONCE(mdev->sem_limit), sem, n;

	if (!size || size > MEGPU_SEM_COUNT - 1)
		size = MEGPU_SEM_COUNT - 1;
	sem = mdev->sem_cursor > size ? 1 : mdev->sem_cursor;
	for (n = 0; n < size; n++) {
		if (megpu_sem_free(mdev, sem, cur)) {
			mdev->sem_cursor = sem % size + 1;
			return sem;
		}
		sem = sem % size + 1;
	}
	return 0;
}

/* About a second of looking for a job to wait for (megpu_sem_reserve()) */
#define MEGPU_SEM_RESERVE_TRIES	10000

/* Tag a free object for @job, with a timestamp no engine reaches. */
static bool megpu_sem_try_reserve(struct megpu_job *job)
{
	struct megpu_device *mdev = job->engine->mdev;
	u64 cur[MEGPU_MAX_ENGINES] = { 0 };
	u32 sem;

	mutex_lock(&mdev->sem_lock);
	megpu_current_ts(mdev, cur);
	sem = megpu_sem_alloc(mdev, cur);
	if (sem) {
		memset(&mdev->sems[sem], 0, sizeof(mdev->sems[sem]));
		mdev->sems[sem].tag = (struct megpu_sem_ref){
			sem, job->engine->index, U64_MAX,
		};
		job->reserved_sem = sem;
	}
	mutex_unlock(&mdev->sem_lock);
	/* test knob: other engines' jobs find the pool reserved meanwhile */
	if (IS_ENABLED(CONFIG_DRM_MEGPU_TESTING) && sem &&
	    unlikely(READ_ONCE(mdev->sem_reserve_hold_ms)))
		msleep(min(READ_ONCE(mdev->sem_reserve_hold_ms),
			   MEGPU_FAULT_HOLD_MAX_MS));
	return sem;
}

/*
 * Before run_job (prepare_job): reserve the job's semaphore object, so
 * that run_job, on the fence-signalling path, never finds the pool empty.
 * With the pool in use, returns a fence to wait for (the oldest job in a
 * ring: its completion frees objects), else NULL with the object reserved.
 *
 * The pool can be in use with no job in a ring: the jobs that held it
 * completed after their timestamps were read, or other engines' jobs hold
 * reservations between their prepare_job and run_job. So the oldest job
 * is looked up first and the pool tried again after: what it finds in use
 * then is held by a job that was put in a ring since (the next look finds
 * it) or by a reservation that becomes a ring job in a moment (or goes
 * back, if run_job fails its job).
 */
struct dma_fence *megpu_sem_reserve(struct megpu_job *job)
{
	struct megpu_device *mdev = job->engine->mdev;
	struct dma_fence *fence;
	unsigned int tries;

	if (job->reserved_sem || megpu_sem_try_reserve(job))
		return NULL;
	mutex_lock(&mdev->sem_lock);
	mdev->sem_pool_waits++;
	mutex_unlock(&mdev->sem_lock);
	/* bounded: run_job fails the job (-EBUSY) if this ever gives up */
	for (tries = 0; tries < MEGPU_SEM_RESERVE_TRIES; tries++) {
		fence = megpu_sched_oldest_fence(mdev);
		if (megpu_sem_try_reserve(job)) {
			dma_fence_put(fence);
			return NULL;
		}
		if (fence)
			return fence;
		usleep_range(50, 100);
	}
	return NULL;
}

/* A job that never ran gives its reservation back. */
void megpu_sem_unreserve(struct megpu_job *job)
{
	struct megpu_device *mdev;

	/* a job freed on a SUBMIT error may have no engine yet */
	if (!job->reserved_sem || job->frame.own.sem)
		return;
	mdev = job->engine->mdev;
	mutex_lock(&mdev->sem_lock);
	memset(&mdev->sems[job->reserved_sem], 0,
	       sizeof(mdev->sems[job->reserved_sem]));
	mutex_unlock(&mdev->sem_lock);
	job->reserved_sem = 0;
}

/*
 * The seed's flow chart for one job, in run_job: tag its semaphore object
 * (engine, next timestamp), fill the wait bucket from the job's resources
 * and GPU-side in-syncs, update the resource objects, and record the
 * frame's waits and signal in job->frame.
 */
void megpu_sem_plan_job(struct megpu_job *job)
{
	struct megpu_engine *eng = job->engine;
	struct megpu_device *mdev = eng->mdev;
	struct megpu_bucket bucket = { 0 };
	u64 cur[MEGPU_MAX_ENGINES] = { 0 };
	struct megpu_frame *frame = &job->frame;
	u32 sem = job->reserved_sem;
	struct megpu_sem_ref own;
	unsigned int i;

	lockdep_assert_held(&eng->ring_lock);
	mutex_lock(&mdev->sem_lock);
	megpu_current_ts(mdev, cur);
	own = (struct megpu_sem_ref){ sem, eng->index, job->seqno };
	memset(&mdev->sems[sem], 0, sizeof(mdev->sems[sem]));
	mdev->sems[sem].tag = own;
	/* below the new timestamp before anyone can wait on the new tag */
	WRITE_ONCE(mdev->sem_cpu[sem], 0);

	for (i = 0; i < MEGPU_MAX_ENGINES; i++)
		if (job->dep_bucket.mask & BIT(i))
			megpu_bucket_add(&bucket, &job->dep_bucket.wait[i],
					 eng->index, cur);
	for (i = 0; i < job->bo_count; i++)
		megpu_plan_resource(job->implicit ? &bucket : NULL,
				    &job->mappings[i]->bo->res,
				    job->bo_flags[i] & DRM_MEGPU_BO_WRITE,
				    &own, cur);

	memset(frame, 0, sizeof(*frame));
	frame->seqno = job->seqno;
	frame->ctx = job->vm->ctx_id;
	frame->ib_va = job->ib_va;
	frame->own = own;
	for (i = 0; i < MEGPU_MAX_ENGINES; i++) {
		const struct megpu_sem_ref *w = &bucket.wait[i];

		if (!(bucket.mask & BIT(i)) || megpu_drop_waits)
			continue;
		mdev->sems[w->sem].waiters[eng->index] = job->seqno;
		frame->waits[frame->nwaits++] = *w;
	}
	mutex_unlock(&mdev->sem_lock);
}

/*
 * A job that will never run its SIGNAL and TIMESTAMP (it hung and the
 * engine was reset): signal from the CPU, so that frames waiting on it go
 * on (and fail: the job's fence has its error), and its tag expires.
 */
void megpu_sem_force_signal(struct megpu_job *job)
{
	struct megpu_engine *eng = job->engine;
	struct megpu_device *mdev = eng->mdev;

	if (!job->frame.own.sem)
		return;
	/* the consumers cancelled (NOPs in their frames) before they go on */
	dma_wmb();
	WRITE_ONCE(mdev->sem_cpu[job->frame.own.sem], job->seqno);
	if (READ_ONCE(*eng->seqno_cpu) < job->seqno)
		WRITE_ONCE(*eng->seqno_cpu, job->seqno);
}

/* --- debugfs --- */

static const char *engine_name(struct megpu_device *mdev, u32 engine)
{
	return engine < mdev->num_engines ? mdev->engines[engine].name : "?";
}

static void print_ref(struct seq_file *m, struct megpu_device *mdev,
		      const struct megpu_sem_ref *r)
{
	seq_printf(m, "%s@%llu:sem%u", engine_name(mdev, r->engine), r->ts,
		   r->sem);
}

static int megpu_timestamps_show(struct seq_file *m, void *data)
{
	struct drm_debugfs_entry *entry = m->private;
	struct megpu_device *mdev = to_megpu(entry->dev);
	unsigned int i;

	for (i = 0; i < mdev->num_engines; i++) {
		struct megpu_engine *eng = &mdev->engines[i];

		mutex_lock(&eng->ring_lock);
		seq_printf(m, "%s current %llu next %llu\n", eng->name,
			   READ_ONCE(*eng->seqno_cpu), eng->emitted + 1);
		mutex_unlock(&eng->ring_lock);
	}
	return 0;
}

static int megpu_semaphores_show(struct seq_file *m, void *data)
{
	struct drm_debugfs_entry *entry = m->private;
	struct megpu_device *mdev = to_megpu(entry->dev);
	u64 cur[MEGPU_MAX_ENGINES] = { 0 };
	unsigned int busy = 0, i;
	u32 sem;

	mutex_lock(&mdev->sem_lock);
	megpu_current_ts(mdev, cur);
	for (sem = 1; sem < MEGPU_SEM_COUNT; sem++)
		if (!megpu_sem_free(mdev, sem, cur))
			busy++;
	seq_printf(m, "pool %u busy %u\n", MEGPU_SEM_COUNT - 1, busy);
	seq_printf(m, "pool_waits %llu\n", mdev->sem_pool_waits);
	for (sem = 1; sem < MEGPU_SEM_COUNT; sem++) {
		struct megpu_sem_obj *obj = &mdev->sems[sem];

		if (megpu_sem_free(mdev, sem, cur))
			continue;
		seq_printf(m, "sem%u tag ", sem);
		print_ref(m, mdev, &obj->tag);
		seq_printf(m, " value %llu waiters", READ_ONCE(mdev->sem_cpu[sem]));
		for (i = 0; i < mdev->num_engines; i++)
			if (obj->waiters[i] > cur[i])
				seq_printf(m, " %s@%llu", engine_name(mdev, i),
					   obj->waiters[i]);
		seq_puts(m, "\n");
	}
	mutex_unlock(&mdev->sem_lock);
	return 0;
}

static int megpu_resources_show(struct seq_file *m, void *data)
{
	struct drm_debugfs_entry *entry = m->private;
	struct megpu_device *mdev = to_megpu(entry->dev);
	struct megpu_bo *bo;
	unsigned int i;

	mutex_lock(&mdev->bos_lock);
	mutex_lock(&mdev->sem_lock);
	list_for_each_entry(bo, &mdev->bos, dev_node) {
		struct megpu_resource *res = &bo->res;
		bool blank = true;

		seq_printf(m, "bo%u size %zu write", bo->id,
			   bo->base.base.size);
		for (i = 0; i < MEGPU_MAX_ENGINES; i++) {
			if (!res->write[i].sem)
				continue;
			blank = false;
			seq_puts(m, " ");
			print_ref(m, mdev, &res->write[i]);
		}
		if (blank)
			seq_puts(m, " -");
		seq_puts(m, " reads");
		for (i = 0; i < MEGPU_MAX_ENGINES; i++) {
			if (!res->read[i].sem)
				continue;
			blank = false;
			seq_puts(m, " ");
			print_ref(m, mdev, &res->read[i]);
		}
		seq_puts(m, blank ? " blank\n" : "\n");
	}
	mutex_unlock(&mdev->sem_lock);
	mutex_unlock(&mdev->bos_lock);
	return 0;
}

static int megpu_frames_show(struct seq_file *m, void *data)
{
	struct drm_debugfs_entry *entry = m->private;
	struct megpu_device *mdev = to_megpu(entry->dev);
	unsigned int i, k, w;

	for (i = 0; i < mdev->num_engines; i++) {
		struct megpu_engine *eng = &mdev->engines[i];
		unsigned int n;

		mutex_lock(&eng->ring_lock);
		n = min(eng->frame_count, MEGPU_FAULT_LOG);
		for (k = eng->frame_count - n; k < eng->frame_count; k++) {
			struct megpu_frame *f =
				&eng->frame_log[k % MEGPU_FAULT_LOG];

			seq_printf(m, "%s seqno %llu ctx %u ib 0x%llx waits %u",
				   eng->name, f->seqno, f->ctx, f->ib_va,
				   f->nwaits);
			for (w = 0; w < f->nwaits; w++) {
				seq_puts(m, " ");
				print_ref(m, mdev, &f->waits[w]);
			}
			seq_puts(m, " signal ");
			print_ref(m, mdev, &f->own);
			seq_puts(m, "\n");
		}
		mutex_unlock(&eng->ring_lock);
	}
	return 0;
}

static const struct drm_debugfs_info megpu_sem_debugfs_list[] = {
	{ "timestamps", megpu_timestamps_show, 0 },
	{ "semaphores", megpu_semaphores_show, 0 },
	{ "resources", megpu_resources_show, 0 },
	{ "frames", megpu_frames_show, 0 },
};

void megpu_sem_debugfs_init(struct megpu_device *mdev)
{
	drm_debugfs_add_files(&mdev->drm, megpu_sem_debugfs_list,
			      ARRAY_SIZE(megpu_sem_debugfs_list));
}
