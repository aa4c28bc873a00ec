/*
 * QTest: register and packet fuzzing of the megpu device.
 *
 * Registers: random writes (and reads) of every register of BAR0, the
 * global ones, every engine block (present or not) and the holes between
 * them, ring base, size and tail included, while the engines run long
 * work: QEMU must not crash, assert or hang, and after a device reset
 * every engine runs a known-good ring job again.
 *
 * Packets: thousands of random register writes and random packets, most
 * nearly well-formed, on rings and in IBs behind a random page table,
 * in relaxed write mode: QEMU stays alive, every engine runs valid work
 * after a reset, and every flush the fuzzer started completes.
 *
 * The runs are reproducible: a fixed seed, or MEGPU_FUZZ_SEED to try
 * others (the seed is printed); MEGPU_FUZZ_STEPS sets the length of the
 * register runs.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */

#include "megpu-qtest.h"

static GRand *rng;

static uint32_t rnd(void)
{
    return g_rand_int(rng);
}

static uint32_t rnd_range(uint32_t lo, uint32_t hi)
{
    return g_rand_int_range(rng, lo, hi);
}

/* A register value: small, a bit, all ones, an address, or anything. */
static uint32_t fuzz_value(void)
{
    switch (rnd_range(0, 8)) {
    case 0:
        return rnd_range(0, 16);
    case 1:
        return 1u << rnd_range(0, 32);
    case 2:
        return ~0u - rnd_range(0, 4);
    case 3:
        return (uint32_t)RING_PA(rnd_range(0, MEGPU_MAX_ENGINES));
    case 4:
        return BIG_PA + rnd_range(0, 0x1000) * 0x1000;
    case 5:
        return MEGPU_RING_SIZE_MIN << rnd_range(0, 10);
    default:
        return rnd();
    }
}

/*
 * Long work on engine @n: many DISPATCHes of INCREMENT over a big array
 * (the engine stays busy for a while), then a WAIT on a semaphore the
 * CPU may or may not release: the fuzzer writes registers while it runs
 * and while it waits.
 */
static void busy_work(Megpu *m, unsigned n)
{
    uint64_t args = DATA_PA + 0x100000 + n * 0x100;
    uint64_t ptr[4] = { BIG_PA + n * 0x40000, 0, 0, 0 };
    uint32_t param[3] = { 0 };
    Stream *r = &m->ring[n];

    write_kargs(m, args, ptr, 0x10000, param);
    for (unsigned i = 0; i < 4; i++) {
        emit_dispatch(r, MEGPU_KERNEL_INCREMENT, args, 0x10000, 1, 256, 1);
    }
    emit_wait(r, SEM_PA + n * 8, 1 + rnd_range(0, 2));
    emit_ts(r, DATA_PA + n * 8, 0x1000 + n, MEGPU_TIMESTAMP_FLAG_IRQ);
    kick(m, n);
}

/* Every global register the hardware contract names. */
static const uint32_t globals[] = {
    MEGPU_REG_ID, MEGPU_REG_VERSION, MEGPU_REG_CAPS, MEGPU_REG_ENGINE_COUNT,
    MEGPU_REG_MSIX_VECTORS, MEGPU_REG_SCRATCH, MEGPU_REG_IRQ_TEST,
    MEGPU_REG_IRQ_TEST_STATUS, MEGPU_REG_RESET, MEGPU_REG_ENGINE_TYPES,
    MEGPU_REG_MMU_INVALIDATE, MEGPU_REG_WRITE_MODE, MEGPU_REG_FLUSH,
    MEGPU_REG_FLUSH_STATUS, MEGPU_REG_FLUSH_SEQ, MEGPU_REG_MISC_IRQ_STATUS,
    MEGPU_REG_QUEUE_MC, MEGPU_REG_WAVE_RESTART,
    MEGPU_REG_WAVE_RESTART_ERRORS, MEGPU_REG_WAVE_RESTARTS,
    MEGPU_REG_WAVE_INTERRUPTS, MEGPU_REG_SYSCALLS,
    MEGPU_REG_SYSCALL_RETRIES, MEGPU_REG_MGPU_AGENT_ID,
    MEGPU_REG_MGPU_AGENT_COUNT, MEGPU_REG_MGPU_SCHED_LO,
    MEGPU_REG_MGPU_SCHED_HI, MEGPU_REG_MGPU_STEPS,
};

