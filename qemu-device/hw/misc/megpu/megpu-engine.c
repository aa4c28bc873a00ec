/*
 * megpu: engines (command processors)
 *
 * DOC: engines and their command processors
 *
 * Each engine owns a ring in guest memory and a thread that fetches and
 * executes packets from it, so engines run truly in parallel. This file
 * is the command processor: the engine thread, ring and IB fetch, header
 * checks and faults, engine reset, the engine registers, and the packet
 * dispatch table (megpu_exec_packet). It executes the packets that only
 * change the engine's own state (NOP, IB, SET_CONTEXT, SET_MAILBOX); the
 * other executors live in the file of their mechanism (megpu-dma.c,
 * megpu-sem.c, megpu-flush.c, megpu-kernels.c, megpu-wave.c,
 * megpu-mgpu.c, megpu-dequeue.c). Locking:
 *
 * - MMIO handlers run under the BQL and take the engine's @lock only for
 *   short register updates; they never wait for a packet.
 * - The engine thread holds @lock only to snapshot the ring and publish
 *   results, never while touching guest memory or sleeping in a packet.
 * - The engine thread never takes the BQL: interrupts go through a
 *   bottom half (megpu_raise_irq), and DMA reaches only guest RAM (see
 *   megpu-mmu.c). So a BQL holder may wait for an engine (device reset,
 *   MMU invalidate, unrealize) without deadlock.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */

#include "qemu/osdep.h"
#include "qemu/atomic.h"
#include "qemu/bswap.h"
#include "qemu/log.h"
#include "qemu/main-loop.h"
#include "qemu/rcu.h"
#include "megpu-internal.h"
#include "trace.h"
#include "hw/misc/megpu_hw_wave.h"

/* The ring state an engine thread works from while it runs a packet. */
typedef struct MegpuRing {
    uint64_t base;
    uint32_t size;
    uint32_t head;
    uint32_t tail;
} MegpuRing;

static const uint8_t megpu_fixed_count[] = {
    [MEGPU_PKT_IB] = MEGPU_PKT_IB_COUNT,
    [MEGPU_PKT_TIMESTAMP] = MEGPU_PKT_TIMESTAMP_COUNT,
    [MEGPU_PKT_COPY] = MEGPU_PKT_COPY_COUNT,
    [MEGPU_PKT_FILL] = MEGPU_PKT_FILL_COUNT,
    [MEGPU_PKT_DISPATCH] = MEGPU_PKT_DISPATCH_COUNT,
    [MEGPU_PKT_SET_CONTEXT] = MEGPU_PKT_SET_CONTEXT_COUNT,
    [MEGPU_PKT_SIGNAL] = MEGPU_PKT_SIGNAL_COUNT,
    [MEGPU_PKT_WAIT] = MEGPU_PKT_WAIT_COUNT,
    [MEGPU_PKT_FLUSH] = MEGPU_PKT_FLUSH_COUNT,
    [MEGPU_PKT_IDLE_SIGNAL] = MEGPU_PKT_IDLE_SIGNAL_COUNT,
    [MEGPU_PKT_SET_MAILBOX] = MEGPU_PKT_SET_MAILBOX_COUNT,
    [MEGPU_PKT_MSEM_SIGNAL] = MEGPU_PKT_MSEM_SIGNAL_COUNT,
    [MEGPU_PKT_MSEM_WAIT] = MEGPU_PKT_MSEM_WAIT_COUNT,
    [MEGPU_PKT_ARB_ACQUIRE] = MEGPU_PKT_ARB_COUNT,
    [MEGPU_PKT_ARB_RELEASE] = MEGPU_PKT_ARB_COUNT,
    [MEGPU_PKT_DEQUEUE] = MEGPU_PKT_DEQUEUE_COUNT,
    [MEGPU_PKT_TASK_DONE] = MEGPU_PKT_TASK_DONE_COUNT,
    [MEGPU_PKT_TASK_RUN] = MEGPU_PKT_TASK_RUN_COUNT,
};

static const uint32_t megpu_type_pkts[MEGPU_ENGINE_NUM_TYPES] = {
    [MEGPU_ENGINE_GFX] = MEGPU_PKTS_GFX,
    [MEGPU_ENGINE_COMPUTE] = MEGPU_PKTS_COMPUTE,
    [MEGPU_ENGINE_COPY] = MEGPU_PKTS_COPY,
    [MEGPU_ENGINE_VIDEO] = MEGPU_PKTS_VIDEO,
};

static const uint32_t megpu_type_kernels[MEGPU_ENGINE_NUM_TYPES] = {
    [MEGPU_ENGINE_GFX] = MEGPU_KERNELS_ALL,
    [MEGPU_ENGINE_COMPUTE] = MEGPU_KERNELS_ALL,
    [MEGPU_ENGINE_COPY] = 0,
    [MEGPU_ENGINE_VIDEO] = MEGPU_KERNELS_VIDEO,
};

