// SPDX-License-Identifier: MIT
/*
 * The driver's debugfs files for a render node, parsed: the counters, the
 * flush statistics, the seed 001 dump (frames, rings, timestamps,
 * semaphores, resources) and the test knobs. One packet decoder: the
 * raw ring words the driver shows are decoded with megpu_cs_decode_one().
 */

#include <dirent.h>
#include <fcntl.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "libmegpu.h"
#include "megpu_hw_packets.h"

#define DEBUGFS_DRI "/sys/kernel/debug/dri"

/*
 * DRM names a device's debugfs directory after its primary (card) minor;
 * the render node's sysfs device lists the DRM minors of the device.
 */
static int card_index(struct megpu *gpu, int *index)
{
	char dir[128];
	struct dirent *de;
	struct stat st;
	DIR *d;
	int ret = -ENOENT;

	if (fstat(gpu->fd, &st))
		return -errno;
	snprintf(dir, sizeof(dir), "/sys/dev/char/%u:%u/device/drm",
		 major(st.st_rdev), minor(st.st_rdev));
	d = opendir(dir);
	if (!d)
		return -errno;
	while ((de = readdir(d))) {
		char *end;
		long n;

		if (strncmp(de->d_name, "card", 4))
			continue;
		n = strtol(de->d_name + 4, &end, 10);
		if (end == de->d_name + 4 || *end)
			continue;
		*index = (int)n;
		ret = 0;
		break;
	}
	closedir(d);
	return ret;
}

int megpu_debugfs_path(struct megpu *gpu, const char *name, char *buf,
		       size_t len)
{
	struct stat st;
	int index, ret, n;

	ret = card_index(gpu, &index);
	if (ret)
		return ret;
	n = snprintf(buf, len, DEBUGFS_DRI "/%d/%s", index, name);
	if (n < 0 || (size_t)n >= len)
		return -ENAMETOOLONG;
	if (stat(buf, &st))
		return -errno;
	return 0;
}

int megpu_debugfs_counter(struct megpu *gpu, const char *key,
			  uint64_t *value)
{
	char path[256], line[256], k[128];
	int ret = -ENOENT;
	uint64_t v;
	FILE *f;

	ret = megpu_debugfs_path(gpu, "counters", path, sizeof(path));
	if (ret)
		return ret;
	f = fopen(path, "r");
	if (!f)
		return -errno;
	ret = -ENOENT;
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "%127s %" SCNu64, k, &v) == 2 &&
		    !strcmp(k, key)) {
			*value = v;
			ret = 0;
			break;
		}
	}
	fclose(f);
	return ret;
}

/* One engine line: "NAME queue Q stalled_writes S flushes F ..." */
static int flush_engine_line(const char *line, struct megpu_flush_stats *st)
{
	char name[16];
	unsigned int q, s, f, i, j;

	if (sscanf(line, "%15s queue %u stalled_writes %u flushes %u "
		   "idle_signals %u idle_irqs %u", name, &q, &s, &f, &i,
		   &j) != 6)
		return -EBADMSG;
	if (st->engines == MEGPU_STATS_ENGINES)
		return -E2BIG;
	snprintf(st->eng[st->engines].name, sizeof(st->eng[0].name), "%s",
		 name);
	st->eng[st->engines].queue = q;
	st->eng[st->engines].stalled_writes = s;
	st->eng[st->engines].flushes = f;
	st->eng[st->engines].idle_signals = i;
	st->eng[st->engines].idle_irqs = j;
	st->engines++;
	return 0;
}

int megpu_flush_stats(struct megpu *gpu, struct megpu_flush_stats *st)
{
	char path[256], line[256], mode[16];
	unsigned int seen = 0;
	unsigned long long v;
	int ret = 0;
	FILE *f;

	ret = megpu_debugfs_path(gpu, "flush", path, sizeof(path));
	if (ret)
		return ret;
	f = fopen(path, "r");
	if (!f)
		return -errno;
	memset(st, 0, sizeof(*st));
	while (!ret && fgets(line, sizeof(line), f)) {
		if (sscanf(line, "write_mode %15s", mode) == 1) {
			st->relaxed = !strcmp(mode, "relaxed");
			seen |= 1;
		} else if (sscanf(line, "host_flushes_started %llu", &v) == 1) {
			st->host_started = v;
			seen |= 2;
		} else if (sscanf(line, "host_flushes_done %llu", &v) == 1) {
			st->host_done = v;
			seen |= 4;
		} else if (sscanf(line, "mc_queue %llu", &v) == 1) {
			st->mc_queue = (uint32_t)v;
			seen |= 8;
		} else if (sscanf(line, "flush_waiters %llu", &v) == 1) {
			continue;	/* a bound's test reads it itself */
		} else {
			ret = flush_engine_line(line, st);
		}
	}
	fclose(f);
	if (!ret && seen != 15)
		ret = -EBADMSG;
	return ret;
}

