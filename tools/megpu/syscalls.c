// SPDX-License-Identifier: MIT
/*
 * Seed 003 in the tool: "megpu demo syscalls" (work-items call printf
 * and fileio on the CPU while their job runs) and the syscall table of
 * "megpu bench" (in-batch calls against ending the job for each round).
 */

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "megpu_hw_regs.h"
#include "megpu_programs.h"
#include "megpu.h"

static const char demo_usage[] =
"usage: megpu demo syscalls [--device I] [--items N] [--out FILE]\n"
"\n"
"Seed 003: GPU work-items call the CPU while their job runs. N work-items\n"
"(default 40) each build a printf record and call the printf service\n"
"(programs/printf.s); 16 work-items each fill 4 KiB of a buffer and call\n"
"the fileio service to write it to FILE (programs/fileio.s; default a\n"
"file in /tmp, removed after). libmegpu's service threads answer the\n"
"calls. Shows the printed lines, checks that every line came out once\n"
"and whole and that the file holds the buffer's bytes; PASS or FAIL.\n";

#define FILEIO_ITEMS 16
#define FILEIO_CHUNK 4096

/* A program (embedded by name) in a BO, and a BO for its arguments. */
struct prog {
	struct megpu_bo *code, *args;
	uint32_t len;
};

static int prog_load(struct megpu *gpu, const char *src, struct prog *p)
{
	char err[128] = "";
	int ret;

	memset(p, 0, sizeof(*p));
	ret = megpu_prog_load(gpu, src, &p->code, &p->len, err, sizeof(err));
	if (ret) {
		fprintf(stderr, "megpu: assembling: %s\n", err[0] ? err :
			strerror(-ret));
		return ret;
	}
	ret = megpu_bo_new(gpu, 4096, 0, &p->args);
	return ret ?: megpu_bo_map(p->args);
}

static void prog_free(struct prog *p)
{
	megpu_bo_free(p->code);
	megpu_bo_free(p->args);
}

/* Run @p once over @grid items in groups of @group; the fence status. */
static int prog_run(struct megpu *gpu, unsigned int engine, struct prog *p,
		    const uint64_t *user, unsigned int nuser, uint32_t grid,
		    uint32_t group, struct megpu_bo **bos, unsigned int nbos)
{
	struct megpu_pargs pa = { .program = p->code->va, .len = p->len };
	struct megpu_cs cs;
	struct megpu_job job;
	unsigned int i;
	uint32_t sync;
	uint64_t va;
	int ret;

	memcpy(pa.user, user, nuser * sizeof(*user));
	ret = megpu_pargs_write(p->args, 0, &pa, &va);
	if (ret)
		return ret;
	ret = megpu_syncobj_new(gpu, false, &sync);
	if (ret)
		return ret;
	megpu_cs_init(&cs);
	megpu_cs_dispatch_program(&cs, va, grid, 1, group, 1);
	megpu_job_init(&job, engine);
	megpu_job_signal_sync(&job, sync, 0);
	megpu_job_add_bo(&job, p->code, DRM_MEGPU_BO_READ);
	megpu_job_add_bo(&job, p->args, DRM_MEGPU_BO_READ);
	for (i = 0; i < nbos; i++)
		megpu_job_add_bo(&job, bos[i], DRM_MEGPU_BO_READ |
				 DRM_MEGPU_BO_WRITE);
	ret = megpu_job_run(gpu, &job, &cs);
	ret = ret ?: megpu_syncobj_wait(gpu, sync, 0, 60000000000ll);
	ret = ret ?: megpu_fence_status(gpu->fd, sync, 0);
	megpu_job_fini(&job);
	megpu_cs_fini(&cs);
	megpu_syncobj_free(gpu, sync);
	return ret;
}

/* An engine that runs wave programs (compute first), or -1. */
int tool_wave_engine(struct megpu *gpu)
{
	int e = megpu_find_engine(gpu, MEGPU_ENGINE_COMPUTE);

	return e >= 0 ? e : megpu_find_engine(gpu, MEGPU_ENGINE_GFX);
}

