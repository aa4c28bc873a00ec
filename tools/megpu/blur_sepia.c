// SPDX-License-Identifier: MIT
/*
 * megpu demo blur-sepia: the seed's FIG. 5 chain. An image is blurred
 * (BLUR3X3) on one engine and the blurred image turned sepia (SEPIA) on
 * another engine that depends on it. The device posts engine writes, so
 * the dependency needs a flush between the two: by default the
 * host-driven handshake of FIG. 4 (launch, idle, flush, flush done,
 * launch), with --gpu-flush the engine's own flush at the end of the
 * blur, with --no-flush none at all, which shows stale reads.
 */

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "megpu_hw_packets.h"
#include "megpu.h"

static const char usage[] =
"usage: megpu demo blur-sepia [--device I] [--width W --height H]\n"
"                             [--in FILE.ppm] [--out FILE.ppm]\n"
"                             [--gpu-flush | --no-flush]\n"
"\n"
"The seed's FIG. 5 chain: BLUR3X3 on one engine, then SEPIA on another\n"
"engine that reads the blurred image, ordered by an in-sync. The result\n"
"is compared byte for byte with the CPU reference (blur then sepia) and\n"
"written as a binary PPM (P6, alpha dropped).\n"
"\n"
"  --device I      megpu device index (default 0)\n"
"  --width W       generated image size (default 256 x 192)\n"
"  --height H\n"
"  --in FILE.ppm   blur this P6 image (maxval 255) instead\n"
"  --out FILE.ppm  where to write the result (default blur-sepia.ppm)\n"
"  --gpu-flush     the blur's engine flushes at the end of its job (the\n"
"                  GPU-internal flush) instead of the host-driven\n"
"                  handshake (DRM_MEGPU_SUBMIT_HOST_FLUSH, the default)\n"
"  --no-flush      no flush at all (DRM_MEGPU_SUBMIT_NO_FLUSH): the sepia\n"
"                  may read the blurred image before it is in memory; a\n"
"                  mismatch is the expected demonstration\n"
"\n"
"Exits 0 when the result is what the mode promises (it matches the CPU's\n"
"with a flush; without one, stale pixels showed), 1 when it does not\n"
"match with a flush or on an error, 3 when no stale pixel showed without\n"
"a flush (timing decides that; nothing guarantees it either way).\n";

#define MAX_SIDE 4096

enum mode { HOST_FLUSH, GPU_FLUSH, NO_FLUSH };

/* A pattern with edges and gradients, so that the blur shows. */
static void generate(uint32_t *px, uint32_t w, uint32_t h)
{
	uint32_t x, y, r, g, b, cx = w / 2, cy = h / 2;
	uint32_t rad = (w < h ? w : h) / 3;

	for (y = 0; y < h; y++)
		for (x = 0; x < w; x++) {
			int64_t dx = (int64_t)x - cx, dy = (int64_t)y - cy;

			r = w > 1 ? x * 255 / (w - 1) : 0;
			g = h > 1 ? y * 255 / (h - 1) : 0;
			b = ((x / 16) ^ (y / 16)) & 1 ? 230 : 20;
			if (dx * dx + dy * dy < (int64_t)rad * rad) {
				r = 255 - r;
				b = 255 - b;
			}
			px[(uint64_t)y * w + x] = r | g << 8 | b << 16 |
						  0xffu << 24;
		}
}

/* The next header token of a PPM, skipping blanks and comments. */
static int ppm_token(FILE *f, unsigned long *v)
{
	int c;

	for (;;) {
		c = fgetc(f);
		if (c == '#') {
			while (c != '\n' && c != EOF)
				c = fgetc(f);
		} else if (c != ' ' && c != '\t' && c != '\n' && c != '\r') {
			break;
		}
	}
	if (c < '0' || c > '9')
		return -EINVAL;
	*v = 0;
	while (c >= '0' && c <= '9') {
		*v = *v * 10 + (c - '0');
		if (*v > 1000000)
			return -EINVAL;
		c = fgetc(f);
	}
	/* exactly one blank ends the header's last token */
	return c == EOF ? -EINVAL : 0;
}

