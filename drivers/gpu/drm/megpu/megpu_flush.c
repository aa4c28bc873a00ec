// SPDX-License-Identifier: GPL-2.0
/* Copyright 2026 The megpu authors */
/**
 * DOC: Flushes for dependent computations (seed 004)
 *
 * In the device's relaxed mode an engine's writes reach memory late and
 * out of order. By default a job's frame ends with a FLUSH packet before
 * its SIGNAL and TIMESTAMP, so its fence and semaphore mean visible data.
 * A job submitted with DRM_MEGPU_SUBMIT_HOST_FLUSH uses the seed's
 * host-driven handshake (FIG. 4) instead: its frame ends with an
 * IDLE_SIGNAL, the engine's idle interrupt makes the driver retire it
 * (its timestamp is written, its data may not be), the driver starts a
 * flush through the FLUSH register, the device acknowledges with
 * FLUSH_DONE, and only then is the job's fence signalled, which lets the
 * CPU start (ring the doorbell of) the jobs that depend on it.
 * DRM_IOCTL_MEGPU_FLUSH is the same host flush for userspace.
 */

#include <linux/debugfs.h>
#include <linux/dma-fence.h>
#include <linux/semaphore.h>
#include <linux/seq_file.h>
#include <linux/string.h>
#include <linux/uaccess.h>
#include <linux/wait.h>
#include <drm/drm_debugfs.h>
#include <drm/drm_drv.h>
#include <drm/drm_file.h>
#include <drm/drm_print.h>
#include <drm/megpu_drm.h>

#include "megpu_drv.h"
#include "megpu_trace.h"

#define MEGPU_FLUSH_TIMEOUT_MS	1000
/* user-driven waiters on flush_wq at once (the rest wait for a slot) */
#define MEGPU_FLUSH_WAITERS	64

void megpu_flush_init(struct megpu_device *mdev)
{
	spin_lock_init(&mdev->flush_lock);
	init_waitqueue_head(&mdev->flush_wq);
	sema_init(&mdev->flush_slots, MEGPU_FLUSH_WAITERS);
	INIT_LIST_HEAD(&mdev->flush_jobs);
	mdev->flush_started = 0;
	mdev->flush_done = 0;
}

/* Start a host flush; returns the FLUSH_SEQ value that completes it. */
u64 megpu_flush_start(struct megpu_device *mdev)
{
	unsigned long flags;
	u64 target;

	spin_lock_irqsave(&mdev->flush_lock, flags);
	target = ++mdev->flush_started;
	/* writes of jobs completed by now are covered by this flush */
	mdev->flush_dirty_at[target % ARRAY_SIZE(mdev->flush_dirty_at)] =
		atomic64_read(&mdev->dirty_gen);
	megpu_write(mdev, MEGPU_REG_FLUSH, 1);
	spin_unlock_irqrestore(&mdev->flush_lock, flags);
	trace_megpu_host_flush(target, 0);
	return target;
}

static bool megpu_flush_reached(struct megpu_device *mdev, u64 target)
{
	return READ_ONCE(mdev->flush_done) >= target;
}

/*
 * Jobs whose engine finished them, waiting for a host flush: signal them
 * once their flush is done. Called with the jobs taken off their
 * engine's active list.
 */
void megpu_flush_defer_job(struct megpu_job *job, u64 target)
{
	struct megpu_device *mdev = job->engine->mdev;
	unsigned long flags;

	job->flush_target = target;
	job->flush_since = jiffies;
	spin_lock_irqsave(&mdev->flush_lock, flags);
	list_add_tail(&job->active_node, &mdev->flush_jobs);
	spin_unlock_irqrestore(&mdev->flush_lock, flags);
	/* the flush may have completed before the job was queued */
	megpu_flush_irq(mdev);
}

/*
 * @job timed out waiting for its host flush, not on its engine: fail it
 * alone, once it has waited a whole job timeout for the flush (its engine
 * may have finished it just before the timeout: then the flush gets its
 * own period). Returns false when it is not waiting for a flush.
 */
