/* UTF-8 validation, repair and the source checks. */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#include "error.h"
#include "source.h"
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

/* cc_utf8_fix_surrogates on s (a C string literal), checked against want. */
static void fixes(const char *s, const char *want, size_t count)
{
	size_t n = strlen(s);
	char *b = strdup(s);
	cr_assert_eq(cc_utf8_fix_surrogates(b, n), count, "count for %s", want);
	cr_assert_eq(strlen(b), n);
	cr_assert_str_eq(b, want);
	free(b);
}

#define FFFD "\xef\xbf\xbd"

Test(utf8, fix_surrogates_lone_high_and_low)
{
	fixes("a\xed\xa0\x80z", "a" FFFD "z", 1); /* U+D800 */
	fixes("a\xed\xaf\xbfz", "a" FFFD "z", 1); /* U+DBFF */
	fixes("a\xed\xb0\x80z", "a" FFFD "z", 1); /* U+DC00 */
	fixes("\xed\xbf\xbf", FFFD, 1);		  /* U+DFFF, alone */
}

Test(utf8, fix_surrogates_pair)
{
	/* A real pair is one 4-byte sequence: untouched. */
	fixes("\xf0\x9f\x98\x80", "\xf0\x9f\x98\x80", 0);
	/* High then low, each written on its own (CESU-8): two U+FFFD. */
	fixes("\xed\xa0\xbd\xed\xb8\x80", FFFD FFFD, 2);
	/* Two lone lows, two lone highs. */
	fixes("\xed\xb8\x80\xed\xb8\x80", FFFD FFFD, 2);
	fixes("\xed\xa0\xbd\xed\xa0\xbd", FFFD FFFD, 2);
}

Test(utf8, fix_surrogates_at_the_end)
{
	fixes("ab\xed\xa0\x80", "ab" FFFD, 1);
	/* Cut short: left alone for cc_utf8_repair. */
	fixes("ab\xed\xa0", "ab\xed\xa0", 0);
	fixes("ab\xed", "ab\xed", 0);
	/* Not a continuation byte third: not a surrogate, nothing eaten. */
	fixes("\xed\xa0z", "\xed\xa0z", 0);
}

Test(utf8, fix_surrogates_after_multibyte_characters)
{
	/* U+D7FF and U+E000 (ED 9F BF, EE 80 80) are not surrogates. */
	fixes("\xed\x9f\xbf\xee\x80\x80", "\xed\x9f\xbf\xee\x80\x80", 0);
	/* After 3-byte characters (中, €) and a 2-byte one (é). */
	fixes("\xe4\xb8\xad\xed\xa0\x80\xe2\x82\xac\xed\xbf\xbf\xc3\xa9",
	      "\xe4\xb8\xad" FFFD "\xe2\x82\xac" FFFD "\xc3\xa9", 2);
	/* After a 4-byte one whose bytes hold no ED. */
	fixes("\xf0\x9f\x98\x80\xed\xa0\x80", "\xf0\x9f\x98\x80" FFFD, 1);
	/* Nothing to do in plain text, or in none. */
	fixes("plain", "plain", 0);
	fixes("", "", 0);
	char *s = cc_utf8_repair("\xe4\xb8\xad\xed\xa0\x80", 6, NULL);
	cr_assert_eq(cc_utf8_fix_surrogates(s, strlen(s)), 0); /* repair made 3 U+FFFD */
	free(s);
}

Test(utf8, valid_prefix)
{
	cr_assert_eq(cc_utf8_valid_prefix("ab\xc3\xa9", 4), 4);
	cr_assert_eq(cc_utf8_valid_prefix("ab\xed\xa0\x80", 5), 2);
	cr_assert_eq(cc_utf8_valid_prefix("\xff", 1), 0);
}

/* ---- fuzz: cc_utf8_fix_surrogates against the decoder's invariants ---- */

static uint64_t fuzz_state = 0x9e3779b97f4a7c15ull;

static uint32_t fuzz_next(void)
{
	fuzz_state ^= fuzz_state << 13;
	fuzz_state ^= fuzz_state >> 7;
	fuzz_state ^= fuzz_state << 17;
	return (uint32_t)(fuzz_state >> 16);
}

