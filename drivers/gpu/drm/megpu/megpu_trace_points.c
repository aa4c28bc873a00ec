// SPDX-License-Identifier: GPL-2.0
/* Copyright 2026 The megpu authors */

#define CREATE_TRACE_POINTS
#include "megpu_trace.h"
