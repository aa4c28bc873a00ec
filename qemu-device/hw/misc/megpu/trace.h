#include "trace/trace-hw_misc_megpu.h"
