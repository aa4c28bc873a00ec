/*
 * QTest for the built-in kernels run by DISPATCH: FILL, COPY, VADD,
 * INCREMENT, SAXPY and CHECKSUM on gfx and compute, what video and copy
 * engines refuse, bad kernel ids and group sizes; faults of element-wise
 * kernels, which run several groups per access, where group-by-group
 * runs would stop; and the image kernels
 * BLUR3X3 and SEPIA against C references, with seed 004's chain (blur,
 * wait for idle, flush, sepia on another engine, flush) in relaxed mode.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */

#include "megpu-qtest.h"

/* Run one kernel over @n elements on engine @e; ring (bus) addresses. */
static void run_kernel(Megpu *m, unsigned e, uint32_t kernel,
                       const uint64_t ptr[4], uint32_t n,
                       const uint32_t param[3], uint32_t gx, uint32_t gy,
                       uint32_t lx, uint32_t ly)
{
    uint64_t args = DATA_PA + 0xff000;

    write_kargs(m, args, ptr, n, param);
    emit_dispatch(&m->ring[e], kernel, args, gx, gy, lx, ly);
    kick(m, e);
    eng_idle(m, e);
}

static void test_kernels(void)
{
    Megpu m;
    const uint64_t a = DATA_PA, b = DATA_PA + 0x10000, c = DATA_PA + 0x20000;
    const uint64_t ptr[4] = { a, b, c, 0 };

    megpu_start_engines(&m, 4);
    for (unsigned e = 0; e < 2; e++) {          /* gfx and compute */
        uint32_t param[3] = { 0x5eed0000 + e, 0, 0 };
        const uint32_t n = 170;

        /* FILL on a 37x5 grid of 8x2 groups: items past n do nothing */
        qtest_memset(m.qts, a, 0, 0x30000);
        run_kernel(&m, e, MEGPU_KERNEL_FILL, ptr, n, param, 37, 5, 8, 2);
        for (unsigned i = 0; i < 200; i++) {
            g_assert_cmphex(qtest_readl(m.qts, a + i * 4), ==,
                            i < n ? param[0] : 0);
        }

        /* COPY, VADD, INCREMENT over 3000 elements (pages, groups) */
        for (unsigned i = 0; i < 3000; i++) {
            qtest_writel(m.qts, a + i * 4, i * 3);
            qtest_writel(m.qts, b + i * 4, 0xffffffff - i);
        }
        run_kernel(&m, e, MEGPU_KERNEL_VADD, ptr, 3000, param,
                   3000, 1, 256, 1);
        for (unsigned i = 0; i < 3000; i += 7) {
            g_assert_cmphex(qtest_readl(m.qts, c + i * 4), ==,
                            (uint32_t)(i * 3 + 0xffffffff - i));
        }
        run_kernel(&m, e, MEGPU_KERNEL_COPY, ptr, 3000, param,
                   100, 30, 10, 10);
        for (unsigned i = 0; i < 3000; i += 7) {
            g_assert_cmphex(qtest_readl(m.qts, b + i * 4), ==, i * 3);
        }
        run_kernel(&m, e, MEGPU_KERNEL_INCREMENT, ptr, 2999, param,
                   3000, 1, 1024, 1);
        for (unsigned i = 2990; i < 3000; i++) {
            g_assert_cmphex(qtest_readl(m.qts, a + i * 4), ==,
                            i * 3 + (i < 2999));
        }

        /* SAXPY: y = a * x + y in float */
        for (unsigned i = 0; i < 64; i++) {
            float x = i, y = 1.0f - i;
            uint32_t xu, yu;

            memcpy(&xu, &x, 4);
            memcpy(&yu, &y, 4);
            qtest_writel(m.qts, a + i * 4, xu);
            qtest_writel(m.qts, b + i * 4, yu);
        }
        {
            float alpha = 2.5f;
            uint32_t p[3] = { 0 };

            memcpy(&p[0], &alpha, 4);
            run_kernel(&m, e, MEGPU_KERNEL_SAXPY, ptr, 64, p, 8, 8, 4, 4);
            for (unsigned i = 0; i < 64; i++) {
                uint32_t yu = qtest_readl(m.qts, b + i * 4);
                float y;

                memcpy(&y, &yu, 4);
                g_assert_cmpfloat(y, ==, alpha * (float)i + (1.0f - i));
            }
        }

        /* CHECKSUM: one atomic add per work-group onto *ptr[1] */
        {
            uint64_t cp[4] = { a, c + 0x800, 0, 0 };
            uint32_t sum = 7;

            for (unsigned i = 0; i < 5000; i++) {
                qtest_writel(m.qts, a + i * 4, i * 2654435761u);
                sum += i * 2654435761u;
            }
            qtest_writel(m.qts, c + 0x800, 7);
            run_kernel(&m, e, MEGPU_KERNEL_CHECKSUM, cp, 5000, param,
                       5000, 1, 100, 1);
            g_assert_cmphex(qtest_readl(m.qts, c + 0x800), ==, sum);
        }
    }

    /*
     * Video runs only CHECKSUM and the image kernels (tested with them);
     * copy has no DISPATCH at all.
     */
    {
        uint32_t param[3] = { 0 };
        uint64_t cp[4] = { a, c, 0, 0 };
        Stream *r = &m.ring[3];
        uint32_t at;

        for (unsigned i = 0; i < 10; i++) {
            qtest_writel(m.qts, a + i * 4, i);
        }
        qtest_writel(m.qts, c, 0);
        run_kernel(&m, 3, MEGPU_KERNEL_CHECKSUM, cp, 10, param, 10, 1, 3, 1);
        g_assert_cmpuint(qtest_readl(m.qts, c), ==, 45);
        for (uint32_t k = 0; k < MEGPU_KERNEL_COUNT; k++) {
            if (MEGPU_KERNELS_VIDEO & MEGPU_BIT(k)) {
                continue;
            }
            at = r->pos;
            emit_dispatch(r, k, DATA_PA + 0xff000, 1, 1, 1, 1);
            kick(&m, 3);
            expect_fault(&m, 3, MEGPU_FAULT_UNSUPPORTED, RING_PA(3) + at, at,
                         0);
            eng_idle(&m, 3);
        }
        at = m.ring[2].pos;
        emit_dispatch(&m.ring[2], MEGPU_KERNEL_CHECKSUM, DATA_PA + 0xff000,
                      1, 1, 1, 1);
        kick(&m, 2);
        expect_fault(&m, 2, MEGPU_FAULT_UNSUPPORTED, RING_PA(2) + at, at, 0);
        eng_idle(&m, 2);
    }

    /* Bad kernel id, group sizes and argument alignment: BAD_ARG. */
    {
        static const uint32_t bad[][5] = {
            /* kernel, lx, ly, args offset */
            { MEGPU_KERNEL_COUNT, 1, 1, 0 },
            { 0xffffffff, 1, 1, 0 },
            { MEGPU_KERNEL_FILL, 0, 1, 0 },
            { MEGPU_KERNEL_FILL, 1, 0, 0 },
            { MEGPU_KERNEL_FILL, 33, 32, 0 },
            { MEGPU_KERNEL_FILL, 0x10000, 0x10000, 0 },
            { MEGPU_KERNEL_FILL, 1, 1, 4 },
        };
        Stream *r = &m.ring[0];

        for (unsigned i = 0; i < ARRAY_SIZE(bad); i++) {
            uint32_t at = r->pos;

            emit_dispatch(r, bad[i][0], DATA_PA + 0xff000 + bad[i][3],
                          4, 4, bad[i][1], bad[i][2]);
            kick(&m, 0);
            expect_fault(&m, 0, MEGPU_FAULT_BAD_ARG, RING_PA(0) + at, at, 0);
            eng_idle(&m, 0);
        }
        /* the largest group is fine */
        {
            uint32_t param[3] = { 3, 0, 0 };

            run_kernel(&m, 0, MEGPU_KERNEL_FILL, ptr, 2048, param,
                       64, 32, 32, 32);
            g_assert_cmphex(qtest_readl(m.qts, a + 2047 * 4), ==, 3);
        }
    }
    megpu_stop_engines(&m);
}

