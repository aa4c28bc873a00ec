/*
 * QTest for the megpu device itself: PCI identity, the global registers,
 * MSI-X, device and system reset, the engine register blocks, rings
 * (doorbell, wrap-around), the DELAY_US test knob, engine reset, and
 * teardown of busy engines. The packets, the GPU MMU, the kernels and the
 * write model have qtests of their own (megpu-*-test.c). Engines run in
 * their own threads, so the tests poll with a bounded wait instead of
 * stepping a clock; rings, IBs, page tables and data live at fixed
 * guest-physical addresses (megpu-qtest.h).
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */

#include "megpu-qtest.h"
#include "qobject/qdict.h"

static void test_identity(void)
{
    Megpu m;

    megpu_start(&m, 6);
    g_assert_cmphex(qpci_config_readw(m.dev, PCI_VENDOR_ID), ==,
                    MEGPU_PCI_VENDOR_ID);
    g_assert_cmphex(qpci_config_readw(m.dev, PCI_DEVICE_ID), ==,
                    MEGPU_PCI_DEVICE_ID);
    g_assert_cmphex(qpci_config_readw(m.dev, PCI_CLASS_DEVICE), ==,
                    MEGPU_PCI_CLASS);
    g_assert_cmphex(rd(&m, MEGPU_REG_ID), ==, MEGPU_ID_MAGIC);
    g_assert_cmphex(rd(&m, MEGPU_REG_VERSION), ==,
                    MEGPU_HW_VERSION(MEGPU_HW_VERSION_MAJOR,
                                     MEGPU_HW_VERSION_MINOR));
    g_assert_cmphex(rd(&m, MEGPU_REG_CAPS) & MEGPU_CAP_IRQ_TEST, !=, 0);
    g_assert_cmpuint(rd(&m, MEGPU_REG_ENGINE_COUNT), ==, 6);
    g_assert_cmpuint(rd(&m, MEGPU_REG_MSIX_VECTORS), ==, MEGPU_NUM_VECTORS);
    for (unsigned n = 0; n < 6; n++) {
        g_assert_cmpuint(MEGPU_ENGINE_TYPE(rd(&m, MEGPU_REG_ENGINE_TYPES), n),
                         ==, n % MEGPU_ENGINE_NUM_TYPES);
    }
    /* Read-only registers ignore writes; unknown registers read 0. */
    wr(&m, MEGPU_REG_ID, 0);
    wr(&m, MEGPU_REG_ENGINE_COUNT, 1);
    g_assert_cmphex(rd(&m, MEGPU_REG_ID), ==, MEGPU_ID_MAGIC);
    g_assert_cmpuint(rd(&m, MEGPU_REG_ENGINE_COUNT), ==, 6);
    wr(&m, 0xfffc, 0x1234);
    g_assert_cmphex(rd(&m, 0xfffc), ==, 0);
    megpu_stop(&m);
}

static void test_bad_engine_count(void)
{
    if (g_test_subprocess()) {
        qtest_quit(qtest_init("-machine q35 -nodefaults "
                              "-device megpu,engines=17"));
        return;
    }
    /* realize refuses the value and QEMU exits with a clear error */
    g_test_trap_subprocess(NULL, 0, 0);
    g_test_trap_assert_failed();
    g_test_trap_assert_stderr("*engines must be 1..16*");
}

/*
 * Behind a vIOMMU an engine thread's translation would run IOMMU code that
 * needs the BQL (a fault's interrupt: TCG asserts it is held): realize
 * refuses. An early device started, and aborted QEMU at the first fault.
 */
static void test_behind_viommu(gconstpointer data)
{
    bool after = GPOINTER_TO_UINT(data);

    if (!qtest_has_device("intel-iommu")) {
        g_test_skip("no intel-iommu in this QEMU (megpu's build has none)");
        return;
    }
    if (g_test_subprocess()) {
        /* a vIOMMU listed after the device: caught at machine done */
        qtest_quit(qtest_initf("-machine q35 -nodefaults %s", after ?
                               "-device megpu -device intel-iommu" :
                               "-device intel-iommu -device megpu"));
        return;
    }
    g_test_trap_subprocess(NULL, 0, 0);
    g_test_trap_assert_failed();
    g_test_trap_assert_stderr("*not supported behind a vIOMMU*");
}

/*
 * x-caps (test only) hides features from the capability register, as an
 * older device lacks them; without FLUSH the device posts no writes, and
 * the relaxed write mode is refused. Features it does not have are
 * refused at realize.
 */
