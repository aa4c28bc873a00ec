// SPDX-License-Identifier: GPL-2.0
/* Copyright 2026 The megpu authors */
/**
 * DOC: Ring-frame builder, the layout
 *
 * See megpu_frame.h: the frame a job puts in its engine's ring, built by
 * a pure function that the host tests compile as it is.
 */

#include "megpu_frame.h"

struct frame_out {
	u32 *ring;
	u32 mask;
	u32 pos;
};

static void put(struct frame_out *o, u32 dw)
{
	o->ring[o->pos & o->mask] = dw;
	o->pos = (o->pos + 1) & o->mask;
}

static void put64(struct frame_out *o, u64 v)
{
	put(o, (u32)v);
	put(o, (u32)(v >> 32));
}

static void put_sem(struct frame_out *o, u32 op,
		    const struct megpu_frame_sem *s)
{
	put(o, MEGPU_PKT_HEADER(op, MEGPU_PKT_WAIT_COUNT, 0));
	put64(o, s->addr);
	put64(o, s->value);
}

u32 megpu_frame_build(u32 *ring, u32 ring_dwords, u32 tail,
		      const struct megpu_frame_desc *d, u32 *ib_dw)
{
	struct frame_out o = { ring, ring_dwords - 1, tail & (ring_dwords - 1) };
	u32 i;

	/* steps 10-11: a WAIT per bucket entry, then the IB */
	for (i = 0; i < d->nwaits && i < MEGPU_MAX_ENGINES; i++)
		put_sem(&o, MEGPU_PKT_WAIT, &d->waits[i]);

	put(&o, MEGPU_PKT_HEADER(MEGPU_PKT_SET_CONTEXT,
				 MEGPU_PKT_SET_CONTEXT_COUNT, 0));
	put64(&o, d->pd);
	put(&o, d->ctx);
	/* the engine keeps a mailbox across jobs: always this file's */
	if (d->mailbox) {
		put(&o, MEGPU_PKT_HEADER(MEGPU_PKT_SET_MAILBOX,
					 MEGPU_PKT_SET_MAILBOX_COUNT, 0));
		put64(&o, d->mbox_addr);
		put(&o, d->mbox_slots);
	}

	*ib_dw = o.pos;
	put(&o, MEGPU_PKT_HEADER(d->cancelled ? MEGPU_PKT_NOP : MEGPU_PKT_IB,
				 MEGPU_PKT_IB_COUNT, 0));
	put64(&o, d->ib_va);
	put(&o, d->ib_dwords);

	if (d->flush)
		put(&o, MEGPU_PKT_HEADER(MEGPU_PKT_FLUSH,
					 MEGPU_PKT_FLUSH_COUNT, 0));
	/* step 12: the operation's own semaphore */
	put_sem(&o, MEGPU_PKT_SIGNAL, &d->signal);

	/*
	 * Step 13: the timestamp. A host-flushed job ends with the engine's
	 * idle signal instead of a timestamp interrupt: the seed's "wait
	 * for idle" step (seed 004).
	 */
	put(&o, MEGPU_PKT_HEADER(MEGPU_PKT_TIMESTAMP, MEGPU_PKT_TIMESTAMP_COUNT,
				 d->host_flush ? 0 : MEGPU_TIMESTAMP_FLAG_IRQ));
	put64(&o, d->seqno_addr);
	put64(&o, d->seqno);
	if (d->host_flush)
		put(&o, MEGPU_PKT_HEADER(MEGPU_PKT_IDLE_SIGNAL,
					 MEGPU_PKT_IDLE_SIGNAL_COUNT, 0));
	return o.pos;
}