/* Print the service's output and check the printf lines; 0 if good. */
static int check_printf(int fd, uint32_t n, const uint64_t *res)
{
	char line[96], *text, *p;
	off_t len = lseek(fd, 0, SEEK_END);
	uint32_t i, bad = 0;

	text = calloc(1, len + 1);
	if (!text || pread(fd, text, len, 0) != len) {
		free(text);
		return 1;
	}
	for (p = strtok(text, "\n"); p; p = strtok(NULL, "\n"))
		printf("  | %s\n", p);
	/* strtok cut the text: read it again for the checks */
	if (pread(fd, text, len, 0) != len)
		bad++;
	for (i = 0; i < n; i++) {
		int w = snprintf(line, sizeof(line),
				 "work-item %2u of %u: hello from the GPU\n",
				 i, n);

		p = strstr(text, line);
		if (res[i] != (uint64_t)w || !p || (p != text && p[-1] != '\n')
		    || strstr(p + 1, line)) {
			if (bad++ < 4)
				fprintf(stderr, "megpu demo: line of work-item"
					" %u missing or wrong (answer %lld)\n",
					i, (long long)res[i]);
		}
	}
	free(text);
	printf("printf: %u lines, %u wrong\n", n, bad);
	return bad != 0;
}

static int check_file(int fd, const uint64_t *res)
{
	uint32_t *want, *got, i, bad = 0;
	size_t len = FILEIO_ITEMS * FILEIO_CHUNK;

	want = malloc(len);
	got = calloc(1, len);
	if (!want || !got || pread(fd, got, len, 0) != (ssize_t)len) {
		bad = 1;
		goto out;
	}
	for (i = 0; i < len / 4; i++)
		want[i] = i;
	for (i = 0; i < FILEIO_ITEMS; i++)
		bad += res[i] != FILEIO_CHUNK;
	bad += memcmp(want, got, len) != 0;
out:
	printf("fileio: %u calls of %u bytes, file %s\n", FILEIO_ITEMS,
	       FILEIO_CHUNK, bad ? "WRONG" : "matches the buffer");
	free(want);
	free(got);
	return bad != 0;
}

