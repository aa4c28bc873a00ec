// SPDX-License-Identifier: MIT
/*
 * Host unit tests of the CPU side of the task queues (tools/lib/megpu/
 * taskq.c, seed 002): descriptor ABI, FIFO order, contiguous batches of
 * the CPU's size, affinity in both modes, none eligible leaving the lock
 * word alone, malformed descriptors, event-gated tasks, the CPU versions
 * of the kernels, stealing, and exactly-once with several threads
 * dequeuing at once, in both exclusion modes; with the non-atomic lock
 * (negative control) the same check must find a task run twice or lost.
 */
#include <errno.h>
#include <linux/futex.h>
#include <pthread.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "libmegpu.h"
#include "megpu_hw_taskq.h"
#include "tap.h"

#define VA_BASE		0x100000ull
#define ARENA		(8u << 20)
#define MAX_TASKS	20000

/* A fake GPU address space: [VA_BASE, VA_BASE + ARENA) at arena. */
static uint8_t *arena;
static uint64_t arena_used;
static struct megpu_tq_region region;

static uint64_t alloc_va(uint64_t bytes)
{
	uint64_t va = VA_BASE + arena_used;

	arena_used += (bytes + MEGPU_TQ_ALIGN - 1) & ~(MEGPU_TQ_ALIGN - 1ull);
	if (arena_used > ARENA)
		abort();
	return va;
}

static void *cpu(uint64_t va)
{
	return arena + (va - VA_BASE);
}

static void arena_reset(void)
{
	memset(arena, 0, ARENA);
	arena_used = 0;
}

/*
 * A stand-in for the driver's TASKQ_SLEEP and TASKQ_NOTIFY: a release
 * count on a futex. With drop set it ignores notifications (the device's
 * x-taskq-no-notify), so sleepers get in only by the safety poll.
 */
struct fake_driver {
	uint32_t releases;
	bool drop;
};

static int fake_sleep(void *priv, uint32_t *seq, uint64_t timeout_ns)
{
	struct fake_driver *d = priv;
	uint64_t end;
	struct timespec now;

	if (!timeout_ns) {
		*seq = __atomic_load_n(&d->releases, __ATOMIC_SEQ_CST);
		return 0;
	}
	clock_gettime(CLOCK_MONOTONIC, &now);
	end = now.tv_sec * 1000000000ull + now.tv_nsec + timeout_ns;
	while (__atomic_load_n(&d->releases, __ATOMIC_SEQ_CST) == *seq) {
		uint64_t t;
		struct timespec left;

		clock_gettime(CLOCK_MONOTONIC, &now);
		t = now.tv_sec * 1000000000ull + now.tv_nsec;
		if (t >= end)
			return -ETIME;
		left.tv_sec = (end - t) / 1000000000ull;
		left.tv_nsec = (end - t) % 1000000000ull;
		syscall(SYS_futex, &d->releases, FUTEX_WAIT, *seq, &left,
			NULL, 0);
	}
	*seq = __atomic_load_n(&d->releases, __ATOMIC_SEQ_CST);
	return 0;
}

static void fake_notify(void *priv)
{
	struct fake_driver *d = priv;

	if (d->drop)
		return;
	__atomic_add_fetch(&d->releases, 1, __ATOMIC_SEQ_CST);
	syscall(SYS_futex, &d->releases, FUTEX_WAKE, 1 << 30, NULL, NULL, 0);
}

/* race()'s EVENT-mode sleepers: NULL (futexes on the lock) or this */
static struct fake_driver *race_driver;
static uint64_t race_sleeps, race_polled;

static void agent_init(struct megpu_tq_agent *a, uint32_t owner)
{
	memset(a, 0, sizeof(*a));
	a->owner = owner;
	a->regions = &region;
	a->nregions = 1;
}

/* Per task: kargs, an element, a notification. */
struct work {
	uint64_t kargs, elems, notes;
	uint32_t n;
};

static void work_init(struct work *w, uint32_t n)
{
	w->n = n;
	w->kargs = alloc_va(64ull * n);
	w->elems = alloc_va(4ull * n);
	w->notes = alloc_va((uint64_t)MEGPU_TQ_NOTE_SIZE * n);
	for (uint32_t i = 0; i < n; i++) {
		struct megpu_kargs k = { .n = 1 };

		k.ptr[0] = w->elems + 4ull * i;
		megpu_kargs_pack(cpu(w->kargs + 64ull * i), &k);
	}
}

static struct megpu_task task(const struct work *w, uint32_t i,
			      uint32_t affinity)
{
	return (struct megpu_task) {
		.cpu_fn = MEGPU_KERNEL_INCREMENT,
		.gpu_kernel = MEGPU_KERNEL_INCREMENT,
		.data = w->kargs + 64ull * i,
		.range_x = 1, .range_y = 1, .group_x = 1, .group_y = 1,
		.notify = w->notes + (uint64_t)MEGPU_TQ_NOTE_SIZE * i,
		.affinity = affinity,
		.arg_size = MEGPU_KARGS_SIZE,
	};
}

