/*
 * QTest for megpu's packets: every packet on every engine type (the ones
 * the type accepts work, the others fault with UNSUPPORTED and the
 * engine carries on), and the semaphore packets WAIT and SIGNAL of seed
 * 001 (US 8,803,900, "Synchronization with semaphores in a multi-engine
 * GPU"): a WAIT stalls only its engine, a SIGNAL from another engine or
 * a CPU write releases it, the compare is wrap-safe, IBs use virtual
 * addresses and a semaphore that is not RAM faults.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */

#include "megpu-qtest.h"

static uint32_t type_pkts(unsigned type)
{
    static const uint32_t pkts[] = {
        MEGPU_PKTS_GFX, MEGPU_PKTS_COMPUTE, MEGPU_PKTS_COPY, MEGPU_PKTS_VIDEO,
    };
    return pkts[type];
}

/*
 * Each packet on each engine type: the ones the type accepts work, the
 * others fault with UNSUPPORTED and the engine carries on.
 */
static void test_packets_per_type(void)
{
    Megpu m;

    megpu_start_engines(&m, 4);
    for (unsigned n = 0; n < 4; n++) {
        Stream *r = &m.ring[n];
        uint64_t data = DATA_PA + n * 0x10000;
        uint64_t va = 0x400000 + n * 0x100000;
        uint32_t pkts = type_pkts(n);

        qtest_memset(m.qts, data, 0, 0x10000);
        for (uint32_t op = 0; op <= MEGPU_PKT_WAIT; op++) {
            uint32_t at = r->pos;

            if (!(pkts & MEGPU_BIT(op))) {
                emit_any(r, op, data + 0x8000);
                emit_ts(r, data + 0x9000, op, 0);
                kick(&m, n);
                expect_fault(&m, n, MEGPU_FAULT_UNSUPPORTED, RING_PA(n) + at,
                             at, 0);
                eng_idle(&m, n);
                g_assert_cmpuint(qtest_readq(m.qts, data + 0x9000), ==, op);
                continue;
            }
            switch (op) {
            case MEGPU_PKT_NOP: {
                uint64_t before = erd64(&m, n, MEGPU_ENG_PACKETS_LO);

                emit_nop(r, 0);
                emit_nop(r, 7);
                kick(&m, n);
                eng_idle(&m, n);
                g_assert_cmpuint(erd64(&m, n, MEGPU_ENG_PACKETS_LO), ==,
                                 before + 2);
                break;
            }
            case MEGPU_PKT_IB: {
                Stream ib = ib_stream(&m, IB_PA + n * 0x1000);
                uint32_t d[2] = { 0xabc00000 + n, 0xdef00000 + n };

                mmu_map(&m, va, IB_PA + n * 0x1000, 0x1000, false);
                mmu_map(&m, va + 0x1000, data + 0x1000, 0x1000, true);
                emit_write(&ib, va + 0x1000, d, 2);
                emit_ts(&ib, va + 0x1008, 0x77, 0);
                emit_setctx(r, PT_PA, 10 + n);
                emit_ib(r, va, ib.pos / 4);
                kick(&m, n);
                eng_idle(&m, n);
                g_assert_cmphex(qtest_readl(m.qts, data + 0x1000), ==, d[0]);
                g_assert_cmphex(qtest_readl(m.qts, data + 0x1004), ==, d[1]);
                g_assert_cmphex(qtest_readq(m.qts, data + 0x1008), ==, 0x77);
                break;
            }
            case MEGPU_PKT_WRITE_DATA: {
                uint32_t d[4] = { 1, 2, 3, 0xffffffff };

                emit_write(r, data + 0x10, d, 4);
                kick(&m, n);
                eng_idle(&m, n);
                for (unsigned i = 0; i < 4; i++) {
                    g_assert_cmphex(qtest_readl(m.qts, data + 0x10 + i * 4),
                                    ==, d[i]);
                }
                break;
            }
            case MEGPU_PKT_TIMESTAMP:
                emit_ts(r, data + 0x20, 0xfedcba9876543210ull + n, 0);
                kick(&m, n);
                eng_idle(&m, n);
                g_assert_cmphex(qtest_readq(m.qts, data + 0x20), ==,
                                0xfedcba9876543210ull + n);
                eng_ack_idle(&m, n);
                g_assert_cmphex(erd(&m, n, MEGPU_ENG_IRQ_STATUS), ==, 0);
                g_assert_false(qpci_msix_pending(m.dev, MEGPU_VEC_ENGINE(n)));
                /* with IRQ: status bit, interrupt, LAST_TS */
                emit_ts(r, data + 0x28, 1000 + n, MEGPU_TIMESTAMP_FLAG_IRQ);
                kick(&m, n);
                eng_idle(&m, n);
                g_assert_cmphex(qtest_readq(m.qts, data + 0x28), ==,
                                1000 + n);
                g_assert_cmphex(erd(&m, n, MEGPU_ENG_IRQ_STATUS), ==,
                                MEGPU_ENG_IRQ_TIMESTAMP | MEGPU_ENG_IRQ_IDLE);
                g_assert_cmpuint(erd64(&m, n, MEGPU_ENG_LAST_TS_LO), ==,
                                 1000 + n);
                msix_poll_pending(&m, MEGPU_VEC_ENGINE(n));
                msix_clear_pending(&m, MEGPU_VEC_ENGINE(n));
                ewr(&m, n, MEGPU_ENG_IRQ_STATUS,
                    MEGPU_ENG_IRQ_TIMESTAMP | MEGPU_ENG_IRQ_IDLE);
                g_assert_cmphex(erd(&m, n, MEGPU_ENG_IRQ_STATUS), ==, 0);
                break;
            case MEGPU_PKT_COPY: {
                uint8_t src[5000], dst[5000];

                for (unsigned i = 0; i < sizeof(src); i++) {
                    src[i] = i * 7 + n;
                }
                qtest_memwrite(m.qts, data + 0x2001, src, sizeof(src));
                emit_copy(r, data + 0x2001, data + 0x4003, sizeof(src));
                kick(&m, n);
                eng_idle(&m, n);
                qtest_memread(m.qts, data + 0x4003, dst, sizeof(dst));
                g_assert_cmpmem(src, sizeof(src), dst, sizeof(dst));
                g_assert_cmphex(qtest_readb(m.qts, data + 0x4002), ==, 0);
                g_assert_cmphex(qtest_readb(m.qts, data + 0x4003 + 5000),
                                ==, 0);
                break;
            }
            case MEGPU_PKT_FILL:
                emit_fill(r, data + 0x6000, 0x1804, 0xa5a50000 + n);
                kick(&m, n);
                eng_idle(&m, n);
                for (unsigned i = 0; i < 0x1804; i += 4) {
                    g_assert_cmphex(qtest_readl(m.qts, data + 0x6000 + i), ==,
                                    0xa5a50000 + n);
                }
                g_assert_cmphex(qtest_readl(m.qts, data + 0x7804), ==, 0);
                break;
            case MEGPU_PKT_DISPATCH: {
                uint64_t ptr[4] = { data + 0x100, data + 0x80, 0, 0 };
                uint32_t param[3] = { 0 };

                for (unsigned i = 0; i < 16; i++) {
                    qtest_writel(m.qts, data + 0x100 + i * 4, i + 1);
                }
                qtest_writel(m.qts, data + 0x80, 1000);
                write_kargs(&m, data + 0x40, ptr, 16, param);
                emit_dispatch(r, MEGPU_KERNEL_CHECKSUM, data + 0x40,
                              16, 1, 4, 1);
                kick(&m, n);
                eng_idle(&m, n);
                g_assert_cmpuint(qtest_readl(m.qts, data + 0x80), ==,
                                 1000 + 136);
                break;
            }
            case MEGPU_PKT_SET_CONTEXT:
                emit_setctx(r, PT_PA + 0x2000 * n, 0x500 + n);
                kick(&m, n);
                eng_idle(&m, n);
                g_assert_cmphex(erd(&m, n, MEGPU_ENG_CTX_ID), ==, 0x500 + n);
                g_assert_cmphex(erd64(&m, n, MEGPU_ENG_PT_BASE_LO), ==,
                                PT_PA + 0x2000 * n);
                break;
            case MEGPU_PKT_SIGNAL:
                emit_signal(r, data + 0x30, 0x8000000000000001ull);
                kick(&m, n);
                eng_idle(&m, n);
                g_assert_cmphex(qtest_readq(m.qts, data + 0x30), ==,
                                0x8000000000000001ull);
                break;
            case MEGPU_PKT_WAIT:
                /* already reached: no stall */
                qtest_writeq(m.qts, data + 0x38, 42);
                emit_wait(r, data + 0x38, 41);
                emit_wait(r, data + 0x38, 42);
                emit_ts(r, data + 0x40, 1, 0);
                kick(&m, n);
                eng_idle(&m, n);
                g_assert_cmpuint(qtest_readq(m.qts, data + 0x40), ==, 1);
                break;
            }
        }
        g_assert_cmpuint(erd(&m, n, MEGPU_ENG_FAULTS), ==,
                         10 - __builtin_popcount(pkts & 0x3ff));
    }
    megpu_stop_engines(&m);
}

