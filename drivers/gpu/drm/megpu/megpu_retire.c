// SPDX-License-Identifier: GPL-2.0
/* Copyright 2026 The megpu authors */
/**
 * DOC: Retirement and faults
 *
 * The frame's TIMESTAMP writes the job's seqno and interrupts; the
 * interrupt retires every job up to the seqno the engine wrote (never one
 * interrupt per fence), in the hard handler unless a fault came with it.
 * A fault marks the job whose IB packet faulted, fails its consumers that
 * already wait on the GPU, and lets the engine go on.
 */

#include <linux/delay.h>
#include <linux/dma-fence.h>
#include <linux/sched/clock.h>
#include <drm/drm_drv.h>
#include <drm/drm_print.h>

#include "megpu_drv.h"
#include "megpu_compat.h"
#include "megpu_trace.h"

/*
 * Engine time: from the later of its start and the previous job's end.
 * The interrupt thread and the timeout handler both retire jobs.
 */
void megpu_job_account(struct megpu_engine *eng, struct megpu_job *job,
		       u64 now)
{
	unsigned long flags;
	u64 start;

	spin_lock_irqsave(&eng->job_lock, flags);
	start = max(job->start_ns, eng->last_retire_ns);
	eng->last_retire_ns = max(eng->last_retire_ns, now);
	spin_unlock_irqrestore(&eng->job_lock, flags);
	if (now > start)
		atomic64_add(now - start, &job->file->busy_ns[eng->index]);
}

/* Signal the hardware fence of a job that is off every list. */
void megpu_job_signal(struct megpu_job *job)
{
	/* its writes are issued, not necessarily landed: see unmap */
	if (!job->flush && !job->host_flush)
		megpu_flush_mark_dirty(job->engine->mdev);
	/*
	 * No walk of the in-fences here, in the hard handler: a producer
	 * that failed before this job ran was seen by run_job, one that
	 * failed while it was in a ring cancelled it
	 * (megpu_cancel_consumers) before its semaphore was signalled.
	 */
	trace_megpu_job_done(job->engine->index, job->seqno, job->error,
			     job->done_fence->context, job->done_fence->seqno);
	if (job->error && !job->hw_fence->error)
		dma_fence_set_error(job->hw_fence, job->error);
	/* after the dirty mark: an unmap sees the one or the other */
	smp_mb__before_atomic();
	atomic_dec(&job->vm->jobs_in_ring);
	megpu_syscall_ring_job(job->file, false);
	dma_fence_signal(job->hw_fence);
}

/* The device's time counters of @eng, for the timeline (megpu trace). */
static void megpu_trace_engine_stats(struct megpu_engine *eng)
{
	u64 wait_ns, busy_ns;

	wait_ns = megpu_eng_read(eng, MEGPU_ENG_WAIT_NS_LO);
	wait_ns |= (u64)megpu_eng_read(eng, MEGPU_ENG_WAIT_NS_HI) << 32;
	busy_ns = megpu_eng_read(eng, MEGPU_ENG_BUSY_NS_LO);
	busy_ns |= (u64)megpu_eng_read(eng, MEGPU_ENG_BUSY_NS_HI) << 32;
	trace_megpu_engine_stats(eng->index, READ_ONCE(*eng->seqno_cpu),
				 wait_ns, busy_ns,
				 megpu_eng_read(eng, MEGPU_ENG_WAITS));
}

/*
 * Retire every active job whose seqno the engine has written. A job with
 * the host-driven handshake waits for a host flush first: one flush for
 * all such jobs of this batch.
 */
void megpu_engine_retire(struct megpu_engine *eng)
{
	struct megpu_job *job, *tmp;
	unsigned long flags;
	LIST_HEAD(done);
	LIST_HEAD(flush);
	u64 seqno, now, target;

	if (trace_megpu_engine_stats_enabled())
		megpu_trace_engine_stats(eng);
	spin_lock_irqsave(&eng->job_lock, flags);
	seqno = READ_ONCE(*eng->seqno_cpu);
	list_for_each_entry_safe(job, tmp, &eng->active, active_node) {
		if (job->seqno > seqno)
			break;
		list_move_tail(&job->active_node,
			       job->host_flush ? &flush : &done);
	}
	spin_unlock_irqrestore(&eng->job_lock, flags);

	now = local_clock();
	list_for_each_entry_safe(job, tmp, &done, active_node) {
		list_del_init(&job->active_node);
		megpu_job_account(eng, job, now);
		megpu_job_signal(job);
	}
	if (list_empty(&flush))
		return;
	target = megpu_flush_start(eng->mdev);
	list_for_each_entry_safe(job, tmp, &flush, active_node) {
		list_del_init(&job->active_node);
		megpu_job_account(eng, job, now);
		megpu_flush_defer_job(job, target);
	}
}

