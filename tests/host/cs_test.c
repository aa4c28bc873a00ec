// SPDX-License-Identifier: MIT
/*
 * Host unit tests of the command-stream builder, decoder and parser, the
 * kernel-argument layout and the engine tables. No GPU needed.
 */

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "megpu_hw_packets.h"
#include "libmegpu.h"
#include "tap.h"

#define A1 0x123456789abcull	/* addresses with both halves non-zero */
#define A2 0xfedcba98ull

/* Check header fields and the payload of the one packet in @cs. */
static void check_packet(struct megpu_cs *cs, unsigned int op,
			 unsigned int flags, const uint32_t *payload,
			 unsigned int count)
{
	unsigned int i;

	CHECK_EQ(cs->error, 0);
	CHECK_EQ(cs->len, count + 1);
	if (cs->len < 1)
		return;
	CHECK_EQ(MEGPU_PKT_OPCODE(cs->dw[0]), op);
	CHECK_EQ(MEGPU_PKT_COUNT(cs->dw[0]), count);
	CHECK_EQ(MEGPU_PKT_FLAGS(cs->dw[0]), flags);
	CHECK_EQ(cs->dw[0], MEGPU_PKT_HEADER(op, count, flags));
	for (i = 0; i < count && i + 1 < cs->len; i++)
		CHECK_EQ(cs->dw[i + 1], payload[i]);
	megpu_cs_reset(cs);
}

static void encode_every_packet(void)
{
	uint32_t data[3] = { 1, 2, 0xffffffff };
	struct megpu_cs cs;

	megpu_cs_init(&cs);

	megpu_cs_nop(&cs, 0);
	check_packet(&cs, MEGPU_PKT_NOP, 0, NULL, 0);
	megpu_cs_nop(&cs, 3);
	check_packet(&cs, MEGPU_PKT_NOP, 0,
		     (uint32_t[]){ 0, 0, 0 }, 3);

	megpu_cs_ib(&cs, A1, 77);
	check_packet(&cs, MEGPU_PKT_IB, 0,
		     (uint32_t[]){ 0x56789abc, 0x1234, 77 },
		     MEGPU_PKT_IB_COUNT);

	megpu_cs_write_data(&cs, A2, data, 3);
	check_packet(&cs, MEGPU_PKT_WRITE_DATA, 0,
		     (uint32_t[]){ A2, 0, 1, 2, 0xffffffff }, 5);
	megpu_cs_write32(&cs, A1, 42);
	check_packet(&cs, MEGPU_PKT_WRITE_DATA, 0,
		     (uint32_t[]){ 0x56789abc, 0x1234, 42 }, 3);

	megpu_cs_timestamp(&cs, A1, 0x1122334455667788ull, false);
	check_packet(&cs, MEGPU_PKT_TIMESTAMP, 0,
		     (uint32_t[]){ 0x56789abc, 0x1234, 0x55667788,
				   0x11223344 }, MEGPU_PKT_TIMESTAMP_COUNT);
	megpu_cs_timestamp(&cs, A2, 88, true);
	check_packet(&cs, MEGPU_PKT_TIMESTAMP, MEGPU_TIMESTAMP_FLAG_IRQ,
		     (uint32_t[]){ A2, 0, 88, 0 }, MEGPU_PKT_TIMESTAMP_COUNT);

	megpu_cs_copy(&cs, A1, A2, 4096);
	check_packet(&cs, MEGPU_PKT_COPY, 0,
		     (uint32_t[]){ 0x56789abc, 0x1234, A2, 0, 4096 },
		     MEGPU_PKT_COPY_COUNT);

	megpu_cs_fill(&cs, A2, 64, 0xdeadbeef);
	check_packet(&cs, MEGPU_PKT_FILL, 0,
		     (uint32_t[]){ A2, 0, 64, 0xdeadbeef },
		     MEGPU_PKT_FILL_COUNT);

	megpu_cs_dispatch(&cs, MEGPU_KERNEL_SAXPY, A1, 1000, 2, 64, 4);
	check_packet(&cs, MEGPU_PKT_DISPATCH, 0,
		     (uint32_t[]){ MEGPU_KERNEL_SAXPY, 0x56789abc, 0x1234,
				   1000, 2, 64, 4 }, MEGPU_PKT_DISPATCH_COUNT);

	megpu_cs_set_context(&cs, A1, 9);
	check_packet(&cs, MEGPU_PKT_SET_CONTEXT, 0,
		     (uint32_t[]){ 0x56789abc, 0x1234, 9 },
		     MEGPU_PKT_SET_CONTEXT_COUNT);

	megpu_cs_signal(&cs, A2, 0x100000001ull);
	check_packet(&cs, MEGPU_PKT_SIGNAL, 0,
		     (uint32_t[]){ A2, 0, 1, 1 }, MEGPU_PKT_SIGNAL_COUNT);

	megpu_cs_wait(&cs, A1, 5);
	check_packet(&cs, MEGPU_PKT_WAIT, 0,
		     (uint32_t[]){ 0x56789abc, 0x1234, 5, 0 },
		     MEGPU_PKT_WAIT_COUNT);

	CHECK_EQ(megpu_cs_flush(&cs), 0);
	check_packet(&cs, MEGPU_PKT_FLUSH, 0, NULL, MEGPU_PKT_FLUSH_COUNT);
	CHECK_EQ(megpu_cs_idle_signal(&cs), 0);
	check_packet(&cs, MEGPU_PKT_IDLE_SIGNAL, 0, NULL,
		     MEGPU_PKT_IDLE_SIGNAL_COUNT);
	/* both are a bare header */
	megpu_cs_flush(&cs);
	megpu_cs_idle_signal(&cs);
	CHECK_EQ(cs.len, 2);
	CHECK_EQ(cs.dw[0], 0x0000000a);
	CHECK_EQ(cs.dw[1], 0x0000000b);
	megpu_cs_reset(&cs);

	/* work-groups of whole rows, within MEGPU_MAX_GROUP_SIZE */
	megpu_cs_dispatch_image(&cs, MEGPU_KERNEL_BLUR3X3, A2, 640, 480);
	check_packet(&cs, MEGPU_PKT_DISPATCH, 0,
		     (uint32_t[]){ MEGPU_KERNEL_BLUR3X3, A2, 0, 640, 480, 640,
				   1 }, MEGPU_PKT_DISPATCH_COUNT);
	megpu_cs_dispatch_image(&cs, MEGPU_KERNEL_SEPIA, A1, 30, 25);
	check_packet(&cs, MEGPU_PKT_DISPATCH, 0,
		     (uint32_t[]){ MEGPU_KERNEL_SEPIA, 0x56789abc, 0x1234, 30,
				   25, 30, 34 }, MEGPU_PKT_DISPATCH_COUNT);
	megpu_cs_dispatch_image(&cs, MEGPU_KERNEL_SEPIA, A2, 4000, 2);
	check_packet(&cs, MEGPU_PKT_DISPATCH, 0,
		     (uint32_t[]){ MEGPU_KERNEL_SEPIA, A2, 0, 4000, 2,
				   MEGPU_MAX_GROUP_SIZE, 1 },
		     MEGPU_PKT_DISPATCH_COUNT);

	megpu_cs_fini(&cs);
}