void megpu_raise_irq(MegpuState *s, unsigned vector)
{
    qatomic_or(&s->irq_pending, 1u << vector);
    qemu_bh_schedule(s->irq_bh);
}

/* Record the packet's first fault; returns false for "return megpu_fault" */
bool megpu_fault(MegpuExec *x, uint32_t code, uint64_t addr, bool is_write)
{
    if (!x->fault_code) {
        x->fault_code = code;
        x->fault_addr = addr;
        x->fault_info = (is_write ? MEGPU_FAULT_INFO_WRITE : 0) |
                        (x->in_ib ? MEGPU_FAULT_INFO_IN_IB : 0) |
                        (x->in_wave ? MEGPU_FAULT_INFO_WAVE : 0);
    }
    return false;
}

/* A fault that is about the packet itself, not a memory access. */
bool megpu_pkt_fault(MegpuExec *x, uint32_t code)
{
    return megpu_fault(x, code, x->pkt_addr, false);
}

bool megpu_engine_should_abort(MegpuEngine *e)
{
    return qatomic_read(&e->reset_pending) || qatomic_read(&e->stop);
}

static void megpu_wake_locked(MegpuEngine *e)
{
    qemu_cond_broadcast(&e->cond);
}

static void megpu_count_packet(MegpuEngine *e)
{
    qemu_mutex_lock(&e->lock);
    e->packets++;
    qemu_mutex_unlock(&e->lock);
}

/* DELAY_US before each packet; a reset or stop cuts it short. */
static bool megpu_engine_delay(MegpuEngine *e)
{
    int64_t start, end, now;
    bool ok = true;

    if (!qatomic_read(&e->delay_us)) {
        return true;
    }
    start = g_get_monotonic_time();
    qemu_mutex_lock(&e->lock);
    for (;;) {
        if (e->reset_pending || e->stop) {
            ok = false;
            break;
        }
        /* re-read: a shorter DELAY_US releases the packet early */
        end = start + e->delay_us;
        now = g_get_monotonic_time();
        if (now >= end) {
            break;
        }
        if (end - now < 1000) {
            /* below the condvar's millisecond resolution */
            qemu_mutex_unlock(&e->lock);
            g_usleep(end - now);
            qemu_mutex_lock(&e->lock);
            continue;
        }
        qemu_cond_timedwait(&e->cond, &e->lock,
                            MIN((end - now) / 1000, 100));
    }
    qemu_mutex_unlock(&e->lock);
    return ok;
}

static bool megpu_exec_set_context(MegpuExec *x, const uint32_t *p)
{
    MegpuEngine *e = x->e;
    uint64_t pt = megpu_pl64(p, 0);
    bool changed;

    if ((pt & (MEGPU_PT_SIZE - 1)) || (pt & ~MEGPU_PTE_ADDR_MASK)) {
        return megpu_pkt_fault(x, MEGPU_FAULT_BAD_ARG);
    }
    qemu_mutex_lock(&e->lock);
    changed = !e->has_ctx || e->pt_base != pt ||
              e->ctx_id != megpu_pl32(p, 2);
    e->pt_base = pt;
    e->ctx_id = megpu_pl32(p, 2);
    e->has_ctx = true;
    qemu_mutex_unlock(&e->lock);
    /* ARB blocks are held by a context: none is carried into another */
    if (changed) {
        megpu_mgpu_engine_drop(e);
    }
    trace_megpu_set_context(e->idx, pt, megpu_pl32(p, 2));
    return true;
}

/*
 * SET_MAILBOX: where this engine's SYSCALLs find their slots (seed 003).
 * Bus addresses: the mailbox is the kernel's, not a client's.
 */
static bool megpu_exec_set_mailbox(MegpuExec *x, const uint32_t *p)
{
    MegpuEngine *e = x->e;
    uint64_t addr = megpu_pl64(p, 0);
    uint32_t slots = megpu_pl32(p, 2);

    if ((addr & (MEGPU_MBOX_ALIGN - 1)) || slots > MEGPU_MBOX_MAX_SLOTS ||
        addr > UINT64_MAX - (uint64_t)slots * MEGPU_MBOX_SLOT_SIZE) {
        return megpu_pkt_fault(x, MEGPU_FAULT_BAD_ARG);
    }
    qemu_mutex_lock(&e->lock);
    e->mbox_base = slots ? addr : 0;
    e->mbox_slots = slots;
    qemu_mutex_unlock(&e->lock);
    trace_megpu_set_mailbox(e->idx, addr, slots);
    return true;
}

/*
 * IDLE interrupt: the engine ran out of work or a job said so. It says
 * nothing about the engine's queued writes (only a flush does), so it
 * never waits for them.
 */
