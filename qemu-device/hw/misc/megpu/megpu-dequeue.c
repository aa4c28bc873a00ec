/*
 * megpu: task-queue dequeuers (seed 002)
 *
 * DOC: Dynamic work partitioning between CPU threads and engines
 *
 * Seed 002 (US 9,645,854, "Dynamic work partitioning on heterogeneous
 * processing devices") puts tasks in public queues in system memory that
 * CPU dequeuing modules and the GPU's command processor both take from,
 * each in batches of its own grain, respecting each task's affinity, and
 * an idle consumer steals from the other's queue. Here the DEQUEUE packet
 * makes an engine's command processor such a dequeuer; the queue and
 * task layout is MEGPU_TQ_* in megpu_hw.h. Choices the seed leaves open:
 *
 * - Exclusive access ("semaphore block") is a compare-and-swap 0 -> owner
 *   on the queue's lock word, a real host atomic on the mapped guest RAM,
 *   so it excludes guest CPU threads doing the same with lock cmpxchg
 *   (with multi-threaded TCG and two or more vCPUs, see DESIGN.md). A
 *   dequeuer that keeps finding the lock taken yields a few times, then
 *   sleeps a poll period (or until TASKQ_NOTIFY) between tries: a CPU
 *   thread holding the lock costs no host core.
 * - Eligibility is looked at first without the lock, as the seed's
 *   flowcharts do (FIG. 5: none eligible -> end, and the lock word is
 *   never written), then checked again under the lock, which the
 *   flowcharts omit: another dequeuer may have taken the task meanwhile.
 * - A batch is the longest run from the head, up to the queue's GPU
 *   batch size (larger than the CPU's: the seed's grain; in a GUIDED
 *   queue at most half of what it holds), of tasks this engine may
 *   run, so batches are contiguous FIFO ranges and a task
 *   this engine may not run stops the batch (head-of-line; the queue
 *   stays a plain ring without holes).
 * - Affinity: REQUIRE_CPU is never taken; PREFER_CPU only when the queue
 *   is not STRICT; HINT_CPU always, but only in a batch of its own; a
 *   task whose kernel this engine type cannot run is not eligible either.
 * - Stealing: with MEGPU_DEQ_STEAL the engine looks at its home queue
 *   first and at the others in list order after it, and goes back to its
 *   home queue after every batch. It ends when every queue is CLOSED and
 *   holds no task it may take; with MEGPU_DEQ_ONCE it ends after the
 *   first pass that found nothing.
 * - EVENT queues use the seed's other exclusion, event notification: a
 *   dequeuer that finds the lock taken counts itself in WAITERS and
 *   sleeps; a releasing engine wakes the sleeping engines, and the
 *   sleeping CPU threads with MISC_IRQ_TASKQ_RELEASE when CPU_WAITERS
 *   says there are any (the driver wakes its TASKQ_SLEEP callers); a
 *   releasing CPU writes MEGPU_REG_TASKQ_NOTIFY. Progress comes from
 *   these notifications: a sleeper also looks again after
 *   MEGPU_TQ_EVENT_POLL_MS, a safety net only, and a lock it takes after
 *   such a wake is counted in the queue's EVENT_POLLED, so a test sees
 *   whether the notifications did the work. x-taskq-no-notify (tests
 *   only) drops every notification: the negative control of that test.
 * - Completion: in relaxed write mode the batch's writes are flushed
 *   (seed 004) before its notifications, so a CPU that sees DONE sees
 *   the results. The notification counts takes (exactly once: DONE == 1).
 * - Malformed queues and descriptors fault the engine (MEGPU_FAULT_TQ_*)
 *   after the bad descriptor was taken and notified with that status, so
 *   the queue is not stuck on it. A kernel that faults leaves its fault in
 *   the engine; it and the rest of its batch are notified with the code.
 * - A task may carry a user's wave program (MEGPU_KERNEL_PROGRAM, DATA a
 *   program-arguments block): DEQUEUE and TASK_RUN dispatch it as the
 *   DISPATCH packet does, on gfx and compute engines. A program's fault
 *   is its task's alone: the task is notified with the fault's code and
 *   the batch goes on, the engine does not fault (a user's code is the
 *   task's, not the queue's).
 *   Every task taken is notified exactly once: a notification that cannot
 *   be written (its record is not RAM, or not mapped) does not stop the
 *   others; an engine reset in the middle of a batch notifies the tasks
 *   it stopped (in relaxed mode also those whose writes it dropped)
 *   with MEGPU_FAULT_TQ_RESET; and a malformed task's record that is
 *   not 8-aligned is never written (it could straddle a page at any
 *   byte).
 * - The discrete variant (the seed's FIG. 3 path through the driver): an
 *   engine enabled in TASKQ_REQ_WORK requests work when its ring runs
 *   empty (MISC_IRQ_WORK, TASKQ_REQ_PENDING); the driver's dequeuing
 *   module takes a batch under the same lock word and submits it as a
 *   job whose TASK_RUN packet runs and notifies the batch with tq_run(),
 *   the code DEQUEUE runs its own batches with, so the two consumers
 *   cannot disagree. (TASK_DONE writes one notification alone.)
 * - x-taskq-nonatomic (tests only) takes the lock with a read, a pause
 *   and a write, and holds it a little longer: two dequeuers can both
 *   "own" the queue and run a task twice or lose one, which the
 *   exactly-once tests must catch.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */

#include "qemu/osdep.h"
#include "qemu/atomic.h"
#include "qemu/bswap.h"
#include "qemu/log.h"
#include "megpu-internal.h"
#include "trace.h"
#include "hw/misc/megpu_hw_taskq.h"

