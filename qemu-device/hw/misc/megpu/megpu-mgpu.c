/*
 * megpu: multi-GPU coordination without a single point of control
 *
 * DOC: seed 000 (US 8,068,114, "Mechanism for granting controlled access
 * to a shared resource"). Several megpu devices in one machine are the
 * seed's "GPUs" (agents); they share guest RAM and decide access to a
 * resource only by their own atomic reads and writes of coordination
 * words there. No device, lock or thread of QEMU arbitrates: every read
 * and write below is a host atomic on the mapped guest page, so engines
 * of all devices and guest CPUs (multi-threaded TCG) interoperate.
 *
 * - MSEM_SIGNAL / MSEM_WAIT: the multi-summed semaphore (seed §II). One
 *   signed 32-bit slot per agent; an engine read/modify/writes only its
 *   own slot; WAIT pre-decrements, sums the enabled slots wrapping in
 *   32 bits, and on bit 31 compensates and stalls the engine (no CPU
 *   involved) until any coordination write or a 1 ms re-check.
 * - ARB_ACQUIRE / ARB_RELEASE: request/acknowledge arbitration (§III).
 *   The 2-agent rule is Eq. 1, ack = (Req0 + Req1 + Last + id) mod 2.
 *   Choice: for 4 and 8 agents the default is a tournament of that rule
 *   (ours), because the seed's 4-GPU decision tree is not mutually
 *   exclusive (model checked, seed notes §1C); the literal tree stays
 *   selectable (ARB_FLAG_LITERAL) so a test can show the failure.
 *   ARB_FLAG_SEM guards the semaphore in DW0 with Failed Wait; without
 *   it the block is a pure mutex.
 * - Deterministic interleaving (F17): with MGPU_SCHED set, each step
 *   (one coordination write, or the reads of one check) waits for its
 *   agent's turn in a schedule block shared by the devices. The block
 *   lists the agents, or (seed mode) holds a seed and an agent mask from
 *   which every device computes the order itself; the register is read
 *   at every step, so taking the block off frees a waiting step. A
 *   seeded block may cover a whole run: a turn of an agent the CPU marked
 *   done is skipped, and each step is recorded in the block's trace, so
 *   a test checks the run's invariant at every step (item 3 of the
 *   seed-semantics issue) instead of sampling it.
 * - Choice: every engine of a device acts as the device's one agent (the
 *   seed's agents are GPUs: its tables, and the block layout, have one
 *   Req per GPU). So that the arbiter excludes engines of one GPU too, a
 *   device-local stage comes first: an engine claims the block's bus
 *   address in its device's table of held blocks, stalling while another
 *   engine of the device holds it, and only then competes for the GPU
 *   (the seed's "local arbitration" inside an agent; agents as (GPU,
 *   engine) pairs would change the seed's tables and the block size).
 *   A reset or fault of the holding engine, or a SET_CONTEXT to another
 *   context, drops its claims: holds belong to one context's work.
 * - A stalled engine is woken by a process-wide condition variable that
 *   every coordination write of any megpu device broadcasts (the seed's
 *   "retry on any signal"), with a 1 ms re-check for CPU writes.
 * - x-mgpu-nonatomic (test only) turns the own-slot read/modify/writes
 *   into read, pause, write: the negative control of the atomics tests.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */

#include "qemu/osdep.h"
#include "qemu/atomic.h"
#include "qemu/bswap.h"
#include "qemu/thread.h"
#include "megpu-internal.h"
#include "trace.h"

#define MGPU_POLL_MS        1
#define MGPU_TURN_POLL_US   20

/* Process-wide: a coordination write of any device wakes all stallers. */
static QemuMutex mgpu_lock;
static QemuCond mgpu_cond;
static uint64_t mgpu_seq;
static bool mgpu_inited;

/* Under the BQL (realize). */
void megpu_mgpu_global_init(void)
{
    if (!mgpu_inited) {
        qemu_mutex_init(&mgpu_lock);
        qemu_cond_init(&mgpu_cond);
        mgpu_inited = true;
    }
}

static void mgpu_kick(void)
{
    qemu_mutex_lock(&mgpu_lock);
    mgpu_seq++;
    qemu_cond_broadcast(&mgpu_cond);
    qemu_mutex_unlock(&mgpu_lock);
}

static uint64_t mgpu_seq_read(void)
{
    uint64_t v;

    qemu_mutex_lock(&mgpu_lock);
    v = mgpu_seq;
    qemu_mutex_unlock(&mgpu_lock);
    return v;
}

