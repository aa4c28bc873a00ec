// SPDX-License-Identifier: MIT
/* megpu: command-line tool for megpu GPUs. */

#include <stdio.h>
#include <string.h>

#include "megpu.h"

static const struct command {
	const char *name;
	int (*run)(int argc, char **argv);
	const char *help;
} commands[] = {
	{ "info", cmd_info, "print every megpu device and its parameters" },
	{ "run", cmd_run, "submit one job (flags or a job file), check it" },
	{ "demo", cmd_demo, "a pipeline over every engine, verified;\n"
	  "           'demo blur-sepia': blur -> flush -> sepia on two\n"
	  "           engines (seed FIG. 5), checked, written as a PPM;\n"
	  "           'demo syscalls': work-items call printf and fileio\n"
	  "           on the CPU (seed 003), checked;\n"
	  "           'demo partition': CPU threads and engines share\n"
	  "           task queues (seed 002), shares printed, checked;\n"
	  "           'demo video': FIG. 5 of seed 000, a video engine on\n"
	  "           GPU B feeds displays on GPUs A and B, checked" },
	{ "bench", cmd_bench, "latency, throughput, bandwidth, semaphore,\n"
	  "           flush, syscall and work-partitioning tables\n"
	  "           ('bench flush|syscall|partition': only that one)" },
	{ "mgpu", cmd_mgpu, "multi-GPU agents ('mgpu info') and the summed\n"
	  "           semaphore on a PRIME-shared BO ('mgpu msem')" },
	{ "debug", cmd_debug, "seed 001's dump: 'debug frames|resources|\n"
	  "           timestamps|semaphores' (debugfs, root)" },
	{ "trace", cmd_trace, "run a command with the driver's tracepoints on,\n"
	  "           write a Chrome/Perfetto timeline (-o FILE.json) and\n"
	  "           where an average hop between engines spends its time" },
	{ "asm", cmd_asm, "assemble (or -d: disassemble) a wave ISA program" },
};

static void usage(FILE *out)
{
	unsigned int i;

	fprintf(out, "usage: megpu <command> [options]\n\ncommands:\n");
	for (i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
		fprintf(out, "  %-8s %s\n", commands[i].name, commands[i].help);
	fprintf(out, "\n'megpu <command> --help' describes a command.\n");
}

int main(int argc, char **argv)
{
	unsigned int i;

	if (argc < 2) {
		usage(stderr);
		return 2;
	}
	if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h") ||
	    !strcmp(argv[1], "help")) {
		usage(stdout);
		return 0;
	}
	for (i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
		if (!strcmp(argv[1], commands[i].name))
			return commands[i].run(argc - 1, argv + 1);
	fprintf(stderr, "megpu: unknown command '%s'\n", argv[1]);
	usage(stderr);
	return 2;
}
