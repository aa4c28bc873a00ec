// SPDX-License-Identifier: GPL-2.0
/*
 * The megpu tool as a user runs it: info, run from flags and from a job
 * file, demo, and clear failures on bad input.
 */

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "kselftest_harness.h"
#include "megpu_test.h"

/* The tool's output of the last run (mt_tool() logs it too). */
static char out[1 << 16];

static int tool(const char *args)
{
	return mt_tool(args, out, sizeof(out));
}

static bool output_has(const char *text)
{
	return strstr(out, text);
}

TEST(info)
{
	ASSERT_EQ(0, tool("info"));
	EXPECT_TRUE(output_has("driver:     megpu"));
	EXPECT_TRUE(output_has("engine 0: gfx"));
}

TEST(run_from_flags)
{
	EXPECT_EQ(0, tool("run --engine copy --op fill --size 64K --value 7"));
	EXPECT_EQ(0, tool("run --engine compute --op dispatch --kernel saxpy"));
	EXPECT_EQ(0, tool("run --op timestamp --dump"));
	EXPECT_TRUE(output_has("TIMESTAMP"));
}

TEST(run_from_job_file)
{
	FILE *f = fopen("/tmp/job.txt", "w");

	ASSERT_NE(NULL, f);
	fputs("engine gfx\n"
	      "bo src 4096 0x11\n"
	      "bo dst 4096\n"
	      "COPY src=@src dst=@dst+16 bytes=64\n"
	      "expect dst+16 0x11 16\n"
	      "expect dst 0x0 4\n", f);
	fclose(f);
	EXPECT_EQ(0, tool("run /tmp/job.txt"));

	/* an expectation that does not hold fails the run */
	f = fopen("/tmp/job.txt", "w");
	ASSERT_NE(NULL, f);
	fputs("bo buf 4096\n"
	      "FILL dst=@buf bytes=4096 value=0x7\n"
	      "expect buf 0x8 1\n", f);
	fclose(f);
	EXPECT_NE(0, tool("run /tmp/job.txt"));
}

TEST(bad_input)
{
	EXPECT_NE(0, tool("run --engine 99"));
	EXPECT_NE(0, tool("run --op nonsense"));
	EXPECT_NE(0, tool("run --size 3"));
	EXPECT_NE(0, tool("frobnicate"));
	EXPECT_TRUE(output_has("unknown command"));
	EXPECT_EQ(0, tool("run --help"));
}

/* a job the engine cannot run faults, and the tool says so */
TEST(forced_fault)
{
	EXPECT_NE(0, tool("run --engine copy --op dispatch --force"));
	EXPECT_EQ(0, tool("run --engine copy --op fill"));
}

TEST(demo)
{
	ASSERT_EQ(0, tool("demo"));
	EXPECT_TRUE(output_has("megpu demo: PASS"));
	EXPECT_EQ(0, tool("demo --help"));
	EXPECT_TRUE(output_has("megpu demo blur-sepia"));
}

/* A binary PPM of @w x @h: "P6", the header, 3 bytes a pixel. */
static bool is_ppm(const char *path, unsigned int w, unsigned int h)
{
	char head[32], want[32];
	FILE *f = fopen(path, "rb");
	long size;
	int n;

	if (!f)
		return false;
	n = fread(head, 1, sizeof(head) - 1, f);
	fseek(f, 0, SEEK_END);
	size = ftell(f);
	fclose(f);
	if (n < 2)
		return false;
	head[n] = '\0';
	n = snprintf(want, sizeof(want), "P6\n%u %u\n255\n", w, h);
	return !strncmp(head, want, n) && size == n + 3l * w * h;
}

