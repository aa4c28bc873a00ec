/*
 * megpu: a virtual multi-engine GPU (QEMU device state)
 *
 * The state of the device and of each engine, shared by the files of
 * hw/misc/megpu/ (megpu.c lists them by mechanism). The register layout
 * is the hardware contract, include/hw/misc/megpu_hw.h.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#ifndef HW_MISC_MEGPU_H
#define HW_MISC_MEGPU_H

#include "qemu/event_notifier.h"
#include "qemu/queue.h"
#include "qemu/thread.h"
#include "hw/pci/pci_device.h"
#include "hw/misc/megpu_hw_mgpu.h"

#define TYPE_MEGPU "megpu"
OBJECT_DECLARE_SIMPLE_TYPE(MegpuState, MEGPU)

/*
 * Device limits the header leaves open. A packet beyond them faults with
 * MEGPU_FAULT_BAD_ARG, so that one packet cannot occupy an engine for
 * an unbounded time.
 */
#define MEGPU_COPY_MAX_BYTES        (64 * 1024 * 1024)
#define MEGPU_FILL_MAX_BYTES        (64 * 1024 * 1024)

/*
 * Posted writes: entries the memory-controller queue holds at most. A
 * full MC queue keeps writes in the engine queues, which then stall
 * their engines, so queued data stays bounded.
 */
#define MEGPU_MC_QUEUE_DEPTH        256
/* counters of an engine's pending-write filter (megpu-writeq.c) */
#define MEGPU_WQ_FILTER_BITS        16384

/* One posted write: at most a page of data for one guest-physical range */
typedef struct MegpuWrite MegpuWrite;

/* Posted writes by (due tick, issue number): a min-heap (megpu-writeq.c) */
typedef struct MegpuWqHeap {
    MegpuWrite **w;
    uint32_t n, cap;
} MegpuWqHeap;

/* The waves of a running program DISPATCH (megpu-wave.c) */
typedef struct MegpuWaves MegpuWaves;

/*
 * One engine: a command processor with its own thread. The registers the
 * guest sees live here and are protected by @lock; the thread drops @lock
 * while it executes a packet, so MMIO never waits for a packet.
 */
