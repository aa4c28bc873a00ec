// SPDX-License-Identifier: GPL-2.0
/*
 * The megpu tool as a user runs it: info, run from flags and from a job
 * file, demo, and clear failures on bad input.
 */

#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include "kselftest_harness.h"

static int tool(const char *args)
{
	char cmd[512];
	int status;

	snprintf(cmd, sizeof(cmd), "megpu %s >/tmp/tool.out 2>&1", args);
	status = system(cmd);
	return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

static bool output_has(const char *text)
{
	char buf[8192];
	size_t n;
	FILE *f = fopen("/tmp/tool.out", "r");

	if (!f)
		return false;
	n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = '\0';
	return strstr(buf, text);
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
}

TEST_HARNESS_MAIN