/* The seed's FIG. 5 chain: blur, flush, sepia; checked, written. */
TEST(demo_blur_sepia)
{
	int ret;

	unlink("/tmp/bs.ppm");
	ASSERT_EQ(0, tool("demo blur-sepia --width 96 --height 64 "
			  "--out /tmp/bs.ppm"));
	EXPECT_TRUE(output_has("megpu demo blur-sepia: PASS"));
	EXPECT_TRUE(output_has("launch → idle → flush → flush done → "
			       "launch"));
	EXPECT_TRUE(output_has(" 0 mismatching"));
	EXPECT_TRUE(is_ppm("/tmp/bs.ppm", 96, 64));

	/* the GPU-internal flush, on a given image */
	EXPECT_EQ(0, tool("demo blur-sepia --gpu-flush --in /tmp/bs.ppm "
			  "--out /tmp/bs2.ppm"));
	EXPECT_TRUE(output_has("megpu demo blur-sepia: PASS"));
	EXPECT_TRUE(output_has("GPU-internal flush"));
	EXPECT_TRUE(is_ppm("/tmp/bs2.ppm", 96, 64));

	/*
	 * Without a flush the exit status says whether stale pixels showed
	 * (0) or not (3, timing decides), and must agree with the count.
	 */
	ret = tool("demo blur-sepia --no-flush --out /tmp/bs3.ppm");
	EXPECT_TRUE(ret == 0 || ret == 3) TH_LOG("exit %d", ret);
	if (ret == 0) {
		EXPECT_TRUE(output_has("stale pixels shown (no flush)"));
		EXPECT_FALSE(output_has(" 0 mismatching"));
	} else {
		EXPECT_TRUE(output_has("no stale pixel shown (no flush)"));
		EXPECT_TRUE(output_has(" 0 mismatching"));
	}
	EXPECT_TRUE(is_ppm("/tmp/bs3.ppm", 256, 192));

	/* bad input */
	EXPECT_NE(0, tool("demo blur-sepia --in /proc/version"));
	EXPECT_TRUE(output_has("not a P6 PPM"));
	EXPECT_NE(0, tool("demo blur-sepia --no-flush --gpu-flush"));
	EXPECT_NE(0, tool("demo blur-sepia --width 0"));
}

/* Seed 003: work-items call printf and fileio on the CPU. */
TEST(demo_syscalls)
{
	ASSERT_EQ(0, tool("demo syscalls --items 20"));
	EXPECT_TRUE(output_has("megpu demo syscalls: PASS"));
	EXPECT_TRUE(output_has("work-item 19 of 20: hello from the GPU"));
	EXPECT_TRUE(output_has("file matches the buffer"));
	EXPECT_EQ(0, tool("demo syscalls --help"));
}

/* A wave program from the tool: VADD on 100 items, 1 + 2 = 3. */
TEST(run_program)
{
	FILE *f;

	EXPECT_EQ(0, tool("run --program vadd --grid 100 --group 32 "
			  "--arg buf:400:1 --arg buf:400:2 --arg buf:400 "
			  "--arg 100"));
	EXPECT_TRUE(output_has("arg2 @"));
	EXPECT_TRUE(output_has(" 0x00000003 0x00000003"));
	/* the README's example: increment.s over 64 words of 5 */
	EXPECT_EQ(0, tool("run --program increment --grid 64 "
			  "--arg buf:256:5 --arg 64"));
	EXPECT_TRUE(output_has(" 0x00000006 0x00000006"));
	/* a .s file whose work-items print */
	f = fopen("/tmp/hello.s", "w");
	ASSERT_NE(NULL, f);
	fputs("ldarg r1, 0\nsyscall r2, 0x100, r1, r0, r0\nend\n", f);
	fclose(f);
	EXPECT_NE(0, tool("run --program /tmp/nonexistent.s"));
	EXPECT_NE(0, tool("run --program vadd --group 2000"));
	EXPECT_EQ(0, tool("run --program /tmp/hello.s --grid 1 --group 1 "
			  "--arg 4"));
	/* a record at 4 is in no buffer of the service: answered -EFAULT */
	EXPECT_TRUE(output_has("service: 1 calls answered"));
}

/* --- megpu trace: a minimal JSON syntax check, then the events --- */

static const char *json_value(const char *p);

static const char *json_ws(const char *p)
{
	while (*p == ' ' || *p == '\n' || *p == '\r' || *p == '\t')
		p++;
	return p;
}

static const char *json_string(const char *p)
{
	if (*p++ != '"')
		return NULL;
	for (; *p && *p != '"'; p++)
		if (*p == '\\' && !*++p)
			return NULL;
	return *p == '"' ? p + 1 : NULL;
}

