/*
 * megpu: a virtual multi-engine GPU
 *
 * DOC: the PCI function
 *
 * PCI Express function (an endpoint with FLR), BAR0 register file,
 * MSI-X and reset. The register layout
 * is the hardware contract in include/hw/misc/megpu_hw.h (the repository's
 * include/megpu_hw.h); Documentation/megpu-hw.rst describes it. The
 * other files, by mechanism:
 *
 * - megpu-engine.c: engines (command processors), rings, the packet
 *   dispatch table; megpu-mmu.c: engine memory access and the GPU MMU
 * - megpu-dma.c: WRITE_DATA, TIMESTAMP, COPY, FILL
 * - megpu-kernels.c: built-in kernels run by DISPATCH
 * - megpu-sem.c: semaphores between engines, SIGNAL/WAIT (seed 001)
 * - megpu-writeq.c, megpu-flush.c: posted writes, flushes, FLUSH and
 *   IDLE_SIGNAL (seed 004)
 * - megpu-wave.c: wave programs and GPU-to-CPU calls (seed 003)
 * - megpu-mgpu.c: multi-GPU semaphores and arbitration (seed 000)
 * - megpu-dequeue.c: task-queue dequeuers (seed 002)
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */

#include "qemu/osdep.h"
#include "qemu/atomic.h"
#include "qemu/log.h"
#include "qemu/main-loop.h"
#include "qemu/error-report.h"
#include "qemu/module.h"
#include "qapi/error.h"
#include "hw/pci/pci.h"
#include "hw/pci/msix.h"
#include "hw/pci/pcie.h"
#include "hw/qdev-properties.h"
#include "migration/vmstate.h"
#include "system/system.h"
#include "megpu-internal.h"
#include "trace.h"

#define MEGPU_CAPS \
    (MEGPU_CAP_IRQ_TEST | MEGPU_CAP_ENGINES | MEGPU_CAP_MMU | \
     MEGPU_CAP_SEMAPHORE | MEGPU_CAP_FLUSH | MEGPU_CAP_WAVES | \
     MEGPU_CAP_MGPU | MEGPU_CAP_TASKQ)

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

/* Engine interrupts, sent from the main loop: engines never take the BQL */
static void megpu_irq_bh(void *opaque)
{
    MegpuState *s = opaque;
    uint32_t pending = qatomic_xchg(&s->irq_pending, 0);

    while (pending) {
        unsigned v = ctz32(pending);

        pending &= pending - 1;
        trace_megpu_irq(v);
        if (msix_enabled(PCI_DEVICE(s)) && !s->drop_irqs) {
            msix_notify(PCI_DEVICE(s), v);
        }
    }
}

/*
 * Device reset: registers and every engine. Waits for the engines, which
 * is safe under the BQL (they never take it) and quick (they reach a
 * packet boundary or abandon a WAIT, delay or long transfer at once).
 */
static void megpu_reset_regs(MegpuState *s)
{
    for (unsigned n = 0; n < s->num_engines; n++) {
        megpu_engine_reset_sync(&s->engines[n]);
    }
    /* the engines dropped their queued writes; now the flush state */
    megpu_wq_reset(s);
    megpu_taskq_reset(s);
    s->scratch = 0;
    s->irq_test_status = 0;
    s->mmu_invalidations = 0;
    s->wave_restarts = 0;
    s->wave_restart_errors = 0;
    qatomic_set(&s->wave_interrupts, 0);
    qatomic_set(&s->wave_control, 0);
    qatomic_set(&s->syscalls, 0);
    qatomic_set(&s->syscall_retries, 0);
    qatomic_set(&s->syscall_strays, 0);
    qatomic_set(&s->irq_pending, 0);
    megpu_mgpu_reset(s);
}

/* Engine block holding @addr (NULL outside); *present: engine exists */
static MegpuEngine *megpu_engine_at(MegpuState *s, hwaddr addr, hwaddr *off,
                                    bool *present)
{
    unsigned n;

    if (addr < MEGPU_ENGINE_BASE(0) ||
        addr >= MEGPU_ENGINE_BASE(MEGPU_MAX_ENGINES)) {
        return NULL;
    }
    n = (addr - MEGPU_ENGINE_BASE(0)) / MEGPU_ENGINE_STRIDE;
    *off = (addr - MEGPU_ENGINE_BASE(0)) % MEGPU_ENGINE_STRIDE;
    *present = n < s->num_engines;
    return &s->engines[n];
}

