// SPDX-License-Identifier: GPL-2.0
/* Copyright 2026 The megpu authors */
/**
 * DOC: GPU-to-CPU system calls (seed 003)
 *
 * A wave's SYSCALL takes a FREE slot of its engine's mailbox, fills it,
 * marks it ACTIVE, parks and interrupts (MISC_IRQ_SYSCALL). Here the CPU
 * side of the seed's FIG. 3: the hard interrupt handler scans every
 * ACTIVE slot of every mailbox (one interrupt may serve many calls),
 * answers the calls it runs itself (ECHO, ADD), hands the others to the
 * service of the file they belong to (DRM_IOCTL_MEGPU_SYSCALL_WAIT), and
 * for each answer writes the result, stores RETURNING and restarts the
 * caller's wave through WAVE_RESTART, once per wave per scan.
 *
 * The scan runs in the hard handler, not in the interrupt thread: it
 * only reads and writes the coherent mailboxes and one register per
 * restarted wave, and skipping the thread's wake-up takes a context
 * switch out of every call's round trip (the kernel ops are answered,
 * and a user op's service woken, straight from the interrupt). So
 * syscall_lock is a spinlock, and SYSCALL_WAIT copies the calls out to
 * userspace after dropping it. A scan wakes one service thread (the
 * waiters are exclusive); a SYSCALL_RETURN restarts the caller's wave
 * only if it was the wave's last call with the service, since the wave
 * cannot go past its SYSCALL before all its lanes have their answers.
 *
 * Mailboxes are per file, not per device: each frame points its engine at
 * its file's mailbox (SET_MAILBOX), so a client only ever sees, and can
 * only answer, its own calls, and a closed client's calls are answered
 * (-EPIPE) without looking at anybody else's. A scan looks only at the
 * mailbox of the job each engine runs (the only ones a wave can call
 * through: a DISPATCH ends before its engine goes on, and a call parks
 * its wave, so its job stays first in the ring until it is answered or
 * the engine is reset), so idle files, and files whose jobs wait behind
 * others, however many one user keeps, cost the other users' calls
 * nothing: a scan reads at most one mailbox per engine, IRQs off. A
 * mailbox lives as long as its file's jobs (the file's reference count): the device may write it
 * until the last of them is done. An engine reset drops its waves; their
 * slots are reclaimed here, so no slot leaks.
 *
 * The ISA's raw SLEEP and INTERRUPT stay disabled (WAVE_CONTROL.RAW is 0
 * after the device reset at probe): nothing here would restart a wave
 * parked by SLEEP, and an interrupt without a mailbox slot says nothing,
 * so a program that uses them faults at once instead of holding its
 * engine until the job timeout. MISC_IRQ_WAVE therefore never comes.
 */

#include <linux/bitmap.h>
#include <linux/bsearch.h>
#include <linux/dma-mapping.h>
#include <linux/moduleparam.h>
#include <linux/seq_file.h>
#include <linux/slab.h>
#include <linux/sort.h>
#include <linux/uaccess.h>
#include <drm/drm_debugfs.h>
#include <drm/drm_drv.h>
#include <drm/drm_file.h>
#include <drm/drm_print.h>
#include <drm/drm_utils.h>
#include <drm/megpu_drm.h>

#include "megpu_drv.h"
#include "megpu_hw_wave.h"

/*
 * With fewer slots than callers each call waits for a slot to come round
 * (issue 25: 64 callers took 0.54x the phased way's time with 8 slots,
 * 4x with 64). More than a work-group of 64 costs the interrupt: it
 * scans every slot of the mailbox each engine calls through, IRQs off.
 */
static unsigned int megpu_mailbox_slots = 64;
module_param_named(mailbox_slots, megpu_mailbox_slots, uint, 0644);
MODULE_PARM_DESC(mailbox_slots,
		 "slots of the mailbox of each file opened from now on (default 64)");

/* The most restarts one scan collects before it writes them. */
#define MEGPU_RESTART_BATCH	64

static bool megpu_has_waves(struct megpu_device *mdev)
{
	return mdev->caps & MEGPU_CAP_WAVES;
}