static void emit_errors_are_sticky(void)
{
	uint32_t v = 0;
	struct megpu_cs cs;

	megpu_cs_init(&cs);
	CHECK_EQ(megpu_cs_write_data(&cs, A1, &v, 0), -EINVAL);
	CHECK_EQ(megpu_cs_write_data(&cs, A1, &v, MEGPU_PKT_MAX_COUNT - 1),
		 -EINVAL);
	CHECK_EQ(megpu_cs_nop(&cs, 2), 0);
	CHECK_EQ(cs.error, -EINVAL);
	CHECK_EQ(cs.len, 3);
	CHECK_EQ(megpu_cs_packet(&cs, 0, 0, NULL, MEGPU_PKT_MAX_COUNT + 1),
		 -EINVAL);
	megpu_cs_reset(&cs);
	CHECK_EQ(cs.error, 0);
	CHECK_EQ(cs.len, 0);
	megpu_cs_fini(&cs);
}

/* One of each packet, as a stream, and the text the decoder gives it. */
static void build_all(struct megpu_cs *cs)
{
	uint32_t data[2] = { 0xa, 0xb };

	megpu_cs_nop(cs, 0);
	megpu_cs_nop(cs, 2);
	megpu_cs_ib(cs, A1, 12);
	megpu_cs_write_data(cs, A2, data, 2);
	megpu_cs_timestamp(cs, A1, 88, true);
	megpu_cs_timestamp(cs, A1, 0xffffffffffffffffull, false);
	megpu_cs_copy(cs, A1, A2, 4096);
	megpu_cs_fill(cs, A2, 64, 0xdeadbeef);
	megpu_cs_dispatch(cs, MEGPU_KERNEL_VADD, A1, 256, 1, 64, 1);
	megpu_cs_dispatch(cs, 200, A2, 1, 2, 3, 4);
	megpu_cs_set_context(cs, A2, 3);
	megpu_cs_signal(cs, A1, 5);
	megpu_cs_wait(cs, A1, 0x100000000ull);
	megpu_cs_packet(cs, MEGPU_PKT_SIGNAL, 0x80,
			(uint32_t[]){ 1, 0, 2, 0 }, 4);
	megpu_cs_flush(cs);
	megpu_cs_idle_signal(cs);
	megpu_cs_packet(cs, MEGPU_PKT_FLUSH, 0x4, NULL, 0);
	megpu_cs_dispatch(cs, MEGPU_KERNEL_BLUR3X3, A1, 64, 48, 32, 8);
	megpu_cs_dispatch(cs, MEGPU_KERNEL_SEPIA, A2, 64, 48, 32, 8);
	megpu_cs_set_mailbox(cs, A1, 64);
	megpu_cs_dispatch_program(cs, A2, 100, 1, 64, 1);
}

