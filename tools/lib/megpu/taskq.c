// SPDX-License-Identifier: MIT
/*
 * Task queues on the CPU side (seed 002): queue setup, producers, and
 * the CPU dequeuing module, with the same protocol and atomics as the
 * engines' DEQUEUE (Documentation/megpu-hw.rst, "Task queues"): look
 * without the lock, compare-and-swap the lock word, re-check and take a
 * contiguous run from the head, release, run, notify.
 *
 * The CPU runs a task with megpu_kernel_ref(), the CPU version of the
 * built-in kernel, on arrays it reaches through the agent's regions
 * (GPU address ranges mapped for the CPU, e.g. BO mappings). CHECKSUM
 * adds its sum atomically, as the device does, so CPU and GPU may share
 * a result word.
 *
 * Only pure memory operations and threads: the host unit tests use this
 * file without a device; a guest program passes BO mappings.
 */
#include <errno.h>
#include <limits.h>
#include <linux/futex.h>
#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "libmegpu.h"
#include "megpu_hw_taskq.h"

/* x86 and the other little-endian hosts: words are stored as they are */
#if __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "taskq.c assumes a little-endian CPU"
#endif

static uint32_t *word(const struct megpu_taskq *q, uint32_t off)
{
	return (uint32_t *)(q->mem + off);
}

static uint32_t ld32(const uint32_t *p)
{
	return __atomic_load_n(p, __ATOMIC_ACQUIRE);
}

static void add32(uint32_t *p, uint32_t v)
{
	if (v)
		__atomic_fetch_add(p, v, __ATOMIC_SEQ_CST);
}

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000ull + ts.tv_nsec;
}

static uint32_t get32(const uint8_t *p)
{
	uint32_t v;

	memcpy(&v, p, 4);
	return v;
}

static uint64_t get64(const uint8_t *p)
{
	uint64_t v;

	memcpy(&v, p, 8);
	return v;
}

void megpu_task_pack(void *dst, const struct megpu_task *t)
{
	uint8_t *d = dst;

	memset(d, 0, MEGPU_TQ_DESC_SIZE);
	memcpy(d + MEGPU_TQ_DESC_CPU_FN, &t->cpu_fn, 4);
	memcpy(d + MEGPU_TQ_DESC_GPU_KERNEL, &t->gpu_kernel, 4);
	memcpy(d + MEGPU_TQ_DESC_DATA, &t->data, 8);
	memcpy(d + MEGPU_TQ_DESC_RANGE_X, &t->range_x, 4);
	memcpy(d + MEGPU_TQ_DESC_RANGE_Y, &t->range_y, 4);
	memcpy(d + MEGPU_TQ_DESC_GROUP_X, &t->group_x, 4);
	memcpy(d + MEGPU_TQ_DESC_GROUP_Y, &t->group_y, 4);
	memcpy(d + MEGPU_TQ_DESC_NOTIFY, &t->notify, 8);
	memcpy(d + MEGPU_TQ_DESC_AFFINITY, &t->affinity, 4);
	memcpy(d + MEGPU_TQ_DESC_ARG_SIZE, &t->arg_size, 4);
	memcpy(d + MEGPU_TQ_DESC_EVENT_ADDR, &t->event_addr, 8);
	memcpy(d + MEGPU_TQ_DESC_EVENT_VALUE, &t->event_value, 8);
}

void megpu_task_unpack(const void *src, struct megpu_task *t)
{
	const uint8_t *s = src;

	t->cpu_fn = get32(s + MEGPU_TQ_DESC_CPU_FN);
	t->gpu_kernel = get32(s + MEGPU_TQ_DESC_GPU_KERNEL);
	t->data = get64(s + MEGPU_TQ_DESC_DATA);
	t->range_x = get32(s + MEGPU_TQ_DESC_RANGE_X);
	t->range_y = get32(s + MEGPU_TQ_DESC_RANGE_Y);
	t->group_x = get32(s + MEGPU_TQ_DESC_GROUP_X);
	t->group_y = get32(s + MEGPU_TQ_DESC_GROUP_Y);
	t->notify = get64(s + MEGPU_TQ_DESC_NOTIFY);
	t->affinity = get32(s + MEGPU_TQ_DESC_AFFINITY);
	t->arg_size = get32(s + MEGPU_TQ_DESC_ARG_SIZE);
	t->event_addr = get64(s + MEGPU_TQ_DESC_EVENT_ADDR);
	t->event_value = get64(s + MEGPU_TQ_DESC_EVENT_VALUE);
}

