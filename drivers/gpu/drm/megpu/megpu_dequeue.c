// SPDX-License-Identifier: GPL-2.0
/* Copyright 2026 The megpu authors */
/**
 * DOC: The kernel dequeuing module (seed 002, discrete variant)
 *
 * Seed 002's FIG. 3 path: where an engine cannot dequeue by itself, the
 * device "requests work" with an interrupt and the driver's dequeuing
 * module takes the tasks from the public queues, under the same lock word
 * CPU threads and DEQUEUE engines use, and submits them to the engine as
 * ordinary jobs.
 *
 * A client attaches up to MEGPU_DEQ_MAX_QUEUES queues and a set of
 * engines (DRM_IOCTL_MEGPU_TASKQ_ATTACH). The driver maps the queues into
 * the kernel, enables the engines in MEGPU_REG_TASKQ_REQ_WORK and, on
 * MISC_IRQ_WORK, for each asking engine with fewer than MEGPU_KDQ_DEPTH
 * jobs of this module in flight: takes the lock (compare-and-swap 0 ->
 * MEGPU_TQ_OWNER_DRIVER), re-checks, takes a contiguous batch of tasks a
 * GPU may run from the first queue that has one (the others are stolen
 * from), releases, and submits one job in the client's address space
 * whose IB runs one TASK_RUN packet over copies of the descriptors it
 * took (several, one per batch, while whole batches come: see below).
 * TASK_RUN is the device's own batch runner (the one DEQUEUE
 * uses), so both consumers notify every task exactly once, malformed and
 * faulted ones with their status, and a kernel's fault or an unwritable
 * record never leaves a task behind it unnotified. Choices:
 *
 * - Four jobs per engine in flight (MEGPU_KDQ_DEPTH): while tasks come,
 *   the next batch is taken and queued as soon as a job ends, so the
 *   engine is not idle for a request interrupt, the work and a job's
 *   submission between batches; the request only restarts an engine
 *   that ran dry (issue 25: the discrete variant against DEQUEUE). A
 *   job's way from its fence through the work to the next job's ring
 *   frame takes longer in the guest than a batch of small tasks runs:
 *   B1's discrete makespans were 81-87 ms with two, 67-77 ms with four,
 *   and no better with eight (alternating runs).
 * - A job carries up to MEGPU_KDQ_JOB_BATCHES batches, one TASK_RUN each,
 *   while the queues hand out whole batches: one job's way through the
 *   work, drm_sched and the ring then serves several (B1's discrete
 *   makespans 83-102 -> 70-92 ms, alternating runs). Near a GUIDED
 *   queue's end the batches shrink and a job takes one, so the engine
 *   does not sit on work the CPU threads could steal. Batches a job took
 *   run even when a later take of the same job fails the attachment.
 * - From a GUIDED queue the driver takes ahead only while the queue holds
 *   more than the engine's jobs in flight do (megpu_kdq_hold_back()):
 *   the takes keep their sizes, but the last ones wait for the engine
 *   to catch up, and until then the CPU threads may take them.
 * - The driver never spins on a lock a CPU thread holds: after a few
 *   tries it looks again a millisecond later (counted as lock retries).
 * - An event-gated task stays in its queue (HEAD unchanged) until its
 *   event happened, as DEQUEUE leaves it: the driver reads the event word
 *   in the client's memory (the BO mapped at that GPU address, kept
 *   mapped in a small cache) when an engine asks, on TASKQ_NOTIFY, and
 *   every millisecond while a gated task holds an engine's request back.
 *   Meanwhile a CPU dequeuer may take it, and an event that comes after
 *   the attachment ends finds the task still queued. Then it is taken
 *   alone, as is a task hinted for the CPU, as DEQUEUE does. An event
 *   word in no BO of the client fails the attachment with -EFAULT (the
 *   device faults a DEQUEUE on it).
 * - A batch is at most the queue's GPU batch size, in a GUIDED queue at
 *   most half of what it holds (megpu_tq_batch_limit(), shared with
 *   DEQUEUE and the CPU dequeuers).
 * - A malformed descriptor is taken alone and notified with
 *   MEGPU_FAULT_TQ_BAD_TASK, so nobody is stuck behind it; a malformed
 *   queue (magic, size, indexes) is dropped and fails the attachment.
 * - Completion (the seed's MyNotification): the attachment completes once
 *   every queue is CLOSED and every task in it was notified (HDR_DONE ==
 *   tail, by any consumer) and no job of this module is in flight. It is
 *   checked on every request, job completion and
 *   DRM_IOCTL_MEGPU_TASKQ_NOTIFY, which CPU dequeuers call when they
 *   finish a queue's last task. DRM_IOCTL_MEGPU_TASKQ_WAIT waits for it.
 *   It is not a dma_fence: it depends on userspace (CPU dequeuers,
 *   producers closing queues), and no fence may wait on userspace
 *   ("Indefinite DMA Fences"). Only the module's own jobs have fences,
 *   ordinary job fences that depend on the GPU alone.
 * - Still, an attachment does not hold resources for ever: as a DEQUEUE
 *   job, it lives while its queues move (a task taken or notified) at
 *   least once a job timeout, up to MEGPU_KDQ_MAX_PERIODS timeouts in
 *   all; then it completes with -ETIMEDOUT and the driver stops
 *   dequeuing for it. A timer watches that, not the work: the work
 *   allocates (a job) and may wait in reclaim, the timer neither
 *   allocates nor takes a lock.
 */