static uint32_t note(const struct work *w, uint32_t i, uint32_t off)
{
	return *(uint32_t *)cpu(w->notes + (uint64_t)MEGPU_TQ_NOTE_SIZE * i +
				off);
}

static uint32_t elem(const struct work *w, uint32_t i)
{
	return *(uint32_t *)cpu(w->elems + 4ull * i);
}

/* A fresh arena, agent @owner and @n ANY tasks in @t over @w. */
static void fresh_tasks(struct megpu_tq_agent *a, uint32_t owner,
			struct work *w, struct megpu_task *t, uint32_t n)
{
	arena_reset();
	agent_init(a, owner);
	work_init(w, n);
	for (uint32_t i = 0; i < n; i++)
		t[i] = task(w, i, MEGPU_TQ_AFF_ANY);
}

static void queue_new(struct megpu_taskq *q, uint32_t slots, uint32_t flags,
		      uint32_t bg, uint32_t bc)
{
	uint64_t va = alloc_va(MEGPU_TQ_BYTES((uint64_t)slots));

	CHECK_EQ(megpu_taskq_init(q, cpu(va), va, slots, flags, bg, bc), 0);
}

static void test_abi(void)
{
	struct megpu_task t = {
		.cpu_fn = 1, .gpu_kernel = 2, .data = 0x1122334455667788ull,
		.range_x = 3, .range_y = 4, .group_x = 5, .group_y = 6,
		.notify = 0x99, .affinity = 4, .arg_size = 48,
		.event_addr = 0xabc, .event_value = 0xdef,
	}, u;
	uint8_t d[MEGPU_TQ_DESC_SIZE];

	CHECK_EQ(MEGPU_TQ_DESC_SIZE, 64);
	CHECK_EQ(MEGPU_TQ_HDR_BYTES, 128);
	CHECK_EQ(MEGPU_TQ_BYTES(16), 128 + 16 * 64);
	megpu_task_pack(d, &t);
	CHECK_EQ(d[MEGPU_TQ_DESC_DATA], 0x88);
	CHECK_EQ(d[MEGPU_TQ_DESC_DATA + 7], 0x11);
	CHECK_EQ(d[MEGPU_TQ_DESC_AFFINITY], 4);
	CHECK_EQ(d[MEGPU_TQ_DESC_EVENT_VALUE + 1], 0x0d);
	megpu_task_unpack(d, &u);
	CHECK(!memcmp(&t, &u, sizeof(t)));
	CHECK(megpu_task_valid(&t) == false);	/* notify 0x99 unaligned */
	t.notify = 0x98;
	t.event_addr = 0xab8;
	CHECK(megpu_task_valid(&t));
	t.affinity = MEGPU_TQ_AFF_COUNT;
	CHECK(!megpu_task_valid(&t));
	t.affinity = MEGPU_TQ_AFF_REQUIRE_GPU;
	t.gpu_kernel = MEGPU_TQ_NONE;
	CHECK(!megpu_task_valid(&t));
	t.gpu_kernel = 2;
	t.group_x = 0;
	CHECK(!megpu_task_valid(&t));
	t.group_x = 1025;
	t.group_y = 1;
	CHECK(!megpu_task_valid(&t));
	t.group_x = 1;
	t.arg_size = 40;
	CHECK(!megpu_task_valid(&t));
}

/* FIFO, batches of the CPU size, counters, lock free afterwards. */
static void test_fifo_batches(void)
{
	struct megpu_task batch[MEGPU_TQ_MAX_BATCH], t[10];
	struct megpu_tq_agent a;
	struct megpu_taskq q;
	struct work w;
	uint32_t first;

	arena_reset();
	agent_init(&a, 7);
	work_init(&w, 10);
	queue_new(&q, 8, 0, 16, 3);
	for (int i = 0; i < 10; i++)
		t[i] = task(&w, i, MEGPU_TQ_AFF_ANY);
	CHECK_EQ(megpu_taskq_push(&q, &a, t, 10), 8);	/* 8 slots */
	CHECK_EQ(megpu_taskq_take(&q, &a, batch, &first), 3);
	CHECK_EQ(first, 0);
	CHECK_EQ(batch[0].data, t[0].data);
	CHECK_EQ(batch[2].data, t[2].data);
	CHECK_EQ(megpu_taskq_push(&q, &a, t + 8, 2), 2);	/* wraps */
	CHECK_EQ(megpu_taskq_take(&q, &a, batch, &first), 3);
	CHECK_EQ(first, 3);
	CHECK_EQ(megpu_taskq_take(&q, &a, batch, &first), 3);
	CHECK_EQ(batch[2].data, t[8].data);
	CHECK_EQ(megpu_taskq_take(&q, &a, batch, &first), 1);
	CHECK_EQ(batch[0].data, t[9].data);
	CHECK_EQ(megpu_taskq_take(&q, &a, batch, &first), 0);
	CHECK_EQ(megpu_taskq_read(&q, MEGPU_TQ_HDR_LOCK), 0);
	CHECK_EQ(megpu_taskq_read(&q, MEGPU_TQ_HDR_HEAD), 10);
}