static const char *const all_text[] = {
	"NOP",
	"NOP count=2",
	"IB addr=0x123456789abc dwords=12",
	"WRITE_DATA addr=0xfedcba98 data=0xa,0xb",
	"TIMESTAMP addr=0x123456789abc value=88 irq",
	"TIMESTAMP addr=0x123456789abc value=18446744073709551615",
	"COPY src=0x123456789abc dst=0xfedcba98 bytes=4096",
	"FILL dst=0xfedcba98 bytes=64 value=0xdeadbeef",
	"DISPATCH kernel=vadd args=0x123456789abc grid=256x1 group=64x1",
	"DISPATCH kernel=200 args=0xfedcba98 grid=1x2 group=3x4",
	"SET_CONTEXT pt=0xfedcba98 ctx=3",
	"SIGNAL addr=0x123456789abc value=5",
	"WAIT addr=0x123456789abc value=4294967296",
	"SIGNAL addr=0x1 value=2 flags=0x80",
	"FLUSH",
	"IDLE_SIGNAL",
	"FLUSH flags=0x4",
	"DISPATCH kernel=blur3x3 args=0x123456789abc grid=64x48 group=32x8",
	"DISPATCH kernel=sepia args=0xfedcba98 grid=64x48 group=32x8",
	"SET_MAILBOX addr=0x123456789abc slots=64",
	"DISPATCH kernel=program args=0xfedcba98 grid=100x1 group=64x1",
};

#define NUM_TEXT (sizeof(all_text) / sizeof(all_text[0]))

struct lines {
	unsigned int n;
	int mismatch;
};

static void collect(void *priv, size_t dword, const char *text)
{
	struct lines *l = priv;

	(void)dword;
	if (l->n >= NUM_TEXT || strcmp(text, all_text[l->n])) {
		printf("#   line %u: got '%s', want '%s'\n", l->n, text,
		       l->n < NUM_TEXT ? all_text[l->n] : "(none)");
		l->mismatch = 1;
	}
	l->n++;
}

static void decode_every_packet(void)
{
	struct lines l = { 0, 0 };
	struct megpu_cs cs;

	megpu_cs_init(&cs);
	build_all(&cs);
	CHECK_EQ(cs.error, 0);
	CHECK_EQ(megpu_cs_decode(cs.dw, cs.len, collect, &l, NULL), NUM_TEXT);
	CHECK_EQ(l.n, NUM_TEXT);
	CHECK(!l.mismatch);
	megpu_cs_fini(&cs);
}

/* text -> dwords -> text, and dwords -> text -> dwords */
static void round_trip(void)
{
	struct megpu_cs cs, again;
	char buf[MEGPU_CS_LINE_MAX];
	unsigned int i;
	uint32_t pos;
	int n;

	megpu_cs_init(&cs);
	megpu_cs_init(&again);
	build_all(&cs);
	for (pos = 0, i = 0; pos < cs.len; i++) {
		n = megpu_cs_decode_one(cs.dw + pos, cs.len - pos, buf,
					sizeof(buf));
		CHECK(n > 0);
		if (n <= 0)
			break;
		CHECK_EQ(megpu_cs_parse_line(&again, buf, NULL, NULL), 0);
		pos += n;
	}
	CHECK_EQ(again.len, cs.len);
	CHECK(again.len == cs.len &&
	      !memcmp(again.dw, cs.dw, cs.len * 4));

	for (i = 0; i < NUM_TEXT; i++) {
		megpu_cs_reset(&again);
		CHECK_EQ(megpu_cs_parse_line(&again, all_text[i], NULL, NULL),
			 0);
		n = megpu_cs_decode_one(again.dw, again.len, buf, sizeof(buf));
		CHECK_EQ(n, again.len);
		if (strcmp(buf, all_text[i])) {
			printf("#   '%s' came back as '%s'\n", all_text[i],
			       buf);
			tap_cur_fail = 1;
		}
	}
	megpu_cs_fini(&cs);
	megpu_cs_fini(&again);
}

