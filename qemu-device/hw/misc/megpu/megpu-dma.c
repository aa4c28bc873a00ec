/*
 * megpu: data packets: WRITE_DATA, TIMESTAMP, COPY, FILL
 *
 * DOC: data packets
 *
 * The packets that write guest memory on the command processor's behalf:
 * WRITE_DATA (inline dwords), TIMESTAMP (an 8-byte fence value, one
 * atomic store, with an optional interrupt; LAST_TS follows ring
 * timestamps only), COPY and FILL (DMA of up to 64 MiB, moved a page at
 * a time so that an engine reset cuts them short). Every access goes
 * through megpu-mmu.c (bus addresses on the ring, GPU virtual addresses
 * in an IB) and, in relaxed write mode, becomes a posted write of seed
 * 004 (megpu-writeq.c). Any write may be what a semaphore WAIT watches
 * (seed 001), so each wakes the waiters (megpu-sem.c).
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */

#include "qemu/osdep.h"
#include "qemu/atomic.h"
#include "megpu-internal.h"
#include "trace.h"

/* COPY and FILL move at most this much per step, then check for reset */
#define MEGPU_XFER_CHUNK        MEGPU_PAGE_SIZE

bool megpu_exec_write_data(MegpuExec *x, const uint32_t *p, uint32_t count)
{
    uint64_t addr = megpu_pl64(p, 0);

    if (addr & 3) {
        return megpu_pkt_fault(x, MEGPU_FAULT_BAD_ARG);
    }
    /* payload dwords are little endian already, as memory wants them */
    if (!megpu_mem_rw(x, addr, (void *)&p[2], (count - 2) * 4ull, true)) {
        return false;
    }
    megpu_wake_waiters(x->e->s);
    return true;
}

bool megpu_exec_timestamp(MegpuExec *x, uint32_t flags, const uint32_t *p)
{
    MegpuEngine *e = x->e;
    uint64_t addr = megpu_pl64(p, 0), val = megpu_pl64(p, 2);
    bool irq = flags & MEGPU_TIMESTAMP_FLAG_IRQ;

    /* 8-aligned: one atomic store, never a torn fence value */
    if (addr & 7) {
        return megpu_pkt_fault(x, MEGPU_FAULT_BAD_ARG);
    }
    if (!megpu_mem_write64(x, addr, val)) {
        return false;
    }
    trace_megpu_timestamp(e->idx, addr, val, irq);
    megpu_wake_waiters(e->s);
    qemu_mutex_lock(&e->lock);
    if (!x->in_ib) {
        /* a frame's end: the next job's DEQUEUE progress starts at 0 */
        e->last_ts = val;
        e->tq_job_tasks = 0;
    }
    if (irq) {
        e->irq_status |= MEGPU_ENG_IRQ_TIMESTAMP;
    }
    qemu_mutex_unlock(&e->lock);
    if (irq) {
        megpu_raise_irq(e->s, MEGPU_VEC_ENGINE(e->idx));
    }
    return true;
}

bool megpu_exec_copy(MegpuExec *x, const uint32_t *p)
{
    uint64_t src = megpu_pl64(p, 0), dst = megpu_pl64(p, 2);
    uint32_t bytes = megpu_pl32(p, 4);
    uint8_t buf[MEGPU_XFER_CHUNK];

    if (bytes > MEGPU_COPY_MAX_BYTES) {
        return megpu_pkt_fault(x, MEGPU_FAULT_BAD_ARG);
    }
    if (!megpu_range_ok(x, src, bytes, false) ||
        !megpu_range_ok(x, dst, bytes, true)) {
        return false;
    }
    /* front to back: overlapping ranges are undefined, as documented */
    for (uint32_t done = 0; done < bytes; ) {
        uint32_t n = MIN(bytes - done, sizeof(buf));

        if (megpu_engine_should_abort(x->e)) {
            x->aborted = true;
            return false;
        }
        if (!megpu_mem_rw(x, src + done, buf, n, false) ||
            !megpu_mem_rw(x, dst + done, buf, n, true)) {
            return false;
        }
        done += n;
    }
    return true;
}

bool megpu_exec_fill(MegpuExec *x, const uint32_t *p)
{
    uint64_t dst = megpu_pl64(p, 0);
    uint32_t bytes = megpu_pl32(p, 2);
    uint32_t buf[MEGPU_XFER_CHUNK / 4];

    if ((dst & 3) || (bytes & 3) || bytes > MEGPU_FILL_MAX_BYTES) {
        return megpu_pkt_fault(x, MEGPU_FAULT_BAD_ARG);
    }
    if (!megpu_range_ok(x, dst, bytes, true)) {
        return false;
    }
    for (unsigned i = 0; i < ARRAY_SIZE(buf); i++) {
        buf[i] = p[3];          /* already little endian */
    }
    for (uint32_t done = 0; done < bytes; ) {
        uint32_t n = MIN(bytes - done, sizeof(buf));

        if (megpu_engine_should_abort(x->e)) {
            x->aborted = true;
            return false;
        }
        if (!megpu_mem_rw(x, dst + done, buf, n, true)) {
            return false;
        }
        done += n;
    }
    return true;
}