static u32 megpu_syscall_slots(struct megpu_device *mdev)
{
	if (!megpu_has_waves(mdev))
		return 0;
	return clamp(READ_ONCE(megpu_mailbox_slots), 1u,
		     (u32)MEGPU_MBOX_MAX_SLOTS);
}

static __le32 *slot_word(struct megpu_mailbox *mbox, u32 slot, u32 off)
{
	return mbox->cpu + slot * MEGPU_MBOX_SLOT_SIZE + off;
}

static u32 slot_state(struct megpu_mailbox *mbox, u32 slot)
{
	return le32_to_cpu(READ_ONCE(*slot_word(mbox, slot, MEGPU_MBOX_STATE)));
}

static u32 slot_u32(struct megpu_mailbox *mbox, u32 slot, u32 off)
{
	return le32_to_cpu(READ_ONCE(*slot_word(mbox, slot, off)));
}

static void slot_set_state(struct megpu_mailbox *mbox, u32 slot, u32 state)
{
	WRITE_ONCE(*slot_word(mbox, slot, MEGPU_MBOX_STATE),
		   cpu_to_le32(state));
}

int megpu_syscall_file_init(struct megpu_file *mfile)
{
	struct megpu_device *mdev = mfile->mdev;
	struct megpu_mailbox *mbox = &mfile->mbox;
	u32 slots = megpu_syscall_slots(mdev);

	init_waitqueue_head(&mbox->wq);
	INIT_LIST_HEAD(&mbox->node);
	mbox->ctx = mfile->vm->ctx_id;
	if (!slots)
		return 0;
	/* pinned for the file's life: charged, or the open fails */
	if (megpu_pin_charge(mfile, PAGE_ALIGN(slots * MEGPU_MBOX_SLOT_SIZE)))
		return -ENOMEM;
	/* the size megpu_syscall_file_fini() frees, also on failure here */
	mbox->slots = slots;
	mbox->pending = bitmap_zalloc(slots, GFP_KERNEL);
	mbox->fetched = bitmap_zalloc(slots, GFP_KERNEL);
	/* zeroed: every slot FREE */
	mbox->cpu = dma_alloc_coherent(mdev->drm.dev,
				       slots * MEGPU_MBOX_SLOT_SIZE,
				       &mbox->dma, GFP_KERNEL);
	if (!mbox->pending || !mbox->fetched || !mbox->cpu) {
		megpu_syscall_file_fini(mfile);
		return -ENOMEM;
	}
	return 0;
}

/*
 * A job of @mfile entered its ring (@in: its waves may call from now on)
 * or left it (done, failed or reset): the mailbox is scanned while any
 * job of the file is in a ring.
 */
void megpu_syscall_ring_job(struct megpu_file *mfile, bool in)
{
	struct megpu_device *mdev = mfile->mdev;
	struct megpu_mailbox *mbox = &mfile->mbox;
	unsigned long flags;

	if (!mbox->cpu)
		return;
	spin_lock_irqsave(&mdev->syscall_lock, flags);
	if (in && !mbox->ring_jobs++)
		list_add_tail(&mbox->node, &mdev->mailboxes);
	else if (!in && !WARN_ON_ONCE(!mbox->ring_jobs) && !--mbox->ring_jobs)
		list_del_init(&mbox->node);
	spin_unlock_irqrestore(&mdev->syscall_lock, flags);
}

/* The file's last job is done: the device writes its mailbox no more. */
void megpu_syscall_file_fini(struct megpu_file *mfile)
{
	struct megpu_device *mdev = mfile->mdev;
	struct megpu_mailbox *mbox = &mfile->mbox;

	spin_lock_irq(&mdev->syscall_lock);
	list_del_init(&mbox->node);
	spin_unlock_irq(&mdev->syscall_lock);
	if (mbox->cpu)
		dma_free_coherent(mdev->drm.dev,
				  mbox->slots * MEGPU_MBOX_SLOT_SIZE,
				  mbox->cpu, mbox->dma);
	bitmap_free(mbox->pending);
	bitmap_free(mbox->fetched);
	if (mbox->slots)
		megpu_pin_uncharge(mfile, PAGE_ALIGN(mbox->slots *
						     MEGPU_MBOX_SLOT_SIZE));
	mbox->pending = NULL;
	mbox->fetched = NULL;
	mbox->cpu = NULL;
	mbox->slots = 0;
}

