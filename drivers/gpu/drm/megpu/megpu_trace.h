/* SPDX-License-Identifier: GPL-2.0 */
/* Copyright 2026 The megpu authors */
/**
 * DOC: Tracepoints
 *
 * Jobs run, done and timed out, and faults, per engine (tracefs events
 * megpu:*).
 */
#undef TRACE_SYSTEM
#define TRACE_SYSTEM megpu

#if !defined(MEGPU_TRACE_H) || defined(TRACE_HEADER_MULTI_READ)
#define MEGPU_TRACE_H

#include <linux/tracepoint.h>

/**
 * DOC: megpu tracepoints
 *
 * The events `megpu trace` turns into a timeline (issue 12). A job is
 * named by its scheduler fence, (fctx, fseq): the finished fence's
 * context and seqno, known from submit on; run_job adds the hardware
 * seqno on its engine, which the completion events carry.
 */

TRACE_EVENT(megpu_job_submit,
	    TP_PROTO(u32 engine, u32 ctx, u32 bos, u32 in_syncs, u64 fctx,
		     u64 fseq),
	    TP_ARGS(engine, ctx, bos, in_syncs, fctx, fseq),
	    TP_STRUCT__entry(__field(u32, engine)
			     __field(u32, ctx)
			     __field(u32, bos)
			     __field(u32, in_syncs)
			     __field(u64, fctx)
			     __field(u64, fseq)),
	    TP_fast_assign(__entry->engine = engine;
			   __entry->ctx = ctx;
			   __entry->bos = bos;
			   __entry->in_syncs = in_syncs;
			   __entry->fctx = fctx;
			   __entry->fseq = fseq;),
	    TP_printk("engine=%u ctx=%u bos=%u in_syncs=%u fctx=%llu fseq=%llu",
		      __entry->engine, __entry->ctx, __entry->bos,
		      __entry->in_syncs, __entry->fctx, __entry->fseq)
);

/* A dependency of job (fctx, fseq) on another megpu job; gpu: as a WAIT. */
TRACE_EVENT(megpu_job_dep,
	    TP_PROTO(u64 fctx, u64 fseq, u64 dep_fctx, u64 dep_fseq, bool gpu),
	    TP_ARGS(fctx, fseq, dep_fctx, dep_fseq, gpu),
	    TP_STRUCT__entry(__field(u64, fctx)
			     __field(u64, fseq)
			     __field(u64, dep_fctx)
			     __field(u64, dep_fseq)
			     __field(bool, gpu)),
	    TP_fast_assign(__entry->fctx = fctx;
			   __entry->fseq = fseq;
			   __entry->dep_fctx = dep_fctx;
			   __entry->dep_fseq = dep_fseq;
			   __entry->gpu = gpu;),
	    TP_printk("fctx=%llu fseq=%llu dep_fctx=%llu dep_fseq=%llu gpu=%u",
		      __entry->fctx, __entry->fseq, __entry->dep_fctx,
		      __entry->dep_fseq, __entry->gpu)
);

/* The scheduler found the job's dependencies resolved (prepare_job). */
TRACE_EVENT(megpu_job_ready,
	    TP_PROTO(u32 engine, u64 fctx, u64 fseq),
	    TP_ARGS(engine, fctx, fseq),
	    TP_STRUCT__entry(__field(u32, engine)
			     __field(u64, fctx)
			     __field(u64, fseq)),
	    TP_fast_assign(__entry->engine = engine;
			   __entry->fctx = fctx;
			   __entry->fseq = fseq;),
	    TP_printk("engine=%u fctx=%llu fseq=%llu", __entry->engine,
		      __entry->fctx, __entry->fseq)
);

TRACE_EVENT(megpu_job_run,
	    TP_PROTO(u32 engine, u64 seqno, u32 ctx, u64 fctx, u64 fseq,
		     u32 waits),
	    TP_ARGS(engine, seqno, ctx, fctx, fseq, waits),
	    TP_STRUCT__entry(__field(u32, engine)
			     __field(u64, seqno)
			     __field(u32, ctx)
			     __field(u64, fctx)
			     __field(u64, fseq)
			     __field(u32, waits)),
	    TP_fast_assign(__entry->engine = engine;
			   __entry->seqno = seqno;
			   __entry->ctx = ctx;
			   __entry->fctx = fctx;
			   __entry->fseq = fseq;
			   __entry->waits = waits;),
	    TP_printk("engine=%u seqno=%llu ctx=%u fctx=%llu fseq=%llu waits=%u",
		      __entry->engine, __entry->seqno, __entry->ctx,
		      __entry->fctx, __entry->fseq, __entry->waits)
);

/* One WAIT of a frame: engine @engine's job @seqno waits for @wait_ts. */
TRACE_EVENT(megpu_frame_wait,
	    TP_PROTO(u32 engine, u64 seqno, u32 wait_engine, u64 wait_ts),
	    TP_ARGS(engine, seqno, wait_engine, wait_ts),
	    TP_STRUCT__entry(__field(u32, engine)
			     __field(u64, seqno)
			     __field(u32, wait_engine)
			     __field(u64, wait_ts)),
	    TP_fast_assign(__entry->engine = engine;
			   __entry->seqno = seqno;
			   __entry->wait_engine = wait_engine;
			   __entry->wait_ts = wait_ts;),
	    TP_printk("engine=%u seqno=%llu wait_engine=%u wait_ts=%llu",
		      __entry->engine, __entry->seqno, __entry->wait_engine,
		      __entry->wait_ts)
);

