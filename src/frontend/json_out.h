/* src/frontend/: what the front ends share (the CLI, the MCP server, test
 * drivers; never libcodecage or a worker): values as JSON or text
 * (json_out.c), the flags both commands parse (flags.c, deps_flags.c), the
 * hints in their messages (hint.c). It may include src/common/ and the
 * public headers.
 *
 * Rendering values as JSON (the tagged mapping of the CLI's --json and the MCP
 * server's structuredContent) or as readable text. Pure: no I/O. */
#ifndef CC_JSON_OUT_H
#define CC_JSON_OUT_H

#include <stdbool.h>
#include <stdio.h>

#include "buf.h"
#include "codecage.h"

/* JSON string literal of s[0..n) (valid UTF-8 in, RFC 8259 escapes out). */
void cc_json_string(struct cc_buf *b, const char *s, size_t n);

/* A value as JSON. Types JSON lacks use tagged objects:
 * {"$float": "NaN" | "Infinity" | "-Infinity"}, {"$bigint": "digits"},
 * {"$bytes": "base64"}, {"$date": "1970-01-01T00:00:00.000000Z"} (a
 * timestamp that keeps its offset: the local time and the offset,
 * "1970-01-01T05:30:00.000000+05:30"), {"$day": "1970-01-01"} (a date),
 * {"$timedelta": "-P1DT2H3M4.5S"} (ISO 8601, days of 24 hours),
 * {"$timezone": "+05:30"} (its name is not shown), {"$path": "/a/b"}.
 * Finite floats print in the shortest form that reads back exactly and
 * always with a '.', 'e' or "-0.0" so they stay floats. */
void cc_json_value(struct cc_buf *b, const cc_value *v);

/* Standard base64 (with padding) of p[0..n). */
void cc_base64(struct cc_buf *b, const unsigned char *p, size_t n);

/* A display's MIME bundle (a map of MIME type to str, or bytes for
 * image/png: see cc_result_display) as a JSON object of strings, the
 * bytes in base64, as notebooks store them. */
void cc_json_display(struct cc_buf *b, const cc_value *bundle);

/* A value in readable form: a top-level string as its raw text, other
 * values like JSON but NaN/Infinity/bigints bare, bytes as b'..', dates,
 * durations and offsets in ISO 8601 (the tags' text), a top-level path as
 * its text. */
void cc_readable_value(struct cc_buf *b, const cc_value *v);

#endif
