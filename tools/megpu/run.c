// SPDX-License-Identifier: MIT
/*
 * megpu run: submit one job described by flags or by a job file, check
 * its result on the CPU through mmap, and print how long it took.
 */

#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <fcntl.h>
#include <unistd.h>

#include "megpu_hw_packets.h"
#include "megpu_programs.h"
#include "megpu.h"

static const char usage[] =
"usage: megpu run [options]            a job from flags\n"
"       megpu run [options] JOBFILE    a job from a file ('-': stdin)\n"
"       megpu run --program P [--grid X[xY]] [--group X[xY]] [--arg A]...\n"
"                                      a wave program\n"
"\n"
"  --device I        megpu device index (default 0)\n"
"  --engine N|TYPE   engine index or type (gfx, compute, copy, video);\n"
"                    default: the first engine that accepts the job\n"
"  --op OP           fill, copy, write, timestamp or dispatch (default fill)\n"
"  --kernel K        for dispatch: vadd, saxpy, fill, copy, checksum,\n"
"                    increment, blur3x3, sepia (default vadd); the image\n"
"                    kernels take the buffer as rows of 64 pixels\n"
"  --size BYTES      buffer size, K/M suffixes (default 4096)\n"
"  --value V         the value to fill/write/timestamp (default 0x600df00d)\n"
"  --dump            print the decoded IB\n"
"  --force           submit even if the engine does not accept the job\n"
"                    (it then faults: a way to watch recovery)\n"
"\n"
"Wave programs (seed 003):\n"
"  --program P       a .s file, or a built-in program by name (vadd,\n"
"                    checksum, increment, scale_xor, syscall, printf,\n"
"                    fileio: tools/megpu/programs/); runs on the first\n"
"                    compute (else gfx) engine unless --engine says\n"
"  --grid X[xY]      work-items (default 16)\n"
"  --group X[xY]     work-group size (default 16, at most 1024 items)\n"
"  --arg A           user argument i (user[i], LDARG at 8 i), in order:\n"
"                    a number, or buf:SIZE[:VALUE] for a new buffer of\n"
"                    SIZE bytes (every dword VALUE) whose GPU address is\n"
"                    passed; up to 16\n"
"  The program's calls are served: printf lines go to stdout, malloc/\n"
"  free use a 1 MiB pool, fileio writes to megpu-run.out. After the job\n"
"  the first 8 dwords of each buffer are printed.\n"
"\n"
"Job file: one line per packet in the syntax --dump prints, addresses as\n"
"@NAME or @NAME+OFFSET, plus:\n"
"  bo NAME SIZE [VALUE]            a buffer, every dword set to VALUE\n"
"  kargs NAME P0 P1 P2 P3 N [A B C]  a DISPATCH argument block in bo NAME\n"
"  engine N|TYPE                   where to run (default: engine 0)\n"
"  expect NAME[+OFF] VALUE [COUNT] after the job, COUNT dwords == VALUE\n"
"Example:\n"
"  bo buf 4096\n"
"  FILL dst=@buf bytes=4096 value=0x7\n"
"  expect buf 0x7 1024\n";

#define MAX_BOS 16
#define MAX_EXPECT 32

struct run {
	struct megpu gpu;
	struct megpu_cs cs;
	struct {
		char name[32];
		struct megpu_bo *bo;
	} bos[MAX_BOS];
	unsigned int nbos;
	struct {
		unsigned int bo;
		uint64_t off;
		uint32_t value, count;
	} expect[MAX_EXPECT];
	unsigned int nexpect;
	int engine;
	bool dump, force;
};

static int parse_engine(struct run *r, const char *s)
{
	unsigned int n = 0;
	uint64_t v;
	int type;

	megpu_engines(&r->gpu, &n, NULL);
	if (tool_parse_u64(s, &v)) {
		if (v >= n) {
			fprintf(stderr, "megpu run: engine %s out of range "
				"(%u engines)\n", s, n);
			return -EINVAL;
		}
		return (int)v;
	}
	type = megpu_engine_type_by_name(s);
	if (type < 0 || (type = megpu_find_engine(&r->gpu, type)) < 0) {
		fprintf(stderr, "megpu run: no engine '%s'\n", s);
		return -EINVAL;
	}
	return type;
}