static void test_hidden_features(void)
{
    uint32_t caps = MEGPU_CAP_IRQ_TEST | MEGPU_CAP_ENGINES | MEGPU_CAP_MMU |
                    MEGPU_CAP_SEMAPHORE;
    Megpu m;

    megpu_start_opts(&m, 2, "x-caps=0xf");
    g_assert_cmphex(rd(&m, MEGPU_REG_CAPS), ==, caps);
    g_assert_cmpuint(rd(&m, MEGPU_REG_WRITE_MODE), ==,
                     MEGPU_WRITE_MODE_STRICT);
    wr(&m, MEGPU_REG_WRITE_MODE, MEGPU_WRITE_MODE_RELAXED);
    g_assert_cmpuint(rd(&m, MEGPU_REG_WRITE_MODE), ==,
                     MEGPU_WRITE_MODE_STRICT);
    /* and a reset does not bring posted writes back */
    wr(&m, MEGPU_REG_RESET, MEGPU_RESET_MAGIC);
    g_assert_cmpuint(rd(&m, MEGPU_REG_WRITE_MODE), ==,
                     MEGPU_WRITE_MODE_STRICT);
    megpu_stop(&m);

    /* by default every feature, and relaxed writes as asked */
    megpu_start_opts(&m, 2, "write-mode=relaxed");
    g_assert_cmphex(rd(&m, MEGPU_REG_CAPS) & MEGPU_CAP_FLUSH, !=, 0);
    g_assert_cmpuint(rd(&m, MEGPU_REG_WRITE_MODE), ==,
                     MEGPU_WRITE_MODE_RELAXED);
    megpu_stop(&m);
}

/* Properties realize refuses, each with a clear error and QEMU exiting. */
static const struct {
    const char *props, *error;
} bad_props[] = {
    { "x-caps=0x100", "*x-caps 0x100 has features beyond*" },
    { "write-mode=sloppy", "*write-mode must be relaxed or strict*" },
    { "mgpu-agent=2,mgpu-agents=2", "*mgpu-agent must be below mgpu-agents*" },
    { "mgpu-agents=0", "*mgpu-agent must be below mgpu-agents*" },
};

static void test_bad_props(void)
{
    for (unsigned i = 0; i < ARRAY_SIZE(bad_props); i++) {
        g_autofree char *path =
            g_strdup_printf("/%s/megpu/bad-props/subprocess/%u",
                            qtest_get_arch(), i);

        g_test_trap_subprocess(path, 0, 0);
        g_test_trap_assert_failed();
        g_test_trap_assert_stderr(bad_props[i].error);
    }
}

static void test_bad_props_one(gconstpointer data)
{
    unsigned i = GPOINTER_TO_UINT(data);

    qtest_quit(qtest_initf("-machine q35 -nodefaults -device megpu,%s",
                           bad_props[i].props));
}

/*
 * A function level reset, as the guest's PCI core does it: BCR_FLR in the
 * PCI Express device control register. It clears the command register
 * and the BARs, so BAR0 is mapped again after it.
 */
static void flr(Megpu *m)
{
    uint8_t exp = qpci_find_capability(m->dev, PCI_CAP_ID_EXP, 0);
    uint16_t devctl;

    g_assert_cmpuint(exp, !=, 0);
    g_assert_true(qpci_config_readl(m->dev, exp + PCI_EXP_DEVCAP) &
                  PCI_EXP_DEVCAP_FLR);
    devctl = qpci_config_readw(m->dev, exp + PCI_EXP_DEVCTL);
    qpci_config_writew(m->dev, exp + PCI_EXP_DEVCTL,
                       devctl | PCI_EXP_DEVCTL_BCR_FLR);
    /* the bit starts the reset; it reads back as 0 */
    g_assert_false(qpci_config_readw(m->dev, exp + PCI_EXP_DEVCTL) &
                   PCI_EXP_DEVCTL_BCR_FLR);
    g_assert_false(qpci_config_readw(m->dev, PCI_COMMAND) &
                   PCI_COMMAND_MEMORY);
    qpci_device_enable(m->dev);
    m->bar = qpci_iomap(m->dev, MEGPU_BAR_MMIO, NULL);
}

/* A system reset; it clears the BARs too, so BAR0 is mapped again. */
static void system_reset(Megpu *m)
{
    qtest_system_reset(m->qts);
    qpci_device_enable(m->dev);
    m->bar = qpci_iomap(m->dev, MEGPU_BAR_MMIO, NULL);
}

