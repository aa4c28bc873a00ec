/*
 * QTest for multi-GPU coordination (seed 000): two to four megpu devices
 * in one machine share guest RAM and coordinate with MSEM_SIGNAL/WAIT
 * and ARB_ACQUIRE/RELEASE only. Covers the FIG. 5 numbers on devices,
 * safety and progress of the summed semaphore, the x-mgpu-nonatomic
 * negative control, mutual exclusion of a read-delay-write counter for
 * 2 and 4 agents, Failed Wait, the literal 4-GPU tree failing under the
 * replayed counterexample while the tournament holds under the same
 * kind of schedule, and bad masks, ids and blocks faulting the packet.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */

#include "qemu/osdep.h"
#include "qemu/host-utils.h"
#include "megpu-qtest.h"
#include "hw/misc/megpu_msem_check.h"

#define MAXDEV              4
#define SLOTS_PA            (SEM_PA + 0x000)        /* MSEM slots */
#define ARB_PA              (SEM_PA + 0x100)        /* ARB block */
#define SCHED_PA            (SEM_PA + 0x1000)       /* schedule block */
#define MARK_PA(d)          (DATA_PA + 8 * (d))     /* "in CS" markers */
#define GO_PA(d)            (DATA_PA + 0x100 + 8 * (d))
#define COUNTER_PA          (DATA_PA + 0x200)
#define TMP_PA(d)           (DATA_PA + 0x300 + 0x10 * (d))
#define KARGS_PA(d)         (DATA_PA + 0x400 + 0x40 * (d))
#define DONE_PA(d, e)       (DATA_PA + 0x800 + 0x40 * (d) + 8 * (e))
#define MRING_SIZE          0x10000u
#define TRACE_PA            (BIG_PA + 0x100000)     /* step records */
#define TRACE_CAP           16384u

/* Several devices in one QEMU: one bus, one Megpu view per device. */
typedef struct {
    QTestState *qts;
    QPCIBus *bus;
    unsigned ndev;
    Megpu m[MAXDEV];
} Multi;

static uint64_t ring_pa(unsigned d, unsigned e)
{
    /* below IB_PA: MAXDEV * 16 rings of MRING_SIZE */
    return 0x01000000ull + (d * MEGPU_MAX_ENGINES + e) * MRING_SIZE;
}

static void multi_start(Multi *mu, unsigned ndev, unsigned engines,
                        const char *opts)
{
    GString *cmd = g_string_new("-machine q35 -nodefaults -m 256M");

    mu->ndev = ndev;
    for (unsigned d = 0; d < ndev; d++) {
        g_string_append_printf(cmd, " -device megpu,addr=%02x.0,engines=%u,"
                               "write-mode=strict,mgpu-agent=%u,"
                               "mgpu-agents=%u%s%s", 4 + d, engines, d,
                               ndev, *opts ? "," : "", opts);
    }
    mu->qts = qtest_init(cmd->str);
    g_string_free(cmd, true);
    mu->bus = qpci_new_pc(mu->qts, NULL);
    for (unsigned d = 0; d < ndev; d++) {
        Megpu *m = &mu->m[d];

        m->qts = mu->qts;
        m->bus = mu->bus;
        m->engines = engines;
        m->dev = qpci_device_find(mu->bus, QPCI_DEVFN(4 + d, 0));
        g_assert_nonnull(m->dev);
        qpci_device_enable(m->dev);
        m->bar = qpci_iomap(m->dev, MEGPU_BAR_MMIO, NULL);
        qpci_msix_enable(m->dev);
        g_assert_cmphex(rd(m, MEGPU_REG_CAPS) & MEGPU_CAP_MGPU, !=, 0);
        g_assert_cmpuint(rd(m, MEGPU_REG_MGPU_AGENT_ID), ==, d);
        g_assert_cmpuint(rd(m, MEGPU_REG_MGPU_AGENT_COUNT), ==, ndev);
        for (unsigned e = 0; e < engines; e++) {
            ewr(m, e, MEGPU_ENG_RING_BASE_LO, ring_pa(d, e));
            ewr(m, e, MEGPU_ENG_RING_BASE_HI, 0);
            ewr(m, e, MEGPU_ENG_RING_SIZE, MRING_SIZE);
            m->ring[e] = (Stream) {
                .qts = mu->qts, .base = ring_pa(d, e), .size = MRING_SIZE,
            };
        }
    }
    qtest_memset(mu->qts, SEM_PA, 0, 0x2000);
    qtest_memset(mu->qts, DATA_PA, 0, 0x1000);
}

static void multi_stop(Multi *mu)
{
    for (unsigned d = 0; d < mu->ndev; d++) {
        qpci_msix_disable(mu->m[d].dev);
        qpci_iounmap(mu->m[d].dev, mu->m[d].bar);
        g_free(mu->m[d].dev);
    }
    qpci_free_pc(mu->bus);
    qtest_quit(mu->qts);
}

static void emit_msem_signal(Stream *st, uint64_t base)
{
    hdr(st, MEGPU_PKT_MSEM_SIGNAL, MEGPU_PKT_MSEM_SIGNAL_COUNT, 0);
    put64(st, base);
}

static void emit_msem_wait(Stream *st, uint64_t base, uint32_t mask)
{
    hdr(st, MEGPU_PKT_MSEM_WAIT, MEGPU_PKT_MSEM_WAIT_COUNT, 0);
    put64(st, base);
    put(st, mask);
}

static void emit_arb(Stream *st, uint32_t op, uint64_t base, uint32_t flags)
{
    hdr(st, op, MEGPU_PKT_ARB_COUNT, flags);
    put64(st, base);
}

static uint32_t slot(Multi *mu, unsigned a)
{
    return qtest_readl(mu->qts, SLOTS_PA + MEGPU_MSEM_SLOT(a));
}

/* Bounded wait until STATUS shows WAIT_SEM (an MSEM/ARB stall). */
static void eng_stalled(Megpu *m, unsigned e)
{
    eng_poll(m, e, MEGPU_ENG_STATUS_WAIT_SEM);
    g_assert_cmphex(erd(m, e, MEGPU_ENG_STATUS) & MEGPU_ENG_STATUS_IDLE,
                    ==, 0);
}

/*
 * An engine's raw reads of coordination words see its own queued writes,
 * as every read of an engine does: with held writes, a WRITE_DATA of 1
 * to agent 1's slot, then MSEM_WAIT over both slots on agent 0. RAM
 * still holds 0 there (the write lands only when virtual time moves), so
 * a read of RAM alone would sum -1 and stall; the engine's own value
 * makes the sum 0 and the wait done, with no clock step.
 */