/* The contract's rules (megpu_tq_desc_valid), as every dequeuer has them. */
bool megpu_task_valid(const struct megpu_task *t)
{
	uint8_t d[MEGPU_TQ_DESC_SIZE];

	megpu_task_pack(d, t);
	return megpu_tq_desc_valid(d);
}

/* The CPU's side of the take rules (megpu_hw_taskq.h). */
bool megpu_task_cpu_eligible(const struct megpu_task *t, uint32_t qflags)
{
	uint8_t d[MEGPU_TQ_DESC_SIZE];

	megpu_task_pack(d, t);
	return megpu_tq_may_run(d, MEGPU_TQ_SIDE_CPU, qflags, 0, 0);
}

int megpu_taskq_init(struct megpu_taskq *q, void *mem, uint64_t va,
		     uint32_t slots, uint32_t flags, uint32_t batch_gpu,
		     uint32_t batch_cpu)
{
	if (!slots || slots > MEGPU_TQ_MAX_SLOTS || (slots & (slots - 1)) ||
	    ((uintptr_t)mem & (MEGPU_TQ_ALIGN - 1)) ||
	    (va & (MEGPU_TQ_ALIGN - 1)) || batch_gpu > MEGPU_TQ_MAX_BATCH ||
	    batch_cpu > MEGPU_TQ_MAX_BATCH)
		return -EINVAL;
	q->mem = mem;
	q->va = va;
	memset(mem, 0, MEGPU_TQ_HDR_BYTES);
	*word(q, MEGPU_TQ_HDR_SIZE) = slots;
	*word(q, MEGPU_TQ_HDR_FLAGS) = flags;
	*word(q, MEGPU_TQ_HDR_BATCH_GPU) = batch_gpu;
	*word(q, MEGPU_TQ_HDR_BATCH_CPU) = batch_cpu;
	__atomic_store_n(word(q, MEGPU_TQ_HDR_MAGIC), MEGPU_TQ_MAGIC,
			 __ATOMIC_RELEASE);
	return 0;
}

uint32_t megpu_taskq_read(const struct megpu_taskq *q, uint32_t off)
{
	return ld32(word(q, off));
}

/* size, or 0 for a malformed header */
static uint32_t q_size(const struct megpu_taskq *q)
{
	uint32_t size = ld32(word(q, MEGPU_TQ_HDR_SIZE));

	if (ld32(word(q, MEGPU_TQ_HDR_MAGIC)) != MEGPU_TQ_MAGIC || !size ||
	    size > MEGPU_TQ_MAX_SLOTS || (size & (size - 1)))
		return 0;
	return size;
}

static uint8_t *q_slot(const struct megpu_taskq *q, uint32_t size,
		       uint32_t idx)
{
	return q->mem + MEGPU_TQ_HDR_BYTES +
	       (size_t)(idx & (size - 1)) * MEGPU_TQ_DESC_SIZE;
}

static long futex(uint32_t *uaddr, int op, uint32_t val,
		  const struct timespec *ts)
{
	return syscall(SYS_futex, uaddr, op, val, ts, NULL, 0);
}

/*
 * EVENT mode: count in WAITERS, look at the lock again and sleep while
 * it is taken, at most the safety poll. With a sleep callback the thread
 * sleeps in the driver on the device's release count, read before the
 * look (an event count: no release after the look is missed), so that
 * engines' releases wake it too (CPU_WAITERS asks them to); else on a
 * futex on the lock word, which only CPU releases wake. True when the
 * sleep ended by the safety poll rather than a release.
 */