/*
 * @reset while engine 0 waits on a semaphore: afterwards the engine is
 * idle with no ring and no counts, and a new ring runs (a TIMESTAMP
 * writes @value).
 */
static void reset_while_waiting(Megpu *m, void (*reset)(Megpu *m),
                                uint64_t value)
{
    emit_wait(&m->ring[0], SEM_PA, 100);
    kick(m, 0);
    eng_poll(m, 0, MEGPU_ENG_STATUS_WAIT_SEM);
    reset(m);
    g_assert_cmphex(rd(m, MEGPU_REG_ID), ==, MEGPU_ID_MAGIC);
    g_assert_cmphex(erd(m, 0, MEGPU_ENG_STATUS), ==, MEGPU_ENG_STATUS_IDLE);
    g_assert_cmphex(erd(m, 0, MEGPU_ENG_RING_SIZE), ==, 0);
    g_assert_cmpuint(erd64(m, 0, MEGPU_ENG_PACKETS_LO), ==, 0);
    ring_setup(m, 0);
    emit_ts(&m->ring[0], DATA_PA + 8 * value, value, 0);
    kick(m, 0);
    eng_idle(m, 0);
    g_assert_cmpuint(qtest_readq(m->qts, DATA_PA + 8 * value), ==, value);
}

static void test_scratch_and_reset(void)
{
    Megpu m;
    uint8_t msix;

    megpu_start(&m, 4);
    g_assert_cmphex(rd(&m, MEGPU_REG_SCRATCH), ==, 0);
    wr(&m, MEGPU_REG_SCRATCH, 0xdeadbeef);
    g_assert_cmphex(rd(&m, MEGPU_REG_SCRATCH), ==, 0xdeadbeef);

    /* A wrong magic does nothing; the right one resets the registers. */
    wr(&m, MEGPU_REG_RESET, 1);
    g_assert_cmphex(rd(&m, MEGPU_REG_SCRATCH), ==, 0xdeadbeef);
    wr(&m, MEGPU_REG_RESET, MEGPU_RESET_MAGIC);
    g_assert_cmphex(rd(&m, MEGPU_REG_SCRATCH), ==, 0);
    g_assert_cmphex(rd(&m, MEGPU_REG_ID), ==, MEGPU_ID_MAGIC);

    /* A system reset does too. */
    wr(&m, MEGPU_REG_SCRATCH, 0x12345678);
    system_reset(&m);
    g_assert_cmphex(rd(&m, MEGPU_REG_ID), ==, MEGPU_ID_MAGIC);
    g_assert_cmphex(rd(&m, MEGPU_REG_SCRATCH), ==, 0);

    /* And a function level reset, which switches MSI-X off too. */
    msix = qpci_find_capability(m.dev, PCI_CAP_ID_MSIX, 0);
    qpci_config_writew(m.dev, msix + PCI_MSIX_FLAGS,
                       qpci_config_readw(m.dev, msix + PCI_MSIX_FLAGS) |
                       PCI_MSIX_FLAGS_ENABLE);
    wr(&m, MEGPU_REG_SCRATCH, 0x9abcdef0);
    flr(&m);
    g_assert_cmphex(rd(&m, MEGPU_REG_ID), ==, MEGPU_ID_MAGIC);
    g_assert_cmphex(rd(&m, MEGPU_REG_SCRATCH), ==, 0);
    g_assert_false(qpci_config_readw(m.dev, msix + PCI_MSIX_FLAGS) &
                   PCI_MSIX_FLAGS_ENABLE);
    megpu_stop(&m);
}

