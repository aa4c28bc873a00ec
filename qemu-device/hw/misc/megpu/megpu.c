/*
 * megpu: a virtual multi-engine GPU
 *
 * PCI function, BAR0 register file, MSI-X and reset. The register layout
 * is the hardware contract in include/hw/misc/megpu_hw.h (the repository's
 * include/megpu_hw.h); Documentation/megpu-hw.rst describes it.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */

#include "qemu/osdep.h"
#include "qemu/log.h"
#include "qemu/module.h"
#include "qapi/error.h"
#include "hw/pci/pci.h"
#include "hw/pci/msix.h"
#include "hw/qdev-properties.h"
#include "migration/vmstate.h"
#include "hw/misc/megpu.h"
#include "trace.h"

static uint32_t megpu_engine_types(MegpuState *s)
{
    uint32_t types = 0;

    /* Engine n has type n % 4: gfx, compute, copy, video, gfx, ... */
    for (unsigned n = 0; n < s->num_engines; n++) {
        types |= (n % MEGPU_ENGINE_NUM_TYPES) << (2 * n);
    }
    return types;
}

static void megpu_raise_test_irq(MegpuState *s, uint32_t vector)
{
    if (vector >= MEGPU_NUM_VECTORS) {
        qemu_log_mask(LOG_GUEST_ERROR,
                      "megpu: IRQ_TEST vector %u out of range\n", vector);
        return;
    }
    s->irq_test_status |= 1u << vector;
    if (msix_enabled(PCI_DEVICE(s)) && !s->drop_irqs) {
        msix_notify(PCI_DEVICE(s), vector);
    }
}

static void megpu_reset_regs(MegpuState *s)
{
    s->scratch = 0;
    s->irq_test_status = 0;
}

static uint64_t megpu_mmio_read(void *opaque, hwaddr addr, unsigned size)
{
    MegpuState *s = opaque;
    uint64_t val = 0;

    switch (addr) {
    case MEGPU_REG_ID:
        val = MEGPU_ID_MAGIC;
        break;
    case MEGPU_REG_VERSION:
        val = s->version;
        break;
    case MEGPU_REG_CAPS:
        val = MEGPU_CAP_IRQ_TEST;
        break;
    case MEGPU_REG_ENGINE_COUNT:
        val = s->num_engines;
        break;
    case MEGPU_REG_MSIX_VECTORS:
        val = MEGPU_NUM_VECTORS;
        break;
    case MEGPU_REG_SCRATCH:
        val = s->scratch;
        break;
    case MEGPU_REG_IRQ_TEST_STATUS:
        val = s->irq_test_status;
        break;
    case MEGPU_REG_ENGINE_TYPES:
        val = megpu_engine_types(s);
        break;
    default:
        qemu_log_mask(LOG_GUEST_ERROR,
                      "megpu: read of unknown register 0x%" HWADDR_PRIx "\n",
                      addr);
        break;
    }
    trace_megpu_mmio_read(addr, val);
    return val;
}

static void megpu_mmio_write(void *opaque, hwaddr addr, uint64_t val,
                             unsigned size)
{
    MegpuState *s = opaque;

    trace_megpu_mmio_write(addr, val);
    switch (addr) {
    case MEGPU_REG_SCRATCH:
        s->scratch = val;
        break;
    case MEGPU_REG_IRQ_TEST:
        megpu_raise_test_irq(s, val);
        break;
    case MEGPU_REG_IRQ_TEST_STATUS:
        s->irq_test_status &= ~val;
        break;
    case MEGPU_REG_RESET:
        if (val == MEGPU_RESET_MAGIC) {
            trace_megpu_reset("register");
            megpu_reset_regs(s);
        }
        break;
    default:
        qemu_log_mask(LOG_GUEST_ERROR,
                      "megpu: write of 0x%" PRIx64 " to register 0x%"
                      HWADDR_PRIx " ignored\n", val, addr);
        break;
    }
}