static int new_bo(struct run *r, const char *name, uint64_t size,
		  struct megpu_bo **bo)
{
	int ret;

	if (r->nbos == MAX_BOS)
		return -E2BIG;
	ret = megpu_bo_new(&r->gpu, size, 0, bo);
	ret = ret ?: megpu_bo_map(*bo);
	if (ret) {
		fprintf(stderr, "megpu run: buffer %s (%llu bytes): %s\n",
			name, (unsigned long long)size, strerror(-ret));
		return ret;
	}
	snprintf(r->bos[r->nbos].name, sizeof(r->bos[0].name), "%s", name);
	r->bos[r->nbos++].bo = *bo;
	return 0;
}

static int find_bo(struct run *r, const char *name)
{
	unsigned int i;

	for (i = 0; i < r->nbos; i++)
		if (!strcmp(r->bos[i].name, name))
			return (int)i;
	return -1;
}

static int resolve(void *priv, const char *name, uint64_t *addr)
{
	int i = find_bo(priv, name);

	if (i < 0)
		return -ENOENT;
	*addr = ((struct run *)priv)->bos[i].bo->va;
	return 0;
}

static void print_line(void *priv, size_t dword, const char *text)
{
	(void)priv;
	printf("  %5zu: %s\n", dword, text);
}

/* Submit, wait, report; 0 when the fence signalled without error. */
static int submit(struct run *r)
{
	struct megpu_job job;
	uint32_t sync;
	int64_t t0, t1;
	unsigned int i;
	int ret, status;

	if (r->dump) {
		printf("IB (%u dwords) for engine %d (%s):\n", r->cs.len,
		       r->engine, tool_engine_name(&r->gpu, r->engine));
		megpu_cs_decode(r->cs.dw, r->cs.len, print_line, NULL, NULL);
	}
	ret = megpu_syncobj_new(&r->gpu, false, &sync);
	if (ret)
		return ret;
	megpu_job_init(&job, r->engine);
	megpu_job_signal_sync(&job, sync, 0);
	for (i = 0; i < r->nbos; i++)
		megpu_job_add_bo(&job, r->bos[i].bo,
				 DRM_MEGPU_BO_READ | DRM_MEGPU_BO_WRITE);
	ret = megpu_job_upload(&r->gpu, &job, &r->cs);
	if (ret) {
		fprintf(stderr, "megpu run: IB: %s\n", strerror(-ret));
		goto out;
	}
	t0 = megpu_now_ns();
	ret = megpu_job_submit(&r->gpu, &job);
	if (ret) {
		fprintf(stderr, "megpu run: submit: %s\n", strerror(-ret));
		goto out;
	}
	ret = megpu_syncobj_wait(&r->gpu, sync, 0, 60000000000ll);
	t1 = megpu_now_ns();
	status = ret ?: megpu_fence_status(r->gpu.fd, sync, 0);
	printf("job on engine %d (%s): %s, %.3f ms submit to completion\n",
	       r->engine, tool_engine_name(&r->gpu, r->engine),
	       tool_status(status), (t1 - t0) / 1e6);
	ret = status;
out:
	megpu_job_fini(&job);
	megpu_syncobj_free(&r->gpu, sync);
	return ret;
}

/* Compare @n dwords with @want; print the first few differences. */
static int check(const char *what, const uint32_t *got, const uint32_t *want,
		 uint64_t n)
{
	uint64_t i, bad = 0;

	for (i = 0; i < n; i++)
		if (got[i] != want[i] && bad++ < 4)
			fprintf(stderr, "megpu run: %s[%llu] = 0x%08x, "
				"expected 0x%08x\n", what,
				(unsigned long long)i, got[i], want[i]);
	if (bad) {
		printf("check: FAIL (%llu of %llu dwords wrong)\n",
		       (unsigned long long)bad, (unsigned long long)n);
		return 1;
	}
	printf("check: ok (%llu dwords)\n", (unsigned long long)n);
	return 0;
}

