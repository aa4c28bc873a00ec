/*
 * megpu: built-in kernels run by DISPATCH
 *
 * The kernels stand in for shader programs. The device splits the grid
 * into work-groups (the role of a shader processor input unit) and runs
 * each group's work-items in order; CHECKSUM shows why groups matter:
 * each group adds its partial sum to the result with one atomic add.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */

#include "qemu/osdep.h"
#include "qemu/bswap.h"
#include "megpu-internal.h"
#include "trace.h"

/* elements a kernel moves per memory access */
#define MEGPU_KCHUNK        1024

typedef struct MegpuKernel {
    uint32_t id;
    uint64_t ptr[4];
    uint32_t n;
    uint32_t param[3];
    uint32_t *a;                /* MEGPU_KCHUNK elements each */
    uint32_t *b;
} MegpuKernel;

/* Which pointers each kernel uses (to validate them before running). */
static const uint8_t megpu_kernel_ptrs[MEGPU_KERNEL_COUNT] = {
    [MEGPU_KERNEL_FILL] = 0x1,
    [MEGPU_KERNEL_COPY] = 0x3,
    [MEGPU_KERNEL_VADD] = 0x7,
    [MEGPU_KERNEL_SAXPY] = 0x3,
    [MEGPU_KERNEL_CHECKSUM] = 0x1,      /* ptr[1] is a single word */
    [MEGPU_KERNEL_INCREMENT] = 0x1,
};

static inline float megpu_f32(uint32_t v)
{
    float f;

    memcpy(&f, &v, sizeof(f));
    return f;
}

static inline uint32_t megpu_u32(float f)
{
    uint32_t v;

    memcpy(&v, &f, sizeof(v));
    return v;
}

static bool megpu_kread(MegpuExec *x, uint64_t base, uint64_t i, uint32_t *buf,
                        unsigned c)
{
    return megpu_mem_rw(x, base + i * 4, buf, c * 4, false);
}

static bool megpu_kwrite(MegpuExec *x, uint64_t base, uint64_t i,
                         uint32_t *buf, unsigned c)
{
    return megpu_mem_rw(x, base + i * 4, buf, c * 4, true);
}

/* Work-items [start, end) of one work-group row. */
static bool megpu_kernel_range(MegpuExec *x, MegpuKernel *k, uint64_t start,
                               uint64_t end, uint32_t *sum)
{
    uint32_t *a = k->a, *b = k->b;

    for (uint64_t i = start; i < end; ) {
        unsigned c = MIN(end - i, MEGPU_KCHUNK);

        switch (k->id) {
        case MEGPU_KERNEL_FILL:
            for (unsigned j = 0; j < c; j++) {
                a[j] = cpu_to_le32(k->param[0]);
            }
            if (!megpu_kwrite(x, k->ptr[0], i, a, c)) {
                return false;
            }
            break;
        case MEGPU_KERNEL_COPY:
            if (!megpu_kread(x, k->ptr[0], i, a, c) ||
                !megpu_kwrite(x, k->ptr[1], i, a, c)) {
                return false;
            }
            break;
        case MEGPU_KERNEL_VADD:
            if (!megpu_kread(x, k->ptr[0], i, a, c) ||
                !megpu_kread(x, k->ptr[1], i, b, c)) {
                return false;
            }
            for (unsigned j = 0; j < c; j++) {
                a[j] = cpu_to_le32(le32_to_cpu(a[j]) + le32_to_cpu(b[j]));
            }
            if (!megpu_kwrite(x, k->ptr[2], i, a, c)) {
                return false;
            }
            break;
        case MEGPU_KERNEL_SAXPY: {
            float alpha = megpu_f32(k->param[0]);

            if (!megpu_kread(x, k->ptr[0], i, a, c) ||
                !megpu_kread(x, k->ptr[1], i, b, c)) {
                return false;
            }
            for (unsigned j = 0; j < c; j++) {
                float xv = megpu_f32(le32_to_cpu(a[j]));
                float yv = megpu_f32(le32_to_cpu(b[j]));

                b[j] = cpu_to_le32(megpu_u32(alpha * xv + yv));
            }
            if (!megpu_kwrite(x, k->ptr[1], i, b, c)) {
                return false;
            }
            break;
        }
        case MEGPU_KERNEL_CHECKSUM:
            if (!megpu_kread(x, k->ptr[0], i, a, c)) {
                return false;
            }
            for (unsigned j = 0; j < c; j++) {
                *sum += le32_to_cpu(a[j]);
            }
            break;
        case MEGPU_KERNEL_INCREMENT:
            if (!megpu_kread(x, k->ptr[0], i, a, c)) {
                return false;
            }
            for (unsigned j = 0; j < c; j++) {
                a[j] = cpu_to_le32(le32_to_cpu(a[j]) + 1);
            }
            if (!megpu_kwrite(x, k->ptr[0], i, a, c)) {
                return false;
            }
            break;
        default:
            g_assert_not_reached();
        }
        i += c;
    }
    return true;
}