static bool q_sleep(struct megpu_taskq *q, struct megpu_tq_agent *a)
{
	uint32_t *lock = word(q, MEGPU_TQ_HDR_LOCK), seq = 0, cur;
	bool in_driver = a->sleep && !a->sleep(a->notify_priv, &seq, 0);
	bool polled = false;

	add32(word(q, MEGPU_TQ_HDR_WAITERS), 1);
	if (in_driver)
		add32(word(q, MEGPU_TQ_HDR_CPU_WAITERS), 1);
	cur = ld32(lock);
	if (cur) {
		int slept = -EBUSY;

		a->event_sleeps++;
		add32(word(q, MEGPU_TQ_HDR_EVENT_SLEEPS), 1);
		/* -EBUSY: the file has the most sleepers the driver takes */
		if (in_driver)
			slept = a->sleep(a->notify_priv, &seq,
					 MEGPU_TQ_EVENT_POLL_MS * 1000000ull);
		if (slept != -EBUSY) {
			polled = slept == -ETIME;
		} else {
			struct timespec ts = {
				MEGPU_TQ_EVENT_POLL_MS / 1000,
				(MEGPU_TQ_EVENT_POLL_MS % 1000) * 1000000l,
			};

			polled = futex(lock, FUTEX_WAIT, cur, &ts) &&
				 errno == ETIMEDOUT;
		}
	}
	if (in_driver)
		add32(word(q, MEGPU_TQ_HDR_CPU_WAITERS), -1u);
	add32(word(q, MEGPU_TQ_HDR_WAITERS), -1u);
	return polled;
}

/*
 * The lock: a compare-and-swap 0 -> owner, as the engines do. In EVENT
 * mode a waiter sleeps until a release (q_sleep()).
 */
static int q_lock(struct megpu_taskq *q, struct megpu_tq_agent *a)
{
	uint32_t *lock = word(q, MEGPU_TQ_HDR_LOCK);
	bool event = ld32(word(q, MEGPU_TQ_HDR_FLAGS)) & MEGPU_TQ_F_EVENT;
	uint64_t t0 = a->give_up_ns ? now_ns() : 0;
	bool polled = false;

	for (;;) {
		uint32_t cur = 0;

		if (a->nonatomic) {
			/* the negative control: a window between test and set */
			if (!ld32(lock)) {
				usleep(20);
				__atomic_store_n(lock, a->owner, __ATOMIC_SEQ_CST);
				return 0;
			}
		} else if (__atomic_compare_exchange_n(lock, &cur, a->owner,
						       false, __ATOMIC_SEQ_CST,
						       __ATOMIC_SEQ_CST)) {
			/* the safety poll, not a release, let it in */
			if (polled) {
				a->event_polled++;
				add32(word(q, MEGPU_TQ_HDR_EVENT_POLLED), 1);
			}
			return 0;
		}
		/* a holder that never lets go (it was stopped) */
		if (t0 && now_ns() - t0 > a->give_up_ns)
			return -ETIMEDOUT;
		a->lock_retries++;
		add32(word(q, MEGPU_TQ_HDR_LOCK_RETRIES), 1);
		if (!event) {
			sched_yield();
			continue;
		}
		polled = q_sleep(q, a);
	}
}

static void q_unlock(struct megpu_taskq *q, struct megpu_tq_agent *a)
{
	uint32_t *lock = word(q, MEGPU_TQ_HDR_LOCK);

	/* a full barrier: the release before the read of WAITERS */
	__atomic_exchange_n(lock, 0, __ATOMIC_SEQ_CST);
	if ((ld32(word(q, MEGPU_TQ_HDR_FLAGS)) & MEGPU_TQ_F_EVENT) &&
	    ld32(word(q, MEGPU_TQ_HDR_WAITERS))) {
		futex(lock, FUTEX_WAKE, INT_MAX, NULL);
		if (a->notify)
			a->notify(a->notify_priv);
	}
}

