// SPDX-License-Identifier: GPL-2.0
/* Copyright 2026 The megpu authors */
/**
 * DOC: Taking a batch for the engines
 *
 * The kernel dequeuer's side of the task-queue protocol (megpu_hw.h,
 * Documentation/megpu-hw.rst): look at the head without the lock (none
 * eligible, or a gated task whose event has not happened: the lock word
 * is not touched), compare-and-swap the lock word to
 * MEGPU_TQ_OWNER_DRIVER(engine) (a few tries, then the work looks again
 * a millisecond later), look again under the lock, take the longest
 * eligible run from the head (malformed, event-gated and CPU-hinted
 * tasks alone), store HEAD, release (notifying the sleepers of an EVENT
 * queue), and append the batch to the job's IB: one TASK_RUN over copies
 * of the descriptors, which the device runs and notifies as DEQUEUE
 * would (a job may carry several batches, MEGPU_KDQ_JOB_BATCHES). A
 * descriptor is copied once: the client may change it under us.
 */

#include <linux/slab.h>
#include <linux/unaligned.h>
#include <drm/drm_drv.h>
#include <drm/drm_gem.h>

#include "megpu_dequeue.h"

void megpu_kdq_event_unmap(struct megpu_kdq_event_map *ev)
{
	if (!ev->obj)
		return;
	drm_gem_vunmap_unlocked(ev->obj, &ev->map);
	drm_gem_object_put(ev->obj);
	ev->obj = NULL;
}

/* A descriptor as copied (the take rules read it), and its event. */
struct megpu_kdq_task {
	u8 raw[MEGPU_TQ_DESC_SIZE];
	u64 event_addr;
	u64 event_value;
	bool bad;
};

/*
 * The engine side of the take rules (megpu_hw_taskq.h), for the gfx and
 * compute engines the driver dequeues for: every built-in kernel and
 * wave programs.
 */
static bool megpu_kdq_may_run(const struct megpu_kdq_task *t, u32 qflags)
{
	return megpu_tq_may_run(t->raw, MEGPU_TQ_SIDE_GPU, qflags,
				MEGPU_KERNELS_ALL, 1);
}

static u64 kdq_ld64(const u8 *p, u32 off)
{
	return get_unaligned_le64(p + off);
}

/* Copy a descriptor once: the client may change it under us. */
static void megpu_kdq_read_task(struct megpu_kdq_queue *q, u32 idx,
				struct megpu_kdq_task *t)
{
	u8 *d = t->raw;

	memcpy(d, q->mem + MEGPU_TQ_HDR_BYTES +
	       (size_t)(idx & (q->slots - 1)) * MEGPU_TQ_DESC_SIZE,
	       sizeof(t->raw));
	t->event_addr = kdq_ld64(d, MEGPU_TQ_DESC_EVENT_ADDR);
	t->event_value = kdq_ld64(d, MEGPU_TQ_DESC_EVENT_VALUE);
	t->bad = !megpu_tq_desc_valid(d);
}

/*
 * Has the event of gated task @t happened (kdq->lock held)? 1 yes, 0 not
 * yet, -EFAULT when its word is in no BO of the client, or the error
 * mapping that BO for the kernel failed with.
 */
static int megpu_kdq_event_reached(struct megpu_kdq *kdq,
				   const struct megpu_kdq_task *t)
{
	struct megpu_kdq_event_map *ev = NULL;
	struct drm_gem_object *obj;
	unsigned int i;
	u64 off, word;
	int ret;

	obj = megpu_vm_lookup_bo(kdq->mfile->vm, t->event_addr, 8, &off);
	if (!obj)
		return -EFAULT;
	/* a megpu BO (or an import of one): the word's page only */
	if (!megpu_bo_peek(obj, off, 8, &word)) {
		drm_gem_object_put(obj);
		return (s64)(word - t->event_value) >= 0;
	}
	/* another driver's buffer: mapped whole, through it, kept a while */
	for (i = 0; i < MEGPU_KDQ_EVENT_MAPS; i++)
		if (kdq->events[i].obj == obj)
			ev = &kdq->events[i];
	if (ev) {
		drm_gem_object_put(obj);
	} else {
		ev = &kdq->events[kdq->next_event++ % MEGPU_KDQ_EVENT_MAPS];
		megpu_kdq_event_unmap(ev);
		ret = drm_gem_vmap_unlocked(obj, &ev->map);
		if (ret) {
			drm_gem_object_put(obj);
			return ret;
		}
		ev->obj = obj;
	}
	/* 8-aligned (a valid descriptor's): one load, as the device reads it */
	word = le64_to_cpu((__force __le64)iosys_map_rd(&ev->map, off, u64));
	return (s64)(word - t->event_value) >= 0;
}