static bool megpu_kernel_load_args(MegpuExec *x, MegpuKernel *k,
                                   uint64_t args, uint64_t items)
{
    uint8_t raw[MEGPU_KARGS_SIZE];

    if (args & 7) {
        return megpu_fault(x, MEGPU_FAULT_BAD_ARG, x->pkt_addr, false);
    }
    if (!megpu_mem_rw(x, args, raw, sizeof(raw), false)) {
        return false;
    }
    for (unsigned i = 0; i < 4; i++) {
        k->ptr[i] = ldq_le_p(raw + MEGPU_KARGS_PTR(i));
    }
    k->n = ldl_le_p(raw + MEGPU_KARGS_N);
    for (unsigned i = 0; i < 3; i++) {
        k->param[i] = ldl_le_p(raw + MEGPU_KARGS_PARAM(i));
    }

    /*
     * Arrays are 32-bit aligned and must not wrap around the top of the
     * address space (the access would continue at address 0).
     */
    items = MIN(items, k->n);
    for (unsigned i = 0; i < 4; i++) {
        if (!(megpu_kernel_ptrs[k->id] & (1u << i))) {
            continue;
        }
        if (k->ptr[i] & 3) {
            return megpu_fault(x, MEGPU_FAULT_BAD_ARG, x->pkt_addr, false);
        }
        if (!megpu_range_ok(x, k->ptr[i], items * 4, false)) {
            return false;
        }
    }
    if (k->id == MEGPU_KERNEL_CHECKSUM && (k->ptr[1] & 3)) {
        return megpu_fault(x, MEGPU_FAULT_BAD_ARG, x->pkt_addr, false);
    }
    return true;
}

bool megpu_dispatch(MegpuExec *x, uint32_t kernel, uint64_t args,
                    uint32_t grid_x, uint32_t grid_y,
                    uint32_t group_x, uint32_t group_y)
{
    uint64_t group = (uint64_t)group_x * group_y;
    uint64_t total = (uint64_t)grid_x * grid_y, limit;
    uint64_t groups_x = group_x ? DIV_ROUND_UP((uint64_t)grid_x, group_x) : 0;
    g_autofree uint32_t *a = NULL, *b = NULL;
    MegpuKernel k = { .id = kernel };

    if (kernel >= MEGPU_KERNEL_COUNT) {
        return megpu_fault(x, MEGPU_FAULT_BAD_ARG, x->pkt_addr, false);
    }
    if (!(x->e->kernel_mask & MEGPU_BIT(kernel))) {
        return megpu_fault(x, MEGPU_FAULT_UNSUPPORTED, x->pkt_addr, false);
    }
    if (!group || group > MEGPU_MAX_GROUP_SIZE) {
        return megpu_fault(x, MEGPU_FAULT_BAD_ARG, x->pkt_addr, false);
    }
    if (!megpu_kernel_load_args(x, &k, args, total)) {
        return false;
    }
    trace_megpu_dispatch(x->e->idx, kernel, grid_x, grid_y, group_x, group_y,
                         k.n);

    /* items past n do nothing, so only groups holding one below n run */
    limit = MIN(total, k.n);
    a = g_new(uint32_t, MEGPU_KCHUNK);
    b = g_new(uint32_t, MEGPU_KCHUNK);
    k.a = a;
    k.b = b;
    for (uint64_t y0 = 0; y0 < grid_y && y0 * grid_x < limit; y0 += group_y) {
        for (uint64_t gx = 0; gx < groups_x; gx++) {
            uint64_t x0 = gx * group_x;
            uint32_t sum = 0;

            if (y0 * grid_x + x0 >= limit) {
                break;
            }
            /* a reset need not wait for a huge grid */
            if (megpu_engine_should_abort(x->e)) {
                x->aborted = true;
                return false;
            }
            for (uint64_t y = y0; y < y0 + group_y && y < grid_y; y++) {
                uint64_t start = y * grid_x + x0;
                uint64_t end = MIN(start + MIN(group_x, grid_x - x0), limit);

                if (start >= limit) {
                    break;
                }
                if (!megpu_kernel_range(x, &k, start, end, &sum)) {
                    return false;
                }
            }
            if (kernel == MEGPU_KERNEL_CHECKSUM &&
                !megpu_mem_add32(x, k.ptr[1], sum)) {
                return false;
            }
        }
    }
    return true;
}
