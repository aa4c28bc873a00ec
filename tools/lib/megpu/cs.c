// SPDX-License-Identifier: MIT
/*
 * The command-stream builder: one emitter per packet of the hardware
 * contract, a decoder to one text line per packet, and a parser of those
 * lines. Pure logic, no device access (the host unit tests link it).
 */

#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "megpu_hw_packets.h"
#include "libmegpu.h"

#define CS_MIN_CAP 64

/* Payload length of each opcode, unless variable (NOP, WRITE_DATA). */
static const struct {
	const char *name;
	unsigned int count;
	bool variable;
} packets[] = {
	[MEGPU_PKT_NOP] = { "NOP", 0, true },
	[MEGPU_PKT_IB] = { "IB", MEGPU_PKT_IB_COUNT },
	[MEGPU_PKT_WRITE_DATA] = { "WRITE_DATA", 0, true },
	[MEGPU_PKT_TIMESTAMP] = { "TIMESTAMP", MEGPU_PKT_TIMESTAMP_COUNT },
	[MEGPU_PKT_COPY] = { "COPY", MEGPU_PKT_COPY_COUNT },
	[MEGPU_PKT_FILL] = { "FILL", MEGPU_PKT_FILL_COUNT },
	[MEGPU_PKT_DISPATCH] = { "DISPATCH", MEGPU_PKT_DISPATCH_COUNT },
	[MEGPU_PKT_SET_CONTEXT] = { "SET_CONTEXT",
				    MEGPU_PKT_SET_CONTEXT_COUNT },
	[MEGPU_PKT_SIGNAL] = { "SIGNAL", MEGPU_PKT_SIGNAL_COUNT },
	[MEGPU_PKT_WAIT] = { "WAIT", MEGPU_PKT_WAIT_COUNT },
	[MEGPU_PKT_FLUSH] = { "FLUSH", MEGPU_PKT_FLUSH_COUNT },
	[MEGPU_PKT_IDLE_SIGNAL] = { "IDLE_SIGNAL",
				    MEGPU_PKT_IDLE_SIGNAL_COUNT },
	[MEGPU_PKT_SET_MAILBOX] = { "SET_MAILBOX",
				    MEGPU_PKT_SET_MAILBOX_COUNT },
};

#define NUM_PACKETS (sizeof(packets) / sizeof(packets[0]))

const char *megpu_packet_name(unsigned int op)
{
	return op < NUM_PACKETS ? packets[op].name : NULL;
}

int megpu_packet_by_name(const char *name)
{
	unsigned int op;

	for (op = 0; op < NUM_PACKETS; op++)
		if (packets[op].name && !strcasecmp(name, packets[op].name))
			return op;
	return -EINVAL;
}

void megpu_cs_init(struct megpu_cs *cs)
{
	memset(cs, 0, sizeof(*cs));
}

void megpu_cs_fini(struct megpu_cs *cs)
{
	free(cs->dw);
	megpu_cs_init(cs);
}

void megpu_cs_reset(struct megpu_cs *cs)
{
	cs->len = 0;
	cs->error = 0;
}

static int cs_fail(struct megpu_cs *cs, int err)
{
	if (!cs->error)
		cs->error = err;
	return err;
}

/* Make room for @n more dwords, doubling so emits stay amortized O(1). */
static int cs_reserve(struct megpu_cs *cs, uint32_t n)
{
	uint64_t need = (uint64_t)cs->len + n;
	uint32_t cap = cs->cap ? cs->cap : CS_MIN_CAP;
	uint32_t *dw;

	if (need <= cs->cap)
		return 0;
	if (need > UINT32_MAX / 8)
		return cs_fail(cs, -E2BIG);
	while (cap < need)
		cap *= 2;
	dw = realloc(cs->dw, (size_t)cap * 4);
	if (!dw)
		return cs_fail(cs, -ENOMEM);
	cs->dw = dw;
	cs->cap = cap;
	return 0;
}

int megpu_cs_packet(struct megpu_cs *cs, unsigned int op, unsigned int flags,
		    const uint32_t *payload, unsigned int count)
{
	int ret;

	if (count > MEGPU_PKT_MAX_COUNT)
		return cs_fail(cs, -EINVAL);
	ret = cs_reserve(cs, count + 1);
	if (ret)
		return ret;
	cs->dw[cs->len++] = MEGPU_PKT_HEADER(op, count, flags);
	if (payload)
		memcpy(&cs->dw[cs->len], payload, count * 4);
	else
		memset(&cs->dw[cs->len], 0, count * 4);
	cs->len += count;
	return 0;
}

