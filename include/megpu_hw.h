/* SPDX-License-Identifier: MIT */
/*
 * megpu hardware contract: PCI identity, registers, interrupt vectors,
 * packets, built-in kernels and the GPU page-table format.
 *
 * Included by the QEMU device (qemu-device/hw/misc/megpu/) and by the DRM
 * driver (drivers/gpu/drm/megpu/). Plain defines only: the includer provides
 * the fixed-width types. Prose: Documentation/megpu-hw.rst.
 */
#ifndef MEGPU_HW_H
#define MEGPU_HW_H

/* A single-bit mask; BIT() is not available to every includer. */
#define MEGPU_BIT(n)			(1u << (n))

/* PCI identity: QEMU's test vendor; device ID "MG" is unused by QEMU. */
#define MEGPU_PCI_VENDOR_ID		0x1234
#define MEGPU_PCI_DEVICE_ID		0x4d47
#define MEGPU_PCI_REVISION		0x01
#define MEGPU_PCI_CLASS			0x0380	/* display controller, other */

#define MEGPU_BAR_MMIO			0
#define MEGPU_BAR_MSIX			2	/* exclusive MSI-X table + PBA */
#define MEGPU_MMIO_SIZE			0x10000

/* Identification: the value of MEGPU_REG_ID, "MGPU" in ASCII. */
#define MEGPU_ID_MAGIC			0x4d475055

/* Hardware version: major changes break the driver, minor ones extend. */
#define MEGPU_HW_VERSION_MAJOR		1
#define MEGPU_HW_VERSION_MINOR		1	/* 1: programmable waves */
#define MEGPU_HW_VERSION(maj, min)	(((maj) << 16) | (min))
#define MEGPU_HW_VERSION_GET_MAJOR(v)	(((v) >> 16) & 0xffff)
#define MEGPU_HW_VERSION_GET_MINOR(v)	((v) & 0xffff)

/* Engines: a device property sets the count, up to MEGPU_MAX_ENGINES. */
#define MEGPU_MAX_ENGINES		16
#define MEGPU_ENGINE_GFX		0
#define MEGPU_ENGINE_COMPUTE		1
#define MEGPU_ENGINE_COPY		2
#define MEGPU_ENGINE_VIDEO		3
#define MEGPU_ENGINE_NUM_TYPES		4

/*
 * Global registers (32-bit, little endian, dword aligned). Unknown offsets
 * read as 0 and ignore writes; writes to read-only registers are ignored.
 */
#define MEGPU_REG_ID			0x0000	/* RO: MEGPU_ID_MAGIC */
#define MEGPU_REG_VERSION		0x0004	/* RO: MEGPU_HW_VERSION() */
#define MEGPU_REG_CAPS			0x0008	/* RO: MEGPU_CAP_* */
#define MEGPU_REG_ENGINE_COUNT		0x000c	/* RO: engines present */
#define MEGPU_REG_MSIX_VECTORS		0x0010	/* RO: MSI-X vectors */
#define MEGPU_REG_SCRATCH		0x0014	/* RW: no effect, reset to 0 */
#define MEGPU_REG_IRQ_TEST		0x0018	/* WO: vector to raise */
#define MEGPU_REG_IRQ_TEST_STATUS	0x001c	/* RW1C: bit n = test on n */
#define MEGPU_REG_RESET			0x0020	/* WO: MEGPU_RESET_MAGIC */
#define MEGPU_REG_ENGINE_TYPES		0x0024	/* RO: 2 bits per engine */

#define MEGPU_RESET_MAGIC		0x52534554	/* "RSET" */

/* Type of engine n, from MEGPU_REG_ENGINE_TYPES. */
#define MEGPU_ENGINE_TYPE(types, n)	(((types) >> (2 * (n))) & 0x3)

/* MEGPU_REG_CAPS: features the device implements. */
#define MEGPU_CAP_IRQ_TEST		MEGPU_BIT(0)
#define MEGPU_CAP_ENGINES		MEGPU_BIT(1)	/* rings, packets */
#define MEGPU_CAP_MMU			MEGPU_BIT(2)	/* per-context VA */
#define MEGPU_CAP_SEMAPHORE		MEGPU_BIT(3)	/* SIGNAL/WAIT */
#define MEGPU_CAP_FLUSH			MEGPU_BIT(4)	/* posted writes, flush */
#define MEGPU_CAP_WAVES			MEGPU_BIT(5)	/* wave ISA programs */
#define MEGPU_CAP_MGPU			MEGPU_BIT(6)	/* MSEM, ARB (seed 000) */
#define MEGPU_CAP_TASKQ			MEGPU_BIT(7)	/* DEQUEUE, task queues */

/*
 * MSI-X vectors: one per engine slot, then the device-wide sources.
 * MEGPU_REG_IRQ_TEST accepts any vector below MEGPU_REG_MSIX_VECTORS.
 */
#define MEGPU_VEC_ENGINE(n)		(n)
#define MEGPU_VEC_MISC			MEGPU_MAX_ENGINES
#define MEGPU_NUM_VECTORS		(MEGPU_VEC_MISC + 1)

/*
 * GPU MMU invalidation: writing any value waits until no engine is inside
 * a translated access, so that afterwards no engine uses a translation
 * read before the write. Reading returns how many invalidations completed.
 */
#define MEGPU_REG_MMU_INVALIDATE	0x0028

/*
 * Posted writes and flushes (seed 004). In relaxed mode the data writes
 * of engines (WRITE_DATA, COPY, FILL, DISPATCH results) pass through a
 * queue per engine and then a memory-controller queue, each with seeded,
 * non-uniform delays, so they reach memory late and out of order (writes
 * to the same bytes keep their order). Other engines and the CPU read
 * memory as it is; an engine reads its own queued writes. TIMESTAMP,
 * SIGNAL and the CHECKSUM atomics are not posted. In strict mode every
 * write is visible at once. The mode can be changed at any time; a change
 * to strict first drains the queues.
 *
 * WRITE_MODE: MEGPU_WRITE_MODE_*; its reset value comes from the device's
 * "write-mode" property.
 * FLUSH: writing any value starts a flush of both stages of every engine;
 * when all writes issued before it have reached memory, FLUSH_STATUS.DONE
 * is set, FLUSH_SEQ grows by one and MEGPU_VEC_MISC is raised with
 * MISC_IRQ_STATUS.FLUSH_DONE. Flushes complete in the order they were
 * started. Reading FLUSH returns the number of flushes started.
 * FLUSH_STATUS: DONE (RW1C), BUSY while a flush is in progress.
 * QUEUE_MC: writes waiting in the memory-controller queue.
 */
