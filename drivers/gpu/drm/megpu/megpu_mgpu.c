// SPDX-License-Identifier: GPL-2.0
/**
 * DOC: Multi-GPU coordination (seed 000)
 *
 * Agent numbering and the summed
 * semaphore query.
 *
 * Every bound megpu device with the MGPU feature is an agent. The driver
 * numbers them 0, 1, ... in PCI address order and writes the id and the
 * count into each device (MGPU_AGENT_ID/COUNT); when a device comes or
 * goes all are renumbered. Nothing else is central: the devices' engines
 * coordinate through MSEM and ARB packets on a BO that one device exports
 * and the others import with PRIME (megpu_gem_prime_import_sg_table maps
 * the same pages into each importer's GPU address space).
 *
 * For tests, debugfs "mgpu_schedule" (of any agent) installs one schedule
 * block shared by all agents (MGPU_SCHED): a page the driver maps for
 * each device, so a race is replayed step by step on real devices. A
 * seeded schedule may be traced ("... trace"): the driver adds
 * MEGPU_MGPU_TRACE_PAGES pages for the devices' step records, which
 * debugfs "mgpu_trace" prints, and "done A" marks agent A as having no
 * step left, so a schedule as long as a whole run never waits on it.
 * debugfs "mgpu" shows the agent, the schedule position and the
 * engines' MSEM/ARB counters.
 */

#include <linux/debugfs.h>
#include <linux/dma-mapping.h>
#include <linux/highmem.h>
#include <linux/iosys-map.h>
#include <linux/list.h>
#include <linux/mutex.h>
#include <linux/pci.h>
#include <linux/seq_file.h>
#include <linux/slab.h>
#include <linux/unaligned.h>

#include <drm/drm_drv.h>
#include <drm/drm_gem.h>
#include <drm/drm_print.h>
#include <drm/megpu_drm.h>

#include "megpu_drv.h"
#include "megpu_hw_mgpu.h"

static DEFINE_MUTEX(megpu_agents_lock);
static LIST_HEAD(megpu_agents);		/* in PCI address order */
static struct page *megpu_sched_page;	/* the schedule block, or NULL */
static u32 megpu_sched_len;
/* a traced schedule's step records, 2^order pages, or NULL */
#define MEGPU_MGPU_TRACE_ORDER	4
static struct page *megpu_trace_pages;

static u32 megpu_pci_key(struct pci_dev *pdev)
{
	return (u32)pci_domain_nr(pdev->bus) << 16 | pci_dev_id(pdev);
}

static void megpu_mgpu_renumber_locked(void)
{
	struct megpu_device *mdev;
	u32 n = 0, count = 0;

	list_for_each_entry(mdev, &megpu_agents, agent_link)
		count++;
	count = min_t(u32, count, MEGPU_MGPU_MAX_AGENTS);
	list_for_each_entry(mdev, &megpu_agents, agent_link) {
		mdev->agent_id = n < count ? n : ~0u;
		mdev->agent_count = count;
		megpu_write(mdev, MEGPU_REG_MGPU_AGENT_COUNT, count);
		megpu_write(mdev, MEGPU_REG_MGPU_AGENT_ID, mdev->agent_id);
		n++;
	}
}

/**
 * megpu_mgpu_register - make a probed device an agent
 * @mdev: the device, after its reset
 */
void megpu_mgpu_register(struct megpu_device *mdev)
{
	struct megpu_device *pos;

	if (!(mdev->caps & MEGPU_CAP_MGPU))
		return;
	mutex_lock(&megpu_agents_lock);
	list_for_each_entry(pos, &megpu_agents, agent_link)
		if (megpu_pci_key(pos->pdev) > megpu_pci_key(mdev->pdev))
			break;
	list_add_tail(&mdev->agent_link, &pos->agent_link);
	mdev->agent_registered = true;
	megpu_mgpu_renumber_locked();
	mutex_unlock(&megpu_agents_lock);
	drm_info(&mdev->drm, "multi-GPU agent %u of %u\n", mdev->agent_id,
		 mdev->agent_count);
}

/**
 * megpu_mgpu_reset_done - tell a reset device its agent id again
 * @mdev: the device, after a function level reset
 */
void megpu_mgpu_reset_done(struct megpu_device *mdev)
{
	if (!(mdev->caps & MEGPU_CAP_MGPU))
		return;
	mutex_lock(&megpu_agents_lock);
	if (mdev->agent_registered) {
		megpu_write(mdev, MEGPU_REG_MGPU_AGENT_COUNT, mdev->agent_count);
		megpu_write(mdev, MEGPU_REG_MGPU_AGENT_ID, mdev->agent_id);
	}
	mutex_unlock(&megpu_agents_lock);
}