#define LO(v) ((uint32_t)(v))
#define HI(v) ((uint32_t)((uint64_t)(v) >> 32))

int megpu_cs_nop(struct megpu_cs *cs, unsigned int count)
{
	return megpu_cs_packet(cs, MEGPU_PKT_NOP, 0, NULL, count);
}

int megpu_cs_ib(struct megpu_cs *cs, uint64_t addr, uint32_t dwords)
{
	uint32_t p[MEGPU_PKT_IB_COUNT] = { LO(addr), HI(addr), dwords };

	return megpu_cs_packet(cs, MEGPU_PKT_IB, 0, p, MEGPU_PKT_IB_COUNT);
}

int megpu_cs_write_data(struct megpu_cs *cs, uint64_t addr,
			const uint32_t *data, unsigned int n)
{
	int ret;

	if (!n || n > MEGPU_PKT_MAX_COUNT - 2)
		return cs_fail(cs, -EINVAL);
	ret = cs_reserve(cs, n + 3);
	if (ret)
		return ret;
	cs->dw[cs->len++] = MEGPU_PKT_HEADER(MEGPU_PKT_WRITE_DATA, n + 2, 0);
	cs->dw[cs->len++] = LO(addr);
	cs->dw[cs->len++] = HI(addr);
	memcpy(&cs->dw[cs->len], data, n * 4);
	cs->len += n;
	return 0;
}

int megpu_cs_write32(struct megpu_cs *cs, uint64_t addr, uint32_t value)
{
	return megpu_cs_write_data(cs, addr, &value, 1);
}

/* The packets that are an address and a 64-bit value. */
static int cs_addr_value(struct megpu_cs *cs, unsigned int op,
			 unsigned int flags, uint64_t addr, uint64_t value)
{
	uint32_t p[4] = { LO(addr), HI(addr), LO(value), HI(value) };

	return megpu_cs_packet(cs, op, flags, p, 4);
}

int megpu_cs_timestamp(struct megpu_cs *cs, uint64_t addr, uint64_t value,
		       bool irq)
{
	return cs_addr_value(cs, MEGPU_PKT_TIMESTAMP,
			     irq ? MEGPU_TIMESTAMP_FLAG_IRQ : 0, addr, value);
}

int megpu_cs_copy(struct megpu_cs *cs, uint64_t src, uint64_t dst,
		  uint32_t bytes)
{
	uint32_t p[MEGPU_PKT_COPY_COUNT] = {
		LO(src), HI(src), LO(dst), HI(dst), bytes,
	};

	return megpu_cs_packet(cs, MEGPU_PKT_COPY, 0, p, MEGPU_PKT_COPY_COUNT);
}

int megpu_cs_fill(struct megpu_cs *cs, uint64_t dst, uint32_t bytes,
		  uint32_t value)
{
	uint32_t p[MEGPU_PKT_FILL_COUNT] = { LO(dst), HI(dst), bytes, value };

	return megpu_cs_packet(cs, MEGPU_PKT_FILL, 0, p, MEGPU_PKT_FILL_COUNT);
}

int megpu_cs_dispatch(struct megpu_cs *cs, unsigned int kernel, uint64_t args,
		      uint32_t grid_x, uint32_t grid_y, uint32_t group_x,
		      uint32_t group_y)
{
	uint32_t p[MEGPU_PKT_DISPATCH_COUNT] = {
		kernel, LO(args), HI(args), grid_x, grid_y, group_x, group_y,
	};

	return megpu_cs_packet(cs, MEGPU_PKT_DISPATCH, 0, p,
			       MEGPU_PKT_DISPATCH_COUNT);
}

int megpu_cs_dispatch_program(struct megpu_cs *cs, uint64_t pargs,
			      uint32_t grid_x, uint32_t grid_y,
			      uint32_t group_x, uint32_t group_y)
{
	return megpu_cs_dispatch(cs, MEGPU_KERNEL_PROGRAM, pargs, grid_x,
				 grid_y, group_x, group_y);
}