/* Restarts collected by one scan, each wave once. */
struct megpu_restarts {
	u32 n;
	u32 ids[MEGPU_RESTART_BATCH];
};

static void megpu_restart_flush(struct megpu_device *mdev,
				struct megpu_restarts *r)
{
	int idx;
	u32 i;

	if (r->n && drm_dev_enter(&mdev->drm, &idx)) {
		for (i = 0; i < r->n; i++)
			megpu_write(mdev, MEGPU_REG_WAVE_RESTART, r->ids[i]);
		drm_dev_exit(idx);
	}
	mdev->sc.restarts += r->n;
	r->n = 0;
}

static void megpu_restart_add(struct megpu_device *mdev,
			      struct megpu_restarts *r, u32 id)
{
	u32 i;

	for (i = 0; i < r->n; i++)
		if (r->ids[i] == id)
			return;
	if (r->n == MEGPU_RESTART_BATCH)
		megpu_restart_flush(mdev, r);
	r->ids[r->n++] = id;
}

/*
 * Answer an ACTIVE slot: the result, then RETURNING (the wave reads the
 * result once it sees RETURNING), then the restart (none with @r NULL:
 * the caller decides). Called with syscall_lock held.
 */
static void megpu_slot_answer(struct megpu_device *mdev,
			      struct megpu_mailbox *mbox, u32 slot, u64 ret,
			      struct megpu_restarts *r)
{
	u32 caller = slot_u32(mbox, slot, MEGPU_MBOX_CALLER);
	__le64 *res = (__le64 *)slot_word(mbox, slot, MEGPU_MBOX_RET);

	lockdep_assert_held(&mdev->syscall_lock);
	WRITE_ONCE(*res, cpu_to_le64(ret));
	dma_wmb();
	slot_set_state(mbox, slot, MEGPU_MBOX_RETURNING);
	clear_bit(slot, mbox->pending);
	clear_bit(slot, mbox->fetched);
	if (r)
		megpu_restart_add(mdev, r, caller);
}

/* The calls the kernel runs itself. */
static u64 megpu_syscall_kernel_op(struct megpu_device *mdev, u32 op,
				   const u32 arg[3])
{
	switch (op) {
	case DRM_MEGPU_SYSCALL_ECHO:
		return arg[0] | (u64)arg[1] << 32;
	case DRM_MEGPU_SYSCALL_ADD:
		return (u64)arg[0] + arg[1] + arg[2];
	default:
		mdev->sc.unknown_ops++;
		return (u64)-EOPNOTSUPP;
	}
}

/*
 * The mailbox @eng's waves call through now: that of the job it runs, the
 * first in its ring that is not done (a DISPATCH ends before the engine
 * goes on, and a parked wave keeps its job from ending), or NULL. The
 * walk passes only jobs done since the last retire. syscall_lock held: a
 * file frees its mailbox (megpu_syscall_file_fini) under it, so the
 * mailbox outlives this scan even if the job is retired meanwhile.
 */
static struct megpu_mailbox *megpu_engine_mailbox(struct megpu_engine *eng)
{
	struct megpu_mailbox *mbox = NULL;
	struct megpu_job *job;
	u64 seqno;

	lockdep_assert_held(&eng->mdev->syscall_lock);
	spin_lock(&eng->job_lock);
	seqno = READ_ONCE(*eng->seqno_cpu);
	list_for_each_entry(job, &eng->active, active_node) {
		if (job->seqno > seqno) {
			mbox = &job->file->mbox;
			break;
		}
	}
	spin_unlock(&eng->job_lock);
	return mbox && mbox->cpu ? mbox : NULL;
}

/* Scan one mailbox; syscall_lock held. */
static void megpu_mailbox_scan(struct megpu_device *mdev,
			       struct megpu_mailbox *mbox,
			       struct megpu_restarts *r)
{
	bool wake = false;
	u32 slot, op, arg[3];

