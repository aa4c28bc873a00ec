/* SPDX-License-Identifier: GPL-2.0 */
/* Copyright 2026 The megpu authors */
/**
 * DOC: Ring-frame builder
 *
 * The layout of a job's ring frame (seed 001, steps 10-14 of FIG. 5): a
 * pure function of what the frame must hold, with no locks, allocation
 * or kernel API, so that the host unit tests build the very frames the
 * driver puts in its rings and decode them with libmegpu's decoder.
 *
 *	WAIT(sem, ts)* SET_CONTEXT(pd, ctx) [SET_MAILBOX(mbox, slots)]
 *	IB(ib) | NOP [FLUSH] SIGNAL(own sem, seqno) TIMESTAMP(seqno[, irq])
 *	[IDLE_SIGNAL]
 *
 * SET_CONTEXT and SET_MAILBOX are ours (the seed has one address space);
 * the FLUSH makes the job's writes visible before its semaphore and fence
 * say it is done (seed 004), and a job with the host-driven flush
 * handshake ends with IDLE_SIGNAL instead of a timestamp interrupt.
 */
#ifndef MEGPU_FRAME_H
#define MEGPU_FRAME_H

/* The host tests define u32, u64 and bool before including this. */
#ifdef __KERNEL__
#include <linux/types.h>
#endif

#include "megpu_hw_packets.h"

/**
 * struct megpu_frame_sem - a WAIT or SIGNAL: a semaphore slot and a value
 * @addr: device address of the semaphore object's slot
 * @value: the timestamp waited for or signalled
 */
struct megpu_frame_sem {
	u64 addr;
	u64 value;
};

/**
 * struct megpu_frame_desc - everything a job's frame holds
 * @nwaits: entries of @waits
 * @waits: the wait bucket, one entry per engine at most
 * @pd: the job's page directory
 * @ctx: its GPU context
 * @mailbox: the engine takes a SET_MAILBOX (waves)
 * @mbox_addr: the file's mailbox
 * @mbox_slots: its slots
 * @cancelled: the IB packet becomes a NOP of the same length
 * @ib_va: the job's IB
 * @ib_dwords: its length
 * @flush: a FLUSH packet follows the IB
 * @host_flush: the host-driven flush handshake: no timestamp interrupt,
 *	an IDLE_SIGNAL ends the frame
 * @signal: the job's own semaphore and timestamp
 * @seqno_addr: where the TIMESTAMP packet writes the seqno
 * @seqno: the job's timestamp
 */
struct megpu_frame_desc {
	u32 nwaits;
	struct megpu_frame_sem waits[MEGPU_MAX_ENGINES];
	u64 pd;
	u32 ctx;
	bool mailbox;
	u64 mbox_addr;
	u32 mbox_slots;
	bool cancelled;
	u64 ib_va;
	u32 ib_dwords;
	bool flush;
	bool host_flush;
	struct megpu_frame_sem signal;
	u64 seqno_addr;
	u64 seqno;
};

/* The longest frame megpu_frame_build() writes, in dwords. */
#define MEGPU_FRAME_MAX_DWORDS						\
	(MEGPU_MAX_ENGINES * (1 + MEGPU_PKT_WAIT_COUNT) +		\
	 1 + MEGPU_PKT_SET_CONTEXT_COUNT + 1 + MEGPU_PKT_SET_MAILBOX_COUNT + \
	 1 + MEGPU_PKT_IB_COUNT + 1 + MEGPU_PKT_FLUSH_COUNT +		\
	 1 + MEGPU_PKT_SIGNAL_COUNT + 1 + MEGPU_PKT_TIMESTAMP_COUNT +	\
	 1 + MEGPU_PKT_IDLE_SIGNAL_COUNT)

/*
 * Write the frame @d into @ring (@ring_dwords, a power of two) from dword
 * @tail on, wrapping around; returns the dword after it. *@ib_dw gets the
 * dword of the IB (or NOP) packet: a fault in the IB names it.
 */
u32 megpu_frame_build(u32 *ring, u32 ring_dwords, u32 tail,
		      const struct megpu_frame_desc *d, u32 *ib_dw);

#endif /* MEGPU_FRAME_H */