int megpu_cs_set_context(struct megpu_cs *cs, uint64_t pt_base,
			 uint32_t ctx_id)
{
	uint32_t p[MEGPU_PKT_SET_CONTEXT_COUNT] = {
		LO(pt_base), HI(pt_base), ctx_id,
	};

	return megpu_cs_packet(cs, MEGPU_PKT_SET_CONTEXT, 0, p,
			       MEGPU_PKT_SET_CONTEXT_COUNT);
}

int megpu_cs_set_mailbox(struct megpu_cs *cs, uint64_t addr, uint32_t slots)
{
	uint32_t p[MEGPU_PKT_SET_MAILBOX_COUNT] = { LO(addr), HI(addr), slots };

	return megpu_cs_packet(cs, MEGPU_PKT_SET_MAILBOX, 0, p,
			       MEGPU_PKT_SET_MAILBOX_COUNT);
}

int megpu_cs_signal(struct megpu_cs *cs, uint64_t addr, uint64_t value)
{
	return cs_addr_value(cs, MEGPU_PKT_SIGNAL, 0, addr, value);
}

int megpu_cs_wait(struct megpu_cs *cs, uint64_t addr, uint64_t value)
{
	return cs_addr_value(cs, MEGPU_PKT_WAIT, 0, addr, value);
}

int megpu_cs_flush(struct megpu_cs *cs)
{
	return megpu_cs_packet(cs, MEGPU_PKT_FLUSH, 0, NULL,
			       MEGPU_PKT_FLUSH_COUNT);
}

int megpu_cs_idle_signal(struct megpu_cs *cs)
{
	return megpu_cs_packet(cs, MEGPU_PKT_IDLE_SIGNAL, 0, NULL,
			       MEGPU_PKT_IDLE_SIGNAL_COUNT);
}

int megpu_cs_dequeue(struct megpu_cs *cs, uint64_t queues, uint32_t count,
		     uint32_t home, uint32_t flags)
{
	uint32_t p[MEGPU_PKT_DEQUEUE_COUNT] = {
		LO(queues), HI(queues), count, home, flags,
	};

	return megpu_cs_packet(cs, MEGPU_PKT_DEQUEUE, 0, p,
			       MEGPU_PKT_DEQUEUE_COUNT);
}

int megpu_cs_dispatch_image(struct megpu_cs *cs, unsigned int kernel,
			    uint64_t args, uint32_t width, uint32_t height)
{
	uint32_t gx = width < MEGPU_MAX_GROUP_SIZE ? width :
		      MEGPU_MAX_GROUP_SIZE;

	if (!gx)
		gx = 1;
	return megpu_cs_dispatch(cs, kernel, args, width, height, gx,
				 MEGPU_MAX_GROUP_SIZE / gx);
}

/* --- decoding --- */

struct out {
	char *buf;
	size_t len, pos;
};

