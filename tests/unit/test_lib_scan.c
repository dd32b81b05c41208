/* The library loader's pure helpers (issue 27): the specifiers a
 * JavaScript file imports or requires (lib_scan.c), found outside
 * comments, strings, templates and regular expressions; paths inside a
 * package; which scripts run as a browser global (lib_pkg.c). */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#include "lib_pkg.h"
#include "lib_scan.h"

struct seen {
	char text[1024];
};

static int collect(void *u, enum cc_js_dep kind, const char *spec, size_t len)
{
	struct seen *s = u;
	size_t n = strlen(s->text);
	snprintf(s->text + n, sizeof(s->text) - n, "%s%c:%.*s", n ? " " : "",
		 kind == CC_JS_IMPORT ? 'i' : 'r', (int)len, spec);
	return 0;
}

static void expect(const char *code, const char *want)
{
	struct seen s = { "" };
	cr_assert_eq(cc_js_scan(code, strlen(code), collect, &s), 0);
	cr_assert_str_eq(s.text, want, "in: %s", code);
}

Test(lib_scan, static_imports_and_re_exports)
{
	expect("import a from \"x\"; import {b as c} from 'y'; import * as d from \"z\";\n"
	       "import 'side'; export * from \"w\"; export {e} from 'v'; export {f};\n"
	       "export * as ns from './n.js'; import g, {h} from '../up.mjs';",
	       "i:x i:y i:z i:side i:w i:v i:./n.js i:../up.mjs");
	/* minified, as esbuild and rollup write it */
	expect("import t from\"@babel/runtime/helpers/typeof\";import{zlibSync as "
	       "e}from\"fflate\";",
	       "i:@babel/runtime/helpers/typeof i:fflate");
}

Test(lib_scan, requires_in_code_only)
{
	expect("var a = require('a'), b = require(\"./b.json\"); x.require('no');\n"
	       "// require('no')\n/* import x from 'no' */ var s = \"require('no')\";\n"
	       "var t = `import x from 'no' ${require('yes')} and ${`in ${require('deep')}`}`;\n"
	       "var r = /require\\('no'\\)/g, q = n / require('div') / 2; require(v); "
	       "require('a');",
	       "r:a r:./b.json r:yes r:deep r:div r:a");
}

Test(lib_scan, what_is_not_a_static_import)
{
	expect("import('dyn'); import.meta.url; var o = {import: 1, require: 2}; o.import;\n"
	       "var re = /import x from 'no'/; if (a) /x/.test(b);",
	       "");
	/* a regex class may hold a slash; a division is not a regex */
	expect("var c = /[/]require('no')/; var d = x / 2 / require('yes');", "r:yes");
}

Test(lib_pkg, paths_stay_inside)
{
	char *p = cc_lib_normpath("a/./b/../c//d/");
	cr_assert_str_eq(p, "a/c/d");
	free(p);
	cr_assert_null(cc_lib_normpath("../x"));
	cr_assert_null(cc_lib_normpath("a/../../x"));
	cr_assert_null(cc_lib_normpath("/etc/passwd"));
	p = cc_lib_join("three/build", "./three.core.js");
	cr_assert_str_eq(p, "three/build/three.core.js");
	free(p);
	p = cc_lib_join("", "x.js");
	cr_assert_str_eq(p, "x.js");
	free(p);
}

Test(lib_pkg, which_scripts_run_as_a_global)
{
	cr_assert(cc_lib_looks_global("/* license */\n!function(t){t.x=1}(this);"));
	cr_assert(cc_lib_looks_global("\"use strict\";(function(){})();"));
	cr_assert(cc_lib_looks_global(";(function() {}).call(this);"));
	cr_assert(cc_lib_looks_global("\"use strict\";var dagre=(()=>{ return 1 })();"));
	cr_assert(cc_lib_looks_global("if (typeof define === 'function' && define.amd) {}"));
	cr_assert(
		!cc_lib_looks_global("Object.defineProperty(exports,\"__esModule\",{value:!0});"));
	cr_assert(!cc_lib_looks_global("\"use strict\";var J=Object.defineProperty;"));
	cr_assert(!cc_lib_looks_global("export const e = 1;"));
	char *far = malloc(4096);
	memset(far, ' ', 4096);
	memcpy(far, "module.exports=1;", 17);
	memcpy(far + 3000, "define.amd", 10);
	far[4095] = 0;
	cr_assert(!cc_lib_looks_global(far), "a define.amd far down is a bundled library's");
	free(far);
}