static void test_msix(void)
{
    Megpu m;
    uint64_t table;

    megpu_start(&m, 4);
    g_assert_cmpuint(qpci_msix_table_size(m.dev), ==, MEGPU_NUM_VECTORS);
    qpci_msix_enable(m.dev);

    /* Masked vectors: each test interrupt sets exactly its pending bit. */
    for (unsigned v = 0; v < MEGPU_NUM_VECTORS; v++) {
        g_assert_true(qpci_msix_masked(m.dev, v));
        g_assert_false(qpci_msix_pending(m.dev, v));
        wr(&m, MEGPU_REG_IRQ_TEST, v);
        g_assert_true(qpci_msix_pending(m.dev, v));
        g_assert_cmphex(rd(&m, MEGPU_REG_IRQ_TEST_STATUS), ==, 1u << v);
        wr(&m, MEGPU_REG_IRQ_TEST_STATUS, 1u << v);
        g_assert_cmphex(rd(&m, MEGPU_REG_IRQ_TEST_STATUS), ==, 0);
    }
    /* Out of range: ignored, no status bit. */
    wr(&m, MEGPU_REG_IRQ_TEST, MEGPU_NUM_VECTORS);
    wr(&m, MEGPU_REG_IRQ_TEST, 0xffffffff);
    g_assert_cmphex(rd(&m, MEGPU_REG_IRQ_TEST_STATUS), ==, 0);

    /* Unmasked vector: the message is written to its address. */
    table = m.dev->msix_table_off + MEGPU_VEC_MISC * PCI_MSIX_ENTRY_SIZE;
    qpci_io_writel(m.dev, m.dev->msix_table_bar,
                   table + PCI_MSIX_ENTRY_LOWER_ADDR, MSI_TARGET_ADDR);
    qpci_io_writel(m.dev, m.dev->msix_table_bar,
                   table + PCI_MSIX_ENTRY_UPPER_ADDR, 0);
    qpci_io_writel(m.dev, m.dev->msix_table_bar,
                   table + PCI_MSIX_ENTRY_DATA, MSI_TARGET_DATA);
    /* unmasking delivers the message left pending above */
    qpci_io_writel(m.dev, m.dev->msix_table_bar,
                   table + PCI_MSIX_ENTRY_VECTOR_CTRL, 0);
    g_assert_cmphex(qtest_readl(m.qts, MSI_TARGET_ADDR), ==, MSI_TARGET_DATA);
    qtest_writel(m.qts, MSI_TARGET_ADDR, 0);
    g_assert_false(qpci_msix_pending(m.dev, MEGPU_VEC_MISC));
    wr(&m, MEGPU_REG_IRQ_TEST, MEGPU_VEC_MISC);
    g_assert_cmphex(qtest_readl(m.qts, MSI_TARGET_ADDR), ==, MSI_TARGET_DATA);
    g_assert_false(qpci_msix_pending(m.dev, MEGPU_VEC_MISC));

    qpci_msix_disable(m.dev);
    megpu_stop(&m);
}

