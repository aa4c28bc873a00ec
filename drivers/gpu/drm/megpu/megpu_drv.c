// SPDX-License-Identifier: GPL-2.0
/* Copyright 2026 The megpu authors */
/**
 * DOC: megpu driver
 *
 * megpu: DRM render driver for the megpu virtual multi-engine GPU.
 * PCI probe and remove, the drm_driver and its ioctl table.
 */

#include <linux/delay.h>
#include <linux/dma-mapping.h>
#include <linux/module.h>
#include <linux/pci.h>
#include <linux/sched/signal.h>
#include <linux/slab.h>
#include <linux/wait.h>
#include <drm/drm_drv.h>
#include <drm/drm_file.h>
#include <drm/drm_gem.h>
#include <drm/drm_ioctl.h>
#include <drm/drm_managed.h>
#include <drm/drm_print.h>
#include <drm/megpu_drm.h>

#include "megpu_drv.h"

unsigned int megpu_job_timeout_ms = 2000;
module_param_named(job_timeout_ms, megpu_job_timeout_ms, uint, 0444);
MODULE_PARM_DESC(job_timeout_ms,
		 "time a job may run before its engine is reset (default 2000)");

bool megpu_gpu_semaphores = true;
bool megpu_drop_waits;
bool megpu_irq_retire = true;
/* switches for comparisons and negative controls: test builds only */
#if IS_ENABLED(CONFIG_DRM_MEGPU_TESTING)
module_param_named(gpu_semaphores, megpu_gpu_semaphores, bool, 0644);
MODULE_PARM_DESC(gpu_semaphores,
		 "wait for other engines with GPU semaphores (default) or on the CPU (0)");
module_param_named(drop_waits, megpu_drop_waits, bool, 0644);
MODULE_PARM_DESC(drop_waits,
		 "debug: emit no semaphore waits, so cross-engine races show (default 0)");
module_param_named(irq_retire, megpu_irq_retire, bool, 0644);
MODULE_PARM_DESC(irq_retire,
		 "retire completed jobs in the hard interrupt handler (default) or in its thread (0)");
#endif

unsigned int megpu_job_limit = 16384;
module_param_named(job_limit, megpu_job_limit, uint, 0644);
MODULE_PARM_DESC(job_limit,
		 "SUBMIT jobs one file may have queued or running; beyond, -EBUSY (default 16384)");

/*
 * Probe error paths, as i915's inject_probe_failure: the probe fails at
 * its Nth check point (test builds only). The DRM core's own allocation
 * failures are not injected this way: 6.12's drm_dev_init() error path
 * cannot take all of them (failinject_test says which).
 */
#if IS_ENABLED(CONFIG_DRM_MEGPU_TESTING)
static unsigned int megpu_inject_probe_failure;
module_param_named(inject_probe_failure, megpu_inject_probe_failure, uint,
		   0600);
MODULE_PARM_DESC(inject_probe_failure,
		 "test: fail the probe at its Nth check point with -ENOMEM (0: never)");

static int megpu_probe_point(struct device *dev, unsigned int *point)
{
	if (++*point != READ_ONCE(megpu_inject_probe_failure))
		return 0;
	dev_info(dev, "probe failure injected at check point %u\n", *point);
	return -ENOMEM;
}
#else
static int megpu_probe_point(struct device *dev, unsigned int *point)
{
	return 0;
}
#endif

bool megpu_sched_highpri = true;
module_param_named(sched_highpri, megpu_sched_highpri, bool, 0444);
MODULE_PARM_DESC(sched_highpri,
		 "run the schedulers' work on high-priority workqueues (default) or normal ones (0)");

#define DRIVER_NAME	"megpu"
#define DRIVER_DESC	"megpu virtual multi-engine GPU"
#define DRIVER_MAJOR	0
#define DRIVER_MINOR	1

static int megpu_ioctl_get_param(struct drm_device *drm, void *data,
				 struct drm_file *file)
{
	struct megpu_device *mdev = to_megpu(drm);
	struct drm_megpu_get_param *args = data;

	if (args->pad)
		return -EINVAL;

