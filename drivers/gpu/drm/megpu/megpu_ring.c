// SPDX-License-Identifier: GPL-2.0
/* Copyright 2026 The megpu authors */
/*
 * Engine rings and the ring-frame builder. A job's frame is
 *
 *	WAIT(sem, ts)* SET_CONTEXT(pd, ctx) [SET_MAILBOX(mbox, slots)] IB(ib)
 *	[FLUSH] SIGNAL(own sem, seqno) TIMESTAMP(seqno, irq)
 *
 * or, for a job with the host-driven flush handshake,
 *
 *	... SIGNAL(own sem, seqno) TIMESTAMP(seqno) IDLE_SIGNAL
 *
 * with the waits and the semaphore planned by megpu_sem.c and the FLUSH
 * that makes the job's writes visible before its semaphore and fence say
 * it is done (megpu_flush.c).
 * The ring is only written from the engine's scheduler (run_job) and from
 * its timeout handler while the scheduler is stopped; ring_lock keeps the
 * two apart anyway.
 */

#include <linux/delay.h>
#include <linux/dma-mapping.h>
#include <linux/iopoll.h>
#include <drm/drm_print.h>

#include "megpu_drv.h"
#include "megpu_trace.h"

#define MEGPU_RESET_TIMEOUT_US	1000000

static void ring_put(struct megpu_engine *eng, u32 dw)
{
	eng->ring[eng->tail / 4] = dw;
	eng->tail = (eng->tail + 4) & (MEGPU_RING_SIZE - 1);
}

static void ring_put64(struct megpu_engine *eng, u64 v)
{
	ring_put(eng, lower_32_bits(v));
	ring_put(eng, upper_32_bits(v));
}

static void ring_sem(struct megpu_engine *eng, u32 op,
		     const struct megpu_sem_ref *ref)
{
	ring_put(eng, MEGPU_PKT_HEADER(op, MEGPU_PKT_WAIT_COUNT, 0));
	ring_put64(eng, megpu_sem_addr(eng->mdev, ref->sem));
	ring_put64(eng, ref->ts);
}

void megpu_ring_emit_job(struct megpu_engine *eng, struct megpu_job *job)
{
	const struct megpu_frame *frame = &job->frame;
	unsigned int i;
	u32 start;

	lockdep_assert_held(&eng->ring_lock);
	start = eng->tail;
	eng->frames[eng->frame_count % MEGPU_FAULT_LOG] = start;
	eng->frame_log[eng->frame_count % MEGPU_FAULT_LOG] = *frame;
	eng->frame_count++;

	for (i = 0; i < frame->nwaits; i++)
		ring_sem(eng, MEGPU_PKT_WAIT, &frame->waits[i]);

	ring_put(eng, MEGPU_PKT_HEADER(MEGPU_PKT_SET_CONTEXT,
				       MEGPU_PKT_SET_CONTEXT_COUNT, 0));
	ring_put64(eng, job->vm->pd_dma);
	ring_put(eng, job->vm->ctx_id);
	/* the engine keeps a mailbox across jobs: always this file's */
	if (eng->mdev->caps & MEGPU_CAP_WAVES) {
		ring_put(eng, MEGPU_PKT_HEADER(MEGPU_PKT_SET_MAILBOX,
					       MEGPU_PKT_SET_MAILBOX_COUNT, 0));
		ring_put64(eng, job->file->mbox.dma);
		ring_put(eng, job->file->mbox.slots);
	}

	job->ib_ring_off = eng->tail;
	ring_put(eng, MEGPU_PKT_HEADER(job->cancelled ? MEGPU_PKT_NOP :
				       MEGPU_PKT_IB, MEGPU_PKT_IB_COUNT, 0));
	ring_put64(eng, job->ib_va);
	ring_put(eng, job->ib_dwords);

	if (job->flush)
		ring_put(eng, MEGPU_PKT_HEADER(MEGPU_PKT_FLUSH,
					       MEGPU_PKT_FLUSH_COUNT, 0));
	ring_sem(eng, MEGPU_PKT_SIGNAL, &frame->own);

	/*
	 * A host-flushed job ends with the engine's idle signal instead of
	 * a timestamp interrupt: the seed's "wait for idle" step.
	 */
	ring_put(eng, MEGPU_PKT_HEADER(MEGPU_PKT_TIMESTAMP,
				       MEGPU_PKT_TIMESTAMP_COUNT,
				       job->host_flush ? 0 :
				       MEGPU_TIMESTAMP_FLAG_IRQ));
	ring_put64(eng, eng->seqno_dma);
	ring_put64(eng, job->seqno);
	if (job->host_flush)
		ring_put(eng, MEGPU_PKT_HEADER(MEGPU_PKT_IDLE_SIGNAL,
					       MEGPU_PKT_IDLE_SIGNAL_COUNT, 0));

	WARN_ON(((eng->tail - start) & (MEGPU_RING_SIZE - 1)) >
		MEGPU_FRAME_MAX_BYTES);
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

int megpu_ring_init(struct megpu_engine *eng)
{
	struct device *dev = eng->mdev->drm.dev;

	eng->ring = dma_alloc_coherent(dev, MEGPU_RING_SIZE, &eng->ring_dma,
				       GFP_KERNEL);
	if (!eng->ring)
		return -ENOMEM;
	mutex_init(&eng->ring_lock);

	megpu_eng_write(eng, MEGPU_ENG_RING_BASE_LO,
			lower_32_bits(eng->ring_dma));
	megpu_eng_write(eng, MEGPU_ENG_RING_BASE_HI,
			upper_32_bits(eng->ring_dma));
	megpu_eng_write(eng, MEGPU_ENG_RING_SIZE, MEGPU_RING_SIZE);
	return megpu_engine_hw_reset(eng);
}

/* The hardware was reset already (megpu_remove()). */
void megpu_ring_fini(struct megpu_engine *eng)
{
	dma_free_coherent(eng->mdev->drm.dev, MEGPU_RING_SIZE, eng->ring,
			  eng->ring_dma);
	mutex_destroy(&eng->ring_lock);
}