static void test_own_queued_slot(void)
{
    const uint32_t one = 1;
    Multi mu;
    Megpu *a = &mu.m[0];

    multi_start(&mu, 2, 1, HOLD);
    emit_write(&a->ring[0], SLOTS_PA + MEGPU_MSEM_SLOT(1), &one, 1);
    emit_msem_wait(&a->ring[0], SLOTS_PA, 0x3);
    kick(a, 0);
    for (unsigned us = 0; !(erd(a, 0, MEGPU_ENG_STATUS) &
                            MEGPU_ENG_STATUS_IDLE); us += 1000) {
        g_assert_cmpuint(us, <, POLL_TIMEOUT_US);
        g_usleep(1000);
    }
    g_assert_cmpuint(erd(a, 0, MEGPU_ENG_MSEM_RETRIES), ==, 0);
    g_assert_cmphex(slot(&mu, 1), ==, 0);       /* still queued */
    hold_flush(a);
    g_assert_cmphex(slot(&mu, 1), ==, 1);
    g_assert_cmphex(slot(&mu, 0), ==, 0xffffffff);
    multi_stop(&mu);
}

/* FIG. 5 on devices: B (video) signals twice, A and B display wait. */
static void test_fig5(void)
{
    Multi mu;
    Megpu *a = &mu.m[0], *b = &mu.m[1];

    multi_start(&mu, 2, 1, "");
    emit_msem_signal(&b->ring[0], SLOTS_PA);
    emit_msem_signal(&b->ring[0], SLOTS_PA);
    kick(b, 0);
    eng_idle(b, 0);
    g_assert_cmphex(slot(&mu, 1), ==, 2);

    emit_msem_wait(&a->ring[0], SLOTS_PA, 0x3);
    kick(a, 0);
    eng_idle(a, 0);
    g_assert_cmphex(slot(&mu, 0), ==, 0xffffffff);   /* sum 1: OK */
    emit_msem_wait(&b->ring[0], SLOTS_PA, 0x3);
    kick(b, 0);
    eng_idle(b, 0);
    g_assert_cmphex(slot(&mu, 1), ==, 1);            /* sum 0: OK */

    /* a third wait stalls A, with its slot compensated */
    emit_msem_wait(&a->ring[0], SLOTS_PA, 0x3);
    kick(a, 0);
    eng_stalled(a, 0);
    g_usleep(20 * 1000);
    g_assert_cmphex(erd(a, 0, MEGPU_ENG_STATUS) & MEGPU_ENG_STATUS_IDLE,
                    ==, 0);
    g_assert_cmpuint(erd(a, 0, MEGPU_ENG_MSEM_RETRIES), >, 0);
    /* its slot "bounces" while it retries; between tries it is whole */
    for (unsigned us = 0; ; us += 10) {
        uint32_t a0 = slot(&mu, 0);

        /* B's slot is still: A's is 0xffffffff or pre-decremented */
        g_assert_cmphex(slot(&mu, 1), ==, 1);
        if (a0 == 0xffffffff) {
            break;
        }
        g_assert_cmphex(a0, ==, 0xfffffffe);
        g_assert_cmpuint(us, <, POLL_TIMEOUT_US);
        g_usleep(10);
    }
    /* a signal from the other device releases it, no CPU involved */
    emit_msem_signal(&b->ring[0], SLOTS_PA);
    kick(b, 0);
    eng_idle(b, 0);
    eng_idle(a, 0);
    g_assert_cmphex(slot(&mu, 0), ==, 0xfffffffe);
    g_assert_cmphex(slot(&mu, 1), ==, 2);
    g_assert_cmpuint(rd(a, MEGPU_REG_MGPU_STEPS), >, 0);
    multi_stop(&mu);
}

/*
 * Safety and progress, 3 devices with 2 engines each: consumers queue
 * more waits than producers signal; exactly as many waits as signals
 * complete (none more: safety; none fewer: progress), then the rest
 * complete after more signals. Slots end as signals - waits per agent.
 */
static void test_msem_safety_progress(void)
{
    enum { NDEV = 3, WAITS = 20, FIRST = 12 };
    uint32_t sig[NDEV] = { 0 };
    Multi mu;
    unsigned done;

    multi_start(&mu, NDEV, 2, "");
    /* engine 1 of every device consumes WAITS times */
    for (unsigned d = 0; d < NDEV; d++) {
        for (unsigned i = 1; i <= WAITS; i++) {
            emit_msem_wait(&mu.m[d].ring[1], SLOTS_PA, 0x7);
            emit_ts(&mu.m[d].ring[1], DONE_PA(d, 1), i, 0);
        }
        kick(&mu.m[d], 1);
    }
    /* FIRST signals from engine 0 of devices 0 and 2, unevenly */
    for (unsigned i = 0; i < FIRST * 2; i++) {
        unsigned d = (i % 3) ? 2 : 0;

        if (sig[0] + sig[2] == FIRST * 2) {
            break;
        }
        emit_msem_signal(&mu.m[d].ring[0], SLOTS_PA);
        sig[d]++;
    }
    kick(&mu.m[0], 0);
    kick(&mu.m[2], 0);
    eng_idle(&mu.m[0], 0);
    eng_idle(&mu.m[2], 0);
    for (unsigned us = 0; ; us += 1000) {
        done = 0;
        for (unsigned d = 0; d < NDEV; d++) {
            done += qtest_readq(mu.qts, DONE_PA(d, 1));
        }
        g_assert_cmpuint(done, <=, sig[0] + sig[2]);
        if (done == sig[0] + sig[2]) {
            break;
        }
        g_assert_cmpuint(us, <, POLL_TIMEOUT_US);
        g_usleep(1000);
    }
    /* and no more later */
    g_usleep(50 * 1000);
    done = 0;
    for (unsigned d = 0; d < NDEV; d++) {
        uint64_t mine = qtest_readq(mu.qts, DONE_PA(d, 1));

        done += mine;
        if (mine < WAITS) {
            eng_stalled(&mu.m[d], 1);
        }
    }
    g_assert_cmpuint(done, ==, FIRST * 2);
    /* the remaining signals, from device 1: everyone finishes */
    for (unsigned i = 0; i < NDEV * WAITS - FIRST * 2; i++) {
        emit_msem_signal(&mu.m[1].ring[0], SLOTS_PA);
        sig[1]++;
    }
    kick(&mu.m[1], 0);
    for (unsigned d = 0; d < NDEV; d++) {
        eng_idle(&mu.m[d], 1);
        eng_idle(&mu.m[d], 0);
        g_assert_cmpuint(qtest_readq(mu.qts, DONE_PA(d, 1)), ==, WAITS);
        /* slots written only by their owner: signals - waits exactly */
        g_assert_cmphex(slot(&mu, d), ==, sig[d] - WAITS);
    }
    multi_stop(&mu);
}