int megpu_taskq_push(struct megpu_taskq *q, struct megpu_tq_agent *a,
		     const struct megpu_task *t, unsigned int n)
{
	uint32_t size = q_size(q), head, tail, room, i;

	int ret;

	if (!size)
		return -EBADMSG;
	ret = q_lock(q, a);
	if (ret)
		return ret;
	head = ld32(word(q, MEGPU_TQ_HDR_HEAD));
	tail = ld32(word(q, MEGPU_TQ_HDR_TAIL));
	room = tail - head > size ? 0 : size - (tail - head);
	if (n > room)
		n = room;
	for (i = 0; i < n; i++)
		megpu_task_pack(q_slot(q, size, tail + i), &t[i]);
	__atomic_store_n(word(q, MEGPU_TQ_HDR_TAIL), tail + n,
			 __ATOMIC_RELEASE);
	q_unlock(q, a);
	return n;
}

void megpu_taskq_close(struct megpu_taskq *q)
{
	__atomic_fetch_or(word(q, MEGPU_TQ_HDR_FLAGS), MEGPU_TQ_F_CLOSED,
			  __ATOMIC_SEQ_CST);
}

/* The CPU address of GPU range [va, va + len), or NULL. */
void *megpu_tq_xlate(const struct megpu_tq_agent *a, uint64_t va,
		     uint64_t len)
{
	for (unsigned int i = 0; i < a->nregions; i++) {
		const struct megpu_tq_region *r = &a->regions[i];

		if (va >= r->va && len <= r->size && va - r->va <= r->size - len)
			return (uint8_t *)r->cpu + (va - r->va);
	}
	return NULL;
}

enum { LOOK_EMPTY, LOOK_NONE, LOOK_ELIGIBLE, LOOK_WAIT };

/* Has @t's event happened (none: yes)? An unmapped word: not yet. */
static bool cpu_event_reached(const struct megpu_tq_agent *a,
			      const struct megpu_task *t)
{
	const uint64_t *ev;

	if (!t->event_addr)
		return true;
	ev = megpu_tq_xlate(a, t->event_addr, 8);
	return ev && (int64_t)(__atomic_load_n(ev, __ATOMIC_ACQUIRE) -
			       t->event_value) >= 0;
}

/*
 * May this CPU take @t now? Malformed tasks are taken (alone) so the
 * queue goes on; an event not reached yet, or unreadable, is LOOK_WAIT.
 */
static int cpu_look_task(const struct megpu_tq_agent *a,
			 const struct megpu_task *t, uint32_t qflags)
{
	if (!megpu_task_valid(t))
		return LOOK_ELIGIBLE;
	if (!megpu_task_cpu_eligible(t, qflags))
		return LOOK_NONE;
	return cpu_event_reached(a, t) ? LOOK_ELIGIBLE : LOOK_WAIT;
}

static int q_look(struct megpu_taskq *q, const struct megpu_tq_agent *a,
		  uint32_t size)
{
	uint32_t head = ld32(word(q, MEGPU_TQ_HDR_HEAD));
	uint32_t tail = ld32(word(q, MEGPU_TQ_HDR_TAIL));
	struct megpu_task t;

	if (tail - head > size)
		return -EBADMSG;
	if (head == tail)
		return LOOK_EMPTY;
	megpu_task_unpack(q_slot(q, size, head), &t);
	return cpu_look_task(a, &t, ld32(word(q, MEGPU_TQ_HDR_FLAGS)));
}

int megpu_taskq_take(struct megpu_taskq *q, struct megpu_tq_agent *a,
		     struct megpu_task *out, uint32_t *first)
{
	uint32_t size = q_size(q), batch, head, tail, flags, n = 0;
	bool unblocks = false;
	int look, ret;

