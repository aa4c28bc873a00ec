/* SPDX-License-Identifier: GPL-2.0 */
/* Copyright 2026 The megpu authors */
/**
 * DOC: Driver structures
 *
 * The device, its engines, address spaces, BOs, files and jobs, and the
 * functions the driver's files share; the lock order is below.
 */
#ifndef MEGPU_DRV_H
#define MEGPU_DRV_H

#include <linux/completion.h>
#include <linux/xarray.h>
#include <linux/io.h>
#include <linux/kref.h>
#include <linux/list.h>
#include <linux/mutex.h>
#include <linux/spinlock.h>
#include <linux/semaphore.h>
#include <linux/wait.h>
#include <drm/drm_device.h>
#include <drm/drm_gem_shmem_helper.h>
#include <drm/drm_mm.h>
#include <drm/gpu_scheduler.h>
#include <drm/megpu_drm.h>

#include "megpu_hw_regs.h"
#include "megpu_sem_plan.h"

struct megpu_device;
struct dma_buf;
struct dma_buf_attachment;
struct megpu_fence;
struct sg_table;

/**
 * DOC: Locking
 *
 * Outer to inner; a lock is never taken while one to its right is held:
 *
 * - &megpu_device.submit_lock (SUBMIT: arm and push in one order), then
 *   the BOs' dma_resv locks (a ww transaction).
 * - &megpu_engine.ring_lock (run_job, the timeout handler, the fault
 *   handler in the interrupt thread), then &megpu_device.sem_lock
 *   (planning a frame), &megpu_device.syscall_lock (slots of a reset
 *   engine), &megpu_device.flush_lock and &megpu_engine.job_lock.
 * - &megpu_device.bos_lock, then &megpu_device.sem_lock (debugfs).
 * - &megpu_device.syscall_lock: mailboxes; only MMIO and, briefly, each
 *   &megpu_engine.job_lock inside (the syscall scan finds the job each
 *   engine runs). A spinlock taken in the hard interrupt handler too.
 * - &megpu_bo.mappings_lock, &megpu_vm.lock, &megpu_vm.mm_lock,
 *   &megpu_device.mmu_lock: taken alone.
 * - Spinlocks, innermost: &megpu_engine.job_lock, &megpu_device.flush_lock,
 *   &megpu_engine.fence_lock (the hardware fences).
 *
 * run_job, the interrupt threads (engine and misc vectors, all of them)
 * and the reset are fence-signalling paths (dma_fence_begin_signalling()):
 * they neither allocate memory nor wait for anything a fence's completion
 * depends on. Host flushes are waited for with no lock held, except by
 * the timeout handler before a reset (megpu_flush_before_reset(), under
 * &megpu_engine.ring_lock): the device drains by itself, the FLUSH_DONE
 * interrupt that ends the wait takes no ring_lock, and the wait is
 * bounded (MEGPU_FLUSH_TIMEOUT_MS).
 */

/* Ring frames are at most this long; the ring holds RING_SIZE / this. */
#define MEGPU_RING_SIZE		SZ_64K
#define MEGPU_FRAME_MAX_BYTES	512
#define MEGPU_FAULT_LOG		16
#define MEGPU_FAULT_HOLD_MAX_MS	10000U	/* debugfs fault_hold_ms */
#define MEGPU_KDQ_HOLD_MAX_US	20000U	/* debugfs kdq_signal_hold_us */
/* TASKQ_SLEEP, and TASKQ_WAIT, callers of a file asleep at once (-EBUSY) */
#define MEGPU_TASKQ_SLEEPERS_MAX	64

/* Semaphore objects; 0 is the blank reference, never handed out. */
#define MEGPU_SEM_COUNT		4096

extern unsigned int megpu_job_timeout_ms;
extern bool megpu_gpu_semaphores;
extern unsigned int megpu_job_limit;
extern bool megpu_drop_waits;
extern bool megpu_irq_retire;
extern bool megpu_sched_highpri;

/**
 * struct megpu_vector - one MSI-X vector
 * @mdev: the device
 * @index: MSI-X vector number (MEGPU_VEC_*)
 * @irq: Linux IRQ number
 * @test_done: completed when a test interrupt arrives on this vector
 * @engine: the engine whose vector it is, once the engine is set up
 * @pending: engine interrupt status for the IRQ thread
 */
struct megpu_vector {
	struct megpu_device *mdev;
	unsigned int index;
	int irq;
	struct completion test_done;
	struct megpu_engine *engine;
	atomic_t pending;
};

/**
 * struct megpu_fault - a fault recorded by an engine, for debugfs
 * @code: MEGPU_FAULT_*
 * @info: MEGPU_FAULT_INFO_*
 * @addr: faulting address (virtual inside an IB)
 * @head: ring offset of the faulting ring packet
 * @seqno: the job that faulted
 * @ctx: its GPU context
 */
struct megpu_fault {
	u32 code;
	u32 info;
	u64 addr;
	u32 head;
	u64 seqno;
	u32 ctx;
};

/**
 * struct megpu_frame - what a ring frame did, for debugfs
 * @seqno: the job's timestamp
 * @ctx: its GPU context
 * @ib_va: its IB
 * @own: the semaphore it signals
 * @nwaits: number of @waits
 * @waits: the semaphores it waits for, by engine
 */
