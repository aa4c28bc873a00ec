// SPDX-License-Identifier: MIT
/*
 * megpu trace: a timeline of what the driver and the device did while a
 * command ran (issue 12). It turns on the driver's tracepoints through
 * tracefs, runs the command, reads the events back and writes Chrome
 * trace-event JSON, which Perfetto (ui.perfetto.dev) and chrome://tracing
 * open:
 *
 * - one track per engine: each job from the later of its run_job and the
 *   previous job's end to its completion interrupt, with the time its
 *   engine spent stalled in WAIT packets (the device's counters, read at
 *   each retire) as a slice inside it;
 * - one track per client (GPU context): each job from submit to fence;
 * - a driver track: interrupts, doorbells, host flushes;
 * - arrows from each producer to its consumers (GPU WAIT or CPU wait).
 *
 * A short summary says where the time of an average dependency hop goes.
 */

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "megpu_hw_packets.h"
#include "megpu.h"

static const char usage[] =
"usage: megpu trace [-o FILE.json] [--buffer-kb N] -- COMMAND [ARGS...]\n"
"       megpu trace [-o FILE.json] --chain N [--cpu-waits] [--no-gate]\n"
"       megpu trace [-o FILE.json] --jobs N\n"
"\n"
"Runs COMMAND with the megpu tracepoints on, then writes a Chrome\n"
"trace-event JSON timeline (open it in ui.perfetto.dev) and prints where\n"
"the time of an average dependency hop goes. Needs tracefs (root).\n"
"\n"
"  -o FILE.json    where the timeline goes (default megpu-trace.json)\n"
"  --buffer-kb N   trace buffer per CPU (default 16384)\n"
"  --chain N       instead of a command: N jobs (2..2000) alternating\n"
"                  between engine 0 and the copy engine, each after the\n"
"                  previous one (through a BO), queued behind a delay_us\n"
"                  gate that opens once all are submitted\n"
"  --cpu-waits     with --chain: gpu_semaphores=N while it runs\n"
"  --no-gate       with --chain: submit without the gate\n"
"  --jobs N        instead of a command: N empty jobs (1..10000) on\n"
"                  engine 0, one at a time (submit, wait)\n"
"\n"
"example: megpu trace -o /tmp/t.json -- megpu bench sem --quick\n";

#define SEM_PARAM "/sys/module/megpu/parameters/gpu_semaphores"

static int param_write(const char *path, const char *v)
{
	int fd = open(path, O_WRONLY), n = strlen(v);
	ssize_t r;

	if (fd < 0)
		return -errno;
	r = write(fd, v, n);
	close(fd);
	return r == n ? 0 : -EIO;
}

static int delay_write(struct megpu *gpu, unsigned int e, unsigned int us)
{
	char path[256], v[32];
	int ret = megpu_debugfs_path(gpu, "delay_us", path, sizeof(path));

	if (ret)
		return ret;
	snprintf(v, sizeof(v), "%u %u", e, us);
	return param_write(path, v);
}

/*
 * The built-in workload: @hops WRITE_DATA jobs alternating between engine
 * 0 and the copy engine, each reading and writing one BO (so each
 * depends on the one before), behind a gate on engine 0.
 */
/* N empty jobs one at a time: the latency of one, piece by piece. */
static int run_jobs(unsigned int n)
{
	struct megpu_job job;
	struct megpu_cs cs;
	struct megpu gpu;
	uint32_t sync = 0;
	unsigned int i;
	int64_t t0;
	int ret;

	if (tool_open(&gpu, 0))
		return -ENODEV;
	megpu_job_init(&job, 0);
	job.flags = DRM_MEGPU_SUBMIT_NO_IMPLICIT;
	megpu_cs_init(&cs);
	megpu_cs_nop(&cs, 0);
	ret = megpu_syncobj_new(&gpu, false, &sync);
	ret = ret ?: megpu_job_upload(&gpu, &job, &cs);
	megpu_job_signal_sync(&job, sync, 0);
	t0 = megpu_now_ns();
	for (i = 0; !ret && i < n; i++) {
		ret = megpu_job_submit(&gpu, &job);
		ret = ret ?: megpu_syncobj_wait(&gpu, sync, 0, 10000000000ll);
	}
	if (!ret)
		printf("megpu trace: %u empty jobs one at a time: %.1f us a job "
		       "(tracing on)\n", n, (megpu_now_ns() - t0) / 1e3 / n);
	megpu_cs_fini(&cs);
	megpu_job_fini(&job);
	if (sync)
		megpu_syncobj_free(&gpu, sync);
	megpu_close(&gpu);
	return ret;
}