	for (slot = 0; slot < mbox->slots; slot++) {
		if (slot_state(mbox, slot) != MEGPU_MBOX_ACTIVE)
			continue;
		if (test_bit(slot, mbox->pending) ||
		    test_bit(slot, mbox->fetched))
			continue;	/* with the service already */
		/* the slot's contents were written before ACTIVE */
		dma_rmb();
		op = slot_u32(mbox, slot, MEGPU_MBOX_OP);
		arg[0] = slot_u32(mbox, slot, MEGPU_MBOX_ARG(0));
		arg[1] = slot_u32(mbox, slot, MEGPU_MBOX_ARG(1));
		arg[2] = slot_u32(mbox, slot, MEGPU_MBOX_ARG(2));
		mdev->sc.calls++;
		if (mbox->closed) {
			mdev->sc.orphans++;
			megpu_slot_answer(mdev, mbox, slot, (u64)-EPIPE, r);
		} else if (op < DRM_MEGPU_SYSCALL_USER) {
			mdev->sc.kernel_ops++;
			megpu_slot_answer(mdev, mbox, slot,
					  megpu_syscall_kernel_op(mdev, op, arg),
					  r);
		} else {
			set_bit(slot, mbox->pending);
			wake = true;
		}
	}
	if (wake)
		wake_up(&mbox->wq);	/* one service thread; it passes on */
}

/*
 * MISC_IRQ_SYSCALL, in the hard interrupt handler: serve every ACTIVE
 * slot of the mailboxes the engines call through now, at most one per
 * engine (not every file with a job in a ring: jobs queued behind others
 * cannot have called, and a scan stays bounded with IRQs off however many
 * files one user keeps busy).
 */
void megpu_syscall_irq(struct megpu_device *mdev)
{
	struct megpu_mailbox *seen[MEGPU_MAX_ENGINES], *mbox;
	unsigned int i, n = 0, k;
	struct megpu_restarts r;
	unsigned long flags;

	r.n = 0;
	/* the seqnos the device wrote before its calls and this interrupt */
	dma_rmb();
	spin_lock_irqsave(&mdev->syscall_lock, flags);
	mdev->sc.irqs++;
	for (i = 0; i < mdev->num_engines; i++) {
		mbox = megpu_engine_mailbox(&mdev->engines[i]);
		for (k = 0; mbox && k < n; k++)
			if (seen[k] == mbox)
				mbox = NULL;
		if (!mbox)
			continue;
		seen[n++] = mbox;
		megpu_mailbox_scan(mdev, mbox, &r);
		mdev->sc.scanned++;
	}
	megpu_restart_flush(mdev, &r);
	spin_unlock_irqrestore(&mdev->syscall_lock, flags);
}

/*
 * The file is closed: answer its calls now and from now on with -EPIPE,
 * so that none of its waves waits for a service that is gone.
 */
void megpu_syscall_file_close(struct megpu_file *mfile)
{
	struct megpu_device *mdev = mfile->mdev;
	struct megpu_mailbox *mbox = &mfile->mbox;
	struct megpu_restarts r;
	u32 slot;

	if (!mbox->cpu)
		return;
	r.n = 0;
	spin_lock_irq(&mdev->syscall_lock);
	mbox->closed = true;
	for (slot = 0; slot < mbox->slots; slot++) {
		if (slot_state(mbox, slot) != MEGPU_MBOX_ACTIVE)
			continue;
		mdev->sc.orphans++;
		megpu_slot_answer(mdev, mbox, slot, (u64)-EPIPE, &r);
	}
	megpu_restart_flush(mdev, &r);
	spin_unlock_irq(&mdev->syscall_lock);
	wake_up_all(&mbox->wq);
}

/*
 * @eng was reset: its waves are gone. Their slots, in whatever state the
 * reset left them, are FREE again, and the service forgets them. They are
 * in the mailbox of the job it ran (its ring is not retired yet), as a
 * scan finds it: the one mailbox read, IRQs off.
 */
