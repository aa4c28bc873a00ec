/* SPDX-License-Identifier: MIT */
/*
 * megpu hardware contract: PCI identity, registers,
 * interrupt vectors, faults and the GPU page-table format. Plain defines:
 * the includer provides the fixed-width types.
 *
 * Part of include/megpu_hw.h (which includes every part); included
 * by the device and the driver. Prose: Documentation/megpu-hw.rst.
 */
#ifndef MEGPU_HW_REGS_H
#define MEGPU_HW_REGS_H

/* A single-bit mask; BIT() is not available to every includer. */
#define MEGPU_BIT(n)			(1u << (n))

/* PCI identity: QEMU's test vendor; device ID "MG" is unused by QEMU. */
#define MEGPU_PCI_VENDOR_ID		0x1234
#define MEGPU_PCI_DEVICE_ID		0x4d47
#define MEGPU_PCI_REVISION		0x01
#define MEGPU_PCI_CLASS			0x0380	/* display controller, other */

#define MEGPU_BAR_MMIO			0
#define MEGPU_BAR_MSIX			2	/* exclusive MSI-X table + PBA */
/*
 * A PCI Express endpoint with function level reset (PCIe capability
 * DEVCAP.FLR): an FLR resets the device as MEGPU_REG_RESET does, and the
 * config space and MSI-X table as PCI says.
 */
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
 * Tasks its DEQUEUEs ran since the ring's last TIMESTAMP packet (every
 * frame ends with one): the running job's progress, which a driver can
 * read when the job times out instead of a baseline at every submit.
 */
#define MEGPU_ENG_TASKQ_JOB_TASKS	0xf4	/* RO */
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
/* A task's STATUS only: its engine was reset before the task was done. */
#define MEGPU_FAULT_TQ_RESET		25

/* FAULT_INFO: access type and where the faulting packet came from. */
#define MEGPU_FAULT_INFO_WRITE		MEGPU_BIT(0)	/* else read */
#define MEGPU_FAULT_INFO_IN_IB		MEGPU_BIT(1)	/* else ring */
#define MEGPU_FAULT_INFO_WAVE		MEGPU_BIT(2)	/* a wave instruction */

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

#endif /* MEGPU_HW_REGS_H */
