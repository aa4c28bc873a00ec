// SPDX-License-Identifier: GPL-2.0
/* Copyright 2026 The megpu authors */
/**
 * DOC: Scheduling and resets
 *
 * One drm_sched per engine. prepare_job turns the job's dependencies on
 * other engines into GPU semaphore waits; run_job puts the job's frame in
 * the ring (megpu_fence.c has its hardware fence, megpu_retire.c retires
 * it). A timeout resets the engine, fails the job that hung and puts the
 * innocent jobs back into the emptied ring. A function level reset of the
 * whole device (megpu_drv.c) stops every scheduler and fails the jobs on
 * the hardware with -EIO; timeouts wait for it to end (reset_sem), so that
 * none restarts a scheduler inside its window.
 */

#include <linux/delay.h>
#include <linux/dma-fence.h>
#include <linux/sched/clock.h>
#include <linux/slab.h>
#include <drm/drm_drv.h>
#include <drm/drm_print.h>

#include "megpu_drv.h"
#include "megpu_compat.h"
#include "megpu_trace.h"

/*
 * Turn the in-syncs on other engines, which the scheduler only waited to
 * be scheduled, into semaphores for the frame: (engine, seqno, sem) of
 * the producer's hardware fence. A producer that is not in a ring (it
 * failed to run, or its engine is being reset) is waited for here, on
 * the CPU, instead.
 */
static struct dma_fence *megpu_prepare_job(struct drm_sched_job *sched_job,
					   struct drm_sched_entity *entity)
{
	static const u64 never_expired[MEGPU_MAX_ENGINES];
	struct megpu_job *job = to_megpu_job(sched_job);
	struct dma_fence *finished, *hw;
	struct megpu_sem_ref ref;
	struct megpu_fence *mf;
	bool cookie;

	/* the scheduler's path to run_job: no waiting on fences, no reclaim */
	cookie = dma_fence_begin_signalling();
	while ((finished = xa_find(&job->sem_deps, &job->sem_dep_next,
				   ULONG_MAX, XA_PRESENT))) {
		job->sem_dep_next++;
		if (dma_fence_is_signaled(finished))
			continue;
		hw = megpu_sched_hw_fence(finished);
		if (!hw) {
			dma_fence_end_signalling(cookie);
			return dma_fence_get(finished);
		}
		mf = container_of(hw, struct megpu_fence, base);
		ref.sem = mf->sem;
		ref.engine = mf->engine->index;
		ref.ts = hw->seqno;
		/* expiry is decided when the frame is built */
		megpu_bucket_add(&job->dep_bucket, &ref, job->engine->index,
				 never_expired);
		dma_fence_put(hw);
	}
	/* last: only a job about to run holds a reservation */
	hw = megpu_sem_reserve(job);
	if (!hw)
		trace_megpu_job_ready(job->engine->index,
				      job->done_fence->context,
				      job->done_fence->seqno);
	dma_fence_end_signalling(cookie);
	return hw;
}

static struct dma_fence *megpu_run_job(struct drm_sched_job *sched_job)
{
	struct megpu_job *job = to_megpu_job(sched_job);
	struct megpu_engine *eng = job->engine;
	struct dma_fence *fence, *last;
	unsigned long flags;
	unsigned int i;
	bool cookie;
	int idx;

	/*
	 * The entity was killed, or the job already failed: its reservation
	 * goes back now, not when the job is freed, which this engine's next
	 * prepare_job (same ordered work queue) may be waiting for.
	 */
	if (unlikely(job->base.s_fence->finished.error)) {
		megpu_sem_unreserve(job);
		return NULL;
	}
	if (megpu_job_inherits_failure(job) || READ_ONCE(job->file->banned)) {
		megpu_sem_unreserve(job);
		return ERR_PTR(-ECANCELED);
	}
	if (!drm_dev_enter(&eng->mdev->drm, &idx)) {
		megpu_sem_unreserve(job);
		return ERR_PTR(-ENODEV);
	}