static void decode_rejects_truncated(void)
{
	char buf[MEGPU_CS_LINE_MAX];
	struct megpu_cs cs;
	uint32_t pos, len;
	size_t bad;
	int n;

	megpu_cs_init(&cs);
	build_all(&cs);
	/* Every packet with its last dword missing. */
	for (pos = 0; pos < cs.len; pos += len) {
		len = MEGPU_PKT_COUNT(cs.dw[pos]) + 1;
		if (len == 1)
			continue;
		n = megpu_cs_decode_one(cs.dw + pos, len - 1, buf,
					sizeof(buf));
		CHECK_EQ(n, -ENODATA);
		CHECK(!strncmp(buf, "error: truncated", 16));
	}
	CHECK_EQ(megpu_cs_decode_one(cs.dw, 0, buf, sizeof(buf)), -ENODATA);
	/* A whole stream cut short reports where. */
	CHECK_EQ(megpu_cs_decode(cs.dw, cs.len - 1, NULL, NULL, &bad),
		 -ENODATA);
	CHECK_EQ(bad, cs.len - 8);
	megpu_cs_fini(&cs);
}

static void decode_rejects_bad_packets(void)
{
	char buf[MEGPU_CS_LINE_MAX];
	uint32_t dw[8] = { 0 };
	unsigned int op;

	for (op = MEGPU_PKT_SET_MAILBOX + 1; op <= 0xff; op++) {
		dw[0] = MEGPU_PKT_HEADER(op, 0, 0);
		CHECK_EQ(megpu_cs_decode_one(dw, 8, buf, sizeof(buf)),
			 -EINVAL);
	}
	CHECK(!strncmp(buf, "error: unknown opcode 0xff", 26));

	/* Fixed-size packets with a wrong count, WRITE_DATA with no data. */
	dw[0] = MEGPU_PKT_HEADER(MEGPU_PKT_TIMESTAMP, 3, 0);
	CHECK_EQ(megpu_cs_decode_one(dw, 8, buf, sizeof(buf)), -EBADMSG);
	dw[0] = MEGPU_PKT_HEADER(MEGPU_PKT_COPY, 6, 0);
	CHECK_EQ(megpu_cs_decode_one(dw, 8, buf, sizeof(buf)), -EBADMSG);
	dw[0] = MEGPU_PKT_HEADER(MEGPU_PKT_WRITE_DATA, 2, 0);
	CHECK_EQ(megpu_cs_decode_one(dw, 8, buf, sizeof(buf)), -EBADMSG);
	dw[0] = MEGPU_PKT_HEADER(MEGPU_PKT_IB, 0, 0);
	CHECK_EQ(megpu_cs_decode_one(dw, 8, buf, sizeof(buf)), -EBADMSG);
	CHECK(!strncmp(buf, "error: bad payload length for IB", 32));
	/* FLUSH and IDLE_SIGNAL have no payload */
	dw[0] = MEGPU_PKT_HEADER(MEGPU_PKT_FLUSH, 1, 0);
	CHECK_EQ(megpu_cs_decode_one(dw, 8, buf, sizeof(buf)), -EBADMSG);
	CHECK(!strcmp(buf, "error: bad payload length for FLUSH "
		      "(header 0x0000010a)"));
	dw[0] = MEGPU_PKT_HEADER(MEGPU_PKT_IDLE_SIGNAL, 4, 0);
	CHECK_EQ(megpu_cs_decode_one(dw, 8, buf, sizeof(buf)), -EBADMSG);
	CHECK(!strncmp(buf, "error: bad payload length for IDLE_SIGNAL",
		       41));
	dw[0] = MEGPU_PKT_HEADER(MEGPU_PKT_FLUSH, 0, 0);
	CHECK_EQ(megpu_cs_decode_one(dw, 1, buf, sizeof(buf)), 1);
	CHECK(!strcmp(buf, "FLUSH"));
}

static int resolve(void *priv, const char *name, uint64_t *addr)
{
	(void)priv;
	if (strcmp(name, "buf"))
		return -ENOENT;
	*addr = 0x10000;
	return 0;
}

