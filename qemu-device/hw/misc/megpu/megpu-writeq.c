/*
 * megpu: posted writes, the memory controller and flushes (seed 004)
 *
 * DOC: posted writes and flushes
 *
 * Seed 004 ("Apparatus, System, and Method for Dependent Computations of
 * Streaming Multiprocessors") makes a dependent computation wait for its
 * producer's writes to be flushed to memory; this file makes that
 * necessary by modelling writes that are not in memory yet. The FLUSH
 * and IDLE_SIGNAL packets are in megpu-flush.c.
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
 * A wave store that starts where the engine's youngest stage-1 entry of
 * wave stores ends, in the same page, joins that entry when no pending
 * write of any engine overlaps its bytes (megpu_wq_append_locked): a
 * gang's rows are one entry per page, not one per 1 KiB row. Other
 * writes keep an entry each.
 *
 * Entries hold guest-physical addresses translated when the write was
 * issued, their data, and a hold on the RAM the issuing access mapped
 * (checked as all engine DMA is, megpu_ram_map; the entry takes its own
 * reference to the region the caller's map found), so landing never
 * reaches MMIO and is a
 * copy; the hold is released after the landing, outside the engine's
 * wq_lock.
 *
 * Deterministic timing. The delays are not host time: each engine has
 * its own generator (xorshift64*, seeded from write-seed and the engine
 * index, seeded again when the engine or the device resets) and its own
 * memory clock, counted in ticks. An entry's two delays (1 to 200 ticks,
 * mostly short) are drawn when it is issued; it moves to stage 2 when
 * its engine's clock reaches issue + delay 1 and lands delay 2 ticks
 * later. An engine's clock is
 *
 *   virtual time (QEMU_CLOCK_VIRTUAL, 10 us a tick, from the reset)
 *   + one tick per packet the engine starts and per write it posts
 *   + the ticks a wait fast-forwarded.
 *
 * Whoever moves a clock (the engine thread, the virtual-time timer in
 * the main loop, the MC thread) catches the entries up one tick with
 * work at a time, so what has landed at a given clock value depends on
 * the seed and the engine's packets only, not on which thread got there
 * or how loaded the host is. Waits fast-forward: a FLUSH packet or a
 * full queue advances the engine's own clock to its next tick with work;
 * a host flush makes the MC thread do so for the engine of the oldest
 * pending write. Time passes faster while someone waits; the order is
 * the same. Writes land eventually without a flush because virtual time
 * moves on: the virtual-time timer fires for the next entry due, or,
 * while its engine runs packets and so catches up by itself, up to 50
 * ticks later (the main loop need not wake for every tick of a stream
 * of writes). Under qtest it moves only in clock_step, so a test sees the
 * same stale pages after the same packets on any host, and stepping the
 * clock shows the landing order (the timer runs inside clock_step).
 * What does not replay: engines running at the same time interleave
 * their issue numbers as the host schedules them (same-bytes order and a
 * full stage 2 couple them), and a host flush started while an engine
 * runs fast-forwards it at a host-timed point. One engine's stream, and
 * flushes of idle engines, replay.
 *
 * x-hold-writes (tests): only virtual time moves writes (no engine
 * ticks, no fast-forward for flushes or full queues), so queues fill and
 * flushes stay BUSY until the test steps the clock.
 *
 * TEST_HOLD (x-test-regs, guest tests): HOLD_TIME stops landing by time
 * and engine ticks (only flushes and full queues land writes); HOLD_ALL
 * stops all landing, so host flushes and FLUSH packets wait until the
 * test writes 0.
 *
 * Locks (issue 25: two engines posting took turns at one lock, and ran
 * no faster than one). Each engine's queues, heaps, filter and clock are
 * under its own wq_lock, and its thread posts, reads its own writes and
 * moves and lands its own entries holding only that. Issue numbers and
 * stage 2's fill are atomic counters. What looks at more than one
 * engine holds the device's wq_lock and then every engine's by index
 * (megpu_wq_lock_all): a landing whose bytes another engine's filter
 * may hold (the older write must land first), a direct write over
 * queued ones, flushes, making room in a full stage 2, the timer, resets
 * and mode switches. An engine that finds it needs them drops its own
 * and takes them all (megpu_wq_escalate) before it changes anything it
 * cannot finish, and looks again. The order is the model's either way:
 * one engine's stream and the writes qtest's reference trace are the
 * same as with a single lock.
 *
 * The MC thread serves host flushes only. It never takes the BQL, and
 * an engine's (packet) lock only after it dropped the write locks, to
 * wake the engines in a WAIT (a landed write may be what one watches).
 * The virtual-time timer runs under the BQL and takes the write locks
 * only (the order MMIO handlers use too).
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */

#include "qemu/osdep.h"
#include "qemu/atomic.h"
#include "qemu/log.h"
#include "qemu/processor.h"
#include "qemu/rcu.h"
#include "qemu/timer.h"
#include "qapi/error.h"
#include "megpu-internal.h"
#include "trace.h"

struct MegpuWrite {
    QTAILQ_ENTRY(MegpuWrite) link;      /* e->wq, or e->wq_mc in stage 2 */
    QSLIST_ENTRY(MegpuWrite) done;      /* e->wq_landed */
    MegpuEngine *e;
    uint64_t seq;               /* issue order, device-wide */
    int64_t due;                /* tick of e's clock it leaves its stage */
    uint32_t delay2;            /* ticks in stage 2, drawn when issued */
    hwaddr pa;
    void *host;                 /* @pa mapped when issued; NULL: not RAM */
    MemoryRegion *mr;           /* the RAM @host is in, held */
    uint32_t len;
    uint32_t cap;               /* bytes @data has room for */
    uint32_t heap_idx;          /* in its stage's heap; NO_HEAP: taken out */
    bool in_mc;                 /* stage 2 */
    uint8_t data[];
};

#define MEGPU_WQ_NO_HEAP    UINT32_MAX

/* Host flushes waiting: done when every write below @target has landed. */
typedef struct MegpuFlush {
    uint64_t target;
    uint32_t count;             /* flushes started with this target */
} MegpuFlush;

/* One tick of the memory clock in virtual time */
#define MEGPU_WQ_TICK_NS    (10 * SCALE_US)
/* how far the timer may trail a busy engine's entries, in ticks */
#define MEGPU_WQ_BUSY_SLACK 50

/*
 * An engine's wq_lock on its hot paths (a post, a packet's tick, its
 * reads): try it for a few microseconds before sleeping. It is held
 * about a microsecond at a time, but a thread that sleeps on it is woken
 * some 100 us later on a busy host (an off-CPU profile showed engines
 * taking turns at that pace when they shared one lock).
 */
#define MEGPU_WQ_LOCK_SPINS 2000

static void megpu_wq_lock_own(MegpuEngine *e)
{
    for (unsigned i = 0; i < MEGPU_WQ_LOCK_SPINS; i++) {
        if (!qemu_mutex_trylock(&e->wq_lock)) {
            return;
        }
        cpu_relax();
    }
    qemu_mutex_lock(&e->wq_lock);
}

/*
 * Whatever looks at more than one engine's queues (a landing that may
 * push out another engine's older write, the oldest write of all, a
 * flush, a reset) holds the device's wq_lock and every engine's.
 */
static void megpu_wq_lock_all(MegpuState *s)
{
    qemu_mutex_lock(&s->wq_lock);
    for (unsigned n = 0; n < s->num_engines; n++) {
        qemu_mutex_lock(&s->engines[n].wq_lock);
    }
}

/*
 * Unmap and free entries that landed or were dropped: the dirty log and
 * the memory region's reference need no lock, so this runs after the
 * unlock (the copy into RAM, the landing itself, stays under it).
 */
static void megpu_wq_free_landed(MegpuState *s, MegpuWrite *w)
{
    while (w) {
        MegpuWrite *next = QSLIST_NEXT(w, done);

        if (w->host) {
            megpu_ram_unmap(s, w->host, w->len, true);
        }
        g_free(w);
        w = next;
    }
}

/* Take @e's landed entries off its list (its wq_lock held). */
static MegpuWrite *megpu_wq_take_landed(MegpuEngine *e, MegpuWrite *more)
{
    MegpuWrite *w = QSLIST_FIRST(&e->wq_landed), *last = w;

    if (!w) {
        return more;
    }
    QSLIST_INIT(&e->wq_landed);
    while (QSLIST_NEXT(last, done)) {
        last = QSLIST_NEXT(last, done);
    }
    last->done.sle_next = more;
    return w;
}