/* how long an engine sleeps before it looks at the queues again */
#define MEGPU_TQ_POLL_MS        1
/* failed compare-and-swaps before a dequeuer sleeps between tries */
#define MEGPU_TQ_SPIN_TRIES     64
typedef struct MegpuTask {
    uint64_t addr;              /* where the descriptor was */
    uint32_t cpu_fn;
    uint32_t gpu_kernel;
    uint64_t data;
    uint32_t range_x, range_y, group_x, group_y;
    uint64_t notify;
    uint32_t affinity;
    uint32_t arg_size;
    uint64_t event_addr;
    uint64_t event_value;
    bool bad;                   /* malformed */
    uint8_t raw[MEGPU_TQ_DESC_SIZE];    /* as read: the take rules' input */
} MegpuTask;

typedef struct MegpuQueue {
    uint64_t addr;
    uint32_t size;
    uint32_t flags;
    uint32_t batch;             /* GPU batch size */
} MegpuQueue;

typedef enum MegpuLook {
    TQ_EMPTY,                   /* nothing queued */
    TQ_NONE,                    /* queued, but nothing for this engine */
    TQ_ELIGIBLE,                /* the head task is for this engine */
} MegpuLook;

typedef struct MegpuDequeuer {
    MegpuExec *x;
    uint32_t owner;
    MegpuTask *batch;           /* MEGPU_TQ_MAX_BATCH */
    /* descriptors read at once, from batch index desc_first */
    uint8_t desc[MEGPU_PAGE_SIZE];
    uint32_t desc_first;
} MegpuDequeuer;

/* ---- 32-bit words of a queue, each one access: atomics and orders ---- */

static bool tq_st32(MegpuExec *x, uint64_t addr, uint32_t val)
{
    MegpuMap m;
    uint32_t *p = megpu_mem_map(x, addr, 4, true, &m);

    if (!p) {
        return false;
    }
    megpu_wq_order(x->e->s, m.pa, 4);
    /* a full barrier: a release then reads WAITERS (store-load order) */
    qatomic_xchg(p, cpu_to_le32(val));
    megpu_mem_unmap(x, &m);
    return true;
}

/* Compare-and-swap; *ok says whether the word held @old. */
static bool tq_cas32(MegpuExec *x, uint64_t addr, uint32_t old, uint32_t new,
                     bool *ok)
{
    MegpuMap m;
    uint32_t *p = megpu_mem_map(x, addr, 4, true, &m);

    if (!p) {
        return false;
    }
    megpu_wq_order(x->e->s, m.pa, 4);
    if (x->e->s->taskq_nonatomic) {
        /* the negative control: a window between test and set */
        *ok = le32_to_cpu(qatomic_read(p)) == old;
        if (*ok) {
            g_usleep(50);
            qatomic_set(p, cpu_to_le32(new));
        }
    } else {
        *ok = qatomic_cmpxchg(p, cpu_to_le32(old), cpu_to_le32(new)) ==
              cpu_to_le32(old);
    }
    megpu_mem_unmap(x, &m);
    return true;
}

static bool tq_count(MegpuExec *x, uint64_t q, uint32_t off, uint32_t n)
{
    return !n || megpu_mem_add32(x, q + off, n);
}

static void tq_set_state(MegpuEngine *e, uint32_t state)
{
    qatomic_set(&e->tq_state, state);
}

/* ---- queue header and descriptors ---- */

static bool tq_load_queue(MegpuExec *x, uint64_t addr, MegpuQueue *q)
{
    uint32_t magic;

    q->addr = addr;
    if (!megpu_mem_read32(x, addr + MEGPU_TQ_HDR_MAGIC, &magic) ||
        !megpu_mem_read32(x, addr + MEGPU_TQ_HDR_SIZE, &q->size) ||
        !megpu_mem_read32(x, addr + MEGPU_TQ_HDR_FLAGS, &q->flags) ||
        !megpu_mem_read32(x, addr + MEGPU_TQ_HDR_BATCH_GPU, &q->batch)) {
        return false;
    }
    if (magic != MEGPU_TQ_MAGIC || !q->size ||
        q->size > MEGPU_TQ_MAX_SLOTS || !is_power_of_2(q->size) ||
        q->batch > MEGPU_TQ_MAX_BATCH ||
        !megpu_range_ok(x, addr, MEGPU_TQ_BYTES((uint64_t)q->size), false)) {
        return megpu_fault(x, MEGPU_FAULT_TQ_BAD_QUEUE, addr, false);
    }
    if (!q->batch) {
        q->batch = MEGPU_TQ_DEF_BATCH_GPU;
    }
    return true;
}

/* head and tail; a tail more than a ring ahead is a malformed queue */
static bool tq_indexes(MegpuExec *x, const MegpuQueue *q, uint32_t *head,
                       uint32_t *tail)
{
    if (!megpu_mem_read32(x, q->addr + MEGPU_TQ_HDR_HEAD, head) ||
        !megpu_mem_read32(x, q->addr + MEGPU_TQ_HDR_TAIL, tail)) {
        return false;
    }
    if (*tail - *head > q->size) {
        return megpu_fault(x, MEGPU_FAULT_TQ_BAD_INDEX,
                           q->addr + MEGPU_TQ_HDR_TAIL, false);
    }
    return true;
}

static bool tq_aligned8(uint64_t a)
{
    return !(a & 7);
}

/* Where descriptor @idx of @q is (a ring: index & (size - 1)). */
static uint64_t tq_desc_addr(const MegpuQueue *q, uint32_t idx)
{
    return q->addr + MEGPU_TQ_HDR_BYTES +
           (uint64_t)(idx & (q->size - 1)) * MEGPU_TQ_DESC_SIZE;
}