	if (!size)
		return -EBADMSG;
	batch = ld32(word(q, MEGPU_TQ_HDR_BATCH_CPU));
	if (!batch)
		batch = MEGPU_TQ_DEF_BATCH_CPU;
	if (batch > MEGPU_TQ_MAX_BATCH)
		return -EBADMSG;
	look = q_look(q, a, size);
	if (look < 0)
		return look;
	if (look != LOOK_ELIGIBLE) {
		/* FIG. 6: none eligible, end; the lock word is not written */
		if (look != LOOK_EMPTY)
			add32(word(q, MEGPU_TQ_HDR_NONE_ELIGIBLE), 1);
		return 0;
	}
	ret = q_lock(q, a);
	if (ret)
		return ret;
	head = ld32(word(q, MEGPU_TQ_HDR_HEAD));
	tail = ld32(word(q, MEGPU_TQ_HDR_TAIL));
	flags = ld32(word(q, MEGPU_TQ_HDR_FLAGS));
	if (tail - head > size) {
		q_unlock(q, a);
		return -EBADMSG;
	}
	if (a->nonatomic)
		usleep(50);	/* hold it long enough for holders to overlap */
	batch = megpu_tq_batch_limit(flags, batch, tail - head);
	/* again under the lock: someone may have taken them meanwhile */
	while (n < batch && head + n != tail) {
		struct megpu_task *t = &out[n];
		const uint8_t *d = q_slot(q, size, head + n);
		int step;

		megpu_task_unpack(d, t);
		/* the event word of a well-formed task only (8-aligned) */
		step = megpu_tq_batch_step(d, n, MEGPU_TQ_SIDE_CPU, flags, 0, 0,
					   !megpu_tq_desc_valid(d) ||
					   cpu_event_reached(a, t));
		if (step == MEGPU_TQ_STOP)
			break;
		n++;
		if (step == MEGPU_TQ_TAKE_LAST)
			break;
		/* a task engines could not take may be what holds them up */
		if (t->affinity == MEGPU_TQ_AFF_REQUIRE_CPU ||
		    t->gpu_kernel == MEGPU_TQ_NONE ||
		    (t->affinity == MEGPU_TQ_AFF_PREFER_CPU &&
		     (flags & MEGPU_TQ_F_STRICT)))
			unblocks = true;
	}
	if (n)
		__atomic_store_n(word(q, MEGPU_TQ_HDR_HEAD), head + n,
				 __ATOMIC_RELEASE);
	q_unlock(q, a);
	if (!n)
		add32(word(q, MEGPU_TQ_HDR_NONE_ELIGIBLE), 1);
	else if (unblocks && a->notify)
		a->notify(a->notify_priv);
	*first = head;
	return n;
}

/* Which arrays each kernel uses, as the device checks them. */
static const uint8_t kernel_ptrs[MEGPU_KERNEL_COUNT] = {
	[MEGPU_KERNEL_FILL] = 0x1,
	[MEGPU_KERNEL_COPY] = 0x3,
	[MEGPU_KERNEL_VADD] = 0x7,
	[MEGPU_KERNEL_SAXPY] = 0x3,
	[MEGPU_KERNEL_CHECKSUM] = 0x1,
	[MEGPU_KERNEL_INCREMENT] = 0x1,
	[MEGPU_KERNEL_BLUR3X3] = 0x3,
	[MEGPU_KERNEL_SEPIA] = 0x3,
};