/* Affinity, relaxed and STRICT; none eligible leaves the lock alone. */
static void test_affinity(void)
{
	static const uint32_t aff[] = {
		MEGPU_TQ_AFF_ANY, MEGPU_TQ_AFF_PREFER_CPU,
		MEGPU_TQ_AFF_PREFER_GPU, MEGPU_TQ_AFF_REQUIRE_CPU,
		MEGPU_TQ_AFF_REQUIRE_GPU, MEGPU_TQ_AFF_ANY,
	};
	struct megpu_task batch[MEGPU_TQ_MAX_BATCH], t[6];
	struct megpu_tq_agent a;
	struct megpu_taskq q, s;
	struct work w;
	uint32_t first;

	arena_reset();
	agent_init(&a, 7);
	work_init(&w, 6);
	for (int i = 0; i < 6; i++)
		t[i] = task(&w, i, aff[i]);
	queue_new(&q, 16, 0, 0, 16);
	megpu_taskq_push(&q, &a, t, 6);
	CHECK_EQ(megpu_taskq_take(&q, &a, batch, &first), 4);
	/* REQUIRE_GPU at the head, and a GPU-held lock: CPU returns 0 */
	*(uint32_t *)(q.mem + MEGPU_TQ_HDR_LOCK) = MEGPU_TQ_OWNER_ENGINE(1);
	CHECK_EQ(megpu_taskq_take(&q, &a, batch, &first), 0);
	CHECK_EQ(megpu_taskq_read(&q, MEGPU_TQ_HDR_LOCK),
		 MEGPU_TQ_OWNER_ENGINE(1));
	CHECK_EQ(megpu_taskq_read(&q, MEGPU_TQ_HDR_LOCK_RETRIES), 0);
	CHECK_EQ(megpu_taskq_read(&q, MEGPU_TQ_HDR_NONE_ELIGIBLE), 1);
	CHECK_EQ(a.lock_retries, 0);

	queue_new(&s, 16, MEGPU_TQ_F_STRICT, 0, 16);
	megpu_taskq_push(&s, &a, t, 6);
	CHECK_EQ(megpu_taskq_take(&s, &a, batch, &first), 2);
	CHECK_EQ(batch[1].affinity, MEGPU_TQ_AFF_PREFER_CPU);
	CHECK_EQ(megpu_taskq_take(&s, &a, batch, &first), 0);
	CHECK_EQ(megpu_taskq_read(&s, MEGPU_TQ_HDR_HEAD), 2);
	/* a CPU-only function: never for a CPU if cpu_fn is NONE */
	t[0].cpu_fn = MEGPU_TQ_NONE;
	CHECK(!megpu_task_cpu_eligible(&t[0], 0));
}

/*
 * Hints: advice, never enforced (not even STRICT), but a CPU takes a task
 * hinted for the GPU only in a batch of its own; one hinted for the CPU
 * batches like ANY.
 */
static void test_hints(void)
{
	struct megpu_task batch[MEGPU_TQ_MAX_BATCH], t[8];
	struct megpu_tq_agent a;
	struct megpu_taskq q;
	struct work w;
	uint32_t first;

	for (uint32_t flags = 0; flags <= MEGPU_TQ_F_STRICT;
	     flags += MEGPU_TQ_F_STRICT) {
		arena_reset();
		agent_init(&a, 7);
		work_init(&w, 8);
		/* HINT_CPU x3, HINT_GPU x2, HINT_CPU x3 */
		for (int i = 0; i < 8; i++)
			t[i] = task(&w, i, i == 3 || i == 4 ?
				    MEGPU_TQ_AFF_HINT_GPU :
				    MEGPU_TQ_AFF_HINT_CPU);
		queue_new(&q, 16, flags, 0, 16);
		CHECK_EQ(megpu_taskq_push(&q, &a, t, 8), 8);
		CHECK_EQ(megpu_taskq_take(&q, &a, batch, &first), 3);
		CHECK_EQ(first, 0);
		/* each HINT_GPU alone, even in a STRICT queue */
		CHECK_EQ(megpu_taskq_take(&q, &a, batch, &first), 1);
		CHECK_EQ(first, 3);
		CHECK_EQ(megpu_taskq_take(&q, &a, batch, &first), 1);
		CHECK_EQ(first, 4);
		CHECK_EQ(megpu_taskq_take(&q, &a, batch, &first), 3);
		CHECK_EQ(first, 5);
		CHECK(megpu_task_valid(&t[3]));
		CHECK(megpu_task_cpu_eligible(&t[3], flags));
	}
	/* past the last hint: malformed */
	t[0].affinity = MEGPU_TQ_AFF_COUNT;
	CHECK(!megpu_task_valid(&t[0]));
}

