/* display(value, mimeType) for JavaScript guests: one MIME bundle per call
 * into the eval's displays (display.c), e.g. an SVG string from Vega-Lite
 * or D3 as display(svg, 'image/svg+xml').
 *
 * mimeType is one of image/png (value: a Uint8Array or ArrayBuffer
 * holding a PNG file), image/svg+xml, text/html, text/plain (value: a
 * string), application/json (a string of JSON text, or any value,
 * JSON.stringify'd). Without one: a string is text/plain, bytes are
 * image/png, anything else application/json. Bad input throws TypeError;
 * a display over the caps is dropped and the eval ends as output_limit. */
#include <string.h>

#include "js_value.h"
#include "worker.h"

static JSValue js_display(JSContext *ctx, JSValueConst this_val, int argc, JSValueConst *argv)
{
	JSValueConst v = argc > 0 ? argv[0] : JS_UNDEFINED;
	JSClassID c = JS_GetClassID(v);
	bool bytes = c == cc_js.cls_uint8_array || c == cc_js.cls_array_buffer;
	const char *mime = NULL, *text = NULL;
	JSValue buf = JS_UNDEFINED, json = JS_UNDEFINED, ret = JS_EXCEPTION;
	struct cc_display_part part = { 0 };

	(void)this_val;
	if (argc > 1 && !JS_IsUndefined(argv[1])) {
		mime = JS_IsString(argv[1]) ? JS_ToCString(ctx, argv[1]) : NULL;
		if (!mime)
			return JS_ThrowTypeError(ctx, "display: mimeType must be a string");
	}
	part.mime = mime	     ? mime
		    : bytes	     ? "image/png"
		    : JS_IsString(v) ? "text/plain"
				     : "application/json";
	if (!strcmp(part.mime, "image/png")) {
		size_t off = 0, len = 0, bpe, size;
		if (!bytes) {
			JS_ThrowTypeError(ctx, "display: image/png data must be a Uint8Array or an "
					       "ArrayBuffer");
			goto out;
		}
		buf = c == cc_js.cls_uint8_array ? JS_GetTypedArrayBuffer(ctx, v, &off, &len, &bpe)
						 : JS_DupValue(ctx, v);
		uint8_t *data = JS_IsException(buf) ? NULL : JS_GetArrayBuffer(ctx, &size, buf);
		if (!data)
			goto out; /* detached: QuickJS threw */
		if (c != cc_js.cls_uint8_array)
			len = size;
		if (off > size || len > size - off) {
			JS_ThrowRangeError(ctx, "display: the Uint8Array reaches past its buffer");
			goto out;
		}
		part.data = (const char *)data + off;
		part.len = len;
	} else {
		if (!JS_IsString(v) && !strcmp(part.mime, "application/json")) {
			json = JS_JSONStringify(ctx, v, JS_UNDEFINED, JS_UNDEFINED);
			if (JS_IsException(json))
				goto out;
			if (!JS_IsString(json)) {
				JS_ThrowTypeError(ctx, "display: JSON.stringify gave no text for "
						       "this value");
				goto out;
			}
			v = json;
		} else if (!JS_IsString(v)) {
			JS_ThrowTypeError(ctx, "display: %s data must be a string", part.mime);
			goto out;
		}
		text = JS_ToCStringLen(ctx, &part.len, v);
		if (!text)
			goto out;
		part.data = text;
	}
	switch (cc_worker_display_add(&part, 1)) {
	case CC_DISPLAY_BAD:
		JS_ThrowTypeError(ctx,
				  "display: unknown MIME type '%s'; use image/png, image/svg+xml, "
				  "text/html, text/plain or application/json",
				  part.mime);
		break;
	case CC_DISPLAY_NOT_PNG:
		JS_ThrowTypeError(ctx, "display: the image/png data is not a PNG file");
		break;
	case CC_DISPLAY_NOMEM:
		JS_ThrowOutOfMemory(ctx);
		break;
	default: /* 0, or CC_DISPLAY_FULL: dropped, the result will say so */
		ret = JS_UNDEFINED;
	}
out:
	if (text)
		JS_FreeCString(ctx, text);
	if (mime)
		JS_FreeCString(ctx, mime);
	JS_FreeValue(ctx, buf);
	JS_FreeValue(ctx, json);
	return ret;
}

int cc_js_display_install(JSContext *ctx)
{
	JSValue f = JS_NewCFunction(ctx, js_display, "display", 2);
	if (JS_IsException(f))
		return -1;
	JSValue global = JS_GetGlobalObject(ctx);
	int r = JS_DefinePropertyValueStr(ctx, global, "display", f,
					  JS_PROP_WRITABLE | JS_PROP_CONFIGURABLE);
	JS_FreeValue(ctx, global);
	return r < 0 ? -1 : 0;
}