typedef struct MegpuEngine {
    struct MegpuState *s;
    unsigned idx;
    unsigned type;              /* MEGPU_ENGINE_* */
    uint32_t pkt_mask;          /* MEGPU_PKTS_* of the type */
    uint32_t kernel_mask;       /* MEGPU_KERNELS_* of the type */

    QemuThread thread;
    bool thread_started;
    QemuMutex lock;             /* everything below */
    QemuCond cond;              /* doorbell, ack, reset, signal, stop */
    /*
     * Held by the engine around the translation and access of one page
     * chunk of an IB access, so MMU_INVALIDATE can wait for it. Never
     * held while sleeping or taking another lock.
     */
    QemuMutex xlat_lock;
    uint32_t xlat_gen;          /* MMU_INVALIDATEs, under xlat_lock */

    /* Ring */
    uint64_t ring_base;
    uint32_t ring_size;         /* 0 until a valid size is written */
    uint32_t head;
    uint32_t tail;

    /* Engine state */
    bool busy;                  /* thread is executing a ring packet */
    bool faulted;               /* stalled until FAULT_ACK */
    bool waiting;               /* stalled on a WAIT packet */
    bool reset_pending;         /* CONTROL.RESET or device reset asked */
    bool full_reset;            /* device reset: forget the ring too */
    bool stop;                  /* unrealize: the thread exits */
    uint32_t resume_head;       /* where FAULT_ACK continues */
    uint64_t wake_seq;          /* bumped by every SIGNAL */

    /* Registers */
    uint32_t irq_status;
    uint32_t fault_code;
    uint64_t fault_addr;
    uint32_t fault_head;
    uint32_t fault_info;
    bool has_ctx;               /* a SET_CONTEXT ran since reset */
    uint32_t ctx_id;
    uint64_t pt_base;
    uint64_t wait_addr;
    uint64_t wait_value;
    uint32_t delay_us;
    uint64_t packets;
    uint32_t faults;
    uint32_t resets;
    uint64_t last_ts;
    uint32_t flushes;           /* FLUSH packets done */
    uint32_t idle_signals;
    /* where the engine's time went (issue 12's timeline), host ns */
    uint64_t wait_ns;           /* stalled in WAIT packets */
    uint64_t busy_ns;           /* running ring packets, WAITs included */
    uint32_t waits;             /* WAIT packets that stalled */
    uint64_t stat_latch;        /* the *_NS_HI half of the last LO read */

    /*
     * Waves (megpu-wave.c): the running program dispatch, if any, and
     * its counts; the wave state itself is in @waves. Under @lock.
     */
    MegpuWaves *waves;
    uint32_t waves_live;
    uint32_t waves_parked;
    uint32_t wave_seq;          /* launch number of the next wave */
    uint32_t wave_wakes;        /* restarts that woke a wave; atomic */
    uint32_t wave_spin_skip;    /* waits left that do not poll first */
    uint64_t wave_insns;
    uint64_t work_items;        /* launched by DISPATCH (the SPI stage) */
    uint64_t work_groups;
    uint32_t wave_fault_id;
    uint32_t wave_fault_pc;
    uint64_t mbox_base;         /* SET_MAILBOX (seed 003) */
    uint32_t mbox_slots;

    /* DEQUEUE (seed 002, megpu-dequeue.c); counts under @lock */
    uint32_t tq_tasks;
    uint32_t tq_job_tasks;      /* since the ring's last TIMESTAMP */
    uint32_t tq_batches;
    uint32_t tq_steals;
    uint32_t tq_state;          /* MEGPU_TQ_STATE_*, atomic */

    /*
     * Posted writes, under @wq_lock (this engine's; megpu-writeq.c):
     * stage-1 queue in issue order, its length, and entries of this
     * engine in both stages. The counters are also read without the
     * lock (registers, fast paths).
     */
    QemuMutex wq_lock;
    QemuCond wq_cond;           /* an entry moved, landed or was dropped */
    QTAILQ_HEAD(, MegpuWrite) wq;
    /* this engine's stage-2 entries, also in issue order */
    QTAILQ_HEAD(, MegpuWrite) wq_mc;
    /* both stages' entries again, by due tick: the next one is at hand */
    MegpuWqHeap wq_due;
    MegpuWqHeap wq_mc_due;
    uint32_t wq_len;
    uint32_t wq_pending;
    uint32_t stalled_writes;
    QSLIST_HEAD(, MegpuWrite) wq_landed;    /* to unmap and free */
    GPtrArray *wq_ticked;       /* one tick's due entries (scratch) */
    /*
     * Pages that may hold a pending write of this engine: pending
     * entries per bucket of a hash (megpu-writeq.c); counted under
     * wq_lock before an entry is queued and after it lands, read
     * without it, by other engines too.
     */
    uint16_t wq_grains[MEGPU_WQ_FILTER_BITS];
    /*
     * Which bytes of its page a bucket's pending entries may cover
     * (megpu_wq_span()): written under wq_lock by this engine's thread
     * only, as entries are queued or grow (stale, and not looked at,
     * while the bucket's count is zero); read without it by this
     * engine's own reads.
     */
    uint64_t wq_spans[MEGPU_WQ_FILTER_BITS];
    /*
     * The youngest stage-1 entry of wave stores, which the next wave
     * store right after its end may join (megpu_wq_append), and that end
     * (0: none; written under wq_lock, read without it as a hint).
     */
    MegpuWrite *wq_open;
    hwaddr wq_open_end;
    uint64_t wq_rng;            /* this engine's delay generator */
    int64_t wq_steps;           /* memory-clock ticks from its own work */
    bool wq_running;            /* in a ring packet (atomic, a hint) */

    /* Multi-GPU counters (megpu-mgpu.c), atomic */
    uint32_t msem_retries;
    uint32_t msem_false_blocks;
    uint32_t arb_spins;
    uint32_t arb_failed_waits;
    /* ARB blocks (bus addresses) this engine holds; under mgpu_lock */
    hwaddr arb_held[MEGPU_ARB_HELD_MAX];
    unsigned arb_held_n;
} MegpuEngine;

struct MegpuState {
    PCIDevice parent_obj;

    MemoryRegion mmio;
    /* a cold-plugged device looks for a vIOMMU again at machine done */
    Notifier viommu_check;

    /* Properties */
    uint32_t num_engines;
    uint32_t version;           /* x-version: test a driver mismatch */
    bool drop_irqs;             /* x-drop-irqs: test a dead interrupt path */
    uint32_t caps;              /* x-caps: the features REG_CAPS shows */
    /* x-hold-writes: posted writes move only with virtual time (tests) */
    bool hold_writes;
    bool test_regs;         /* x-test-regs: MEGPU_REG_TEST_HOLD exists */
    uint32_t test_hold;     /* MEGPU_TEST_HOLD_*, under wq_lock (atomic) */
    uint32_t wave_budget;       /* instructions per wave, 0: unlimited */
    uint32_t wave_spin_us;      /* poll this long for a SYSCALL's restart */
    uint32_t wait_spin_us;      /* a stalled WAIT spins this long first */
    bool wave_nonatomic;        /* x-wave-nonatomic: test the atomics test */
    bool wave_simd;             /* x-wave-simd: AVX2 lane loops if there */
    bool taskq_nonatomic;       /* x-taskq-nonatomic: queue lock test */
    bool taskq_no_notify;       /* x-taskq-no-notify: EVENT mode test */

