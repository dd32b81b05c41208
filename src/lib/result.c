/* cc_result: what one eval produced. Accessors never return NULL strings. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "buf.h"
#include "supervisor.h"

cc_result *cc_result_alloc(void)
{
	return calloc(1, sizeof(cc_result));
}

void cc_result_set_error(cc_result *r, cc_error_kind kind, const char *type, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	char *msg = cc_vstrprintf(fmt, ap);
	va_end(ap);
	free(r->type);
	free(r->message);
	free(r->traceback);
	free(r->value_type);
	r->value_type = NULL;
	cc_value_free(r->value);
	r->value = NULL;
	r->kind = kind;
	r->type = type ? strdup(type) : NULL;
	r->message = msg;
	r->traceback = NULL;
}

CC_EXPORT bool cc_result_ok(const cc_result *r)
{
	return r && r->kind == CC_OK;
}

CC_EXPORT const cc_value *cc_result_value(const cc_result *r)
{
	return r ? r->value : NULL;
}

static const char *out_text(const cc_result *r, int fd, size_t *len)
{
	if (!r || !r->out[fd]) {
		if (len)
			*len = 0;
		return "";
	}
	if (len)
		*len = r->out_len[fd];
	return r->out[fd];
}

CC_EXPORT const char *cc_result_stdout(const cc_result *r, size_t *len)
{
	return out_text(r, 1, len);
}

CC_EXPORT const char *cc_result_stderr(const cc_result *r, size_t *len)
{
	return out_text(r, 2, len);
}

CC_EXPORT cc_error_kind cc_result_error_kind(const cc_result *r)
{
	return r ? r->kind : CC_ERR_INTERNAL;
}

CC_EXPORT const char *cc_result_error_type(const cc_result *r)
{
	return r && r->type ? r->type : "";
}

CC_EXPORT const char *cc_result_error_message(const cc_result *r)
{
	return r && r->message ? r->message : "";
}

CC_EXPORT const char *cc_result_error_traceback(const cc_result *r)
{
	return r && r->traceback ? r->traceback : "";
}

CC_EXPORT const char *cc_result_value_type(const cc_result *r)
{
	return r && r->kind == CC_OK ? r->value_type : NULL;
}

CC_EXPORT size_t cc_result_display_count(const cc_result *r)
{
	return r && r->displays ? r->displays->u.array.len : 0;
}

CC_EXPORT const cc_value *cc_result_display(const cc_result *r, size_t i)
{
	return i < cc_result_display_count(r) ? r->displays->u.array.items[i] : NULL;
}

CC_EXPORT const char *cc_result_display_data(const cc_result *r, size_t i, const char *mime,
					     size_t *len)
{
	const cc_value *d = cc_result_display(r, i);
	bool found = false;
	const cc_value *v = d && mime ? cc_value_map_get(d, mime, &found) : NULL;

	if (len)
		*len = v ? v->u.str.len : 0;
	return v ? v->u.str.ptr : NULL;
}

CC_EXPORT double cc_result_duration(const cc_result *r)
{
	return r ? r->duration : 0;
}

CC_EXPORT void cc_result_free(cc_result *r)
{
	if (!r)
		return;
	cc_value_free(r->value);
	cc_value_free(r->displays);
	free(r->out[1]);
	free(r->out[2]);
	free(r->type);
	free(r->message);
	free(r->traceback);
	free(r->value_type);
	free(r);
}