/* One random register access. */
static void fuzz_step(Megpu *m)
{
    unsigned what = rnd_range(0, 100);
    unsigned n = rnd_range(0, m->engines);
    uint32_t reg, val = fuzz_value();

    if (what < 30) {
        /* a register of an engine block, present or not */
        unsigned e = rnd_range(0, 8) ? n : rnd_range(0, MEGPU_MAX_ENGINES);

        reg = rnd_range(0, MEGPU_ENGINE_STRIDE / 4) * 4;
        if (reg == MEGPU_ENG_DELAY_US) {
            val %= 500;     /* a stall, not a hang */
        }
        if (reg == MEGPU_ENG_CONTROL && rnd_range(0, 4)) {
            val &= MEGPU_ENG_CTRL_RESET | MEGPU_ENG_CTRL_FAULT_ACK;
        }
        ewr(m, e, reg, val);
    } else if (what < 45) {
        /* ring state of a running engine */
        static const uint32_t ring[] = {
            MEGPU_ENG_RING_BASE_LO, MEGPU_ENG_RING_BASE_HI,
            MEGPU_ENG_RING_SIZE, MEGPU_ENG_RING_TAIL, MEGPU_ENG_CONTROL,
            MEGPU_ENG_IRQ_STATUS,
        };

        reg = ring[rnd_range(0, G_N_ELEMENTS(ring))];
        if (reg == MEGPU_ENG_RING_TAIL && rnd_range(0, 2)) {
            val = rnd_range(0, RING_SIZE / 4) * 4;
        }
        ewr(m, n, reg, val);
    } else if (what < 60) {
        reg = globals[rnd_range(0, G_N_ELEMENTS(globals))];
        if (reg == MEGPU_REG_RESET) {
            /* a global reset now and then, garbage otherwise */
            val = rnd_range(0, 8) ? val : MEGPU_RESET_MAGIC;
        } else if (reg == MEGPU_REG_WRITE_MODE && rnd_range(0, 4)) {
            val = rnd_range(0, 2);
        } else if (reg == MEGPU_REG_MGPU_SCHED_LO && rnd_range(0, 2)) {
            val = 0;
        }
        wr(m, reg, val);
    } else if (what < 70) {
        /* anywhere in BAR0, holes included, any size */
        reg = rnd_range(0, MEGPU_MMIO_SIZE);
        switch (rnd_range(0, 4)) {
        case 0:
            qpci_io_writeb(m->dev, m->bar, reg, val);
            break;
        case 1:
            qpci_io_writew(m->dev, m->bar, reg & ~1u, val);
            break;
        case 2:
            qpci_io_writeq(m->dev, m->bar, reg & ~7u,
                           (uint64_t)rnd() << 32 | val);
            break;
        default:
            wr(m, reg & ~3u, val);
            break;
        }
    } else if (what < 85) {
        /* reads have side effects in some devices: not in this one */
        reg = rnd_range(0, MEGPU_MMIO_SIZE / 4) * 4;
        (void)rd(m, reg);
        (void)qpci_io_readb(m->dev, m->bar, rnd_range(0, MEGPU_MMIO_SIZE));
    } else if (what < 92) {
        /* the semaphore of the busy work: release it, or not */
        qtest_writeq(m->qts, SEM_PA + n * 8, rnd_range(0, 3));
    } else {
        /* more work, on whatever ring state the engine has now */
        uint64_t base = erd64(m, n, MEGPU_ENG_RING_BASE_LO);
        uint32_t size = erd(m, n, MEGPU_ENG_RING_SIZE);

        if (base == RING_PA(n) && size == RING_SIZE) {
            m->ring[n].pos = erd(m, n, MEGPU_ENG_RING_TAIL) & (RING_SIZE - 1);
            busy_work(m, n);
        }
    }
}

static uint64_t total_packets, total_faults;