static const MemoryRegionOps megpu_mmio_ops = {
    .read = megpu_mmio_read,
    .write = megpu_mmio_write,
    .endianness = DEVICE_LITTLE_ENDIAN,
    .valid = {
        .min_access_size = 4,
        .max_access_size = 4,
    },
    .impl = {
        .min_access_size = 4,
        .max_access_size = 4,
    },
};

static void megpu_realize(PCIDevice *pdev, Error **errp)
{
    MegpuState *s = MEGPU(pdev);

    if (s->num_engines < 1 || s->num_engines > MEGPU_MAX_ENGINES) {
        error_setg(errp, "megpu: engines must be 1..%d", MEGPU_MAX_ENGINES);
        return;
    }

    pci_config_set_interrupt_pin(pdev->config, 1);
    memory_region_init_io(&s->mmio, OBJECT(s), &megpu_mmio_ops, s,
                          "megpu-mmio", MEGPU_MMIO_SIZE);
    pci_register_bar(pdev, MEGPU_BAR_MMIO, PCI_BASE_ADDRESS_SPACE_MEMORY,
                     &s->mmio);

    if (msix_init_exclusive_bar(pdev, MEGPU_NUM_VECTORS, MEGPU_BAR_MSIX,
                                errp)) {
        return;
    }
    for (unsigned v = 0; v < MEGPU_NUM_VECTORS; v++) {
        msix_vector_use(pdev, v);
    }
}

static void megpu_exit(PCIDevice *pdev)
{
    msix_uninit_exclusive_bar(pdev);
}

static void megpu_reset_hold(Object *obj, ResetType type)
{
    trace_megpu_reset("device");
    megpu_reset_regs(MEGPU(obj));
}

static const Property megpu_properties[] = {
    DEFINE_PROP_UINT32("engines", MegpuState, num_engines, 4),
    DEFINE_PROP_UINT32("x-version", MegpuState, version,
                       MEGPU_HW_VERSION(MEGPU_HW_VERSION_MAJOR,
                                        MEGPU_HW_VERSION_MINOR)),
    DEFINE_PROP_BOOL("x-drop-irqs", MegpuState, drop_irqs, false),
};

static const VMStateDescription vmstate_megpu = {
    .name = TYPE_MEGPU,
    .version_id = 1,
    .minimum_version_id = 1,
    .fields = (const VMStateField[]) {
        VMSTATE_PCI_DEVICE(parent_obj, MegpuState),
        VMSTATE_MSIX(parent_obj, MegpuState),
        VMSTATE_UINT32(scratch, MegpuState),
        VMSTATE_UINT32(irq_test_status, MegpuState),
        VMSTATE_END_OF_LIST()
    },
};

static void megpu_class_init(ObjectClass *klass, void *data)
{
    DeviceClass *dc = DEVICE_CLASS(klass);
    PCIDeviceClass *k = PCI_DEVICE_CLASS(klass);
    ResettableClass *rc = RESETTABLE_CLASS(klass);

    k->realize = megpu_realize;
    k->exit = megpu_exit;
    k->vendor_id = MEGPU_PCI_VENDOR_ID;
    k->device_id = MEGPU_PCI_DEVICE_ID;
    k->revision = MEGPU_PCI_REVISION;
    k->class_id = MEGPU_PCI_CLASS;
    rc->phases.hold = megpu_reset_hold;
    dc->desc = "megpu virtual multi-engine GPU";
    dc->vmsd = &vmstate_megpu;
    device_class_set_props(dc, megpu_properties);
    set_bit(DEVICE_CATEGORY_DISPLAY, dc->categories);
}

static const TypeInfo megpu_types[] = {
    {
        .name = TYPE_MEGPU,
        .parent = TYPE_PCI_DEVICE,
        .instance_size = sizeof(MegpuState),
        .class_init = megpu_class_init,
        .interfaces = (InterfaceInfo[]) {
            { INTERFACE_CONVENTIONAL_PCI_DEVICE },
            { }
        },
    },
};

DEFINE_TYPES(megpu_types)
