/*
 * Helpers shared by the megpu qtests: start the device, registers,
 * rings and packet streams (an emitter per packet), bounded polls, MSI-X,
 * faults, the GPU MMU, the host flush. Guest-physical layout of the q35
 * machine's RAM used by the tests.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#ifndef MEGPU_QTEST_H
#define MEGPU_QTEST_H

#include "qemu/osdep.h"
#include "qemu/bswap.h"
#include "libqtest.h"
#include "libqos/pci-pc.h"
#include "hw/pci/pci_regs.h"
#include "hw/misc/megpu_hw.h"

#define MEGPU_DEVFN         QPCI_DEVFN(4, 0)
#define MSI_TARGET_ADDR     0x100000ull
#define MSI_TARGET_DATA     0x5a5a0000u

/* Guest-physical layout (256 MiB of RAM) */
#define RING_PA(n)          (0x01000000ull + (n) * 0x100000ull)
#define IB_PA               0x02000000ull
#define PT_PA               0x03000000ull   /* page directory, then tables */
#define DATA_PA             0x04000000ull
#define SEM_PA              0x05000000ull
#define BIG_PA              0x06000000ull
#define NO_RAM_PA           0x40000000ull   /* nothing decodes here */
#define RING_SIZE           0x1000u

/* how long an engine gets to do something before the test fails */
#define POLL_TIMEOUT_US     (5 * 1000 * 1000)

#define ENG(n, reg)         (MEGPU_ENGINE_BASE(n) + (reg))

/* Where packets are written: an engine's ring (wraps) or a linear IB. */
typedef struct {
    QTestState *qts;
    uint64_t base;
    uint32_t size;              /* ring size; 0 for a linear buffer */
    uint32_t pos;               /* bytes */
} Stream;

typedef struct {
    QTestState *qts;
    QPCIBus *bus;
    QPCIDevice *dev;
    QPCIBar bar;
    unsigned engines;
    Stream ring[MEGPU_MAX_ENGINES];
    uint64_t pt_next;           /* next free level-2 table */
} Megpu;

/*
 * @opts: more -device properties. The tests of engine function run in
 * strict write mode, where data is in memory when the engine is idle;
 * the posted-write tests choose relaxed mode and a seed.
 */
static inline void megpu_start_opts(Megpu *m, unsigned engines,
                                    const char *opts)
{
    m->engines = engines;
    m->qts = qtest_initf("-machine q35 -nodefaults -m 256M "
                         "-device megpu,addr=04.0,engines=%u,%s", engines,
                         opts);
    m->bus = qpci_new_pc(m->qts, NULL);
    m->dev = qpci_device_find(m->bus, MEGPU_DEVFN);
    g_assert_nonnull(m->dev);
    qpci_device_enable(m->dev);
    m->bar = qpci_iomap(m->dev, MEGPU_BAR_MMIO, NULL);
}

/*
 * The device in a hot-plug slot: behind a PCIe root port (returned,
 * devfn 05.0, its own bus 1, a window over the device's BAR), id gpu0.
 * With @native the slot is the port's own (native PCIe hot-plug, not
 * ACPI's): the guest's Slot Control decides as it does on hardware.
 */