	/* megpu_sem_reserve() found the pool in use and no job to wait for */
	if (WARN_ON_ONCE(!job->reserved_sem)) {
		drm_dev_exit(idx);
		return ERR_PTR(-EBUSY);
	}
	cookie = dma_fence_begin_signalling();
	mutex_lock(&eng->ring_lock);
	job->seqno = eng->emitted + 1;
	fence = megpu_fence_init(job, job->seqno);
	/*
	 * Its semaphore is busy from the plan on, before the job is in the
	 * active list: megpu_sched_oldest_fence() finds it here meanwhile.
	 */
	spin_lock_irqsave(&eng->job_lock, flags);
	last = eng->last_fence;
	eng->last_fence = dma_fence_get(fence);
	spin_unlock_irqrestore(&eng->job_lock, flags);
	dma_fence_put(last);
	megpu_sem_plan_job(job);
	eng->emitted++;
	container_of(fence, struct megpu_fence, base)->sem = job->frame.own.sem;
	job->hw_fence = fence;
	job->start_ns = local_clock();
	/* TASKQ_JOB_TASKS starts at 0 for it: no baseline to read here */
	job->progress_tasks = 0;

	/*
	 * In the ring, then in the active list, then checked once more
	 * before the doorbell: a producer that fails meanwhile either finds
	 * this job in the list or is seen failed here.
	 */
	atomic_inc(&job->vm->jobs_in_ring);
	megpu_syscall_ring_job(job->file, true);
	megpu_ring_emit_job(eng, job);
	spin_lock_irqsave(&eng->job_lock, flags);
	/* after its producers': they were in their rings before this ran */
	job->run_seq = atomic64_inc_return(&eng->mdev->run_seq);
	list_add_tail(&job->active_node, &eng->active);
	megpu_job_cancel_if_failed(job);
	spin_unlock_irqrestore(&eng->job_lock, flags);
	megpu_ring_kick(eng);
	for (i = 0; i < job->frame.nwaits; i++)
		trace_megpu_frame_wait(eng->index, job->seqno,
				       job->frame.waits[i].engine,
				       job->frame.waits[i].ts);
	mutex_unlock(&eng->ring_lock);
	dma_fence_end_signalling(cookie);
	drm_dev_exit(idx);

	trace_megpu_job_run(eng->index, job->seqno, job->vm->ctx_id,
			    job->done_fence->context, job->done_fence->seqno,
			    job->frame.nwaits);
	return dma_fence_get(fence);
}

/*
 * drm_sched_stop() detached the scheduler from the hardware fences of the
 * jobs still running; attach them again so that drm_sched_start() waits
 * for them (or sees them signalled) instead of cancelling them.
 */
static void megpu_sched_reattach(struct megpu_engine *eng)
{
	struct drm_sched_job *s_job;

	list_for_each_entry(s_job, &eng->sched.pending_list, list) {
		struct megpu_job *job = to_megpu_job(s_job);

		if (!s_job->s_fence->parent && job->hw_fence)
			s_job->s_fence->parent = dma_fence_get(job->hw_fence);
	}
}

/*
 * Is the engine stalled on a frame's WAIT, for a job of another engine?
 * Then the time ran out waiting, not running: the producer is the one to
 * blame, and its own engine's timeout will fail it and signal its
 * semaphore. The ring position tells: HEAD stays on the packet being
 * executed, and the only ring packet that executes a client's WAIT is its
 * IB packet. The address waited on proves nothing, since a client may map
 * a BO at any address, the semaphore pool's included.
 */
static bool megpu_engine_waits_for_producer(struct megpu_engine *eng)
{
	struct megpu_job *job;
	unsigned long flags;
	bool in_ib = false;
	u32 head;

	if (!(megpu_eng_read(eng, MEGPU_ENG_STATUS) & MEGPU_ENG_STATUS_WAIT_SEM))
		return false;
	head = megpu_eng_read(eng, MEGPU_ENG_RING_HEAD);
	spin_lock_irqsave(&eng->job_lock, flags);
	list_for_each_entry(job, &eng->active, active_node)
		if (job->ib_ring_off == head)
			in_ib = true;
	spin_unlock_irqrestore(&eng->job_lock, flags);
	return !in_ib;
}

/*
 * A DEQUEUE that keeps taking tasks is working, not hung (seed 002: an
 * engine dequeues as long as there are tasks), as a v3d job whose
 * control list advances: it gets another timeout period while its
 * task count moves, up to MEGPU_PROGRESS_MAX_PERIODS, so that one
 * client cannot keep an engine for ever. A job waiting for tasks, or for
 * anything else, does not move the count. The count is the device's
 * TASKQ_JOB_TASKS (tasks since the previous frame's end), read only
 * here: run_job reads no register for it.
 */
#define MEGPU_PROGRESS_MAX_PERIODS	64

static bool megpu_job_progressed(struct megpu_engine *eng,
				 struct megpu_job *job)
{
	/* tasks run since the last frame's end: this (oldest) job's */
	u32 tasks = megpu_eng_read(eng, MEGPU_ENG_TASKQ_JOB_TASKS);

