/* SPDX-License-Identifier: MIT */
/*
 * megpu DRM driver uAPI.
 */
#ifndef _MEGPU_DRM_H_
#define _MEGPU_DRM_H_

#include "drm.h"

#if defined(__cplusplus)
extern "C" {
#endif

#define DRM_MEGPU_GET_PARAM		0x00

#define DRM_IOCTL_MEGPU_GET_PARAM \
	DRM_IOWR(DRM_COMMAND_BASE + DRM_MEGPU_GET_PARAM, \
		 struct drm_megpu_get_param)

/**
 * enum drm_megpu_param - parameters for &struct drm_megpu_get_param
 */
enum drm_megpu_param {
	/** @DRM_MEGPU_PARAM_DEVICE_ID: PCI device ID of the GPU. */
	DRM_MEGPU_PARAM_DEVICE_ID = 0,
	/**
	 * @DRM_MEGPU_PARAM_HW_VERSION: hardware version, major in bits 31:16
	 * and minor in bits 15:0.
	 */
	DRM_MEGPU_PARAM_HW_VERSION = 1,
	/** @DRM_MEGPU_PARAM_ENGINE_COUNT: number of engines. */
	DRM_MEGPU_PARAM_ENGINE_COUNT = 2,
	/**
	 * @DRM_MEGPU_PARAM_FEATURES: feature bits, the device's capability
	 * register (MEGPU_CAP_* in the hardware contract).
	 */
	DRM_MEGPU_PARAM_FEATURES = 3,
	/**
	 * @DRM_MEGPU_PARAM_ENGINE_TYPES: type of each engine, 2 bits per
	 * engine starting at bit 0: 0 gfx, 1 compute, 2 copy, 3 video.
	 */
	DRM_MEGPU_PARAM_ENGINE_TYPES = 4,
};

/**
 * struct drm_megpu_get_param - query a device parameter
 *
 * Returns -EINVAL for an unknown @param or a non-zero @pad.
 */
struct drm_megpu_get_param {
	/** @param: in, one of &enum drm_megpu_param. */
	__u32 param;
	/** @pad: must be zero. */
	__u32 pad;
	/** @value: out, the parameter's value. */
	__u64 value;
};

#if defined(__cplusplus)
}
#endif

#endif /* _MEGPU_DRM_H_ */
