/*
 * megpu: engine memory access and the GPU MMU
 *
 * DOC: engine memory access and the GPU MMU
 *
 * Every engine access to guest memory goes through here, one page chunk
 * at a time. Ring packets use bus addresses; packets inside an IB use GPU
 * virtual addresses, translated through the two-level page table of the
 * engine's context (include/megpu_hw.h).
 *
 * Engines reach only guest RAM. MMIO would be dispatched from an engine
 * thread with the BQL taken behind our back (and could even re-enter this
 * device's registers), so a packet pointing at anything but RAM faults
 * with MEGPU_FAULT_BUS instead. RAM is mapped as address_space_map maps
 * it (megpu_ram_map: a reference to the region and its host pointer) and
 * unmapped with address_space_unmap, which also lets semaphores use real
 * host atomics that interoperate with guest CPU atomics on the same word.
 *
 * A packet's translated pages are kept mapped in a small TLB of its own
 * (MegpuExec.tlb, MEGPU_TLB_ENTRIES pages, round-robin): a wave program
 * makes one access per instruction and wave, and a page-table walk plus
 * a map per access cost more than the interpreter (issue 25's profile:
 * half the engine thread). Only valid translations are kept, tagged with
 * the engine's xlat_gen: MMU_INVALIDATE bumps it under each engine's
 * xlat_lock, and an access (under the same lock) that sees it changed
 * drops every entry first, so no translation read before an invalidate
 * is used after it, as without the TLB. The entries are unmapped when
 * the packet ends (a DISPATCH keeps its pages for its whole grid); the
 * pages mapped for writing are marked dirty then, not per access.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */

#include "qemu/osdep.h"
#include "qemu/atomic.h"
#include "qemu/bswap.h"
#include "qemu/rcu.h"
#include "exec/memory.h"
#include "hw/pci/pci_device.h"
#include "megpu-internal.h"
#include "trace.h"

#define MEGPU_PAGE_MASK     ((uint64_t)MEGPU_PAGE_SIZE - 1)

/*
 * Map [pa, pa + len) of guest RAM; len must not cross a page. NULL when
 * any of it is not RAM (or not writable RAM for a write). What
 * address_space_map does for RAM, with one translation under one RCU
 * read section (each section costs a full barrier on both ends; the
 * engines map a page per access run, issue 25's profile), checked
 * before anything is mapped, so that a bounce buffer never stands in
 * for RAM. The region @host is in goes to @mr if not NULL. Released
 * with megpu_ram_unmap (address_space_unmap, which finds the region
 * from @host, marks the bytes dirty and drops the reference).
 */
void *megpu_ram_map(MegpuState *s, hwaddr pa, hwaddr len, bool is_write,
                    MemoryRegion **mr)
{
    AddressSpace *as = pci_get_address_space(PCI_DEVICE(s));
    MemTxAttrs attrs = MEMTXATTRS_UNSPECIFIED;
    MemoryRegion *ram;
    hwaddr xlat, l = len;

    RCU_READ_LOCK_GUARD();
    ram = address_space_translate(as, pa, &xlat, &l, is_write, attrs);
    if (l < len || !memory_access_is_direct(ram, is_write, attrs)) {
        return NULL;
    }
    /* the generic fuzzer's DMA hook, as address_space_map calls it */
    fuzz_dma_read_cb(pa, len, ram);
    memory_region_ref(ram);
    if (mr) {
        *mr = ram;
    }
    return (uint8_t *)memory_region_get_ram_ptr(ram) + xlat;
}

void megpu_ram_unmap(MegpuState *s, void *host, hwaddr len, bool is_write)
{
    address_space_unmap(pci_get_address_space(PCI_DEVICE(s)), host, len,
                        is_write, is_write ? len : 0);
}

/*
 * Read a page-table entry; false if the table is not in RAM. Read inside
 * the RCU section that translated it, so nothing is mapped or held.
 */
static bool megpu_read_entry(MegpuState *s, hwaddr pa, uint64_t *entry)
{
    AddressSpace *as = pci_get_address_space(PCI_DEVICE(s));
    MemTxAttrs attrs = MEMTXATTRS_UNSPECIFIED;
    MemoryRegion *mr;
    hwaddr xlat, l = 8;
    uint64_t *p;

    RCU_READ_LOCK_GUARD();
    mr = address_space_translate(as, pa, &xlat, &l, false, attrs);
    if (l < 8 || !memory_access_is_direct(mr, false, attrs)) {
        return false;
    }
    fuzz_dma_read_cb(pa, 8, mr);
    p = (uint64_t *)((uint8_t *)memory_region_get_ram_ptr(mr) + xlat);
    /* one load: the driver may update the entry concurrently */
    *entry = le64_to_cpu(qatomic_read(p));
    return true;
}

