// SPDX-License-Identifier: GPL-2.0
/* Copyright 2026 The megpu authors */
/**
 * DOC: Hardware fences and failure inheritance
 *
 * A job's hardware fence (struct megpu_fence) carries its engine, the
 * seqno its frame's TIMESTAMP writes and the GPU semaphore it signals, so
 * that a consumer on another engine can wait for it on the GPU. It is
 * allocated at submit: nothing a fence's completion depends on may
 * allocate. A job inherits the failure of a producer it names in its
 * in-syncs (explicit dependencies only), found before it runs or, when
 * it already waited on the GPU, from the producer's hardware fence.
 */

#include <linux/dma-fence.h>
#include <linux/slab.h>
#include <drm/drm_print.h>

#include "megpu_drv.h"
#include "megpu_compat.h"
#include "megpu_trace.h"

static const char *megpu_fence_driver_name(struct dma_fence *fence)
{
	return "megpu";
}

static const char *megpu_fence_timeline_name(struct dma_fence *fence)
{
	return container_of(fence, struct megpu_fence, base)->engine->name;
}

static const struct dma_fence_ops megpu_fence_ops = {
	.get_driver_name = megpu_fence_driver_name,
	.get_timeline_name = megpu_fence_timeline_name,
};

/*
 * The hardware fence is allocated at submit: nothing a fence's completion
 * depends on (run_job) may allocate memory.
 */
int megpu_job_alloc_fence(struct megpu_job *job)
{
	job->fence_mem = kzalloc(sizeof(*job->fence_mem), GFP_KERNEL);
	return job->fence_mem ? 0 : -ENOMEM;
}

struct dma_fence *megpu_fence_init(struct megpu_job *job, u64 seqno)
{
	struct megpu_fence *fence = job->fence_mem;
	struct megpu_engine *eng = job->engine;

	job->fence_mem = NULL;
	fence->engine = eng;
	dma_fence_init(&fence->base, &megpu_fence_ops, &eng->fence_lock,
		       eng->fence_context, seqno);
	return &fence->base;
}

/*
 * The hardware fence of the oldest job in a ring, referenced, or NULL:
 * what to wait for when the semaphore pool is in use.
 */
struct dma_fence *megpu_sched_oldest_fence(struct megpu_device *mdev)
{
	struct dma_fence *fence = NULL;
	struct megpu_job *job;
	unsigned long flags;
	u64 oldest = U64_MAX;
	unsigned int i;

	for (i = 0; i < mdev->num_engines; i++) {
		struct megpu_engine *eng = &mdev->engines[i];

		spin_lock_irqsave(&eng->job_lock, flags);
		job = list_first_entry_or_null(&eng->active, struct megpu_job,
					       active_node);
		if (job && job->start_ns < oldest) {
			dma_fence_put(fence);
			fence = dma_fence_get(job->hw_fence);
			oldest = job->start_ns;
		}
		spin_unlock_irqrestore(&eng->job_lock, flags);
	}
	/*
	 * No job in a ring: one may be on its way in (run_job planned its
	 * semaphore, the active list does not have it yet). Its fence is
	 * its engine's last one.
	 */
	for (i = 0; !fence && i < mdev->num_engines; i++) {
		struct megpu_engine *eng = &mdev->engines[i];
		struct dma_fence *last;

		spin_lock_irqsave(&eng->job_lock, flags);
		last = dma_fence_get(eng->last_fence);
		spin_unlock_irqrestore(&eng->job_lock, flags);
		if (last && !dma_fence_is_signaled(last))
			fence = last;
		else
			dma_fence_put(last);
	}
	return fence;
}

/* Is @fence a scheduler fence of one of this GPU's engines? Which one? */
bool megpu_sched_fence_is_ours(struct megpu_device *mdev,
			       struct dma_fence *fence,
			       struct drm_gpu_scheduler **sched)
{
	struct drm_sched_fence *s_fence = to_drm_sched_fence(fence);
	unsigned int i;

	if (!s_fence)
		return false;
	for (i = 0; i < mdev->num_engines; i++) {
		if (s_fence->sched == &mdev->engines[i].sched) {
			*sched = s_fence->sched;
			return true;
		}
	}
	return false;
}

/*
 * The hardware fence behind a scheduler fence, referenced, or NULL when
 * its job has not been put in a ring. The scheduler clears and restores
 * the pointer around a reset; hardware fences are freed after an RCU
 * grace period, so an RCU read is safe.
 */
