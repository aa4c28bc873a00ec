/*
 * QTest for megpu's task-queue dequeuers (seed 002): DEQUEUE packets on
 * several engines at once take tasks from queues in guest memory. Covers
 * exactly-once under contention (and with stealing), contiguous batches,
 * affinity (relaxed and STRICT), GUIDED batches, none eligible leaving
 * the lock word alone, lock contention with a CPU-held lock, stealing,
 * the EVENT exclusion mode with TASKQ_NOTIFY, event-gated tasks,
 * malformed queues and descriptors, and the negative control
 * x-taskq-nonatomic, which the exactly-once check must catch.
 *
 * The test process plays the CPU: it builds queues, holds and releases
 * lock words and checks the results. It cannot run a CPU dequeuer
 * concurrently with the engines (its memory accesses are not guest
 * atomics); the guest kselftest taskq_test does that.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */

#include "qemu/osdep.h"
#include "megpu-qtest.h"
#include "megpu-wave-programs.h"

#define Q_PA(i)             (0x08000000ull + (i) * 0x100000ull)
#define KARGS_PA            0x09000000ull   /* 64 bytes per task */
#define ELEM_PA             0x0a000000ull   /* u32 per task */
#define NOTE_PA             0x0b000000ull   /* MEGPU_TQ_NOTE_SIZE per task */
#define LIST_PA(e)          (0x0c000000ull + (e) * 0x100ull)
#define EVENT_PA            0x0c100000ull
#define PROG_PA             0x0d000000ull   /* wave programs */
#define PARGS_PA            0x0d100000ull   /* their arguments, 4K each */
#define VEC_PA              0x0d200000ull   /* vectors, 64K each */

#define MAX_TASKS           4096
#define CPU_OWNER           0x1234u

typedef struct {
    uint32_t cpu_fn, gpu_kernel, affinity;
    uint64_t event_addr, event_value;
} TaskSpec;

/* A descriptor of a 1-D task of @range work-items in groups of @group. */
static void desc_fill(uint8_t *d, const TaskSpec *s, uint64_t data,
                      uint32_t arg_size, uint32_t range, uint32_t group,
                      uint64_t note)
{
    memset(d, 0, MEGPU_TQ_DESC_SIZE);
    stl_le_p(d + MEGPU_TQ_DESC_CPU_FN, s->cpu_fn);
    stl_le_p(d + MEGPU_TQ_DESC_GPU_KERNEL, s->gpu_kernel);
    stq_le_p(d + MEGPU_TQ_DESC_DATA, data);
    stl_le_p(d + MEGPU_TQ_DESC_RANGE_X, range);
    stl_le_p(d + MEGPU_TQ_DESC_RANGE_Y, 1);
    stl_le_p(d + MEGPU_TQ_DESC_GROUP_X, group);
    stl_le_p(d + MEGPU_TQ_DESC_GROUP_Y, 1);
    stq_le_p(d + MEGPU_TQ_DESC_NOTIFY, note);
    stl_le_p(d + MEGPU_TQ_DESC_AFFINITY, s->affinity);
    stl_le_p(d + MEGPU_TQ_DESC_ARG_SIZE, arg_size);
    stq_le_p(d + MEGPU_TQ_DESC_EVENT_ADDR, s->event_addr);
    stq_le_p(d + MEGPU_TQ_DESC_EVENT_VALUE, s->event_value);
}

static void q_init(Megpu *m, unsigned qi, uint32_t slots, uint32_t flags,
                   uint32_t batch_gpu)
{
    uint8_t h[MEGPU_TQ_HDR_BYTES] = { 0 };

    stl_le_p(h + MEGPU_TQ_HDR_MAGIC, MEGPU_TQ_MAGIC);
    stl_le_p(h + MEGPU_TQ_HDR_SIZE, slots);
    stl_le_p(h + MEGPU_TQ_HDR_FLAGS, flags);
    stl_le_p(h + MEGPU_TQ_HDR_BATCH_GPU, batch_gpu);
    qtest_memwrite(m->qts, Q_PA(qi), h, sizeof(h));
}

static uint32_t q_rd(Megpu *m, unsigned qi, uint32_t off)
{
    return qtest_readl(m->qts, Q_PA(qi) + off);
}

static void q_wr(Megpu *m, unsigned qi, uint32_t off, uint32_t val)
{
    qtest_writel(m->qts, Q_PA(qi) + off, val);
}

/*
 * Append tasks @first .. @first + @n - 1 to queue @qi: task t runs
 * INCREMENT on element t and notifies note t. Descriptors, then tail.
 */
static void q_push(Megpu *m, unsigned qi, uint32_t first, uint32_t n,
                   const TaskSpec *spec)
{
    uint32_t slots = q_rd(m, qi, MEGPU_TQ_HDR_SIZE);
    uint32_t tail = q_rd(m, qi, MEGPU_TQ_HDR_TAIL);
    uint8_t d[MEGPU_TQ_DESC_SIZE], ka[MEGPU_KARGS_SIZE];
    static const TaskSpec any = {
        .cpu_fn = MEGPU_KERNEL_INCREMENT,
        .gpu_kernel = MEGPU_KERNEL_INCREMENT,
        .affinity = MEGPU_TQ_AFF_ANY,
    };

    g_assert_cmpuint(first + n, <=, MAX_TASKS);
    for (uint32_t i = 0; i < n; i++) {
        const TaskSpec *s = spec ? &spec[i] : &any;
        uint32_t t = first + i;

        memset(ka, 0, sizeof(ka));
        stq_le_p(ka + MEGPU_KARGS_PTR(0), ELEM_PA + 4ull * t);
        stl_le_p(ka + MEGPU_KARGS_N, 1);
        qtest_memwrite(m->qts, KARGS_PA + 64ull * t, ka, sizeof(ka));

        desc_fill(d, s, KARGS_PA + 64ull * t, MEGPU_KARGS_SIZE, 1, 1,
                  NOTE_PA + MEGPU_TQ_NOTE_SIZE * t);
        qtest_memwrite(m->qts, Q_PA(qi) + MEGPU_TQ_HDR_BYTES +
                       (uint64_t)((tail + i) & (slots - 1)) *
                       MEGPU_TQ_DESC_SIZE, d, sizeof(d));
    }
    q_wr(m, qi, MEGPU_TQ_HDR_TAIL, tail + n);
}

static void q_close(Megpu *m, unsigned qi)
{
    q_wr(m, qi, MEGPU_TQ_HDR_FLAGS,
         q_rd(m, qi, MEGPU_TQ_HDR_FLAGS) | MEGPU_TQ_F_CLOSED);
}

/* The results of tasks [0, n): memory zeroed before the tasks run. */
static void results_clear(Megpu *m, uint32_t n)
{
    qtest_memset(m->qts, ELEM_PA, 0, 4ull * n);
    qtest_memset(m->qts, NOTE_PA, 0, (uint64_t)MEGPU_TQ_NOTE_SIZE * n);
}

typedef struct {
    uint32_t done, by, batch, status, elem;
} Note;

static void results_read(Megpu *m, uint32_t n, Note *out)
{
    g_autofree uint8_t *notes = g_malloc((size_t)MEGPU_TQ_NOTE_SIZE * n);
    g_autofree uint8_t *elems = g_malloc(4ull * n);

    qtest_memread(m->qts, NOTE_PA, notes, (size_t)MEGPU_TQ_NOTE_SIZE * n);
    qtest_memread(m->qts, ELEM_PA, elems, 4ull * n);
    for (uint32_t t = 0; t < n; t++) {
        uint8_t *r = notes + MEGPU_TQ_NOTE_SIZE * t;

        out[t] = (Note) {
            .done = ldl_le_p(r + MEGPU_TQ_NOTE_DONE),
            .by = ldl_le_p(r + MEGPU_TQ_NOTE_BY),
            .batch = ldl_le_p(r + MEGPU_TQ_NOTE_BATCH),
            .status = ldl_le_p(r + MEGPU_TQ_NOTE_STATUS),
            .elem = ldl_le_p(elems + 4ull * t),
        };
    }
}

/* Engine @e dequeues from queues @qs (its home first in @home). */
static void emit_dequeue(Megpu *m, unsigned e, const unsigned *qs,
                         unsigned count, unsigned home, uint32_t flags)
{
    Stream *r = &m->ring[e];

    for (unsigned i = 0; i < count; i++) {
        qtest_writeq(m->qts, LIST_PA(e) + 8 * i, Q_PA(qs[i]));
    }
    hdr(r, MEGPU_PKT_DEQUEUE, MEGPU_PKT_DEQUEUE_COUNT, 0);
    put64(r, LIST_PA(e));
    put(r, count);
    put(r, home);
    put(r, flags);
}

static void dequeue_run(Megpu *m, unsigned e, const unsigned *qs,
                        unsigned count, unsigned home, uint32_t flags)
{
    emit_dequeue(m, e, qs, count, home, flags);
    kick(m, e);
    eng_idle(m, e);
}

/*
 * Bounded wait until engine @n's DEQUEUE shows @state: a slow host (a
 * sanitizer build) takes long to get there, so never a fixed sleep.
 */
static void tq_state_wait(Megpu *m, unsigned n, uint32_t state)
{
    for (unsigned us = 0; erd(m, n, MEGPU_ENG_TASKQ_STATE) != state;
         us += 1000) {
        g_assert_cmpuint(us, <, POLL_TIMEOUT_US);
        g_usleep(1000);
    }
}

/*
 * Exactly-once, the counters, and contiguous batches: the tasks of one
 * (runner, batch) are consecutive in FIFO order, at most @batch of them.
 * Returns the number of tasks not run exactly once.
 */
static unsigned check_once(Megpu *m, uint32_t n, uint32_t batch,
                           bool expect_ok)
{
    g_autofree Note *r = g_new(Note, n);
    g_autoptr(GHashTable) seen = g_hash_table_new(g_int64_hash,
                                                  g_int64_equal);
    g_autofree gint64 *keys = g_new(gint64, n);
    unsigned bad = 0, run = 0;

    results_read(m, n, r);
    for (uint32_t t = 0; t < n; t++) {
        if (r[t].done != 1 || r[t].elem != 1 || r[t].status) {
            if (expect_ok) {
                g_test_message("task %u: done %u elem %u status %u by 0x%x",
                               t, r[t].done, r[t].elem, r[t].status,
                               r[t].by);
            }
            bad++;
            continue;
        }
        if (!expect_ok) {
            continue;
        }
        g_assert_true(MEGPU_TQ_OWNER_IS_ENGINE(r[t].by));
        keys[t] = (gint64)r[t].by << 32 | r[t].batch;
        if (t && keys[t] == keys[t - 1]) {
            run++;
            g_assert_cmpuint(run, <=, batch);
            continue;
        }
        /* a new run: its batch must not have appeared before */
        g_assert_false(g_hash_table_contains(seen, &keys[t]));
        g_hash_table_add(seen, &keys[t]);
        run = 1;
    }
    return bad;
}

/* Engines of a kind that runs INCREMENT: gfx and compute. */
static const unsigned incr_engines[] = { 0, 1, 4, 5 };

/*
 * Four engines, each with its own home queue, all tasks in queue 0 and
 * some in queue 2: the others must steal. Every task runs exactly once.
 * Returns the tasks not run exactly once.
 */
