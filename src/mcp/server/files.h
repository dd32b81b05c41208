/* Files of an MCP session (files.c): the `files` argument of a tools/call,
 * what a call created or changed, and scratch files as MCP resources.
 * Each function here talks to a runtime between evals, so it runs in the
 * session's turn (session.c). */
#ifndef CC_MCP_FILES_H
#define CC_MCP_FILES_H

#include "buf.h"
#include "session.h"

#define MCP_MAX_FILES_IN 100	    /* files one call may pass */
#define MCP_MAX_FILES_SHOWN 200	    /* changed files listed per call */
#define MCP_MAX_RESOURCES 1000	    /* resources listed per language */
#define MCP_MAX_RESOURCE (8u << 20) /* bytes of one resources/read */

/* Check arguments.files (borrowed): an object of at most MCP_MAX_FILES_IN
 * {path: text | {"$bytes": base64}}, paths without "..". NULL when fine,
 * else the reason (static text). */
const char *mcp_files_check(const json_t *files);

/* Write each of files (checked) into rt: a relative path is under /tmp;
 * missing parent folders are made by the guest's own file calls (the
 * sandbox's rules bind them as they bind the write). Returns 0, or -1 with
 * err (invalid_input naming the file, or the library's kinds). */
int mcp_files_write(cc_runtime *rt, int lang, const json_t *files, cc_error *err);

/* Copy the files and folders under /tmp of the live runtime `from` into
 * `to` (a reset or replaced runtime of the same session and language), at
 * most budget bytes in all (the scratch size) and what one read can carry
 * (the runtime's max_result): each through the host's file calls, folders
 * with the guest's own (as mcp_files_write). Returns how many files were
 * copied; *lost counts the ones that were not (too big, no room, a failed
 * read or write). A dead `from` copies nothing. */
int mcp_scratch_carry(cc_runtime *from, cc_runtime *to, int lang, uint64_t budget, size_t *lost);

/* The files (not folders) under /tmp (when cfg has scratch) and each
 * writable directory grant of cfg: path, size, mtime, sorted by path.
 * Empty when rt is dead or a listing fails; NULL when out of memory. Free
 * with mcp_snapshot_free. */
struct mcp_snapshot;
struct mcp_snapshot *mcp_snapshot_take(cc_runtime *rt, const struct mcp_config *cfg);
void mcp_snapshot_free(struct mcp_snapshot *s);

/* The files of `after` that are new or changed (size or mtime) since
 * `before` (either may be NULL): a JSON array of {path, size} into json,
 * and "  PATH (N bytes)" lines into text; at most MCP_MAX_FILES_SHOWN. */
void mcp_snapshot_diff(const struct mcp_snapshot *before, const struct mcp_snapshot *after,
		       struct cc_buf *json, struct cc_buf *text);

/* The resources/list result for the session's live runtimes rt (entries
 * may be NULL): every file of each one's snapshot as {uri, name, title,
 * mimeType, size}. Owned; NULL when out of memory. */
json_t *mcp_resources_list(cc_runtime *const rt[MCP_LANGS], const struct mcp_config *cfg);

/* The language of a codecage://LANG/PATH URI (MCP_LANG_*), *path pointing
 * at its /PATH; -1 for any other URI. */
int mcp_resource_lang(const char *uri, const char **path);

/* The resources/read result {contents: [{uri, mimeType, text | blob}]}
 * for path in rt (UTF-8 text as text, other bytes as base64), at most
 * MCP_MAX_RESOURCE bytes. Owned; NULL with err (invalid_input for a bad
 * or missing path, output_limit, the library's kinds). */
json_t *mcp_resource_read(cc_runtime *rt, const char *uri, const char *path, cc_error *err);

/* Decode base64 s[0..n) (RFC 4648, padding optional, no other
 * characters) into *out (malloc'd, *len bytes). Returns 0, or -1 for bad
 * text or out of memory. */
int mcp_b64_decode(const char *s, size_t n, unsigned char **out, size_t *len);

#endif