static int run_chain(unsigned int hops, bool cpu_waits, bool gate)
{
	const uint32_t rw = DRM_MEGPU_BO_READ | DRM_MEGPU_BO_WRITE;
	struct megpu_bo *x = NULL, *ibs = NULL;
	char was = 'Y';
	unsigned int h, b;
	struct megpu gpu;
	uint32_t sync = 0;
	int64_t t0, base;
	int ret, fd, c;

	if (tool_open(&gpu, 0))
		return -ENODEV;
	c = tool_pick_engine(&gpu, MEGPU_ENGINE_COPY, MEGPU_PKT_WRITE_DATA, -1);
	b = c > 0 ? (unsigned int)c : 1;
	fd = open(SEM_PARAM, O_RDONLY);
	if (fd >= 0) {
		if (read(fd, &was, 1) != 1)
			was = 'Y';
		close(fd);
	}
	base = tool_emitted_jobs(&gpu);
	ret = megpu_syncobj_new(&gpu, false, &sync);
	ret = ret ?: megpu_bo_new(&gpu, 4096, 0, &x);
	ret = ret ?: megpu_bo_new(&gpu, (uint64_t)hops * 32, 0, &ibs);
	if (!ret && cpu_waits)
		ret = param_write(SEM_PARAM, "N");
	if (!ret && gate)
		ret = delay_write(&gpu, 0, 1000000);
	for (h = 0; !ret && h < hops; h++) {
		struct megpu_job job;
		struct megpu_cs cs;

		megpu_job_init(&job, h % 2 ? b : 0);
		ret = megpu_job_add_bo(&job, x, rw);
		megpu_job_set_ib(&job, ibs, (uint64_t)h * 32);
		/*
		 * A timeline point a job: the last point signals after all
		 * of them, so every job is retired (and traced) by then;
		 * with GPU WAITs, the engines' interrupts may retire the
		 * last job before the one it waited for.
		 */
		megpu_job_signal_sync(&job, sync, h + 1);
		megpu_cs_init(&cs);
		megpu_cs_write32(&cs, x->va, h);
		ret = ret ?: megpu_job_run(&gpu, &job, &cs);
		megpu_cs_fini(&cs);
	}
	if (!ret && gate)
		tool_gate_settle(&gpu, base, cpu_waits ? 1 : hops);
	t0 = megpu_now_ns();
	if (gate && delay_write(&gpu, 0, 0))
		ret = ret ?: -EIO;
	ret = ret ?: megpu_syncobj_wait(&gpu, sync, hops, 60000000000ll);
	ret = ret ?: megpu_fence_status(gpu.fd, sync, hops);
	if (!ret)
		printf("megpu trace: chain of %u jobs %s%s: %.1f us a hop "
		       "(tracing on)\n", hops, cpu_waits ? "with CPU waits" :
		       "with GPU semaphores", gate ? ", gated" : "",
		       (megpu_now_ns() - t0) / 1e3 / hops);
	if (cpu_waits) {
		char v[2] = { was, 0 };

		param_write(SEM_PARAM, v);
	}
	megpu_bo_free(ibs);
	megpu_bo_free(x);
	if (sync)
		megpu_syncobj_free(&gpu, sync);
	megpu_close(&gpu);
	return ret;
}

#define MAX_ENG 16

struct job {
	uint64_t fctx, fseq;
	int engine;		/* -1 until seen */
	uint32_t ctx;
	uint64_t seqno;		/* hardware seqno, 0 until run */
	double submit, ready, run, done;	/* us; 0: not seen */
	double start;		/* when its engine could take it */
	double wait_us, busy_us;	/* the device's, for its retire batch */
	int error;
	bool gpu_dep;
};

struct dep {
	size_t consumer, producer;
	bool gpu;
};

static struct job *jobs;
static size_t njobs, cap_jobs;
static struct dep *deps;
static size_t ndeps, cap_deps;

/* (fctx, fseq) -> job, open addressing */
static size_t *hash;
static size_t hash_size;

static size_t hslot(uint64_t fctx, uint64_t fseq)
{
	uint64_t h = fctx * 0x9e3779b97f4a7c15ull ^ fseq * 0xc2b2ae3d27d4eb4full;

	return (size_t)(h ^ h >> 29) & (hash_size - 1);
}

static int grow(void **p, size_t *cap, size_t n, size_t size)
{
	void *q;

	if (n < *cap)
		return 0;
	q = realloc(*p, (*cap ? *cap * 2 : 1024) * size);
	if (!q)
		return -ENOMEM;
	*p = q;
	*cap = *cap ? *cap * 2 : 1024;
	return 0;
}