#include <linux/delay.h>
#include <linux/iosys-map.h>
#include <linux/seq_file.h>
#include <linux/slab.h>
#include <linux/uaccess.h>
#include <linux/unaligned.h>
#include <linux/workqueue.h>
#include <drm/drm_debugfs.h>
#include <drm/drm_drv.h>
#include <drm/drm_file.h>
#include <drm/drm_gem.h>
#include <drm/drm_gem_shmem_helper.h>
#include <drm/drm_utils.h>
#include <drm/megpu_drm.h>

#include "megpu_dequeue.h"

/* The engines of every live attachment ask for work (kdq_lock held). */
static void megpu_kdq_update_req_work(struct megpu_device *mdev)
{
	struct megpu_kdq *kdq;
	u32 engines = 0;
	int idx;

	lockdep_assert_held(&mdev->kdq_lock);
	list_for_each_entry(kdq, &mdev->kdqs, link)
		if (!READ_ONCE(kdq->stopped))
			engines |= kdq->engines;
	if (drm_dev_enter(&mdev->drm, &idx)) {
		megpu_write(mdev, MEGPU_REG_TASKQ_REQ_WORK, engines);
		drm_dev_exit(idx);
	}
}

/*
 * Complete the attachment once, from the work, the watchdog, a detach or
 * the unplug: TASKQ_WAIT's waiters get @error (0: all done).
 */
static void megpu_kdq_finish(struct megpu_kdq *kdq, int error)
{
	struct megpu_taskq_state *tq = &kdq->mfile->tq;

	if (xchg(&kdq->finished, true))
		return;
	WRITE_ONCE(tq->status, error);
	/* release: the status before done */
	smp_store_release(&tq->done, true);
	wake_up_all(&tq->wq);
}

/* The attachment's IBs: MEGPU_KDQ_IB_BYTES per job slot of each engine. */
static size_t megpu_kdq_ib_size(struct megpu_device *mdev)
{
	return PAGE_ALIGN((size_t)mdev->num_engines * MEGPU_KDQ_DEPTH *
			  MEGPU_KDQ_IB_BYTES);
}

/* No work and no fence callback can run any more. */
static void megpu_kdq_free(struct megpu_kdq *kdq)
{
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(kdq->jobs); i++)
		dma_fence_put(kdq->jobs[i].fence);
	for (i = 0; i < MEGPU_KDQ_EVENT_MAPS; i++)
		megpu_kdq_event_unmap(&kdq->events[i]);

	for (i = 0; i < kdq->count; i++) {
		struct megpu_kdq_queue *q = &kdq->queues[i];

		if (q->mem)
			drm_gem_vunmap_unlocked(q->obj, &q->map);
		megpu_gem_mapping_put(q->mapping);
		drm_gem_object_put(q->obj);
	}
	if (kdq->ib) {
		if (!iosys_map_is_null(&kdq->ib_map))
			drm_gem_vunmap_unlocked(kdq->ib, &kdq->ib_map);
		megpu_gem_mapping_put(kdq->ib_mapping);
		drm_gem_object_put(kdq->ib);
	}
	megpu_kdq_finish(kdq, -ECANCELED);
	megpu_file_put(kdq->mfile);
	mutex_destroy(&kdq->lock);
	kfree(kdq);
}

/*
 * debugfs kdq_signal_hold_us: the work runs while the fence's signaler
 * waits before our callback, as when anything else woke it then.
 */
static void megpu_kdq_signal_hold(struct dma_fence *fence,
				  struct dma_fence_cb *cb)
{
	struct megpu_kdq_job *job = container_of(cb, struct megpu_kdq_job,
						 hold_cb);
	struct megpu_kdq *kdq = job->kdq;

	if (READ_ONCE(kdq->closing))
		return;
	mod_delayed_work(system_wq, &kdq->work, 0);
	udelay(min(READ_ONCE(kdq->mdev->kdq_signal_hold_us),
		   MEGPU_KDQ_HOLD_MAX_US));
}

static void megpu_kdq_job_done(struct dma_fence *fence, struct dma_fence_cb *cb)
{
	struct megpu_kdq_job *job = container_of(cb, struct megpu_kdq_job, cb);
	struct megpu_kdq *kdq = job->kdq;

	/* the work clears the busy bit: it needs the lock */
	if (!READ_ONCE(kdq->closing))
		mod_delayed_work(system_wq, &kdq->work, 0);
}