static const char *json_list(const char *p, char close, bool object)
{
	p = json_ws(p + 1);
	if (*p == close)
		return p + 1;
	for (;;) {
		if (object) {
			p = json_string(json_ws(p));
			if (!p)
				return NULL;
			p = json_ws(p);
			if (*p++ != ':')
				return NULL;
		}
		p = json_value(p);
		if (!p)
			return NULL;
		p = json_ws(p);
		if (*p == close)
			return p + 1;
		if (*p++ != ',')
			return NULL;
	}
}

static const char *json_value(const char *p)
{
	char *end;

	p = json_ws(p);
	if (*p == '{')
		return json_list(p, '}', true);
	if (*p == '[')
		return json_list(p, ']', false);
	if (*p == '"')
		return json_string(p);
	if (!strncmp(p, "true", 4) || !strncmp(p, "null", 4))
		return p + 4;
	if (!strncmp(p, "false", 5))
		return p + 5;
	strtod(p, &end);
	return end == p ? NULL : end;
}

/* The whole file, NUL-terminated, or NULL. */
static char *slurp(const char *path)
{
	FILE *f = fopen(path, "r");
	char *buf = NULL;
	long n;

	if (!f)
		return NULL;
	if (!fseek(f, 0, SEEK_END) && (n = ftell(f)) > 0 &&
	    !fseek(f, 0, SEEK_SET) && (buf = malloc(n + 1))) {
		if (fread(buf, 1, n, f) != (size_t)n) {
			free(buf);
			buf = NULL;
		} else {
			buf[n] = '\0';
		}
	}
	fclose(f);
	return buf;
}

static unsigned int count(const char *hay, const char *needle)
{
	unsigned int n = 0;

	while ((hay = strstr(hay, needle))) {
		n++;
		hay++;
	}
	return n;
}

/* The first byte of a (sysfs, tracefs) file, or 0. */
static char first_char(const char *path)
{
	char c = 0;
	FILE *f = fopen(path, "r");

	if (!f)
		return 0;
	if (fread(&c, 1, 1, f) != 1)
		c = 0;
	fclose(f);
	return c;
}

/* The first byte of a tracefs file, wherever tracefs is (megpu trace's). */
static char tracefs_char(const char *file)
{
	char path[128];
	char c;

	snprintf(path, sizeof(path), "/sys/kernel/tracing/%s", file);
	c = first_char(path);
	if (c)
		return c;
	snprintf(path, sizeof(path), "/sys/kernel/debug/tracing/%s", file);
	return first_char(path);
}

/* Is @json valid JSON, with nothing after the value? */
static bool json_ok(const char *json)
{
	const char *end = json_value(json);

	return end && !*json_ws(end);
}

/*
 * A 2-job chain gfx0 -> copy0: the timeline parses, has both jobs on
 * their engines' tracks, one arrow from producer to consumer (a GPU WAIT,
 * or with --cpu-waits a CPU wait), the client track and the summary.
 */
TEST(trace_chain)
{
	static const char *const modes[] = { "", " --cpu-waits" };
	char cmd[128], *json;
	unsigned int m;

	for (m = 0; m < 2; m++) {
		unlink("/tmp/trace.json");
		snprintf(cmd, sizeof(cmd), "trace -o /tmp/trace.json --chain 2%s",
			 modes[m]);
		ASSERT_EQ(0, tool(cmd));
		EXPECT_TRUE(output_has("2 jobs completed"));
		EXPECT_TRUE(output_has("an average hop between engines (1 hops"));
		json = slurp("/tmp/trace.json");
		ASSERT_NE(NULL, json);
		EXPECT_TRUE(json_ok(json));
		EXPECT_EQ(2, count(json, "\"cat\":\"engine\""));
		EXPECT_EQ(2, count(json, "\"cat\":\"client\""));
		EXPECT_EQ(1, count(json, "\"ph\":\"s\""));
		EXPECT_EQ(1, count(json, "\"ph\":\"f\""));
		EXPECT_EQ(2, count(json, m ? "\"name\":\"CPU wait\"" :
				   "\"name\":\"GPU WAIT\""));
		EXPECT_NE(0, count(json, "\"name\":\"gfx0\""));
		EXPECT_NE(0, count(json, "\"name\":\"copy0\""));
		EXPECT_NE(0, count(json, "\"name\":\"doorbell\""));
		EXPECT_NE(0, count(json, "\"name\":\"irq\""));
		free(json);
	}
	/* tracefs is left as it was found: tracing on, megpu events off */
	EXPECT_EQ('1', tracefs_char("tracing_on"));
	EXPECT_EQ('0', tracefs_char("events/megpu/enable"));

	/* the negative control of the checker: a cut file does not parse */
	EXPECT_FALSE(json_ok("{\"traceEvents\":[{\"ph\":\"X\"}"));
	EXPECT_FALSE(json_ok("{\"a\":1,}"));

	/* a command's exit status is the trace's; bad input fails */
	EXPECT_EQ(3, tool("trace -o /tmp/trace.json -- sh -c 'exit 3'"));
	EXPECT_TRUE(output_has("no dependency between engines"));
	EXPECT_EQ(2, tool("trace -o /tmp/trace.json"));
	EXPECT_EQ(2, tool("trace --chain 1"));
	EXPECT_EQ(2, tool("trace --chain 2 -- true"));
	EXPECT_NE(0, tool("trace -o /nonexistent/t.json --chain 2"));
}