static void test_engine_regs(void)
{
    Megpu m;

    megpu_start(&m, 6);
    g_assert_cmphex(rd(&m, MEGPU_REG_CAPS), ==,
                    MEGPU_CAP_IRQ_TEST | MEGPU_CAP_ENGINES | MEGPU_CAP_MMU |
                    MEGPU_CAP_SEMAPHORE | MEGPU_CAP_FLUSH | MEGPU_CAP_WAVES |
                    MEGPU_CAP_MGPU | MEGPU_CAP_TASKQ);
    for (unsigned n = 0; n < 6; n++) {
        g_assert_cmpuint(erd(&m, n, MEGPU_ENG_TYPE), ==,
                         n % MEGPU_ENGINE_NUM_TYPES);
        g_assert_cmphex(erd(&m, n, MEGPU_ENG_STATUS), ==,
                        MEGPU_ENG_STATUS_IDLE);
        g_assert_cmphex(erd(&m, n, MEGPU_ENG_RING_SIZE), ==, 0);
    }
    /* Absent engines read 0 and ignore writes. */
    for (unsigned n = 6; n < MEGPU_MAX_ENGINES; n++) {
        ewr(&m, n, MEGPU_ENG_DELAY_US, 5);
        ewr(&m, n, MEGPU_ENG_RING_SIZE, RING_SIZE);
        g_assert_cmphex(erd(&m, n, MEGPU_ENG_TYPE), ==, 0);
        g_assert_cmphex(erd(&m, n, MEGPU_ENG_STATUS), ==, 0);
        g_assert_cmphex(erd(&m, n, MEGPU_ENG_DELAY_US), ==, 0);
        g_assert_cmphex(erd(&m, n, MEGPU_ENG_RING_SIZE), ==, 0);
    }

    /* Without a ring, the doorbell is ignored. */
    ewr(&m, 0, MEGPU_ENG_RING_TAIL, 0x10);
    g_assert_cmphex(erd(&m, 0, MEGPU_ENG_RING_TAIL), ==, 0);

    /* Ring size: a power of two in [MIN, MAX], else ignored. */
    ewr(&m, 0, MEGPU_ENG_RING_SIZE, 0x800);
    ewr(&m, 0, MEGPU_ENG_RING_SIZE, 0x3000);
    ewr(&m, 0, MEGPU_ENG_RING_SIZE, MEGPU_RING_SIZE_MAX * 2);
    ewr(&m, 0, MEGPU_ENG_RING_SIZE, 0);
    g_assert_cmphex(erd(&m, 0, MEGPU_ENG_RING_SIZE), ==, 0);
    ewr(&m, 0, MEGPU_ENG_RING_SIZE, MEGPU_RING_SIZE_MAX);
    g_assert_cmphex(erd(&m, 0, MEGPU_ENG_RING_SIZE), ==, MEGPU_RING_SIZE_MAX);
    ewr(&m, 0, MEGPU_ENG_RING_SIZE, MEGPU_RING_SIZE_MIN);
    g_assert_cmphex(erd(&m, 0, MEGPU_ENG_RING_SIZE), ==, MEGPU_RING_SIZE_MIN);

    /* Ring base: 4 KiB aligned, 64 bits. */
    ewr(&m, 0, MEGPU_ENG_RING_BASE_LO, 0x1234);
    g_assert_cmphex(erd(&m, 0, MEGPU_ENG_RING_BASE_LO), ==, 0);
    ewr(&m, 0, MEGPU_ENG_RING_BASE_LO, 0x5000);
    ewr(&m, 0, MEGPU_ENG_RING_BASE_HI, 0x1);
    g_assert_cmphex(erd64(&m, 0, MEGPU_ENG_RING_BASE_LO), ==, 0x100005000ull);

    ring_setup(&m, 0);
    /* Tail: below the size and dword aligned, else ignored. */
    ewr(&m, 0, MEGPU_ENG_RING_TAIL, RING_SIZE);
    ewr(&m, 0, MEGPU_ENG_RING_TAIL, 0x2);
    g_assert_cmphex(erd(&m, 0, MEGPU_ENG_RING_TAIL), ==, 0);

    ewr(&m, 0, MEGPU_ENG_DELAY_US, 12345);
    g_assert_cmpuint(erd(&m, 0, MEGPU_ENG_DELAY_US), ==, 12345);

    /* Base and size cannot change under a busy engine. */
    ewr(&m, 0, MEGPU_ENG_DELAY_US, 300 * 1000);
    emit_nop(&m.ring[0], 0);
    kick(&m, 0);
    g_assert_cmphex(erd(&m, 0, MEGPU_ENG_STATUS) & MEGPU_ENG_STATUS_IDLE,
                    ==, 0);
    ewr(&m, 0, MEGPU_ENG_RING_BASE_LO, 0x7000);
    ewr(&m, 0, MEGPU_ENG_RING_SIZE, 0x2000);
    g_assert_cmphex(erd64(&m, 0, MEGPU_ENG_RING_BASE_LO), ==, RING_PA(0));
    g_assert_cmphex(erd(&m, 0, MEGPU_ENG_RING_SIZE), ==, RING_SIZE);
    ewr(&m, 0, MEGPU_ENG_DELAY_US, 0);
    eng_idle(&m, 0);
    g_assert_cmpuint(erd64(&m, 0, MEGPU_ENG_PACKETS_LO), ==, 1);

    /* Read-only registers ignore writes. */
    ewr(&m, 0, MEGPU_ENG_RING_HEAD, 0x40);
    ewr(&m, 0, MEGPU_ENG_TYPE, 3);
    ewr(&m, 0, MEGPU_ENG_FAULTS, 3);
    g_assert_cmphex(erd(&m, 0, MEGPU_ENG_RING_HEAD), ==, 4);
    g_assert_cmphex(erd(&m, 0, MEGPU_ENG_TYPE), ==, 0);
    g_assert_cmphex(erd(&m, 0, MEGPU_ENG_FAULTS), ==, 0);
    megpu_stop(&m);
}