/* What one MSEM/ARB packet works with. */
typedef struct MgpuCtx {
    MegpuExec *x;
    MegpuEngine *e;
    uint64_t base;
    unsigned agent;
    unsigned agents;
    uint64_t sched;             /* schedule block bus address, 0: free */
    bool traced;                /* the block records the steps */
    uint8_t kind;               /* what the next step is, for the trace */
    bool stalled;
} MgpuCtx;

/*
 * Stall the engine until another coordination write or MGPU_POLL_MS.
 * @seq: mgpu_seq read before the check that failed, so a write in
 * between is not missed. False when a reset or stop cuts it short.
 */
static bool mgpu_stall(MgpuCtx *c, uint64_t seq)
{
    MegpuEngine *e = c->e;

    if (!c->stalled) {
        c->stalled = true;
        qemu_mutex_lock(&e->lock);
        e->waiting = true;
        e->wait_addr = c->base;
        e->wait_value = 0;
        qemu_mutex_unlock(&e->lock);
    }
    qemu_mutex_lock(&mgpu_lock);
    if (mgpu_seq == seq && !megpu_engine_should_abort(e)) {
        qemu_cond_timedwait(&mgpu_cond, &mgpu_lock, MGPU_POLL_MS);
    }
    qemu_mutex_unlock(&mgpu_lock);
    if (megpu_engine_should_abort(e)) {
        c->x->aborted = true;
        return false;
    }
    return true;
}

static void mgpu_unstall(MgpuCtx *c)
{
    if (c->stalled) {
        qemu_mutex_lock(&c->e->lock);
        c->e->waiting = false;
        qemu_mutex_unlock(&c->e->lock);
        c->stalled = false;
    }
}

/*
 * Deterministic mode: wait until the schedule names our agent (or has
 * run out). *held: we hold the turn and must advance pos afterwards.
 */
static bool mgpu_step_begin(MgpuCtx *c, bool *held)
{
    MegpuState *s = c->e->s;
    uint32_t *blk;
    uint32_t pos, len, mask = 0, turn;
    uint64_t seed = 0;
    bool seeded;
    uint8_t *agent;

    *held = false;
    c->traced = false;
    qatomic_inc(&s->mgpu_steps);
    /* the block in the register now: the CPU may have replaced it */
    c->sched = qatomic_read(&s->mgpu_sched);
    if (!c->sched) {
        return true;
    }
    /* its words are compared and swapped: a host may fault if unaligned */
    if (c->sched & 3) {
        return megpu_fault(c->x, MEGPU_FAULT_MGPU_SCHED, c->sched, false);
    }
    blk = megpu_ram_map(s, c->sched, MEGPU_MGPU_SCHED_TRACED_BYTES, true,
                        NULL);
    if (!blk) {
        return megpu_fault(c->x, MEGPU_FAULT_MGPU_SCHED, c->sched, false);
    }
    len = le32_to_cpu(qatomic_read(&blk[1]));
    seeded = len & MEGPU_MGPU_SCHED_SEEDED;
    /* a trace and DONE marks: seeded blocks only */
    c->traced = seeded && (len & MEGPU_MGPU_SCHED_TRACED);
    len &= ~(MEGPU_MGPU_SCHED_SEEDED | MEGPU_MGPU_SCHED_TRACED);
    if (seeded) {
        seed = le32_to_cpu(blk[MEGPU_MGPU_SCHED_SEED / 4]) |
               (uint64_t)le32_to_cpu(blk[MEGPU_MGPU_SCHED_SEED / 4 + 1]) << 32;
        mask = le32_to_cpu(blk[MEGPU_MGPU_SCHED_MASK / 4]);
    }
    if (len > MEGPU_MGPU_SCHED_MAX ||
        (seeded && (!mask || mask >= MEGPU_BIT(MEGPU_MGPU_MAX_AGENTS)))) {
        megpu_ram_unmap(s, blk, MEGPU_MGPU_SCHED_TRACED_BYTES, true);
        return megpu_fault(c->x, MEGPU_FAULT_MGPU_SCHED, c->sched, false);
    }
    for (;;) {
        /* every round: the CPU may move pos back as fast as turns pass */
        if (megpu_engine_should_abort(c->e)) {
            megpu_ram_unmap(s, blk, MEGPU_MGPU_SCHED_TRACED_BYTES, true);
            c->x->aborted = true;
            return false;
        }
        pos = le32_to_cpu(qatomic_read(&blk[0]));
        /* run out, or taken off (or replaced): the step runs freely */
        if (pos >= len || qatomic_read(&s->mgpu_sched) != c->sched) {
            break;
        }
        if (seeded) {
            /* the order from the seed alone, the same on every device */
            turn = megpu_mgpu_seed_agent(seed, mask, pos);
        } else {
            agent = megpu_ram_map(s, c->sched + MEGPU_MGPU_SCHED_AGENT(pos),
                                  1, false, NULL);
            if (!agent) {
                megpu_ram_unmap(s, blk, MEGPU_MGPU_SCHED_TRACED_BYTES, true);
                return megpu_fault(c->x, MEGPU_FAULT_MGPU_SCHED,
                                   c->sched + MEGPU_MGPU_SCHED_AGENT(pos),
                                   false);
            }
            turn = qatomic_read(agent);
            megpu_ram_unmap(s, agent, 1, false);
        }
        if (turn == c->agent) {
            *held = true;
            break;
        }
        /* an agent with nothing left: its turn goes (once, to anyone) */
        if (c->traced &&
            qatomic_read((uint8_t *)blk + MEGPU_MGPU_SCHED_DONE(turn))) {
            qatomic_cmpxchg(&blk[0], cpu_to_le32(pos), cpu_to_le32(pos + 1));
            continue;
        }
        g_usleep(MGPU_TURN_POLL_US);
    }
    megpu_ram_unmap(s, blk, MEGPU_MGPU_SCHED_TRACED_BYTES, true);
    return true;
}

