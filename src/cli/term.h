/* What the CLI writes to a terminal. Front-end helper (src/cli/).
 *
 * Guest output, a printed value and a guest error's text reach the user's
 * terminal, which obeys control sequences: OSC 52 writes the clipboard,
 * others set the title, move the cursor or erase what codecage printed.
 * When a stream is a terminal (isatty) and --raw was not given, everything
 * written through here is made inert, the way `cat -v` and `less` show it:
 *
 *   - C0 controls other than newline and tab, and DEL, in caret notation
 *     (ESC is "^[", CR "^M", DEL "^?");
 *   - C1 controls (U+0080..U+009F), the bidirectional overrides, embeddings,
 *     isolates and marks (U+061C, U+200E, U+200F, U+202A..U+202E,
 *     U+2066..U+2069) as "<U+XXXX>";
 *   - bytes that are not well-formed UTF-8 (a lone 0x9B is CSI to some
 *     terminals) as "<XX>" in hex;
 *   - a guest line whose first non-blank characters are "codecage" is
 *     prefixed with CC_TERM_GUEST_MARK, so it cannot pass for one of
 *     codecage's own diagnostics (which start with "codecage:" and go to
 *     stderr);
 *   - guest text that does not end in a newline gets one, so what follows
 *     starts its own line.
 *
 * Not a terminal (a pipe, a file) or --raw: the bytes pass unchanged. */
#ifndef CC_CLI_TERM_H
#define CC_CLI_TERM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#define CC_TERM_GUEST_MARK "[guest] "

struct cc_term {
	FILE *f;
	bool escape; /* a terminal, and not --raw */
};

/* Set t up for f: escape when f is a terminal and raw is false. */
void cc_term_init(struct cc_term *t, FILE *f, bool raw);

/* Write guest text s[0..n) (borrowed): output, a value, a traceback. */
void cc_term_guest(const struct cc_term *t, const char *s, size_t n);

/* Write s (borrowed, NUL-terminated) as part of one of codecage's own
 * lines: escaped like guest text, newline and tab included, so it cannot
 * start a line of its own. Unchanged when not escaping. */
void cc_term_inline(const struct cc_term *t, const char *s);

#endif
