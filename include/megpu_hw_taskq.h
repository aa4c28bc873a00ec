/* SPDX-License-Identifier: MIT */
/*
 * megpu hardware contract: task queues (seed 002):
 * the queue header, descriptors, notifications and their checks.
 *
 * Part of include/megpu_hw.h (which includes every part); included
 * by the device and the driver. Prose: Documentation/megpu-hw.rst.
 */
#ifndef MEGPU_HW_TASKQ_H
#define MEGPU_HW_TASKQ_H

#include "megpu_hw_wave.h"

/*
 * Task queues (seed 002, "public queues"): memory shared by CPU threads
 * and engines, little endian, MEGPU_TQ_ALIGN aligned: a header, then
 * @size descriptors of MEGPU_TQ_DESC_SIZE bytes (a FIFO ring; slot
 * index & (size - 1)). head and tail are free-running 32-bit indexes.
 * Every dequeuer (CPU thread, engine, driver) takes the lock word with
 * an atomic compare-and-swap 0 -> its owner id, re-checks eligibility,
 * copies a contiguous run of descriptors from head, stores head + n and
 * releases the lock with a store of 0. Producers append under the lock
 * too: descriptors first, then tail. The counters are atomic adds.
 */
#define MEGPU_TQ_MAGIC			0x5154474d	/* "MGTQ" */
#define MEGPU_TQ_HDR_MAGIC		0x00	/* u32 */
#define MEGPU_TQ_HDR_LOCK		0x04	/* u32: 0 free, else owner */
#define MEGPU_TQ_HDR_SIZE		0x08	/* u32: slots, power of two */
#define MEGPU_TQ_HDR_FLAGS		0x0c	/* u32: MEGPU_TQ_F_* */
#define MEGPU_TQ_HDR_HEAD		0x10	/* u32: next to dequeue */
#define MEGPU_TQ_HDR_TAIL		0x14	/* u32: next to enqueue */
#define MEGPU_TQ_HDR_BATCH_GPU		0x18	/* u32: 0: MEGPU_TQ_DEF_* */
#define MEGPU_TQ_HDR_BATCH_CPU		0x1c	/* u32: 0: MEGPU_TQ_DEF_* */
#define MEGPU_TQ_HDR_GPU_TASKS		0x20	/* u32 counters ... */
#define MEGPU_TQ_HDR_CPU_TASKS		0x24
#define MEGPU_TQ_HDR_GPU_BATCHES	0x28
#define MEGPU_TQ_HDR_CPU_BATCHES	0x2c
#define MEGPU_TQ_HDR_GPU_STEALS		0x30	/* batches stolen from here */
#define MEGPU_TQ_HDR_CPU_STEALS		0x34
#define MEGPU_TQ_HDR_LOCK_RETRIES	0x38	/* failed compare-and-swaps */
#define MEGPU_TQ_HDR_NONE_ELIGIBLE	0x3c	/* lookups that found none */
#define MEGPU_TQ_HDR_DONE		0x40	/* tasks notified */
#define MEGPU_TQ_HDR_WAITERS		0x44	/* sleepers in EVENT mode */
#define MEGPU_TQ_HDR_EVENT_SLEEPS	0x48	/* EVENT-mode sleeps, counted */
#define MEGPU_TQ_HDR_EVENT_POLLED	0x4c	/* takes after a safety poll */
#define MEGPU_TQ_HDR_CPU_WAITERS	0x50	/* of WAITERS, CPU threads */
#define MEGPU_TQ_HDR_BYTES		0x80
#define MEGPU_TQ_ALIGN			0x80
#define MEGPU_TQ_MAX_SLOTS		65536
#define MEGPU_TQ_MAX_BATCH		256
#define MEGPU_TQ_MAX_ARG_SIZE		65536	/* a program task's ARG_SIZE */
#define MEGPU_TQ_DEF_BATCH_GPU		16	/* GPU grain: larger */
#define MEGPU_TQ_DEF_BATCH_CPU		4
/* an EVENT-mode sleeper (engine or CPU) looks again at least this often */
#define MEGPU_TQ_EVENT_POLL_MS		100
#define MEGPU_TQ_BYTES(slots)		(MEGPU_TQ_HDR_BYTES + \
					 (slots) * MEGPU_TQ_DESC_SIZE)

