/* SPDX-License-Identifier: MIT */
/*
 * megpu hardware contract, the one the QEMU device
 * (qemu-device/hw/misc/megpu/), the DRM driver (drivers/gpu/drm/megpu/)
 * and libmegpu share, split by area:
 *
 *   megpu_hw_regs.h     PCI identity, registers, interrupts, faults, MMU
 *   megpu_hw_packets.h  packets, built-in kernels, DISPATCH arguments
 *   megpu_hw_wave.h     the wave ISA and mailboxes (seed 003)
 *   megpu_hw_taskq.h    task queues (seed 002)
 *   megpu_hw_mgpu.h     multi-GPU coordination (seed 000)
 *
 * Plain defines and pure helpers: the includer provides the fixed-width
 * types. Prose: Documentation/megpu-hw.rst.
 */
#ifndef MEGPU_HW_H
#define MEGPU_HW_H

/* Every part of the contract; a file may include only the parts it uses. */
#include "megpu_hw_regs.h"
#include "megpu_hw_packets.h"
#include "megpu_hw_wave.h"
#include "megpu_hw_taskq.h"
#include "megpu_hw_mgpu.h"

#endif /* MEGPU_HW_H */