/* Decode the MEGPU_TQ_DESC_SIZE bytes @d of the descriptor at @addr. */
static void tq_parse_task(const uint8_t *d, uint64_t addr, MegpuTask *t)
{
    t->addr = addr;
    t->cpu_fn = ldl_le_p(d + MEGPU_TQ_DESC_CPU_FN);
    t->gpu_kernel = ldl_le_p(d + MEGPU_TQ_DESC_GPU_KERNEL);
    t->data = ldq_le_p(d + MEGPU_TQ_DESC_DATA);
    t->range_x = ldl_le_p(d + MEGPU_TQ_DESC_RANGE_X);
    t->range_y = ldl_le_p(d + MEGPU_TQ_DESC_RANGE_Y);
    t->group_x = ldl_le_p(d + MEGPU_TQ_DESC_GROUP_X);
    t->group_y = ldl_le_p(d + MEGPU_TQ_DESC_GROUP_Y);
    t->notify = ldq_le_p(d + MEGPU_TQ_DESC_NOTIFY);
    t->affinity = ldl_le_p(d + MEGPU_TQ_DESC_AFFINITY);
    t->arg_size = ldl_le_p(d + MEGPU_TQ_DESC_ARG_SIZE);
    t->event_addr = ldq_le_p(d + MEGPU_TQ_DESC_EVENT_ADDR);
    t->event_value = ldq_le_p(d + MEGPU_TQ_DESC_EVENT_VALUE);
    t->bad = !megpu_tq_desc_valid(d);
    memcpy(t->raw, d, sizeof(t->raw));
}

static bool tq_read_task(MegpuExec *x, const MegpuQueue *q, uint32_t idx,
                         MegpuTask *t)
{
    uint8_t d[MEGPU_TQ_DESC_SIZE];
    uint64_t addr = tq_desc_addr(q, idx);

    if (!megpu_mem_rw(x, addr, d, sizeof(d), false)) {
        return false;
    }
    tq_parse_task(d, addr, t);
    return true;
}

/* A wave program runs where a program DISPATCH does: gfx, compute. */
static bool tq_runs_programs(const MegpuEngine *e)
{
    return e->type == MEGPU_ENGINE_GFX || e->type == MEGPU_ENGINE_COMPUTE;
}

/* The engine's side of the take rules (megpu_hw_taskq.h). */
static bool tq_may_run(MegpuExec *x, const MegpuQueue *q, const MegpuTask *t)
{
    return megpu_tq_may_run(t->raw, MEGPU_TQ_SIDE_GPU, q->flags,
                            x->e->kernel_mask, tq_runs_programs(x->e));
}

/*
 * Has the event of @t, which this engine may run, happened (no event:
 * yes)? False with *@ok false when its word cannot be read (a fault).
 */
static bool tq_event_reached(MegpuExec *x, const MegpuTask *t, bool *ok)
{
    uint64_t ev;

    *ok = true;
    if (t->bad || !t->event_addr) {
        return true;
    }
    if (!megpu_mem_read64(x, t->event_addr, &ev)) {
        *ok = false;
        return false;
    }
    return (int64_t)(ev - t->event_value) >= 0;
}

/*
 * May this engine take @t now? A malformed task is "eligible": it is
 * taken so that the fault is reported and the queue goes on.
 */
static bool tq_eligible(MegpuExec *x, const MegpuQueue *q,
                        const MegpuTask *t, bool *ok)
{
    *ok = true;
    if (t->bad) {
        return true;
    }
    return tq_may_run(x, q, t) && tq_event_reached(x, t, ok);
}

/* Look at the head without the lock (the seed's "identify" step). */
static bool tq_look(MegpuExec *x, const MegpuQueue *q, MegpuLook *res)
{
    uint32_t head, tail;
    MegpuTask t;
    bool ok;

    if (!tq_indexes(x, q, &head, &tail)) {
        return false;
    }
    if (head == tail) {
        *res = TQ_EMPTY;
        return true;
    }
    if (!tq_read_task(x, q, head, &t)) {
        return false;
    }
    *res = tq_eligible(x, q, &t, &ok) ? TQ_ELIGIBLE : TQ_NONE;
    return ok;
}

/* A closed queue's last verdict, and its indexes then. */
typedef struct {
    bool valid, done;
    uint32_t head, tail;
} TqClosedSeen;

/*
 * Could this engine ever take a task of the closed queue @q again? Only
 * if one of its queued tasks is eligible or waits for an event. A queue
 * whose indexes did not move since the last verdict (@seen) has the same:
 * a waiting DEQUEUE looks every millisecond, and must not read up to 64K
 * descriptors of every queue each time.
 */
static bool tq_closed_done(MegpuExec *x, const MegpuQueue *q,
                           TqClosedSeen *seen, bool *done)
{
    uint32_t head, tail;
    MegpuTask t;
    bool ok;

    *done = true;
    if (!tq_indexes(x, q, &head, &tail)) {
        return false;
    }
    if (seen->valid && seen->head == head && seen->tail == tail) {
        *done = seen->done;
        return true;
    }
    *seen = (TqClosedSeen) { .head = head, .tail = tail };
    for (uint32_t i = head; i != tail; i++) {
        /* up to 64K descriptors, per queue named in the list */
        if (megpu_engine_should_abort(x->e)) {
            x->aborted = true;
            return false;
        }
        if (!tq_read_task(x, q, i, &t)) {
            return false;
        }
        if (t.event_addr || tq_eligible(x, q, &t, &ok)) {
            seen->valid = true;
            *done = false;
            return true;
        }
        if (!ok) {
            return false;
        }
    }
    *seen = (TqClosedSeen) {
        .valid = true, .done = true, .head = head, .tail = tail,
    };
    return true;
}