/* Record the step just taken in its turn (the turn's holder alone). */
static void mgpu_trace_step(MgpuCtx *c, uint32_t *blk, uint64_t addr,
                            uint32_t value)
{
    MegpuState *s = c->e->s;
    uint32_t count = le32_to_cpu(qatomic_read(&blk[
                                     MEGPU_MGPU_SCHED_TRACE_COUNT / 4]));
    uint32_t cap = le32_to_cpu(blk[MEGPU_MGPU_SCHED_TRACE_CAP / 4]);
    uint64_t trace = ldq_le_p(blk + MEGPU_MGPU_SCHED_TRACE / 4);
    uint8_t *rec;

    if (count < cap && !(trace & 7) &&
        trace + (uint64_t)count * MEGPU_MGPU_REC_SIZE >= trace) {
        rec = megpu_ram_map(s, trace + (uint64_t)count * MEGPU_MGPU_REC_SIZE,
                            MEGPU_MGPU_REC_SIZE, true, NULL);
        if (rec) {
            rec[MEGPU_MGPU_REC_AGENT] = c->agent;
            rec[MEGPU_MGPU_REC_KIND] = c->kind;
            rec[MEGPU_MGPU_REC_OFFSET] = MIN(addr - c->base, 255);
            rec[MEGPU_MGPU_REC_ENGINE] = c->e->idx;
            stl_le_p(rec + MEGPU_MGPU_REC_VALUE, value);
            megpu_ram_unmap(s, rec, MEGPU_MGPU_REC_SIZE, true);
        }
    }
    qatomic_set(&blk[MEGPU_MGPU_SCHED_TRACE_COUNT / 4],
                cpu_to_le32(count + 1));
}

/*
 * The step touched @addr (@value: written or read): record it if the
 * block traces, then pass the turn on.
 */
static void mgpu_step_end(MgpuCtx *c, bool held, uint64_t addr,
                          uint32_t value)
{
    MegpuState *s = c->e->s;
    uint32_t *blk;

    /* a block taken off meanwhile is the CPU's again: leave it alone */
    if (held && qatomic_read(&s->mgpu_sched) == c->sched) {
        blk = megpu_ram_map(s, c->sched, MEGPU_MGPU_SCHED_TRACED_BYTES, true,
                            NULL);
        if (blk) {
            if (c->traced) {
                mgpu_trace_step(c, blk, addr, value);
            }
            /* only the turn's holder writes pos: a plain atomic store */
            qatomic_set(&blk[0],
                        cpu_to_le32(le32_to_cpu(qatomic_read(&blk[0])) + 1));
            /* the step happened before the next agent may take its turn */
            smp_mb();
            megpu_ram_unmap(s, blk, MEGPU_MGPU_SCHED_TRACED_BYTES, true);
        }
    }
    c->kind = 0;
}

/* Raw accesses: one aligned host atomic each, through the engine's MMU. */
static bool mgpu_store8(MgpuCtx *c, uint64_t addr, uint8_t val)
{
    MegpuMap m;
    uint8_t *p = megpu_mem_map(c->x, addr, 1, true, &m);

    if (!p) {
        return false;
    }
    megpu_wq_order(c->e->s, m.pa, 1);
    /* sequentially consistent: Peterson's rule needs store-load order */
    qatomic_xchg(p, val);
    megpu_mem_unmap(c->x, &m);
    return true;
}