static void megpu_wq_unlock_own(MegpuEngine *e)
{
    MegpuWrite *w = megpu_wq_take_landed(e, NULL);

    qemu_mutex_unlock(&e->wq_lock);
    megpu_wq_free_landed(e->s, w);
}

static void megpu_wq_unlock_all(MegpuState *s)
{
    MegpuWrite *w = NULL;

    for (unsigned n = s->num_engines; n-- > 0;) {
        w = megpu_wq_take_landed(&s->engines[n], w);
        qemu_mutex_unlock(&s->engines[n].wq_lock);
    }
    qemu_mutex_unlock(&s->wq_lock);
    megpu_wq_free_landed(s, w);
}

/* Unlock what megpu_wq_escalate() says is held: @e's, or all. */
static void megpu_wq_unlock_held(MegpuEngine *e, bool all)
{
    if (all) {
        megpu_wq_unlock_all(e->s);
    } else {
        megpu_wq_unlock_own(e);
    }
}

/*
 * @e's own lock is not enough (a landing may push out another engine's
 * write, stage 2 is full of others' entries): drop it and take them all,
 * in order. Meanwhile others may have moved @e's entries on, which is
 * what could have happened at any unlock; callers look again.
 */
static void megpu_wq_escalate(MegpuEngine *e, bool *all)
{
    if (*all) {
        return;
    }
    megpu_wq_unlock_own(e);
    megpu_wq_lock_all(e->s);
    *all = true;
}

/* Wake the engines waiting for room or for their writes to land. */
static void megpu_wq_broadcast(MegpuState *s)
{
    for (unsigned n = 0; n < s->num_engines; n++) {
        qemu_cond_broadcast(&s->engines[n].wq_cond);
    }
}

/* xorshift64*: cheap, and the same seed gives the same delays */
static uint64_t megpu_wq_rand(MegpuEngine *e)
{
    e->wq_rng ^= e->wq_rng >> 12;
    e->wq_rng ^= e->wq_rng << 25;
    e->wq_rng ^= e->wq_rng >> 27;
    return e->wq_rng * 0x2545f4914f6cdd1dull;
}

/*
 * Delay of one stage in ticks: mostly short, with a long tail, like a
 * memory system where most requests go through and a few wait behind
 * bank conflicts and refreshes. A tick is 10 us of virtual time, or one
 * packet or write of the issuing engine.
 */
static uint32_t megpu_wq_delay(MegpuEngine *e)
{
    uint64_t r = megpu_wq_rand(e);
    uint32_t pick = (r >> 40) % 100, frac = r % 1000;

    if (pick < 50) {
        return 1 + frac * 9 / 1000;             /* 1 .. 10 */
    }
    if (pick < 85) {
        return 10 + frac * 40 / 1000;           /* 10 .. 50 */
    }
    return 50 + frac * 150 / 1000;              /* 50 .. 200 */
}

/* Each engine has its own generator, from the seed and its index. */
static void megpu_wq_reseed(MegpuState *s, MegpuEngine *e)
{
    uint64_t idx = e - s->engines;
    uint64_t x = ((uint64_t)s->write_seed << 32 | s->write_seed) ^
                 0x9e3779b97f4a7c15ull ^ (idx + 1) * 0xbf58476d1ce4e5b9ull;

    /* splitmix64 finaliser, so neighbouring indexes differ at once */
    x ^= x >> 30;
    x *= 0xbf58476d1ce4e5b9ull;
    x ^= x >> 27;
    x *= 0x94d049bb133111ebull;
    x ^= x >> 31;
    /* xorshift state must not be 0 */
    e->wq_rng = x ? x : 1;
    e->wq_steps = 0;
}

/* Ticks of virtual time since the device reset (the clocks' common part) */
static int64_t megpu_wq_vticks(MegpuState *s)
{
    int64_t ns = qemu_clock_get_ns(QEMU_CLOCK_VIRTUAL) - s->vclock_base;

    return ns > 0 ? ns / MEGPU_WQ_TICK_NS : 0;
}

/*
 * The memory clock of @e's writes at virtual time @vt (megpu_wq_vticks(),
 * read once per post or tick: in a TCG guest each read is a seqlock and
 * a clock_gettime, and a post read it three or four times): virtual
 * time plus the engine's own ticks (its packets and writes, and the
 * ticks a wait fast-forwarded). With x-hold-writes only virtual time
 * counts.
 */
static int64_t megpu_wq_clock(MegpuState *s, MegpuEngine *e, int64_t vt)
{
    return vt + (s->hold_writes ? 0 : e->wq_steps);
}

/* TEST_HOLD: writes do not land because time passes */
static bool megpu_wq_time_held(MegpuState *s)
{
    return qatomic_read(&s->test_hold) != MEGPU_TEST_HOLD_NONE;
}

/* TEST_HOLD_ALL or x-hold-writes: waits do not fast-forward */
static bool megpu_wq_ff_held(MegpuState *s)
{
    return s->hold_writes ||
           qatomic_read(&s->test_hold) == MEGPU_TEST_HOLD_ALL;
}

/*
 * Make the virtual-time timer fire by @at (ns) if it is not armed for
 * that already. Every engine asks at almost every packet and post, and
 * timer_mod_anticipate_ns() takes the clock's one timer-list lock (the
 * main loop's too) even when it changes nothing: two engines streaming
 * writes queued on it thousands of times a second and ran no faster
 * than one (issue 25). So the deadline asked for is kept here, and only
 * an earlier one goes to the timer. It is never later than the timer's
 * own: whoever lowers it arms the timer after; the timer's callback
 * forgets it before it looks at any engine (an engine that skipped
 * arming for a stale deadline holds its wq_lock, so the callback sees
 * its entry), and so does a reset, under every lock, as it deletes the
 * timer.
 */
static void megpu_wq_arm_at(MegpuState *s, int64_t at)
{
    int64_t armed = qatomic_read(&s->mc_timer_at);

    while (at < armed) {
        int64_t seen = qatomic_cmpxchg(&s->mc_timer_at, armed, at);

        if (seen == armed) {
            timer_mod_anticipate_ns(s->mc_timer, at);
            return;
        }
        armed = seen;
    }
}

/*
 * Make the virtual-time timer fire by the time @e's tick @due comes. An
 * engine inside a packet catches its entries up itself at every packet
 * and post, so for it the timer is only a backstop (a packet that
 * waits), MEGPU_WQ_BUSY_SLACK ticks ahead: otherwise the main loop would
 * wake for almost every tick while an engine streams writes, on the
 * cores the engines and vCPUs need. It is exact again once the engine's
 * ring is drained (megpu_wq_engine_drained), and always when only time
 * lands writes (x-hold-writes, TEST_HOLD). @now: the virtual time (in
 * ticks) the caller's catch-up used.
 */
static void megpu_wq_arm_locked(MegpuState *s, MegpuEngine *e, int64_t due,
                                int64_t now)
{
    int64_t vt = due - (s->hold_writes ? 0 : e->wq_steps);

    if (qatomic_read(&e->wq_running) && !s->hold_writes &&
        !megpu_wq_time_held(s)) {
        vt = MAX(vt, now + MEGPU_WQ_BUSY_SLACK);
    }

    megpu_wq_arm_at(s, s->vclock_base + MAX(vt, 1) * MEGPU_WQ_TICK_NS);
}

static bool megpu_wq_overlap(const MegpuWrite *w, hwaddr pa, uint64_t len)
{
    return w->pa < pa + len && pa < w->pa + w->len;
}

/*
 * Which bytes may hold an engine's pending writes: a counting filter,
 * one of MEGPU_WQ_FILTER_BITS counters per page of guest memory, by a
 * multiplicative hash; an entry counts its page up when it is queued and
 * down when it lands, so the filter describes the writes pending now,
 * however long a stream of writes never lets the queues empty (a filter
 * of bits cleared only on empty queues filled up within a batch of
 * tasks, and then every read took the lock and walked the queues). An
 * engine's reads, the direct writes that order against the queues and
 * a landing that must know whether another engine has an older write
 * to the same bytes look at the counters first, and at queues only when
 * a page they touch may have a pending write. Pages, not smaller
 * granules: an engine streaming writes has a few hundred entries of a
 * page each pending, which with 256-byte granules filled a fifth of the
 * buckets, so that a page's landing nearly always found "may" in the
 * other engine's filter and had to look at its queues under its lock.
 * An engine has at most MEGPU_WRITE_QUEUE_DEPTH + MEGPU_MC_QUEUE_DEPTH
 * entries of at most a page each pending, which a 16-bit counter holds.
 */