TEST(bench_syscall)
{
	ASSERT_EQ(0, tool("bench syscall --quick"));
	EXPECT_TRUE(output_has("in-batch ECHO"));
	EXPECT_TRUE(output_has("phased"));
}

/* --- megpu debug: seed 001's dump tool --- */

#define DBG_SIZE (13 * 4096)	/* no other BO has this size */

/*
 * A client with a BO of DBG_SIZE that a job on engine 0 wrote and a job
 * on the last engine read (then waited for the writer, on the GPU when
 * the writer was still running). The jobs are kept: their IBs stay put.
 */
FIXTURE(dbg) {
	struct mt t;
	struct megpu_bo *x, *out;
	struct mt_job w, r;
	int er;
};

FIXTURE_SETUP(dbg)
{
	struct megpu_cs cs;

	ASSERT_EQ(0, mt_open(&self->t));
	self->er = self->t.engines - 1;
	ASSERT_EQ(0, mt_bo(&self->t.gpu, DBG_SIZE, 0, &self->x));
	ASSERT_EQ(0, mt_bo(&self->t.gpu, 4096, 0, &self->out));
	ASSERT_EQ(0, mt_write_job(&self->t, &self->w, 0, self->x, 0, 0x77,
				  NULL, NULL, 0, 0));
	ASSERT_EQ(0, mt_job_prepare(&self->t.gpu, &self->r, self->er, NULL, 0,
				    0));
	ASSERT_EQ(0, megpu_job_add_bo(&self->r.job, self->x,
				      DRM_MEGPU_BO_READ));
	ASSERT_EQ(0, megpu_job_add_bo(&self->r.job, self->out,
				      DRM_MEGPU_BO_WRITE));
	megpu_cs_init(&cs);
	ASSERT_EQ(0, mt_cs_copy_any(&self->t, self->er, &cs, self->x->va,
				    self->out->va, 1, self->out, 2048));
	ASSERT_EQ(0, mt_job_start(&self->r, &cs));
	megpu_cs_fini(&cs);
	ASSERT_EQ(0, mt_job_done(&self->w, mt_job_ns(&self->t)));
	ASSERT_EQ(0, mt_job_done(&self->r, mt_job_ns(&self->t)));
	ASSERT_EQ(0x77, mt_u32(self->out)[0]);
}

FIXTURE_TEARDOWN(dbg)
{
	mt_job_free(&self->w);
	mt_job_free(&self->r);
	megpu_bo_free(self->out);
	megpu_bo_free(self->x);
	mt_close(&self->t);
}

static bool engine_name_in_output(struct mt *t, unsigned int e,
				  const char *suffix)
{
	char name[16], want[64];

	megpu_engine_name(t->types, e, name, sizeof(name));
	snprintf(want, sizeof(want), "%s%s", name, suffix);
	return output_has(want);
}