/*
 * Walk the context's page table for @va. Called with the engine's
 * xlat_lock held. A miss never yields an address: the caller faults.
 */
static bool megpu_mmu_translate(MegpuEngine *e, uint64_t va, bool is_write,
                                hwaddr *pa)
{
    uint64_t pde, pte;

    if (!e->has_ctx || va >= MEGPU_VA_SIZE) {
        return false;
    }
    if (!megpu_read_entry(e->s, e->pt_base + MEGPU_PDE_INDEX(va) * 8, &pde) ||
        !(pde & MEGPU_PTE_VALID)) {
        return false;
    }
    /* level-2 tables are 8 KiB aligned; anything else is a bad entry */
    if (pde & MEGPU_PAGE_SIZE) {
        return false;
    }
    if (!megpu_read_entry(e->s, (pde & MEGPU_PTE_ADDR_MASK) +
                          MEGPU_PTE_INDEX(va) * 8, &pte) ||
        !(pte & MEGPU_PTE_VALID)) {
        return false;
    }
    if (is_write && !(pte & MEGPU_PTE_WRITE)) {
        return false;
    }
    *pa = (pte & MEGPU_PTE_ADDR_MASK) | (va & MEGPU_PAGE_MASK);
    return true;
}

/* Unmap every page of the packet's TLB (megpu-mmu.c's DOC). */
void megpu_tlb_drop(MegpuExec *x)
{
    for (unsigned i = 0; i < x->tlb_used; i++) {
        megpu_ram_unmap(x->e->s, x->tlb[i].host, MEGPU_PAGE_SIZE,
                        x->tlb[i].writable);
    }
    x->tlb_used = 0;
    x->tlb_next = 0;
}

/*
 * The TLB entry of @va's page, mapped for writes if @is_write; NULL when
 * the page has no valid translation or is not all RAM: the caller then
 * takes the uncached way, which faults with the right code. Called with
 * xlat_lock held.
 */
static MegpuTlbEntry *megpu_tlb_get(MegpuExec *x, uint64_t va, bool is_write)
{
    MegpuEngine *e = x->e;
    uint64_t page = va & ~MEGPU_PAGE_MASK;
    MegpuTlbEntry *t = NULL;
    MemoryRegion *mr;
    hwaddr pa;
    void *host;

    if (x->tlb_gen != e->xlat_gen) {
        megpu_tlb_drop(x);      /* an MMU_INVALIDATE since they were read */
        x->tlb_gen = e->xlat_gen;
    }
    for (unsigned i = 0; i < x->tlb_used; i++) {
        if (x->tlb[i].va == page) {
            if (x->tlb[i].writable || !is_write) {
                return &x->tlb[i];
            }
            t = &x->tlb[i];     /* read-only so far: map it again */
        }
    }
    if (!megpu_mmu_translate(e, page, is_write, &pa)) {
        return NULL;
    }
    host = megpu_ram_map(e->s, pa, MEGPU_PAGE_SIZE, is_write, &mr);
    if (!host) {
        return NULL;
    }
    if (!t && x->tlb_used < MEGPU_TLB_ENTRIES) {
        t = &x->tlb[x->tlb_used++];
    } else {
        if (!t) {
            t = &x->tlb[x->tlb_next];
            x->tlb_next = (x->tlb_next + 1) % MEGPU_TLB_ENTRIES;
        }
        megpu_ram_unmap(e->s, t->host, MEGPU_PAGE_SIZE, t->writable);
    }
    *t = (MegpuTlbEntry) {
        .va = page, .pa = pa, .host = host, .mr = mr, .writable = is_write,
    };
    return t;
}