#define MEGPU_WQ_GRAIN_SHIFT    12

static unsigned megpu_wq_grain_bit(hwaddr g)
{
    QEMU_BUILD_BUG_ON(MEGPU_WQ_FILTER_BITS != 1u << 14);
    QEMU_BUILD_BUG_ON((MEGPU_WRITE_QUEUE_DEPTH + MEGPU_MC_QUEUE_DEPTH) *
                      (MEGPU_PAGE_SIZE / (1 << MEGPU_WQ_GRAIN_SHIFT) + 1) >
                      UINT16_MAX);
    return (g * 0x9e3779b97f4a7c15ull) >> (64 - 14);
}

/*
 * A bucket's span: the page its entries are in and the bytes of it they
 * may cover, [lo, hi), as one word (page << 25 | lo << 13 | hi), so that
 * a read without the lock sees all of it or none. MEGPU_WQ_SPAN_MIXED:
 * entries of two pages share the bucket (a hash collision), or a page
 * number too large for the word: any range may be covered. Meaningful
 * only while the bucket's count is not zero. The engine's own reads
 * look at it after the count (megpu_wq_read_begin()): a page a wave
 * stores row by row, and then reads the next row of (SAXPY in place),
 * has pending writes but none to those bytes, and the reads need not
 * take the lock and walk the queues (issue 25: 4 % of SAXPY).
 */
#define MEGPU_WQ_SPAN_MIXED     UINT64_MAX
#define MEGPU_WQ_SPAN_PAGES     (1ull << 39)

static uint64_t megpu_wq_span(hwaddr page, uint64_t lo, uint64_t hi)
{
    return page < MEGPU_WQ_SPAN_PAGES - 1 ? page << 25 | lo << 13 | hi :
           MEGPU_WQ_SPAN_MIXED;
}

/*
 * Widen bucket @b's span by [lo, hi) of @page; @fresh: the bucket was
 * empty, its old span is stale.
 */
static void megpu_wq_span_add(MegpuEngine *e, unsigned b, hwaddr page,
                              uint64_t lo, uint64_t hi, bool fresh)
{
    uint64_t old = e->wq_spans[b], span = MEGPU_WQ_SPAN_MIXED;

    if (fresh) {
        span = megpu_wq_span(page, lo, hi);
    } else if (old != MEGPU_WQ_SPAN_MIXED && old >> 25 == page) {
        span = megpu_wq_span(page, MIN(lo, (old >> 13) & 0xfff),
                             MAX(hi, old & 0x1fff));
    }
    qatomic_set(&e->wq_spans[b], span);
}

/*
 * Count [pa, pa + len) in or out of @e's filter (its wq_lock held), and
 * widen the spans of the buckets it is counted in.
 */
static void megpu_wq_mark_locked(MegpuEngine *e, hwaddr pa, uint32_t len,
                                 int delta)
{
    for (hwaddr g = pa >> MEGPU_WQ_GRAIN_SHIFT;
         g <= (pa + len - 1) >> MEGPU_WQ_GRAIN_SHIFT; g++) {
        unsigned b = megpu_wq_grain_bit(g);
        hwaddr start = g << MEGPU_WQ_GRAIN_SHIFT;

        if (delta > 0) {
            /* before the count: a reader that sees it sees the span */
            megpu_wq_span_add(e, b, g, MAX(pa, start) - start,
                              MIN(pa + len, start + MEGPU_PAGE_SIZE) - start,
                              !e->wq_grains[b]);
        }
        /* release: a landed entry's data is in RAM before it counts out */
        qatomic_store_release(&e->wq_grains[b], e->wq_grains[b] + delta);
    }
}

/*
 * May @e have a pending write to [pa, pa + len), by counts and spans?
 * For @e's own thread: only it queues @e's entries, and others only
 * land them (a span is never narrower than what is pending).
 */
static bool megpu_wq_may_pend_span(MegpuEngine *e, hwaddr pa, uint32_t len)
{
    for (hwaddr g = pa >> MEGPU_WQ_GRAIN_SHIFT;
         g <= (pa + len - 1) >> MEGPU_WQ_GRAIN_SHIFT; g++) {
        unsigned b = megpu_wq_grain_bit(g);
        hwaddr start = g << MEGPU_WQ_GRAIN_SHIFT;
        uint64_t span, lo, hi;

        if (!qatomic_load_acquire(&e->wq_grains[b])) {
            continue;
        }
        span = qatomic_load_acquire(&e->wq_spans[b]);
        lo = (span >> 13) & 0xfff;
        hi = span & 0x1fff;
        if (span == MEGPU_WQ_SPAN_MIXED || span >> 25 != g ||
            (start + lo < pa + len && pa < start + hi)) {
            return true;
        }
    }
    return false;
}

/*
 * May @e have a pending write to [pa, pa + len) other than @self (an
 * entry of @e's for exactly that range, or NULL)? @self counts once in
 * each bucket of its pages, so only a second count there may be
 * another write (or @self's own pages sharing a bucket: then look).
 */
static bool megpu_wq_may_pend_other(MegpuEngine *e, hwaddr pa, uint32_t len,
                                    const MegpuWrite *self)
{
    unsigned own = self && self->e == e ? 1 : 0;

    for (hwaddr g = pa >> MEGPU_WQ_GRAIN_SHIFT;
         g <= (pa + len - 1) >> MEGPU_WQ_GRAIN_SHIFT; g++) {
        if (qatomic_load_acquire(&e->wq_grains[megpu_wq_grain_bit(g)]) >
            own) {
            return true;
        }
    }
    return false;
}

/* May @e have a pending write to [pa, pa + len)? */
static bool megpu_wq_may_pend(MegpuEngine *e, hwaddr pa, uint32_t len)
{
    return megpu_wq_may_pend_other(e, pa, len, NULL);
}

/*
 * Each stage of an engine is also a min-heap by (due tick, issue number),
 * so that the next tick with work, asked for on every post and packet,
 * costs nothing, and a tick takes out only the entries due (the lists
 * stay in issue order for the reads' patching and the landing order).
 */
static bool megpu_wq_before(const MegpuWrite *a, const MegpuWrite *b)
{
    return a->due < b->due || (a->due == b->due && a->seq < b->seq);
}

static void megpu_wq_heap_set(MegpuWqHeap *h, uint32_t i, MegpuWrite *w)
{
    h->w[i] = w;
    w->heap_idx = i;
}

static void megpu_wq_heap_fix(MegpuWqHeap *h, uint32_t i)
{
    MegpuWrite *w = h->w[i];

    while (i && megpu_wq_before(w, h->w[(i - 1) / 2])) {
        megpu_wq_heap_set(h, i, h->w[(i - 1) / 2]);
        i = (i - 1) / 2;
    }
    for (;;) {
        uint32_t c = 2 * i + 1;

        if (c >= h->n) {
            break;
        }
        if (c + 1 < h->n && megpu_wq_before(h->w[c + 1], h->w[c])) {
            c++;
        }
        if (!megpu_wq_before(h->w[c], w)) {
            break;
        }
        megpu_wq_heap_set(h, i, h->w[c]);
        i = c;
    }
    megpu_wq_heap_set(h, i, w);
}

static void megpu_wq_heap_push(MegpuWqHeap *h, MegpuWrite *w)
{
    if (h->n == h->cap) {
        h->cap = MAX(h->cap * 2, 64);
        h->w = g_renew(MegpuWrite *, h->w, h->cap);
    }
    h->w[h->n] = w;
    megpu_wq_heap_fix(h, h->n++);
}

static void megpu_wq_heap_remove(MegpuWqHeap *h, MegpuWrite *w)
{
    uint32_t i = w->heap_idx;

    if (i == MEGPU_WQ_NO_HEAP) {
        return;
    }
    assert(i < h->n && h->w[i] == w);
    w->heap_idx = MEGPU_WQ_NO_HEAP;
    if (i != --h->n) {
        h->w[i] = h->w[h->n];
        megpu_wq_heap_fix(h, i);
    }
}

static MegpuWrite *megpu_wq_heap_min(const MegpuWqHeap *h)
{
    return h->n ? h->w[0] : NULL;
}