/* ---- exclusion ---- */

void megpu_taskq_notify(MegpuState *s)
{
    if (s->taskq_no_notify) {
        return;                 /* the negative control: sleepers poll */
    }
    qemu_mutex_lock(&s->tq_mutex);
    s->tq_seq++;
    qemu_cond_broadcast(&s->tq_cond);
    qemu_mutex_unlock(&s->tq_mutex);
}

/*
 * An engine's reset or stop ends its sleep at once: its flag is set
 * before this, and tq_sleep() checks it under the same mutex. Not a
 * notification (tq_seq stays), and not subject to x-taskq-no-notify.
 */
void megpu_taskq_kick(MegpuState *s)
{
    qemu_mutex_lock(&s->tq_mutex);
    qemu_cond_broadcast(&s->tq_cond);
    qemu_mutex_unlock(&s->tq_mutex);
}

/*
 * Sleep until a notification or @ms pass; false if the engine must stop.
 * *@polled (if given) says the sleep ended by the time, not a notification.
 */
static bool tq_sleep(MegpuEngine *e, uint64_t seq, unsigned ms, bool *polled)
{
    MegpuState *s = e->s;
    bool timed_out = false;

    qemu_mutex_lock(&s->tq_mutex);
    if (s->tq_seq == seq && !megpu_engine_should_abort(e)) {
        timed_out = !qemu_cond_timedwait(&s->tq_cond, &s->tq_mutex, ms) &&
                    s->tq_seq == seq;
    }
    qemu_mutex_unlock(&s->tq_mutex);
    if (polled) {
        *polled = timed_out;
    }
    return !megpu_engine_should_abort(e);
}

static uint64_t tq_seq(MegpuState *s)
{
    uint64_t seq;

    qemu_mutex_lock(&s->tq_mutex);
    seq = s->tq_seq;
    qemu_mutex_unlock(&s->tq_mutex);
    return seq;
}

static void tq_unlock_after_fault(MegpuDequeuer *d, const MegpuQueue *q);

static bool tq_lock(MegpuDequeuer *d, const MegpuQueue *q)
{
    MegpuExec *x = d->x;
    MegpuEngine *e = x->e;
    uint64_t lock = q->addr + MEGPU_TQ_HDR_LOCK;
    bool taken, polled = false, event = q->flags & MEGPU_TQ_F_EVENT;

    for (unsigned tries = 0;; tries++) {
        /* read before the try, so a release after it still wakes us */
        bool may_sleep = event || tries >= MEGPU_TQ_SPIN_TRIES;
        uint64_t seq = may_sleep ? tq_seq(e->s) : 0;
        uint32_t cur;

        if (megpu_engine_should_abort(e)) {
            x->aborted = true;
            return false;
        }
        if (!tq_cas32(x, lock, 0, d->owner, &taken)) {
            return false;
        }
        if (taken) {
            /* the safety poll, not a release, let it in: count it */
            if (polled &&
                !tq_count(x, q->addr, MEGPU_TQ_HDR_EVENT_POLLED, 1)) {
                tq_unlock_after_fault(d, q);
                return false;
            }
            return true;
        }
        tq_set_state(e, MEGPU_TQ_STATE_LOCKING);
        qatomic_inc(&e->s->tq_lock_retries);
        if (!tq_count(x, q->addr, MEGPU_TQ_HDR_LOCK_RETRIES, 1)) {
            return false;
        }
        if (!event) {
            /*
             * A holder is usually another engine, done in microseconds;
             * a CPU thread may hold it for as long as it likes: back off
             * to sleeping (a notification or a poll period) rather than
             * burn a host core until the job times out.
             */
            if (may_sleep) {
                tq_sleep(e, seq, MEGPU_TQ_POLL_MS, NULL);
            } else {
                g_thread_yield();
            }
            continue;
        }
        /* the seed's event notification: sleep until a release */
        if (!tq_count(x, q->addr, MEGPU_TQ_HDR_WAITERS, 1)) {
            return false;
        }
        if (!megpu_mem_read32(x, lock, &cur)) {
            return false;
        }
        polled = false;
        if (cur) {
            qatomic_inc(&e->s->tq_event_waits);
            if (!tq_count(x, q->addr, MEGPU_TQ_HDR_EVENT_SLEEPS, 1)) {
                return false;
            }
            trace_megpu_taskq_sleep(e->idx, q->addr, cur);
            tq_sleep(e, seq, MEGPU_TQ_EVENT_POLL_MS, &polled);
        }
        if (!tq_count(x, q->addr, MEGPU_TQ_HDR_WAITERS, -1u)) {
            return false;
        }
    }
}

static bool tq_unlock(MegpuDequeuer *d, const MegpuQueue *q)
{
    MegpuState *s = d->x->e->s;
    uint32_t waiters, cpus;

    if (!tq_st32(d->x, q->addr + MEGPU_TQ_HDR_LOCK, 0)) {
        return false;
    }
    if (q->flags & MEGPU_TQ_F_EVENT) {
        if (!megpu_mem_read32(d->x, q->addr + MEGPU_TQ_HDR_WAITERS,
                              &waiters) ||
            !megpu_mem_read32(d->x, q->addr + MEGPU_TQ_HDR_CPU_WAITERS,
                              &cpus)) {
            return false;
        }
        if (waiters) {
            megpu_taskq_notify(s);
        }
        /* CPU threads sleep in the driver: only an interrupt wakes them */
        if (cpus && !s->taskq_no_notify) {
            megpu_misc_irq(s, MEGPU_MISC_IRQ_TASKQ_RELEASE);
        }
    }
    return true;
}