#define MEGPU_REG_WRITE_MODE		0x002c	/* RW */
#define MEGPU_REG_FLUSH			0x0030	/* WO start, RO started */
#define MEGPU_REG_FLUSH_STATUS		0x0034	/* RW1C/RO */
#define MEGPU_REG_FLUSH_SEQ		0x0038	/* RO: flushes completed */
#define MEGPU_REG_MISC_IRQ_STATUS	0x003c	/* RW1C: MEGPU_MISC_IRQ_* */
#define MEGPU_REG_QUEUE_MC		0x0040	/* RO: MC queue occupancy */

/*
 * TEST_HOLD (tests only: exists with the device's "x-test-regs" property;
 * without it reads 0 and ignores writes): hold the posted writes of the
 * relaxed mode at runtime, so that a guest test can make a flush slow or
 * keep a completed job's writes queued until something flushes them.
 * HOLD_TIME: writes land only when a flush (FLUSH packet, host flush) or
 * a full queue makes them, never because time passes. HOLD_ALL: nothing
 * lands, flushes and FLUSH packets wait. 0 releases; a device reset too.
 */
#define MEGPU_REG_TEST_HOLD		0x0044	/* RW: MEGPU_TEST_HOLD_* */
#define MEGPU_TEST_HOLD_NONE		0
#define MEGPU_TEST_HOLD_TIME		1
#define MEGPU_TEST_HOLD_ALL		2

/*
 * Waves (seed 003). WAVE_RESTART: write the id of a wave parked by SLEEP
 * to let it run on; an id that is not a parked wave only counts in
 * WAVE_RESTART_ERRORS. WAVE_INTERRUPTS counts INTERRUPT instructions.
 */
#define MEGPU_REG_WAVE_RESTART		0x0080	/* WO: wave id */
#define MEGPU_REG_WAVE_RESTART_ERRORS	0x0084	/* RO: ignored restarts */
#define MEGPU_REG_WAVE_RESTARTS		0x0088	/* RO: waves restarted */
#define MEGPU_REG_WAVE_INTERRUPTS	0x008c	/* RO: INTERRUPTs run */
#define MEGPU_REG_SYSCALLS		0x0090	/* RO: mailbox slots filled */
#define MEGPU_REG_SYSCALL_RETRIES	0x0094	/* RO: no FREE slot found */
#define MEGPU_REG_SYSCALL_STRAYS	0x009c	/* RO: stray slots reclaimed */
/*
 * WAVE_CONTROL: WAVE_CTRL_RAW allows a program's INTERRUPT and SLEEP.
 * Without it (the reset value) they fault PRIVILEGED: only the agent
 * that restarts raw-sleeping waves (a kernel with a use for them) sets
 * it. SYSCALL parks and restarts its waves either way.
 */
#define MEGPU_REG_WAVE_CONTROL		0x0098	/* RW: MEGPU_WAVE_CTRL_* */
#define MEGPU_WAVE_CTRL_RAW		MEGPU_BIT(0)

/*
 * Task queues (seed 002). TASKQ_NOTIFY: a CPU released a queue in EVENT
 * mode (or added tasks): engines sleeping in a DEQUEUE look again;
 * reading returns the notifications received. The others count, device
 * wide, the tasks and batches DEQUEUE took, the batches stolen, the
 * failed lock attempts and the sleeps of EVENT mode.
 */
#define MEGPU_REG_TASKQ_NOTIFY		0x00e0	/* WO notify, RO count */
#define MEGPU_REG_TASKQ_TASKS		0x00e4	/* RO */
#define MEGPU_REG_TASKQ_BATCHES		0x00e8	/* RO */
#define MEGPU_REG_TASKQ_STEALS		0x00ec	/* RO */
#define MEGPU_REG_TASKQ_LOCK_RETRIES	0x00f0	/* RO */
#define MEGPU_REG_TASKQ_EVENT_WAITS	0x00f4	/* RO */
/*
 * The discrete variant of seed 002: the driver dequeues for the engines.
 * An engine whose bit is set in TASKQ_REQ_WORK "requests work" when its
 * ring runs empty (and at once, if idle, when the bit is set): its bit is
 * set in TASKQ_REQ_PENDING and MISC_IRQ_WORK is raised. The driver takes
 * a batch under the queue's lock and submits it as an ordinary job whose
 * IB runs the batch with one TASK_RUN (as DEQUEUE would run it).
 */
#define MEGPU_REG_TASKQ_REQ_WORK	0x00f8	/* RW: engine bit mask */
#define MEGPU_REG_TASKQ_REQ_PENDING	0x00fc	/* RW1C: engines asking */

#define MEGPU_WRITE_MODE_STRICT		0
#define MEGPU_WRITE_MODE_RELAXED	1

#define MEGPU_FLUSH_STATUS_DONE		MEGPU_BIT(0)
#define MEGPU_FLUSH_STATUS_BUSY		MEGPU_BIT(1)

#define MEGPU_MISC_IRQ_FLUSH_DONE	MEGPU_BIT(0)
#define MEGPU_MISC_IRQ_WAVE		MEGPU_BIT(1)	/* a wave ran INTERRUPT */
#define MEGPU_MISC_IRQ_SYSCALL		MEGPU_BIT(2)	/* mailbox slots ACTIVE */
#define MEGPU_MISC_IRQ_WORK		MEGPU_BIT(4)	/* TASKQ_REQ_PENDING set */
/* an engine released an EVENT queue with CPU_WAITERS: wake CPU sleepers */
#define MEGPU_MISC_IRQ_TASKQ_RELEASE	MEGPU_BIT(5)

/* Entries per engine write queue: a full queue stalls the engine. */
#define MEGPU_WRITE_QUEUE_DEPTH		64

/*
 * Engine register blocks: engine n at MEGPU_ENGINE_BASE(n), each
 * MEGPU_ENGINE_STRIDE bytes. Offsets below are relative to the block.
 */
#define MEGPU_ENGINE_BASE(n)		(0x1000 + (n) * MEGPU_ENGINE_STRIDE)
#define MEGPU_ENGINE_STRIDE		0x100

