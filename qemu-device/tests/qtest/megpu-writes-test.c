/*
 * QTest for seed 004's write model ("Apparatus, System, and Method for
 * Dependent Computations of Streaming Multiprocessors"): posted writes in
 * relaxed mode land late and out of order, strict mode has them in
 * memory when the engine is idle, the host flush and the FLUSH packet
 * make them visible, IDLE says nothing about them, same-address writes
 * keep issue order, a full queue stalls its engine, mode switches, resets
 * drop queued writes, and seeded runs replay.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */

#include "megpu-qtest.h"

/*
 * The write model is deterministic (Documentation/megpu-hw.rst): writes
 * move on with the issuing engine's packets and writes, with virtual
 * time (which qtest only moves in clock_step) and when something waits
 * for them. So what a read finds after a TIMESTAMP depends only on the
 * seed and the packets, and the counts below are the same on any host.
 * HOLD: only virtual time moves writes; the test steps it.
 */
#define TRIES               20
#define FILL_PAGES          16
#define FILL_BYTES          (FILL_PAGES * 0x1000u)

static void emit_idle_signal(Stream *st)
{
    hdr(st, MEGPU_PKT_IDLE_SIGNAL, MEGPU_PKT_IDLE_SIGNAL_COUNT, 0);
}


/* Pages of [pa, pa + FILL_BYTES) whose first and last dword hold @val. */
static uint32_t fresh_pages(Megpu *m, uint64_t pa, uint32_t val)
{
    g_autofree uint32_t *buf = g_new(uint32_t, FILL_BYTES / 4);
    uint32_t mask = 0;

    qtest_memread(m->qts, pa, buf, FILL_BYTES);
    for (unsigned p = 0; p < FILL_PAGES; p++) {
        if (le32_to_cpu(buf[p * 1024]) == val &&
            le32_to_cpu(buf[p * 1024 + 1023]) == val) {
            mask |= 1u << p;
        }
    }
    return mask;
}

/*
 * A later page landed while an earlier one had not: the fresh pages are
 * not a prefix of the fill (pages are written in order).
 */
static bool out_of_order(uint32_t fresh)
{
    return (fresh & (fresh + 1)) != 0;
}

/*
 * Relaxed mode: right after the engine's TIMESTAMP (not posted) the
 * FILL before it is often not in memory, and pages land out of order.
 * A host flush makes all of it visible.
 */
static void test_writes_stale(void)
{
    unsigned stale = 0, reordered = 0, queued = 0;
    Megpu m;

    megpu_start_engines_opts(&m, 1, RELAXED);
    g_assert_cmpuint(rd(&m, MEGPU_REG_WRITE_MODE), ==,
                     MEGPU_WRITE_MODE_RELAXED);
    for (unsigned i = 1; i <= TRIES; i++) {
        uint32_t fresh, d = 0xd0000000 + i;

        qtest_memset(m.qts, DATA_PA, 0, FILL_BYTES);
        qtest_writel(m.qts, DATA_PA + FILL_BYTES, 0);
        emit_fill(&m.ring[0], DATA_PA, FILL_BYTES, 0xf0000000 + i);
        emit_write(&m.ring[0], DATA_PA + FILL_BYTES, &d, 1);
        emit_ts(&m.ring[0], SEM_PA, i, 0);
        kick(&m, 0);
        mem_poll64(&m, SEM_PA, i);
        fresh = fresh_pages(&m, DATA_PA, 0xf0000000 + i);
        queued += erd(&m, 0, MEGPU_ENG_QUEUE) + rd(&m, MEGPU_REG_QUEUE_MC) > 0;
        stale += fresh != (1u << FILL_PAGES) - 1;
        reordered += out_of_order(fresh);
        host_flush(&m);
        g_assert_cmphex(fresh_pages(&m, DATA_PA, 0xf0000000 + i), ==,
                        (1u << FILL_PAGES) - 1);
        g_assert_cmphex(qtest_readl(m.qts, DATA_PA + FILL_BYTES), ==, d);
        g_assert_cmpuint(erd(&m, 0, MEGPU_ENG_QUEUE), ==, 0);
        g_assert_cmpuint(rd(&m, MEGPU_REG_QUEUE_MC), ==, 0);
        eng_idle(&m, 0);
    }
    g_test_message("%u/%u stale, %u reordered, %u with writes queued",
                   stale, TRIES, reordered, queued);
    g_assert_cmpuint(stale, >, 0);
    g_assert_cmpuint(reordered, >, 0);
    g_assert_cmpuint(queued, >, 0);
    megpu_stop_engines(&m);
}

/* Strict mode: the data is there when the TIMESTAMP is, every time. */
static void test_writes_strict(void)
{
    Megpu m;

    megpu_start_engines_opts(&m, 1, "write-mode=strict,write-seed=0x4004");
    g_assert_cmpuint(rd(&m, MEGPU_REG_WRITE_MODE), ==,
                     MEGPU_WRITE_MODE_STRICT);
    for (unsigned i = 1; i <= TRIES; i++) {
        qtest_memset(m.qts, DATA_PA, 0, FILL_BYTES);
        emit_fill(&m.ring[0], DATA_PA, FILL_BYTES, 0xf0000000 + i);
        emit_ts(&m.ring[0], SEM_PA, i, 0);
        kick(&m, 0);
        mem_poll64(&m, SEM_PA, i);
        g_assert_cmphex(fresh_pages(&m, DATA_PA, 0xf0000000 + i), ==,
                        (1u << FILL_PAGES) - 1);
        g_assert_cmpuint(erd(&m, 0, MEGPU_ENG_QUEUE), ==, 0);
        g_assert_cmpuint(rd(&m, MEGPU_REG_QUEUE_MC), ==, 0);
    }
    /* a flush still works, with nothing to wait for */
    host_flush(&m);
    megpu_stop_engines(&m);
}

