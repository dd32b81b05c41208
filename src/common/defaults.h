/* The default limits, in one place. cc_options_init (src/lib/options.c)
 * fills cc_limits from them (codecage.h's comments on cc_limits say the
 * same numbers), the Python package reads them through the extension
 * (_codecage.defaults, which calls cc_options_init), and the worker's test
 * modes (--sweep, --export-bpf: src/worker/main.c) confine themselves with
 * them. Pure data; no I/O. */
#ifndef CC_DEFAULTS_H
#define CC_DEFAULTS_H

#include <stdint.h>

#include "codecage.h"

#define CC_DEFAULT_TIMEOUT_S 30.0
#define CC_DEFAULT_GRACE_S 0.5
/* QuickJS heaps are small, and a runaway allocation should end as
 * memory_limit well before a short deadline */
#define CC_DEFAULT_MAX_MEMORY_JS (128ull << 20)
/* CPython with numpy or pandas needs more */
#define CC_DEFAULT_MAX_MEMORY_PY (512ull << 20)
#define CC_DEFAULT_MAX_OUTPUT (1ull << 20) /* stdout, and stderr, per eval */
#define CC_DEFAULT_MAX_RESULT (16ull << 20)
#define CC_DEFAULT_MAX_SOURCE (16ull << 20)
#define CC_DEFAULT_CPU_S 3600
#define CC_DEFAULT_MAX_OPEN_FILES 64
#define CC_DEFAULT_MAX_PENDING_CALLS 64

/* The engine heap a language gets by default, bytes. */
static inline uint64_t cc_default_max_memory(cc_language lang)
{
	return lang == CC_LANG_PYTHON ? CC_DEFAULT_MAX_MEMORY_PY : CC_DEFAULT_MAX_MEMORY_JS;
}

#endif