int megpu_write_mode_get(struct megpu *gpu, bool *strict)
{
	char path[256], buf[32] = "";
	FILE *f;
	int ret;

	ret = megpu_debugfs_path(gpu, "write_mode", path, sizeof(path));
	if (ret)
		return ret;
	f = fopen(path, "r");
	if (!f)
		return -errno;
	if (!fgets(buf, sizeof(buf), f))
		buf[0] = '\0';
	fclose(f);
	if (!strncmp(buf, "strict", 6))
		*strict = true;
	else if (!strncmp(buf, "relaxed", 7))
		*strict = false;
	else
		return -EBADMSG;
	return 0;
}

int megpu_write_mode_set(struct megpu *gpu, bool strict)
{
	const char *text = strict ? "strict" : "relaxed";
	char path[256];
	ssize_t n;
	int fd, ret;

	ret = megpu_debugfs_path(gpu, "write_mode", path, sizeof(path));
	if (ret)
		return ret;
	fd = open(path, O_WRONLY);
	if (fd < 0)
		return -errno;
	n = write(fd, text, strlen(text));
	ret = n < 0 ? -errno : (size_t)n == strlen(text) ? 0 : -EIO;
	close(fd);
	return ret;
}

/* --- the seed 001 dump and the test knobs --- */

char *megpu_read_file(const char *path)
{
	size_t len = 0, cap = 65536;
	char *buf = malloc(cap + 1), *bigger;
	int fd = open(path, O_RDONLY | O_CLOEXEC), err;
	ssize_t n;

	if (fd < 0 || !buf) {
		err = errno ?: ENOMEM;
		free(buf);
		if (fd >= 0)
			close(fd);
		errno = err;
		return NULL;
	}
	while ((n = read(fd, buf + len, cap - len)) > 0) {
		len += (size_t)n;
		if (len == cap) {
			cap *= 2;
			bigger = realloc(buf, cap + 1);
			if (!bigger) {
				free(buf);
				close(fd);
				errno = ENOMEM;
				return NULL;
			}
			buf = bigger;
		}
	}
	err = n < 0 ? errno : 0;
	close(fd);
	if (err) {
		free(buf);
		errno = err;
		return NULL;
	}
	buf[len] = '\0';
	return buf;
}

char *megpu_debugfs_read(struct megpu *gpu, const char *name)
{
	char path[256];
	int ret = megpu_debugfs_path(gpu, name, path, sizeof(path));

	if (ret) {
		errno = -ret;
		return NULL;
	}
	return megpu_read_file(path);
}