enum { OP_FILL, OP_COPY, OP_WRITE, OP_TIMESTAMP, OP_DISPATCH };
static const char *const op_names[] = {
	"fill", "copy", "write", "timestamp", "dispatch",
};
static const unsigned int op_packets[] = {
	MEGPU_PKT_FILL, MEGPU_PKT_COPY, MEGPU_PKT_WRITE_DATA,
	MEGPU_PKT_TIMESTAMP, MEGPU_PKT_DISPATCH,
};

static int run_flags(struct run *r, int op, int kernel, uint64_t size,
		     uint32_t value)
{
	uint64_t n = size / 4, i, args;
	struct megpu_bo *a, *b, *c, *kb;
	uint32_t *want, *ref[4];
	struct megpu_kargs k;
	int ret;

	if (!n || size % 4 || size > (256u << 20)) {
		fprintf(stderr, "megpu run: --size must be a multiple of 4, "
			"4 bytes to 256 MiB\n");
		return 2;
	}
	if (new_bo(r, "a", size, &a) || new_bo(r, "b", size, &b) ||
	    new_bo(r, "c", size, &c) || new_bo(r, "kargs", 4096, &kb))
		return 1;
	want = calloc(n, 4);
	if (!want)
		return 1;
	for (i = 0; i < n; i++) {
		((uint32_t *)a->map)[i] = (uint32_t)(i * 2654435761u);
		((uint32_t *)b->map)[i] = (uint32_t)i;
	}
	if (op == OP_DISPATCH && kernel == MEGPU_KERNEL_SAXPY)
		for (i = 0; i < n; i++) {
			((uint32_t *)a->map)[i] = megpu_f32_bits(i % 100);
			((uint32_t *)b->map)[i] = megpu_f32_bits(i % 7);
		}

	switch (op) {
	case OP_FILL:
		megpu_cs_fill(&r->cs, c->va, size, value);
		for (i = 0; i < n; i++)
			want[i] = value;
		break;
	case OP_COPY:
		megpu_cs_copy(&r->cs, a->va, c->va, size);
		memcpy(want, a->map, size);
		break;
	case OP_WRITE:
		for (i = 0; i < n; i++)
			want[i] = value + (uint32_t)i;
		for (i = 0; i < n; i += 4096)
			megpu_cs_write_data(&r->cs, c->va + 4 * i, want + i,
					    n - i < 4096 ? n - i : 4096);
		break;
	case OP_TIMESTAMP:
		megpu_cs_timestamp(&r->cs, c->va, value, true);
		n = 2;
		want[0] = value;
		break;
	case OP_DISPATCH:
		k = (struct megpu_kargs){
			.ptr = { a->va, b->va, c->va, 0 },
			.n = n,
			.param = { kernel == MEGPU_KERNEL_SAXPY ?
				   megpu_f32_bits(2.0f) : value },
		};
		if (kernel == MEGPU_KERNEL_BLUR3X3 ||
		    kernel == MEGPU_KERNEL_SEPIA) {
			/* a reads into b: rows of (up to) 64 pixels */
			uint32_t w = n < 64 ? n : 64;

			k.param[0] = w;
			k.param[1] = n / w;
			k.param[2] = w;
			megpu_kargs_write(kb, 0, &k, &args);
			megpu_cs_dispatch_image(&r->cs, kernel, args, w,
						n / w);
			break;
		}
		megpu_kargs_write(kb, 0, &k, &args);
		megpu_cs_dispatch(&r->cs, kernel, args, n, 1, 64, 1);
		break;
	}
	if (r->cs.error) {
		fprintf(stderr, "megpu run: building the IB: %s\n",
			strerror(-r->cs.error));
		return 1;
	}
	/* Reference for dispatch: the kernel on copies of the inputs. */
	if (op == OP_DISPATCH) {
		struct megpu_bo *bos[3] = { a, b, c };

		for (i = 0; i < 3; i++) {
			ref[i] = malloc(size);
			memcpy(ref[i], bos[i]->map, size);
		}
		ref[3] = NULL;
		megpu_kernel_ref(kernel, ref, n, k.param);
	}
	ret = submit(r) ? 1 : 0;
	if (!ret && op != OP_DISPATCH)
		ret = check("c", c->map, want, n);
	else if (!ret)
		ret = check("a", a->map, ref[0], n) |
		      check("b", b->map, ref[1], n) |
		      check("c", c->map, ref[2], n);
	for (i = 0; op == OP_DISPATCH && i < 3; i++)
		free(ref[i]);
	free(want);
	return ret;
}

