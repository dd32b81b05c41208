/* The displays of a tools/call result as MCP content blocks, after the
 * text block: one block per display, from its richest form. PNG and SVG
 * are image blocks (base64 data, mimeType image/png or image/svg+xml);
 * HTML and JSON are embedded text resources
 * (codecage://display/N.html, .json); plain text is a text block. */
#include <string.h>

#include "json_out.h"
#include "server.h"

void mcp_display_blocks(struct cc_buf *o, const cc_result *r)
{
	static const char *const order[] = {
		"image/png", "image/svg+xml", "text/html", "application/json", "text/plain",
	};
	size_t n = cc_result_display_count(r);

	for (size_t i = 0; i < n; i++) {
		size_t len = 0, k = 0;
		const char *data = NULL;
		for (; k < sizeof(order) / sizeof(order[0]); k++)
			if ((data = cc_result_display_data(r, i, order[k], &len)))
				break;
		if (!data)
			continue;
		if (k <= 1) {
			cc_buf_printf(o, ",{\"type\":\"image\",\"mimeType\":\"%s\",\"data\":\"",
				      order[k]);
			cc_base64(o, (const unsigned char *)data, len);
			cc_buf_puts(o, "\"}");
		} else if (k <= 3) {
			cc_buf_printf(o,
				      ",{\"type\":\"resource\",\"resource\":{\"uri\":"
				      "\"codecage://display/%zu.%s\",\"mimeType\":\"%s\",\"text\":",
				      i + 1, k == 2 ? "html" : "json", order[k]);
			cc_json_string(o, data, len);
			cc_buf_puts(o, "}}");
		} else {
			cc_buf_puts(o, ",{\"type\":\"text\",\"text\":");
			cc_json_string(o, data, len);
			cc_buf_puts(o, "}");
		}
	}
}
