// SPDX-License-Identifier: MIT
/*
 * megpu debug: seed 001's dump tool. The frames in every engine's ring,
 * decoded from the ring words by libmegpu's packet decoder and annotated
 * with the planner's record (which semaphore each WAIT and SIGNAL is);
 * the resource objects of the BOs; the engines' timestamps; the
 * semaphore pool. Needs debugfs (root).
 */

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "megpu_hw_packets.h"
#include "megpu.h"

#define MAX_FRAMES (16 * MEGPU_MAX_ENGINES)
#define MAX_PACKETS 4096
#define MAX_OBJECTS 4096
#define MAX_BOS 4096

static const char usage[] =
	"usage: megpu debug frames|resources|timestamps|semaphores "
	"[--device N]\n\n"
	"  frames      the last frames in each engine's ring, packet by\n"
	"              packet, with the semaphores the planner chose\n"
	"  resources   each BO's resource object: last writers and readers\n"
	"  timestamps  each engine's current and next timestamp\n"
	"  semaphores  the semaphore pool and the objects in use\n";

/* The driver's name of engine @e ("copy0"), as debugfs prints it. */
static const char *ename(struct megpu *gpu, int e)
{
	static char buf[16];
	uint64_t types = 0;

	if (e < 0 || megpu_engines(gpu, NULL, &types))
		return "?";
	megpu_engine_name(types, (unsigned int)e, buf, sizeof(buf));
	return buf;
}

static void print_ref(struct megpu *gpu, const struct megpu_debug_ref *r)
{
	printf("%s@%" PRIu64 ":sem%u", ename(gpu, r->engine), r->ts, r->sem);
}

/* The planner's record of the frame on @engine with timestamp @seqno. */
static const struct megpu_debug_frame *
planned(const struct megpu_debug_frame *f, int n, unsigned int engine,
	uint64_t seqno)
{
	int i;

	for (i = n - 1; i >= 0; i--)
		if (f[i].engine == engine && f[i].seqno == seqno)
			return &f[i];
	return NULL;
}

static void print_frame_end(struct megpu *gpu,
			    const struct megpu_debug_frame *pf)
{
	unsigned int i;

	if (!pf)
		return;
	printf("      planned: ctx %u, %u wait%s", pf->ctx, pf->nwaits,
	       pf->nwaits == 1 ? "" : "s");
	for (i = 0; i < pf->nwaits; i++) {
		printf(" ");
		print_ref(gpu, &pf->waits[i]);
	}
	printf(", signal ");
	print_ref(gpu, &pf->signal);
	printf("\n");
}

static int debug_frames(struct megpu *gpu)
{
	struct megpu_debug_ring rings[MEGPU_MAX_ENGINES];
	struct megpu_debug_frame *f = calloc(MAX_FRAMES, sizeof(*f));
	struct megpu_debug_packet *k = calloc(MAX_PACKETS, sizeof(*k));
	int nr, nf, np, r, i, frame, ret = 0;

	if (!f || !k) {
		free(f);
		free(k);
		return -ENOMEM;
	}
	nf = megpu_debug_frames(gpu, f, MAX_FRAMES);
	nr = megpu_debug_rings(gpu, rings, MEGPU_MAX_ENGINES);
	if (nf < 0 || nr < 0) {
		ret = nf < 0 ? nf : nr;
		goto out;
	}
	for (r = 0; r < nr; r++) {
		printf("%s: %u dwords from ring offset 0x%05x\n",
		       ename(gpu, (int)rings[r].engine), rings[r].ndw,
		       rings[r].start);
		np = megpu_debug_ring_packets(&rings[r], k, MAX_PACKETS);
		if (np < 0) {
			printf("  undecodable: %s\n", strerror(-np));
			ret = np;
			continue;
		}
		frame = 1;
		for (i = 0; i < np; i++) {
			bool start = !i || k[i - 1].op == MEGPU_PKT_IDLE_SIGNAL ||
				     (k[i - 1].op == MEGPU_PKT_TIMESTAMP &&
				      k[i].op != MEGPU_PKT_IDLE_SIGNAL);

			if (start)
				printf("  frame %d:\n", frame++);
			printf("    %05x: %s\n", k[i].off, k[i].text);
			if (k[i].op == MEGPU_PKT_TIMESTAMP &&
			    (i + 1 == np || k[i + 1].op != MEGPU_PKT_IDLE_SIGNAL))
				print_frame_end(gpu, planned(f, nf,
							     rings[r].engine,
							     k[i].b));
			if (k[i].op == MEGPU_PKT_IDLE_SIGNAL && i)
				print_frame_end(gpu, planned(f, nf,
							     rings[r].engine,
							     k[i - 1].b));
		}
	}
	megpu_debug_rings_free(rings, nr);
out:
	free(f);
	free(k);
	return ret;
}