static void parse_symbols_and_errors(void)
{
	static const char *const bad[] = {
		"BOGUS addr=1",
		"WRITE_DATA addr=1",
		"WRITE_DATA addr=1 data=",
		"WRITE_DATA addr=1 data=1,x",
		"TIMESTAMP addr=1 value=2 irq=1",
		"TIMESTAMP addr=1 value=2 extra",
		"COPY src=1 dst=2",
		"COPY src=1 dst=2 bytes=-4",
		"FILL dst=1 bytes=4 value=0x100000000",
		"DISPATCH kernel=nope args=1 grid=1x1 group=1x1",
		"DISPATCH kernel=vadd args=1 grid=1 group=1x1",
		"NOP count=65536",
		"SIGNAL addr=@buf value=1",	/* no resolver */
		"FLUSH addr=1",
		"FLUSH 0",
		"IDLE_SIGNAL count=1",
		"FLUSH flags=0x100",
		"DISPATCH kernel=blur args=1 grid=1x1 group=1x1",
	};
	struct megpu_cs cs;
	unsigned int i;

	megpu_cs_init(&cs);
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		if (megpu_cs_parse_line(&cs, bad[i], NULL, NULL) != -EINVAL) {
			printf("#   accepted '%s'\n", bad[i]);
			tap_cur_fail = 1;
		}
	}
	CHECK_EQ(cs.len, 0);

	CHECK_EQ(megpu_cs_parse_line(&cs, "  # comment", resolve, NULL), 0);
	CHECK_EQ(megpu_cs_parse_line(&cs, "", resolve, NULL), 0);
	CHECK_EQ(cs.len, 0);
	CHECK_EQ(megpu_cs_parse_line(&cs, "fill dst=@buf+0x40 bytes=8 "
				     "value=7 # tail", resolve, NULL), 0);
	check_packet(&cs, MEGPU_PKT_FILL, 0,
		     (uint32_t[]){ 0x10040, 0, 8, 7 }, MEGPU_PKT_FILL_COUNT);
	CHECK_EQ(megpu_cs_parse_line(&cs, "COPY src=@nope dst=0 bytes=4",
				     resolve, NULL), -ENOENT);
	CHECK_EQ(megpu_cs_parse_line(&cs, "flush  # drain", NULL, NULL), 0);
	check_packet(&cs, MEGPU_PKT_FLUSH, 0, NULL, 0);
	CHECK_EQ(megpu_cs_parse_line(&cs, "Idle_Signal", NULL, NULL), 0);
	check_packet(&cs, MEGPU_PKT_IDLE_SIGNAL, 0, NULL, 0);
	megpu_cs_fini(&cs);
}

static void growth(void)
{
	struct megpu_cs cs;
	uint32_t i, pos, count = 0;
	int ok = 1;

	megpu_cs_init(&cs);
	for (i = 0; i < 20000; i++)
		megpu_cs_write32(&cs, 4 * i, i);
	CHECK_EQ(cs.error, 0);
	CHECK_EQ(cs.len, 20000 * 4);
	CHECK(cs.cap >= cs.len);
	for (pos = 0; pos < cs.len; pos += 4, count++)
		ok &= cs.dw[pos] == MEGPU_PKT_HEADER(MEGPU_PKT_WRITE_DATA,
						     3, 0) &&
		      cs.dw[pos + 1] == 4 * count && cs.dw[pos + 3] == count;
	CHECK(ok);
	CHECK_EQ(megpu_cs_decode(cs.dw, cs.len, NULL, NULL, NULL), 20000);
	/* A packet bigger than the first allocation. */
	megpu_cs_fini(&cs);
	CHECK_EQ(megpu_cs_nop(&cs, MEGPU_PKT_MAX_COUNT), 0);
	CHECK_EQ(cs.len, MEGPU_PKT_MAX_COUNT + 1);
	megpu_cs_fini(&cs);
}

