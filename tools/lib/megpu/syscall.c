// SPDX-License-Identifier: MIT
/*
 * GPU-to-CPU system calls (seed 003), the CPU's side in userspace: the
 * ioctl wrappers, a service that answers a client's user ops from one or
 * more threads, and the seed's example services (printf, malloc/free,
 * fileio) on buffers the service was given.
 *
 * Handlers take GPU addresses from the GPU, so every access goes through
 * megpu_service_ptr(): a bad address or length answers -EFAULT and never
 * touches memory outside a mapped BO.
 */

#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <xf86drm.h>

#include "megpu_drm.h"
#include "megpu_hw_wave.h"
#include "libmegpu.h"

int megpu_mailbox_slots(struct megpu *gpu, uint32_t *slots)
{
	uint64_t v;
	int ret = megpu_get_param(gpu, DRM_MEGPU_PARAM_MAILBOX_SLOTS, &v);

	if (!ret)
		*slots = (uint32_t)v;
	return ret;
}

int megpu_syscall_wait(struct megpu *gpu, struct drm_megpu_syscall *calls,
		       uint32_t max, int64_t timeout_ns)
{
	struct drm_megpu_syscall_wait args = {
		.calls = (uintptr_t)calls,
		.count = max,
	};

	/* The ioctl takes an absolute CLOCK_MONOTONIC time, 0 polls. */
	if (timeout_ns == MEGPU_FOREVER)
		args.timeout_ns = INT64_MAX;
	else if (timeout_ns > 0)
		args.timeout_ns = megpu_now_ns() + timeout_ns;
	if (drmIoctl(gpu->fd, DRM_IOCTL_MEGPU_SYSCALL_WAIT, &args))
		return -errno;
	return (int)args.count;
}

int megpu_syscall_return(struct megpu *gpu, uint32_t slot, uint32_t caller,
			 uint64_t ret)
{
	struct drm_megpu_syscall_return args = {
		.ret = ret, .slot = slot, .caller = caller,
	};

	return drmIoctl(gpu->fd, DRM_IOCTL_MEGPU_SYSCALL_RETURN, &args) ?
	       -errno : 0;
}

int megpu_syscall_return_batch(struct megpu *gpu,
			       const struct drm_megpu_syscall_answer *answers,
			       uint32_t n)
{
	struct drm_megpu_syscall_return args = {
		.flags = DRM_MEGPU_SYSCALL_RETURN_BATCH,
		.answers = (uintptr_t)answers, .count = n,
	};

	return drmIoctl(gpu->fd, DRM_IOCTL_MEGPU_SYSCALL_RETURN, &args) ?
	       -errno : 0;
}

/* --- the service --- */

int megpu_service_init(struct megpu_service *svc, struct megpu *gpu)
{
	memset(svc, 0, sizeof(*svc));
	svc->gpu = gpu;
	svc->file_fd = -1;
	return -pthread_mutex_init(&svc->lock, NULL);
}

int megpu_service_handle(struct megpu_service *svc, uint32_t op,
			 megpu_sys_fn fn, void *priv)
{
	unsigned int i;
	int ret = 0;

	if (op < DRM_MEGPU_SYSCALL_USER || op > MEGPU_SYSCALL_MAX_N || !fn)
		return -EINVAL;
	pthread_mutex_lock(&svc->lock);
	for (i = 0; i < svc->nops && svc->ops[i].op != op; i++)
		;
	if (i == MEGPU_SERVICE_MAX_OPS) {
		ret = -E2BIG;
	} else {
		svc->ops[i].op = op;
		svc->ops[i].fn = fn;
		svc->ops[i].priv = priv;
		if (i == svc->nops)
			svc->nops++;
	}
	pthread_mutex_unlock(&svc->lock);
	return ret;
}

int megpu_service_add_bo(struct megpu_service *svc, struct megpu_bo *bo)
{
	int ret = 0;

	if (!bo->map || bo->gpu != svc->gpu)
		return -EINVAL;
	pthread_mutex_lock(&svc->lock);
	if (svc->nbos == MEGPU_SERVICE_MAX_BOS) {
		ret = -E2BIG;
	} else {
		svc->bos[svc->nbos].va = bo->va;
		svc->bos[svc->nbos].size = bo->size;
		svc->bos[svc->nbos++].map = bo->map;
	}
	pthread_mutex_unlock(&svc->lock);
	return ret;
}