static void test_ring_wrap(void)
{
    Megpu m;
    Stream *r;
    uint64_t ts = DATA_PA;
    uint32_t d[3] = { 0x11111111, 0x22222222, 0x33333333 };
    unsigned packets = 0;

    megpu_start_engines(&m, 1);
    r = &m.ring[0];

    /* Move head near the end, then a TIMESTAMP that wraps. */
    emit_nop(r, RING_SIZE / 4 - 4 - 1);
    kick(&m, 0);
    eng_idle(&m, 0);
    packets++;
    g_assert_cmphex(erd(&m, 0, MEGPU_ENG_RING_HEAD), ==, RING_SIZE - 16);
    emit_ts(r, ts, 0x1122334455667788ull, 0);
    emit_write(r, DATA_PA + 0x100, d, 3);
    kick(&m, 0);
    eng_idle(&m, 0);
    packets += 2;
    g_assert_cmphex(qtest_readq(m.qts, ts), ==, 0x1122334455667788ull);
    g_assert_cmphex(qtest_readl(m.qts, DATA_PA + 0x108), ==, 0x33333333);
    g_assert_cmphex(erd64(&m, 0, MEGPU_ENG_LAST_TS_LO), ==,
                    0x1122334455667788ull);

    /* Go around the ring a few more times, several packets per doorbell. */
    for (unsigned i = 1; i <= 200; i++) {
        emit_ts(r, ts, i, 0);
        if (i % 3 == 0) {
            kick(&m, 0);
        }
        packets++;
    }
    kick(&m, 0);
    eng_idle(&m, 0);
    g_assert_cmpuint(qtest_readq(m.qts, ts), ==, 200);
    g_assert_cmpuint(erd64(&m, 0, MEGPU_ENG_PACKETS_LO), ==, packets);
    g_assert_cmpuint(erd(&m, 0, MEGPU_ENG_FAULTS), ==, 0);
    megpu_stop_engines(&m);
}

static void test_delay(void)
{
    Megpu m;
    int64_t t0, t1;

    megpu_start_engines(&m, 2);
    qtest_writeq(m.qts, DATA_PA, 0);
    ewr(&m, 0, MEGPU_ENG_DELAY_US, 200 * 1000);
    t0 = g_get_monotonic_time();
    emit_ts(&m.ring[0], DATA_PA, 1, 0);
    emit_ts(&m.ring[0], DATA_PA, 2, 0);
    kick(&m, 0);
    /* the other engine is not held back */
    emit_ts(&m.ring[1], DATA_PA + 8, 9, 0);
    kick(&m, 1);
    eng_idle(&m, 1);
    g_assert_cmpuint(qtest_readq(m.qts, DATA_PA), ==, 0);
    eng_idle(&m, 0);
    t1 = g_get_monotonic_time();
    g_assert_cmpuint(qtest_readq(m.qts, DATA_PA), ==, 2);
    g_assert_cmpint(t1 - t0, >=, 400 * 1000);
    ewr(&m, 0, MEGPU_ENG_DELAY_US, 0);
    megpu_stop_engines(&m);
}

