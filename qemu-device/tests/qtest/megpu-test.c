/*
 * QTest for the megpu device: identification, scratch, MSI-X, reset, and
 * the engines: rings, every packet, built-in kernels, the GPU MMU, faults,
 * semaphores, engine reset, and a fuzz run. Engines run in their own
 * threads, so the tests poll with a bounded wait instead of stepping a
 * clock. Rings, IBs, page tables and data live at fixed guest-physical
 * addresses in the q35 machine's RAM.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */

#include "qemu/osdep.h"
#include "qemu/bswap.h"
#include "libqtest.h"
#include "libqos/pci-pc.h"
#include "hw/pci/pci_regs.h"
#include "hw/misc/megpu_hw.h"
#include "megpu-qtest.h"

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

static void test_scratch_and_reset(void)
{
    Megpu m;

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
    qtest_system_reset(m.qts);
    /* the reset cleared the BARs too: map BAR0 again */
    qpci_device_enable(m.dev);
    m.bar = qpci_iomap(m.dev, MEGPU_BAR_MMIO, NULL);
    g_assert_cmphex(rd(&m, MEGPU_REG_ID), ==, MEGPU_ID_MAGIC);
    g_assert_cmphex(rd(&m, MEGPU_REG_SCRATCH), ==, 0);
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

/* ---- engines: helpers ---- */

static void emit_copy(Stream *st, uint64_t src, uint64_t dst, uint32_t bytes)
{
    hdr(st, MEGPU_PKT_COPY, MEGPU_PKT_COPY_COUNT, 0);
    put64(st, src);
    put64(st, dst);
    put(st, bytes);
}

static void emit_fill(Stream *st, uint64_t dst, uint32_t bytes, uint32_t val)
{
    hdr(st, MEGPU_PKT_FILL, MEGPU_PKT_FILL_COUNT, 0);
    put64(st, dst);
    put(st, bytes);
    put(st, val);
}

/* A packet of @op with a well-formed count and harmless arguments. */
static void emit_any(Stream *st, uint32_t op, uint64_t scratch)
{
    static const uint32_t one = 1;

    switch (op) {
    case MEGPU_PKT_NOP:
        emit_nop(st, 1);
        break;
    case MEGPU_PKT_IB:
        emit_ib(st, 0, 0);
        break;
    case MEGPU_PKT_WRITE_DATA:
        emit_write(st, scratch, &one, 1);
        break;
    case MEGPU_PKT_TIMESTAMP:
        emit_ts(st, scratch, 1, 0);
        break;
    case MEGPU_PKT_COPY:
        emit_copy(st, scratch, scratch + 64, 4);
        break;
    case MEGPU_PKT_FILL:
        emit_fill(st, scratch, 4, 0);
        break;
    case MEGPU_PKT_DISPATCH:
        emit_dispatch(st, MEGPU_KERNEL_CHECKSUM, scratch, 0, 0, 1, 1);
        break;
    case MEGPU_PKT_SET_CONTEXT:
        emit_setctx(st, PT_PA, 1);
        break;
    case MEGPU_PKT_SIGNAL:
        emit_signal(st, scratch, 0);
        break;
    case MEGPU_PKT_WAIT:
        emit_wait(st, scratch, 0);
        break;
    case MEGPU_PKT_FLUSH:
        hdr(st, MEGPU_PKT_FLUSH, MEGPU_PKT_FLUSH_COUNT, 0);
        break;
    case MEGPU_PKT_IDLE_SIGNAL:
        hdr(st, MEGPU_PKT_IDLE_SIGNAL, MEGPU_PKT_IDLE_SIGNAL_COUNT, 0);
        break;
    default:
        g_assert_not_reached();
    }
}

static uint32_t type_pkts(unsigned type)
{
    static const uint32_t pkts[] = {
        MEGPU_PKTS_GFX, MEGPU_PKTS_COMPUTE, MEGPU_PKTS_COPY, MEGPU_PKTS_VIDEO,
    };
    return pkts[type];
}

/* ---- engines: tests ---- */

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

/* Run one kernel over @n elements on engine @e; ring (bus) addresses. */
static void run_kernel(Megpu *m, unsigned e, uint32_t kernel,
                       const uint64_t ptr[4], uint32_t n,
                       const uint32_t param[3], uint32_t gx, uint32_t gy,
                       uint32_t lx, uint32_t ly)
{
    uint64_t args = DATA_PA + 0xff000;

    write_kargs(m, args, ptr, n, param);
    emit_dispatch(&m->ring[e], kernel, args, gx, gy, lx, ly);
    kick(m, e);
    eng_idle(m, e);
}

static void test_kernels(void)
{
    Megpu m;
    const uint64_t a = DATA_PA, b = DATA_PA + 0x10000, c = DATA_PA + 0x20000;
    const uint64_t ptr[4] = { a, b, c, 0 };

    megpu_start_engines(&m, 4);
    for (unsigned e = 0; e < 2; e++) {          /* gfx and compute */
        uint32_t param[3] = { 0x5eed0000 + e, 0, 0 };
        const uint32_t n = 170;

        /* FILL on a 37x5 grid of 8x2 groups: items past n do nothing */
        qtest_memset(m.qts, a, 0, 0x30000);
        run_kernel(&m, e, MEGPU_KERNEL_FILL, ptr, n, param, 37, 5, 8, 2);
        for (unsigned i = 0; i < 200; i++) {
            g_assert_cmphex(qtest_readl(m.qts, a + i * 4), ==,
                            i < n ? param[0] : 0);
        }

        /* COPY, VADD, INCREMENT over 3000 elements (pages, groups) */
        for (unsigned i = 0; i < 3000; i++) {
            qtest_writel(m.qts, a + i * 4, i * 3);
            qtest_writel(m.qts, b + i * 4, 0xffffffff - i);
        }
        run_kernel(&m, e, MEGPU_KERNEL_VADD, ptr, 3000, param,
                   3000, 1, 256, 1);
        for (unsigned i = 0; i < 3000; i += 7) {
            g_assert_cmphex(qtest_readl(m.qts, c + i * 4), ==,
                            (uint32_t)(i * 3 + 0xffffffff - i));
        }
        run_kernel(&m, e, MEGPU_KERNEL_COPY, ptr, 3000, param,
                   100, 30, 10, 10);
        for (unsigned i = 0; i < 3000; i += 7) {
            g_assert_cmphex(qtest_readl(m.qts, b + i * 4), ==, i * 3);
        }
        run_kernel(&m, e, MEGPU_KERNEL_INCREMENT, ptr, 2999, param,
                   3000, 1, 1024, 1);
        for (unsigned i = 2990; i < 3000; i++) {
            g_assert_cmphex(qtest_readl(m.qts, a + i * 4), ==,
                            i * 3 + (i < 2999));
        }

        /* SAXPY: y = a * x + y in float */
        for (unsigned i = 0; i < 64; i++) {
            float x = i, y = 1.0f - i;
            uint32_t xu, yu;

            memcpy(&xu, &x, 4);
            memcpy(&yu, &y, 4);
            qtest_writel(m.qts, a + i * 4, xu);
            qtest_writel(m.qts, b + i * 4, yu);
        }
        {
            float alpha = 2.5f;
            uint32_t p[3] = { 0 };

            memcpy(&p[0], &alpha, 4);
            run_kernel(&m, e, MEGPU_KERNEL_SAXPY, ptr, 64, p, 8, 8, 4, 4);
            for (unsigned i = 0; i < 64; i++) {
                uint32_t yu = qtest_readl(m.qts, b + i * 4);
                float y;

                memcpy(&y, &yu, 4);
                g_assert_cmpfloat(y, ==, alpha * (float)i + (1.0f - i));
            }
        }

        /* CHECKSUM: one atomic add per work-group onto *ptr[1] */
        {
            uint64_t cp[4] = { a, c + 0x800, 0, 0 };
            uint32_t sum = 7;

            for (unsigned i = 0; i < 5000; i++) {
                qtest_writel(m.qts, a + i * 4, i * 2654435761u);
                sum += i * 2654435761u;
            }
            qtest_writel(m.qts, c + 0x800, 7);
            run_kernel(&m, e, MEGPU_KERNEL_CHECKSUM, cp, 5000, param,
                       5000, 1, 100, 1);
            g_assert_cmphex(qtest_readl(m.qts, c + 0x800), ==, sum);
        }
    }

    /*
     * Video runs only CHECKSUM and the image kernels (tested with them);
     * copy has no DISPATCH at all.
     */
    {
        uint32_t param[3] = { 0 };
        uint64_t cp[4] = { a, c, 0, 0 };
        Stream *r = &m.ring[3];
        uint32_t at;

        for (unsigned i = 0; i < 10; i++) {
            qtest_writel(m.qts, a + i * 4, i);
        }
        qtest_writel(m.qts, c, 0);
        run_kernel(&m, 3, MEGPU_KERNEL_CHECKSUM, cp, 10, param, 10, 1, 3, 1);
        g_assert_cmpuint(qtest_readl(m.qts, c), ==, 45);
        for (uint32_t k = 0; k < MEGPU_KERNEL_COUNT; k++) {
            if (MEGPU_KERNELS_VIDEO & MEGPU_BIT(k)) {
                continue;
            }
            at = r->pos;
            emit_dispatch(r, k, DATA_PA + 0xff000, 1, 1, 1, 1);
            kick(&m, 3);
            expect_fault(&m, 3, MEGPU_FAULT_UNSUPPORTED, RING_PA(3) + at, at,
                         0);
            eng_idle(&m, 3);
        }
        at = m.ring[2].pos;
        emit_dispatch(&m.ring[2], MEGPU_KERNEL_CHECKSUM, DATA_PA + 0xff000,
                      1, 1, 1, 1);
        kick(&m, 2);
        expect_fault(&m, 2, MEGPU_FAULT_UNSUPPORTED, RING_PA(2) + at, at, 0);
        eng_idle(&m, 2);
    }

    /* Bad kernel id, group sizes and argument alignment: BAD_ARG. */
    {
        static const uint32_t bad[][5] = {
            /* kernel, lx, ly, args offset */
            { MEGPU_KERNEL_COUNT, 1, 1, 0 },
            { 0xffffffff, 1, 1, 0 },
            { MEGPU_KERNEL_FILL, 0, 1, 0 },
            { MEGPU_KERNEL_FILL, 1, 0, 0 },
            { MEGPU_KERNEL_FILL, 33, 32, 0 },
            { MEGPU_KERNEL_FILL, 0x10000, 0x10000, 0 },
            { MEGPU_KERNEL_FILL, 1, 1, 4 },
        };
        Stream *r = &m.ring[0];

        for (unsigned i = 0; i < ARRAY_SIZE(bad); i++) {
            uint32_t at = r->pos;

            emit_dispatch(r, bad[i][0], DATA_PA + 0xff000 + bad[i][3],
                          4, 4, bad[i][1], bad[i][2]);
            kick(&m, 0);
            expect_fault(&m, 0, MEGPU_FAULT_BAD_ARG, RING_PA(0) + at, at, 0);
            eng_idle(&m, 0);
        }
        /* the largest group is fine */
        {
            uint32_t param[3] = { 3, 0, 0 };

            run_kernel(&m, 0, MEGPU_KERNEL_FILL, ptr, 2048, param,
                       64, 32, 32, 32);
            g_assert_cmphex(qtest_readl(m.qts, a + 2047 * 4), ==, 3);
        }
    }
    megpu_stop_engines(&m);
}

/* IBs run through the MMU of the context set on the ring. */
static void test_mmu_ib(void)
{
    Megpu m;
    Stream *r;
    Stream ib;
    const uint64_t ib_va = 0x10000000, data_va = 0x20000000;
    const uint64_t ro_va = 0x30000000;
    uint32_t d[4] = { 0xa0, 0xa1, 0xa2, 0xa3 };
    uint32_t at;

    megpu_start_engines(&m, 2);
    r = &m.ring[0];
    qtest_memset(m.qts, DATA_PA, 0, 0x10000);

    /* No context yet: the IB fetch itself faults. */
    at = r->pos;
    emit_ib(r, ib_va, 4);
    emit_ts(r, DATA_PA + 0x8000, 1, 0);
    kick(&m, 0);
    expect_fault(&m, 0, MEGPU_FAULT_MMU, ib_va, at, MEGPU_FAULT_INFO_IN_IB);
    eng_idle(&m, 0);
    g_assert_cmpuint(qtest_readq(m.qts, DATA_PA + 0x8000), ==, 1);

    /*
     * Data pages scattered backwards in physical memory: an access that
     * crosses a page boundary must be split and translated per page.
     */
    mmu_map(&m, ib_va, IB_PA, 0x2000, false);
    mmu_map(&m, data_va, DATA_PA + 0x3000, 0x1000, true);
    mmu_map(&m, data_va + 0x1000, DATA_PA + 0x1000, 0x1000, true);
    mmu_map(&m, data_va + 0x2000, DATA_PA + 0x5000, 0x1000, true);
    mmu_map(&m, ro_va, DATA_PA + 0x7000, 0x1000, false);
    qtest_writel(m.qts, DATA_PA + 0x7000, 0x5555);

    ib = ib_stream(&m, IB_PA);
    emit_write(&ib, data_va + 0xff8, d, 4);
    emit_fill(&ib, data_va + 0x1ff0, 0x20, 0xf111f111);
    emit_copy(&ib, ro_va, data_va + 0x2ffe, 2);
    emit_ts(&ib, data_va + 0x100, 0x99, MEGPU_TIMESTAMP_FLAG_IRQ);
    emit_setctx(r, PT_PA, 77);
    emit_ib(r, ib_va, ib.pos / 4);
    kick(&m, 0);
    eng_idle(&m, 0);
    g_assert_cmpuint(erd(&m, 0, MEGPU_ENG_CTX_ID), ==, 77);
    g_assert_cmphex(erd64(&m, 0, MEGPU_ENG_PT_BASE_LO), ==, PT_PA);
    g_assert_cmphex(qtest_readl(m.qts, DATA_PA + 0x3ff8), ==, 0xa0);
    g_assert_cmphex(qtest_readl(m.qts, DATA_PA + 0x3ffc), ==, 0xa1);
    g_assert_cmphex(qtest_readl(m.qts, DATA_PA + 0x1000), ==, 0xa2);
    g_assert_cmphex(qtest_readl(m.qts, DATA_PA + 0x1004), ==, 0xa3);
    g_assert_cmphex(qtest_readl(m.qts, DATA_PA + 0x1ff0), ==, 0xf111f111);
    g_assert_cmphex(qtest_readl(m.qts, DATA_PA + 0x5000), ==, 0xf111f111);
    g_assert_cmphex(qtest_readl(m.qts, DATA_PA + 0x500c), ==, 0xf111f111);
    g_assert_cmphex(qtest_readl(m.qts, DATA_PA + 0x5010), ==, 0);
    g_assert_cmphex(qtest_readw(m.qts, DATA_PA + 0x5ffe), ==, 0x5555);
    g_assert_cmphex(qtest_readq(m.qts, DATA_PA + 0x3100), ==, 0x99);
    /* an IB TIMESTAMP interrupts but leaves LAST_TS at the ring's 1 */
    g_assert_cmphex(erd(&m, 0, MEGPU_ENG_IRQ_STATUS) &
                    ~MEGPU_ENG_IRQ_IDLE, ==, MEGPU_ENG_IRQ_TIMESTAMP);
    g_assert_cmpuint(erd64(&m, 0, MEGPU_ENG_LAST_TS_LO), ==, 1);
    msix_poll_pending(&m, MEGPU_VEC_ENGINE(0));
    msix_clear_pending(&m, MEGPU_VEC_ENGINE(0));
    ewr(&m, 0, MEGPU_ENG_IRQ_STATUS, 0xffffffff);

    /* A kernel through the MMU: INCREMENT across the three data pages. */
    {
        uint64_t ptr[4] = { data_va + 0x800, 0, 0, 0 };
        uint32_t param[3] = { 0 };

        qtest_memset(m.qts, DATA_PA + 0x1000, 0, 0x1000);
        qtest_memset(m.qts, DATA_PA + 0x3000, 0, 0x1000);
        qtest_memset(m.qts, DATA_PA + 0x5000, 0, 0x1000);
        write_kargs(&m, DATA_PA + 0x3000, ptr, 0x800, param);
        ib = ib_stream(&m, IB_PA);
        emit_dispatch(&ib, MEGPU_KERNEL_INCREMENT, data_va, 0x800, 1, 64, 1);
        emit_ib(r, ib_va, ib.pos / 4);
        kick(&m, 0);
        eng_idle(&m, 0);
        g_assert_cmpuint(qtest_readl(m.qts, DATA_PA + 0x3800), ==, 1);
        g_assert_cmpuint(qtest_readl(m.qts, DATA_PA + 0x3ffc), ==, 1);
        g_assert_cmpuint(qtest_readl(m.qts, DATA_PA + 0x1000), ==, 1);
        g_assert_cmpuint(qtest_readl(m.qts, DATA_PA + 0x1ffc), ==, 1);
        g_assert_cmpuint(qtest_readl(m.qts, DATA_PA + 0x5000), ==, 1);
        g_assert_cmpuint(qtest_readl(m.qts, DATA_PA + 0x57fc), ==, 1);
        g_assert_cmpuint(qtest_readl(m.qts, DATA_PA + 0x5800), ==, 0);
        g_assert_cmpuint(qtest_readl(m.qts, DATA_PA + 0x37fc), ==, 0);
    }

    /*
     * A write to a read-only page: MMU fault with WRITE | IN_IB at the
     * virtual address; writes before it stay, the rest of the IB is
     * skipped, the ring goes on after FAULT_ACK.
     */
    ib = ib_stream(&m, IB_PA);
    emit_write(&ib, data_va + 0x600, d, 1);
    emit_write(&ib, ro_va + 0x20, d, 1);
    emit_write(&ib, data_va + 0x604, d, 1);
    at = r->pos;
    emit_ib(r, ib_va, ib.pos / 4);
    emit_ts(r, DATA_PA + 0x8000, 2, 0);
    kick(&m, 0);
    expect_fault(&m, 0, MEGPU_FAULT_MMU, ro_va + 0x20, at,
                 MEGPU_FAULT_INFO_IN_IB | MEGPU_FAULT_INFO_WRITE);
    eng_idle(&m, 0);
    g_assert_cmphex(qtest_readl(m.qts, DATA_PA + 0x3600), ==, 0xa0);
    g_assert_cmphex(qtest_readl(m.qts, DATA_PA + 0x3604), ==, 0);
    g_assert_cmphex(qtest_readl(m.qts, DATA_PA + 0x7020), ==, 0);
    g_assert_cmpuint(qtest_readq(m.qts, DATA_PA + 0x8000), ==, 2);

    /* Reads of unmapped pages, addresses >= 4 GiB, bad level-1 entries. */
    {
        static const uint64_t bad_src[] = {
            0x20003000,             /* no PTE */
            0x50000000,             /* no PDE */
            0x100000000ull,         /* past the 32-bit VA space */
            0xfffffffffffff000ull,
            0x60000000,             /* PDE with a misaligned table */
        };

        qtest_writeq(m.qts, PT_PA + MEGPU_PDE_INDEX(0x60000000) * 8,
                     (DATA_PA + 0x9000) | MEGPU_PTE_VALID);
        for (unsigned i = 0; i < ARRAY_SIZE(bad_src); i++) {
            ib = ib_stream(&m, IB_PA);
            emit_copy(&ib, bad_src[i], data_va, 4);
            at = r->pos;
            emit_ib(r, ib_va, ib.pos / 4);
            kick(&m, 0);
            expect_fault(&m, 0, MEGPU_FAULT_MMU, bad_src[i], at,
                         MEGPU_FAULT_INFO_IN_IB);
            eng_idle(&m, 0);
        }
    }

    /* Unmap, invalidate, and the next access faults. */
    g_assert_cmpuint(rd(&m, MEGPU_REG_MMU_INVALIDATE), ==, 0);
    ib = ib_stream(&m, IB_PA);
    emit_write(&ib, data_va + 0x2000, d, 1);
    emit_ib(r, ib_va, ib.pos / 4);
    kick(&m, 0);
    eng_idle(&m, 0);
    mmu_set_pte(&m, data_va + 0x2000, 0);
    wr(&m, MEGPU_REG_MMU_INVALIDATE, 1);
    g_assert_cmpuint(rd(&m, MEGPU_REG_MMU_INVALIDATE), ==, 1);
    at = r->pos;
    emit_ib(r, ib_va, ib.pos / 4);
    kick(&m, 0);
    expect_fault(&m, 0, MEGPU_FAULT_MMU, data_va + 0x2000, at,
                 MEGPU_FAULT_INFO_IN_IB | MEGPU_FAULT_INFO_WRITE);
    eng_idle(&m, 0);
    /* invalidating while another engine runs IBs is fine too */
    ib = ib_stream(&m, IB_PA + 0x800);
    emit_write(&ib, data_va + 0x700, d, 1);
    emit_setctx(&m.ring[1], PT_PA, 2);
    for (unsigned i = 0; i < 50; i++) {
        emit_ib(&m.ring[1], ib_va + 0x800, ib.pos / 4);
    }
    kick(&m, 1);
    for (unsigned i = 0; i < 20; i++) {
        wr(&m, MEGPU_REG_MMU_INVALIDATE, 0);
    }
    eng_idle(&m, 1);
    g_assert_cmpuint(rd(&m, MEGPU_REG_MMU_INVALIDATE), ==, 21);
    wr(&m, MEGPU_REG_RESET, MEGPU_RESET_MAGIC);
    g_assert_cmpuint(rd(&m, MEGPU_REG_MMU_INVALIDATE), ==, 0);
    megpu_stop_engines(&m);
}

/* Every fault code, with its record, interrupt and FAULT_ACK resume. */
static void test_faults(void)
{
    Megpu m;
    Stream *r;
    Stream ib;
    const uint64_t ib_va = 0x10000000, ts = DATA_PA + 0x100;
    uint32_t d[2] = { 5, 6 };
    uint32_t at, seq = 0, faults = 0;

    megpu_start_engines(&m, 2);
    r = &m.ring[0];
    mmu_map(&m, ib_va, IB_PA, 0x4000, false);
    /* identity-mapped, so that ts works inside IBs too */
    mmu_map(&m, DATA_PA, DATA_PA, 0x1000, true);
    emit_setctx(r, PT_PA, 1);

/* the packet right after the faulting one runs after FAULT_ACK */
#define CHECK_FAULT(code, addr, info) do {                              \
        emit_ts(r, ts, ++seq, 0);                                       \
        kick(&m, 0);                                                    \
        expect_fault(&m, 0, (code), (addr), at, (info));                \
        eng_idle(&m, 0);                                                \
        g_assert_cmpuint(qtest_readq(m.qts, ts), ==, seq);              \
        g_assert_cmpuint(erd(&m, 0, MEGPU_ENG_FAULTS), ==, ++faults);   \
    } while (0)

    /* BAD_OPCODE */
    at = r->pos;
    put(r, MEGPU_PKT_HEADER(0x42, 2, 0));
    put(r, 0);
    put(r, 0);
    CHECK_FAULT(MEGPU_FAULT_BAD_OPCODE, RING_PA(0) + at, 0);
    at = r->pos;
    put(r, MEGPU_PKT_HEADER(0xff, 0, 0xff));
    CHECK_FAULT(MEGPU_FAULT_BAD_OPCODE, RING_PA(0) + at, 0);

    /* BAD_LENGTH: fixed packets with another count, short WRITE_DATA */
    at = r->pos;
    hdr(r, MEGPU_PKT_TIMESTAMP, 3, 0);
    put64(r, ts);
    put(r, 0);
    CHECK_FAULT(MEGPU_FAULT_BAD_LENGTH, RING_PA(0) + at, 0);
    at = r->pos;
    hdr(r, MEGPU_PKT_WRITE_DATA, 2, 0);
    put64(r, ts);
    CHECK_FAULT(MEGPU_FAULT_BAD_LENGTH, RING_PA(0) + at, 0);

    /* UNSUPPORTED: COPY on the compute engine */
    at = m.ring[1].pos;
    emit_copy(&m.ring[1], DATA_PA, DATA_PA + 8, 4);
    kick(&m, 1);
    expect_fault(&m, 1, MEGPU_FAULT_UNSUPPORTED, RING_PA(1) + at, at, 0);
    eng_idle(&m, 1);

    /* PRIVILEGED: SET_CONTEXT in an IB; the IB's earlier write stays */
    ib = ib_stream(&m, IB_PA);
    emit_ts(&ib, ts + 8, 0x1b, 0);
    emit_setctx(&ib, PT_PA, 2);
    emit_ts(&ib, ts + 16, 0x1b, 0);
    at = r->pos;
    emit_ib(r, ib_va, ib.pos / 4);
    CHECK_FAULT(MEGPU_FAULT_PRIVILEGED, ib_va + 5 * 4, MEGPU_FAULT_INFO_IN_IB);
    g_assert_cmphex(qtest_readq(m.qts, ts + 8), ==, 0x1b);
    g_assert_cmphex(qtest_readq(m.qts, ts + 16), ==, 0);
    g_assert_cmpuint(erd(&m, 0, MEGPU_ENG_CTX_ID), ==, 1);

    /* NESTED_IB */
    ib = ib_stream(&m, IB_PA);
    emit_nop(&ib, 1);
    emit_ib(&ib, ib_va, 2);
    at = r->pos;
    emit_ib(r, ib_va, ib.pos / 4);
    CHECK_FAULT(MEGPU_FAULT_NESTED_IB, ib_va + 8, MEGPU_FAULT_INFO_IN_IB);

    /* IB_OVERRUN: the IB ends inside a TIMESTAMP */
    ib = ib_stream(&m, IB_PA);
    emit_nop(&ib, 0);
    emit_ts(&ib, ts + 16, 1, 0);
    at = r->pos;
    emit_ib(r, ib_va, 4);
    CHECK_FAULT(MEGPU_FAULT_IB_OVERRUN, ib_va + 4, MEGPU_FAULT_INFO_IN_IB);
    g_assert_cmphex(qtest_readq(m.qts, ts + 16), ==, 0);

    /* MMU: an IB packet writing where nothing is mapped */
    ib = ib_stream(&m, IB_PA);
    emit_write(&ib, 0x7000000, d, 2);
    at = r->pos;
    emit_ib(r, ib_va, ib.pos / 4);
    CHECK_FAULT(MEGPU_FAULT_MMU, 0x7000000,
                MEGPU_FAULT_INFO_IN_IB | MEGPU_FAULT_INFO_WRITE);

    /* BUS: ring packets to where no RAM is, write and read */
    at = r->pos;
    emit_write(r, NO_RAM_PA, d, 2);
    CHECK_FAULT(MEGPU_FAULT_BUS, NO_RAM_PA, MEGPU_FAULT_INFO_WRITE);
    at = r->pos;
    emit_copy(r, NO_RAM_PA + 0x10, DATA_PA, 4);
    CHECK_FAULT(MEGPU_FAULT_BUS, NO_RAM_PA + 0x10, 0);
    /* the device's own registers are not memory for the engines */
    at = r->pos;
    emit_write(r, m.bar.addr + MEGPU_REG_SCRATCH, d, 1);
    CHECK_FAULT(MEGPU_FAULT_BUS, m.bar.addr + MEGPU_REG_SCRATCH,
                MEGPU_FAULT_INFO_WRITE);
    g_assert_cmphex(rd(&m, MEGPU_REG_SCRATCH), ==, 0);
    /* a range running past the top of the address space */
    at = r->pos;
    emit_fill(r, 0xfffffffffffffff0ull, 0x20, 0);
    CHECK_FAULT(MEGPU_FAULT_BUS, 0xfffffffffffffff0ull,
                MEGPU_FAULT_INFO_WRITE);

    /* BAD_ARG: alignment and sizes */
    at = r->pos;
    emit_ts(r, ts + 4, 1, 0);
    CHECK_FAULT(MEGPU_FAULT_BAD_ARG, RING_PA(0) + at, 0);
    at = r->pos;
    emit_fill(r, DATA_PA, 6, 0);
    CHECK_FAULT(MEGPU_FAULT_BAD_ARG, RING_PA(0) + at, 0);
    at = r->pos;
    emit_copy(r, DATA_PA, DATA_PA + 0x100000, 64 * 1024 * 1024 + 1);
    CHECK_FAULT(MEGPU_FAULT_BAD_ARG, RING_PA(0) + at, 0);
    at = r->pos;
    emit_ib(r, ib_va, MEGPU_IB_MAX_DWORDS + 1);
    CHECK_FAULT(MEGPU_FAULT_BAD_ARG, RING_PA(0) + at, 0);
    at = r->pos;
    emit_setctx(r, PT_PA + 0x1000, 3);
    CHECK_FAULT(MEGPU_FAULT_BAD_ARG, RING_PA(0) + at, 0);
    at = r->pos;
    emit_signal(r, SEM_PA + 4, 1);
    CHECK_FAULT(MEGPU_FAULT_BAD_ARG, RING_PA(0) + at, 0);

    /* BAD_LENGTH: a packet that runs past the tail; resumes at the tail */
    at = r->pos;
    hdr(r, MEGPU_PKT_WRITE_DATA, 10, 0);
    put64(r, DATA_PA);
    put(r, 0x5a);
    kick(&m, 0);
    expect_fault(&m, 0, MEGPU_FAULT_BAD_LENGTH, RING_PA(0) + at, at, 0);
    eng_idle(&m, 0);
    g_assert_cmphex(qtest_readl(m.qts, DATA_PA), ==, 0);
    faults++;

    /* A fault record stays after FAULT_ACK until the next one. */
    g_assert_cmpuint(erd(&m, 0, MEGPU_ENG_FAULT_CODE), ==,
                     MEGPU_FAULT_BAD_LENGTH);
    g_assert_cmpuint(erd(&m, 0, MEGPU_ENG_FAULTS), ==, faults);

    /* BUS: a ring that is not in RAM faults on the header fetch */
    ewr(&m, 1, MEGPU_ENG_RING_BASE_LO, (uint32_t)NO_RAM_PA);
    ewr(&m, 1, MEGPU_ENG_RING_TAIL, 0x40);
    expect_fault(&m, 1, MEGPU_FAULT_BUS, NO_RAM_PA, 0, 0);
    g_assert_cmphex(erd(&m, 1, MEGPU_ENG_STATUS), ==, MEGPU_ENG_STATUS_IDLE);
    g_assert_cmphex(erd(&m, 1, MEGPU_ENG_RING_HEAD), ==, 0x40);
#undef CHECK_FAULT
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

    /* System reset while an engine waits. */
    emit_wait(&m.ring[0], SEM_PA, 100);
    kick(&m, 0);
    eng_poll(&m, 0, MEGPU_ENG_STATUS_WAIT_SEM);
    qtest_system_reset(m.qts);
    /* the reset cleared the BARs: map BAR0 again */
    qpci_device_enable(m.dev);
    m.bar = qpci_iomap(m.dev, MEGPU_BAR_MMIO, NULL);
    g_assert_cmphex(rd(&m, MEGPU_REG_ID), ==, MEGPU_ID_MAGIC);
    g_assert_cmphex(erd(&m, 0, MEGPU_ENG_STATUS), ==, MEGPU_ENG_STATUS_IDLE);
    g_assert_cmphex(erd(&m, 0, MEGPU_ENG_RING_SIZE), ==, 0);
    ring_setup(&m, 0);
    emit_ts(&m.ring[0], DATA_PA + 24, 6, 0);
    kick(&m, 0);
    eng_idle(&m, 0);
    g_assert_cmpuint(qtest_readq(m.qts, DATA_PA + 24), ==, 6);
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

/* ---- posted writes, flushes, idle (seed 004) ---- */

/*
 * The write model is deterministic (Documentation/megpu-hw.rst): writes
 * move on with the issuing engine's packets and writes, with virtual
 * time (which qtest only moves in clock_step) and when something waits
 * for them. So what a read finds after a TIMESTAMP depends only on the
 * seed and the packets, and the counts below are the same on any host.
 * HOLD: only virtual time moves writes; the test steps it.
 */
#define RELAXED             "write-mode=relaxed,write-seed=0x4004"
#define HOLD                RELAXED ",x-hold-writes=on"
#define TICK_NS             (10 * 1000)
#define TRIES               20
#define FILL_PAGES          16
#define FILL_BYTES          (FILL_PAGES * 0x1000u)

static void emit_idle_signal(Stream *st)
{
    hdr(st, MEGPU_PKT_IDLE_SIGNAL, MEGPU_PKT_IDLE_SIGNAL_COUNT, 0);
}

/* Host flush: start it and wait for DONE; FLUSH_SEQ grows by one. */
static void host_flush(Megpu *m)
{
    uint32_t seq = rd(m, MEGPU_REG_FLUSH_SEQ);

    wr(m, MEGPU_REG_FLUSH_STATUS, MEGPU_FLUSH_STATUS_DONE);
    wr(m, MEGPU_REG_FLUSH, 1);
    for (unsigned us = 0;
         !(rd(m, MEGPU_REG_FLUSH_STATUS) & MEGPU_FLUSH_STATUS_DONE);
         us += 100) {
        g_assert_cmpuint(us, <, POLL_TIMEOUT_US);
        g_usleep(100);
    }
    g_assert_cmpuint(rd(m, MEGPU_REG_FLUSH_SEQ), ==, seq + 1);
    wr(m, MEGPU_REG_FLUSH_STATUS, MEGPU_FLUSH_STATUS_DONE);
    wr(m, MEGPU_REG_MISC_IRQ_STATUS, MEGPU_MISC_IRQ_FLUSH_DONE);
}

/*
 * With x-hold-writes: step virtual time until FLUSH_SEQ reaches @seq
 * (host flushes do not move held writes; time does).
 */
static void clock_until_flushed(Megpu *m, uint32_t seq)
{
    for (unsigned i = 0; rd(m, MEGPU_REG_FLUSH_SEQ) != seq; i++) {
        g_assert_cmpuint(i, <, 10000);
        qtest_clock_step(m->qts, 10 * TICK_NS);
    }
}

static void hold_flush(Megpu *m)
{
    uint32_t seq = rd(m, MEGPU_REG_FLUSH_SEQ);

    wr(m, MEGPU_REG_FLUSH, 1);
    clock_until_flushed(m, seq + 1);
    wr(m, MEGPU_REG_FLUSH_STATUS, MEGPU_FLUSH_STATUS_DONE);
    wr(m, MEGPU_REG_MISC_IRQ_STATUS, MEGPU_MISC_IRQ_FLUSH_DONE);
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
    for (unsigned i = 0; i < REPLAY_TRIES; i++) {
        g_test_message("try %u: fresh pages 0x%04x (seed 0x5005: 0x%04x)",
                       i + 1, fresh[0][i], fresh[2][i]);
    }
}

/* C references of the image kernels (include/megpu_hw.h). */
static uint32_t ref_chan(uint32_t px, unsigned c)
{
    return (px >> (8 * c)) & 0xff;
}

static void ref_blur(const uint32_t *src, uint32_t *dst, int w, int h,
                     int pitch)
{
    for (int y = 0; y < h; y++) {
        for (int x = 0; x < w; x++) {
            uint32_t out = 0;

            for (unsigned c = 0; c < 4; c++) {
                uint32_t sum = 0;

                for (int dy = -1; dy <= 1; dy++) {
                    for (int dx = -1; dx <= 1; dx++) {
                        int sx = MIN(MAX(x + dx, 0), w - 1);
                        int sy = MIN(MAX(y + dy, 0), h - 1);

                        sum += ref_chan(src[sy * pitch + sx], c);
                    }
                }
                out |= (sum / 9) << (8 * c);
            }
            dst[y * pitch + x] = out;
        }
    }
}

static void ref_sepia(const uint32_t *src, uint32_t *dst, int w, int h,
                      int pitch)
{
    for (int y = 0; y < h; y++) {
        for (int x = 0; x < w; x++) {
            uint32_t p = src[y * pitch + x];
            uint32_t r = ref_chan(p, 0), g = ref_chan(p, 1);
            uint32_t b = ref_chan(p, 2);

            dst[y * pitch + x] =
                MIN(255, (393 * r + 769 * g + 189 * b) / 1000) |
                MIN(255, (349 * r + 686 * g + 168 * b) / 1000) << 8 |
                MIN(255, (272 * r + 534 * g + 131 * b) / 1000) << 16 |
                (p & 0xff000000u);
        }
    }
}

#define IMG_W       13
#define IMG_H       7
#define IMG_PITCH   16
#define IMG_PX      (IMG_H * IMG_PITCH)
#define IMG_PAD     0x5a5a5a5au

static void img_put(Megpu *m, uint64_t pa, const uint32_t *px)
{
    for (unsigned i = 0; i < IMG_PX; i++) {
        qtest_writel(m->qts, pa + i * 4, px[i]);
    }
}

/* The kernel's output, with the pitch padding untouched. */
static void img_check(Megpu *m, uint64_t pa, const uint32_t *ref)
{
    uint32_t got[IMG_PX];

    qtest_memread(m->qts, pa, got, sizeof(got));
    for (unsigned y = 0; y < IMG_H; y++) {
        for (unsigned x = 0; x < IMG_PITCH; x++) {
            g_assert_cmphex(le32_to_cpu(got[y * IMG_PITCH + x]), ==,
                            x < IMG_W ? ref[y * IMG_PITCH + x] : IMG_PAD);
        }
    }
}

static void image_dispatch(Megpu *m, unsigned e, uint32_t kernel,
                           uint64_t src, uint64_t dst, uint32_t gx,
                           uint32_t gy)
{
    uint64_t ptr[4] = { src, dst, 0, 0 };
    uint32_t param[3] = { IMG_W, IMG_H, IMG_PITCH };
    uint64_t args = DATA_PA + 0xff000 + e * 0x100;

    /* n is not used by image kernels */
    write_kargs(m, args, ptr, 0, param);
    emit_dispatch(&m->ring[e], kernel, args, gx, gy, 4, 3);
    kick(m, e);
    eng_idle(m, e);
}

/*
 * BLUR3X3 and SEPIA against the references on an odd-sized image with
 * pitch > width, on gfx, compute and video; then the seed's chain:
 * blur, wait for idle, flush, sepia on another engine, flush.
 */
static void test_image_kernels(void)
{
    const uint64_t src = DATA_PA, tmp = DATA_PA + 0x1000;
    const uint64_t dst = DATA_PA + 0x2000;
    uint32_t in[IMG_PX], blur[IMG_PX], sepia[IMG_PX], chain[IMG_PX];
    uint32_t pad[IMG_PX];
    GRand *rand = g_rand_new_with_seed(4004);
    Megpu m;

    for (unsigned i = 0; i < IMG_PX; i++) {
        in[i] = g_rand_int(rand);
        pad[i] = IMG_PAD;
    }
    /* saturated and dark pixels for the min(255, ...) and the edges */
    in[0] = 0xffffffff;
    in[IMG_PITCH + 1] = 0x80ffffff;
    in[IMG_PX - IMG_PITCH + IMG_W - 1] = 0;
    g_rand_free(rand);
    memcpy(blur, pad, sizeof(pad));
    memcpy(sepia, pad, sizeof(pad));
    memcpy(chain, pad, sizeof(pad));
    ref_blur(in, blur, IMG_W, IMG_H, IMG_PITCH);
    ref_sepia(in, sepia, IMG_W, IMG_H, IMG_PITCH);
    ref_sepia(blur, chain, IMG_W, IMG_H, IMG_PITCH);

    megpu_start_engines(&m, 4);
    for (unsigned e = 0; e < 4; e++) {
        if (e == MEGPU_ENGINE_COPY) {
            continue;
        }
        img_put(&m, src, in);
        img_put(&m, dst, pad);
        /* a grid larger than the image: items outside do nothing */
        image_dispatch(&m, e, MEGPU_KERNEL_BLUR3X3, src, dst, IMG_W + 3,
                       IMG_H + 2);
        img_check(&m, dst, blur);
        img_put(&m, dst, pad);
        image_dispatch(&m, e, MEGPU_KERNEL_SEPIA, src, dst, IMG_W, IMG_H);
        img_check(&m, dst, sepia);
    }

    /* Bad image arguments fault BAD_ARG. */
    {
        static const uint32_t bad[][4] = {
            /* width, height, pitch, src offset */
            { 13, 7, 12, 0 },                   /* pitch < width */
            { 0x10000, 0x10000, 0x10000, 0 },   /* more than 4 GiB */
            { 0xffffffff, 0xffffffff, 0xffffffff, 0 },
            { 13, 7, 16, 2 },                   /* misaligned */
        };
        Stream *r = &m.ring[0];

        for (unsigned i = 0; i < ARRAY_SIZE(bad); i++) {
            uint64_t ptr[4] = { src + bad[i][3], dst, 0, 0 };
            uint64_t args = DATA_PA + 0xfe000;
            uint32_t at = r->pos;

            write_kargs(&m, args, ptr, 0, bad[i]);
            emit_dispatch(r, MEGPU_KERNEL_SEPIA, args, 4, 4, 4, 4);
            kick(&m, 0);
            expect_fault(&m, 0, MEGPU_FAULT_BAD_ARG, RING_PA(0) + at, at, 0);
            eng_idle(&m, 0);
        }
    }
    megpu_stop_engines(&m);

    /* FIG. 5 in relaxed mode: blur -> idle -> flush -> sepia -> flush */
    megpu_start_engines_opts(&m, 4, RELAXED);
    for (unsigned i = 0; i < 5; i++) {
        img_put(&m, src, in);
        img_put(&m, tmp, pad);
        img_put(&m, dst, pad);
        image_dispatch(&m, 0, MEGPU_KERNEL_BLUR3X3, src, tmp, IMG_W, IMG_H);
        host_flush(&m);
        image_dispatch(&m, 3, MEGPU_KERNEL_SEPIA, tmp, dst, IMG_W, IMG_H);
        host_flush(&m);
        img_check(&m, tmp, blur);
        img_check(&m, dst, chain);
    }
    megpu_stop_engines(&m);
}

/*
 * The fuzz run is reproducible: a fixed seed, or MEGPU_FUZZ_SEED to try
 * others.
 */
static GRand *fuzz_rand;

static uint32_t rnd(void)
{
    return g_rand_int(fuzz_rand);
}

static uint32_t rnd_range(uint32_t lo, uint32_t hi)
{
    return g_rand_int_range(fuzz_rand, lo, hi);
}

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
    fuzz_rand = g_rand_new_with_seed(seed);
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
    g_rand_free(fuzz_rand);
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    qtest_add_func("/megpu/identity", test_identity);
    qtest_add_func("/megpu/bad-engine-count", test_bad_engine_count);
    qtest_add_func("/megpu/scratch-and-reset", test_scratch_and_reset);
    qtest_add_func("/megpu/msix", test_msix);
    qtest_add_func("/megpu/engine/regs", test_engine_regs);
    qtest_add_func("/megpu/engine/ring-wrap", test_ring_wrap);
    qtest_add_func("/megpu/engine/packets-per-type", test_packets_per_type);
    qtest_add_func("/megpu/engine/kernels", test_kernels);
    qtest_add_func("/megpu/engine/mmu-ib", test_mmu_ib);
    qtest_add_func("/megpu/engine/faults", test_faults);
    qtest_add_func("/megpu/engine/semaphores", test_semaphores);
    qtest_add_func("/megpu/engine/delay", test_delay);
    qtest_add_func("/megpu/engine/reset", test_engine_reset);
    qtest_add_func("/megpu/engine/teardown-busy", test_teardown_busy);
    qtest_add_func("/megpu/engine/image-kernels", test_image_kernels);
    qtest_add_func("/megpu/writes/stale", test_writes_stale);
    qtest_add_func("/megpu/writes/strict", test_writes_strict);
    qtest_add_func("/megpu/writes/host-flush", test_host_flush);
    qtest_add_func("/megpu/writes/flush-packet", test_flush_packet);
    qtest_add_func("/megpu/writes/idle", test_idle);
    qtest_add_func("/megpu/writes/order", test_writes_order);
    qtest_add_func("/megpu/writes/stall", test_writes_stall);
    qtest_add_func("/megpu/writes/mode-switch", test_write_mode_switch);
    qtest_add_func("/megpu/writes/reset", test_writes_reset);
    qtest_add_func("/megpu/writes/replay", test_writes_replay);
    qtest_add_func("/megpu/engine/fuzz", test_fuzz);
    return g_test_run();
}
