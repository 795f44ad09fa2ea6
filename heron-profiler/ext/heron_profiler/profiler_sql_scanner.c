/*
 * Heron::Profiler::SqlScanner.scan: the first pass of SqlNormalizer.normalize (Ruby) (literals to
 * `?`, quoted identifiers kept, IN lists of numbers and bind markers to `IN (?)`) in one walk
 * over the bytes. In Ruby that pass is a gsub of SqlNormalizer::TOKEN, whose IN-list branch
 * tries a case-folded alternation on every item: an eager load's `IN (1, 2, …, 1000)` cost
 * about 2 million instructions a statement, most of what profiling added to the demo's
 * `/users?eager=1` (docs/profiling.md). Here the same list is a few instructions a byte.
 *
 * It gives the same String as SqlNormalizer.quoted (test/heron/profiler/sql_normalizer_test.rb
 * compares the two on random statements), whose regexp it follows token by token, down to its
 * backtracking: a quoted token without its closing quote ends at the last doubled quote, if
 * any; a number ends where a word boundary is, trying the forms with a fraction and an
 * exponent first. Only ASCII text is scanned: word boundaries beyond ASCII are Unicode's, so
 * any other String answers nil and Ruby's regexps do the work.
 *
 *   SqlScanner.scan(sql) -> String, or nil when sql is not ASCII-only
 */
#include "profiler.h"
#include <ruby/encoding.h>

static const char IN_PLACEHOLDER[] = "IN (?)";

static inline int Heron_Profiler_SqlScanner_digit(const char *s, long len, long i)
{
  return i < len && s[i] >= '0' && s[i] <= '9';
}

/* A word character of a regexp's \b and \w, in ASCII. */
static inline int Heron_Profiler_SqlScanner_word(const char *s, long len, long i)
{
  char c;
  if (i < 0 || i >= len) return 0;
  c = s[i];
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
}

/* Whether there is a word boundary between bytes i - 1 and i. */
static inline int Heron_Profiler_SqlScanner_boundary(const char *s, long len, long i)
{
  return Heron_Profiler_SqlScanner_word(s, len, i - 1) != Heron_Profiler_SqlScanner_word(s, len, i);
}

static inline long Heron_Profiler_SqlScanner_digits(const char *s, long len, long i)
{
  while (Heron_Profiler_SqlScanner_digit(s, len, i)) i++;
  return i;
}

static inline long Heron_Profiler_SqlScanner_spaces(const char *s, long len, long i)
{
  while (i < len && (s[i] == ' ' || (s[i] >= '\t' && s[i] <= '\r'))) i++;
  return i;
}

/* The end of `e[+-]?\d+` (either case) at i, or -1. */
static inline long Heron_Profiler_SqlScanner_exponent(const char *s, long len, long i)
{
  if (i >= len || (s[i] != 'e' && s[i] != 'E')) return -1;
  i++;
  if (i < len && (s[i] == '+' || s[i] == '-')) i++;
  return Heron_Profiler_SqlScanner_digit(s, len, i) ? Heron_Profiler_SqlScanner_digits(s, len, i) : -1;
}

/* The end of a number at i (`$1`, or `12`, `1.5`, `1e3`, `1.5e-3` between word boundaries),
 * or -1. The forms are tried longest first, as the regexp's greedy optional groups are. */
static long Heron_Profiler_SqlScanner_number(const char *s, long len, long i)
{
  long whole, fraction, end;
  if (s[i] == '$') return Heron_Profiler_SqlScanner_digit(s, len, i + 1) ? Heron_Profiler_SqlScanner_digits(s, len, i + 1) : -1;
  if (!Heron_Profiler_SqlScanner_digit(s, len, i) || !Heron_Profiler_SqlScanner_boundary(s, len, i)) return -1;
  whole = Heron_Profiler_SqlScanner_digits(s, len, i);
  if (whole < len && s[whole] == '.' && Heron_Profiler_SqlScanner_digit(s, len, whole + 1)) {
    fraction = Heron_Profiler_SqlScanner_digits(s, len, whole + 1);
    end = Heron_Profiler_SqlScanner_exponent(s, len, fraction);
    if (end >= 0 && Heron_Profiler_SqlScanner_boundary(s, len, end)) return end;
    if (Heron_Profiler_SqlScanner_boundary(s, len, fraction)) return fraction;
  }
  end = Heron_Profiler_SqlScanner_exponent(s, len, whole);
  if (end >= 0 && Heron_Profiler_SqlScanner_boundary(s, len, end)) return end;
  return Heron_Profiler_SqlScanner_boundary(s, len, whole) ? whole : -1;
}

