// SPDX-License-Identifier: GPL-2.0
/* Copyright 2026 The megpu authors */
/**
 * DOC: Wait-bucket planner, the code
 *
 * Steps 5-9 of seed 001's flow chart; see megpu_sem_plan.h.
 */

#include "megpu_sem_plan.h"

/*
 * Steps 5-8 of the seed's flow chart for one semaphore: skip it when
 * blank, expired or on the job's own engine; otherwise keep one entry per
 * engine, the one with the largest timestamp.
 */
void megpu_bucket_add(struct megpu_bucket *bucket,
		      const struct megpu_sem_ref *ref, u32 engine,
		      const u64 *current_ts)
{
	u32 bit;

	if (!megpu_sem_unavailable(ref, engine, current_ts))
		return;
	bit = 1u << ref->engine;
	if (!(bucket->mask & bit) || ref->ts > bucket->wait[ref->engine].ts)
		bucket->wait[ref->engine] = *ref;
	bucket->mask |= bit;
}

/*
 * One resource of a job that runs on own->engine with semaphore @own:
 * add what it must wait for to @bucket (NULL: a job without implicit
 * sync, which waits for nothing), then make the resource object point at
 * the job (step 9).
 */
void megpu_plan_resource(struct megpu_bucket *bucket,
			 struct megpu_resource *res, bool write,
			 const struct megpu_sem_ref *own,
			 const u64 *current_ts)
{
	u32 e = own->engine, i;

	for (i = 0; bucket && i < MEGPU_MAX_ENGINES; i++) {
		megpu_bucket_add(bucket, &res->write[i], e, current_ts);
		if (write)
			megpu_bucket_add(bucket, &res->read[i], e, current_ts);
	}
	if (!write) {
		res->read[e] = *own;
		return;
	}
	/* it waited for every earlier user: waiting for it is enough */
	for (i = 0; bucket && i < MEGPU_MAX_ENGINES; i++) {
		res->write[i].sem = 0;
		res->read[i].sem = 0;
	}
	res->write[e] = *own;
}