/*
 * Atomic *addr += delta on a little-endian 32-bit word; *result: the new
 * value. Non-atomic (read, pause, write) with x-mgpu-nonatomic.
 */
static bool mgpu_add32(MgpuCtx *c, uint64_t addr, int32_t delta,
                       uint32_t *result)
{
    MegpuMap m;
    uint32_t *p = megpu_mem_map(c->x, addr, 4, true, &m);
    uint32_t old, nv;

    if (!p) {
        return false;
    }
    megpu_wq_order(c->e->s, m.pa, 4);
    if (c->e->s->mgpu_nonatomic) {
        old = le32_to_cpu(qatomic_read(p));
        g_usleep(50);
        nv = old + delta;
        qatomic_set(p, cpu_to_le32(nv));
    } else {
        nv = megpu_le32_add(p, delta);
    }
    megpu_mem_unmap(c->x, &m);
    *result = nv;
    return true;
}

/* Steps: each takes the turn in deterministic mode. */
static bool mgpu_step_store8(MgpuCtx *c, uint64_t addr, uint8_t val)
{
    bool held, ok;

    if (!mgpu_step_begin(c, &held)) {
        return false;
    }
    ok = mgpu_store8(c, addr, val);
    c->kind = c->kind ?: MEGPU_MGPU_STEP_ARB_STORE;
    mgpu_step_end(c, held, addr, val);
    mgpu_kick();
    return ok;
}

static bool mgpu_step_add32(MgpuCtx *c, uint64_t addr, int32_t delta,
                            uint32_t *result)
{
    bool held, ok;

    if (!mgpu_step_begin(c, &held)) {
        return false;
    }
    ok = mgpu_add32(c, addr, delta, result);
    c->kind = c->kind ?: MEGPU_MGPU_STEP_ARB_ADD;
    mgpu_step_end(c, held, addr, ok ? *result : 0);
    mgpu_kick();
    return ok;
}

static bool mgpu_step_load32(MgpuCtx *c, uint64_t addr, uint32_t *val)
{
    bool held, ok;

    if (!mgpu_step_begin(c, &held)) {
        return false;
    }
    ok = megpu_mem_read32(c->x, addr, val);
    c->kind = c->kind ?: MEGPU_MGPU_STEP_ARB_READ;
    mgpu_step_end(c, held, addr, ok ? *val : 0);
    return ok;
}

static bool mgpu_ctx_init(MgpuCtx *c, MegpuExec *x, uint64_t base,
                          unsigned align)
{
    MegpuState *s = x->e->s;

    *c = (MgpuCtx) {
        .x = x, .e = x->e, .base = base,
        .agent = qatomic_read(&s->mgpu_agent_id),
        .agents = qatomic_read(&s->mgpu_agent_count),
        .sched = qatomic_read(&s->mgpu_sched),
    };
    if (base & (align - 1)) {
        return megpu_fault(x, MEGPU_FAULT_BAD_ARG, x->pkt_addr, false);
    }
    if (c->agents < 1 || c->agents > MEGPU_MGPU_MAX_AGENTS ||
        c->agent >= c->agents) {
        return megpu_fault(x, MEGPU_FAULT_MGPU_AGENT, x->pkt_addr, false);
    }
    if (base > UINT64_MAX - 4 * MEGPU_MGPU_MAX_AGENTS) {
        return megpu_fault(x, x->in_ib ? MEGPU_FAULT_MMU : MEGPU_FAULT_BUS,
                           base, false);
    }
    return true;
}

/* ---- multi-summed semaphore ---- */

bool megpu_exec_msem_signal(MegpuExec *x, const uint32_t *p)
{
    uint64_t base = le32_to_cpu(p[0]) | (uint64_t)le32_to_cpu(p[1]) << 32;
    MgpuCtx c;
    uint32_t v;

    if (!mgpu_ctx_init(&c, x, base, 4)) {
        return false;
    }
    /* the data the signal announces first */
    if (!megpu_wq_engine_flush(x)) {
        return false;
    }
    c.kind = MEGPU_MGPU_STEP_SIGNAL;
    if (!mgpu_step_add32(&c, base + MEGPU_MSEM_SLOT(c.agent), 1, &v)) {
        return false;
    }
    trace_megpu_msem_signal(x->e->idx, base, c.agent, v);
    megpu_wake_waiters(x->e->s);
    return true;
}