void megpu_syscall_engine_reset(struct megpu_engine *eng)
{
	struct megpu_device *mdev = eng->mdev;
	struct megpu_mailbox *mbox;
	unsigned long flags;
	u32 slot;

	if (!megpu_has_waves(mdev))
		return;
	spin_lock_irqsave(&mdev->syscall_lock, flags);
	mbox = megpu_engine_mailbox(eng);
	for (slot = 0; mbox && slot < mbox->slots; slot++) {
		u32 state = slot_state(mbox, slot);
		u32 *word = (u32 *)slot_word(mbox, slot, MEGPU_MBOX_STATE);

		/*
		 * Only ACTIVE and RETURNING (a reset engine leaves no slot
		 * FILLING), with a compare-and-swap: a SYSCALL on another
		 * engine may take a RETURNING slot of a gone wave back at the
		 * same time (the device's stray reclaim). Answers are written
		 * under syscall_lock.
		 */
		if ((state != MEGPU_MBOX_ACTIVE &&
		     state != MEGPU_MBOX_RETURNING) ||
		    MEGPU_WAVE_ID_ENGINE(slot_u32(mbox, slot,
						  MEGPU_MBOX_CALLER)) !=
		    eng->index ||
		    cmpxchg(word, (__force u32)cpu_to_le32(state),
			    (__force u32)cpu_to_le32(MEGPU_MBOX_FREE)) !=
		    (__force u32)cpu_to_le32(state))
			continue;
		clear_bit(slot, mbox->pending);
		clear_bit(slot, mbox->fetched);
		mdev->sc.reclaimed++;
	}
	spin_unlock_irqrestore(&mdev->syscall_lock, flags);
}

static bool megpu_mailbox_has_pending(struct megpu_mailbox *mbox)
{
	return find_first_bit(mbox->pending, mbox->slots) < mbox->slots;
}

/*
 * A call that did not reach userspace goes back to pending, unless it
 * was answered or reclaimed meanwhile (then it is no longer fetched, or
 * the slot holds another caller's call).
 */
static void megpu_syscall_unfetch(struct megpu_device *mdev,
				  struct megpu_mailbox *mbox,
				  const struct drm_megpu_syscall *calls, u32 n)
{
	u32 i;

	spin_lock_irq(&mdev->syscall_lock);
	for (i = 0; i < n; i++) {
		u32 slot = calls[i].slot;

		if (!test_bit(slot, mbox->fetched) ||
		    slot_state(mbox, slot) != MEGPU_MBOX_ACTIVE ||
		    slot_u32(mbox, slot, MEGPU_MBOX_CALLER) != calls[i].caller)
			continue;
		clear_bit(slot, mbox->fetched);
		set_bit(slot, mbox->pending);
		mdev->sc.user_ops--;
	}
	spin_unlock_irq(&mdev->syscall_lock);
	wake_up(&mbox->wq);
}

/*
 * Wait for pending calls as one of the service's exclusive waiters: a
 * scan wakes one thread, not all of them (each woken thread costs the
 * guest a context switch, often on another CPU); a thread that leaves
 * with calls still pending wakes the next (megpu_ioctl_syscall_wait).
 * Returns as wait_event_interruptible_timeout() does, but without 1 for
 * a condition that came true just as the time ran out (only the sign
 * matters to the caller).
 */
static long megpu_syscall_wait_pending(struct megpu_mailbox *mbox,
				       long timeout)
{
	DEFINE_WAIT(wait);

	for (;;) {
		prepare_to_wait_exclusive(&mbox->wq, &wait,
					  TASK_INTERRUPTIBLE);
		if (megpu_mailbox_has_pending(mbox))
			break;
		if (signal_pending(current)) {
			timeout = -ERESTARTSYS;
			break;
		}
		if (!timeout)
			break;
		timeout = schedule_timeout(timeout);
	}
	finish_wait(&mbox->wq, &wait);
	return timeout;
}

int megpu_ioctl_syscall_wait(struct drm_device *drm, void *data,
			     struct drm_file *file)
{
	struct megpu_device *mdev = to_megpu(drm);
	struct megpu_file *mfile = file->driver_priv;
	struct megpu_mailbox *mbox = &mfile->mbox;
	struct drm_megpu_syscall_wait *args = data;
	struct drm_megpu_syscall __user *user = u64_to_user_ptr(args->calls);
	unsigned long timeout = drm_timeout_abs_to_jiffies(args->timeout_ns);
	struct drm_megpu_syscall *calls;
	u32 slot, n = 0, max, done;
	long ret;