int cmd_demo_syscalls(int argc, char **argv)
{
	static const char fmt[] = "work-item %2u of %u: hello from the GPU\n";
	struct megpu_bo *rec = NULL, *data = NULL, *res = NULL, *bos[3];
	struct prog pp = { 0 }, fp = { 0 };
	uint64_t device = 0, n = 40, user[3];
	char path[256] = "/tmp/megpu-demo-fileio.XXXXXX";
	struct megpu_service svc;
	bool tmp = true, failed = false;
	int i, e, ret, pf_fd, file_fd;
	uint32_t slots = 0;
	struct megpu gpu;

	if (tool_help(argc, argv, demo_usage))
		return 0;
	for (i = 1; i < argc; i++) {
		if (i + 1 < argc && !strcmp(argv[i], "--device") &&
		    tool_parse_u64(argv[i + 1], &device)) {
			i++;
		} else if (i + 1 < argc && !strcmp(argv[i], "--items") &&
			   tool_parse_u64(argv[i + 1], &n) && n && n <= 100) {
			i++;
		} else if (i + 1 < argc && !strcmp(argv[i], "--out")) {
			snprintf(path, sizeof(path), "%s", argv[++i]);
			tmp = false;
		} else {
			fputs(demo_usage, stderr);
			return 2;
		}
	}
	if (tool_open(&gpu, device))
		return 1;
	e = tool_wave_engine(&gpu);
	if (e < 0 || megpu_mailbox_slots(&gpu, &slots) || !slots) {
		fprintf(stderr, "megpu demo: this GPU runs no wave programs "
			"with syscalls\n");
		megpu_close(&gpu);
		return 1;
	}
	file_fd = tmp ? mkstemp(path) : open(path, O_RDWR | O_CREAT | O_TRUNC,
						0644);
	pf_fd = memfd_create("megpu-printf", MFD_CLOEXEC);
	if (file_fd < 0 || pf_fd < 0) {
		fprintf(stderr, "megpu demo: %s: %s\n", path, strerror(errno));
		megpu_close(&gpu);
		return 1;
	}
	printf("megpu demo syscalls: %llu printf callers and %u fileio "
	       "callers on engine %d (%s), %u mailbox slots\n",
	       (unsigned long long)n, FILEIO_ITEMS, e,
	       tool_engine_name(&gpu, e), slots);

	ret = prog_load(&gpu, megpu_program("printf"), &pp);
	ret = ret ?: prog_load(&gpu, megpu_program("fileio"), &fp);
	ret = ret ?: megpu_bo_new(&gpu, 8192, 0, &rec);
	ret = ret ?: megpu_bo_map(rec);
	ret = ret ?: megpu_bo_new(&gpu, FILEIO_ITEMS * FILEIO_CHUNK, 0, &data);
	ret = ret ?: megpu_bo_map(data);
	ret = ret ?: megpu_bo_new(&gpu, 4096, 0, &res);
	ret = ret ?: megpu_bo_map(res);
	ret = ret ?: megpu_service_init(&svc, &gpu);
	if (ret) {
		fprintf(stderr, "megpu demo: setup: %s\n", strerror(-ret));
		goto out;
	}
	memset(res->map, 0xff, res->size);
	strcpy((char *)rec->map + 4096, fmt);
	strcpy((char *)rec->map + 4096 + 256, "the GPU");
	ret = megpu_service_add_bo(&svc, rec);
	ret = ret ?: megpu_service_add_bo(&svc, data);
	ret = ret ?: megpu_service_printf(&svc, pf_fd);
	ret = ret ?: megpu_service_fileio(&svc, file_fd);
	ret = ret ?: megpu_service_start(&svc, 2);
	if (ret) {
		fprintf(stderr, "megpu demo: service: %s\n", strerror(-ret));
		goto out_svc;
	}

	/* printf: the format's %s takes the string after it in rec */
	user[0] = rec->va;
	user[1] = (rec->va + 4096) | (rec->va + 4096 + 256) << 32;
	user[2] = res->va;
	bos[0] = rec;
	bos[1] = res;
	ret = prog_run(&gpu, e, &pp, user, 3, (uint32_t)n, 16, bos, 2);
	printf("printf job: %s\n", tool_status(ret));
	failed |= ret != 0;
	megpu_service_printf_flush(&svc);
	failed |= !ret && check_printf(pf_fd, (uint32_t)n, res->map);

	memset(res->map, 0xff, res->size);
	user[0] = data->va;
	user[1] = FILEIO_CHUNK;
	user[2] = res->va;
	bos[0] = data;
	ret = prog_run(&gpu, e, &fp, user, 3, FILEIO_ITEMS, 16, bos, 2);
	printf("fileio job: %s\n", tool_status(ret));
	failed |= ret != 0;
	failed |= !ret && check_file(file_fd, res->map);

	megpu_service_stop(&svc);
	printf("service: %llu calls answered, %llu refused%s%s\n",
	       (unsigned long long)svc.calls, (unsigned long long)svc.errors,
	       svc.wait_error ? ", stopped by " : "",
	       svc.wait_error ? tool_status(svc.wait_error) : "");
	failed |= svc.errors || svc.wait_error ||
		  svc.calls != n + FILEIO_ITEMS;
	ret = 0;
out_svc:
	megpu_service_fini(&svc);
out:
	megpu_bo_free(res);
	megpu_bo_free(data);
	megpu_bo_free(rec);
	prog_free(&fp);
	prog_free(&pp);
	close(pf_fd);
	close(file_fd);
	if (tmp)
		unlink(path);
	megpu_close(&gpu);
	failed |= ret != 0;
	printf("megpu demo syscalls: %s\n", failed ? "FAIL" : "PASS");
	return failed ? 1 : 0;
}