/*
 * CLOSED: no more tasks will come; dequeuers end when every queue is
 * closed and holds nothing they may take. STRICT: preferences are
 * enforced like requirements. EVENT: the seed's event-notification
 * exclusion: a dequeuer that finds the lock taken sleeps (counted in
 * WAITERS, a CPU thread in CPU_WAITERS too) until the holder's release
 * notifies it; engines notify each other, a CPU notifies the engines by
 * writing MEGPU_REG_TASKQ_NOTIFY, an engine notifies sleeping CPU
 * threads with MISC_IRQ_TASKQ_RELEASE. Every sleep counts in
 * EVENT_SLEEPS; a sleeper also wakes after a long safety poll
 * (MEGPU_TQ_EVENT_POLL_MS), and a lock taken after such a wake counts in
 * EVENT_POLLED: notifications that work keep it at zero.
 * GUIDED: a dequeuer takes at most half of what the queue holds (at
 * least one; megpu_tq_batch_limit()), so that near the end nobody sits
 * on a full batch while the others idle (guided self-scheduling).
 */
#define MEGPU_TQ_F_CLOSED		MEGPU_BIT(0)
#define MEGPU_TQ_F_STRICT		MEGPU_BIT(1)
#define MEGPU_TQ_F_EVENT		MEGPU_BIT(2)
#define MEGPU_TQ_F_GUIDED		MEGPU_BIT(3)

/*
 * The most a dequeuer whose batch is @batch takes from a queue with
 * @flags that holds @avail tasks (tail - head, read under the lock).
 */
static inline unsigned int megpu_tq_batch_limit(unsigned int flags,
						unsigned int batch,
						unsigned int avail)
{
	if ((flags & MEGPU_TQ_F_GUIDED) && avail / 2 < batch)
		return avail / 2 ? avail / 2 : 1;
	return batch;
}

/*
 * Lock owner ids: CPU threads use 1..0x3fffffff, the driver's dequeuer
 * (taking for engine n) MEGPU_TQ_OWNER_DRIVER(n).
 */
#define MEGPU_TQ_OWNER_ENGINE(n)	(0x80000000u | (n))
#define MEGPU_TQ_OWNER_DRIVER(n)	(0x40000000u | (n))
#define MEGPU_TQ_OWNER_IS_DRIVER(o)	(((o) & 0xc0000000u) == 0x40000000u)
#define MEGPU_TQ_OWNER_IS_ENGINE(o)	(((o) & 0x80000000u) != 0)
/* an engine ran it, by DEQUEUE or from the driver's dequeuer */
#define MEGPU_TQ_OWNER_IS_GPU(o)	(((o) & 0xc0000000u) != 0)

/*
 * Task descriptor (the seed's MyTask), 64 bytes. A GPU runs gpu_kernel
 * (a built-in kernel) as DISPATCH(gpu_kernel, data, range, group); a CPU
 * runs cpu_fn on the same argument block (libmegpu's CPU versions). data
 * is a struct megpu_kernel_args (MEGPU_KARGS_*; arg_size 0 or
 * MEGPU_KARGS_SIZE). notify, if not 0, is a MEGPU_TQ_NOTE_* record. A
 * task with event_addr waits for (int64_t)(*event_addr - event_value)
 * >= 0 before anyone may take it (it blocks the queue's head).
 */
#define MEGPU_TQ_DESC_CPU_FN		0x00	/* u32, MEGPU_TQ_NONE: none */
#define MEGPU_TQ_DESC_GPU_KERNEL	0x04	/* u32, MEGPU_TQ_NONE: none */
#define MEGPU_TQ_DESC_DATA		0x08	/* u64 */
#define MEGPU_TQ_DESC_RANGE_X		0x10	/* u32: global grid */
#define MEGPU_TQ_DESC_RANGE_Y		0x14
#define MEGPU_TQ_DESC_GROUP_X		0x18	/* u32: local grid */
#define MEGPU_TQ_DESC_GROUP_Y		0x1c
#define MEGPU_TQ_DESC_NOTIFY		0x20	/* u64 */
#define MEGPU_TQ_DESC_AFFINITY		0x28	/* u32: MEGPU_TQ_AFF_* */
#define MEGPU_TQ_DESC_ARG_SIZE		0x2c	/* u32 */
#define MEGPU_TQ_DESC_EVENT_ADDR	0x30	/* u64, 8-aligned, 0: none */
#define MEGPU_TQ_DESC_EVENT_VALUE	0x38	/* u64 */
#define MEGPU_TQ_DESC_SIZE		0x40
#define MEGPU_TQ_NONE			0xffffffffu

#define MEGPU_TQ_AFF_ANY		0
#define MEGPU_TQ_AFF_PREFER_CPU		1
#define MEGPU_TQ_AFF_PREFER_GPU		2
#define MEGPU_TQ_AFF_REQUIRE_CPU	3
#define MEGPU_TQ_AFF_REQUIRE_GPU	4
/*
 * Hints (the seed's third kind of affinity): advice, never enforced, not
 * even in STRICT mode; a dequeuer of the other kind takes such a task
 * only in a batch of its own (one task), so that it does not sweep up a
 * run of them meant for the hinted side.
 */