/* The host flush registers, status, sequence and interrupt. */
static void test_host_flush(void)
{
    unsigned busy = 0;
    Megpu m;

    /* held writes: a flush stays BUSY until the test steps the clock */
    megpu_start_engines_opts(&m, 3, HOLD);
    g_assert_cmpuint(rd(&m, MEGPU_REG_FLUSH), ==, 0);
    g_assert_cmpuint(rd(&m, MEGPU_REG_FLUSH_SEQ), ==, 0);
    g_assert_cmpuint(rd(&m, MEGPU_REG_FLUSH_STATUS), ==, 0);
    g_assert_cmpuint(rd(&m, MEGPU_REG_MISC_IRQ_STATUS), ==, 0);
    g_assert_false(qpci_msix_pending(m.dev, MEGPU_VEC_MISC));

    /* Empty queues: it completes at once, with interrupt. */
    wr(&m, MEGPU_REG_FLUSH, 0);
    g_assert_cmpuint(rd(&m, MEGPU_REG_FLUSH), ==, 1);
    g_assert_cmpuint(rd(&m, MEGPU_REG_FLUSH_SEQ), ==, 1);
    g_assert_cmphex(rd(&m, MEGPU_REG_FLUSH_STATUS), ==,
                    MEGPU_FLUSH_STATUS_DONE);
    g_assert_cmphex(rd(&m, MEGPU_REG_MISC_IRQ_STATUS), ==,
                    MEGPU_MISC_IRQ_FLUSH_DONE);
    msix_poll_pending(&m, MEGPU_VEC_MISC);
    msix_clear_pending(&m, MEGPU_VEC_MISC);
    /* RW1C; read-only registers ignore writes */
    wr(&m, MEGPU_REG_FLUSH_STATUS, MEGPU_FLUSH_STATUS_DONE);
    wr(&m, MEGPU_REG_MISC_IRQ_STATUS, MEGPU_MISC_IRQ_FLUSH_DONE);
    wr(&m, MEGPU_REG_FLUSH_SEQ, 77);
    wr(&m, MEGPU_REG_QUEUE_MC, 77);
    g_assert_cmphex(rd(&m, MEGPU_REG_FLUSH_STATUS), ==, 0);
    g_assert_cmphex(rd(&m, MEGPU_REG_MISC_IRQ_STATUS), ==, 0);
    g_assert_cmpuint(rd(&m, MEGPU_REG_FLUSH_SEQ), ==, 1);
    g_assert_cmpuint(rd(&m, MEGPU_REG_QUEUE_MC), ==, 0);

    /* IRQ_TEST on the misc vector is separate from FLUSH_DONE. */
    wr(&m, MEGPU_REG_IRQ_TEST, MEGPU_VEC_MISC);
    g_assert_true(qpci_msix_pending(m.dev, MEGPU_VEC_MISC));
    g_assert_cmphex(rd(&m, MEGPU_REG_IRQ_TEST_STATUS), ==,
                    1u << MEGPU_VEC_MISC);
    g_assert_cmphex(rd(&m, MEGPU_REG_MISC_IRQ_STATUS), ==, 0);
    msix_clear_pending(&m, MEGPU_VEC_MISC);
    wr(&m, MEGPU_REG_IRQ_TEST_STATUS, 1u << MEGPU_VEC_MISC);

    /*
     * Writes of two engines (gfx and copy) in flight: BUSY, then
     * everything visible.
     */
    for (unsigned i = 1; i <= 5; i++) {
        bool busy_seen;

        for (unsigned n = 0; n < 2; n++) {
            emit_fill(&m.ring[n * 2], DATA_PA + n * FILL_BYTES, FILL_BYTES,
                      0xa0000000 + i * 16 + n);
            emit_ts(&m.ring[n * 2], SEM_PA + n * 8, i, 0);
            kick(&m, n * 2);
        }
        mem_poll64(&m, SEM_PA, i);
        mem_poll64(&m, SEM_PA + 8, i);
        wr(&m, MEGPU_REG_FLUSH, 0);
        busy_seen = rd(&m, MEGPU_REG_FLUSH_STATUS) & MEGPU_FLUSH_STATUS_BUSY;
        /* nothing moved: the host's speed does not matter */
        g_assert_cmpuint(rd(&m, MEGPU_REG_FLUSH_SEQ), ==, i);
        g_assert_cmpuint(erd(&m, 0, MEGPU_ENG_QUEUE), ==, FILL_PAGES);
        clock_until_flushed(&m, 1 + i);
        busy += busy_seen;
        /* one completion per flush */
        g_assert_cmpuint(rd(&m, MEGPU_REG_FLUSH_SEQ), ==, 1 + i);
        g_assert_cmpuint(rd(&m, MEGPU_REG_FLUSH), ==, 1 + i);
        g_assert_cmphex(rd(&m, MEGPU_REG_FLUSH_STATUS), ==,
                        MEGPU_FLUSH_STATUS_DONE);
        for (unsigned n = 0; n < 2; n++) {
            g_assert_cmphex(fresh_pages(&m, DATA_PA + n * FILL_BYTES,
                                        0xa0000000 + i * 16 + n),
                            ==, (1u << FILL_PAGES) - 1);
            g_assert_cmpuint(erd(&m, n * 2, MEGPU_ENG_QUEUE), ==, 0);
        }
        g_assert_cmpuint(rd(&m, MEGPU_REG_QUEUE_MC), ==, 0);
        msix_poll_pending(&m, MEGPU_VEC_MISC);
        msix_clear_pending(&m, MEGPU_VEC_MISC);
        wr(&m, MEGPU_REG_FLUSH_STATUS, MEGPU_FLUSH_STATUS_DONE);
        wr(&m, MEGPU_REG_MISC_IRQ_STATUS, MEGPU_MISC_IRQ_FLUSH_DONE);
    }

    g_test_message("BUSY seen in %u of 5 flushes", busy);
    g_assert_cmpuint(busy, ==, 5);

    /* Several flushes back to back all complete, in order. */
    emit_fill(&m.ring[0], DATA_PA, FILL_BYTES, 1);
    kick(&m, 0);
    for (unsigned i = 0; i < 4; i++) {
        wr(&m, MEGPU_REG_FLUSH, 0);
    }
    g_assert_cmpuint(rd(&m, MEGPU_REG_FLUSH), ==, 10);
    clock_until_flushed(&m, 10);
    g_assert_cmphex(rd(&m, MEGPU_REG_FLUSH_STATUS), ==,
                    MEGPU_FLUSH_STATUS_DONE);
    megpu_stop_engines(&m);
}