	switch (args->param) {
	case DRM_MEGPU_PARAM_DEVICE_ID:
		args->value = mdev->pdev->device;
		break;
	case DRM_MEGPU_PARAM_HW_VERSION:
		args->value = mdev->hw_version;
		break;
	case DRM_MEGPU_PARAM_ENGINE_COUNT:
		args->value = mdev->num_engines;
		break;
	case DRM_MEGPU_PARAM_FEATURES:
		args->value = mdev->caps;
		break;
	case DRM_MEGPU_PARAM_ENGINE_TYPES:
		args->value = mdev->engine_types;
		break;
	case DRM_MEGPU_PARAM_VA_SIZE:
		args->value = MEGPU_VA_SIZE;
		break;
	case DRM_MEGPU_PARAM_JOB_TIMEOUT_MS:
		args->value = megpu_job_timeout_ms;
		break;
	case DRM_MEGPU_PARAM_MAILBOX_SLOTS:
		args->value = ((struct megpu_file *)file->driver_priv)->mbox.slots;
		break;
	case DRM_MEGPU_PARAM_MGPU_AGENT_ID:
	case DRM_MEGPU_PARAM_MGPU_AGENT_COUNT:
		return megpu_mgpu_param(mdev, args->param, &args->value);
	default:
		return -EINVAL;
	}
	return 0;
}

static const struct drm_ioctl_desc megpu_ioctls[] = {
	DRM_IOCTL_DEF_DRV(MEGPU_GET_PARAM, megpu_ioctl_get_param,
			  DRM_RENDER_ALLOW),
	DRM_IOCTL_DEF_DRV(MEGPU_GEM_CREATE, megpu_ioctl_gem_create,
			  DRM_RENDER_ALLOW),
	DRM_IOCTL_DEF_DRV(MEGPU_GEM_MMAP_OFFSET, megpu_ioctl_gem_mmap_offset,
			  DRM_RENDER_ALLOW),
	DRM_IOCTL_DEF_DRV(MEGPU_GEM_INFO, megpu_ioctl_gem_info,
			  DRM_RENDER_ALLOW),
	DRM_IOCTL_DEF_DRV(MEGPU_GEM_WAIT, megpu_ioctl_gem_wait,
			  DRM_RENDER_ALLOW),
	DRM_IOCTL_DEF_DRV(MEGPU_SUBMIT, megpu_ioctl_submit,
			  DRM_RENDER_ALLOW | DRM_AUTH),
	DRM_IOCTL_DEF_DRV(MEGPU_FLUSH, megpu_ioctl_flush, DRM_RENDER_ALLOW),
	DRM_IOCTL_DEF_DRV(MEGPU_SYSCALL_WAIT, megpu_ioctl_syscall_wait,
			  DRM_RENDER_ALLOW),
	DRM_IOCTL_DEF_DRV(MEGPU_SYSCALL_RETURN, megpu_ioctl_syscall_return,
			  DRM_RENDER_ALLOW),
	DRM_IOCTL_DEF_DRV(MEGPU_MSEM_QUERY, megpu_ioctl_msem_query,
			  DRM_RENDER_ALLOW),
	DRM_IOCTL_DEF_DRV(MEGPU_TASKQ_CHECK, megpu_ioctl_taskq_check,
			  DRM_RENDER_ALLOW),
	DRM_IOCTL_DEF_DRV(MEGPU_TASKQ_NOTIFY, megpu_ioctl_taskq_notify,
			  DRM_RENDER_ALLOW),
	/* it submits jobs: authenticated on a primary node, as SUBMIT */
	DRM_IOCTL_DEF_DRV(MEGPU_TASKQ_ATTACH, megpu_ioctl_taskq_attach,
			  DRM_RENDER_ALLOW | DRM_AUTH),
	DRM_IOCTL_DEF_DRV(MEGPU_TASKQ_WAIT, megpu_ioctl_taskq_wait,
			  DRM_RENDER_ALLOW),
	DRM_IOCTL_DEF_DRV(MEGPU_TASKQ_SLEEP, megpu_ioctl_taskq_sleep,
			  DRM_RENDER_ALLOW),
	DRM_IOCTL_DEF_DRV(MEGPU_TASKQ_DETACH, megpu_ioctl_taskq_detach,
			  DRM_RENDER_ALLOW),
};

struct megpu_file *megpu_file_get(struct megpu_file *mfile)
{
	kref_get(&mfile->refcount);
	return mfile;
}

static void megpu_file_release(struct kref *kref)
{
	struct megpu_file *mfile = container_of(kref, struct megpu_file,
						refcount);

	/* no job of the file is left to write its mailbox */
	megpu_syscall_file_fini(mfile);
	megpu_user_put(mfile->user);
	atomic_dec(&mfile->mdev->live_files);
	kfree(mfile);
}