/* The end of an IN list of numbers and `?` at i (`IN (1, $2, ?)`, either case, a word boundary
 * before it), or -1. */
static long Heron_Profiler_SqlScanner_in_list(const char *s, long len, long i)
{
  if (i + 1 >= len || (s[i + 1] != 'n' && s[i + 1] != 'N') || !Heron_Profiler_SqlScanner_boundary(s, len, i)) return -1;
  i = Heron_Profiler_SqlScanner_spaces(s, len, i + 2);
  if (i >= len || s[i] != '(') return -1;
  for (;;) {
    i = Heron_Profiler_SqlScanner_spaces(s, len, i + 1);
    if (i >= len) return -1;
    i = s[i] == '?' ? i + 1 : Heron_Profiler_SqlScanner_number(s, len, i);
    if (i < 0) return -1;
    i = Heron_Profiler_SqlScanner_spaces(s, len, i);
    if (i < len && s[i] == ')') return i + 1;
    if (i >= len || s[i] != ',') return -1;
  }
}

/* The end of a token quoted with `quote` at i (a doubled quote inside it is one character), or
 * -1. Without a closing quote, it ends at the first quote of the last doubled one, if any. */
static long Heron_Profiler_SqlScanner_quoted(const char *s, long len, long i, char quote)
{
  long last_pair = -1;
  for (i++; i < len; i++) {
    if (s[i] != quote) continue;
    if (i + 1 >= len || s[i + 1] != quote) return i + 1;
    last_pair = i++;
  }
  return last_pair < 0 ? -1 : last_pair + 1;
}

/* Whether a token can start with c (TOKEN's lookahead): most bytes cannot, and are copied. */
static inline int Heron_Profiler_SqlScanner_starts_token(char c)
{
  return c == '"' || c == '\'' || c == 'i' || c == 'I' || c == '$' || (c >= '0' && c <= '9');
}

/* The token at i: its end (or -1 when none starts there) and, in *kept, whether its text stays
 * (a quoted identifier) rather than becoming `?` (or `IN (?)` when *in_list). */
static long Heron_Profiler_SqlScanner_token(const char *s, long len, long i, int *kept, int *in_list)
{
  *kept = *in_list = 0;
  switch (s[i]) {
  case '"': *kept = 1; return Heron_Profiler_SqlScanner_quoted(s, len, i, '"');
  case '\'': return Heron_Profiler_SqlScanner_quoted(s, len, i, '\'');
  case 'i': case 'I': *in_list = 1; return Heron_Profiler_SqlScanner_in_list(s, len, i);
  default: return Heron_Profiler_SqlScanner_number(s, len, i);
  }
}

/* call-seq: scan(sql) -> String or nil. See the file's comment. */
static VALUE Heron_Profiler_SqlScanner_scan(VALUE klass, VALUE sql)
{
  const char *s;
  char *out;
  long len, i = 0, n = 0, end;
  int kept, in_list;
  VALUE shape;
  StringValue(sql);
  if (!rb_enc_str_asciionly_p(sql)) return Qnil;
  len = RSTRING_LEN(sql);
  /* A replacement is never longer than its token, but for `IN (?)` in place of `IN(1)`. */
  shape = rb_enc_str_new(NULL, len + len / 5 + 1, rb_enc_get(sql));
  s = RSTRING_PTR(sql);
  out = RSTRING_PTR(shape);
  while (i < len) {
    end = Heron_Profiler_SqlScanner_starts_token(s[i]) ? Heron_Profiler_SqlScanner_token(s, len, i, &kept, &in_list) : -1;
    if (end < 0) {
      out[n++] = s[i++];
    } else if (kept) {
      memcpy(out + n, s + i, (size_t)(end - i));
      n += end - i;
      i = end;
    } else {
      if (in_list) memcpy(out + n, IN_PLACEHOLDER, sizeof(IN_PLACEHOLDER) - 1);
      else out[n] = '?';
      n += in_list ? (long)sizeof(IN_PLACEHOLDER) - 1 : 1;
      i = end;
    }
  }
  RB_GC_GUARD(sql);
  return rb_str_resize(shape, n);
}

void Init_Heron_Profiler_SqlScanner(VALUE mProfiler)
{
  VALUE klass = rb_define_class_under(mProfiler, "SqlScanner", rb_cObject);
  rb_define_singleton_method(klass, "scan", Heron_Profiler_SqlScanner_scan, 1);
}
