/*
 * megpu: a virtual multi-engine GPU (QEMU device state)
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#ifndef HW_MISC_MEGPU_H
#define HW_MISC_MEGPU_H

#include "hw/pci/pci_device.h"
#include "hw/misc/megpu_hw.h"

#define TYPE_MEGPU "megpu"
OBJECT_DECLARE_SIMPLE_TYPE(MegpuState, MEGPU)

struct MegpuState {
    PCIDevice parent_obj;

    MemoryRegion mmio;

    /* Properties */
    uint32_t num_engines;
    uint32_t version;           /* x-version: test a driver mismatch */
    bool drop_irqs;             /* x-drop-irqs: test a dead interrupt path */

    /* Registers */
    uint32_t scratch;
    uint32_t irq_test_status;
};

#endif