/*
 * A whole run under one seeded schedule, traced (item 3 of the seed
 * semantics issue): 3 devices run random mixes of MSEM_SIGNAL and
 * MSEM_WAIT (never more waits than signals in any prefix of their own),
 * every step in the seed's order to the end (a device whose ring went
 * idle is marked DONE, so its turns pass); then the devices' own step
 * trace is replayed: every read sees the last write, every write is one
 * off the last, and no prefix completes more waits than signals. A
 * tampered record must fail the same check.
 */
static void test_msem_whole_run_traced(void)
{
    enum { NDEV = 3, OPS = 40 };
    uint32_t sig[NDEV] = { 0 }, waits[NDEV] = { 0 }, count, done = 0;
    struct megpu_msem_check r;
    uint64_t x = 0x2545f4914f6cdd1dull;
    uint8_t *recs;
    Multi mu;

    multi_start(&mu, NDEV, 1, "");
    qtest_writel(mu.qts, SCHED_PA + MEGPU_MGPU_SCHED_POS, 0);
    qtest_writel(mu.qts, SCHED_PA + MEGPU_MGPU_SCHED_LEN,
                 MEGPU_MGPU_SCHED_MAX | MEGPU_MGPU_SCHED_SEEDED |
                 MEGPU_MGPU_SCHED_TRACED);
    qtest_writeq(mu.qts, SCHED_PA + MEGPU_MGPU_SCHED_SEED, 77);
    qtest_writel(mu.qts, SCHED_PA + MEGPU_MGPU_SCHED_MASK, 0x7);
    qtest_writel(mu.qts, SCHED_PA + MEGPU_MGPU_SCHED_TRACE_CAP, TRACE_CAP);
    qtest_writeq(mu.qts, SCHED_PA + MEGPU_MGPU_SCHED_TRACE, TRACE_PA);
    for (unsigned d = 0; d < NDEV; d++) {
        Stream *st = &mu.m[d].ring[0];

        wr(&mu.m[d], MEGPU_REG_MGPU_SCHED_LO, SCHED_PA);
        wr(&mu.m[d], MEGPU_REG_MGPU_SCHED_HI, 0);
        for (unsigned i = 0; i < OPS; i++) {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            if ((x & 1) && waits[d] < sig[d]) {
                emit_msem_wait(st, SLOTS_PA, 0x7);
                waits[d]++;
            } else {
                emit_msem_signal(st, SLOTS_PA);
                sig[d]++;
            }
        }
    }
    for (unsigned d = 0; d < NDEV; d++) {
        kick(&mu.m[d], 0);
    }
    /* to the end in the seed's order; an idle device's turns pass */
    for (unsigned us = 0; done != MEGPU_BIT(NDEV) - 1; us += 1000) {
        for (unsigned d = 0; d < NDEV; d++) {
            if (!(done & MEGPU_BIT(d)) &&
                (erd(&mu.m[d], 0, MEGPU_ENG_STATUS) &
                 MEGPU_ENG_STATUS_IDLE)) {
                eng_idle(&mu.m[d], 0);
                qtest_writeb(mu.qts, SCHED_PA + MEGPU_MGPU_SCHED_DONE(d), 1);
                done |= MEGPU_BIT(d);
            }
        }
        g_assert_cmpuint(us, <, 4 * POLL_TIMEOUT_US);
        g_usleep(1000);
    }
    count = qtest_readl(mu.qts, SCHED_PA + MEGPU_MGPU_SCHED_TRACE_COUNT);
    /* every step was in its turn, none after the schedule */
    g_assert_cmpuint(count, <=, TRACE_CAP);
    g_assert_cmpuint(count, <=,
                     qtest_readl(mu.qts, SCHED_PA + MEGPU_MGPU_SCHED_POS));
    recs = g_malloc(count * MEGPU_MGPU_REC_SIZE);
    qtest_memread(mu.qts, TRACE_PA, recs, count * MEGPU_MGPU_REC_SIZE);
    g_assert_cmpint(megpu_msem_check_trace(recs, count, 0x7, NULL, &r), ==,
                    0);
    g_assert_cmpuint(r.signals, ==, sig[0] + sig[1] + sig[2]);
    g_assert_cmpuint(r.waits, ==, waits[0] + waits[1] + waits[2]);
    g_test_message("%u steps: %u signals, %u waits, %u undone checks",
                   count, r.signals, r.waits, r.undos);
    /* the same check finds a lost update in the same trace */
    for (unsigned i = 0; i < count; i++) {
        uint8_t *rec = recs + i * MEGPU_MGPU_REC_SIZE;

        if (rec[MEGPU_MGPU_REC_KIND] == MEGPU_MGPU_STEP_SIGNAL && i > 0) {
            rec[MEGPU_MGPU_REC_VALUE]--;
            g_assert_cmpint(megpu_msem_check_trace(recs, count, 0x7, NULL,
                                                   &r), ==, -1);
            g_assert_cmpint(r.bad, ==, i);
            break;
        }
    }
    g_free(recs);
    for (unsigned d = 0; d < NDEV; d++) {
        g_assert_cmphex(slot(&mu, d), ==, sig[d] - waits[d]);
    }
    multi_stop(&mu);
}

/*
 * Two engines of one device signal the device's own slot concurrently:
 * atomic read/modify/write keeps every signal; x-mgpu-nonatomic (the
 * negative control) loses some, and this test must see it.
 */
static void signal_race(bool nonatomic)
{
    enum { K = 300 };
    Multi mu;
    uint32_t v;

    multi_start(&mu, 1, 2, nonatomic ? "x-mgpu-nonatomic=on" : "");
    for (unsigned e = 0; e < 2; e++) {
        for (unsigned i = 0; i < K; i++) {
            emit_msem_signal(&mu.m[0].ring[e], SLOTS_PA);
        }
    }
    kick(&mu.m[0], 0);
    kick(&mu.m[0], 1);
    eng_idle(&mu.m[0], 0);
    eng_idle(&mu.m[0], 1);
    v = slot(&mu, 0);
    if (nonatomic) {
        g_assert_cmpuint(v, <, 2 * K);
    } else {
        g_assert_cmpuint(v, ==, 2 * K);
    }
    multi_stop(&mu);
}