/*
 * WAIT stalls one engine while the others run; a SIGNAL from another
 * engine or a CPU write releases it. The compare is wrap-safe.
 */
static void test_semaphores(void)
{
    Megpu m;
    const uint64_t sem = SEM_PA, a = DATA_PA, b = DATA_PA + 8;

    megpu_start_engines(&m, 4);
    qtest_writeq(m.qts, sem, 1);
    qtest_writeq(m.qts, a, 0);
    qtest_writeq(m.qts, b, 0);

    emit_wait(&m.ring[0], sem, 5);
    emit_ts(&m.ring[0], a, 1, 0);
    kick(&m, 0);
    eng_poll(&m, 0, MEGPU_ENG_STATUS_WAIT_SEM);
    g_assert_cmphex(erd64(&m, 0, MEGPU_ENG_WAIT_ADDR_LO), ==, sem);
    g_assert_cmphex(erd64(&m, 0, MEGPU_ENG_WAIT_VALUE_LO), ==, 5);
    g_assert_cmphex(erd(&m, 0, MEGPU_ENG_STATUS) & MEGPU_ENG_STATUS_IDLE,
                    ==, 0);

    /* another engine runs meanwhile */
    emit_ts(&m.ring[1], b, 2, 0);
    kick(&m, 1);
    eng_idle(&m, 1);
    g_assert_cmpuint(qtest_readq(m.qts, b), ==, 2);
    g_usleep(20 * 1000);
    g_assert_cmpuint(qtest_readq(m.qts, a), ==, 0);
    g_assert_true(erd(&m, 0, MEGPU_ENG_STATUS) & MEGPU_ENG_STATUS_WAIT_SEM);

    /* a SIGNAL below the value does not release it, one at it does */
    emit_signal(&m.ring[2], sem, 4);
    kick(&m, 2);
    eng_idle(&m, 2);
    g_usleep(20 * 1000);
    g_assert_true(erd(&m, 0, MEGPU_ENG_STATUS) & MEGPU_ENG_STATUS_WAIT_SEM);
    emit_signal(&m.ring[3], sem, 5);
    kick(&m, 3);
    eng_idle(&m, 0);
    g_assert_cmpuint(qtest_readq(m.qts, a), ==, 1);
    g_assert_cmpuint(qtest_readq(m.qts, sem), ==, 5);

    /* a CPU write releases it too (the engine re-checks periodically) */
    emit_wait(&m.ring[0], sem + 8, 3);
    emit_ts(&m.ring[0], a, 2, 0);
    kick(&m, 0);
    eng_poll(&m, 0, MEGPU_ENG_STATUS_WAIT_SEM);
    qtest_writeq(m.qts, sem + 8, 3);
    eng_idle(&m, 0);
    g_assert_cmpuint(qtest_readq(m.qts, a), ==, 2);

    /* wrap-safe: 2 is "after" 0xfffffffffffffff8 */
    qtest_writeq(m.qts, sem + 16, 0xfffffffffffffff0ull);
    emit_wait(&m.ring[0], sem + 16, 0xfffffffffffffff8ull);
    emit_ts(&m.ring[0], a, 3, 0);
    kick(&m, 0);
    eng_poll(&m, 0, MEGPU_ENG_STATUS_WAIT_SEM);
    qtest_writeq(m.qts, sem + 16, 2);
    eng_idle(&m, 0);
    g_assert_cmpuint(qtest_readq(m.qts, a), ==, 3);

    /* WAIT and SIGNAL inside IBs use virtual addresses */
    {
        const uint64_t ib_va = 0x10000000, sem_va = 0x20000000;
        Stream ib0 = ib_stream(&m, IB_PA), ib1 = ib_stream(&m, IB_PA + 0x100);

        mmu_map(&m, ib_va, IB_PA, 0x1000, false);
        mmu_map(&m, sem_va, SEM_PA, 0x1000, true);
        emit_wait(&ib0, sem_va + 24, 100);
        emit_ts(&ib0, sem_va + 32, 4, 0);
        emit_signal(&ib1, sem_va + 24, 100);
        emit_setctx(&m.ring[0], PT_PA, 1);
        emit_ib(&m.ring[0], ib_va, ib0.pos / 4);
        kick(&m, 0);
        eng_poll(&m, 0, MEGPU_ENG_STATUS_WAIT_SEM);
        g_assert_cmphex(erd64(&m, 0, MEGPU_ENG_WAIT_ADDR_LO), ==,
                        sem_va + 24);
        emit_setctx(&m.ring[2], PT_PA, 1);
        emit_ib(&m.ring[2], ib_va + 0x100, ib1.pos / 4);
        kick(&m, 2);
        eng_idle(&m, 2);
        eng_idle(&m, 0);
        g_assert_cmpuint(qtest_readq(m.qts, SEM_PA + 32), ==, 4);
    }

    /* a semaphore that is not RAM faults instead of waiting forever */
    {
        uint32_t at = m.ring[1].pos;

        emit_wait(&m.ring[1], NO_RAM_PA, 1);
        kick(&m, 1);
        expect_fault(&m, 1, MEGPU_FAULT_BUS, NO_RAM_PA, at, 0);
        eng_idle(&m, 1);
    }
    megpu_stop_engines(&m);
}