/*
 * A fault while holding the lock: release it, so that the others go on
 * (if the header is still writable), and keep the fault for the engine.
 */
static void tq_unlock_after_fault(MegpuDequeuer *d, const MegpuQueue *q)
{
    MegpuExec *x = d->x;
    uint32_t code = x->fault_code;
    uint64_t addr = x->fault_addr;

    x->fault_code = 0;
    tq_unlock(d, q);
    x->fault_code = code;
    x->fault_addr = addr;
}

/*
 * Under the lock: check again and take the contiguous run of eligible
 * tasks at the head (a malformed one only alone). Returns the count.
 */
static bool tq_take(MegpuDequeuer *d, const MegpuQueue *q, uint32_t *n)
{
    MegpuExec *x = d->x;
    uint32_t head, tail, have = 0, batch;
    bool ok = true, reached;
    int step;

    *n = 0;
    if (!tq_indexes(x, q, &head, &tail)) {
        return false;
    }
    if (x->e->s->taskq_nonatomic) {
        g_usleep(100);          /* long enough for two holders to overlap */
    }
    batch = megpu_tq_batch_limit(q->flags, q->batch, tail - head);
    while (*n < batch && head + *n != tail) {
        MegpuTask *t = &d->batch[*n];

        if (*n == have) {
            /*
             * The next descriptors in one read: up to the batch size,
             * the tail, the end of the ring and the end of the page.
             */
            uint32_t idx = head + *n, slot = idx & (q->size - 1);
            uint64_t addr = tq_desc_addr(q, idx);
            uint32_t c = MIN(batch - *n, tail - idx);

            c = MIN(c, q->size - slot);
            c = MIN(c, (MEGPU_PAGE_SIZE - (addr & (MEGPU_PAGE_SIZE - 1))) /
                       MEGPU_TQ_DESC_SIZE);
            c = MAX(c, 1);
            if (!megpu_mem_rw(x, addr, d->desc, c * MEGPU_TQ_DESC_SIZE,
                              false)) {
                return false;
            }
            d->desc_first = *n;
            have = *n + c;
        }
        tq_parse_task(d->desc + (*n - d->desc_first) * MEGPU_TQ_DESC_SIZE,
                      tq_desc_addr(q, head + *n), t);
        /* the event word is read only for a task the engine may run */
        reached = !tq_may_run(x, q, t) || tq_event_reached(x, t, &ok);
        if (!ok) {
            return false;
        }
        step = megpu_tq_batch_step(t->raw, *n, MEGPU_TQ_SIDE_GPU, q->flags,
                                   x->e->kernel_mask,
                                   tq_runs_programs(x->e), reached);
        if (step == MEGPU_TQ_STOP) {
            break;
        }
        (*n)++;
        if (step == MEGPU_TQ_TAKE_LAST) {
            break;
        }
    }
    return !*n || tq_st32(x, q->addr + MEGPU_TQ_HDR_HEAD, head + *n);
}

/* ---- running a batch ---- */

static bool tq_note(MegpuExec *x, const MegpuTask *t, uint32_t by,
                    uint32_t batch, uint32_t status)
{
    MegpuMap m;
    uint32_t *p;

    /*
     * Only a malformed task can name a record that is not 8-aligned:
     * nothing is written there (such a record could straddle a page at
     * any byte); the fault names the descriptor.
     */
    if (!t->notify || !tq_aligned8(t->notify)) {
        return true;
    }
    if ((t->notify & (MEGPU_PAGE_SIZE - 1)) >
        MEGPU_PAGE_SIZE - MEGPU_TQ_NOTE_SIZE) {
        /* the record straddles two pages: word by word */
        return tq_st32(x, t->notify + MEGPU_TQ_NOTE_BY, by) &&
               tq_st32(x, t->notify + MEGPU_TQ_NOTE_BATCH, batch) &&
               tq_st32(x, t->notify + MEGPU_TQ_NOTE_STATUS, status) &&
               megpu_mem_add32(x, t->notify + MEGPU_TQ_NOTE_DONE, 1);
    }
    /*
     * One translation and one ordering for the record: the same stores
     * and the same atomic increment of DONE last, as tq_st32 and
     * megpu_mem_add32 would do one by one.
     */
    p = megpu_mem_map(x, t->notify, MEGPU_TQ_NOTE_SIZE, true, &m);
    if (!p) {
        return false;
    }
    megpu_wq_order(x->e->s, m.pa, MEGPU_TQ_NOTE_SIZE);
    qatomic_xchg(&p[MEGPU_TQ_NOTE_BY / 4], cpu_to_le32(by));
    qatomic_xchg(&p[MEGPU_TQ_NOTE_BATCH / 4], cpu_to_le32(batch));
    qatomic_xchg(&p[MEGPU_TQ_NOTE_STATUS / 4], cpu_to_le32(status));
    megpu_le32_add(&p[MEGPU_TQ_NOTE_DONE / 4], 1);
    megpu_mem_unmap(x, &m);
    return true;
}

/* A fault recorded in an exec, kept aside while more packets' work runs. */
typedef struct MegpuFaultRec {
    uint32_t code;
    uint64_t addr;
    uint32_t info;
} MegpuFaultRec;

static MegpuFaultRec tq_fault_take(MegpuExec *x)
{
    MegpuFaultRec f = {
        .code = x->fault_code, .addr = x->fault_addr, .info = x->fault_info,
    };

    x->fault_code = 0;
    return f;
}

static void tq_fault_restore(MegpuExec *x, const MegpuFaultRec *f)
{
    if (f->code && !x->fault_code) {
        x->fault_code = f->code;
        x->fault_addr = f->addr;
        x->fault_info = f->info;
    }
}

