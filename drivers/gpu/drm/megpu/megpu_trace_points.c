// SPDX-License-Identifier: GPL-2.0
/* Copyright 2026 The megpu authors */
/**
 * DOC: Tracepoints
 *
 * The one place that creates the tracepoints of megpu_trace.h.
 */

#define CREATE_TRACE_POINTS
#include "megpu_trace.h"
