// SPDX-License-Identifier: GPL-2.0
/* Copyright 2026 The megpu authors */
/**
 * DOC: Engine rings
 *
 * The rings of the engines (seed 001: base, size, head and tail, RP == WP
 * when empty). A job's frame is laid out by megpu_frame_build()
 * (megpu_frame.c) from the waits and the semaphore megpu_sem.c planned.
 * The ring is only written from the engine's scheduler (run_job) and from
 * its timeout handler while the scheduler is stopped; ring_lock keeps the
 * two apart anyway.
 */

#include <linux/delay.h>
#include <linux/dma-mapping.h>
#include <linux/iopoll.h>
#include <drm/drm_print.h>

#include "megpu_drv.h"
#include "megpu_hw_packets.h"
#include "megpu_frame.h"
#include "megpu_trace.h"

#define MEGPU_RESET_TIMEOUT_US	1000000

void megpu_ring_emit_job(struct megpu_engine *eng, struct megpu_job *job)
{
	const struct megpu_frame *frame = &job->frame;
	struct megpu_frame_desc d = {
		.nwaits = frame->nwaits,
		.pd = job->vm->pd_dma,
		.ctx = job->vm->ctx_id,
		.mailbox = eng->mdev->caps & MEGPU_CAP_WAVES,
		.mbox_addr = job->file->mbox.dma,
		.mbox_slots = job->file->mbox.slots,
		.cancelled = job->cancelled,
		.ib_va = job->ib_va,
		.ib_dwords = job->ib_dwords,
		.flush = job->flush,
		.host_flush = job->host_flush,
		.signal = {
			megpu_sem_addr(eng->mdev, frame->own.sem),
			frame->own.ts,
		},
		.seqno_addr = eng->seqno_dma,
		.seqno = job->seqno,
	};
	unsigned int i;
	u32 start, ib_dw;

	BUILD_BUG_ON(MEGPU_FRAME_MAX_DWORDS * 4 > MEGPU_FRAME_MAX_BYTES);
	lockdep_assert_held(&eng->ring_lock);
	start = eng->tail;
	eng->frames[eng->frame_count % MEGPU_FAULT_LOG] = start;
	eng->frame_log[eng->frame_count % MEGPU_FAULT_LOG] = *frame;
	eng->frame_count++;

	for (i = 0; i < frame->nwaits; i++)
		d.waits[i] = (struct megpu_frame_sem){
			megpu_sem_addr(eng->mdev, frame->waits[i].sem),
			frame->waits[i].ts,
		};
	eng->tail = megpu_frame_build(eng->ring, MEGPU_RING_SIZE / 4,
				      eng->tail / 4, &d, &ib_dw) * 4;
	job->ib_ring_off = ib_dw * 4;
}

/*
 * Turn the IB packet of a job in the ring into a NOP of the same length.
 * Only for a job whose frame waits for a producer that has not signalled:
 * its engine cannot have fetched the IB packet yet.
 */
void megpu_ring_cancel_ib(struct megpu_engine *eng, struct megpu_job *job)
{
	lockdep_assert_held(&eng->job_lock);
	WRITE_ONCE(eng->ring[job->ib_ring_off / 4],
		   MEGPU_PKT_HEADER(MEGPU_PKT_NOP, MEGPU_PKT_IB_COUNT, 0));
}

/* Let the engine fetch what was emitted: the doorbell. */
void megpu_ring_kick(struct megpu_engine *eng)
{
	lockdep_assert_held(&eng->ring_lock);
	/* the packets must be in memory before the device sees the tail */
	dma_wmb();
	megpu_eng_write(eng, MEGPU_ENG_RING_TAIL, eng->tail);
	trace_megpu_doorbell(eng->index, eng->tail);
}

/*
 * Stop the engine at a packet boundary and empty its ring. Packets that
 * were in the ring are dropped; the caller emits again what must run.
 */
int megpu_engine_hw_reset(struct megpu_engine *eng)
{
	u32 status;
	int ret;

	megpu_eng_write(eng, MEGPU_ENG_CONTROL, MEGPU_ENG_CTRL_RESET);
	ret = readl_poll_timeout(eng->regs + MEGPU_ENG_STATUS, status,
				 !(status & MEGPU_ENG_STATUS_RESETTING),
				 10, MEGPU_RESET_TIMEOUT_US);
	if (ret) {
		drm_err(&eng->mdev->drm, "%s: engine reset timed out\n",
			eng->name);
		return ret;
	}
	eng->tail = 0;
	eng->frame_count = 0;
	return 0;
}

/* Tell the engine where its ring is, and start it empty. */
int megpu_ring_hw_init(struct megpu_engine *eng)
{
	megpu_eng_write(eng, MEGPU_ENG_RING_BASE_LO,
			lower_32_bits(eng->ring_dma));
	megpu_eng_write(eng, MEGPU_ENG_RING_BASE_HI,
			upper_32_bits(eng->ring_dma));
	megpu_eng_write(eng, MEGPU_ENG_RING_SIZE, MEGPU_RING_SIZE);
	return megpu_engine_hw_reset(eng);
}

int megpu_ring_init(struct megpu_engine *eng)
{
	struct device *dev = eng->mdev->drm.dev;

	eng->ring = dma_alloc_coherent(dev, MEGPU_RING_SIZE, &eng->ring_dma,
				       GFP_KERNEL);
	if (!eng->ring)
		return -ENOMEM;
	mutex_init(&eng->ring_lock);
	return megpu_ring_hw_init(eng);
}

/* The hardware was reset already (megpu_remove()). */
void megpu_ring_fini(struct megpu_engine *eng)
{
	dma_free_coherent(eng->mdev->drm.dev, MEGPU_RING_SIZE, eng->ring,
			  eng->ring_dma);
	mutex_destroy(&eng->ring_lock);
}