static void kargs_layout(void)
{
	struct megpu_kargs k = {
		.ptr = { 0x1111222233334444ull, 0x5566, 0x77000000ull << 8,
			 0xffffffffffffffffull },
		.n = 1000,
		.param = { megpu_f32_bits(2.5f), 7, 0x80000000 },
	}, back;
	uint8_t b[MEGPU_KARGS_SIZE + 8];
	struct megpu_bo bo = { .size = 64, .va = 0x4000, .map = b };
	uint64_t va;

	CHECK_EQ(MEGPU_KARGS_SIZE, 48);
	memset(b, 0xcc, sizeof(b));
	megpu_kargs_pack(b, &k);
	CHECK_EQ(b[MEGPU_KARGS_PTR(0)], 0x44);
	CHECK_EQ(b[MEGPU_KARGS_PTR(0) + 7], 0x11);
	CHECK_EQ(b[MEGPU_KARGS_PTR(1)], 0x66);
	CHECK_EQ(b[MEGPU_KARGS_PTR(1) + 1], 0x55);
	CHECK_EQ(b[MEGPU_KARGS_PTR(2) + 4], 0x77);
	CHECK_EQ(b[MEGPU_KARGS_PTR(3) + 7], 0xff);
	CHECK_EQ(b[MEGPU_KARGS_N], 1000 & 0xff);
	CHECK_EQ(b[MEGPU_KARGS_N + 1], 1000 >> 8);
	CHECK_EQ(b[MEGPU_KARGS_PARAM(0) + 3], 0x40);	/* 2.5f = 0x40200000 */
	CHECK_EQ(b[MEGPU_KARGS_PARAM(0) + 2], 0x20);
	CHECK_EQ(b[MEGPU_KARGS_PARAM(1)], 7);
	CHECK_EQ(b[MEGPU_KARGS_PARAM(2) + 3], 0x80);
	CHECK_EQ(b[MEGPU_KARGS_SIZE], 0xcc);	/* nothing past the block */
	megpu_kargs_unpack(b, &back);
	CHECK(!memcmp(&k, &back, sizeof(k)));

	CHECK_EQ(megpu_kargs_write(&bo, 8, &k, &va), 0);
	CHECK_EQ(va, 0x4008);
	CHECK_EQ(b[8 + MEGPU_KARGS_N], 1000 & 0xff);
	CHECK_EQ(megpu_kargs_write(&bo, 4, &k, NULL), -EINVAL);
	CHECK_EQ(megpu_kargs_write(&bo, 24, &k, NULL), -EINVAL);
	bo.map = NULL;
	CHECK_EQ(megpu_kargs_write(&bo, 0, &k, NULL), -EINVAL);
}

static void names_and_engine_tables(void)
{
	unsigned int k;

	for (k = 0; k < MEGPU_KERNEL_COUNT; k++)
		CHECK_EQ(megpu_kernel_by_name(megpu_kernel_name(k)), k);
	CHECK(megpu_kernel_name(MEGPU_KERNEL_COUNT) == NULL);
	CHECK_EQ(megpu_kernel_by_name("SAXPY"), MEGPU_KERNEL_SAXPY);
	for (k = 0; k <= MEGPU_PKT_SET_MAILBOX; k++)
		CHECK_EQ(megpu_packet_by_name(megpu_packet_name(k)), k);
	CHECK(megpu_packet_name(MEGPU_PKT_SET_MAILBOX + 1) == NULL);
	CHECK_EQ(megpu_packet_by_name("FLUSH"), MEGPU_PKT_FLUSH);
	CHECK_EQ(megpu_packet_by_name("idle_signal"), MEGPU_PKT_IDLE_SIGNAL);
	CHECK_EQ(megpu_packet_by_name("BOGUS"), -EINVAL);
	CHECK_EQ(megpu_kernel_by_name("blur3x3"), MEGPU_KERNEL_BLUR3X3);
	CHECK_EQ(megpu_kernel_by_name("SEPIA"), MEGPU_KERNEL_SEPIA);
	CHECK_EQ(megpu_kernel_by_name("nope"), -EINVAL);
	for (k = 0; k < MEGPU_ENGINE_NUM_TYPES; k++) {
		CHECK(megpu_engine_packets(k) & MEGPU_BIT(MEGPU_PKT_FLUSH));
		CHECK(megpu_engine_packets(k) &
		      MEGPU_BIT(MEGPU_PKT_IDLE_SIGNAL));
	}
	CHECK_EQ(megpu_engine_type_by_name("copy"), MEGPU_ENGINE_COPY);
	CHECK_EQ(megpu_engine_type_by_name("blit"), -EINVAL);

	CHECK(megpu_engine_packets(MEGPU_ENGINE_GFX) &
	      MEGPU_BIT(MEGPU_PKT_COPY));
	CHECK(!(megpu_engine_packets(MEGPU_ENGINE_COMPUTE) &
		MEGPU_BIT(MEGPU_PKT_COPY)));
	CHECK(!(megpu_engine_packets(MEGPU_ENGINE_COPY) &
		MEGPU_BIT(MEGPU_PKT_DISPATCH)));
	CHECK(!(megpu_engine_packets(MEGPU_ENGINE_VIDEO) &
		MEGPU_BIT(MEGPU_PKT_FILL)));
	CHECK_EQ(megpu_engine_kernels(MEGPU_ENGINE_VIDEO),
		 MEGPU_BIT(MEGPU_KERNEL_CHECKSUM) |
		 MEGPU_BIT(MEGPU_KERNEL_BLUR3X3) |
		 MEGPU_BIT(MEGPU_KERNEL_SEPIA));
	CHECK_EQ(megpu_engine_kernels(MEGPU_ENGINE_COPY), 0);
	CHECK_EQ(megpu_engine_kernels(MEGPU_ENGINE_COMPUTE),
		 MEGPU_KERNELS_ALL);
	CHECK_EQ(megpu_engine_packets(7), 0);
}