#define MEGPU_ENG_TYPE			0x00	/* RO: MEGPU_ENGINE_* */
#define MEGPU_ENG_STATUS		0x04	/* RO: MEGPU_ENG_STATUS_* */
#define MEGPU_ENG_CONTROL		0x08	/* WO: MEGPU_ENG_CTRL_* */
#define MEGPU_ENG_IRQ_STATUS		0x0c	/* RW1C: MEGPU_ENG_IRQ_* */
#define MEGPU_ENG_RING_BASE_LO		0x10	/* RW: bus address, 4K aligned */
#define MEGPU_ENG_RING_BASE_HI		0x14
#define MEGPU_ENG_RING_SIZE		0x18	/* RW: bytes, power of two */
#define MEGPU_ENG_RING_HEAD		0x1c	/* RO: byte offset, next fetch */
#define MEGPU_ENG_RING_TAIL		0x20	/* RW: byte offset, doorbell */
#define MEGPU_ENG_FAULT_CODE		0x24	/* RO: MEGPU_FAULT_* */
#define MEGPU_ENG_FAULT_ADDR_LO		0x28	/* RO: faulting address */
#define MEGPU_ENG_FAULT_ADDR_HI		0x2c
#define MEGPU_ENG_FAULT_HEAD		0x30	/* RO: ring offset of packet */
#define MEGPU_ENG_FAULT_INFO		0x34	/* RO: MEGPU_FAULT_INFO_* */
#define MEGPU_ENG_CTX_ID		0x38	/* RO: current context */
#define MEGPU_ENG_PT_BASE_LO		0x3c	/* RO: current page table */
#define MEGPU_ENG_PT_BASE_HI		0x40
#define MEGPU_ENG_WAIT_ADDR_LO		0x44	/* RO: semaphore waited on */
#define MEGPU_ENG_WAIT_ADDR_HI		0x48
#define MEGPU_ENG_WAIT_VALUE_LO		0x4c	/* RO: value waited for */
#define MEGPU_ENG_WAIT_VALUE_HI		0x50
#define MEGPU_ENG_DELAY_US		0x54	/* RW: stall before each packet */
#define MEGPU_ENG_PACKETS_LO		0x58	/* RO: packets executed */
#define MEGPU_ENG_PACKETS_HI		0x5c
#define MEGPU_ENG_FAULTS		0x60	/* RO: faults raised */
#define MEGPU_ENG_RESETS		0x64	/* RO: engine resets done */
#define MEGPU_ENG_LAST_TS_LO		0x68	/* RO: last ring TIMESTAMP value */
#define MEGPU_ENG_LAST_TS_HI		0x6c
#define MEGPU_ENG_QUEUE			0x70	/* RO: writes in its queue */
#define MEGPU_ENG_STALLED_WRITES	0x74	/* RO: writes that found it full */
#define MEGPU_ENG_FLUSHES		0x78	/* RO: FLUSH packets done */
#define MEGPU_ENG_IDLE_SIGNALS		0x7c	/* RO: idle interrupts raised */
/* Waves of a program DISPATCH (see "Wave ISA" below). */
#define MEGPU_ENG_WAVE_FAULT_ID		0x80	/* RO: wave id of a wave fault */
#define MEGPU_ENG_WAVE_FAULT_PC		0x84	/* RO: its instruction index */
#define MEGPU_ENG_WAVES_LIVE		0x88	/* RO: resident waves now */
#define MEGPU_ENG_WAVES_PARKED		0x8c	/* RO: of which parked */
#define MEGPU_ENG_PARKED_WAVE		0x90	/* RO: a parked wave's id */
#define MEGPU_ENG_WAVE_INSNS_LO		0x94	/* RO: wave instructions run */
#define MEGPU_ENG_WAVE_INSNS_HI		0x98
#define MEGPU_ENG_MAILBOX_LO		0x9c	/* RO: from SET_MAILBOX */
#define MEGPU_ENG_MAILBOX_HI		0xa0
#define MEGPU_ENG_MAILBOX_SLOTS		0xa4	/* RO: 0: no mailbox */
/*
 * The SPI stage of seed 002 (its shader processor input): what DISPATCH
 * launched from the execution ranges, in work-items (grid_x * grid_y,
 * clipped to the image for image kernels) and work-groups.
 */
#define MEGPU_ENG_WORK_ITEMS_LO		0xa8	/* RO */
#define MEGPU_ENG_WORK_ITEMS_HI		0xac
#define MEGPU_ENG_WORK_GROUPS_LO	0xb0	/* RO */
#define MEGPU_ENG_WORK_GROUPS_HI	0xb4

/* Task queues (seed 002): what this engine's DEQUEUE did. */
#define MEGPU_ENG_TASKQ_TASKS		0xd0	/* RO: tasks run */
#define MEGPU_ENG_TASKQ_BATCHES		0xd4	/* RO: batches taken */
#define MEGPU_ENG_TASKQ_STEALS		0xd8	/* RO: of which stolen */
#define MEGPU_ENG_TASKQ_STATE		0xdc	/* RO: MEGPU_TQ_STATE_* */
/*
 * Where an engine's time goes, in nanoseconds of the device's clock since
 * the device's reset (an engine reset keeps them): stalled in WAIT
 * packets, and running ring packets (WAITs included; idle time is
 * neither). Reading a _LO half latches the 64-bit value: the next read of
 * its _HI half returns the upper half of that same value. WAITS counts
 * WAITs that stalled.
 */
#define MEGPU_ENG_WAIT_NS_LO		0xe0	/* RO */
#define MEGPU_ENG_WAIT_NS_HI		0xe4	/* RO: latched by _LO */
#define MEGPU_ENG_BUSY_NS_LO		0xe8	/* RO */
#define MEGPU_ENG_BUSY_NS_HI		0xec	/* RO: latched by _LO */
#define MEGPU_ENG_WAITS			0xf0	/* RO: WAITs that stalled */

#define MEGPU_ENG_STATUS_IDLE		MEGPU_BIT(0)	/* head == tail */
#define MEGPU_ENG_STATUS_WAIT_SEM	MEGPU_BIT(1)	/* stalled on WAIT */
#define MEGPU_ENG_STATUS_FAULTED	MEGPU_BIT(2)	/* until FAULT_ACK */
#define MEGPU_ENG_STATUS_RESETTING	MEGPU_BIT(3)	/* until reset done */
#define MEGPU_ENG_STATUS_WAVE_PARKED	MEGPU_BIT(4)	/* a wave sleeps */

