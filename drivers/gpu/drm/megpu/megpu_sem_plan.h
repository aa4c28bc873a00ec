/* SPDX-License-Identifier: GPL-2.0 */
/* Copyright 2026 The megpu authors */
/**
 * DOC: Wait-bucket planner (seed 001)
 *
 * The wait-bucket planner of seed 001, a pure function of the resource
 * objects and the engines' current timestamps: no locks, no allocation,
 * no kernel API, so the host unit tests run it as it is.
 *
 * Rule for readers and writers (ours, the seed has only "uses"): several
 * engines may read a resource at once; a reader waits for the last writer;
 * a writer waits for the last writer and for the last reader on every
 * other engine. Waits on the job's own engine are never needed: the ring
 * runs its frames in order.
 *
 * A job without implicit sync (DRM_MEGPU_SUBMIT_NO_IMPLICIT) waits for
 * nothing, so it must not make the resource object forget the users it
 * did not wait for: the object keeps the last writer of each engine (the
 * seed's one entry per engine, largest timestamp), and only a writer that
 * waited for all of them replaces them all.
 */
#ifndef MEGPU_SEM_PLAN_H
#define MEGPU_SEM_PLAN_H

/* The host tests define u32, u64 and bool before including this. */
#ifdef __KERNEL__
#include <linux/types.h>
#endif

#include "megpu_hw_regs.h"

/**
 * struct megpu_sem_ref - a semaphore object's tag
 * @sem: semaphore object number; 0 is the blank (never used) reference
 * @engine: the engine whose job signals it
 * @ts: the timestamp of that job on that engine
 */
struct megpu_sem_ref {
	u32 sem;
	u32 engine;
	u64 ts;
};

/**
 * struct megpu_resource - the resource object of one BO
 * @write: per engine, the last job that wrote it (one engine's only,
 *	unless writers without implicit sync came after that one)
 * @read: per engine, the last job that read it since those writes
 */
struct megpu_resource {
	struct megpu_sem_ref write[MEGPU_MAX_ENGINES];
	struct megpu_sem_ref read[MEGPU_MAX_ENGINES];
};

/**
 * struct megpu_bucket - the wait bucket: one entry per engine at most
 * @mask: engines with an entry
 * @wait: the entry of each engine in @mask, the largest timestamp seen
 */
struct megpu_bucket {
	u32 mask;
	struct megpu_sem_ref wait[MEGPU_MAX_ENGINES];
};

/* Does @ref still have to be waited for, by a job on @engine? */
static inline bool megpu_sem_unavailable(const struct megpu_sem_ref *ref,
					 u32 engine, const u64 *current_ts)
{
	return ref->sem && ref->engine != engine &&
	       ref->ts > current_ts[ref->engine];
}

void megpu_bucket_add(struct megpu_bucket *bucket,
		      const struct megpu_sem_ref *ref, u32 engine,
		      const u64 *current_ts);
void megpu_plan_resource(struct megpu_bucket *bucket,
			 struct megpu_resource *res, bool write,
			 const struct megpu_sem_ref *own,
			 const u64 *current_ts);

#endif /* MEGPU_SEM_PLAN_H */