static void rehash(void)
{
	size_t i, s;

	free(hash);
	hash_size = 1;
	while (hash_size < cap_jobs * 2)
		hash_size <<= 1;
	hash = malloc(hash_size * sizeof(*hash));
	if (!hash) {
		hash_size = 0;
		return;
	}
	for (i = 0; i < hash_size; i++)
		hash[i] = SIZE_MAX;
	for (i = 0; i < njobs; i++) {
		s = hslot(jobs[i].fctx, jobs[i].fseq);
		while (hash[s] != SIZE_MAX)
			s = (s + 1) & (hash_size - 1);
		hash[s] = i;
	}
}

/* The job named (fctx, fseq), created when new; SIZE_MAX on ENOMEM. */
static size_t job_get(uint64_t fctx, uint64_t fseq)
{
	size_t s, cap = cap_jobs;

	if (hash_size) {
		for (s = hslot(fctx, fseq); hash[s] != SIZE_MAX;
		     s = (s + 1) & (hash_size - 1))
			if (jobs[hash[s]].fctx == fctx &&
			    jobs[hash[s]].fseq == fseq)
				return hash[s];
	}
	if (grow((void **)&jobs, &cap_jobs, njobs, sizeof(*jobs)))
		return SIZE_MAX;
	jobs[njobs] = (struct job){ .fctx = fctx, .fseq = fseq,
				    .engine = -1 };
	njobs++;
	if (cap != cap_jobs || !hash_size) {
		rehash();
		if (!hash_size)
			return SIZE_MAX;
		return njobs - 1;
	}
	s = hslot(fctx, fseq);
	while (hash[s] != SIZE_MAX)
		s = (s + 1) & (hash_size - 1);
	hash[s] = njobs - 1;
	return njobs - 1;
}

/* Instants of the driver track. */
struct instant {
	double ts;
	char what;		/* 'i' irq, 'd' doorbell, 'f' flush start, 'F' done */
	uint32_t a, b;
};

static struct instant *inst;
static size_t ninst, cap_inst;

/* Device stats at each retire, per engine. */
struct stat_ev {
	double ts;
	int engine;
	uint64_t seqno, wait_ns, busy_ns;
	uint32_t waits;
};

static struct stat_ev *stats;
static size_t nstats, cap_stats;

static bool field(const char *s, const char *key, uint64_t *v)
{
	size_t n = strlen(key);
	const char *p = s;

	/* "key=" at the start or after a space */
	while ((p = strstr(p, key))) {
		if ((p == s || p[-1] == ' ') && p[n] == '=') {
			*v = strtoull(p + n + 1, NULL, 0);
			return true;
		}
		p += n;
	}
	return false;
}

static int64_t sfield(const char *s, const char *key)
{
	uint64_t v = 0;

	field(s, key, &v);
	return (int64_t)v;
}

/* One line of the trace file. */
static int parse_line(char *line)
{
	char *ev = strstr(line, ": megpu_"), *args, *p;
	uint64_t fctx = 0, fseq = 0, v;
	double ts;
	size_t j, k;

	if (!ev || line[0] == '#')
		return 0;
	/* the timestamp ends just before ": megpu_" */
	*ev = '\0';
	p = strrchr(line, ' ');
	if (!p)
		return 0;
	ts = strtod(p + 1, NULL) * 1e6;
	ev += 2;
	args = strstr(ev, ": ");
	if (!args)
		return 0;
	*args = '\0';
	args += 2;

	if (!strcmp(ev, "megpu_job_submit") || !strcmp(ev, "megpu_job_ready") ||
	    !strcmp(ev, "megpu_job_run") || !strcmp(ev, "megpu_job_done")) {
		if (!field(args, "fctx", &fctx) || !field(args, "fseq", &fseq))
			return 0;
		j = job_get(fctx, fseq);
		if (j == SIZE_MAX)
			return -ENOMEM;
		if (field(args, "engine", &v))
			jobs[j].engine = (int)v;
		if (ev[10] == 's') {		/* submit */
			jobs[j].submit = ts;
			jobs[j].ctx = (uint32_t)sfield(args, "ctx");
		} else if (ev[10] == 'r' && ev[11] == 'e') {
			jobs[j].ready = ts;
		} else if (ev[10] == 'r') {
			jobs[j].run = ts;
			jobs[j].seqno = sfield(args, "seqno");
		} else {
			jobs[j].done = ts;
			jobs[j].seqno = sfield(args, "seqno");
			jobs[j].error = (int)sfield(args, "error");
		}
		return 0;
	}
	if (!strcmp(ev, "megpu_job_dep")) {
		uint64_t dctx = 0, dseq = 0;

		if (!field(args, "fctx", &fctx) || !field(args, "fseq", &fseq) ||
		    !field(args, "dep_fctx", &dctx) ||
		    !field(args, "dep_fseq", &dseq))
			return 0;
		j = job_get(fctx, fseq);
		k = job_get(dctx, dseq);
		if (j == SIZE_MAX || k == SIZE_MAX ||
		    grow((void **)&deps, &cap_deps, ndeps, sizeof(*deps)))
			return -ENOMEM;
		deps[ndeps++] = (struct dep){ j, k, sfield(args, "gpu") != 0 };
		return 0;
	}
	if (!strcmp(ev, "megpu_engine_stats")) {
		if (grow((void **)&stats, &cap_stats, nstats, sizeof(*stats)))
			return -ENOMEM;
		stats[nstats++] = (struct stat_ev){
			ts, (int)sfield(args, "engine"), sfield(args, "seqno"),
			sfield(args, "wait_ns"), sfield(args, "busy_ns"),
			(uint32_t)sfield(args, "waits"),
		};
		return 0;
	}
	if (grow((void **)&inst, &cap_inst, ninst, sizeof(*inst)))
		return -ENOMEM;
	if (!strcmp(ev, "megpu_irq"))
		inst[ninst++] = (struct instant){ ts, 'i', sfield(args, "vector"),
						  sfield(args, "status") };
	else if (!strcmp(ev, "megpu_doorbell"))
		inst[ninst++] = (struct instant){ ts, 'd', sfield(args, "engine"),
						  sfield(args, "tail") };
	else if (!strcmp(ev, "megpu_host_flush"))
		inst[ninst++] = sfield(args, "target") ?
			(struct instant){ ts, 'f', sfield(args, "target"), 0 } :
			(struct instant){ ts, 'F', sfield(args, "done"), 0 };
	return 0;
}

