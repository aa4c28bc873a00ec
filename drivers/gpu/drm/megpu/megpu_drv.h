/* SPDX-License-Identifier: GPL-2.0 */
/* Copyright 2026 The megpu authors */
#ifndef MEGPU_DRV_H
#define MEGPU_DRV_H

#include <linux/completion.h>
#include <linux/io.h>
#include <drm/drm_device.h>

#include "megpu_hw.h"

struct megpu_device;

/**
 * struct megpu_vector - one MSI-X vector and its self-test state
 * @mdev: the device
 * @index: MSI-X vector number (MEGPU_VEC_*)
 * @irq: Linux IRQ number
 * @test_done: completed when a test interrupt arrives on this vector
 */
struct megpu_vector {
	struct megpu_device *mdev;
	unsigned int index;
	int irq;
	struct completion test_done;
};

/**
 * struct megpu_device - driver state of one megpu GPU
 * @drm: the DRM device
 * @pdev: the PCI function
 * @mmio: BAR0 registers
 * @hw_version: MEGPU_REG_VERSION
 * @caps: MEGPU_REG_CAPS feature bits
 * @num_engines: engines present
 * @engine_types: MEGPU_REG_ENGINE_TYPES
 * @vec: MSI-X vectors
 */
struct megpu_device {
	struct drm_device drm;
	struct pci_dev *pdev;
	void __iomem *mmio;

	u32 hw_version;
	u32 caps;
	u32 num_engines;
	u32 engine_types;

	struct megpu_vector vec[MEGPU_NUM_VECTORS];
};

static inline struct megpu_device *to_megpu(struct drm_device *drm)
{
	return container_of(drm, struct megpu_device, drm);
}

static inline u32 megpu_read(struct megpu_device *mdev, u32 reg)
{
	return readl(mdev->mmio + reg);
}

static inline void megpu_write(struct megpu_device *mdev, u32 reg, u32 val)
{
	writel(val, mdev->mmio + reg);
}

/* megpu_irq.c */
int megpu_irq_init(struct megpu_device *mdev);
void megpu_irq_fini(struct megpu_device *mdev);
int megpu_irq_self_test(struct megpu_device *mdev);

#endif /* MEGPU_DRV_H */
