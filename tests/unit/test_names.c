/* The public names of closed sets: languages (cc_language_name and
 * cc_language_parse, every spelling a front end accepts) and sandbox modes. */
#include <criterion/criterion.h>
#include <string.h>

#include "codecage.h"

Test(names, language_spellings_parse)
{
	static const struct {
		const char *s;
		cc_language want;
	} ok[] = {
		{ "javascript", CC_LANG_JAVASCRIPT }, { "js", CC_LANG_JAVASCRIPT },
		{ "JavaScript", CC_LANG_JAVASCRIPT }, { "JS", CC_LANG_JAVASCRIPT },
		{ "python", CC_LANG_PYTHON },	      { "py", CC_LANG_PYTHON },
		{ "Python", CC_LANG_PYTHON },	      { "PY", CC_LANG_PYTHON },
	};
	for (size_t i = 0; i < sizeof(ok) / sizeof(ok[0]); i++) {
		cc_language l = (cc_language)0;
		cr_assert_eq(cc_language_parse(ok[i].s, &l), 0, "%s", ok[i].s);
		cr_assert_eq(l, ok[i].want, "%s", ok[i].s);
	}
}

Test(names, other_strings_are_refused_untouched)
{
	static const char *const bad[] = { "",	  "p",	 "pyt",	       "javascrip", "jss",
					   "py ", " js", "typescript", "python3",   "cobol" };
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		cc_language l = (cc_language)77;
		cr_assert_eq(cc_language_parse(bad[i], &l), -1, "'%s'", bad[i]);
		cr_assert_eq((int)l, 77, "'%s' wrote *lang", bad[i]);
	}
	cc_language l;
	cr_assert_eq(cc_language_parse(NULL, &l), -1);
}

Test(names, language_names_round_trip)
{
	cr_assert_str_eq(cc_language_name(CC_LANG_JAVASCRIPT), "javascript");
	cr_assert_str_eq(cc_language_name(CC_LANG_PYTHON), "python");
	cr_assert_str_eq(cc_language_name((cc_language)0), "unknown");
	cr_assert_str_eq(cc_language_name((cc_language)99), "unknown");
	for (int l = CC_LANG_JAVASCRIPT; l <= CC_LANG_PYTHON; l++) {
		cc_language back = (cc_language)0;
		cr_assert_eq(cc_language_parse(cc_language_name((cc_language)l), &back), 0);
		cr_assert_eq((int)back, l);
	}
}
