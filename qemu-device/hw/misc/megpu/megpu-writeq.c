/*
 * megpu: posted writes, the memory controller and flushes (seed 004)
 *
 * In relaxed mode the data writes of an engine (WRITE_DATA, COPY, FILL,
 * kernel stores) do not reach guest RAM at once. Each page chunk becomes
 * an entry in the engine's queue (stage 1); after a seeded, non-uniform
 * delay it moves to the memory-controller queue (stage 2), shared by all
 * engines; after another such delay it lands in RAM. Entries move and
 * land independently, so writes land late and out of order. Two rules
 * keep the model a memory system rather than noise:
 *
 * - Writes to the same bytes land in issue order: an entry that is due
 *   first pushes out the older entries it overlaps (wherever they are).
 * - An engine sees its own queued writes: its reads are patched with its
 *   pending entries, oldest first. Other engines and the CPU see RAM.
 *
 * Entries hold guest-physical addresses translated when the write was
 * issued, and their data. Landing maps RAM the same checked way as other
 * engine DMA (megpu_ram_map), so it never reaches MMIO.
 *
 * The MC thread moves and lands entries and completes host flushes. It
 * never takes the BQL or an engine lock; it sleeps in a poll on
 * @mc_notify with a microsecond timeout, so short delays stay short.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */

#include "qemu/osdep.h"
#include "qemu/atomic.h"
#include "qemu/log.h"
#include "qemu/rcu.h"
#include "qemu/timer.h"
#include "qapi/error.h"
#include "megpu-internal.h"
#include "trace.h"

struct MegpuWrite {
    QTAILQ_ENTRY(MegpuWrite) link;
    MegpuEngine *e;
    uint64_t seq;               /* issue order, device-wide */
    int64_t due;                /* when it leaves its stage (us) */
    hwaddr pa;
    uint32_t len;
    bool in_mc;                 /* stage 2 */
    uint8_t data[];
};

/* Host flushes waiting: done when every write below @target has landed. */
typedef struct MegpuFlush {
    uint64_t target;
    uint32_t count;             /* flushes started with this target */
} MegpuFlush;

/* xorshift64*: cheap, and the same seed gives the same delays */
static uint64_t megpu_wq_rand(MegpuState *s)
{
    s->rng ^= s->rng >> 12;
    s->rng ^= s->rng << 25;
    s->rng ^= s->rng >> 27;
    return s->rng * 0x2545f4914f6cdd1dull;
}

/*
 * Delay of one stage in microseconds: mostly short, with a long tail,
 * like a memory system where most requests go through and a few wait
 * behind bank conflicts and refreshes.
 */
static int64_t megpu_wq_delay(MegpuState *s)
{
    uint64_t r = megpu_wq_rand(s);
    uint32_t pick = (r >> 40) % 100, frac = r % 1000;

    if (pick < 50) {
        return 10 + frac * 90 / 1000;           /* 10 us .. 100 us */
    }
    if (pick < 85) {
        return 100 + frac * 400 / 1000;         /* 100 us .. 500 us */
    }
    return 500 + frac * 1500 / 1000;            /* 0.5 ms .. 2 ms */
}

static void megpu_wq_reseed(MegpuState *s)
{
    /* xorshift state must not be 0 */
    s->rng = ((uint64_t)s->write_seed << 32 | s->write_seed) ^
             0x9e3779b97f4a7c15ull;
}

/* Wake the MC thread if @due is before it would wake by itself. */
static void megpu_mc_kick_locked(MegpuState *s, int64_t due)
{
    if (due < s->mc_wake_at) {
        s->mc_wake_at = due;
        event_notifier_set(&s->mc_notify);
    }
}

static bool megpu_wq_overlap(const MegpuWrite *w, hwaddr pa, uint64_t len)
{
    return w->pa < pa + len && pa < w->pa + w->len;
}

static void megpu_wq_unlink_locked(MegpuState *s, MegpuWrite *w)
{
    MegpuEngine *e = w->e;

    if (w->in_mc) {
        QTAILQ_REMOVE(&s->mc_queue, w, link);
        s->mc_len--;
    } else {
        QTAILQ_REMOVE(&e->wq, w, link);
        qatomic_set(&e->wq_len, e->wq_len - 1);
    }
    qatomic_set(&e->wq_pending, e->wq_pending - 1);
    qatomic_set(&s->wq_total, s->wq_total - 1);
}