/* @w leaves stage 1 (or is no longer the youngest): nothing joins it. */
static void megpu_wq_close_locked(MegpuEngine *e, MegpuWrite *w)
{
    if (e->wq_open == w) {
        e->wq_open = NULL;
        qatomic_set(&e->wq_open_end, 0);
    }
}

static void megpu_wq_unlink_locked(MegpuState *s, MegpuWrite *w)
{
    MegpuEngine *e = w->e;

    if (w->in_mc) {
        QTAILQ_REMOVE(&e->wq_mc, w, link);
        megpu_wq_heap_remove(&e->wq_mc_due, w);
        qatomic_dec(&s->mc_len);
    } else {
        QTAILQ_REMOVE(&e->wq, w, link);
        megpu_wq_heap_remove(&e->wq_due, w);
        qatomic_set(&e->wq_len, e->wq_len - 1);
        megpu_wq_close_locked(e, w);
    }
    /* release: a reader that sees it has the landed data too */
    qatomic_store_release(&e->wq_pending, e->wq_pending - 1);
    qatomic_dec(&s->wq_total);
    megpu_wq_mark_locked(e, w->pa, w->len, -1);
}

/* Unlink @w; the unlock of its engine's wq_lock unmaps and frees it. */
static void megpu_wq_forget_locked(MegpuState *s, MegpuWrite *w)
{
    megpu_wq_unlink_locked(s, w);
    QSLIST_INSERT_HEAD(&w->e->wq_landed, w, done);
}

/* Write one entry to RAM and forget it. */
static void megpu_wq_land_one_locked(MegpuState *s, MegpuWrite *w)
{
    trace_megpu_wq_land(w->e->idx, w->seq, w->pa, w->len, w->in_mc);
    if (w->host) {
        memcpy(w->host, w->data, w->len);
    } else {
        /* not RAM when it was issued: nothing to write */
        qemu_log_mask(LOG_GUEST_ERROR,
                      "megpu: posted write to 0x%" HWADDR_PRIx
                      " dropped, not RAM\n", w->pa);
    }
    megpu_wq_forget_locked(s, w);
}

/*
 * In @head (linked by @field, in issue order), the first entry older
 * than @seq and than *@best that overlaps [pa, pa + len) becomes *@best.
 */
#define MEGPU_WQ_FIND_OLDER(head, field, pa, len, seq, best) do {       \
        MegpuWrite *w_;                                                 \
                                                                        \
        QTAILQ_FOREACH(w_, (head), field) {                             \
            if (w_->seq >= (seq) || (*(best) &&                         \
                                     w_->seq >= (*(best))->seq)) {      \
                break;                                                  \
            }                                                           \
            if (megpu_wq_overlap(w_, (pa), (len))) {                    \
                *(best) = w_;                                           \
                break;                                                  \
            }                                                           \
        }                                                               \
    } while (0)

/*
 * The oldest pending entry older than @seq that overlaps [pa, pa + len),
 * of every engine (@only NULL: all wq_locks held) or of @only's. Every
 * engine's two stages are sorted by issue number, so each scan stops
 * early; an engine whose filter clears the range has none. @self: the
 * pending entry for the range being landed (NULL for a direct write),
 * which its engine's filter does not count against it.
 */
static MegpuWrite *megpu_wq_older_overlap(MegpuState *s, hwaddr pa,
                                          uint64_t len, uint64_t seq,
                                          const MegpuWrite *self,
                                          MegpuEngine *only)
{
    MegpuWrite *best = NULL;

    for (unsigned n = 0; n < s->num_engines; n++) {
        MegpuEngine *e = &s->engines[n];

        if ((only && e != only) || !e->wq_pending ||
            !megpu_wq_may_pend_other(e, pa, len, self)) {
            continue;
        }
        MEGPU_WQ_FIND_OLDER(&e->wq, link, pa, len, seq, &best);
        MEGPU_WQ_FIND_OLDER(&e->wq_mc, link, pa, len, seq, &best);
    }
    return best;
}

/*
 * Could another engine than @w's have a pending write to @w's bytes?
 * Read without their locks. An engine counts an entry in its filter
 * before it takes the entry's issue number (megpu_wq_post), and issue
 * numbers are one atomic counter, so every write issued before @w is
 * counted by the time @w's engine looks: "no" is the truth for every
 * write older than @w, and those are all that land before it.
 */
static bool megpu_wq_others_may_pend(MegpuState *s, const MegpuWrite *w)
{
    for (unsigned n = 0; n < s->num_engines; n++) {
        MegpuEngine *o = &s->engines[n];

        if (o != w->e && qatomic_read(&o->wq_pending) &&
            megpu_wq_may_pend(o, w->pa, w->len)) {
            return true;
        }
    }
    return false;
}

/*
 * Land @w, first the older writes to the same bytes, in issue order.
 * With only @w's engine's wq_lock held (!@all), an entry lands only if
 * no other engine may have a write to its bytes; false when one may
 * (the entries landed so far are in RAM, @w is not): the caller takes
 * every lock and lands it then.
 */
static bool megpu_wq_land_locked(MegpuState *s, MegpuWrite *w, bool all)
{
    MegpuEngine *only = all ? NULL : w->e;

    for (;;) {
        MegpuWrite *cur = w, *p;

        while ((p = megpu_wq_older_overlap(s, cur->pa, cur->len, cur->seq,
                                           cur, only))) {
            cur = p;
        }
        if (!all && megpu_wq_others_may_pend(s, cur)) {
            return false;
        }
        megpu_wq_land_one_locked(s, cur);
        if (cur == w) {
            return true;
        }
    }
}