/* Record a fault, fail the job it belongs to and let the engine go on. */
static void megpu_engine_fault(struct megpu_engine *eng)
{
	struct megpu_fault f = {
		.code = megpu_eng_read(eng, MEGPU_ENG_FAULT_CODE),
		.info = megpu_eng_read(eng, MEGPU_ENG_FAULT_INFO),
		.addr = megpu_eng_read(eng, MEGPU_ENG_FAULT_ADDR_LO) |
			(u64)megpu_eng_read(eng, MEGPU_ENG_FAULT_ADDR_HI) << 32,
		.head = megpu_eng_read(eng, MEGPU_ENG_FAULT_HEAD),
		.ctx = megpu_eng_read(eng, MEGPU_ENG_CTX_ID),
	};
	struct megpu_job *job, *iter;
	unsigned long flags;

	/*
	 * Under ring_lock, as the reset: a fault the reset already cleared
	 * must not blame a job the reset put back into the ring.
	 */
	mutex_lock(&eng->ring_lock);
	if (!(megpu_eng_read(eng, MEGPU_ENG_STATUS) &
	      MEGPU_ENG_STATUS_FAULTED)) {
		mutex_unlock(&eng->ring_lock);
		return;
	}
	/* test knob: a job timeout meets the fault being handled */
	if (IS_ENABLED(CONFIG_DRM_MEGPU_TESTING) &&
	    unlikely(eng->mdev->fault_hold_ms))
		msleep(min(eng->mdev->fault_hold_ms, MEGPU_FAULT_HOLD_MAX_MS));

	/* jobs before the faulting one are done: their seqnos are written */
	megpu_engine_retire(eng);

	spin_lock_irqsave(&eng->job_lock, flags);
	/* a fault in an IB names the IB packet's ring offset */
	job = list_first_entry_or_null(&eng->active, struct megpu_job,
				       active_node);
	list_for_each_entry(iter, &eng->active, active_node) {
		if (iter->ib_ring_off == f.head) {
			job = iter;
			break;
		}
	}
	if (job) {
		/* before the engine goes on to signal the job's semaphore */
		job->error = -EFAULT;
		dma_fence_set_error(job->hw_fence, -EFAULT);
		f.seqno = job->seqno;
	}
	eng->faults[eng->fault_count % MEGPU_FAULT_LOG] = f;
	eng->fault_count++;
	spin_unlock_irqrestore(&eng->job_lock, flags);
	if (job)
		megpu_cancel_consumers(eng->mdev);

	drm_dbg_driver(&eng->mdev->drm,
		       "%s: fault %u at 0x%llx (%s, %s), ring 0x%x, seqno %llu\n",
		       eng->name, f.code, f.addr,
		       f.info & MEGPU_FAULT_INFO_WRITE ? "write" : "read",
		       f.info & MEGPU_FAULT_INFO_IN_IB ? "ib" : "ring", f.head,
		       f.seqno);
	trace_megpu_fault(eng->index, f.code, f.addr, f.seqno);
	megpu_eng_write(eng, MEGPU_ENG_CONTROL, MEGPU_ENG_CTRL_FAULT_ACK);
	mutex_unlock(&eng->ring_lock);
}

/* Engine interrupt, in the IRQ thread: @status was read and cleared. */
void megpu_engine_irq(struct megpu_engine *eng, u32 status)
{
	bool cookie = dma_fence_begin_signalling();

	/*
	 * Idle says nothing about visibility; it ends host-flushed jobs'
	 * frames, whose timestamps raise no interrupt: retire below.
	 */
	if (status & MEGPU_ENG_IRQ_IDLE)
		eng->idle_irqs++;
	if (status & MEGPU_ENG_IRQ_FAULT)
		megpu_engine_fault(eng);
	megpu_engine_retire(eng);
	dma_fence_end_signalling(cookie);
}

/*
 * Engine interrupt without a fault, in the hard handler: retire what the
 * engine completed. Everything on this path takes spinlocks only, and the
 * fences' callbacks (the scheduler's, syncobjs') run in any context.
 */
void megpu_engine_irq_fast(struct megpu_engine *eng, u32 status)
{
	bool cookie = dma_fence_begin_signalling();

	if (status & MEGPU_ENG_IRQ_IDLE)
		eng->idle_irqs++;
	megpu_engine_retire(eng);
	dma_fence_end_signalling(cookie);
}