static uint64_t megpu_mmio_read(void *opaque, hwaddr addr, unsigned size)
{
    MegpuState *s = opaque;
    MegpuEngine *e;
    uint64_t val = 0;
    bool present;
    hwaddr off;

    e = megpu_engine_at(s, addr, &off, &present);
    if (e) {
        /* absent engines read as 0 */
        val = present ? megpu_engine_read(e, off) : 0;
        trace_megpu_mmio_read(addr, val);
        return val;
    }
    if (megpu_wq_reg_read(s, addr, &val) ||
        megpu_mgpu_reg_read(s, addr, &val) ||
        megpu_taskq_reg_read(s, addr, &val)) {
        trace_megpu_mmio_read(addr, val);
        return val;
    }
    switch (addr) {
    case MEGPU_REG_ID:
        val = MEGPU_ID_MAGIC;
        break;
    case MEGPU_REG_VERSION:
        val = s->version;
        break;
    case MEGPU_REG_CAPS:
        val = s->caps;
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
    case MEGPU_REG_MMU_INVALIDATE:
        val = s->mmu_invalidations;
        break;
    case MEGPU_REG_WAVE_RESTART_ERRORS:
        val = s->wave_restart_errors;
        break;
    case MEGPU_REG_WAVE_RESTARTS:
        val = s->wave_restarts;
        break;
    case MEGPU_REG_WAVE_INTERRUPTS:
        val = qatomic_read(&s->wave_interrupts);
        break;
    case MEGPU_REG_SYSCALLS:
        val = qatomic_read(&s->syscalls);
        break;
    case MEGPU_REG_SYSCALL_RETRIES:
        val = qatomic_read(&s->syscall_retries);
        break;
    case MEGPU_REG_SYSCALL_STRAYS:
        val = qatomic_read(&s->syscall_strays);
        break;
    case MEGPU_REG_WAVE_CONTROL:
        val = qatomic_read(&s->wave_control);
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
    MegpuEngine *e;
    bool present;
    hwaddr off;

    trace_megpu_mmio_write(addr, val);
    e = megpu_engine_at(s, addr, &off, &present);
    if (e) {
        if (present) {
            megpu_engine_write(e, off, val);
        } else {
            qemu_log_mask(LOG_GUEST_ERROR,
                          "megpu: write to absent engine at 0x%"
                          HWADDR_PRIx " ignored\n", addr);
        }
        return;
    }
    if (megpu_wq_reg_write(s, addr, val) ||
        megpu_mgpu_reg_write(s, addr, val) ||
        megpu_taskq_reg_write(s, addr, val)) {
        return;
    }
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
    case MEGPU_REG_MMU_INVALIDATE:
        megpu_mmu_invalidate(s);
        break;
    case MEGPU_REG_WAVE_RESTART:
        megpu_wave_restart(s, val);
        break;
    case MEGPU_REG_WAVE_CONTROL:
        qatomic_set(&s->wave_control, val & MEGPU_WAVE_CTRL_RAW);
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

/* The PCI Express capability, before MSI-X takes the next free space. */
#define MEGPU_PCIE_CAP_OFFSET 0x80

/*
 * Config space as any PCI function's, plus the function level reset:
 * pcie_cap_flr_init() only advertises it; a write of BCR_FLR to the
 * device control register resets the function here (registers, engines,
 * MSI-X, command register and BARs), as a device reset does; and the
 * bus master bit: when it goes, so does the engines' DMA.
 */
static void megpu_write_config(PCIDevice *pdev, uint32_t addr, uint32_t val,
                               int len)
{
    bool master = pdev->config[PCI_COMMAND] & PCI_COMMAND_MASTER;

    pci_default_write_config(pdev, addr, val, len);
    if (master && !(pdev->config[PCI_COMMAND] & PCI_COMMAND_MASTER)) {
        megpu_bus_master_off(MEGPU(pdev));
    }
    pcie_cap_flr_write_config(pdev, addr, val, len);
}

#define MEGPU_VIOMMU_ERROR "megpu: not supported behind a vIOMMU (its " \
                           "engines translate DMA addresses without the BQL)"

static bool megpu_behind_viommu(PCIDevice *pdev)
{
    return pci_device_iommu_address_space(pdev) != &address_space_memory;
}

/*
 * A vIOMMU listed after this device installs its translation only in its
 * own realize: for a device created with the machine, look again once the
 * machine is complete.
 */
static void megpu_viommu_check_done(Notifier *n, void *opaque)
{
    MegpuState *s = container_of(n, MegpuState, viommu_check);

    if (megpu_behind_viommu(PCI_DEVICE(s))) {
        error_report(MEGPU_VIOMMU_ERROR);
        exit(1);
    }
}

static void megpu_realize(PCIDevice *pdev, Error **errp)
{
    MegpuState *s = MEGPU(pdev);

    if (s->num_engines < 1 || s->num_engines > MEGPU_MAX_ENGINES) {
        error_setg(errp, "megpu: engines must be 1..%d", MEGPU_MAX_ENGINES);
        return;
    }
    /*
     * The engine threads translate bus addresses without the BQL, and a
     * BQL holder (a reset, MMU_INVALIDATE, unplug) may wait for them.
     * Behind a vIOMMU a translation runs the IOMMU's code, which may
     * take the BQL or need it (a fault's interrupt): a deadlock, or an
     * abort under TCG. So no vIOMMU.
     */
    if (megpu_behind_viommu(pdev)) {
        error_setg(errp, MEGPU_VIOMMU_ERROR);
        return;
    }
    if (s->caps & ~MEGPU_CAPS) {
        error_setg(errp, "megpu: x-caps 0x%x has features beyond 0x%x",
                   s->caps, MEGPU_CAPS);
        return;
    }

    /*
     * A PCI Express endpoint (behind a root port) or a root complex
     * integrated one (on q35's pcie.0), with function level reset: an
     * FLR resets the device as a device reset does.
     */
    if (pcie_endpoint_cap_init(pdev, MEGPU_PCIE_CAP_OFFSET) < 0) {
        error_setg(errp, "megpu: no room for the PCI Express capability");
        return;
    }
    pcie_cap_flr_init(pdev);

    /* MSI-X only: no INTx pin is advertised, since none would fire */
    memory_region_init_io(&s->mmio, OBJECT(s), &megpu_mmio_ops, s,
                          "megpu-mmio", MEGPU_MMIO_SIZE);
    pci_register_bar(pdev, MEGPU_BAR_MMIO, PCI_BASE_ADDRESS_SPACE_MEMORY,
                     &s->mmio);

    if (s->mgpu_agents_prop < 1 ||
        s->mgpu_agents_prop > MEGPU_MGPU_MAX_AGENTS ||
        s->mgpu_agent_prop >= s->mgpu_agents_prop) {
        error_setg(errp, "megpu: mgpu-agent must be below mgpu-agents, "
                   "which must be 1..%d", MEGPU_MGPU_MAX_AGENTS);
        return;
    }
    megpu_mgpu_global_init();
    megpu_mgpu_reset(s);

    /* the MC thread before the engines, which post to it */
    if (!megpu_wq_init(s, errp)) {
        return;
    }
    if (msix_init_exclusive_bar(pdev, MEGPU_NUM_VECTORS, MEGPU_BAR_MSIX,
                                errp)) {
        megpu_wq_fini(s);
        return;
    }
    for (unsigned v = 0; v < MEGPU_NUM_VECTORS; v++) {
        msix_vector_use(pdev, v);
    }

    s->irq_bh = qemu_bh_new_guarded(megpu_irq_bh, s,
                                    &DEVICE(s)->mem_reentrancy_guard);
    megpu_taskq_init(s);
    for (unsigned n = 0; n < s->num_engines; n++) {
        megpu_engine_init(s, n);
    }
    /* last: realize cannot fail any more, unrealize removes it */
    if (!phase_check(PHASE_MACHINE_READY)) {
        s->viommu_check.notify = megpu_viommu_check_done;
        qemu_add_machine_init_done_notifier(&s->viommu_check);
    }
}

static void megpu_exit(PCIDevice *pdev)
{
    MegpuState *s = MEGPU(pdev);

    if (s->viommu_check.notify) {
        qemu_remove_machine_init_done_notifier(&s->viommu_check);
        s->viommu_check.notify = NULL;
    }
    /* joining under the BQL is safe: engine threads never take it */
    megpu_engines_stop(s);
    /* its thread locks engines: before their locks go */
    megpu_wq_fini(s);
    megpu_engines_destroy(s);
    megpu_taskq_fini(s);
    qemu_bh_delete(s->irq_bh);
    s->irq_bh = NULL;
    msix_uninit_exclusive_bar(pdev);
    pcie_cap_exit(pdev);
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
    /*
     * test only: the features the capability register shows, to test the
     * driver's feature checks as an older device would. The hidden
     * features' packets still run (the driver must not send them), but
     * a device without FLUSH posts no writes: they land in order.
     */
    DEFINE_PROP_UINT32("x-caps", MegpuState, caps, MEGPU_CAPS),
    DEFINE_PROP_BOOL("x-hold-writes", MegpuState, hold_writes, false),
    /* tests: MEGPU_REG_TEST_HOLD holds posted writes at runtime */
    DEFINE_PROP_BOOL("x-test-regs", MegpuState, test_regs, false),
    /*
     * Relaxed by default: it is the seed's hardware, and it makes every
     * job exercise the driver's flushes. Strict is there to compare.
     */
    DEFINE_PROP_STRING("write-mode", MegpuState, write_mode_prop),
    /* a runaway wave faults BUDGET after this many instructions */
    DEFINE_PROP_UINT32("wave-budget", MegpuState, wave_budget, 1u << 24),
    /*
     * an engine whose waves all wait for the CPU polls this long for the
     * WAVE_RESTART before it sleeps (0: sleep at once). Off by default:
     * it pays only with a host CPU to spare (see megpu-wave.c).
     */
    DEFINE_PROP_UINT32("wave-spin-us", MegpuState, wave_spin_us, 0),
    /*
     * A stalled WAIT watches for a SIGNAL this long before it sleeps. Off
     * by default: with as many busy threads as host cores, a spinning
     * engine takes the core the signalling one needs (gated gfx0<->copy0
     * hop on a loaded 2-core host: 37-46 us sleeping, 93-127 us spinning
     * 30 us); with idle cores, a spin saves a thread wakeup a hop.
     */
    DEFINE_PROP_UINT32("x-wait-spin-us", MegpuState, wait_spin_us, 0),
    /* test only: wave atomics become read-yield-write (a negative control) */
    DEFINE_PROP_BOOL("x-wave-nonatomic", MegpuState, wave_nonatomic, false),
    /*
     * test only: off runs waves with the lane loops built for the baseline
     * x86-64 even where the host has AVX2, so that tests run both
     */
    DEFINE_PROP_BOOL("x-wave-simd", MegpuState, wave_simd, true),
    /* test only: the task-queue lock becomes read-pause-write */
    DEFINE_PROP_BOOL("x-taskq-nonatomic", MegpuState, taskq_nonatomic, false),
    DEFINE_PROP_BOOL("x-taskq-no-notify", MegpuState, taskq_no_notify, false),
    DEFINE_PROP_UINT32("write-seed", MegpuState, write_seed, 0x5eed0004),
    /* seed 000: this device's agent id and the agent count after reset */
    DEFINE_PROP_UINT32("mgpu-agent", MegpuState, mgpu_agent_prop, 0),
    DEFINE_PROP_UINT32("mgpu-agents", MegpuState, mgpu_agents_prop, 1),
    /* test only: own-slot read/modify/writes lose updates (negative control) */
    DEFINE_PROP_BOOL("x-mgpu-nonatomic", MegpuState, mgpu_nonatomic, false),
};

/*
 * Engines run in their own threads, possibly in the middle of a packet or
 * a semaphore wait, with no way yet to quiesce them and save where they
 * are: the device refuses migration rather than lose work silently.
 */
static const VMStateDescription vmstate_megpu = {
    .name = TYPE_MEGPU,
    .unmigratable = 1,
};

static void megpu_class_init(ObjectClass *klass, void *data)
{
    DeviceClass *dc = DEVICE_CLASS(klass);
    PCIDeviceClass *k = PCI_DEVICE_CLASS(klass);
    ResettableClass *rc = RESETTABLE_CLASS(klass);

    k->realize = megpu_realize;
    k->exit = megpu_exit;
    k->config_write = megpu_write_config;
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
            { INTERFACE_PCIE_DEVICE },
            { }
        },
    },
};

DEFINE_TYPES(megpu_types)