/*
 * Element-wise kernels run several work-groups per access, within one
 * page of every array: a page that faults must stop them exactly where
 * running group by group would. INCREMENT and COPY over arrays that end
 * in the last page of RAM (the next page decodes nothing), misaligned so
 * that a group straddles the boundary: the groups before it are done,
 * the straddling one is not (COPY: its writes to the good page are, as
 * a group's write that crosses a page always was), nothing after it.
 */
static void test_kernel_runs_fault_like_groups(void)
{
    const uint64_t end_pa = 0x10000000ull;      /* -m 256M */
    const uint64_t a = end_pa - 4096 + 0x40;    /* 1008 items in RAM */
    const uint64_t src = DATA_PA + 0x20;
    const uint64_t dst = end_pa - 4096 + 0x140; /* 944 items in RAM */
    uint32_t param[3] = { 0 };
    Megpu m;
    uint32_t at;

    megpu_start_engines(&m, 1);
    for (unsigned i = 0; i < 1008; i++) {
        qtest_writel(m.qts, a + i * 4, i);
    }
    at = m.ring[0].pos;
    write_kargs(&m, DATA_PA + 0xff000, (uint64_t[4]) { a }, 2048, param);
    emit_dispatch(&m.ring[0], MEGPU_KERNEL_INCREMENT, DATA_PA + 0xff000,
                  2048, 1, 64, 1);
    kick(&m, 0);
    /* group 15 (items 960-1023) reads across the end of RAM */
    expect_fault(&m, 0, MEGPU_FAULT_BUS, end_pa, at, 0);
    eng_idle(&m, 0);
    for (unsigned i = 0; i < 1008; i++) {
        g_assert_cmphex(qtest_readl(m.qts, a + i * 4), ==, i + (i < 960));
    }

    for (unsigned i = 0; i < 2048; i++) {
        qtest_writel(m.qts, src + i * 4, 0xc0de0000 + i);
    }
    for (unsigned i = 0; i < 944; i++) {
        qtest_writel(m.qts, dst + i * 4, 0);
    }
    at = m.ring[0].pos;
    write_kargs(&m, DATA_PA + 0xff000, (uint64_t[4]) { src, dst }, 2048,
                param);
    emit_dispatch(&m.ring[0], MEGPU_KERNEL_COPY, DATA_PA + 0xff000,
                  2048, 1, 64, 1);
    kick(&m, 0);
    /* group 14 (items 896-959) writes across the end of RAM */
    expect_fault(&m, 0, MEGPU_FAULT_BUS, end_pa, at,
                 MEGPU_FAULT_INFO_WRITE);
    eng_idle(&m, 0);
    for (unsigned i = 0; i < 944; i++) {
        g_assert_cmphex(qtest_readl(m.qts, dst + i * 4), ==,
                        0xc0de0000 + i);
    }
    megpu_stop_engines(&m);
}