/* The BO holding @va: its pointer there and the bytes left, else NULL. */
static uint8_t *bo_at(struct megpu_service *svc, uint64_t va, uint64_t *left)
{
	uint8_t *p = NULL;
	unsigned int i;

	pthread_mutex_lock(&svc->lock);
	for (i = 0; i < svc->nbos; i++) {
		if (va >= svc->bos[i].va &&
		    va - svc->bos[i].va < svc->bos[i].size) {
			p = svc->bos[i].map + (va - svc->bos[i].va);
			*left = svc->bos[i].size - (va - svc->bos[i].va);
			break;
		}
	}
	pthread_mutex_unlock(&svc->lock);
	return p;
}

void *megpu_service_ptr(struct megpu_service *svc, uint64_t va,
			uint64_t len)
{
	uint64_t left;
	uint8_t *p = bo_at(svc, va, &left);

	return p && len <= left ? p : NULL;
}

/* A NUL-terminated string at @va inside one BO, else NULL. */
static const char *service_str(struct megpu_service *svc, uint64_t va)
{
	uint64_t left;
	const char *p = (const char *)bo_at(svc, va, &left);

	return p && memchr(p, '\0', left) ? p : NULL;
}

static uint64_t dispatch(struct megpu_service *svc,
			 const struct drm_megpu_syscall *c)
{
	megpu_sys_fn fn = NULL;
	void *priv = NULL;
	unsigned int i;

	pthread_mutex_lock(&svc->lock);
	for (i = 0; i < svc->nops; i++) {
		if (svc->ops[i].op == c->op) {
			fn = svc->ops[i].fn;
			priv = svc->ops[i].priv;
			break;
		}
	}
	pthread_mutex_unlock(&svc->lock);
	return fn ? fn(svc, c, priv) : MEGPU_SYS_ERR(-EOPNOTSUPP);
}

#define SERVE_BATCH 64

/* Answer one at a time: each answer that is still due lands. */
static void answer_each(struct megpu_service *svc,
			const struct drm_megpu_syscall_answer *a, int n)
{
	for (int i = 0; i < n; i++) {
		if (megpu_syscall_return(svc->gpu, a[i].slot, a[i].caller,
					 a[i].ret))
			__atomic_add_fetch(&svc->errors, 1, __ATOMIC_RELAXED);
		else
			__atomic_add_fetch(&svc->calls, 1, __ATOMIC_RELAXED);
	}
}

int megpu_service_serve(struct megpu_service *svc, int64_t timeout_ns)
{
	struct drm_megpu_syscall calls[SERVE_BATCH];
	struct drm_megpu_syscall_answer answers[SERVE_BATCH];
	bool each = __atomic_load_n(&svc->answer_each, __ATOMIC_RELAXED);
	int n, i;

	n = megpu_syscall_wait(svc->gpu, calls, SERVE_BATCH, timeout_ns);
	if (n <= 0)
		return n;
	/* SYSCALL drains the wave's posted writes: the BOs are current */
	for (i = 0; i < n; i++) {
		answers[i] = (struct drm_megpu_syscall_answer) {
			.ret = dispatch(svc, &calls[i]),
			.slot = calls[i].slot, .caller = calls[i].caller,
		};
		if (each)
			answer_each(svc, &answers[i], 1);
	}
	if (each)
		return n;
	/*
	 * One ioctl for all, each wave restarted once. All or none: when
	 * one call is no longer due (its engine was reset), the others are
	 * answered one by one.
	 */
	if (n > 1 && !megpu_syscall_return_batch(svc->gpu, answers, n))
		__atomic_add_fetch(&svc->calls, n, __ATOMIC_RELAXED);
	else
		answer_each(svc, answers, n);
	return n;
}

/* Threads wake this often to see a stop request. */
#define SERVE_TICK_NS 100000000ll

