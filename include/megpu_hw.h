/* SPDX-License-Identifier: MIT */
/*
 * megpu hardware contract: PCI identity, BAR0 registers, interrupt vectors.
 *
 * Included by the QEMU device (qemu-device/hw/misc/megpu/) and by the DRM
 * driver (drivers/gpu/drm/megpu/). Plain defines only: the includer provides
 * the fixed-width types. Prose: Documentation/megpu-hw.rst.
 */
#ifndef MEGPU_HW_H
#define MEGPU_HW_H

/* A single-bit mask; BIT() is not available to every includer. */
#define MEGPU_BIT(n)			(1u << (n))

/* PCI identity: QEMU's test vendor; device ID "MG" is unused by QEMU. */
#define MEGPU_PCI_VENDOR_ID		0x1234
#define MEGPU_PCI_DEVICE_ID		0x4d47
#define MEGPU_PCI_REVISION		0x01
#define MEGPU_PCI_CLASS			0x0380	/* display controller, other */

#define MEGPU_BAR_MMIO			0
#define MEGPU_BAR_MSIX			2	/* exclusive MSI-X table + PBA */
#define MEGPU_MMIO_SIZE			0x10000

/* Identification: the value of MEGPU_REG_ID, "MGPU" in ASCII. */
#define MEGPU_ID_MAGIC			0x4d475055

/* Hardware version: major changes break the driver, minor ones extend. */
#define MEGPU_HW_VERSION_MAJOR		1
#define MEGPU_HW_VERSION_MINOR		0
#define MEGPU_HW_VERSION(maj, min)	(((maj) << 16) | (min))
#define MEGPU_HW_VERSION_GET_MAJOR(v)	(((v) >> 16) & 0xffff)
#define MEGPU_HW_VERSION_GET_MINOR(v)	((v) & 0xffff)

/* Engines: a device property sets the count, up to MEGPU_MAX_ENGINES. */
#define MEGPU_MAX_ENGINES		16
#define MEGPU_ENGINE_GFX		0
#define MEGPU_ENGINE_COMPUTE		1
#define MEGPU_ENGINE_COPY		2
#define MEGPU_ENGINE_VIDEO		3
#define MEGPU_ENGINE_NUM_TYPES		4

/*
 * Global registers (32-bit, little endian, dword aligned). Unknown offsets
 * read as 0 and ignore writes; writes to read-only registers are ignored.
 */
#define MEGPU_REG_ID			0x0000	/* RO: MEGPU_ID_MAGIC */
#define MEGPU_REG_VERSION		0x0004	/* RO: MEGPU_HW_VERSION() */
#define MEGPU_REG_CAPS			0x0008	/* RO: MEGPU_CAP_* */
#define MEGPU_REG_ENGINE_COUNT		0x000c	/* RO: engines present */
#define MEGPU_REG_MSIX_VECTORS		0x0010	/* RO: MSI-X vectors */
#define MEGPU_REG_SCRATCH		0x0014	/* RW: no effect, reset to 0 */
#define MEGPU_REG_IRQ_TEST		0x0018	/* WO: vector to raise */
#define MEGPU_REG_IRQ_TEST_STATUS	0x001c	/* RW1C: bit n = test on n */
#define MEGPU_REG_RESET			0x0020	/* WO: MEGPU_RESET_MAGIC */
#define MEGPU_REG_ENGINE_TYPES		0x0024	/* RO: 2 bits per engine */

#define MEGPU_RESET_MAGIC		0x52534554	/* "RSET" */

/* Type of engine n, from MEGPU_REG_ENGINE_TYPES. */
#define MEGPU_ENGINE_TYPE(types, n)	(((types) >> (2 * (n))) & 0x3)

/* MEGPU_REG_CAPS: features the device implements. */
#define MEGPU_CAP_IRQ_TEST		MEGPU_BIT(0)

/*
 * MSI-X vectors: one per engine slot, then the device-wide sources.
 * MEGPU_REG_IRQ_TEST accepts any vector below MEGPU_REG_MSIX_VECTORS.
 */
#define MEGPU_VEC_ENGINE(n)		(n)
#define MEGPU_VEC_MISC			MEGPU_MAX_ENGINES
#define MEGPU_NUM_VECTORS		(MEGPU_VEC_MISC + 1)

#endif /* MEGPU_HW_H */