/*
 * Take the job's callbacks off its fence, or wait (on the fence's lock)
 * for the signaler that runs them to finish.
 */
static void megpu_kdq_job_unhook(struct megpu_kdq_job *job)
{
	dma_fence_remove_callback(job->fence, &job->hold_cb);
	dma_fence_remove_callback(job->fence, &job->cb);
}

/* Submit the @tasks in job slot @slot's IB area (kdq->lock held). */
/* A job for @engine's next batches, made before anything is taken. */
static struct megpu_job *megpu_kdq_job_new(struct megpu_kdq *kdq, u32 engine)
{
	struct megpu_mapping *maps[1 + MEGPU_DEQ_MAX_QUEUES];
	u32 flags[1 + MEGPU_DEQ_MAX_QUEUES];
	unsigned int i;

	maps[0] = kdq->ib_mapping;
	flags[0] = DRM_MEGPU_BO_READ;
	for (i = 0; i < kdq->count; i++) {
		maps[1 + i] = kdq->queues[i].mapping;
		flags[1 + i] = DRM_MEGPU_BO_READ | DRM_MEGPU_BO_WRITE;
	}
	return megpu_kernel_job_new(kdq->mfile, kdq->file, engine, maps, flags,
				    1 + kdq->count);
}

/* The batches taken into @slot's IB go to the engine: this cannot fail. */
static void megpu_kdq_submit(struct megpu_kdq *kdq, struct megpu_job *mjob,
			     u32 engine, u32 slot, u32 dwords, u32 tasks)
{
	struct megpu_kdq_job *job = &kdq->jobs[slot];
	struct dma_fence *fence;

	fence = megpu_kernel_job_push(mjob, megpu_kdq_ib_va(kdq, slot), dwords);
	job->kdq = kdq;
	job->fence = fence;
	job->tasks = tasks;
	kdq->busy |= BIT(engine);
	INIT_LIST_HEAD(&job->hold_cb.node);
	if (IS_ENABLED(CONFIG_DRM_MEGPU_TESTING) &&
	    READ_ONCE(kdq->mdev->kdq_signal_hold_us))
		dma_fence_add_callback(fence, &job->hold_cb,
				       megpu_kdq_signal_hold);
	if (dma_fence_add_callback(fence, &job->cb, megpu_kdq_job_done))
		megpu_kdq_job_done(fence, &job->cb);
}

/* Retire finished jobs (kdq->lock held). */
static void megpu_kdq_retire(struct megpu_kdq *kdq)
{
	unsigned int i;

	kdq->busy = 0;
	for (i = 0; i < ARRAY_SIZE(kdq->jobs); i++) {
		struct megpu_kdq_job *job = &kdq->jobs[i];

		if (!job->fence)
			continue;
		if (!dma_fence_is_signaled(job->fence)) {
			kdq->busy |= BIT(i / MEGPU_KDQ_DEPTH);
			continue;
		}
		/*
		 * Signaled is not yet done with the slot: the signaler sets
		 * the flag, then runs the callbacks, job->cb among them, from
		 * a list linked through them. Its lock, taken here, waits for
		 * that to end before the slot's callbacks go to another fence.
		 */
		megpu_kdq_job_unhook(job);
		if (job->fence->error)
			kdq->failed_jobs++;
		dma_fence_put(job->fence);
		job->fence = NULL;
	}
}

/* A free job slot of @engine, or -1 (kdq->lock held). */
static int megpu_kdq_free_slot(struct megpu_kdq *kdq, u32 engine)
{
	unsigned int s;

	for (s = 0; s < MEGPU_KDQ_DEPTH; s++)
		if (!kdq->jobs[engine * MEGPU_KDQ_DEPTH + s].fence)
			return engine * MEGPU_KDQ_DEPTH + s;
	return -1;
}

/* The tasks of @engine's jobs in flight (kdq->lock held). */
static u32 megpu_kdq_ahead(struct megpu_kdq *kdq, u32 engine)
{
	unsigned int s;
	u32 n = 0;

	for (s = 0; s < MEGPU_KDQ_DEPTH; s++)
		if (kdq->jobs[engine * MEGPU_KDQ_DEPTH + s].fence)
			n += kdq->jobs[engine * MEGPU_KDQ_DEPTH + s].tasks;
	return n;
}

/* Every queue closed and fully notified, no job in flight? */
static bool megpu_kdq_all_done(struct megpu_kdq *kdq)
{
	unsigned int i;

	if (kdq->busy)
		return false;
	for (i = 0; i < kdq->count; i++) {
		struct megpu_kdq_queue *q = &kdq->queues[i];

		if (!(kdq_ld(q, MEGPU_TQ_HDR_FLAGS) & MEGPU_TQ_F_CLOSED) ||
		    kdq_ld(q, MEGPU_TQ_HDR_DONE) != kdq_ld(q, MEGPU_TQ_HDR_TAIL))
			return false;
	}
	return true;
}