bool megpu_flush_fail_job(struct megpu_job *job, int error)
{
	struct megpu_device *mdev = job->engine->mdev;
	struct megpu_job *iter;
	unsigned long flags;
	bool found = false, waited = false;
	bool cookie;

	spin_lock_irqsave(&mdev->flush_lock, flags);
	list_for_each_entry(iter, &mdev->flush_jobs, active_node) {
		if (iter == job) {
			found = true;
			waited = time_after_eq(jiffies, job->flush_since +
					msecs_to_jiffies(megpu_job_timeout_ms));
			if (waited)
				list_del_init(&job->active_node);
			break;
		}
	}
	spin_unlock_irqrestore(&mdev->flush_lock, flags);
	if (!found)
		return false;
	if (!waited) {
		/* the flush may be done, its interrupt not handled yet */
		megpu_flush_irq(mdev);
		return true;
	}
	drm_err(&mdev->drm, "%s: job %llu: host flush %llu not acknowledged\n",
		job->engine->name, job->seqno, job->flush_target);
	cookie = dma_fence_begin_signalling();
	job->error = error;
	/* its writes were not drained: an unmap must flush them first */
	megpu_flush_mark_dirty(mdev);
	megpu_job_signal(job);
	dma_fence_end_signalling(cookie);
	return true;
}

/*
 * FLUSH_DONE interrupt (or a poll): retire the jobs it covers. Host-flushed
 * jobs' fences complete here: a fence-signalling section for lockdep.
 */
void megpu_flush_irq(struct megpu_device *mdev)
{
	bool cookie = dma_fence_begin_signalling();
	struct megpu_job *job, *tmp;
	unsigned long flags;
	LIST_HEAD(done);
	u64 seq, gen;

	spin_lock_irqsave(&mdev->flush_lock, flags);
	/*
	 * FLUSH_SEQ is 32 bits and counts from the device's last reset:
	 * extend it with the driver's count since then.
	 */
	seq = mdev->flush_done - mdev->flush_base;
	gen = (seq & ~0xffffffffull) | megpu_read(mdev, MEGPU_REG_FLUSH_SEQ);
	if (gen < seq)
		gen += 1ull << 32;
	seq = mdev->flush_base + gen;
	/* the slot is still this flush's unless 64 more were started since */
	if (seq > mdev->flush_done &&
	    mdev->flush_started - seq < ARRAY_SIZE(mdev->flush_dirty_at)) {
		gen = mdev->flush_dirty_at[seq % ARRAY_SIZE(mdev->flush_dirty_at)];
		if (gen > mdev->clean_gen)
			mdev->clean_gen = gen;
	}
	if (seq != mdev->flush_done)
		trace_megpu_host_flush(0, seq);
	WRITE_ONCE(mdev->flush_done, seq);
	list_for_each_entry_safe(job, tmp, &mdev->flush_jobs, active_node)
		if (job->flush_target <= seq)
			list_move_tail(&job->active_node, &done);
	spin_unlock_irqrestore(&mdev->flush_lock, flags);

	wake_up_all(&mdev->flush_wq);
	list_for_each_entry_safe(job, tmp, &done, active_node) {
		list_del_init(&job->active_node);
		megpu_job_signal(job);
	}
	dma_fence_end_signalling(cookie);
}

/*
 * Start a host flush and wait for the device to acknowledge it; the wait
 * is interruptible only for userspace's ioctl. An unplugged device
 * acknowledges nothing: -ENODEV, but only once megpu_remove() has reset
 * it (its engines may still write until then), also for flushes already
 * waiting.
 */
static bool megpu_flush_over(struct megpu_device *mdev, u64 target)
{
	return (target && megpu_flush_reached(mdev, target)) ||
	       READ_ONCE(mdev->flush_stopped);
}