static void *service_thread(void *arg)
{
	struct megpu_service *svc = arg;
	int ret;

	while (!__atomic_load_n(&svc->stop, __ATOMIC_ACQUIRE)) {
		ret = megpu_service_serve(svc, SERVE_TICK_NS);
		if (ret < 0 && ret != -ETIME && ret != -EINTR) {
			/* Say why and leave: e.g. -EOPNOTSUPP, -ENODEV. */
			__atomic_store_n(&svc->wait_error, ret,
					 __ATOMIC_RELEASE);
			break;
		}
	}
	return NULL;
}

int megpu_service_start(struct megpu_service *svc, unsigned int n)
{
	int ret;

	if (!n || n > MEGPU_SERVICE_MAX_THREADS || svc->nthreads)
		return -EINVAL;
	svc->stop = 0;
	svc->wait_error = 0;
	while (svc->nthreads < n) {
		ret = pthread_create(&svc->threads[svc->nthreads], NULL,
				     service_thread, svc);
		if (ret) {
			megpu_service_stop(svc);
			return -ret;
		}
		svc->nthreads++;
	}
	return 0;
}

void megpu_service_stop(struct megpu_service *svc)
{
	__atomic_store_n(&svc->stop, 1, __ATOMIC_RELEASE);
	while (svc->nthreads)
		pthread_join(svc->threads[--svc->nthreads], NULL);
	megpu_service_printf_flush(svc);
}

/* --- printf --- */

#define PF_CALLERS 64
#define PF_LINE 1024

/* Text of one calling wave that has no newline yet. */
struct pf_caller {
	uint32_t caller;
	uint32_t len;
	uint64_t used;		/* for eviction: least recently used */
	char buf[PF_LINE];
};

struct pf_state {
	int fd;
	pthread_mutex_t lock;
	uint64_t tick;
	struct pf_caller c[PF_CALLERS];
};

static void write_all(int fd, const char *p, size_t n)
{
	ssize_t w;

	while (n) {
		w = write(fd, p, n);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return;
		p += w;
		n -= w;
	}
}

/* Write the caller's complete lines; keep a partial one (unless full). */
static void pf_drain(struct pf_state *pf, struct pf_caller *c, bool all)
{
	char *nl = memrchr(c->buf, '\n', c->len);
	uint32_t n = nl ? (uint32_t)(nl - c->buf) + 1 : 0;

	if (all || c->len == PF_LINE)
		n = c->len;
	if (!n)
		return;
	write_all(pf->fd, c->buf, n);
	memmove(c->buf, c->buf + n, c->len - n);
	c->len -= n;
}

/* Append @text of @caller and write what is whole; pf->lock held. */
static void pf_out(struct pf_state *pf, uint32_t caller, const char *text,
		   size_t len)
{
	struct pf_caller *c = NULL, *free_c = NULL, *lru = NULL;
	unsigned int i;
	size_t n;

	for (i = 0; i < PF_CALLERS; i++) {
		if (pf->c[i].len && pf->c[i].caller == caller) {
			c = &pf->c[i];
			break;
		}
		if (!free_c && !pf->c[i].len)
			free_c = &pf->c[i];
		if (!lru || pf->c[i].used < lru->used)
			lru = &pf->c[i];
	}
	if (!c) {
		/* Evict: a stale wave's partial line goes out as it is. */
		c = free_c ?: lru;
		pf_drain(pf, c, true);
		c->caller = caller;
	}
	c->used = ++pf->tick;
	while (len) {
		n = PF_LINE - c->len < len ? PF_LINE - c->len : len;
		memcpy(c->buf + c->len, text, n);
		c->len += n;
		text += n;
		len -= n;
		pf_drain(pf, c, false);
	}
}

/*
 * Format a record (see MEGPU_SYS_PRINTF) into @out; its length or a
 * negative errno. Each conversion is rebuilt from checked parts before
 * it reaches snprintf, so a GPU's format string cannot reach varargs.
 */