void megpu_engine_idle_irq_locked(MegpuEngine *e, bool from_packet)
{
    e->irq_status |= MEGPU_ENG_IRQ_IDLE;
    e->idle_signals++;
    trace_megpu_idle(e->idx, from_packet, qatomic_read(&e->wq_pending));
    megpu_raise_irq(e->s, MEGPU_VEC_ENGINE(e->idx));
}

/*
 * Checks that need only the header, in the order of FAULT_* precedence:
 * opcode, engine type, privilege, payload count.
 */
static bool megpu_check_header(MegpuExec *x, uint32_t hdr)
{
    uint32_t op = MEGPU_PKT_OPCODE(hdr), count = MEGPU_PKT_COUNT(hdr);

    if (op >= ARRAY_SIZE(megpu_fixed_count) ||
        (op > MEGPU_PKT_SET_MAILBOX && !megpu_fixed_count[op])) {
        return megpu_pkt_fault(x, MEGPU_FAULT_BAD_OPCODE);
    }
    if (!(x->e->pkt_mask & MEGPU_BIT(op))) {
        return megpu_pkt_fault(x, MEGPU_FAULT_UNSUPPORTED);
    }
    if (x->in_ib && op == MEGPU_PKT_IB) {
        return megpu_pkt_fault(x, MEGPU_FAULT_NESTED_IB);
    }
    if (x->in_ib && (op == MEGPU_PKT_SET_CONTEXT ||
                     op == MEGPU_PKT_SET_MAILBOX)) {
        return megpu_pkt_fault(x, MEGPU_FAULT_PRIVILEGED);
    }
    if (op == MEGPU_PKT_WRITE_DATA ? count < 3 :
        op != MEGPU_PKT_NOP && count != megpu_fixed_count[op]) {
        return megpu_pkt_fault(x, MEGPU_FAULT_BAD_LENGTH);
    }
    return true;
}

static bool megpu_exec_ib(MegpuExec *x, const uint32_t *p);

/*
 * The dispatch table: execute one checked packet whose payload has been
 * fetched. Each opcode has one executor, in the file of its mechanism:
 *
 * - here, the engine's own state: NOP, IB, SET_CONTEXT, SET_MAILBOX
 * - megpu-dma.c, data: WRITE_DATA, TIMESTAMP, COPY, FILL
 * - megpu-kernels.c and megpu-wave.c (seed 003): DISPATCH
 * - megpu-sem.c (seed 001): SIGNAL, WAIT
 * - megpu-flush.c (seed 004): FLUSH, IDLE_SIGNAL
 * - megpu-mgpu.c (seed 000): MSEM_SIGNAL, MSEM_WAIT, ARB_ACQUIRE/RELEASE
 * - megpu-dequeue.c (seed 002): DEQUEUE
 */
static bool megpu_exec_op(MegpuExec *x, uint32_t hdr, const uint32_t *p)
{
    uint32_t count = MEGPU_PKT_COUNT(hdr);

    trace_megpu_packet(x->e->idx, x->ring_off, x->pkt_addr,
                       MEGPU_PKT_OPCODE(hdr), count, x->in_ib);
    switch (MEGPU_PKT_OPCODE(hdr)) {
    case MEGPU_PKT_NOP:
        return true;
    case MEGPU_PKT_IB:
        return megpu_exec_ib(x, p);
    case MEGPU_PKT_WRITE_DATA:
        return megpu_exec_write_data(x, p, count);
    case MEGPU_PKT_TIMESTAMP:
        return megpu_exec_timestamp(x, MEGPU_PKT_FLAGS(hdr), p);
    case MEGPU_PKT_COPY:
        return megpu_exec_copy(x, p);
    case MEGPU_PKT_FILL:
        return megpu_exec_fill(x, p);
    case MEGPU_PKT_DISPATCH:
        return megpu_dispatch(x, megpu_pl32(p, 0), megpu_pl64(p, 1),
                              megpu_pl32(p, 3), megpu_pl32(p, 4),
                              megpu_pl32(p, 5), megpu_pl32(p, 6));
    case MEGPU_PKT_SET_CONTEXT:
        return megpu_exec_set_context(x, p);
    case MEGPU_PKT_SIGNAL:
        return megpu_exec_signal(x, p);
    case MEGPU_PKT_WAIT:
        return megpu_exec_wait(x, p);
    case MEGPU_PKT_FLUSH:
        return megpu_exec_flush(x);
    case MEGPU_PKT_IDLE_SIGNAL:
        return megpu_exec_idle_signal(x);
    case MEGPU_PKT_SET_MAILBOX:
        return megpu_exec_set_mailbox(x, p);
    case MEGPU_PKT_MSEM_SIGNAL:
        return megpu_exec_msem_signal(x, p);
    case MEGPU_PKT_MSEM_WAIT:
        return megpu_exec_msem_wait(x, p);
    case MEGPU_PKT_ARB_ACQUIRE:
        return megpu_exec_arb_acquire(x, MEGPU_PKT_FLAGS(hdr), p);
    case MEGPU_PKT_ARB_RELEASE:
        return megpu_exec_arb_release(x, MEGPU_PKT_FLAGS(hdr), p);
    case MEGPU_PKT_DEQUEUE:
        return megpu_exec_dequeue(x, p);
    case MEGPU_PKT_TASK_DONE:
        return megpu_exec_task_done(x, p);
    case MEGPU_PKT_TASK_RUN:
        return megpu_exec_task_run(x, p);
    default:
        g_assert_not_reached();     /* megpu_check_header() */
    }
}

