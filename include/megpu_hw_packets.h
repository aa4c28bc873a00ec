/* SPDX-License-Identifier: MIT */
/*
 * megpu hardware contract: packets (ring and IB), their
 * payloads, the built-in kernels and the DISPATCH argument block.
 *
 * Part of include/megpu_hw.h (which includes every part); included
 * by the device and the driver. Prose: Documentation/megpu-hw.rst.
 */
#ifndef MEGPU_HW_PACKETS_H
#define MEGPU_HW_PACKETS_H

#include "megpu_hw_regs.h"

/*
 * Packets: a header dword, then MEGPU_PKT_COUNT(header) payload dwords.
 * Ring packets use bus addresses and run in no context; packets in an
 * IB use GPU virtual addresses of the context set by SET_CONTEXT.
 * 64-bit values and addresses are two dwords, low first.
 */
#define MEGPU_PKT_HEADER(op, count, flags) \
	(((op) & 0xffu) | (((count) & 0xffffu) << 8) | (((flags) & 0xffu) << 24))
#define MEGPU_PKT_OPCODE(h)		((h) & 0xff)
#define MEGPU_PKT_COUNT(h)		(((h) >> 8) & 0xffff)
#define MEGPU_PKT_FLAGS(h)		(((h) >> 24) & 0xff)
#define MEGPU_PKT_MAX_COUNT		0xffff

/* NOP: any payload, skipped. */
#define MEGPU_PKT_NOP			0x00
/* IB: addr(2), size in dwords(1). Ring only; runs the IB's packets. */
#define MEGPU_PKT_IB			0x01
#define MEGPU_IB_MAX_DWORDS		0x100000
/* WRITE_DATA: addr(2), data(count - 2 dwords, at least 1). */
#define MEGPU_PKT_WRITE_DATA		0x02
/* TIMESTAMP: addr(2), value(2). Writes 64 bits; flag IRQ interrupts. */
#define MEGPU_PKT_TIMESTAMP		0x03
#define MEGPU_TIMESTAMP_FLAG_IRQ	MEGPU_BIT(0)
/* COPY: src(2), dst(2), bytes(1). */
#define MEGPU_PKT_COPY			0x04
/* FILL: dst(2), bytes(1, multiple of 4), value(1). */
#define MEGPU_PKT_FILL			0x05
/*
 * DISPATCH: kernel(1), args(2), grid_x(1), grid_y(1), group_x(1),
 * group_y(1). Runs a built-in kernel on grid_x * grid_y work-items,
 * split into work-groups of group_x * group_y; args points at a
 * struct megpu_kernel_args.
 */
#define MEGPU_PKT_DISPATCH		0x06
/* SET_CONTEXT: page table base(2), context id(1). Ring only. */
#define MEGPU_PKT_SET_CONTEXT		0x07
/* SIGNAL: addr(2), value(2). Writes the 64-bit semaphore, wakes waiters. */
#define MEGPU_PKT_SIGNAL		0x08
/*
 * WAIT: addr(2), value(2). Stalls this engine until the 64-bit
 * semaphore at addr has reached value: (int64_t)(mem - value) >= 0.
 */
#define MEGPU_PKT_WAIT			0x09

/*
 * FLUSH: no payload. Waits until every write this engine issued before it
 * has reached memory (both queue stages), then goes on.
 */
#define MEGPU_PKT_FLUSH			0x0a
/* IDLE_SIGNAL: no payload. Raises the engine's IDLE interrupt. */
#define MEGPU_PKT_IDLE_SIGNAL		0x0b
/*
 * SET_MAILBOX: addr(2), slots(1). Ring only. The mailbox of seed 003
 * for this engine's later SYSCALLs: @slots MEGPU_MBOX_* slots at bus
 * address @addr (MEGPU_MBOX_ALIGN aligned); 0 slots: none.
 */
#define MEGPU_PKT_SET_MAILBOX		0x0c

/*
 * DEQUEUE: queues(2), count(1), home(1), flags(1). Seed 002: the engine's
 * command processor becomes a dequeuer of the task queues (MEGPU_TQ_*)
 * whose addresses are the @count 64-bit words at @queues; queue @home is
 * its own, the others are stolen from with MEGPU_DEQ_STEAL. Runs on the
 * engines that run DISPATCH. See "Task queues" below.
 */