	if (!args->count || args->flags)
		return -EINVAL;
	if (!mbox->cpu)
		return -EOPNOTSUPP;
	/* at most every slot is pending at once */
	max = min(args->count, mbox->slots);
	calls = kmalloc_array(max, sizeof(*calls), GFP_KERNEL);
	if (!calls)
		return -ENOMEM;

	ret = megpu_syscall_wait_pending(mbox, timeout);
	if (ret < 0)
		goto out;

	/* fetched under the lock, copied out after it */
	spin_lock_irq(&mdev->syscall_lock);
	for_each_set_bit(slot, mbox->pending, mbox->slots) {
		if (n == max)
			break;
		calls[n].slot = slot;
		calls[n].op = slot_u32(mbox, slot, MEGPU_MBOX_OP);
		calls[n].args[0] = slot_u32(mbox, slot, MEGPU_MBOX_ARG(0));
		calls[n].args[1] = slot_u32(mbox, slot, MEGPU_MBOX_ARG(1));
		calls[n].args[2] = slot_u32(mbox, slot, MEGPU_MBOX_ARG(2));
		calls[n].caller = slot_u32(mbox, slot, MEGPU_MBOX_CALLER);
		clear_bit(slot, mbox->pending);
		set_bit(slot, mbox->fetched);
		n++;
	}
	mdev->sc.user_ops += n;
	spin_unlock_irq(&mdev->syscall_lock);
	if (!n) {
		ret = -ETIME;
		goto out;
	}
	/* more than this thread takes: the next waiter's turn */
	if (megpu_mailbox_has_pending(mbox))
		wake_up(&mbox->wq);
	/* a call stays pending unless it reached userspace */
	for (done = 0; done < n; done++)
		if (copy_to_user(&user[done], &calls[done], sizeof(*calls)))
			break;
	if (done < n)
		megpu_syscall_unfetch(mdev, mbox, calls + done, n - done);
	if (!done) {
		ret = -EFAULT;
		goto out;
	}
	args->count = done;
	ret = 0;
out:
	/* leaving without the calls (a signal, no room): pass the wake on */
	if (ret && megpu_mailbox_has_pending(mbox))
		wake_up(&mbox->wq);
	kfree(calls);
	return ret;
}

static int megpu_u32_cmp(const void *a, const void *b)
{
	u32 x = *(const u32 *)a, y = *(const u32 *)b;

	return x < y ? -1 : x > y;
}

/*
 * Does @caller have another call with the service (pending or fetched)?
 * Then its wave cannot go on before that one is answered too, and the
 * last answer restarts it: one restart, one resume and one new round of
 * claims per wave and batch of answers instead of one per answer.
 */
static bool megpu_caller_has_service_calls(struct megpu_mailbox *mbox,
					   u32 caller)
{
	u32 slot;

	for (slot = 0; slot < mbox->slots; slot++)
		if ((test_bit(slot, mbox->pending) ||
		     test_bit(slot, mbox->fetched)) &&
		    slot_u32(mbox, slot, MEGPU_MBOX_CALLER) == caller)
			return true;
	return false;
}

/*
 * The same question for a batch: the callers that still have calls with
 * the service, sorted into @left (room for twice the slots); their
 * count. O(slots log slots) with interrupts off, whatever the batch,
 * where asking for each answer would be O(batch x slots).
 */
static u32 megpu_callers_left(struct megpu_mailbox *mbox, u32 *left)
{
	u32 slot, n = 0;

	for_each_set_bit(slot, mbox->pending, mbox->slots)
		left[n++] = slot_u32(mbox, slot, MEGPU_MBOX_CALLER);
	for_each_set_bit(slot, mbox->fetched, mbox->slots)
		left[n++] = slot_u32(mbox, slot, MEGPU_MBOX_CALLER);
	sort(left, n, sizeof(*left), megpu_u32_cmp, NULL);
	return n;
}

/*
 * Is @a an answer this file's service may give: a call handed out
 * (fetched), still ACTIVE, of @a->caller, and (a batch's @seen, else
 * NULL) not answered earlier in the same batch? Called with
 * syscall_lock held.
 */
