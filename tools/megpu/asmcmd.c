// SPDX-License-Identifier: MIT
/*
 * megpu asm: assemble a wave ISA program (.s) or disassemble one. Needs
 * no GPU: it is libmegpu's assembler on files.
 */

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "megpu.h"

static const char usage[] =
	"usage: megpu asm FILE.s [-o OUT.bin]\n"
	"       megpu asm -d FILE.bin\n"
	"\n"
	"Assemble a wave ISA program (syntax: tools/lib/megpu/asm.c, ISA:\n"
	"Documentation/megpu-hw.rst). With -o, write the little-endian\n"
	"instructions to OUT.bin; without, list 'index: word  text' lines.\n"
	"-d disassembles a file of little-endian instructions.\n";

static char *slurp(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	size_t cap = 4096, n = 0;
	char *buf = NULL, *p;

	if (!f)
		return NULL;
	for (;;) {
		p = realloc(buf, cap + 1);
		if (!p) {
			free(buf);
			buf = NULL;
			break;
		}
		buf = p;
		n += fread(buf + n, 1, cap - n, f);
		if (n < cap) {
			buf[n] = 0;
			break;
		}
		cap *= 2;
	}
	fclose(f);
	*len = n;
	return buf;
}

static void list_line(void *priv, size_t pc, const char *text)
{
	const uint64_t *insn = priv;

	printf("%4zu: 0x%016" PRIx64 "  %s\n", pc, insn[pc], text);
}

static int disassemble(const char *path)
{
	size_t len, i, n;
	char *buf = slurp(path, &len);
	uint64_t *insn;
	int bad;

	if (!buf) {
		fprintf(stderr, "megpu asm: %s: %s\n", path, strerror(errno));
		return 1;
	}
	if (len % 8)
		fprintf(stderr, "megpu asm: %s: %zu trailing bytes ignored\n",
			path, len % 8);
	n = len / 8;
	insn = calloc(n ? n : 1, sizeof(*insn));
	if (!insn) {
		free(buf);
		return 1;
	}
	for (i = 0; i < n * 8; i++)
		insn[i / 8] |= (uint64_t)(uint8_t)buf[i] << (8 * (i % 8));
	bad = megpu_disasm(insn, n, list_line, insn);
	if (bad)
		fprintf(stderr, "megpu asm: %d word%s not valid instructions\n",
			bad, bad == 1 ? " is" : "s are");
	free(insn);
	free(buf);
	return bad ? 1 : 0;
}

int cmd_asm(int argc, char **argv)
{
	const char *in = NULL, *out = NULL;
	struct megpu_prog prog;
	char err[256], *src;
	size_t len;
	FILE *f;
	int i;

	if (tool_help(argc, argv, usage))
		return 0;
	if (argc == 3 && !strcmp(argv[1], "-d"))
		return disassemble(argv[2]);
	for (i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "-o") && i + 1 < argc)
			out = argv[++i];
		else if (!in && argv[i][0] != '-')
			in = argv[i];
		else
			break;
	}
	if (!in || i < argc) {
		fputs(usage, stderr);
		return 2;
	}
	src = slurp(in, &len);
	if (!src) {
		fprintf(stderr, "megpu asm: %s: %s\n", in, strerror(errno));
		return 1;
	}
	if (megpu_asm(src, &prog, err, sizeof(err))) {
		fprintf(stderr, "%s: %s\n", in, err);
		free(src);
		return 1;
	}
	free(src);
	if (!out) {
		char text[MEGPU_ASM_LINE_MAX];
		uint32_t pc;

		for (pc = 0; pc < prog.len; pc++) {
			megpu_disasm_one(prog.insn[pc], text, sizeof(text));
			list_line(prog.insn, pc, text);
		}
		megpu_prog_fini(&prog);
		return 0;
	}
	f = fopen(out, "wb");
	if (f) {
		uint8_t *bytes = malloc((size_t)prog.len * 8);

		if (bytes) {
			megpu_prog_store(&prog, bytes);
			fwrite(bytes, 8, prog.len, f);
			free(bytes);
		}
		if (fclose(f) || !bytes)
			f = NULL;
	}
	megpu_prog_fini(&prog);
	if (!f) {
		fprintf(stderr, "megpu asm: cannot write %s\n", out);
		return 1;
	}
	return 0;
}