/* The CPU versions of the kernels, malformed tasks, bad addresses. */
static void test_run(void)
{
	struct megpu_tq_agent a;
	struct megpu_task t;
	struct megpu_kargs k = { .n = 4 };
	uint64_t kva, x, y, sum;
	uint32_t *px, *py;

	arena_reset();
	agent_init(&a, 9);
	kva = alloc_va(64);
	x = alloc_va(16);
	y = alloc_va(16);
	sum = alloc_va(8);
	px = cpu(x);
	py = cpu(y);
	for (int i = 0; i < 4; i++) {
		px[i] = i + 1;
		py[i] = 10 * (i + 1);
	}
	k.ptr[0] = x;
	k.ptr[1] = y;
	k.ptr[2] = y;
	megpu_kargs_pack(cpu(kva), &k);
	t = (struct megpu_task) {
		.cpu_fn = MEGPU_KERNEL_VADD, .gpu_kernel = MEGPU_KERNEL_VADD,
		.data = kva, .range_x = 3, .range_y = 1, .group_x = 1,
		.group_y = 1,
	};
	CHECK_EQ(megpu_taskq_run(&a, &t), 0);
	CHECK_EQ(py[0], 11);
	CHECK_EQ(py[2], 33);
	CHECK_EQ(py[3], 40);		/* range 3: element 3 untouched */

	k.ptr[1] = sum;
	megpu_kargs_pack(cpu(kva), &k);
	t.cpu_fn = MEGPU_KERNEL_CHECKSUM;
	t.range_x = 4;
	*(uint32_t *)cpu(sum) = 100;
	CHECK_EQ(megpu_taskq_run(&a, &t), 0);
	CHECK_EQ(*(uint32_t *)cpu(sum), 110);

	t.data = 0x8;			/* outside the regions */
	CHECK_EQ(megpu_taskq_run(&a, &t), MEGPU_FAULT_MMU);
	t.data = kva;
	t.affinity = 42;
	CHECK_EQ(megpu_taskq_run(&a, &t), MEGPU_FAULT_TQ_BAD_TASK);
}

/* A malformed task is taken alone, reported, and the queue goes on. */
static void test_malformed(void)
{
	struct megpu_task batch[MEGPU_TQ_MAX_BATCH], t[4];
	struct megpu_tq_agent a;
	struct megpu_taskq q;
	struct work w;
	uint32_t first;

	fresh_tasks(&a, 7, &w, t, 4);
	t[2].arg_size = 12;
	queue_new(&q, 16, MEGPU_TQ_F_CLOSED, 0, 16);
	megpu_taskq_push(&q, &a, t, 4);
	CHECK_EQ(megpu_taskq_dequeue(&a, &q, 1, 0, 0), 0);
	for (int i = 0; i < 4; i++)
		CHECK_EQ(note(&w, i, MEGPU_TQ_NOTE_DONE), 1);
	CHECK_EQ(note(&w, 2, MEGPU_TQ_NOTE_STATUS), MEGPU_FAULT_TQ_BAD_TASK);
	CHECK_EQ(elem(&w, 2), 0);
	CHECK_EQ(elem(&w, 3), 1);
	CHECK_EQ(a.batches, 3);
	CHECK_EQ(a.faults, 1);
	/* a header that is not a queue; head and tail too far apart */
	*(uint32_t *)(q.mem + MEGPU_TQ_HDR_TAIL) = 100;
	CHECK_EQ(megpu_taskq_take(&q, &a, batch, &first), -EBADMSG);
	*(uint32_t *)(q.mem + MEGPU_TQ_HDR_MAGIC) = 0;
	CHECK_EQ(megpu_taskq_take(&q, &a, batch, &first), -EBADMSG);
	CHECK_EQ(megpu_taskq_dequeue(&a, &q, 1, 0, 0), -EBADMSG);
}

/* An event-gated task blocks the head until its event. */
static void test_event_gate(void)
{
	struct megpu_task batch[MEGPU_TQ_MAX_BATCH], t[2];
	struct megpu_tq_agent a;
	struct megpu_taskq q;
	struct work w;
	uint64_t ev;
	uint32_t first;

	arena_reset();
	agent_init(&a, 7);
	work_init(&w, 2);
	ev = alloc_va(8);
	t[0] = task(&w, 0, MEGPU_TQ_AFF_ANY);
	t[0].event_addr = ev;
	t[0].event_value = 3;
	t[1] = task(&w, 1, MEGPU_TQ_AFF_ANY);
	queue_new(&q, 16, MEGPU_TQ_F_CLOSED, 0, 16);
	megpu_taskq_push(&q, &a, t, 2);
	*(uint64_t *)cpu(ev) = 2;
	CHECK_EQ(megpu_taskq_take(&q, &a, batch, &first), 0);
	CHECK_EQ(megpu_taskq_dequeue(&a, &q, 1, 0, MEGPU_DEQ_ONCE), 0);
	CHECK_EQ(a.tasks, 0);
	*(uint64_t *)cpu(ev) = 3;
	CHECK_EQ(megpu_taskq_dequeue(&a, &q, 1, 0, 0), 0);
	CHECK_EQ(a.tasks, 2);
}