static unsigned race(const char *opts, uint32_t n, uint32_t qflags,
                     uint32_t batch, bool expect_ok)
{
    static const unsigned qs[4] = { 0, 1, 2, 3 };
    Megpu m;
    uint32_t tasks = 0, steals = 0;
    unsigned bad;

    megpu_start_engines_opts(&m, 8, opts);
    results_clear(&m, n);
    for (unsigned q = 0; q < 4; q++) {
        q_init(&m, q, 4096, qflags, batch);
    }
    q_push(&m, 0, 0, n - n / 4, NULL);
    q_push(&m, 2, n - n / 4, n / 4, NULL);
    for (unsigned q = 0; q < 4; q++) {
        q_close(&m, q);
    }
    for (unsigned i = 0; i < ARRAY_SIZE(incr_engines); i++) {
        emit_dequeue(&m, incr_engines[i], qs, 4, i, MEGPU_DEQ_STEAL);
    }
    for (unsigned i = 0; i < ARRAY_SIZE(incr_engines); i++) {
        kick(&m, incr_engines[i]);
    }
    for (unsigned i = 0; i < ARRAY_SIZE(incr_engines); i++) {
        unsigned e = incr_engines[i];

        eng_idle(&m, e);
        tasks += erd(&m, e, MEGPU_ENG_TASKQ_TASKS);
        steals += erd(&m, e, MEGPU_ENG_TASKQ_STEALS);
        g_assert_cmpuint(erd(&m, e, MEGPU_ENG_TASKQ_STATE), ==,
                         MEGPU_TQ_STATE_IDLE);
    }
    bad = check_once(&m, n, batch, expect_ok);
    if (expect_ok) {
        uint32_t done = 0, gpu_batches = 0;

        g_assert_cmpuint(tasks, ==, n);
        g_assert_cmpuint(rd(&m, MEGPU_REG_TASKQ_TASKS), ==, n);
        g_assert_cmpuint(rd(&m, MEGPU_REG_TASKQ_STEALS), ==, steals);
        /* engines 1, 4, 5 have empty home queues: they only steal */
        g_assert_cmpuint(steals, >, 0);
        for (unsigned q = 0; q < 4; q++) {
            g_assert_cmpuint(q_rd(&m, q, MEGPU_TQ_HDR_LOCK), ==, 0);
            g_assert_cmpuint(q_rd(&m, q, MEGPU_TQ_HDR_HEAD), ==,
                             q_rd(&m, q, MEGPU_TQ_HDR_TAIL));
            done += q_rd(&m, q, MEGPU_TQ_HDR_DONE);
            gpu_batches += q_rd(&m, q, MEGPU_TQ_HDR_GPU_BATCHES);
            g_assert_cmpuint(q_rd(&m, q, MEGPU_TQ_HDR_WAITERS), ==, 0);
        }
        g_assert_cmpuint(done, ==, n);
        g_assert_cmpuint(gpu_batches, ==, rd(&m, MEGPU_REG_TASKQ_BATCHES));
        g_test_message("%u tasks, %u batches, %u stolen, %u lock retries, "
                       "%u event sleeps", n, gpu_batches, steals,
                       rd(&m, MEGPU_REG_TASKQ_LOCK_RETRIES),
                       rd(&m, MEGPU_REG_TASKQ_EVENT_WAITS));
    }
    megpu_stop_engines(&m);
    return bad;
}

static void test_exactly_once(void)
{
    g_assert_cmpuint(race("write-mode=strict", 4000, 0, 8, true), ==, 0);
}

/* Relaxed writes: results are flushed before the notifications. */
static void test_exactly_once_relaxed(void)
{
    g_assert_cmpuint(race("write-mode=relaxed", 2000, 0, 16, true), ==, 0);
}

static void test_exactly_once_event(void)
{
    g_assert_cmpuint(race("write-mode=strict", 4000, MEGPU_TQ_F_EVENT, 4,
                          true), ==, 0);
}

/*
 * The negative control: with the lock taken by read-pause-write, two
 * engines own a queue at once and a task runs twice (or gets lost); the
 * same check must see it.
 */
static void test_nonatomic_caught(void)
{
    unsigned bad = race("write-mode=strict,x-taskq-nonatomic=on", 2000, 0, 1,
                        false);

    g_test_message("x-taskq-nonatomic: %u of 2000 tasks not run exactly once",
                   bad);
    g_assert_cmpuint(bad, >, 0);
}

static void test_caps(void)
{
    Megpu m;

    megpu_start(&m, 4);
    g_assert_cmphex(rd(&m, MEGPU_REG_CAPS) & MEGPU_CAP_TASKQ, !=, 0);
    megpu_stop(&m);
}

/* Affinity with one engine, relaxed preferences and STRICT. */
static void test_affinity(void)
{
    static const TaskSpec mix[] = {
        { MEGPU_KERNEL_INCREMENT, MEGPU_KERNEL_INCREMENT, MEGPU_TQ_AFF_ANY },
        { MEGPU_KERNEL_INCREMENT, MEGPU_KERNEL_INCREMENT,
          MEGPU_TQ_AFF_PREFER_GPU },
        { MEGPU_KERNEL_INCREMENT, MEGPU_KERNEL_INCREMENT,
          MEGPU_TQ_AFF_PREFER_CPU },
        { MEGPU_TQ_NONE, MEGPU_KERNEL_INCREMENT, MEGPU_TQ_AFF_REQUIRE_GPU },
        { MEGPU_KERNEL_INCREMENT, MEGPU_KERNEL_INCREMENT,
          MEGPU_TQ_AFF_REQUIRE_CPU },
        { MEGPU_KERNEL_INCREMENT, MEGPU_KERNEL_INCREMENT, MEGPU_TQ_AFF_ANY },
    };
    static const unsigned q0[] = { 0 };
    Note r[6];
    Megpu m;

    megpu_start_engines(&m, 4);

    /* relaxed: everything up to the REQUIRE_CPU task, as one batch */
    results_clear(&m, 6);
    q_init(&m, 0, 16, 0, 16);
    q_push(&m, 0, 0, 6, mix);
    dequeue_run(&m, 0, q0, 1, 0, MEGPU_DEQ_ONCE);
    results_read(&m, 6, r);
    for (unsigned t = 0; t < 6; t++) {
        g_assert_cmpuint(r[t].done, ==, t < 4);
        g_assert_cmpuint(r[t].elem, ==, t < 4);
    }
    g_assert_cmpuint(r[0].batch, ==, r[3].batch);
    g_assert_cmpuint(q_rd(&m, 0, MEGPU_TQ_HDR_HEAD), ==, 4);
    g_assert_cmpuint(q_rd(&m, 0, MEGPU_TQ_HDR_GPU_BATCHES), ==, 1);
    g_assert_cmpuint(q_rd(&m, 0, MEGPU_TQ_HDR_NONE_ELIGIBLE), ==, 1);

    /* the video engine cannot run INCREMENT: nothing for it */
    dequeue_run(&m, 3, q0, 1, 0, MEGPU_DEQ_ONCE);
    g_assert_cmpuint(q_rd(&m, 0, MEGPU_TQ_HDR_HEAD), ==, 4);
    g_assert_cmpuint(erd(&m, 3, MEGPU_ENG_TASKQ_TASKS), ==, 0);

    /* a CPU takes the REQUIRE_CPU task; then the GPU goes on */
    q_wr(&m, 0, MEGPU_TQ_HDR_HEAD, 5);
    dequeue_run(&m, 0, q0, 1, 0, MEGPU_DEQ_ONCE);
    results_read(&m, 6, r);
    g_assert_cmpuint(r[4].done, ==, 0);
    g_assert_cmpuint(r[5].done, ==, 1);

    /* STRICT: PREFER_CPU is left to the CPU as well */
    results_clear(&m, 6);
    q_init(&m, 0, 16, MEGPU_TQ_F_STRICT, 16);
    q_push(&m, 0, 0, 6, mix);
    dequeue_run(&m, 0, q0, 1, 0, MEGPU_DEQ_ONCE);
    results_read(&m, 6, r);
    for (unsigned t = 0; t < 6; t++) {
        g_assert_cmpuint(r[t].done, ==, t < 2);
    }
    g_assert_cmpuint(q_rd(&m, 0, MEGPU_TQ_HDR_HEAD), ==, 2);
    megpu_stop_engines(&m);
}

/*
 * FIG. 5: nothing eligible -> end, without the lock. A CPU holds the
 * lock word of a queue of REQUIRE_CPU tasks: the engine still returns at
 * once and the word keeps the CPU's value. With an eligible task the
 * engine must wait for the lock instead, and goes on at its release.
 */
/*
 * Hints are advice: an engine takes HINT_CPU tasks even from a STRICT
 * queue, but each only in a batch of its own; HINT_GPU batches like ANY.
 */
static void test_hints(void)
{
    static const TaskSpec mix[] = {
        { MEGPU_KERNEL_INCREMENT, MEGPU_KERNEL_INCREMENT,
          MEGPU_TQ_AFF_HINT_GPU },
        { MEGPU_KERNEL_INCREMENT, MEGPU_KERNEL_INCREMENT,
          MEGPU_TQ_AFF_HINT_GPU },
        { MEGPU_KERNEL_INCREMENT, MEGPU_KERNEL_INCREMENT,
          MEGPU_TQ_AFF_HINT_CPU },
        { MEGPU_KERNEL_INCREMENT, MEGPU_KERNEL_INCREMENT,
          MEGPU_TQ_AFF_HINT_CPU },
        { MEGPU_KERNEL_INCREMENT, MEGPU_KERNEL_INCREMENT, MEGPU_TQ_AFF_ANY },
        { MEGPU_KERNEL_INCREMENT, MEGPU_KERNEL_INCREMENT, MEGPU_TQ_AFF_ANY },
    };
    /* the batch each task is in: 1, 1, 2, 3, 4, 4 (counted per engine) */
    static const uint32_t batch[] = { 0, 0, 1, 2, 3, 3 };
    static const unsigned q0[] = { 0 };
    Note r[6];
    Megpu m;

    megpu_start_engines(&m, 4);
    for (uint32_t strict = 0; strict <= 1; strict++) {
        uint32_t base;

        results_clear(&m, 6);
        q_init(&m, 0, 16, strict ? MEGPU_TQ_F_STRICT : 0, 16);
        q_push(&m, 0, 0, 6, mix);
        dequeue_run(&m, 0, q0, 1, 0, MEGPU_DEQ_ONCE);
        results_read(&m, 6, r);
        base = r[0].batch;
        for (unsigned t = 0; t < 6; t++) {
            g_assert_cmpuint(r[t].done, ==, 1);
            g_assert_cmpuint(r[t].elem, ==, 1);
            g_assert_cmphex(r[t].by, ==, MEGPU_TQ_OWNER_ENGINE(0));
            g_assert_cmpuint(r[t].batch - base, ==, batch[t]);
        }
        g_assert_cmpuint(q_rd(&m, 0, MEGPU_TQ_HDR_GPU_BATCHES), ==, 4);
    }
    megpu_stop_engines(&m);
}