/*
 * CONTROL. RESET stops the engine at a packet boundary (a WAIT is
 * abandoned), sets head = tail = 0, clears the fault and IRQ status and
 * the context; ring base and size are kept. The reset is done when STATUS
 * no longer shows RESETTING. FAULT_ACK resumes a faulted engine at the
 * ring packet after the one that faulted.
 */
#define MEGPU_ENG_CTRL_RESET		MEGPU_BIT(0)
#define MEGPU_ENG_CTRL_FAULT_ACK	MEGPU_BIT(1)

#define MEGPU_ENG_IRQ_TIMESTAMP		MEGPU_BIT(0)	/* TIMESTAMP + IRQ */
#define MEGPU_ENG_IRQ_FAULT		MEGPU_BIT(1)
/*
 * IDLE: the engine ran out of work (head reached tail), or a job raised
 * it with IDLE_SIGNAL. Idle does not mean the engine's writes are in
 * memory: only a flush says that.
 */
#define MEGPU_ENG_IRQ_IDLE		MEGPU_BIT(2)

#define MEGPU_RING_SIZE_MIN		0x1000
#define MEGPU_RING_SIZE_MAX		0x100000

/* FAULT_CODE: why the engine stopped. 0 means no fault. */
#define MEGPU_FAULT_NONE		0
#define MEGPU_FAULT_BAD_OPCODE		1	/* unknown opcode */
#define MEGPU_FAULT_BAD_LENGTH		2	/* wrong payload length */
#define MEGPU_FAULT_UNSUPPORTED		3	/* not on this engine type */
#define MEGPU_FAULT_PRIVILEGED		4	/* ring-only packet in an IB */
#define MEGPU_FAULT_NESTED_IB		5	/* IB inside an IB */
#define MEGPU_FAULT_MMU			6	/* translation failed */
#define MEGPU_FAULT_BUS			7	/* DMA to a bad bus address */
#define MEGPU_FAULT_BAD_ARG		8	/* bad size, alignment, kernel */
#define MEGPU_FAULT_IB_OVERRUN		9	/* packet runs past IB end */
/* Faults of wave programs (FAULT_INFO.WAVE set); BAD_OPCODE, MMU too. */
#define MEGPU_FAULT_MISALIGNED		10	/* unaligned load/store/atomic */
#define MEGPU_FAULT_BAD_OPERAND		11	/* register, sreg, arg offset */
#define MEGPU_FAULT_MASK_STACK		12	/* IF depth over/underflow */
#define MEGPU_FAULT_PC_RANGE		13	/* PC left the program */
#define MEGPU_FAULT_BUDGET		14	/* wave instruction budget */
#define MEGPU_FAULT_NO_MAILBOX		15	/* SYSCALL: no SET_MAILBOX */
#define MEGPU_FAULT_MBOX_SLOT		23	/* SYSCALL: held slot changed */
/* Multi-GPU coordination (seed 000). */
#define MEGPU_FAULT_MGPU_AGENT		16	/* agent id >= agent count */
#define MEGPU_FAULT_MGPU_MASK		17	/* bad MSEM_WAIT enable mask */
#define MEGPU_FAULT_MGPU_MODE		18	/* ARB flags vs agent count */
#define MEGPU_FAULT_MGPU_SCHED		19	/* schedule block unusable */
#define MEGPU_FAULT_ARB_HELD		24	/* ARB block vs this GPU's holds */
/* Task queues (seed 002): FAULT_ADDR is the queue or descriptor. */
#define MEGPU_FAULT_TQ_BAD_QUEUE	20	/* magic, size, alignment */
#define MEGPU_FAULT_TQ_BAD_INDEX	21	/* tail - head > size */
#define MEGPU_FAULT_TQ_BAD_TASK		22	/* malformed descriptor */

/* FAULT_INFO: access type and where the faulting packet came from. */
#define MEGPU_FAULT_INFO_WRITE		MEGPU_BIT(0)	/* else read */
#define MEGPU_FAULT_INFO_IN_IB		MEGPU_BIT(1)	/* else ring */
#define MEGPU_FAULT_INFO_WAVE		MEGPU_BIT(2)	/* a wave instruction */

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

/*
 * Wave ISA (seed 003's programmable waves). A DISPATCH of
 * MEGPU_KERNEL_PROGRAM splits each work-group into waves of
 * MEGPU_WAVE_LANES work-items (lane l = local linear id % LANES); lanes
 * past the group or the grid start inactive. Every lane has
 * MEGPU_WAVE_REGS 64-bit registers (floats: IEEE binary32 in bits 31:0,
 * bits 63:32 written as 0); an execution mask says which lanes run.
 *
 * Program argument block (8-byte aligned, little endian): the program's
 * address (8-byte aligned; GPU VA inside an IB), its length in
 * instructions (1..MEGPU_PROGRAM_MAX_INSNS), flags (0), then
 * MEGPU_PARGS_USER_SIZE bytes of user arguments read by LDARG/LDARG32.
 */
#define MEGPU_WAVE_LANES		16
#define MEGPU_WAVE_REGS			32
#define MEGPU_WAVE_MASK_DEPTH		16	/* nested IFs */
#define MEGPU_WAVE_SLOTS		16	/* resident waves per engine */
#define MEGPU_PROGRAM_MAX_INSNS		65536

#define MEGPU_PARGS_PROGRAM		0	/* u64 */
#define MEGPU_PARGS_LENGTH		8	/* u32 */
#define MEGPU_PARGS_FLAGS		12	/* u32, must be 0 */
#define MEGPU_PARGS_USER		16
#define MEGPU_PARGS_USER_SIZE		128
#define MEGPU_PARGS_SIZE		(MEGPU_PARGS_USER + MEGPU_PARGS_USER_SIZE)

/*
 * Wave ids, per device: engine, resident slot and a launch number that
 * makes a stale id (of a wave that ended) not match a later wave.
 */
#define MEGPU_WAVE_ID(eng, slot, seq) \
	((((eng) & 0xfu) << 28) | (((slot) & 0xffu) << 20) | ((seq) & 0xfffffu))
#define MEGPU_WAVE_ID_ENGINE(id)	(((id) >> 28) & 0xf)
#define MEGPU_WAVE_ID_SLOT(id)		(((id) >> 20) & 0xff)
#define MEGPU_WAVE_ID_SEQ(id)		((id) & 0xfffff)
#define MEGPU_WAVE_ID_NONE		0xffffffffu