/* Write one entry to RAM and forget it. */
static void megpu_wq_land_one_locked(MegpuState *s, MegpuWrite *w)
{
    void *host = megpu_ram_map(s, w->pa, w->len, true);

    trace_megpu_wq_land(w->e->idx, w->seq, w->pa, w->len, w->in_mc);
    if (host) {
        memcpy(host, w->data, w->len);
        megpu_ram_unmap(s, host, w->len, true);
    } else {
        /* RAM went away since the write was issued: nothing to write */
        qemu_log_mask(LOG_GUEST_ERROR,
                      "megpu: posted write to 0x%" HWADDR_PRIx
                      " dropped, no longer RAM\n", w->pa);
    }
    megpu_wq_unlink_locked(s, w);
    g_free(w);
}

/*
 * The oldest pending entry older than @seq that overlaps [pa, pa + len).
 * Both stages are sorted by issue number, so each scan stops early.
 */
static MegpuWrite *megpu_wq_older_overlap(MegpuState *s, hwaddr pa,
                                          uint64_t len, uint64_t seq)
{
    MegpuWrite *best = NULL, *w;

    for (unsigned n = 0; n < s->num_engines; n++) {
        QTAILQ_FOREACH(w, &s->engines[n].wq, link) {
            if (w->seq >= seq || (best && w->seq >= best->seq)) {
                break;
            }
            if (megpu_wq_overlap(w, pa, len)) {
                best = w;
                break;
            }
        }
    }
    QTAILQ_FOREACH(w, &s->mc_queue, link) {
        if (w->seq >= seq || (best && w->seq >= best->seq)) {
            break;
        }
        if (megpu_wq_overlap(w, pa, len)) {
            best = w;
            break;
        }
    }
    return best;
}

/* Land @w, first the older writes to the same bytes, in issue order. */
static void megpu_wq_land_locked(MegpuState *s, MegpuWrite *w)
{
    for (;;) {
        MegpuWrite *cur = w, *p;

        while ((p = megpu_wq_older_overlap(s, cur->pa, cur->len, cur->seq))) {
            cur = p;
        }
        megpu_wq_land_one_locked(s, cur);
        if (cur == w) {
            return;
        }
    }
}

/* Oldest pending write (NULL if none): heads of the sorted stages. */
static MegpuWrite *megpu_wq_oldest_locked(MegpuState *s)
{
    MegpuWrite *best = QTAILQ_FIRST(&s->mc_queue);

    for (unsigned n = 0; n < s->num_engines; n++) {
        MegpuWrite *w = QTAILQ_FIRST(&s->engines[n].wq);

        if (w && (!best || w->seq < best->seq)) {
            best = w;
        }
    }
    return best;
}

static void megpu_flush_done_locked(MegpuState *s, uint32_t count)
{
    s->flush_seq += count;
    s->flush_status |= MEGPU_FLUSH_STATUS_DONE;
    s->misc_irq_status |= MEGPU_MISC_IRQ_FLUSH_DONE;
    trace_megpu_flush_done(s->flush_seq);
    megpu_raise_irq(s, MEGPU_VEC_MISC);
}

/* Complete the host flushes, in start order, whose writes have landed. */
static void megpu_flush_check_locked(MegpuState *s)
{
    MegpuWrite *oldest = megpu_wq_oldest_locked(s);
    uint64_t landed_below = oldest ? oldest->seq : s->wq_seq;
    unsigned done = 0;

    while (done < s->flushes->len &&
           g_array_index(s->flushes, MegpuFlush, done).target <=
           landed_below) {
        megpu_flush_done_locked(s,
                                g_array_index(s->flushes, MegpuFlush,
                                              done).count);
        done++;
    }
    if (done) {
        g_array_remove_range(s->flushes, 0, done);
    }
    if (!s->flushes->len) {
        s->flush_status &= ~MEGPU_FLUSH_STATUS_BUSY;
    }
}

/* Insert into the MC queue, keeping it sorted (arrivals are mostly late). */
static void megpu_mc_insert_locked(MegpuState *s, MegpuWrite *w)
{
    MegpuWrite *p;

    QTAILQ_FOREACH_REVERSE(p, &s->mc_queue, link) {
        if (p->seq < w->seq) {
            QTAILQ_INSERT_AFTER(&s->mc_queue, p, w, link);
            return;
        }
    }
    QTAILQ_INSERT_HEAD(&s->mc_queue, w, link);
}