uint32_t megpu_taskq_run(struct megpu_tq_agent *a, const struct megpu_task *t)
{
	uint32_t *ptr[4] = { NULL }, n, sum = 0, i;
	uint64_t items, bytes;
	struct megpu_kargs k;
	const void *kb;
	unsigned int fn = t->cpu_fn;

	if (!megpu_task_valid(t))
		return MEGPU_FAULT_TQ_BAD_TASK;
	/* the same program an engine would run (wave_cpu.c) */
	if (fn == MEGPU_KERNEL_PROGRAM)
		return megpu_program_run_cpu(a, t->data, t->range_x,
					     t->range_y, t->group_x,
					     t->group_y);
	if (fn >= MEGPU_KERNEL_COUNT)
		return MEGPU_FAULT_UNSUPPORTED;
	kb = megpu_tq_xlate(a, t->data, MEGPU_KARGS_SIZE);
	if (!kb)
		return MEGPU_FAULT_MMU;
	megpu_kargs_unpack(kb, &k);
	items = (uint64_t)t->range_x * t->range_y;
	n = items < k.n ? items : k.n;
	if (fn == MEGPU_KERNEL_BLUR3X3 || fn == MEGPU_KERNEL_SEPIA) {
		if (k.param[2] < k.param[0])
			return MEGPU_FAULT_BAD_ARG;
		if (!k.param[0] || !k.param[1])
			return 0;
		bytes = ((uint64_t)(k.param[1] - 1) * k.param[2] + k.param[0]) * 4;
	} else {
		bytes = (uint64_t)n * 4;
	}
	for (i = 0; i < 4; i++) {
		if (!(kernel_ptrs[fn] & (1u << i)))
			continue;
		if (k.ptr[i] & 3)
			return MEGPU_FAULT_BAD_ARG;
		ptr[i] = megpu_tq_xlate(a, k.ptr[i], bytes ? bytes : 1);
		if (!ptr[i])
			return MEGPU_FAULT_MMU;
	}
	if (fn == MEGPU_KERNEL_CHECKSUM) {
		/* the sum with one atomic add, as a work-group does */
		ptr[1] = megpu_tq_xlate(a, k.ptr[1], 4);
		if (!ptr[1] || (k.ptr[1] & 3))
			return ptr[1] ? MEGPU_FAULT_BAD_ARG : MEGPU_FAULT_MMU;
		for (i = 0; i < n; i++)
			sum += ptr[0][i];
		add32(ptr[1], sum);
		return 0;
	}
	return megpu_kernel_ref(fn, ptr, n, k.param) ? MEGPU_FAULT_BAD_ARG : 0;
}

void megpu_taskq_notify(struct megpu_tq_agent *a, const struct megpu_task *t,
			uint32_t batch, uint32_t status)
{
	uint32_t *note;

	if (!t->notify)
		return;
	note = megpu_tq_xlate(a, t->notify, MEGPU_TQ_NOTE_SIZE);
	if (!note)
		return;
	__atomic_store_n(&note[MEGPU_TQ_NOTE_BY / 4], a->owner,
			 __ATOMIC_RELAXED);
	__atomic_store_n(&note[MEGPU_TQ_NOTE_BATCH / 4], batch,
			 __ATOMIC_RELAXED);
	__atomic_store_n(&note[MEGPU_TQ_NOTE_STATUS / 4], status,
			 __ATOMIC_RELAXED);
	add32(&note[MEGPU_TQ_NOTE_DONE / 4], 1);
}

/* Could this CPU ever take a task of closed queue @q again? */
static bool q_closed_done(struct megpu_taskq *q, struct megpu_tq_agent *a,
			  uint32_t size)
{
	uint32_t head = ld32(word(q, MEGPU_TQ_HDR_HEAD));
	uint32_t tail = ld32(word(q, MEGPU_TQ_HDR_TAIL));
	uint32_t flags = ld32(word(q, MEGPU_TQ_HDR_FLAGS));
	struct megpu_task t;

	for (uint32_t i = head; i != tail && tail - head <= size; i++) {
		megpu_task_unpack(q_slot(q, size, i), &t);
		if (t.event_addr || cpu_look_task(a, &t, flags) != LOOK_NONE)
			return false;
	}
	return true;
}

static void run_batch(struct megpu_taskq *q, struct megpu_tq_agent *a,
		      struct megpu_task *batch, int n, bool stolen)
{
	uint64_t t0 = now_ns();
	uint32_t seq = ++a->batches;