/* After a device reset, every engine runs a TIMESTAMP on a fresh ring. */
static void check_recovery(Megpu *m)
{
    g_assert_cmphex(rd(m, MEGPU_REG_ID), ==, MEGPU_ID_MAGIC);
    for (unsigned n = 0; n < m->engines; n++) {
        total_packets += erd64(m, n, MEGPU_ENG_PACKETS_LO);
        total_faults += erd(m, n, MEGPU_ENG_FAULTS);
    }
    wr(m, MEGPU_REG_RESET, MEGPU_RESET_MAGIC);
    for (unsigned n = 0; n < m->engines; n++) {
        eng_reset_done(m, n);
    }
    wr(m, MEGPU_REG_WRITE_MODE, MEGPU_WRITE_MODE_STRICT);
    wr(m, MEGPU_REG_MGPU_SCHED_LO, 0);
    wr(m, MEGPU_REG_MGPU_SCHED_HI, 0);
    for (unsigned n = 0; n < m->engines; n++) {
        ewr(m, n, MEGPU_ENG_DELAY_US, 0);
        qtest_writeq(m->qts, DATA_PA + 0x80000 + n * 8, 0);
        ring_setup(m, n);
        emit_ts(&m->ring[n], DATA_PA + 0x80000 + n * 8, 0xf00d0000 + n,
                MEGPU_TIMESTAMP_FLAG_IRQ);
        kick(m, n);
    }
    for (unsigned n = 0; n < m->engines; n++) {
        eng_idle(m, n);
        mem_poll64(m, DATA_PA + 0x80000 + n * 8, 0xf00d0000 + n);
        g_assert_cmphex(erd64(m, n, MEGPU_ENG_LAST_TS_LO), ==,
                        0xf00d0000 + n);
    }
}

static void fuzz_run(unsigned engines, const char *opts, guint32 seed0)
{
    const char *env = g_getenv("MEGPU_FUZZ_SEED");
    const char *steps_env = g_getenv("MEGPU_FUZZ_STEPS");
    guint32 seed = env ? g_ascii_strtoull(env, NULL, 0) : seed0;
    unsigned steps = steps_env ? g_ascii_strtoull(steps_env, NULL, 0) : 40000;
    Megpu m;

    g_test_message("fuzz seed 0x%x (MEGPU_FUZZ_SEED=0x%x replays it), "
                   "%u steps", seed, seed, steps);
    rng = g_rand_new_with_seed(seed);
    total_packets = total_faults = 0;
    megpu_start_engines_opts(&m, engines, opts);
    /* the kernels' array, and an identity map for IBs that use one */
    for (unsigned i = 0; i < 64; i++) {
        mmu_set_pte(&m, i * 0x1000ull,
                    (BIG_PA + i * 0x1000ull) | MEGPU_PTE_VALID |
                    MEGPU_PTE_WRITE);
    }
    for (unsigned n = 0; n < engines; n++) {
        busy_work(&m, n);
    }
    for (unsigned step = 0; step < steps; step++) {
        fuzz_step(&m);
        if (step % 1000 == 0) {
            /* QEMU still answers */
            g_assert_cmphex(rd(&m, MEGPU_REG_ID), ==, MEGPU_ID_MAGIC);
        }
        if (step % 5000 == 4999) {
            /* and comes back, mid-run too */
            check_recovery(&m);
            for (unsigned n = 0; n < engines; n++) {
                busy_work(&m, n);
            }
        }
    }
    check_recovery(&m);
    g_test_message("%u steps: the engines ran %" PRIu64 " packets, "
                   "%" PRIu64 " faults", steps, total_packets, total_faults);
    megpu_stop_engines(&m);
    g_rand_free(rng);
}

/* ---- packet fuzzing ---- */

/* An address: anywhere, a low VA, where no RAM is, or RAM to spare. */
static uint64_t fuzz_addr(void)
{
    switch (rnd_range(0, 6)) {
    case 0:
        return (uint64_t)rnd() << 32 | rnd();
    case 1:
        return rnd_range(0, 0x100000) * 4ull;   /* low VA */
    case 2:
        return NO_RAM_PA + rnd_range(0, 0x1000) * 8;
    default:
        /* RAM the tests do not rely on */
        return BIG_PA + rnd_range(0, 0x200000) * 4ull;
    }
}