/*
 * One pass of the memory controller at time @now: land what is due in
 * stage 2, move what is due in stage 1 while stage 2 has room, complete
 * flushes. Returns when the next entry falls due (INT64_MAX: none).
 */
static int64_t megpu_mc_step_locked(MegpuState *s, int64_t now,
                                    bool *changed)
{
    int64_t next = INT64_MAX;
    MegpuWrite *w, *tmp;
    /* x-hold-writes: stage 1 moves only for a host flush (tests) */
    bool hold = s->hold_writes && !s->flushes->len;

    /* pushing out older writes only removes entries before @w */
    QTAILQ_FOREACH_SAFE(w, &s->mc_queue, link, tmp) {
        if (w->due <= now) {
            megpu_wq_land_locked(s, w);
            *changed = true;
        } else {
            next = MIN(next, w->due);
        }
    }
    for (unsigned n = 0; n < s->num_engines; n++) {
        MegpuEngine *e = &s->engines[n];

        QTAILQ_FOREACH_SAFE(w, &e->wq, link, tmp) {
            if (hold) {
                break;
            }
            if (w->due > now) {
                next = MIN(next, w->due);
                continue;
            }
            if (s->mc_len >= MEGPU_MC_QUEUE_DEPTH) {
                /* waits for room: a stage-2 entry lands before long */
                continue;
            }
            QTAILQ_REMOVE(&e->wq, w, link);
            qatomic_set(&e->wq_len, e->wq_len - 1);
            w->in_mc = true;
            w->due = now + megpu_wq_delay(s);
            megpu_mc_insert_locked(s, w);
            s->mc_len++;
            trace_megpu_wq_move(n, w->seq, s->mc_len);
            next = MIN(next, w->due);
            *changed = true;
        }
    }
    megpu_flush_check_locked(s);
    return next;
}

static void *megpu_mc_thread(void *opaque)
{
    MegpuState *s = opaque;
    GPollFD pfd = {
        .fd = event_notifier_get_fd(&s->mc_notify),
        .events = G_IO_IN,
    };

    /* landing maps RAM with address_space_map, which uses RCU */
    rcu_register_thread();
    qemu_mutex_lock(&s->wq_lock);
    while (!s->mc_stop) {
        int64_t now = g_get_monotonic_time(), next;
        bool changed = false;

        next = megpu_mc_step_locked(s, now, &changed);
        s->mc_wake_at = next;
        if (changed) {
            /* room in a stage-1 queue, or an engine's writes landed */
            qemu_cond_broadcast(&s->wq_cond);
        }
        qemu_mutex_unlock(&s->wq_lock);
        if (changed) {
            /* a landed write may be the value a WAIT watches */
            megpu_wake_waiters(s);
        }
        qemu_poll_ns(&pfd, 1, next == INT64_MAX ? -1 :
                     MAX(next - now, 0) * SCALE_US);
        event_notifier_test_and_clear(&s->mc_notify);
        qemu_mutex_lock(&s->wq_lock);
    }
    qemu_mutex_unlock(&s->wq_lock);
    rcu_unregister_thread();
    return NULL;
}

bool megpu_wq_relaxed(MegpuState *s)
{
    return qatomic_read(&s->write_mode) == MEGPU_WRITE_MODE_RELAXED;
}

/*
 * Wait for room in this engine's queue. Only the engine thread adds to
 * it, so the room is still there when it posts. A reset cuts the wait
 * short; so does a switch to strict mode, where nothing is queued.
 */
bool megpu_wq_reserve(MegpuExec *x)
{
    MegpuEngine *e = x->e;
    MegpuState *s = e->s;
    bool counted = false, ok = true;

    if (qatomic_read(&e->wq_len) < MEGPU_WRITE_QUEUE_DEPTH) {
        return true;
    }
    qemu_mutex_lock(&s->wq_lock);
    while (e->wq_len >= MEGPU_WRITE_QUEUE_DEPTH &&
           s->write_mode == MEGPU_WRITE_MODE_RELAXED) {
        if (megpu_engine_should_abort(e)) {
            x->aborted = true;
            ok = false;
            break;
        }
        if (!counted) {
            counted = true;
            qatomic_inc(&e->stalled_writes);
            trace_megpu_wq_stall(e->idx, e->wq_len);
        }
        qemu_cond_timedwait(&s->wq_cond, &s->wq_lock, 1);
    }
    qemu_mutex_unlock(&s->wq_lock);
    return ok;
}