/* --- bench --- */

/*
 * Work-item i < n (user[1] low) calls op N K times (user[1] high) and
 * stores the last answer at out[i] (user[0]).
 */
static const char loop_src[] =
	"s2r r1, global_id\n"
	"ldarg32 r2, 8\n"
	"cmpltu r3, r1, r2\n"
	"if r3\n"
	"ldarg32 r10, 12\n"
	"li r11, 0\n"
	"loop: syscall r4, %u, r1, r11, r0\n"
	"add r11, r11, 1\n"
	"cmpltu r12, r11, r10\n"
	"brany r12, loop\n"
	"ldarg r7, 0\n"
	"shl r8, r1, 3\n"
	"add r7, r7, r8\n"
	"st64 [r7], r4\n"
	"endif\n"
	"end\n";

/* One round of the phased way: the GPU's step, no call (out[i] = i). */
static const char step_src[] =
	"s2r r1, global_id\n"
	"ldarg32 r2, 8\n"
	"cmpltu r3, r1, r2\n"
	"if r3\n"
	"ldarg r7, 0\n"
	"shl r8, r1, 3\n"
	"add r7, r7, r8\n"
	"st64 [r7], r1\n"
	"endif\n"
	"end\n";

#define BENCH_USER_OP (DRM_MEGPU_SYSCALL_USER + 0x7e)

static uint64_t bench_echo(struct megpu_service *svc,
			   const struct drm_megpu_syscall *c, void *priv)
{
	(void)svc;
	(void)priv;
	return c->args[0] | (uint64_t)c->args[1] << 32;
}

/* Time @rounds rounds of @callers calls each in one job (in-batch). */
static int in_batch(struct megpu *gpu, unsigned int engine, unsigned int op,
		    uint32_t callers, uint32_t rounds, struct megpu_bo *out,
		    double *ns)
{
	char src[sizeof(loop_src) + 16];
	uint64_t user[2];
	struct prog p;
	int64_t t0;
	int ret;

	snprintf(src, sizeof(src), loop_src, op);
	ret = prog_load(gpu, src, &p);
	user[0] = out->va;
	user[1] = callers | (uint64_t)rounds << 32;
	t0 = megpu_now_ns();
	ret = ret ?: prog_run(gpu, engine, &p, user, 2, callers, 64, &out, 1);
	*ns = (double)(megpu_now_ns() - t0) / rounds;
	/* the last round's answers: ECHO(i, rounds - 1) */
	for (uint32_t i = 0; !ret && i < callers; i++)
		if (((uint64_t *)out->map)[i] !=
		    (i | (uint64_t)(rounds - 1) << 32))
			ret = -EIO;
	prog_free(&p);
	return ret;
}

/*
 * The phased way: per round, a job runs the GPU's step and ends; the CPU
 * does the callers' work (the ECHO) and submits the next job.
 */
static int phased(struct megpu *gpu, unsigned int engine, uint32_t callers,
		  uint32_t rounds, struct megpu_bo *out, double *ns)
{
	volatile uint64_t sink = 0;
	uint64_t user[2];
	struct prog p;
	int64_t t0;
	uint32_t k, i;
	int ret;

	ret = prog_load(gpu, step_src, &p);
	user[0] = out->va;
	user[1] = callers;
	t0 = megpu_now_ns();
	for (k = 0; !ret && k < rounds; k++) {
		ret = prog_run(gpu, engine, &p, user, 2, callers, 64, &out, 1);
		for (i = 0; !ret && i < callers; i++)
			sink += ((uint64_t *)out->map)[i] | (uint64_t)k << 32;
	}
	*ns = (double)(megpu_now_ns() - t0) / rounds;
	(void)sink;
	prog_free(&p);
	return ret;
}