static void megpu_mgpu_sched_detach_locked(struct megpu_device *mdev)
{
	if (mdev->mgpu_sched_dma) {
		megpu_write(mdev, MEGPU_REG_MGPU_SCHED_LO, 0);
		megpu_write(mdev, MEGPU_REG_MGPU_SCHED_HI, 0);
		dma_unmap_page(&mdev->pdev->dev, mdev->mgpu_sched_dma,
			       PAGE_SIZE, DMA_BIDIRECTIONAL);
		mdev->mgpu_sched_dma = 0;
	}
	if (mdev->mgpu_trace_dma) {
		dma_unmap_page(&mdev->pdev->dev, mdev->mgpu_trace_dma,
			       PAGE_SIZE << MEGPU_MGPU_TRACE_ORDER,
			       DMA_BIDIRECTIONAL);
		mdev->mgpu_trace_dma = 0;
	}
}

/* Take the schedule off every agent and free it. */
static void megpu_mgpu_sched_off_locked(void)
{
	struct megpu_device *mdev;

	list_for_each_entry(mdev, &megpu_agents, agent_link)
		megpu_mgpu_sched_detach_locked(mdev);
	if (megpu_sched_page)
		__free_page(megpu_sched_page);
	if (megpu_trace_pages)
		__free_pages(megpu_trace_pages, MEGPU_MGPU_TRACE_ORDER);
	megpu_sched_page = NULL;
	megpu_trace_pages = NULL;
	megpu_sched_len = 0;
}

/**
 * megpu_mgpu_unregister - the device goes away; renumber the others
 * @mdev: the device
 */
void megpu_mgpu_unregister(struct megpu_device *mdev)
{
	if (!mdev->agent_registered)
		return;
	mutex_lock(&megpu_agents_lock);
	megpu_mgpu_sched_detach_locked(mdev);
	list_del(&mdev->agent_link);
	if (list_empty(&megpu_agents))
		megpu_mgpu_sched_off_locked();
	mdev->agent_registered = false;
	megpu_mgpu_renumber_locked();
	mutex_unlock(&megpu_agents_lock);
}

int megpu_mgpu_param(struct megpu_device *mdev, u32 param, u64 *value)
{
	if (!(mdev->caps & MEGPU_CAP_MGPU))
		return -EOPNOTSUPP;
	mutex_lock(&megpu_agents_lock);
	*value = param == DRM_MEGPU_PARAM_MGPU_AGENT_ID ? mdev->agent_id :
		 mdev->agent_count;
	mutex_unlock(&megpu_agents_lock);
	return 0;
}

/*
 * Read @n words at @off of @obj: a megpu BO's (or an import of one) by
 * their pages (megpu_bo_peek()), another driver's buffer through its
 * exporter's mapping.
 */
static int megpu_bo_read_u32s(struct drm_gem_object *obj, u64 off, u32 *v,
			      u32 n)
{
	struct iosys_map map;
	u64 word;
	int ret;
	u32 i;

	for (i = 0; i < n && !megpu_bo_peek(obj, off + 4 * i, 4, &word); i++)
		v[i] = word;
	if (i == n)
		return 0;
	ret = drm_gem_vmap_unlocked(obj, &map);
	if (ret)
		return ret;
	for (i = 0; i < n; i++)
		v[i] = iosys_map_rd(&map, off + 4 * i, u32);
	drm_gem_vunmap_unlocked(obj, &map);
	return 0;
}

int megpu_ioctl_msem_query(struct drm_device *drm, void *data,
			   struct drm_file *file)
{
	struct megpu_device *mdev = to_megpu(drm);
	struct drm_megpu_msem_query *args = data;
	struct drm_gem_object *obj;
	u32 count, sum = 0;
	int ret;

	if (!(mdev->caps & MEGPU_CAP_MGPU))
		return -EOPNOTSUPP;
	mutex_lock(&megpu_agents_lock);
	count = mdev->agent_count;
	mutex_unlock(&megpu_agents_lock);
	if (args->pad || (args->offset & 3) || !args->mask ||
	    (args->mask & ~GENMASK(count - 1, 0)))
		return -EINVAL;
	obj = drm_gem_object_lookup(file, args->handle);
	if (!obj)
		return -ENOENT;
	if (args->offset > obj->size || obj->size - args->offset < 4 * count) {
		ret = -EINVAL;
		goto out;
	}
	memset(args->slots, 0, sizeof(args->slots));
	ret = megpu_bo_read_u32s(obj, args->offset, args->slots, count);
	if (ret)
		goto out;
	for (u32 a = 0; a < count; a++)
		if (args->mask & BIT(a))
			sum += args->slots[a];	/* wraps as the device's adder */
	args->value = sum;
out:
	drm_gem_object_put(obj);
	return ret;
}