/* A queue the device would fault on: drop the attachment. */
static bool megpu_kdq_queue_sane(struct megpu_kdq_queue *q, u32 *head,
				 u32 *tail)
{
	*head = kdq_ld(q, MEGPU_TQ_HDR_HEAD);
	*tail = kdq_ld(q, MEGPU_TQ_HDR_TAIL);
	return kdq_ld(q, MEGPU_TQ_HDR_MAGIC) == MEGPU_TQ_MAGIC &&
	       kdq_ld(q, MEGPU_TQ_HDR_SIZE) == q->slots &&
	       *tail - *head <= q->slots;
}

/*
 * Should an engine that already holds @ahead tasks of the attachment,
 * taken and not yet run, leave a GUIDED queue @q alone for now? Yes once
 * the queue holds no more than that: a GUIDED take is at most half of
 * what is left so that near the end nobody sits on work while the others
 * idle, and the jobs the driver queues ahead (MEGPU_KDQ_DEPTH of up to
 * MEGPU_KDQ_JOB_BATCHES batches) would sit on it (issue 25: B1's engine
 * ran 5 ms of 69 after the CPU thread had run dry). The sizes of the
 * takes do not change, only how far ahead they go. A look without the
 * lock: a hint, the take checks the queue again.
 */
bool megpu_kdq_hold_back(struct megpu_kdq_queue *q, u32 ahead)
{
	u32 head, tail;

	if (!ahead || !(kdq_ld(q, MEGPU_TQ_HDR_FLAGS) & MEGPU_TQ_F_GUIDED) ||
	    !megpu_kdq_queue_sane(q, &head, &tail))
		return false;
	return tail - head <= ahead;
}

/* The GPU address of job slot @slot's IB area (engine * depth + slot). */
u64 megpu_kdq_ib_va(struct megpu_kdq *kdq, u32 slot)
{
	return megpu_mapping_va(kdq->ib_mapping) +
	       (u64)slot * MEGPU_KDQ_IB_BYTES;
}

static u32 *kdq_emit(u32 *p, u32 op, u32 count)
{
	*p++ = MEGPU_PKT_HEADER(op, count, 0);
	return p;
}

static u32 *kdq_emit64(u32 *p, u64 v)
{
	*p++ = lower_32_bits(v);
	*p++ = upper_32_bits(v);
	return p;
}

/*
 * Take a batch from @q for @engine and append it to the IB at @ib, whose
 * packets fill *@ib_dwords and descriptor copies *@ib_descs so far
 * (kdq->lock held). Returns the tasks taken, 0 for none eligible (or no
 * room left in the IB), -EBUSY when the head task waits for its event
 * (the lock word untouched for both when the look without it saw so),
 * -EAGAIN when the lock stayed taken, -EPROTO for a malformed queue,
 * -EFAULT for an event word not in the client's memory. *@full tells
 * whether the batch was the queue's whole GPU batch size.
 */