    /* Registers */
    uint32_t scratch;
    uint32_t irq_test_status;
    uint32_t mmu_invalidations;
    uint32_t wave_restarts;     /* under the BQL */
    uint32_t wave_restart_errors;
    uint32_t wave_interrupts;   /* atomic: engines count */
    uint32_t wave_control;      /* atomic: MEGPU_WAVE_CTRL_* */
    uint32_t syscalls;          /* atomic: mailbox slots filled */
    uint32_t syscall_retries;   /* atomic: SYSCALLs that found no slot */
    uint32_t syscall_strays;    /* atomic: stray RETURNING slots reclaimed */

    /*
     * Engine threads never take the BQL: they set a bit here and
     * schedule @irq_bh, which sends the MSI-X messages from the main loop.
     */
    uint32_t irq_pending;
    QEMUBH *irq_bh;

    /* Engines stalled on WAIT: other writes wake them only when needed. */
    uint32_t sem_waiters;

    /*
     * Posted writes and flushes (megpu-writeq.c). @wq_lock protects the
     * flushes, the mode and MISC_IRQ_STATUS; each engine's wq_lock its
     * queues. Engine threads post, forward, wait and move their own
     * entries with their clocks under their own lock; whatever looks at
     * more than one engine's queues holds @wq_lock and every engine's
     * (megpu_wq_lock_all); @mc_timer does for virtual time, the
     * memory-controller thread for host flushes. Lock order: engine
     * lock, then xlat_lock, then @wq_lock, then the engines' wq_lock
     * by index.
     */
    char *write_mode_prop;      /* "relaxed" (default) or "strict" */
    uint32_t write_seed;
    uint32_t write_mode_reset;  /* MEGPU_WRITE_MODE_* from the property */
    QemuMutex wq_lock;
    QemuThread mc_thread;
    bool mc_started;
    bool mc_stop;
    EventNotifier mc_notify;    /* wakes the MC thread */
    QEMUTimer *mc_timer;        /* virtual time: the clocks' common part */
    int64_t mc_timer_at;        /* its deadline as last moved; atomic */
    int64_t vclock_base;        /* QEMU_CLOCK_VIRTUAL ns at tick 0 */
    uint32_t write_mode;
    uint64_t wq_seq;            /* issue number of the next write; atomic */
    uint32_t wq_total;          /* entries in both stages; atomic */
    uint32_t mc_len;            /* entries in stage 2; atomic */
    GArray *flushes;            /* MegpuFlush, in start order */
    uint32_t flushes_waiting;   /* @flushes->len, read without the lock */
    uint32_t flush_started;
    uint32_t flush_seq;
    uint32_t flush_status;
    uint32_t misc_irq_status;

    /* Multi-GPU coordination (megpu-mgpu.c, seed 000); atomic */
    uint32_t mgpu_agent_prop;   /* mgpu-agent: reset value of AGENT_ID */
    uint32_t mgpu_agents_prop;  /* mgpu-agents: reset value of COUNT */
    bool mgpu_nonatomic;        /* x-mgpu-nonatomic: negative control */
    uint32_t mgpu_agent_id;
    uint32_t mgpu_agent_count;
    uint64_t mgpu_sched;        /* schedule block, 0: steps run freely */
    uint32_t mgpu_steps;
    /*
     * Task queues (megpu-dequeue.c): engines sleeping in a DEQUEUE wait
     * on @tq_cond for @tq_seq to change (a release in EVENT mode, a
     * TASKQ_NOTIFY). The counters are atomic.
     */
    QemuMutex tq_mutex;
    QemuCond tq_cond;
    uint64_t tq_seq;
    uint32_t tq_notifies;
    uint32_t tq_tasks;
    uint32_t tq_batches;
    uint32_t tq_steals;
    uint32_t tq_lock_retries;
    uint32_t tq_event_waits;
    uint32_t tq_req_work;       /* engines asking for work when idle */
    uint32_t tq_req_pending;    /* engines that asked (RW1C) */

    MegpuEngine engines[MEGPU_MAX_ENGINES];
};

#endif