/* Sum the slots of @mask, each read one step; false on a fault. */
static bool mgpu_msem_sum(MgpuCtx *c, uint32_t mask, uint32_t *sum)
{
    uint32_t v;

    *sum = 0;
    for (unsigned a = 0; a < c->agents; a++) {
        if (!(mask & MEGPU_BIT(a))) {
            continue;
        }
        c->kind = MEGPU_MGPU_STEP_READ;
        if (!mgpu_step_load32(c, c->base + MEGPU_MSEM_SLOT(a), &v)) {
            return false;
        }
        *sum += v;
    }
    return true;
}

bool megpu_exec_msem_wait(MegpuExec *x, const uint32_t *p)
{
    uint64_t base = le32_to_cpu(p[0]) | (uint64_t)le32_to_cpu(p[1]) << 32;
    uint32_t mask = le32_to_cpu(p[2]);
    uint64_t own;
    MgpuCtx c;
    bool ok = false;

    if (!mgpu_ctx_init(&c, x, base, 4)) {
        return false;
    }
    if (!(mask & MEGPU_BIT(c.agent)) ||
        (mask & ~(MEGPU_BIT(c.agents) - 1))) {
        return megpu_fault(x, MEGPU_FAULT_MGPU_MASK, x->pkt_addr, false);
    }
    own = base + MEGPU_MSEM_SLOT(c.agent);
    for (;;) {
        uint64_t seq = mgpu_seq_read();
        uint32_t v, sum, again;

        if (megpu_engine_should_abort(c.e)) {
            x->aborted = true;
            break;
        }
        c.kind = MEGPU_MGPU_STEP_WAIT_DEC;
        if (!mgpu_step_add32(&c, own, -1, &v) ||
            !mgpu_msem_sum(&c, mask, &sum)) {
            break;
        }
        if (!(sum & 0x80000000u)) {
            trace_megpu_msem_wait(c.e->idx, base, c.agent, sum);
            ok = true;
            break;
        }
        c.kind = MEGPU_MGPU_STEP_WAIT_UNDO;
        if (!mgpu_step_add32(&c, own, 1, &v)) {
            break;
        }
        qatomic_inc(&c.e->msem_retries);
        /* a signal already there: the block was false, retry at once */
        if (!mgpu_msem_sum(&c, mask, &again)) {
            break;
        }
        trace_megpu_msem_block(c.e->idx, base, c.agent, sum, again);
        if (!(again & 0x80000000u) && again) {
            qatomic_inc(&c.e->msem_false_blocks);
            continue;
        }
        if (!mgpu_stall(&c, seq)) {
            break;
        }
    }
    mgpu_unstall(&c);
    return ok;
}

/* ---- request/acknowledge arbitration ---- */

/*
 * The decision rules are megpu_arb_*() in megpu_hw.h: the host checker
 * (tests/host/mgpu_test.c) explores every interleaving with that code.
 */
static unsigned mgpu_levels(unsigned agents)
{
    int levels = megpu_arb_levels(agents);

    return levels < 0 ? 0 : levels;
}

/* Bus address of agent @c->agent's node at level @l, and its side. */
static uint64_t mgpu_node(MgpuCtx *c, unsigned l, unsigned *side)
{
    return c->base + MEGPU_ARB_DW(megpu_arb_node(c->agents, c->agent, l,
                                                 side));
}

static bool mgpu_tour_acquire(MgpuCtx *c)
{
    unsigned levels = mgpu_levels(c->agents), side;

    for (unsigned l = 0; l < levels; l++) {
        uint64_t node = mgpu_node(c, l, &side);

        if (!mgpu_step_store8(c, node + MEGPU_ARB_REQ(side), 1) ||
            !mgpu_step_store8(c, node + MEGPU_ARB_LAST, side)) {
            return false;
        }
        for (;;) {
            uint64_t seq = mgpu_seq_read();
            uint32_t dw;

            if (!mgpu_step_load32(c, node, &dw)) {
                return false;
            }
            if (megpu_arb_node_ack(dw, side)) {
                break;
            }
            qatomic_inc(&c->e->arb_spins);
            if (!mgpu_stall(c, seq)) {
                return false;
            }
        }
    }
    return true;
}

static bool mgpu_tour_release(MgpuCtx *c)
{
    unsigned side;

    for (int l = mgpu_levels(c->agents) - 1; l >= 0; l--) {
        uint64_t node = mgpu_node(c, l, &side);

        if (!mgpu_step_store8(c, node + MEGPU_ARB_REQ(side), 0)) {
            return false;
        }
    }
    return true;
}