/* c as UTF-8, surrogates too (as Python's "surrogatepass" writes them). */
static size_t put_code_point(unsigned char *p, uint32_t c)
{
	if (c < 0x80) {
		p[0] = (unsigned char)c;
		return 1;
	}
	if (c < 0x800) {
		p[0] = (unsigned char)(0xc0 | c >> 6);
		p[1] = (unsigned char)(0x80 | (c & 0x3f));
		return 2;
	}
	if (c < 0x10000) {
		p[0] = (unsigned char)(0xe0 | c >> 12);
		p[1] = (unsigned char)(0x80 | (c >> 6 & 0x3f));
		p[2] = (unsigned char)(0x80 | (c & 0x3f));
		return 3;
	}
	p[0] = (unsigned char)(0xf0 | c >> 18);
	p[1] = (unsigned char)(0x80 | (c >> 12 & 0x3f));
	p[2] = (unsigned char)(0x80 | (c >> 6 & 0x3f));
	p[3] = (unsigned char)(0x80 | (c & 0x3f));
	return 4;
}

static uint32_t fuzz_code_point(bool *surrogate)
{
	static const uint32_t lo[] = { 0, 0x80, 0x800, 0xd800, 0xe000, 0x10000 };
	static const uint32_t hi[] = { 0x7f, 0x7ff, 0xd7ff, 0xdfff, 0xffff, 0x10ffff };
	unsigned k = fuzz_next() % 6;
	*surrogate = k == 3;
	return lo[k] + fuzz_next() % (hi[k] - lo[k] + 1);
}

/* Code points with surrogates among them, each string in a buffer of
 * exactly its length (the ASan build sees any read past it): after the
 * repair it is well-formed UTF-8, the same length, with U+FFFD exactly
 * where the surrogates were. */
Test(utf8, fix_surrogates_fuzz_code_points)
{
	for (int round = 0; round < 20000; round++) {
		unsigned char in[64], want[64];
		size_t n = 0, surrogates = 0, ncp = fuzz_next() % 16;
		for (size_t i = 0; i < ncp; i++) {
			bool sur;
			uint32_t c = fuzz_code_point(&sur);
			size_t l = put_code_point(in + n, c);
			memcpy(want + n, sur ? (const unsigned char *)FFFD : in + n, l);
			n += l;
			surrogates += sur;
		}
		char *b = malloc(n ? n : 1);
		memcpy(b, in, n);
		cr_assert_eq(cc_utf8_fix_surrogates(b, n), surrogates, "round %d", round);
		cr_assert(cc_utf8_valid(b, n), "round %d: not well-formed", round);
		cr_assert(!memcmp(b, want, n), "round %d", round);
		free(b);
	}
}

/* Arbitrary bytes, many of them ED, A0..BF and 80..BF: well-formed input is
 * never changed, the length never, and only whole ED A0..BF 80..BF triples
 * become U+FFFD (checked byte by byte against a plain scan). */
Test(utf8, fix_surrogates_fuzz_bytes)
{
	static const unsigned char pick[] = { 0xed, 0xa0, 0xbf, 0x80, 0x9f, 0xc0, 0xf0, 'a' };
	for (int round = 0; round < 50000; round++) {
		unsigned char in[16], want[16];
		size_t n = fuzz_next() % 13, fixed = 0;
		for (size_t i = 0; i < n; i++)
			in[i] = fuzz_next() % 3 ? pick[fuzz_next() % sizeof(pick)]
						: (unsigned char)fuzz_next();
		memcpy(want, in, n);
		for (size_t i = 0; i < n;) {
			if (want[i] == 0xed && n - i >= 3 && want[i + 1] >= 0xa0 &&
			    want[i + 1] <= 0xbf && want[i + 2] >= 0x80 && want[i + 2] <= 0xbf) {
				memcpy(want + i, FFFD, 3);
				fixed++;
				i += 3;
			} else {
				i++;
			}
		}
		bool valid = cc_utf8_valid((const char *)in, n);
		char *b = malloc(n ? n : 1);
		memcpy(b, in, n);
		cr_assert_eq(cc_utf8_fix_surrogates(b, n), fixed, "round %d", round);
		cr_assert(!memcmp(b, want, n), "round %d", round);
		if (valid)
			cr_assert(!fixed && !memcmp(b, in, n),
				  "round %d: well-formed input changed", round);
		free(b);
	}
}