/* ---- performance (only with -m perf): the engine's cost of a frame ---- */

#define PERF_FRAMES         48      /* 18 dwords each: one ring's worth */
#define PERF_ROUNDS         11

/*
 * What an empty job costs the engine alone: frames as the driver builds
 * them (SET_CONTEXT, an IB of one NOP, SIGNAL, TIMESTAMP with its
 * interrupt) queued at once, so that no doorbell or thread wake-up is
 * timed, only the packets (ENG_BUSY_NS per frame). Prints the median
 * and the fastest round per write mode; asserts only that every frame
 * ran (make bench-device).
 */
static void test_perf_frames(void)
{
    static const char *const modes[] = {
        "write-mode=strict", "write-mode=relaxed",
    };
    const uint64_t ib_va = 0x400000, sem_va = 0x500000;

    for (unsigned mo = 0; mo < ARRAY_SIZE(modes); mo++) {
        uint64_t ns[PERF_ROUNDS];
        Stream ib;
        Megpu m;

        megpu_start_engines_opts(&m, 1, modes[mo]);
        mmu_map(&m, ib_va, IB_PA, 0x1000, false);
        mmu_map(&m, sem_va, SEM_PA, 0x1000, true);
        ib = ib_stream(&m, IB_PA);
        emit_nop(&ib, 0);
        for (unsigned r = 0; r < PERF_ROUNDS; r++) {
            uint64_t t0 = eng_busy_ns(&m, 0);
            uint64_t seq = (uint64_t)(r + 1) * PERF_FRAMES;

            for (unsigned f = PERF_FRAMES; f > 0; f--) {
                emit_setctx(&m.ring[0], PT_PA, 1);
                emit_ib(&m.ring[0], ib_va, ib.pos / 4);
                emit_signal(&m.ring[0], SEM_PA + 8, seq - f + 1);
                emit_ts(&m.ring[0], SEM_PA, seq - f + 1,
                        MEGPU_TIMESTAMP_FLAG_IRQ);
            }
            kick(&m, 0);
            eng_idle(&m, 0);
            ns[r] = (eng_busy_ns(&m, 0) - t0) / PERF_FRAMES;
            perf_settle(&m);
            g_assert_cmpuint(qtest_readq(m.qts, SEM_PA), ==, seq);
        }
        qsort(ns, PERF_ROUNDS, sizeof(ns[0]), perf_cmp);
        g_printerr("# frames %-18s %5.1f us a frame (fastest %5.1f), "
                   "4 packets\n", modes[mo], ns[PERF_ROUNDS / 2] / 1e3,
                   ns[0] / 1e3);
        megpu_stop_engines(&m);
    }
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    qtest_add_func("/megpu/engine/packets-per-type", test_packets_per_type);
    qtest_add_func("/megpu/engine/semaphores", test_semaphores);
    if (g_test_perf()) {
        qtest_add_func("/megpu/engine/perf/frames", test_perf_frames);
    }
    return g_test_run();
}