/* The row's figures for build/bench.json (us per round). */
static void fig_row(uint32_t callers, double kern, double user, double each,
		    double phase)
{
	static const char *const col[] = {
		"in_batch_echo", "in_batch_user", "in_batch_user_1by1", "phased",
	};
	const double v[] = { kern, user, each, phase };
	char name[64];

	for (unsigned int c = 0; c < 4; c++) {
		snprintf(name, sizeof(name), "syscall.%u_callers.%s", callers,
			 col[c]);
		bench_fig1(name, "us", v[c] / 1e3);
	}
}

int bench_syscalls(struct megpu *gpu, uint32_t rounds)
{
	static const uint32_t callers[] = { 1, 8, 64 };
	uint32_t slots = 0;
	double kern, user, each, phase;
	struct megpu_service svc;
	struct megpu_bo *out;
	unsigned int i;
	int e = tool_wave_engine(gpu), ret;

	if (e < 0 || megpu_mailbox_slots(gpu, &slots) || !slots) {
		printf("\nno wave programs with syscalls: no syscall table\n");
		return 0;
	}
	ret = megpu_bo_new(gpu, 64 * 8, 0, &out);
	ret = ret ?: megpu_bo_map(out);
	ret = ret ?: megpu_service_init(&svc, gpu);
	if (ret)
		return ret;
	megpu_service_handle(&svc, BENCH_USER_OP, bench_echo, NULL);
	ret = megpu_service_start(&svc, 2);
	/*
	 * Warm-up, untimed, the same for all three: the first calls of a
	 * boot also pay for the emulator translating the code paths and for
	 * the service threads starting, which is not the round trip.
	 */
	ret = ret ?: in_batch(gpu, e, DRM_MEGPU_SYSCALL_ECHO, 1, 3, out, &kern);
	ret = ret ?: in_batch(gpu, e, BENCH_USER_OP, 1, 3, out, &user);
	ret = ret ?: phased(gpu, e, 1, 3, out, &phase);
	printf("\nGPU-to-CPU calls on engine %d (%s), %u mailbox slots, %u "
	       "rounds: time per round\n(every caller gets one answer per "
	       "round)\n", e, tool_engine_name(gpu, e), slots, rounds);
	printf("  %-8s %14s %14s %14s %14s %8s %8s\n", "callers",
	       "in-batch ECHO", "in-batch user", "user, 1 by 1", "phased",
	       "x ECHO", "x user");
	for (i = 0; !ret && i < sizeof(callers) / sizeof(callers[0]); i++) {
		ret = in_batch(gpu, e, DRM_MEGPU_SYSCALL_ECHO, callers[i],
			       rounds, out, &kern);
		ret = ret ?: in_batch(gpu, e, BENCH_USER_OP, callers[i],
				      rounds, out, &user);
		__atomic_store_n(&svc.answer_each, true, __ATOMIC_RELAXED);
		ret = ret ?: in_batch(gpu, e, BENCH_USER_OP, callers[i],
				      rounds, out, &each);
		__atomic_store_n(&svc.answer_each, false, __ATOMIC_RELAXED);
		ret = ret ?: phased(gpu, e, callers[i], rounds, out, &phase);
		if (ret)
			break;
		fig_row(callers[i], kern, user, each, phase);
		printf("  %-8u %11.1f us %11.1f us %11.1f us %11.1f us %8.2f "
		       "%8.2f\n", callers[i], kern / 1e3, user / 1e3,
		       each / 1e3, phase / 1e3, phase / kern, phase / user);
	}
	if (!ret)
		printf("  (in-batch: one job, each caller loops on SYSCALL; "
		       "ECHO answered in the\n  kernel, user op by a service "
		       "thread, its answers in one SYSCALL_RETURN\n  batch per "
		       "wait (1 by 1: an ioctl each). phased: the job ends "
		       "each round,\n  the CPU "
		       "does the work, a new job starts. x: phased over "
		       "in-batch.\n  Each timed after an untimed warm-up "
		       "of all three)\n");
	megpu_service_fini(&svc);
	megpu_bo_free(out);
	return ret;
}