/* The seed's Table 2 tree, 4 agents: kept to show it is not exclusive. */
static bool mgpu_literal_acquire(MgpuCtx *c)
{
    unsigned i = c->agent, pair = i >> 1;
    uint64_t own = c->base + MEGPU_ARB_DW(1 + pair);

    if (!mgpu_step_store8(c, own + MEGPU_ARB_REQ(i & 1), 1) ||
        !mgpu_step_store8(c, own + MEGPU_ARB_LAST, i) ||
        !mgpu_step_store8(c, c->base + MEGPU_ARB_DW(1) + MEGPU_ARB_LASTPAIR,
                          pair)) {
        return false;
    }
    for (;;) {
        uint64_t seq = mgpu_seq_read();
        uint32_t dw[2];
        bool held, ok;

        /* one check, one step: both dwords read in the same turn */
        if (!mgpu_step_begin(c, &held)) {
            return false;
        }
        ok = megpu_mem_read32(c->x, c->base + MEGPU_ARB_DW(1), &dw[0]) &&
             megpu_mem_read32(c->x, c->base + MEGPU_ARB_DW(2), &dw[1]);
        c->kind = MEGPU_MGPU_STEP_ARB_READ;
        mgpu_step_end(c, held, c->base + MEGPU_ARB_DW(1), ok ? dw[0] : 0);
        if (!ok) {
            return false;
        }
        if (!megpu_arb_literal_wait(dw[0], dw[1], i)) {
            return true;
        }
        qatomic_inc(&c->e->arb_spins);
        if (!mgpu_stall(c, seq)) {
            return false;
        }
    }
}

static bool mgpu_literal_release(MgpuCtx *c)
{
    unsigned i = c->agent;

    return mgpu_step_store8(c, c->base + MEGPU_ARB_DW(1 + (i >> 1)) +
                            MEGPU_ARB_REQ(i & 1), 0);
}

static bool mgpu_lock_acquire(MgpuCtx *c, bool literal)
{
    return literal ? mgpu_literal_acquire(c) : mgpu_tour_acquire(c);
}

static bool mgpu_lock_release(MgpuCtx *c, bool literal)
{
    return literal ? mgpu_literal_release(c) : mgpu_tour_release(c);
}

/* ---- the device-local stage: one engine of the GPU at a time ---- */

/* The slot of @pa in @e's held blocks, or -1; under mgpu_lock. */
static int arb_held_slot(MegpuEngine *e, hwaddr pa)
{
    for (unsigned i = 0; i < e->arb_held_n; i++) {
        if (e->arb_held[i] == pa) {
            return i;
        }
    }
    return -1;
}

/* Another engine of the device holding @pa; under mgpu_lock. */
static bool arb_held_elsewhere(MegpuEngine *e, hwaddr pa)
{
    MegpuState *s = e->s;

    for (unsigned i = 0; i < s->num_engines; i++) {
        if (&s->engines[i] != e && arb_held_slot(&s->engines[i], pa) >= 0) {
            return true;
        }
    }
    return false;
}

/*
 * The bus address of the block at @c->base: the key of the local stage.
 * Translated for writing: a lock is taken by writing its words, and with
 * one agent (no levels) the claim is all ACQUIRE does, so a read-only
 * mapping (a buffer imported without DRM_RDWR) must not claim the block
 * and keep its owner out.
 */
static bool arb_block_pa(MgpuCtx *c, hwaddr *pa)
{
    MegpuMap m;

    if (!megpu_mem_map(c->x, c->base, 4, true, &m)) {
        return false;
    }
    *pa = m.pa;
    megpu_mem_unmap(c->x, &m);
    return true;
}

/*
 * Claim the block for this engine, stalling while another engine of the
 * device holds it. Faults ARB_HELD when the engine holds it already (it
 * would pass its own lock) or holds MEGPU_ARB_HELD_MAX blocks.
 */
static bool arb_local_claim(MgpuCtx *c, hwaddr *pa)
{
    MegpuEngine *e = c->e;

    if (!arb_block_pa(c, pa)) {
        return false;
    }
    for (;;) {
        uint64_t seq = mgpu_seq_read();
        bool claimed = false, bad = false;

        qemu_mutex_lock(&mgpu_lock);
        if (arb_held_slot(e, *pa) >= 0 ||
            e->arb_held_n == MEGPU_ARB_HELD_MAX) {
            bad = true;
        } else if (!arb_held_elsewhere(e, *pa)) {
            e->arb_held[e->arb_held_n++] = *pa;
            claimed = true;
        }
        qemu_mutex_unlock(&mgpu_lock);
        if (bad) {
            return megpu_fault(c->x, MEGPU_FAULT_ARB_HELD, c->base, false);
        }
        if (claimed) {
            return true;
        }
        qatomic_inc(&e->arb_spins);
        if (!mgpu_stall(c, seq)) {
            return false;
        }
    }
}

