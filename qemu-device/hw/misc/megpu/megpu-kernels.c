/*
 * megpu: built-in kernels run by DISPATCH
 *
 * DOC: built-in kernels
 *
 * The kernels stand in for shader programs. The device splits the grid
 * into work-groups (the role of a shader processor input unit) and runs
 * each group's work-items in order; CHECKSUM shows why groups matter:
 * each group adds its partial sum to the result with one atomic add.
 * BLUR3X3 and SEPIA are image kernels over a 2D grid of RGBA8888 pixels
 * (seed 004's blur -> flush -> sepia chain). Programs of the device's
 * own instruction set (MEGPU_KERNEL_PROGRAM) run in megpu-wave.c.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */

#include "qemu/osdep.h"
#include "qemu/bswap.h"
#include "megpu-internal.h"
#include "hw/misc/megpu_isa.h"
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
    uint32_t *rows;             /* image kernels: 3 source rows */
} MegpuKernel;

#define MEGPU_IMG_ROW           (MEGPU_MAX_GROUP_SIZE + 2)

/* Which pointers each kernel uses (to validate them before running). */
static const uint8_t megpu_kernel_ptrs[MEGPU_KERNEL_COUNT] = {
    [MEGPU_KERNEL_FILL] = 0x1,
    [MEGPU_KERNEL_COPY] = 0x3,
    [MEGPU_KERNEL_VADD] = 0x7,
    [MEGPU_KERNEL_SAXPY] = 0x3,
    [MEGPU_KERNEL_CHECKSUM] = 0x1,      /* ptr[1] is a single word */
    [MEGPU_KERNEL_INCREMENT] = 0x1,
    [MEGPU_KERNEL_BLUR3X3] = 0x3,       /* checked as images */
    [MEGPU_KERNEL_SEPIA] = 0x3,
};