#define MEGPU_TQ_AFF_HINT_CPU		5
#define MEGPU_TQ_AFF_HINT_GPU		6
#define MEGPU_TQ_AFF_COUNT		7

/* Little-endian loads for the helpers below (device, driver, libmegpu). */
static inline unsigned int megpu_hw_ld32(const unsigned char *p)
{
	return p[0] | p[1] << 8 | p[2] << 16 | (unsigned int)p[3] << 24;
}

static inline unsigned long long megpu_hw_ld64(const unsigned char *p)
{
	return megpu_hw_ld32(p) | (unsigned long long)megpu_hw_ld32(p + 4) << 32;
}

/*
 * Whether the MEGPU_TQ_DESC_SIZE bytes at @d are a well-formed task,
 * whoever would run it: DEQUEUE, a CPU dequeuer or the driver's. A task
 * may name a wave program (MEGPU_KERNEL_PROGRAM) for a side instead of a
 * built-in kernel: DATA is then a program-arguments block (MEGPU_PARGS_*)
 * whose user arguments may go on past MEGPU_PARGS_SIZE (ARG_SIZE, up to
 * MEGPU_TQ_MAX_ARG_SIZE, read by the program from MEGPU_SR_ARGS), and
 * the other side names the same program or nothing, as they share DATA.
 */
static inline int megpu_tq_desc_valid(const unsigned char *d)
{
	unsigned int cpu_fn = megpu_hw_ld32(d + MEGPU_TQ_DESC_CPU_FN);
	unsigned int kernel = megpu_hw_ld32(d + MEGPU_TQ_DESC_GPU_KERNEL);
	unsigned int aff = megpu_hw_ld32(d + MEGPU_TQ_DESC_AFFINITY);
	unsigned int arg_size = megpu_hw_ld32(d + MEGPU_TQ_DESC_ARG_SIZE);
	unsigned long long group =
		(unsigned long long)megpu_hw_ld32(d + MEGPU_TQ_DESC_GROUP_X) *
		megpu_hw_ld32(d + MEGPU_TQ_DESC_GROUP_Y);

	int prog = kernel == MEGPU_KERNEL_PROGRAM ||
		   cpu_fn == MEGPU_KERNEL_PROGRAM;

	if (aff >= MEGPU_TQ_AFF_COUNT)
		return 0;
	if (prog) {
		if ((kernel != MEGPU_KERNEL_PROGRAM && kernel != MEGPU_TQ_NONE) ||
		    (cpu_fn != MEGPU_KERNEL_PROGRAM && cpu_fn != MEGPU_TQ_NONE) ||
		    arg_size < MEGPU_PARGS_SIZE ||
		    arg_size > MEGPU_TQ_MAX_ARG_SIZE)
			return 0;
	} else if (kernel != MEGPU_TQ_NONE && kernel >= MEGPU_KERNEL_COUNT) {
		return 0;
	}
	if (cpu_fn == MEGPU_TQ_NONE && kernel == MEGPU_TQ_NONE)
		return 0;
	if ((aff == MEGPU_TQ_AFF_REQUIRE_GPU && kernel == MEGPU_TQ_NONE) ||
	    (aff == MEGPU_TQ_AFF_REQUIRE_CPU && cpu_fn == MEGPU_TQ_NONE))
		return 0;
	if (!prog && arg_size && arg_size != MEGPU_KARGS_SIZE)
		return 0;
	if (!group || group > MEGPU_MAX_GROUP_SIZE)
		return 0;
	return !((megpu_hw_ld64(d + MEGPU_TQ_DESC_DATA) |
		  megpu_hw_ld64(d + MEGPU_TQ_DESC_NOTIFY) |
		  megpu_hw_ld64(d + MEGPU_TQ_DESC_EVENT_ADDR)) & 7);
}

/*
 * Taking a batch, the rules every dequeuer follows (DEQUEUE in the
 * device, the driver's dequeuer, libmegpu's CPU threads): one copy here,
 * checked exhaustively by tests/host/taskq_test.c.
 *
 * A side is who takes: an engine (DEQUEUE, or the driver for it) or a
 * CPU thread.
 */
#define MEGPU_TQ_SIDE_GPU		0
#define MEGPU_TQ_SIDE_CPU		1

/*
 * May @side run the well-formed task at @d in a queue with @qflags? It
 * must have code for that side that the side runs (an engine: the
 * built-in kernels in @kernels, a MEGPU_KERNEL_* mask, and wave programs
 * if @programs; a CPU runs every built-in kernel and programs, @kernels
 * and @programs are ignored), and the affinity must let it: REQUIRE_x
 * keeps the task from the other side, PREFER_x too in a STRICT queue.
 * Hints do not (megpu_tq_batch_step() places them).
 */
