/*
 * QTest for the GPU MMU and the fault model: IBs run through the
 * two-level page table of the context set on the ring (accesses split
 * per page, read-only pages, unmapped and out-of-range addresses,
 * invalidation while engines run), and every fault code with its record,
 * its interrupt and the resume after FAULT_ACK (Documentation/megpu-hw.rst).
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */

#include "megpu-qtest.h"

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
    /*
     * ROM (the firmware's last page, below 4 GiB) is RAM the engines may
     * read but not write: from the ring and through a writable PTE.
     */
    {
        const uint64_t rom = 0xfffff000ull, rom_va = 0x20000000;
        uint32_t before = qtest_readl(m.qts, rom + 0xff0);

        g_assert_cmphex(before, !=, 0);     /* the reset vector is there */
        at = r->pos;
        emit_write(r, rom + 0xff0, d, 1);
        CHECK_FAULT(MEGPU_FAULT_BUS, rom + 0xff0, MEGPU_FAULT_INFO_WRITE);
        g_assert_cmphex(qtest_readl(m.qts, rom + 0xff0), ==, before);
        at = r->pos;
        emit_fill(r, rom, 0x1000, 0);
        CHECK_FAULT(MEGPU_FAULT_BUS, rom, MEGPU_FAULT_INFO_WRITE);
        g_assert_cmphex(qtest_readl(m.qts, rom + 0xff0), ==, before);
        mmu_map(&m, rom_va, rom, 0x1000, true);
        ib = ib_stream(&m, IB_PA);
        emit_write(&ib, rom_va + 0xff0, d, 1);
        at = r->pos;
        emit_ib(r, ib_va, ib.pos / 4);
        CHECK_FAULT(MEGPU_FAULT_BUS, rom_va + 0xff0,
                    MEGPU_FAULT_INFO_IN_IB | MEGPU_FAULT_INFO_WRITE);
        g_assert_cmphex(qtest_readl(m.qts, rom + 0xff0), ==, before);
        /* reading it is fine: COPY from ROM to RAM */
        emit_copy(r, rom + 0xff0, DATA_PA + 0x800, 4);
        emit_ts(r, ts, ++seq, 0);
        kick(&m, 0);
        eng_idle(&m, 0);
        g_assert_cmpuint(qtest_readq(m.qts, ts), ==, seq);
        g_assert_cmphex(qtest_readl(m.qts, DATA_PA + 0x800), ==, before);
    }
    /*
     * Page tables that are not RAM fault as unmapped (MMU), and nothing
     * reads the registers: a directory at the device's BAR, then a
     * directory in RAM whose entry points at the BAR as a table.
     */
    {
        const uint64_t pd2 = SEM_PA + 0x10000;
        uint32_t scratch = rd(&m, MEGPU_REG_SCRATCH);

        emit_setctx(r, m.bar.addr, 7);
        at = r->pos;
        emit_ib(r, ib_va, 1);
        CHECK_FAULT(MEGPU_FAULT_MMU, ib_va, MEGPU_FAULT_INFO_IN_IB);
        qtest_memset(m.qts, pd2, 0, MEGPU_PT_SIZE);
        qtest_writeq(m.qts, pd2 + MEGPU_PDE_INDEX(ib_va) * 8,
                     m.bar.addr | MEGPU_PTE_VALID);
        emit_setctx(r, pd2, 8);
        at = r->pos;
        emit_ib(r, ib_va, 1);
        CHECK_FAULT(MEGPU_FAULT_MMU, ib_va, MEGPU_FAULT_INFO_IN_IB);
        emit_setctx(r, PT_PA, 1);
        g_assert_cmphex(rd(&m, MEGPU_REG_SCRATCH), ==, scratch);
    }
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
 * Bus mastering off ends the engines' DMA (PCI_COMMAND, as a driver's
 * pci_clear_master() before kexec or unbind). A packet's cached page
 * translations go: an IB WAITing on a page it already mapped faults
 * when it reads again, instead of seeing the CPU's value through its
 * cached map and going on to write the page. Writes still queued in the
 * write model (relaxed mode, which under qtest lands only as virtual
 * time moves) are dropped, not landed.
 */
static void test_bus_master_off(void)
{
    const uint64_t ib_va = 0x10000000, data_va = 0x20000000;
    const uint32_t marker = 0x600d;
    uint16_t cmd;
    Stream ib;
    Megpu m;

    megpu_start_engines_opts(&m, 1, "write-mode=relaxed,write-seed=1");
    qtest_memset(m.qts, DATA_PA, 0, 0x1000);
    mmu_map(&m, ib_va, IB_PA, 0x1000, false);
    mmu_map(&m, data_va, DATA_PA, 0x1000, true);
    ib = ib_stream(&m, IB_PA);
    emit_wait(&ib, data_va, 1);
    emit_write(&ib, data_va + 0x100, &marker, 1);
    /* posted before the IB: lands only when virtual time moves */
    emit_write(&m.ring[0], DATA_PA + 0x200, &marker, 1);
    emit_setctx(&m.ring[0], PT_PA, 1);
    emit_ib(&m.ring[0], ib_va, ib.pos / 4);
    kick(&m, 0);
    eng_poll(&m, 0, MEGPU_ENG_STATUS_WAIT_SEM);
    g_assert_cmphex(qtest_readl(m.qts, DATA_PA + 0x200), ==, 0);

    cmd = qpci_config_readw(m.dev, PCI_COMMAND);
    qpci_config_writew(m.dev, PCI_COMMAND, cmd & ~PCI_COMMAND_MASTER);
    qtest_writeq(m.qts, DATA_PA, 1);
    eng_poll(&m, 0, MEGPU_ENG_STATUS_FAULTED);
    qtest_clock_step(m.qts, 10 * 1000 * 1000);
    g_assert_cmphex(qtest_readl(m.qts, DATA_PA + 0x200), ==, 0);
    g_assert_cmphex(qtest_readl(m.qts, DATA_PA + 0x100), ==, 0);
    /* the WAIT's own read faulted: the page table is out of reach too */
    g_assert_cmpuint(erd(&m, 0, MEGPU_ENG_FAULT_CODE), ==, MEGPU_FAULT_MMU);
    g_assert_cmphex(erd64(&m, 0, MEGPU_ENG_FAULT_ADDR_LO), ==, data_va);
    megpu_stop_engines(&m);
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    qtest_add_func("/megpu/engine/mmu-ib", test_mmu_ib);
    qtest_add_func("/megpu/engine/faults", test_faults);
    qtest_add_func("/megpu/engine/bus-master-off", test_bus_master_off);
    return g_test_run();
}