static void test_signal_atomic(void)
{
    signal_race(false);
}

static void test_signal_nonatomic(void)
{
    signal_race(true);
}

/*
 * Mutual exclusion: engines 0..@neng-1 of every device increment one
 * counter K times each inside ARB_ACQUIRE/RELEASE (@arb) by COPY counter
 * -> tmp, INCREMENT tmp, COPY tmp -> counter, with DELAY_US widening the
 * read-to-write window. Any overlap loses an increment. With FLAG_SEM,
 * DW0 starts at 1: a binary semaphore. Returns the counter.
 */
static uint32_t arb_counter(unsigned ndev, unsigned neng, uint32_t flags,
                            unsigned k, bool arb)
{
    /* GFX engines: COPY and the INCREMENT kernel */
    static const unsigned use[] = { 0, 4, 8, 12 };
    Multi mu;
    uint32_t counter;

    g_assert(neng <= ARRAY_SIZE(use));
    multi_start(&mu, ndev, neng == 1 ? 1 : use[neng - 1] + 1, "");
    qtest_writel(mu.qts, ARB_PA + MEGPU_ARB_SEM, 1);
    for (unsigned d = 0; d < ndev; d++) {
        for (unsigned j = 0; j < neng; j++) {
            Megpu *m = &mu.m[d];
            unsigned e = use[j], i = d * neng + j;
            Stream *r = &m->ring[e];
            uint64_t ptr[4] = { TMP_PA(i), 0, 0, 0 };
            uint32_t param[3] = { 0, 0, 0 };

            write_kargs(m, KARGS_PA(i), ptr, 1, param);
            ewr(m, e, MEGPU_ENG_DELAY_US, 100);
            for (unsigned n = 0; n < k; n++) {
                if (arb) {
                    emit_arb(r, MEGPU_PKT_ARB_ACQUIRE, ARB_PA, flags);
                }
                hdr(r, MEGPU_PKT_COPY, MEGPU_PKT_COPY_COUNT, 0);
                put64(r, COUNTER_PA);
                put64(r, TMP_PA(i));
                put(r, 4);
                emit_dispatch(r, MEGPU_KERNEL_INCREMENT, KARGS_PA(i), 1, 1,
                              1, 1);
                hdr(r, MEGPU_PKT_COPY, MEGPU_PKT_COPY_COUNT, 0);
                put64(r, TMP_PA(i));
                put64(r, COUNTER_PA);
                put(r, 4);
                if (arb) {
                    emit_arb(r, MEGPU_PKT_ARB_RELEASE, ARB_PA, flags);
                }
            }
        }
    }
    for (unsigned d = 0; d < ndev; d++) {
        for (unsigned j = 0; j < neng; j++) {
            kick(&mu.m[d], use[j]);
        }
    }
    for (unsigned d = 0; d < ndev; d++) {
        for (unsigned j = 0; j < neng; j++) {
            eng_idle(&mu.m[d], use[j]);
            g_assert_cmpuint(erd(&mu.m[d], use[j], MEGPU_ENG_FAULT_CODE), ==,
                             0);
        }
    }
    counter = qtest_readl(mu.qts, COUNTER_PA);
    /* every Req byte is clear again, the semaphore back at 1 */
    for (unsigned n = 1; arb && n < ndev; n++) {
        uint32_t dw = qtest_readl(mu.qts, ARB_PA + MEGPU_ARB_DW(n));

        g_assert_cmphex(dw & 0xffff, ==, 0);
    }
    if (arb && (flags & MEGPU_ARB_FLAG_SEM)) {
        g_assert_cmpuint(qtest_readl(mu.qts, ARB_PA + MEGPU_ARB_SEM), ==, 1);
    }
    multi_stop(&mu);
    return counter;
}

static void test_arb_mutex2(void)
{
    g_assert_cmpuint(arb_counter(2, 1, 0, 40, true), ==, 2 * 40);
}

static void test_arb_mutex4(void)
{
    g_assert_cmpuint(arb_counter(4, 1, 0, 20, true), ==, 4 * 20);
}

/*
 * Engines of one GPU are one agent: the device-local stage excludes
 * them. Two and four engines of one device, and two engines on each of
 * two devices; before it, engines of one device both passed the lock.
 */
static void test_arb_engines2(void)
{
    g_assert_cmpuint(arb_counter(1, 2, 0, 30, true), ==, 2 * 30);
}

static void test_arb_engines4(void)
{
    g_assert_cmpuint(arb_counter(1, 4, 0, 15, true), ==, 4 * 15);
}

static void test_arb_engines_two_gpus(void)
{
    g_assert_cmpuint(arb_counter(2, 2, 0, 15, true), ==, 4 * 15);
}

/* The semaphore-guarded block between two engines of one GPU. */
static void test_arb_sem_engines(void)
{
    g_assert_cmpuint(arb_counter(1, 2, MEGPU_ARB_FLAG_SEM, 30, true), ==,
                     2 * 30);
}

/*
 * The local stage's rules on one GPU: RELEASE of another engine's hold
 * and a second ACQUIRE of a held block fault ARB_HELD; a faulted
 * holder's claim is dropped, so the engine stalled behind it gets the
 * block; a fifth hold faults; a reset drops every claim.
 */