	if (tasks == job->progress_tasks ||
	    job->progress_periods >= MEGPU_PROGRESS_MAX_PERIODS)
		return false;
	job->progress_tasks = tasks;
	job->progress_periods++;
	return true;
}

/*
 * After a reset, before the active jobs go back into the emptied ring:
 * those of banned files are cancelled, their IBs emitted as NOPs.
 */
static void megpu_cancel_banned(struct megpu_engine *eng)
{
	struct megpu_job *job;
	unsigned long flags;

	spin_lock_irqsave(&eng->job_lock, flags);
	list_for_each_entry(job, &eng->active, active_node) {
		if (job->cancelled || !READ_ONCE(job->file->banned))
			continue;
		job->cancelled = true;
		if (!job->error)
			job->error = -ECANCELED;
		dma_fence_set_error(job->hw_fence, job->error);
	}
	spin_unlock_irqrestore(&eng->job_lock, flags);
}

static enum drm_gpu_sched_stat megpu_timeout_handle(struct drm_sched_job *bad)
{
	struct megpu_job *job = to_megpu_job(bad);
	struct megpu_engine *eng = job->engine;
	struct megpu_job *guilty, *iter;
	unsigned long flags;
	bool cookie;
	int idx;

	drm_sched_stop(&eng->sched, bad);
	/* the hardware fences stay reachable for megpu_cancel_consumers() */
	megpu_sched_reattach(eng);
	if (!drm_dev_enter(&eng->mdev->drm, &idx)) {
		/* unplugged: megpu_remove() fails the jobs */
		drm_sched_start(&eng->sched);
		return DRM_GPU_SCHED_STAT_ENODEV;
	}
	/* the reset and what it signals: no allocation from here on */
	cookie = dma_fence_begin_signalling();
	mutex_lock(&eng->ring_lock);

	/* anything that completed before the reset is not guilty */
	megpu_engine_retire(eng);
	if (job->hw_fence && dma_fence_is_signaled(job->hw_fence)) {
		/* it completed just now: nothing hangs */
		mutex_unlock(&eng->ring_lock);
		goto restart;
	}
	if (megpu_flush_fail_job(job, -ETIMEDOUT)) {
		/* done by its engine, its host flush never came: not a hang */
		mutex_unlock(&eng->ring_lock);
		goto restart;
	}
	if (megpu_engine_waits_for_producer(eng)) {
		/* the producer's engine times out and signals, not this one */
		mutex_unlock(&eng->ring_lock);
		goto restart;
	}
	if (megpu_job_progressed(eng, job)) {
		mutex_unlock(&eng->ring_lock);
		goto restart;
	}
	megpu_flush_before_reset(eng->mdev);
	if (megpu_engine_hw_reset(eng)) {
		mutex_unlock(&eng->ring_lock);
		dma_fence_end_signalling(cookie);
		drm_dev_exit(idx);
		drm_sched_start(&eng->sched);
		return DRM_GPU_SCHED_STAT_ENODEV;
	}
	eng->reset_count++;
	megpu_syscall_engine_reset(eng);
	megpu_engine_retire(eng);

	/*
	 * The timed-out job is guilty if the engine had not finished it: it
	 * may have, between the check above and the reset (a fault handled
	 * meanwhile lets the engine go on), and then the job behind it,
	 * first in the ring now, is innocent. Nobody is blamed then.
	 */
	guilty = NULL;
	spin_lock_irqsave(&eng->job_lock, flags);
	list_for_each_entry(iter, &eng->active, active_node) {
		if (iter == job) {
			guilty = job;
			list_del_init(&guilty->active_node);
			break;
		}
	}
	spin_unlock_irqrestore(&eng->job_lock, flags);

	if (guilty) {
		drm_warn(&eng->mdev->drm, "%s: job %llu timed out, engine reset\n",
			 eng->name, guilty->seqno);
		trace_megpu_job_timeout(eng->index, guilty->seqno);
		guilty->error = -ETIMEDOUT;
		dma_fence_set_error(guilty->hw_fence, -ETIMEDOUT);
		/* its file's other jobs must not hang the engine in turn */
		WRITE_ONCE(guilty->file->banned, true);
		megpu_cancel_banned(eng);
		megpu_cancel_consumers(eng->mdev);
		megpu_job_account(eng, guilty, local_clock());
		/* its SIGNAL and TIMESTAMP will never run; before its fence */
		megpu_sem_force_signal(guilty);
		megpu_job_signal(guilty);
	}