static void test_none_eligible(void)
{
    static const TaskSpec cpu_only[] = {
        { MEGPU_KERNEL_INCREMENT, MEGPU_KERNEL_INCREMENT,
          MEGPU_TQ_AFF_REQUIRE_CPU },
        { MEGPU_KERNEL_INCREMENT, MEGPU_KERNEL_INCREMENT,
          MEGPU_TQ_AFF_REQUIRE_CPU },
    };
    static const unsigned q0[] = { 0 };
    Note r[3];
    Megpu m;

    megpu_start_engines(&m, 4);
    results_clear(&m, 3);
    q_init(&m, 0, 16, 0, 0);
    q_push(&m, 0, 0, 2, cpu_only);
    q_wr(&m, 0, MEGPU_TQ_HDR_LOCK, CPU_OWNER);
    dequeue_run(&m, 0, q0, 1, 0, MEGPU_DEQ_ONCE);
    g_assert_cmphex(q_rd(&m, 0, MEGPU_TQ_HDR_LOCK), ==, CPU_OWNER);
    g_assert_cmpuint(q_rd(&m, 0, MEGPU_TQ_HDR_LOCK_RETRIES), ==, 0);
    g_assert_cmpuint(q_rd(&m, 0, MEGPU_TQ_HDR_HEAD), ==, 0);
    g_assert_cmpuint(q_rd(&m, 0, MEGPU_TQ_HDR_NONE_ELIGIBLE), ==, 1);
    g_assert_cmpuint(rd(&m, MEGPU_REG_TASKQ_LOCK_RETRIES), ==, 0);

    /* without ONCE and with the queue open, it waits for work */
    emit_dequeue(&m, 0, q0, 1, 0, 0);
    kick(&m, 0);
    tq_state_wait(&m, 0, MEGPU_TQ_STATE_WAITING);
    /* an eligible task arrives while the CPU holds the lock */
    q_wr(&m, 0, MEGPU_TQ_HDR_HEAD, 2);      /* the CPU took its tasks */
    q_push(&m, 0, 2, 1, NULL);
    tq_state_wait(&m, 0, MEGPU_TQ_STATE_LOCKING);
    g_usleep(20 * 1000);
    results_read(&m, 3, r);
    g_assert_cmpuint(r[2].done, ==, 0);
    g_assert_cmpuint(q_rd(&m, 0, MEGPU_TQ_HDR_LOCK_RETRIES), >, 0);
    q_close(&m, 0);
    q_wr(&m, 0, MEGPU_TQ_HDR_LOCK, 0);      /* the CPU releases */
    eng_idle(&m, 0);
    results_read(&m, 3, r);
    g_assert_cmpuint(r[2].done, ==, 1);
    g_assert_cmpuint(r[2].elem, ==, 1);
    g_assert_cmpuint(q_rd(&m, 0, MEGPU_TQ_HDR_LOCK), ==, 0);
    megpu_stop_engines(&m);
}

/* QEMU's CPU time so far, user and system (ms; /proc, 10 ms ticks) */
static uint64_t qemu_cpu_ms(Megpu *m)
{
    g_autofree char *path = g_strdup_printf("/proc/%d/stat",
                                            (int)qtest_pid(m->qts));
    g_autofree char *text = NULL;
    unsigned long long ut = 0, st = 0;
    const char *p = NULL;

    if (g_file_get_contents(path, &text, NULL, NULL)) {
        p = strrchr(text, ')');     /* the name may hold spaces */
    }
    g_assert_nonnull(p);
    /* fields 14 and 15, utime and stime: the 12th and 13th after ")" */
    g_assert_cmpint(sscanf(p + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u "
                           "%*u %*u %llu %llu", &ut, &st), ==, 2);
    return (ut + st) * 1000 / sysconf(_SC_CLK_TCK);
}

/*
 * A DEQUEUE that waits looks at its queues every millisecond; a closed
 * queue whose tasks this engine may not take (REQUIRE_CPU) but that is
 * not empty keeps it waiting. Such a queue's indexes did not move, so
 * the look must not read its descriptors again: four of 8192 tasks each
 * ahead of an open, empty queue once kept a host core busy for as long
 * as the job ran. Then the CPU takes the tasks (HEAD moves), the open
 * queue closes, and the engine ends.
 */
static void test_waiting_closed_queues_cost_nothing(void)
{
    enum { NQ = 5, SLOTS = 8192 };
    static const TaskSpec cpu_only = {
        MEGPU_KERNEL_INCREMENT, MEGPU_KERNEL_INCREMENT,
        MEGPU_TQ_AFF_REQUIRE_CPU,
    };
    static const unsigned qs[NQ] = { 0, 1, 2, 3, 4 };
    g_autofree uint8_t *descs = g_malloc0(SLOTS * MEGPU_TQ_DESC_SIZE);
    uint64_t cpu0, cpu;
    gint64 t0, wall;
    Megpu m;

    for (unsigned i = 0; i < SLOTS; i++) {
        desc_fill(descs + i * MEGPU_TQ_DESC_SIZE, &cpu_only, KARGS_PA,
                  MEGPU_KARGS_SIZE, 1, 1, NOTE_PA);
    }
    megpu_start_engines(&m, 1);
    for (unsigned q = 0; q < NQ - 1; q++) {
        q_init(&m, q, SLOTS, MEGPU_TQ_F_CLOSED, 16);
        qtest_memwrite(m.qts, Q_PA(q) + MEGPU_TQ_HDR_BYTES, descs,
                       SLOTS * MEGPU_TQ_DESC_SIZE);
        q_wr(&m, q, MEGPU_TQ_HDR_TAIL, SLOTS);
    }
    q_init(&m, NQ - 1, 16, 0, 16);
    emit_dequeue(&m, 0, qs, NQ, 0, MEGPU_DEQ_STEAL);
    kick(&m, 0);
    tq_state_wait(&m, 0, MEGPU_TQ_STATE_WAITING);

    cpu0 = qemu_cpu_ms(&m);
    t0 = g_get_monotonic_time();
    g_usleep(1000 * 1000);
    cpu = qemu_cpu_ms(&m) - cpu0;
    wall = (g_get_monotonic_time() - t0) / 1000;
    tq_state_wait(&m, 0, MEGPU_TQ_STATE_WAITING);   /* still waiting */
    /* a look of five queue headers a millisecond, not 32K descriptors */
    g_assert_cmpuint(cpu, <, wall / 4);

    for (unsigned q = 0; q < NQ - 1; q++) {
        q_wr(&m, q, MEGPU_TQ_HDR_HEAD, SLOTS);
        q_wr(&m, q, MEGPU_TQ_HDR_DONE, SLOTS);
    }
    q_close(&m, NQ - 1);
    eng_idle(&m, 0);
    megpu_stop_engines(&m);
}

/*
 * An engine's DEQUEUE sees the engine's own queued writes to the queue's
 * words, as every read of an engine does (megpu-hw.rst). Writes held:
 * RAM says the queue is empty (TAIL 0), and the engine's WRITE_DATA of
 * TAIL 2 waits in its queue when its DEQUEUE (ONCE) looks; the two
 * tasks must run. Read from RAM only, DEQUEUE found nothing and ended.
 */
static void test_own_queued_tail(void)
{
    static const unsigned q0[] = { 0 };
    const uint32_t tail = 2;
    Note r[2];
    Megpu m;

    megpu_start_engines_opts(&m, 1, HOLD);
    results_clear(&m, 2);
    q_init(&m, 0, 16, 0, 0);
    q_push(&m, 0, 0, 2, NULL);
    q_wr(&m, 0, MEGPU_TQ_HDR_TAIL, 0);
    emit_write(&m.ring[0], Q_PA(0) + MEGPU_TQ_HDR_TAIL, &tail, 1);
    emit_dequeue(&m, 0, q0, 1, 0, MEGPU_DEQ_ONCE);
    kick(&m, 0);
    /* held writes move with virtual time only: the batch's flush too */
    for (unsigned i = 0; !(erd(&m, 0, MEGPU_ENG_STATUS) &
                           (MEGPU_ENG_STATUS_IDLE |
                            MEGPU_ENG_STATUS_FAULTED)); i++) {
        g_assert_cmpuint(i, <, 100000);
        qtest_clock_step(m.qts, 10 * TICK_NS);
    }
    eng_idle(&m, 0);
    hold_flush(&m);
    results_read(&m, 2, r);
    for (unsigned t = 0; t < 2; t++) {
        g_assert_cmpuint(r[t].done, ==, 1);
        g_assert_cmpuint(r[t].elem, ==, 1);
    }
    g_assert_cmpuint(q_rd(&m, 0, MEGPU_TQ_HDR_HEAD), ==, 2);
    g_assert_cmpuint(q_rd(&m, 0, MEGPU_TQ_HDR_TAIL), ==, 2);
    megpu_stop_engines(&m);
}

/* Stealing is what the STEAL flag allows, from any queue in the list. */
static void test_steal(void)
{
    static const unsigned qs[] = { 1, 0 };   /* home: queue 1 */
    Megpu m;
    Note r[40];

    megpu_start_engines(&m, 4);
    results_clear(&m, 40);
    q_init(&m, 0, 64, 0, 8);
    q_init(&m, 1, 64, MEGPU_TQ_F_CLOSED, 8);
    q_push(&m, 0, 0, 40, NULL);
    q_close(&m, 0);

    /* without STEAL, only the (empty, closed) home queue: done at once */
    dequeue_run(&m, 1, qs, 2, 0, 0);
    g_assert_cmpuint(q_rd(&m, 0, MEGPU_TQ_HDR_HEAD), ==, 0);

    dequeue_run(&m, 1, qs, 2, 0, MEGPU_DEQ_STEAL);
    results_read(&m, 40, r);
    for (unsigned t = 0; t < 40; t++) {
        g_assert_cmpuint(r[t].done, ==, 1);
        g_assert_cmphex(r[t].by, ==, MEGPU_TQ_OWNER_ENGINE(1));
    }
    g_assert_cmpuint(erd(&m, 1, MEGPU_ENG_TASKQ_BATCHES), ==, 5);
    g_assert_cmpuint(erd(&m, 1, MEGPU_ENG_TASKQ_STEALS), ==, 5);
    g_assert_cmpuint(q_rd(&m, 0, MEGPU_TQ_HDR_GPU_STEALS), ==, 5);
    g_assert_cmpuint(q_rd(&m, 1, MEGPU_TQ_HDR_GPU_BATCHES), ==, 0);
    megpu_stop_engines(&m);
}

/*
 * GUIDED: each batch at most half of what the queue holds (at least one):
 * 40 tasks with a batch of 16 go as 16, 12, 6, 3, 1, 1, 1, each batch
 * consecutive; without GUIDED as 16, 16, 8.
 */
static void test_guided(void)
{
    static const unsigned qs[] = { 0 };
    static const uint32_t want[] = { 16, 12, 6, 3, 1, 1, 1 };
    Megpu m;
    Note r[40];
    uint32_t t = 0;

    megpu_start_engines(&m, 1);
    results_clear(&m, 40);
    q_init(&m, 0, 64, MEGPU_TQ_F_GUIDED, 16);
    q_push(&m, 0, 0, 40, NULL);
    q_close(&m, 0);
    dequeue_run(&m, 0, qs, 1, 0, 0);
    results_read(&m, 40, r);
    for (unsigned b = 0; b < ARRAY_SIZE(want); b++) {
        for (uint32_t i = 0; i < want[b]; i++, t++) {
            g_assert_cmpuint(r[t].done, ==, 1);
            g_assert_cmpuint(r[t].batch, ==, r[t - i].batch);
        }
        g_assert_true(t == 40 || r[t].batch != r[t - 1].batch);
    }
    g_assert_cmpuint(t, ==, 40);
    g_assert_cmpuint(q_rd(&m, 0, MEGPU_TQ_HDR_GPU_BATCHES), ==,
                     ARRAY_SIZE(want));

    /* the same queue without GUIDED: full batches */
    results_clear(&m, 40);
    q_init(&m, 0, 64, 0, 16);
    q_push(&m, 0, 0, 40, NULL);
    q_close(&m, 0);
    dequeue_run(&m, 0, qs, 1, 0, 0);
    g_assert_cmpuint(q_rd(&m, 0, MEGPU_TQ_HDR_GPU_BATCHES), ==, 3);
    megpu_stop_engines(&m);
}

