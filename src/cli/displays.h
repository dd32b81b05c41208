/* The CLI's rendering of a result's displays (displays.c). */
#ifndef CC_CLI_DISPLAYS_H
#define CC_CLI_DISPLAYS_H

#include "buf.h"
#include "codecage.h"

/* Append `, "displays": [...]` to the --json object: one object per
 * display, MIME type to text, image/png in base64. */
void cli_json_displays(struct cc_buf *b, const cc_result *r);

/* --display-dir: write each display, in its richest form (PNG, SVG, HTML,
 * JSON, text), as DIR/display-N.EXT (N from 1), creating DIR (one level)
 * if needed and replacing files of those names (never through a symbolic
 * link); one line per file on stderr. Returns 0, or -1 after a message on
 * stderr. */
int cli_save_displays(const cc_result *r, const char *dir);

/* Text mode without --display-dir: one line per display on stderr saying
 * what it is and how to save it. */
void cli_note_displays(const cc_result *r);

#endif