/* --- tracefs --- */

static char tracefs[64];

static int tfs_write(const char *file, const char *val)
{
	char path[256];
	int fd, n = strlen(val);
	ssize_t r;

	snprintf(path, sizeof(path), "%s/%s", tracefs, file);
	fd = open(path, O_WRONLY | O_TRUNC);
	if (fd < 0)
		return -errno;
	r = write(fd, val, n);
	close(fd);
	return r == n ? 0 : -EIO;
}

/* The first line of a tracefs file, without its newline. */
static void tfs_read(const char *file, char *buf, size_t len)
{
	char path[256];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", tracefs, file);
	buf[0] = '\0';
	f = fopen(path, "r");
	if (!f)
		return;
	if (!fgets(buf, len, f))
		buf[0] = '\0';
	buf[strcspn(buf, "\n")] = '\0';
	fclose(f);
}

static int tfs_find(void)
{
	static const char *const dirs[] = {
		"/sys/kernel/tracing", "/sys/kernel/debug/tracing",
	};
	char path[128];
	unsigned int i;
	struct stat st;

	for (i = 0; i < 2; i++) {
		snprintf(path, sizeof(path), "%s/events/megpu", dirs[i]);
		if (!stat(path, &st)) {
			snprintf(tracefs, sizeof(tracefs), "%s", dirs[i]);
			return 0;
		}
	}
	/* not mounted yet: a busybox guest, for one */
	if (mount("tracefs", dirs[0], "tracefs", 0, NULL) == 0) {
		snprintf(path, sizeof(path), "%s/events/megpu", dirs[0]);
		if (!stat(path, &st)) {
			snprintf(tracefs, sizeof(tracefs), "%s", dirs[0]);
			return 0;
		}
		fprintf(stderr, "megpu trace: no megpu events in tracefs: "
			"is megpu.ko loaded?\n");
		return -ENOENT;
	}
	fprintf(stderr, "megpu trace: no tracefs (%s): run as root with "
		"CONFIG_TRACING\n", strerror(errno));
	return -ENOENT;
}

/* --- output --- */

static const char *eng_names[MAX_ENG];

static void json_meta(FILE *f, int pid, int tid, const char *pname,
		      const char *tname)
{
	if (tname)
		fprintf(f, "{\"ph\":\"M\",\"pid\":%d,\"tid\":%d,\"name\":"
			"\"thread_name\",\"args\":{\"name\":\"%s\"}},\n", pid,
			tid, tname);
	else
		fprintf(f, "{\"ph\":\"M\",\"pid\":%d,\"name\":\"process_name\","
			"\"args\":{\"name\":\"%s\"}},\n", pid, pname);
}

#define PID_ENG 1
#define PID_CLIENT 2
#define PID_DRV 3

static double job_start(size_t j, const double *prev_end)
{
	double s = jobs[j].run;

	if (jobs[j].engine >= 0 && jobs[j].engine < MAX_ENG &&
	    prev_end[jobs[j].engine] > s)
		s = prev_end[jobs[j].engine];
	return s;
}