/*
 * EVENT mode: an engine that finds the lock taken sleeps, counted in
 * WAITERS; the CPU's release plus TASKQ_NOTIFY lets it go on.
 */
/*
 * @n tasks in closed queue 0 (@qflags), its lock word held by a CPU
 * thread, and engine 0 started on a DEQUEUE of it.
 */
static void dequeue_behind_cpu(Megpu *m, uint32_t qflags, uint32_t n)
{
    static const unsigned q0[] = { 0 };

    results_clear(m, n);
    q_init(m, 0, 16, qflags, 0);
    q_push(m, 0, 0, n, NULL);
    q_close(m, 0);
    q_wr(m, 0, MEGPU_TQ_HDR_LOCK, CPU_OWNER);
    emit_dequeue(m, 0, q0, 1, 0, 0);
    kick(m, 0);
}

/*
 * EVENT mode: the engine sleeps on a lock a CPU holds and gets in when
 * the CPU's release notifies it. Returns the queue's EVENT_POLLED: the
 * takes the safety poll let in (0 when the notification did its work).
 */
static uint32_t event_mode(const char *opts)
{
    uint32_t waits, polled;
    Megpu m;
    Note r[4];

    megpu_start_engines_opts(&m, 4, opts);
    dequeue_behind_cpu(&m, MEGPU_TQ_F_EVENT, 4);
    for (unsigned us = 0; !rd(&m, MEGPU_REG_TASKQ_EVENT_WAITS); us += 1000) {
        g_assert_cmpuint(us, <, POLL_TIMEOUT_US);
        g_usleep(1000);
    }
    g_assert_cmpuint(erd(&m, 0, MEGPU_ENG_TASKQ_STATE), ==,
                     MEGPU_TQ_STATE_LOCKING);
    g_usleep(20 * 1000);
    waits = rd(&m, MEGPU_REG_TASKQ_EVENT_WAITS);
    results_read(&m, 4, r);
    g_assert_cmpuint(r[0].done, ==, 0);

    /* release as a CPU does in EVENT mode: 0, then notify if waiters */
    q_wr(&m, 0, MEGPU_TQ_HDR_LOCK, 0);
    g_assert_cmpuint(q_rd(&m, 0, MEGPU_TQ_HDR_WAITERS), <=, 1);
    wr(&m, MEGPU_REG_TASKQ_NOTIFY, 1);
    eng_idle(&m, 0);
    g_assert_cmpuint(rd(&m, MEGPU_REG_TASKQ_NOTIFY), ==, 1);
    g_assert_cmpuint(rd(&m, MEGPU_REG_TASKQ_EVENT_WAITS), >=, waits);
    g_assert_cmpuint(q_rd(&m, 0, MEGPU_TQ_HDR_WAITERS), ==, 0);
    g_assert_cmpuint(q_rd(&m, 0, MEGPU_TQ_HDR_EVENT_SLEEPS), >=, 1);
    results_read(&m, 4, r);
    for (unsigned t = 0; t < 4; t++) {
        g_assert_cmpuint(r[t].done, ==, 1);
    }
    polled = q_rd(&m, 0, MEGPU_TQ_HDR_EVENT_POLLED);
    megpu_stop_engines(&m);
    return polled;
}

static void test_event_mode(void)
{
    g_assert_cmpuint(event_mode("write-mode=strict"), ==, 0);
}

/*
 * The negative control: with every notification dropped the engine gets
 * in only by its safety poll, and EVENT_POLLED, the count the guest's
 * event-mode tests assert on, shows it.
 */
static void test_event_mode_no_notify(void)
{
    g_assert_cmpuint(event_mode("write-mode=strict,x-taskq-no-notify=on"),
                     >=, 1);
}

/*
 * An engine's release of an EVENT queue on which CPU threads sleep (in
 * the driver, CPU_WAITERS) interrupts, so the driver can wake them; with
 * no CPU sleeper, or notifications off, it does not.
 */
static void test_event_release_irq(void)
{
    static const unsigned q0[] = { 0 };
    static const struct {
        const char *opts;
        uint32_t cpus;
        uint32_t irq;           /* MISC_IRQ_STATUS bits expected */
    } cases[] = {
        { "write-mode=strict", 1, MEGPU_MISC_IRQ_TASKQ_RELEASE },
        { "write-mode=strict", 0, 0 },
        { "write-mode=strict,x-taskq-no-notify=on", 1, 0 },
    };

    for (unsigned c = 0; c < ARRAY_SIZE(cases); c++) {
        Megpu m;

        megpu_start_engines_opts(&m, 4, cases[c].opts);
        results_clear(&m, 2);
        q_init(&m, 0, 16, MEGPU_TQ_F_EVENT, 0);
        q_push(&m, 0, 0, 2, NULL);
        q_close(&m, 0);
        /* as a CPU thread that went to sleep in the driver leaves them */
        q_wr(&m, 0, MEGPU_TQ_HDR_WAITERS, 1);
        q_wr(&m, 0, MEGPU_TQ_HDR_CPU_WAITERS, cases[c].cpus);
        wr(&m, MEGPU_REG_MISC_IRQ_STATUS, ~0u);
        dequeue_run(&m, 0, q0, 1, 0, MEGPU_DEQ_ONCE);
        g_assert_cmphex(rd(&m, MEGPU_REG_MISC_IRQ_STATUS) &
                        MEGPU_MISC_IRQ_TASKQ_RELEASE, ==, cases[c].irq);
        megpu_stop_engines(&m);
    }
}

/*
 * A lock word a CPU thread holds for long: the engine backs off to
 * sleeping between tries instead of spinning (at most 64 yields, then
 * one try per poll millisecond), and takes the queue once it is free.
 * Before, it retried as fast as the host let it until the job timeout.
 */
static void test_lock_held_backs_off(void)
{
    uint32_t retries;
    Megpu m;
    Note r[2];

    megpu_start_engines(&m, 4);
    dequeue_behind_cpu(&m, 0, 2);
    g_usleep(300 * 1000);
    retries = q_rd(&m, 0, MEGPU_TQ_HDR_LOCK_RETRIES);
    g_assert_cmpuint(retries, >, 0);
    /* 300 ms at one try a millisecond, with room for a slow host */
    g_assert_cmpuint(retries, <, 64 + 600);
    g_assert_cmpuint(erd(&m, 0, MEGPU_ENG_TASKQ_STATE), ==,
                     MEGPU_TQ_STATE_LOCKING);
    q_wr(&m, 0, MEGPU_TQ_HDR_LOCK, 0);
    eng_idle(&m, 0);
    results_read(&m, 2, r);
    g_assert_cmpuint(r[0].done, ==, 1);
    g_assert_cmpuint(r[1].done, ==, 1);
    megpu_stop_engines(&m);
}

/* F14: a task gated on an event is not taken until the event happened. */
static void test_event_gate(void)
{
    static const unsigned q0[] = { 0 };
    TaskSpec gated[2] = {
        { MEGPU_KERNEL_INCREMENT, MEGPU_KERNEL_INCREMENT, MEGPU_TQ_AFF_ANY,
          EVENT_PA, 5 },
        { MEGPU_KERNEL_INCREMENT, MEGPU_KERNEL_INCREMENT, MEGPU_TQ_AFF_ANY },
    };
    Megpu m;
    Note r[2];

    megpu_start_engines(&m, 4);
    results_clear(&m, 2);
    qtest_writeq(m.qts, EVENT_PA, 4);
    q_init(&m, 0, 16, 0, 0);
    q_push(&m, 0, 0, 2, gated);
    q_close(&m, 0);
    dequeue_run(&m, 0, q0, 1, 0, MEGPU_DEQ_ONCE);
    results_read(&m, 2, r);
    g_assert_cmpuint(r[0].done, ==, 0);
    g_assert_cmpuint(r[1].done, ==, 0);     /* behind it, FIFO */

    /* closed, but the gated task may still come: the engine waits */
    emit_dequeue(&m, 0, q0, 1, 0, 0);
    kick(&m, 0);
    tq_state_wait(&m, 0, MEGPU_TQ_STATE_WAITING);
    g_usleep(20 * 1000);
    /*
     * And it stays there: it looks at the queue again every poll period
     * (LOOKING for a moment, longer on a slow host such as TSan's), then
     * waits again; it never leaves the DEQUEUE.
     */
    g_assert_cmpuint(erd(&m, 0, MEGPU_ENG_TASKQ_STATE), !=,
                     MEGPU_TQ_STATE_IDLE);
    tq_state_wait(&m, 0, MEGPU_TQ_STATE_WAITING);
    results_read(&m, 2, r);
    g_assert_cmpuint(r[0].done, ==, 0);
    qtest_writeq(m.qts, EVENT_PA, 5);
    wr(&m, MEGPU_REG_TASKQ_NOTIFY, 0);
    eng_idle(&m, 0);
    results_read(&m, 2, r);
    g_assert_cmpuint(r[0].done, ==, 1);
    g_assert_cmpuint(r[1].done, ==, 1);
    megpu_stop_engines(&m);
}

/*
 * Task @t of queue 0 runs the wave program at @prog (@len instructions)
 * on @grid work-items with user arguments @user: a user's program as a
 * task (GPU side only), arguments in a program-arguments block.
 */
static void q_push_program(Megpu *m, uint32_t t, uint64_t prog, uint32_t len,
                           const uint64_t *user, unsigned nuser,
                           uint32_t grid)
{
    uint32_t slots = q_rd(m, 0, MEGPU_TQ_HDR_SIZE);
    uint32_t tail = q_rd(m, 0, MEGPU_TQ_HDR_TAIL);
    uint64_t pargs = PARGS_PA + 0x1000ull * t;
    static const TaskSpec program = {
        MEGPU_TQ_NONE, MEGPU_KERNEL_PROGRAM, MEGPU_TQ_AFF_ANY,
    };
    uint8_t d[MEGPU_TQ_DESC_SIZE];

    qtest_memset(m->qts, pargs, 0, MEGPU_PARGS_SIZE);
    qtest_writeq(m->qts, pargs + MEGPU_PARGS_PROGRAM, prog);
    qtest_writel(m->qts, pargs + MEGPU_PARGS_LENGTH, len);
    for (unsigned i = 0; i < nuser; i++) {
        qtest_writeq(m->qts, pargs + MEGPU_PARGS_USER + 8 * i, user[i]);
    }
    desc_fill(d, &program, pargs, MEGPU_PARGS_SIZE, grid, 16,
              NOTE_PA + MEGPU_TQ_NOTE_SIZE * t);
    qtest_memwrite(m->qts, Q_PA(0) + MEGPU_TQ_HDR_BYTES +
                   (uint64_t)(tail & (slots - 1)) * MEGPU_TQ_DESC_SIZE,
                   d, sizeof(d));
    q_wr(m, 0, MEGPU_TQ_HDR_TAIL, tail + 1);
}

/*
 * Tasks that carry a user's wave program (issue 22 item 6, the GPU
 * side): VADD as a program in two tasks gives what plain C gives, and a
 * program that faults (a load from no memory) ends its own task,
 * notified with the fault's code, while the batch and the engine go on.
 */
