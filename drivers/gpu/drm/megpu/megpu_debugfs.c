// SPDX-License-Identifier: GPL-2.0
/* Copyright 2026 The megpu authors */
/**
 * DOC: debugfs
 *
 * Live object counters (leak checks), engine state, the raw words of the
 * last ring frames (decoded in userspace by libmegpu, the one packet
 * decoder), and the last faults.
 */

#include <linux/debugfs.h>
#include <linux/seq_file.h>
#include <linux/uaccess.h>
#include <drm/drm_debugfs.h>
#include <drm/drm_drv.h>
#include <drm/drm_file.h>
#include <drm/drm_print.h>

#include "megpu_drv.h"

static int megpu_counters_show(struct seq_file *m, void *data)
{
	struct drm_debugfs_entry *entry = m->private;
	struct megpu_device *mdev = to_megpu(entry->dev);

	seq_printf(m, "bos %d\n", atomic_read(&mdev->live_bos));
	seq_printf(m, "jobs %d\n", atomic_read(&mdev->live_jobs));
	seq_printf(m, "vms %d\n", atomic_read(&mdev->live_vms));
	seq_printf(m, "files %d\n", atomic_read(&mdev->live_files));
	seq_printf(m, "mappings %d\n", atomic_read(&mdev->live_mappings));
	/* unmaps that gave up on a flush: their BOs go with the device */
	seq_printf(m, "kept %u\n", megpu_bo_registry_kept(mdev));
	seq_printf(m, "in_fences %d\n", atomic_read(&mdev->live_in_fences));
	seq_printf(m, "cancel_checks %lld\n",
		   atomic64_read(&mdev->cancel_checks));
	/* all megpu devices together: the pinned_mb limit is global */
	seq_printf(m, "pinned_bytes %llu\n", megpu_gem_pinned_bytes());
	/* of which page tables, kept as long as their address space */
	seq_printf(m, "page_table_bytes %llu\n", megpu_mmu_pt_bytes());
	return 0;
}

static int megpu_engines_show(struct seq_file *m, void *data)
{
	struct drm_debugfs_entry *entry = m->private;
	struct megpu_device *mdev = to_megpu(entry->dev);
	unsigned int i;
	int idx;

	/* registers only while the device is there */
	if (!drm_dev_enter(&mdev->drm, &idx))
		return -ENODEV;

	for (i = 0; i < mdev->num_engines; i++) {
		struct megpu_engine *eng = &mdev->engines[i];
		unsigned int active = 0;
		struct megpu_job *job;
		unsigned long flags;

		spin_lock_irqsave(&eng->job_lock, flags);
		list_for_each_entry(job, &eng->active, active_node)
			active++;
		spin_unlock_irqrestore(&eng->job_lock, flags);

		seq_printf(m, "%s: engine %u status 0x%x head 0x%x tail 0x%x\n",
			   eng->name, i, megpu_eng_read(eng, MEGPU_ENG_STATUS),
			   megpu_eng_read(eng, MEGPU_ENG_RING_HEAD),
			   megpu_eng_read(eng, MEGPU_ENG_RING_TAIL));
		seq_printf(m, "  emitted %llu completed %llu active %u\n",
			   eng->emitted, READ_ONCE(*eng->seqno_cpu), active);
		seq_printf(m, "  work_items %llu work_groups %llu\n",
			   megpu_eng_read(eng, MEGPU_ENG_WORK_ITEMS_LO) |
			   (u64)megpu_eng_read(eng, MEGPU_ENG_WORK_ITEMS_HI) << 32,
			   megpu_eng_read(eng, MEGPU_ENG_WORK_GROUPS_LO) |
			   (u64)megpu_eng_read(eng, MEGPU_ENG_WORK_GROUPS_HI) << 32);
		seq_printf(m, "  faults %u resets %u packets %llu\n",
			   eng->fault_count, eng->reset_count,
			   megpu_eng_read(eng, MEGPU_ENG_PACKETS_LO) |
			   (u64)megpu_eng_read(eng, MEGPU_ENG_PACKETS_HI) << 32);
	}
	drm_dev_exit(idx);
	return 0;
}