/* How a batch is run: by DEQUEUE or for the driver's dequeuer. */
typedef struct MegpuRun {
    uint32_t owner;             /* BY in the notifications */
    uint32_t batch;             /* BATCH in the notifications */
    bool fault_bad;             /* a malformed task faults the engine */
    bool count_takes;           /* GPU_TASKS etc.: not counted at take */
    bool stolen;
} MegpuRun;

/*
 * Run the batch's kernels (DISPATCH does the seed's SPI step: work-items
 * and work-groups), flush, then notify every task taken. The first fault
 * stops the kernels: that task and the ones after it carry its code. A
 * notification that cannot be written does not stop the others (nobody
 * waits behind it); the kernel's fault, else the first notification's,
 * is the one the engine reports. An engine reset stops the kernels too,
 * and the tasks not sure to be done are notified with TQ_RESET.
 */
static bool tq_run(MegpuExec *x, MegpuTask *tasks, uint64_t queue,
                   uint32_t n, const MegpuRun *r)
{
    MegpuEngine *e = x->e;
    uint32_t ran = 0, status = 0, dispatched = 0;
    uint32_t prog_status[MEGPU_TQ_MAX_BATCH] = { 0 };
    MegpuFaultRec kernel, note = { 0 };

    trace_megpu_taskq_batch(e->idx, queue, n, r->stolen);
    tq_set_state(e, MEGPU_TQ_STATE_RUNNING);
    for (; ran < n; ran++) {
        MegpuTask *t = &tasks[ran];

        if (t->bad) {
            if (r->fault_bad) {
                megpu_fault(x, MEGPU_FAULT_TQ_BAD_TASK, t->addr, false);
                status = MEGPU_FAULT_TQ_BAD_TASK;
                break;
            }
            continue;
        }
        if (!megpu_dispatch(x, t->gpu_kernel, t->data, t->range_x,
                            t->range_y, t->group_x, t->group_y)) {
            if (x->aborted) {
                break;          /* a reset: notified below */
            }
            /*
             * A user's program is the task's own: its fault ends that
             * task (notified with the code), not the batch or the engine.
             */
            if (t->gpu_kernel == MEGPU_KERNEL_PROGRAM &&
                ran < MEGPU_TQ_MAX_BATCH) {
                prog_status[ran] = tq_fault_take(x).code;
                continue;
            }
            status = x->fault_code;
            break;
        }
        dispatched++;
    }
    kernel = tq_fault_take(x);
    if (!x->aborted && megpu_wq_relaxed(e->s)) {
        megpu_wq_engine_flush(x);       /* fails only for a reset */
    }
    if (x->aborted) {
        /*
         * A reset: the rest of the batch did not run, and in relaxed
         * mode what ran may not have landed (the reset drops queued
         * writes). Still every task taken is notified, with TQ_RESET,
         * or its queue's consumers would wait for it for ever.
         */
        if (megpu_wq_relaxed(e->s)) {
            ran = 0;
        }
        status = MEGPU_FAULT_TQ_RESET;
        kernel.code = 0;
    }
    for (uint32_t i = 0; i < n; i++) {
        const MegpuTask *t = &tasks[i];
        uint32_t st = i >= ran ? status :
                      i < MEGPU_TQ_MAX_BATCH ? prog_status[i] : 0;

        if (t->bad && (!st || x->aborted)) {
            st = MEGPU_FAULT_TQ_BAD_TASK;
        }
        if (!tq_note(x, t, r->owner, r->batch, st)) {
            MegpuFaultRec f = tq_fault_take(x);

            if (!note.code) {
                note = f;
            }
        }
    }
    /* a failure is recorded in x; every task taken is done, notified or not */
    if (queue) {
        (void)(tq_count(x, queue, MEGPU_TQ_HDR_DONE, n) &&
               (!r->count_takes ||
                (tq_count(x, queue, MEGPU_TQ_HDR_GPU_TASKS, n) &&
                 tq_count(x, queue, MEGPU_TQ_HDR_GPU_BATCHES, 1) &&
                 tq_count(x, queue, MEGPU_TQ_HDR_GPU_STEALS, r->stolen))));
    }
    if (x->aborted) {
        x->fault_code = 0;              /* the reset clears faults */
    } else {
        tq_fault_restore(x, &note);
    }
    if (kernel.code) {
        x->fault_code = 0;
        tq_fault_restore(x, &kernel);
    }
    qemu_mutex_lock(&e->lock);
    e->tq_tasks += dispatched;
    e->tq_job_tasks += dispatched;
    qemu_mutex_unlock(&e->lock);
    qatomic_add(&e->s->tq_tasks, dispatched);
    qatomic_inc(&e->s->tq_batches);
    if (r->stolen) {
        qatomic_inc(&e->s->tq_steals);
    }
    return !x->fault_code && !x->aborted;
}

static uint32_t tq_next_batch(MegpuEngine *e, bool stolen)
{
    uint32_t batch;

    qemu_mutex_lock(&e->lock);
    batch = ++e->tq_batches;
    e->tq_steals += stolen;
    qemu_mutex_unlock(&e->lock);
    return batch;
}

