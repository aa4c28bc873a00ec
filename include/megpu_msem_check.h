/* SPDX-License-Identifier: MIT */
/*
 * The multi-summed semaphore's safety, checked at every step of a run
 * from the devices' own step trace (seed 000; MEGPU_MGPU_SCHED_TRACED in
 * megpu_hw.h). Pure: the qtest, the guest test and the host test use this
 * one copy.
 *
 * The trace is the run's steps in the order they were taken (one turn
 * each). Replaying it proves two things at every step:
 *
 * - it is a real serialization: every write makes its slot one more or
 *   one less than the replayed value, every read sees the replayed value
 *   (a lost update or a stale read shows here);
 * - safety: the waits completed so far never exceed the signals so far
 *   plus the slots' initial sum (a wait completes at the last read of a
 *   check whose sum is not negative).
 */
#ifndef MEGPU_MSEM_CHECK_H
#define MEGPU_MSEM_CHECK_H

#include <stdint.h>

#include "megpu_hw_mgpu.h"

struct megpu_msem_check {
	unsigned int signals;	/* SIGNAL steps */
	unsigned int waits;	/* waits completed */
	unsigned int undos;	/* failed checks undone */
	int bad;		/* first bad record, -1: none */
	const char *why;	/* what was wrong with it */
};

/* Where an agent is in its MSEM_WAIT, as the replay sees it. */
enum {
	MEGPU_MSEM_IDLE,	/* between packets */
	MEGPU_MSEM_CHECK,	/* decremented, reading the slots */
	MEGPU_MSEM_FAILED,	/* the sum was negative: an undo comes */
	MEGPU_MSEM_RECHECK,	/* undone, reading the slots again */
};

/*
 * Check @n records (MEGPU_MGPU_REC_SIZE bytes each, as the device wrote
 * them) of a run of MSEM packets on one slot block whose WAITs all use
 * @mask, the slots starting at @init. 0 if every step is right, else -1
 * with r->bad and r->why set.
 */
static inline int megpu_msem_check_trace(const uint8_t *recs, unsigned int n,
					 unsigned int mask,
					 const uint32_t *init,
					 struct megpu_msem_check *r)
{
	uint32_t slot[MEGPU_MGPU_MAX_AGENTS], sum[MEGPU_MGPU_MAX_AGENTS];
	unsigned int state[MEGPU_MGPU_MAX_AGENTS];
	unsigned int reads[MEGPU_MGPU_MAX_AGENTS];
	unsigned int need = __builtin_popcount(mask), i, a;
	int64_t credit = 0;

	*r = (struct megpu_msem_check) { .bad = -1 };
	for (a = 0; a < MEGPU_MGPU_MAX_AGENTS; a++) {
		slot[a] = init ? init[a] : 0;
		if (mask & (1u << a))
			credit += (int32_t)slot[a];
		state[a] = MEGPU_MSEM_IDLE;
		sum[a] = 0;
		reads[a] = 0;
	}
	for (i = 0; i < n; i++) {
		const uint8_t *rec = recs + (uint64_t)i * MEGPU_MGPU_REC_SIZE;
		unsigned int kind = rec[MEGPU_MGPU_REC_KIND];
		unsigned int off = rec[MEGPU_MGPU_REC_OFFSET], w = off / 4;
		uint32_t v = rec[MEGPU_MGPU_REC_VALUE] |
			     rec[MEGPU_MGPU_REC_VALUE + 1] << 8 |
			     rec[MEGPU_MGPU_REC_VALUE + 2] << 16 |
			     (uint32_t)rec[MEGPU_MGPU_REC_VALUE + 3] << 24;
		const char *why = NULL;

		a = rec[MEGPU_MGPU_REC_AGENT];
		if (a >= MEGPU_MGPU_MAX_AGENTS || !(mask & (1u << a))) {
			why = "an agent not in the mask";
		} else if (kind == MEGPU_MGPU_STEP_READ) {
			if ((off & 3) || w >= MEGPU_MGPU_MAX_AGENTS ||
			    !(mask & (1u << w)))
				why = "a read of a slot not in the mask";
			else if (v != slot[w])
				why = "a read that is not the last write";
			else if (state[a] != MEGPU_MSEM_CHECK &&
				 state[a] != MEGPU_MSEM_RECHECK)
				why = "a read outside a check";
			sum[a] += v;
			if (!why && ++reads[a] == need) {
				if (state[a] == MEGPU_MSEM_RECHECK) {
					state[a] = MEGPU_MSEM_IDLE;
				} else if (sum[a] & 0x80000000u) {
					state[a] = MEGPU_MSEM_FAILED;
				} else {
					state[a] = MEGPU_MSEM_IDLE;
					r->waits++;
				}
			}
		} else if (off != 4 * a) {
			why = "a write to another agent's slot";
		} else if (kind == MEGPU_MGPU_STEP_SIGNAL) {
			if (state[a] != MEGPU_MSEM_IDLE)
				why = "a signal inside a wait";
			else if (v != slot[a] + 1)
				why = "a signal that lost an update";
			r->signals++;
		} else if (kind == MEGPU_MGPU_STEP_WAIT_DEC) {
			if (state[a] != MEGPU_MSEM_IDLE)
				why = "a wait inside a wait";
			else if (v != slot[a] - 1)
				why = "a decrement that lost an update";
			state[a] = MEGPU_MSEM_CHECK;
			sum[a] = 0;
			reads[a] = 0;
		} else if (kind == MEGPU_MGPU_STEP_WAIT_UNDO) {
			if (state[a] != MEGPU_MSEM_FAILED)
				why = "an undo after no failed check";
			else if (v != slot[a] + 1)
				why = "an undo that lost an update";
			state[a] = MEGPU_MSEM_RECHECK;
			sum[a] = 0;
			reads[a] = 0;
			r->undos++;
		} else {
			why = "not an MSEM step";
		}
		if (!why && kind != MEGPU_MGPU_STEP_READ)
			slot[a] = v;
		if (!why && r->waits > r->signals + credit)
			why = "more waits completed than signals";
		if (why) {
			r->bad = (int)i;
			r->why = why;
			return -1;
		}
	}
	return 0;
}

#endif /* MEGPU_MSEM_CHECK_H */