static void test_arb_held(void)
{
    Multi mu;
    Megpu *m = &mu.m[0];
    Stream *r0 = &m->ring[0], *r1 = &m->ring[1];
    uint32_t at;

    multi_start(&mu, 1, 2, "");
    emit_arb(r0, MEGPU_PKT_ARB_ACQUIRE, ARB_PA, 0);
    kick(m, 0);
    eng_idle(m, 0);

    at = r1->pos;       /* engine 1 may not open engine 0's lock */
    emit_arb(r1, MEGPU_PKT_ARB_RELEASE, ARB_PA, 0);
    kick(m, 1);
    expect_fault(m, 1, MEGPU_FAULT_ARB_HELD, ARB_PA, at, 0);

    emit_arb(r1, MEGPU_PKT_ARB_ACQUIRE, ARB_PA, 0);
    kick(m, 1);
    eng_stalled(m, 1);

    at = r0->pos;       /* engine 0 again: it would pass its own lock */
    emit_arb(r0, MEGPU_PKT_ARB_ACQUIRE, ARB_PA, 0);
    kick(m, 0);
    expect_fault(m, 0, MEGPU_FAULT_ARB_HELD, ARB_PA, at, 0);
    /* the fault dropped engine 0's hold: engine 1 has the block now */
    eng_idle(m, 1);
    g_assert_cmpuint(erd(m, 1, MEGPU_ENG_FAULTS), ==, 1);

    for (unsigned i = 1; i <= MEGPU_ARB_HELD_MAX; i++) {
        emit_arb(r0, MEGPU_PKT_ARB_ACQUIRE, ARB_PA + 0x40 * i, 0);
    }
    kick(m, 0);
    eng_idle(m, 0);
    at = r0->pos;
    emit_arb(r0, MEGPU_PKT_ARB_ACQUIRE, ARB_PA + 0x40 * 5, 0);
    kick(m, 0);
    expect_fault(m, 0, MEGPU_FAULT_ARB_HELD, ARB_PA + 0x40 * 5, at, 0);

    /* the fault dropped the four holds too: engine 1 takes one */
    emit_arb(r1, MEGPU_PKT_ARB_RELEASE, ARB_PA, 0);
    emit_arb(r1, MEGPU_PKT_ARB_ACQUIRE, ARB_PA + 0x40, 0);
    emit_arb(r1, MEGPU_PKT_ARB_RELEASE, ARB_PA + 0x40, 0);
    kick(m, 1);
    eng_idle(m, 1);
    g_assert_cmpuint(erd(m, 1, MEGPU_ENG_FAULTS), ==, 1);

    /*
     * Holds belong to a context: a job that leaves four holds behind
     * neither fills the engine's table for the next context's job nor
     * keeps another engine out.
     */
    emit_setctx(r0, PT_PA, 1);
    for (unsigned i = 1; i <= MEGPU_ARB_HELD_MAX; i++) {
        emit_arb(r0, MEGPU_PKT_ARB_ACQUIRE, ARB_PA + 0x40 * i, 0);
    }
    emit_setctx(r0, PT_PA, 2);
    emit_arb(r0, MEGPU_PKT_ARB_ACQUIRE, ARB_PA + 0x40 * 5, 0);
    emit_arb(r0, MEGPU_PKT_ARB_RELEASE, ARB_PA + 0x40 * 5, 0);
    kick(m, 0);
    eng_idle(m, 0);
    g_assert_cmpuint(erd(m, 0, MEGPU_ENG_FAULTS), ==, 2);
    emit_arb(r1, MEGPU_PKT_ARB_ACQUIRE, ARB_PA + 0x40, 0);
    emit_arb(r1, MEGPU_PKT_ARB_RELEASE, ARB_PA + 0x40, 0);
    kick(m, 1);
    eng_idle(m, 1);
    g_assert_cmpuint(erd(m, 1, MEGPU_ENG_FAULTS), ==, 1);
    multi_stop(&mu);
}

/*
 * A block mapped read-only (a buffer imported without DRM_RDWR) cannot be
 * claimed: with one agent ACQUIRE writes no lock word, and the claim alone
 * would keep the block's owner out on every other engine of the device.
 */
static void test_arb_read_only(void)
{
    const uint64_t ib_va = 0x20000000, ro_va = 0x10000000;
    const uint64_t off = ARB_PA & (MEGPU_PAGE_SIZE - 1);
    Multi mu;
    Megpu *m = &mu.m[0];
    Stream *r0 = &m->ring[0], *r1 = &m->ring[1];
    Stream ib;
    uint32_t at;

    multi_start(&mu, 1, 2, "");
    qtest_memset(mu.qts, PT_PA, 0, MEGPU_PT_SIZE);
    m->pt_next = PT_PA + MEGPU_PT_SIZE;
    mmu_map(m, ib_va, IB_PA, 0x1000, false);
    mmu_map(m, ro_va, ARB_PA - off, 0x1000, false);

    ib = ib_stream(m, IB_PA);
    emit_arb(&ib, MEGPU_PKT_ARB_ACQUIRE, ro_va + off, 0);
    emit_setctx(r0, PT_PA, 1);
    at = r0->pos;
    emit_ib(r0, ib_va, ib.pos / 4);
    kick(m, 0);
    expect_fault(m, 0, MEGPU_FAULT_MMU, ro_va + off, at,
                 MEGPU_FAULT_INFO_IN_IB | MEGPU_FAULT_INFO_WRITE);
    eng_idle(m, 0);

    /* the owner, on the other engine, takes and gives back its lock */
    emit_arb(r1, MEGPU_PKT_ARB_ACQUIRE, ARB_PA, 0);
    emit_arb(r1, MEGPU_PKT_ARB_RELEASE, ARB_PA, 0);
    kick(m, 1);
    eng_idle(m, 1);
    g_assert_cmpuint(erd(m, 1, MEGPU_ENG_FAULTS), ==, 0);
    multi_stop(&mu);
}

/* Without arbitration the same counter loses updates: the tests can fail */
static void test_counter_unprotected(void)
{
    g_assert_cmpuint(arb_counter(2, 1, 0, 20, false), <, 2 * 20);
    /* between engines of one device, too */
    g_assert_cmpuint(arb_counter(1, 2, 0, 20, false), <, 2 * 20);
}

/*
 * Semaphore-guarded arbitration: DW0 = 0, so device 0's ARB_ACQUIRE
 * (SEM) finds it empty (Failed Wait): DW0 and Last stay, its Req is
 * cleared, it stalls. Device 1's ARB_RELEASE (SEM) makes DW0 1 and
 * device 0 takes it. Then a CPU write of DW0 is found by the re-check.
 */