static int file_error(const char *file, unsigned int line, const char *msg,
		      const char *text)
{
	fprintf(stderr, "%s:%u: %s: %s\n", file, line, msg, text);
	return 2;
}

static int run_file(struct run *r, const char *file)
{
	FILE *f = strcmp(file, "-") ? fopen(file, "r") : stdin;
	char line[4096], copy[4096], *w[10], *save;
	unsigned int lineno = 0, nw, i;
	struct megpu_kargs k;
	struct megpu_bo *bo;
	uint64_t v[10];
	int ret, fail = 0;

	if (!f) {
		fprintf(stderr, "megpu run: %s: %s\n", file, strerror(errno));
		return 2;
	}
	r->engine = 0;
	while (fgets(line, sizeof(line), f)) {
		lineno++;
		snprintf(copy, sizeof(copy), "%s", line);
		copy[strcspn(copy, "#\r\n")] = '\0';
		for (nw = 0, save = NULL; nw < 10; nw++)
			if (!(w[nw] = strtok_r(nw ? NULL : copy, " \t",
					       &save)))
				break;
		if (!nw)
			continue;
		if (!strcmp(w[0], "bo")) {
			if (nw < 3 || nw > 4 || !tool_parse_size(w[2], &v[0]) ||
			    (nw == 4 && !tool_parse_u64(w[3], &v[1])))
				return file_error(file, lineno,
					"want 'bo NAME SIZE [VALUE]'", line);
			if (find_bo(r, w[1]) >= 0)
				return file_error(file, lineno,
						  "buffer defined twice", line);
			if (new_bo(r, w[1], v[0], &bo))
				return 1;
			for (i = 0; nw == 4 && i < bo->size / 4; i++)
				((uint32_t *)bo->map)[i] = (uint32_t)v[1];
		} else if (!strcmp(w[0], "kargs")) {
			int b = nw >= 7 ? find_bo(r, w[1]) : -1;

			memset(&k, 0, sizeof(k));
			for (i = 2; b >= 0 && i < nw; i++) {
				if (w[i][0] == '@' && i < 6 &&
				    !resolve(r, w[i] + 1, &v[i]))
					continue;
				if (!tool_parse_u64(w[i], &v[i]))
					b = -1;
			}
			if (b < 0)
				return file_error(file, lineno,
					"want 'kargs NAME P0 P1 P2 P3 N "
					"[A B C]' (pointers @NAME or numbers)",
					line);
			for (i = 0; i < 4; i++)
				k.ptr[i] = v[2 + i];
			k.n = (uint32_t)v[6];
			for (i = 7; i < nw; i++)
				k.param[i - 7] = (uint32_t)v[i];
			megpu_kargs_write(r->bos[b].bo, 0, &k, NULL);
		} else if (!strcmp(w[0], "engine")) {
			if (nw != 2 || (r->engine = parse_engine(r, w[1])) < 0)
				return file_error(file, lineno,
						  "bad engine", line);
		} else if (!strcmp(w[0], "expect")) {
			char *plus = strchr(w[1] ? w[1] : "", '+');
			int b;

			if (plus)
				*plus = '\0';
			b = nw >= 3 && nw <= 4 ? find_bo(r, w[1]) : -1;
			v[0] = 0;
			v[2] = 1;
			if (b < 0 || r->nexpect == MAX_EXPECT ||
			    (plus && !tool_parse_u64(plus + 1, &v[0])) ||
			    !tool_parse_u64(w[2], &v[1]) ||
			    (nw == 4 && !tool_parse_u64(w[3], &v[2])) ||
			    v[0] % 4 || v[0] + 4 * v[2] >
			    r->bos[b].bo->size)
				return file_error(file, lineno,
					"want 'expect NAME[+OFF] VALUE "
					"[COUNT]' inside the buffer", line);
			r->expect[r->nexpect].bo = b;
			r->expect[r->nexpect].off = v[0];
			r->expect[r->nexpect].value = (uint32_t)v[1];
			r->expect[r->nexpect++].count = (uint32_t)v[2];
		} else {
			ret = megpu_cs_parse_line(&r->cs, line, resolve, r);
			if (ret == -ENOENT)
				return file_error(file, lineno,
						  "unknown buffer", line);
			if (ret)
				return file_error(file, lineno,
						  "bad packet", line);
		}
	}
	if (f != stdin)
		fclose(f);
	if (!r->cs.len) {
		fprintf(stderr, "megpu run: %s: no packets\n", file);
		return 2;
	}
	if (submit(r))
		return 1;
	for (i = 0; i < r->nexpect; i++) {
		const uint32_t *p = (const uint32_t *)
			((uint8_t *)r->bos[r->expect[i].bo].bo->map +
			 r->expect[i].off);
		uint32_t j, bad = 0;

		for (j = 0; j < r->expect[i].count; j++)
			bad += p[j] != r->expect[i].value;
		printf("expect %s+0x%llx == 0x%x x%u: %s\n",
		       r->bos[r->expect[i].bo].name,
		       (unsigned long long)r->expect[i].off,
		       r->expect[i].value, r->expect[i].count,
		       bad ? "FAIL" : "ok");
		fail |= !!bad;
	}
	return fail;
}