static void test_engine_reset(void)
{
    Megpu m;
    Stream *r;
    int64_t t0;

    megpu_start_engines(&m, 4);
    r = &m.ring[0];
    qtest_writeq(m.qts, SEM_PA, 0);

    /* Reset while waiting: the WAIT is abandoned. */
    emit_setctx(r, PT_PA, 9);
    emit_wait(r, SEM_PA, 1);
    emit_ts(r, DATA_PA, 1, 0);
    kick(&m, 0);
    eng_poll(&m, 0, MEGPU_ENG_STATUS_WAIT_SEM);
    g_assert_cmpuint(erd(&m, 0, MEGPU_ENG_CTX_ID), ==, 9);
    eng_reset(&m, 0);
    g_assert_cmphex(erd(&m, 0, MEGPU_ENG_STATUS), ==, MEGPU_ENG_STATUS_IDLE);
    g_assert_cmphex(erd(&m, 0, MEGPU_ENG_RING_HEAD), ==, 0);
    g_assert_cmphex(erd(&m, 0, MEGPU_ENG_RING_TAIL), ==, 0);
    g_assert_cmpuint(erd(&m, 0, MEGPU_ENG_RESETS), ==, 1);
    g_assert_cmpuint(erd(&m, 0, MEGPU_ENG_CTX_ID), ==, 0);
    g_assert_cmphex(erd64(&m, 0, MEGPU_ENG_PT_BASE_LO), ==, 0);
    g_assert_cmphex(erd64(&m, 0, MEGPU_ENG_WAIT_ADDR_LO), ==, 0);
    g_assert_cmphex(erd64(&m, 0, MEGPU_ENG_RING_BASE_LO), ==, RING_PA(0));
    g_assert_cmphex(erd(&m, 0, MEGPU_ENG_RING_SIZE), ==, RING_SIZE);
    g_assert_cmpuint(qtest_readq(m.qts, DATA_PA), ==, 0);
    /* and runs new work from offset 0 */
    emit_ts(r, DATA_PA, 2, 0);
    kick(&m, 0);
    eng_idle(&m, 0);
    g_assert_cmpuint(qtest_readq(m.qts, DATA_PA), ==, 2);

    /* Reset after a fault, without FAULT_ACK. */
    put(r, MEGPU_PKT_HEADER(0x77, 0, 0));
    emit_ts(r, DATA_PA, 3, MEGPU_TIMESTAMP_FLAG_IRQ);
    kick(&m, 0);
    eng_poll(&m, 0, MEGPU_ENG_STATUS_FAULTED);
    eng_reset(&m, 0);
    g_assert_cmphex(erd(&m, 0, MEGPU_ENG_STATUS), ==, MEGPU_ENG_STATUS_IDLE);
    g_assert_cmpuint(erd(&m, 0, MEGPU_ENG_FAULT_CODE), ==, 0);
    g_assert_cmpuint(erd64(&m, 0, MEGPU_ENG_FAULT_ADDR_LO), ==, 0);
    g_assert_cmpuint(erd(&m, 0, MEGPU_ENG_FAULT_INFO), ==, 0);
    g_assert_cmpuint(erd(&m, 0, MEGPU_ENG_IRQ_STATUS), ==, 0);
    g_assert_cmpuint(erd(&m, 0, MEGPU_ENG_FAULTS), ==, 1);
    g_assert_cmpuint(erd(&m, 0, MEGPU_ENG_RESETS), ==, 2);
    g_assert_cmpuint(qtest_readq(m.qts, DATA_PA), ==, 2);
    emit_ts(r, DATA_PA, 4, 0);
    kick(&m, 0);
    eng_idle(&m, 0);
    g_assert_cmpuint(qtest_readq(m.qts, DATA_PA), ==, 4);

    /* Reset during a long delay does not wait for it. */
    ewr(&m, 1, MEGPU_ENG_DELAY_US, 60 * 1000 * 1000);
    emit_ts(&m.ring[1], DATA_PA + 8, 1, 0);
    kick(&m, 1);
    g_usleep(10 * 1000);
    t0 = g_get_monotonic_time();
    eng_reset(&m, 1);
    g_assert_cmpint(g_get_monotonic_time() - t0, <, 2 * 1000 * 1000);
    g_assert_cmpuint(qtest_readq(m.qts, DATA_PA + 8), ==, 0);
    /* DELAY_US is a test knob, kept across an engine reset */
    g_assert_cmpuint(erd(&m, 1, MEGPU_ENG_DELAY_US), ==, 60 * 1000 * 1000);
    ewr(&m, 1, MEGPU_ENG_DELAY_US, 0);

    /* Reset with RESET and FAULT_ACK together: the reset wins. */
    put(&m.ring[2], MEGPU_PKT_HEADER(0x77, 0, 0));
    kick(&m, 2);
    eng_poll(&m, 2, MEGPU_ENG_STATUS_FAULTED);
    ewr(&m, 2, MEGPU_ENG_CONTROL,
        MEGPU_ENG_CTRL_RESET | MEGPU_ENG_CTRL_FAULT_ACK);
    eng_reset_done(&m, 2);
    m.ring[2].pos = 0;
    g_assert_cmphex(erd(&m, 2, MEGPU_ENG_STATUS), ==, MEGPU_ENG_STATUS_IDLE);
    g_assert_cmphex(erd(&m, 2, MEGPU_ENG_RING_HEAD), ==, 0);

    /* Device reset (register) while engines wait: done when it returns. */
    emit_wait(&m.ring[3], SEM_PA, 100);
    kick(&m, 3);
    emit_wait(&m.ring[0], SEM_PA, 100);
    kick(&m, 0);
    eng_poll(&m, 3, MEGPU_ENG_STATUS_WAIT_SEM);
    eng_poll(&m, 0, MEGPU_ENG_STATUS_WAIT_SEM);
    wr(&m, MEGPU_REG_RESET, MEGPU_RESET_MAGIC);
    for (unsigned n = 0; n < 4; n++) {
        g_assert_cmphex(erd(&m, n, MEGPU_ENG_STATUS), ==,
                        MEGPU_ENG_STATUS_IDLE);
        g_assert_cmphex(erd(&m, n, MEGPU_ENG_RING_SIZE), ==, 0);
        g_assert_cmpuint(erd(&m, n, MEGPU_ENG_RESETS), ==, 0);
        g_assert_cmpuint(erd64(&m, n, MEGPU_ENG_PACKETS_LO), ==, 0);
        ring_setup(&m, n);
    }
    emit_ts(&m.ring[3], DATA_PA + 16, 5, 0);
    kick(&m, 3);
    eng_idle(&m, 3);
    g_assert_cmpuint(qtest_readq(m.qts, DATA_PA + 16), ==, 5);

    /* A system reset, then a function level reset, while an engine waits */
    reset_while_waiting(&m, system_reset, 6);
    reset_while_waiting(&m, flr, 7);
    megpu_stop(&m);
}