static int pf_format(struct megpu_service *svc, uint64_t va, char *out,
		     size_t size)
{
	const uint32_t *rec = megpu_service_ptr(svc, va, 8), *args;
	char spec[16], *o = out, *end = out + size - 1;
	unsigned int nargs, next = 0, k;
	const char *fmt;
	int w;

	if (!rec || va % 4)
		return -EFAULT;
	nargs = rec[1];
	if (nargs > MEGPU_SYS_PRINTF_MAX_ARGS)
		return -EINVAL;
	args = megpu_service_ptr(svc, va + 8, 4ull * nargs);
	fmt = service_str(svc, rec[0]);
	if (!args || !fmt)
		return -EFAULT;
	while (*fmt && o < end) {
		if (*fmt != '%') {
			*o++ = *fmt++;
			continue;
		}
		k = 0;
		spec[k++] = *fmt++;
		while (*fmt && strchr("-0 +#", *fmt) && k < 6)
			spec[k++] = *fmt++;
		if (*fmt >= '1' && *fmt <= '9')
			spec[k++] = *fmt++;
		if (*fmt >= '0' && *fmt <= '9')
			spec[k++] = *fmt++;	/* widths up to 99 */
		while (*fmt == 'l' || *fmt == 'h')
			fmt++;			/* arguments are 32 bits */
		if (*fmt == '%') {
			*o++ = '%';
			fmt++;
			continue;
		}
		if (!*fmt || !strchr("diuxXocs", *fmt))
			return -EINVAL;
		if (next == nargs)
			return -EINVAL;
		spec[k++] = *fmt;
		spec[k] = '\0';
		switch (*fmt++) {
		case 'd':
		case 'i':
			w = snprintf(o, end - o + 1, spec, (int32_t)args[next]);
			break;
		case 's': {
			const char *s = service_str(svc, args[next]);

			if (!s)
				return -EFAULT;
			w = snprintf(o, end - o + 1, spec, s);
			break;
		}
		default:
			w = snprintf(o, end - o + 1, spec, args[next]);
			break;
		}
		next++;
		if (w < 0)
			return -EINVAL;
		o += (size_t)w < (size_t)(end - o) ? (size_t)w : (size_t)(end - o);
	}
	*o = '\0';
	return (int)(o - out);
}

static uint64_t sys_printf(struct megpu_service *svc,
			   const struct drm_megpu_syscall *c, void *priv)
{
	struct pf_state *pf = priv;
	char text[PF_LINE];
	int n = pf_format(svc, c->args[0], text, sizeof(text));

	if (n < 0)
		return MEGPU_SYS_ERR(n);
	pthread_mutex_lock(&pf->lock);
	pf_out(pf, c->caller, text, n);
	pthread_mutex_unlock(&pf->lock);
	return n;
}

int megpu_service_printf(struct megpu_service *svc, int fd)
{
	struct pf_state *pf;
	int ret;

	if (svc->printf_state)
		return -EBUSY;
	pf = calloc(1, sizeof(*pf));
	if (!pf)
		return -ENOMEM;
	pf->fd = fd;
	pthread_mutex_init(&pf->lock, NULL);
	ret = megpu_service_handle(svc, MEGPU_SYS_PRINTF, sys_printf, pf);
	if (ret) {
		free(pf);
		return ret;
	}
	svc->printf_state = pf;
	return 0;
}

void megpu_service_printf_flush(struct megpu_service *svc)
{
	struct pf_state *pf = svc->printf_state;
	unsigned int i;

	if (!pf)
		return;
	pthread_mutex_lock(&pf->lock);
	for (i = 0; i < PF_CALLERS; i++)
		pf_drain(pf, &pf->c[i], true);
	pthread_mutex_unlock(&pf->lock);
}

/* --- malloc and free: first fit over a sorted list of used blocks --- */

#define POOL_ALIGN 16

struct pool_state {
	pthread_mutex_t lock;
	uint64_t va, size;
	struct { uint64_t off, size; } *used;
	unsigned int n, cap;
};

/* Room for one more used block? */
static bool pool_room(struct pool_state *p)
{
	unsigned int cap = p->cap ? 2 * p->cap : 64;
	void *bigger;

	if (p->n < p->cap)
		return true;
	bigger = realloc(p->used, sizeof(*p->used) * cap);
	if (!bigger)
		return false;
	p->used = bigger;
	p->cap = cap;
	return true;
}