static void test_failed_wait(void)
{
    Multi mu;
    Megpu *a = &mu.m[0], *b = &mu.m[1];
    uint32_t dw1;

    multi_start(&mu, 2, 1, "");
    emit_arb(&a->ring[0], MEGPU_PKT_ARB_ACQUIRE, ARB_PA, MEGPU_ARB_FLAG_SEM);
    kick(a, 0);
    eng_stalled(a, 0);
    for (unsigned us = 0; !erd(a, 0, MEGPU_ENG_ARB_FAILED_WAITS);
         us += 1000) {
        g_assert_cmpuint(us, <, POLL_TIMEOUT_US);
        g_usleep(1000);
    }
    /* between retries its Req is clear (Last and DW0 untouched) */
    for (unsigned us = 0; ; us += 10) {
        dw1 = qtest_readl(mu.qts, ARB_PA + MEGPU_ARB_DW(1));
        g_assert_cmphex((dw1 >> 16) & 0xff, ==, 0);     /* Last: agent 0 */
        g_assert_cmphex(qtest_readl(mu.qts, ARB_PA + MEGPU_ARB_SEM), ==, 0);
        if (!(dw1 & 0xffff)) {
            break;
        }
        g_assert_cmpuint(us, <, POLL_TIMEOUT_US);
        g_usleep(10);
    }

    emit_arb(&b->ring[0], MEGPU_PKT_ARB_RELEASE, ARB_PA, MEGPU_ARB_FLAG_SEM);
    kick(b, 0);
    eng_idle(b, 0);
    eng_idle(a, 0);
    g_assert_cmphex(qtest_readl(mu.qts, ARB_PA + MEGPU_ARB_SEM), ==, 0);

    /* again, released by the CPU this time */
    emit_arb(&a->ring[0], MEGPU_PKT_ARB_ACQUIRE, ARB_PA, MEGPU_ARB_FLAG_SEM);
    kick(a, 0);
    eng_stalled(a, 0);
    qtest_writel(mu.qts, ARB_PA + MEGPU_ARB_SEM, 2);
    eng_idle(a, 0);
    g_assert_cmphex(qtest_readl(mu.qts, ARB_PA + MEGPU_ARB_SEM), ==, 1);
    multi_stop(&mu);
}

/*
 * Replay with a schedule block: devices 0..2 each run ACQUIRE, mark
 * "in CS", WAIT for their go semaphore, unmark, RELEASE. Returns the
 * mask of devices inside once the schedule is used up.
 */
static uint32_t replay_block(Multi *mu, uint32_t flags, const uint8_t *order,
                             unsigned len, uint64_t seed, bool to_end)
{
    uint32_t inside = 0;

    qtest_writel(mu->qts, SCHED_PA + MEGPU_MGPU_SCHED_POS, 0);
    if (order) {
        qtest_writel(mu->qts, SCHED_PA + MEGPU_MGPU_SCHED_LEN, len);
        qtest_memwrite(mu->qts, SCHED_PA + MEGPU_MGPU_SCHED_AGENT(0), order,
                       len);
    } else {
        /* seed mode: the devices draw agents 0..2 from the seed */
        qtest_writel(mu->qts, SCHED_PA + MEGPU_MGPU_SCHED_LEN,
                     len | MEGPU_MGPU_SCHED_SEEDED);
        qtest_writeq(mu->qts, SCHED_PA + MEGPU_MGPU_SCHED_SEED, seed);
        qtest_writel(mu->qts, SCHED_PA + MEGPU_MGPU_SCHED_MASK, 0x7);
    }
    for (unsigned d = 0; d < mu->ndev; d++) {
        wr(&mu->m[d], MEGPU_REG_MGPU_SCHED_LO, SCHED_PA);
        wr(&mu->m[d], MEGPU_REG_MGPU_SCHED_HI, 0);
    }
    for (unsigned d = 0; d < 3; d++) {
        Stream *r = &mu->m[d].ring[0];

        emit_arb(r, MEGPU_PKT_ARB_ACQUIRE, ARB_PA, flags);
        emit_ts(r, MARK_PA(d), 1, 0);
        emit_wait(r, GO_PA(d), 1);
        emit_ts(r, MARK_PA(d), 0, 0);
        emit_arb(r, MEGPU_PKT_ARB_RELEASE, ARB_PA, flags);
    }
    for (unsigned d = 0; d < 3; d++) {
        kick(&mu->m[d], 0);
    }
    if (!to_end) {
        return 0;       /* the caller watches */
    }
    /* the schedule is followed to its end */
    for (unsigned us = 0;
         qtest_readl(mu->qts, SCHED_PA + MEGPU_MGPU_SCHED_POS) != len;
         us += 1000) {
        g_assert_cmpuint(us, <, POLL_TIMEOUT_US);
        g_usleep(1000);
    }
    /* then free running: let whoever can still enter do it */
    g_usleep(100 * 1000);
    for (unsigned d = 0; d < 3; d++) {
        if (qtest_readq(mu->qts, MARK_PA(d))) {
            inside |= 1u << d;
        }
    }
    return inside;
}

static uint32_t replay(Multi *mu, uint32_t flags, const uint8_t *order,
                       unsigned len)
{
    return replay_block(mu, flags, order, len, 0, true);
}

/* Let everyone finish: give each go in turn; all must complete. */
static void replay_finish(Multi *mu)
{
    for (unsigned d = 0; d < 3; d++) {
        qtest_writeq(mu->qts, GO_PA(d), 1);
    }
    for (unsigned d = 0; d < 3; d++) {
        eng_idle(&mu->m[d], 0);
    }
}

/*
 * The counterexample of the seed notes (§1C.2) against the literal tree:
 * GPU0 enters; GPU1 writes Req1, Last01; GPU2 writes Req2, Last23,
 * LastPair = 23; GPU1 writes LastPair = 01; GPU2 checks and enters.
 * Devices 0 and 2 are in the critical section together.
 */
static void test_literal_counterexample(void)
{
    static const uint8_t order[] = { 0, 0, 0, 0, 1, 1, 2, 2, 2, 1, 2 };
    Multi mu;
    uint32_t inside;

    multi_start(&mu, 4, 1, "");
    inside = replay(&mu, MEGPU_ARB_FLAG_LITERAL, order, sizeof(order));
    g_assert_cmphex(inside, ==, 0x5);                 /* 0 and 2: broken */
    eng_stalled(&mu.m[1], 0);
    replay_finish(&mu);
    multi_stop(&mu);
}

/*
 * The same race against the tournament: GPU0 enters (6 steps), then GPU1
 * and GPU2 interleave as above and keep checking. Only GPU0 is inside;
 * then each go lets exactly one more in.
 */
static void test_tournament_replay(void)
{
    static const uint8_t order[] = {
        0, 0, 0, 0, 0, 0, 1, 1, 2, 2, 2, 1, 2, 2, 2, 2, 1, 2, 1, 2,
    };
    Multi mu;
    uint32_t inside;

    multi_start(&mu, 4, 1, "");
    inside = replay(&mu, 0, order, sizeof(order));
    g_assert_cmphex(inside, ==, 0x1);
    g_assert_cmpuint(erd(&mu.m[1], 0, MEGPU_ENG_ARB_SPINS), >, 0);
    g_assert_cmpuint(erd(&mu.m[2], 0, MEGPU_ENG_ARB_SPINS), >, 0);
    /* release one at a time: never two inside */
    for (unsigned round = 0; round < 3; round++) {
        uint32_t in = 0;

        for (unsigned us = 0; ; us += 1000) {
            in = 0;
            for (unsigned d = 0; d < 3; d++) {
                if (qtest_readq(mu.qts, MARK_PA(d))) {
                    in |= 1u << d;
                }
            }
            g_assert_true(!(in & (in - 1)));
            if (in) {
                break;
            }
            g_assert_cmpuint(us, <, POLL_TIMEOUT_US);
            g_usleep(1000);
        }
        g_usleep(20 * 1000);
        g_assert_cmphex(qtest_readq(mu.qts, MARK_PA(ctz32(in))), ==, 1);
        qtest_writeq(mu.qts, GO_PA(ctz32(in)), 1);
        eng_idle(&mu.m[ctz32(in)], 0);
    }
    multi_stop(&mu);
}