static inline int megpu_tq_may_run(const unsigned char *d, int side,
				   unsigned int qflags, unsigned int kernels,
				   int programs)
{
	unsigned int aff = megpu_hw_ld32(d + MEGPU_TQ_DESC_AFFINITY);
	int strict = !!(qflags & MEGPU_TQ_F_STRICT);
	unsigned int code;

	if (side == MEGPU_TQ_SIDE_GPU) {
		code = megpu_hw_ld32(d + MEGPU_TQ_DESC_GPU_KERNEL);
		if (aff == MEGPU_TQ_AFF_REQUIRE_CPU ||
		    (strict && aff == MEGPU_TQ_AFF_PREFER_CPU))
			return 0;
	} else {
		code = megpu_hw_ld32(d + MEGPU_TQ_DESC_CPU_FN);
		kernels = MEGPU_KERNELS_ALL;
		programs = 1;
		if (aff == MEGPU_TQ_AFF_REQUIRE_GPU ||
		    (strict && aff == MEGPU_TQ_AFF_PREFER_GPU))
			return 0;
	}
	if (code == MEGPU_KERNEL_PROGRAM)
		return programs;
	return code < MEGPU_KERNEL_COUNT && ((kernels >> code) & 1);
}

/* What a dequeuer does with a task it looks at while taking a batch. */
#define MEGPU_TQ_STOP			0	/* leave it: the batch ends */
#define MEGPU_TQ_TAKE			1	/* take it, look at the next */
#define MEGPU_TQ_TAKE_LAST		2	/* take it, the batch ends */

/*
 * The task at @d is the @n-th (from 0) of the batch @side is taking,
 * under the queue's lock, below the batch limit (megpu_tq_batch_limit).
 * A malformed task is taken first and alone, so that it is notified as
 * such and the queue goes on; a task hinted for the other side is taken
 * only alone; a task the side may not run (megpu_tq_may_run), or whose
 * event has not happened (@event_reached: the caller reads the event
 * word; 1 for a task without an event), ends the batch.
 */
static inline int megpu_tq_batch_step(const unsigned char *d, unsigned int n,
				      int side, unsigned int qflags,
				      unsigned int kernels, int programs,
				      int event_reached)
{
	unsigned int aff = megpu_hw_ld32(d + MEGPU_TQ_DESC_AFFINITY);
	int other_hint = aff == (side == MEGPU_TQ_SIDE_GPU ?
				 MEGPU_TQ_AFF_HINT_CPU : MEGPU_TQ_AFF_HINT_GPU);

	if (!megpu_tq_desc_valid(d))
		return n ? MEGPU_TQ_STOP : MEGPU_TQ_TAKE_LAST;
	if (other_hint && n)
		return MEGPU_TQ_STOP;
	if (!megpu_tq_may_run(d, side, qflags, kernels, programs) ||
	    !event_reached)
		return MEGPU_TQ_STOP;
	return other_hint ? MEGPU_TQ_TAKE_LAST : MEGPU_TQ_TAKE;
}

/*
 * Notification record, 16 bytes, 8-aligned: DONE is incremented
 * atomically once per take (so exactly-once means DONE == 1), BY is the
 * owner id of the runner, BATCH its batch number, STATUS 0 or the
 * MEGPU_FAULT_* that stopped the task (the task did not complete;
 * MEGPU_FAULT_TQ_RESET: an engine reset came first, and the batch's other
 * tasks not yet done carry it too, so that every take is notified). A
 * record that is not 8-aligned (only a malformed task can name one) is
 * never written, by any dequeuer: its task is counted in HDR_DONE only.
 */
#define MEGPU_TQ_NOTE_DONE		0x0
#define MEGPU_TQ_NOTE_BY		0x4
#define MEGPU_TQ_NOTE_BATCH		0x8
#define MEGPU_TQ_NOTE_STATUS		0xc
#define MEGPU_TQ_NOTE_SIZE		0x10

/* ENG_TASKQ_STATE */
#define MEGPU_TQ_STATE_IDLE		0	/* no DEQUEUE running */
#define MEGPU_TQ_STATE_LOOKING		1	/* checking queues */
#define MEGPU_TQ_STATE_LOCKING		2	/* lock taken by another */
#define MEGPU_TQ_STATE_RUNNING		3	/* running a batch */
#define MEGPU_TQ_STATE_WAITING		4	/* none eligible, open queues */

#endif /* MEGPU_HW_TASKQ_H */