/* One packet; the pages it kept mapped (megpu-mmu.c's TLB) go with it. */
static bool megpu_exec_packet(MegpuExec *x, uint32_t hdr, const uint32_t *p)
{
    bool ok = megpu_exec_op(x, hdr, p);

    megpu_tlb_drop(x);
    return ok;
}

/*
 * IB: run the packets of an indirect buffer, fetched through the MMU.
 * A fault ends the IB; writes done before it stay.
 */
static bool megpu_exec_ib(MegpuExec *x, const uint32_t *p)
{
    MegpuEngine *e = x->e;
    uint64_t ib = megpu_pl64(p, 0);
    uint32_t size = megpu_pl32(p, 2);
    uint64_t ring_pkt = x->pkt_addr;
    g_autofree uint32_t *payload = NULL;
    bool ok = true;

    if ((ib & 3) || size > MEGPU_IB_MAX_DWORDS) {
        return megpu_pkt_fault(x, MEGPU_FAULT_BAD_ARG);
    }
    trace_megpu_ib(e->idx, ib, size);
    x->in_ib = true;
    for (uint32_t off = 0; off < size; ) {
        uint32_t hdr, count;

        if (megpu_engine_should_abort(e) || !megpu_engine_delay(e)) {
            x->aborted = true;
            ok = false;
            break;
        }
        x->pkt_addr = ib + off * 4ull;
        if (!megpu_mem_rw(x, x->pkt_addr, &hdr, 4, false)) {
            ok = false;
            break;
        }
        hdr = le32_to_cpu(hdr);
        count = MEGPU_PKT_COUNT(hdr);
        if (!megpu_check_header(x, hdr)) {
            ok = false;
            break;
        }
        if (count > size - off - 1) {
            ok = megpu_pkt_fault(x, MEGPU_FAULT_IB_OVERRUN);
            break;
        }
        if (MEGPU_PKT_OPCODE(hdr) != MEGPU_PKT_NOP && count) {
            payload = g_renew(uint32_t, payload, count);
            if (!megpu_mem_rw(x, x->pkt_addr + 4, payload, count * 4ull,
                              false)) {
                ok = false;
                break;
            }
        }
        /* each packet is a tick of the engine's memory clock */
        megpu_wq_tick(e);
        if (!megpu_exec_packet(x, hdr, payload)) {
            ok = false;
            break;
        }
        megpu_count_packet(e);
        off += 1 + count;
    }
    x->in_ib = false;
    x->pkt_addr = ring_pkt;
    return ok;
}

/* Read @len bytes of the ring at byte offset @off, wrapping at its end. */
static bool megpu_ring_read(MegpuExec *x, const MegpuRing *r, uint32_t off,
                            void *buf, uint32_t len)
{
    uint32_t first = MIN(len, r->size - off);

    return megpu_mem_rw(x, r->base + off, buf, first, false) &&
           megpu_mem_rw(x, r->base, (uint8_t *)buf + first, len - first,
                        false);
}

/*
 * Execute the ring packet at r->head. Returns the ring offset of the next
 * packet. When the packet's extent is unknown or runs past the tail, the
 * engine continues at the tail: there is no packet boundary before it.
 */
static uint32_t megpu_run_ring_packet(MegpuExec *x, const MegpuRing *r)
{
    uint32_t avail = (r->tail - r->head) & (r->size - 1);
    g_autofree uint32_t *payload = NULL;
    uint32_t hdr, count, next = r->tail;
    uint64_t bytes;

    x->ring_off = r->head;
    x->pkt_addr = r->base + r->head;
    if (!megpu_engine_delay(x->e)) {
        x->aborted = true;
        return next;
    }
    if (!megpu_ring_read(x, r, r->head, &hdr, 4)) {
        return next;
    }
    hdr = le32_to_cpu(hdr);
    count = MEGPU_PKT_COUNT(hdr);
    bytes = 4ull * (1 + count);
    if (bytes <= avail) {
        next = (r->head + bytes) & (r->size - 1);
    }
    if (!megpu_check_header(x, hdr)) {
        return next;
    }
    if (bytes > avail) {
        megpu_pkt_fault(x, MEGPU_FAULT_BAD_LENGTH);
        return next;
    }
    if (MEGPU_PKT_OPCODE(hdr) != MEGPU_PKT_NOP && count) {
        payload = g_new(uint32_t, count);
        if (!megpu_ring_read(x, r, (r->head + 4) & (r->size - 1), payload,
                             count * 4)) {
            return next;
        }
    }
    /* each packet is a tick of the engine's memory clock */
    megpu_wq_tick(x->e);
    if (megpu_exec_packet(x, hdr, payload)) {
        megpu_count_packet(x->e);
    }
    return next;
}