static int __megpu_flush_wait(struct megpu_device *mdev, u64 *seqno,
			      bool interruptible, long timeout)
{
	struct drm_device *drm = &mdev->drm;
	u64 target = 0;
	long ret;
	int idx;

	if (drm_dev_enter(drm, &idx)) {
		target = megpu_flush_start(mdev);
		drm_dev_exit(idx);
	} else {
		/* unplugged: megpu_remove() is about to reset the device */
		timeout = min_t(long, timeout,
				msecs_to_jiffies(MEGPU_FLUSH_TIMEOUT_MS));
	}

	if (interruptible)
		ret = wait_event_interruptible_timeout(mdev->flush_wq,
						       megpu_flush_over(mdev, target),
						       timeout);
	else
		ret = wait_event_timeout(mdev->flush_wq,
					 megpu_flush_over(mdev, target), timeout);
	if (ret < 0)
		return ret;
	if (target && megpu_flush_reached(mdev, target)) {
		*seqno = target;
		return 0;
	}
	if (READ_ONCE(mdev->flush_stopped))
		return -ENODEV;
	drm_err(drm, "flush %llu not acknowledged\n", target);
	return -ETIMEDOUT;
}

static int megpu_flush_wait(struct megpu_device *mdev, u64 *seqno,
			    bool interruptible)
{
	return __megpu_flush_wait(mdev, seqno, interruptible,
				  msecs_to_jiffies(MEGPU_FLUSH_TIMEOUT_MS));
}

/*
 * An engine is about to be reset, which drops its queued writes: let
 * them land first, so that the writes of completed NO_FLUSH jobs become
 * visible as the uAPI promises (the hung job's land too; it fails).
 */
void megpu_flush_before_reset(struct megpu_device *mdev)
{
	u64 seqno;

	if (mdev->caps & MEGPU_CAP_FLUSH)
		megpu_flush_wait(mdev, &seqno, false);
}

/*
 * The device forgot its queued writes and counts flushes from 0 again:
 * every flush started so far is as done as it will be. The driver's
 * counts go on from there (@flush_base), never back, so that a waiter
 * whose flush the reset swallowed is not left waiting for its number to
 * come round again.
 */
static void megpu_flush_rebase(struct megpu_device *mdev)
{
	lockdep_assert_held(&mdev->flush_lock);
	mdev->flush_base = mdev->flush_started;
	WRITE_ONCE(mdev->flush_done, mdev->flush_started);
	mdev->clean_gen = atomic64_read(&mdev->dirty_gen);
}

/*
 * Reset the device (RESET: engines stopped, queued writes dropped, the
 * flush count 0) and wake every flush waiter. With @removed the device
 * is going (megpu_remove()): no flush is waited for any more.
 */
void megpu_flush_device_reset(struct megpu_device *mdev, bool removed)
{
	unsigned long flags;

	/* under the lock: no FLUSH_SEQ read between the RESET and the base */
	spin_lock_irqsave(&mdev->flush_lock, flags);
	megpu_write(mdev, MEGPU_REG_RESET, MEGPU_RESET_MAGIC);
	megpu_flush_rebase(mdev);
	if (removed)
		WRITE_ONCE(mdev->flush_stopped, true);
	spin_unlock_irqrestore(&mdev->flush_lock, flags);
	wake_up_all(&mdev->flush_wq);
}

/*
 * After a function level reset the device counts flushes from 0 again
 * (it may have acknowledged some since reset_prepare's RESET): so does
 * the driver, from where it is. FLUSH ioctls waited for the reset's end
 * (reset_sem); an unmap's flush may have been started meanwhile.
 */
void megpu_flush_reset_done(struct megpu_device *mdev)
{
	unsigned long flags;

	spin_lock_irqsave(&mdev->flush_lock, flags);
	megpu_flush_rebase(mdev);
	spin_unlock_irqrestore(&mdev->flush_lock, flags);
	wake_up_all(&mdev->flush_wq);
}

int megpu_ioctl_flush(struct drm_device *drm, void *data,
		      struct drm_file *file)
{
	struct megpu_device *mdev = to_megpu(drm);
	struct drm_megpu_flush *args = data;
	int ret;

