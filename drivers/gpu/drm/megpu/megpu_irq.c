// SPDX-License-Identifier: GPL-2.0
/* Copyright 2026 The megpu authors */
/**
 * DOC: Interrupts
 *
 * MSI-X vectors: one per engine slot plus a device-wide one. At probe every
 * vector is raised once through MEGPU_REG_IRQ_TEST so that a broken
 * interrupt path fails the probe instead of hanging the first job.
 *
 * An engine's completions are retired in the hard handler (issue 12: the
 * IRQ thread's wakeup was a tenth of a CPU-side dependency hop); faults,
 * whose handling sleeps, go to the thread. Module parameter irq_retire=N
 * puts everything back in the thread, to compare.
 */

#include <linux/dma-fence.h>
#include <linux/interrupt.h>
#include <linux/pci.h>
#include <drm/drm_print.h>

#include "megpu_drv.h"
#include "megpu_trace.h"

#define MEGPU_IRQ_TEST_TIMEOUT_MS	1000

static irqreturn_t megpu_irq_handler(int irq, void *arg)
{
	struct megpu_vector *vec = arg;
	struct megpu_device *mdev = vec->mdev;
	irqreturn_t ret = IRQ_NONE;
	u32 bit = BIT(vec->index);
	u32 status;

	/* an MMIO read an interrupt less: only while a test is in flight */
	if (atomic_read(&mdev->irq_tests) &&
	    (megpu_read(mdev, MEGPU_REG_IRQ_TEST_STATUS) & bit)) {
		megpu_write(mdev, MEGPU_REG_IRQ_TEST_STATUS, bit);
		complete(&vec->test_done);
		ret = IRQ_HANDLED;
	}

	if (vec->index == MEGPU_VEC_MISC && READ_ONCE(mdev->flush_ready)) {
		status = megpu_read(mdev, MEGPU_REG_MISC_IRQ_STATUS);
		if (status) {
			megpu_write(mdev, MEGPU_REG_MISC_IRQ_STATUS, status);
			ret = IRQ_HANDLED;
		}
		/* the syscall scan is quick: here, without a thread wake-up */
		if (status & MEGPU_MISC_IRQ_SYSCALL)
			megpu_syscall_irq(mdev);
		/* so is waking threads asleep on an EVENT queue */
		if (status & MEGPU_MISC_IRQ_TASKQ_RELEASE)
			megpu_taskq_released(mdev);
		/* WAVE: raw INTERRUPT is disabled (megpu_syscall.c) */
		status &= ~(MEGPU_MISC_IRQ_SYSCALL | MEGPU_MISC_IRQ_WAVE |
			    MEGPU_MISC_IRQ_TASKQ_RELEASE);
		if (status) {
			atomic_or(status, &vec->pending);
			ret = IRQ_WAKE_THREAD;
		}
	}

	if (vec->engine) {
		status = megpu_eng_read(vec->engine, MEGPU_ENG_IRQ_STATUS);
		if (status) {
			/* cleared before handling: a later event interrupts again */
			megpu_eng_write(vec->engine, MEGPU_ENG_IRQ_STATUS, status);
			trace_megpu_irq(vec->index, status);
			/*
			 * Completions are retired here, with no thread to
			 * wake (megpu_sched.c); a fault takes locks that
			 * sleep: the thread handles it, and retires too.
			 */
			if (status & MEGPU_ENG_IRQ_FAULT ||
			    !megpu_irq_retire) {
				atomic_or(status, &vec->pending);
				ret = IRQ_WAKE_THREAD;
			} else {
				megpu_engine_irq_fast(vec->engine, status);
				ret = IRQ_HANDLED;
			}
		}
	}
	return ret;
}