int megpu_debugfs_write(struct megpu *gpu, const char *name,
			const char *text)
{
	char path[256];
	ssize_t n;
	int fd, ret;

	ret = megpu_debugfs_path(gpu, name, path, sizeof(path));
	if (ret)
		return ret;
	fd = open(path, O_WRONLY | O_TRUNC | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	n = write(fd, text, strlen(text));
	ret = n < 0 ? -errno : (size_t)n == strlen(text) ? 0 : -EIO;
	close(fd);
	return ret;
}

int megpu_debug_delay_us(struct megpu *gpu, unsigned int engine,
			 unsigned int usec)
{
	char text[32];

	snprintf(text, sizeof(text), "%u %u", engine, usec);
	return megpu_debugfs_write(gpu, "delay_us", text);
}

/* The device's engine names, to turn "copy0" into an index. */
struct names {
	unsigned int n;
	char name[MEGPU_STATS_ENGINES][16];
};

static int names_get(struct megpu *gpu, struct names *nm)
{
	uint64_t types;
	unsigned int i;
	int ret = megpu_engines(gpu, &nm->n, &types);

	if (ret)
		return ret;
	for (i = 0; i < nm->n; i++)
		megpu_engine_name(types, i, nm->name[i], sizeof(nm->name[i]));
	return 0;
}

static int names_find(const struct names *nm, const char *name, size_t len)
{
	unsigned int i;

	for (i = 0; i < nm->n; i++)
		if (strlen(nm->name[i]) == len && !strncmp(nm->name[i], name, len))
			return (int)i;
	return -1;
}

/* Parse "NAME@TS:semK" at *@p, advance past it; 0 or -EBADMSG. */
static int parse_ref(const struct names *nm, const char **p,
		     struct megpu_debug_ref *r)
{
	const char *at;
	unsigned long long ts;
	unsigned int sem;
	int used;

	while (**p == ' ')
		(*p)++;
	at = strchr(*p, '@');
	if (!at || sscanf(at, "@%llu:sem%u%n", &ts, &sem, &used) != 2)
		return -EBADMSG;
	r->engine = names_find(nm, *p, (size_t)(at - *p));
	r->ts = ts;
	r->sem = sem;
	*p = at + used;
	return 0;
}

/* "NAME seqno S ctx C ib 0xI waits N REF* signal REF" */
static int parse_frame(const struct names *nm, const char *line,
		       struct megpu_debug_frame *f)
{
	unsigned long long seqno, ib;
	const char *sp = strchr(line, ' '), *p;
	unsigned int ctx, n, i;
	int e, used;

	if (!sp)
		return -EBADMSG;
	e = names_find(nm, line, (size_t)(sp - line));
	if (e < 0 || sscanf(sp, " seqno %llu ctx %u ib 0x%llx waits %u%n",
			    &seqno, &ctx, &ib, &n, &used) != 4 ||
	    n > MEGPU_STATS_ENGINES)
		return -EBADMSG;
	memset(f, 0, sizeof(*f));
	f->engine = (unsigned int)e;
	f->seqno = seqno;
	f->ctx = ctx;
	f->ib = ib;
	f->nwaits = n;
	p = sp + used;
	for (i = 0; i < n; i++)
		if (parse_ref(nm, &p, &f->waits[i]))
			return -EBADMSG;
	if (strncmp(p, " signal ", 8))
		return -EBADMSG;
	p += 8;
	return parse_ref(nm, &p, &f->signal);
}

/* Call @fn for each line of debugfs file @name; stops at an error. */
static int each_line(struct megpu *gpu, const char *name,
		     int (*fn)(void *priv, char *line), void *priv)
{
	char *text = megpu_debugfs_read(gpu, name), *line, *nl;
	int ret = 0;

	if (!text)
		return -errno;
	for (line = text; !ret && *line; line = nl + 1) {
		nl = strchr(line, '\n');
		if (!nl)
			nl = line + strlen(line) - 1;
		else
			*nl = '\0';
		ret = fn(priv, line);
	}
	free(text);
	return ret;
}

/*
 * A debugfs table of one row a line: each line parsed into a row of
 * @size bytes, the first @max kept in @out.
 */
struct rows_ctx {
	struct names nm;
	int (*parse)(const struct names *nm, char *line, void *row);
	void *out;
	size_t size;
	unsigned int max, n;
};

static int row_line(void *priv, char *line)
{
	struct rows_ctx *c = priv;
	union {
		struct megpu_debug_frame f;
		struct megpu_debug_resource r;
	} row;
	int ret;

	if (c->size > sizeof(row))
		return -EINVAL;
	ret = c->parse(&c->nm, line, &row);
	if (ret)
		return ret;
	if (c->n < c->max)
		memcpy((char *)c->out + c->n * c->size, &row, c->size);
	c->n++;
	return 0;
}

/* The rows of debugfs @name: how many were kept, or -errno. */
static int debug_rows(struct megpu *gpu, const char *name,
		      int (*parse)(const struct names *, char *, void *),
		      void *out, size_t size, unsigned int max)
{
	struct rows_ctx c = {
		.parse = parse, .out = out, .size = size, .max = max,
	};
	int ret = names_get(gpu, &c.nm);

	ret = ret ?: each_line(gpu, name, row_line, &c);
	return ret ?: (int)(c.n < max ? c.n : max);
}

static int frame_row(const struct names *nm, char *line, void *row)
{
	return parse_frame(nm, line, row);
}

int megpu_debug_frames(struct megpu *gpu, struct megpu_debug_frame *f,
		       unsigned int max)
{
	return debug_rows(gpu, "frames", frame_row, f, sizeof(*f), max);
}

int megpu_debug_timestamps(struct megpu *gpu, unsigned int engine,
			   uint64_t *cur, uint64_t *next)
{
	char *text = megpu_debugfs_read(gpu, "timestamps"), *line;
	unsigned long long c, n;
	struct names nm;
	size_t len;
	int ret;

	if (!text)
		return -errno;
	ret = names_get(gpu, &nm);
	if (!ret && engine >= nm.n)
		ret = -EINVAL;
	if (ret) {
		free(text);
		return ret;
	}
	ret = -ENOENT;
	len = strlen(nm.name[engine]);
	for (line = text; line; line = strchr(line, '\n')) {
		line += *line == '\n';
		if (!strncmp(line, nm.name[engine], len) && line[len] == ' ' &&
		    sscanf(line + len, " current %llu next %llu", &c, &n) == 2) {
			*cur = c;
			*next = n;
			ret = 0;
			break;
		}
	}
	free(text);
	return ret;
}

struct sems_ctx {
	struct names nm;
	struct megpu_debug_sems *s;
	unsigned int max, lines;
};

/* "pool P busy B", "pool_waits W", "semK tag REF value V waiters ..." */
static int sem_line(void *priv, char *line)
{
	struct sems_ctx *c = priv;
	struct megpu_debug_sems *s = c->s;
	struct megpu_debug_ref tag;
	unsigned long long v;
	const char *p;
	int used;

	switch (c->lines++) {
	case 0:
		return sscanf(line, "pool %u busy %u", &s->pool, &s->busy) == 2 ?
		       0 : -EBADMSG;
	case 1:
		if (sscanf(line, "pool_waits %llu", &v) != 1)
			return -EBADMSG;
		s->pool_waits = v;
		return 0;
	}
	if (sscanf(line, "sem%*u tag %n", &used) != 0 || !used)
		return -EBADMSG;
	p = line + used;
	if (parse_ref(&c->nm, &p, &tag) ||
	    sscanf(p, " value %llu", &v) != 1)
		return -EBADMSG;
	if (s->obj && s->count < c->max) {
		s->obj[s->count].tag = tag;
		s->obj[s->count].value = v;
		s->count++;
	}
	return 0;
}

int megpu_debug_semaphores(struct megpu *gpu, struct megpu_debug_sems *s,
			   unsigned int max)
{
	struct sems_ctx c = { .s = s, .max = max };
	int ret = names_get(gpu, &c.nm);

	s->pool = s->busy = s->count = 0;
	s->pool_waits = 0;
	ret = ret ?: each_line(gpu, "semaphores", sem_line, &c);
	if (!ret && c.lines < 2)
		ret = -EBADMSG;
	return ret;
}

/* "boN size S write REF*|- reads REF* [blank]" */
static int res_row(const struct names *nm, char *line, void *row)
{
	struct megpu_debug_resource *r = row;
	unsigned long long size;
	const char *p;
	int used = 0;

	memset(r, 0, sizeof(*r));
	if (sscanf(line, "bo%u size %llu write%n", &r->id, &size, &used) != 2 ||
	    !used)
		return -EBADMSG;
	r->size = size;
	p = line + used;
	if (!strncmp(p, " -", 2))
		p += 2;
	while (strncmp(p, " reads", 6)) {
		if (r->nwrites == MEGPU_STATS_ENGINES ||
		    parse_ref(nm, &p, &r->write[r->nwrites++]))
			return -EBADMSG;
	}
	p += 6;
	while (*p && strcmp(p, " blank")) {
		if (r->nreads == MEGPU_STATS_ENGINES ||
		    parse_ref(nm, &p, &r->read[r->nreads++]))
			return -EBADMSG;
	}
	return 0;
}

int megpu_debug_resources(struct megpu *gpu, struct megpu_debug_resource *r,
			  unsigned int max)
{
	return debug_rows(gpu, "resources", res_row, r, sizeof(*r), max);
}

void megpu_debug_rings_free(struct megpu_debug_ring *r, unsigned int n)
{
	unsigned int i;

	for (i = 0; i < n; i++) {
		free(r[i].dw);
		r[i].dw = NULL;
	}
}

/* "NAME size S start 0xO dwords N", then the words, eight a line */
int megpu_debug_rings(struct megpu *gpu, struct megpu_debug_ring *r,
		      unsigned int max)
{
	char *text = megpu_debugfs_read(gpu, "rings"), *p, *end;
	unsigned int n = 0, size, start, ndw, i;
	struct names nm;
	int ret, e, used;
	char *sp;

	if (!text)
		return -errno;
	ret = names_get(gpu, &nm);
	for (p = text; !ret && *p; ) {
		sp = strchr(p, ' ');
		e = sp ? names_find(&nm, p, (size_t)(sp - p)) : -1;
		if (e < 0 || sscanf(sp, " size %u start 0x%x dwords %u%n",
				    &size, &start, &ndw, &used) != 3 ||
		    !size || (size & (size - 1)) || ndw > size / 4) {
			ret = -EBADMSG;
			break;
		}
		p = sp + used;
		if (n < max) {
			r[n].engine = (unsigned int)e;
			r[n].size = size;
			r[n].start = start;
			r[n].ndw = ndw;
			r[n].dw = calloc(ndw ? ndw : 1, sizeof(uint32_t));
			if (!r[n].dw) {
				ret = -ENOMEM;
				break;
			}
		}
		for (i = 0; i < ndw; i++) {
			unsigned long w = strtoul(p, &end, 16);

			if (end == p || w > UINT32_MAX) {
				ret = -EBADMSG;
				break;
			}
			if (n < max)
				r[n].dw[i] = (uint32_t)w;
			p = end;
		}
		n += n < max;
		while (*p == ' ' || *p == '\n')
			p++;
	}
	free(text);
	if (ret) {
		megpu_debug_rings_free(r, n < max ? n : max);
		return ret;
	}
	return (int)n;
}

static uint64_t qw(const uint32_t *p)
{
	return p[0] | (uint64_t)p[1] << 32;
}

int megpu_debug_ring_packets(const struct megpu_debug_ring *r,
			     struct megpu_debug_packet *p, unsigned int max)
{
	unsigned int n = 0;
	size_t pos = 0;
	int len;

	while (pos < r->ndw && n < max) {
		const uint32_t *dw = r->dw + pos;
		struct megpu_debug_packet *k = &p[n];

		memset(k, 0, sizeof(*k));
		len = megpu_cs_decode_one(dw, r->ndw - pos, k->text,
					  sizeof(k->text));
		if (len < 0)
			return len;
		k->off = (r->start + 4 * (uint32_t)pos) & (r->size - 1);
		k->op = MEGPU_PKT_OPCODE(dw[0]);
		k->flags = MEGPU_PKT_FLAGS(dw[0]);
		switch (k->op) {
		case MEGPU_PKT_WAIT:
		case MEGPU_PKT_SIGNAL:
		case MEGPU_PKT_TIMESTAMP:
			k->a = qw(dw + 1);
			k->b = qw(dw + 3);
			break;
		case MEGPU_PKT_IB:
		case MEGPU_PKT_SET_CONTEXT:
		case MEGPU_PKT_SET_MAILBOX:
			k->a = qw(dw + 1);
			k->b = dw[3];
			break;
		}
		pos += (size_t)len;
		n++;
	}
	return (int)n;
}

#define PARAM_DIR "/sys/module/megpu/parameters/"

int megpu_module_param_get(const char *name)
{
	char path[128], *text;
	int ret;

	snprintf(path, sizeof(path), PARAM_DIR "%s", name);
	text = megpu_read_file(path);
	if (!text)
		return -errno ?: -EIO;
	ret = text[0] == 'Y' || text[0] == 'y' || text[0] == '1';
	free(text);
	return ret;
}

int megpu_module_param_set(const char *name, bool on)
{
	const char *text = on ? "Y" : "N";
	char path[128];
	ssize_t n;
	int fd, ret;

	snprintf(path, sizeof(path), PARAM_DIR "%s", name);
	fd = open(path, O_WRONLY | O_TRUNC | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	n = write(fd, text, 1);
	ret = n < 0 ? -errno : n == 1 ? 0 : -EIO;
	close(fd);
	return ret;
}