/*
 * Instructions are 64 bits, little endian: opcode 7:0, dst 15:8,
 * src0 23:16, src1 31:24, imm 63:32. Register fields >= MEGPU_WAVE_REGS
 * fault BAD_OPERAND, except src1 == MEGPU_ISA_IMM in the binary ALU,
 * float and compare ops, which then use imm instead: sign-extended for
 * integer ops, the binary32 bits for float ops. Memory addresses are
 * src0 + sign-extended imm; branch targets are instruction indexes in
 * imm.
 */
#define MEGPU_INSN(op, dst, s0, s1, imm) \
	((uint64_t)((op) & 0xffu) | (uint64_t)((dst) & 0xffu) << 8 | \
	 (uint64_t)((s0) & 0xffu) << 16 | (uint64_t)((s1) & 0xffu) << 24 | \
	 (uint64_t)(uint32_t)(imm) << 32)
#define MEGPU_INSN_OP(i)		((uint32_t)(i) & 0xff)
#define MEGPU_INSN_DST(i)		((uint32_t)((i) >> 8) & 0xff)
#define MEGPU_INSN_SRC0(i)		((uint32_t)((i) >> 16) & 0xff)
#define MEGPU_INSN_SRC1(i)		((uint32_t)((i) >> 24) & 0xff)
#define MEGPU_INSN_IMM(i)		((uint32_t)((i) >> 32))
#define MEGPU_ISA_IMM			0xff
/*
 * SYSCALL dst, N, s0, s1, s2: s2 in imm 6:0, flags in imm 7, N in imm
 * 31:8. Flag MEGPU_SYSCALL_HI ("syscall.hi", seed 003's optional
 * acquisition priority): while a HI SYSCALL of a wave of the dispatch
 * has lanes without a mailbox slot, the engine's non-HI SYSCALLs of that
 * dispatch claim no FREE slot (they retry); see megpu-hw.rst.
 */
#define MEGPU_SYSCALL_HI		MEGPU_BIT(7)
#define MEGPU_INSN_SYSCALL_FLAGS(dst, n, s0, s1, s2, flags) \
	MEGPU_INSN(MEGPU_OP_SYSCALL, dst, s0, s1, \
		   ((uint32_t)(n) << 8) | ((s2) & 0x7fu) | \
		   ((flags) & MEGPU_SYSCALL_HI))
#define MEGPU_INSN_SYSCALL(dst, n, s0, s1, s2) \
	MEGPU_INSN_SYSCALL_FLAGS(dst, n, s0, s1, s2, 0)
#define MEGPU_INSN_SYSCALL_HI(dst, n, s0, s1, s2) \
	MEGPU_INSN_SYSCALL_FLAGS(dst, n, s0, s1, s2, MEGPU_SYSCALL_HI)
#define MEGPU_INSN_SYSCALL_N(i)		(MEGPU_INSN_IMM(i) >> 8)
#define MEGPU_INSN_SYSCALL_SRC2(i)	(MEGPU_INSN_IMM(i) & 0x7f)
#define MEGPU_INSN_SYSCALL_IS_HI(i)	\
	(!!(MEGPU_INSN_IMM(i) & MEGPU_SYSCALL_HI))
#define MEGPU_SYSCALL_MAX_N		0xffffff

/* Control and moves. Per lane unless said "wave". */
#define MEGPU_OP_NOP			0x00
#define MEGPU_OP_END			0x01	/* wave: the wave ends */
#define MEGPU_OP_MOV			0x02	/* dst = s0 */
#define MEGPU_OP_LI			0x03	/* dst = sext(imm) */
#define MEGPU_OP_LIH			0x04	/* dst = imm << 32 | dst[31:0] */
#define MEGPU_OP_S2R			0x05	/* dst = special reg imm */
#define MEGPU_OP_LDARG			0x06	/* dst = user arg u64 at imm */
#define MEGPU_OP_LDARG32		0x07	/* dst = user arg u32 at imm */
/* Integer ALU, 64-bit, dst = s0 op s1; shifts use s1 & 63. */
#define MEGPU_OP_ADD			0x10
#define MEGPU_OP_SUB			0x11
#define MEGPU_OP_MUL			0x12
#define MEGPU_OP_AND			0x13
#define MEGPU_OP_OR			0x14
#define MEGPU_OP_XOR			0x15
#define MEGPU_OP_SHL			0x16
#define MEGPU_OP_SHR			0x17	/* logical */
#define MEGPU_OP_SAR			0x18	/* arithmetic */
#define MEGPU_OP_MIN			0x19	/* signed */
#define MEGPU_OP_MAX			0x1a
#define MEGPU_OP_MINU			0x1b	/* unsigned */
#define MEGPU_OP_MAXU			0x1c
/* Float ALU on binary32 (round to nearest even, as the host does). */
#define MEGPU_OP_FADD			0x20
#define MEGPU_OP_FSUB			0x21
#define MEGPU_OP_FMUL			0x22
#define MEGPU_OP_FMIN			0x23
#define MEGPU_OP_FMAX			0x24
#define MEGPU_OP_I2F			0x25	/* dst = (float)(int64)s0 */
#define MEGPU_OP_F2I			0x26	/* trunc, saturating int32, NaN 0 */
/* Compares: dst = 1 if true else 0. */
#define MEGPU_OP_CMPEQ			0x30
#define MEGPU_OP_CMPNE			0x31
#define MEGPU_OP_CMPLT			0x32	/* signed */
#define MEGPU_OP_CMPLE			0x33
#define MEGPU_OP_CMPLTU			0x34	/* unsigned */
#define MEGPU_OP_CMPLEU			0x35
#define MEGPU_OP_FCMPEQ			0x36	/* false for NaN */
#define MEGPU_OP_FCMPLT			0x37
#define MEGPU_OP_FCMPLE			0x38
/* Divergence and branches (wave). */
#define MEGPU_OP_IF			0x40	/* push mask; mask &= s0 != 0 */
#define MEGPU_OP_ELSE			0x41	/* mask = top & ~mask */
#define MEGPU_OP_ENDIF			0x42	/* mask = pop */
#define MEGPU_OP_JMP			0x43	/* pc = imm */
#define MEGPU_OP_BRANY			0x44	/* if any active s0 != 0 */
/* Memory through the GPU MMU; address = s0 + sext(imm), aligned. */
#define MEGPU_OP_LD32			0x50	/* dst = zext(u32) */
#define MEGPU_OP_LD64			0x51
#define MEGPU_OP_ST32			0x52	/* mem = s1[31:0] */
#define MEGPU_OP_ST64			0x53	/* mem = s1 */
#define MEGPU_OP_ATOMADD32		0x54	/* dst = old; mem += s1 */
#define MEGPU_OP_ATOMCAS32		0x55	/* mem == dst ? s1; dst = old */
#define MEGPU_OP_ATOMXCHG32		0x56	/* dst = old; mem = s1 */
/* Seed 003: GPU-to-CPU calls (wave). */
#define MEGPU_OP_SYSCALL		0x60	/* see MEGPU_INSN_SYSCALL */
#define MEGPU_OP_INTERRUPT		0x61	/* raise MISC_IRQ_WAVE */
#define MEGPU_OP_SLEEP			0x62	/* park until WAVE_RESTART */
/* SLEEP imm: raise MISC_IRQ_WAVE once parked (INTERRUPT + SLEEP, no race) */
#define MEGPU_SLEEP_IRQ			MEGPU_BIT(0)