/* Read a P6 PPM into a new array of RGBA8888 pixels (alpha 255). */
static int ppm_read(const char *path, uint32_t **px, uint32_t *w,
		    uint32_t *h)
{
	unsigned long width, height, maxval;
	unsigned char rgb[3];
	uint64_t i, n;
	FILE *f;
	int ret;

	f = fopen(path, "rb");
	if (!f)
		return -errno;
	if (fgetc(f) != 'P' || fgetc(f) != '6') {
		fclose(f);
		return -EINVAL;
	}
	ret = ppm_token(f, &width) ?: ppm_token(f, &height) ?:
	      ppm_token(f, &maxval);
	if (ret || !width || !height || width > MAX_SIDE ||
	    height > MAX_SIDE || maxval != 255) {
		fclose(f);
		return -EINVAL;
	}
	n = (uint64_t)width * height;
	*px = malloc(n * 4);
	if (!*px) {
		fclose(f);
		return -ENOMEM;
	}
	for (i = 0; i < n; i++) {
		if (fread(rgb, 1, 3, f) != 3) {
			free(*px);
			fclose(f);
			return -EINVAL;
		}
		(*px)[i] = rgb[0] | rgb[1] << 8 | rgb[2] << 16 | 0xffu << 24;
	}
	fclose(f);
	*w = (uint32_t)width;
	*h = (uint32_t)height;
	return 0;
}

static int ppm_write(const char *path, const uint32_t *px, uint32_t w,
		     uint32_t h)
{
	uint64_t i, n = (uint64_t)w * h;
	unsigned char rgb[3];
	FILE *f = fopen(path, "wb");
	int ret = 0;

	if (!f)
		return -errno;
	fprintf(f, "P6\n%u %u\n255\n", w, h);
	for (i = 0; i < n; i++) {
		rgb[0] = px[i] & 0xff;
		rgb[1] = (px[i] >> 8) & 0xff;
		rgb[2] = (px[i] >> 16) & 0xff;
		if (fwrite(rgb, 1, 3, f) != 3) {
			ret = -EIO;
			break;
		}
	}
	if (fclose(f) && !ret)
		ret = -errno;
	return ret;
}

/* An engine that runs @kernel, preferring type @prefer, other than @not. */
static int pick(struct megpu *gpu, int prefer, unsigned int kernel, int not)
{
	unsigned int n = 0, e, pass, t;
	uint64_t types = 0;

	if (megpu_engines(gpu, &n, &types))
		return -1;
	for (pass = 0; pass < 2; pass++)
		for (e = 0; e < n; e++) {
			t = MEGPU_ENGINE_TYPE(types, e);
			if ((int)e == not || (!pass && (int)t != prefer))
				continue;
			if (megpu_engine_kernels(t) & MEGPU_BIT(kernel))
				return (int)e;
		}
	return -1;
}

static void step(const char *what, const char *text, int64_t at)
{
	if (at >= 0)
		printf("    %-11s %-52s %8.2f ms\n", what, text, at / 1e6);
	else
		printf("    %-11s %s\n", what, text);
}