static int cmp_done(const void *a, const void *b)
{
	double x = jobs[*(const size_t *)a].done;
	double y = jobs[*(const size_t *)b].done;

	return x < y ? -1 : x > y;
}

/* Attribute the device's WAIT and busy time of each retire to its jobs. */
static void attribute_stats(void)
{
	uint64_t last_wait[MAX_ENG] = { 0 }, last_busy[MAX_ENG] = { 0 };
	uint64_t last_seq[MAX_ENG] = { 0 };
	bool seen[MAX_ENG] = { false };
	size_t i, j, n;

	for (i = 0; i < nstats; i++) {
		struct stat_ev *s = &stats[i];
		int e = s->engine;

		if (e < 0 || e >= MAX_ENG)
			continue;
		if (seen[e] && s->seqno > last_seq[e]) {
			n = 0;
			for (j = 0; j < njobs; j++)
				if (jobs[j].engine == e &&
				    jobs[j].seqno > last_seq[e] &&
				    jobs[j].seqno <= s->seqno)
					n++;
			for (j = 0; n && j < njobs; j++)
				if (jobs[j].engine == e &&
				    jobs[j].seqno > last_seq[e] &&
				    jobs[j].seqno <= s->seqno) {
					jobs[j].wait_us = (s->wait_ns -
						last_wait[e]) / 1e3 / n;
					jobs[j].busy_us = (s->busy_ns -
						last_busy[e]) / 1e3 / n;
				}
		}
		if (!seen[e] || s->seqno >= last_seq[e]) {
			last_seq[e] = s->seqno;
			last_wait[e] = s->wait_ns;
			last_busy[e] = s->busy_ns;
			seen[e] = true;
		}
	}
}