struct megpu_frame {
	u64 seqno;
	u32 ctx;
	u64 ib_va;
	struct megpu_sem_ref own;
	u32 nwaits;
	struct megpu_sem_ref waits[MEGPU_MAX_ENGINES];
};

/**
 * struct megpu_sem_obj - a semaphore object of the pool
 * @tag: the engine and timestamp of the job that signals it
 * @waiters: per engine, the last job whose frame waits on it: the object
 *	is reused only when its tag and all its waiters have expired
 */
struct megpu_sem_obj {
	struct megpu_sem_ref tag;
	u64 waiters[MEGPU_MAX_ENGINES];
};

/**
 * struct megpu_engine - one engine: its ring, scheduler and fences
 * @mdev: the device
 * @index: engine number
 * @type: MEGPU_ENGINE_*
 * @name: type name and instance, e.g. "copy0"
 * @regs: the engine's register block
 * @sched: DRM GPU scheduler feeding the ring
 * @submit_wq: its work queue (high priority, ordered)
 * @ring_lock: serializes writes to the ring
 * @ring: ring buffer (coherent DMA memory)
 * @ring_dma: its bus address
 * @tail: byte offset where the next packet goes
 * @frames: ring offsets where the last frames start (debugfs dump)
 * @frame_count: frames emitted
 * @frame_log: the last frames' waits and signals (debugfs)
 * @seqno_cpu: where TIMESTAMP packets write the completed seqno
 * @seqno_dma: its bus address
 * @fence_context: dma_fence context of the hardware fences
 * @emitted: last seqno put in the ring
 * @fence_lock: lock of the hardware fences
 * @job_lock: protects @active, @faults, @last_retire_ns and @last_fence
 * @active: jobs in the ring, oldest first
 * @last_fence: hardware fence of the last job run_job started, referenced
 * @last_retire_ns: when the last job retired (busy-time accounting)
 * @faults: the last faults, for debugfs
 * @fault_count: faults seen since probe
 * @reset_count: engine resets done by the driver
 * @idle_irqs: idle interrupts seen
 * @timed_out: jobs whose timeout came inside a function level reset,
 *	handed to its reset_done (under the device's recovery_lock)
 */
struct megpu_engine {
	struct megpu_device *mdev;
	unsigned int index;
	u32 type;
	char name[16];
	void __iomem *regs;

	struct drm_gpu_scheduler sched;
	struct workqueue_struct *submit_wq;

	struct mutex ring_lock;		/* ring writes */
	u32 *ring;
	dma_addr_t ring_dma;
	u32 tail;
	u32 frames[MEGPU_FAULT_LOG];
	unsigned int frame_count;
	struct megpu_frame frame_log[MEGPU_FAULT_LOG];

	u64 *seqno_cpu;
	dma_addr_t seqno_dma;
	u64 fence_context;
	u64 emitted;
	spinlock_t fence_lock;		/* hardware fences */

	spinlock_t job_lock;		/* active, faults, last_fence */
	struct list_head active;
	struct dma_fence *last_fence;
	u64 last_retire_ns;
	struct megpu_fault faults[MEGPU_FAULT_LOG];
	unsigned int fault_count;
	unsigned int reset_count;
	unsigned int idle_irqs;
	struct list_head timed_out;
};