/* Engine reset, done by the engine thread itself at a packet boundary. */
static void megpu_engine_do_reset(MegpuEngine *e)
{
    e->head = 0;
    e->tail = 0;
    e->resume_head = 0;
    e->faulted = false;
    e->waiting = false;
    e->irq_status = 0;
    e->fault_code = 0;
    e->fault_addr = 0;
    e->fault_head = 0;
    e->fault_info = 0;
    e->has_ctx = false;
    e->ctx_id = 0;
    e->pt_base = 0;
    e->wait_addr = 0;
    e->wait_value = 0;
    e->wave_fault_id = MEGPU_WAVE_ID_NONE;
    e->wave_fault_pc = 0;
    e->mbox_base = 0;
    e->mbox_slots = 0;
    /* queued writes of the stopped work are lost, as on hardware */
    megpu_wq_engine_drop(e);
    /* and the arbiter blocks it held are free for the other engines */
    megpu_mgpu_engine_drop(e);
    /* the ring starts over: no job is running */
    e->tq_job_tasks = 0;
    if (e->full_reset) {
        /* device reset: the ring and the counters go too */
        e->ring_base = 0;
        e->ring_size = 0;
        e->delay_us = 0;
        e->packets = 0;
        e->faults = 0;
        e->resets = 0;
        e->last_ts = 0;
        e->flushes = 0;
        e->idle_signals = 0;
        e->wait_ns = 0;
        e->busy_ns = 0;
        e->waits = 0;
        e->wave_insns = 0;
        e->work_items = 0;
        e->work_groups = 0;
        e->tq_tasks = 0;
        e->tq_batches = 0;
        e->tq_steals = 0;
        qatomic_set(&e->stalled_writes, 0);
    } else {
        e->resets++;
    }
    trace_megpu_engine_reset(e->idx, e->full_reset);
    e->full_reset = false;
    qatomic_set(&e->reset_pending, false);
    /* megpu_engine_reset_sync() may be waiting for this */
    megpu_wake_locked(e);
}

static void *megpu_engine_thread(void *opaque)
{
    MegpuEngine *e = opaque;

    /* address_space_map and translate use RCU */
    rcu_register_thread();
    qemu_mutex_lock(&e->lock);
    for (;;) {
        MegpuExec x = { .e = e };
        MegpuRing r;
        uint32_t next;
        int64_t t0;

        if (e->stop) {
            break;
        }
        if (e->reset_pending) {
            megpu_engine_do_reset(e);
            continue;
        }
        if (e->faulted || !e->ring_size || e->head == e->tail) {
            qemu_cond_wait(&e->cond, &e->lock);
            continue;
        }
        r = (MegpuRing) {
            .base = e->ring_base, .size = e->ring_size,
            .head = e->head, .tail = e->tail,
        };
        e->busy = true;
        qemu_mutex_unlock(&e->lock);

        t0 = get_clock();
        qatomic_set(&e->wq_running, true);
        next = megpu_run_ring_packet(&x, &r);
        qatomic_set(&e->wq_running, false);
        t0 = get_clock() - t0;
        if (next == r.tail) {
            /* drained, as far as this engine knows: exact landing time */
            megpu_wq_engine_drained(e);
        }

        qemu_mutex_lock(&e->lock);
        e->busy = false;
        e->busy_ns += t0;
        if (x.aborted || e->reset_pending || e->stop) {
            continue;       /* the reset sets head and tail */
        }
        if (!x.fault_code) {
            e->head = next;
            if (e->head == e->tail) {
                megpu_engine_idle_irq_locked(e, false);
                megpu_taskq_engine_idle(e);
            }
            continue;
        }
        e->fault_code = x.fault_code;
        e->fault_addr = x.fault_addr;
        e->fault_head = r.head;
        e->fault_info = x.fault_info;
        e->wave_fault_id = (x.fault_info & MEGPU_FAULT_INFO_WAVE) ?
                           x.wave_id : MEGPU_WAVE_ID_NONE;
        e->wave_fault_pc = x.wave_pc;
        e->faults++;
        e->faulted = true;
        /* the faulted job's critical sections are over */
        megpu_mgpu_engine_drop(e);
        e->resume_head = next;
        e->irq_status |= MEGPU_ENG_IRQ_FAULT;
        trace_megpu_fault(e->idx, x.fault_code, x.fault_addr, r.head,
                          x.fault_info);
        megpu_raise_irq(e->s, MEGPU_VEC_ENGINE(e->idx));
    }
    qemu_mutex_unlock(&e->lock);
    rcu_unregister_thread();
    return NULL;
}

