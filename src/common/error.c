/* Error kinds, names, exit codes and message helpers; the names of
 * languages and sandbox modes. */
#include "error.h"

#include "buf.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const kind_names[CC_ERR_KIND_COUNT] = {
	[CC_OK] = "ok",
	[CC_ERR_GUEST] = "guest_error",
	[CC_ERR_SYNTAX] = "syntax_error",
	[CC_ERR_TIMEOUT] = "timeout",
	[CC_ERR_MEMORY_LIMIT] = "memory_limit",
	[CC_ERR_OUTPUT_LIMIT] = "output_limit",
	[CC_ERR_TOOL_BUDGET] = "tool_budget",
	[CC_ERR_WORKER_CRASHED] = "worker_crashed",
	[CC_ERR_PROTOCOL_VIOLATION] = "protocol_violation",
	[CC_ERR_SANDBOX_UNAVAILABLE] = "sandbox_unavailable",
	[CC_ERR_INVALID_INPUT] = "invalid_input",
	[CC_ERR_INTERNAL] = "internal",
};

/* DESIGN.md section 6. */
static const int kind_exit[CC_ERR_KIND_COUNT] = {
	[CC_OK] = 0,
	[CC_ERR_GUEST] = 1,
	[CC_ERR_SYNTAX] = 1,
	[CC_ERR_TIMEOUT] = 3,
	[CC_ERR_MEMORY_LIMIT] = 5,
	[CC_ERR_OUTPUT_LIMIT] = 5,
	[CC_ERR_TOOL_BUDGET] = 1,
	[CC_ERR_WORKER_CRASHED] = 5,
	[CC_ERR_PROTOCOL_VIOLATION] = 5,
	[CC_ERR_SANDBOX_UNAVAILABLE] = 4,
	[CC_ERR_INVALID_INPUT] = 2,
	[CC_ERR_INTERNAL] = 70,
};

CC_EXPORT const char *cc_error_kind_name(cc_error_kind kind)
{
	if ((unsigned)kind >= CC_ERR_KIND_COUNT)
		return "internal";
	return kind_names[kind];
}

CC_EXPORT int cc_error_kind_from_name(const char *name, size_t len)
{
	for (int k = 0; k < CC_ERR_KIND_COUNT; k++)
		if (strlen(kind_names[k]) == len && memcmp(kind_names[k], name, len) == 0)
			return k;
	return -1;
}

static const struct {
	const char *name;
	cc_language lang;
} lang_spellings[] = {
	/* the first spelling of each language is its name */
	{ "javascript", CC_LANG_JAVASCRIPT },
	{ "python", CC_LANG_PYTHON },
	{ "js", CC_LANG_JAVASCRIPT },
	{ "py", CC_LANG_PYTHON },
};

CC_EXPORT const char *cc_language_name(cc_language lang)
{
	for (size_t i = 0; i < sizeof(lang_spellings) / sizeof(lang_spellings[0]); i++)
		if (lang_spellings[i].lang == lang)
			return lang_spellings[i].name;
	return "unknown";
}

/* ASCII only: strcasecmp follows the locale, which a host process may set */
static bool ascii_case_equal(const char *a, const char *b)
{
	for (; *a && *b; a++, b++) {
		char x = *a >= 'A' && *a <= 'Z' ? (char)(*a + 32) : *a;
		if (x != *b)
			return false;
	}
	return *a == *b;
}

CC_EXPORT int cc_language_parse(const char *name, cc_language *lang)
{
	for (size_t i = 0; name && i < sizeof(lang_spellings) / sizeof(lang_spellings[0]); i++)
		if (ascii_case_equal(name, lang_spellings[i].name)) {
			*lang = lang_spellings[i].lang;
			return 0;
		}
	return -1;
}

static const char *const mode_names[] = {
	[CC_SANDBOX_REQUIRE] = "require", [CC_SANDBOX_AUTO] = "auto", [CC_SANDBOX_OFF] = "off"
};

CC_EXPORT const char *cc_sandbox_mode_name(cc_sandbox_mode mode)
{
	return (unsigned)mode <= CC_SANDBOX_OFF ? mode_names[mode] : mode_names[0];
}

CC_EXPORT int cc_sandbox_mode_parse(const char *name, cc_sandbox_mode *mode)
{
	for (int m = CC_SANDBOX_REQUIRE; m <= CC_SANDBOX_OFF; m++)
		if (name && !strcmp(name, mode_names[m])) {
			*mode = (cc_sandbox_mode)m;
			return 0;
		}
	return -1;
}

CC_EXPORT int cc_error_kind_exit_code(cc_error_kind kind)
{
	if ((unsigned)kind >= CC_ERR_KIND_COUNT)
		return 70;
	return kind_exit[kind];
}

CC_EXPORT void cc_error_clear(cc_error *err)
{
	if (!err)
		return;
	free(err->message);
	err->message = NULL;
	err->kind = CC_OK;
}

int cc_fail(cc_error *err, cc_error_kind kind, const char *fmt, ...)
{
	if (!err)
		return -1;
	va_list ap;
	va_start(ap, fmt);
	char *msg = cc_vstrprintf(fmt, ap);
	va_end(ap);
	free(err->message);
	err->message = msg;
	err->kind = kind;
	return -1;
}

int cc_fail_wrap(cc_error *err, const char *fmt, ...)
{
	if (!err)
		return -1;
	va_list ap;
	va_start(ap, fmt);
	char *ctx = cc_vstrprintf(fmt, ap), *msg;
	va_end(ap);
	if (ctx && (msg = cc_strprintf("%s: %s", ctx, err->message ? err->message : ""))) {
		free(err->message);
		err->message = msg;
	}
	free(ctx);
	return -1;
}