/* FILL, FLUSH, TIMESTAMP: after the timestamp the data is there, always. */
static void test_flush_packet(void)
{
    Megpu m;

    megpu_start_engines_opts(&m, 4, RELAXED);
    for (unsigned i = 1; i <= TRIES; i++) {
        unsigned n = i % 4;
        uint64_t data = DATA_PA + n * FILL_BYTES;

        qtest_memset(m.qts, data, 0, FILL_BYTES);
        if (n == 1 || n == 3) {
            /* compute and video have no FILL: a kernel writes instead */
            uint64_t ptr[4] = { data, 0, 0, 0 };
            uint32_t param[3] = { 0xf0000000 + i, 0, 0 };
            uint64_t args = DATA_PA + 0xff000 + n * 0x100;

            if (n == 3) {
                /* video: SEPIA of a white image is not white: skip */
                continue;
            }
            write_kargs(&m, args, ptr, FILL_BYTES / 4, param);
            emit_dispatch(&m.ring[n], MEGPU_KERNEL_FILL, args,
                          FILL_BYTES / 4, 1, 256, 1);
        } else {
            emit_fill(&m.ring[n], data, FILL_BYTES, 0xf0000000 + i);
        }
        emit_flush(&m.ring[n]);
        emit_ts(&m.ring[n], SEM_PA + n * 8, i, 0);
        kick(&m, n);
        mem_poll64(&m, SEM_PA + n * 8, i);
        g_assert_cmphex(fresh_pages(&m, data, 0xf0000000 + i), ==,
                        (1u << FILL_PAGES) - 1);
        g_assert_cmpuint(erd(&m, n, MEGPU_ENG_QUEUE), ==, 0);
        eng_idle(&m, n);
    }
    for (unsigned n = 0; n < 3; n++) {
        g_assert_cmpuint(erd(&m, n, MEGPU_ENG_FLUSHES), ==, TRIES / 4);
    }

    /* Payload counts other than 0 fault BAD_LENGTH, on every type. */
    for (unsigned n = 0; n < 4; n++) {
        uint32_t at = m.ring[n].pos;

        hdr(&m.ring[n], MEGPU_PKT_FLUSH, 1, 0);
        put(&m.ring[n], 0);
        kick(&m, n);
        expect_fault(&m, n, MEGPU_FAULT_BAD_LENGTH, RING_PA(n) + at, at, 0);
        eng_idle(&m, n);
        at = m.ring[n].pos;
        hdr(&m.ring[n], MEGPU_PKT_IDLE_SIGNAL, 2, 0);
        put64(&m.ring[n], 0);
        kick(&m, n);
        expect_fault(&m, n, MEGPU_FAULT_BAD_LENGTH, RING_PA(n) + at, at, 0);
        eng_idle(&m, n);
        /* and both run on every engine type */
        emit_flush(&m.ring[n]);
        emit_idle_signal(&m.ring[n]);
        kick(&m, n);
        eng_idle(&m, n);
        g_assert_cmpuint(erd(&m, n, MEGPU_ENG_FAULTS), ==, 2);
    }
    megpu_stop_engines(&m);
}

/* IDLE: from the packet, and when the engine runs out of work. */
static void test_idle(void)
{
    unsigned stale = 0;
    uint32_t signals;
    Megpu m;

    megpu_start_engines_opts(&m, 2, RELAXED);
    qtest_writeq(m.qts, SEM_PA, 0);

    /* IDLE_SIGNAL raises IDLE at that point of the job (here: waiting) */
    emit_idle_signal(&m.ring[1]);
    emit_wait(&m.ring[1], SEM_PA, 1);
    kick(&m, 1);
    eng_poll(&m, 1, MEGPU_ENG_STATUS_WAIT_SEM);
    g_assert_cmphex(erd(&m, 1, MEGPU_ENG_IRQ_STATUS), ==, MEGPU_ENG_IRQ_IDLE);
    g_assert_cmpuint(erd(&m, 1, MEGPU_ENG_IDLE_SIGNALS), ==, 1);
    msix_poll_pending(&m, MEGPU_VEC_ENGINE(1));
    msix_clear_pending(&m, MEGPU_VEC_ENGINE(1));
    ewr(&m, 1, MEGPU_ENG_IRQ_STATUS, MEGPU_ENG_IRQ_IDLE);
    qtest_writeq(m.qts, SEM_PA, 1);
    eng_idle(&m, 1);
    /* and running out of work raised it again */
    eng_ack_idle(&m, 1);
    g_assert_cmpuint(erd(&m, 1, MEGPU_ENG_IDLE_SIGNALS), ==, 2);

    /* Idle is not visibility: the data can still be stale. */
    signals = erd(&m, 0, MEGPU_ENG_IDLE_SIGNALS);
    for (unsigned i = 1; i <= TRIES; i++) {
        qtest_memset(m.qts, DATA_PA, 0, FILL_BYTES);
        emit_fill(&m.ring[0], DATA_PA, FILL_BYTES, 0xe0000000 + i);
        kick(&m, 0);
        for (unsigned us = 0; !(erd(&m, 0, MEGPU_ENG_IRQ_STATUS) &
                                MEGPU_ENG_IRQ_IDLE); us += 100) {
            g_assert_cmpuint(us, <, POLL_TIMEOUT_US);
            g_usleep(100);
        }
        stale += fresh_pages(&m, DATA_PA, 0xe0000000 + i) !=
                 (1u << FILL_PAGES) - 1;
        eng_ack_idle(&m, 0);
        host_flush(&m);
        g_assert_cmphex(fresh_pages(&m, DATA_PA, 0xe0000000 + i), ==,
                        (1u << FILL_PAGES) - 1);
    }
    g_test_message("%u/%u stale after IDLE", stale, TRIES);
    g_assert_cmpuint(stale, >, 0);
    g_assert_cmpuint(erd(&m, 0, MEGPU_ENG_IDLE_SIGNALS), ==, signals + TRIES);
    megpu_stop_engines(&m);
}