	for (int i = 0; i < n; i++) {
		uint32_t status = megpu_taskq_run(a, &batch[i]);

		if (status)
			a->faults++;
		megpu_taskq_notify(a, &batch[i], seq, status);
	}
	a->tasks += n;
	a->steals += stolen;
	a->busy_ns += now_ns() - t0;
	add32(word(q, MEGPU_TQ_HDR_DONE), n);
	add32(word(q, MEGPU_TQ_HDR_CPU_TASKS), n);
	add32(word(q, MEGPU_TQ_HDR_CPU_BATCHES), 1);
	add32(word(q, MEGPU_TQ_HDR_CPU_STEALS), stolen);
	/* the last task of a closed queue: the driver's dequeuer may be done */
	if ((ld32(word(q, MEGPU_TQ_HDR_FLAGS)) & MEGPU_TQ_F_CLOSED) &&
	    ld32(word(q, MEGPU_TQ_HDR_DONE)) == ld32(word(q, MEGPU_TQ_HDR_TAIL)) &&
	    a->notify)
		a->notify(a->notify_priv);
}

static void count_take(struct megpu_tq_agent *a, uint64_t ns)
{
	unsigned int b = 0;

	a->take_ns += ns;
	for (uint64_t lim = 1000; b < 5 && ns >= lim; lim *= 4)
		b++;
	a->take_hist[b]++;
}

int megpu_taskq_dequeue(struct megpu_tq_agent *a, struct megpu_taskq *qs,
			unsigned int count, unsigned int home, uint32_t flags)
{
	struct megpu_task *batch;
	uint64_t last;
	int ret = 0;

	if (!count || home >= count)
		return -EINVAL;
	batch = malloc(sizeof(*batch) * MEGPU_TQ_MAX_BATCH);
	if (!batch)
		return -ENOMEM;
	last = now_ns();
	for (;;) {
		bool got = false, all_done = true;

		for (unsigned int i = 0; i < count && !got; i++) {
			struct megpu_taskq *q = &qs[(home + i) % count];
			uint32_t first, size = q_size(q);
			uint64_t t0;
			int n;

			if (i && !(flags & MEGPU_DEQ_STEAL))
				break;
			t0 = now_ns();
			n = megpu_taskq_take(q, a, batch, &first);
			if (n > 0)
				count_take(a, now_ns() - t0);
			if (n < 0) {
				ret = n;
				goto out;
			}
			if (n) {
				run_batch(q, a, batch, n, i != 0);
				got = true;
				break;
			}
			if (!all_done)
				continue;
			/* CLOSED comes after the last TAIL: read it now */
			if (!(ld32(word(q, MEGPU_TQ_HDR_FLAGS)) &
			      MEGPU_TQ_F_CLOSED) ||
			    !q_closed_done(q, a, size))
				all_done = false;
		}
		if (got) {
			last = now_ns();
			continue;
		}
		if (all_done || (flags & MEGPU_DEQ_ONCE))
			break;
		if (a->give_up_ns && now_ns() - last > a->give_up_ns) {
			ret = -ETIMEDOUT;
			break;
		}
		usleep(50);
	}
out:
	free(batch);
	return ret;
}

struct thread_arg {
	struct megpu_tq_agent *agent;
	struct megpu_taskq *qs;
	unsigned int count, home;
	uint32_t flags;
	int ret;
};

static void *dequeue_thread(void *p)
{
	struct thread_arg *t = p;

	t->ret = megpu_taskq_dequeue(t->agent, t->qs, t->count, t->home,
				     t->flags);
	return NULL;
}

int megpu_taskq_threads(struct megpu_tq_agent *agents, unsigned int n,
			struct megpu_taskq *qs, unsigned int count,
			uint32_t flags)
{
	struct thread_arg *args = calloc(n, sizeof(*args));
	pthread_t *tids = calloc(n, sizeof(*tids));
	unsigned int started = 0;
	int ret = 0;

	if (!args || !tids) {
		ret = -ENOMEM;
		goto out;
	}
	for (; started < n; started++) {
		args[started] = (struct thread_arg) {
			.agent = &agents[started], .qs = qs, .count = count,
			.home = started % count, .flags = flags,
		};
		if (pthread_create(&tids[started], NULL, dequeue_thread,
				   &args[started])) {
			ret = -EAGAIN;
			break;
		}
	}
	for (unsigned int i = 0; i < started; i++) {
		pthread_join(tids[i], NULL);
		if (!ret)
			ret = args[i].ret;
	}
out:
	free(args);
	free(tids);
	return ret;
}
