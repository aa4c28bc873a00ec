// SPDX-License-Identifier: GPL-2.0
/* Copyright 2026 The megpu authors */
/**
 * DOC: the floor of a job's latency (issue 12)
 *
 * An empty job costs at least a submit ioctl, a doorbell and an
 * interrupt. `megpu bench` reports the empty job as a multiple of that
 * floor, so it measures the pieces in the same run: a no-op ioctl from
 * userspace, and here, timed in the kernel so that no syscall is counted
 * twice,
 *
 * - a doorbell: one write of an engine's RING_TAIL register with the
 *   tail it already has (the engine wakes, finds nothing new and sleeps:
 *   the MMIO exit and the device's register path, nothing more);
 * - an interrupt round trip: MEGPU_REG_IRQ_TEST raises the misc vector,
 *   the hard handler completes, the writer wakes.
 *
 * debugfs "floor": write "doorbell N" or "irq N" (N up to 100000) runs
 * the probe N times; a read shows the last run as "OP N TOTAL_NS".
 */

#include <linux/debugfs.h>
#include <linux/ktime.h>
#include <linux/seq_file.h>
#include <drm/drm_drv.h>
#include <drm/drm_file.h>

#include "megpu_drv.h"

#define MEGPU_FLOOR_MAX		100000
#define MEGPU_FLOOR_IRQ_MS	1000

static int megpu_floor_doorbell(struct megpu_device *mdev, u32 n)
{
	struct megpu_engine *eng = &mdev->engines[0];
	u32 i;

	mutex_lock(&eng->ring_lock);
	for (i = 0; i < n; i++)
		megpu_eng_write(eng, MEGPU_ENG_RING_TAIL, eng->tail);
	mutex_unlock(&eng->ring_lock);
	return 0;
}

static int megpu_floor_irq(struct megpu_device *mdev, u32 n)
{
	u32 i;

	for (i = 0; i < n; i++)
		if (!megpu_irq_test(mdev, MEGPU_VEC_MISC, MEGPU_FLOOR_IRQ_MS))
			return -EIO;
	return 0;
}

static int megpu_floor_show(struct seq_file *m, void *data)
{
	struct megpu_device *mdev = m->private;

	mutex_lock(&mdev->floor_lock);
	seq_printf(m, "%s %u %llu\n", mdev->floor_op[0] ? mdev->floor_op : "-",
		   mdev->floor_n, mdev->floor_ns);
	mutex_unlock(&mdev->floor_lock);
	return 0;
}

static ssize_t megpu_floor_write(struct file *file, const char __user *ubuf,
				 size_t len, loff_t *pos)
{
	struct megpu_device *mdev =
		((struct seq_file *)file->private_data)->private;
	char buf[32], op[16];
	u64 t0;
	int ret, idx;
	u32 n;

	ret = megpu_debugfs_arg(ubuf, len, buf, sizeof(buf));
	if (ret)
		return ret;
	if (sscanf(buf, "%15s %u", op, &n) != 2 || !n ||
	    n > MEGPU_FLOOR_MAX)
		return -EINVAL;
	if (strcmp(op, "doorbell") && strcmp(op, "irq"))
		return -EINVAL;
	if (!drm_dev_enter(&mdev->drm, &idx))
		return -ENODEV;
	mutex_lock(&mdev->floor_lock);
	t0 = ktime_get_ns();
	ret = op[0] == 'd' ? megpu_floor_doorbell(mdev, n) :
			     megpu_floor_irq(mdev, n);
	if (!ret) {
		strscpy(mdev->floor_op, op, sizeof(mdev->floor_op));
		mdev->floor_n = n;
		mdev->floor_ns = ktime_get_ns() - t0;
	}
	mutex_unlock(&mdev->floor_lock);
	drm_dev_exit(idx);
	return ret ?: len;
}

DEFINE_SHOW_STORE_ATTRIBUTE(megpu_floor);

void megpu_floor_debugfs_init(struct drm_minor *minor)
{
	debugfs_create_file("floor", 0644, minor->debugfs_root,
			    to_megpu(minor->dev),
			    &megpu_floor_fops);
}