	/* the reset emptied the ring: put the innocent jobs back */
	spin_lock_irqsave(&eng->job_lock, flags);
	list_for_each_entry(iter, &eng->active, active_node)
		megpu_ring_emit_job(eng, iter);
	spin_unlock_irqrestore(&eng->job_lock, flags);
	megpu_ring_kick(eng);
	mutex_unlock(&eng->ring_lock);

restart:
	dma_fence_end_signalling(cookie);
	drm_dev_exit(idx);
	drm_sched_start(&eng->sched);
	return DRM_GPU_SCHED_STAT_NOMINAL;
}

/*
 * A hung job's fence is signalled from here, so the timeout waits only
 * for recovery_lock, which a function level reset holds around its own
 * steps alone (they allocate nothing: annotated as signalling), never
 * across the PCI core's part of the reset, which allocates: the timeout
 * must not wait for reset_done. Inside the reset's window, where the
 * reset fails the jobs (-EIO) and restarts the schedulers itself, a
 * timeout only hands its job, which drm_sched took off its pending list,
 * to the reset (megpu_sched_take_back()).
 */
static enum drm_gpu_sched_stat megpu_timedout_job(struct drm_sched_job *bad)
{
	struct megpu_engine *eng = to_megpu_job(bad)->engine;
	struct megpu_device *mdev = eng->mdev;
	enum drm_gpu_sched_stat stat = DRM_GPU_SCHED_STAT_NOMINAL;

	mutex_lock(&mdev->recovery_lock);
	if (mdev->in_reset) {
		list_add_tail(&bad->list, &eng->timed_out);
		mdev->reset_timeouts++;
	} else {
		stat = megpu_timeout_handle(bad);
	}
	mutex_unlock(&mdev->recovery_lock);
	return stat;
}

/*
 * Never blocks: releasing a job's mappings may wait for a host flush
 * (megpu_flush_unmapped()), and the scheduler's free path, which in
 * 6.12 shares an ordered workqueue with run_job, must not wait for the
 * device. The release runs in a worker (megpu_cleanup.c).
 */
static void megpu_free_job(struct drm_sched_job *sched_job)
{
	struct megpu_job *job = to_megpu_job(sched_job);

	drm_sched_job_cleanup(sched_job);
	megpu_job_put_deferred(job);
}

/* Release everything a job holds; also used before it was armed. */
void megpu_job_put(struct megpu_job *job)
{
	__megpu_job_put(job, false);
}

/*
 * @patient: in the cleanup worker, a mapping whose pages wait for a host
 * flush waits as long as the device is there (no 1 s limit).
 */
void __megpu_job_put(struct megpu_job *job, bool patient)
{
	struct megpu_device *mdev = job->file->mdev;
	struct dma_fence *fence;
	unsigned long index;
	unsigned int i;

	for (i = 0; i < job->in_fence_count; i++)
		dma_fence_put(job->in_fences[i]);
	atomic_sub(job->in_fence_count, &mdev->live_in_fences);
	xa_for_each(&job->sem_deps, index, fence)
		dma_fence_put(fence);
	xa_destroy(&job->sem_deps);
	kvfree(job->bo_flags);
	for (i = 0; i < job->bo_count; i++) {
		if (patient)
			megpu_gem_mapping_put_patient(job->mappings[i]);
		else
			megpu_gem_mapping_put(job->mappings[i]);
	}
	kvfree(job->mappings);
	megpu_sem_unreserve(job);
	kfree(job->fence_mem);
	dma_fence_put(job->hw_fence);
	dma_fence_put(job->done_fence);
	megpu_vm_put(job->vm);
	if (job->counted)
		atomic_dec(&job->file->jobs);
	megpu_file_put(job->file);
	kfree(job);
	atomic_dec(&mdev->live_jobs);
	/* maybe the last reference: never from the scheduler's own work */
	megpu_job_release_device(mdev);
}

static const struct drm_sched_backend_ops megpu_sched_ops = {
	.prepare_job = megpu_prepare_job,
	.run_job = megpu_run_job,
	.timedout_job = megpu_timedout_job,
	.free_job = megpu_free_job,
};

static const char *const megpu_engine_type_names[MEGPU_ENGINE_NUM_TYPES] = {
	[MEGPU_ENGINE_GFX] = "gfx",
	[MEGPU_ENGINE_COMPUTE] = "compute",
	[MEGPU_ENGINE_COPY] = "copy",
	[MEGPU_ENGINE_VIDEO] = "video",
};