static inline QPCIDevice *megpu_start_in_slot(Megpu *m, unsigned engines,
                                              bool native, const char *opts)
{
    QPCIDevice *port;
    uint64_t bar_pa;

    m->engines = engines;
    m->qts = qtest_initf("-machine q35 -nodefaults -m 256M "
                         "-global ICH9-LPC.acpi-pci-hotplug-with-bridge-"
                         "support=%s "
                         "-device pcie-root-port,id=rp0,bus=pcie.0,"
                         "addr=05.0,chassis=1,slot=1 "
                         "-device megpu,bus=rp0,id=gpu0,engines=%u,%s",
                         native ? "off" : "on", engines, opts);
    m->bus = qpci_new_pc(m->qts, NULL);
    port = qpci_device_find(m->bus, QPCI_DEVFN(5, 0));
    g_assert_nonnull(port);
    qpci_config_writeb(port, PCI_PRIMARY_BUS, 0);
    qpci_config_writeb(port, PCI_SECONDARY_BUS, 1);
    qpci_config_writeb(port, PCI_SUBORDINATE_BUS, 1);
    /* bus 1, device 0: the bus number sits above devfn in CONFIG_ADDRESS */
    m->dev = qpci_device_find(m->bus, 1 << 8);
    g_assert_nonnull(m->dev);
    g_assert_cmphex(qpci_config_readw(m->dev, PCI_VENDOR_ID), ==,
                    MEGPU_PCI_VENDOR_ID);
    m->bar = qpci_iomap(m->dev, MEGPU_BAR_MMIO, NULL);
    bar_pa = qpci_config_readl(m->dev, PCI_BASE_ADDRESS_0 +
                               4 * MEGPU_BAR_MMIO) & ~0xfull;
    qpci_config_writew(port, PCI_MEMORY_BASE, (bar_pa >> 16) & 0xfff0);
    qpci_config_writew(port, PCI_MEMORY_LIMIT,
                       ((bar_pa + MEGPU_MMIO_SIZE - 1) >> 16) & 0xfff0);
    qpci_device_enable(port);
    qpci_device_enable(m->dev);
    return port;
}

/* Gone from its bus, and QEMU still answers. */
static inline void megpu_assert_gone(Megpu *m)
{
    QDict *resp;

    g_assert_cmphex(qpci_config_readw(m->dev, PCI_VENDOR_ID), ==, 0xffff);
    resp = qtest_qmp(m->qts, "{ 'execute': 'query-status' }");
    g_assert(qdict_haskey(resp, "return"));
    qobject_unref(resp);
}

/*
 * What the guest itself may do to a hot-plug slot: power it off (power
 * controller and indicator off in the port's Slot Control), which
 * unplugs the device at once, without the host.
 */
static inline void megpu_slot_power_off(QPCIDevice *port)
{
    uint8_t cap = qpci_find_capability(port, PCI_CAP_ID_EXP, 0);
    uint16_t ctl;

    g_assert_cmpuint(cap, !=, 0);
    ctl = qpci_config_readw(port, cap + PCI_EXP_SLTCTL);
    ctl = (ctl & ~PCI_EXP_SLTCTL_PIC) | PCI_EXP_SLTCTL_PWR_IND_OFF |
          PCI_EXP_SLTCTL_PWR_OFF;
    qpci_config_writew(port, cap + PCI_EXP_SLTCTL, ctl);
}

static inline void megpu_start(Megpu *m, unsigned engines)
{
    megpu_start_opts(m, engines, "write-mode=strict");
}

static inline void megpu_stop(Megpu *m)
{
    qpci_iounmap(m->dev, m->bar);
    g_free(m->dev);
    qpci_free_pc(m->bus);
    qtest_quit(m->qts);
}

static inline uint32_t rd(Megpu *m, uint32_t reg)
{
    return qpci_io_readl(m->dev, m->bar, reg);
}

static inline void wr(Megpu *m, uint32_t reg, uint32_t val)
{
    qpci_io_writel(m->dev, m->bar, reg, val);
}

static inline uint32_t erd(Megpu *m, unsigned n, uint32_t reg)
{
    return rd(m, ENG(n, reg));
}

static inline void ewr(Megpu *m, unsigned n, uint32_t reg, uint32_t val)
{
    wr(m, ENG(n, reg), val);
}

static inline uint64_t erd64(Megpu *m, unsigned n, uint32_t lo)
{
    return erd(m, n, lo) | (uint64_t)erd(m, n, lo + 4) << 32;
}

static inline void put(Stream *st, uint32_t dw)
{
    qtest_writel(st->qts, st->base + st->pos, dw);
    st->pos += 4;
    if (st->size) {
        st->pos &= st->size - 1;
    }
}

static inline void put64(Stream *st, uint64_t v)
{
    put(st, v);
    put(st, v >> 32);
}

static inline void hdr(Stream *st, uint32_t op, uint32_t count, uint32_t flags)
{
    put(st, MEGPU_PKT_HEADER(op, count, flags));
}