/* Read a whole file ('-': stdin) into a new string, or NULL. */
static char *read_text(const char *file)
{
	FILE *f = strcmp(file, "-") ? fopen(file, "r") : stdin;
	size_t len = 0, cap = 4096, n;
	char *buf = malloc(cap + 1), *bigger;

	if (!f || !buf) {
		free(buf);
		return NULL;
	}
	while ((n = fread(buf + len, 1, cap - len, f)) > 0) {
		len += n;
		if (len == cap) {
			bigger = realloc(buf, 2 * cap + 1);
			if (!bigger)
				break;
			buf = bigger;
			cap *= 2;
		}
	}
	if (f != stdin)
		fclose(f);
	buf[len] = '\0';
	return buf;
}

static bool parse_dims(const char *s, uint32_t *x, uint32_t *y)
{
	char *end;
	unsigned long a = strtoul(s, &end, 0), b = 1;

	if (end == s || (*end && *end != 'x'))
		return false;
	if (*end == 'x') {
		s = end + 1;
		b = strtoul(s, &end, 0);
		if (end == s || *end)
			return false;
	}
	if (!a || !b || a > UINT32_MAX || b > UINT32_MAX)
		return false;
	*x = (uint32_t)a;
	*y = (uint32_t)b;
	return true;
}