/*
 * The bound on the attachment: -ETIMEDOUT once the queues stood
 * still for a job timeout, or after MEGPU_KDQ_MAX_PERIODS of them.
 */
static bool megpu_kdq_timed_out(struct megpu_kdq *kdq)
{
	unsigned long period = msecs_to_jiffies(megpu_job_timeout_ms);
	u64 sum = 0;
	unsigned int i;

	for (i = 0; i < kdq->count; i++)
		sum += (u64)kdq_ld(&kdq->queues[i], MEGPU_TQ_HDR_HEAD) +
		       kdq_ld(&kdq->queues[i], MEGPU_TQ_HDR_DONE);
	if (sum != kdq->progress) {
		kdq->progress = sum;
		kdq->progress_at = jiffies;
	}
	return time_after(jiffies, kdq->progress_at + period) ||
	       time_after(jiffies, kdq->attached_at +
			  MEGPU_KDQ_MAX_PERIODS * period);
}

static void megpu_kdq_watchdog(struct timer_list *t)
{
	struct megpu_kdq *kdq = from_timer(kdq, t, watchdog);

	if (READ_ONCE(kdq->finished))
		return;
	if (megpu_kdq_timed_out(kdq)) {
		WRITE_ONCE(kdq->error, -ETIMEDOUT);
		megpu_kdq_finish(kdq, -ETIMEDOUT);
		/* the work stops its engines asking for work */
		mod_delayed_work(system_wq, &kdq->work, 0);
		return;
	}
	mod_timer(&kdq->watchdog,
		  jiffies + msecs_to_jiffies(megpu_job_timeout_ms / 4));
}

/*
 * No new job, no callback queues the work: the attachment completes with
 * @error unless it completed already. Lockless (the reset calls it).
 */
static void megpu_kdq_close(struct megpu_kdq *kdq, int error)
{
	WRITE_ONCE(kdq->closing, true);
	if (!READ_ONCE(kdq->finished) && !READ_ONCE(kdq->error))
		WRITE_ONCE(kdq->error, error);
}

/* It completed: the attachment's engines stop asking for work. */
static void megpu_kdq_stop(struct megpu_kdq *kdq)
{
	struct megpu_device *mdev = kdq->mdev;

	if (READ_ONCE(kdq->stopped))
		return;
	spin_lock(&mdev->kdq_lock);
	WRITE_ONCE(kdq->stopped, true);
	megpu_kdq_update_req_work(mdev);
	spin_unlock(&mdev->kdq_lock);
}

static void megpu_kdq_work(struct work_struct *work)
{
	struct megpu_kdq *kdq = container_of(to_delayed_work(work),
					     struct megpu_kdq, work);
	unsigned long want;
	bool retry = false;
	unsigned int e, i;
	int ret = 0;

	mutex_lock(&kdq->lock);
	megpu_kdq_retire(kdq);
	if (READ_ONCE(kdq->closing))
		goto out;
	if (READ_ONCE(kdq->finished)) {
		megpu_kdq_stop(kdq);
		goto out;
	}
	/* asking engines, and those fed last time, while a slot is free */
	want = (atomic_read(&kdq->requests) | kdq->flowing) & kdq->engines;
	for_each_set_bit(e, &want, MEGPU_MAX_ENGINES) {
		int slot;

		while ((slot = megpu_kdq_free_slot(kdq, e)) >= 0) {
			u32 *ib = (u32 *)((u8 *)kdq->ib_map.vaddr +
					  (size_t)slot * MEGPU_KDQ_IB_BYTES);
			u32 dwords = 0, descs = 0, b;
			u32 ahead = megpu_kdq_ahead(kdq, e);
			bool gated = false, held = false, full = true;
			struct megpu_job *mjob;
			int err = 0;

			/* before the take: taken tasks must reach the engine */
			mjob = megpu_kdq_job_new(kdq, e);
			if (IS_ERR(mjob)) {
				ret = PTR_ERR(mjob);
				break;
			}
			/* whole batches fill a job up (MEGPU_KDQ_JOB_BATCHES) */
			for (b = 0; b < MEGPU_KDQ_JOB_BATCHES && full; b++) {
				/* own queue first, then steal from the others */
				for (i = 0; i < kdq->count; i++) {
					if (megpu_kdq_hold_back(&kdq->queues[i],
								ahead + descs)) {
						held = true;
						ret = 0;
						continue;
					}
					ret = megpu_kdq_take(kdq,
							     &kdq->queues[i],
							     e, ib,
							     megpu_kdq_ib_va(kdq, slot),
							     &dwords, &descs,
							     &full);
					if (ret == -EBUSY) {
						gated = true;
						ret = 0;
						continue;
					}
					if (ret)
						break;
				}
				if (ret <= 0)
					break;
			}
			/*
			 * What was taken runs whatever the next take met; an
			 * error of that take ends the attachment after it.
			 */
			if (dwords) {
				if (ret < 0 && ret != -EAGAIN)
					err = ret;
				ret = descs;
				megpu_kdq_submit(kdq, mjob, e, slot, dwords,
						 descs);
			} else {
				megpu_kernel_job_drop(mjob);
			}
			/* a taken lock, or a task waiting for its event */
			if (ret == -EAGAIN || (!ret && gated)) {
				retry = true;
				break;
			}
			if (ret < 0)
				break;
			atomic_andnot(BIT(e), &kdq->requests);
			if (!ret) {
				/* held back: again when one of its jobs ends */
				if (!held)
					kdq->flowing &= ~BIT(e);
				break;
			}
			ret = err;
			if (ret)
				break;
			kdq->flowing |= BIT(e);
		}
		if (ret < 0 && ret != -EAGAIN)
			break;
	}
	if (ret < 0 && ret != -EAGAIN) {
		WRITE_ONCE(kdq->error, ret);
		megpu_kdq_finish(kdq, ret);
	} else if (megpu_kdq_all_done(kdq)) {
		megpu_kdq_finish(kdq, kdq->failed_jobs ? -EIO : 0);
	}
	/*
	 * Again soon on a taken lock or a gated task, else at least every
	 * quarter timeout; never later than a kick already asked for.
	 */
	if (!READ_ONCE(kdq->finished))
		queue_delayed_work(system_wq, &kdq->work, retry ?
				   msecs_to_jiffies(1) :
				   msecs_to_jiffies(megpu_job_timeout_ms / 4));
	else
		megpu_kdq_stop(kdq);
out:
	mutex_unlock(&kdq->lock);
}