static void test_program_tasks(void)
{
    static const unsigned q0[] = { 0 };
    static const uint64_t bad_prog[] = {
        I(LDARG, 1, 0, 0, 0),
        I(LD32, 2, 1, 0, 0),
        I(END, 0, 0, 0, 0),
    };
    enum { N = 40 };
    uint64_t a = VEC_PA, b = VEC_PA + 0x10000, c[2] = {
        VEC_PA + 0x20000, VEC_PA + 0x30000,
    };
    uint64_t user[2][4], bad_user[1] = { NO_RAM_PA };
    Megpu m;
    Note r[3];

    megpu_start_engines(&m, 4);
    results_clear(&m, 3);
    for (uint32_t i = 0; i < N; i++) {
        qtest_writel(m.qts, a + 4 * i, 3 * i + 1);
        qtest_writel(m.qts, b + 4 * i, 1000 - i);
    }
    qtest_memset(m.qts, c[0], 0, 4 * N);
    qtest_memset(m.qts, c[1], 0, 4 * N);
    for (unsigned k = 0; k < ARRAY_SIZE(vadd_prog); k++) {
        qtest_writeq(m.qts, PROG_PA + 8 * k, vadd_prog[k]);
    }
    for (unsigned k = 0; k < ARRAY_SIZE(bad_prog); k++) {
        qtest_writeq(m.qts, PROG_PA + 0x1000 + 8 * k, bad_prog[k]);
    }
    q_init(&m, 0, 16, 0, 0);
    for (unsigned t = 0; t < 2; t++) {
        user[t][0] = a;
        user[t][1] = b;
        user[t][2] = c[t];
        user[t][3] = N;
    }
    q_push_program(&m, 0, PROG_PA, ARRAY_SIZE(vadd_prog), user[0], 4, N);
    q_push_program(&m, 1, PROG_PA + 0x1000, ARRAY_SIZE(bad_prog), bad_user,
                   1, 16);
    q_push_program(&m, 2, PROG_PA, ARRAY_SIZE(vadd_prog), user[1], 4, N);
    q_close(&m, 0);
    dequeue_run(&m, 0, q0, 1, 0, MEGPU_DEQ_ONCE);
    results_read(&m, 3, r);
    for (unsigned t = 0; t < 3; t++) {
        g_assert_cmpuint(r[t].done, ==, 1);
        g_assert_cmphex(r[t].by, ==, MEGPU_TQ_OWNER_ENGINE(0));
    }
    g_assert_cmpuint(r[0].status, ==, 0);
    g_assert_cmpuint(r[1].status, !=, 0);
    g_assert_cmpuint(r[2].status, ==, 0);
    for (uint32_t i = 0; i < N; i++) {
        uint32_t want = (3 * i + 1) + (1000 - i);

        g_assert_cmpuint(qtest_readl(m.qts, c[0] + 4 * i), ==, want);
        g_assert_cmpuint(qtest_readl(m.qts, c[1] + 4 * i), ==, want);
    }
    g_assert_cmpuint(erd(&m, 0, MEGPU_ENG_FAULTS), ==, 0);
    g_assert_cmpuint(q_rd(&m, 0, MEGPU_TQ_HDR_DONE), ==, 3);
    megpu_stop_engines(&m);
}

/* Malformed packets, queues and descriptors fault the engine, cleanly. */
static void test_malformed(void)
{
    static const unsigned q0[] = { 0 };
    TaskSpec mixed[4] = {
        { MEGPU_KERNEL_INCREMENT, MEGPU_KERNEL_INCREMENT, MEGPU_TQ_AFF_ANY },
        { MEGPU_KERNEL_INCREMENT, MEGPU_KERNEL_INCREMENT, MEGPU_TQ_AFF_ANY },
        { MEGPU_KERNEL_INCREMENT, MEGPU_KERNEL_INCREMENT, 9 },
        { MEGPU_KERNEL_INCREMENT, MEGPU_KERNEL_INCREMENT, MEGPU_TQ_AFF_ANY },
    };
    Megpu m;
    Note r[4];
    uint32_t at;

    megpu_start_engines(&m, 4);

    /* packet: no queues; home out of range; unknown flags */
    at = m.ring[0].pos;
    emit_dequeue(&m, 0, q0, 0, 0, 0);
    kick(&m, 0);
    expect_fault(&m, 0, MEGPU_FAULT_BAD_ARG, RING_PA(0) + at, at, 0);
    at = m.ring[0].pos;
    emit_dequeue(&m, 0, q0, 1, 1, 0);
    kick(&m, 0);
    expect_fault(&m, 0, MEGPU_FAULT_BAD_ARG, RING_PA(0) + at, at, 0);
    at = m.ring[0].pos;
    emit_dequeue(&m, 0, q0, 1, 0, 0x80);
    kick(&m, 0);
    expect_fault(&m, 0, MEGPU_FAULT_BAD_ARG, RING_PA(0) + at, at, 0);

    /* the copy engine has no DEQUEUE */
    at = m.ring[2].pos;
    emit_dequeue(&m, 2, q0, 1, 0, 0);
    kick(&m, 2);
    expect_fault(&m, 2, MEGPU_FAULT_UNSUPPORTED, RING_PA(2) + at, at, 0);

    /* queue: bad magic, size not a power of two, misaligned, not RAM */
    q_init(&m, 0, 16, 0, 0);
    q_wr(&m, 0, MEGPU_TQ_HDR_MAGIC, 0);
    at = m.ring[0].pos;
    emit_dequeue(&m, 0, q0, 1, 0, MEGPU_DEQ_ONCE);
    kick(&m, 0);
    expect_fault(&m, 0, MEGPU_FAULT_TQ_BAD_QUEUE, Q_PA(0), at, 0);
    q_init(&m, 0, 12, 0, 0);
    at = m.ring[0].pos;
    emit_dequeue(&m, 0, q0, 1, 0, MEGPU_DEQ_ONCE);
    kick(&m, 0);
    expect_fault(&m, 0, MEGPU_FAULT_TQ_BAD_QUEUE, Q_PA(0), at, 0);
    q_init(&m, 0, 16, 0, MEGPU_TQ_MAX_BATCH + 1);
    at = m.ring[0].pos;
    emit_dequeue(&m, 0, q0, 1, 0, MEGPU_DEQ_ONCE);
    kick(&m, 0);
    expect_fault(&m, 0, MEGPU_FAULT_TQ_BAD_QUEUE, Q_PA(0), at, 0);
    qtest_writeq(m.qts, LIST_PA(0), Q_PA(0) + 8);
    at = m.ring[0].pos;
    hdr(&m.ring[0], MEGPU_PKT_DEQUEUE, MEGPU_PKT_DEQUEUE_COUNT, 0);
    put64(&m.ring[0], LIST_PA(0));
    put(&m.ring[0], 1);
    put(&m.ring[0], 0);
    put(&m.ring[0], MEGPU_DEQ_ONCE);
    kick(&m, 0);
    expect_fault(&m, 0, MEGPU_FAULT_TQ_BAD_QUEUE, Q_PA(0) + 8, at, 0);
    qtest_writeq(m.qts, LIST_PA(0), NO_RAM_PA);
    at = m.ring[0].pos;
    hdr(&m.ring[0], MEGPU_PKT_DEQUEUE, MEGPU_PKT_DEQUEUE_COUNT, 0);
    put64(&m.ring[0], LIST_PA(0));
    put(&m.ring[0], 1);
    put(&m.ring[0], 0);
    put(&m.ring[0], MEGPU_DEQ_ONCE);
    kick(&m, 0);
    expect_fault(&m, 0, MEGPU_FAULT_BUS, NO_RAM_PA, at, 0);

    /* indexes: tail more than a ring ahead of head */
    q_init(&m, 0, 16, 0, 0);
    q_wr(&m, 0, MEGPU_TQ_HDR_TAIL, 17);
    at = m.ring[0].pos;
    emit_dequeue(&m, 0, q0, 1, 0, MEGPU_DEQ_ONCE);
    kick(&m, 0);
    expect_fault(&m, 0, MEGPU_FAULT_TQ_BAD_INDEX,
                 Q_PA(0) + MEGPU_TQ_HDR_TAIL, at, 0);

    /*
     * A bad descriptor (affinity 9) third: the two before it run as a
     * batch, then it is taken alone, notified with the code, and faults;
     * the queue goes on after it.
     */
    results_clear(&m, 4);
    q_init(&m, 0, 16, 0, 0);
    q_push(&m, 0, 0, 4, mixed);
    q_close(&m, 0);
    at = m.ring[0].pos;
    emit_dequeue(&m, 0, q0, 1, 0, 0);
    kick(&m, 0);
    expect_fault(&m, 0, MEGPU_FAULT_TQ_BAD_TASK,
                 Q_PA(0) + MEGPU_TQ_HDR_BYTES + 2 * MEGPU_TQ_DESC_SIZE, at, 0);
    results_read(&m, 4, r);
    g_assert_cmpuint(r[0].done, ==, 1);
    g_assert_cmpuint(r[1].done, ==, 1);
    g_assert_cmpuint(r[2].done, ==, 1);
    g_assert_cmpuint(r[2].status, ==, MEGPU_FAULT_TQ_BAD_TASK);
    g_assert_cmpuint(r[2].elem, ==, 0);
    g_assert_cmpuint(r[3].done, ==, 0);
    g_assert_cmpuint(q_rd(&m, 0, MEGPU_TQ_HDR_LOCK), ==, 0);
    g_assert_cmpuint(q_rd(&m, 0, MEGPU_TQ_HDR_HEAD), ==, 3);
    dequeue_run(&m, 0, q0, 1, 0, 0);
    results_read(&m, 4, r);
    g_assert_cmpuint(r[3].done, ==, 1);
    g_assert_cmpuint(r[3].elem, ==, 1);

    /*
     * A task whose kernel faults (its data is not RAM): it and the rest
     * of its batch are notified with the fault, the fault is the kernel's.
     */
    results_clear(&m, 3);
    q_init(&m, 0, 16, 0, 0);
    q_push(&m, 0, 0, 3, NULL);
    qtest_writeq(m.qts, KARGS_PA + 64 + MEGPU_KARGS_PTR(0), NO_RAM_PA);
    at = m.ring[0].pos;
    emit_dequeue(&m, 0, q0, 1, 0, MEGPU_DEQ_ONCE);
    kick(&m, 0);
    expect_fault(&m, 0, MEGPU_FAULT_BUS, NO_RAM_PA, at, 0);
    results_read(&m, 3, r);
    g_assert_cmpuint(r[0].done, ==, 1);
    g_assert_cmpuint(r[0].status, ==, 0);
    g_assert_cmpuint(r[1].done, ==, 1);
    g_assert_cmpuint(r[1].status, ==, MEGPU_FAULT_BUS);
    g_assert_cmpuint(r[2].done, ==, 1);
    g_assert_cmpuint(r[2].status, ==, MEGPU_FAULT_BUS);
    g_assert_cmpuint(r[2].elem, ==, 0);
    g_assert_cmpuint(q_rd(&m, 0, MEGPU_TQ_HDR_LOCK), ==, 0);

    /* the engine is still fine */
    results_clear(&m, 1);
    q_init(&m, 0, 16, MEGPU_TQ_F_CLOSED, 0);
    q_push(&m, 0, 0, 1, NULL);
    dequeue_run(&m, 0, q0, 1, 0, 0);
    results_read(&m, 1, r);
    g_assert_cmpuint(r[0].done, ==, 1);
    megpu_stop_engines(&m);
}