#define MEGPU_PKT_DEQUEUE		0x18
#define MEGPU_DEQ_STEAL			MEGPU_BIT(0)	/* steal from others */
#define MEGPU_DEQ_ONCE			MEGPU_BIT(1)	/* end at none eligible */
#define MEGPU_DEQ_MAX_QUEUES		16

/*
 * TASK_DONE: queue(2), note(2), owner(1), batch(1), status(1).
 * The notification of one task taken by the driver's dequeuer (seed
 * 002's discrete variant), as DEQUEUE writes it: the MEGPU_TQ_NOTE_*
 * record at @note (if not 0) gets BY, BATCH, STATUS and an atomic
 * DONE += 1; the queue at @queue (if not 0) an atomic HDR_DONE += 1.
 */
#define MEGPU_PKT_TASK_DONE		0x19
/*
 * TASK_RUN: queue(2), descs(2), count(1), owner(1), batch(1). Runs a
 * batch the driver's dequeuer took, exactly as DEQUEUE runs one it took
 * itself: the @count (1..MEGPU_TQ_MAX_BATCH) MEGPU_TQ_DESC_SIZE copies
 * of the descriptors at @descs run in order, the first fault stops the
 * kernels, the writes are flushed, then every task is notified (BY
 * @owner, BATCH @batch, STATUS 0 or the fault) and the queue at @queue
 * (if not 0) counts @count in HDR_DONE. A malformed descriptor is not
 * run: it is notified with MEGPU_FAULT_TQ_BAD_TASK and the engine does
 * not fault for it (the driver took it knowingly). A notification that
 * cannot be written does not stop the others; the first such fault is
 * reported after all of them, unless a kernel faulted first.
 */
#define MEGPU_PKT_TASK_RUN		0x1a

/* Payload dwords of the fixed-size packets. */
#define MEGPU_PKT_IB_COUNT		3
#define MEGPU_PKT_TIMESTAMP_COUNT	4
#define MEGPU_PKT_COPY_COUNT		5
#define MEGPU_PKT_FILL_COUNT		4
#define MEGPU_PKT_DISPATCH_COUNT	7
#define MEGPU_PKT_SET_CONTEXT_COUNT	3
#define MEGPU_PKT_SIGNAL_COUNT		4
#define MEGPU_PKT_WAIT_COUNT		4
#define MEGPU_PKT_FLUSH_COUNT		0
#define MEGPU_PKT_IDLE_SIGNAL_COUNT	0
#define MEGPU_PKT_SET_MAILBOX_COUNT	3
#define MEGPU_PKT_DEQUEUE_COUNT		5
#define MEGPU_PKT_TASK_DONE_COUNT	7
#define MEGPU_PKT_TASK_RUN_COUNT	7

/*
 * Which engine types accept which packets (bit per opcode). NOP, IB,
 * WRITE_DATA, TIMESTAMP, SET_CONTEXT, SIGNAL, WAIT, FLUSH, IDLE_SIGNAL
 * and SET_MAILBOX run everywhere.
 */
#define MEGPU_PKTS_COMMON \
	(MEGPU_BIT(MEGPU_PKT_NOP) | MEGPU_BIT(MEGPU_PKT_IB) | \
	 MEGPU_BIT(MEGPU_PKT_WRITE_DATA) | MEGPU_BIT(MEGPU_PKT_TIMESTAMP) | \
	 MEGPU_BIT(MEGPU_PKT_SET_CONTEXT) | MEGPU_BIT(MEGPU_PKT_SIGNAL) | \
	 MEGPU_BIT(MEGPU_PKT_WAIT) | MEGPU_BIT(MEGPU_PKT_FLUSH) | \
	 MEGPU_BIT(MEGPU_PKT_IDLE_SIGNAL) | MEGPU_BIT(MEGPU_PKT_SET_MAILBOX))
#define MEGPU_PKTS_GFX \
	(MEGPU_PKTS_COMMON | MEGPU_BIT(MEGPU_PKT_COPY) | \
	 MEGPU_BIT(MEGPU_PKT_FILL) | MEGPU_BIT(MEGPU_PKT_DISPATCH))