/*
 * Run the three devices' ACQUIRE/mark/WAIT go/RELEASE under a schedule of
 * @len steps (@order, or drawn from @seed) until the schedule stops
 * moving: it ends, or names a device waiting for its go. *@pos: where it
 * stopped; returns who is inside. Then free running, every go given.
 */
static uint32_t race_until_still(const uint8_t *order, unsigned len,
                                 uint64_t seed, uint32_t *pos)
{
    uint32_t inside = 0, last = ~0u;
    Multi mu;

    multi_start(&mu, 4, 1, "");
    replay_block(&mu, MEGPU_ARB_FLAG_LITERAL, order, len, seed, false);
    for (unsigned us = 0; ; us += 200 * 1000) {
        g_assert_cmpuint(us, <, 20 * POLL_TIMEOUT_US);
        g_usleep(200 * 1000);
        *pos = qtest_readl(mu.qts, SCHED_PA + MEGPU_MGPU_SCHED_POS);
        if (*pos == last || *pos == len) {
            break;
        }
        last = *pos;
    }
    for (unsigned d = 0; d < 3; d++) {
        if (qtest_readq(mu.qts, MARK_PA(d))) {
            inside |= 1u << d;
        }
    }
    for (unsigned d = 0; d < mu.ndev; d++) {
        wr(&mu.m[d], MEGPU_REG_MGPU_SCHED_LO, 0);
    }
    replay_finish(&mu);
    multi_stop(&mu);
    return inside;
}

/*
 * Seed mode (F17): the devices draw the order from a seed alone; the
 * literal tree's race then goes exactly as under the list of the same
 * order written out (megpu_mgpu_seed_agent): the schedule stops at the
 * same step with the same devices inside, seed after seed, and the seeds
 * do not all end alike.
 */
static void test_seed_mode(void)
{
    uint32_t outcomes = 0;

    for (uint64_t seed = 1; seed <= 6; seed++) {
        uint32_t in_list, in_seed, pos_list, pos_seed;
        uint8_t order[40];

        for (unsigned i = 0; i < sizeof(order); i++) {
            order[i] = megpu_mgpu_seed_agent(seed, 0x7, i);
        }
        in_list = race_until_still(order, sizeof(order), 0, &pos_list);
        in_seed = race_until_still(NULL, sizeof(order), seed, &pos_seed);
        g_test_message("seed %" PRIu64 ": stopped at %u with 0x%x inside "
                       "(seed mode: %u, 0x%x)", seed, pos_list, in_list,
                       pos_seed, in_seed);
        g_assert_cmpuint(pos_list, ==, pos_seed);
        g_assert_cmphex(in_list, ==, in_seed);
        outcomes |= 1u << (in_list * 8 % 31 + pos_list % 8);
    }
    g_assert_cmpuint(ctpop32(outcomes), >, 1);
}