struct dma_fence *megpu_sched_hw_fence(struct dma_fence *fence)
{
	struct drm_sched_fence *s_fence = to_drm_sched_fence(fence);
	struct dma_fence *parent;

	if (!s_fence)
		return NULL;
	rcu_read_lock();
	parent = READ_ONCE(s_fence->parent);
	if (parent)
		parent = dma_fence_get_rcu(parent);
	rcu_read_unlock();
	if (parent && parent->ops != &megpu_fence_ops) {
		dma_fence_put(parent);
		parent = NULL;
	}
	return parent;
}

/*
 * Did a producer named in the job's in-syncs fail? Errors travel along
 * explicit dependencies only: an in-syncobj says the job consumes its
 * producer's result, while a job that merely overwrites a failed job's
 * BO must still run. The producer may have failed while this job already
 * waited for it on the GPU, so its hardware fence is asked too: a fault
 * or a timeout sets its error before the semaphore is signalled.
 */
bool megpu_job_inherits_failure(struct megpu_job *job)
{
	struct dma_fence *fence, *hw;
	bool failed = false;
	unsigned int i;

	if (job->in_failed)
		return true;
	for (i = 0; i < job->in_fence_count; i++) {
		fence = job->in_fences[i];
		if (dma_fence_is_signaled(fence) && fence->error)
			return true;
		hw = megpu_sched_hw_fence(fence);
		if (hw) {
			failed = hw->error;
			dma_fence_put(hw);
			if (failed)
				return true;
		}
	}
	return false;
}

/*
 * Cancel a job in a ring whose producer failed: its IB becomes a NOP.
 * Called with its engine's job_lock held.
 */
bool megpu_job_cancel_if_failed(struct megpu_job *job)
{
	if (job->cancelled || job->error || !megpu_job_inherits_failure(job))
		return false;
	job->cancelled = true;
	job->error = -ECANCELED;
	dma_fence_set_error(job->hw_fence, -ECANCELED);
	megpu_ring_cancel_ib(job->engine, job);
	return true;
}

/*
 * A job failed and its semaphore is about to be signalled anyway (a fault
 * lets the engine go on; a reset signals it from the CPU). Jobs already in
 * a ring that consume its result wait for that semaphore: cancel them now,
 * before they can run, by turning their IB into a NOP, and so on for the
 * consumers of those.
 *
 * One pass over the rings' jobs in the order they entered them
 * (run_seq): a producer entered before its consumers, so it is cancelled
 * before they are looked at, however a chain of them runs across the
 * engines. Each step holds one engine's job_lock: it finds every engine's
 * first job past the cursor and takes, from the engine with the earliest,
 * the jobs up to the next engine's.
 */
void megpu_cancel_consumers(struct megpu_device *mdev)
{
	struct megpu_engine *eng;
	struct megpu_job *job;
	u64 cursor = 0, checks = 0;
	unsigned long flags;
	unsigned int i, best;

	for (;;) {
		u64 first = U64_MAX, next = U64_MAX;

		best = mdev->num_engines;
		for (i = 0; i < mdev->num_engines; i++) {
			eng = &mdev->engines[i];
			spin_lock_irqsave(&eng->job_lock, flags);
			list_for_each_entry(job, &eng->active, active_node) {
				if (job->run_seq <= cursor)
					continue;
				if (job->run_seq < first) {
					next = first;
					first = job->run_seq;
					best = i;
				} else if (job->run_seq < next) {
					next = job->run_seq;
				}
				break;
			}
			spin_unlock_irqrestore(&eng->job_lock, flags);
		}
		if (best == mdev->num_engines)
			break;
		eng = &mdev->engines[best];
		spin_lock_irqsave(&eng->job_lock, flags);
		list_for_each_entry(job, &eng->active, active_node) {
			if (job->run_seq <= cursor)
				continue;
			if (job->run_seq >= next)
				break;
			megpu_job_cancel_if_failed(job);
			cursor = job->run_seq;
			checks++;
		}
		spin_unlock_irqrestore(&eng->job_lock, flags);
		/* the engine's jobs past the cursor were retired meanwhile */
		if (cursor < first)
			cursor = first;
	}
	atomic64_add(checks, &mdev->cancel_checks);
}
