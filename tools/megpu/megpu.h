/* SPDX-License-Identifier: MIT */
#ifndef MEGPU_TOOL_H
#define MEGPU_TOOL_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "libmegpu.h"

/* Each subcommand: argc/argv start at the subcommand's name. */
int cmd_info(int argc, char **argv);
int cmd_run(int argc, char **argv);
int cmd_demo(int argc, char **argv);
/* "megpu demo blur-sepia": argv[0] is "blur-sepia" */
int cmd_demo_blur_sepia(int argc, char **argv);
/* "megpu demo syscalls" (syscalls.c) */
int cmd_demo_syscalls(int argc, char **argv);
int cmd_bench(int argc, char **argv);
/* mgpu.c: "megpu mgpu" and "megpu demo video" (seed 000) */
int cmd_mgpu(int argc, char **argv);
int cmd_demo_video(int argc, char **argv);
/* The syscall table of megpu bench (syscalls.c). */
int bench_syscalls(struct megpu *gpu, uint32_t rounds);
/* bench_programs.c: wave programs vs built-in kernels vs the CPU */
int bench_programs(struct megpu *gpu, bool quick);
/* partition.c (seed 002): "megpu demo partition", benchmarks B1 and B2 */
int cmd_demo_partition(int argc, char **argv);
/* mgpu.c (seed 000): lock handoffs among GPUs, in megpu bench */
int bench_mgpu(bool quick);
int bench_partition(struct megpu *gpu, bool quick, uint32_t ntasks,
		    uint32_t grain);
/* asmcmd.c: assemble or disassemble wave ISA programs, no GPU needed */
int cmd_asm(int argc, char **argv);

/* debug.c: seed 001's dump tool (debugfs) */
int cmd_debug(int argc, char **argv);

/*
 * results.c: bench figures, each the median of @n runs with its spread,
 * printed by bench_json() as one line "MEGPU-BENCH-JSON {...}". Both
 * return the median. bench_median() sorts @v.
 */
double bench_fig(const char *name, const char *unit, const double *v,
		 unsigned int n);
double bench_fig1(const char *name, const char *unit, double v);
double bench_median(double *v, unsigned int n);
void bench_json(FILE *out);
/* trace.c: "megpu trace -o FILE.json -- COMMAND..." */
int cmd_trace(int argc, char **argv);

/* common.c */

/* Open device @index, with a message on failure. */
int tool_open(struct megpu *gpu, unsigned int index);
/* Is argv[1] --help/-h? Then print @usage to stdout. */
bool tool_help(int argc, char **argv, const char *usage);
/*
 * An engine for @op (and @kernel when @op is DISPATCH, else -1):
 * the first of type @prefer that accepts it, else the first that does.
 * -1 when none does.
 */
int tool_pick_engine(struct megpu *gpu, int prefer, unsigned int op,
		     int kernel);
/* An engine that runs wave programs (compute first), or -1. */
int tool_wave_engine(struct megpu *gpu);
/* "gfx" for engine @e of @gpu. */
const char *tool_engine_name(struct megpu *gpu, unsigned int e);
/* Parse a size with an optional K/M/G suffix; false on garbage. */
bool tool_parse_size(const char *s, uint64_t *v);
bool tool_parse_u64(const char *s, uint64_t *v);
/* Jobs put in rings so far on all engines (debugfs), or -1. */
int64_t tool_emitted_jobs(struct megpu *gpu);
/*
 * Before opening a delay_us gate: wait until @want more jobs than @base
 * are in rings; at most 0.8 s.
 */
void tool_gate_settle(struct megpu *gpu, int64_t base, int64_t want);
/* A fence status as text: "ok", "fault (-EFAULT)", ... */
const char *tool_status(int status);

#endif