/* Stealing: with STEAL a CPU takes from the other queue, not without. */
static void test_steal(void)
{
	struct megpu_task t[20];
	struct megpu_tq_agent a;
	struct megpu_taskq q[2];
	struct work w;

	arena_reset();
	agent_init(&a, 7);
	work_init(&w, 20);
	queue_new(&q[0], 32, MEGPU_TQ_F_CLOSED, 0, 4);
	queue_new(&q[1], 32, 0, 0, 4);
	for (int i = 0; i < 20; i++)
		t[i] = task(&w, i, MEGPU_TQ_AFF_ANY);
	megpu_taskq_push(&q[1], &a, t, 20);
	megpu_taskq_close(&q[1]);
	CHECK_EQ(megpu_taskq_dequeue(&a, q, 2, 0, 0), 0);
	CHECK_EQ(a.tasks, 0);
	CHECK_EQ(megpu_taskq_dequeue(&a, q, 2, 0, MEGPU_DEQ_STEAL), 0);
	CHECK_EQ(a.tasks, 20);
	CHECK_EQ(a.steals, 5);
	CHECK_EQ(megpu_taskq_read(&q[1], MEGPU_TQ_HDR_CPU_STEALS), 5);
}

/*
 * Threads dequeuing at once from 2 queues with stealing. Returns the
 * tasks not run exactly once; checks contiguous batches when @check.
 */
static unsigned int race(unsigned int threads, uint32_t n, uint32_t qflags,
			 bool nonatomic, bool check)
{
	struct megpu_tq_agent agents[8];
	struct megpu_task *t = calloc(n, sizeof(*t));
	struct megpu_taskq q[2];
	unsigned int bad = 0;
	uint64_t total = 0;
	struct work w;

	arena_reset();
	work_init(&w, n);
	queue_new(&q[0], 32768, qflags, 0, 2);
	queue_new(&q[1], 32768, qflags, 0, 2);
	for (unsigned int i = 0; i < threads; i++) {
		agent_init(&agents[i], 1 + i);
		agents[i].nonatomic = nonatomic;
		if (race_driver) {
			agents[i].sleep = fake_sleep;
			agents[i].notify = fake_notify;
			agents[i].notify_priv = race_driver;
		}
	}
	for (uint32_t i = 0; i < n; i++)
		t[i] = task(&w, i, MEGPU_TQ_AFF_ANY);
	megpu_taskq_push(&q[0], &agents[0], t, n - n / 8);
	megpu_taskq_push(&q[1], &agents[0], t + n - n / 8, n / 8);
	megpu_taskq_close(&q[0]);
	megpu_taskq_close(&q[1]);
	CHECK_EQ(megpu_taskq_threads(agents, threads, q, 2, MEGPU_DEQ_STEAL),
		 0);
	/* per (runner, batch): first and last task, count */
	uint32_t *lo = calloc(8 * (n + 1), 4), *hi = calloc(8 * (n + 1), 4);
	uint32_t *cnt = calloc(8 * (n + 1), 4);

	for (uint32_t i = 0; i < n; i++) {
		uint32_t by = note(&w, i, MEGPU_TQ_NOTE_BY);
		uint32_t b = note(&w, i, MEGPU_TQ_NOTE_BATCH);
		size_t k;

		if (note(&w, i, MEGPU_TQ_NOTE_DONE) != 1 || elem(&w, i) != 1) {
			bad++;
			continue;
		}
		if (by < 1 || by > threads || b > n) {
			bad++;
			continue;
		}
		k = (size_t)(by - 1) * (n + 1) + b;
		if (!cnt[k]++)
			lo[k] = i;
		hi[k] = i;
	}
	if (check) {
		for (size_t k = 0; k < 8 * (size_t)(n + 1); k++) {
			if (!cnt[k])
				continue;
			/* contiguous FIFO ranges of at most the CPU batch */
			CHECK(cnt[k] <= 2);
			CHECK_EQ(hi[k] - lo[k] + 1, cnt[k]);
		}
	}
	free(lo);
	free(hi);
	free(cnt);
	race_sleeps = race_polled = 0;
	for (unsigned int i = 0; i < threads; i++) {
		total += agents[i].tasks;
		race_sleeps += agents[i].event_sleeps;
		race_polled += agents[i].event_polled;
	}
	/* the queues count what the agents did */
	CHECK_EQ(megpu_taskq_read(&q[0], MEGPU_TQ_HDR_EVENT_SLEEPS) +
		 megpu_taskq_read(&q[1], MEGPU_TQ_HDR_EVENT_SLEEPS),
		 race_sleeps);
	CHECK_EQ(megpu_taskq_read(&q[0], MEGPU_TQ_HDR_EVENT_POLLED) +
		 megpu_taskq_read(&q[1], MEGPU_TQ_HDR_EVENT_POLLED),
		 race_polled);
	if (check) {
		CHECK_EQ(total, n);
		CHECK_EQ(megpu_taskq_read(&q[0], MEGPU_TQ_HDR_DONE) +
			 megpu_taskq_read(&q[1], MEGPU_TQ_HDR_DONE), n);
		CHECK_EQ(megpu_taskq_read(&q[0], MEGPU_TQ_HDR_LOCK), 0);
		CHECK_EQ(megpu_taskq_read(&q[0], MEGPU_TQ_HDR_WAITERS), 0);
		CHECK_EQ(megpu_taskq_read(&q[0], MEGPU_TQ_HDR_CPU_WAITERS), 0);
	}
	free(t);
	return bad;
}

