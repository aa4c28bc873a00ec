// SPDX-License-Identifier: MIT
/* DISPATCH argument blocks (MEGPU_KARGS_*) and built-in kernel names. */

#include <errno.h>
#include <string.h>
#include <strings.h>

#include "megpu_hw_wave.h"
#include "libmegpu.h"

static const char *const kernel_names[MEGPU_KERNEL_COUNT] = {
	[MEGPU_KERNEL_FILL] = "fill",
	[MEGPU_KERNEL_COPY] = "copy",
	[MEGPU_KERNEL_VADD] = "vadd",
	[MEGPU_KERNEL_SAXPY] = "saxpy",
	[MEGPU_KERNEL_CHECKSUM] = "checksum",
	[MEGPU_KERNEL_INCREMENT] = "increment",
	[MEGPU_KERNEL_BLUR3X3] = "blur3x3",
	[MEGPU_KERNEL_SEPIA] = "sepia",
};

const char *megpu_kernel_name(unsigned int kernel)
{
	if (kernel == MEGPU_KERNEL_PROGRAM)
		return "program";
	return kernel < MEGPU_KERNEL_COUNT ? kernel_names[kernel] : NULL;
}

int megpu_kernel_by_name(const char *name)
{
	unsigned int k;

	for (k = 0; k < MEGPU_KERNEL_COUNT; k++)
		if (kernel_names[k] && !strcasecmp(name, kernel_names[k]))
			return (int)k;
	if (!strcasecmp(name, "program"))
		return MEGPU_KERNEL_PROGRAM;
	return -EINVAL;
}

/* Explicit little endian: the block is device memory, not a C struct. */
static void put32(uint8_t *p, uint32_t v)
{
	p[0] = v;
	p[1] = v >> 8;
	p[2] = v >> 16;
	p[3] = v >> 24;
}

static uint32_t get32(const uint8_t *p)
{
	return p[0] | p[1] << 8 | p[2] << 16 | (uint32_t)p[3] << 24;
}

void megpu_kargs_pack(void *dst, const struct megpu_kargs *k)
{
	uint8_t *p = dst;
	unsigned int i;

	for (i = 0; i < 4; i++) {
		put32(p + MEGPU_KARGS_PTR(i), (uint32_t)k->ptr[i]);
		put32(p + MEGPU_KARGS_PTR(i) + 4, (uint32_t)(k->ptr[i] >> 32));
	}
	put32(p + MEGPU_KARGS_N, k->n);
	for (i = 0; i < 3; i++)
		put32(p + MEGPU_KARGS_PARAM(i), k->param[i]);
}

void megpu_kargs_unpack(const void *src, struct megpu_kargs *k)
{
	const uint8_t *p = src;
	unsigned int i;

	for (i = 0; i < 4; i++)
		k->ptr[i] = get32(p + MEGPU_KARGS_PTR(i)) |
			    (uint64_t)get32(p + MEGPU_KARGS_PTR(i) + 4) << 32;
	k->n = get32(p + MEGPU_KARGS_N);
	for (i = 0; i < 3; i++)
		k->param[i] = get32(p + MEGPU_KARGS_PARAM(i));
}

int megpu_kargs_write(struct megpu_bo *bo, uint64_t offset,
		      const struct megpu_kargs *k, uint64_t *va)
{
	if (!bo->map)
		return -EINVAL;
	if (offset % 8 || offset > bo->size ||
	    bo->size - offset < MEGPU_KARGS_SIZE)
		return -EINVAL;
	megpu_kargs_pack((uint8_t *)bo->map + offset, k);
	if (va)
		*va = bo->va + offset;
	return 0;
}

_Static_assert(sizeof(((struct megpu_pargs *)0)->user) ==
	       MEGPU_PARGS_USER_SIZE, "pargs user size");

void megpu_pargs_pack(void *dst, const struct megpu_pargs *p)
{
	uint8_t *b = dst;
	unsigned int i;

	memset(b, 0, MEGPU_PARGS_SIZE);
	put32(b + MEGPU_PARGS_PROGRAM, (uint32_t)p->program);
	put32(b + MEGPU_PARGS_PROGRAM + 4, (uint32_t)(p->program >> 32));
	put32(b + MEGPU_PARGS_LENGTH, p->len);
	for (i = 0; i < MEGPU_PARGS_USER_SIZE / 8; i++) {
		put32(b + MEGPU_PARGS_USER + 8 * i, (uint32_t)p->user[i]);
		put32(b + MEGPU_PARGS_USER + 8 * i + 4,
		      (uint32_t)(p->user[i] >> 32));
	}
}

void megpu_pargs_unpack(const void *src, struct megpu_pargs *p)
{
	const uint8_t *b = src;
	unsigned int i;

	p->program = get32(b + MEGPU_PARGS_PROGRAM) |
		     (uint64_t)get32(b + MEGPU_PARGS_PROGRAM + 4) << 32;
	p->len = get32(b + MEGPU_PARGS_LENGTH);
	for (i = 0; i < MEGPU_PARGS_USER_SIZE / 8; i++)
		p->user[i] = get32(b + MEGPU_PARGS_USER + 8 * i) |
			     (uint64_t)get32(b + MEGPU_PARGS_USER + 8 * i + 4)
			     << 32;
}

