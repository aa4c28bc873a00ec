/*
 * megpu: semaphore packets SIGNAL and WAIT (seed 001)
 *
 * DOC: semaphores between engines
 *
 * Seed 001 (US 8,803,900, "Synchronization with semaphores in a
 * multi-engine GPU") lets one engine wait for another without the host:
 * a semaphore is a 64-bit word in memory, SIGNAL writes a value to it and
 * WAIT stalls only its own engine until the word has reached a value.
 * Choices: the compare is wrap-safe (signed difference), so sequence
 * numbers may wrap; a SIGNAL wakes every waiting engine at once (any
 * other engine write does too when somebody waits), and a waiter re-reads
 * its word every millisecond to see values a CPU wrote; a WAIT is cut
 * short by an engine reset. The WAIT_ADDR/WAIT_VALUE registers show what
 * a stalled engine waits for; WAIT_NS and WAITS how long and how often
 * it stalled (issue 12's timeline). A SIGNAL wakes only engines inside a
 * packet, and a stalled WAIT may spin before it sleeps (x-wait-spin-us,
 * off by default: see megpu.c).
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */

#include "qemu/osdep.h"
#include "qemu/atomic.h"
#include "qemu/timer.h"
#include "megpu-internal.h"
#include "trace.h"

/* how often a WAIT re-reads memory the CPU may have written */
#define MEGPU_WAIT_POLL_MS      1

/*
 * SIGNAL: every waiting engine re-reads its semaphore at once. Only an
 * engine inside a packet (a WAIT, a wave) can be waiting for memory; an
 * idle one sleeps until its doorbell, and waking it for nothing costs a
 * host thread wakeup per SIGNAL (issue 12).
 */
static void megpu_wake_all(MegpuState *s)
{
    for (unsigned n = 0; n < s->num_engines; n++) {
        MegpuEngine *e = &s->engines[n];
        bool busy;

        qemu_mutex_lock(&e->lock);
        qatomic_set(&e->wake_seq, e->wake_seq + 1);
        busy = e->busy;
        qemu_mutex_unlock(&e->lock);
        /*
         * After the unlock, so that the waiter does not wake to a held
         * lock; it checked wake_seq under the lock, and waits inside it.
         */
        if (busy) {
            qemu_cond_broadcast(&e->cond);
        }
    }
}

/*
 * Any other write from an engine may be what a WAIT watches (a TIMESTAMP,
 * a WRITE_DATA): wake the waiters too, but skip the locks when nobody
 * waits. A waiter that stalls just after this check still sees the value
 * at its next periodic re-check.
 */
void megpu_wake_waiters(MegpuState *s)
{
    if (qatomic_read(&s->sem_waiters)) {
        megpu_wake_all(s);
    }
}

bool megpu_exec_signal(MegpuExec *x, const uint32_t *p)
{
    uint64_t addr = megpu_pl64(p, 0), val = megpu_pl64(p, 2);

    if (addr & 7) {
        return megpu_pkt_fault(x, MEGPU_FAULT_BAD_ARG);
    }
    if (!megpu_mem_write64(x, addr, val)) {
        return false;
    }
    trace_megpu_signal(x->e->idx, addr, val);
    megpu_wake_all(x->e->s);
    return true;
}

/*
 * Spin until a SIGNAL bumps wake_seq past @seq, for at most x-wait-spin-us
 * from @since; true when one did. A hint read without the lock: the
 * caller re-reads the semaphore either way.
 */
static bool megpu_wait_spin(MegpuEngine *e, uint64_t seq, int64_t since)
{
    int64_t spin_ns = (int64_t)e->s->wait_spin_us * SCALE_US;

    while (get_clock() - since < spin_ns) {
        if (qatomic_read(&e->wake_seq) != seq ||
            megpu_engine_should_abort(e)) {
            return true;
        }
        cpu_relax();
    }
    return false;
}

/*
 * WAIT stalls only this engine. Any SIGNAL bumps wake_seq and wakes it;
 * the timed wait catches values the CPU wrote. Reading wake_seq before
 * the semaphore closes the window in which a SIGNAL could be missed.
 * With x-wait-spin-us, a stall first spins (megpu_wait_spin).
 */
bool megpu_exec_wait(MegpuExec *x, const uint32_t *p)
{
    MegpuEngine *e = x->e;
    uint64_t addr = megpu_pl64(p, 0), want = megpu_pl64(p, 2), cur, seq;
    bool stalled = false, ok = true;
    int64_t since = 0;

    if (addr & 7) {
        return megpu_pkt_fault(x, MEGPU_FAULT_BAD_ARG);
    }
    for (;;) {
        qemu_mutex_lock(&e->lock);
        seq = e->wake_seq;
        qemu_mutex_unlock(&e->lock);

        if (megpu_engine_should_abort(e)) {
            x->aborted = true;
            ok = false;
            break;
        }
        if (!megpu_mem_read64(x, addr, &cur)) {
            ok = false;
            break;
        }
        if ((int64_t)(cur - want) >= 0) {
            break;
        }

        qemu_mutex_lock(&e->lock);
        if (!stalled) {
            stalled = true;
            since = get_clock();
            qatomic_inc(&e->s->sem_waiters);
            e->waiting = true;
            e->wait_addr = addr;
            e->wait_value = want;
            trace_megpu_wait(e->idx, addr, want, cur);
            if (e->s->wait_spin_us) {
                qemu_mutex_unlock(&e->lock);
                if (megpu_wait_spin(e, seq, since)) {
                    continue;
                }
                qemu_mutex_lock(&e->lock);
            }
        }
        if (e->wake_seq == seq && !e->reset_pending && !e->stop) {
            qemu_cond_timedwait(&e->cond, &e->lock, MEGPU_WAIT_POLL_MS);
        }
        qemu_mutex_unlock(&e->lock);
    }
    if (stalled) {
        qatomic_dec(&e->s->sem_waiters);
        qemu_mutex_lock(&e->lock);
        e->waiting = false;
        e->wait_ns += get_clock() - since;
        e->waits++;
        qemu_mutex_unlock(&e->lock);
        trace_megpu_wait_done(e->idx, addr, ok);
    }
    return ok;
}