/**
 * struct megpu_device - driver state of one megpu GPU
 * @drm: the DRM device
 * @pdev: the PCI function
 * @mmio: BAR0 registers
 * @hw_version: MEGPU_REG_VERSION
 * @caps: MEGPU_REG_CAPS feature bits
 * @num_engines: engines present
 * @engine_types: MEGPU_REG_ENGINE_TYPES
 * @vec: MSI-X vectors
 * @irq_tests: test interrupts in flight (megpu_irq_test())
 * @engines: the engines
 * @seqno_page: completed-seqno slots of all engines
 * @seqno_page_dma: its bus address
 * @submit_lock: keeps job arm and push in one order per device
 * @reset_sem: held for writing through a function level reset, for
 *	reading by the ioctls that must not run inside it (TASKQ_ATTACH, FLUSH)
 * @recovery_lock: job timeouts against a function level reset's own
 *	steps; held across no allocation (a hung job's fence waits for it)
 * @in_reset: inside a function level reset (under @recovery_lock)
 * @ctxs: GPU context ids, handed out cyclically so that debugfs and
 *	fdinfo do not show a closed file's id for a new one at once
 * @ctx_next: where the cyclic allocation of @ctxs goes on
 * @mmu_lock: serializes TLB invalidations
 * @sem_lock: protects the semaphore pool and the resource objects
 * @sems: the semaphore pool
 * @sem_cpu: the pool's semaphore memory, one 64-bit slot per object
 * @sem_dma: its bus address
 * @sem_cursor: where the search for a free object starts
 * @sem_pool_waits: jobs that found the pool in use and waited
 * @sem_limit: objects of the pool to use, 0: all (debugfs, tests)
 * @fault_hold_ms: the fault handler waits this long, under ring_lock,
 *	before it blames a job (debugfs, tests: a timeout meets it)
 * @reset_hold_ms: after a function level reset, the driver waits this
 *	long before it sets the device up again (debugfs, tests: an ioctl
 *	meets the reset)
 * @recovery_hold_ms: a function level reset waits this long, holding
 *	recovery_lock, before its own steps (debugfs, tests: a job's timeout
 *	comes meanwhile)
 * @reset_timeouts: job timeouts that came inside a function level reset
 * @fail_hold_ms: when the driver fails every job on the hardware (an
 *	unplug, a function level reset), it waits this long after each one
 *	(debugfs, tests: the scheduler frees the job meanwhile)
 * @kdq_signal_hold_us: the driver's dequeuer holds the signaler of each
 *	of its job fences this long before its own callback runs (debugfs,
 *	tests: the work sees the fence signaled while its callbacks run)
 * @sem_reserve_hold_ms: prepare_job holds a job's fresh semaphore
 *	reservation this long before run_job (debugfs, tests: other engines'
 *	jobs find the pool reserved and no job in a ring)
 * @flush_lock: protects the host-flush state
 * @flush_wq: waiters for a flush acknowledgment
 * @flush_slots: user-driven callers that may wait on @flush_wq at once
 *	(MEGPU_FLUSH_WAITERS: FLUSH ioctls and the unmaps of closed BOs);
 *	the others wait for a slot, so that no number of user threads
 *	lengthens the interrupt's wake-up
 * @flush_jobs: jobs done by their engine, waiting for their host flush
 * @flush_started: host flushes started
 * @flush_done: host flushes the device acknowledged (FLUSH_SEQ)
 * @flush_base: @flush_started when the device last counted from 0 (a
 *	RESET or function level reset): the counts never go back, so that
 *	a flush waited for across a reset is not lost
 * @flush_stopped: the device was reset on its way out (megpu_remove()):
 *	its queued writes are dropped, nothing waits for a flush any more
 * @flush_ready: flush interrupts may be handled
 * @dirty_gen: counts completed jobs whose writes were not flushed
 * @clean_gen: the @dirty_gen value the last completed flush covers
 * @flush_dirty_at: @dirty_gen when each of the recent flushes started
 * @bos_lock: protects @bos, @kept and @kept_closed
 * @bos: every BO, for the resource-object dump
 * @kept: mappings whose unmap timed out waiting for a host flush: their
 *	BOs' pages may still be written by the device, so they go only
 *	once megpu_remove()'s reset dropped those writes
 * @kept_closed: that reset came: a mapping kept later goes at once
 * @next_bo_id: id of the next BO (debugfs)
 * @syscall_lock: protects @mailboxes, the mailboxes' service state
 *	and @sc
 * @mailboxes: the mailboxes of files with a job in a ring (debugfs
 *	lists them)
 * @sc: GPU-to-CPU call counters (debugfs "syscalls")
 * @floor_lock: serializes the floor probes (megpu_floor.c)
 * @floor_op: the last probe run ("doorbell", "irq")
 * @floor_n: how many times it ran
 * @floor_ns: how long that took
 * @live_bos: BOs alive (debugfs, leak checks)
 * @live_jobs: jobs alive
 * @live_vms: GPU address spaces alive
 * @live_files: per-file states alive (they outlive their file while a
 *	BO charged to them or a job of theirs does)
 * @live_mappings: BO mappings in address spaces alive
 * @live_in_fences: in-sync fences jobs hold (megpu_job.in_fences)
 * @run_seq: jobs put in a ring so far (megpu_job.run_seq)
 * @cancel_checks: jobs megpu_cancel_consumers() looked at (debugfs)
 * @agent_link: in megpu_mgpu.c's list of agents (seed 000), under its
 *	agents lock like the three fields below
 * @agent_registered: on that list
 * @agent_id: this device's agent id (MGPU_AGENT_ID)
 * @agent_count: agents in the machine (MGPU_AGENT_COUNT)
 * @mgpu_sched_dma: bus address of the shared schedule block, 0: none
 * @mgpu_trace_dma: bus address of its step trace, 0: none
 * @kdq_lock: protects @kdqs and TASKQ_REQ_WORK (seed 002's discrete
 *	variant, megpu_dequeue.c)
 * @kdq_mutex: serializes changes of @kdqs with each other and unplug
 * @kdqs: the task-queue attachments of all files
 * @kdq_requests: work requests the device raised (debugfs)
 * @taskq_releases: EVENT-queue releases seen (an engine's
 *	MISC_IRQ_TASKQ_RELEASE, a TASKQ_NOTIFY, the driver's own): what a
 *	TASKQ_SLEEP caller waits to change (megpu_taskq.c)
 * @taskq_lock: protects @taskq_files and each file's tq.sleepers
 * @taskq_files: the files with a TASKQ_SLEEP caller asleep
 * @taskq_wake: wakes them, in process context: a release may come in the
 *	hard interrupt handler, and a wake-up walks each file's sleepers
 */
struct megpu_device {
	struct drm_device drm;
	struct pci_dev *pdev;
	void __iomem *mmio;

	u32 hw_version;
	u32 caps;
	u32 num_engines;
	u32 engine_types;

	struct megpu_vector vec[MEGPU_NUM_VECTORS];
	atomic_t irq_tests;
	struct megpu_engine engines[MEGPU_MAX_ENGINES];

	void *seqno_page;
	dma_addr_t seqno_page_dma;

	struct mutex submit_lock;	/* job arm + push order */
	struct rw_semaphore reset_sem;	/* FLR window vs ioctls */
	struct mutex recovery_lock;	/* timeouts vs FLR steps */
	bool in_reset;
	struct xarray ctxs;
	u32 ctx_next;
	struct mutex mmu_lock;		/* TLB invalidations */