void megpu_file_put(struct megpu_file *mfile)
{
	kref_put(&mfile->refcount, megpu_file_release);
}

static int megpu_open(struct drm_device *drm, struct drm_file *file)
{
	struct megpu_device *mdev = to_megpu(drm);
	struct megpu_file *mfile;
	unsigned int i;
	int ret;

	mfile = kzalloc(sizeof(*mfile), GFP_KERNEL);
	if (!mfile)
		return -ENOMEM;
	kref_init(&mfile->refcount);
	mfile->mdev = mdev;
	init_waitqueue_head(&mfile->tq.wq);
	init_waitqueue_head(&mfile->tq.sleep_wq);
	INIT_LIST_HEAD(&mfile->tq.sleep_node);
	atomic_inc(&mdev->live_files);

	/* what the file pins is its opener's too (megpu_gem.c) */
	mfile->user = megpu_user_get_current();
	if (IS_ERR(mfile->user)) {
		ret = PTR_ERR(mfile->user);
		mfile->user = NULL;
		goto err_free;
	}
	mfile->vm = megpu_vm_create(mdev, mfile->user);
	if (IS_ERR(mfile->vm)) {
		ret = PTR_ERR(mfile->vm);
		goto err_free;
	}
	ret = megpu_syscall_file_init(mfile);
	if (ret)
		goto err_vm;

	for (i = 0; i < mdev->num_engines; i++) {
		struct drm_gpu_scheduler *sched = &mdev->engines[i].sched;

		ret = drm_sched_entity_init(&mfile->entity[i],
					    DRM_SCHED_PRIORITY_NORMAL, &sched,
					    1, NULL);
		if (ret)
			goto err_entities;
	}
	file->driver_priv = mfile;
	return 0;

err_entities:
	while (i--)
		drm_sched_entity_destroy(&mfile->entity[i]);
	megpu_syscall_file_fini(mfile);
err_vm:
	megpu_vm_put(mfile->vm);
err_free:
	megpu_user_put(mfile->user);
	atomic_dec(&mdev->live_files);
	kfree(mfile);
	return ret;
}

/* No job of @entity waits to be taken (drm_sched_entity_is_idle()). */
static bool megpu_entity_drained(struct drm_sched_entity *entity)
{
	return !spsc_queue_count(&entity->job_queue) ||
	       READ_ONCE(entity->stopped);
}

/*
 * Let the file's queued jobs reach their engines, as a close does with
 * other DRM drivers (drm_sched_entity_flush()), so that a process may
 * submit and exit. But for at most a second in all, since a job may wait
 * for a fence that never comes (drm_sched_entity_flush() would wait as
 * long as the process lives), and not at all for a killed process.
 */
static void megpu_file_flush_jobs(struct megpu_file *mfile)
{
	struct megpu_device *mdev = mfile->mdev;
	long left = MAX_WAIT_SCHED_ENTITY_Q_EMPTY;
	unsigned int i;

	if (fatal_signal_pending(current) ||
	    ((current->flags & PF_EXITING) && current->exit_code == SIGKILL))
		return;
	for (i = 0; i < mdev->num_engines && left > 0; i++) {
		struct drm_sched_entity *entity = &mfile->entity[i];

		/* the scheduler wakes job_scheduled as it takes a job */
		left = wait_event_killable_timeout(mdev->engines[i].sched.job_scheduled,
						   megpu_entity_drained(entity),
						   left);
	}
}

static void megpu_postclose(struct drm_device *drm, struct drm_file *file)
{
	struct megpu_file *mfile = file->driver_priv;
	unsigned int i;

	/* no service any more: its waves get -EPIPE instead of waiting */
	megpu_syscall_file_close(mfile);
	/* no more jobs from the kernel dequeuer */
	megpu_dequeue_file_close(mfile);
	/*
	 * Jobs that have not reached an engine within the flush's second
	 * are cancelled now (-ESRCH); the ones in a ring run to their end,
	 * or time out once: a hang bans the file, which cancels the rest.
	 */
	megpu_file_flush_jobs(mfile);
	for (i = 0; i < mfile->mdev->num_engines; i++)
		drm_sched_entity_fini(&mfile->entity[i]);
	megpu_vm_put(mfile->vm);
	megpu_file_put(mfile);
}