static int megpu_engine_init(struct megpu_device *mdev, unsigned int i)
{
	struct megpu_engine *eng = &mdev->engines[i];
	unsigned int instance = 0, j;
	int ret;

	eng->mdev = mdev;
	eng->index = i;
	eng->regs = mdev->mmio + MEGPU_ENGINE_BASE(i);
	eng->type = megpu_eng_read(eng, MEGPU_ENG_TYPE);
	if (eng->type >= MEGPU_ENGINE_NUM_TYPES) {
		drm_err(&mdev->drm, "engine %u: unknown type %u\n", i,
			eng->type);
		return -ENODEV;
	}
	for (j = 0; j < i; j++)
		if (mdev->engines[j].type == eng->type)
			instance++;
	snprintf(eng->name, sizeof(eng->name), "%s%u",
		 megpu_engine_type_names[eng->type], instance);

	spin_lock_init(&eng->fence_lock);
	spin_lock_init(&eng->job_lock);
	INIT_LIST_HEAD(&eng->active);
	INIT_LIST_HEAD(&eng->timed_out);
	eng->fence_context = dma_fence_context_alloc(1);
	/* one cache line per engine in the seqno page */
	eng->seqno_cpu = mdev->seqno_page + i * 64;
	eng->seqno_dma = mdev->seqno_page_dma + i * 64;
	*eng->seqno_cpu = 0;

	ret = megpu_ring_init(eng);
	if (ret)
		return ret;

	/*
	 * The scheduler's work (run_job, free_job) on a high-priority
	 * ordered queue: a submit or a CPU-side dependency reaches the ring
	 * without waiting behind normal kworkers (issue 12). sched_highpri=N
	 * gives the queue normal priority, to compare.
	 */
	eng->submit_wq = alloc_ordered_workqueue("megpu-%s",
						 (megpu_sched_highpri ?
						  WQ_HIGHPRI : 0) |
						 WQ_MEM_RECLAIM, eng->name);
	if (!eng->submit_wq) {
		megpu_ring_fini(eng);
		return -ENOMEM;
	}
	ret = megpu_compat_sched_init(&eng->sched, &megpu_sched_ops,
				      eng->submit_wq,
				      MEGPU_RING_SIZE / MEGPU_FRAME_MAX_BYTES - 1,
				      msecs_to_jiffies(megpu_job_timeout_ms),
				      eng->name, mdev->drm.dev);
	if (ret) {
		destroy_workqueue(eng->submit_wq);
		megpu_ring_fini(eng);
		return ret;
	}
	return 0;
}

static void megpu_engine_fini(struct megpu_engine *eng)
{
	/*
	 * Free the jobs that completed (unplugged: failed) before the
	 * scheduler stops: 6.12's drm_sched_fini() cancels the free_job work
	 * and would leak them, and their BOs with them (drm_mm "not clean").
	 */
	drain_workqueue(eng->submit_wq);
	drm_sched_fini(&eng->sched);
	destroy_workqueue(eng->submit_wq);
	dma_fence_put(eng->last_fence);
	eng->last_fence = NULL;
	megpu_ring_fini(eng);
}

/*
 * The device is gone: complete every job it will never complete, with
 * @error, so that nobody waits for them. Its interrupts are freed.
 */
void megpu_sched_fail_all(struct megpu_device *mdev, int error)
{
	struct megpu_job *job, *tmp;
	unsigned long flags;
	LIST_HEAD(dead);
	unsigned int i;
	bool cookie;

	cookie = dma_fence_begin_signalling();
	for (i = 0; i < mdev->num_engines; i++) {
		struct megpu_engine *eng = &mdev->engines[i];

		spin_lock_irqsave(&eng->job_lock, flags);
		list_splice_tail_init(&eng->active, &dead);
		spin_unlock_irqrestore(&eng->job_lock, flags);
	}
	spin_lock_irqsave(&mdev->flush_lock, flags);
	list_splice_tail_init(&mdev->flush_jobs, &dead);
	spin_unlock_irqrestore(&mdev->flush_lock, flags);

	list_for_each_entry_safe(job, tmp, &dead, active_node) {
		list_del_init(&job->active_node);
		if (!job->error)
			job->error = error;
		/*
		 * Its SIGNAL will never run: frames waiting on it go on.
		 * Before the fence: once that is signalled, the scheduler may
		 * free the job (KASAN caught a read after it in an unplug).
		 */
		megpu_sem_force_signal(job);
		megpu_job_signal(job);
		/* test knob: the freeing finds this loop between two jobs */
		if (IS_ENABLED(CONFIG_DRM_MEGPU_TESTING) &&
		    unlikely(mdev->fail_hold_ms))
			msleep(min(mdev->fail_hold_ms, MEGPU_FAULT_HOLD_MAX_MS));
	}
	dma_fence_end_signalling(cookie);
}