/*
 * Issue a data write of @len bytes (within one page) at guest-physical
 * @pa, mapped at @host. Relaxed: queue it. Strict (possibly switched to
 * since the caller looked): write it now.
 */
void megpu_wq_post(MegpuExec *x, hwaddr pa, void *host, const void *data,
                   uint32_t len)
{
    MegpuEngine *e = x->e;
    MegpuState *s = e->s;
    MegpuWrite *w;

    qemu_mutex_lock(&s->wq_lock);
    if (s->write_mode != MEGPU_WRITE_MODE_RELAXED) {
        qemu_mutex_unlock(&s->wq_lock);
        megpu_wq_order(s, pa, len);
        memcpy(host, data, len);
        return;
    }
    w = g_malloc(sizeof(*w) + len);
    w->e = e;
    w->seq = s->wq_seq++;
    w->due = g_get_monotonic_time() + megpu_wq_delay(s);
    w->pa = pa;
    w->len = len;
    w->in_mc = false;
    memcpy(w->data, data, len);
    QTAILQ_INSERT_TAIL(&e->wq, w, link);
    qatomic_set(&e->wq_len, e->wq_len + 1);
    qatomic_set(&e->wq_pending, e->wq_pending + 1);
    qatomic_set(&s->wq_total, s->wq_total + 1);
    trace_megpu_wq_post(e->idx, w->seq, pa, len, e->wq_len);
    megpu_mc_kick_locked(s, w->due);
    qemu_mutex_unlock(&s->wq_lock);
}

/*
 * A write that bypasses the queues (TIMESTAMP, SIGNAL, atomics) to
 * [pa, pa + len): first push out the queued writes to the same bytes,
 * so that the older writes cannot land over it later.
 */
void megpu_wq_order(MegpuState *s, hwaddr pa, uint32_t len)
{
    MegpuWrite *w;

    if (!qatomic_read(&s->wq_total)) {
        return;
    }
    qemu_mutex_lock(&s->wq_lock);
    while ((w = megpu_wq_older_overlap(s, pa, len, UINT64_MAX))) {
        megpu_wq_land_locked(s, w);
    }
    qemu_cond_broadcast(&s->wq_cond);
    qemu_mutex_unlock(&s->wq_lock);
}

/*
 * An engine reads its own queued writes: patch @buf, read from RAM at
 * @pa, with the engine's pending entries of both stages, oldest first.
 */
void megpu_wq_forward(MegpuEngine *e, hwaddr pa, void *buf, uint32_t len)
{
    MegpuState *s = e->s;
    MegpuWrite *a, *b;

    if (!qatomic_read(&e->wq_pending)) {
        return;
    }
    qemu_mutex_lock(&s->wq_lock);
    a = QTAILQ_FIRST(&e->wq);
    b = QTAILQ_FIRST(&s->mc_queue);
    for (;;) {
        MegpuWrite *w;
        hwaddr lo, hi;

        while (b && b->e != e) {
            b = QTAILQ_NEXT(b, link);
        }
        if (!a && !b) {
            break;
        }
        /* merge the two sorted stages */
        if (a && (!b || a->seq < b->seq)) {
            w = a;
            a = QTAILQ_NEXT(a, link);
        } else {
            w = b;
            b = QTAILQ_NEXT(b, link);
        }
        if (!megpu_wq_overlap(w, pa, len)) {
            continue;
        }
        lo = MAX(w->pa, pa);
        hi = MIN(w->pa + w->len, pa + len);
        memcpy((uint8_t *)buf + (lo - pa), w->data + (lo - w->pa), hi - lo);
    }
    qemu_mutex_unlock(&s->wq_lock);
}

/* FLUSH packet: wait until every write this engine issued has landed. */
bool megpu_wq_engine_flush(MegpuExec *x)
{
    MegpuEngine *e = x->e;
    MegpuState *s = e->s;
    bool ok = true;

    trace_megpu_eng_flush(e->idx, qatomic_read(&e->wq_pending));
    qemu_mutex_lock(&s->wq_lock);
    while (e->wq_pending) {
        if (megpu_engine_should_abort(e)) {
            x->aborted = true;
            ok = false;
            break;
        }
        qemu_cond_timedwait(&s->wq_cond, &s->wq_lock, 1);
    }
    qemu_mutex_unlock(&s->wq_lock);
    return ok;
}