/* drm-engine-<name>: engine time used by this file, for gputop and co. */
static void megpu_show_fdinfo(struct drm_printer *p, struct drm_file *file)
{
	struct megpu_file *mfile = file->driver_priv;
	struct megpu_device *mdev = mfile->mdev;
	unsigned int i;

	for (i = 0; i < mdev->num_engines; i++)
		drm_printf(p, "drm-engine-%s:\t%llu ns\n",
			   mdev->engines[i].name,
			   (u64)atomic64_read(&mfile->busy_ns[i]));
	drm_show_memory_stats(p, file);
	/* the GPU context of this file, as debugfs frames and faults show it */
	drm_printf(p, "drm-megpu-context:\t%u\n", mfile->vm->ctx_id);
}

static const struct file_operations megpu_fops = {
	.owner = THIS_MODULE,
	DRM_GEM_FOPS,
	.show_fdinfo = drm_show_fdinfo,
};

static const struct drm_driver megpu_drm_driver = {
	.driver_features = DRIVER_GEM | DRIVER_RENDER | DRIVER_SYNCOBJ |
			   DRIVER_SYNCOBJ_TIMELINE,
	.open = megpu_open,
	.postclose = megpu_postclose,
	.show_fdinfo = megpu_show_fdinfo,
	.debugfs_init = megpu_debugfs_minor_init,
	.gem_create_object = megpu_gem_create_object,
	.gem_prime_import = megpu_gem_prime_import,
	.gem_prime_import_sg_table = megpu_gem_prime_import_sg_table,
	.ioctls = megpu_ioctls,
	.num_ioctls = ARRAY_SIZE(megpu_ioctls),
	.fops = &megpu_fops,
	.name = DRIVER_NAME,
	.desc = DRIVER_DESC,
	.major = DRIVER_MAJOR,
	.minor = DRIVER_MINOR,
};

/* The DRM device's last reference is gone: no file, no job is left. */
static void megpu_release(struct drm_device *drm, void *arg)
{
	struct megpu_device *mdev = arg;

	megpu_bo_registry_release_kept(mdev, false);
	megpu_sched_fini(mdev);
	megpu_sem_fini(mdev);
	xa_destroy(&mdev->ctxs);
}

static int megpu_check_hw(struct megpu_device *mdev)
{
	struct device *dev = &mdev->pdev->dev;
	u32 need = MEGPU_CAP_IRQ_TEST | MEGPU_CAP_ENGINES | MEGPU_CAP_MMU |
		   MEGPU_CAP_SEMAPHORE;
	u32 id = megpu_read(mdev, MEGPU_REG_ID);

	if (id != MEGPU_ID_MAGIC) {
		dev_err(dev, "not a megpu: ID register 0x%08x, expected 0x%08x\n",
			id, MEGPU_ID_MAGIC);
		return -ENODEV;
	}

	mdev->hw_version = megpu_read(mdev, MEGPU_REG_VERSION);
	if (MEGPU_HW_VERSION_GET_MAJOR(mdev->hw_version) !=
	    MEGPU_HW_VERSION_MAJOR) {
		dev_err(dev, "hardware version %u.%u, driver supports %u.x\n",
			MEGPU_HW_VERSION_GET_MAJOR(mdev->hw_version),
			MEGPU_HW_VERSION_GET_MINOR(mdev->hw_version),
			MEGPU_HW_VERSION_MAJOR);
		return -ENODEV;
	}

	mdev->caps = megpu_read(mdev, MEGPU_REG_CAPS);
	if ((mdev->caps & need) != need) {
		dev_err(dev, "device lacks features 0x%x\n",
			need & ~mdev->caps);
		return -ENODEV;
	}
	mdev->num_engines = megpu_read(mdev, MEGPU_REG_ENGINE_COUNT);
	mdev->engine_types = megpu_read(mdev, MEGPU_REG_ENGINE_TYPES);
	if (!mdev->num_engines || mdev->num_engines > MEGPU_MAX_ENGINES) {
		dev_err(dev, "bad engine count %u\n", mdev->num_engines);
		return -ENODEV;
	}
	if (megpu_read(mdev, MEGPU_REG_MSIX_VECTORS) < MEGPU_NUM_VECTORS) {
		dev_err(dev, "device has too few MSI-X vectors\n");
		return -ENODEV;
	}
	return 0;
}