/* What the handshake did, from the times and debugfs counters. */
static void show_steps(struct megpu *gpu, enum mode mode,
		       const struct megpu_chain *c,
		       const struct megpu_chain_times *t, bool stats,
		       const struct megpu_flush_stats *a,
		       const struct megpu_flush_stats *b)
{
	char bn[16], sn[16], text[128];
	uint64_t types = 0;
	unsigned int be = c->blur_engine;

	megpu_engines(gpu, NULL, &types);
	megpu_engine_name(types, c->blur_engine, bn, sizeof(bn));
	megpu_engine_name(types, c->sepia_engine, sn, sizeof(sn));
	snprintf(text, sizeof(text), "BLUR3X3 on %s (doorbell)", bn);
	step("launch", text, 0);
	if (mode == HOST_FLUSH) {
		if (stats)
			snprintf(text, sizeof(text), "%s reported the job done "
				 "(idle interrupts +%u)", bn,
				 b->eng[be].idle_irqs - a->eng[be].idle_irqs);
		else
			snprintf(text, sizeof(text), "%s reported the job "
				 "done", bn);
		step("idle", text, -1);
		if (stats)
			snprintf(text, sizeof(text), "the driver wrote FLUSH "
				 "(host flushes started +%llu)",
				 (unsigned long long)(b->host_started -
						      a->host_started));
		else
			snprintf(text, sizeof(text), "the driver wrote FLUSH");
		step("flush", text, -1);
		step("flush done", "acknowledged (FLUSH_DONE): blur fence "
		     "signalled", t->blur_done - t->start);
	} else if (mode == GPU_FLUSH) {
		if (stats)
			snprintf(text, sizeof(text), "FLUSH packet ran on %s "
				 "(its flushes +%u), fence signalled", bn,
				 b->eng[be].flushes - a->eng[be].flushes);
		else
			snprintf(text, sizeof(text), "FLUSH packet ran on %s, "
				 "fence signalled", bn);
		step("flush", text, t->blur_done - t->start);
	} else {
		step("done", "blur packets ran, fence signalled, no flush",
		     t->blur_done - t->start);
	}
	snprintf(text, sizeof(text), "SEPIA on %s (after the blur's fence)",
		 sn);
	step("launch", text, -1);
	step("done", "sepia fence signalled", t->sepia_done - t->start);
}