/*
 * A function level reset is coming (the engines were reset already): the
 * schedulers stop feeding the rings, the calls of the waves that are gone
 * are taken back, and every job on the hardware fails with -EIO (the
 * reset drops the rings): when its fence says so, its calls cannot be
 * answered any more. Jobs not yet in a ring wait in their entities.
 */
void megpu_sched_reset_prepare(struct megpu_device *mdev)
{
	unsigned int i;

	lockdep_assert_held(&mdev->recovery_lock);
	for (i = 0; i < mdev->num_engines; i++) {
		drm_sched_stop(&mdev->engines[i].sched, NULL);
		megpu_syscall_engine_reset(&mdev->engines[i]);
	}
	megpu_sched_fail_all(mdev, -EIO);
}

/*
 * The jobs whose timeout came inside the reset (megpu_timedout_job())
 * were off the pending list, some when the reset stopped the scheduler:
 * each is done now as drm_sched_stop() did it for the others. If its
 * hardware fence's callback ran meanwhile (the reset failed it), the job
 * is done and freed; else it goes back, oldest first, in front.
 */
static void megpu_sched_take_back(struct megpu_engine *eng)
{
	struct drm_gpu_scheduler *sched = &eng->sched;
	struct drm_sched_job *s_job, *tmp;
	LIST_HEAD(kept);

	list_for_each_entry_safe(s_job, tmp, &eng->timed_out, list) {
		struct dma_fence *parent = s_job->s_fence->parent;

		list_del_init(&s_job->list);
		if (parent && dma_fence_remove_callback(parent, &s_job->cb)) {
			dma_fence_put(parent);
			s_job->s_fence->parent = NULL;
			atomic_sub(s_job->credits, &sched->credit_count);
		} else if (parent) {
			/* its callback has finished with it once this is */
			dma_fence_wait(&s_job->s_fence->finished, false);
			sched->ops->free_job(s_job);
			continue;
		}
		list_add_tail(&s_job->list, &kept);
	}
	spin_lock(&sched->job_list_lock);
	list_splice(&kept, &sched->pending_list);
	spin_unlock(&sched->job_list_lock);
}

/* After the reset: empty rings where the device expects them, go on. */
void megpu_sched_reset_done(struct megpu_device *mdev)
{
	unsigned int i;

	lockdep_assert_held(&mdev->recovery_lock);
	for (i = 0; i < mdev->num_engines; i++) {
		struct megpu_engine *eng = &mdev->engines[i];

		mutex_lock(&eng->ring_lock);
		if (megpu_ring_hw_init(eng))
			drm_err(&mdev->drm, "%s: no ring after the reset\n",
				eng->name);
		eng->reset_count++;
		mutex_unlock(&eng->ring_lock);
		megpu_sched_take_back(eng);
		/* the failed jobs' fences carry -EIO to their scheduler jobs */
		megpu_sched_reattach(eng);
		drm_sched_start(&eng->sched);
	}
}

int megpu_sched_init(struct megpu_device *mdev)
{
	unsigned int i;
	int ret;

	mdev->seqno_page = dma_alloc_coherent(mdev->drm.dev, PAGE_SIZE,
					      &mdev->seqno_page_dma,
					      GFP_KERNEL);
	if (!mdev->seqno_page)
		return -ENOMEM;

	for (i = 0; i < mdev->num_engines; i++) {
		ret = megpu_engine_init(mdev, i);
		if (ret)
			goto err;
	}
	return 0;

err:
	while (i--)
		megpu_engine_fini(&mdev->engines[i]);
	dma_free_coherent(mdev->drm.dev, PAGE_SIZE, mdev->seqno_page,
			  mdev->seqno_page_dma);
	return ret;
}

void megpu_sched_fini(struct megpu_device *mdev)
{
	unsigned int i;

	for (i = 0; i < mdev->num_engines; i++)
		megpu_engine_fini(&mdev->engines[i]);
	dma_free_coherent(mdev->drm.dev, PAGE_SIZE, mdev->seqno_page,
			  mdev->seqno_page_dma);
}