void *megpu_mem_map(MegpuExec *x, uint64_t addr, unsigned len,
                    bool is_write, MegpuMap *m)
{
    MegpuEngine *e = x->e;
    hwaddr pa = addr;
    MegpuTlbEntry *t;

    m->locked = false;
    m->cached = false;
    /*
     * Callers split accesses at page boundaries and check alignment, but
     * the addresses are the guest's: an access that would still cross a
     * page faults the packet instead of reaching an assertion.
     */
    if (!len || len > MEGPU_PAGE_SIZE - (addr & MEGPU_PAGE_MASK)) {
        megpu_fault(x, MEGPU_FAULT_MISALIGNED, addr, is_write);
        return NULL;
    }
    if (x->in_ib) {
        /* held until unmap: MMU_INVALIDATE waits for this access */
        qemu_mutex_lock(&e->xlat_lock);
        m->locked = true;
        t = megpu_tlb_get(x, addr, is_write);
        if (t) {
            m->host = t->host + (addr & MEGPU_PAGE_MASK);
            m->mr = t->mr;
            m->pa = t->pa + (addr & MEGPU_PAGE_MASK);
            m->len = len;
            m->is_write = is_write;
            m->cached = true;
            return m->host;
        }
        if (!megpu_mmu_translate(e, addr, is_write, &pa)) {
            qemu_mutex_unlock(&e->xlat_lock);
            megpu_fault(x, MEGPU_FAULT_MMU, addr, is_write);
            return NULL;
        }
    }
    m->host = megpu_ram_map(e->s, pa, len, is_write, &m->mr);
    if (!m->host) {
        if (m->locked) {
            qemu_mutex_unlock(&e->xlat_lock);
        }
        megpu_fault(x, MEGPU_FAULT_BUS, addr, is_write);
        return NULL;
    }
    m->pa = pa;
    m->len = len;
    m->is_write = is_write;
    return m->host;
}

void megpu_mem_unmap(MegpuExec *x, MegpuMap *m)
{
    if (!m->cached) {
        address_space_unmap(pci_get_address_space(PCI_DEVICE(x->e->s)),
                            m->host, m->len, m->is_write, m->len);
    }
    if (m->locked) {
        qemu_mutex_unlock(&x->e->xlat_lock);
    }
}

/*
 * A range that wraps around the top of the address space would continue
 * at address 0: fault on its start instead.
 */
bool megpu_range_ok(MegpuExec *x, uint64_t addr, uint64_t len,
                    bool is_write)
{
    if (len && addr > UINT64_MAX - (len - 1)) {
        return megpu_fault(x, x->in_ib ? MEGPU_FAULT_MMU : MEGPU_FAULT_BUS,
                           addr, is_write);
    }
    return true;
}

bool megpu_mem_rw(MegpuExec *x, uint64_t addr, void *buf, uint64_t len,
                  bool is_write)
{
    uint8_t *p = buf;
    MegpuMap m;

    if (!megpu_range_ok(x, addr, len, is_write)) {
        return false;
    }
    while (len) {
        unsigned chunk = MIN(len, MEGPU_PAGE_SIZE - (addr & MEGPU_PAGE_MASK));
        bool posted = is_write && megpu_wq_relaxed(x->e->s);
        void *host;

        /* wait for queue room before taking xlat_lock, never under it */
        if (posted && !megpu_wq_reserve(x)) {
            return false;
        }
        host = megpu_mem_map(x, addr, chunk, is_write, &m);
        if (!host) {
            return false;
        }
        if (posted) {
            megpu_wq_post(x, m.pa, host, m.mr, p, chunk);
        } else if (is_write) {
            megpu_wq_order(x->e->s, m.pa, chunk);
            memcpy(host, p, chunk);
        } else {
            bool patch = megpu_wq_read_begin(x->e, m.pa, chunk);

            memcpy(p, host, chunk);
            if (patch) {
                megpu_wq_read_end(x->e, m.pa, p, chunk);
            }
        }
        megpu_mem_unmap(x, &m);
        addr += chunk;
        p += chunk;
        len -= chunk;
    }
    return true;
}

/*
 * [addr, addr + len) as the engine sees it, for a moment: a pointer to
 * the bytes, valid until megpu_mem_view_done(). Guest RAM itself when
 * the range is in one page and the engine has no pending write there
 * (a wave's row, the usual case: no copy), else @buf holding a copy (as
 * megpu_mem_rw()). NULL: a fault, the one megpu_mem_rw() would raise.
 */
const void *megpu_mem_read_view(MegpuExec *x, uint64_t addr, uint32_t len,
                                void *buf, MegpuMap *m)
{
    void *host;

    m->host = NULL;
    if ((addr & MEGPU_PAGE_MASK) + len > MEGPU_PAGE_SIZE) {
        return megpu_mem_rw(x, addr, buf, len, false) ? buf : NULL;
    }
    host = megpu_mem_map(x, addr, len, false, m);
    if (!host) {
        return NULL;
    }
    if (megpu_wq_read_begin(x->e, m->pa, len)) {
        memcpy(buf, host, len);
        megpu_wq_read_end(x->e, m->pa, buf, len);
        megpu_mem_unmap(x, m);
        m->host = NULL;
        return buf;
    }
    return host;
}