	struct mutex sem_lock;		/* pool, resource objects */
	struct megpu_sem_obj *sems;
	u64 *sem_cpu;
	dma_addr_t sem_dma;
	u32 sem_cursor;
	u64 sem_pool_waits;
	u32 sem_limit;
	u32 fault_hold_ms;
	u32 reset_hold_ms;
	u32 recovery_hold_ms;
	u32 reset_timeouts;
	u32 fail_hold_ms;
	u32 kdq_signal_hold_us;
	u32 sem_reserve_hold_ms;

	spinlock_t flush_lock;		/* flush_jobs, flush_started */
	wait_queue_head_t flush_wq;
	struct semaphore flush_slots;
	struct list_head flush_jobs;
	u64 flush_started;
	u64 flush_done;
	u64 flush_base;
	bool flush_stopped;
	bool flush_ready;
	atomic64_t dirty_gen;
	u64 clean_gen;
	u64 flush_dirty_at[64];

	struct mutex bos_lock;		/* bos, kept, kept_closed */
	struct list_head bos;
	struct list_head kept;
	bool kept_closed;
	u32 next_bo_id;

	spinlock_t syscall_lock;	/* mailboxes, sc; hard IRQ too */
	struct list_head mailboxes;
	struct {
		u64 irqs;
		u64 calls;
		u64 kernel_ops;
		u64 user_ops;
		u64 unknown_ops;
		u64 orphans;
		u64 bad_returns;
		u64 restarts;
		u64 deferred_restarts;
		u64 reclaimed;
		u64 scanned;
	} sc;

	struct mutex floor_lock;	/* floor_* */
	char floor_op[16];
	u32 floor_n;
	u64 floor_ns;

	atomic_t live_bos;
	atomic_t live_jobs;
	atomic_t live_vms;
	atomic_t live_files;
	atomic_t live_mappings;
	atomic_t live_in_fences;
	atomic64_t run_seq;
	atomic64_t cancel_checks;

	/* seed 000, under megpu_mgpu.c's agents lock */
	struct list_head agent_link;
	bool agent_registered;
	u32 agent_id;
	u32 agent_count;
	dma_addr_t mgpu_sched_dma;	/* the shared schedule, 0: none */
	dma_addr_t mgpu_trace_dma;	/* its step trace, 0: none */

	/* seed 002's discrete variant, megpu_dequeue.c */
	spinlock_t kdq_lock;		/* kdqs, TASKQ_REQ_WORK */
	struct mutex kdq_mutex;		/* kdqs changes, unplug */
	struct list_head kdqs;
	atomic64_t kdq_requests;

	/* seed 002's EVENT mode, megpu_taskq.c */
	atomic_t taskq_releases;
	struct mutex taskq_lock;	/* taskq_files, tq.sleepers */
	struct list_head taskq_files;
	struct work_struct taskq_wake;
};

/**
 * struct megpu_vm - a GPU virtual address space (one per open file)
 * @refcount: held by the file, mappings and jobs
 * @mdev: the device
 * @ctx_id: context id given to SET_CONTEXT
 * @lock: protects the page tables
 * @pd: page directory
 * @pd_dma: its bus address
 * @pt: page tables, allocated on demand
 * @pt_dma: their bus addresses
 * @mm_lock: protects @mm
 * @mm: allocator of virtual addresses, in pages
 * @jobs_in_ring: jobs of this address space in a ring and not yet
 *	signalled, whose queued writes may still land (see megpu_vm_unmap())
 * @user: the user its page tables are charged to (referenced), or NULL
 */
struct megpu_vm {
	struct kref refcount;
	struct megpu_device *mdev;
	struct megpu_user *user;
	u32 ctx_id;
	atomic_t jobs_in_ring;

	struct mutex lock;		/* page tables */
	u64 *pd;
	dma_addr_t pd_dma;
	u64 **pt;
	dma_addr_t *pt_dma;

	spinlock_t mm_lock;		/* mm */
	struct drm_mm mm;
};

/**
 * struct megpu_bo - a buffer object
 * @base: shmem GEM object
 * @read_only: mapped without GPU write permission
 * @aliased: another object of this device may share its pages and its
 *	dma_resv but not @res (any import: a read-only re-import and its
 *	exporter, or two files' imports of one foreign dma-buf): the
 *	resource objects do not see each other's jobs, so implicit
 *	dependencies are waited for as explicit ones
 * @mappings_lock: protects @mappings
 * @mappings: one struct megpu_mapping per address space it is mapped in
 * @res: its resource object (under the device's sem_lock)
 * @id: number shown in debugfs
 * @dev_node: in the device's BO list
 * @owner: the file its pinned pages, or an import's scatterlist, are
 *	charged to (referenced), or NULL
 * @charge: what is charged to @owner: the BO's size, or an import's
 *	scatterlist (megpu_gem_charge_import())
 */
struct megpu_bo {
	struct drm_gem_shmem_object base;
	struct megpu_file *owner;
	u64 charge;
	bool read_only;
	bool aliased;
	struct mutex mappings_lock;	/* mappings */
	struct list_head mappings;
	struct megpu_resource res;
	u32 id;
	struct list_head dev_node;
};