/*
 * An engine reads its own queued writes; writes to the same bytes land
 * in issue order.
 */
static void test_writes_order(void)
{
    const uint64_t x = DATA_PA, y = DATA_PA + 0x2000, w = DATA_PA + 0x4000;
    unsigned stale = 0;
    Megpu m;

    megpu_start_engines_opts(&m, 1, RELAXED);
    for (unsigned i = 1; i <= TRIES; i++) {
        uint32_t v = 0xc0000000 + i;

        qtest_writel(m.qts, x, 0);
        qtest_writel(m.qts, y, 0);
        emit_write(&m.ring[0], x, &v, 1);
        emit_copy(&m.ring[0], x, y, 4);
        emit_ts(&m.ring[0], SEM_PA, i, 0);
        kick(&m, 0);
        mem_poll64(&m, SEM_PA, i);
        stale += qtest_readl(m.qts, x) != v;
        host_flush(&m);
        /* the COPY read the queued value, not memory's 0 */
        g_assert_cmphex(qtest_readl(m.qts, y), ==, v);
        g_assert_cmphex(qtest_readl(m.qts, x), ==, v);
    }
    g_test_message("%u/%u stale before the COPY's result", stale, TRIES);
    g_assert_cmpuint(stale, >, 0);

    /* INCREMENT twice: the second dispatch reads the first's results */
    {
        uint64_t ptr[4] = { w, 0, 0, 0 };
        uint32_t param[3] = { 0 };
        uint64_t args = DATA_PA + 0xff000;

        qtest_memset(m.qts, w, 0, 0x3000);
        write_kargs(&m, args, ptr, 0x3000 / 4, param);
        for (unsigned k = 0; k < 3; k++) {
            emit_dispatch(&m.ring[0], MEGPU_KERNEL_INCREMENT, args,
                          0x3000 / 4, 1, 64, 1);
        }
        kick(&m, 0);
        eng_idle(&m, 0);
        host_flush(&m);
        for (unsigned i = 0; i < 0x3000 / 4; i += 97) {
            g_assert_cmpuint(qtest_readl(m.qts, w + i * 4), ==, 3);
        }
    }

    /* Many writes to one dword (and some around it): the last one wins */
    for (unsigned round = 0; round < 5; round++) {
        for (uint32_t v = 1; v <= 150; v++) {
            uint32_t d[2] = { v + round * 1000, v };

            /* alternate a 1-dword and a 2-dword write over the same bytes */
            emit_write(&m.ring[0], w + (v & 1) * 4, d, 2 - (v & 1));
            if (v % 50 == 0) {
                kick(&m, 0);
            }
        }
        kick(&m, 0);
        eng_idle(&m, 0);
        host_flush(&m);
        /* v = 150 (even) wrote both dwords last */
        g_assert_cmpuint(qtest_readl(m.qts, w), ==, 150 + round * 1000);
        g_assert_cmpuint(qtest_readl(m.qts, w + 4), ==, 150);
    }
    megpu_stop_engines(&m);
}

/* The write model's filter bucket of a page (megpu_wq_grain_bit()). */
static unsigned filter_bucket(uint64_t pa)
{
    return ((pa >> 12) * 0x9e3779b97f4a7c15ull) >> (64 - 14);
}

/*
 * An engine reads its own pending writes by the bytes they cover, not
 * by page (a bucket's span, megpu_wq_span()). Writes held: two
 * WRITE_DATAs to one page at 0 and 0x800 (two entries) and COPYs of
 * both; then one to another page of the same filter bucket at 0x100
 * (the bucket holds two pages) and COPYs of it and of a word of the
 * first page that no pending write covers (RAM's). After a flush the
 * copies hold what was written, and RAM's word: a span that covered
 * only the later write of the page read memory's 0 for the first.
 */
static void test_own_reads_spans(void)
{
    const uint64_t p = DATA_PA, q = DATA_PA + 0x2000;
    const uint32_t a = 0x11111111, b = 0x22222222, c = 0x33333333;
    uint64_t p2 = q + 0x1000;
    Megpu m;

    /* a page some 16k pages on, in the guest's 256 MiB */
    while (filter_bucket(p2) != filter_bucket(p)) {
        p2 += 0x1000;
    }
    g_assert_cmphex(p2, <, 0x10000000);
    megpu_start_engines_opts(&m, 1, HOLD);
    qtest_memset(m.qts, p, 0, 0x1000);
    qtest_memset(m.qts, p2, 0, 0x1000);
    qtest_memset(m.qts, q, 0, 16);
    qtest_writel(m.qts, p + 0x100, 0x44444444);
    emit_write(&m.ring[0], p, &a, 1);
    emit_write(&m.ring[0], p + 0x800, &b, 1);
    emit_copy(&m.ring[0], p, q, 4);
    emit_copy(&m.ring[0], p + 0x800, q + 4, 4);
    emit_write(&m.ring[0], p2 + 0x100, &c, 1);
    emit_copy(&m.ring[0], p2 + 0x100, q + 8, 4);
    emit_copy(&m.ring[0], p + 0x100, q + 12, 4);
    kick(&m, 0);
    eng_idle(&m, 0);
    /* held: nothing has landed, the copies too are queued */
    g_assert_cmphex(qtest_readl(m.qts, p), ==, 0);
    hold_flush(&m);
    g_assert_cmphex(qtest_readl(m.qts, q), ==, a);
    g_assert_cmphex(qtest_readl(m.qts, q + 4), ==, b);
    g_assert_cmphex(qtest_readl(m.qts, q + 8), ==, c);
    g_assert_cmphex(qtest_readl(m.qts, q + 12), ==, 0x44444444);
    megpu_stop_engines(&m);
}

/*
 * Writes of two engines to the same bytes land in issue order too: each
 * engine keeps its queues under its own lock, and a landing that may
 * have another engine's older write under it pushes that one out first.
 * Engine 0's write is queued (its engine idles, so its clock stands),
 * then engine 1 writes the same dword and FLUSHes, which lands its
 * write: engine 0's older one must land before it, not after.
 */