/*
 * Mailboxes (seed 003): an array of slots in memory shared by the CPU
 * and the device, little endian. The device (SYSCALL) takes a FREE slot
 * with a compare-and-swap FREE -> FILLING, writes N, the three
 * arguments and the caller's wave id, then stores ACTIVE, parks the wave
 * and raises MISC_IRQ_SYSCALL. The CPU runs the call, writes RET, stores
 * RETURNING and writes the wave id to WAVE_RESTART; the wave then reads
 * RET into its destination register and stores FREE.
 */
#define MEGPU_MBOX_STATE		0	/* u32: MEGPU_MBOX_* below */
#define MEGPU_MBOX_OP			4	/* u32: N */
#define MEGPU_MBOX_ARG(i)		(8 + (i) * 4)	/* u32 s0, s1, s2 */
#define MEGPU_MBOX_CALLER		20	/* u32: wave id */
#define MEGPU_MBOX_RET			24	/* u64: result */
#define MEGPU_MBOX_SLOT_SIZE		32
#define MEGPU_MBOX_ALIGN		32
#define MEGPU_MBOX_MAX_SLOTS		1024

#define MEGPU_MBOX_FREE			0
#define MEGPU_MBOX_FILLING		1
#define MEGPU_MBOX_ACTIVE		2
#define MEGPU_MBOX_RETURNING		3

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
 * Notification record, 16 bytes, 8-aligned: DONE is incremented
 * atomically once per take (so exactly-once means DONE == 1), BY is the
 * owner id of the runner, BATCH its batch number, STATUS 0 or the
 * MEGPU_FAULT_* that stopped the task (the task did not complete). A
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

/* Special registers for S2R (imm). */
#define MEGPU_SR_GLOBAL_ID		0	/* y * grid_x + x */
#define MEGPU_SR_GLOBAL_ID_X		1
#define MEGPU_SR_GLOBAL_ID_Y		2
#define MEGPU_SR_LOCAL_ID		3	/* ly * group_x + lx */
#define MEGPU_SR_LOCAL_ID_X		4
#define MEGPU_SR_LOCAL_ID_Y		5
#define MEGPU_SR_GROUP_ID_X		6
#define MEGPU_SR_GROUP_ID_Y		7
#define MEGPU_SR_GRID_X			8
#define MEGPU_SR_GRID_Y			9
#define MEGPU_SR_GROUP_SIZE_X		10
#define MEGPU_SR_GROUP_SIZE_Y		11
#define MEGPU_SR_WAVE_ID		12	/* MEGPU_WAVE_ID() */
#define MEGPU_SR_LANE_ID		13
#define MEGPU_SR_EXEC			14	/* the execution mask */
/*
 * GPU address of the user arguments (the program-arguments block +
 * MEGPU_PARGS_USER): a program loads arguments past LDARG's 128 bytes
 * with LD32/LD64 from here (a task's block may be longer, ARG_SIZE).
 */
#define MEGPU_SR_ARGS			15
#define MEGPU_SR_COUNT			16

/*
 * GPU MMU: two levels, 4 KiB pages, 32-bit virtual addresses.
 * The page directory (level 1) and each page table (level 2) are 1024
 * 64-bit entries, 8 KiB, 8 KiB aligned. Level 1 is indexed by VA bits
 * 31:22, level 2 by bits 21:12. An entry holds the bus address of the
 * next level or page in bits 51:12 (the level-2 table address is 8 KiB
 * aligned), flags below. An invalid entry, a write through a read-only
 * page, or an address of 4 GiB or more faults.
 */
#define MEGPU_VA_BITS			32
#define MEGPU_VA_SIZE			0x100000000ull
#define MEGPU_PAGE_SHIFT		12
#define MEGPU_PAGE_SIZE			0x1000u
#define MEGPU_PT_ENTRIES		1024
#define MEGPU_PT_SIZE			(MEGPU_PT_ENTRIES * 8)
#define MEGPU_PDE_INDEX(va)		(((va) >> 22) & 0x3ff)
#define MEGPU_PTE_INDEX(va)		(((va) >> 12) & 0x3ff)

#define MEGPU_PTE_VALID			MEGPU_BIT(0)
#define MEGPU_PTE_WRITE			MEGPU_BIT(1)	/* leaf only */
#define MEGPU_PTE_ADDR_MASK		0x000ffffffffff000ull

/*
 * Multi-GPU coordination without a single point of control (seed 000).
 *
 * Several megpu devices (agents) share guest memory. Each device has an
 * agent id and the agent count (MGPU_AGENT_ID, MGPU_AGENT_COUNT, which
 * the driver sets; their reset values come from the "mgpu-agent" and
 * "mgpu-agents" properties). All engines of a device act as its agent.
 * Every decision is made by the engines' own host-atomic reads and
 * writes of coordination words in memory; no device arbitrates.
 *
 * MGPU_SCHED: bus address of a schedule block (0: off). With it set,
 * each coordination step (one write, or the reads of one check) of an
 * engine waits until the block's agent[pos] is the device's agent id,
 * then advances pos; once pos >= len the steps run freely. Devices that
 * point at the same block take their steps in the order it lists, so a
 * race replays exactly (F17). Layout below (MEGPU_MGPU_SCHED_*).
 * MGPU_STEPS counts the coordination steps the device's engines took.
 */