static void put(struct out *o, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static void put(struct out *o, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (!o->len)
		return;
	va_start(ap, fmt);
	n = vsnprintf(o->buf + o->pos, o->len - o->pos, fmt, ap);
	va_end(ap);
	if (n > 0)
		o->pos += (size_t)n;
	if (o->pos >= o->len)
		o->pos = o->len - 1;
}

static uint64_t q(const uint32_t *p)
{
	return p[0] | (uint64_t)p[1] << 32;
}

static int decode_error(struct out *o, int err, const char *what,
			uint32_t h)
{
	const char *name = megpu_packet_name(MEGPU_PKT_OPCODE(h));

	o->pos = 0;
	if (o->len)
		o->buf[0] = '\0';
	if (name)
		put(o, "error: %s %s (header 0x%08x)", what, name, h);
	else
		put(o, "error: %s 0x%02x (header 0x%08x)", what,
		    MEGPU_PKT_OPCODE(h), h);
	return err;
}

int megpu_cs_decode_one(const uint32_t *dw, size_t n, char *buf, size_t len)
{
	struct out o = { buf, len, 0 };
	unsigned int op, count, flags, i;
	const uint32_t *p;
	const char *kname;

	if (len)
		buf[0] = '\0';
	if (!n) {
		put(&o, "error: no packet");
		return -ENODATA;
	}
	op = MEGPU_PKT_OPCODE(dw[0]);
	count = MEGPU_PKT_COUNT(dw[0]);
	flags = MEGPU_PKT_FLAGS(dw[0]);
	p = dw + 1;

	if (op >= NUM_PACKETS || !packets[op].name)
		return decode_error(&o, -EINVAL, "unknown opcode", dw[0]);
	if (!packets[op].variable ? count != packets[op].count :
	    op == MEGPU_PKT_WRITE_DATA && count < 3)
		return decode_error(&o, -EBADMSG, "bad payload length for",
				    dw[0]);
	if (count + 1 > n)
		return decode_error(&o, -ENODATA, "truncated", dw[0]);

	put(&o, "%s", packets[op].name);
	switch (op) {
	case MEGPU_PKT_NOP:
		if (count)
			put(&o, " count=%u", count);
		break;
	case MEGPU_PKT_IB:
		put(&o, " addr=0x%" PRIx64 " dwords=%u", q(p), p[2]);
		break;
	case MEGPU_PKT_WRITE_DATA:
		put(&o, " addr=0x%" PRIx64 " data=", q(p));
		for (i = 2; i < count; i++)
			put(&o, "%s0x%x", i > 2 ? "," : "", p[i]);
		break;
	case MEGPU_PKT_TIMESTAMP:
		put(&o, " addr=0x%" PRIx64 " value=%" PRIu64, q(p), q(p + 2));
		if (flags & MEGPU_TIMESTAMP_FLAG_IRQ)
			put(&o, " irq");
		flags &= ~MEGPU_TIMESTAMP_FLAG_IRQ;
		break;
	case MEGPU_PKT_COPY:
		put(&o, " src=0x%" PRIx64 " dst=0x%" PRIx64 " bytes=%u",
		    q(p), q(p + 2), p[4]);
		break;
	case MEGPU_PKT_FILL:
		put(&o, " dst=0x%" PRIx64 " bytes=%u value=0x%x", q(p), p[2],
		    p[3]);
		break;
	case MEGPU_PKT_DISPATCH:
		kname = megpu_kernel_name(p[0]);
		if (kname)
			put(&o, " kernel=%s", kname);
		else
			put(&o, " kernel=%u", p[0]);
		put(&o, " args=0x%" PRIx64 " grid=%ux%u group=%ux%u",
		    q(p + 1), p[3], p[4], p[5], p[6]);
		break;
	case MEGPU_PKT_SET_CONTEXT:
		put(&o, " pt=0x%" PRIx64 " ctx=%u", q(p), p[2]);
		break;
	case MEGPU_PKT_SET_MAILBOX:
		put(&o, " addr=0x%" PRIx64 " slots=%u", q(p), p[2]);
		break;
	case MEGPU_PKT_SIGNAL:
	case MEGPU_PKT_WAIT:
		put(&o, " addr=0x%" PRIx64 " value=%" PRIu64, q(p), q(p + 2));
		break;
	}
	if (flags)
		put(&o, " flags=0x%x", flags);
	return (int)count + 1;
}

int megpu_cs_decode(const uint32_t *dw, size_t n,
		    void (*line)(void *priv, size_t dword, const char *text),
		    void *priv, size_t *bad_dword)
{
	char buf[MEGPU_CS_LINE_MAX];
	size_t pos = 0;
	int packets_seen = 0, ret;

	while (pos < n) {
		ret = megpu_cs_decode_one(dw + pos, n - pos, buf, sizeof(buf));
		if (line)
			line(priv, pos, buf);
		if (ret < 0) {
			if (bad_dword)
				*bad_dword = pos;
			return ret;
		}
		pos += (size_t)ret;
		packets_seen++;
	}
	return packets_seen;
}

/* --- parsing --- */

#define MAX_TOKENS 8
#define MAX_DATA 256

struct parse {
	char *key[MAX_TOKENS];
	char *val[MAX_TOKENS];	/* NULL for a bare word such as "irq" */
	unsigned int n;
	unsigned int used;	/* bit per token consumed */
	megpu_cs_resolve_fn resolve;
	void *priv;
};

static int find(struct parse *ps, const char *key)
{
	unsigned int i;

	for (i = 0; i < ps->n; i++)
		if (!strcmp(ps->key[i], key)) {
			ps->used |= 1u << i;
			return (int)i;
		}
	return -1;
}

static int num(const char *s, uint64_t max, uint64_t *v)
{
	char *end;

	if (!s || !*s || *s == '-')
		return -EINVAL;
	errno = 0;
	*v = strtoull(s, &end, 0);
	if (errno || *end || *v > max)
		return -EINVAL;
	return 0;
}

/* A required "key=number"; @max bounds it. */
static int get_num(struct parse *ps, const char *key, uint64_t max,
		   uint64_t *v)
{
	int i = find(ps, key);

	return i < 0 ? -EINVAL : num(ps->val[i], max, v);
}

static int get_u32(struct parse *ps, const char *key, uint32_t *v)
{
	uint64_t x;
	int ret = get_num(ps, key, UINT32_MAX, &x);

	*v = (uint32_t)x;
	return ret;
}

/* An address: a number, "@name" or "@name+offset". */
static int get_addr(struct parse *ps, const char *key, uint64_t *v)
{
	char name[64], *plus;
	uint64_t base, off = 0;
	int i = find(ps, key), ret;

	if (i < 0 || !ps->val[i])
		return -EINVAL;
	if (ps->val[i][0] != '@')
		return num(ps->val[i], UINT64_MAX, v);
	if (!ps->resolve)
		return -EINVAL;
	snprintf(name, sizeof(name), "%s", ps->val[i] + 1);
	plus = strchr(name, '+');
	if (plus) {
		*plus = '\0';
		ret = num(plus + 1, UINT64_MAX, &off);
		if (ret)
			return ret;
	}
	ret = ps->resolve(ps->priv, name, &base);
	if (ret)
		return ret;
	*v = base + off;
	return 0;
}

/* "AxB" */
static int get_dim(struct parse *ps, const char *key, uint32_t *x,
		   uint32_t *y)
{
	int i = find(ps, key);
	char *end;

	if (i < 0 || !ps->val[i] || !isdigit((unsigned char)ps->val[i][0]))
		return -EINVAL;
	errno = 0;
	*x = (uint32_t)strtoul(ps->val[i], &end, 0);
	if (errno || *end != 'x' || !isdigit((unsigned char)end[1]))
		return -EINVAL;
	*y = (uint32_t)strtoul(end + 1, &end, 0);
	return errno || *end ? -EINVAL : 0;
}

static int get_data(struct parse *ps, uint32_t *data, unsigned int *n)
{
	int i = find(ps, "data");
	char *s, *tok, *save = NULL;
	uint64_t v;

	if (i < 0 || !ps->val[i])
		return -EINVAL;
	*n = 0;
	s = ps->val[i];
	for (tok = strtok_r(s, ",", &save); tok;
	     tok = strtok_r(NULL, ",", &save)) {
		if (*n == MAX_DATA || num(tok, UINT32_MAX, &v))
			return -EINVAL;
		data[(*n)++] = (uint32_t)v;
	}
	return *n ? 0 : -EINVAL;
}

static int emit_parsed(struct megpu_cs *cs, int op, struct parse *ps)
{
	uint32_t a, b, c, d, e, data[MAX_DATA];
	uint64_t x, y, flags = 0;
	unsigned int n;
	int ret = 0, i;

	if (find(ps, "flags") >= 0 && get_num(ps, "flags", 0xff, &flags))
		return -EINVAL;

	switch (op) {
	case MEGPU_PKT_NOP:
		x = 0;
		if (find(ps, "count") >= 0)
			ret = get_num(ps, "count", MEGPU_PKT_MAX_COUNT, &x);
		if (ret || ps->used != (1u << ps->n) - 1)
			return -EINVAL;
		return megpu_cs_packet(cs, op, flags, NULL, x);
	case MEGPU_PKT_IB:
		ret = get_addr(ps, "addr", &x) ?: get_u32(ps, "dwords", &a);
		if (ret)
			return ret;
		break;
	case MEGPU_PKT_WRITE_DATA:
		ret = get_addr(ps, "addr", &x) ?: get_data(ps, data, &n);
		if (ret)
			return ret;
		break;
	case MEGPU_PKT_TIMESTAMP:
		ret = get_addr(ps, "addr", &x) ?:
		      get_num(ps, "value", UINT64_MAX, &y);
		if (ret)
			return ret;
		i = find(ps, "irq");
		if (i >= 0 && ps->val[i])
			return -EINVAL;
		if (i >= 0)
			flags |= MEGPU_TIMESTAMP_FLAG_IRQ;
		break;
	case MEGPU_PKT_COPY:
		ret = get_addr(ps, "src", &x) ?: get_addr(ps, "dst", &y) ?:
		      get_u32(ps, "bytes", &a);
		if (ret)
			return ret;
		break;
	case MEGPU_PKT_FILL:
		ret = get_addr(ps, "dst", &x) ?: get_u32(ps, "bytes", &a) ?:
		      get_u32(ps, "value", &b);
		if (ret)
			return ret;
		break;
	case MEGPU_PKT_DISPATCH:
		i = find(ps, "kernel");
		if (i < 0 || !ps->val[i])
			return -EINVAL;
		ret = megpu_kernel_by_name(ps->val[i]);
		if (ret < 0)
			ret = get_u32(ps, "kernel", &a) ? -EINVAL : (int)a;
		if (ret < 0)
			return ret;
		a = (uint32_t)ret;
		ret = get_addr(ps, "args", &x) ?: get_dim(ps, "grid", &b, &c) ?:
		      get_dim(ps, "group", &d, &e);
		if (ret)
			return ret;
		break;
	case MEGPU_PKT_SET_CONTEXT:
		ret = get_addr(ps, "pt", &x) ?: get_u32(ps, "ctx", &a);
		if (ret)
			return ret;
		break;
	case MEGPU_PKT_SET_MAILBOX:
		ret = get_addr(ps, "addr", &x) ?: get_u32(ps, "slots", &a);
		if (ret)
			return ret;
		break;
	case MEGPU_PKT_SIGNAL:
	case MEGPU_PKT_WAIT:
		ret = get_addr(ps, "addr", &x) ?:
		      get_num(ps, "value", UINT64_MAX, &y);
		if (ret)
			return ret;
		break;
	case MEGPU_PKT_FLUSH:
	case MEGPU_PKT_IDLE_SIGNAL:
		/* no payload: only "flags=" may follow */
		if (ps->used != (1u << ps->n) - 1)
			return -EINVAL;
		return megpu_cs_packet(cs, op, flags, NULL, 0);
	default:
		return -EINVAL;
	}
	/* Every token must have been understood. */
	if (ps->used != (1u << ps->n) - 1)
		return -EINVAL;

	switch (op) {
	case MEGPU_PKT_IB:
		ret = megpu_cs_ib(cs, x, a);
		break;
	case MEGPU_PKT_WRITE_DATA:
		ret = megpu_cs_write_data(cs, x, data, n);
		break;
	case MEGPU_PKT_TIMESTAMP:
		return cs_addr_value(cs, op, flags, x, y);
	case MEGPU_PKT_COPY:
		ret = megpu_cs_copy(cs, x, y, a);
		break;
	case MEGPU_PKT_FILL:
		ret = megpu_cs_fill(cs, x, a, b);
		break;
	case MEGPU_PKT_DISPATCH:
		ret = megpu_cs_dispatch(cs, a, x, b, c, d, e);
		break;
	case MEGPU_PKT_SET_CONTEXT:
		ret = megpu_cs_set_context(cs, x, a);
		break;
	case MEGPU_PKT_SET_MAILBOX:
		ret = megpu_cs_set_mailbox(cs, x, a);
		break;
	default:
		return cs_addr_value(cs, op, flags, x, y);
	}
	return ret;
}

int megpu_cs_parse_line(struct megpu_cs *cs, const char *line,
			megpu_cs_resolve_fn resolve, void *priv)
{
	char buf[4096], *s, *save = NULL, *tok, *eq;
	struct parse ps = { .resolve = resolve, .priv = priv };
	uint32_t start = cs->len;
	int op, ret;

	if (strlen(line) >= sizeof(buf))
		return -EINVAL;
	snprintf(buf, sizeof(buf), "%s", line);
	s = strchr(buf, '#');
	if (s)
		*s = '\0';
	tok = strtok_r(buf, " \t\r\n", &save);
	if (!tok)
		return 0;
	op = megpu_packet_by_name(tok);
	if (op < 0)
		return -EINVAL;
	while ((tok = strtok_r(NULL, " \t\r\n", &save))) {
		if (ps.n == MAX_TOKENS)
			return -EINVAL;
		eq = strchr(tok, '=');
		if (eq)
			*eq = '\0';
		ps.key[ps.n] = tok;
		ps.val[ps.n] = eq ? eq + 1 : NULL;
		ps.n++;
	}
	ret = emit_parsed(cs, op, &ps);
	/* Header flags of any packet, as the decoder prints them. */
	if (!ret && cs->len > start && find(&ps, "flags") >= 0) {
		uint64_t flags = 0;

		get_num(&ps, "flags", 0xff, &flags);
		cs->dw[start] |= MEGPU_PKT_HEADER(0, 0, flags);
	}
	return ret;
}