/* Oldest pending write (NULL if none): heads of the sorted stages. */
static MegpuWrite *megpu_wq_oldest_locked(MegpuState *s)
{
    MegpuWrite *best = NULL;

    for (unsigned n = 0; n < s->num_engines; n++) {
        MegpuWrite *w = QTAILQ_FIRST(&s->engines[n].wq);
        MegpuWrite *m = QTAILQ_FIRST(&s->engines[n].wq_mc);

        if (w && (!best || w->seq < best->seq)) {
            best = w;
        }
        if (m && (!best || m->seq < best->seq)) {
            best = m;
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

/*
 * Complete the host flushes, in start order, whose writes have landed
 * (every wq_lock held).
 */
static void megpu_flush_check_locked(MegpuState *s)
{
    MegpuWrite *oldest = megpu_wq_oldest_locked(s);
    uint64_t landed_below = oldest ? oldest->seq : qatomic_read(&s->wq_seq);
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
    qatomic_set(&s->flushes_waiting, s->flushes->len);
}

/* Insert @w into @head (linked by @field), keeping it in issue order. */
#define MEGPU_WQ_INSERT_SORTED(head, w, field) do {                    \
        MegpuWrite *p_;                                                 \
                                                                        \
        QTAILQ_FOREACH_REVERSE(p_, (head), field) {                     \
            if (p_->seq < (w)->seq) {                                   \
                QTAILQ_INSERT_AFTER((head), p_, (w), field);            \
                break;                                                  \
            }                                                           \
        }                                                               \
        if (!p_) {                                                      \
            QTAILQ_INSERT_HEAD((head), (w), field);                     \
        }                                                               \
    } while (0)

/*
 * Take a place in stage 2, which all engines share: false when it is
 * full. Stage 2 is each engine's list of its entries there and this
 * count.
 */
static bool megpu_mc_take_room(MegpuState *s)
{
    uint32_t len = qatomic_read(&s->mc_len);

    for (;;) {
        uint32_t seen;

        if (len >= MEGPU_MC_QUEUE_DEPTH) {
            return false;
        }
        seen = qatomic_cmpxchg(&s->mc_len, len, len + 1);
        if (seen == len) {
            return true;
        }
        len = seen;
    }
}

/*
 * The next tick at which one of @e's entries moves or lands: stage-1
 * entries count only while stage 2 has room. INT64_MAX: none.
 */
static int64_t megpu_wq_next_due_locked(MegpuState *s, MegpuEngine *e)
{
    MegpuWrite *w1 = megpu_wq_heap_min(&e->wq_due);
    MegpuWrite *w2 = megpu_wq_heap_min(&e->wq_mc_due);
    int64_t next = w2 ? w2->due : INT64_MAX;

    if (w1 && qatomic_read(&s->mc_len) < MEGPU_MC_QUEUE_DEPTH) {
        next = MIN(next, w1->due);
    }
    return next;
}

static gint megpu_wq_by_seq(gconstpointer a, gconstpointer b)
{
    const MegpuWrite *wa = *(MegpuWrite *const *)a;
    const MegpuWrite *wb = *(MegpuWrite *const *)b;

    return wa->seq < wb->seq ? -1 : wa->seq > wb->seq;
}

/*
 * Take @h's entries due by @t out of it, into @e's wq_ticked by issue
 * number.
 */
static void megpu_wq_take_due_locked(MegpuEngine *e, MegpuWqHeap *h,
                                     int64_t t)
{
    MegpuWrite *w;

    g_ptr_array_set_size(e->wq_ticked, 0);
    while ((w = megpu_wq_heap_min(h)) && w->due <= t) {
        megpu_wq_heap_remove(h, w);
        g_ptr_array_add(e->wq_ticked, w);
    }
    if (e->wq_ticked->len > 1) {
        g_ptr_array_sort(e->wq_ticked, megpu_wq_by_seq);
    }
}

/*
 * Tick @t of @e's clock: its stage-2 entries due by then land, then its
 * stage-1 entries due move on while stage 2 has room, in issue order.
 * False, with the tick's landings not all done, if one needs every
 * engine's lock and only @e's is held (!@all); the caller takes them
 * and runs the tick again, which lands the rest.
 */
static bool megpu_wq_tick_locked(MegpuState *s, MegpuEngine *e, int64_t t,
                                 bool all)
{
    GPtrArray *ticked = e->wq_ticked;
    MegpuWrite *w;
    guint i;

    /*
     * Landing one pushes out only older writes to the same bytes: none
     * of the later ones taken here, and the earlier ones have landed.
     */
    megpu_wq_take_due_locked(e, &e->wq_mc_due, t);
    for (i = 0; i < ticked->len; i++) {
        if (!megpu_wq_land_locked(s, g_ptr_array_index(ticked, i), all)) {
            /* the rest stay due, as they were */
            for (; i < ticked->len; i++) {
                megpu_wq_heap_push(&e->wq_mc_due,
                                   g_ptr_array_index(ticked, i));
            }
            return false;
        }
    }
    megpu_wq_take_due_locked(e, &e->wq_due, t);
    for (i = 0; i < ticked->len; i++) {
        w = g_ptr_array_index(ticked, i);
        if (!megpu_mc_take_room(s)) {
            /* waits for room: a stage-2 entry lands before long */
            megpu_wq_heap_push(&e->wq_due, w);
            continue;
        }
        QTAILQ_REMOVE(&e->wq, w, link);
        qatomic_set(&e->wq_len, e->wq_len - 1);
        megpu_wq_close_locked(e, w);
        w->in_mc = true;
        w->due = MAX(w->due, t) + w->delay2;
        MEGPU_WQ_INSERT_SORTED(&e->wq_mc, w, link);
        megpu_wq_heap_push(&e->wq_mc_due, w);
        trace_megpu_wq_move(e->idx, w->seq, qatomic_read(&s->mc_len));
    }
    return true;
}

/* What catching up did */
enum {
    MEGPU_WQ_SAME,              /* nothing moved or landed */
    MEGPU_WQ_CHANGED,
    MEGPU_WQ_NEED_ALL,          /* stopped: needs every engine's lock */
};

/*
 * Bring @e's entries up to its clock, one tick with work at a time, so
 * that the result depends only on the clock, not on when or by which
 * thread this runs. With only @e's wq_lock held (!@all) it may stop
 * early (MEGPU_WQ_NEED_ALL); with every lock it never does.
 */
static int megpu_wq_catch_up_locked(MegpuState *s, MegpuEngine *e, bool all,
                                    int64_t vt)
{
    int64_t clock = megpu_wq_clock(s, e, vt), t;
    bool changed = false;
    int ret = MEGPU_WQ_SAME;

    while ((t = megpu_wq_next_due_locked(s, e)) <= clock) {
        if (!megpu_wq_tick_locked(s, e, t, all)) {
            ret = MEGPU_WQ_NEED_ALL;
            break;
        }
        changed = true;
    }
    if (t != INT64_MAX) {
        megpu_wq_arm_locked(s, e, t, vt);
    }
    if (changed || ret == MEGPU_WQ_NEED_ALL) {
        /* room in a queue, or writes landed: flushes may be done */
        if (all) {
            megpu_flush_check_locked(s);
        } else if (qatomic_read(&s->flushes_waiting)) {
            event_notifier_set(&s->mc_notify);
        }
        megpu_wq_broadcast(s);
    }
    return ret == MEGPU_WQ_NEED_ALL ? ret :
           changed ? MEGPU_WQ_CHANGED : MEGPU_WQ_SAME;
}

/*
 * Catch @e up holding its own wq_lock, or every engine's if a landing
 * needs them (*@all then true: unlock with megpu_wq_unlock_held()).
 * Whether anything moved or landed (perhaps, after taking the locks).
 */
static bool megpu_wq_catch_up(MegpuState *s, MegpuEngine *e, bool *all,
                              int64_t vt)
{
    int r = megpu_wq_catch_up_locked(s, e, *all, vt);

    if (r != MEGPU_WQ_NEED_ALL) {
        return r == MEGPU_WQ_CHANGED;
    }
    megpu_wq_escalate(e, all);
    megpu_wq_catch_up_locked(s, e, true, vt);
    return true;
}

/*
 * Something waits for the memory system (a host flush, a FLUSH packet,
 * a full queue): advance @e's clock to its next tick with work. Time
 * passes faster, the order stays the same. False if @e has none (its
 * stage-1 entries wait for room in stage 2) or writes are held. As
 * megpu_wq_catch_up() about the locks.
 */
static bool megpu_wq_fast_forward(MegpuState *s, MegpuEngine *e, bool *all)
{
    int64_t t = megpu_wq_next_due_locked(s, e), vt, clock;

    if (megpu_wq_ff_held(s) || t == INT64_MAX) {
        return false;
    }
    vt = megpu_wq_vticks(s);
    clock = megpu_wq_clock(s, e, vt);
    if (t > clock) {
        e->wq_steps += t - clock;
    }
    megpu_wq_catch_up(s, e, all, vt);
    return true;
}

/*
 * Stage 2 is full of other engines' entries: fast-forward the engine of
 * the one due first, which makes room (every wq_lock held).
 */
static bool megpu_wq_make_room_locked(MegpuState *s)
{
    MegpuEngine *first = NULL;
    int64_t first_in = 0, vt = megpu_wq_vticks(s);
    bool all = true;

    if (megpu_wq_ff_held(s)) {
        return false;
    }
    for (unsigned n = 0; n < s->num_engines; n++) {
        MegpuEngine *e = &s->engines[n];
        MegpuWrite *w = megpu_wq_heap_min(&e->wq_mc_due);
        int64_t in = w ? w->due - megpu_wq_clock(s, e, vt) : 0;

        if (w && (!first || in < first_in)) {
            first = e;
            first_in = in;
        }
    }
    return first && megpu_wq_fast_forward(s, first, &all);
}

/* The engine ran a packet: one tick of its clock. */
void megpu_wq_tick(MegpuEngine *e)
{
    MegpuState *s = e->s;
    bool changed, all = false;

    if (!qatomic_read(&e->wq_pending) || s->hold_writes ||
        megpu_wq_time_held(s)) {
        return;
    }
    megpu_wq_lock_own(e);
    e->wq_steps++;
    changed = megpu_wq_catch_up(s, e, &all, megpu_wq_vticks(s));
    megpu_wq_unlock_held(e, all);
    if (changed) {
        /* a landed write may be the value a WAIT watches */
        megpu_wake_waiters(s);
    }
}

/*
 * @e's ring is drained (engine thread, no lock held): its entries are
 * now only landed by time, so the timer is armed exactly again.
 */
void megpu_wq_engine_drained(MegpuEngine *e)
{
    MegpuState *s = e->s;
    bool changed, all = false;

    if (!qatomic_read(&e->wq_pending)) {
        return;
    }
    qemu_mutex_lock(&e->wq_lock);
    /* catching up arms the timer for the next entry due */
    changed = !megpu_wq_time_held(s) &&
              megpu_wq_catch_up(s, e, &all, megpu_wq_vticks(s));
    megpu_wq_unlock_held(e, all);
    if (changed) {
        megpu_wake_waiters(s);
    }
}

/*
 * Virtual time passed (QEMU_CLOCK_VIRTUAL timer, main loop): every
 * engine's clock moved on. Under qtest this runs inside clock_step, so
 * what has landed by a virtual time is known when the step returns.
 *
 * Each engine is caught up under its own wq_lock (every lock only when
 * a landing needs them, as the engine itself does). An engine inside a
 * packet whose lock is taken is posting or ticking, and catches itself
 * up and arms the timer as it does: it is left to it, and looked at
 * again a busy slack later in case it waits from now on. The timer runs
 * under the BQL, so it must not queue behind streaming engines: when it
 * took every lock at once it waited for them at every firing, and vCPUs
 * and interrupts with it (issue 25). With x-hold-writes only time lands
 * writes, so it always waits for the lock.
 */
static void megpu_mc_timer_cb(void *opaque)
{
    MegpuState *s = opaque;
    bool changed = false;
    int64_t vt;

    /* not armed any more: the catch-ups below arm it again */
    qatomic_set(&s->mc_timer_at, INT64_MAX);
    vt = megpu_wq_vticks(s);
    for (unsigned n = 0; n < s->num_engines && !megpu_wq_time_held(s); n++) {
        MegpuEngine *e = &s->engines[n];
        bool all = false;

        if (!qatomic_read(&e->wq_pending)) {
            continue;
        }
        if (qemu_mutex_trylock(&e->wq_lock)) {
            if (qatomic_read(&e->wq_running) && !s->hold_writes) {
                megpu_wq_arm_at(s, s->vclock_base +
                                (vt + MEGPU_WQ_BUSY_SLACK) *
                                MEGPU_WQ_TICK_NS);
                continue;
            }
            qemu_mutex_lock(&e->wq_lock);
        }
        changed |= megpu_wq_catch_up(s, e, &all, vt);
        megpu_wq_unlock_held(e, all);
    }
    if (changed) {
        megpu_wake_waiters(s);
    }
}

/*
 * The MC thread serves host flushes: while one waits (and writes are not
 * held), it fast-forwards the engine of the oldest pending write, until
 * every write below the flush's target has landed.
 */
static void *megpu_mc_thread(void *opaque)
{
    MegpuState *s = opaque;
    GPollFD pfd = {
        .fd = event_notifier_get_fd(&s->mc_notify),
        .events = G_IO_IN,
    };

    /* landing maps RAM with address_space_map, which uses RCU */
    rcu_register_thread();
    megpu_wq_lock_all(s);
    while (!s->mc_stop) {
        MegpuWrite *oldest = NULL;
        bool all = true;

        megpu_flush_check_locked(s);
        if (s->flushes->len && !megpu_wq_ff_held(s)) {
            oldest = megpu_wq_oldest_locked(s);
            if (oldest && !megpu_wq_fast_forward(s, oldest->e, &all)) {
                megpu_wq_make_room_locked(s);
            }
        }
        megpu_wq_unlock_all(s);
        if (oldest) {
            /* a landed write may be the value a WAIT watches */
            megpu_wake_waiters(s);
        } else {
            qemu_poll_ns(&pfd, 1, -1);
            event_notifier_test_and_clear(&s->mc_notify);
        }
        megpu_wq_lock_all(s);
    }
    megpu_wq_unlock_all(s);
    rcu_unregister_thread();
    return NULL;
}

bool megpu_wq_relaxed(MegpuState *s)
{
    return qatomic_read(&s->write_mode) == MEGPU_WRITE_MODE_RELAXED;
}

/*
 * Wait for room in this engine's queue. Only the engine thread adds to
 * it, so the room is still there when it posts. The engine fast-forwards
 * its own clock meanwhile (unless writes are held), so the wait ends the
 * same way however busy the host is. A reset cuts the wait short; so
 * does a switch to strict mode, where nothing is queued.
 */
/*
 * One step of a wait for @e's writes (a full queue, a FLUSH packet):
 * fast-forward @e, or else make room in stage 2, or else wait a little
 * for others. Holds @e's wq_lock or, once needed, every engine's (*@all).
 */
static void megpu_wq_wait_step(MegpuState *s, MegpuEngine *e, bool *all)
{
    if (megpu_wq_fast_forward(s, e, all)) {
        return;
    }
    megpu_wq_escalate(e, all);
    if (!megpu_wq_make_room_locked(s)) {
        /* the others' engine threads and the timer land them */
        megpu_wq_unlock_all(s);
        *all = false;
        qemu_mutex_lock(&e->wq_lock);
        qemu_cond_timedwait(&e->wq_cond, &e->wq_lock, 1);
    }
}

bool megpu_wq_reserve(MegpuExec *x)
{
    MegpuEngine *e = x->e;
    MegpuState *s = e->s;
    bool counted = false, ok = true, all = false;

    if (qatomic_read(&e->wq_len) < MEGPU_WRITE_QUEUE_DEPTH) {
        return true;
    }
    qemu_mutex_lock(&e->wq_lock);
    while (e->wq_len >= MEGPU_WRITE_QUEUE_DEPTH && megpu_wq_relaxed(s)) {
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
        megpu_wq_wait_step(s, e, &all);
    }
    megpu_wq_unlock_held(e, all);
    megpu_wake_waiters(s);
    return ok;
}

/*
 * Count the granules @w covers once it has grown by @len bytes that it
 * did not cover yet (megpu_wq_unlink_locked counts all of them out).
 */
static void megpu_wq_mark_grown_locked(MegpuEngine *e, MegpuWrite *w,
                                       uint32_t len)
{
    hwaddr next = (((w->pa + w->len - 1) >> MEGPU_WQ_GRAIN_SHIFT) + 1) <<
                  MEGPU_WQ_GRAIN_SHIFT;
    hwaddr end = w->pa + w->len + len;

    if (next < end) {
        megpu_wq_mark_locked(e, next, end - next, 1);
    }
}

/*
 * The bytes @w grows by in the granule it already ends in (counted
 * there once): the bucket's span must cover them before a read looks.
 */
static void megpu_wq_span_grown_locked(MegpuEngine *e, MegpuWrite *w,
                                       uint32_t len)
{
    hwaddr last = (w->pa + w->len - 1) >> MEGPU_WQ_GRAIN_SHIFT;
    hwaddr start = last << MEGPU_WQ_GRAIN_SHIFT;
    hwaddr end = MIN(w->pa + w->len + len, start + MEGPU_PAGE_SIZE);

    if (w->pa + w->len < end) {
        megpu_wq_span_add(e, megpu_wq_grain_bit(last), last,
                          w->pa + w->len - start, end - start, false);
    }
}

/*
 * May @e have a pending write to [pa, pa + len), which starts where @w
 * ends, other than @w? @w counts once in the bucket of its last granule,
 * which the range shares when @w ends inside a granule (a wave's 64-byte
 * rows); any other count may be another write.
 */
static bool megpu_wq_may_pend_after(MegpuEngine *e, hwaddr pa, uint32_t len,
                                    const MegpuWrite *w)
{
    hwaddr last = (w->pa + w->len - 1) >> MEGPU_WQ_GRAIN_SHIFT;

    for (hwaddr g = pa >> MEGPU_WQ_GRAIN_SHIFT;
         g <= (pa + len - 1) >> MEGPU_WQ_GRAIN_SHIFT; g++) {
        unsigned own = w->e == e && g == last ? 1 : 0;

        if (qatomic_load_acquire(&e->wq_grains[megpu_wq_grain_bit(g)]) >
            own) {
            return true;
        }
    }
    return false;
}

/*
 * A wave store that starts where the engine's youngest stage-1 entry of
 * wave stores ends joins that entry (issue 25: a gang's row is 1 KiB,
 * and an entry of its own cost as much as the store). The bytes take the
 * entry's issue number and delays, which keeps the write model's rules
 * only because no pending write of any engine overlaps them: none can
 * then land in the wrong order against them. Within the page and the
 * RAM the entry holds. Wave stores only, so the other writes' entries
 * (and the writes qtest's reference trace) are as they were.
 */
static bool megpu_wq_append_locked(MegpuExec *x, hwaddr pa, void *host,
                                   MemoryRegion *mr, const void *data,
                                   uint32_t len)
{
    MegpuEngine *e = x->e;
    MegpuState *s = e->s;
    MegpuWrite *w = e->wq_open;

    if (!w || !w->host || w->mr != mr || w->pa + w->len != pa ||
        len > w->cap - w->len || (uint8_t *)w->host + w->len != host) {
        return false;
    }
    for (unsigned n = 0; n < s->num_engines; n++) {
        if (qatomic_read(&s->engines[n].wq_pending) &&
            megpu_wq_may_pend_after(&s->engines[n], pa, len, w)) {
            return false;
        }
    }
    memcpy(w->data + w->len, data, len);
    megpu_wq_mark_grown_locked(e, w, len);
    megpu_wq_span_grown_locked(e, w, len);
    w->len += len;
    qatomic_set(&e->wq_open_end, pa + len);
    trace_megpu_wq_append(e->idx, w->seq, pa, len, w->len);
    return true;
}

/*
 * A write was issued (@e's wq_lock held, released here): a tick of the
 * engine's clock, and the entries catch up with it.
 */
static void megpu_wq_issued(MegpuState *s, MegpuEngine *e, int64_t due,
                            int64_t vt)
{
    bool changed, all = false;

    if (!s->hold_writes) {
        e->wq_steps++;
    }
    /*
     * The catch-up may land the entry just posted and free it: virtual
     * time moves on its own (ASan found this in a guest boot).
     */
    changed = !megpu_wq_time_held(s) && megpu_wq_catch_up(s, e, &all, vt);
    if (due != INT64_MAX) {
        megpu_wq_arm_locked(s, e, due, vt);
    }
    megpu_wq_unlock_held(e, all);
    if (changed) {
        megpu_wake_waiters(s);
    }
}

/*
 * Issue a data write of @len bytes (within one page) at guest-physical
 * @pa, mapped at @host. Relaxed: queue it. Strict (possibly switched to
 * since the caller looked): write it now.
 */
void megpu_wq_post(MegpuExec *x, hwaddr pa, void *host, MemoryRegion *mr,
                   const void *data, uint32_t len)
{
    MegpuEngine *e = x->e;
    MegpuState *s = e->s;
    uint32_t cap = x->in_wave ? MEGPU_PAGE_SIZE - pa % MEGPU_PAGE_SIZE : len;
    MegpuWrite *w;
    int64_t due, vt;

    /* the engine thread alone opens entries: the hint is its own */
    if (x->in_wave && qatomic_read(&e->wq_open_end) == pa) {
        megpu_wq_lock_own(e);
        if (megpu_wq_relaxed(s) &&
            megpu_wq_append_locked(x, pa, host, mr, data, len)) {
            megpu_wq_issued(s, e, INT64_MAX, megpu_wq_vticks(s));
            return;
        }
        megpu_wq_unlock_own(e);
    }
    /*
     * The copy and the hold on the RAM the landing writes through before
     * the lock: engines post concurrently. The caller's mapping is RAM
     * for [pa, pa + len); the entry keeps it past the caller's unmap.
     */
    w = g_malloc(sizeof(*w) + MAX(cap, len));
    w->len = len;               /* also what a strict write unmaps */
    memcpy(w->data, data, len);
    w->mr = mr;
    w->host = host;
    memory_region_ref(mr);
    megpu_wq_lock_own(e);
    if (!megpu_wq_relaxed(s)) {
        QSLIST_INSERT_HEAD(&e->wq_landed, w, done);
        megpu_wq_unlock_own(e);
        megpu_wq_order(s, pa, len);
        memcpy(host, data, len);
        return;
    }
    w->e = e;
    /*
     * Counted in the filter and pending before it takes its issue
     * number (a sequentially consistent increment): another engine
     * landing a later write sees it (megpu_wq_others_may_pend()).
     */
    megpu_wq_mark_locked(e, pa, len, 1);
    qatomic_set(&e->wq_pending, e->wq_pending + 1);
    qatomic_inc(&s->wq_total);
    w->seq = qatomic_fetch_inc(&s->wq_seq);
    vt = megpu_wq_vticks(s);
    due = megpu_wq_clock(s, e, vt) + megpu_wq_delay(e);
    w->due = due;
    w->delay2 = megpu_wq_delay(e);
    w->pa = pa;
    w->cap = MAX(cap, len);
    w->in_mc = false;
    QTAILQ_INSERT_TAIL(&e->wq, w, link);
    megpu_wq_heap_push(&e->wq_due, w);
    qatomic_set(&e->wq_len, e->wq_len + 1);
    /* the youngest entry: a wave's next store may join it */
    e->wq_open = x->in_wave ? w : NULL;
    qatomic_set(&e->wq_open_end, x->in_wave ? pa + len : 0);
    trace_megpu_wq_post(e->idx, w->seq, pa, len, e->wq_len);
    megpu_wq_issued(s, e, due, vt);
}

/*
 * A write that bypasses the queues (TIMESTAMP, SIGNAL, atomics) to
 * [pa, pa + len): first push out the queued writes to the same bytes,
 * so that the older writes cannot land over it later.
 */
void megpu_wq_order(MegpuState *s, hwaddr pa, uint32_t len)
{
    MegpuWrite *w;
    bool may = false;

    if (!qatomic_read(&s->wq_total)) {
        return;
    }
    for (unsigned n = 0; n < s->num_engines && !may; n++) {
        may = qatomic_read(&s->engines[n].wq_pending) &&
              megpu_wq_may_pend(&s->engines[n], pa, len);
    }
    if (!may) {
        return;
    }
    megpu_wq_lock_all(s);
    while ((w = megpu_wq_older_overlap(s, pa, len, UINT64_MAX, NULL,
                                       NULL))) {
        megpu_wq_land_locked(s, w, true);
    }
    megpu_wq_broadcast(s);
    megpu_wq_unlock_all(s);
}

/*
 * An engine reads its own queued writes. Before it reads [pa, pa + len)
 * from RAM: may its pending entries hold some of those bytes? If so its
 * wq_lock is held (true) until megpu_wq_read_end() patches the copy with
 * them, oldest first. The look comes before the read, and the lock then
 * spans both: the virtual-time timer and the MC thread land this
 * engine's entries too, and an entry that landed between a copy of RAM
 * and a later look would be in neither (a gang read a value eight
 * stores old: wave/read-own-writes-landing). False: every entry of the
 * engine's that held those bytes has landed (release in
 * megpu_wq_unlink_locked), and only the engine itself queues more, so
 * RAM may even be read in place.
 */
bool megpu_wq_read_begin(MegpuEngine *e, hwaddr pa, uint32_t len)
{
    if (!qatomic_load_acquire(&e->wq_pending) ||
        !megpu_wq_may_pend_span(e, pa, len)) {
        return false;
    }
    megpu_wq_lock_own(e);
    return true;
}

void megpu_wq_read_end(MegpuEngine *e, hwaddr pa, void *buf, uint32_t len)
{
    MegpuWrite *a, *b;

    a = QTAILQ_FIRST(&e->wq);
    b = QTAILQ_FIRST(&e->wq_mc);
    for (;;) {
        MegpuWrite *w;
        hwaddr lo, hi;

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
    megpu_wq_unlock_own(e);
}

/*
 * FLUSH packet: wait until every write this engine issued has landed,
 * fast-forwarding its clock (unless writes are held).
 */
bool megpu_wq_engine_flush(MegpuExec *x)
{
    MegpuEngine *e = x->e;
    MegpuState *s = e->s;
    bool ok = true, all = false;

    trace_megpu_eng_flush(e->idx, qatomic_read(&e->wq_pending));
    qemu_mutex_lock(&e->wq_lock);
    while (e->wq_pending) {
        if (megpu_engine_should_abort(e)) {
            x->aborted = true;
            ok = false;
            break;
        }
        megpu_wq_wait_step(s, e, &all);
    }
    megpu_wq_unlock_held(e, all);
    megpu_wake_waiters(s);
    return ok;
}

/*
 * Engine reset: its queued writes (both stages) are dropped, unwritten,
 * and its generator and clock start again from the seed.
 */
/* Forget @e's queued writes; how many. Called with every wq lock held. */
static uint32_t megpu_wq_drop_locked(MegpuState *s, MegpuEngine *e)
{
    MegpuWrite *w, *tmp;
    uint32_t dropped = 0;

    QTAILQ_FOREACH_SAFE(w, &e->wq, link, tmp) {
        megpu_wq_forget_locked(s, w);
        dropped++;
    }
    QTAILQ_FOREACH_SAFE(w, &e->wq_mc, link, tmp) {
        megpu_wq_forget_locked(s, w);
        dropped++;
    }
    trace_megpu_wq_drop(e->idx, dropped);
    return dropped;
}

void megpu_wq_engine_drop(MegpuEngine *e)
{
    MegpuState *s = e->s;

    megpu_wq_lock_all(s);
    megpu_wq_reseed(s, e);
    megpu_wq_drop_locked(s, e);
    /* a flush waiting for them is done now */
    megpu_flush_check_locked(s);
    megpu_wq_broadcast(s);
    megpu_wq_unlock_all(s);
}

/*
 * Bus mastering off: the writes still queued never reach memory (a
 * device may not write once the function lost its bus master bit).
 */
void megpu_wq_drop_all(MegpuState *s)
{
    megpu_wq_lock_all(s);
    for (unsigned n = 0; n < s->num_engines; n++) {
        megpu_wq_drop_locked(s, &s->engines[n]);
    }
    megpu_flush_check_locked(s);
    megpu_wq_broadcast(s);
    megpu_wq_unlock_all(s);
}

/* Land everything now, in issue order (a switch to strict mode). */
static void megpu_wq_drain_locked(MegpuState *s)
{
    MegpuWrite *w;

    while ((w = megpu_wq_oldest_locked(s))) {
        megpu_wq_land_one_locked(s, w);
    }
    megpu_flush_check_locked(s);
    megpu_wq_broadcast(s);
}

static void megpu_wq_set_mode(MegpuState *s, uint32_t mode)
{
    if (mode != MEGPU_WRITE_MODE_STRICT && mode != MEGPU_WRITE_MODE_RELAXED) {
        qemu_log_mask(LOG_GUEST_ERROR,
                      "megpu: WRITE_MODE %u unknown, ignored\n", mode);
        return;
    }
    if (mode == MEGPU_WRITE_MODE_RELAXED && !(s->caps & MEGPU_CAP_FLUSH)) {
        qemu_log_mask(LOG_GUEST_ERROR,
                      "megpu: WRITE_MODE relaxed without FLUSH, ignored\n");
        return;
    }
    megpu_wq_lock_all(s);
    trace_megpu_write_mode(mode, qatomic_read(&s->wq_total));
    if (mode == MEGPU_WRITE_MODE_STRICT) {
        /* bounded work (the queues are), so the MMIO handler may do it */
        megpu_wq_drain_locked(s);
    }
    qatomic_set(&s->write_mode, mode);
    megpu_wq_unlock_all(s);
    megpu_wake_waiters(s);
}

/* FLUSH register: starts a flush; the MC thread completes it. */
static void megpu_flush_start(MegpuState *s)
{
    MegpuFlush *last;
    uint64_t seq;

    /* every lock: no write has its issue number but is not queued yet */
    megpu_wq_lock_all(s);
    s->flush_started++;
    seq = qatomic_read(&s->wq_seq);
    trace_megpu_flush_start(s->flush_started, seq, qatomic_read(&s->wq_total));
    last = s->flushes->len ?
           &g_array_index(s->flushes, MegpuFlush, s->flushes->len - 1) :
           NULL;
    if (last && last->target == seq) {
        /* no write since the previous flush: complete together */
        last->count++;
    } else {
        MegpuFlush f = { .target = seq, .count = 1 };

        g_array_append_val(s->flushes, f);
    }
    s->flush_status |= MEGPU_FLUSH_STATUS_BUSY;
    /* with nothing older queued, this completes it at once */
    megpu_flush_check_locked(s);
    if (s->flushes->len) {
        /* the MC thread fast-forwards the engines for it */
        event_notifier_set(&s->mc_notify);
    }
    megpu_wq_unlock_all(s);
}

/* TEST_HOLD written: hold, or let the waits go on */
static void megpu_wq_set_test_hold(MegpuState *s, uint32_t val)
{
    if (!s->test_regs) {
        qemu_log_mask(LOG_GUEST_ERROR,
                      "megpu: TEST_HOLD without x-test-regs, ignored\n");
        return;
    }
    if (val > MEGPU_TEST_HOLD_ALL) {
        qemu_log_mask(LOG_GUEST_ERROR,
                      "megpu: TEST_HOLD %u unknown, ignored\n", val);
        return;
    }
    megpu_wq_lock_all(s);
    qatomic_set(&s->test_hold, val);
    /* the MC thread, FLUSH packets and the timer look again */
    event_notifier_set(&s->mc_notify);
    megpu_wq_broadcast(s);
    if (val == MEGPU_TEST_HOLD_NONE) {
        megpu_wq_arm_at(s, qemu_clock_get_ns(QEMU_CLOCK_VIRTUAL) + 1);
    }
    megpu_wq_unlock_all(s);
    megpu_wake_waiters(s);
}

bool megpu_wq_reg_read(MegpuState *s, hwaddr addr, uint64_t *val)
{
    switch (addr) {
    case MEGPU_REG_TEST_HOLD:
        *val = qatomic_read(&s->test_hold);
        return true;
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
        *val = qatomic_read(&s->mc_len);
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
    case MEGPU_REG_TEST_HOLD:
        megpu_wq_set_test_hold(s, val);
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

    megpu_wq_lock_all(s);
    while ((w = megpu_wq_oldest_locked(s))) {
        megpu_wq_forget_locked(s, w);
    }
    g_array_set_size(s->flushes, 0);
    qatomic_set(&s->flushes_waiting, 0);
    s->flush_started = 0;
    s->flush_seq = 0;
    s->flush_status = 0;
    s->misc_irq_status = 0;
    qatomic_set(&s->wq_seq, 0);
    for (unsigned n = 0; n < MEGPU_MAX_ENGINES; n++) {
        megpu_wq_reseed(s, &s->engines[n]);
    }
    /* the clocks start again, and nothing is due */
    s->vclock_base = qemu_clock_get_ns(QEMU_CLOCK_VIRTUAL);
    timer_del(s->mc_timer);
    qatomic_set(&s->mc_timer_at, INT64_MAX);
    qatomic_set(&s->write_mode, s->write_mode_reset);
    qatomic_set(&s->test_hold, MEGPU_TEST_HOLD_NONE);
    megpu_wq_broadcast(s);
    megpu_wq_unlock_all(s);
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
    if (!(s->caps & MEGPU_CAP_FLUSH)) {
        /* x-caps without FLUSH: no posted writes to flush */
        s->write_mode_reset = MEGPU_WRITE_MODE_STRICT;
    }
    if (event_notifier_init(&s->mc_notify, false) < 0) {
        error_setg(errp, "megpu: cannot create the MC thread's notifier");
        return false;
    }
    qemu_mutex_init(&s->wq_lock);
    s->flushes = g_array_new(false, false, sizeof(MegpuFlush));
    s->write_mode = s->write_mode_reset;
    s->mc_timer = timer_new_ns(QEMU_CLOCK_VIRTUAL, megpu_mc_timer_cb, s);
    s->mc_timer_at = INT64_MAX;
    s->vclock_base = qemu_clock_get_ns(QEMU_CLOCK_VIRTUAL);
    for (unsigned n = 0; n < MEGPU_MAX_ENGINES; n++) {
        MegpuEngine *e = &s->engines[n];

        qemu_mutex_init(&e->wq_lock);
        qemu_cond_init(&e->wq_cond);
        QTAILQ_INIT(&e->wq);
        QTAILQ_INIT(&e->wq_mc);
        QSLIST_INIT(&e->wq_landed);
        e->wq_ticked = g_ptr_array_new();
        megpu_wq_reseed(s, e);
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
    megpu_wq_lock_all(s);
    s->mc_stop = true;
    event_notifier_set(&s->mc_notify);
    megpu_wq_unlock_all(s);
    qemu_thread_join(&s->mc_thread);
    s->mc_started = false;
    megpu_wq_reset(s);
    timer_free(s->mc_timer);
    s->mc_timer = NULL;
    g_array_free(s->flushes, true);
    for (unsigned n = 0; n < MEGPU_MAX_ENGINES; n++) {
        MegpuEngine *e = &s->engines[n];

        g_ptr_array_free(e->wq_ticked, true);
        g_free(e->wq_due.w);
        g_free(e->wq_mc_due.w);
        qemu_cond_destroy(&e->wq_cond);
        qemu_mutex_destroy(&e->wq_lock);
    }
    qemu_mutex_destroy(&s->wq_lock);
    event_notifier_cleanup(&s->mc_notify);
}
