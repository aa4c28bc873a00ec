// SPDX-License-Identifier: GPL-2.0
/* Copyright 2026 The megpu authors */
/**
 * DOC: Test knobs in debugfs
 *
 * The debugfs files that can be written (drm_driver.debugfs_init):
 * delay_us, which holds an engine back before each packet (seed 001's
 * "device delay knob": a producer made slow, so that a consumer that does
 * not wait for it shows); sem_pool_limit, which makes the semaphore pool
 * small enough to fill; fault_hold_ms, which makes the fault handler wait
 * (under ring_lock) before it blames a job, so that a job timeout meets a
 * fault being handled every time; reset_hold_ms, which holds the driver
 * back after a function level reset, before it sets the device up again,
 * so that an ioctl meets the reset; recovery_hold_ms, which holds a
 * function level reset before its own steps, so that a job's timeout
 * comes meanwhile (reset_timeouts counts those); fail_hold_ms, which
 * holds the driver after each job it fails on an unplug or a reset, so
 * that the job is freed meanwhile; kdq_signal_hold_us, which holds the
 * signaler of each job fence of the driver's dequeuer before the
 * dequeuer's callback, so that its work meets a fence signaled whose
 * callbacks still run; sem_reserve_hold_ms, which holds each job between
 * its semaphore reservation and run_job, so that another engine's job
 * finds the pool reserved with no job in a ring; then those of the flush
 * (megpu_flush.c) and multi-GPU (megpu_mgpu.c) code.
 */

#include <linux/debugfs.h>
#include <linux/seq_file.h>
#include <drm/drm_drv.h>
#include <drm/drm_file.h>

#include "megpu_drv.h"

static int megpu_delay_show(struct seq_file *m, void *data)
{
	struct megpu_device *mdev = m->private;
	unsigned int i;
	int idx;

	/* registers only while the device is there */
	if (!drm_dev_enter(&mdev->drm, &idx))
		return -ENODEV;

	for (i = 0; i < mdev->num_engines; i++)
		seq_printf(m, "%u %u\n", i,
			   megpu_eng_read(&mdev->engines[i],
					  MEGPU_ENG_DELAY_US));
	drm_dev_exit(idx);
	return 0;
}

/* "ENGINE USEC": hold an engine back before each packet (tests). */
static ssize_t megpu_delay_write(struct file *file, const char __user *ubuf,
				 size_t len, loff_t *pos)
{
	struct megpu_device *mdev =
		((struct seq_file *)file->private_data)->private;
	unsigned int engine, usec;
	char buf[32];
	int ret, idx;

	ret = megpu_debugfs_arg(ubuf, len, buf, sizeof(buf));
	if (ret)
		return ret;
	if (sscanf(buf, "%u %u", &engine, &usec) != 2 ||
	    engine >= mdev->num_engines || usec > 1000000)
		return -EINVAL;
	if (!drm_dev_enter(&mdev->drm, &idx))
		return -ENODEV;
	megpu_eng_write(&mdev->engines[engine], MEGPU_ENG_DELAY_US, usec);
	drm_dev_exit(idx);
	return len;
}

DEFINE_SHOW_STORE_ATTRIBUTE(megpu_delay);

/* drm_driver.debugfs_init: the files that can be written. */
void megpu_debugfs_minor_init(struct drm_minor *minor)
{
	debugfs_create_file("delay_us", 0644, minor->debugfs_root,
			    to_megpu(minor->dev), &megpu_delay_fops);
	debugfs_create_u32("sem_pool_limit", 0644, minor->debugfs_root,
			   &to_megpu(minor->dev)->sem_limit);
	debugfs_create_u32("fault_hold_ms", 0644, minor->debugfs_root,
			   &to_megpu(minor->dev)->fault_hold_ms);
	debugfs_create_u32("reset_hold_ms", 0644, minor->debugfs_root,
			   &to_megpu(minor->dev)->reset_hold_ms);
	debugfs_create_u32("recovery_hold_ms", 0644, minor->debugfs_root,
			   &to_megpu(minor->dev)->recovery_hold_ms);
	debugfs_create_u32("reset_timeouts", 0444, minor->debugfs_root,
			   &to_megpu(minor->dev)->reset_timeouts);
	debugfs_create_u32("fail_hold_ms", 0644, minor->debugfs_root,
			   &to_megpu(minor->dev)->fail_hold_ms);
	debugfs_create_u32("kdq_signal_hold_us", 0644, minor->debugfs_root,
			   &to_megpu(minor->dev)->kdq_signal_hold_us);
	debugfs_create_u32("sem_reserve_hold_ms", 0644, minor->debugfs_root,
			   &to_megpu(minor->dev)->sem_reserve_hold_ms);
	megpu_flush_debugfs_minor_init(minor);
	megpu_floor_debugfs_init(minor);
	megpu_mgpu_debugfs_minor_init(minor);
}