	if (args->flags || args->pad)
		return -EINVAL;
	if (!(mdev->caps & MEGPU_CAP_FLUSH))
		return -EOPNOTSUPP;
	/*
	 * The FLUSH_DONE interrupt wakes every waiter of flush_wq: a user's
	 * threads queue for a slot (FIFO, each held one flush) instead of
	 * lengthening that walk, which runs with interrupts off.
	 */
	if (down_interruptible(&mdev->flush_slots))
		return -ERESTARTSYS;
	/* a function level reset would forget the flush: wait for its end */
	if (down_read_interruptible(&mdev->reset_sem)) {
		up(&mdev->flush_slots);
		return -ERESTARTSYS;
	}
	ret = megpu_flush_wait(mdev, &args->seqno, true);
	up_read(&mdev->reset_sem);
	up(&mdev->flush_slots);
	return ret;
}

static int megpu_flush_show(struct seq_file *m, void *data)
{
	struct drm_debugfs_entry *entry = m->private;
	struct megpu_device *mdev = to_megpu(entry->dev);
	unsigned int i;
	int idx;

	/* registers only while the device is there */
	if (!drm_dev_enter(&mdev->drm, &idx))
		return -ENODEV;

	seq_printf(m, "write_mode %s\n",
		   megpu_read(mdev, MEGPU_REG_WRITE_MODE) ==
		   MEGPU_WRITE_MODE_RELAXED ? "relaxed" : "strict");
	seq_printf(m, "host_flushes_started %llu\n", mdev->flush_started);
	seq_printf(m, "host_flushes_done %llu\n", READ_ONCE(mdev->flush_done));
	seq_printf(m, "mc_queue %u\n", megpu_read(mdev, MEGPU_REG_QUEUE_MC));
	spin_lock_irq(&mdev->flush_wq.lock);
	seq_printf(m, "flush_waiters %zu\n",
		   list_count_nodes(&mdev->flush_wq.head));
	spin_unlock_irq(&mdev->flush_wq.lock);
	for (i = 0; i < mdev->num_engines; i++) {
		struct megpu_engine *eng = &mdev->engines[i];

		seq_printf(m, "%s queue %u stalled_writes %u flushes %u idle_signals %u idle_irqs %u\n",
			   eng->name, megpu_eng_read(eng, MEGPU_ENG_QUEUE),
			   megpu_eng_read(eng, MEGPU_ENG_STALLED_WRITES),
			   megpu_eng_read(eng, MEGPU_ENG_FLUSHES),
			   megpu_eng_read(eng, MEGPU_ENG_IDLE_SIGNALS),
			   eng->idle_irqs);
	}
	drm_dev_exit(idx);
	return 0;
}

void megpu_flush_debugfs_init(struct megpu_device *mdev)
{
	drm_debugfs_add_file(&mdev->drm, "flush", megpu_flush_show, NULL);
}

/* Test files: the write mode and the held writes (CONFIG_DRM_MEGPU_TESTING). */
#if IS_ENABLED(CONFIG_DRM_MEGPU_TESTING)

static int megpu_write_mode_show(struct seq_file *m, void *data)
{
	struct megpu_device *mdev = m->private;
	int idx;

	/* registers only while the device is there */
	if (!drm_dev_enter(&mdev->drm, &idx))
		return -ENODEV;

	seq_puts(m, megpu_read(mdev, MEGPU_REG_WRITE_MODE) ==
		 MEGPU_WRITE_MODE_RELAXED ? "relaxed\n" : "strict\n");
	drm_dev_exit(idx);
	return 0;
}

/* "strict" or "relaxed": the device's write mode, for comparisons. */
static ssize_t megpu_write_mode_write(struct file *file,
				      const char __user *ubuf, size_t len,
				      loff_t *pos)
{
	struct megpu_device *mdev =
		((struct seq_file *)file->private_data)->private;
	u32 mode;
	char buf[16];
	int ret, idx;

	ret = megpu_debugfs_arg(ubuf, len, buf, sizeof(buf));
	if (ret)
		return ret;
	if (sysfs_streq(buf, "strict"))
		mode = MEGPU_WRITE_MODE_STRICT;
	else if (sysfs_streq(buf, "relaxed"))
		mode = MEGPU_WRITE_MODE_RELAXED;
	else
		return -EINVAL;
	/* the BAR goes with megpu_remove() */
	if (!drm_dev_enter(&mdev->drm, &idx))
		return -ENODEV;
	megpu_write(mdev, MEGPU_REG_WRITE_MODE, mode);
	drm_dev_exit(idx);
	return len;
}