/* Take and run one batch of @q if it has one for us; *got: it did. */
static bool tq_try_queue(MegpuDequeuer *d, const MegpuQueue *q, bool stolen,
                         MegpuLook *look, bool *got)
{
    MegpuExec *x = d->x;
    uint32_t n;

    *got = false;
    tq_set_state(x->e, MEGPU_TQ_STATE_LOOKING);
    if (!tq_look(x, q, look)) {
        return false;
    }
    if (*look != TQ_ELIGIBLE) {
        /* FIG. 5: none eligible, end; the lock word is not touched */
        return *look == TQ_EMPTY ||
               tq_count(x, q->addr, MEGPU_TQ_HDR_NONE_ELIGIBLE, 1);
    }
    if (!tq_lock(d, q)) {
        return false;
    }
    if (!tq_take(d, q, &n)) {
        tq_unlock_after_fault(d, q);
        return false;
    }
    if (!tq_unlock(d, q)) {
        return false;
    }
    if (!n) {
        /* taken by someone else between the look and the lock */
        *look = TQ_NONE;
        return tq_count(x, q->addr, MEGPU_TQ_HDR_NONE_ELIGIBLE, 1);
    }
    *got = true;
    return tq_run(x, d->batch, q->addr, n, &(MegpuRun) {
                      .owner = d->owner,
                      .batch = tq_next_batch(x->e, stolen),
                      .fault_bad = true,
                      .count_takes = true,
                      .stolen = stolen,
                  });
}

/*
 * DEQUEUE: queues(2), count(1), home(1), flags(1). Runs until every
 * queue is closed and done for this engine (or, with ONCE, until a pass
 * finds nothing), a fault, or a reset.
 */
bool megpu_exec_dequeue(MegpuExec *x, const uint32_t *p)
{
    MegpuEngine *e = x->e;
    uint64_t list = le32_to_cpu(p[0]) | (uint64_t)le32_to_cpu(p[1]) << 32;
    uint32_t count = le32_to_cpu(p[2]), home = le32_to_cpu(p[3]);
    uint32_t flags = le32_to_cpu(p[4]);
    uint64_t addrs[MEGPU_DEQ_MAX_QUEUES];
    TqClosedSeen seen[MEGPU_DEQ_MAX_QUEUES] = { 0 };
    g_autofree MegpuTask *batch = NULL;
    MegpuDequeuer d = {
        .x = x, .owner = MEGPU_TQ_OWNER_ENGINE(e->idx),
    };
    bool ok = true;

    if (!count || count > MEGPU_DEQ_MAX_QUEUES || home >= count ||
        (list & 7) || (flags & ~(MEGPU_DEQ_STEAL | MEGPU_DEQ_ONCE))) {
        return megpu_fault(x, MEGPU_FAULT_BAD_ARG, x->pkt_addr, false);
    }
    if (!megpu_mem_rw(x, list, addrs, count * 8ull, false)) {
        return false;
    }
    for (unsigned i = 0; i < count; i++) {
        addrs[i] = le64_to_cpu(addrs[i]);
        if (addrs[i] & (MEGPU_TQ_ALIGN - 1)) {
            return megpu_fault(x, MEGPU_FAULT_TQ_BAD_QUEUE, addrs[i], false);
        }
    }
    batch = g_new(MegpuTask, MEGPU_TQ_MAX_BATCH);
    d.batch = batch;
    trace_megpu_taskq_dequeue(e->idx, list, count, home, flags);

    while (ok) {
        uint64_t seq = tq_seq(e->s);
        bool got = false, all_done = true;

        if (megpu_engine_should_abort(e)) {
            x->aborted = true;
            ok = false;
            break;
        }
        for (unsigned i = 0; i < count && !got; i++) {
            unsigned qi = (home + i) % count;
            MegpuQueue q;
            MegpuLook look;
            bool done;

            if (i && !(flags & MEGPU_DEQ_STEAL)) {
                break;
            }
            if (!tq_load_queue(x, addrs[qi], &q) ||
                !tq_try_queue(&d, &q, i != 0, &look, &got)) {
                ok = false;
                break;
            }
            if (got || !all_done) {
                continue;
            }
            /* CLOSED is set after the last tail: read it again now */
            if (!megpu_mem_read32(x, q.addr + MEGPU_TQ_HDR_FLAGS, &q.flags)) {
                ok = false;
                break;
            }
            if (!(q.flags & MEGPU_TQ_F_CLOSED)) {
                all_done = false;
            } else if (look != TQ_EMPTY) {
                if (!tq_closed_done(x, &q, &seen[qi], &done)) {
                    ok = false;
                    break;
                }
                all_done = done;
            }
        }
        if (!ok || got) {
            continue;
        }
        if (all_done || (flags & MEGPU_DEQ_ONCE)) {
            break;
        }
        tq_set_state(e, MEGPU_TQ_STATE_WAITING);
        tq_sleep(e, seq, MEGPU_TQ_POLL_MS, NULL);
    }
    tq_set_state(e, MEGPU_TQ_STATE_IDLE);
    trace_megpu_taskq_dequeue_done(e->idx, ok, x->fault_code);
    return ok;
}

/* ---- the discrete variant: request work, TASK_DONE ---- */

/* The engine's ring ran empty (engine lock held): ask for work? */
void megpu_taskq_engine_idle(MegpuEngine *e)
{
    MegpuState *s = e->s;
    uint32_t bit = MEGPU_BIT(e->idx);

    if (!(qatomic_read(&s->tq_req_work) & bit)) {
        return;
    }
    qatomic_or(&s->tq_req_pending, bit);
    trace_megpu_taskq_request_work(e->idx);
    megpu_misc_irq(s, MEGPU_MISC_IRQ_WORK);
}

/* Newly enabled engines that are idle already ask at once. */
static void megpu_taskq_req_work_write(MegpuState *s, uint32_t val)
{
    uint32_t old = qatomic_xchg(&s->tq_req_work, val);

    for (unsigned n = 0; n < s->num_engines; n++) {
        MegpuEngine *e = &s->engines[n];

        if (!(val & ~old & MEGPU_BIT(n))) {
            continue;
        }
        qemu_mutex_lock(&e->lock);
        if (e->ring_size && e->head == e->tail && !e->busy &&
            !e->faulted && !e->reset_pending) {
            megpu_taskq_engine_idle(e);
        }
        qemu_mutex_unlock(&e->lock);
    }
}