static bool megpu_answer_valid(struct megpu_mailbox *mbox,
			       const struct drm_megpu_syscall_answer *a,
			       unsigned long *seen)
{
	return test_bit(a->slot, mbox->fetched) &&
	       !(seen && __test_and_set_bit(a->slot, seen)) &&
	       slot_state(mbox, a->slot) == MEGPU_MBOX_ACTIVE &&
	       slot_u32(mbox, a->slot, MEGPU_MBOX_CALLER) == a->caller;
}

int megpu_ioctl_syscall_return(struct drm_device *drm, void *data,
			       struct drm_file *file)
{
	struct megpu_device *mdev = to_megpu(drm);
	struct megpu_file *mfile = file->driver_priv;
	struct megpu_mailbox *mbox = &mfile->mbox;
	struct drm_megpu_syscall_return *args = data;
	struct drm_megpu_syscall_answer one, *answers = &one;
	u32 i, n = 1, nleft = 0, *left = NULL;
	unsigned long *seen = NULL;
	struct megpu_restarts r;
	int ret = 0;

	if (!mbox->cpu)
		return -EOPNOTSUPP;
	if ((args->flags & ~DRM_MEGPU_SYSCALL_RETURN_BATCH) || args->pad ||
	    args->pad2)
		return -EINVAL;
	if (!(args->flags & DRM_MEGPU_SYSCALL_RETURN_BATCH)) {
		/* one answer, the common case: nothing to allocate */
		if (args->answers || args->count || args->slot >= mbox->slots)
			return -EINVAL;
		one = (struct drm_megpu_syscall_answer) {
			.ret = args->ret, .slot = args->slot,
			.caller = args->caller,
		};
	} else {
		if (args->ret || args->slot || args->caller || !args->count ||
		    args->count > mbox->slots)
			return -EINVAL;
		n = args->count;
		answers = memdup_array_user(u64_to_user_ptr(args->answers), n,
					    sizeof(*answers));
		if (IS_ERR(answers))
			return PTR_ERR(answers);
		for (i = 0; i < n; i++)
			if (answers[i].slot >= mbox->slots) {
				ret = -EINVAL;
				goto out;
			}
		seen = bitmap_zalloc(mbox->slots, GFP_KERNEL);
		left = kmalloc_array(2 * mbox->slots, sizeof(*left),
				     GFP_KERNEL);
		if (!seen || !left) {
			ret = -ENOMEM;
			goto out;
		}
	}

	r.n = 0;
	spin_lock_irq(&mdev->syscall_lock);
	for (i = 0; i < n; i++)
		if (!megpu_answer_valid(mbox, &answers[i], seen))
			break;
	if (i < n) {
		mdev->sc.bad_returns++;
		ret = -ENOENT;
	} else {
		for (i = 0; i < n; i++)
			megpu_slot_answer(mdev, mbox, answers[i].slot,
					  answers[i].ret, NULL);
		/* a caller with calls left is restarted by its last answer */
		if (left)
			nleft = megpu_callers_left(mbox, left);
		for (i = 0; i < n; i++) {
			u32 caller = answers[i].caller;

			if (left ? !!bsearch(&caller, left, nleft,
					     sizeof(*left), megpu_u32_cmp) :
				   megpu_caller_has_service_calls(mbox, caller))
				mdev->sc.deferred_restarts++;
			else
				megpu_restart_add(mdev, &r, caller);
		}
		megpu_restart_flush(mdev, &r);
	}
	spin_unlock_irq(&mdev->syscall_lock);
out:
	if (answers != &one) {
		bitmap_free(seen);
		kfree(left);
		kfree(answers);
	}
	return ret;
}