/* A random packet, often nearly well-formed so it gets past decoding. */
static void fuzz_packet(Stream *st)
{
    uint32_t op = rnd_range(0, 14);
    uint32_t count, flags = rnd_range(0, 256);

    if (op <= MEGPU_PKT_IDLE_SIGNAL && rnd_range(0, 4)) {
        static const uint8_t fixed[] = {
            0, MEGPU_PKT_IB_COUNT, 0, MEGPU_PKT_TIMESTAMP_COUNT,
            MEGPU_PKT_COPY_COUNT, MEGPU_PKT_FILL_COUNT,
            MEGPU_PKT_DISPATCH_COUNT, MEGPU_PKT_SET_CONTEXT_COUNT,
            MEGPU_PKT_SIGNAL_COUNT, MEGPU_PKT_WAIT_COUNT,
            MEGPU_PKT_FLUSH_COUNT, MEGPU_PKT_IDLE_SIGNAL_COUNT,
        };

        count = op == MEGPU_PKT_NOP ? rnd_range(0, 8) :
                op == MEGPU_PKT_WRITE_DATA ? rnd_range(3, 12) :
                fixed[op];
    } else {
        count = rnd_range(0, 16);
    }
    put(st, MEGPU_PKT_HEADER(op, count, flags));
    for (uint32_t i = 0; i < count; ) {
        uint64_t v;

        switch (rnd_range(0, 4)) {
        case 0:
            put(st, rnd());
            i++;
            break;
        case 1:
            put(st, rnd_range(0, 0x2000));
            i++;
            break;
        default:
            if (i + 1 < count) {
                v = fuzz_addr();
                put64(st, v);
                i += 2;
            } else {
                put(st, rnd_range(0, 64));
                i++;
            }
            break;
        }
    }
}

/*
 * Thousands of random register writes and packets must leave QEMU alive
 * and every engine, after a reset, running valid work.
 */
