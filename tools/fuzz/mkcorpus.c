// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Seed corpus for QEMU's generic-fuzz target "megpu" (make fuzz-device):
 * inputs in generic-fuzz's command format (tests/qtest/fuzz/generic_fuzz.c)
 * that program engine 0's ring and ring its doorbell, the ring's bytes
 * coming from a DMA pattern (the fuzzer fills the device's first read of
 * any guest page with it). One seed per packet type, a wave program
 * DISPATCH, a DEQUEUE of a task queue and a SYSCALL through a mailbox.
 *
 * usage: mkcorpus DIR
 */
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include "megpu_hw_mgpu.h"

/* generic-fuzz's opcodes and separator */
enum { OP_IN, OP_OUT, OP_READ, OP_WRITE, OP_PCI_READ, OP_PCI_WRITE,
	OP_DISABLE_PCI, OP_ADD_DMA_PATTERN, OP_CLEAR_DMA_PATTERNS,
	OP_CLOCK_STEP };
#define SEP "FUZZ"
#define RAM 0x100000u		/* where rings, IBs and data point */

struct seed {
	uint8_t buf[4096];
	size_t len;
};

static void put(struct seed *s, const void *p, size_t n)
{
	if (s->len + n <= sizeof(s->buf)) {
		memcpy(s->buf + s->len, p, n);
		s->len += n;
	}
}

static void op(struct seed *s, uint8_t code)
{
	if (s->len)
		put(s, SEP, 4);
	put(s, &code, 1);
}

/* a 32-bit write to the register block (region 0, the BAR) */
static void reg(struct seed *s, uint32_t off, uint32_t val)
{
	uint8_t size = 2, base = 0;
	uint64_t v = val;

	op(s, OP_WRITE);
	put(s, &size, 1);
	put(s, &base, 1);
	put(s, &off, 4);
	put(s, &v, 8);
}

static void pattern(struct seed *s, const uint32_t *dw, size_t n)
{
	uint8_t index = 0, stride = 0;

	op(s, OP_ADD_DMA_PATTERN);
	put(s, &index, 1);
	put(s, &stride, 1);
	put(s, dw, n * 4);
}

/* engine 0: ring at RAM, the pattern as its packets, doorbell */
static void ring(struct seed *s, const uint32_t *dw, size_t n)
{
	reg(s, MEGPU_ENGINE_BASE(0) + MEGPU_ENG_RING_BASE_LO, RAM);
	reg(s, MEGPU_ENGINE_BASE(0) + MEGPU_ENG_RING_BASE_HI, 0);
	reg(s, MEGPU_ENGINE_BASE(0) + MEGPU_ENG_RING_SIZE, 0x1000);
	pattern(s, dw, n);
	reg(s, MEGPU_ENGINE_BASE(0) + MEGPU_ENG_RING_TAIL, n * 4);
	op(s, OP_CLOCK_STEP);
	reg(s, MEGPU_ENGINE_BASE(0) + MEGPU_ENG_CONTROL,
	    MEGPU_ENG_CTRL_FAULT_ACK);
}

static int save(const char *dir, const char *name, const struct seed *s)
{
	char path[512];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(path, "wb");
	if (!f || fwrite(s->buf, 1, s->len, f) != s->len) {
		perror(path);
		return 1;
	}
	return fclose(f) != 0;
}

#define H(op, n, fl)	MEGPU_PKT_HEADER(op, n, fl)

int main(int argc, char **argv)
{
	/* one packet of each type, payloads pointing into RAM */
	static const struct {
		const char *name;
		uint32_t dw[12];
		size_t n;
	} pkts[] = {
		{ "write_data", { H(MEGPU_PKT_WRITE_DATA, 3, 0), RAM + 0x800, 0,
				  0x1234 }, 4 },
		{ "timestamp", { H(MEGPU_PKT_TIMESTAMP, 4, 0), RAM + 0x800, 0,
				 7, 0 }, 5 },
		{ "copy", { H(MEGPU_PKT_COPY, 5, 0), RAM + 0x800, 0, RAM + 0x900,
			    0, 64 }, 6 },
		{ "fill", { H(MEGPU_PKT_FILL, 4, 0), RAM + 0x800, 0, 64,
			    0xabcd }, 5 },
		{ "ib", { H(MEGPU_PKT_IB, 3, 0), RAM + 0x400, 0, 16 }, 4 },
		{ "signal", { H(MEGPU_PKT_SIGNAL, 4, 0), RAM + 0x800, 0, 1, 0 },
		  5 },
		{ "wait", { H(MEGPU_PKT_WAIT, 4, 0), RAM + 0x800, 0, 0, 0 }, 5 },
		{ "flush", { H(MEGPU_PKT_FLUSH, 0, 0) }, 1 },
		{ "set_context", { H(MEGPU_PKT_SET_CONTEXT, 3, 0), 1, RAM + 0x2000,
				   0 }, 4 },
		{ "dispatch_kernel", { H(MEGPU_PKT_DISPATCH, 7, 0),
				       MEGPU_KERNEL_INCREMENT, RAM + 0x800, 0,
				       1, 1, 1, 1 }, 8 },
		{ "dispatch_program", { H(MEGPU_PKT_DISPATCH, 7, 0),
					MEGPU_KERNEL_PROGRAM, RAM + 0x800, 0,
					64, 1, 64, 1 }, 8 },
		{ "set_mailbox", { H(MEGPU_PKT_SET_MAILBOX, 3, 0), RAM + 0x3000,
				   0, 4 }, 4 },
		{ "dequeue", { H(MEGPU_PKT_DEQUEUE, 5, 0), RAM + 0x1000, 0, 1,
			       0, 0 }, 6 },
		{ "task_done", { H(MEGPU_PKT_TASK_DONE, 7, 0), RAM + 0x1000, 0,
				 RAM + 0x1800, 0, 0, 0, 0 }, 8 },
		{ "msem", { H(MEGPU_PKT_MSEM_SIGNAL, 2, 0), RAM + 0x800, 0,
			    H(MEGPU_PKT_MSEM_WAIT, 3, 0), RAM + 0x800, 0, 1 }, 7 },
		{ "arb", { H(MEGPU_PKT_ARB_ACQUIRE, 2, 0), RAM + 0x800, 0,
			   H(MEGPU_PKT_ARB_RELEASE, 2, 0), RAM + 0x800, 0 }, 6 },
	};
	int rc = 0;

	if (argc != 2) {
		fprintf(stderr, "usage: mkcorpus DIR\n");
		return 2;
	}
	for (size_t i = 0; i < sizeof(pkts) / sizeof(pkts[0]); i++) {
		struct seed s = { .len = 0 };

		ring(&s, pkts[i].dw, pkts[i].n);
		rc |= save(argv[1], pkts[i].name, &s);
	}
	return rc;
}