/* Engine reset: its queued writes (both stages) are dropped, unwritten. */
void megpu_wq_engine_drop(MegpuEngine *e)
{
    MegpuState *s = e->s;
    MegpuWrite *w, *tmp;
    uint32_t dropped = 0;

    if (!qatomic_read(&e->wq_pending)) {
        return;
    }
    qemu_mutex_lock(&s->wq_lock);
    QTAILQ_FOREACH_SAFE(w, &e->wq, link, tmp) {
        megpu_wq_unlink_locked(s, w);
        g_free(w);
        dropped++;
    }
    QTAILQ_FOREACH_SAFE(w, &s->mc_queue, link, tmp) {
        if (w->e == e) {
            megpu_wq_unlink_locked(s, w);
            g_free(w);
            dropped++;
        }
    }
    trace_megpu_wq_drop(e->idx, dropped);
    /* a flush waiting for them is done now */
    megpu_flush_check_locked(s);
    qemu_cond_broadcast(&s->wq_cond);
    qemu_mutex_unlock(&s->wq_lock);
}

/* Land everything now, in issue order (a switch to strict mode). */
static void megpu_wq_drain_locked(MegpuState *s)
{
    MegpuWrite *w;

    while ((w = megpu_wq_oldest_locked(s))) {
        megpu_wq_land_one_locked(s, w);
    }
    megpu_flush_check_locked(s);
    qemu_cond_broadcast(&s->wq_cond);
}

static void megpu_wq_set_mode(MegpuState *s, uint32_t mode)
{
    if (mode != MEGPU_WRITE_MODE_STRICT && mode != MEGPU_WRITE_MODE_RELAXED) {
        qemu_log_mask(LOG_GUEST_ERROR,
                      "megpu: WRITE_MODE %u unknown, ignored\n", mode);
        return;
    }
    qemu_mutex_lock(&s->wq_lock);
    trace_megpu_write_mode(mode, s->wq_total);
    if (mode == MEGPU_WRITE_MODE_STRICT) {
        /* bounded work (the queues are), so the MMIO handler may do it */
        megpu_wq_drain_locked(s);
    }
    qatomic_set(&s->write_mode, mode);
    qemu_mutex_unlock(&s->wq_lock);
    megpu_wake_waiters(s);
}

/* FLUSH register: starts a flush; the MC thread completes it. */
static void megpu_flush_start(MegpuState *s)
{
    MegpuFlush *last;

    qemu_mutex_lock(&s->wq_lock);
    s->flush_started++;
    trace_megpu_flush_start(s->flush_started, s->wq_seq, s->wq_total);
    last = s->flushes->len ?
           &g_array_index(s->flushes, MegpuFlush, s->flushes->len - 1) :
           NULL;
    if (last && last->target == s->wq_seq) {
        /* no write since the previous flush: complete together */
        last->count++;
    } else {
        MegpuFlush f = { .target = s->wq_seq, .count = 1 };

        g_array_append_val(s->flushes, f);
    }
    s->flush_status |= MEGPU_FLUSH_STATUS_BUSY;
    /* with nothing older queued, this completes it at once */
    megpu_flush_check_locked(s);
    if (s->hold_writes) {
        /* held entries may be due already: move them now */
        megpu_mc_kick_locked(s, 0);
    }
    qemu_mutex_unlock(&s->wq_lock);
}

bool megpu_wq_reg_read(MegpuState *s, hwaddr addr, uint64_t *val)
{
    switch (addr) {
    case MEGPU_REG_WRITE_MODE:
        *val = qatomic_read(&s->write_mode);
        return true;
    case MEGPU_REG_FLUSH:
    case MEGPU_REG_FLUSH_STATUS:
    case MEGPU_REG_FLUSH_SEQ:
    case MEGPU_REG_MISC_IRQ_STATUS:
    case MEGPU_REG_QUEUE_MC:
        break;
    default:
        return false;
    }
    qemu_mutex_lock(&s->wq_lock);
    switch (addr) {
    case MEGPU_REG_FLUSH:
        *val = s->flush_started;
        break;
    case MEGPU_REG_FLUSH_STATUS:
        *val = s->flush_status;
        break;
    case MEGPU_REG_FLUSH_SEQ:
        *val = s->flush_seq;
        break;
    case MEGPU_REG_MISC_IRQ_STATUS:
        *val = s->misc_irq_status;
        break;
    case MEGPU_REG_QUEUE_MC:
        *val = s->mc_len;
        break;
    }
    qemu_mutex_unlock(&s->wq_lock);
    return true;
}