static void test_fuzz(void)
{
    static const uint32_t glob[] = {
        MEGPU_REG_SCRATCH, MEGPU_REG_IRQ_TEST, MEGPU_REG_IRQ_TEST_STATUS,
        MEGPU_REG_MMU_INVALIDATE, MEGPU_REG_ID, MEGPU_REG_ENGINE_TYPES,
        MEGPU_REG_WRITE_MODE, MEGPU_REG_FLUSH, MEGPU_REG_FLUSH_STATUS,
        MEGPU_REG_FLUSH_SEQ, MEGPU_REG_MISC_IRQ_STATUS, MEGPU_REG_QUEUE_MC,
    };
    const unsigned engines = 5;
    const char *env = g_getenv("MEGPU_FUZZ_SEED");
    guint32 seed = env ? g_ascii_strtoull(env, NULL, 0) : 0x6d677075;
    unsigned steps = 5000;
    Megpu m;

    g_test_message("fuzz seed 0x%x", seed);
    rng = g_rand_new_with_seed(seed);
    /* relaxed: packets' writes go through the queues */
    megpu_start_engines_opts(&m, engines, RELAXED);
    /* a random page table over RAM the fuzzer may scribble on */
    for (unsigned i = 0; i < 64; i++) {
        mmu_set_pte(&m, rnd_range(0, 0x400) * 0x1000ull,
                    (BIG_PA + rnd_range(0, 0x800) * 0x1000ull) |
                    rnd_range(0, 4));
    }
    for (unsigned step = 0; step < steps; step++) {
        unsigned n = rnd_range(0, engines);
        unsigned what = rnd_range(0, 100);

        if (what < 30) {
            /* any engine register, any value (mostly small) */
            uint32_t reg = rnd_range(0, 0x80 / 4) * 4;
            uint32_t val = rnd_range(0, 2) ?
                           rnd() :
                           rnd_range(0, 0x2000);

            if (reg == MEGPU_ENG_DELAY_US) {
                val %= 2000;
            }
            ewr(&m, rnd_range(0, MEGPU_MAX_ENGINES), reg, val);
        } else if (what < 35) {
            uint32_t reg = glob[rnd_range(0, ARRAY_SIZE(glob))];

            /* mostly valid modes, so that both are exercised */
            wr(&m, reg, reg == MEGPU_REG_WRITE_MODE && rnd_range(0, 8) ?
               rnd_range(0, 2) : rnd());
        } else if (what < 40) {
            ewr(&m, n, MEGPU_ENG_CONTROL, rnd_range(0, 4));
        } else if (what < 45) {
            /* random IB contents where the page table points */
            Stream ib = ib_stream(&m, BIG_PA +
                                  rnd_range(0, 0x800) * 0x1000ull);

            for (unsigned i = 0; i < 8; i++) {
                fuzz_packet(&ib);
            }
        } else if (what < 46 && !rnd_range(0, 10)) {
            wr(&m, MEGPU_REG_RESET, MEGPU_RESET_MAGIC);
        } else {
            /* random packets on the ring as the device sees it now */
            Stream st = {
                .qts = m.qts,
                .base = erd64(&m, n, MEGPU_ENG_RING_BASE_LO),
                .size = erd(&m, n, MEGPU_ENG_RING_SIZE),
                .pos = erd(&m, n, MEGPU_ENG_RING_TAIL),
            };

            if (!st.size || st.base + st.size > 0x10000000) {
                /* a reset the fuzzer just asked for may still be running */
                eng_reset_done(&m, n);
                ring_setup(&m, n);
                continue;
            }
            /* keep faulted engines going, so that packets keep running */
            if ((erd(&m, n, MEGPU_ENG_STATUS) & MEGPU_ENG_STATUS_FAULTED) &&
                rnd_range(0, 4)) {
                ewr(&m, n, MEGPU_ENG_CONTROL, MEGPU_ENG_CTRL_FAULT_ACK);
            }
            for (unsigned i = rnd_range(1, 4); i; i--) {
                if (rnd_range(0, 3)) {
                    fuzz_packet(&st);
                } else {
                    emit_any(&st, rnd_range(0, MEGPU_PKT_IDLE_SIGNAL + 1),
                             fuzz_addr() & ~7ull);
                }
            }
            ewr(&m, n, MEGPU_ENG_RING_TAIL, st.pos);
        }
        if (step % 500 == 0) {
            /* QEMU still answers */
            g_assert_cmphex(rd(&m, MEGPU_REG_ID), ==, MEGPU_ID_MAGIC);
        }
    }

    for (unsigned n = 0; n < engines; n++) {
        g_test_message("engine %u: %" PRIu64 " packets, %u faults, %u resets, "
                       "%u flushes, %u idle, %u stalled", n,
                       erd64(&m, n, MEGPU_ENG_PACKETS_LO),
                       erd(&m, n, MEGPU_ENG_FAULTS),
                       erd(&m, n, MEGPU_ENG_RESETS),
                       erd(&m, n, MEGPU_ENG_FLUSHES),
                       erd(&m, n, MEGPU_ENG_IDLE_SIGNALS),
                       erd(&m, n, MEGPU_ENG_STALLED_WRITES));
    }

    /* Every engine, after a reset, runs a valid TIMESTAMP. */
    g_assert_cmphex(rd(&m, MEGPU_REG_ID), ==, MEGPU_ID_MAGIC);
    for (unsigned n = 0; n < engines; n++) {
        ewr(&m, n, MEGPU_ENG_DELAY_US, 0);
        eng_reset(&m, n);
    }
    for (unsigned n = 0; n < engines; n++) {
        ring_setup(&m, n);
        emit_ts(&m.ring[n], DATA_PA + n * 8, 0xf00d0000 + n,
                MEGPU_TIMESTAMP_FLAG_IRQ);
        kick(&m, n);
    }
    for (unsigned n = 0; n < engines; n++) {
        eng_idle(&m, n);
        g_assert_cmphex(qtest_readq(m.qts, DATA_PA + n * 8), ==,
                        0xf00d0000 + n);
        g_assert_cmphex(erd64(&m, n, MEGPU_ENG_LAST_TS_LO), ==,
                        0xf00d0000 + n);
        g_assert_true(erd(&m, n, MEGPU_ENG_IRQ_STATUS) &
                      MEGPU_ENG_IRQ_TIMESTAMP);
    }
    /* every flush the fuzzer started completes; a new one too */
    wr(&m, MEGPU_REG_WRITE_MODE, MEGPU_WRITE_MODE_RELAXED);
    wr(&m, MEGPU_REG_FLUSH, 0);
    for (unsigned us = 0;
         rd(&m, MEGPU_REG_FLUSH_SEQ) != rd(&m, MEGPU_REG_FLUSH); us += 100) {
        g_assert_cmpuint(us, <, POLL_TIMEOUT_US);
        g_usleep(100);
    }
    g_test_message("%u flushes", rd(&m, MEGPU_REG_FLUSH));
    megpu_stop_engines(&m);
    g_rand_free(rng);
}

/* Run engine 0 to the end of its ring, acknowledging every fault. */
static unsigned run_acking_faults(Megpu *m)
{
    unsigned faults = 0;

    for (;;) {
        uint32_t st = eng_poll(m, 0, MEGPU_ENG_STATUS_IDLE |
                               MEGPU_ENG_STATUS_FAULTED);

        if (st & MEGPU_ENG_STATUS_FAULTED) {
            faults++;
            ewr(m, 0, MEGPU_ENG_IRQ_STATUS, MEGPU_ENG_IRQ_FAULT);
            ewr(m, 0, MEGPU_ENG_CONTROL, MEGPU_ENG_CTRL_FAULT_ACK);
            continue;
        }
        if (erd(m, 0, MEGPU_ENG_RING_HEAD) == m->ring[0].pos) {
            return faults;
        }
        g_usleep(100);
    }
}