/* GUIDED: a CPU take is at most half of what the queue holds. */
static void test_guided(void)
{
	static const int want[] = { 10, 5, 2, 1, 1, 1 };
	struct megpu_task t[20], out[MEGPU_TQ_MAX_BATCH];
	struct megpu_tq_agent a;
	struct megpu_taskq q;
	struct work w;
	uint32_t first;

	fresh_tasks(&a, 3, &w, t, 20);
	queue_new(&q, 64, MEGPU_TQ_F_GUIDED, 64, 16);
	CHECK_EQ(megpu_taskq_push(&q, &a, t, 20), 20);
	for (unsigned int b = 0; b < sizeof(want) / sizeof(want[0]); b++)
		CHECK_EQ(megpu_taskq_take(&q, &a, out, &first), want[b]);
	CHECK_EQ(megpu_taskq_take(&q, &a, out, &first), 0);

	/* without GUIDED: full CPU batches */
	queue_new(&q, 64, 0, 64, 16);
	CHECK_EQ(megpu_taskq_push(&q, &a, t, 20), 20);
	CHECK_EQ(megpu_taskq_take(&q, &a, out, &first), 16);
	CHECK_EQ(megpu_taskq_take(&q, &a, out, &first), 4);
}

/*
 * A queue still open, holding only a task an engine must take: a CPU
 * dequeuer waits for more (as long as it takes; ONCE: one look), or
 * gives up after give_up_ns with -ETIMEDOUT, the task untouched.
 */
static void test_give_up(void)
{
	struct megpu_tq_agent a;
	struct megpu_taskq q;
	struct megpu_task t;
	struct work w;

	arena_reset();
	agent_init(&a, 5);
	work_init(&w, 1);
	queue_new(&q, 64, 0, 4, 1);
	t = task(&w, 0, MEGPU_TQ_AFF_REQUIRE_GPU);
	CHECK_EQ(megpu_taskq_push(&q, &a, &t, 1), 1);
	CHECK_EQ(megpu_taskq_dequeue(&a, &q, 1, 0, MEGPU_DEQ_ONCE), 0);
	a.give_up_ns = 20000000;	/* 20 ms */
	CHECK_EQ(megpu_taskq_dequeue(&a, &q, 1, 0, 0), -ETIMEDOUT);
	CHECK_EQ(a.tasks, 0);
	CHECK_EQ(note(&w, 0, MEGPU_TQ_NOTE_DONE), 0);
	CHECK_EQ(elem(&w, 0), 0);
	CHECK_EQ(megpu_taskq_read(&q, MEGPU_TQ_HDR_HEAD), 0);

	/* a lock word a stopped holder never released: push gives up */
	*(uint32_t *)((uint8_t *)q.mem + MEGPU_TQ_HDR_LOCK) =
		MEGPU_TQ_OWNER_ENGINE(1);
	CHECK_EQ(megpu_taskq_push(&q, &a, &t, 1), -ETIMEDOUT);
	CHECK_EQ(megpu_taskq_read(&q, MEGPU_TQ_HDR_TAIL), 1);
}

static void test_threads_exactly_once(void)
{
	CHECK_EQ(race(4, MAX_TASKS, 0, false, true), 0);
}

/*
 * EVENT mode is event-driven: sleepers get in because a release woke
 * them (at most one take in ten, and one when there are few sleeps, is
 * let in by the 100 ms safety poll instead), with the lock word's futex
 * and with the driver's release count (a stand-in here).
 */
static void event_race(struct fake_driver *d, uint32_t n)
{
	race_driver = d;
	CHECK_EQ(race(4, n, MEGPU_TQ_F_EVENT, false, true), 0);
	race_driver = NULL;
	printf("# EVENT mode%s: %llu sleeps, %llu let in by the safety poll\n",
	       d ? (d->drop ? ", notifications dropped" : ", driver sleeps") :
	       ", futexes", (unsigned long long)race_sleeps,
	       (unsigned long long)race_polled);
}