/*
 * The raw words of the frames still in the ring, from the oldest logged
 * frame's start to the tail, eight per line: libmegpu decodes them with
 * the decoder the tool and the tests use (megpu_debug_rings()).
 */
static void megpu_ring_words(struct seq_file *m, struct megpu_engine *eng)
{
	u32 mask = MEGPU_RING_SIZE / 4 - 1;
	unsigned int n = min(eng->frame_count, MEGPU_FAULT_LOG);
	u32 dw = eng->tail / 4, end = eng->tail / 4, count, i;

	if (n)
		dw = eng->frames[(eng->frame_count - n) % MEGPU_FAULT_LOG] / 4;
	count = (end - dw) & mask;
	seq_printf(m, "%s size %u start 0x%x dwords %u\n", eng->name,
		   MEGPU_RING_SIZE, dw * 4, count);
	for (i = 0; i < count; i++)
		seq_printf(m, " %08x%s", READ_ONCE(eng->ring[(dw + i) & mask]),
			   i % 8 == 7 || i + 1 == count ? "\n" : "");
}

static int megpu_rings_show(struct seq_file *m, void *data)
{
	struct drm_debugfs_entry *entry = m->private;
	struct megpu_device *mdev = to_megpu(entry->dev);
	unsigned int i;

	for (i = 0; i < mdev->num_engines; i++) {
		struct megpu_engine *eng = &mdev->engines[i];

		mutex_lock(&eng->ring_lock);
		megpu_ring_words(m, eng);
		mutex_unlock(&eng->ring_lock);
	}
	return 0;
}

static int megpu_faults_show(struct seq_file *m, void *data)
{
	struct drm_debugfs_entry *entry = m->private;
	struct megpu_device *mdev = to_megpu(entry->dev);
	unsigned int i, k;

	for (i = 0; i < mdev->num_engines; i++) {
		struct megpu_engine *eng = &mdev->engines[i];
		unsigned int n = min(eng->fault_count, MEGPU_FAULT_LOG);
		unsigned long flags;

		spin_lock_irqsave(&eng->job_lock, flags);
		for (k = eng->fault_count - n; k < eng->fault_count; k++) {
			struct megpu_fault *f = &eng->faults[k % MEGPU_FAULT_LOG];

			seq_printf(m, "%s: code %u %s %s addr 0x%llx ring 0x%x ctx %u seqno %llu\n",
				   eng->name, f->code,
				   f->info & MEGPU_FAULT_INFO_WRITE ?
				   "write" : "read",
				   f->info & MEGPU_FAULT_INFO_IN_IB ? "ib" : "ring",
				   f->addr, f->head, f->ctx, f->seqno);
		}
		spin_unlock_irqrestore(&eng->job_lock, flags);
	}
	return 0;
}

/* The argument written to a debugfs knob, as a string. */
int megpu_debugfs_arg(const char __user *ubuf, size_t len, char *buf,
		      size_t size)
{
	if (len >= size)
		return -EINVAL;
	if (copy_from_user(buf, ubuf, len))
		return -EFAULT;
	buf[len] = '\0';
	return 0;
}

static const struct drm_debugfs_info megpu_debugfs_list[] = {
	{ "counters", megpu_counters_show, 0 },
	{ "engines", megpu_engines_show, 0 },
	{ "rings", megpu_rings_show, 0 },
	{ "faults", megpu_faults_show, 0 },
};

void megpu_debugfs_init(struct megpu_device *mdev)
{
	drm_debugfs_add_files(&mdev->drm, megpu_debugfs_list,
			      ARRAY_SIZE(megpu_debugfs_list));
	megpu_sem_debugfs_init(mdev);
	megpu_flush_debugfs_init(mdev);
}