/* Bad masks, ids, modes and addresses fault the packet, never QEMU. */
static void test_bad_input(void)
{
    Multi mu;
    Megpu *m = &mu.m[0];
    Stream *r = &m->ring[0];
    uint32_t at;

    multi_start(&mu, 2, 1, "");

    at = r->pos;        /* mask without the own agent */
    emit_msem_wait(r, SLOTS_PA, 0x2);
    kick(m, 0);
    expect_fault(m, 0, MEGPU_FAULT_MGPU_MASK, ring_pa(0, 0) + at, at, 0);

    at = r->pos;        /* mask beyond the agent count */
    emit_msem_wait(r, SLOTS_PA, 0x5);
    kick(m, 0);
    expect_fault(m, 0, MEGPU_FAULT_MGPU_MASK, ring_pa(0, 0) + at, at, 0);

    at = r->pos;        /* unaligned base */
    emit_msem_signal(r, SLOTS_PA + 2);
    kick(m, 0);
    expect_fault(m, 0, MEGPU_FAULT_BAD_ARG, ring_pa(0, 0) + at, at, 0);

    at = r->pos;        /* no RAM there */
    emit_msem_signal(r, NO_RAM_PA);
    kick(m, 0);
    expect_fault(m, 0, MEGPU_FAULT_BUS, NO_RAM_PA, at,
                 MEGPU_FAULT_INFO_WRITE);

    at = r->pos;        /* unknown ARB flag */
    emit_arb(r, MEGPU_PKT_ARB_ACQUIRE, ARB_PA, 0x80);
    kick(m, 0);
    expect_fault(m, 0, MEGPU_FAULT_MGPU_MODE, ring_pa(0, 0) + at, at, 0);

    at = r->pos;        /* the literal tree needs 4 agents */
    emit_arb(r, MEGPU_PKT_ARB_ACQUIRE, ARB_PA, MEGPU_ARB_FLAG_LITERAL);
    kick(m, 0);
    expect_fault(m, 0, MEGPU_FAULT_MGPU_MODE, ring_pa(0, 0) + at, at, 0);

    at = r->pos;        /* wrong length */
    hdr(r, MEGPU_PKT_MSEM_WAIT, 2, 0);
    put64(r, SLOTS_PA);
    kick(m, 0);
    expect_fault(m, 0, MEGPU_FAULT_BAD_LENGTH, ring_pa(0, 0) + at, at, 0);

    /* agent count the tournament cannot do */
    wr(m, MEGPU_REG_MGPU_AGENT_COUNT, 3);
    at = r->pos;
    emit_arb(r, MEGPU_PKT_ARB_ACQUIRE, ARB_PA, 0);
    kick(m, 0);
    expect_fault(m, 0, MEGPU_FAULT_MGPU_MODE, ring_pa(0, 0) + at, at, 0);

    /* agent id at or past the count */
    wr(m, MEGPU_REG_MGPU_AGENT_ID, 3);
    at = r->pos;
    emit_msem_signal(r, SLOTS_PA);
    kick(m, 0);
    expect_fault(m, 0, MEGPU_FAULT_MGPU_AGENT, ring_pa(0, 0) + at, at, 0);
    wr(m, MEGPU_REG_MGPU_AGENT_COUNT, 200);
    at = r->pos;
    emit_msem_signal(r, SLOTS_PA);
    kick(m, 0);
    expect_fault(m, 0, MEGPU_FAULT_MGPU_AGENT, ring_pa(0, 0) + at, at, 0);
    wr(m, MEGPU_REG_MGPU_AGENT_ID, 0);
    wr(m, MEGPU_REG_MGPU_AGENT_COUNT, 2);

    /* a schedule block that is not RAM */
    wr(m, MEGPU_REG_MGPU_SCHED_LO, (uint32_t)NO_RAM_PA);
    at = r->pos;
    emit_msem_signal(r, SLOTS_PA);
    kick(m, 0);
    expect_fault(m, 0, MEGPU_FAULT_MGPU_SCHED, NO_RAM_PA, at, 0);
    /* a schedule block with a silly length */
    wr(m, MEGPU_REG_MGPU_SCHED_LO, SCHED_PA);
    qtest_writel(mu.qts, SCHED_PA + MEGPU_MGPU_SCHED_LEN, 0xffffffff);
    at = r->pos;
    emit_msem_signal(r, SLOTS_PA);
    kick(m, 0);
    expect_fault(m, 0, MEGPU_FAULT_MGPU_SCHED, SCHED_PA, at, 0);
    /* seed mode with no agents, or agents past the eighth */
    qtest_writel(mu.qts, SCHED_PA + MEGPU_MGPU_SCHED_POS, 0);
    qtest_writel(mu.qts, SCHED_PA + MEGPU_MGPU_SCHED_LEN,
                 4 | MEGPU_MGPU_SCHED_SEEDED);
    qtest_writel(mu.qts, SCHED_PA + MEGPU_MGPU_SCHED_MASK, 0);
    at = r->pos;
    emit_msem_signal(r, SLOTS_PA);
    kick(m, 0);
    expect_fault(m, 0, MEGPU_FAULT_MGPU_SCHED, SCHED_PA, at, 0);
    qtest_writel(mu.qts, SCHED_PA + MEGPU_MGPU_SCHED_MASK, 0x100);
    at = r->pos;
    emit_msem_signal(r, SLOTS_PA);
    kick(m, 0);
    expect_fault(m, 0, MEGPU_FAULT_MGPU_SCHED, SCHED_PA, at, 0);
    /*
     * A block not 4-aligned (its words are compared and swapped), here
     * a valid seeded one whose drawn agent is done, so that its pos is.
     */
    qtest_writel(mu.qts, SCHED_PA + 2 + MEGPU_MGPU_SCHED_POS, 0);
    qtest_writel(mu.qts, SCHED_PA + 2 + MEGPU_MGPU_SCHED_LEN,
                 1 | MEGPU_MGPU_SCHED_SEEDED | MEGPU_MGPU_SCHED_TRACED);
    qtest_writeq(mu.qts, SCHED_PA + 2 + MEGPU_MGPU_SCHED_SEED, 1);
    qtest_writel(mu.qts, SCHED_PA + 2 + MEGPU_MGPU_SCHED_MASK, 0x2);
    qtest_writeb(mu.qts, SCHED_PA + 2 + MEGPU_MGPU_SCHED_DONE(1), 1);
    wr(m, MEGPU_REG_MGPU_SCHED_LO, SCHED_PA + 2);
    at = r->pos;
    emit_msem_signal(r, SLOTS_PA);
    kick(m, 0);
    expect_fault(m, 0, MEGPU_FAULT_MGPU_SCHED, SCHED_PA + 2, at, 0);
    wr(m, MEGPU_REG_MGPU_SCHED_LO, 0);

    /* the device still works, and nothing wrote the slots */
    g_assert_cmphex(slot(&mu, 0), ==, 0);
    g_assert_cmphex(slot(&mu, 1), ==, 0);
    emit_msem_signal(r, SLOTS_PA);
    kick(m, 0);
    eng_idle(m, 0);
    g_assert_cmphex(slot(&mu, 0), ==, 1);
    g_assert_cmphex(slot(&mu, 1), ==, 0);

    /* a stalled MSEM_WAIT is abandoned by an engine reset */
    emit_msem_wait(&mu.m[1].ring[0], SLOTS_PA, 0x2);
    kick(&mu.m[1], 0);
    eng_stalled(&mu.m[1], 0);
    eng_reset(&mu.m[1], 0);
    g_assert_cmphex(slot(&mu, 1), ==, 0);
    multi_stop(&mu);
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    qtest_add_func("/megpu/mgpu/fig5", test_fig5);
    qtest_add_func("/megpu/mgpu/own-queued-slot", test_own_queued_slot);
    qtest_add_func("/megpu/mgpu/msem-safety-progress",
                   test_msem_safety_progress);
    qtest_add_func("/megpu/mgpu/msem-whole-run-traced",
                   test_msem_whole_run_traced);
    qtest_add_func("/megpu/mgpu/signal-atomic", test_signal_atomic);
    qtest_add_func("/megpu/mgpu/signal-nonatomic", test_signal_nonatomic);
    qtest_add_func("/megpu/mgpu/arb-mutex-2", test_arb_mutex2);
    qtest_add_func("/megpu/mgpu/arb-mutex-4", test_arb_mutex4);
    qtest_add_func("/megpu/mgpu/arb-engines-2", test_arb_engines2);
    qtest_add_func("/megpu/mgpu/arb-engines-4", test_arb_engines4);
    qtest_add_func("/megpu/mgpu/arb-engines-two-gpus",
                   test_arb_engines_two_gpus);
    qtest_add_func("/megpu/mgpu/arb-sem-engines", test_arb_sem_engines);
    qtest_add_func("/megpu/mgpu/arb-held", test_arb_held);
    qtest_add_func("/megpu/mgpu/arb-read-only", test_arb_read_only);
    qtest_add_func("/megpu/mgpu/counter-unprotected",
                   test_counter_unprotected);
    qtest_add_func("/megpu/mgpu/failed-wait", test_failed_wait);
    qtest_add_func("/megpu/mgpu/literal-counterexample",
                   test_literal_counterexample);
    qtest_add_func("/megpu/mgpu/tournament-replay", test_tournament_replay);
    qtest_add_func("/megpu/mgpu/seed-mode", test_seed_mode);
    qtest_add_func("/megpu/mgpu/bad-input", test_bad_input);
    return g_test_run();
}