static uint64_t sys_malloc(struct megpu_service *svc,
			   const struct drm_megpu_syscall *c, void *priv)
{
	struct pool_state *p = priv;
	uint64_t size = ((uint64_t)c->args[0] + POOL_ALIGN - 1) &
			~(uint64_t)(POOL_ALIGN - 1);
	uint64_t at = 0, va = 0;
	unsigned int i;

	(void)svc;
	if (!size)
		return 0;
	pthread_mutex_lock(&p->lock);
	for (i = 0; i <= p->n; i++) {
		uint64_t next = i < p->n ? p->used[i].off : p->size;

		if (next - at >= size)
			break;
		if (i < p->n)
			at = p->used[i].off + p->used[i].size;
	}
	if (i <= p->n && pool_room(p)) {
		memmove(&p->used[i + 1], &p->used[i],
			sizeof(*p->used) * (p->n - i));
		p->used[i].off = at;
		p->used[i].size = size;
		p->n++;
		va = p->va + at;
	}
	pthread_mutex_unlock(&p->lock);
	return va;
}

static uint64_t sys_free(struct megpu_service *svc,
			 const struct drm_megpu_syscall *c, void *priv)
{
	struct pool_state *p = priv;
	uint64_t ret = MEGPU_SYS_ERR(-EINVAL);
	unsigned int i;

	(void)svc;
	pthread_mutex_lock(&p->lock);
	for (i = 0; i < p->n; i++) {
		if (p->va + p->used[i].off == c->args[0]) {
			memmove(&p->used[i], &p->used[i + 1],
				sizeof(*p->used) * (p->n - i - 1));
			p->n--;
			ret = 0;
			break;
		}
	}
	pthread_mutex_unlock(&p->lock);
	return ret;
}

int megpu_service_malloc(struct megpu_service *svc, struct megpu_bo *pool)
{
	struct pool_state *p;
	int ret;

	if (svc->pool_state)
		return -EBUSY;
	p = calloc(1, sizeof(*p));
	if (!p)
		return -ENOMEM;
	pthread_mutex_init(&p->lock, NULL);
	p->va = pool->va;
	p->size = pool->size;
	ret = megpu_service_add_bo(svc, pool);
	ret = ret ?: megpu_service_handle(svc, MEGPU_SYS_MALLOC, sys_malloc, p);
	ret = ret ?: megpu_service_handle(svc, MEGPU_SYS_FREE, sys_free, p);
	if (ret) {
		free(p);
		return ret;
	}
	svc->pool_state = p;
	return 0;
}

/* --- fileio --- */

static uint64_t sys_fileio(struct megpu_service *svc,
			   const struct drm_megpu_syscall *c, void *priv)
{
	const void *src = megpu_service_ptr(svc, c->args[0], c->args[1]);
	uint32_t done = 0;
	ssize_t w;

	(void)priv;
	if (!src)
		return MEGPU_SYS_ERR(-EFAULT);
	while (done < c->args[1]) {
		w = pwrite(svc->file_fd, (const uint8_t *)src + done,
			   c->args[1] - done, (off_t)c->args[2] + done);
		if (w < 0 && errno == EINTR)
			continue;
		if (w < 0)
			return MEGPU_SYS_ERR(-errno);
		if (!w)
			break;
		done += w;
	}
	return done;
}

int megpu_service_fileio(struct megpu_service *svc, int fd)
{
	if (fd < 0)
		return -EBADF;
	svc->file_fd = fd;
	return megpu_service_handle(svc, MEGPU_SYS_FILEIO, sys_fileio, NULL);
}

void megpu_service_fini(struct megpu_service *svc)
{
	struct pf_state *pf = svc->printf_state;
	struct pool_state *p = svc->pool_state;

	megpu_service_stop(svc);
	if (pf) {
		pthread_mutex_destroy(&pf->lock);
		free(pf);
	}
	if (p) {
		pthread_mutex_destroy(&p->lock);
		free(p->used);
		free(p);
	}
	pthread_mutex_destroy(&svc->lock);
	memset(svc, 0, sizeof(*svc));
	svc->file_fd = -1;
}