/* Run a wave program with a service for its calls. */
static int run_program(struct run *r, const char *name, char **args,
		       unsigned int nargs, const uint32_t grid[2],
		       const uint32_t group[2])
{
	struct megpu_pargs pa = { 0 };
	struct megpu_bo *code = NULL, *pb, *pool;
	struct megpu_service svc;
	const char *builtin = strchr(name, '/') ? NULL : megpu_program(name);
	char *src = builtin ? strdup(builtin) : read_text(name);
	char err[128] = "", bname[32];
	unsigned int i, j;
	int ret, fd = -1;
	uint64_t v, va;

	if (!src) {
		fprintf(stderr, "megpu run: %s: no such program or file\n",
			name);
		return 2;
	}
	ret = megpu_prog_load(&r->gpu, src, &code, &pa.len, err, sizeof(err));
	free(src);
	if (ret) {
		fprintf(stderr, "megpu run: %s: %s\n", name,
			err[0] ? err : strerror(-ret));
		return 2;
	}
	/* listed in the job and freed with the other buffers */
	snprintf(r->bos[r->nbos].name, sizeof(r->bos[0].name), "program");
	r->bos[r->nbos++].bo = code;
	pa.program = code->va;
	for (i = 0; i < nargs; i++) {
		char *size = !strncmp(args[i], "buf:", 4) ? args[i] + 4 : NULL;
		char *value = size ? strchr(size, ':') : NULL;
		struct megpu_bo *bo;

		if (value)
			*value++ = '\0';
		if (!size) {
			if (!tool_parse_u64(args[i], &pa.user[i]))
				goto bad_arg;
			continue;
		}
		if (!tool_parse_size(size, &v) || !v ||
		    (value && !tool_parse_u64(value, &pa.user[i])))
			goto bad_arg;
		snprintf(bname, sizeof(bname), "arg%u", i);
		if (new_bo(r, bname, v, &bo))
			goto fail;
		for (j = 0; j < bo->size / 4; j++)
			((uint32_t *)bo->map)[j] = value ?
						   (uint32_t)pa.user[i] : 0;
		pa.user[i] = bo->va;
	}
	if (new_bo(r, "pargs", 4096, &pb) || new_bo(r, "pool", 1 << 20, &pool))
		goto fail;
	megpu_pargs_write(pb, 0, &pa, &va);
	megpu_cs_dispatch_program(&r->cs, va, grid[0], grid[1], group[0],
				  group[1]);

	/* Serve what the program may call; stdout is shared with printf */
	fd = open("megpu-run.out", O_WRONLY | O_CREAT | O_TRUNC, 0644);
	fflush(stdout);
	ret = megpu_service_init(&svc, &r->gpu);
	for (i = 0; !ret && i < r->nbos; i++)
		if (r->bos[i].bo != pool)
			ret = megpu_service_add_bo(&svc, r->bos[i].bo);
	ret = ret ?: megpu_service_printf(&svc, STDOUT_FILENO);
	ret = ret ?: megpu_service_malloc(&svc, pool);
	if (!ret && fd >= 0)
		ret = megpu_service_fileio(&svc, fd);
	ret = ret ?: megpu_service_start(&svc, 2);
	if (ret) {
		fprintf(stderr, "megpu run: service: %s\n", strerror(-ret));
		goto fail;
	}
	ret = submit(r) ? 1 : 0;
	megpu_service_stop(&svc);
	if (svc.calls || svc.errors)
		printf("service: %llu calls answered, %llu refused\n",
		       (unsigned long long)svc.calls,
		       (unsigned long long)svc.errors);
	megpu_service_fini(&svc);
	for (i = 0; i < r->nbos; i++) {
		if (strncmp(r->bos[i].name, "arg", 3))
			continue;
		printf("%s @0x%llx:", r->bos[i].name,
		       (unsigned long long)r->bos[i].bo->va);
		for (j = 0; j < 8 && j < r->bos[i].bo->size / 4; j++)
			printf(" 0x%08x", ((uint32_t *)r->bos[i].bo->map)[j]);
		printf("\n");
	}
	if (fd >= 0)
		close(fd);
	return ret;
bad_arg:
	fprintf(stderr, "megpu run: bad --arg '%s'\n", args[i]);
	return 2;
fail:
	if (fd >= 0)
		close(fd);
	return 1;
}