static bool megpu_engine_idle_locked(MegpuEngine *e)
{
    return e->head == e->tail && !e->busy && !e->faulted && !e->waiting &&
           !e->reset_pending;
}

uint32_t megpu_engine_read(MegpuEngine *e, hwaddr off)
{
    uint32_t val = 0;

    qemu_mutex_lock(&e->lock);
    switch (off) {
    case MEGPU_ENG_TYPE:
        val = e->type;
        break;
    case MEGPU_ENG_STATUS:
        val = (megpu_engine_idle_locked(e) ? MEGPU_ENG_STATUS_IDLE : 0) |
              (e->waiting ? MEGPU_ENG_STATUS_WAIT_SEM : 0) |
              (e->faulted ? MEGPU_ENG_STATUS_FAULTED : 0) |
              (e->reset_pending ? MEGPU_ENG_STATUS_RESETTING : 0) |
              (e->waves_parked ? MEGPU_ENG_STATUS_WAVE_PARKED : 0);
        break;
    case MEGPU_ENG_IRQ_STATUS:
        val = e->irq_status;
        break;
    case MEGPU_ENG_RING_BASE_LO:
        val = e->ring_base;
        break;
    case MEGPU_ENG_RING_BASE_HI:
        val = e->ring_base >> 32;
        break;
    case MEGPU_ENG_RING_SIZE:
        val = e->ring_size;
        break;
    case MEGPU_ENG_RING_HEAD:
        val = e->head;
        break;
    case MEGPU_ENG_RING_TAIL:
        val = e->tail;
        break;
    case MEGPU_ENG_FAULT_CODE:
        val = e->fault_code;
        break;
    case MEGPU_ENG_FAULT_ADDR_LO:
        val = e->fault_addr;
        break;
    case MEGPU_ENG_FAULT_ADDR_HI:
        val = e->fault_addr >> 32;
        break;
    case MEGPU_ENG_FAULT_HEAD:
        val = e->fault_head;
        break;
    case MEGPU_ENG_FAULT_INFO:
        val = e->fault_info;
        break;
    case MEGPU_ENG_CTX_ID:
        val = e->ctx_id;
        break;
    case MEGPU_ENG_PT_BASE_LO:
        val = e->pt_base;
        break;
    case MEGPU_ENG_PT_BASE_HI:
        val = e->pt_base >> 32;
        break;
    case MEGPU_ENG_WAIT_ADDR_LO:
        val = e->wait_addr;
        break;
    case MEGPU_ENG_WAIT_ADDR_HI:
        val = e->wait_addr >> 32;
        break;
    case MEGPU_ENG_WAIT_VALUE_LO:
        val = e->wait_value;
        break;
    case MEGPU_ENG_WAIT_VALUE_HI:
        val = e->wait_value >> 32;
        break;
    case MEGPU_ENG_DELAY_US:
        val = e->delay_us;
        break;
    case MEGPU_ENG_PACKETS_LO:
        val = e->packets;
        break;
    case MEGPU_ENG_PACKETS_HI:
        val = e->packets >> 32;
        break;
    case MEGPU_ENG_FAULTS:
        val = e->faults;
        break;
    case MEGPU_ENG_RESETS:
        val = e->resets;
        break;
    case MEGPU_ENG_LAST_TS_LO:
        val = e->last_ts;
        break;
    case MEGPU_ENG_LAST_TS_HI:
        val = e->last_ts >> 32;
        break;
    case MEGPU_ENG_QUEUE:
        val = qatomic_read(&e->wq_len);
        break;
    case MEGPU_ENG_STALLED_WRITES:
        val = qatomic_read(&e->stalled_writes);
        break;
    case MEGPU_ENG_FLUSHES:
        val = e->flushes;
        break;
    case MEGPU_ENG_IDLE_SIGNALS:
        val = e->idle_signals;
        break;
    case MEGPU_ENG_WAIT_NS_LO:
        e->stat_latch = e->wait_ns >> 32;
        val = e->wait_ns;
        break;
    case MEGPU_ENG_BUSY_NS_LO:
        e->stat_latch = e->busy_ns >> 32;
        val = e->busy_ns;
        break;
    case MEGPU_ENG_WAIT_NS_HI:
    case MEGPU_ENG_BUSY_NS_HI:
        val = e->stat_latch;
        break;
    case MEGPU_ENG_WAITS:
        val = e->waits;
        break;
    case MEGPU_ENG_WAVE_FAULT_ID:
        val = e->wave_fault_id;
        break;
    case MEGPU_ENG_WAVE_FAULT_PC:
        val = e->wave_fault_pc;
        break;
    case MEGPU_ENG_WAVES_LIVE:
        val = e->waves_live;
        break;
    case MEGPU_ENG_WAVES_PARKED:
        val = e->waves_parked;
        break;
    case MEGPU_ENG_PARKED_WAVE:
        val = megpu_wave_parked_locked(e);
        break;
    case MEGPU_ENG_WAVE_INSNS_LO:
        val = e->wave_insns;
        break;
    case MEGPU_ENG_WAVE_INSNS_HI:
        val = e->wave_insns >> 32;
        break;
    case MEGPU_ENG_WORK_ITEMS_LO:
        val = e->work_items;
        break;
    case MEGPU_ENG_WORK_ITEMS_HI:
        val = e->work_items >> 32;
        break;
    case MEGPU_ENG_WORK_GROUPS_LO:
        val = e->work_groups;
        break;
    case MEGPU_ENG_WORK_GROUPS_HI:
        val = e->work_groups >> 32;
        break;
    case MEGPU_ENG_MAILBOX_LO:
        val = e->mbox_base;
        break;
    case MEGPU_ENG_MAILBOX_HI:
        val = e->mbox_base >> 32;
        break;
    case MEGPU_ENG_MAILBOX_SLOTS:
        val = e->mbox_slots;
        break;
    case MEGPU_ENG_TASKQ_TASKS:
        val = e->tq_tasks;
        break;
    case MEGPU_ENG_TASKQ_JOB_TASKS:
        val = e->tq_job_tasks;
        break;
    case MEGPU_ENG_TASKQ_BATCHES:
        val = e->tq_batches;
        break;
    case MEGPU_ENG_TASKQ_STEALS:
        val = e->tq_steals;
        break;
    case MEGPU_ENG_TASKQ_STATE:
        val = qatomic_read(&e->tq_state);
        break;
    default:
        if (megpu_mgpu_eng_read(e, off, &val)) {
            break;
        }
        qemu_log_mask(LOG_GUEST_ERROR,
                      "megpu: engine %u: read of unknown register 0x%"
                      HWADDR_PRIx "\n", e->idx, off);
        break;
    }
    qemu_mutex_unlock(&e->lock);
    return val;
}