/* Give the claim up and wake the device's engines stalled on it. */
static void arb_local_drop(MegpuEngine *e, hwaddr pa)
{
    int i;

    qemu_mutex_lock(&mgpu_lock);
    i = arb_held_slot(e, pa);
    if (i >= 0) {
        e->arb_held[i] = e->arb_held[--e->arb_held_n];
    }
    mgpu_seq++;
    qemu_cond_broadcast(&mgpu_cond);
    qemu_mutex_unlock(&mgpu_lock);
}

/*
 * A reset or fault of @e, or a SET_CONTEXT to another context: whatever
 * it held is free for its device (one client's leftover holds neither
 * fill the engine's table nor block another client's job).
 */
void megpu_mgpu_engine_drop(MegpuEngine *e)
{
    qemu_mutex_lock(&mgpu_lock);
    if (e->arb_held_n) {
        e->arb_held_n = 0;
        mgpu_seq++;
        qemu_cond_broadcast(&mgpu_cond);
    }
    qemu_mutex_unlock(&mgpu_lock);
}

static bool mgpu_arb_init(MgpuCtx *c, MegpuExec *x, uint32_t flags,
                          const uint32_t *p)
{
    uint64_t base = le32_to_cpu(p[0]) | (uint64_t)le32_to_cpu(p[1]) << 32;

    if (!mgpu_ctx_init(c, x, base, 4)) {
        return false;
    }
    if ((flags & ~MEGPU_ARB_FLAGS) ||
        (c->agents != 1 && !mgpu_levels(c->agents)) ||
        ((flags & MEGPU_ARB_FLAG_LITERAL) && c->agents != 4)) {
        return megpu_fault(x, MEGPU_FAULT_MGPU_MODE, x->pkt_addr, false);
    }
    return true;
}

bool megpu_exec_arb_acquire(MegpuExec *x, uint32_t flags, const uint32_t *p)
{
    bool literal = flags & MEGPU_ARB_FLAG_LITERAL;
    MgpuCtx c;
    hwaddr pa;
    bool ok = false;

    if (!mgpu_arb_init(&c, x, flags, p) || !arb_local_claim(&c, &pa)) {
        mgpu_unstall(&c);
        return false;
    }
    if (!(flags & MEGPU_ARB_FLAG_SEM)) {
        /* the claim is held until ARB_RELEASE */
        ok = mgpu_lock_acquire(&c, literal);
        if (!ok) {
            arb_local_drop(c.e, pa);
        }
        trace_megpu_arb(c.e->idx, c.base, c.agent, "acquire", ok);
        mgpu_unstall(&c);
        return ok;
    }
    /* FLAG_SEM: the claim covers each locked section only */
    for (;;) {
        uint64_t seq = mgpu_seq_read();
        uint32_t sem, v;

        if (!mgpu_lock_acquire(&c, literal) ||
            !mgpu_step_load32(&c, c.base + MEGPU_ARB_SEM, &sem)) {
            break;
        }
        if (sem && !mgpu_step_add32(&c, c.base + MEGPU_ARB_SEM, -1, &v)) {
            break;
        }
        /* Failed Wait or not: unlock; Last stays, the other goes next */
        if (!mgpu_lock_release(&c, literal)) {
            break;
        }
        if (sem) {
            ok = true;
            break;
        }
        arb_local_drop(c.e, pa);
        qatomic_inc(&c.e->arb_failed_waits);
        if (!mgpu_stall(&c, seq) || !arb_local_claim(&c, &pa)) {
            mgpu_unstall(&c);
            return false;
        }
    }
    arb_local_drop(c.e, pa);
    trace_megpu_arb(c.e->idx, c.base, c.agent, "sem-wait", ok);
    mgpu_unstall(&c);
    return ok;
}