/* Both jobs' frames, decoded from the rings, with the planner's record. */
TEST_F(dbg, frames)
{
	struct mt_frame fw, fr;
	char want[128];

	ASSERT_EQ(0, mt_frame_find(&self->t, 0, mt_job_ib_va(&self->w), &fw));
	ASSERT_EQ(0, mt_frame_find(&self->t, self->er, mt_job_ib_va(&self->r),
				   &fr));
	ASSERT_EQ(0, tool("debug frames"));
	EXPECT_TRUE(engine_name_in_output(&self->t, 0, ": "));
	EXPECT_TRUE(output_has("  frame 1:\n"));
	snprintf(want, sizeof(want), ": IB addr=0x%llx dwords=%u\n",
		 (unsigned long long)mt_job_ib_va(&self->w),
		 self->w.job.ib_dwords);
	EXPECT_TRUE(output_has(want)) TH_LOG("no '%s'", want);
	snprintf(want, sizeof(want), ": IB addr=0x%llx",
		 (unsigned long long)mt_job_ib_va(&self->r));
	EXPECT_TRUE(output_has(want)) TH_LOG("no '%s'", want);
	snprintf(want, sizeof(want), " value=%llu irq\n      planned: ctx %u",
		 (unsigned long long)fw.seqno, fw.ctx);
	EXPECT_TRUE(output_has(want)) TH_LOG("no '%s'", want);
	snprintf(want, sizeof(want), "@%llu:sem%u\n",
		 (unsigned long long)fw.seqno, fw.signal.sem);
	EXPECT_TRUE(output_has(want)) TH_LOG("no '%s'", want);
	EXPECT_FALSE(output_has("undecodable"));
	EXPECT_EQ(2, tool("debug frames --device"));
}

/* The BO's resource object: its writer on engine 0, its reader. */
TEST_F(dbg, resources)
{
	struct mt_frame fw, fr;
	char wn[16], rn[16], want[160];

	ASSERT_EQ(0, mt_frame_find(&self->t, 0, mt_job_ib_va(&self->w), &fw));
	ASSERT_EQ(0, mt_frame_find(&self->t, self->er, mt_job_ib_va(&self->r),
				   &fr));
	megpu_engine_name(self->t.types, 0, wn, sizeof(wn));
	megpu_engine_name(self->t.types, self->er, rn, sizeof(rn));
	ASSERT_EQ(0, tool("debug resources"));
	if (self->er)
		snprintf(want, sizeof(want),
			 " size %u: written by %s@%llu:sem%u; read by "
			 "%s@%llu:sem%u\n", DBG_SIZE, wn,
			 (unsigned long long)fw.seqno, fw.signal.sem, rn,
			 (unsigned long long)fr.seqno, fr.signal.sem);
	else
		snprintf(want, sizeof(want), " size %u: written by %s@%llu",
			 DBG_SIZE, wn, (unsigned long long)fw.seqno);
	EXPECT_TRUE(output_has(want)) TH_LOG("no '%s'", want);
	/* the copy's destination: written by the reader's job */
	snprintf(want, sizeof(want), " size 4096: written by %s@%llu:sem%u\n",
		 rn, (unsigned long long)fr.seqno, fr.signal.sem);
	EXPECT_TRUE(output_has(want)) TH_LOG("no '%s'", want);
}

/* Every engine's timestamps; idle engine 0: nothing in flight. */
TEST_F(dbg, timestamps)
{
	uint64_t cur, next;
	char want[96];
	unsigned int e;

	ASSERT_EQ(0, mt_engine_settle(&self->t, 0, 5000));
	ASSERT_EQ(0, mt_timestamps(&self->t, 0, &cur, &next));
	ASSERT_EQ(0, tool("debug timestamps"));
	for (e = 0; e < self->t.engines; e++)
		EXPECT_TRUE(engine_name_in_output(&self->t, e, " "));
	snprintf(want, sizeof(want), "current %-10llu next %-10llu in flight 0",
		 (unsigned long long)cur, (unsigned long long)next);
	EXPECT_TRUE(output_has(want)) TH_LOG("no '%s'", want);
}

/* The pool: its size and the pool_waits counter. */
TEST_F(dbg, semaphores)
{
	struct megpu_debug_sems s = { 0 };
	char want[96];

	ASSERT_EQ(0, megpu_debug_semaphores(&self->t.gpu, &s, 0));
	ASSERT_EQ(0, tool("debug semaphores"));
	snprintf(want, sizeof(want), "pool %u objects, ", s.pool);
	EXPECT_TRUE(output_has(want)) TH_LOG("no '%s'", want);
	EXPECT_TRUE(output_has(" jobs waited for a free one"));
	EXPECT_EQ(2, tool("debug nonsense"));
	EXPECT_EQ(2, tool("debug"));
}

TEST_HARNESS_MAIN