/* Quitting QEMU while engines wait and sleep must not hang. */
static void test_teardown_busy(void)
{
    Megpu m;

    megpu_start_engines(&m, 16);
    for (unsigned n = 0; n < 16; n++) {
        if (n % 2) {
            emit_wait(&m.ring[n], SEM_PA + 0x100, 1000);
        } else {
            ewr(&m, n, MEGPU_ENG_DELAY_US, 1000 * 1000);
            emit_nop(&m.ring[n], 0);
        }
        kick(&m, n);
    }
    eng_poll(&m, 15, MEGPU_ENG_STATUS_WAIT_SEM);
    megpu_stop_engines(&m);
}

/*
 * Hot unplug with the engines busy (one stalled on a WAIT that nothing
 * will satisfy, one in a long DELAY_US): the device sits behind a
 * pcie-root-port, as guests have it (the test plays the firmware: bus
 * numbers and the port's memory window), device_del is completed by a
 * system reset (as in QEMU's device-plug-test), and unrealize must stop
 * the engine threads and free everything (the ASan lane checks the
 * latter). QEMU then still answers.
 */
static void wait_deleted(QTestState *qts, const char *id)
{
    for (;;) {
        QDict *resp = qtest_qmp_eventwait_ref(qts, "DEVICE_DELETED");
        QDict *data = qdict_get_qdict(resp, "data");
        const char *dev = data ? qdict_get_try_str(data, "device") : NULL;
        bool ours = dev && !strcmp(dev, id);

        qobject_unref(resp);
        if (ours) {
            return;
        }
    }
}

static void test_hot_unplug_busy(void)
{
    Megpu m;
    QPCIDevice *port = megpu_start_in_slot(&m, 2, false,
                                           "write-mode=strict");

    g_assert_cmphex(rd(&m, MEGPU_REG_ID), ==, MEGPU_ID_MAGIC);
    qpci_msix_enable(m.dev);
    for (unsigned n = 0; n < 2; n++) {
        ring_setup(&m, n);
    }
    emit_wait(&m.ring[1], SEM_PA + 0x100, 1000);
    kick(&m, 1);
    ewr(&m, 0, MEGPU_ENG_DELAY_US, 1000 * 1000);
    emit_nop(&m.ring[0], 0);
    kick(&m, 0);
    eng_poll(&m, 1, MEGPU_ENG_STATUS_WAIT_SEM);

    qtest_qmp_device_del_send(m.qts, "gpu0");
    qtest_system_reset_nowait(m.qts);
    wait_deleted(m.qts, "gpu0");
    megpu_assert_gone(&m);

    g_free(port);
    g_free(m.dev);
    qpci_free_pc(m.bus);
    qtest_quit(m.qts);
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    qtest_add_func("/megpu/identity", test_identity);
    qtest_add_func("/megpu/bad-engine-count", test_bad_engine_count);
    qtest_add_data_func("/megpu/behind-viommu/listed-first",
                        GUINT_TO_POINTER(0), test_behind_viommu);
    qtest_add_data_func("/megpu/behind-viommu/listed-after",
                        GUINT_TO_POINTER(1), test_behind_viommu);
    qtest_add_func("/megpu/hidden-features", test_hidden_features);
    qtest_add_func("/megpu/bad-props", test_bad_props);
    for (unsigned i = 0; i < ARRAY_SIZE(bad_props); i++) {
        g_autofree char *path =
            g_strdup_printf("/megpu/bad-props/subprocess/%u", i);

        qtest_add_data_func(path, GUINT_TO_POINTER(i), test_bad_props_one);
    }
    qtest_add_func("/megpu/scratch-and-reset", test_scratch_and_reset);
    qtest_add_func("/megpu/msix", test_msix);
    qtest_add_func("/megpu/engine/regs", test_engine_regs);
    qtest_add_func("/megpu/engine/ring-wrap", test_ring_wrap);
    qtest_add_func("/megpu/engine/delay", test_delay);
    qtest_add_func("/megpu/engine/reset", test_engine_reset);
    qtest_add_func("/megpu/engine/teardown-busy", test_teardown_busy);
    qtest_add_func("/megpu/engine/hot-unplug-busy", test_hot_unplug_busy);
    return g_test_run();
}