/*
 * A packet of @op naming @addr: a DISPATCH's argument block, a DEQUEUE's
 * queue list, an MSEM slot (signalled, waited for), an arbitration block
 * (acquired, released), a task queue and notification record, a batch's
 * descriptor copies, a mailbox.
 */
static void emit_at(Stream *st, uint32_t op, uint64_t addr)
{
    switch (op) {
    case MEGPU_PKT_DISPATCH:
        emit_dispatch(st, MEGPU_KERNEL_CHECKSUM, addr, 1, 1, 1, 1);
        break;
    case MEGPU_PKT_DEQUEUE:
        hdr(st, MEGPU_PKT_DEQUEUE, MEGPU_PKT_DEQUEUE_COUNT, 0);
        put64(st, addr);
        put(st, 1);
        put(st, 0);
        put(st, MEGPU_DEQ_ONCE);
        break;
    case MEGPU_PKT_MSEM_SIGNAL:
        hdr(st, MEGPU_PKT_MSEM_SIGNAL, MEGPU_PKT_MSEM_SIGNAL_COUNT, 0);
        put64(st, addr);
        break;
    case MEGPU_PKT_ARB_ACQUIRE:
        hdr(st, MEGPU_PKT_ARB_ACQUIRE, MEGPU_PKT_ARB_COUNT, 0);
        put64(st, addr);
        hdr(st, MEGPU_PKT_ARB_RELEASE, MEGPU_PKT_ARB_COUNT, 0);
        put64(st, addr);
        break;
    case MEGPU_PKT_MSEM_WAIT:       /* a signal first: the wait passes */
        hdr(st, MEGPU_PKT_MSEM_SIGNAL, MEGPU_PKT_MSEM_SIGNAL_COUNT, 0);
        put64(st, addr);
        hdr(st, MEGPU_PKT_MSEM_WAIT, MEGPU_PKT_MSEM_WAIT_COUNT, 0);
        put64(st, addr);
        put(st, 1);
        break;
    case MEGPU_PKT_TASK_DONE:       /* @addr as the queue and the record */
        hdr(st, MEGPU_PKT_TASK_DONE, MEGPU_PKT_TASK_DONE_COUNT, 0);
        put64(st, addr);
        put64(st, addr);
        put(st, 1);
        put(st, 1);
        put(st, 0);
        break;
    case MEGPU_PKT_TASK_RUN:        /* @addr as the queue and the copies */
        hdr(st, MEGPU_PKT_TASK_RUN, MEGPU_PKT_TASK_RUN_COUNT, 0);
        put64(st, addr);
        put64(st, addr);
        put(st, 1);
        put(st, MEGPU_TQ_OWNER_DRIVER(0));
        put(st, 1);
        break;
    case MEGPU_PKT_SET_MAILBOX:
        hdr(st, MEGPU_PKT_SET_MAILBOX, MEGPU_PKT_SET_MAILBOX_COUNT, 0);
        put64(st, addr);
        put(st, 4);
        break;
    default:
        emit_any(st, op, addr);
        break;
    }
}

/*
 * Every address a packet names (WRITE_DATA, TIMESTAMP, COPY, FILL,
 * DISPATCH, SIGNAL, WAIT, DEQUEUE, MSEM_SIGNAL, MSEM_WAIT, ARB,
 * TASK_DONE, TASK_RUN, SET_MAILBOX), at every byte
 * alignment, around the edges a guest can aim at (the class of issue
 * 21's QEMU abort): a page boundary inside RAM, the end of RAM, a hole
 * where nothing decodes, the top of the 48-bit bus, on the ring (bus
 * addresses); in an IB (GPU virtual addresses) around a writable page
 * followed by a read-only one and then an unmapped one. Each packet runs
 * or faults its job; QEMU never aborts, and the engine runs the next
 * packet every time.
 */