/* A reset stops a DEQUEUE that waits for work. */
static void test_reset(void)
{
    static const unsigned q0[] = { 0 };
    Megpu m;

    megpu_start_engines(&m, 4);
    q_init(&m, 0, 16, 0, 0);
    emit_dequeue(&m, 0, q0, 1, 0, 0);
    kick(&m, 0);
    tq_state_wait(&m, 0, MEGPU_TQ_STATE_WAITING);
    eng_reset(&m, 0);
    g_assert_cmpuint(erd(&m, 0, MEGPU_ENG_TASKQ_STATE), ==,
                     MEGPU_TQ_STATE_IDLE);
    megpu_stop_engines(&m);
}

/*
 * An engine reset in the middle of a batch: the tasks it took are still
 * notified, exactly once, so that nobody waits for them. The batch is a
 * VADD program, a program that never ends and a VADD again, and a reset
 * comes while the second runs: in strict mode the first is done (status
 * 0, its sums in memory), the others carry TQ_RESET; in relaxed mode the
 * reset dropped what the first wrote, so all three do. The old device
 * dropped the batch: no notification, DONE 0.
 */
static void batch_reset(const char *opts, bool relaxed)
{
    static const unsigned q0[] = { 0 };
    static const uint64_t spin[] = {
        I(ADD, 1, 1, IMM, 1), I(JMP, 0, 0, 0, 0),
    };
    enum { N = 16 };
    uint64_t a = VEC_PA, b = VEC_PA + 0x10000, c = VEC_PA + 0x20000;
    uint64_t user[4] = { a, b, c, N };
    Megpu m;
    Note r[3];

    megpu_start_engines_opts(&m, 2, opts);
    results_clear(&m, 3);
    for (uint32_t i = 0; i < N; i++) {
        qtest_writel(m.qts, a + 4 * i, i);
        qtest_writel(m.qts, b + 4 * i, 100);
    }
    qtest_memset(m.qts, c, 0, 4 * N);
    for (unsigned k = 0; k < ARRAY_SIZE(vadd_prog); k++) {
        qtest_writeq(m.qts, PROG_PA + 8 * k, vadd_prog[k]);
    }
    for (unsigned k = 0; k < ARRAY_SIZE(spin); k++) {
        qtest_writeq(m.qts, PROG_PA + 0x1000 + 8 * k, spin[k]);
    }
    q_init(&m, 0, 16, 0, 0);
    q_push_program(&m, 0, PROG_PA, ARRAY_SIZE(vadd_prog), user, 4, N);
    q_push_program(&m, 1, PROG_PA + 0x1000, ARRAY_SIZE(spin), NULL, 0, 16);
    q_push_program(&m, 2, PROG_PA, ARRAY_SIZE(vadd_prog), user, 4, N);
    q_close(&m, 0);
    emit_dequeue(&m, 0, q0, 1, 0, MEGPU_DEQ_ONCE);
    kick(&m, 0);
    for (unsigned us = 0; !erd(&m, 0, MEGPU_ENG_WAVES_LIVE); us += 1000) {
        g_assert_cmpuint(us, <, POLL_TIMEOUT_US);
        g_usleep(1000);
    }
    eng_reset(&m, 0);

    results_read(&m, 3, r);
    for (unsigned t = 0; t < 3; t++) {
        g_assert_cmpuint(r[t].done, ==, 1);
        g_assert_cmphex(r[t].by, ==, MEGPU_TQ_OWNER_ENGINE(0));
        g_assert_cmpuint(r[t].status, ==,
                         t == 0 && !relaxed ? 0 : MEGPU_FAULT_TQ_RESET);
    }
    if (!relaxed) {
        for (uint32_t i = 0; i < N; i++) {
            g_assert_cmpuint(qtest_readl(m.qts, c + 4 * i), ==, i + 100);
        }
    }
    g_assert_cmpuint(q_rd(&m, 0, MEGPU_TQ_HDR_DONE), ==, 3);
    g_assert_cmpuint(q_rd(&m, 0, MEGPU_TQ_HDR_LOCK), ==, 0);
    g_assert_cmpuint(erd(&m, 0, MEGPU_ENG_FAULTS), ==, 0);
    megpu_stop_engines(&m);
}

static void test_batch_reset(void)
{
    batch_reset("write-mode=strict,wave-budget=0", false);
    batch_reset("write-mode=relaxed,wave-budget=0", true);
}

/*
 * EVENT-mode DEQUEUEs on engines [0, @engines) (gfx and compute), asleep
 * behind a lock a CPU holds; returns when each has just gone to sleep,
 * so that its sleep's safety poll (MEGPU_TQ_EVENT_POLL_MS) is still
 * almost a whole period away.
 */
static void sleep_behind_cpu(Megpu *m, unsigned engines)
{
    static const unsigned q0[] = { 0 };
    uint32_t waits = rd(m, MEGPU_REG_TASKQ_EVENT_WAITS);

    results_clear(m, 4);
    q_init(m, 0, 16, MEGPU_TQ_F_EVENT, 0);
    q_push(m, 0, 0, 4, NULL);
    q_close(m, 0);
    q_wr(m, 0, MEGPU_TQ_HDR_LOCK, CPU_OWNER);
    for (unsigned e = 0; e < engines; e++) {
        emit_dequeue(m, e, q0, 1, 0, 0);
        kick(m, e);
    }
    for (unsigned us = 0;
         rd(m, MEGPU_REG_TASKQ_EVENT_WAITS) < waits + engines; us += 200) {
        g_assert_cmpuint(us, <, POLL_TIMEOUT_US);
        g_usleep(200);
    }
}

/*
 * An engine reset ends a DEQUEUE's sleep at once, not at its safety poll
 * (the hardware spec: engines abandon work at once). The bound is half
 * a poll period; before the reset woke sleepers, it took nearly one.
 */
static void test_engine_reset_ends_sleep(void)
{
    int64_t t0, us;
    Megpu m;

    megpu_start_engines(&m, 2);
    sleep_behind_cpu(&m, 1);
    t0 = g_get_monotonic_time();
    ewr(&m, 0, MEGPU_ENG_CONTROL, MEGPU_ENG_CTRL_RESET);
    eng_reset_done(&m, 0);
    us = g_get_monotonic_time() - t0;
    g_test_message("engine reset of a sleeping DEQUEUE: %" PRId64 " us", us);
    g_assert_cmpint(us, <, MEGPU_TQ_EVENT_POLL_MS * 1000 / 2);
    g_assert_cmpuint(erd(&m, 0, MEGPU_ENG_TASKQ_STATE), ==,
                     MEGPU_TQ_STATE_IDLE);
    megpu_stop_engines(&m);
}

/*
 * The device reset waits for each engine in turn under the BQL: with
 * two sleepers it took about a poll period (the second went back to
 * sleep before its turn came).
 */
static void test_device_reset_ends_sleeps(void)
{
    int64_t t0, us;
    Megpu m;

    megpu_start_engines(&m, 2);
    sleep_behind_cpu(&m, 2);
    t0 = g_get_monotonic_time();
    wr(&m, MEGPU_REG_RESET, MEGPU_RESET_MAGIC);
    us = g_get_monotonic_time() - t0;
    g_test_message("device reset, two sleeping DEQUEUEs: %" PRId64 " us", us);
    g_assert_cmpint(us, <, MEGPU_TQ_EVENT_POLL_MS * 1000 / 2);
    for (unsigned e = 0; e < 2; e++) {
        g_assert_cmpuint(erd(&m, e, MEGPU_ENG_TASKQ_STATE), ==,
                         MEGPU_TQ_STATE_IDLE);
    }
    megpu_stop_engines(&m);
}

/*
 * The guest powers the device's slot off while engines run: QEMU unplugs
 * it at once, and the teardown must not destroy one engine's lock while
 * another engine can still take it (a SIGNAL locks every engine). Engine
 * 1 asleep in a DEQUEUE kept the old teardown, engine by engine, between
 * engine 0's locks going and engine 2's stop; engine 2 signals every
 * millisecond meanwhile, and QEMU aborted on a destroyed mutex.
 */
static void test_slot_power_off_busy(void)
{
    static const unsigned q0[] = { 0 };
    QPCIDevice *port;
    Megpu m;

    port = megpu_start_in_slot(&m, 3, true, "write-mode=strict");
    qpci_msix_enable(m.dev);
    for (unsigned n = 0; n < 3; n++) {
        ring_setup(&m, n);
    }
    q_init(&m, 0, 16, MEGPU_TQ_F_EVENT, 0);
    q_push(&m, 0, 0, 4, NULL);
    q_close(&m, 0);
    q_wr(&m, 0, MEGPU_TQ_HDR_LOCK, CPU_OWNER);
    emit_dequeue(&m, 1, q0, 1, 0, 0);
    kick(&m, 1);
    tq_state_wait(&m, 1, MEGPU_TQ_STATE_LOCKING);

    ewr(&m, 2, MEGPU_ENG_DELAY_US, 1000);
    while (m.ring[2].pos + 4 * (1 + MEGPU_PKT_SIGNAL_COUNT) < RING_SIZE) {
        emit_signal(&m.ring[2], SEM_PA, m.ring[2].pos);
    }
    kick(&m, 2);
    /* signalling (the first SIGNAL writes 0) */
    for (unsigned us = 0; !qtest_readq(m.qts, SEM_PA); us += 1000) {
        g_assert_cmpuint(us, <, POLL_TIMEOUT_US);
        g_usleep(1000);
    }

    megpu_slot_power_off(port);
    megpu_assert_gone(&m);

    g_free(port);
    g_free(m.dev);
    qpci_free_pc(m.bus);
    qtest_quit(m.qts);
}

/* Poll a device register until (value & mask) == want. */
static void rd_poll(Megpu *m, uint32_t reg, uint32_t mask, uint32_t want)
{
    for (unsigned us = 0; (rd(m, reg) & mask) != want; us += 100) {
        g_assert_cmpuint(us, <, POLL_TIMEOUT_US);
        g_usleep(100);
    }
}

/*
 * The discrete variant's "request work": enabled engines ask when their
 * ring runs empty (at once when idle), through TASKQ_REQ_PENDING and
 * MISC_IRQ_WORK; the others never do.
 */
static void test_request_work(void)
{
    Megpu m;

    megpu_start_engines(&m, 4);
    g_assert_cmpuint(rd(&m, MEGPU_REG_TASKQ_REQ_WORK), ==, 0);
    g_assert_cmpuint(rd(&m, MEGPU_REG_TASKQ_REQ_PENDING), ==, 0);
    /* only existing engines can be enabled */
    wr(&m, MEGPU_REG_TASKQ_REQ_WORK, 0xffffffff);
    g_assert_cmpuint(rd(&m, MEGPU_REG_TASKQ_REQ_WORK), ==, 0xf);
    wr(&m, MEGPU_REG_TASKQ_REQ_WORK, 0);
    wr(&m, MEGPU_REG_TASKQ_REQ_PENDING, 0xf);
    wr(&m, MEGPU_REG_MISC_IRQ_STATUS, 0xffffffff);

    /* idle engines ask as soon as they are enabled */
    wr(&m, MEGPU_REG_TASKQ_REQ_WORK, 0x3);
    rd_poll(&m, MEGPU_REG_TASKQ_REQ_PENDING, 0xf, 0x3);
    rd_poll(&m, MEGPU_REG_MISC_IRQ_STATUS, MEGPU_MISC_IRQ_WORK,
            MEGPU_MISC_IRQ_WORK);
    wr(&m, MEGPU_REG_TASKQ_REQ_PENDING, 0x3);
    wr(&m, MEGPU_REG_MISC_IRQ_STATUS, MEGPU_MISC_IRQ_WORK);
    g_assert_cmpuint(rd(&m, MEGPU_REG_TASKQ_REQ_PENDING), ==, 0);

    /* a job ends on engine 1 (enabled) and on engine 2 (not) */
    emit_nop(&m.ring[1], 2);
    kick(&m, 1);
    eng_idle(&m, 1);
    emit_nop(&m.ring[2], 2);
    kick(&m, 2);
    eng_idle(&m, 2);
    rd_poll(&m, MEGPU_REG_TASKQ_REQ_PENDING, 0xf, 0x2);
    g_assert_cmpuint(rd(&m, MEGPU_REG_MISC_IRQ_STATUS) &
                     MEGPU_MISC_IRQ_WORK, ==, MEGPU_MISC_IRQ_WORK);

    /* disabled: ending jobs ask no more */
    wr(&m, MEGPU_REG_TASKQ_REQ_WORK, 0);
    wr(&m, MEGPU_REG_TASKQ_REQ_PENDING, 0xf);
    emit_nop(&m.ring[1], 2);
    kick(&m, 1);
    eng_idle(&m, 1);
    g_assert_cmpuint(rd(&m, MEGPU_REG_TASKQ_REQ_PENDING), ==, 0);
    megpu_stop_engines(&m);
}