/* C references of the image kernels (include/megpu_hw.h). */
static uint32_t ref_chan(uint32_t px, unsigned c)
{
    return (px >> (8 * c)) & 0xff;
}

static void ref_blur(const uint32_t *src, uint32_t *dst, int w, int h,
                     int pitch)
{
    for (int y = 0; y < h; y++) {
        for (int x = 0; x < w; x++) {
            uint32_t out = 0;

            for (unsigned c = 0; c < 4; c++) {
                uint32_t sum = 0;

                for (int dy = -1; dy <= 1; dy++) {
                    for (int dx = -1; dx <= 1; dx++) {
                        int sx = MIN(MAX(x + dx, 0), w - 1);
                        int sy = MIN(MAX(y + dy, 0), h - 1);

                        sum += ref_chan(src[sy * pitch + sx], c);
                    }
                }
                out |= (sum / 9) << (8 * c);
            }
            dst[y * pitch + x] = out;
        }
    }
}

static void ref_sepia(const uint32_t *src, uint32_t *dst, int w, int h,
                      int pitch)
{
    for (int y = 0; y < h; y++) {
        for (int x = 0; x < w; x++) {
            uint32_t p = src[y * pitch + x];
            uint32_t r = ref_chan(p, 0), g = ref_chan(p, 1);
            uint32_t b = ref_chan(p, 2);

            dst[y * pitch + x] =
                MIN(255, (393 * r + 769 * g + 189 * b) / 1000) |
                MIN(255, (349 * r + 686 * g + 168 * b) / 1000) << 8 |
                MIN(255, (272 * r + 534 * g + 131 * b) / 1000) << 16 |
                (p & 0xff000000u);
        }
    }
}

#define IMG_W       13
#define IMG_H       7
#define IMG_PITCH   16
#define IMG_PX      (IMG_H * IMG_PITCH)
#define IMG_PAD     0x5a5a5a5au

static void img_put(Megpu *m, uint64_t pa, const uint32_t *px)
{
    for (unsigned i = 0; i < IMG_PX; i++) {
        qtest_writel(m->qts, pa + i * 4, px[i]);
    }
}

/* The kernel's output, with the pitch padding untouched. */
static void img_check(Megpu *m, uint64_t pa, const uint32_t *ref)
{
    uint32_t got[IMG_PX];

    qtest_memread(m->qts, pa, got, sizeof(got));
    for (unsigned y = 0; y < IMG_H; y++) {
        for (unsigned x = 0; x < IMG_PITCH; x++) {
            g_assert_cmphex(le32_to_cpu(got[y * IMG_PITCH + x]), ==,
                            x < IMG_W ? ref[y * IMG_PITCH + x] : IMG_PAD);
        }
    }
}

static void image_dispatch(Megpu *m, unsigned e, uint32_t kernel,
                           uint64_t src, uint64_t dst, uint32_t gx,
                           uint32_t gy)
{
    uint64_t ptr[4] = { src, dst, 0, 0 };
    uint32_t param[3] = { IMG_W, IMG_H, IMG_PITCH };
    uint64_t args = DATA_PA + 0xff000 + e * 0x100;

    /* n is not used by image kernels */
    write_kargs(m, args, ptr, 0, param);
    emit_dispatch(&m->ring[e], kernel, args, gx, gy, 4, 3);
    kick(m, e);
    eng_idle(m, e);
}