static int megpu_probe(struct pci_dev *pdev, const struct pci_device_id *id)
{
	struct megpu_device *mdev;
	unsigned int point = 0;
	int ret;

	mdev = devm_drm_dev_alloc(&pdev->dev, &megpu_drm_driver,
				  struct megpu_device, drm);
	if (IS_ERR(mdev))
		return PTR_ERR(mdev);
	mdev->pdev = pdev;
	pci_set_drvdata(pdev, mdev);

	ret = megpu_probe_point(&pdev->dev, &point) ?:
	      pcim_enable_device(pdev);
	if (ret)
		return ret;
	pci_set_master(pdev);

	mdev->mmio = pcim_iomap_region(pdev, MEGPU_BAR_MMIO, DRIVER_NAME);
	if (IS_ERR(mdev->mmio))
		return PTR_ERR(mdev->mmio);

	ret = megpu_probe_point(&pdev->dev, &point) ?:
	      dma_set_mask_and_coherent(&pdev->dev, DMA_BIT_MASK(48));
	if (ret)
		return ret;
	mutex_init(&mdev->submit_lock);
	init_rwsem(&mdev->reset_sem);
	mutex_init(&mdev->recovery_lock);
	mutex_init(&mdev->mmu_lock);
	mutex_init(&mdev->floor_lock);
	xa_init_flags(&mdev->ctxs, XA_FLAGS_ALLOC1);
	megpu_flush_init(mdev);
	megpu_syscall_init(mdev);
	megpu_dequeue_init(mdev);
	ret = megpu_taskq_init(mdev);
	if (ret)
		return ret;

	ret = megpu_check_hw(mdev);
	if (ret)
		return ret;

	megpu_write(mdev, MEGPU_REG_RESET, MEGPU_RESET_MAGIC);

	ret = megpu_probe_point(&pdev->dev, &point) ?: megpu_irq_init(mdev);
	if (ret)
		return ret;

	ret = megpu_probe_point(&pdev->dev, &point) ?:
	      megpu_irq_self_test(mdev);
	if (ret)
		goto err_irq;

	ret = megpu_probe_point(&pdev->dev, &point) ?: megpu_sem_init(mdev);
	if (ret)
		goto err_irq;
	ret = megpu_probe_point(&pdev->dev, &point) ?: megpu_sched_init(mdev);
	if (ret) {
		megpu_sem_fini(mdev);
		goto err_irq;
	}
	/* released with the DRM device, after the last file is closed */
	ret = drmm_add_action_or_reset(&mdev->drm, megpu_release, mdev);
	if (ret)
		goto err_irq;
	megpu_irq_enable_engines(mdev);

	megpu_debugfs_init(mdev);
	megpu_syscall_debugfs_init(mdev);
	megpu_dequeue_debugfs_init(mdev);
	megpu_mgpu_register(mdev);
	ret = megpu_probe_point(&pdev->dev, &point) ?:
	      drm_dev_register(&mdev->drm, 0);
	if (ret) {
		megpu_mgpu_unregister(mdev);
		goto err_irq;
	}

	drm_info(&mdev->drm, "megpu %u.%u, %u engines, features 0x%x\n",
		 MEGPU_HW_VERSION_GET_MAJOR(mdev->hw_version),
		 MEGPU_HW_VERSION_GET_MINOR(mdev->hw_version),
		 mdev->num_engines, mdev->caps);
	return 0;

err_irq:
	megpu_write(mdev, MEGPU_REG_RESET, MEGPU_RESET_MAGIC);
	megpu_irq_fini(mdev);
	return ret;
}

/*
 * The PCI function goes away (rmmod, unbind, hot unplug), possibly while
 * files are open: stop the hardware and fail every job in flight now;
 * the schedulers, rings and semaphores stay until the last file is
 * closed (megpu_release()), since open files still own entities and jobs.
 */
static void megpu_remove(struct pci_dev *pdev)
{
	struct megpu_device *mdev = pci_get_drvdata(pdev);

	drm_dev_unplug(&mdev->drm);
	megpu_mgpu_unregister(mdev);
	/* the engines stop before a flush waiter takes its pages as drained */
	megpu_flush_device_reset(mdev, true);
	/*
	 * Its queued writes are dropped: kept BOs may go (and with a kept
	 * import its dma-buf, which may hold this very device).
	 */
	megpu_bo_registry_release_kept(mdev, true);
	megpu_irq_fini(mdev);
	megpu_dequeue_halt_all(mdev, -ENODEV);
	megpu_sched_fail_all(mdev, -ENODEV);
}