/*
 * Wake the attachments of @mdev for the engines in @engines. Called from
 * the interrupt thread: takes no lock the work holds while it allocates.
 */
static void megpu_kdq_kick(struct megpu_device *mdev, u32 engines,
			   struct megpu_file *only)
{
	struct megpu_kdq *kdq;

	spin_lock(&mdev->kdq_lock);
	if (only) {
		/* a file's TASKQ_NOTIFY: its own attachment, not everyone's */
		kdq = only->tq.kdq;
		if (kdq) {
			atomic_or(engines & kdq->engines, &kdq->requests);
			mod_delayed_work(system_wq, &kdq->work, 0);
		}
	} else {
		list_for_each_entry(kdq, &mdev->kdqs, link) {
			atomic_or(engines & kdq->engines, &kdq->requests);
			mod_delayed_work(system_wq, &kdq->work, 0);
		}
	}
	spin_unlock(&mdev->kdq_lock);
}

/* MISC_IRQ_WORK, in the interrupt thread: engines asking for work. */
void megpu_dequeue_irq(struct megpu_device *mdev)
{
	u32 pending;
	int idx;

	if (!drm_dev_enter(&mdev->drm, &idx))
		return;
	pending = megpu_read(mdev, MEGPU_REG_TASKQ_REQ_PENDING);
	megpu_write(mdev, MEGPU_REG_TASKQ_REQ_PENDING, pending);
	drm_dev_exit(idx);
	atomic64_inc(&mdev->kdq_requests);
	megpu_kdq_kick(mdev, pending, NULL);
}

/* TASKQ_NOTIFY: tasks were added or a queue finished; look again. */
void megpu_dequeue_notify(struct megpu_file *mfile)
{
	megpu_kdq_kick(mfile->mdev, ~0u, mfile);
}

static int megpu_kdq_map_queue(struct megpu_kdq *kdq, struct drm_file *file,
			       const struct drm_megpu_taskq_queue *ref)
{
	struct megpu_kdq_queue *q = &kdq->queues[kdq->count];
	int ret;

	q->obj = drm_gem_object_lookup(file, ref->handle);
	if (!q->obj)
		return -ENOENT;
	kdq->count++;
	q->mapping = megpu_gem_mapping_get(to_megpu_bo(q->obj),
					   kdq->mfile->vm);
	if (!q->mapping)
		return -ENOENT;
	ret = megpu_taskq_validate(to_megpu_bo(q->obj), ref->offset,
				   ref->slots);
	if (ret)
		return ret;
	ret = drm_gem_vmap_unlocked(q->obj, &q->map);
	if (ret)
		return ret;
	if (q->map.is_iomem) {
		drm_gem_vunmap_unlocked(q->obj, &q->map);
		return -EINVAL;
	}
	q->mem = (u8 *)q->map.vaddr + ref->offset;
	q->va = megpu_mapping_va(q->mapping) + ref->offset;
	q->slots = ref->slots;
	return 0;
}