TRACE_EVENT(megpu_doorbell,
	    TP_PROTO(u32 engine, u32 tail),
	    TP_ARGS(engine, tail),
	    TP_STRUCT__entry(__field(u32, engine)
			     __field(u32, tail)),
	    TP_fast_assign(__entry->engine = engine;
			   __entry->tail = tail;),
	    TP_printk("engine=%u tail=0x%x", __entry->engine, __entry->tail)
);

/* An MSI-X vector fired with these status bits (hard IRQ). */
TRACE_EVENT(megpu_irq,
	    TP_PROTO(u32 vector, u32 status),
	    TP_ARGS(vector, status),
	    TP_STRUCT__entry(__field(u32, vector)
			     __field(u32, status)),
	    TP_fast_assign(__entry->vector = vector;
			   __entry->status = status;),
	    TP_printk("vector=%u status=0x%x", __entry->vector,
		      __entry->status)
);

/*
 * The device's counters of an engine at a retire: completed seqno, the
 * time it spent stalled in WAIT packets and busy on packets (ns, device
 * clock, cumulative since the engine's reset) and the WAITs it ran.
 */
TRACE_EVENT(megpu_engine_stats,
	    TP_PROTO(u32 engine, u64 seqno, u64 wait_ns, u64 busy_ns,
		     u32 waits),
	    TP_ARGS(engine, seqno, wait_ns, busy_ns, waits),
	    TP_STRUCT__entry(__field(u32, engine)
			     __field(u64, seqno)
			     __field(u64, wait_ns)
			     __field(u64, busy_ns)
			     __field(u32, waits)),
	    TP_fast_assign(__entry->engine = engine;
			   __entry->seqno = seqno;
			   __entry->wait_ns = wait_ns;
			   __entry->busy_ns = busy_ns;
			   __entry->waits = waits;),
	    TP_printk("engine=%u seqno=%llu wait_ns=%llu busy_ns=%llu waits=%u",
		      __entry->engine, __entry->seqno, __entry->wait_ns,
		      __entry->busy_ns, __entry->waits)
);

/* The frame's SIGNAL and TIMESTAMP ran: the hardware fence signals. */
TRACE_EVENT(megpu_job_done,
	    TP_PROTO(u32 engine, u64 seqno, int error, u64 fctx, u64 fseq),
	    TP_ARGS(engine, seqno, error, fctx, fseq),
	    TP_STRUCT__entry(__field(u32, engine)
			     __field(u64, seqno)
			     __field(int, error)
			     __field(u64, fctx)
			     __field(u64, fseq)),
	    TP_fast_assign(__entry->engine = engine;
			   __entry->seqno = seqno;
			   __entry->error = error;
			   __entry->fctx = fctx;
			   __entry->fseq = fseq;),
	    TP_printk("engine=%u seqno=%llu error=%d fctx=%llu fseq=%llu",
		      __entry->engine, __entry->seqno, __entry->error,
		      __entry->fctx, __entry->fseq)
);

/* A host flush started (@target) or was acknowledged (@done). */
TRACE_EVENT(megpu_host_flush,
	    TP_PROTO(u64 target, u64 done),
	    TP_ARGS(target, done),
	    TP_STRUCT__entry(__field(u64, target)
			     __field(u64, done)),
	    TP_fast_assign(__entry->target = target;
			   __entry->done = done;),
	    TP_printk("target=%llu done=%llu", __entry->target,
		      __entry->done)
);

TRACE_EVENT(megpu_job_timeout,
	    TP_PROTO(u32 engine, u64 seqno),
	    TP_ARGS(engine, seqno),
	    TP_STRUCT__entry(__field(u32, engine)
			     __field(u64, seqno)),
	    TP_fast_assign(__entry->engine = engine;
			   __entry->seqno = seqno;),
	    TP_printk("engine=%u seqno=%llu", __entry->engine,
		      __entry->seqno)
);

TRACE_EVENT(megpu_fault,
	    TP_PROTO(u32 engine, u32 code, u64 addr, u64 seqno),
	    TP_ARGS(engine, code, addr, seqno),
	    TP_STRUCT__entry(__field(u32, engine)
			     __field(u32, code)
			     __field(u64, addr)
			     __field(u64, seqno)),
	    TP_fast_assign(__entry->engine = engine;
			   __entry->code = code;
			   __entry->addr = addr;
			   __entry->seqno = seqno;),
	    TP_printk("engine=%u code=%u addr=0x%llx seqno=%llu",
		      __entry->engine, __entry->code, __entry->addr,
		      __entry->seqno)
);

#endif /* MEGPU_TRACE_H */

#undef TRACE_INCLUDE_PATH
#define TRACE_INCLUDE_PATH .
#undef TRACE_INCLUDE_FILE
#define TRACE_INCLUDE_FILE megpu_trace
#include <trace/define_trace.h>