static void emit_task_done(Stream *r, uint64_t queue, uint64_t note,
                           uint32_t owner, uint32_t batch, uint32_t status)
{
    hdr(r, MEGPU_PKT_TASK_DONE, MEGPU_PKT_TASK_DONE_COUNT, 0);
    put64(r, queue);
    put64(r, note);
    put(r, owner);
    put(r, batch);
    put(r, status);
}

/*
 * TASK_DONE writes a notification as DEQUEUE does: DONE counts every
 * take (so a second one shows), the queue's DONE counts too; bad
 * alignment faults, and engines without DISPATCH do not have it.
 */
static void test_task_done(void)
{
    Megpu m;
    Note r[2];
    uint32_t at;

    megpu_start_engines(&m, 4);
    q_init(&m, 0, 16, 0, 0);
    results_clear(&m, 2);
    emit_task_done(&m.ring[0], Q_PA(0), NOTE_PA, MEGPU_TQ_OWNER_DRIVER(0),
                   7, 0);
    emit_task_done(&m.ring[0], 0, NOTE_PA + MEGPU_TQ_NOTE_SIZE,
                   MEGPU_TQ_OWNER_DRIVER(0), 7, MEGPU_FAULT_TQ_BAD_TASK);
    kick(&m, 0);
    eng_idle(&m, 0);
    results_read(&m, 2, r);
    g_assert_cmpuint(r[0].done, ==, 1);
    g_assert_cmpuint(r[0].by, ==, MEGPU_TQ_OWNER_DRIVER(0));
    g_assert_cmpuint(r[0].batch, ==, 7);
    g_assert_cmpuint(r[0].status, ==, 0);
    g_assert_cmpuint(r[1].done, ==, 1);
    g_assert_cmpuint(r[1].status, ==, MEGPU_FAULT_TQ_BAD_TASK);
    /* the second had no queue: the queue counted one */
    g_assert_cmpuint(q_rd(&m, 0, MEGPU_TQ_HDR_DONE), ==, 1);

    /* taken twice: the notification shows it */
    emit_task_done(&m.ring[0], Q_PA(0), NOTE_PA, MEGPU_TQ_OWNER_DRIVER(0),
                   8, 0);
    kick(&m, 0);
    eng_idle(&m, 0);
    results_read(&m, 1, r);
    g_assert_cmpuint(r[0].done, ==, 2);
    g_assert_cmpuint(q_rd(&m, 0, MEGPU_TQ_HDR_DONE), ==, 2);

    /* misaligned note, misaligned queue */
    at = m.ring[0].pos;
    emit_task_done(&m.ring[0], 0, NOTE_PA + 4, 0, 0, 0);
    kick(&m, 0);
    expect_fault(&m, 0, MEGPU_FAULT_BAD_ARG, RING_PA(0) + at, at, 0);
    at = m.ring[0].pos;
    emit_task_done(&m.ring[0], Q_PA(0) + 8, NOTE_PA, 0, 0, 0);
    kick(&m, 0);
    expect_fault(&m, 0, MEGPU_FAULT_BAD_ARG, RING_PA(0) + at, at, 0);
    /* the copy engine runs no kernels: no TASK_DONE either */
    at = m.ring[2].pos;
    emit_task_done(&m.ring[2], 0, NOTE_PA, 0, 0, 0);
    kick(&m, 2);
    expect_fault(&m, 2, MEGPU_FAULT_UNSUPPORTED, RING_PA(2) + at, at, 0);
    megpu_stop_engines(&m);
}

/* Descriptor @t of queue @qi, as q_push wrote it (slot = index). */
static uint64_t q_desc(unsigned qi, uint32_t t)
{
    return Q_PA(qi) + MEGPU_TQ_HDR_BYTES + (uint64_t)t * MEGPU_TQ_DESC_SIZE;
}

/*
 * A malformed task's notification record at every byte offset near the
 * end of a page (the guest names it): an 8-aligned one is written (word
 * by word where it straddles two pages), any other is never written,
 * and none reaches an assertion in the device (issue 21: a record at
 * 0xff2 aborted QEMU). The engine faults with the descriptor each time.
 */
static void test_malformed_note_anywhere(void)
{
    static const unsigned q0[] = { 0 };
    TaskSpec bad = {
        MEGPU_KERNEL_INCREMENT, MEGPU_KERNEL_INCREMENT, MEGPU_TQ_AFF_COUNT,
    };
    const uint64_t page = NOTE_PA + 0x10000;
    uint8_t mem[0x80], zero[0x80] = { 0 };
    Megpu m;

    megpu_start_engines(&m, 4);
    /* from the page's last byte down: the first one aborted QEMU */
    for (uint32_t off = 0xfff; off >= 0xfe0; off--) {
        uint32_t at;

        qtest_memset(m.qts, page + 0xfc0, 0, 0x80);
        q_init(&m, 0, 16, MEGPU_TQ_F_CLOSED, 0);
        q_push(&m, 0, 0, 1, &bad);
        qtest_writeq(m.qts, q_desc(0, 0) + MEGPU_TQ_DESC_NOTIFY, page + off);
        at = m.ring[0].pos;
        emit_dequeue(&m, 0, q0, 1, 0, MEGPU_DEQ_ONCE);
        kick(&m, 0);
        expect_fault(&m, 0, MEGPU_FAULT_TQ_BAD_TASK, q_desc(0, 0), at, 0);
        qtest_memread(m.qts, page + 0xfc0, mem, sizeof(mem));
        if (off & 7) {
            g_assert_cmpmem(mem, sizeof(mem), zero, sizeof(zero));
        } else {
            uint8_t *r = mem + (off - 0xfc0);

            g_assert_cmpuint(ldl_le_p(r + MEGPU_TQ_NOTE_DONE), ==, 1);
            g_assert_cmpuint(ldl_le_p(r + MEGPU_TQ_NOTE_STATUS), ==,
                             MEGPU_FAULT_TQ_BAD_TASK);
        }
        g_assert_cmpuint(q_rd(&m, 0, MEGPU_TQ_HDR_DONE), ==, 1);
        g_assert_cmpuint(q_rd(&m, 0, MEGPU_TQ_HDR_LOCK), ==, 0);
    }
    megpu_stop_engines(&m);
}

/*
 * A notification that cannot be written (its record is not RAM) does
 * not stop the others of its batch: every task ran and the others are
 * notified; the engine then reports the failed write.
 */
static void test_note_fault_notifies_rest(void)
{
    static const unsigned q0[] = { 0 };
    Megpu m;
    Note r[4];
    uint32_t at;

    megpu_start_engines(&m, 4);
    results_clear(&m, 4);
    q_init(&m, 0, 16, MEGPU_TQ_F_CLOSED, 0);
    q_push(&m, 0, 0, 4, NULL);
    qtest_writeq(m.qts, q_desc(0, 1) + MEGPU_TQ_DESC_NOTIFY, NO_RAM_PA);
    at = m.ring[0].pos;
    emit_dequeue(&m, 0, q0, 1, 0, MEGPU_DEQ_ONCE);
    kick(&m, 0);
    expect_fault(&m, 0, MEGPU_FAULT_BUS, NO_RAM_PA, at,
                 MEGPU_FAULT_INFO_WRITE);
    results_read(&m, 4, r);
    for (unsigned t = 0; t < 4; t++) {
        g_assert_cmpuint(r[t].elem, ==, 1);
        g_assert_cmpuint(r[t].done, ==, t == 1 ? 0 : 1);
        g_assert_cmpuint(r[t].status, ==, 0);
    }
    g_assert_cmpuint(q_rd(&m, 0, MEGPU_TQ_HDR_DONE), ==, 4);
    g_assert_cmpuint(q_rd(&m, 0, MEGPU_TQ_HDR_GPU_TASKS), ==, 4);
    megpu_stop_engines(&m);
}

#define DESCS_PA            0x0c200000ull

static void emit_task_run(Stream *r, uint64_t queue, uint64_t descs,
                          uint32_t count, uint32_t owner, uint32_t batch)
{
    hdr(r, MEGPU_PKT_TASK_RUN, MEGPU_PKT_TASK_RUN_COUNT, 0);
    put64(r, queue);
    put64(r, descs);
    put(r, count);
    put(r, owner);
    put(r, batch);
}

/* Copy descriptors [0, n) of queue @qi where TASK_RUN reads them. */
static void descs_copy(Megpu *m, unsigned qi, uint32_t n)
{
    g_autofree uint8_t *d = g_malloc((size_t)n * MEGPU_TQ_DESC_SIZE);

    qtest_memread(m->qts, q_desc(qi, 0), d, (size_t)n * MEGPU_TQ_DESC_SIZE);
    qtest_memwrite(m->qts, DESCS_PA, d, (size_t)n * MEGPU_TQ_DESC_SIZE);
}

/*
 * TASK_RUN runs a batch the driver took as DEQUEUE runs its own: a
 * malformed task is notified with its status and not run (no fault);
 * a kernel that faults stops the kernels, and it and the rest carry its
 * code; a notification that cannot be written does not stop the others.
 * Every task is notified exactly once, and the queue counts them all.
 */