/*
 * A function level reset (`echo 1 > /sys/bus/pci/devices/.../reset`, or
 * any PCIe FLR) makes the device forget its rings, flushes, agent id and
 * what its engines were doing, while files stay open. Before it: the
 * queued writes land, the kernel dequeuers stop (-EIO), the schedulers
 * stop and every job on the hardware fails with -EIO. After it: the
 * rings, the agent id and the flush count are set up again and the jobs
 * queued behind run. BOs, address spaces and files are the driver's and
 * survive; the PCI core saves and restores the config space and MSI-X.
 * A TASKQ_ATTACH or FLUSH that comes meanwhile waits for reset_done
 * (reset_sem); a job timeout hands its job to the reset (recovery_lock,
 * see megpu_timedout_job()): none restarts a scheduler or programs an
 * engine inside the reset's window.
 */
static void megpu_reset_prepare(struct pci_dev *pdev)
{
	struct megpu_device *mdev = pci_get_drvdata(pdev);
	bool cookie;

	/* released by megpu_reset_done(), which the PCI core always calls */
	down_write(&mdev->reset_sem);
	drm_warn(&mdev->drm, "function level reset: jobs on the GPU fail with -EIO\n");
	/*
	 * Hung jobs' timeouts wait for recovery_lock: what the reset does
	 * under it may not allocate (annotated; the scheduler's stop is
	 * not, as in a timeout)
	 */
	mutex_lock(&mdev->recovery_lock);
	mdev->in_reset = true;
	/* test knob: a job's timeout meets the reset's own steps */
	if (IS_ENABLED(CONFIG_DRM_MEGPU_TESTING) &&
	    unlikely(mdev->recovery_hold_ms))
		msleep(min(mdev->recovery_hold_ms, MEGPU_FAULT_HOLD_MAX_MS));
	cookie = dma_fence_begin_signalling();
	megpu_flush_before_reset(mdev);
	megpu_dequeue_reset_prepare(mdev);
	/* the engines stop now, not when the reset comes */
	megpu_flush_device_reset(mdev, false);
	dma_fence_end_signalling(cookie);
	megpu_sched_reset_prepare(mdev);
	mutex_unlock(&mdev->recovery_lock);
}

static void megpu_reset_done(struct pci_dev *pdev)
{
	struct megpu_device *mdev = pci_get_drvdata(pdev);

	/* test knob: an ioctl meets the reset device not set up again */
	if (IS_ENABLED(CONFIG_DRM_MEGPU_TESTING) &&
	    unlikely(mdev->reset_hold_ms))
		msleep(min(mdev->reset_hold_ms, MEGPU_FAULT_HOLD_MAX_MS));
	megpu_flush_reset_done(mdev);
	megpu_mgpu_reset_done(mdev);
	mutex_lock(&mdev->recovery_lock);
	megpu_sched_reset_done(mdev);
	mdev->in_reset = false;
	mutex_unlock(&mdev->recovery_lock);
	drm_info(&mdev->drm, "function level reset done\n");
	up_write(&mdev->reset_sem);
}

static const struct pci_error_handlers megpu_err_handlers = {
	.reset_prepare = megpu_reset_prepare,
	.reset_done = megpu_reset_done,
};

static const struct pci_device_id megpu_pci_ids[] = {
	{ PCI_DEVICE(MEGPU_PCI_VENDOR_ID, MEGPU_PCI_DEVICE_ID) },
	{ }
};
MODULE_DEVICE_TABLE(pci, megpu_pci_ids);

static struct pci_driver megpu_pci_driver = {
	.name = DRIVER_NAME,
	.id_table = megpu_pci_ids,
	.probe = megpu_probe,
	.remove = megpu_remove,
	.err_handler = &megpu_err_handlers,
};

static int __init megpu_init(void)
{
	int ret = megpu_cleanup_module_init();

	if (ret)
		return ret;
	ret = pci_register_driver(&megpu_pci_driver);
	if (ret)
		megpu_cleanup_module_exit();
	return ret;
}
module_init(megpu_init);

static void __exit megpu_exit(void)
{
	pci_unregister_driver(&megpu_pci_driver);
	megpu_cleanup_module_exit();
}
module_exit(megpu_exit);

MODULE_AUTHOR("The megpu authors");
MODULE_DESCRIPTION(DRIVER_DESC);
MODULE_LICENSE("GPL");