static void test_fuzz_addresses(void)
{
    static const uint32_t ops[] = {
        MEGPU_PKT_WRITE_DATA, MEGPU_PKT_TIMESTAMP, MEGPU_PKT_COPY,
        MEGPU_PKT_FILL, MEGPU_PKT_DISPATCH, MEGPU_PKT_SIGNAL,
        MEGPU_PKT_WAIT, MEGPU_PKT_DEQUEUE, MEGPU_PKT_MSEM_SIGNAL,
        MEGPU_PKT_ARB_ACQUIRE, MEGPU_PKT_MSEM_WAIT, MEGPU_PKT_TASK_DONE,
        MEGPU_PKT_TASK_RUN, MEGPU_PKT_SET_MAILBOX,
    };
    const uint64_t bus[] = {
        BIG_PA + 0x1000, 256ull << 20, NO_RAM_PA, 1ull << 48,
    };
    const uint64_t va = 0x10000000, va_ib = 0x20000000;
    unsigned runs = 0, faults = 0;
    uint32_t mark = 0;
    Megpu m;

    megpu_start_engines_opts(&m, 1, RELAXED);
    mmu_map(&m, va, BIG_PA + 0x10000, 0x1000, true);
    mmu_map(&m, va + 0x1000, BIG_PA + 0x11000, 0x1000, false);
    mmu_map(&m, va_ib, IB_PA, 0x1000, false);
    for (unsigned o = 0; o < ARRAY_SIZE(ops); o++) {
        for (unsigned b = 0; b < ARRAY_SIZE(bus) + 2; b++) {
            for (int k = -12; k < 12; k++) {
                bool in_ib = b >= ARRAY_SIZE(bus);
                uint64_t addr = (in_ib ? va + 0x1000 * (b - 3) :
                                 bus[b]) + k;

                if (in_ib) {
                    Stream ib = ib_stream(&m, IB_PA);

                    emit_at(&ib, ops[o], addr);
                    emit_setctx(&m.ring[0], PT_PA, 1);
                    emit_ib(&m.ring[0], va_ib, ib.pos / 4);
                } else {
                    emit_at(&m.ring[0], ops[o], addr);
                }
                emit_ts(&m.ring[0], DATA_PA, ++mark, 0);
                kick(&m, 0);
                faults += run_acking_faults(&m);
                g_assert_cmphex(qtest_readq(m.qts, DATA_PA), ==, mark);
                runs++;
            }
        }
    }
    g_test_message("%u packets, %u faults", runs, faults);
    g_assert_cmpuint(faults, >, 0);
    g_assert_cmphex(rd(&m, MEGPU_REG_ID), ==, MEGPU_ID_MAGIC);
    megpu_stop_engines(&m);
}

/*
 * The MSI-X BAR (table, the hole after it, PBA) under random reads and
 * writes of every size at every offset, aligned or not, while the
 * engines run and interrupts fire: QEMU's MSI-X code asserts that an
 * access stays inside the table, so no guest access may reach it with
 * one that does not (an 8-GPU guest boot aborted there once). Messages
 * go to scratch RAM, to no RAM, or into the table itself (which QEMU's
 * re-entrancy guard refuses: the device's interrupts are sent under
 * it). Afterwards a vector programmed properly still delivers its
 * message.
 */