int cmd_demo_blur_sepia(int argc, char **argv)
{
	const char *in = NULL, *out = "blur-sepia.ppm";
	uint64_t device = 0, w = 256, h = 192, bad;
	struct megpu_flush_stats before, after;
	uint32_t *img = NULL, *expect = NULL;
	static const char *const mode_text[] = {
		[HOST_FLUSH] = "host-driven flush "
			       "(DRM_MEGPU_SUBMIT_HOST_FLUSH, FIG. 4)",
		[GPU_FLUSH] = "GPU-internal flush (the blur's engine flushes "
			      "at its end)",
		[NO_FLUSH] = "no flush (DRM_MEGPU_SUBMIT_NO_FLUSH): in-sync "
			     "only",
	};
	static const uint32_t mode_flags[] = {
		[HOST_FLUSH] = DRM_MEGPU_SUBMIT_HOST_FLUSH,
		[GPU_FLUSH] = 0,
		[NO_FLUSH] = DRM_MEGPU_SUBMIT_NO_FLUSH,
	};
	enum mode mode = HOST_FLUSH;
	struct megpu_chain_times t;
	struct megpu_chain c;
	struct megpu gpu;
	int i, be, se, ret, result = 1;
	uint32_t iw, ih;
	bool stats;

	if (tool_help(argc, argv, usage))
		return 0;
	for (i = 1; i < argc; i++) {
		if (i + 1 < argc && !strcmp(argv[i], "--device") &&
		    tool_parse_u64(argv[i + 1], &device)) {
			i++;
		} else if (i + 1 < argc && !strcmp(argv[i], "--width") &&
			   tool_parse_u64(argv[i + 1], &w) && w &&
			   w <= MAX_SIDE) {
			i++;
		} else if (i + 1 < argc && !strcmp(argv[i], "--height") &&
			   tool_parse_u64(argv[i + 1], &h) && h &&
			   h <= MAX_SIDE) {
			i++;
		} else if (i + 1 < argc && !strcmp(argv[i], "--in")) {
			in = argv[++i];
		} else if (i + 1 < argc && !strcmp(argv[i], "--out")) {
			out = argv[++i];
		} else if (!strcmp(argv[i], "--gpu-flush") &&
			   mode == HOST_FLUSH) {
			mode = GPU_FLUSH;
		} else if (!strcmp(argv[i], "--no-flush") &&
			   mode == HOST_FLUSH) {
			mode = NO_FLUSH;
		} else {
			fputs(usage, stderr);
			return 2;
		}
	}

	iw = (uint32_t)w;
	ih = (uint32_t)h;
	if (in) {
		ret = ppm_read(in, &img, &iw, &ih);
		if (ret) {
			fprintf(stderr, "megpu demo blur-sepia: %s: %s\n", in,
				ret == -EINVAL ? "not a P6 PPM with maxval 255"
				" and sides up to 4096" : strerror(-ret));
			return 1;
		}
	} else {
		img = malloc((size_t)iw * ih * 4);
		if (!img)
			return 1;
		generate(img, iw, ih);
	}
	if (tool_open(&gpu, device)) {
		free(img);
		return 1;
	}
	be = pick(&gpu, MEGPU_ENGINE_COMPUTE, MEGPU_KERNEL_BLUR3X3, -1);
	se = be < 0 ? -1 : pick(&gpu, MEGPU_ENGINE_VIDEO, MEGPU_KERNEL_SEPIA,
				be);
	if (se < 0) {
		fprintf(stderr, "megpu demo blur-sepia: needs two engines "
			"that run image kernels (gfx, compute, video)\n");
		goto out_gpu;
	}
	ret = megpu_chain_init(&c, &gpu, be, se, iw, ih);
	if (ret) {
		fprintf(stderr, "megpu demo blur-sepia: setting up: %s\n",
			strerror(-ret));
		goto out_gpu;
	}
	memcpy(c.src->map, img, (size_t)iw * ih * 4);
	expect = malloc((size_t)iw * ih * 4);
	if (!expect || megpu_chain_reference(&c, expect))
		goto out_chain;

	printf("megpu demo blur-sepia: %ux%u image (%s), BLUR3X3 on engine "
	       "%d (%s), SEPIA on engine %d (%s)\n", iw, ih,
	       in ? in : "generated", be, tool_engine_name(&gpu, be), se,
	       tool_engine_name(&gpu, se));
	printf("  dependency: %s\n", mode_text[mode]);
	stats = !megpu_flush_stats(&gpu, &before);
	if (stats && !before.relaxed)
		printf("  note: the device is in strict write mode: writes "
		       "are visible at once\n");
	ret = megpu_chain_run(&c, mode_flags[mode], 60000000000ll, &t);
	if (ret) {
		fprintf(stderr, "megpu demo blur-sepia: the chain failed: "
			"%s\n", tool_status(ret));
		goto out_chain;
	}
	stats = stats && !megpu_flush_stats(&gpu, &after) &&
		after.engines == before.engines &&
		(unsigned int)be < after.engines;
	if (mode == HOST_FLUSH)
		printf("  launch → idle → flush → flush done → launch\n");
	show_steps(&gpu, mode, &c, &t, stats, &before, &after);

	bad = megpu_chain_mismatches(&c, expect);
	printf("  check: %llu pixels against the CPU reference (blur then "
	       "sepia): %llu mismatching\n",
	       (unsigned long long)iw * ih, (unsigned long long)bad);
	ret = ppm_write(out, c.dst->map, iw, ih);
	if (ret)
		fprintf(stderr, "megpu demo blur-sepia: writing %s: %s\n", out,
			strerror(-ret));
	else
		printf("  wrote %s (P6, %ux%u, alpha dropped)\n", out, iw, ih);

	if (mode == NO_FLUSH) {
		if (bad)
			printf("  without a flush the sepia read a blurred "
			       "image that was not all in memory yet:\n"
			       "  %llu stale pixels, the expected "
			       "demonstration\n", (unsigned long long)bad);
		else
			printf("  no stale pixel this time: the blur's writes "
			       "happened to land before the\n  sepia read "
			       "them (timing decides; nothing guarantees "
			       "it)\n");
		printf("megpu demo blur-sepia: %s\n", bad ?
		       "stale pixels shown (no flush)" :
		       "no stale pixel shown (no flush)");
		result = ret ? 1 : bad ? 0 : 3;
	} else {
		printf("megpu demo blur-sepia: %s\n", bad ? "FAIL" : "PASS");
		result = bad || ret ? 1 : 0;
	}
out_chain:
	megpu_chain_fini(&c);
out_gpu:
	free(expect);
	free(img);
	megpu_close(&gpu);
	return result;
}
