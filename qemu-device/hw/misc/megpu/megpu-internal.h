/*
 * megpu: interfaces between the device's files (PCI/registers, engines,
 * packet executors, GPU MMU, kernels, write queues). Not part of the
 * hardware contract.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#ifndef HW_MISC_MEGPU_INTERNAL_H
#define HW_MISC_MEGPU_INTERNAL_H

#include "qemu/bswap.h"
#include "hw/misc/megpu.h"

/*
 * What an engine thread is executing: where addresses come from (ring:
 * bus addresses; IB: GPU virtual addresses of the current context) and
 * the first fault the packet raised.
 */
/* A page of a packet's translated accesses, mapped once (megpu-mmu.c). */
typedef struct MegpuTlbEntry {
    uint64_t va;                /* page address */
    hwaddr pa;
    uint8_t *host;              /* the whole page */
    MemoryRegion *mr;           /* the RAM @host is in (held by the map) */
    bool writable;              /* mapped for writes, and the PTE allows */
} MegpuTlbEntry;

#define MEGPU_TLB_ENTRIES 8

typedef struct MegpuExec {
    MegpuEngine *e;
    MegpuTlbEntry tlb[MEGPU_TLB_ENTRIES];
    unsigned tlb_used, tlb_next;
    uint32_t tlb_gen;           /* the engine's xlat_gen the entries are of */
    bool in_ib;
    uint32_t ring_off;          /* ring packet being executed */
    uint64_t pkt_addr;          /* header address of the current packet */
    bool aborted;               /* a reset or stop cut the packet short */
    uint32_t fault_code;
    uint64_t fault_addr;
    uint32_t fault_info;
    bool in_wave;               /* running wave instructions */
    uint32_t wave_id;           /* the wave and instruction running */
    uint32_t wave_pc;
} MegpuExec;

/* One page chunk of guest memory mapped for a direct or atomic access. */
typedef struct MegpuMap {
    void *host;
    MemoryRegion *mr;           /* the RAM @host is in */
    hwaddr pa;                  /* guest-physical address of host */
    hwaddr len;
    bool is_write;
    bool locked;                /* holds the engine's xlat_lock */
    bool cached;                /* a page of x->tlb: not unmapped */
} MegpuMap;

/*
 * Atomic add to a little-endian word of guest RAM; the new value. On a
 * little-endian host a fetch-add, which completes however often a vCPU
 * writes the word (a compare-and-swap loop could retry for as long as
 * the guest likes, while a reset waits for the engine under the BQL).
 */
static inline uint32_t megpu_le32_add(uint32_t *p, uint32_t val)
{
#if HOST_BIG_ENDIAN
    uint32_t old, cur = qatomic_read(p);

    do {
        old = cur;
        cur = qatomic_cmpxchg(p, old, cpu_to_le32(le32_to_cpu(old) + val));
    } while (cur != old);
    return le32_to_cpu(old) + val;
#else
    return qatomic_fetch_add(p, val) + val;
#endif
}

/* Payload dword @i of a packet (little endian in memory), and a pair. */
static inline uint32_t megpu_pl32(const uint32_t *p, unsigned i)
{
    return le32_to_cpu(p[i]);
}

static inline uint64_t megpu_pl64(const uint32_t *p, unsigned i)
{
    return megpu_pl32(p, i) | (uint64_t)megpu_pl32(p, i + 1) << 32;
}

/* megpu-engine.c */
void megpu_engine_init(MegpuState *s, unsigned n);
void megpu_engines_stop(MegpuState *s);
void megpu_engines_destroy(MegpuState *s);
uint32_t megpu_engine_read(MegpuEngine *e, hwaddr off);
void megpu_engine_write(MegpuEngine *e, hwaddr off, uint32_t val);
void megpu_engine_reset_sync(MegpuEngine *e);
bool megpu_fault(MegpuExec *x, uint32_t code, uint64_t addr, bool is_write);
bool megpu_pkt_fault(MegpuExec *x, uint32_t code);
bool megpu_engine_should_abort(MegpuEngine *e);
void megpu_engine_idle_irq_locked(MegpuEngine *e, bool from_packet);
void megpu_raise_irq(MegpuState *s, unsigned vector);

/* megpu-dma.c */
bool megpu_exec_write_data(MegpuExec *x, const uint32_t *p, uint32_t count);
bool megpu_exec_timestamp(MegpuExec *x, uint32_t flags, const uint32_t *p);
bool megpu_exec_copy(MegpuExec *x, const uint32_t *p);
bool megpu_exec_fill(MegpuExec *x, const uint32_t *p);

/* megpu-sem.c (seed 001) */
bool megpu_exec_signal(MegpuExec *x, const uint32_t *p);
bool megpu_exec_wait(MegpuExec *x, const uint32_t *p);
void megpu_wake_waiters(MegpuState *s);

/* megpu-flush.c (seed 004) */
bool megpu_exec_flush(MegpuExec *x);
bool megpu_exec_idle_signal(MegpuExec *x);

/* megpu-mmu.c */
void *megpu_ram_map(MegpuState *s, hwaddr pa, hwaddr len, bool is_write,
                    MemoryRegion **mr);