static void test_fuzz_msix(void)
{
    const char *env = g_getenv("MEGPU_FUZZ_SEED");
    guint32 seed = env ? g_ascii_strtoull(env, NULL, 0) : 0x6d736978;
    QPCIBar bar, pbar;
    uint64_t table, pba, entry;
    Megpu m;

    g_test_message("fuzz seed 0x%x (MEGPU_FUZZ_SEED=0x%x replays it)",
                   seed, seed);
    rng = g_rand_new_with_seed(seed);
    megpu_start_engines_opts(&m, 4, "write-mode=relaxed");
    bar = m.dev->msix_table_bar;
    pbar = m.dev->msix_pba_bar;
    table = m.dev->msix_table_off;
    pba = m.dev->msix_pba_off;
    /* one exclusive BAR: table and PBA, offsets within it */
    g_assert_cmphex(bar.addr, ==, pbar.addr);
    for (unsigned n = 0; n < m.engines; n++) {
        busy_work(&m, n);
    }
    for (unsigned step = 0; step < 20000; step++) {
        unsigned size = 1u << rnd_range(0, 4);
        uint64_t off, val = (uint64_t)rnd() << 32 | rnd();

        switch (rnd_range(0, 4)) {
        case 0:         /* the table */
            off = table + rnd_range(0, MEGPU_NUM_VECTORS *
                                    PCI_MSIX_ENTRY_SIZE + 8);
            break;
        case 1:         /* the PBA */
            off = pba + rnd_range(0, 16);
            break;
        default:        /* anywhere in the BAR (4 KiB) */
            off = rnd_range(0, 0x1000 - 8);
            break;
        }
        if (rnd_range(0, 4) == 0) {
            /* a message address: scratch RAM, no RAM, or the table */
            switch (rnd_range(0, 3)) {
            case 0:
                val = MSI_TARGET_ADDR + rnd_range(0, 64);
                break;
            case 1:
                val = 0xfffff000ull + rnd_range(0, 0x1000);
                break;
            default:
                val = bar.addr + table +
                      rnd_range(0, MEGPU_NUM_VECTORS *
                                PCI_MSIX_ENTRY_SIZE + 8);
                break;
            }
            entry = table + rnd_range(0, MEGPU_NUM_VECTORS) *
                    PCI_MSIX_ENTRY_SIZE;
            qpci_io_writel(m.dev, bar, entry + PCI_MSIX_ENTRY_LOWER_ADDR,
                           val);
            qpci_io_writel(m.dev, bar, entry + PCI_MSIX_ENTRY_UPPER_ADDR,
                           0);
            qpci_io_writel(m.dev, bar, entry + PCI_MSIX_ENTRY_VECTOR_CTRL,
                           0);
            wr(&m, MEGPU_REG_IRQ_TEST, rnd_range(0, MEGPU_NUM_VECTORS));
            continue;
        }
        if (rnd_range(0, 2)) {
            switch (size) {
            case 1:
                qpci_io_writeb(m.dev, bar, off, val);
                break;
            case 2:
                qpci_io_writew(m.dev, bar, off, val);
                break;
            case 4:
                qpci_io_writel(m.dev, bar, off, val);
                break;
            default:
                qpci_io_writeq(m.dev, bar, off, val);
                break;
            }
        } else {
            switch (size) {
            case 1:
                qpci_io_readb(m.dev, bar, off);
                break;
            case 2:
                qpci_io_readw(m.dev, bar, off);
                break;
            case 4:
                qpci_io_readl(m.dev, bar, off);
                break;
            default:
                qpci_io_readq(m.dev, bar, off);
                break;
            }
        }
        if (step % 500 == 0) {
            wr(&m, MEGPU_REG_IRQ_TEST, rnd_range(0, MEGPU_NUM_VECTORS));
        }
    }
    g_assert_cmphex(rd(&m, MEGPU_REG_ID), ==, MEGPU_ID_MAGIC);

    /* a vector programmed properly delivers its message */
    entry = table + MEGPU_VEC_MISC * PCI_MSIX_ENTRY_SIZE;
    qtest_writel(m.qts, MSI_TARGET_ADDR, 0);
    qpci_io_writel(m.dev, bar, entry + PCI_MSIX_ENTRY_LOWER_ADDR,
                   MSI_TARGET_ADDR);
    qpci_io_writel(m.dev, bar, entry + PCI_MSIX_ENTRY_UPPER_ADDR, 0);
    qpci_io_writel(m.dev, bar, entry + PCI_MSIX_ENTRY_DATA, MSI_TARGET_DATA);
    qpci_io_writel(m.dev, bar, entry + PCI_MSIX_ENTRY_VECTOR_CTRL, 0);
    qtest_writel(m.qts, MSI_TARGET_ADDR, 0);
    wr(&m, MEGPU_REG_IRQ_TEST, MEGPU_VEC_MISC);
    g_assert_cmphex(qtest_readl(m.qts, MSI_TARGET_ADDR), ==, MSI_TARGET_DATA);
    megpu_stop_engines(&m);
    g_rand_free(rng);
}

static void test_fuzz_regs(void)
{
    fuzz_run(4, "write-mode=strict", 0x72656773);
}

static void test_fuzz_regs_relaxed(void)
{
    fuzz_run(MEGPU_MAX_ENGINES, "write-mode=relaxed", 0x72656c78);
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    qtest_add_func("/megpu/fuzz/registers", test_fuzz_regs);
    qtest_add_func("/megpu/fuzz/registers-16-relaxed", test_fuzz_regs_relaxed);
    qtest_add_func("/megpu/engine/fuzz", test_fuzz);
    qtest_add_func("/megpu/fuzz/addresses", test_fuzz_addresses);
    qtest_add_func("/megpu/fuzz/msix", test_fuzz_msix);
    return g_test_run();
}