int cmd_run(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "device", required_argument, NULL, 'D' },
		{ "engine", required_argument, NULL, 'e' },
		{ "op", required_argument, NULL, 'o' },
		{ "kernel", required_argument, NULL, 'k' },
		{ "size", required_argument, NULL, 's' },
		{ "value", required_argument, NULL, 'v' },
		{ "dump", no_argument, NULL, 'd' },
		{ "force", no_argument, NULL, 'f' },
		{ "program", required_argument, NULL, 'p' },
		{ "grid", required_argument, NULL, 'g' },
		{ "group", required_argument, NULL, 'G' },
		{ "arg", required_argument, NULL, 'a' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const char *engine = NULL, *program = NULL;
	uint32_t grid[2] = { 16, 1 }, group[2] = { 16, 1 };
	char *args[16];
	unsigned int nargs = 0;
	uint64_t size = 4096, value = 0x600df00d, device = 0;
	int c, op = OP_FILL, kernel = MEGPU_KERNEL_VADD, ret;
	struct run *r;
	unsigned int i;

	if (tool_help(argc, argv, usage))
		return 0;
	r = calloc(1, sizeof(*r));
	if (!r)
		return 1;
	optind = 1;
	while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		switch (c) {
		case 'D':
			if (!tool_parse_u64(optarg, &device))
				goto bad;
			break;
		case 'e':
			engine = optarg;
			break;
		case 'o':
			for (op = 0; op < 5; op++)
				if (!strcmp(optarg, op_names[op]))
					break;
			if (op == 5) {
				fprintf(stderr, "megpu run: unknown --op %s\n",
					optarg);
				goto bad;
			}
			break;
		case 'k':
			kernel = megpu_kernel_by_name(optarg);
			if (kernel < 0) {
				fprintf(stderr, "megpu run: unknown kernel "
					"%s\n", optarg);
				goto bad;
			}
			op = OP_DISPATCH;
			break;
		case 's':
			if (!tool_parse_size(optarg, &size))
				goto bad;
			break;
		case 'v':
			if (!tool_parse_u64(optarg, &value))
				goto bad;
			break;
		case 'd':
			r->dump = true;
			break;
		case 'f':
			r->force = true;
			break;
		case 'p':
			program = optarg;
			break;
		case 'g':
			if (!parse_dims(optarg, &grid[0], &grid[1]))
				goto bad;
			break;
		case 'G':
			if (!parse_dims(optarg, &group[0], &group[1]) ||
			    (uint64_t)group[0] * group[1] >
			    MEGPU_MAX_GROUP_SIZE)
				goto bad;
			break;
		case 'a':
			if (nargs == 16)
				goto bad;
			args[nargs++] = optarg;
			break;
		default:
			goto bad;
		}
	}
	if (argc - optind > 1)
		goto bad;
	if (tool_open(&r->gpu, device)) {
		free(r);
		return 1;
	}
	megpu_cs_init(&r->cs);
	if (program) {
		r->engine = engine ? parse_engine(r, engine) :
				     tool_wave_engine(&r->gpu);
		if (r->engine < 0) {
			fprintf(stderr, "megpu run: no engine runs wave "
				"programs\n");
			ret = 2;
			goto out;
		}
		ret = run_program(r, program, args, nargs, grid, group);
		goto out;
	}
	if (optind < argc) {
		ret = run_file(r, argv[optind]);
		if (engine && ret == 0)
			fprintf(stderr, "megpu run: note: the job file's "
				"'engine' line chooses the engine\n");
		goto out;
	}
	if (engine) {
		r->engine = parse_engine(r, engine);
		if (r->engine < 0) {
			ret = 2;
			goto out;
		}
		if (!r->force) {
			unsigned int t = megpu_engine_type_by_name(
				tool_engine_name(&r->gpu, r->engine));
			bool ok = megpu_engine_packets(t) &
				  MEGPU_BIT(op_packets[op]);

			if (op == OP_DISPATCH)
				ok = ok && (megpu_engine_kernels(t) &
					    MEGPU_BIT(kernel));
			if (!ok) {
				fprintf(stderr, "megpu run: engine %d (%s) "
					"cannot run %s%s%s (--force submits "
					"it anyway; it will fault)\n",
					r->engine, megpu_engine_type_name(t),
					op_names[op], op == OP_DISPATCH ?
					" " : "", op == OP_DISPATCH ?
					megpu_kernel_name(kernel) : "");
				ret = 2;
				goto out;
			}
		}
	} else {
		r->engine = tool_pick_engine(&r->gpu, -1, op_packets[op],
					     op == OP_DISPATCH ? kernel : -1);
		if (r->engine < 0) {
			fprintf(stderr, "megpu run: no engine can run %s\n",
				op_names[op]);
			ret = 1;
			goto out;
		}
	}
	ret = run_flags(r, op, kernel, size, (uint32_t)value);
out:
	for (i = 0; i < r->nbos; i++)
		megpu_bo_free(r->bos[i].bo);
	megpu_cs_fini(&r->cs);
	megpu_close(&r->gpu);
	free(r);
	return ret;
bad:
	fputs(usage, stderr);
	free(r);
	return 2;
}