DEFINE_SHOW_STORE_ATTRIBUTE(megpu_write_mode);

static int megpu_test_hold_show(struct seq_file *m, void *data)
{
	struct megpu_device *mdev = m->private;
	int idx;

	if (!drm_dev_enter(&mdev->drm, &idx))
		return -ENODEV;
	seq_printf(m, "%u\n", megpu_read(mdev, MEGPU_REG_TEST_HOLD));
	drm_dev_exit(idx);
	return 0;
}

/*
 * Tests: MEGPU_REG_TEST_HOLD, which holds the posted writes (a device
 * with "x-test-regs" only; elsewhere it reads 0 after any write).
 */
static ssize_t megpu_test_hold_write(struct file *file,
				     const char __user *ubuf, size_t len,
				     loff_t *pos)
{
	struct megpu_device *mdev =
		((struct seq_file *)file->private_data)->private;
	unsigned int v;
	char buf[16];
	int ret, idx;

	ret = megpu_debugfs_arg(ubuf, len, buf, sizeof(buf));
	if (ret)
		return ret;
	if (kstrtouint(strim(buf), 0, &v) || v > MEGPU_TEST_HOLD_ALL)
		return -EINVAL;
	if (!drm_dev_enter(&mdev->drm, &idx))
		return -ENODEV;
	megpu_write(mdev, MEGPU_REG_TEST_HOLD, v);
	drm_dev_exit(idx);
	return len;
}

DEFINE_SHOW_STORE_ATTRIBUTE(megpu_test_hold);

void megpu_flush_debugfs_minor_init(struct drm_minor *minor)
{
	debugfs_create_file("write_mode", 0644, minor->debugfs_root,
			    to_megpu(minor->dev), &megpu_write_mode_fops);
	debugfs_create_file("test_hold", 0644, minor->debugfs_root,
			    to_megpu(minor->dev), &megpu_test_hold_fops);
}

#endif /* CONFIG_DRM_MEGPU_TESTING */

/*
 * Queued writes carry bus addresses, which an MMU invalidation does not
 * stop. Called after pages left @vm's page tables and the TLB was
 * invalidated (so no new write can be queued for them), before they are
 * freed: if a job of @vm is still in a ring, or a job that did not flush
 * its writes has completed since the last flush, drain every queued write
 * with a host flush (an engine reset drains them first, see
 * megpu_flush_before_reset()). Returns 0, or an error when the device did not drain:
 * then the pages must not be freed.
 */
int megpu_flush_unmapped(struct megpu_vm *vm, bool patient)
{
	struct megpu_device *mdev = vm->mdev;
	unsigned long flags;
	bool clean;
	int in_ring;
	u64 seqno;
	int ret;

	/*
	 * The jobs first: a completing job marks the device dirty, then
	 * leaves the ring (megpu_job_signal()). Seen out of the ring, its
	 * dirty mark is seen too.
	 */
	in_ring = atomic_read_acquire(&vm->jobs_in_ring);
	spin_lock_irqsave(&mdev->flush_lock, flags);
	clean = mdev->clean_gen >= atomic64_read(&mdev->dirty_gen);
	spin_unlock_irqrestore(&mdev->flush_lock, flags);
	if (clean && !in_ring)
		return 0;
	/* any number of user threads closing BOs: as FLUSH, a slot each */
	down(&mdev->flush_slots);
	ret = __megpu_flush_wait(mdev, &seqno, false, patient ?
				 MAX_SCHEDULE_TIMEOUT :
				 msecs_to_jiffies(MEGPU_FLUSH_TIMEOUT_MS));
	up(&mdev->flush_slots);
	/* the removed device was reset: its queued writes were dropped */
	return ret == -ENODEV ? 0 : ret;
}

/* A job that did not flush its writes has completed. */
void megpu_flush_mark_dirty(struct megpu_device *mdev)
{
	atomic64_inc(&mdev->dirty_gen);
}