/* Ring registers change only while the engine has nothing to do. */
static bool megpu_ring_writable_locked(MegpuEngine *e, const char *reg)
{
    if (!megpu_engine_idle_locked(e)) {
        qemu_log_mask(LOG_GUEST_ERROR,
                      "megpu: engine %u: %s written while not idle, "
                      "ignored\n", e->idx, reg);
        return false;
    }
    return true;
}

static void megpu_engine_control(MegpuEngine *e, uint32_t val)
{
    if (val & MEGPU_ENG_CTRL_RESET) {
        /* the thread does it at the next packet boundary */
        trace_megpu_engine_reset_request(e->idx);
        qatomic_set(&e->reset_pending, true);
        megpu_wake_locked(e);
        /* an engine stalled on its write queue or a FLUSH, too */
        qemu_cond_broadcast(&e->wq_cond);
        /* or asleep in a DEQUEUE */
        megpu_taskq_kick(e->s);
        return;
    }
    if (val & MEGPU_ENG_CTRL_FAULT_ACK) {
        if (!e->faulted) {
            qemu_log_mask(LOG_GUEST_ERROR,
                          "megpu: engine %u: FAULT_ACK while not faulted\n",
                          e->idx);
            return;
        }
        trace_megpu_fault_ack(e->idx, e->resume_head);
        e->faulted = false;
        e->head = e->resume_head;
        megpu_wake_locked(e);
    }
}

