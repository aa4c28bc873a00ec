// SPDX-License-Identifier: MIT
/* Wave programs in buffer objects, ready for a DISPATCH. */

#include <errno.h>
#include <string.h>

#include "libmegpu.h"

int megpu_prog_load(struct megpu *gpu, const char *src, struct megpu_bo **bo,
		    uint32_t *len, char *err, size_t errlen)
{
	struct megpu_prog prog;
	int ret;

	ret = megpu_asm(src, &prog, err, errlen);
	if (ret)
		return ret;
	ret = megpu_bo_new(gpu, (uint64_t)prog.len * 8, 0, bo);
	if (!ret) {
		ret = megpu_bo_map(*bo);
		if (ret) {
			megpu_bo_free(*bo);
			*bo = NULL;
		}
	}
	if (!ret) {
		megpu_prog_store(&prog, (*bo)->map);
		*len = prog.len;
	}
	megpu_prog_fini(&prog);
	return ret;
}