static bool megpu_kernel_is_image(uint32_t id)
{
    return id == MEGPU_KERNEL_BLUR3X3 || id == MEGPU_KERNEL_SEPIA;
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

static inline uint32_t megpu_chan(uint32_t px, unsigned c)
{
    return (px >> (8 * c)) & 0xff;
}

/* Per channel mean of the 3x3 neighbourhood, rounded down. */
static uint32_t megpu_blur_px(const uint32_t *rows, uint32_t cl, uint32_t x,
                              uint32_t width)
{
    uint32_t out = 0;

    for (unsigned c = 0; c < 4; c++) {
        uint32_t sum = 0;

        for (unsigned r = 0; r < 3; r++) {
            for (int dx = -1; dx <= 1; dx++) {
                /* edges clamp to the image */
                int64_t cx = MIN(MAX((int64_t)x + dx, 0), (int64_t)width - 1);

                sum += megpu_chan(le32_to_cpu(rows[r * MEGPU_IMG_ROW +
                                                   (cx - cl)]), c);
            }
        }
        out |= (sum / 9) << (8 * c);
    }
    return out;
}

static uint32_t megpu_sepia_px(uint32_t px)
{
    uint32_t r = megpu_chan(px, 0), g = megpu_chan(px, 1);
    uint32_t b = megpu_chan(px, 2);
    uint32_t nr = MIN(255, (393 * r + 769 * g + 189 * b) / 1000);
    uint32_t ng = MIN(255, (349 * r + 686 * g + 168 * b) / 1000);
    uint32_t nb = MIN(255, (272 * r + 534 * g + 131 * b) / 1000);

    return nr | ng << 8 | nb << 16 | (px & 0xff000000u);
}

/*
 * Image kernels: pixels [xa, xb) of row y, already clipped to the image.
 * Width, height and pitch are param[0..2], in pixels.
 */
static bool megpu_kernel_image_row(MegpuExec *x, MegpuKernel *k, uint64_t y,
                                   uint32_t xa, uint32_t xb)
{
    uint32_t width = k->param[0], height = k->param[1];
    uint64_t pitch = k->param[2];
    uint32_t *out = k->a;

    if (k->id == MEGPU_KERNEL_SEPIA) {
        if (!megpu_kread(x, k->ptr[0], y * pitch + xa, out, xb - xa)) {
            return false;
        }
        for (uint32_t i = 0; i < xb - xa; i++) {
            out[i] = cpu_to_le32(megpu_sepia_px(le32_to_cpu(out[i])));
        }
    } else {
        /* source columns the row needs, clamped */
        uint32_t cl = xa ? xa - 1 : 0, cr = MIN((uint64_t)xb + 1, width);

        for (int r = 0; r < 3; r++) {
            int64_t sy = MIN(MAX((int64_t)y + r - 1, 0), (int64_t)height - 1);

            if (!megpu_kread(x, k->ptr[0], sy * pitch + cl,
                             &k->rows[r * MEGPU_IMG_ROW], cr - cl)) {
                return false;
            }
        }
        for (uint32_t px = xa; px < xb; px++) {
            out[px - xa] = cpu_to_le32(megpu_blur_px(k->rows, cl, px, width));
        }
    }
    return megpu_kwrite(x, k->ptr[1], y * pitch + xa, out, xb - xa);
}

/*
 * Image arguments: 4-byte aligned pointers, pitch >= width, and the
 * image ((height - 1) * pitch + width pixels) within 4 GiB and, in an
 * IB, within the GPU VA space; anything else faults BAD_ARG.
 */
static bool megpu_kernel_check_image(MegpuExec *x, MegpuKernel *k)
{
    uint64_t width = k->param[0], height = k->param[1], pitch = k->param[2];
    uint64_t bytes, top = x->in_ib ? MEGPU_VA_SIZE : UINT64_MAX;

    if (pitch < width) {
        return megpu_fault(x, MEGPU_FAULT_BAD_ARG, x->pkt_addr, false);
    }
    if (!width || !height) {
        return true;            /* an empty image: nothing to do */
    }
    /* (height - 1) * pitch + width < 2^64: no overflow before the check */
    bytes = ((height - 1) * pitch + width);
    if (bytes > MEGPU_VA_SIZE / 4) {
        return megpu_fault(x, MEGPU_FAULT_BAD_ARG, x->pkt_addr, false);
    }
    bytes *= 4;
    for (unsigned i = 0; i < 2; i++) {
        if ((k->ptr[i] & 3) || k->ptr[i] > top - bytes) {
            return megpu_fault(x, MEGPU_FAULT_BAD_ARG, x->pkt_addr, false);
        }
    }
    return true;
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
            float alpha = megpu_isa_f32(k->param[0]);

            if (!megpu_kread(x, k->ptr[0], i, a, c) ||
                !megpu_kread(x, k->ptr[1], i, b, c)) {
                return false;
            }
            for (unsigned j = 0; j < c; j++) {
                float xv = megpu_isa_f32(le32_to_cpu(a[j]));
                float yv = megpu_isa_f32(le32_to_cpu(b[j]));

                b[j] = cpu_to_le32(megpu_isa_u32(alpha * xv + yv));
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

/*
 * Element-wise kernels with one-row work-groups touch work-items in
 * order, and what a group does does not depend on its neighbours: run
 * several groups as one access per array, as long as the run stays in
 * one page of every array. A page that faults then stops the same
 * groups as it would group by group; a group that itself crosses a
 * page runs alone. The engine checks for a reset between runs.
 */
static uint64_t megpu_kernel_run_end(const MegpuKernel *k, uint64_t start,
                                     uint64_t limit, uint64_t grid_x,
                                     uint32_t group_x)
{
    uint64_t end = MIN(limit, start + MEGPU_KCHUNK), first, cut;

    for (unsigned i = 0; i < 4; i++) {
        if (megpu_kernel_ptrs[k->id] & (1u << i)) {
            uint64_t off = (k->ptr[i] + start * 4) & (MEGPU_PAGE_SIZE - 1);

            end = MIN(end, start + (MEGPU_PAGE_SIZE - off) / 4);
        }
    }
    /* the first group ends at the next group boundary (or row end) */
    first = (start / grid_x) * grid_x +
            MIN(QEMU_ALIGN_UP(start % grid_x + 1, group_x), grid_x);
    /* whole groups only: cut back to the last boundary within the run */
    cut = (end / grid_x) * grid_x + QEMU_ALIGN_DOWN(end % grid_x, group_x);
    if (end == limit || end % grid_x == 0) {
        cut = end;
    }
    return cut > start ? cut : MIN(first, limit);
}

static bool megpu_kernel_linear(MegpuExec *x, MegpuKernel *k,
                                uint64_t limit, uint64_t grid_x,
                                uint32_t group_x)
{
    uint32_t sum = 0;

    for (uint64_t start = 0, end; start < limit; start = end) {
        if (megpu_engine_should_abort(x->e)) {
            x->aborted = true;
            return false;
        }
        end = megpu_kernel_run_end(k, start, limit, grid_x, group_x);
        if (!megpu_kernel_range(x, k, start, end, &sum)) {
            return false;
        }
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
    if (megpu_kernel_is_image(k->id)) {
        return megpu_kernel_check_image(x, k);
    }
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

/*
 * The SPI stage's count: what a dispatch that passed its checks launches
 * (engine registers WORK_ITEMS, WORK_GROUPS).
 */
void megpu_spi_count(MegpuEngine *e, uint64_t items, uint64_t groups)
{
    qemu_mutex_lock(&e->lock);
    e->work_items += items;
    e->work_groups += groups;
    qemu_mutex_unlock(&e->lock);
}

/*
 * The chunk buffers of the thread's dispatches (an engine thread runs one
 * at a time, and a dispatch does not nest): a task queue runs thousands
 * of small dispatches, each of which would otherwise allocate them.
 */
static __thread uint32_t megpu_kbuf_a[MEGPU_KCHUNK];
static __thread uint32_t megpu_kbuf_b[MEGPU_KCHUNK];

bool megpu_dispatch(MegpuExec *x, uint32_t kernel, uint64_t args,
                    uint32_t grid_x, uint32_t grid_y,
                    uint32_t group_x, uint32_t group_y)
{
    uint64_t group = (uint64_t)group_x * group_y;
    uint64_t total = (uint64_t)grid_x * grid_y, limit;
    uint64_t groups_x = group_x ? DIV_ROUND_UP((uint64_t)grid_x, group_x) : 0;
    g_autofree uint32_t *rows = NULL;
    MegpuKernel k = { .id = kernel };
    bool image = megpu_kernel_is_image(kernel);

    if (kernel == MEGPU_KERNEL_PROGRAM) {
        return megpu_wave_dispatch(x, args, grid_x, grid_y, group_x, group_y);
    }
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

    if (image) {
        /*
         * Items outside the image do nothing and n is not used: run the
         * grid clipped to the image, which also bounds the work.
         */
        grid_x = MIN(grid_x, k.param[0]);
        grid_y = MIN(grid_y, k.param[1]);
        total = (uint64_t)grid_x * grid_y;
        groups_x = DIV_ROUND_UP((uint64_t)grid_x, group_x);
        limit = total;
        rows = g_new(uint32_t, 3 * MEGPU_IMG_ROW);
        k.rows = rows;
    } else {
        /* items past n do nothing: only groups holding one below n run */
        limit = MIN(total, k.n);
    }
    megpu_spi_count(x->e, total,
                    groups_x * DIV_ROUND_UP((uint64_t)grid_y, group_y));
    k.a = megpu_kbuf_a;
    k.b = megpu_kbuf_b;
    if (!image && group_y == 1 && kernel != MEGPU_KERNEL_CHECKSUM) {
        return megpu_kernel_linear(x, &k, limit, grid_x, group_x);
    }
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
                if (image) {
                    if (!megpu_kernel_image_row(x, &k, y, x0,
                                                x0 + (end - start))) {
                        return false;
                    }
                    continue;
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