int megpu_pargs_write(struct megpu_bo *bo, uint64_t offset,
		      const struct megpu_pargs *p, uint64_t *va)
{
	if (!bo->map)
		return -EINVAL;
	if (offset % 8 || offset > bo->size ||
	    bo->size - offset < MEGPU_PARGS_SIZE)
		return -EINVAL;
	megpu_pargs_pack((uint8_t *)bo->map + offset, p);
	if (va)
		*va = bo->va + offset;
	return 0;
}

uint32_t megpu_f32_bits(float f)
{
	uint32_t u;

	memcpy(&u, &f, sizeof(u));
	return u;
}

static float f32(uint32_t u)
{
	float f;

	memcpy(&f, &u, sizeof(f));
	return f;
}

/* Channel @c of an RGBA8888 pixel: r bits 7:0, g 15:8, b 23:16, a 31:24. */
static uint32_t chan(uint32_t px, unsigned int c)
{
	return (px >> (8 * c)) & 0xff;
}

static uint32_t clamp_index(int64_t v, uint32_t size)
{
	return v < 0 ? 0 : v >= size ? size - 1 : (uint32_t)v;
}

/* Pixel (x, y) of the blur: per channel, the 3x3 mean rounded down. */
static uint32_t blur_px(const uint32_t *src, uint32_t x, uint32_t y,
			uint32_t width, uint32_t height, uint32_t pitch)
{
	uint32_t out = 0, sum, sx, sy;
	unsigned int c;
	int dx, dy;

	for (c = 0; c < 4; c++) {
		sum = 0;
		for (dy = -1; dy <= 1; dy++) {
			sy = clamp_index((int64_t)y + dy, height);
			for (dx = -1; dx <= 1; dx++) {
				sx = clamp_index((int64_t)x + dx, width);
				sum += chan(src[(uint64_t)sy * pitch + sx], c);
			}
		}
		out |= sum / 9 << (8 * c);
	}
	return out;
}

void megpu_ref_blur3x3(const uint32_t *src, uint32_t *dst, uint32_t width,
		       uint32_t height, uint32_t pitch)
{
	uint32_t x, y;

	for (y = 0; y < height; y++)
		for (x = 0; x < width; x++)
			dst[(uint64_t)y * pitch + x] =
				blur_px(src, x, y, width, height, pitch);
}

uint32_t megpu_ref_sepia_px(uint32_t px)
{
	uint32_t r = chan(px, 0), g = chan(px, 1), b = chan(px, 2);
	uint32_t nr = (393 * r + 769 * g + 189 * b) / 1000;
	uint32_t ng = (349 * r + 686 * g + 168 * b) / 1000;
	uint32_t nb = (272 * r + 534 * g + 131 * b) / 1000;

	nr = nr > 255 ? 255 : nr;
	ng = ng > 255 ? 255 : ng;
	nb = nb > 255 ? 255 : nb;
	return nr | ng << 8 | nb << 16 | (px & 0xff000000u);
}

void megpu_ref_sepia(const uint32_t *src, uint32_t *dst, uint32_t width,
		     uint32_t height, uint32_t pitch)
{
	uint64_t row;
	uint32_t x, y;

	for (y = 0; y < height; y++) {
		row = (uint64_t)y * pitch;
		for (x = 0; x < width; x++)
			dst[row + x] = megpu_ref_sepia_px(src[row + x]);
	}
}

int megpu_kernel_ref(unsigned int kernel, uint32_t *const ptr[4], uint32_t n,
		     const uint32_t param[3])
{
	uint32_t i, sum = 0;

	switch (kernel) {
	case MEGPU_KERNEL_BLUR3X3:
	case MEGPU_KERNEL_SEPIA:
		/* n is not used: the image is param[0] x param[1] */
		if (param[2] < param[0])
			return -EINVAL;
		if (kernel == MEGPU_KERNEL_BLUR3X3)
			megpu_ref_blur3x3(ptr[0], ptr[1], param[0], param[1],
					  param[2]);
		else
			megpu_ref_sepia(ptr[0], ptr[1], param[0], param[1],
					param[2]);
		return 0;
	case MEGPU_KERNEL_FILL:
		for (i = 0; i < n; i++)
			ptr[0][i] = param[0];
		return 0;
	case MEGPU_KERNEL_COPY:
		for (i = 0; i < n; i++)
			ptr[1][i] = ptr[0][i];
		return 0;
	case MEGPU_KERNEL_VADD:
		for (i = 0; i < n; i++)
			ptr[2][i] = ptr[0][i] + ptr[1][i];
		return 0;
	case MEGPU_KERNEL_SAXPY:
		for (i = 0; i < n; i++) {
			volatile float r = f32(param[0]) * f32(ptr[0][i]);

			ptr[1][i] = megpu_f32_bits(r + f32(ptr[1][i]));
		}
		return 0;
	case MEGPU_KERNEL_CHECKSUM:
		for (i = 0; i < n; i++)
			sum += ptr[0][i];
		*ptr[1] += sum;
		return 0;
	case MEGPU_KERNEL_INCREMENT:
		for (i = 0; i < n; i++)
			ptr[0][i]++;
		return 0;
	}
	return -EINVAL;
}