bool megpu_exec_arb_release(MegpuExec *x, uint32_t flags, const uint32_t *p)
{
    bool literal = flags & MEGPU_ARB_FLAG_LITERAL;
    MgpuCtx c;
    hwaddr pa;
    uint32_t v;
    bool ok;

    if (!mgpu_arb_init(&c, x, flags, p)) {
        return false;
    }
    /* what was written inside the critical section lands first */
    if (!megpu_wq_engine_flush(x)) {
        return false;
    }
    if (flags & MEGPU_ARB_FLAG_SEM) {
        if (!arb_local_claim(&c, &pa)) {
            mgpu_unstall(&c);
            return false;
        }
        ok = mgpu_lock_acquire(&c, literal) &&
             mgpu_step_add32(&c, c.base + MEGPU_ARB_SEM, 1, &v) &&
             mgpu_lock_release(&c, literal);
    } else {
        if (!arb_block_pa(&c, &pa)) {
            return false;
        }
        /* another engine's hold: releasing would open its lock */
        qemu_mutex_lock(&mgpu_lock);
        ok = !arb_held_elsewhere(c.e, pa);
        qemu_mutex_unlock(&mgpu_lock);
        if (!ok) {
            return megpu_fault(x, MEGPU_FAULT_ARB_HELD, c.base, false);
        }
        ok = mgpu_lock_release(&c, literal);
    }
    arb_local_drop(c.e, pa);
    trace_megpu_arb(c.e->idx, c.base, c.agent, "release", ok);
    mgpu_unstall(&c);
    megpu_wake_waiters(x->e->s);
    return ok;
}

/* ---- registers ---- */

bool megpu_mgpu_reg_read(MegpuState *s, hwaddr addr, uint64_t *val)
{
    switch (addr) {
    case MEGPU_REG_MGPU_AGENT_ID:
        *val = qatomic_read(&s->mgpu_agent_id);
        return true;
    case MEGPU_REG_MGPU_AGENT_COUNT:
        *val = qatomic_read(&s->mgpu_agent_count);
        return true;
    case MEGPU_REG_MGPU_SCHED_LO:
        *val = (uint32_t)qatomic_read(&s->mgpu_sched);
        return true;
    case MEGPU_REG_MGPU_SCHED_HI:
        *val = qatomic_read(&s->mgpu_sched) >> 32;
        return true;
    case MEGPU_REG_MGPU_STEPS:
        *val = qatomic_read(&s->mgpu_steps);
        return true;
    }
    return false;
}

bool megpu_mgpu_reg_write(MegpuState *s, hwaddr addr, uint32_t val)
{
    switch (addr) {
    case MEGPU_REG_MGPU_AGENT_ID:
        /* checked when a packet runs: count and id change one by one */
        qatomic_set(&s->mgpu_agent_id, val);
        return true;
    case MEGPU_REG_MGPU_AGENT_COUNT:
        qatomic_set(&s->mgpu_agent_count, val);
        return true;
    case MEGPU_REG_MGPU_SCHED_LO:
        qatomic_set(&s->mgpu_sched,
                    deposit64(qatomic_read(&s->mgpu_sched), 0, 32, val));
        return true;
    case MEGPU_REG_MGPU_SCHED_HI:
        qatomic_set(&s->mgpu_sched,
                    deposit64(qatomic_read(&s->mgpu_sched), 32, 32, val));
        return true;
    case MEGPU_REG_MGPU_STEPS:
        return true;            /* read-only */
    }
    return false;
}

void megpu_mgpu_reset(MegpuState *s)
{
    qatomic_set(&s->mgpu_agent_id, s->mgpu_agent_prop);
    qatomic_set(&s->mgpu_agent_count, s->mgpu_agents_prop);
    qatomic_set(&s->mgpu_sched, 0);
    qatomic_set(&s->mgpu_steps, 0);
    for (unsigned n = 0; n < s->num_engines; n++) {
        MegpuEngine *e = &s->engines[n];

        qatomic_set(&e->msem_retries, 0);
        qatomic_set(&e->msem_false_blocks, 0);
        qatomic_set(&e->arb_spins, 0);
        qatomic_set(&e->arb_failed_waits, 0);
    }
}

bool megpu_mgpu_eng_read(MegpuEngine *e, hwaddr off, uint32_t *val)
{
    switch (off) {
    case MEGPU_ENG_MSEM_RETRIES:
        *val = qatomic_read(&e->msem_retries);
        return true;
    case MEGPU_ENG_MSEM_FALSE_BLOCKS:
        *val = qatomic_read(&e->msem_false_blocks);
        return true;
    case MEGPU_ENG_ARB_SPINS:
        *val = qatomic_read(&e->arb_spins);
        return true;
    case MEGPU_ENG_ARB_FAILED_WAITS:
        *val = qatomic_read(&e->arb_failed_waits);
        return true;
    }
    return false;
}