static void test_writes_order_engines(void)
{
    const uint64_t x = DATA_PA + 0x6000;
    unsigned pending = 0;
    Megpu m;

    megpu_start_engines_opts(&m, 2, RELAXED);
    for (unsigned i = 1; i <= TRIES; i++) {
        uint32_t a = 0xa0000000 + i, b = 0xb0000000 + i;

        qtest_writel(m.qts, x, 0);
        emit_write(&m.ring[0], x, &a, 1);
        emit_ts(&m.ring[0], SEM_PA, i, 0);
        kick(&m, 0);
        mem_poll64(&m, SEM_PA, i);
        pending += qtest_readl(m.qts, x) == 0;

        emit_write(&m.ring[1], x, &b, 1);
        emit_flush(&m.ring[1]);
        emit_ts(&m.ring[1], SEM_PA + 8, i, 0);
        kick(&m, 1);
        mem_poll64(&m, SEM_PA + 8, i);
        g_assert_cmphex(qtest_readl(m.qts, x), ==, b);
        host_flush(&m);
        g_assert_cmphex(qtest_readl(m.qts, x), ==, b);
    }
    g_test_message("%u/%u rounds with engine 0's write still queued",
                   pending, TRIES);
    g_assert_cmpuint(pending, >, TRIES / 2);
    megpu_stop_engines(&m);
}

/*
 * A full engine queue stalls the engine; memory use stays bounded. With
 * x-hold-writes nothing drains until virtual time moves, so the queue
 * fills whatever the host's load; each clock step lets the engine go on.
 */
static void test_writes_stall(void)
{
    const uint32_t bytes = 2 * 1024 * 1024;
    g_autofree uint32_t *buf = g_new(uint32_t, bytes / 4);
    unsigned steps = 0;
    Megpu m;

    megpu_start_engines_opts(&m, 1, HOLD);
    qtest_memset(m.qts, BIG_PA, 0, bytes);
    emit_fill(&m.ring[0], BIG_PA, bytes, 0x57a11ed);
    emit_ts(&m.ring[0], SEM_PA, 1, 0);
    kick(&m, 0);
    for (unsigned us = 0; erd(&m, 0, MEGPU_ENG_STALLED_WRITES) == 0;
         us += 200) {
        g_assert_cmpuint(us, <, POLL_TIMEOUT_US);
        g_usleep(200);
    }
    g_assert_cmpuint(erd(&m, 0, MEGPU_ENG_QUEUE), ==,
                     MEGPU_WRITE_QUEUE_DEPTH);
    g_assert_cmpuint(rd(&m, MEGPU_REG_QUEUE_MC), ==, 0);
    g_assert_cmpuint(qtest_readq(m.qts, SEM_PA), ==, 0);
    /* a host flush does not move held writes */
    wr(&m, MEGPU_REG_FLUSH, 1);
    g_assert_cmphex(rd(&m, MEGPU_REG_FLUSH_STATUS), ==,
                    MEGPU_FLUSH_STATUS_BUSY);
    g_assert_cmpuint(erd(&m, 0, MEGPU_ENG_QUEUE), ==,
                     MEGPU_WRITE_QUEUE_DEPTH);
    while (qtest_readq(m.qts, SEM_PA) != 1) {
        g_assert_cmpuint(steps, <, 100000);
        qtest_clock_step(m.qts, 10 * TICK_NS);
        g_assert_cmpuint(erd(&m, 0, MEGPU_ENG_QUEUE), <=,
                         MEGPU_WRITE_QUEUE_DEPTH);
        steps++;
    }
    g_test_message("%u clock steps, stalled %u", steps,
                   erd(&m, 0, MEGPU_ENG_STALLED_WRITES));
    g_assert_cmpuint(steps, >=, 1);
    clock_until_flushed(&m, 1);
    hold_flush(&m);
    qtest_memread(m.qts, BIG_PA, buf, bytes);
    for (unsigned i = 0; i < bytes / 4; i++) {
        g_assert_cmphex(le32_to_cpu(buf[i]), ==, 0x57a11ed);
    }
    megpu_stop_engines(&m);
}

/* Switching to strict drains at once; back to relaxed posts again. */
static void test_write_mode_switch(void)
{
    unsigned stale = 0;
    Megpu m;

    megpu_start_engines_opts(&m, 1, RELAXED);
    for (unsigned i = 1; i <= 5; i++) {
        qtest_memset(m.qts, DATA_PA, 0, FILL_BYTES);
        wr(&m, MEGPU_REG_WRITE_MODE, MEGPU_WRITE_MODE_RELAXED);
        emit_fill(&m.ring[0], DATA_PA, FILL_BYTES, 0xb0000000 + i);
        emit_ts(&m.ring[0], SEM_PA, i, 0);
        kick(&m, 0);
        mem_poll64(&m, SEM_PA, i);
        stale += fresh_pages(&m, DATA_PA, 0xb0000000 + i) !=
                 (1u << FILL_PAGES) - 1;
        wr(&m, MEGPU_REG_WRITE_MODE, MEGPU_WRITE_MODE_STRICT);
        g_assert_cmpuint(rd(&m, MEGPU_REG_WRITE_MODE), ==,
                         MEGPU_WRITE_MODE_STRICT);
        g_assert_cmphex(fresh_pages(&m, DATA_PA, 0xb0000000 + i), ==,
                        (1u << FILL_PAGES) - 1);
        g_assert_cmpuint(erd(&m, 0, MEGPU_ENG_QUEUE), ==, 0);
        g_assert_cmpuint(rd(&m, MEGPU_REG_QUEUE_MC), ==, 0);
    }
    g_assert_cmpuint(stale, >, 0);
    /* unknown modes are ignored */
    wr(&m, MEGPU_REG_WRITE_MODE, 7);
    g_assert_cmpuint(rd(&m, MEGPU_REG_WRITE_MODE), ==,
                     MEGPU_WRITE_MODE_STRICT);
    /* a device reset restores the property's mode */
    wr(&m, MEGPU_REG_RESET, MEGPU_RESET_MAGIC);
    g_assert_cmpuint(rd(&m, MEGPU_REG_WRITE_MODE), ==,
                     MEGPU_WRITE_MODE_RELAXED);
    megpu_stop_engines(&m);
}

