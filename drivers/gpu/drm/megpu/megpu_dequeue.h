/* SPDX-License-Identifier: GPL-2.0 */
/* Copyright 2026 The megpu authors */
/*
 * The kernel dequeuer's state, shared by megpu_dequeue.c (the attachment:
 * lifetime, work, watchdog, ioctls) and megpu_dequeue_take.c (taking a
 * batch from a queue and building its IB).
 */
#ifndef MEGPU_DEQUEUE_H
#define MEGPU_DEQUEUE_H

#include <linux/iosys-map.h>
#include <linux/timer.h>
#include <linux/workqueue.h>

#include "megpu_drv.h"
#include "megpu_hw_taskq.h"

/*
 * IB area per job slot: the TASK_RUN packets (one per batch of the job)
 * in the first MEGPU_KDQ_DESC_OFF bytes, then the copies of the batches'
 * descriptors they read, at most MEGPU_TQ_MAX_BATCH in all.
 */
#define MEGPU_KDQ_RUN_DWORDS	(1 + MEGPU_PKT_TASK_RUN_COUNT)
#define MEGPU_KDQ_DESC_OFF	256
/* the packet area: a TASK_RUN per batch of the job */
#define MEGPU_KDQ_IB_DWORDS	(MEGPU_KDQ_DESC_OFF / 4)
/*
 * Batches one job may carry: while an engine's queue hands out whole
 * batches (far from its end: a GUIDED queue's batches shrink there), the
 * work fills a job with up to this many, one TASK_RUN each, so that one
 * job's way through the work, drm_sched and the ring serves several.
 */
#define MEGPU_KDQ_JOB_BATCHES	4
#define MEGPU_KDQ_IB_BYTES	ALIGN(MEGPU_KDQ_DESC_OFF + MEGPU_TQ_MAX_BATCH * \
				      MEGPU_TQ_DESC_SIZE, PAGE_SIZE)
static_assert(MEGPU_KDQ_JOB_BATCHES * MEGPU_KDQ_RUN_DWORDS <=
	      MEGPU_KDQ_IB_DWORDS);
/*
 * Jobs of an attachment in flight per engine: the next batch is taken and
 * queued while one runs, so the engine does not go idle, ask for work and
 * wait for the interrupt, the work and the job's submission in between.
 */
#define MEGPU_KDQ_DEPTH		4
#define MEGPU_KDQ_LOCK_TRIES	64
#define MEGPU_KDQ_MAX_PERIODS	64
/* BOs holding event words kept mapped for the kernel */
#define MEGPU_KDQ_EVENT_MAPS	4

struct megpu_kdq_queue {
	struct drm_gem_object *obj;
	struct megpu_mapping *mapping;
	struct iosys_map map;
	u8 *mem;
	u64 va;
	u32 slots;
};

struct megpu_kdq_job {
	struct dma_fence_cb cb;
	struct dma_fence_cb hold_cb;	/* debugfs kdq_signal_hold_us */
	struct megpu_kdq *kdq;
	struct dma_fence *fence;
	u32 tasks;			/* the tasks its batches hold */
};

struct megpu_kdq_event_map {
	struct drm_gem_object *obj;
	struct iosys_map map;
};

/**
 * struct megpu_kdq - one client's attachment to the kernel dequeuer
 * @mdev: the device
 * @mfile: the client (referenced)
 * @file: its DRM file, valid until megpu_dequeue_file_close()
 * @link: in the device's kdqs list (changed under mdev->kdq_mutex and
 *	mdev->kdq_lock, read under either)
 * @lock: everything below but @requests (the work holds it throughout)
 * @work: takes batches and checks completion
 * @queues: the attached queues
 * @count: number of @queues
 * @engines: engines it dequeues for
 * @requests: engines that asked for work and got none yet (atomic: set
 *	from the interrupt thread, which must not wait for the work)
 * @busy: engines with a job of this module in flight
 * @flowing: engines whose last batch found tasks: fed again as soon as
 *	one of their jobs ends, without waiting for a request
 * @jobs: those jobs, MEGPU_KDQ_DEPTH per engine (engine * depth + slot)
 * @ib: kernel BO holding the jobs' IBs, MEGPU_KDQ_IB_BYTES per job slot
 * @ib_mapping: its mapping in the client's address space
 * @ib_map: its kernel mapping
 * @finished: it completed (megpu_kdq_finish()): TASKQ_WAIT returns
 * @error: why the attachment failed, 0 if it did not
 * @closing: the client detached or closed
 * @stopped: it completed: its engines no longer ask for work
 * @batches: batches taken
 * @tasks: tasks taken
 * @lock_retries: tries that found the lock taken
 * @failed_jobs: jobs that did not complete
 * @progress: the queues' HEAD + DONE sums when last seen to move
 *	(the watchdog's alone)
 * @progress_at: when (jiffies)
 * @attached_at: when the attachment began (jiffies)
 * @watchdog: bounds the attachment's life (megpu_kdq_watchdog())
 * @events: BOs holding event words of gated tasks, mapped for the kernel
 *	(referenced), a small cache
 * @next_event: the entry of @events to replace next
 */
struct megpu_kdq {
	struct megpu_device *mdev;
	struct megpu_file *mfile;
	struct drm_file *file;
	struct list_head link;
	struct mutex lock;		/* the fields below */
	struct delayed_work work;
	struct megpu_kdq_queue queues[MEGPU_DEQ_MAX_QUEUES];
	u32 count;
	u32 engines;
	atomic_t requests;
	u32 busy;
	u32 flowing;
	struct megpu_kdq_job jobs[MEGPU_MAX_ENGINES * MEGPU_KDQ_DEPTH];
	struct drm_gem_object *ib;
	struct megpu_mapping *ib_mapping;
	struct iosys_map ib_map;
	bool finished;
	int error;
	bool closing;
	bool stopped;
	u64 batches;
	u64 tasks;
	u64 lock_retries;
	u64 failed_jobs;
	u64 progress;
	unsigned long progress_at;
	unsigned long attached_at;
	struct timer_list watchdog;
	struct megpu_kdq_event_map events[MEGPU_KDQ_EVENT_MAPS];
	unsigned int next_event;
};

static inline __le32 *kdq_word(struct megpu_kdq_queue *q, u32 off)
{
	return (__le32 *)(q->mem + off);
}

static inline u32 kdq_ld(struct megpu_kdq_queue *q, u32 off)
{
	/* pairs with the other dequeuers' releases (their HEAD, DONE) */
	return le32_to_cpu(smp_load_acquire(kdq_word(q, off)));
}

static inline void kdq_add(struct megpu_kdq_queue *q, u32 off, u32 n)
{
	u32 *p = (u32 *)kdq_word(q, off);

	if (n)
		atomic_add(n, (atomic_t *)p);
}

void megpu_kdq_event_unmap(struct megpu_kdq_event_map *ev);
u64 megpu_kdq_ib_va(struct megpu_kdq *kdq, u32 slot);
int megpu_kdq_take(struct megpu_kdq *kdq, struct megpu_kdq_queue *q,
		   u32 engine, u32 *ib, u64 ib_va, u32 *ib_dwords,
		   u32 *ib_descs, bool *full);
bool megpu_kdq_hold_back(struct megpu_kdq_queue *q, u32 ahead);

#endif /* MEGPU_DEQUEUE_H */