/*
 * TASK_DONE: queue(2), note(2), owner(1), batch(1), status(1): one
 * task's notification, written for the driver's dequeuer.
 */
bool megpu_exec_task_done(MegpuExec *x, const uint32_t *p)
{
    uint64_t queue = le32_to_cpu(p[0]) | (uint64_t)le32_to_cpu(p[1]) << 32;
    MegpuTask t = {
        .notify = le32_to_cpu(p[2]) | (uint64_t)le32_to_cpu(p[3]) << 32,
    };

    if (!tq_aligned8(t.notify) || (queue & (MEGPU_TQ_ALIGN - 1))) {
        return megpu_fault(x, MEGPU_FAULT_BAD_ARG, x->pkt_addr, false);
    }
    return tq_note(x, &t, le32_to_cpu(p[4]), le32_to_cpu(p[5]),
                   le32_to_cpu(p[6])) &&
           (!queue || tq_count(x, queue, MEGPU_TQ_HDR_DONE, 1));
}

/*
 * TASK_RUN: queue(2), descs(2), count(1), owner(1), batch(1): a batch the
 * driver's dequeuer took (and counted), run and notified as DEQUEUE runs
 * its own, so that both consumers notify every task exactly once.
 */
bool megpu_exec_task_run(MegpuExec *x, const uint32_t *p)
{
    uint64_t queue = megpu_pl64(p, 0), descs = megpu_pl64(p, 2);
    uint32_t count = megpu_pl32(p, 4);
    g_autofree MegpuTask *tasks = NULL;
    g_autofree uint8_t *d = NULL;
    bool ok;

    if (!count || count > MEGPU_TQ_MAX_BATCH || !tq_aligned8(descs) ||
        (queue & (MEGPU_TQ_ALIGN - 1))) {
        return megpu_pkt_fault(x, MEGPU_FAULT_BAD_ARG);
    }
    d = g_malloc((size_t)count * MEGPU_TQ_DESC_SIZE);
    if (!megpu_mem_rw(x, descs, d, (uint64_t)count * MEGPU_TQ_DESC_SIZE,
                      false)) {
        return false;
    }
    tasks = g_new(MegpuTask, count);
    for (uint32_t i = 0; i < count; i++) {
        tq_parse_task(d + (size_t)i * MEGPU_TQ_DESC_SIZE,
                      descs + (uint64_t)i * MEGPU_TQ_DESC_SIZE, &tasks[i]);
    }
    ok = tq_run(x, tasks, queue, count, &(MegpuRun) {
                    .owner = megpu_pl32(p, 5),
                    .batch = megpu_pl32(p, 6),
                });
    tq_set_state(x->e, MEGPU_TQ_STATE_IDLE);
    return ok;
}

/* ---- registers ---- */

bool megpu_taskq_reg_read(MegpuState *s, hwaddr addr, uint64_t *val)
{
    switch (addr) {
    case MEGPU_REG_TASKQ_NOTIFY:
        *val = qatomic_read(&s->tq_notifies);
        return true;
    case MEGPU_REG_TASKQ_TASKS:
        *val = qatomic_read(&s->tq_tasks);
        return true;
    case MEGPU_REG_TASKQ_BATCHES:
        *val = qatomic_read(&s->tq_batches);
        return true;
    case MEGPU_REG_TASKQ_STEALS:
        *val = qatomic_read(&s->tq_steals);
        return true;
    case MEGPU_REG_TASKQ_LOCK_RETRIES:
        *val = qatomic_read(&s->tq_lock_retries);
        return true;
    case MEGPU_REG_TASKQ_EVENT_WAITS:
        *val = qatomic_read(&s->tq_event_waits);
        return true;
    case MEGPU_REG_TASKQ_REQ_WORK:
        *val = qatomic_read(&s->tq_req_work);
        return true;
    case MEGPU_REG_TASKQ_REQ_PENDING:
        *val = qatomic_read(&s->tq_req_pending);
        return true;
    }
    return false;
}

bool megpu_taskq_reg_write(MegpuState *s, hwaddr addr, uint32_t val)
{
    uint32_t engines = MEGPU_BIT(s->num_engines) - 1;

    switch (addr) {
    case MEGPU_REG_TASKQ_REQ_WORK:
        megpu_taskq_req_work_write(s, val & engines);
        return true;
    case MEGPU_REG_TASKQ_REQ_PENDING:
        qatomic_and(&s->tq_req_pending, ~val);
        return true;
    case MEGPU_REG_TASKQ_NOTIFY:
        break;
    default:
        return false;
    }
    qatomic_inc(&s->tq_notifies);
    trace_megpu_taskq_notify(val);
    megpu_taskq_notify(s);
    return true;
}

void megpu_taskq_reset(MegpuState *s)
{
    qatomic_set(&s->tq_notifies, 0);
    qatomic_set(&s->tq_tasks, 0);
    qatomic_set(&s->tq_batches, 0);
    qatomic_set(&s->tq_steals, 0);
    qatomic_set(&s->tq_lock_retries, 0);
    qatomic_set(&s->tq_event_waits, 0);
    qatomic_set(&s->tq_req_work, 0);
    qatomic_set(&s->tq_req_pending, 0);
}

void megpu_taskq_init(MegpuState *s)
{
    qemu_mutex_init(&s->tq_mutex);
    qemu_cond_init(&s->tq_cond);
}

void megpu_taskq_fini(MegpuState *s)
{
    qemu_cond_destroy(&s->tq_cond);
    qemu_mutex_destroy(&s->tq_mutex);
}