/* Engine and device reset drop queued writes, even of a stalled engine. */
static void test_writes_reset(void)
{
    const uint32_t bytes = 8 * 1024 * 1024;
    g_autofree uint32_t *buf = g_new(uint32_t, bytes / 4);
    unsigned zero = 0;
    int64_t t0;
    Megpu m;

    /* held writes: the queues fill and stay full until the resets */
    megpu_start_engines_opts(&m, 3, HOLD);
    qtest_memset(m.qts, BIG_PA, 0, bytes);
    emit_fill(&m.ring[0], BIG_PA, bytes, 0xdeadf111);
    kick(&m, 0);
    for (unsigned us = 0; !erd(&m, 0, MEGPU_ENG_STALLED_WRITES); us += 100) {
        g_assert_cmpuint(us, <, POLL_TIMEOUT_US);
        g_usleep(100);
    }
    t0 = g_get_monotonic_time();
    eng_reset(&m, 0);
    g_assert_cmpint(g_get_monotonic_time() - t0, <, 2 * 1000 * 1000);
    g_assert_cmpuint(erd(&m, 0, MEGPU_ENG_QUEUE), ==, 0);
    /* a flush does not wait for dropped writes */
    host_flush(&m);
    qtest_memread(m.qts, BIG_PA, buf, bytes);
    for (unsigned i = 0; i < bytes / 4; i++) {
        zero += !buf[i];
    }
    g_test_message("%u of %u dwords never written", zero, bytes / 4);
    g_assert_cmpuint(zero, >, 0);
    /* the engine works on */
    emit_ts(&m.ring[0], SEM_PA, 5, 0);
    kick(&m, 0);
    eng_idle(&m, 0);
    g_assert_cmpuint(qtest_readq(m.qts, SEM_PA), ==, 5);

    /* Device reset with two stalled engines (gfx, copy), a flush going */
    emit_fill(&m.ring[0], BIG_PA, bytes, 1);
    kick(&m, 0);
    emit_fill(&m.ring[2], BIG_PA, bytes, 2);
    kick(&m, 2);
    for (unsigned us = 0; !erd(&m, 2, MEGPU_ENG_STALLED_WRITES); us += 100) {
        g_assert_cmpuint(us, <, POLL_TIMEOUT_US);
        g_usleep(100);
    }
    wr(&m, MEGPU_REG_FLUSH, 0);
    wr(&m, MEGPU_REG_WRITE_MODE, MEGPU_WRITE_MODE_RELAXED);
    t0 = g_get_monotonic_time();
    wr(&m, MEGPU_REG_RESET, MEGPU_RESET_MAGIC);
    g_assert_cmpint(g_get_monotonic_time() - t0, <, 2 * 1000 * 1000);
    g_assert_cmpuint(rd(&m, MEGPU_REG_FLUSH), ==, 0);
    g_assert_cmpuint(rd(&m, MEGPU_REG_FLUSH_SEQ), ==, 0);
    g_assert_cmpuint(rd(&m, MEGPU_REG_FLUSH_STATUS), ==, 0);
    g_assert_cmpuint(rd(&m, MEGPU_REG_MISC_IRQ_STATUS), ==, 0);
    g_assert_cmpuint(rd(&m, MEGPU_REG_QUEUE_MC), ==, 0);
    for (unsigned n = 0; n < 3; n++) {
        g_assert_cmpuint(erd(&m, n, MEGPU_ENG_QUEUE), ==, 0);
        g_assert_cmpuint(erd(&m, n, MEGPU_ENG_STALLED_WRITES), ==, 0);
        g_assert_cmpuint(erd(&m, n, MEGPU_ENG_IDLE_SIGNALS), ==, 0);
        g_assert_cmphex(erd(&m, n, MEGPU_ENG_STATUS), ==,
                        MEGPU_ENG_STATUS_IDLE);
    }
    host_flush(&m);
    /* and quitting with writes queued does not hang either */
    ring_setup(&m, 0);
    emit_fill(&m.ring[0], BIG_PA, bytes, 3);
    kick(&m, 0);
    megpu_stop_engines(&m);
}

#define REPLAY_WRITES       48
#define REPLAY_TRIES        8

/*
 * One run of the replay test with @seed: the tick at which each of
 * REPLAY_WRITES single-dword writes landed (writes held, virtual time
 * stepped one tick at a time), and then, with the engine's own packets
 * moving writes, which pages of a FILL were in memory at its TIMESTAMP.
 */
static void replay_run(uint32_t seed, uint32_t *tick, uint32_t *fresh)
{
    g_autofree char *hold = g_strdup_printf(
        "write-mode=relaxed,write-seed=0x%x,x-hold-writes=on", seed);
    g_autofree char *relaxed = g_strdup_printf(
        "write-mode=relaxed,write-seed=0x%x", seed);
    uint32_t landed = 0;
    Megpu m;

    megpu_start_engines_opts(&m, 1, hold);
    qtest_memset(m.qts, DATA_PA, 0, REPLAY_WRITES * 4);
    for (unsigned i = 0; i < REPLAY_WRITES; i++) {
        uint32_t v = 0x4e000000 + i;

        emit_write(&m.ring[0], DATA_PA + i * 4, &v, 1);
    }
    emit_ts(&m.ring[0], SEM_PA, 1, 0);
    kick(&m, 0);
    mem_poll64(&m, SEM_PA, 1);
    g_assert_cmpuint(erd(&m, 0, MEGPU_ENG_QUEUE), ==, REPLAY_WRITES);
    for (uint32_t t = 1; landed < REPLAY_WRITES; t++) {
        g_assert_cmpuint(t, <, 1000);
        qtest_clock_step(m.qts, TICK_NS);
        for (unsigned i = 0; i < REPLAY_WRITES; i++) {
            if (!tick[i] && qtest_readl(m.qts, DATA_PA + i * 4)) {
                g_assert_cmphex(qtest_readl(m.qts, DATA_PA + i * 4), ==,
                                0x4e000000 + i);
                tick[i] = t;
                landed++;
            }
        }
    }
    megpu_stop_engines(&m);

    megpu_start_engines_opts(&m, 1, relaxed);
    for (unsigned i = 1; i <= REPLAY_TRIES; i++) {
        qtest_memset(m.qts, DATA_PA, 0, FILL_BYTES);
        emit_fill(&m.ring[0], DATA_PA, FILL_BYTES, 0x4f000000 + i);
        emit_ts(&m.ring[0], SEM_PA, i, 0);
        kick(&m, 0);
        mem_poll64(&m, SEM_PA, i);
        fresh[i - 1] = fresh_pages(&m, DATA_PA, 0x4f000000 + i);
        host_flush(&m);
        eng_idle(&m, 0);
    }
    megpu_stop_engines(&m);
}