static int megpu_syscalls_show(struct seq_file *m, void *data)
{
	struct drm_debugfs_entry *entry = m->private;
	struct megpu_device *mdev = to_megpu(entry->dev);
	unsigned int i, n;
	u32 slot, *states;
	int idx;

	if (!megpu_has_waves(mdev)) {
		seq_puts(m, "no waves\n");
		return 0;
	}
	if (drm_dev_enter(&mdev->drm, &idx)) {
		seq_printf(m, "syscalls %u\n",
			   megpu_read(mdev, MEGPU_REG_SYSCALLS));
		seq_printf(m, "retry_spins %u\n",
			   megpu_read(mdev, MEGPU_REG_SYSCALL_RETRIES));
		seq_printf(m, "wave_restarts %u\n",
			   megpu_read(mdev, MEGPU_REG_WAVE_RESTARTS));
		seq_printf(m, "restart_errors %u\n",
			   megpu_read(mdev, MEGPU_REG_WAVE_RESTART_ERRORS));
		seq_printf(m, "wave_interrupts %u\n",
			   megpu_read(mdev, MEGPU_REG_WAVE_INTERRUPTS));
		for (i = 0; i < mdev->num_engines; i++) {
			struct megpu_engine *eng = &mdev->engines[i];

			seq_printf(m, "%s waves %u parked %u parked_wave 0x%x\n",
				   eng->name,
				   megpu_eng_read(eng, MEGPU_ENG_WAVES_LIVE),
				   megpu_eng_read(eng, MEGPU_ENG_WAVES_PARKED),
				   megpu_eng_read(eng, MEGPU_ENG_PARKED_WAVE));
		}
		drm_dev_exit(idx);
	}
	spin_lock_irq(&mdev->syscall_lock);
	seq_printf(m, "irqs %llu\n", mdev->sc.irqs);
	seq_printf(m, "calls %llu\n", mdev->sc.calls);
	seq_printf(m, "kernel_ops %llu\n", mdev->sc.kernel_ops);
	seq_printf(m, "user_ops %llu\n", mdev->sc.user_ops);
	seq_printf(m, "unknown_ops %llu\n", mdev->sc.unknown_ops);
	seq_printf(m, "orphans %llu\n", mdev->sc.orphans);
	seq_printf(m, "bad_returns %llu\n", mdev->sc.bad_returns);
	seq_printf(m, "restarts %llu\n", mdev->sc.restarts);
	seq_printf(m, "deferred_restarts %llu\n", mdev->sc.deferred_restarts);
	seq_printf(m, "reclaimed %llu\n", mdev->sc.reclaimed);
	seq_printf(m, "mailboxes_scanned %llu\n", mdev->sc.scanned);
	spin_unlock_irq(&mdev->syscall_lock);

	/*
	 * The mailboxes one at a time, each copied under the lock and
	 * printed after it: all of them (a file's each, up to 1024 slots)
	 * with interrupts off would hold them off for as long as the list
	 * is, and a seq_file overflow runs the show again.
	 */
	states = kmalloc_array(MEGPU_MBOX_MAX_SLOTS, sizeof(*states),
			       GFP_KERNEL);
	if (!states)
		return -ENOMEM;
	for (n = 0;; n++) {
		struct megpu_mailbox *mbox = NULL, *iter;
		u32 ctx = 0, slots = 0;
		bool closed = false;

		/* the nth: a short walk (files with a job in a ring) */
		i = 0;
		spin_lock_irq(&mdev->syscall_lock);
		list_for_each_entry(iter, &mdev->mailboxes, node)
			if (i++ == n) {
				mbox = iter;
				break;
			}
		if (mbox) {
			ctx = mbox->ctx;
			closed = mbox->closed;
			slots = min_t(u32, mbox->slots, MEGPU_MBOX_MAX_SLOTS);
			for (slot = 0; slot < slots; slot++)
				states[slot] = slot_state(mbox, slot);
		}
		spin_unlock_irq(&mdev->syscall_lock);
		if (!mbox)
			break;
		seq_printf(m, "mailbox ctx %u slots %u%s:", ctx, slots,
			   closed ? " closed" : "");
		for (slot = 0; slot < slots; slot++)
			seq_printf(m, " %u", states[slot]);
		seq_puts(m, "\n");
	}
	kfree(states);
	return 0;
}

void megpu_syscall_init(struct megpu_device *mdev)
{
	spin_lock_init(&mdev->syscall_lock);
	INIT_LIST_HEAD(&mdev->mailboxes);
}

void megpu_syscall_debugfs_init(struct megpu_device *mdev)
{
	drm_debugfs_add_file(&mdev->drm, "syscalls", megpu_syscalls_show, NULL);
}