static int debug_resources(struct megpu *gpu)
{
	struct megpu_debug_resource *r = calloc(MAX_BOS, sizeof(*r));
	int n, i;
	unsigned int k;

	if (!r)
		return -ENOMEM;
	n = megpu_debug_resources(gpu, r, MAX_BOS);
	for (i = 0; i < n; i++) {
		printf("bo%u size %" PRIu64 ":", r[i].id, r[i].size);
		if (!r[i].nwrites && !r[i].nreads)
			printf(" blank");
		if (r[i].nwrites)
			printf(" written by");
		for (k = 0; k < r[i].nwrites; k++) {
			printf(" ");
			print_ref(gpu, &r[i].write[k]);
		}
		if (r[i].nreads)
			printf("%s read by", r[i].nwrites ? ";" : "");
		for (k = 0; k < r[i].nreads; k++) {
			printf(" ");
			print_ref(gpu, &r[i].read[k]);
		}
		printf("\n");
	}
	free(r);
	return n < 0 ? n : 0;
}

static int debug_timestamps(struct megpu *gpu)
{
	unsigned int n = 0, e;
	uint64_t cur, next;
	int ret = megpu_engines(gpu, &n, NULL);

	for (e = 0; !ret && e < n; e++) {
		ret = megpu_debug_timestamps(gpu, e, &cur, &next);
		if (!ret)
			printf("%-8s current %-10" PRIu64 " next %-10" PRIu64
			       " in flight %" PRIu64 "\n",
			       ename(gpu, (int)e), cur, next,
			       next - 1 - cur);
	}
	return ret;
}

static int debug_semaphores(struct megpu *gpu)
{
	struct megpu_debug_sems s = { 0 };
	unsigned int i;
	int ret;

	s.obj = calloc(MAX_OBJECTS, sizeof(*s.obj));
	if (!s.obj)
		return -ENOMEM;
	ret = megpu_debug_semaphores(gpu, &s, MAX_OBJECTS);
	if (!ret) {
		printf("pool %u objects, %u in use, %" PRIu64
		       " jobs waited for a free one\n", s.pool, s.busy,
		       s.pool_waits);
		for (i = 0; i < s.count; i++) {
			printf("  sem%u tag ", s.obj[i].tag.sem);
			print_ref(gpu, &s.obj[i].tag);
			printf(" value %" PRIu64 "%s\n", s.obj[i].value,
			       s.obj[i].value >= s.obj[i].tag.ts ?
			       " (signalled)" : "");
		}
	}
	free(s.obj);
	return ret;
}

int cmd_debug(int argc, char **argv)
{
	static const struct {
		const char *name;
		int (*run)(struct megpu *gpu);
	} what[] = {
		{ "frames", debug_frames },
		{ "resources", debug_resources },
		{ "timestamps", debug_timestamps },
		{ "semaphores", debug_semaphores },
	};
	unsigned int device = 0, i;
	struct megpu gpu;
	uint64_t v;
	int ret;

	if (tool_help(argc, argv, usage))
		return 0;
	if (argc == 4 && !strcmp(argv[2], "--device") &&
	    tool_parse_u64(argv[3], &v) && v < 64)
		device = (unsigned int)v;
	else if (argc != 2)
		goto bad;
	for (i = 0; i < sizeof(what) / sizeof(what[0]); i++)
		if (!strcmp(argv[1], what[i].name))
			break;
	if (i == sizeof(what) / sizeof(what[0]))
		goto bad;
	if (tool_open(&gpu, device))
		return 1;
	ret = what[i].run(&gpu);
	megpu_close(&gpu);
	if (ret) {
		fprintf(stderr, "megpu debug %s: %s%s\n", argv[1],
			strerror(-ret), ret == -ENOENT || ret == -EACCES ?
			" (is debugfs mounted, are you root?)" : "");
		return 1;
	}
	return 0;
bad:
	fputs(usage, stderr);
	return 2;
}