/*
 * The schedule block and the test files below are for tests and the
 * benchmarks (CONFIG_DRM_MEGPU_TESTING); a shipped driver has neither.
 */
#if IS_ENABLED(CONFIG_DRM_MEGPU_TESTING)

/*
 * Map the trace for @mdev; the block holds one address for all devices,
 * so each must see the pages at the same bus address (no IOMMU between).
 */
static int megpu_mgpu_trace_map_locked(struct megpu_device *mdev,
				       __le32 *blk)
{
	u64 want = le32_to_cpu(blk[MEGPU_MGPU_SCHED_TRACE / 4]) |
		   (u64)le32_to_cpu(blk[MEGPU_MGPU_SCHED_TRACE / 4 + 1]) << 32;
	dma_addr_t dma;

	dma = dma_map_page(&mdev->pdev->dev, megpu_trace_pages, 0,
			   PAGE_SIZE << MEGPU_MGPU_TRACE_ORDER,
			   DMA_BIDIRECTIONAL);
	if (dma_mapping_error(&mdev->pdev->dev, dma))
		return -ENOMEM;
	mdev->mgpu_trace_dma = dma;
	if (want && want != dma)
		return -EOPNOTSUPP;
	blk[MEGPU_MGPU_SCHED_TRACE / 4] = cpu_to_le32(lower_32_bits(dma));
	blk[MEGPU_MGPU_SCHED_TRACE / 4 + 1] = cpu_to_le32(upper_32_bits(dma));
	return 0;
}

/*
 * Install a schedule for every agent: @len agent ids, or (@agent NULL)
 * @len steps drawn from @seed over the agents of @mask, @traced: with a
 * step trace. The block is written before any device is pointed at it,
 * position 0.
 */
static int megpu_mgpu_sched_set_locked(const u8 *agent, u32 len, u64 seed,
				       u32 mask, bool traced)
{
	struct megpu_device *mdev;
	__le32 *blk;
	dma_addr_t dma;
	int ret;

	megpu_mgpu_sched_off_locked();
	if (!len)
		return 0;
	megpu_sched_page = alloc_page(GFP_KERNEL | __GFP_ZERO);
	if (!megpu_sched_page)
		return -ENOMEM;
	blk = page_address(megpu_sched_page);
	blk[MEGPU_MGPU_SCHED_POS / 4] = cpu_to_le32(0);
	if (agent) {
		blk[MEGPU_MGPU_SCHED_LEN / 4] = cpu_to_le32(len);
		memcpy((u8 *)blk + MEGPU_MGPU_SCHED_AGENT(0), agent, len);
	} else {
		blk[MEGPU_MGPU_SCHED_LEN / 4] =
			cpu_to_le32(len | MEGPU_MGPU_SCHED_SEEDED |
				    (traced ? MEGPU_MGPU_SCHED_TRACED : 0));
		blk[MEGPU_MGPU_SCHED_SEED / 4] = cpu_to_le32(lower_32_bits(seed));
		blk[MEGPU_MGPU_SCHED_SEED / 4 + 1] =
			cpu_to_le32(upper_32_bits(seed));
		blk[MEGPU_MGPU_SCHED_MASK / 4] = cpu_to_le32(mask);
	}
	if (traced) {
		megpu_trace_pages = alloc_pages(GFP_KERNEL | __GFP_ZERO,
						MEGPU_MGPU_TRACE_ORDER);
		if (!megpu_trace_pages) {
			megpu_mgpu_sched_off_locked();
			return -ENOMEM;
		}
		blk[MEGPU_MGPU_SCHED_TRACE_CAP / 4] =
			cpu_to_le32((PAGE_SIZE << MEGPU_MGPU_TRACE_ORDER) /
				    MEGPU_MGPU_REC_SIZE);
	}
	megpu_sched_len = len;
	list_for_each_entry(mdev, &megpu_agents, agent_link) {
		ret = traced ? megpu_mgpu_trace_map_locked(mdev, blk) : 0;
		if (ret) {
			megpu_mgpu_sched_off_locked();
			return ret;
		}
		dma = dma_map_page(&mdev->pdev->dev, megpu_sched_page, 0,
				   PAGE_SIZE, DMA_BIDIRECTIONAL);
		if (dma_mapping_error(&mdev->pdev->dev, dma)) {
			megpu_mgpu_sched_off_locked();
			return -ENOMEM;
		}
		mdev->mgpu_sched_dma = dma;
		megpu_write(mdev, MEGPU_REG_MGPU_SCHED_HI, upper_32_bits(dma));
		megpu_write(mdev, MEGPU_REG_MGPU_SCHED_LO, lower_32_bits(dma));
	}
	return 0;
}