/* The IBs: a kernel BO mapped in the client's address space only. */
static int megpu_kdq_alloc_ib(struct megpu_kdq *kdq, struct drm_file *file)
{
	struct megpu_device *mdev = kdq->mdev;
	struct drm_gem_shmem_object *shmem;
	struct megpu_mapping *mapping;
	int ret;

	/*
	 * Pinned, charged to the file as its BOs are (megpu_gem.c), until
	 * the BO goes: after the detach, the jobs left in the rings still
	 * hold it, and a file must not pin IBs by attaching again.
	 */
	ret = megpu_pin_charge(kdq->mfile, megpu_kdq_ib_size(mdev));
	if (ret)
		return ret;
	shmem = drm_gem_shmem_create(&mdev->drm, megpu_kdq_ib_size(mdev));
	if (IS_ERR(shmem)) {
		megpu_pin_uncharge(kdq->mfile, megpu_kdq_ib_size(mdev));
		return PTR_ERR(shmem);
	}
	megpu_bo_charged_to(to_megpu_bo(&shmem->base), kdq->mfile,
			    megpu_kdq_ib_size(mdev));
	kdq->ib = &shmem->base;
	/*
	 * The client's GPU reads it, never writes it: its jobs cannot change
	 * the packets and descriptor copies the driver checked.
	 */
	to_megpu_bo(kdq->ib)->read_only = true;
	megpu_gem_register(mdev, to_megpu_bo(kdq->ib));
	/* in the file's address space, never in its handle table */
	mapping = megpu_gem_map_private(to_megpu_bo(kdq->ib), file);
	if (IS_ERR(mapping))
		return PTR_ERR(mapping);
	kdq->ib_mapping = mapping;
	return drm_gem_vmap_unlocked(kdq->ib, &kdq->ib_map);
}

static int megpu_kdq_check_engines(struct megpu_device *mdev, u32 engines)
{
	unsigned int e;

	if (!engines || engines >= BIT(mdev->num_engines))
		return -EINVAL;
	for (e = 0; e < mdev->num_engines; e++) {
		u32 type = mdev->engines[e].type;

		if ((engines & BIT(e)) && type != MEGPU_ENGINE_GFX &&
		    type != MEGPU_ENGINE_COMPUTE)
			return -EINVAL;
	}
	return 0;
}

/*
 * Stop @kdq for good and complete it with @error, but keep it
 * (detach frees it). Only its timer, its work and its jobs' fence
 * callbacks still reach it once it is unpublished or its device gone.
 * Under the lock the work holds, so that none of it submits or retires
 * meanwhile: closing (no new job, no callback queues the work) and the
 * callbacks removed (or run to their end under the fence lock). Then the
 * timer, which may queue the work, and last the work. The jobs in flight
 * run out on their own references to the BOs. Idempotent.
 */
static void megpu_kdq_halt(struct megpu_kdq *kdq, int error)
{
	unsigned int i;

	mutex_lock(&kdq->lock);
	megpu_kdq_close(kdq, error);
	for (i = 0; i < ARRAY_SIZE(kdq->jobs); i++)
		if (kdq->jobs[i].fence)
			megpu_kdq_job_unhook(&kdq->jobs[i]);
	/* its engines stop asking, also when another attachment changes */
	megpu_kdq_stop(kdq);
	mutex_unlock(&kdq->lock);
	timer_shutdown_sync(&kdq->watchdog);
	cancel_delayed_work_sync(&kdq->work);
	megpu_kdq_finish(kdq, error);
}

static int megpu_dequeue_detach(struct megpu_file *mfile)
{
	struct megpu_device *mdev = mfile->mdev;
	struct megpu_kdq *kdq;

	mutex_lock(&mdev->kdq_mutex);
	spin_lock(&mdev->kdq_lock);
	kdq = mfile->tq.kdq;
	if (kdq) {
		list_del(&kdq->link);
		mfile->tq.kdq = NULL;
		megpu_kdq_update_req_work(mdev);
	}
	spin_unlock(&mdev->kdq_lock);
	if (kdq) {
		megpu_kdq_halt(kdq, -ECANCELED);
		megpu_kdq_free(kdq);
		/* after the halt completed it: waiters see -ECANCELED */
		WRITE_ONCE(mfile->tq.attached, false);
		wake_up_all(&mfile->tq.wq);
	}
	mutex_unlock(&mdev->kdq_mutex);
	return kdq ? 0 : -ENOENT;
}

/*
 * A function level reset is coming: every attachment stops now and
 * completes with -EIO, waiting for nothing. The reset holds reset_sem,
 * which a hung job's timeout waits for, and the dequeuer's work
 * allocates under kdq->lock (a detach waits for it under kdq_mutex): so
 * neither lock is taken here (dma-fence rules). Closing keeps the
 * fences' callbacks and the watchdog from queueing the work; a pass of
 * the work that runs meanwhile may still submit a job, which the
 * stopped scheduler runs after the reset. Detach or close halts the
 * attachment for good (megpu_kdq_halt()) and frees it.
 */