void megpu_engine_write(MegpuEngine *e, hwaddr off, uint32_t val)
{
    bool wake = false;

    qemu_mutex_lock(&e->lock);
    switch (off) {
    case MEGPU_ENG_CONTROL:
        megpu_engine_control(e, val);
        break;
    case MEGPU_ENG_IRQ_STATUS:
        e->irq_status &= ~val;
        break;
    case MEGPU_ENG_RING_BASE_LO:
        if (val & (MEGPU_PAGE_SIZE - 1)) {
            qemu_log_mask(LOG_GUEST_ERROR,
                          "megpu: engine %u: ring base 0x%x not 4 KiB "
                          "aligned, ignored\n", e->idx, val);
        } else if (megpu_ring_writable_locked(e, "RING_BASE_LO")) {
            e->ring_base = deposit64(e->ring_base, 0, 32, val);
            e->head = e->tail = 0;
        }
        break;
    case MEGPU_ENG_RING_BASE_HI:
        if (megpu_ring_writable_locked(e, "RING_BASE_HI")) {
            e->ring_base = deposit64(e->ring_base, 32, 32, val);
            e->head = e->tail = 0;
        }
        break;
    case MEGPU_ENG_RING_SIZE:
        if (val < MEGPU_RING_SIZE_MIN || val > MEGPU_RING_SIZE_MAX ||
            !is_power_of_2(val)) {
            qemu_log_mask(LOG_GUEST_ERROR,
                          "megpu: engine %u: bad ring size 0x%x, ignored\n",
                          e->idx, val);
        } else if (megpu_ring_writable_locked(e, "RING_SIZE")) {
            e->ring_size = val;
            e->head = e->tail = 0;
        }
        break;
    case MEGPU_ENG_RING_TAIL:
        if (!e->ring_size || val >= e->ring_size || (val & 3) ||
            e->reset_pending) {
            qemu_log_mask(LOG_GUEST_ERROR,
                          "megpu: engine %u: tail 0x%x ignored (ring size "
                          "0x%x%s)\n", e->idx, val, e->ring_size,
                          e->reset_pending ? ", resetting" : "");
            break;
        }
        trace_megpu_doorbell(e->idx, e->head, val);
        e->tail = val;
        wake = true;
        break;
    case MEGPU_ENG_DELAY_US:
        qatomic_set(&e->delay_us, val);
        /* a shorter delay applies to the packet being delayed now */
        wake = true;
        break;
    default:
        qemu_log_mask(LOG_GUEST_ERROR,
                      "megpu: engine %u: write of 0x%x to register 0x%"
                      HWADDR_PRIx " ignored\n", e->idx, val, off);
        break;
    }
    qemu_mutex_unlock(&e->lock);
    /*
     * After the unlock: a thread woken under the lock would find it held
     * and sleep once more (the engine waits for what it checked under
     * the lock, so no wakeup is lost).
     */
    if (wake) {
        qemu_cond_broadcast(&e->cond);
    }
}

/*
 * Device reset of one engine: forget everything and wait until the
 * thread has done it. Called under the BQL, which the thread never
 * takes; the thread reaches a boundary quickly because delays, WAITs and
 * long transfers all check reset_pending.
 */
void megpu_engine_reset_sync(MegpuEngine *e)
{
    if (!e->thread_started) {
        return;
    }
    qemu_mutex_lock(&e->lock);
    e->full_reset = true;
    qatomic_set(&e->reset_pending, true);
    megpu_wake_locked(e);
    qemu_cond_broadcast(&e->wq_cond);
    megpu_taskq_kick(e->s);
    while (e->reset_pending) {
        qemu_cond_wait(&e->cond, &e->lock);
    }
    qemu_mutex_unlock(&e->lock);
}

void megpu_engine_init(MegpuState *s, unsigned n)
{
    MegpuEngine *e = &s->engines[n];
    g_autofree char *name = g_strdup_printf("megpu-eng%u", n);

    e->s = s;
    e->idx = n;
    e->type = n % MEGPU_ENGINE_NUM_TYPES;
    e->pkt_mask = megpu_type_pkts[e->type] | MEGPU_PKTS_MGPU;
    e->kernel_mask = megpu_type_kernels[e->type];
    /* the engines that run kernels can dequeue tasks (seed 002) */
    if (e->pkt_mask & MEGPU_BIT(MEGPU_PKT_DISPATCH)) {
        e->pkt_mask |= MEGPU_BIT(MEGPU_PKT_DEQUEUE) |
                       MEGPU_BIT(MEGPU_PKT_TASK_DONE) |
                       MEGPU_BIT(MEGPU_PKT_TASK_RUN);
    }
    e->wave_fault_id = MEGPU_WAVE_ID_NONE;
    qemu_mutex_init(&e->lock);
    qemu_mutex_init(&e->xlat_lock);
    qemu_cond_init(&e->cond);
    qemu_thread_create(&e->thread, name, megpu_engine_thread, e,
                       QEMU_THREAD_JOINABLE);
    e->thread_started = true;
}

/*
 * Teardown: every engine stops and is joined before any engine's lock
 * goes, because engine threads (a SIGNAL waking all waiters, a wave's
 * mailbox caller) and the write model's thread lock other engines. The
 * locks go in megpu_engines_destroy(), after megpu_wq_fini().
 */
void megpu_engines_stop(MegpuState *s)
{
    for (unsigned n = 0; n < s->num_engines; n++) {
        MegpuEngine *e = &s->engines[n];

        qemu_mutex_lock(&e->lock);
        qatomic_set(&e->stop, true);
        megpu_wake_locked(e);
        qemu_cond_broadcast(&e->wq_cond);
        qemu_mutex_unlock(&e->lock);
    }
    megpu_taskq_kick(s);
    for (unsigned n = 0; n < s->num_engines; n++) {
        MegpuEngine *e = &s->engines[n];

        if (e->thread_started) {
            qemu_thread_join(&e->thread);
            e->thread_started = false;
        }
    }
}

void megpu_engines_destroy(MegpuState *s)
{
    for (unsigned n = 0; n < s->num_engines; n++) {
        MegpuEngine *e = &s->engines[n];

        qemu_cond_destroy(&e->cond);
        qemu_mutex_destroy(&e->xlat_lock);
        qemu_mutex_destroy(&e->lock);
    }
}