static void test_threads_exactly_once_event(void)
{
	struct fake_driver d = { 0 };

	event_race(NULL, MAX_TASKS);
	CHECK(race_polled * 10 <= race_sleeps + 9);
	event_race(&d, MAX_TASKS);
	CHECK(race_polled * 10 <= race_sleeps + 9);
}

struct held_run {
	struct megpu_tq_agent *agents;
	struct megpu_taskq *q;
	int ret;
};

static void *held_threads(void *arg)
{
	struct held_run *h = arg;

	h->ret = megpu_taskq_threads(h->agents, 4, h->q, 1, 0);
	return NULL;
}

/*
 * Four threads asleep on a lock the test holds, then one release that
 * notifies (or, @d->drop, whose notification is lost): the takes the
 * safety poll let in.
 */
static uint64_t held_release(struct fake_driver *d)
{
	enum { N = 64 };
	struct megpu_task *t = calloc(N, sizeof(*t));
	struct megpu_tq_agent agents[4];
	struct megpu_taskq q;
	struct held_run h = { agents, &q, -1 };
	uint64_t polled = 0;
	pthread_t th;
	uint32_t *lock;
	struct work w;

	arena_reset();
	work_init(&w, N);
	queue_new(&q, 256, MEGPU_TQ_F_EVENT, 0, 2);
	for (unsigned int i = 0; i < 4; i++) {
		agent_init(&agents[i], 1 + i);
		agents[i].sleep = fake_sleep;
		agents[i].notify = fake_notify;
		agents[i].notify_priv = d;
	}
	for (uint32_t i = 0; i < N; i++)
		t[i] = task(&w, i, MEGPU_TQ_AFF_ANY);
	CHECK_EQ(megpu_taskq_push(&q, &agents[0], t, N), N);
	megpu_taskq_close(&q);
	lock = (uint32_t *)(q.mem + MEGPU_TQ_HDR_LOCK);
	__atomic_store_n(lock, 99, __ATOMIC_SEQ_CST);
	CHECK_EQ(pthread_create(&th, NULL, held_threads, &h), 0);
	for (int ms = 0; ms < 10000 &&
	     megpu_taskq_read(&q, MEGPU_TQ_HDR_WAITERS) < 4; ms++)
		usleep(1000);
	CHECK_EQ(megpu_taskq_read(&q, MEGPU_TQ_HDR_WAITERS), 4);
	usleep(10000);
	/* the release a CPU dequeuer makes: 0, then notify */
	__atomic_exchange_n(lock, 0, __ATOMIC_SEQ_CST);
	fake_notify(d);
	pthread_join(th, NULL);
	CHECK_EQ(h.ret, 0);
	CHECK_EQ(megpu_taskq_read(&q, MEGPU_TQ_HDR_DONE), N);
	CHECK(megpu_taskq_read(&q, MEGPU_TQ_HDR_EVENT_SLEEPS) >= 4);
	for (unsigned int i = 0; i < 4; i++)
		polled += agents[i].event_polled;
	CHECK_EQ(megpu_taskq_read(&q, MEGPU_TQ_HDR_EVENT_POLLED), polled);
	free(t);
	return polled;
}

/*
 * A release wakes every sleeper; the negative control (notifications
 * dropped) is caught by the same count.
 */
static void test_threads_event_no_notify_caught(void)
{
	struct fake_driver d = { 0 };

	CHECK_EQ(held_release(&d), 0);
	d.drop = true;
	CHECK(held_release(&d) > 0);
}

/*
 * The take rules of megpu_hw_taskq.h, which the device's DEQUEUE, the
 * driver's dequeuer and libmegpu's CPU threads all call: every affinity,
 * code, queue mode, batch position and event state on both sides,
 * checked against the seed's statements one by one.
 */