#define MEGPU_REG_MGPU_AGENT_ID		0x00c0	/* RW: 0..AGENT_COUNT-1 */
#define MEGPU_REG_MGPU_AGENT_COUNT	0x00c4	/* RW: 1..MEGPU_MGPU_MAX_AGENTS */
#define MEGPU_REG_MGPU_SCHED_LO		0x00c8	/* RW: schedule block, 4-aligned */
#define MEGPU_REG_MGPU_SCHED_HI		0x00cc
#define MEGPU_REG_MGPU_STEPS		0x00d0	/* RO: coordination steps */

#define MEGPU_MGPU_MAX_AGENTS		8

/* Schedule block: u32 pos, u32 len, then len agent ids, one byte each. */
#define MEGPU_MGPU_SCHED_POS		0
#define MEGPU_MGPU_SCHED_LEN		4
#define MEGPU_MGPU_SCHED_AGENT(i)	(8 + (i))
#define MEGPU_MGPU_SCHED_MAX		65536

/*
 * A seeded schedule: LEN has MEGPU_MGPU_SCHED_SEEDED, no list follows but
 * a u64 seed and a u32 agent mask (not 0, agents < MEGPU_MGPU_MAX_AGENTS),
 * and agent[pos] is megpu_mgpu_seed_agent(seed, mask, pos): every device
 * computes the order itself from the seed alone.
 */
#define MEGPU_MGPU_SCHED_SEEDED		0x80000000u
#define MEGPU_MGPU_SCHED_SEED		8	/* u64 */
#define MEGPU_MGPU_SCHED_MASK		16	/* u32 */
#define MEGPU_MGPU_SCHED_SEEDED_BYTES	20

/*
 * A seeded schedule may cover a whole run (LEN up to MEGPU_MGPU_SCHED_MAX)
 * and record it: with MEGPU_MGPU_SCHED_TRACED in LEN too, the block goes
 * on to MEGPU_MGPU_SCHED_TRACED_BYTES. DONE(a) != 0 says agent a has no
 * step left (the CPU sets it when the agent's work completed): a turn
 * drawn for it is skipped (pos advanced by whoever waits on it), so the
 * order stays the seed's. Every step taken in its turn is written to
 * TRACE[TRACE_COUNT] while TRACE_COUNT < TRACE_CAP (a record below), and
 * TRACE_COUNT counts every step, so an overflow shows.
 */
#define MEGPU_MGPU_SCHED_TRACED		0x40000000u
#define MEGPU_MGPU_SCHED_DONE(a)	(24 + (a))	/* u8 each */
#define MEGPU_MGPU_SCHED_TRACE_COUNT	32	/* u32 */
#define MEGPU_MGPU_SCHED_TRACE_CAP	36	/* u32: records */
#define MEGPU_MGPU_SCHED_TRACE		40	/* u64: bus address, 8-aligned */
#define MEGPU_MGPU_SCHED_TRACED_BYTES	48

/*
 * A step record, 8 bytes: the agent, what the step was, the byte offset
 * of the word it touched from the packet's base (an MSEM slot: 4 * agent;
 * an ARB block's word), and the value: the new one of a write, the one
 * read by a read.
 */
#define MEGPU_MGPU_REC_AGENT		0	/* u8 */
#define MEGPU_MGPU_REC_KIND		1	/* u8: MEGPU_MGPU_STEP_* */
#define MEGPU_MGPU_REC_OFFSET		2	/* u8 */
#define MEGPU_MGPU_REC_ENGINE		3	/* u8 */
#define MEGPU_MGPU_REC_VALUE		4	/* u32 */
#define MEGPU_MGPU_REC_SIZE		8

#define MEGPU_MGPU_STEP_SIGNAL		1	/* MSEM_SIGNAL: own slot + 1 */
#define MEGPU_MGPU_STEP_WAIT_DEC	2	/* MSEM_WAIT: own slot - 1 */
#define MEGPU_MGPU_STEP_WAIT_UNDO	3	/* a failed check: + 1 back */
#define MEGPU_MGPU_STEP_READ		4	/* a slot read by a check */
#define MEGPU_MGPU_STEP_ARB_STORE	5	/* ARB: a byte stored */
#define MEGPU_MGPU_STEP_ARB_READ	6	/* ARB: a word read */
#define MEGPU_MGPU_STEP_ARB_ADD		7	/* ARB: the semaphore word */

/* splitmix64 of (seed, pos), then one of @mask's agents: pure. */
static inline unsigned int megpu_mgpu_seed_agent(unsigned long long seed,
						 unsigned int mask,
						 unsigned int pos)
{
	unsigned long long z = seed + (pos + 1ull) * 0x9e3779b97f4a7c15ull;
	unsigned int k;

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	z ^= z >> 31;
	for (k = z % __builtin_popcount(mask); k; k--)
		mask &= mask - 1;
	return __builtin_ctz(mask);
}

/*
 * The arbitration rules (seed 000 §III), pure: the device decides with
 * them and the host checker (tests/host/mgpu_test.c) explores every
 * interleaving of small systems with the same code; libmegpu has no copy.
 */

/* Eq. 1, the 2-agent one-bit adder: 1 grants @id the node. */
static inline unsigned int megpu_arb_eq1(unsigned int req0, unsigned int req1,
					 unsigned int last, unsigned int id)
{
	return (!!req0 + !!req1 + (last & 1) + (id & 1)) & 1;
}

/* Eq. 1 on a node dword {Req0, Req1, Last} for @side. */
static inline unsigned int megpu_arb_node_ack(unsigned int dw,
					      unsigned int side)
{
	return megpu_arb_eq1(dw & 0xff, (dw >> 8) & 0xff, dw >> 16, side);
}

/* Tournament levels for @agents (1, 2, 4, 8), else -1. */
static inline int megpu_arb_levels(unsigned int agents)
{
	return agents == 8 ? 3 : agents == 4 ? 2 : agents == 2 ? 1 :
	       agents == 1 ? 0 : -1;
}

/* Dword index (in the ARB block) of @agent's node at @level; *@side. */
static inline unsigned int megpu_arb_node(unsigned int agents,
					  unsigned int agent,
					  unsigned int level,
					  unsigned int *side)
{
	unsigned int first = 0, l;

	for (l = 0; l < level; l++)
		first += agents >> (l + 1);
	*side = (agent >> level) & 1;
	return 1 + first + (agent >> (level + 1));
}