static inline void emit_nop(Stream *st, unsigned count)
{
    hdr(st, MEGPU_PKT_NOP, count, 0);
    for (unsigned i = 0; i < count; i++) {
        put(st, 0xdead0000 + i);
    }
}

static inline void emit_ib(Stream *st, uint64_t va, uint32_t dwords)
{
    hdr(st, MEGPU_PKT_IB, MEGPU_PKT_IB_COUNT, 0);
    put64(st, va);
    put(st, dwords);
}

static inline void emit_write(Stream *st, uint64_t addr, const uint32_t *d,
                       unsigned n)
{
    hdr(st, MEGPU_PKT_WRITE_DATA, 2 + n, 0);
    put64(st, addr);
    for (unsigned i = 0; i < n; i++) {
        put(st, d[i]);
    }
}

static inline void emit_ts(Stream *st, uint64_t addr, uint64_t val,
                           uint32_t flags)
{
    hdr(st, MEGPU_PKT_TIMESTAMP, MEGPU_PKT_TIMESTAMP_COUNT, flags);
    put64(st, addr);
    put64(st, val);
}

static inline void emit_dispatch(Stream *st, uint32_t kernel, uint64_t args,
                          uint32_t gx, uint32_t gy, uint32_t lx, uint32_t ly)
{
    hdr(st, MEGPU_PKT_DISPATCH, MEGPU_PKT_DISPATCH_COUNT, 0);
    put(st, kernel);
    put64(st, args);
    put(st, gx);
    put(st, gy);
    put(st, lx);
    put(st, ly);
}

static inline void emit_setctx(Stream *st, uint64_t pt, uint32_t ctx)
{
    hdr(st, MEGPU_PKT_SET_CONTEXT, MEGPU_PKT_SET_CONTEXT_COUNT, 0);
    put64(st, pt);
    put(st, ctx);
}

static inline void emit_signal(Stream *st, uint64_t addr, uint64_t val)
{
    hdr(st, MEGPU_PKT_SIGNAL, MEGPU_PKT_SIGNAL_COUNT, 0);
    put64(st, addr);
    put64(st, val);
}

static inline void emit_wait(Stream *st, uint64_t addr, uint64_t val)
{
    hdr(st, MEGPU_PKT_WAIT, MEGPU_PKT_WAIT_COUNT, 0);
    put64(st, addr);
    put64(st, val);
}

static inline Stream *ring_setup(Megpu *m, unsigned n)
{
    Stream *r = &m->ring[n];

    ewr(m, n, MEGPU_ENG_RING_BASE_LO, (uint32_t)RING_PA(n));
    ewr(m, n, MEGPU_ENG_RING_BASE_HI, RING_PA(n) >> 32);
    ewr(m, n, MEGPU_ENG_RING_SIZE, RING_SIZE);
    g_assert_cmphex(erd(m, n, MEGPU_ENG_RING_SIZE), ==, RING_SIZE);
    *r = (Stream) {
        .qts = m->qts, .base = RING_PA(n), .size = RING_SIZE, .pos = 0,
    };
    return r;
}

static inline void kick(Megpu *m, unsigned n)
{
    ewr(m, n, MEGPU_ENG_RING_TAIL, m->ring[n].pos);
}

static inline Stream ib_stream(Megpu *m, uint64_t pa)
{
    return (Stream) { .qts = m->qts, .base = pa, .size = 0, .pos = 0 };
}

/* Bounded wait until STATUS has one of @mask. */
static inline uint32_t eng_poll(Megpu *m, unsigned n, uint32_t mask)
{
    for (unsigned us = 0; ; us += 1000) {
        uint32_t st = erd(m, n, MEGPU_ENG_STATUS);

        if (st & mask) {
            return st;
        }
        if (us >= POLL_TIMEOUT_US) {
            g_error("engine %u: status 0x%x never showed 0x%x (head 0x%x "
                    "tail 0x%x fault %u)", n, st, mask,
                    erd(m, n, MEGPU_ENG_RING_HEAD),
                    erd(m, n, MEGPU_ENG_RING_TAIL),
                    erd(m, n, MEGPU_ENG_FAULT_CODE));
        }
        g_usleep(1000);
    }
}