static int write_json(const char *out, double t0)
{
	double prev_end[MAX_ENG] = { 0 };
	size_t *order, i, j;
	bool ctx_seen[256] = { false };
	FILE *f = fopen(out, "w");
	char name[32];
	int e;

	if (!f) {
		fprintf(stderr, "megpu trace: %s: %s\n", out, strerror(errno));
		return -errno;
	}
	order = malloc((njobs + 1) * sizeof(*order));
	if (!order) {
		fclose(f);
		return -ENOMEM;
	}
	fprintf(f, "{\"displayTimeUnit\":\"ns\",\"traceEvents\":[\n");
	json_meta(f, PID_ENG, 0, "megpu engines", NULL);
	json_meta(f, PID_CLIENT, 0, "megpu clients", NULL);
	json_meta(f, PID_DRV, 0, "megpu driver", NULL);
	json_meta(f, PID_DRV, 1, NULL, "interrupts");
	json_meta(f, PID_DRV, 2, NULL, "doorbells");
	json_meta(f, PID_DRV, 3, NULL, "host flushes");
	for (e = 0; e < MAX_ENG; e++)
		if (eng_names[e])
			json_meta(f, PID_ENG, e + 1, NULL, eng_names[e]);

	for (i = 0, j = 0; i < njobs; i++)
		if (jobs[i].done && jobs[i].run && jobs[i].engine >= 0 &&
		    jobs[i].engine < MAX_ENG)
			order[j++] = i;
	qsort(order, j, sizeof(*order), cmp_done);
	for (i = 0; i < j; i++) {
		struct job *jb = &jobs[order[i]];
		double s = job_start(order[i], prev_end), w;

		prev_end[jb->engine] = jb->done;
		jb->start = s;
		fprintf(f, "{\"ph\":\"X\",\"pid\":%d,\"tid\":%d,\"ts\":%.3f,"
			"\"dur\":%.3f,\"name\":\"job %llu\",\"cat\":\"engine\","
			"\"args\":{\"fence\":\"%llu:%llu\",\"ctx\":%u,"
			"\"error\":%d,\"device_wait_us\":%.1f,"
			"\"device_busy_us\":%.1f}},\n", PID_ENG,
			jb->engine + 1, s - t0, jb->done - s,
			(unsigned long long)jb->seqno,
			(unsigned long long)jb->fctx,
			(unsigned long long)jb->fseq, jb->ctx, jb->error,
			jb->wait_us, jb->busy_us);
		w = jb->wait_us < jb->done - s ? jb->wait_us : jb->done - s;
		if (w > 0)
			fprintf(f, "{\"ph\":\"X\",\"pid\":%d,\"tid\":%d,"
				"\"ts\":%.3f,\"dur\":%.3f,\"name\":\"WAIT "
				"stall\",\"cat\":\"device\"},\n", PID_ENG,
				jb->engine + 1, s - t0, w);
	}
	for (i = 0; i < njobs; i++) {
		struct job *jb = &jobs[i];

		if (!jb->submit || !jb->done)
			continue;
		if (jb->ctx < 256 && !ctx_seen[jb->ctx]) {
			ctx_seen[jb->ctx] = true;
			snprintf(name, sizeof(name), "client ctx %u", jb->ctx);
			json_meta(f, PID_CLIENT, jb->ctx + 1, NULL, name);
		}
		fprintf(f, "{\"ph\":\"X\",\"pid\":%d,\"tid\":%u,\"ts\":%.3f,"
			"\"dur\":%.3f,\"name\":\"%s %llu:%llu\",\"cat\":"
			"\"client\",\"args\":{\"ready_us\":%.1f,\"run_us\":"
			"%.1f}},\n", PID_CLIENT, jb->ctx + 1, jb->submit - t0,
			jb->done - jb->submit,
			jb->engine >= 0 && jb->engine < MAX_ENG &&
			eng_names[jb->engine] ? eng_names[jb->engine] : "job",
			(unsigned long long)jb->fctx,
			(unsigned long long)jb->fseq,
			jb->ready ? jb->ready - jb->submit : -1.0,
			jb->run ? jb->run - jb->submit : -1.0);
	}
	/* arrows: producer's end -> consumer's start on the engine tracks */
	for (i = 0; i < ndeps; i++) {
		struct job *c = &jobs[deps[i].consumer];
		struct job *p = &jobs[deps[i].producer];

		if (!c->done || !p->done || c->engine < 0 || p->engine < 0 ||
		    c->engine == p->engine)
			continue;
		fprintf(f, "{\"ph\":\"s\",\"pid\":%d,\"tid\":%d,\"ts\":%.3f,"
			"\"id\":%zu,\"name\":\"%s\",\"cat\":\"dep\"},\n",
			PID_ENG, p->engine + 1, p->done - t0 - 0.001, i,
			deps[i].gpu ? "GPU WAIT" : "CPU wait");
		fprintf(f, "{\"ph\":\"f\",\"bp\":\"e\",\"pid\":%d,\"tid\":%d,"
			"\"ts\":%.3f,\"id\":%zu,\"name\":\"%s\",\"cat\":"
			"\"dep\"},\n", PID_ENG, c->engine + 1,
			(c->run > p->done ? c->run : p->done) - t0 + 0.001, i,
			deps[i].gpu ? "GPU WAIT" : "CPU wait");
	}
	for (i = 0; i < ninst; i++) {
		struct instant *in = &inst[i];
		int tid = in->what == 'i' ? 1 : in->what == 'd' ? 2 : 3;

		fprintf(f, "{\"ph\":\"i\",\"s\":\"t\",\"pid\":%d,\"tid\":%d,"
			"\"ts\":%.3f,\"name\":\"%s\",\"args\":{\"a\":%u,"
			"\"b\":%u}},\n", PID_DRV, tid, in->ts - t0,
			in->what == 'i' ? "irq" : in->what == 'd' ? "doorbell" :
			in->what == 'f' ? "host flush" : "flush done", in->a,
			in->b);
	}
	/* a last event without a comma: the JSON stays valid */
	fprintf(f, "{\"ph\":\"M\",\"pid\":%d,\"name\":\"process_sort_index\","
		"\"args\":{\"sort_index\":0}}\n]}\n", PID_ENG);
	free(order);
	if (fclose(f))
		return -EIO;
	return 0;
}

/* The last interrupt on @engine's vector at or before @ts, or 0. */
static double last_irq(int engine, double ts)
{
	size_t lo = 0, hi = ninst;

	/* inst is in time order: the last one at or before @ts */
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;

		if (inst[mid].ts <= ts)
			lo = mid + 1;
		else
			hi = mid;
	}
	while (lo--)
		if (inst[lo].what == 'i' && (int)inst[lo].a == engine)
			return inst[lo].ts;
	return 0;
}