static void kernel_reference(void)
{
	uint32_t a[4] = { 1, 2, 3, 0xffffffff }, b[4] = { 10, 20, 30, 2 };
	uint32_t c[4] = { 0 }, sum = 5;
	uint32_t p[3] = { 7, 0, 0 };
	uint32_t *ptr[4] = { a, b, c, NULL };
	uint32_t *sptr[4] = { a, &sum, NULL, NULL };
	float x;

	CHECK_EQ(megpu_kernel_ref(MEGPU_KERNEL_VADD, ptr, 4, p), 0);
	CHECK_EQ(c[0], 11);
	CHECK_EQ(c[3], 1);	/* wraps */
	CHECK_EQ(megpu_kernel_ref(MEGPU_KERNEL_CHECKSUM, sptr, 4, p), 0);
	CHECK_EQ(sum, 5 + 1 + 2 + 3 + 0xffffffffu);
	CHECK_EQ(megpu_kernel_ref(MEGPU_KERNEL_INCREMENT, ptr, 2, p), 0);
	CHECK_EQ(a[0], 2);
	CHECK_EQ(a[2], 3);	/* past n: untouched */
	CHECK_EQ(megpu_kernel_ref(MEGPU_KERNEL_COPY, ptr, 3, p), 0);
	CHECK_EQ(b[1], 3);
	CHECK_EQ(b[3], 2);
	CHECK_EQ(megpu_kernel_ref(MEGPU_KERNEL_FILL, ptr, 4, p), 0);
	CHECK_EQ(a[3], 7);
	a[0] = megpu_f32_bits(3.0f);
	b[0] = megpu_f32_bits(1.5f);
	p[0] = megpu_f32_bits(2.0f);
	CHECK_EQ(megpu_kernel_ref(MEGPU_KERNEL_SAXPY, ptr, 1, p), 0);
	memcpy(&x, &b[0], 4);
	CHECK(x == 7.5f);
	CHECK_EQ(megpu_kernel_ref(MEGPU_KERNEL_COUNT, ptr, 1, p), -EINVAL);
}

#define PX(r, g, b, a) \
	((uint32_t)(r) | (uint32_t)(g) << 8 | (uint32_t)(b) << 16 | \
	 (uint32_t)(a) << 24)