/*
 * BLUR3X3 and SEPIA against the references on an odd-sized image with
 * pitch > width, on gfx, compute and video; then the seed's chain:
 * blur, wait for idle, flush, sepia on another engine, flush.
 */
static void test_image_kernels(void)
{
    const uint64_t src = DATA_PA, tmp = DATA_PA + 0x1000;
    const uint64_t dst = DATA_PA + 0x2000;
    uint32_t in[IMG_PX], blur[IMG_PX], sepia[IMG_PX], chain[IMG_PX];
    uint32_t pad[IMG_PX];
    GRand *rand = g_rand_new_with_seed(4004);
    Megpu m;

    for (unsigned i = 0; i < IMG_PX; i++) {
        in[i] = g_rand_int(rand);
        pad[i] = IMG_PAD;
    }
    /* saturated and dark pixels for the min(255, ...) and the edges */
    in[0] = 0xffffffff;
    in[IMG_PITCH + 1] = 0x80ffffff;
    in[IMG_PX - IMG_PITCH + IMG_W - 1] = 0;
    g_rand_free(rand);
    memcpy(blur, pad, sizeof(pad));
    memcpy(sepia, pad, sizeof(pad));
    memcpy(chain, pad, sizeof(pad));
    ref_blur(in, blur, IMG_W, IMG_H, IMG_PITCH);
    ref_sepia(in, sepia, IMG_W, IMG_H, IMG_PITCH);
    ref_sepia(blur, chain, IMG_W, IMG_H, IMG_PITCH);

    megpu_start_engines(&m, 4);
    for (unsigned e = 0; e < 4; e++) {
        if (e == MEGPU_ENGINE_COPY) {
            continue;
        }
        img_put(&m, src, in);
        img_put(&m, dst, pad);
        /* a grid larger than the image: items outside do nothing */
        image_dispatch(&m, e, MEGPU_KERNEL_BLUR3X3, src, dst, IMG_W + 3,
                       IMG_H + 2);
        img_check(&m, dst, blur);
        img_put(&m, dst, pad);
        image_dispatch(&m, e, MEGPU_KERNEL_SEPIA, src, dst, IMG_W, IMG_H);
        img_check(&m, dst, sepia);
    }

    /* Bad image arguments fault BAD_ARG. */
    {
        static const uint32_t bad[][4] = {
            /* width, height, pitch, src offset */
            { 13, 7, 12, 0 },                   /* pitch < width */
            { 0x10000, 0x10000, 0x10000, 0 },   /* more than 4 GiB */
            { 0xffffffff, 0xffffffff, 0xffffffff, 0 },
            { 13, 7, 16, 2 },                   /* misaligned */
        };
        Stream *r = &m.ring[0];

        for (unsigned i = 0; i < ARRAY_SIZE(bad); i++) {
            uint64_t ptr[4] = { src + bad[i][3], dst, 0, 0 };
            uint64_t args = DATA_PA + 0xfe000;
            uint32_t at = r->pos;

            write_kargs(&m, args, ptr, 0, bad[i]);
            emit_dispatch(r, MEGPU_KERNEL_SEPIA, args, 4, 4, 4, 4);
            kick(&m, 0);
            expect_fault(&m, 0, MEGPU_FAULT_BAD_ARG, RING_PA(0) + at, at, 0);
            eng_idle(&m, 0);
        }
    }
    megpu_stop_engines(&m);

    /* FIG. 5 in relaxed mode: blur -> idle -> flush -> sepia -> flush */
    megpu_start_engines_opts(&m, 4, RELAXED);
    for (unsigned i = 0; i < 5; i++) {
        img_put(&m, src, in);
        img_put(&m, tmp, pad);
        img_put(&m, dst, pad);
        image_dispatch(&m, 0, MEGPU_KERNEL_BLUR3X3, src, tmp, IMG_W, IMG_H);
        host_flush(&m);
        image_dispatch(&m, 3, MEGPU_KERNEL_SEPIA, tmp, dst, IMG_W, IMG_H);
        host_flush(&m);
        img_check(&m, tmp, blur);
        img_check(&m, dst, chain);
    }
    megpu_stop_engines(&m);
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    qtest_add_func("/megpu/engine/kernels", test_kernels);
    qtest_add_func("/megpu/engine/image-kernels", test_image_kernels);
    qtest_add_func("/megpu/engine/kernel-runs-fault-like-groups",
                   test_kernel_runs_fault_like_groups);
    return g_test_run();
}