static inline void eng_idle(Megpu *m, unsigned n)
{
    uint32_t st = eng_poll(m, n, MEGPU_ENG_STATUS_IDLE |
                           MEGPU_ENG_STATUS_FAULTED);

    if (st & MEGPU_ENG_STATUS_FAULTED) {
        g_error("engine %u faulted: code %u addr 0x%" PRIx64 " head 0x%x "
                "info 0x%x", n, erd(m, n, MEGPU_ENG_FAULT_CODE),
                erd64(m, n, MEGPU_ENG_FAULT_ADDR_LO),
                erd(m, n, MEGPU_ENG_FAULT_HEAD),
                erd(m, n, MEGPU_ENG_FAULT_INFO));
    }
    g_assert_cmphex(erd(m, n, MEGPU_ENG_RING_HEAD), ==, m->ring[n].pos);
}

/* Bounded wait until RESETTING is gone. */
static inline void eng_reset_done(Megpu *m, unsigned n)
{
    for (unsigned us = 0; ; us += 1000) {
        if (!(erd(m, n, MEGPU_ENG_STATUS) & MEGPU_ENG_STATUS_RESETTING)) {
            return;
        }
        g_assert_cmpuint(us, <, POLL_TIMEOUT_US);
        g_usleep(1000);
    }
}

static inline void eng_reset(Megpu *m, unsigned n)
{
    ewr(m, n, MEGPU_ENG_CONTROL, MEGPU_ENG_CTRL_RESET);
    eng_reset_done(m, n);
    m->ring[n].pos = 0;
}

static inline void msix_poll_pending(Megpu *m, unsigned v)
{
    /* engine interrupts go out from a bottom half: give it a moment */
    for (unsigned us = 0; !qpci_msix_pending(m->dev, v); us += 1000) {
        g_assert_cmpuint(us, <, POLL_TIMEOUT_US);
        g_usleep(1000);
    }
}

/* Deliver a masked vector's pending message (to RAM), then mask again. */
static inline void msix_clear_pending(Megpu *m, unsigned v)
{
    uint64_t e = m->dev->msix_table_off + v * PCI_MSIX_ENTRY_SIZE;
    QPCIBar bar = m->dev->msix_table_bar;

    qpci_io_writel(m->dev, bar, e + PCI_MSIX_ENTRY_LOWER_ADDR,
                   MSI_TARGET_ADDR);
    qpci_io_writel(m->dev, bar, e + PCI_MSIX_ENTRY_UPPER_ADDR, 0);
    qpci_io_writel(m->dev, bar, e + PCI_MSIX_ENTRY_DATA, MSI_TARGET_DATA);
    qpci_io_writel(m->dev, bar, e + PCI_MSIX_ENTRY_VECTOR_CTRL, 0);
    qpci_io_writel(m->dev, bar, e + PCI_MSIX_ENTRY_VECTOR_CTRL,
                   PCI_MSIX_ENTRY_CTRL_MASKBIT);
    g_assert_false(qpci_msix_pending(m->dev, v));
}

/* The engine ran out of work, which raised IDLE: acknowledge it. */
static inline void eng_ack_idle(Megpu *m, unsigned n)
{
    g_assert_cmphex(erd(m, n, MEGPU_ENG_IRQ_STATUS) & MEGPU_ENG_IRQ_IDLE,
                    !=, 0);
    msix_poll_pending(m, MEGPU_VEC_ENGINE(n));
    msix_clear_pending(m, MEGPU_VEC_ENGINE(n));
    ewr(m, n, MEGPU_ENG_IRQ_STATUS, MEGPU_ENG_IRQ_IDLE);
}

/*
 * The engine must fault with exactly this record, show it in IRQ_STATUS
 * and the MSI-X PBA, then resume after FAULT_ACK.
 */