/* BLUR3X3 on tiny images whose results are worked out by hand. */
static void blur_reference(void)
{
	uint32_t one = PX(1, 2, 3, 4), out = 0;
	/* 3x1, red 0, 9, 18: (0+0+9)*3/9, (0+9+18)*3/9, (9+18+18)*3/9 */
	uint32_t row[3] = { PX(0, 0, 0, 0), PX(9, 0, 0, 0), PX(18, 0, 0, 0) };
	uint32_t row_out[3];
	/*
	 * 2x2, alpha 0 / 255 / 255 / 255: (0,0) sees the 0 four times and
	 * 255 five times, 1275 / 9 = 141.67 -> 141 (rounded down); (1,0)
	 * and (0,1) see it twice, 1785 / 9 = 198.33 -> 198; (1,1) once,
	 * 2040 / 9 = 226.67 -> 226. Green 8 everywhere stays 8; blue 1 at
	 * (1,1) only is seen 4, 2 or 1 times: 4/9 and less -> 0.
	 */
	uint32_t sq[4] = { PX(0, 8, 0, 0), PX(0, 8, 0, 255),
			   PX(0, 8, 0, 255), PX(0, 8, 1, 255) };
	uint32_t sq_want[4] = { PX(0, 8, 0, 141), PX(0, 8, 0, 198),
				PX(0, 8, 0, 198), PX(0, 8, 0, 226) };
	uint32_t sq_out[4];
	/* the same 2x2 with a pitch of 3: padding not read, not written */
	uint32_t padded[6] = { sq[0], sq[1], 0xdeadbeef,
			       sq[2], sq[3], 0xffffffff };
	uint32_t padded_out[6] = { 0, 0, 0x5a5a5a5a, 0, 0, 0x5a5a5a5a };
	uint32_t *ptr[4] = { padded, padded_out, NULL, NULL };
	uint32_t param[3] = { 2, 2, 3 };
	unsigned int i;

	megpu_ref_blur3x3(&one, &out, 1, 1, 1);
	CHECK_EQ(out, one);
	megpu_ref_blur3x3(row, row_out, 3, 1, 3);
	CHECK_EQ(row_out[0], PX(3, 0, 0, 0));
	CHECK_EQ(row_out[1], PX(9, 0, 0, 0));
	CHECK_EQ(row_out[2], PX(15, 0, 0, 0));
	megpu_ref_blur3x3(sq, sq_out, 2, 2, 2);
	for (i = 0; i < 4; i++)
		CHECK_EQ(sq_out[i], sq_want[i]);

	CHECK_EQ(megpu_kernel_ref(MEGPU_KERNEL_BLUR3X3, ptr, 0, param), 0);
	CHECK_EQ(padded_out[0], sq_want[0]);
	CHECK_EQ(padded_out[1], sq_want[1]);
	CHECK_EQ(padded_out[2], 0x5a5a5a5a);
	CHECK_EQ(padded_out[3], sq_want[2]);
	CHECK_EQ(padded_out[4], sq_want[3]);
	CHECK_EQ(padded_out[5], 0x5a5a5a5a);
	param[2] = 1;	/* pitch below the width */
	CHECK_EQ(megpu_kernel_ref(MEGPU_KERNEL_BLUR3X3, ptr, 0, param),
		 -EINVAL);
}

/* SEPIA's weights, the min(255, ...) and alpha kept. */
static void sepia_reference(void)
{
	/*
	 * r 100 g 50 b 20: (39300 + 38450 + 3780) / 1000 = 81,
	 * (34900 + 34300 + 3360) / 1000 = 72, (27200 + 26700 + 2620) / 1000
	 * = 56. White saturates r and g; b is 937 * 255 / 1000 = 238.
	 */
	uint32_t in[4] = { PX(100, 50, 20, 0x7f), PX(255, 255, 255, 255),
			   PX(0, 0, 0, 0x80), PX(0, 0, 255, 1) };
	uint32_t want[4] = { PX(81, 72, 56, 0x7f), PX(255, 255, 238, 255),
			     PX(0, 0, 0, 0x80), PX(48, 42, 33, 1) };
	uint32_t out[4] = { 0 };
	uint32_t *ptr[4] = { in, out, NULL, NULL };
	uint32_t param[3] = { 2, 2, 2 };
	unsigned int i;

	for (i = 0; i < 4; i++)
		CHECK_EQ(megpu_ref_sepia_px(in[i]), want[i]);
	megpu_ref_sepia(in, out, 4, 1, 4);
	for (i = 0; i < 4; i++)
		CHECK_EQ(out[i], want[i]);
	memset(out, 0, sizeof(out));
	CHECK_EQ(megpu_kernel_ref(MEGPU_KERNEL_SEPIA, ptr, 0, param), 0);
	for (i = 0; i < 4; i++)
		CHECK_EQ(out[i], want[i]);
	/* a 1x2 image with pitch 2: only column 0 */
	memset(out, 0, sizeof(out));
	param[0] = 1;
	CHECK_EQ(megpu_kernel_ref(MEGPU_KERNEL_SEPIA, ptr, 0, param), 0);
	CHECK_EQ(out[0], want[0]);
	CHECK_EQ(out[1], 0);
	CHECK_EQ(out[2], want[2]);
	CHECK_EQ(out[3], 0);
}

int main(void)
{
	printf("TAP version 13\n");
	TEST_RUN(encode_every_packet);
	TEST_RUN(emit_errors_are_sticky);
	TEST_RUN(decode_every_packet);
	TEST_RUN(round_trip);
	TEST_RUN(decode_rejects_truncated);
	TEST_RUN(decode_rejects_bad_packets);
	TEST_RUN(parse_symbols_and_errors);
	TEST_RUN(growth);
	TEST_RUN(kargs_layout);
	TEST_RUN(names_and_engine_tables);
	TEST_RUN(kernel_reference);
	TEST_RUN(blur_reference);
	TEST_RUN(sepia_reference);
	return tap_done();
}
