/* SPDX-License-Identifier: GPL-2.0 */
/* Copyright 2026 The megpu authors */
/*
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

TRACE_EVENT(megpu_job_submit,
	    TP_PROTO(u32 engine, u32 ctx, u32 bos, u32 in_syncs),
	    TP_ARGS(engine, ctx, bos, in_syncs),
	    TP_STRUCT__entry(__field(u32, engine)
			     __field(u32, ctx)
			     __field(u32, bos)
			     __field(u32, in_syncs)),
	    TP_fast_assign(__entry->engine = engine;
			   __entry->ctx = ctx;
			   __entry->bos = bos;
			   __entry->in_syncs = in_syncs;),
	    TP_printk("engine=%u ctx=%u bos=%u in_syncs=%u", __entry->engine,
		      __entry->ctx, __entry->bos, __entry->in_syncs)
);

TRACE_EVENT(megpu_job_run,
	    TP_PROTO(u32 engine, u64 seqno, u32 ctx),
	    TP_ARGS(engine, seqno, ctx),
	    TP_STRUCT__entry(__field(u32, engine)
			     __field(u64, seqno)
			     __field(u32, ctx)),
	    TP_fast_assign(__entry->engine = engine;
			   __entry->seqno = seqno;
			   __entry->ctx = ctx;),
	    TP_printk("engine=%u seqno=%llu ctx=%u", __entry->engine,
		      __entry->seqno, __entry->ctx)
);

TRACE_EVENT(megpu_job_done,
	    TP_PROTO(u32 engine, u64 seqno, int error),
	    TP_ARGS(engine, seqno, error),
	    TP_STRUCT__entry(__field(u32, engine)
			     __field(u64, seqno)
			     __field(int, error)),
	    TP_fast_assign(__entry->engine = engine;
			   __entry->seqno = seqno;
			   __entry->error = error;),
	    TP_printk("engine=%u seqno=%llu error=%d", __entry->engine,
		      __entry->seqno, __entry->error)
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
