/* What JavaScript's errors add for a model to act on: the setting that
 * provides a missing global (fetch: allow_net; fs and require: a scratch
 * or a mount), why an import declaration fails, that the code looks like
 * Python. Worker side; text only (js_hints.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "confine.h"
#include "js_hints.h"
#include "lang_guess.h"

char *cc_js_name_hint(const char *type, char *msg)
{
	static const char net[] = "the network is off: the host lets the guest reach listed hosts "
				  "with allow_net: --allow-net ENTRY in the CLI and codecage mcp, "
				  "RuntimeConfig(allow_net=[...]) in Python, cc_options.net in C";
	static const char files[] =
		"fs and require exist only in a session with files: the host gives it a "
		"scratch (--scratch MIB in the CLI and codecage mcp, "
		"RuntimeConfig(scratch=BYTES) in Python, cc_options.scratch_bytes in C) or a "
		"mount (--mount HOST:GUEST, Mount(host, guest), cc_options.mounts)";
	const char *why = NULL;
	char *out = NULL;
	if (!msg || strcmp(type, "ReferenceError"))
		return msg;
	if (!strcmp(msg, "'fetch' is not defined"))
		why = net;
	else if (!cc_confine_has_files() &&
		 (!strcmp(msg, "'fs' is not defined") || !strcmp(msg, "'require' is not defined")))
		why = files;
	if (!why || asprintf(&out, "%s (%s)", msg, why) < 0)
		return msg;
	free(msg);
	return out;
}

/* QuickJS, in script mode, knows only import() and asks for its '(' at
 * an import declaration. */
void cc_js_syntax_hint(struct cc_outcome *o, const char *code, size_t len)
{
	char *msg = NULL;

	if (o->ok || o->kind != CC_ERR_SYNTAX)
		return;
	/* the parser's words for an import declaration in a script */
	bool imp = o->message && !strcmp(o->message, "expecting '('") &&
		   cc_has_static_import(code, len);
	bool py = cc_looks_like_python(code, len);
	if (!imp && !py)
		return;
	if (asprintf(&msg, "%s%s",
		     imp	  ? CC_HINT_STATIC_IMPORT
		     : o->message ? o->message
				  : "",
		     py ? CC_HINT_LOOKS_PYTHON : "") < 0)
		return;
	cc_outcome_set_message(o, msg);
	free(msg);
}

const char *cc_js_no_modules_text(void)
{
	return cc_confine_has_files() ? "modules are not available in the sandbox (fs is: the "
					"global fs, or require('fs'))"
				      : "modules are not available in the sandbox (fs is, in a "
					"session with a scratch or a mount)";
}