/* Where an average hop's time goes: producer done -> consumer done. */
static void summary(void)
{
	double sum[7] = { 0 }, q[4] = { 0 };
	unsigned int n = 0, nq = 0, irqs = 0, bells = 0, done = 0, gpu = 0;
	double irq;
	size_t i;

	for (i = 0; i < njobs; i++) {
		struct job *jb = &jobs[i];

		if (!jb->done || !jb->submit || !jb->run)
			continue;
		done++;
		if (jb->ready) {
			q[0] += jb->ready - jb->submit;
			q[1] += jb->run - jb->ready;
		}
		irq = last_irq(jb->engine, jb->done);
		if (irq < jb->run)
			irq = jb->run;
		q[2] += irq - jb->run;
		q[3] += jb->done - irq;
		nq++;
	}
	for (i = 0; i < ninst; i++) {
		irqs += inst[i].what == 'i';
		bells += inst[i].what == 'd';
	}
	for (i = 0; i < ndeps; i++) {
		struct job *c = &jobs[deps[i].consumer];
		struct job *p = &jobs[deps[i].producer];
		double from, ready, run;

		if (!c->done || !p->done || !c->run || c->engine == p->engine)
			continue;
		/*
		 * The device ran the consumer after the producer's SIGNAL,
		 * but one interrupt may retire both, the consumer first.
		 */
		from = p->done < c->done ? p->done : c->done;
		ready = c->ready > from ? c->ready : from;
		run = c->run > ready ? c->run : ready;
		if (run > c->done)
			run = c->done;
		irq = last_irq(c->engine, c->done);
		if (irq < run)
			irq = run;
		sum[0] += c->done - from;
		sum[1] += ready - from;		/* scheduler: deps -> ready */
		sum[2] += run - ready;		/* run_job: frame, ring, bell */
		sum[3] += irq - run;		/* device, MSI */
		sum[6] += c->done - irq;	/* IRQ thread -> fence */
		sum[4] += c->wait_us;
		sum[5] += c->busy_us;
		gpu += deps[i].gpu;
		n++;
	}
	printf("\nmegpu trace: %u jobs completed, %u interrupts, %u doorbells "
	       "(%.2f and %.2f a job)\n", done, irqs, bells,
	       done ? (double)irqs / done : 0, done ? (double)bells / done : 0);
	if (nq)
		printf("  an average job: submit -> ready %.1f us, ready -> "
		       "run_job %.1f us,\n  run_job -> its interrupt %.1f us "
		       "(engine queue, device, MSI), interrupt ->\n  fence "
		       "%.1f us\n", q[0] / nq, q[1] / nq, q[2] / nq, q[3] / nq);
	if (!n) {
		printf("  no dependency between engines: no hop to break "
		       "down\n");
		return;
	}
	printf("  an average hop between engines (%u hops, %u as GPU WAITs): "
	       "%.1f us from the\n  producer's fence to the consumer's\n", n,
	       gpu, sum[0] / n);
	printf("    %-48s %8.1f us\n", "producer's fence -> consumer ready "
	       "(CPU wait)", sum[1] / n);
	printf("    %-48s %8.1f us\n", "ready -> in the ring (run_job, "
	       "doorbell)", sum[2] / n);
	printf("    %-48s %8.1f us\n", "in the ring -> its interrupt (device, "
	       "MSI)", sum[3] / n);
	printf("    %-48s %8.1f us\n", "  of which the device ran its "
	       "packets", sum[5] / n);
	printf("    %-48s %8.1f us\n", "  of which stalled in WAIT",
	       sum[4] / n);
	printf("    %-48s %8.1f us\n", "interrupt -> fence (retire)",
	       sum[6] / n);
	if (irqs && done > 2 * irqs)
		printf("  (%.1f jobs retired per interrupt: a fence-to-fence hop "
		       "includes waiting for\n  the batch's interrupt; the "
		       "device's own time per hop is the packets line)\n",
		       (double)done / irqs);
}

int cmd_trace(int argc, char **argv)
{
	const char *out = "megpu-trace.json";
	unsigned long kb = 16384, chain = 0, njobs_arg = 0;
	bool cpu_waits = false, gate = true;
	char buf[64], path[256], old_kb[64] = "", old_on[8] = "";
	char *line = NULL;
	size_t len = 0;
	double t0 = 0;
	int i, status = 0, ret;
	pid_t pid;
	FILE *f;

	if (tool_help(argc, argv, usage))
		return 0;
	for (i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--")) {
			i++;
			break;
		} else if (!strcmp(argv[i], "-o") && i + 1 < argc) {
			out = argv[++i];
		} else if (!strcmp(argv[i], "--chain") && i + 1 < argc) {
			chain = strtoul(argv[++i], NULL, 0);
			if (chain < 2 || chain > 2000) {
				fputs(usage, stderr);
				return 2;
			}
		} else if (!strcmp(argv[i], "--jobs") && i + 1 < argc) {
			njobs_arg = strtoul(argv[++i], NULL, 0);
			if (!njobs_arg || njobs_arg > 10000) {
				fputs(usage, stderr);
				return 2;
			}
		} else if (!strcmp(argv[i], "--cpu-waits")) {
			cpu_waits = true;
		} else if (!strcmp(argv[i], "--no-gate")) {
			gate = false;
		} else if (!strcmp(argv[i], "--buffer-kb") && i + 1 < argc) {
			kb = strtoul(argv[++i], NULL, 0);
			if (!kb || kb > 1 << 20) {
				fputs(usage, stderr);
				return 2;
			}
		} else {
			break;
		}
	}
	if (chain && njobs_arg) {
		fputs(usage, stderr);
		return 2;
	}
	if (chain || njobs_arg ? i < argc : i >= argc) {
		fputs(usage, stderr);
		return 2;
	}
	if (tfs_find())
		return 1;
	snprintf(buf, sizeof(buf), "%lu", kb);
	/* what it was is put back after: other tracers, tests, expect it */
	tfs_read("buffer_size_kb", old_kb, sizeof(old_kb));
	tfs_read("tracing_on", old_on, sizeof(old_on));
	tfs_write("tracing_on", "0");
	if (tfs_write("buffer_size_kb", buf))
		fprintf(stderr, "megpu trace: could not set the buffer size\n");
	tfs_write("trace", "");
	ret = tfs_write("events/megpu/enable", "1");
	ret = ret ?: tfs_write("tracing_on", "1");
	if (ret) {
		fprintf(stderr, "megpu trace: cannot enable the megpu events: "
			"%s\n", strerror(-ret));
		return 1;
	}

	fflush(NULL);
	if (chain || njobs_arg) {
		ret = chain ? run_chain(chain, cpu_waits, gate) :
			      run_jobs(njobs_arg);
		if (ret)
			fprintf(stderr, "megpu trace: the workload failed: %s\n",
				tool_status(ret));
		status = (ret ? 1 : 0) << 8;
		pid = 0;
		goto traced;
	}
	pid = fork();
	if (pid == 0) {
		execvp(argv[i], argv + i);
		fprintf(stderr, "megpu trace: %s: %s\n", argv[i],
			strerror(errno));
		_exit(127);
	}
	if (pid < 0 || waitpid(pid, &status, 0) < 0) {
		perror("megpu trace");
		status = 1 << 8;
	}