#include "megpu-writes-reference.h"

/*
 * Seeded runs replay (issue 15): the same seed and packets give the same
 * landing order, on any host; another seed gives another order.
 */
static void test_writes_replay(void)
{
    uint32_t tick[3][REPLAY_WRITES] = { 0 }, fresh[3][REPLAY_TRIES];
    const uint32_t seeds[3] = { 0x4004, 0x4004, 0x5005 };
    bool ordered = true;

    for (unsigned r = 0; r < 3; r++) {
        replay_run(seeds[r], tick[r], fresh[r]);
    }
    /* the writes did not land in issue order */
    for (unsigned i = 1; i < REPLAY_WRITES; i++) {
        ordered &= tick[0][i - 1] <= tick[0][i];
    }
    g_assert_false(ordered);
    g_assert_cmpmem(tick[0], sizeof(tick[0]), tick[1], sizeof(tick[1]));
    g_assert_cmpmem(fresh[0], sizeof(fresh[0]), fresh[1], sizeof(fresh[1]));
    g_assert_true(memcmp(tick[0], tick[2], sizeof(tick[0])));
    g_assert_true(memcmp(fresh[0], fresh[2], sizeof(fresh[0])));
    /*
     * And the same as the reference in the tree: a change to the write
     * model's landing order is a visible change of that file. To write
     * it again: MEGPU_WRITES_REFERENCE=path megpu-writes-test -p ...
     */
    if (getenv("MEGPU_WRITES_REFERENCE")) {
        FILE *f = fopen(getenv("MEGPU_WRITES_REFERENCE"), "w");
        static const char *const head[] = {
            "/" "*",
            " * The write model's landing order for write-seed 0x4004",
            " * (megpu-writes-test.c, test_writes_replay): the tick each",
            " * write landed at, then the fresh pages of each FILL at its",
            " * TIMESTAMP. Generated; review changes.",
            " *",
            " * SPDX-" "License-Identifier: GPL-2.0-or-later",
            " *" "/",
        };

        g_assert_nonnull(f);
        for (unsigned i = 0; i < ARRAY_SIZE(head); i++) {
            fprintf(f, "%s\n", head[i]);
        }
        fprintf(f,
                "static const uint32_t reference_tick[REPLAY_WRITES] = {");
        for (unsigned i = 0; i < REPLAY_WRITES; i++) {
            fprintf(f, "%s%u,", i % 12 ? " " : "\n    ", tick[0][i]);
        }
        fprintf(f, "\n};\nstatic const uint32_t reference_fresh[REPLAY_TRIES]"
                " = {\n   ");
        for (unsigned i = 0; i < REPLAY_TRIES; i++) {
            fprintf(f, " 0x%04x,", fresh[0][i]);
        }
        fprintf(f, "\n};\n");
        fclose(f);
    }
    g_assert_cmpmem(tick[0], sizeof(tick[0]), reference_tick,
                    sizeof(reference_tick));
    g_assert_cmpmem(fresh[0], sizeof(fresh[0]), reference_fresh,
                    sizeof(reference_fresh));
    for (unsigned i = 0; i < REPLAY_TRIES; i++) {
        g_test_message("try %u: fresh pages 0x%04x (seed 0x5005: 0x%04x)",
                       i + 1, fresh[0][i], fresh[2][i]);
    }
}

/* ---- performance (only with -m perf): one engine against two ---- */

#define PERF_JOBS           16
#define PERF_N              262144u
#define PERF_ROUNDS         9
#define PERF_ARR_PA(e, i)   (0x08000000ull + (e) * 0x01000000ull + \
                             (i) * 0x00400000ull)
#define PERF_ARGS_PA(e)     (0x0a000000ull + (e) * 0x1000ull)

/*
 * Engines 0 .. @engines - 1 each run PERF_JOBS VADDs at once: the
 * makespan, the longest engine's busy time (ns). The device times
 * itself, so the test polls rarely: each register read is a round trip
 * through QEMU's main loop, which at 5000 a second took a fifth of a
 * host core from the engines.
 */
static uint64_t perf_engines_run(Megpu *m, unsigned engines)
{
    uint64_t busy[2], longest = 0;

    for (unsigned e = 0; e < engines; e++) {
        for (unsigned j = 0; j < PERF_JOBS; j++) {
            emit_dispatch(&m->ring[e], MEGPU_KERNEL_VADD, PERF_ARGS_PA(e),
                          PERF_N, 1, 64, 1);
        }
        busy[e] = eng_busy_ns(m, e);
    }
    for (unsigned e = 0; e < engines; e++) {
        kick(m, e);
    }
    for (unsigned e = 0; e < engines; e++) {
        while (!(erd(m, e, MEGPU_ENG_STATUS) &
                 (MEGPU_ENG_STATUS_IDLE | MEGPU_ENG_STATUS_FAULTED))) {
            g_usleep(2000);
        }
        g_assert_cmphex(erd(m, e, MEGPU_ENG_STATUS) &
                        MEGPU_ENG_STATUS_FAULTED, ==, 0);
        longest = MAX(longest, eng_busy_ns(m, e) - busy[e]);
    }
    perf_settle(m);
    return longest;
}