/* The seed's 4-GPU decision tree (Tables 2A/2B): non-zero means wait. */
static inline int megpu_arb_literal_wait(unsigned int dw1, unsigned int dw2,
					 unsigned int i)
{
	unsigned int pair = (i >> 1) & 1;
	unsigned int mine = pair ? dw2 : dw1, other = pair ? dw1 : dw2;
	unsigned int lastpair = dw1 >> 24;

	return (((mine >> (8 * !(i & 1))) & 0xff) &&
		((mine >> 16) & 0xff) == i) ||
	       ((other & 0xffff) && lastpair == pair);
}

/* Per-engine counters (relative to the engine block). */
#define MEGPU_ENG_MSEM_RETRIES		0xc0	/* RO: MSEM_WAIT attempts that blocked */
#define MEGPU_ENG_MSEM_FALSE_BLOCKS	0xc4	/* RO: of which a signal was there */
#define MEGPU_ENG_ARB_SPINS		0xc8	/* RO: checks that said "wait" */
#define MEGPU_ENG_ARB_FAILED_WAITS	0xcc	/* RO: semaphore found 0 (Failed Wait) */

/*
 * Multi-summed semaphore: an array of MGPU_AGENT_COUNT 32-bit signed
 * slots at @base (4-aligned), one per agent. An engine changes only its
 * own slot, with atomic read/modify/write.
 *
 * MSEM_SIGNAL: base(2). Slot[agent] += 1, then wakes every waiting
 * engine of every device.
 * MSEM_WAIT: base(2), mask(1). Slot[agent] -= 1 (pre-decrement), then
 * the slots of @mask (which must contain the own agent and no agent >=
 * AGENT_COUNT) are summed in 32 bits, wrapping. If bit 31 of the sum is
 * set, slot[agent] += 1 (compensation), the engine stalls until any
 * coordination write of any device (or 1 ms) and retries; else the wait
 * is done. Before a retry the device counts MSEM_RETRIES, and
 * MSEM_FALSE_BLOCKS if a sum re-read after the compensation is >= 1.
 */
#define MEGPU_PKT_MSEM_SIGNAL		0x10
#define MEGPU_PKT_MSEM_WAIT		0x11
#define MEGPU_PKT_MSEM_SIGNAL_COUNT	2
#define MEGPU_PKT_MSEM_WAIT_COUNT	3
#define MEGPU_MSEM_SLOT(agent)		((agent) * 4)
#define MEGPU_ARB_HELD_MAX		4

/*
 * Request/acknowledge arbitration: ARB_ACQUIRE base(2), ARB_RELEASE
 * base(2), flags in the header. The block at @base (4-aligned) is
 * MGPU_AGENT_COUNT dwords: DW0 a 32-bit semaphore (used only with
 * FLAG_SEM), then the arbitration dwords. Fields are bytes; an agent
 * writes only its own Req bytes and the Last bytes of its nodes.
 *
 * Tournament (default; 2, 4 or 8 agents): N - 1 nodes of the 2-agent
 * rule, level by level: level L has N >> (L + 1) nodes, node k of the
 * whole list is DW(1 + k) = {byte 0: Req side 0, byte 1: Req side 1,
 * byte 2: Last side}. Agent a at level L uses node (a >> (L + 1)) of
 * that level as side (a >> L) & 1: write Req[side] = 1, Last = side,
 * then check until ack = (Req0 + Req1 + Last + side) mod 2 is 1 (Eq. 1,
 * a one-bit adder); win every level up to the root. Release clears the
 * Req bytes from the root down. With 2 agents this is the seed's
 * Table 1: DW1 = {Req0, Req1, Last}.
 *
 * FLAG_LITERAL (4 agents only): the seed's Table 2 decision tree, kept
 * to show that it is NOT mutually exclusive: DW1 = {Req0, Req1, Last01,
 * LastPair}, DW2 = {Req2, Req3, Last23, 0} (Last01/Last23: agent id,
 * LastPair: pair 0 or 1). Agent i writes Req, Last of its pair, LastPair,
 * then waits while (Req[mate] && Last == i) ||
 * ((Req of the other pair) && LastPair == own pair).
 *
 * Engines of one GPU are one agent: a device-local stage in front of
 * the protocol lets one of them at a time hold a block (keyed by its
 * bus address); the others stall at ACQUIRE. An engine holds at most
 * MEGPU_ARB_HELD_MAX blocks; ACQUIRE of a block it holds, or one more,
 * and RELEASE of a block another engine of the GPU holds fault ARB_HELD.
 * A reset, a fault or a SET_CONTEXT to another context drops the holds.
 *
 * Pure mutex (no FLAG_SEM): ACQUIRE returns holding the lock, RELEASE
 * (same flags) gives it up. With FLAG_SEM the arbiter guards DW0:
 * ACQUIRE takes the lock, and if DW0 != 0 decrements it and unlocks;
 * if DW0 == 0 (Failed Wait) it unlocks (Req cleared, Last unchanged, so
 * the other agent goes next), stalls like MSEM_WAIT and retries.
 * RELEASE with FLAG_SEM locks, increments DW0 and unlocks. RELEASE first
 * waits until the engine's posted writes are in memory, so data written
 * inside the critical section is visible to the next owner.
 */
#define MEGPU_PKT_ARB_ACQUIRE		0x12
#define MEGPU_PKT_ARB_RELEASE		0x13
#define MEGPU_PKT_ARB_COUNT		2
#define MEGPU_ARB_FLAG_SEM		MEGPU_BIT(0)
#define MEGPU_ARB_FLAG_LITERAL		MEGPU_BIT(1)
#define MEGPU_ARB_FLAGS			(MEGPU_ARB_FLAG_SEM | MEGPU_ARB_FLAG_LITERAL)
#define MEGPU_ARB_SEM			0	/* DW0 byte offset */
#define MEGPU_ARB_DW(n)			((n) * 4)
#define MEGPU_ARB_REQ(side)		(side)	/* byte within a node dword */
#define MEGPU_ARB_LAST			2
#define MEGPU_ARB_LASTPAIR		3	/* literal tree, in DW1 */

/* Accepted by every engine type. */
#define MEGPU_PKTS_MGPU \
	(MEGPU_BIT(MEGPU_PKT_MSEM_SIGNAL) | MEGPU_BIT(MEGPU_PKT_MSEM_WAIT) | \
	 MEGPU_BIT(MEGPU_PKT_ARB_ACQUIRE) | MEGPU_BIT(MEGPU_PKT_ARB_RELEASE))

#endif /* MEGPU_HW_H */