void megpu_ram_unmap(MegpuState *s, void *host, hwaddr len, bool is_write);
bool megpu_mem_rw(MegpuExec *x, uint64_t addr, void *buf, uint64_t len,
                  bool is_write);
bool megpu_range_ok(MegpuExec *x, uint64_t addr, uint64_t len,
                    bool is_write);
void *megpu_mem_map(MegpuExec *x, uint64_t addr, unsigned len,
                    bool is_write, MegpuMap *m);
void megpu_mem_unmap(MegpuExec *x, MegpuMap *m);
const void *megpu_mem_read_view(MegpuExec *x, uint64_t addr, uint32_t len,
                                void *buf, MegpuMap *m);
void megpu_mem_view_done(MegpuExec *x, MegpuMap *m);
bool megpu_mem_read32(MegpuExec *x, uint64_t addr, uint32_t *val);
bool megpu_mem_read64(MegpuExec *x, uint64_t addr, uint64_t *val);
bool megpu_mem_write64(MegpuExec *x, uint64_t addr, uint64_t val);
bool megpu_mem_add32(MegpuExec *x, uint64_t addr, uint32_t val);
void megpu_mmu_invalidate(MegpuState *s);
void megpu_bus_master_off(MegpuState *s);
void megpu_tlb_drop(MegpuExec *x);

/* megpu-kernels.c */
bool megpu_dispatch(MegpuExec *x, uint32_t kernel, uint64_t args,
                    uint32_t grid_x, uint32_t grid_y,
                    uint32_t group_x, uint32_t group_y);

/* megpu-wave.c */
bool megpu_wave_dispatch(MegpuExec *x, uint64_t args, uint32_t grid_x,
                         uint32_t grid_y, uint32_t group_x, uint32_t group_y);
void megpu_wave_restart(MegpuState *s, uint32_t id);
uint32_t megpu_wave_parked_locked(MegpuEngine *e);

/* megpu-mgpu.c (seed 000) */
void megpu_mgpu_global_init(void);
bool megpu_exec_msem_signal(MegpuExec *x, const uint32_t *p);
bool megpu_exec_msem_wait(MegpuExec *x, const uint32_t *p);
bool megpu_exec_arb_acquire(MegpuExec *x, uint32_t flags, const uint32_t *p);
bool megpu_exec_arb_release(MegpuExec *x, uint32_t flags, const uint32_t *p);
bool megpu_mgpu_reg_read(MegpuState *s, hwaddr addr, uint64_t *val);
bool megpu_mgpu_reg_write(MegpuState *s, hwaddr addr, uint32_t val);
bool megpu_mgpu_eng_read(MegpuEngine *e, hwaddr off, uint32_t *val);
void megpu_mgpu_reset(MegpuState *s);
void megpu_mgpu_engine_drop(MegpuEngine *e);

/* megpu-writeq.c */
bool megpu_wq_init(MegpuState *s, Error **errp);
void megpu_wq_fini(MegpuState *s);
void megpu_wq_reset(MegpuState *s);
bool megpu_wq_relaxed(MegpuState *s);
bool megpu_wq_reserve(MegpuExec *x);
void megpu_wq_post(MegpuExec *x, hwaddr pa, void *host, MemoryRegion *mr,
                   const void *data, uint32_t len);
void megpu_wq_order(MegpuState *s, hwaddr pa, uint32_t len);
bool megpu_wq_read_begin(MegpuEngine *e, hwaddr pa, uint32_t len);
void megpu_wq_read_end(MegpuEngine *e, hwaddr pa, void *buf, uint32_t len);
bool megpu_wq_engine_flush(MegpuExec *x);
void megpu_wq_engine_drop(MegpuEngine *e);
void megpu_wq_drop_all(MegpuState *s);
void megpu_wq_tick(MegpuEngine *e);
void megpu_wq_engine_drained(MegpuEngine *e);
bool megpu_wq_reg_read(MegpuState *s, hwaddr addr, uint64_t *val);
bool megpu_wq_reg_write(MegpuState *s, hwaddr addr, uint32_t val);
void megpu_misc_irq(MegpuState *s, uint32_t bits);


/* megpu-dequeue.c */
bool megpu_exec_dequeue(MegpuExec *x, const uint32_t *p);
bool megpu_exec_task_done(MegpuExec *x, const uint32_t *p);
bool megpu_exec_task_run(MegpuExec *x, const uint32_t *p);
void megpu_spi_count(MegpuEngine *e, uint64_t items, uint64_t groups);
void megpu_taskq_engine_idle(MegpuEngine *e);
void megpu_taskq_notify(MegpuState *s);
void megpu_taskq_kick(MegpuState *s);
bool megpu_taskq_reg_read(MegpuState *s, hwaddr addr, uint64_t *val);
bool megpu_taskq_reg_write(MegpuState *s, hwaddr addr, uint32_t val);
void megpu_taskq_reset(MegpuState *s);
void megpu_taskq_init(MegpuState *s);
void megpu_taskq_fini(MegpuState *s);

#endif