/**
 * struct megpu_mapping - a BO mapped into one address space
 * @node: in the BO's mapping list
 * @refcount: held by the file's handle and by jobs using it
 * @bo: the BO (referenced)
 * @vm: the address space (referenced)
 * @mmnode: the virtual range
 * @mapped: page table entries are written
 * @handles: handles of the file to the BO (under the BO's mappings_lock)
 */
struct megpu_mapping {
	struct list_head node;
	struct kref refcount;
	struct megpu_bo *bo;
	struct megpu_vm *vm;
	struct drm_mm_node mmnode;
	bool mapped;
	u32 handles;
};

/**
 * struct megpu_mailbox - a file's mailbox for GPU-to-CPU calls (seed 003)
 * @cpu: the slots (coherent DMA memory), NULL without waves
 * @dma: their bus address, for SET_MAILBOX
 * @slots: number of slots
 * @ctx: the file's GPU context (debugfs)
 * @closed: the file is closed: calls are answered -EPIPE
 * @pending: ACTIVE slots for the service, not yet fetched by it
 * @fetched: slots the service fetched and has not answered
 * @wq: the service's SYSCALL_WAIT
 * @ring_jobs: the file's jobs in a ring: only they can make calls
 * @node: in the device's list of mailboxes a SYSCALL interrupt scans,
 *	while @ring_jobs is not 0
 *
 * Everything but @cpu's contents and @wq is under syscall_lock.
 */
struct megpu_mailbox {
	void *cpu;
	dma_addr_t dma;
	u32 slots;
	u32 ctx;
	bool closed;
	unsigned long *pending;
	unsigned long *fetched;
	wait_queue_head_t wq;
	u32 ring_jobs;
	struct list_head node;
};

/**
 * struct megpu_taskq_state - a file's task-queue attachment, for TASKQ_WAIT
 * @wq: TASKQ_WAIT's waiters
 * @status: what the attachment completed with (0: all done)
 * @done: it completed; @status is valid (release/acquire)
 * @attached: the file has an attachment (not detached)
 * @sleep_wq: its TASKQ_SLEEP callers
 * @sleepers: how many (at most MEGPU_TASKQ_SLEEPERS_MAX; taskq_lock)
 * @sleep_node: in the device's taskq_files while @sleepers is not 0
 * @waiters: TASKQ_WAIT callers in @wq (at most MEGPU_TASKQ_SLEEPERS_MAX)
 * @kdq: the attachment, while on the device's list (kdq_lock): a file's
 *	TASKQ_NOTIFY, ATTACH and DETACH find it without walking the list
 */
struct megpu_taskq_state {
	wait_queue_head_t wq;
	atomic_t waiters;
	struct megpu_kdq *kdq;
	int status;
	bool done;
	bool attached;
	wait_queue_head_t sleep_wq;
	unsigned int sleepers;
	struct list_head sleep_node;
};

/**
 * struct megpu_user - what one user's files and address spaces pin
 * @node: in megpu_gem.c's table of users
 * @uid: the user (real uid of the opener)
 * @refs: held by the user's files and address spaces
 * @pinned_bytes: pinned memory charged to the user (user_pinned_mb)
 */
struct megpu_user {
	struct hlist_node node;
	kuid_t uid;
	refcount_t refs;
	atomic64_t pinned_bytes;
};

/**
 * struct megpu_file - per open file state
 * @refcount: held by the drm_file and by jobs (for busy time)
 * @mdev: the device
 * @vm: the file's GPU address space
 * @entity: scheduler entity per engine
 * @busy_ns: engine time used by this file's jobs, per engine
 * @pinned_bytes: pinned memory of the BOs it created (client_pinned_mb)
 * @user: the opener's charge (user_pinned_mb), NULL with CAP_IPC_LOCK
 * @banned: a job of this file hung: its jobs not yet run on that engine
 *	are cancelled and SUBMIT fails with -EIO
 * @jobs: its jobs not yet freed, SUBMIT and the dequeuer's (SUBMIT and
 *	TASKQ_ATTACH refuse at megpu_job_limit)
 * @mbox: its mailbox, alive as long as the file's jobs
 * @tq: its task-queue attachment's completion (megpu_dequeue.c)
 */
struct megpu_file {
	struct kref refcount;
	struct megpu_device *mdev;
	struct megpu_vm *vm;
	struct drm_sched_entity entity[MEGPU_MAX_ENGINES];
	atomic64_t busy_ns[MEGPU_MAX_ENGINES];
	atomic64_t pinned_bytes;
	struct megpu_user *user;
	bool banned;
	atomic_t jobs;
	struct megpu_mailbox mbox;
	struct megpu_taskq_state tq;
};