int megpu_kdq_take(struct megpu_kdq *kdq, struct megpu_kdq_queue *q,
		   u32 engine, u32 *ib, u64 ib_va, u32 *ib_dwords,
		   u32 *ib_descs, bool *full)
{
	struct megpu_kdq_task *tasks;
	u32 head, tail, flags, max, size, n = 0, i, batch;
	u32 owner = MEGPU_TQ_OWNER_DRIVER(engine);
	bool locked = false;
	u32 *p = ib + *ib_dwords;
	int tries, ret, idx, reached, step, err = 0;

	*full = false;
	if (!megpu_kdq_queue_sane(q, &head, &tail))
		return -EPROTO;
	if (head == tail)
		return 0;
	if (*ib_dwords + MEGPU_KDQ_RUN_DWORDS > MEGPU_KDQ_IB_DWORDS ||
	    *ib_descs >= MEGPU_TQ_MAX_BATCH)
		return 0;
	flags = kdq_ld(q, MEGPU_TQ_HDR_FLAGS);
	size = kdq_ld(q, MEGPU_TQ_HDR_BATCH_GPU) ?: MEGPU_TQ_DEF_BATCH_GPU;
	size = min_t(u32, size, MEGPU_TQ_MAX_BATCH);
	max = min_t(u32, size, MEGPU_TQ_MAX_BATCH - *ib_descs);

	tasks = kmalloc_array(max, sizeof(*tasks), GFP_KERNEL);
	if (!tasks)
		return -ENOMEM;
	/* look first without the lock: none eligible leaves it untouched */
	megpu_kdq_read_task(q, head, &tasks[0]);
	/* a malformed task is taken, so that it is notified as such */
	if (!tasks[0].bad && !megpu_kdq_may_run(&tasks[0], flags)) {
		kdq_add(q, MEGPU_TQ_HDR_NONE_ELIGIBLE, 1);
		ret = 0;
		goto out;
	}
	if (!tasks[0].bad && tasks[0].event_addr) {
		ret = megpu_kdq_event_reached(kdq, &tasks[0]);
		if (!ret) {
			kdq_add(q, MEGPU_TQ_HDR_NONE_ELIGIBLE, 1);
			ret = -EBUSY;
		}
		if (ret < 0)
			goto out;
	}
	for (tries = 0; tries < MEGPU_KDQ_LOCK_TRIES; tries++) {
		/* the lock word is little endian in memory, 0 when free */
		u32 old = cmpxchg((u32 *)kdq_word(q, MEGPU_TQ_HDR_LOCK), 0,
				  (__force u32)cpu_to_le32(owner));

		if (!old) {
			locked = true;
			break;
		}
		kdq->lock_retries++;
		kdq_add(q, MEGPU_TQ_HDR_LOCK_RETRIES, 1);
		cpu_relax();
	}
	if (!locked) {
		ret = -EAGAIN;
		goto out;
	}
	/* under the lock: look again, then take a contiguous run */
	if (!megpu_kdq_queue_sane(q, &head, &tail)) {
		err = -EPROTO;
		goto unlock;
	}
	max = megpu_tq_batch_limit(flags, max, tail - head);
	while (n < max && head + n != tail) {
		struct megpu_kdq_task *t = &tasks[n];

		megpu_kdq_read_task(q, head + n, t);
		/* the event word of a task the engines may run, only */
		reached = 1;
		if (!t->bad && t->event_addr && megpu_kdq_may_run(t, flags)) {
			reached = megpu_kdq_event_reached(kdq, t);
			if (reached <= 0)
				err = reached ?: -EBUSY;
			if (reached < 0)
				break;
		}
		step = megpu_tq_batch_step(t->raw, n, MEGPU_TQ_SIDE_GPU, flags,
					   MEGPU_KERNELS_ALL, 1, reached);
		if (step == MEGPU_TQ_STOP)
			break;
		n++;
		if (step == MEGPU_TQ_TAKE_LAST)
			break;
	}
	if (!n) {
		if (!err || err == -EBUSY)
			kdq_add(q, MEGPU_TQ_HDR_NONE_ELIGIBLE, 1);
		goto unlock;
	}
	/* the descriptors were read before the slots are handed back */
	smp_store_release(kdq_word(q, MEGPU_TQ_HDR_HEAD),
			  cpu_to_le32(head + n));
	kdq_add(q, MEGPU_TQ_HDR_GPU_TASKS, n);
	kdq_add(q, MEGPU_TQ_HDR_GPU_BATCHES, 1);
	if (q != &kdq->queues[0])
		kdq_add(q, MEGPU_TQ_HDR_GPU_STEALS, 1);
unlock:
	/* a full barrier: the release then reads WAITERS */
	xchg((u32 *)kdq_word(q, MEGPU_TQ_HDR_LOCK), 0);
	if ((flags & MEGPU_TQ_F_EVENT) && kdq_ld(q, MEGPU_TQ_HDR_WAITERS) &&
	    drm_dev_enter(&kdq->mdev->drm, &idx)) {
		megpu_write(kdq->mdev, MEGPU_REG_TASKQ_NOTIFY, 1);
		drm_dev_exit(idx);
		megpu_taskq_released(kdq->mdev);
	}
	ret = n ?: err;
	if (ret <= 0)
		goto out;

	batch = ++kdq->batches;
	kdq->tasks += n;
	/*
	 * The device runs the copies as DEQUEUE runs a batch: kernels, the
	 * flush of seed 004, then every task's notification, malformed and
	 * faulted ones with their status.
	 */
	p = kdq_emit(p, MEGPU_PKT_TASK_RUN, MEGPU_PKT_TASK_RUN_COUNT);
	p = kdq_emit64(p, q->va);
	p = kdq_emit64(p, ib_va + MEGPU_KDQ_DESC_OFF +
			  (u64)*ib_descs * MEGPU_TQ_DESC_SIZE);
	*p++ = n;
	*p++ = owner;
	*p++ = batch;
	for (i = 0; i < n; i++)
		memcpy((u8 *)ib + MEGPU_KDQ_DESC_OFF +
		       (size_t)(*ib_descs + i) * MEGPU_TQ_DESC_SIZE,
		       tasks[i].raw, MEGPU_TQ_DESC_SIZE);
	*ib_dwords = p - ib;
	*ib_descs += n;
	*full = n == size;
out:
	kfree(tasks);
	return ret;
}