#define MEGPU_PKTS_COMPUTE \
	(MEGPU_PKTS_COMMON | MEGPU_BIT(MEGPU_PKT_DISPATCH))
#define MEGPU_PKTS_COPY \
	(MEGPU_PKTS_COMMON | MEGPU_BIT(MEGPU_PKT_COPY) | \
	 MEGPU_BIT(MEGPU_PKT_FILL))
#define MEGPU_PKTS_VIDEO \
	(MEGPU_PKTS_COMMON | MEGPU_BIT(MEGPU_PKT_COPY) | \
	 MEGPU_BIT(MEGPU_PKT_DISPATCH))

/*
 * Built-in kernels for DISPATCH. Elements are 32-bit; work-item i
 * (0 <= i < n) handles element i; items past n do nothing.
 *   FILL      ptr[0][i] = param[0]
 *   COPY      ptr[1][i] = ptr[0][i]
 *   VADD      ptr[2][i] = ptr[0][i] + ptr[1][i]       (uint32, wraps)
 *   SAXPY     ptr[1][i] = a * ptr[0][i] + ptr[1][i]   (float, a = param[0])
 *   CHECKSUM  *ptr[1] += ptr[0][i] for all i           (uint32, wraps;
 *             each work-group adds its sum atomically)
 *   INCREMENT ptr[0][i] += 1
 *   BLUR3X3   image kernels on RGBA8888 pixels (one 32-bit element per
 *   SEPIA     pixel), width param[0], height param[1], row pitch in
 *             pixels param[2]; work-item (x, y) of a grid_x * grid_y grid
 *             writes pixel (x, y) of ptr[1] from ptr[0]:
 *             BLUR3X3: per channel, the mean (sum / 9, rounded down) of
 *             the 3x3 neighbourhood, edges clamped to the image;
 *             SEPIA: r' = min(255, (393r + 769g + 189b) / 1000),
 *             g' = min(255, (349r + 686g + 168b) / 1000),
 *             b' = min(255, (272r + 534g + 131b) / 1000), alpha kept
 *             (r in bits 7:0, g 15:8, b 23:16, alpha 31:24).
 * The video engine runs CHECKSUM, BLUR3X3 and SEPIA; gfx and compute
 * run all.
 */
#define MEGPU_KERNEL_FILL		0
#define MEGPU_KERNEL_COPY		1
#define MEGPU_KERNEL_VADD		2
#define MEGPU_KERNEL_SAXPY		3
#define MEGPU_KERNEL_CHECKSUM		4
#define MEGPU_KERNEL_INCREMENT		5
#define MEGPU_KERNEL_BLUR3X3		6
#define MEGPU_KERNEL_SEPIA		7
#define MEGPU_KERNEL_COUNT		8

#define MEGPU_KERNELS_ALL		(MEGPU_BIT(MEGPU_KERNEL_COUNT) - 1)
#define MEGPU_KERNELS_VIDEO \
	(MEGPU_BIT(MEGPU_KERNEL_CHECKSUM) | MEGPU_BIT(MEGPU_KERNEL_BLUR3X3) | \
	 MEGPU_BIT(MEGPU_KERNEL_SEPIA))

/*
 * PROGRAM: run a wave ISA program (below) instead of a built-in kernel,
 * on gfx and compute engines. args points at a program argument block
 * (MEGPU_PARGS_*), not a struct megpu_kernel_args.
 */
#define MEGPU_KERNEL_PROGRAM		0x80

/* Work-group size limit: group_x * group_y. */
#define MEGPU_MAX_GROUP_SIZE		1024

/*
 * DISPATCH argument block in GPU memory, little endian: four 64-bit
 * pointers ptr[0..3], then the 32-bit element count n and three 32-bit
 * parameters param[0..2].
 */
#define MEGPU_KARGS_PTR(i)		((i) * 8)
#define MEGPU_KARGS_N			32
#define MEGPU_KARGS_PARAM(i)		(36 + (i) * 4)
#define MEGPU_KARGS_SIZE		48

#endif /* MEGPU_HW_PACKETS_H */