/**
 * struct megpu_job - one submitted job
 * @base: scheduler job
 * @engine: the engine it runs on
 * @file: the submitting file (referenced)
 * @vm: the address space it runs in (referenced)
 * @mappings: mappings of the BOs it uses (referenced)
 * @bo_flags: DRM_MEGPU_BO_* of each mapping
 * @bo_count: number of @mappings
 * @ib_va: IB address
 * @ib_dwords: IB size in dwords
 * @counted: in its file's @jobs until freed
 * @implicit: it waits for the BOs' earlier users (no NO_IMPLICIT)
 * @flush: its frame flushes its writes (no NO_FLUSH, no HOST_FLUSH)
 * @host_flush: its fence waits for a host flush (HOST_FLUSH)
 * @flush_target: the host flush that covers it
 * @flush_since: jiffies when it began to wait for that flush
 * @in_fences: the pending fences of its in-syncs, unwrapped, the latest
 *	of each fence context (referenced): the producers whose failure it
 *	inherits, and its explicit dependencies
 * @in_fence_count: entries in @in_fences
 * @in_failed: an in-sync fence had already failed at submit
 * @sem_deps: finished fences of producers on other engines of this GPU,
 *	from in-syncs, that it waits for on the GPU (referenced)
 * @sem_dep_next: the first @sem_deps entry prepare_job has not resolved
 * @dep_bucket: the semaphores of the resolved @sem_deps
 * @frame: its ring frame's waits and signal, once running
 * @done_fence: the scheduler's finished fence (referenced)
 * @hw_fence: the hardware fence, once running (referenced)
 * @seqno: its TIMESTAMP value, once running
 * @error: set when the job faulted or a producer failed
 * @run_seq: its place in the order jobs entered the device's rings (a
 *	producer enters before its consumers), once running
 * @active_node: in the engine's active list
 * @start_ns: when it was put in the ring
 * @ib_ring_off: ring offset of its IB packet (under the engine's job_lock)
 * @cancelled: a producer failed: its IB is replaced by a NOP
 * @fence_mem: the hardware fence, allocated at submit, until run_job
 * @reserved_sem: the semaphore object prepare_job reserved for it
 * @progress_tasks: its engine's TASKQ_JOB_TASKS at its last timeout check
 * @progress_periods: timeout periods it was granted for taking tasks
 * @free_work: the release after free_job (megpu_cleanup.c)
 */
struct megpu_job {
	struct drm_sched_job base;
	struct megpu_engine *engine;
	struct megpu_file *file;
	struct megpu_vm *vm;
	struct megpu_mapping **mappings;
	u32 *bo_flags;
	u32 bo_count;
	bool counted;
	bool implicit;
	bool flush;
	bool host_flush;
	u64 flush_target;
	unsigned long flush_since;
	u64 ib_va;
	u32 ib_dwords;
	struct dma_fence *in_fences[DRM_MEGPU_MAX_SYNCS];
	u32 in_fence_count;
	bool in_failed;
	struct xarray sem_deps;
	unsigned long sem_dep_next;
	struct megpu_bucket dep_bucket;
	struct megpu_frame frame;
	struct dma_fence *done_fence;
	struct dma_fence *hw_fence;
	u64 seqno;
	int error;
	u64 run_seq;
	struct list_head active_node;
	u64 start_ns;
	u32 ib_ring_off;
	bool cancelled;
	struct megpu_fence *fence_mem;
	u32 reserved_sem;
	u32 progress_tasks;
	u32 progress_periods;
	struct work_struct free_work;
};

static inline struct megpu_device *to_megpu(struct drm_device *drm)
{
	return container_of(drm, struct megpu_device, drm);
}

static inline struct megpu_bo *to_megpu_bo(struct drm_gem_object *obj)
{
	return container_of(to_drm_gem_shmem_obj(obj), struct megpu_bo, base);
}

static inline struct megpu_job *to_megpu_job(struct drm_sched_job *job)
{
	return container_of(job, struct megpu_job, base);
}

static inline u32 megpu_read(struct megpu_device *mdev, u32 reg)
{
	return readl(mdev->mmio + reg);
}

static inline void megpu_write(struct megpu_device *mdev, u32 reg, u32 val)
{
	writel(val, mdev->mmio + reg);
}

static inline u32 megpu_eng_read(struct megpu_engine *eng, u32 reg)
{
	return readl(eng->regs + reg);
}

static inline void megpu_eng_write(struct megpu_engine *eng, u32 reg, u32 val)
{
	writel(val, eng->regs + reg);
}

/* megpu_drv.c */
struct megpu_file *megpu_file_get(struct megpu_file *mfile);
void megpu_file_put(struct megpu_file *mfile);

/* megpu_irq.c */
int megpu_irq_init(struct megpu_device *mdev);
void megpu_irq_fini(struct megpu_device *mdev);
int megpu_irq_self_test(struct megpu_device *mdev);
bool megpu_irq_test(struct megpu_device *mdev, unsigned int i,
		    unsigned int timeout_ms);
void megpu_irq_enable_engines(struct megpu_device *mdev);

/* megpu_mmu.c */
struct megpu_vm *megpu_vm_create(struct megpu_device *mdev,
				 struct megpu_user *user);
struct megpu_vm *megpu_vm_get(struct megpu_vm *vm);
void megpu_vm_put(struct megpu_vm *vm);
int megpu_vm_map(struct megpu_mapping *mapping);
int megpu_vm_unmap(struct megpu_mapping *mapping, bool patient);
void megpu_mmu_invalidate(struct megpu_device *mdev);
u64 megpu_mmu_pt_bytes(void);
u64 megpu_mapping_va(struct megpu_mapping *mapping);

/* megpu_gem.c */
struct drm_gem_object *megpu_gem_create_object(struct drm_device *drm,
					       size_t size);
struct drm_gem_object *megpu_gem_prime_import(struct drm_device *drm,
					      struct dma_buf *dmabuf);
struct drm_gem_object *
megpu_gem_prime_import_sg_table(struct drm_device *drm,
				struct dma_buf_attachment *attach,
				struct sg_table *sgt);