/* Retiring jobs and handling faults may take locks: a thread does it. */
static irqreturn_t megpu_irq_thread(int irq, void *arg)
{
	struct megpu_vector *vec = arg;
	u32 status = atomic_xchg(&vec->pending, 0);
	bool cookie;

	if (vec->engine) {
		megpu_engine_irq(vec->engine, status);
		return IRQ_HANDLED;
	}
	/*
	 * On the way to fences, all of it: host-flushed jobs complete on
	 * FLUSH_DONE, and the timeout handler waits for the flushes it
	 * acknowledges. The dequeuer's part only queues its work (which
	 * allocates, in its own context).
	 */
	cookie = dma_fence_begin_signalling();
	if (status & MEGPU_MISC_IRQ_FLUSH_DONE)
		megpu_flush_irq(vec->mdev);
	if (status & MEGPU_MISC_IRQ_WORK)
		megpu_dequeue_irq(vec->mdev);
	dma_fence_end_signalling(cookie);
	return IRQ_HANDLED;
}

/* Engine interrupts reach the engine code only once it is set up. */
void megpu_irq_enable_engines(struct megpu_device *mdev)
{
	unsigned int i;

	for (i = 0; i < mdev->num_engines; i++) {
		disable_irq(mdev->vec[i].irq);
		mdev->vec[i].engine = &mdev->engines[i];
		enable_irq(mdev->vec[i].irq);
	}
	WRITE_ONCE(mdev->flush_ready, true);
}

int megpu_irq_init(struct megpu_device *mdev)
{
	struct pci_dev *pdev = mdev->pdev;
	unsigned int i;
	int ret;

	ret = pci_alloc_irq_vectors(pdev, MEGPU_NUM_VECTORS, MEGPU_NUM_VECTORS,
				    PCI_IRQ_MSIX);
	if (ret < 0) {
		dev_err(&pdev->dev, "cannot allocate %d MSI-X vectors: %d\n",
			MEGPU_NUM_VECTORS, ret);
		return ret;
	}

	for (i = 0; i < MEGPU_NUM_VECTORS; i++) {
		struct megpu_vector *vec = &mdev->vec[i];

		vec->mdev = mdev;
		vec->index = i;
		vec->irq = pci_irq_vector(pdev, i);
		init_completion(&vec->test_done);
		ret = request_threaded_irq(vec->irq, megpu_irq_handler,
					   megpu_irq_thread, 0, "megpu", vec);
		if (ret) {
			dev_err(&pdev->dev, "cannot request IRQ %d: %d\n",
				vec->irq, ret);
			while (i--)
				free_irq(mdev->vec[i].irq, &mdev->vec[i]);
			pci_free_irq_vectors(pdev);
			return ret;
		}
	}
	return 0;
}

void megpu_irq_fini(struct megpu_device *mdev)
{
	unsigned int i;

	for (i = 0; i < MEGPU_NUM_VECTORS; i++)
		free_irq(mdev->vec[i].irq, &mdev->vec[i]);
	pci_free_irq_vectors(mdev->pdev);
}

/*
 * Raise vector @i through MEGPU_REG_IRQ_TEST and wait for its handler;
 * false after @timeout_ms. Test interrupts may be in flight only between
 * the irq_tests increment and decrement (the handler looks for them).
 */
bool megpu_irq_test(struct megpu_device *mdev, unsigned int i,
		    unsigned int timeout_ms)
{
	struct megpu_vector *vec = &mdev->vec[i];
	bool done;

	atomic_inc(&mdev->irq_tests);
	reinit_completion(&vec->test_done);
	megpu_write(mdev, MEGPU_REG_IRQ_TEST, i);
	done = wait_for_completion_timeout(&vec->test_done,
					   msecs_to_jiffies(timeout_ms));
	atomic_dec(&mdev->irq_tests);
	return done;
}

int megpu_irq_self_test(struct megpu_device *mdev)
{
	unsigned int i;

	for (i = 0; i < MEGPU_NUM_VECTORS; i++) {
		if (!megpu_irq_test(mdev, i, MEGPU_IRQ_TEST_TIMEOUT_MS)) {
			dev_err(&mdev->pdev->dev,
				"interrupt self-test: no interrupt on vector %u\n",
				i);
			return -EIO;
		}
	}
	return 0;
}