static void test_take_rules(void)
{
	/* the code a side names: none, a kernel it runs, one it does not,
	 * a wave program */
	enum { NONE, RUNS, NOT_RUN, PROG, NCODES };
	static const uint32_t video_kernels = MEGPU_BIT(MEGPU_KERNEL_CHECKSUM);
	unsigned int checked = 0;

	for (int side = 0; side < 2; side++)
	for (uint32_t aff = 0; aff < MEGPU_TQ_AFF_COUNT + 1; aff++)
	for (int code = 0; code < NCODES; code++)
	for (int other = 0; other < 2; other++)	/* other side has code */
	for (int strict = 0; strict < 2; strict++)
	for (int programs = 0; programs < 2; programs++)
	for (unsigned int n = 0; n < 2; n++)
	for (int ev = 0; ev < 2; ev++) {
		int gpu = side == MEGPU_TQ_SIDE_GPU;
		uint32_t mine, theirs, qflags = strict ? MEGPU_TQ_F_STRICT : 0;
		uint8_t d[MEGPU_TQ_DESC_SIZE];
		struct megpu_task t = {
			.range_x = 1, .range_y = 1, .group_x = 1,
			.group_y = 1, .affinity = aff,
		};
		int valid, may, step, other_hint, own_req, others_req;

		mine = code == NONE ? MEGPU_TQ_NONE :
		       code == RUNS ? MEGPU_KERNEL_CHECKSUM :
		       code == NOT_RUN ? MEGPU_KERNEL_VADD :
		       MEGPU_KERNEL_PROGRAM;
		theirs = !other ? MEGPU_TQ_NONE :
			 code == PROG ? MEGPU_KERNEL_PROGRAM :
			 MEGPU_KERNEL_INCREMENT;
		if (code == PROG)
			t.arg_size = MEGPU_PARGS_SIZE;
		t.gpu_kernel = gpu ? mine : theirs;
		t.cpu_fn = gpu ? theirs : mine;
		megpu_task_pack(d, &t);
		valid = megpu_tq_desc_valid(d);
		/* the engine runs CHECKSUM only (a video engine's kernels) */
		may = megpu_tq_may_run(d, side, qflags, video_kernels,
				       programs);
		step = megpu_tq_batch_step(d, n, side, qflags, video_kernels,
					   programs, ev);
		other_hint = aff == (gpu ? MEGPU_TQ_AFF_HINT_CPU :
				     MEGPU_TQ_AFF_HINT_GPU);
		own_req = aff == (gpu ? MEGPU_TQ_AFF_REQUIRE_GPU :
				  MEGPU_TQ_AFF_REQUIRE_CPU);
		others_req = aff == (gpu ? MEGPU_TQ_AFF_REQUIRE_CPU :
				     MEGPU_TQ_AFF_REQUIRE_GPU);
		checked++;

		/* a malformed task: first, alone, by whoever looks */
		if (!valid) {
			CHECK_EQ(step, n ? MEGPU_TQ_STOP : MEGPU_TQ_TAKE_LAST);
			continue;
		}
		/* no code for this side: never */
		if (code == NONE)
			CHECK(!may);
		/* an engine runs only its kernels; a CPU runs every one */
		if (code == NOT_RUN)
			CHECK_EQ(may, !gpu && !others_req &&
				 !(strict && aff == (gpu ?
				   MEGPU_TQ_AFF_PREFER_CPU : MEGPU_TQ_AFF_PREFER_GPU)));
		/* programs where the side runs them */
		if (code == PROG && gpu && !programs)
			CHECK(!may);
		/* REQUIRE: never the other side */
		if (others_req)
			CHECK(!may);
		/* PREFER the other side: not in a STRICT queue, else yes */
		if (aff == (gpu ? MEGPU_TQ_AFF_PREFER_CPU :
			    MEGPU_TQ_AFF_PREFER_GPU) &&
		    (code == RUNS || (code == PROG && (programs || !gpu))))
			CHECK_EQ(may, !strict);
		/* ANY, hints and its own REQUIRE/PREFER: runnable code runs */
		if ((aff == MEGPU_TQ_AFF_ANY || own_req || other_hint ||
		     aff == (gpu ? MEGPU_TQ_AFF_HINT_GPU :
			     MEGPU_TQ_AFF_HINT_CPU) ||
		     aff == (gpu ? MEGPU_TQ_AFF_PREFER_GPU :
			     MEGPU_TQ_AFF_PREFER_CPU)) &&
		    (code == RUNS || (code == PROG && (programs || !gpu))))
			CHECK(may);
		/* a batch: what may not run or waits for its event ends it */
		if (!may || !ev)
			CHECK_EQ(step, MEGPU_TQ_STOP);
		/* hinted for the other side: only alone */
		else if (other_hint)
			CHECK_EQ(step, n ? MEGPU_TQ_STOP : MEGPU_TQ_TAKE_LAST);
		else
			CHECK_EQ(step, MEGPU_TQ_TAKE);
	}
	CHECK_EQ(checked, 2u * (MEGPU_TQ_AFF_COUNT + 1) * 4 * 2 * 2 * 2 * 2 * 2);
}

static void test_threads_nonatomic_caught(void)
{
	unsigned int bad = race(4, 4000, 0, true, false);

	printf("# non-atomic lock: %u of 4000 tasks not run exactly once\n",
	       bad);
	CHECK(bad > 0);
}

int main(void)
{
	arena = aligned_alloc(4096, ARENA);
	region = (struct megpu_tq_region) {
		.va = VA_BASE, .cpu = arena, .size = ARENA,
	};
	TEST_RUN(test_abi);
	TEST_RUN(test_take_rules);
	TEST_RUN(test_fifo_batches);
	TEST_RUN(test_affinity);
	TEST_RUN(test_hints);
	TEST_RUN(test_run);
	TEST_RUN(test_malformed);
	TEST_RUN(test_event_gate);
	TEST_RUN(test_steal);
	TEST_RUN(test_give_up);
	TEST_RUN(test_guided);
	TEST_RUN(test_threads_exactly_once);
	TEST_RUN(test_threads_exactly_once_event);
	TEST_RUN(test_threads_event_no_notify_caught);
	TEST_RUN(test_threads_nonatomic_caught);
	free(arena);
	return tap_done();
}
