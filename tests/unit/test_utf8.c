/* UTF-8 validation, repair and the source checks. */
#include <criterion/criterion.h>
#include <string.h>

#include "error.h"
#include "utf8.h"

static bool valid(const char *s)
{
	return cc_utf8_valid(s, strlen(s));
}

Test(utf8, accepts_well_formed)
{
	cr_assert(valid(""));
	cr_assert(valid("plain ascii"));
	cr_assert(valid("h\xc3\xa9llo"));     /* é */
	cr_assert(valid("\xe2\x82\xac"));     /* € */
	cr_assert(valid("\xf0\x9f\x98\x80")); /* 😀 */
	cr_assert(valid("\xf4\x8f\xbf\xbf")); /* U+10FFFF */
	cr_assert(cc_utf8_valid("a\0b", 3));  /* NUL is well-formed */
}

Test(utf8, rejects_ill_formed)
{
	cr_assert_not(valid("\x80"));		  /* lone continuation */
	cr_assert_not(valid("\xc0\xaf"));	  /* overlong '/' */
	cr_assert_not(valid("\xe0\x80\xaf"));	  /* overlong */
	cr_assert_not(valid("\xed\xa0\x80"));	  /* surrogate U+D800 */
	cr_assert_not(valid("\xf4\x90\x80\x80")); /* above U+10FFFF */
	cr_assert_not(valid("\xc3"));		  /* truncated */
	cr_assert_not(valid("\xff"));
}

Test(utf8, repair_replaces_each_maximal_subpart)
{
	size_t n = 0;
	char *s = cc_utf8_repair("a\xed\xa0\x80z", 5, &n);
	/* ED A0 80: ED is a valid lead whose next byte is out of range, so
	 * each of the three bytes is its own maximal subpart (WHATWG). */
	cr_assert_str_eq(s, "a\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbdz");
	free(s);
	s = cc_utf8_repair("\xe2\x82", 2, &n); /* truncated: one U+FFFD */
	cr_assert_str_eq(s, "\xef\xbf\xbd");
	cr_assert_eq(n, 3);
	free(s);
	s = cc_utf8_repair("ok", 2, &n);
	cr_assert_str_eq(s, "ok");
	free(s);
}

Test(source, check_names_the_rule)
{
	cc_error err = { 0 };
	cr_assert_eq(cc_check_source("1+1", 3, 16, &err), 0);
	cr_assert_eq(cc_check_source("1+1", 3, 2, &err), -1);
	cr_assert_eq(err.kind, CC_ERR_INVALID_INPUT);
	cr_assert(strstr(err.message, "source cap"));
	cr_assert_eq(cc_check_source("a\0b", 3, 16, &err), -1);
	cr_assert(strstr(err.message, "NUL byte at offset 1"));
	cr_assert_eq(cc_check_source("ab\xff", 3, 16, &err), -1);
	cr_assert(strstr(err.message, "not valid UTF-8 (first bad byte at offset 2)"));
	cc_error_clear(&err);
}