void megpu_dequeue_reset_prepare(struct megpu_device *mdev)
{
	struct megpu_kdq *kdq;

	spin_lock(&mdev->kdq_lock);
	list_for_each_entry(kdq, &mdev->kdqs, link) {
		megpu_kdq_close(kdq, -EIO);
		WRITE_ONCE(kdq->stopped, true);
		megpu_kdq_finish(kdq, -EIO);
	}
	megpu_kdq_update_req_work(mdev);
	spin_unlock(&mdev->kdq_lock);
}

/*
 * The device is gone (megpu_remove(), after its interrupts): every
 * attachment stops now, before it would wait for its watchdog, and
 * completes with @error; detach or close frees it later.
 */
void megpu_dequeue_halt_all(struct megpu_device *mdev, int error)
{
	struct megpu_kdq *kdq;

	/* the list changes only under kdq_mutex */
	mutex_lock(&mdev->kdq_mutex);
	list_for_each_entry(kdq, &mdev->kdqs, link)
		megpu_kdq_halt(kdq, error);
	mutex_unlock(&mdev->kdq_mutex);
}

int megpu_ioctl_taskq_detach(struct drm_device *drm, void *data,
			     struct drm_file *file)
{
	struct megpu_device *mdev = to_megpu(drm);
	struct drm_megpu_taskq_detach *args = data;

	if (!(mdev->caps & MEGPU_CAP_TASKQ))
		return -EOPNOTSUPP;
	if (args->flags || args->pad)
		return -EINVAL;
	return megpu_dequeue_detach(file->driver_priv);
}

int megpu_ioctl_taskq_attach(struct drm_device *drm, void *data,
			     struct drm_file *file)
{
	struct megpu_device *mdev = to_megpu(drm);
	struct megpu_file *mfile = file->driver_priv;
	struct drm_megpu_taskq_attach *args = data;
	struct drm_megpu_taskq_queue refs[MEGPU_DEQ_MAX_QUEUES];
	struct megpu_kdq *kdq;
	unsigned int i;
	int ret;

	if (!(mdev->caps & MEGPU_CAP_TASKQ))
		return -EOPNOTSUPP;
	if (args->flags || !args->count || args->count > MEGPU_DEQ_MAX_QUEUES || args->pad)
		return -EINVAL;
	ret = megpu_kdq_check_engines(mdev, args->engines);
	if (ret)
		return ret;
	if (copy_from_user(refs, u64_to_user_ptr(args->queues),
			   args->count * sizeof(refs[0])))
		return -EFAULT;
	/*
	 * The dequeuer's jobs count as the file's (job_limit): an attachment
	 * has a few in flight, but a file that attaches again and again
	 * leaves those of each detached one in the rings.
	 */
	if (atomic_read(&mfile->jobs) >= READ_ONCE(megpu_job_limit))
		return -EBUSY;

	kdq = kzalloc(sizeof(*kdq), GFP_KERNEL);
	if (!kdq)
		return -ENOMEM;
	/* not the file's attachment until published: completes nothing */
	kdq->finished = true;
	kdq->mdev = mdev;
	kdq->mfile = megpu_file_get(mfile);
	kdq->file = file;
	mutex_init(&kdq->lock);
	INIT_DELAYED_WORK(&kdq->work, megpu_kdq_work);
	timer_setup(&kdq->watchdog, megpu_kdq_watchdog, 0);
	INIT_LIST_HEAD(&kdq->link);
	kdq->engines = args->engines;
	atomic_set(&kdq->requests, args->engines);
	kdq->attached_at = jiffies;
	kdq->progress_at = jiffies;
	kdq->progress = ~0ull;

	for (i = 0; i < args->count; i++) {
		ret = megpu_kdq_map_queue(kdq, file, &refs[i]);
		if (ret)
			goto out_kdq;
	}
	ret = megpu_kdq_alloc_ib(kdq, file);
	if (ret)
		goto out_kdq;