u64 megpu_gem_pinned_bytes(void);
int megpu_pin_charge(struct megpu_file *mfile, u64 size);
void megpu_pin_uncharge(struct megpu_file *mfile, u64 size);
int megpu_pin_charge_user(struct megpu_user *user, struct megpu_file *mfile,
			  u64 size);
void megpu_pin_uncharge_user(struct megpu_user *user,
			     struct megpu_file *mfile, u64 size);
void megpu_bo_charged_to(struct megpu_bo *bo, struct megpu_file *mfile,
			 u64 size);
struct megpu_user *megpu_user_get_current(void);
struct megpu_user *megpu_user_get(struct megpu_user *user);
void megpu_user_put(struct megpu_user *user);
struct megpu_mapping *megpu_gem_map_private(struct megpu_bo *bo,
					    struct drm_file *file);
struct megpu_mapping *megpu_gem_mapping_get(struct megpu_bo *bo,
					    struct megpu_vm *vm);
void megpu_gem_mapping_put(struct megpu_mapping *mapping);
void megpu_gem_mapping_put_patient(struct megpu_mapping *mapping);
int megpu_bo_peek(struct drm_gem_object *obj, u64 off, unsigned int len,
		  u64 *v);
struct drm_gem_object *megpu_vm_lookup_bo(struct megpu_vm *vm, u64 va,
					  u64 len, u64 *offset);
int megpu_ioctl_gem_create(struct drm_device *drm, void *data,
			   struct drm_file *file);
int megpu_ioctl_gem_mmap_offset(struct drm_device *drm, void *data,
				struct drm_file *file);
int megpu_ioctl_gem_info(struct drm_device *drm, void *data,
			 struct drm_file *file);
int megpu_ioctl_gem_wait(struct drm_device *drm, void *data,
			 struct drm_file *file);
void megpu_gem_register(struct megpu_device *mdev, struct megpu_bo *bo);

/* megpu_registry.c */
void megpu_bo_registry_init(struct megpu_device *mdev);
void megpu_bo_registry_add(struct megpu_device *mdev, struct megpu_bo *bo);
void megpu_bo_registry_del(struct megpu_device *mdev, struct megpu_bo *bo);
void megpu_bo_registry_keep(struct megpu_device *mdev,
			    struct megpu_mapping *mapping);
unsigned int megpu_bo_registry_kept(struct megpu_device *mdev);
void megpu_bo_registry_release_kept(struct megpu_device *mdev, bool close);

/* megpu_ring.c */
int megpu_ring_init(struct megpu_engine *eng);
int megpu_ring_hw_init(struct megpu_engine *eng);
void megpu_ring_fini(struct megpu_engine *eng);
void megpu_ring_emit_job(struct megpu_engine *eng, struct megpu_job *job);
void megpu_ring_kick(struct megpu_engine *eng);
void megpu_ring_cancel_ib(struct megpu_engine *eng, struct megpu_job *job);
int megpu_engine_hw_reset(struct megpu_engine *eng);

/**
 * struct megpu_fence - a job's hardware fence (megpu_fence.c)
 * @base: the fence, seqno the one the job's TIMESTAMP writes
 * @engine: the engine whose ring runs the job
 * @sem: the GPU semaphore the job's frame signals, for consumers that
 *	wait for it on the GPU
 */
struct megpu_fence {
	struct dma_fence base;
	struct megpu_engine *engine;
	u32 sem;
};

/* megpu_sched.c */
int megpu_sched_init(struct megpu_device *mdev);
void megpu_sched_fini(struct megpu_device *mdev);
void megpu_sched_fail_all(struct megpu_device *mdev, int error);
void megpu_sched_reset_prepare(struct megpu_device *mdev);
void megpu_sched_reset_done(struct megpu_device *mdev);
void megpu_job_put(struct megpu_job *job);
void __megpu_job_put(struct megpu_job *job, bool patient);

/* megpu_fence.c */
bool megpu_sched_fence_is_ours(struct megpu_device *mdev,
			       struct dma_fence *fence,
			       struct drm_gpu_scheduler **sched);
struct dma_fence *megpu_sched_hw_fence(struct dma_fence *finished);
int megpu_job_alloc_fence(struct megpu_job *job);
struct dma_fence *megpu_fence_init(struct megpu_job *job, u64 seqno);
struct dma_fence *megpu_sched_oldest_fence(struct megpu_device *mdev);
bool megpu_job_inherits_failure(struct megpu_job *job);
bool megpu_job_cancel_if_failed(struct megpu_job *job);
void megpu_cancel_consumers(struct megpu_device *mdev);

/* megpu_retire.c */
void megpu_engine_irq(struct megpu_engine *eng, u32 status);
void megpu_engine_irq_fast(struct megpu_engine *eng, u32 status);
void megpu_job_signal(struct megpu_job *job);
void megpu_job_account(struct megpu_engine *eng, struct megpu_job *job,
		       u64 now);
void megpu_engine_retire(struct megpu_engine *eng);

/* megpu_cleanup.c */
int megpu_cleanup_module_init(void);
void megpu_cleanup_module_exit(void);
void megpu_job_put_deferred(struct megpu_job *job);
void megpu_job_hold_device(struct megpu_device *mdev);
void megpu_job_release_device(struct megpu_device *mdev);