static void test_task_run(void)
{
    TaskSpec mixed[5] = {
        { MEGPU_KERNEL_INCREMENT, MEGPU_KERNEL_INCREMENT, MEGPU_TQ_AFF_ANY },
        { MEGPU_KERNEL_INCREMENT, MEGPU_KERNEL_INCREMENT, 9 },
        { MEGPU_KERNEL_INCREMENT, MEGPU_KERNEL_INCREMENT, MEGPU_TQ_AFF_ANY },
        { MEGPU_KERNEL_INCREMENT, MEGPU_KERNEL_INCREMENT, MEGPU_TQ_AFF_ANY },
        { MEGPU_KERNEL_INCREMENT, MEGPU_KERNEL_INCREMENT, MEGPU_TQ_AFF_ANY },
    };
    uint32_t owner = MEGPU_TQ_OWNER_DRIVER(0);
    Megpu m;
    Note r[5];
    uint32_t at;

    megpu_start_engines(&m, 4);

    /* a malformed one among good ones: notified, not run, no fault */
    results_clear(&m, 5);
    q_init(&m, 0, 16, 0, 0);
    q_push(&m, 0, 0, 5, mixed);
    descs_copy(&m, 0, 5);
    emit_task_run(&m.ring[0], Q_PA(0), DESCS_PA, 5, owner, 3);
    kick(&m, 0);
    eng_idle(&m, 0);
    results_read(&m, 5, r);
    for (unsigned t = 0; t < 5; t++) {
        g_assert_cmpuint(r[t].done, ==, 1);
        g_assert_cmpuint(r[t].by, ==, owner);
        g_assert_cmpuint(r[t].batch, ==, 3);
        g_assert_cmpuint(r[t].status, ==,
                         t == 1 ? MEGPU_FAULT_TQ_BAD_TASK : 0);
        g_assert_cmpuint(r[t].elem, ==, t == 1 ? 0 : 1);
    }
    g_assert_cmpuint(q_rd(&m, 0, MEGPU_TQ_HDR_DONE), ==, 5);
    /* the driver counted its take: TASK_RUN does not count it again */
    g_assert_cmpuint(q_rd(&m, 0, MEGPU_TQ_HDR_GPU_TASKS), ==, 0);

    /* a kernel faults: the rest are notified with its code */
    results_clear(&m, 5);
    q_init(&m, 0, 16, 0, 0);
    q_push(&m, 0, 0, 5, NULL);
    qtest_writeq(m.qts, KARGS_PA + 64 * 2 + MEGPU_KARGS_PTR(0), NO_RAM_PA);
    /* and one record is not RAM: the others are still written */
    qtest_writeq(m.qts, q_desc(0, 4) + MEGPU_TQ_DESC_NOTIFY, NO_RAM_PA);
    descs_copy(&m, 0, 5);
    at = m.ring[0].pos;
    emit_task_run(&m.ring[0], Q_PA(0), DESCS_PA, 5, owner, 4);
    kick(&m, 0);
    expect_fault(&m, 0, MEGPU_FAULT_BUS, NO_RAM_PA, at, 0);
    results_read(&m, 5, r);
    for (unsigned t = 0; t < 4; t++) {
        g_assert_cmpuint(r[t].done, ==, 1);
        g_assert_cmpuint(r[t].status, ==, t < 2 ? 0 : MEGPU_FAULT_BUS);
        g_assert_cmpuint(r[t].elem, ==, t < 2 ? 1 : 0);
    }
    g_assert_cmpuint(r[4].done, ==, 0);
    g_assert_cmpuint(q_rd(&m, 0, MEGPU_TQ_HDR_DONE), ==, 5);

    /* bad packets: no tasks, too many, misaligned */
    at = m.ring[0].pos;
    emit_task_run(&m.ring[0], Q_PA(0), DESCS_PA, 0, owner, 0);
    kick(&m, 0);
    expect_fault(&m, 0, MEGPU_FAULT_BAD_ARG, RING_PA(0) + at, at, 0);
    at = m.ring[0].pos;
    emit_task_run(&m.ring[0], Q_PA(0), DESCS_PA, MEGPU_TQ_MAX_BATCH + 1,
                  owner, 0);
    kick(&m, 0);
    expect_fault(&m, 0, MEGPU_FAULT_BAD_ARG, RING_PA(0) + at, at, 0);
    at = m.ring[0].pos;
    emit_task_run(&m.ring[0], Q_PA(0), DESCS_PA + 4, 1, owner, 0);
    kick(&m, 0);
    expect_fault(&m, 0, MEGPU_FAULT_BAD_ARG, RING_PA(0) + at, at, 0);
    at = m.ring[0].pos;
    emit_task_run(&m.ring[0], Q_PA(0) + 8, DESCS_PA, 1, owner, 0);
    kick(&m, 0);
    expect_fault(&m, 0, MEGPU_FAULT_BAD_ARG, RING_PA(0) + at, at, 0);
    /* the copy engine runs no kernels */
    at = m.ring[2].pos;
    emit_task_run(&m.ring[2], 0, DESCS_PA, 1, owner, 0);
    kick(&m, 2);
    expect_fault(&m, 2, MEGPU_FAULT_UNSUPPORTED, RING_PA(2) + at, at, 0);
    megpu_stop_engines(&m);
}

/*
 * The SPI stage (F12): DISPATCH counts the work-items and work-groups it
 * launches from the execution range; a dispatch that faults, nothing.
 */
static void test_spi_counters(void)
{
    Megpu m;
    uint32_t at;
    uint8_t ka[MEGPU_KARGS_SIZE] = { 0 };
    g_autofree uint32_t *el = g_new(uint32_t, 200);

    megpu_start_engines(&m, 4);
    qtest_memset(m.qts, ELEM_PA, 0, 4 * 200);
    stq_le_p(ka + MEGPU_KARGS_PTR(0), ELEM_PA);
    stl_le_p(ka + MEGPU_KARGS_N, 200);
    qtest_memwrite(m.qts, KARGS_PA, ka, sizeof(ka));
    emit_dispatch(&m.ring[0], MEGPU_KERNEL_INCREMENT, KARGS_PA, 100, 2, 16, 1);
    kick(&m, 0);
    eng_idle(&m, 0);
    g_assert_cmpuint(erd64(&m, 0, MEGPU_ENG_WORK_ITEMS_LO), ==, 200);
    g_assert_cmpuint(erd64(&m, 0, MEGPU_ENG_WORK_GROUPS_LO), ==, 7 * 2);
    qtest_memread(m.qts, ELEM_PA, el, 4 * 200);
    for (unsigned i = 0; i < 200; i++) {
        g_assert_cmpuint(le32_to_cpu(el[i]), ==, 1);
    }
    /* a dispatch that faults launched nothing */
    at = m.ring[0].pos;
    emit_dispatch(&m.ring[0], MEGPU_KERNEL_INCREMENT, KARGS_PA, 100, 2, 0, 1);
    kick(&m, 0);
    expect_fault(&m, 0, MEGPU_FAULT_BAD_ARG, RING_PA(0) + at, at, 0);
    g_assert_cmpuint(erd64(&m, 0, MEGPU_ENG_WORK_ITEMS_LO), ==, 200);
    g_assert_cmpuint(erd64(&m, 0, MEGPU_ENG_WORK_GROUPS_LO), ==, 14);
    megpu_stop_engines(&m);
}

/*
 * TASKQ_JOB_TASKS: the tasks an engine's DEQUEUEs ran since the ring's
 * last TIMESTAMP (a frame's end), which the driver reads only when a job
 * times out; a ring TIMESTAMP starts it over, an engine reset clears it.
 */
static void test_job_tasks(void)
{
    static const TaskSpec any[] = {
        { MEGPU_KERNEL_INCREMENT, MEGPU_KERNEL_INCREMENT, MEGPU_TQ_AFF_ANY },
    };
    static const unsigned q0[] = { 0 };
    Megpu m;

    megpu_start_engines(&m, 4);
    results_clear(&m, 8);
    q_init(&m, 0, 16, 0, 16);
    for (unsigned t = 0; t < 3; t++) {
        q_push(&m, 0, t, 1, any);
    }
    dequeue_run(&m, 0, q0, 1, 0, MEGPU_DEQ_ONCE);
    g_assert_cmpuint(erd(&m, 0, MEGPU_ENG_TASKQ_TASKS), ==, 3);
    g_assert_cmpuint(erd(&m, 0, MEGPU_ENG_TASKQ_JOB_TASKS), ==, 3);
    g_assert_cmpuint(erd(&m, 1, MEGPU_ENG_TASKQ_JOB_TASKS), ==, 0);

    /* the frame's end: the next job starts at 0, the total stays */
    emit_ts(&m.ring[0], SEM_PA, 1, 0);
    kick(&m, 0);
    eng_idle(&m, 0);
    g_assert_cmpuint(erd(&m, 0, MEGPU_ENG_TASKQ_JOB_TASKS), ==, 0);
    g_assert_cmpuint(erd(&m, 0, MEGPU_ENG_TASKQ_TASKS), ==, 3);

    for (unsigned t = 3; t < 5; t++) {
        q_push(&m, 0, t, 1, any);
    }
    dequeue_run(&m, 0, q0, 1, 0, MEGPU_DEQ_ONCE);
    g_assert_cmpuint(erd(&m, 0, MEGPU_ENG_TASKQ_JOB_TASKS), ==, 2);
    g_assert_cmpuint(erd(&m, 0, MEGPU_ENG_TASKQ_TASKS), ==, 5);

    /* an engine reset: no job runs any more */
    eng_reset(&m, 0);
    g_assert_cmpuint(erd(&m, 0, MEGPU_ENG_TASKQ_JOB_TASKS), ==, 0);
    megpu_stop_engines(&m);
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    qtest_add_func("/megpu/dequeue/caps", test_caps);
    qtest_add_func("/megpu/dequeue/affinity", test_affinity);
    qtest_add_func("/megpu/dequeue/hints", test_hints);
    qtest_add_func("/megpu/dequeue/none-eligible", test_none_eligible);
    qtest_add_func("/megpu/dequeue/waiting-closed-queues-cost-nothing",
                   test_waiting_closed_queues_cost_nothing);
    qtest_add_func("/megpu/dequeue/own-queued-tail", test_own_queued_tail);
    qtest_add_func("/megpu/dequeue/steal", test_steal);
    qtest_add_func("/megpu/dequeue/guided", test_guided);
    qtest_add_func("/megpu/dequeue/event-mode", test_event_mode);
    qtest_add_func("/megpu/dequeue/event-mode-no-notify",
                   test_event_mode_no_notify);
    qtest_add_func("/megpu/dequeue/event-release-irq",
                   test_event_release_irq);
    qtest_add_func("/megpu/dequeue/event-gate", test_event_gate);
    qtest_add_func("/megpu/dequeue/program-tasks", test_program_tasks);
    qtest_add_func("/megpu/dequeue/lock-held-backs-off",
                   test_lock_held_backs_off);
    qtest_add_func("/megpu/dequeue/malformed", test_malformed);
    qtest_add_func("/megpu/dequeue/reset", test_reset);
    qtest_add_func("/megpu/dequeue/batch-reset", test_batch_reset);
    qtest_add_func("/megpu/dequeue/engine-reset-ends-sleep",
                   test_engine_reset_ends_sleep);
    qtest_add_func("/megpu/dequeue/device-reset-ends-sleeps",
                   test_device_reset_ends_sleeps);
    qtest_add_func("/megpu/dequeue/slot-power-off-busy",
                   test_slot_power_off_busy);
    qtest_add_func("/megpu/dequeue/request-work", test_request_work);
    qtest_add_func("/megpu/dequeue/task-done", test_task_done);
    qtest_add_func("/megpu/dequeue/task-run", test_task_run);
    qtest_add_func("/megpu/dequeue/malformed-note-anywhere",
                   test_malformed_note_anywhere);
    qtest_add_func("/megpu/dequeue/note-fault-notifies-rest",
                   test_note_fault_notifies_rest);
    qtest_add_func("/megpu/dequeue/spi-counters", test_spi_counters);
    qtest_add_func("/megpu/dequeue/job-tasks", test_job_tasks);
    qtest_add_func("/megpu/dequeue/exactly-once", test_exactly_once);
    qtest_add_func("/megpu/dequeue/exactly-once-relaxed",
                   test_exactly_once_relaxed);
    qtest_add_func("/megpu/dequeue/exactly-once-event",
                   test_exactly_once_event);
    qtest_add_func("/megpu/dequeue/nonatomic-caught", test_nonatomic_caught);
    return g_test_run();
}