/* "done A": agent A has no step left; its turns pass. */
static int megpu_mgpu_sched_done_locked(u32 agent)
{
	u8 *blk;

	if (!megpu_sched_page || !megpu_trace_pages ||
	    agent >= MEGPU_MGPU_MAX_AGENTS)
		return -EINVAL;
	blk = page_address(megpu_sched_page);
	WRITE_ONCE(blk[MEGPU_MGPU_SCHED_DONE(agent)], 1);
	return 0;
}

/* The position reached in the schedule (the devices advance it). */
static u32 megpu_mgpu_sched_pos_locked(void)
{
	__le32 *blk;

	if (!megpu_sched_page)
		return 0;
	blk = page_address(megpu_sched_page);
	return le32_to_cpu(READ_ONCE(blk[MEGPU_MGPU_SCHED_POS / 4]));
}

static int megpu_mgpu_show(struct seq_file *m, void *data)
{
	struct megpu_device *mdev = m->private;
	unsigned int i;
	int idx;

	/* registers only while the device is there */
	if (!drm_dev_enter(&mdev->drm, &idx))
		return -ENODEV;

	mutex_lock(&megpu_agents_lock);
	seq_printf(m, "agent %d\ncount %u\n",
		   mdev->agent_id == ~0u ? -1 : (int)mdev->agent_id,
		   mdev->agent_count);
	seq_printf(m, "schedule %u/%u\n", megpu_mgpu_sched_pos_locked(),
		   megpu_sched_len);
	mutex_unlock(&megpu_agents_lock);
	seq_printf(m, "steps %u\n", megpu_read(mdev, MEGPU_REG_MGPU_STEPS));
	for (i = 0; i < mdev->num_engines; i++) {
		struct megpu_engine *eng = &mdev->engines[i];

		seq_printf(m, "engine %u msem_retries %u msem_false_blocks %u arb_spins %u arb_failed_waits %u\n",
			   i, megpu_eng_read(eng, MEGPU_ENG_MSEM_RETRIES),
			   megpu_eng_read(eng, MEGPU_ENG_MSEM_FALSE_BLOCKS),
			   megpu_eng_read(eng, MEGPU_ENG_ARB_SPINS),
			   megpu_eng_read(eng, MEGPU_ENG_ARB_FAILED_WAITS));
	}
	drm_dev_exit(idx);
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(megpu_mgpu);

static int megpu_mgpu_schedule_show(struct seq_file *m, void *data)
{
	mutex_lock(&megpu_agents_lock);
	seq_printf(m, "%u %u\n", megpu_mgpu_sched_pos_locked(),
		   megpu_sched_len);
	mutex_unlock(&megpu_agents_lock);
	return 0;
}

/*
 * "seed S mask M len L [trace]": a seeded schedule of L steps (see
 * megpu_hw.h), with a step trace if asked.
 */
static int megpu_mgpu_schedule_seeded(char *p)
{
	char *key[3] = { "seed", "mask", "len" }, *tok;
	bool traced = false;
	u64 val[3];
	unsigned int i;
	int ret;

	for (i = 0; i < 3; i++) {
		tok = strsep(&p, " \t\n");
		if (!tok || strcmp(tok, key[i]))
			return -EINVAL;
		tok = strsep(&p, " \t\n");
		ret = tok ? kstrtou64(tok, 0, &val[i]) : -EINVAL;
		if (ret)
			return ret;
	}
	if (p && !strcmp(strim(p), "trace"))
		traced = true;
	else if (p && *strim(p))
		return -EINVAL;
	if (!val[1] || val[1] >= BIT(MEGPU_MGPU_MAX_AGENTS) ||
	    val[2] > MEGPU_MGPU_SCHED_MAX)
		return -EINVAL;
	mutex_lock(&megpu_agents_lock);
	ret = megpu_mgpu_sched_set_locked(NULL, val[2], val[0], val[1],
					  traced);
	mutex_unlock(&megpu_agents_lock);
	return ret;
}

/*
 * "A0 A1 ...": agent ids, in the order their steps must be taken, for
 * all agents (an empty line or "off": free running again); or "seed S
 * mask M len L": the devices draw the order from the seed.
 */
static ssize_t megpu_mgpu_schedule_write(struct file *file,
					 const char __user *ubuf, size_t len,
					 loff_t *pos)
{
	u32 max = PAGE_SIZE - MEGPU_MGPU_SCHED_AGENT(0), n = 0;
	char *buf, *p, *tok;
	u8 *agent;
	int ret;

	if (len > 4 * PAGE_SIZE)
		return -EINVAL;
	buf = memdup_user_nul(ubuf, len);
	if (IS_ERR(buf))
		return PTR_ERR(buf);
	agent = kmalloc(max, GFP_KERNEL);
	if (!agent) {
		ret = -ENOMEM;
		goto out;
	}
	p = strim(buf);
	if (!strncmp(p, "seed", 4)) {
		ret = megpu_mgpu_schedule_seeded(p);
		goto out;
	}
	if (!strncmp(p, "done ", 5)) {
		u32 a;

		ret = kstrtou32(p + 5, 0, &a);
		if (ret)
			goto out;
		mutex_lock(&megpu_agents_lock);
		ret = megpu_mgpu_sched_done_locked(a);
		mutex_unlock(&megpu_agents_lock);
		goto out;
	}
	if (!strcmp(p, "off"))
		p = "";
	while ((tok = strsep(&p, " \t\n,")) != NULL) {
		u8 a;

		if (!*tok)
			continue;
		ret = kstrtou8(tok, 0, &a);
		if (ret)
			goto out;
		if (n == max || a >= MEGPU_MGPU_MAX_AGENTS) {
			ret = -EINVAL;
			goto out;
		}
		agent[n++] = a;
	}
	mutex_lock(&megpu_agents_lock);
	ret = megpu_mgpu_sched_set_locked(agent, n, 0, 0, false);
	mutex_unlock(&megpu_agents_lock);
out:
	kfree(agent);
	kfree(buf);
	return ret ?: len;
}

DEFINE_SHOW_STORE_ATTRIBUTE(megpu_mgpu_schedule);

/*
 * The traced schedule's steps: "count N cap C", then one line per record
 * kept: agent kind offset engine value.
 */
static int megpu_mgpu_trace_show(struct seq_file *m, void *data)
{
	u32 count, cap, i;
	__le32 *blk;
	u8 *rec;

	mutex_lock(&megpu_agents_lock);
	if (!megpu_sched_page || !megpu_trace_pages) {
		mutex_unlock(&megpu_agents_lock);
		return -ENOENT;
	}
	blk = page_address(megpu_sched_page);
	count = le32_to_cpu(READ_ONCE(blk[MEGPU_MGPU_SCHED_TRACE_COUNT / 4]));
	cap = le32_to_cpu(blk[MEGPU_MGPU_SCHED_TRACE_CAP / 4]);
	seq_printf(m, "count %u cap %u\n", count, cap);
	rec = page_address(megpu_trace_pages);
	for (i = 0; i < min(count, cap); i++, rec += MEGPU_MGPU_REC_SIZE)
		seq_printf(m, "%u %u %u %u %u\n", rec[MEGPU_MGPU_REC_AGENT],
			   rec[MEGPU_MGPU_REC_KIND], rec[MEGPU_MGPU_REC_OFFSET],
			   rec[MEGPU_MGPU_REC_ENGINE],
			   get_unaligned_le32(rec + MEGPU_MGPU_REC_VALUE));
	mutex_unlock(&megpu_agents_lock);
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(megpu_mgpu_trace);

void megpu_mgpu_debugfs_minor_init(struct drm_minor *minor)
{
	struct megpu_device *mdev = to_megpu(minor->dev);

	if (!(mdev->caps & MEGPU_CAP_MGPU))
		return;
	debugfs_create_file("mgpu", 0444, minor->debugfs_root, mdev,
			    &megpu_mgpu_fops);
	debugfs_create_file("mgpu_schedule", 0644, minor->debugfs_root, mdev,
			    &megpu_mgpu_schedule_fops);
	debugfs_create_file("mgpu_trace", 0444, minor->debugfs_root, mdev,
			    &megpu_mgpu_trace_fops);
}

#endif /* CONFIG_DRM_MEGPU_TESTING */
