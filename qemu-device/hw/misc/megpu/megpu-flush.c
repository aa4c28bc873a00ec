/*
 * megpu: FLUSH and IDLE_SIGNAL packets (seed 004)
 *
 * DOC: the packets of dependent launch
 *
 * Seed 004 ("Apparatus, System, and Method for Dependent Computations of
 * Streaming Multiprocessors") launches a dependent computation only once
 * the producer is idle and its writes have been flushed to memory. Its
 * two engine-side steps are packets: IDLE_SIGNAL raises the engine's
 * IDLE interrupt (which says nothing about queued writes, so it never
 * waits for them), and FLUSH holds the engine until its own earlier
 * writes are in memory. The write queues and the host flush registers
 * are in megpu-writeq.c.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */

#include "qemu/osdep.h"
#include "megpu-internal.h"

/* IDLE_SIGNAL: the job says it is done; its writes may still be queued. */
bool megpu_exec_idle_signal(MegpuExec *x)
{
    qemu_mutex_lock(&x->e->lock);
    megpu_engine_idle_irq_locked(x->e, true);
    qemu_mutex_unlock(&x->e->lock);
    return true;
}

/* FLUSH: this engine's earlier writes are in memory before it goes on. */
bool megpu_exec_flush(MegpuExec *x)
{
    if (!megpu_wq_engine_flush(x)) {
        return false;
    }
    qemu_mutex_lock(&x->e->lock);
    x->e->flushes++;
    qemu_mutex_unlock(&x->e->lock);
    return true;
}
