/*
 * QTest for the megpu device: identification, scratch, MSI-X, reset.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */

#include "qemu/osdep.h"
#include "libqtest.h"
#include "libqos/pci-pc.h"
#include "hw/pci/pci_regs.h"
#include "hw/misc/megpu_hw.h"

#define MEGPU_DEVFN         QPCI_DEVFN(4, 0)
#define MSI_TARGET_ADDR     0x100000ull
#define MSI_TARGET_DATA     0x5a5a0000u

typedef struct {
    QTestState *qts;
    QPCIBus *bus;
    QPCIDevice *dev;
    QPCIBar bar;
    unsigned engines;
} Megpu;

static void megpu_start(Megpu *m, unsigned engines)
{
    m->engines = engines;
    m->qts = qtest_initf("-machine q35 -nodefaults "
                         "-device megpu,addr=04.0,engines=%u", engines);
    m->bus = qpci_new_pc(m->qts, NULL);
    m->dev = qpci_device_find(m->bus, MEGPU_DEVFN);
    g_assert_nonnull(m->dev);
    qpci_device_enable(m->dev);
    m->bar = qpci_iomap(m->dev, MEGPU_BAR_MMIO, NULL);
}

static void megpu_stop(Megpu *m)
{
    qpci_iounmap(m->dev, m->bar);
    g_free(m->dev);
    qpci_free_pc(m->bus);
    qtest_quit(m->qts);
}

static uint32_t rd(Megpu *m, uint32_t reg)
{
    return qpci_io_readl(m->dev, m->bar, reg);
}

static void wr(Megpu *m, uint32_t reg, uint32_t val)
{
    qpci_io_writel(m->dev, m->bar, reg, val);
}

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
    qpci_device_enable(m.dev);
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

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    qtest_add_func("/megpu/identity", test_identity);
    qtest_add_func("/megpu/bad-engine-count", test_bad_engine_count);
    qtest_add_func("/megpu/scratch-and-reset", test_scratch_and_reset);
    qtest_add_func("/megpu/msix", test_msix);
    return g_test_run();
}