void megpu_mem_view_done(MegpuExec *x, MegpuMap *m)
{
    if (m->host) {
        megpu_mem_unmap(x, m);
    }
}

/*
 * Coordination words (task-queue headers and locks, MSEM slots, ARB
 * flags): one aligned 32-bit host atomic, after a full barrier (Peterson's
 * rule needs the engine's earlier coordination stores before this load)
 * and with acquire (what the engine reads next comes after it). The
 * engine's own queued writes to the word are seen too, as every read.
 */
bool megpu_mem_read32(MegpuExec *x, uint64_t addr, uint32_t *val)
{
    MegpuMap m;
    uint32_t *p = megpu_mem_map(x, addr, 4, false, &m);
    uint32_t v;
    bool patch;

    if (!p) {
        return false;
    }
    patch = megpu_wq_read_begin(x->e, m.pa, 4);
    /* store-load order after the engine's coordination stores */
    smp_mb();
    v = qatomic_load_acquire(p);
    if (patch) {
        megpu_wq_read_end(x->e, m.pa, &v, 4);
    }
    *val = le32_to_cpu(v);
    megpu_mem_unmap(x, &m);
    return true;
}

/* Semaphore and timestamp words: aligned 64-bit host atomics. */
bool megpu_mem_read64(MegpuExec *x, uint64_t addr, uint64_t *val)
{
    MegpuMap m;
    uint64_t *p = megpu_mem_map(x, addr, 8, false, &m);
    bool patch;

    if (!p) {
        return false;
    }
    patch = megpu_wq_read_begin(x->e, m.pa, 8);
    *val = qatomic_read(p);
    if (patch) {
        megpu_wq_read_end(x->e, m.pa, val, 8);
    }
    *val = le64_to_cpu(*val);
    megpu_mem_unmap(x, &m);
    return true;
}

bool megpu_mem_write64(MegpuExec *x, uint64_t addr, uint64_t val)
{
    MegpuMap m;
    uint64_t *p = megpu_mem_map(x, addr, 8, true, &m);

    if (!p) {
        return false;
    }
    /*
     * Not posted. Full barrier: the packets' earlier direct writes are
     * visible first (posted ones only after a flush).
     */
    megpu_wq_order(x->e->s, m.pa, 8);
    qatomic_xchg(p, cpu_to_le64(val));
    megpu_mem_unmap(x, &m);
    return true;
}

bool megpu_mem_add32(MegpuExec *x, uint64_t addr, uint32_t val)
{
    MegpuMap m;
    uint32_t *p = megpu_mem_map(x, addr, 4, true, &m);

    if (!p) {
        return false;
    }
    megpu_wq_order(x->e->s, m.pa, 4);
    megpu_le32_add(p, val);
    megpu_mem_unmap(x, &m);
    return true;
}

/*
 * MMU_INVALIDATE: once every engine has been seen outside a translated
 * access, no engine uses a translation read before this call. Engines
 * hold xlat_lock only around one page chunk of RAM, never while waiting
 * for anything, so this is short; it runs under the BQL, which engines
 * never take.
 */
static void megpu_tlb_stale_all(MegpuState *s)
{
    for (unsigned n = 0; n < s->num_engines; n++) {
        qemu_mutex_lock(&s->engines[n].xlat_lock);
        s->engines[n].xlat_gen++;   /* its packet's TLB is stale */
        qemu_mutex_unlock(&s->engines[n].xlat_lock);
    }
}

void megpu_mmu_invalidate(MegpuState *s)
{
    megpu_tlb_stale_all(s);
    s->mmu_invalidations++;
    trace_megpu_mmu_invalidate(s->mmu_invalidations);
}

/*
 * PCI_COMMAND's bus master bit cleared: from here on no DMA. The engines'
 * cached translations go as at MMU_INVALIDATE, so their next access maps
 * again through the bus master space, now disabled, and faults (BUS);
 * queued writes are dropped, not landed. Under the BQL, as a config
 * write; waits only for the engines' current page chunk.
 */
void megpu_bus_master_off(MegpuState *s)
{
    megpu_tlb_stale_all(s);
    megpu_wq_drop_all(s);
    trace_megpu_bus_master_off();
}