traced:
	tfs_write("tracing_on", "0");
	tfs_write("events/megpu/enable", "0");

	snprintf(path, sizeof(path), "%s/trace", tracefs);
	f = fopen(path, "r");
	if (!f) {
		perror(path);
		return 1;
	}
	ret = 0;
	while (!ret && getline(&line, &len, f) > 0) {
		unsigned long long in, written;

		if (sscanf(line, "# entries-in-buffer/entries-written: "
			   "%llu/%llu", &in, &written) == 2 && in < written)
			fprintf(stderr, "megpu trace: %llu of %llu events were "
				"lost: a larger --buffer-kb\n", written - in,
				written);
		ret = parse_line(line);
	}
	free(line);
	fclose(f);
	tfs_write("trace", "");
	/* "7 (expanded: 1408)" when never set: leave that alone */
	if (old_kb[0] >= '0' && old_kb[0] <= '9' && !strchr(old_kb, '('))
		tfs_write("buffer_size_kb", old_kb);
	tfs_write("tracing_on", old_on[0] == '0' ? "0" : "1");
	if (ret) {
		fprintf(stderr, "megpu trace: out of memory\n");
		return 1;
	}

	/* engine names from the device, when one is there */
	{
		struct megpu gpu;
		uint64_t types = 0;
		unsigned int n, e;

		if (!megpu_open(&gpu, 0)) {
			if (!megpu_engines(&gpu, &n, &types))
				for (e = 0; e < n && e < MAX_ENG; e++) {
					megpu_engine_name(types, e, buf,
							  sizeof(buf));
					eng_names[e] = strdup(buf);
				}
			megpu_close(&gpu);
		}
	}
	for (size_t j = 0; j < njobs; j++)
		if (jobs[j].submit && (!t0 || jobs[j].submit < t0))
			t0 = jobs[j].submit;
	attribute_stats();
	ret = write_json(out, t0);
	if (ret)
		return 1;
	summary();
	if (getenv("MEGPU_TRACE_JOBS")) {
		unsigned long n = strtoul(getenv("MEGPU_TRACE_JOBS"), NULL, 0);
		size_t j;

		printf("  %-6s %-4s %6s %12s %12s %12s %12s %8s %8s\n", "job",
		       "eng", "seqno", "submit", "ready", "run", "done",
		       "dev", "wait");
		for (j = 0; j < njobs && j < n; j++)
			printf("  %-6zu %-4d %6llu %12.1f %12.1f %12.1f %12.1f "
			       "%8.1f %8.1f\n", j, jobs[j].engine,
			       (unsigned long long)jobs[j].seqno,
			       jobs[j].submit - t0, jobs[j].ready - t0,
			       jobs[j].run - t0, jobs[j].done - t0,
			       jobs[j].busy_us, jobs[j].wait_us);
	}
	printf("  timeline: %s (%zu jobs, %zu dependencies; open it in "
	       "ui.perfetto.dev)\n", out, njobs, ndeps);
	return WIFEXITED(status) ? WEXITSTATUS(status) : 1;
}