static inline void expect_fault(Megpu *m, unsigned n, uint32_t code,
                                uint64_t addr, uint32_t head, uint32_t info)
{
    uint32_t faults;

    eng_poll(m, n, MEGPU_ENG_STATUS_FAULTED);
    g_assert_cmpuint(erd(m, n, MEGPU_ENG_FAULT_CODE), ==, code);
    g_assert_cmphex(erd64(m, n, MEGPU_ENG_FAULT_ADDR_LO), ==, addr);
    g_assert_cmphex(erd(m, n, MEGPU_ENG_FAULT_HEAD), ==, head);
    g_assert_cmphex(erd(m, n, MEGPU_ENG_FAULT_INFO), ==, info);
    g_assert_cmphex(erd(m, n, MEGPU_ENG_IRQ_STATUS) & MEGPU_ENG_IRQ_FAULT,
                    !=, 0);
    g_assert_cmphex(erd(m, n, MEGPU_ENG_STATUS) & MEGPU_ENG_STATUS_IDLE,
                    ==, 0);
    msix_poll_pending(m, MEGPU_VEC_ENGINE(n));
    msix_clear_pending(m, MEGPU_VEC_ENGINE(n));
    ewr(m, n, MEGPU_ENG_IRQ_STATUS, MEGPU_ENG_IRQ_FAULT);
    g_assert_cmphex(erd(m, n, MEGPU_ENG_IRQ_STATUS) & MEGPU_ENG_IRQ_FAULT,
                    ==, 0);
    faults = erd(m, n, MEGPU_ENG_FAULTS);
    g_assert_cmpuint(faults, >, 0);
    ewr(m, n, MEGPU_ENG_CONTROL, MEGPU_ENG_CTRL_FAULT_ACK);
    g_assert_cmphex(erd(m, n, MEGPU_ENG_STATUS) & MEGPU_ENG_STATUS_FAULTED,
                    ==, 0);
    g_assert_cmpuint(erd(m, n, MEGPU_ENG_FAULTS), ==, faults);
}

/* Start with MSI-X on (vectors masked, so pending bits show) and rings. */
static inline void megpu_start_engines_opts(Megpu *m, unsigned engines,
                                    const char *opts)
{
    megpu_start_opts(m, engines, opts);
    qpci_msix_enable(m->dev);
    for (unsigned n = 0; n < engines; n++) {
        ring_setup(m, n);
    }
    qtest_memset(m->qts, PT_PA, 0, MEGPU_PT_SIZE);
    m->pt_next = PT_PA + MEGPU_PT_SIZE;
}

static inline void megpu_start_engines(Megpu *m, unsigned engines)
{
    megpu_start_engines_opts(m, engines, "write-mode=strict");
}

static inline void megpu_stop_engines(Megpu *m)
{
    qpci_msix_disable(m->dev);
    megpu_stop(m);
}

/* Point the PTE of @va at @pte, creating its level-2 table if needed. */
static inline void mmu_set_pte(Megpu *m, uint64_t va, uint64_t pte)
{
    uint64_t pde_addr = PT_PA + MEGPU_PDE_INDEX(va) * 8;
    uint64_t pde = qtest_readq(m->qts, pde_addr);

    if (!(pde & MEGPU_PTE_VALID)) {
        pde = m->pt_next | MEGPU_PTE_VALID;
        qtest_memset(m->qts, m->pt_next, 0, MEGPU_PT_SIZE);
        m->pt_next += MEGPU_PT_SIZE;
        qtest_writeq(m->qts, pde_addr, pde);
    }
    qtest_writeq(m->qts, (pde & MEGPU_PTE_ADDR_MASK) +
                 MEGPU_PTE_INDEX(va) * 8, pte);
}

static inline void mmu_map(Megpu *m, uint64_t va, uint64_t pa, uint64_t bytes,
                    bool write)
{
    for (uint64_t o = 0; o < bytes; o += MEGPU_PAGE_SIZE) {
        mmu_set_pte(m, va + o, (pa + o) | MEGPU_PTE_VALID |
                    (write ? MEGPU_PTE_WRITE : 0));
    }
}