	/*
	 * Not inside a function level reset, whose halt would miss it.
	 * reset_sem inside kdq_mutex: a detach holds kdq_mutex while it
	 * waits for the work, which allocates (see megpu_timedout_job()).
	 */
	mutex_lock(&mdev->kdq_mutex);
	if (down_read_interruptible(&mdev->reset_sem)) {
		mutex_unlock(&mdev->kdq_mutex);
		ret = -ERESTARTSYS;
		goto out_kdq;
	}
	/* megpu_dequeue_unplug() ran: nothing would stop this one */
	ret = drm_dev_is_unplugged(drm) ? -ENODEV : 0;
	spin_lock(&mdev->kdq_lock);
	if (mfile->tq.kdq)
		ret = -EBUSY;
	if (ret) {
		spin_unlock(&mdev->kdq_lock);
		up_read(&mdev->reset_sem);
		mutex_unlock(&mdev->kdq_mutex);
		goto out_kdq;
	}
	/* the file's attachment from now on: TASKQ_WAIT waits for it */
	kdq->finished = false;
	WRITE_ONCE(mfile->tq.status, 0);
	WRITE_ONCE(mfile->tq.done, false);
	WRITE_ONCE(mfile->tq.attached, true);
	/*
	 * Armed before it is published: once on the list, a DETACH from
	 * another thread may free it, so nothing below touches kdq.
	 */
	mod_timer(&kdq->watchdog,
		  jiffies + msecs_to_jiffies(megpu_job_timeout_ms / 4));
	mod_delayed_work(system_wq, &kdq->work, 0);
	list_add_tail(&kdq->link, &mdev->kdqs);
	mfile->tq.kdq = kdq;
	megpu_kdq_update_req_work(mdev);
	spin_unlock(&mdev->kdq_lock);
	up_read(&mdev->reset_sem);
	mutex_unlock(&mdev->kdq_mutex);
	return 0;

out_kdq:
	megpu_kdq_free(kdq);
	return ret;
}

/* TASKQ_WAIT may return: the attachment completed or went. */
static bool megpu_tq_over(struct megpu_taskq_state *tq)
{
	/* acquire: pairs with megpu_kdq_finish()'s release of done */
	return smp_load_acquire(&tq->done) || !READ_ONCE(tq->attached);
}

int megpu_ioctl_taskq_wait(struct drm_device *drm, void *data,
			   struct drm_file *file)
{
	struct megpu_device *mdev = to_megpu(drm);
	struct megpu_file *mfile = file->driver_priv;
	struct megpu_taskq_state *tq = &mfile->tq;
	struct drm_megpu_taskq_wait *args = data;
	unsigned long timeout;
	long ret;

	if (!(mdev->caps & MEGPU_CAP_TASKQ))
		return -EOPNOTSUPP;
	if (args->flags)
		return -EINVAL;
	if (!READ_ONCE(tq->attached))
		return -ENOENT;
	timeout = drm_timeout_abs_to_jiffies(args->timeout_ns);
	/*
	 * Completion and detach wake them all, interrupts off, from the
	 * watchdog timer too: a file parks at most as many as TASKQ_SLEEP's.
	 */
	if (atomic_inc_return(&tq->waiters) > MEGPU_TASKQ_SLEEPERS_MAX) {
		atomic_dec(&tq->waiters);
		return -EBUSY;
	}
	ret = wait_event_interruptible_timeout(tq->wq, megpu_tq_over(tq),
					       timeout);
	atomic_dec(&tq->waiters);
	if (ret < 0)
		return ret;
	/* acquire: the status the finish stored before done */
	if (!smp_load_acquire(&tq->done))
		return READ_ONCE(tq->attached) ? -ETIME : -ENOENT;
	args->status = READ_ONCE(tq->status);
	return 0;
}

/*
 * The file is going: stop dequeuing for it (its jobs run out). No other
 * thread of it can attach now, so without an attachment there is
 * nothing to do, and its close does not queue on kdq_mutex behind other
 * files' detaches (each waits for its IB's host flush under it).
 */
void megpu_dequeue_file_close(struct megpu_file *mfile)
{
	if (READ_ONCE(mfile->tq.attached))
		megpu_dequeue_detach(mfile);
}

void megpu_dequeue_init(struct megpu_device *mdev)
{
	spin_lock_init(&mdev->kdq_lock);
	mutex_init(&mdev->kdq_mutex);
	INIT_LIST_HEAD(&mdev->kdqs);
}

static int megpu_dequeue_show(struct seq_file *m, void *data)
{
	struct drm_debugfs_entry *entry = m->private;
	struct megpu_device *mdev = to_megpu(entry->dev);
	struct megpu_kdq *kdq;

	seq_printf(m, "requests %llu\n",
		   (u64)atomic64_read(&mdev->kdq_requests));
	/* the work's lock is not taken: it may be held across reclaim */
	spin_lock(&mdev->kdq_lock);
	list_for_each_entry(kdq, &mdev->kdqs, link)
		seq_printf(m,
			   "ctx %u queues %u engines 0x%x busy 0x%x batches %llu tasks %llu lock_retries %llu failed_jobs %llu done %d error %d\n",
			   kdq->mfile->vm->ctx_id, kdq->count, kdq->engines,
			   READ_ONCE(kdq->busy), READ_ONCE(kdq->batches),
			   READ_ONCE(kdq->tasks), READ_ONCE(kdq->lock_retries),
			   READ_ONCE(kdq->failed_jobs), READ_ONCE(kdq->finished),
			   READ_ONCE(kdq->error));
	spin_unlock(&mdev->kdq_lock);
	return 0;
}

void megpu_dequeue_debugfs_init(struct megpu_device *mdev)
{
	drm_debugfs_add_file(&mdev->drm, "taskq_dequeue", megpu_dequeue_show,
			     NULL);
}