/* megpu_sem.c */
int megpu_sem_init(struct megpu_device *mdev);
void megpu_sem_fini(struct megpu_device *mdev);
struct dma_fence *megpu_sem_reserve(struct megpu_job *job);
void megpu_sem_unreserve(struct megpu_job *job);
void megpu_sem_plan_job(struct megpu_job *job);
void megpu_sem_force_signal(struct megpu_job *job);
u64 megpu_sem_addr(struct megpu_device *mdev, u32 sem);
void megpu_sem_debugfs_init(struct megpu_device *mdev);

/* megpu_flush.c */
void megpu_flush_init(struct megpu_device *mdev);
u64 megpu_flush_start(struct megpu_device *mdev);
void megpu_flush_defer_job(struct megpu_job *job, u64 target);
void megpu_flush_irq(struct megpu_device *mdev);
bool megpu_flush_fail_job(struct megpu_job *job, int error);
int megpu_ioctl_flush(struct drm_device *drm, void *data,
		      struct drm_file *file);
void megpu_flush_debugfs_init(struct megpu_device *mdev);
void megpu_flush_debugfs_minor_init(struct drm_minor *minor);
int megpu_flush_unmapped(struct megpu_vm *vm, bool patient);
void megpu_flush_device_reset(struct megpu_device *mdev, bool removed);
void megpu_flush_reset_done(struct megpu_device *mdev);
void megpu_flush_before_reset(struct megpu_device *mdev);
void megpu_flush_mark_dirty(struct megpu_device *mdev);

/* megpu_mgpu.c */
void megpu_mgpu_register(struct megpu_device *mdev);
void megpu_mgpu_reset_done(struct megpu_device *mdev);
void megpu_mgpu_unregister(struct megpu_device *mdev);
int megpu_mgpu_param(struct megpu_device *mdev, u32 param, u64 *value);
void megpu_mgpu_debugfs_minor_init(struct drm_minor *minor);
int megpu_ioctl_msem_query(struct drm_device *drm, void *data,
			   struct drm_file *file);

/* megpu_syscall.c */
void megpu_syscall_init(struct megpu_device *mdev);
void megpu_syscall_debugfs_init(struct megpu_device *mdev);
int megpu_syscall_file_init(struct megpu_file *mfile);
void megpu_syscall_ring_job(struct megpu_file *mfile, bool in);
void megpu_syscall_file_close(struct megpu_file *mfile);
void megpu_syscall_file_fini(struct megpu_file *mfile);
void megpu_syscall_irq(struct megpu_device *mdev);
void megpu_syscall_engine_reset(struct megpu_engine *eng);
int megpu_ioctl_syscall_wait(struct drm_device *drm, void *data,
			     struct drm_file *file);
int megpu_ioctl_syscall_return(struct drm_device *drm, void *data,
			       struct drm_file *file);

/* megpu_taskq.c */
int megpu_ioctl_taskq_check(struct drm_device *drm, void *data,
			    struct drm_file *file);
int megpu_taskq_validate(struct megpu_bo *bo, u64 offset, u32 slots);
int megpu_ioctl_taskq_notify(struct drm_device *drm, void *data,
			     struct drm_file *file);
int megpu_ioctl_taskq_sleep(struct drm_device *drm, void *data,
			    struct drm_file *file);
void megpu_taskq_released(struct megpu_device *mdev);
int megpu_taskq_init(struct megpu_device *mdev);

/* megpu_dequeue.c */
int megpu_ioctl_taskq_attach(struct drm_device *drm, void *data,
			     struct drm_file *file);
int megpu_ioctl_taskq_detach(struct drm_device *drm, void *data,
			     struct drm_file *file);
int megpu_ioctl_taskq_wait(struct drm_device *drm, void *data,
			   struct drm_file *file);
void megpu_dequeue_init(struct megpu_device *mdev);
void megpu_dequeue_debugfs_init(struct megpu_device *mdev);
void megpu_dequeue_irq(struct megpu_device *mdev);
void megpu_dequeue_notify(struct megpu_file *mfile);
void megpu_dequeue_file_close(struct megpu_file *mfile);
void megpu_dequeue_reset_prepare(struct megpu_device *mdev);
void megpu_dequeue_halt_all(struct megpu_device *mdev, int error);

/* megpu_submit.c */
struct megpu_job *megpu_kernel_job_new(struct megpu_file *mfile,
				       struct drm_file *file, u32 engine,
				       struct megpu_mapping **maps,
				       const u32 *flags, u32 count);
void megpu_kernel_job_drop(struct megpu_job *job);
struct dma_fence *megpu_kernel_job_push(struct megpu_job *job, u64 ib_va,
					u32 ib_dwords);
int megpu_ioctl_submit(struct drm_device *drm, void *data,
		       struct drm_file *file);

/* megpu_knobs.c, megpu_floor.c: CONFIG_DRM_MEGPU_TESTING only */
#if IS_ENABLED(CONFIG_DRM_MEGPU_TESTING)
void megpu_debugfs_minor_init(struct drm_minor *minor);
void megpu_floor_debugfs_init(struct drm_minor *minor);
#else
static inline void megpu_debugfs_minor_init(struct drm_minor *minor)
{
}
#endif

/* megpu_debugfs.c */
void megpu_debugfs_init(struct megpu_device *mdev);
int megpu_debugfs_arg(const char __user *ubuf, size_t len, char *buf,
		      size_t size);

#endif /* MEGPU_DRV_H */