/*
 * The host's own ceiling for the same work: a host thread doing what an
 * engine's VADDs do (PERF_JOBS passes over its own three arrays, in the
 * built-in kernel's 1024-element chunks: two reads into buffers, the
 * add, a write), one thread alone and two at once. On this project's
 * 2-core host two threads streaming memory ran anywhere from 1.0 to
 * 2.0 times one's work from minute to minute while pure arithmetic
 * stayed near 1.9: two engines cannot gain more than the host gives.
 */
#define HOST_CHUNK          1024u

typedef struct HostVadd {
    uint32_t *a, *b, *c;
} HostVadd;

static gpointer host_vadd(gpointer opaque)
{
    HostVadd *h = opaque;
    uint32_t x[HOST_CHUNK], y[HOST_CHUNK];

    for (unsigned j = 0; j < PERF_JOBS; j++) {
        for (uint32_t i = 0; i < PERF_N; i += HOST_CHUNK) {
            memcpy(x, h->a + i, sizeof(x));
            memcpy(y, h->b + i, sizeof(y));
            for (unsigned k = 0; k < HOST_CHUNK; k++) {
                x[k] += y[k];
            }
            memcpy(h->c + i, x, sizeof(x));
            /* the compiler may not fold the passes into one */
            asm volatile("" : : "r"(h->c) : "memory");
        }
    }
    return NULL;
}

/* Host threads 0 .. @threads - 1 at once: the makespan (ns). */
static uint64_t perf_host_run(HostVadd *h, unsigned threads)
{
    GThread *t[2];
    int64_t start = g_get_monotonic_time();

    for (unsigned n = 0; n < threads; n++) {
        t[n] = g_thread_new("host-vadd", host_vadd, &h[n]);
    }
    for (unsigned n = 0; n < threads; n++) {
        g_thread_join(t[n]);
    }
    return (g_get_monotonic_time() - start) * 1000;
}

static void perf_print(const char *what, uint64_t *one, uint64_t *two,
                       unsigned rounds)
{
    qsort(one, rounds, sizeof(one[0]), perf_cmp);
    qsort(two, rounds, sizeof(two[0]), perf_cmp);
    g_printerr("# engines %-18s one %6.0f us  two %6.0f us  "
               "gain %4.2fx (fastest %4.2fx)\n", what,
               one[rounds / 2] / 1e3, two[rounds / 2] / 1e3,
               2.0 * one[rounds / 2] / two[rounds / 2],
               2.0 * one[0] / two[0]);
}

/*
 * The write model's scaling: the same stream of built-in VADDs (each
 * engine its own arrays) on one engine and on two at once, strict and
 * relaxed, rounds alternating, and between them the host's ceiling
 * (host threads doing the same, while the engines are idle). Prints
 * medians and the gain of two (2 x one's time / two's time; 2.0 = they
 * never wait for each other); asserts nothing about time (make
 * bench-device).
 */
static void test_perf_engines(void)
{
    static const char *const modes[] = {
        "write-mode=strict", "write-mode=relaxed",
    };
    uint64_t host_one[2 * PERF_ROUNDS], host_two[2 * PERF_ROUNDS];
    unsigned host_rounds = 0;
    HostVadd h[2];

    for (unsigned n = 0; n < 2; n++) {
        h[n].a = g_new(uint32_t, PERF_N);
        h[n].b = g_new(uint32_t, PERF_N);
        h[n].c = g_new0(uint32_t, PERF_N);
        for (uint32_t i = 0; i < PERF_N; i++) {
            h[n].a[i] = i;
            h[n].b[i] = n;
        }
    }
    for (unsigned mo = 0; mo < ARRAY_SIZE(modes); mo++) {
        uint64_t one[PERF_ROUNDS], two[PERF_ROUNDS];
        const uint32_t param[3] = { 0 };
        Megpu m;

        megpu_start_engines_opts(&m, 2, modes[mo]);
        for (unsigned e = 0; e < 2; e++) {
            const uint64_t ptr[4] = {
                PERF_ARR_PA(e, 0), PERF_ARR_PA(e, 1), PERF_ARR_PA(e, 2), 0,
            };

            write_kargs(&m, PERF_ARGS_PA(e), ptr, PERF_N, param);
        }
        for (unsigned r = 0; r < PERF_ROUNDS; r++) {
            one[r] = perf_engines_run(&m, 1);
            two[r] = perf_engines_run(&m, 2);
            host_one[host_rounds] = perf_host_run(h, 1);
            host_two[host_rounds++] = perf_host_run(h, 2);
        }
        perf_print(modes[mo], one, two, PERF_ROUNDS);
        megpu_stop_engines(&m);
    }
    perf_print("host threads", host_one, host_two, host_rounds);
    g_assert_cmpuint(h[1].c[PERF_N - 1], ==, PERF_N);   /* it ran */
    for (unsigned n = 0; n < 2; n++) {
        g_free(h[n].a);
        g_free(h[n].b);
        g_free(h[n].c);
    }
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    qtest_add_func("/megpu/writes/stale", test_writes_stale);
    qtest_add_func("/megpu/writes/strict", test_writes_strict);
    qtest_add_func("/megpu/writes/host-flush", test_host_flush);
    qtest_add_func("/megpu/writes/flush-packet", test_flush_packet);
    qtest_add_func("/megpu/writes/idle", test_idle);
    qtest_add_func("/megpu/writes/order", test_writes_order);
    qtest_add_func("/megpu/writes/order-engines", test_writes_order_engines);
    qtest_add_func("/megpu/writes/own-reads-spans", test_own_reads_spans);
    qtest_add_func("/megpu/writes/stall", test_writes_stall);
    qtest_add_func("/megpu/writes/mode-switch", test_write_mode_switch);
    qtest_add_func("/megpu/writes/reset", test_writes_reset);
    qtest_add_func("/megpu/writes/replay", test_writes_replay);
    if (g_test_perf()) {
        qtest_add_func("/megpu/writes/perf/engines", test_perf_engines);
    }
    return g_test_run();
}