bool megpu_wq_reg_write(MegpuState *s, hwaddr addr, uint32_t val)
{
    switch (addr) {
    case MEGPU_REG_WRITE_MODE:
        megpu_wq_set_mode(s, val);
        return true;
    case MEGPU_REG_FLUSH:
        megpu_flush_start(s);
        return true;
    case MEGPU_REG_FLUSH_STATUS:
        qemu_mutex_lock(&s->wq_lock);
        s->flush_status &= ~(val & MEGPU_FLUSH_STATUS_DONE);
        qemu_mutex_unlock(&s->wq_lock);
        return true;
    case MEGPU_REG_MISC_IRQ_STATUS:
        qemu_mutex_lock(&s->wq_lock);
        s->misc_irq_status &= ~val;
        qemu_mutex_unlock(&s->wq_lock);
        return true;
    case MEGPU_REG_FLUSH_SEQ:
    case MEGPU_REG_QUEUE_MC:
        return true;            /* read-only: ignored */
    default:
        return false;
    }
}

/* Set MISC_IRQ_STATUS bits and send the misc vector (any thread). */
void megpu_misc_irq(MegpuState *s, uint32_t bits)
{
    qemu_mutex_lock(&s->wq_lock);
    s->misc_irq_status |= bits;
    qemu_mutex_unlock(&s->wq_lock);
    megpu_raise_irq(s, MEGPU_VEC_MISC);
}

/*
 * Device reset, after every engine has reset (and dropped its writes):
 * forget flushes, restore the mode from the property and the seed.
 */
void megpu_wq_reset(MegpuState *s)
{
    MegpuWrite *w;

    qemu_mutex_lock(&s->wq_lock);
    while ((w = megpu_wq_oldest_locked(s))) {
        megpu_wq_unlink_locked(s, w);
        g_free(w);
    }
    g_array_set_size(s->flushes, 0);
    s->flush_started = 0;
    s->flush_seq = 0;
    s->flush_status = 0;
    s->misc_irq_status = 0;
    s->wq_seq = 0;
    megpu_wq_reseed(s);
    qatomic_set(&s->write_mode, s->write_mode_reset);
    qemu_cond_broadcast(&s->wq_cond);
    qemu_mutex_unlock(&s->wq_lock);
}

bool megpu_wq_init(MegpuState *s, Error **errp)
{
    const char *mode = s->write_mode_prop ? s->write_mode_prop : "relaxed";

    if (!strcmp(mode, "relaxed")) {
        s->write_mode_reset = MEGPU_WRITE_MODE_RELAXED;
    } else if (!strcmp(mode, "strict")) {
        s->write_mode_reset = MEGPU_WRITE_MODE_STRICT;
    } else {
        error_setg(errp, "megpu: write-mode must be relaxed or strict");
        return false;
    }
    if (event_notifier_init(&s->mc_notify, false) < 0) {
        error_setg(errp, "megpu: cannot create the MC thread's notifier");
        return false;
    }
    qemu_mutex_init(&s->wq_lock);
    qemu_cond_init(&s->wq_cond);
    QTAILQ_INIT(&s->mc_queue);
    s->flushes = g_array_new(false, false, sizeof(MegpuFlush));
    s->write_mode = s->write_mode_reset;
    s->mc_wake_at = INT64_MAX;
    megpu_wq_reseed(s);
    for (unsigned n = 0; n < MEGPU_MAX_ENGINES; n++) {
        QTAILQ_INIT(&s->engines[n].wq);
    }
    qemu_thread_create(&s->mc_thread, "megpu-mc", megpu_mc_thread, s,
                       QEMU_THREAD_JOINABLE);
    s->mc_started = true;
    return true;
}

/* Unrealize, after the engine threads are gone. */
void megpu_wq_fini(MegpuState *s)
{
    if (!s->mc_started) {
        return;
    }
    qemu_mutex_lock(&s->wq_lock);
    s->mc_stop = true;
    event_notifier_set(&s->mc_notify);
    qemu_mutex_unlock(&s->wq_lock);
    qemu_thread_join(&s->mc_thread);
    s->mc_started = false;
    megpu_wq_reset(s);
    g_array_free(s->flushes, true);
    qemu_cond_destroy(&s->wq_cond);
    qemu_mutex_destroy(&s->wq_lock);
    event_notifier_cleanup(&s->mc_notify);
}