static inline void write_kargs(Megpu *m, uint64_t pa, const uint64_t ptr[4],
                        uint32_t n, const uint32_t param[3])
{
    for (unsigned i = 0; i < 4; i++) {
        qtest_writeq(m->qts, pa + MEGPU_KARGS_PTR(i), ptr[i]);
    }
    qtest_writel(m->qts, pa + MEGPU_KARGS_N, n);
    for (unsigned i = 0; i < 3; i++) {
        qtest_writel(m->qts, pa + MEGPU_KARGS_PARAM(i), param[i]);
    }
}

/* Bounded wait until the 64-bit word at @pa holds @val. */
static inline void mem_poll64(Megpu *m, uint64_t pa, uint64_t val)
{
    for (unsigned us = 0; qtest_readq(m->qts, pa) != val; us += 100) {
        g_assert_cmpuint(us, <, POLL_TIMEOUT_US);
        g_usleep(100);
    }
}

static inline void emit_flush(Stream *st)
{
    hdr(st, MEGPU_PKT_FLUSH, MEGPU_PKT_FLUSH_COUNT, 0);
}

static inline void emit_copy(Stream *st, uint64_t src, uint64_t dst,
                             uint32_t bytes)
{
    hdr(st, MEGPU_PKT_COPY, MEGPU_PKT_COPY_COUNT, 0);
    put64(st, src);
    put64(st, dst);
    put(st, bytes);
}

static inline void emit_fill(Stream *st, uint64_t dst, uint32_t bytes,
                             uint32_t val)
{
    hdr(st, MEGPU_PKT_FILL, MEGPU_PKT_FILL_COUNT, 0);
    put64(st, dst);
    put(st, bytes);
    put(st, val);
}

/* A packet of @op with a well-formed count and harmless arguments. */
static inline void emit_any(Stream *st, uint32_t op, uint64_t scratch)
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

/*
 * Relaxed write mode with the seed the qtests use (seed 004): see
 * megpu-writes-test.c and Documentation/megpu-hw.rst.
 */
#define RELAXED             "write-mode=relaxed,write-seed=0x4004"

/* Host flush: start it and wait for DONE; FLUSH_SEQ grows by one. */
static inline void host_flush(Megpu *m)
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

/* Benchmarks (-m perf): engine @e's busy time so far (ns, ENG_BUSY_NS) */
static inline uint64_t eng_busy_ns(Megpu *m, unsigned e)
{
    return erd64(m, e, MEGPU_ENG_BUSY_NS_LO);   /* _LO latches _HI */
}

/* qsort order of uint64_t: benchmarks take medians and fastest runs */
static inline int perf_cmp(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

    return x < y ? -1 : x > y;
}

/*
 * Between the timed runs of a benchmark (-m perf): land the queued
 * writes and step virtual time past the write model's timer. Under
 * qtest virtual time stands still, so a timer armed for the next tick
 * (a drained engine's pending writes) would never fire and would wake
 * the main loop every 10 us for the rest of the test, on a core the
 * engines need.
 */
static inline void perf_settle(Megpu *m)
{
    host_flush(m);
    qtest_clock_step(m->qts, 1000 * 1000);
}

/* HOLD: only virtual time moves writes (x-hold-writes); tests step it. */
#define HOLD                RELAXED ",x-hold-writes=on"
#define TICK_NS             (10 * 1000)     /* a tick of the memory clock */

/*
 * With x-hold-writes: step virtual time until FLUSH_SEQ reaches @seq
 * (host flushes do not move held writes; time does).
 */
static inline void clock_until_flushed(Megpu *m, uint32_t seq)
{
    for (unsigned i = 0; rd(m, MEGPU_REG_FLUSH_SEQ) != seq; i++) {
        g_assert_cmpuint(i, <, 10000);
        qtest_clock_step(m->qts, 10 * TICK_NS);
    }
}

static inline void hold_flush(Megpu *m)
{
    uint32_t seq = rd(m, MEGPU_REG_FLUSH_SEQ);

    wr(m, MEGPU_REG_FLUSH, 1);
    clock_until_flushed(m, seq + 1);
    wr(m, MEGPU_REG_FLUSH_STATUS, MEGPU_FLUSH_STATUS_DONE);
    wr(m, MEGPU_REG_MISC_IRQ_STATUS, MEGPU_MISC_IRQ_FLUSH_DONE);
}

#endif
