/*
 * Heron's strict HTTP/1.1 request grammar: a hand-written, resumable state
 * machine over RFC 9112. See http_parser.h for the interface.
 *
 * Strictness (every violation is an error, never "best effort"):
 *  - lines end in CRLF; a bare CR or bare LF is rejected;
 *  - request line is exactly `method SP target SP HTTP/d.d CRLF`; HTTP/1.x with
 *    x > 1 is read as HTTP/1.1 (RFC 9112 §2.3), any other major is 505; target
 *    bytes >= 0x80 (raw UTF-8 from browsers and clients) pass through as sent
 *    when they are well-formed UTF-8 (RFC 3629: no overlong forms such as
 *    C0 AF for '/', no surrogates, nothing past U+10FFFF, no truncated
 *    sequence), else 400;
 *  - field lines are `token ":" OWS value OWS CRLF`; obs-fold, whitespace
 *    before the colon, CTLs (other than HTAB) in values are rejected;
 *  - Content-Length may appear once (even an equal repeat or the list form
 *    "5, 5" is rejected: a repeat only ever comes from a confused or hostile
 *    intermediary) and never together with Transfer-Encoding;
 *  - the only transfer coding implemented is "chunked", applied once, last.
 */
#include "http_parser.h"

#include <string.h>
#include <stdlib.h>

/* At most this many empty lines (CRLF) before a request line (RFC 9112 §2.2). */
#define HERON_MAX_LEADING_EMPTY_LINES 8
/* Longest method token accepted; the registered ones are far shorter. */
#define HERON_MAX_METHOD_BYTES 32

/* ---- character classes ------------------------------------------------ */

enum {
  CC_TCHAR = 1,   /* token character (RFC 9110 §5.6.2) */
  CC_VALUE = 2,   /* field-vchar: VCHAR or obs-text */
  CC_TARGET = 4,  /* visible ASCII except '#', and obs-text (>= 0x80) */
  CC_HEX = 8,
  CC_QDTEXT = 16, /* quoted-string text (RFC 9110 §5.6.4) */
  CC_HOST = 32    /* reg-name: unreserved / sub-delims (RFC 3986 §3.2.2), '%' checked apart */
};

static unsigned char heron_cc[256];

static void heron_cc_init(void)
{
  static const char tchar_punct[] = "!#$%&'*+-.^_`|~";
  static const char host_punct[] = "-._~!$&'()*+,;=";
  int c;
  if (heron_cc['A']) return;
  for (c = 0x21; c <= 0x7e; c++) heron_cc[c] |= CC_VALUE | CC_TARGET | CC_QDTEXT;
  for (c = 0x80; c <= 0xff; c++) heron_cc[c] |= CC_VALUE | CC_QDTEXT | CC_TARGET;
  heron_cc['#'] &= ~CC_TARGET;
  heron_cc['"'] &= ~CC_QDTEXT;
  heron_cc['\\'] &= ~CC_QDTEXT;
  heron_cc[' '] |= CC_QDTEXT;
  heron_cc['\t'] |= CC_QDTEXT;
  for (c = '0'; c <= '9'; c++) heron_cc[c] |= CC_TCHAR | CC_HEX;
  for (c = 'a'; c <= 'z'; c++) heron_cc[c] |= CC_TCHAR;
  for (c = 'A'; c <= 'Z'; c++) heron_cc[c] |= CC_TCHAR;
  for (c = 'a'; c <= 'f'; c++) heron_cc[c] |= CC_HEX;
  for (c = 'A'; c <= 'F'; c++) heron_cc[c] |= CC_HEX;
  for (c = 0; tchar_punct[c]; c++) heron_cc[(unsigned char)tchar_punct[c]] |= CC_TCHAR;
  for (c = 0; host_punct[c]; c++) heron_cc[(unsigned char)host_punct[c]] |= CC_HOST;
  for (c = '0'; c <= '9'; c++) heron_cc[c] |= CC_HOST;
  for (c = 'a'; c <= 'z'; c++) heron_cc[c] |= CC_HOST;
  for (c = 'A'; c <= 'Z'; c++) heron_cc[c] |= CC_HOST;
}

#define IS(cls, ch) (heron_cc[(unsigned char)(ch)] & (cls))
#define IS_WS(ch) ((ch) == ' ' || (ch) == '\t')

static int hex_value(unsigned char c)
{
  if (c <= '9') return c - '0';
  return (c | 0x20) - 'a' + 10;
}

/* Case-insensitive equality of a token with a lowercase literal. Only letters
 * change with | 0x20 among token characters, so this is exact for tokens. */
static int token_ieq(const char *s, size_t n, const char *lower)
{
  size_t i;
  if (strlen(lower) != n) return 0;
  for (i = 0; i < n; i++)
    if (((unsigned char)s[i] | 0x20) != (unsigned char)lower[i]) return 0;
  return 1;
}

/*
 * Next element of a comma-separated list in s[*pos, n), OWS trimmed.
 * Returns 0 when the list is exhausted.
 */
static int list_next(const char *s, size_t n, size_t *pos, heron_http_span *out)
{
  size_t i = *pos, start, stop;
  if (i > n) return 0;
  while (i < n && IS_WS(s[i])) i++;
  start = i;
  while (i < n && s[i] != ',') i++;
  stop = i;
  while (stop > start && IS_WS(s[stop - 1])) stop--;
  out->off = start;
  out->len = stop - start;
  *pos = i + 1;
  return 1;
}

static int all_tchar(const char *s, size_t n)
{
  size_t i;
  for (i = 0; i < n; i++)
    if (!IS(CC_TCHAR, s[i])) return 0;
  return 1;
}

/* reg-name chars and %HH from s[i]; returns where they stop, or n + 1 on a bad '%'. */
static size_t host_chars_end(const char *s, size_t i, size_t n, int colon_ok)
{
  while (i < n) {
    if (s[i] == '%') {
      if (n - i < 3 || !IS(CC_HEX, s[i + 1]) || !IS(CC_HEX, s[i + 2])) return n + 1;
      i += 3;
    } else if (IS(CC_HOST, s[i]) || (colon_ok && s[i] == ':')) {
      i++;
    } else {
      break;
    }
  }
  return i;
}

/*
 * uri-host [ ":" port ] (RFC 9110 §7.2, RFC 3986 §3.2.2), the shape Rack::Lint
 * accepts for HTTP_HOST: reg-name or IPv4 (same characters), or "[" IP-literal
 * "]" (its characters only, not its full grammar); port is DIGIT*.
 */
static int valid_authority(const char *s, size_t n)
{
  size_t i = 0;
  if (n > 0 && s[0] == '[') {
    i = host_chars_end(s, 1, n, 1);
    if (i >= n || s[i] != ']' || i == 1) return 0;
    i++;
  } else {
    i = host_chars_end(s, 0, n, 0);
    if (i > n) return 0;
  }
  if (i == n) return 1;
  if (s[i++] != ':') return 0;
  while (i < n && s[i] >= '0' && s[i] <= '9') i++;
  return i == n;
}

/* ---- request head: states and bookkeeping ----------------------------- */

enum {
  HP_START, HP_START_LF, HP_METHOD, HP_TARGET_START, HP_TARGET, HP_VERSION, HP_RL_LF,
  HP_FIELD_START, HP_NAME, HP_VALUE_START, HP_VALUE, HP_FIELD_LF, HP_HEAD_LF,
  HP_DONE, HP_ERROR
};

static size_t hp_fail(heron_http_parser *p, int status, const char *msg, size_t i)
{
  p->state = HP_ERROR;
  p->error_status = status;
  p->error = msg;
  return i;
}

/* hp_fail for the checks that return int: records the error, returns -1. */
static int hp_reject(heron_http_parser *p, int status, const char *msg)
{
  hp_fail(p, status, msg, 0);
  return -1;
}

/* Fields the table starts with: enough for most requests, 512 bytes per parser. */
#define HP_INITIAL_FIELDS 16

/* Makes room for one more field (nfields < max_header_fields). Returns 0, or -1 when out of memory. */
static int hp_grow_fields(heron_http_parser *p)
{
  size_t capacity = p->fields_capacity * 2;
  heron_http_field *fields;
  if (capacity > p->max_header_fields) capacity = p->max_header_fields;
  fields = realloc(p->fields, capacity * sizeof(heron_http_field));
  if (!fields) return -1;
  p->fields = fields;
  p->fields_capacity = capacity;
  return 0;
}

int heron_http_parser_init(heron_http_parser *p, size_t max_target_bytes,
                           size_t max_header_bytes, size_t max_header_fields)
{
  heron_cc_init();
  memset(p, 0, sizeof(*p));
  p->max_target_bytes = max_target_bytes;
  p->max_header_bytes = max_header_bytes;
  p->max_header_fields = max_header_fields;
  p->fields_capacity = max_header_fields < HP_INITIAL_FIELDS ? (max_header_fields ? max_header_fields : 1) : HP_INITIAL_FIELDS;
  p->fields = calloc(p->fields_capacity, sizeof(heron_http_field));
  if (!p->fields) return -1;
  heron_http_parser_reset(p);
  return 0;
}

void heron_http_parser_free(heron_http_parser *p)
{
  free(p->fields);
  p->fields = NULL;
}

void heron_http_parser_reset(heron_http_parser *p)
{
  heron_http_field *fields = p->fields;
  size_t t = p->max_target_bytes, h = p->max_header_bytes, f = p->max_header_fields, c = p->fields_capacity;
  memset(p, 0, sizeof(*p));
  p->fields = fields;
  p->fields_capacity = c;
  p->max_target_bytes = t;
  p->max_header_bytes = h;
  p->max_header_fields = f;
  p->state = HP_START;
  p->content_length = -1;
}

/* ---- request line ------------------------------------------------------ */

static size_t hp_start(heron_http_parser *p, const char *buf, size_t i)
{
  unsigned char c = buf[i];
  if (c == '\r') {
    p->state = HP_START_LF;
    return i + 1;
  }
  if (!IS(CC_TCHAR, c)) return hp_fail(p, 400, "invalid character in method", i);
  p->mark = i;
  p->state = HP_METHOD;
  return i;
}

static size_t hp_start_lf(heron_http_parser *p, const char *buf, size_t i)
{
  if (buf[i] != '\n') return hp_fail(p, 400, "bare CR", i);
  if (++p->leading_empty_lines > HERON_MAX_LEADING_EMPTY_LINES)
    return hp_fail(p, 400, "too many empty lines before request line", i);
  p->state = HP_START;
  return i + 1;
}

static size_t hp_method(heron_http_parser *p, const char *buf, size_t i, size_t end)
{
  size_t limit = p->mark + HERON_MAX_METHOD_BYTES;
  if (limit > end) limit = end;
  while (i < limit && IS(CC_TCHAR, buf[i])) i++;
  if (i == end) return i;
  if (buf[i] != ' ') {
    if (IS(CC_TCHAR, buf[i])) return hp_fail(p, 400, "method too long", i);
    return hp_fail(p, 400, "invalid character in method", i);
  }
  p->method.off = p->mark;
  p->method.len = i - p->mark;
  if (p->method.len == 7 && memcmp(buf + p->mark, "CONNECT", 7) == 0)
    return hp_fail(p, 501, "CONNECT is not supported", i);
  p->state = HP_TARGET_START;
  return i + 1;
}

static size_t hp_target_start(heron_http_parser *p, const char *buf, size_t i)
{
  unsigned char c = buf[i];
  if (c == ' ') return hp_fail(p, 400, "extra space in request line", i);
  if (!IS(CC_TARGET, c)) {
    if (c == '#') return hp_fail(p, 400, "fragment in request target", i);
    return hp_fail(p, 400, "invalid character in request target", i);
  }
  p->mark = i;
  p->state = HP_TARGET;
  return i;
}

/* Splits s = path [ "?" query ] starting at offset off into path/query. */
static void split_path_query(heron_http_parser *p, const char *buf, size_t off, size_t len)
{
  const char *q = memchr(buf + off, '?', len);
  if (!q) {
    p->path.off = off;
    p->path.len = len;
    return;
  }
  p->path.off = off;
  p->path.len = (size_t)(q - (buf + off));
  p->has_query = 1;
  p->query.off = p->path.off + p->path.len + 1;
  p->query.len = len - p->path.len - 1;
}

static int method_is(const heron_http_parser *p, const char *buf, const char *name)
{
  size_t n = strlen(name);
  return p->method.len == n && memcmp(buf + p->method.off, name, n) == 0;
}

/* absolute-form: scheme "://" authority [ path-abempty ] [ "?" query ] */
static int classify_absolute(heron_http_parser *p, const char *buf)
{
  const char *t = buf + p->target.off;
  size_t n = p->target.len, i = 0, a;
  if (!((t[0] | 0x20) >= 'a' && (t[0] | 0x20) <= 'z')) return 0;
  while (i < n && t[i] != ':') i++;
  if (n - i < 3 || memcmp(t + i, "://", 3) != 0) return 0;
  if (!token_ieq(t, i, "http") && !token_ieq(t, i, "https"))
    return hp_reject(p, 400, "unsupported URI scheme");
  a = i + 3;
  i = a;
  while (i < n && t[i] != '/' && t[i] != '?') i++;
  if (i == a) return hp_reject(p, 400, "empty authority in request target");
  if (memchr(t + a, '@', i - a)) return hp_reject(p, 400, "userinfo in request target");
  if (!valid_authority(t + a, i - a))
    return hp_reject(p, 400, "invalid authority in request target");
  p->target_form = HERON_TARGET_ABSOLUTE;
  p->authority.off = p->target.off + a;
  p->authority.len = i - a;
  split_path_query(p, buf, p->target.off + i, n - i);
  return 1;
}

/* Length of the well-formed UTF-8 sequence (RFC 3629 §4) of a lead byte >= 0x80
 * at s, n bytes available, or 0 when there is none: C0, C1 and F5-FF never
 * lead, E0 and F0 need a second byte that rules out overlong forms, ED one that
 * rules out surrogates, F4 one that stays within U+10FFFF. */
static size_t utf8_sequence(const unsigned char *s, size_t n)
{
  unsigned char c = s[0], lo = 0x80, hi = 0xbf;
  size_t len, k;
  if (c >= 0xc2 && c <= 0xdf) len = 2;
  else if (c >= 0xe0 && c <= 0xef) len = 3;
  else if (c >= 0xf0 && c <= 0xf4) len = 4;
  else return 0;
  if (c == 0xe0) lo = 0xa0;
  else if (c == 0xed) hi = 0x9f;
  else if (c == 0xf0) lo = 0x90;
  else if (c == 0xf4) hi = 0x8f;
  if (n < len || s[1] < lo || s[1] > hi) return 0;
  for (k = 2; k < len; k++)
    if ((s[k] & 0xc0) != 0x80) return 0;
  return len;
}

/* Whether the n bytes at s are well-formed UTF-8 (ASCII is). */
static int valid_utf8(const char *s, size_t n)
{
  const unsigned char *u = (const unsigned char *)s;
  size_t i = 0, k;
  while (i < n) {
    if (u[i] < 0x80) {
      i++;
      continue;
    }
    if ((k = utf8_sequence(u + i, n - i)) == 0) return 0;
    i += k;
  }
  return 1;
}

/* Decides the request-target form (RFC 9112 §3.2). Returns 0 or -1 (failed). */
static int classify_target(heron_http_parser *p, const char *buf)
{
  const char *t = buf + p->target.off;
  int r;
  if (!valid_utf8(t, p->target.len))
    return hp_reject(p, 400, "invalid UTF-8 in request target");
  if (t[0] == '/') {
    p->target_form = HERON_TARGET_ORIGIN;
    split_path_query(p, buf, p->target.off, p->target.len);
    return 0;
  }
  if (p->target.len == 1 && t[0] == '*') {
    if (!method_is(p, buf, "OPTIONS"))
      return hp_reject(p, 400, "asterisk-form target is only for OPTIONS");
    p->target_form = HERON_TARGET_ASTERISK;
    p->path = p->target;
    return 0;
  }
  r = classify_absolute(p, buf);
  if (r == 0) return hp_reject(p, 400, "invalid request target");
  return r < 0 ? -1 : 0;
}

static size_t hp_target(heron_http_parser *p, const char *buf, size_t i, size_t end)
{
  size_t limit = p->mark + p->max_target_bytes;
  unsigned char c;
  if (limit > end) limit = end;
  while (i < limit && IS(CC_TARGET, buf[i])) i++;
  if (i == end) return i;
  c = buf[i];
  if (c == ' ') {
    p->target.off = p->mark;
    p->target.len = i - p->mark;
    if (classify_target(p, buf) < 0) return i;
    p->state = HP_VERSION;
    p->version_index = 0;
    return i + 1;
  }
  if (IS(CC_TARGET, c)) return hp_fail(p, 414, "request target too long", i);
  if (c == '#') return hp_fail(p, 400, "fragment in request target", i);
  if (c == '\r' || c == '\n') return hp_fail(p, 400, "missing HTTP version", i);
  return hp_fail(p, 400, "invalid character in request target", i);
}

/* "HTTP/" DIGIT "." DIGIT CR, one byte per call. */
static size_t hp_version(heron_http_parser *p, const char *buf, size_t i)
{
  static const char prefix[] = "HTTP/";
  unsigned char c = buf[i];
  unsigned k = p->version_index++;
  if (k < 5) {
    if (c == prefix[k]) return i + 1;
    if (k == 0 && c == ' ') return hp_fail(p, 400, "extra space in request line", i);
  } else if (k == 5 || k == 7) {
    if (c >= '0' && c <= '9') {
      if (k == 5) p->http_major = c - '0';
      else p->http_minor = c - '0';
      return i + 1;
    }
  } else if (k == 6) {
    if (c == '.') return i + 1;
  } else if (c == '\r') {
    if (p->http_major != 1) return hp_fail(p, 505, "HTTP version not supported", i);
    if (p->http_minor > 1) p->http_minor = 1; /* a higher 1.x is served as 1.1 */
    p->state = HP_RL_LF;
    return i + 1;
  } else if (c == ' ') {
    return hp_fail(p, 400, "extra space in request line", i);
  }
  return hp_fail(p, 400, "malformed HTTP version", i);
}

static size_t hp_rl_lf(heron_http_parser *p, const char *buf, size_t i)
{
  if (buf[i] != '\n') return hp_fail(p, 400, "bare CR", i);
  p->header_start = i + 1;
  p->state = HP_FIELD_START;
  return i + 1;
}

/* ---- header fields ----------------------------------------------------- */

static size_t hp_field_start(heron_http_parser *p, const char *buf, size_t i)
{
  unsigned char c = buf[i];
  if (c == '\r') {
    p->state = HP_HEAD_LF;
    return i + 1;
  }
  if (IS(CC_TCHAR, c)) {
    if (p->nfields >= p->max_header_fields)
      return hp_fail(p, 431, "too many header fields", i);
    if (p->nfields >= p->fields_capacity && hp_grow_fields(p) < 0)
      return hp_fail(p, 503, "out of memory for header fields", i);
    p->mark = i;
    p->state = HP_NAME;
    return i;
  }
  if (IS_WS(c)) return hp_fail(p, 400, "obsolete line folding", i);
  if (c == ':') return hp_fail(p, 400, "empty header name", i);
  if (c == '\n') return hp_fail(p, 400, "bare LF", i);
  return hp_fail(p, 400, "invalid character in header name", i);
}

static size_t hp_name(heron_http_parser *p, const char *buf, size_t i, size_t end)
{
  while (i < end && IS(CC_TCHAR, buf[i])) i++;
  if (i == end) return i;
  if (buf[i] == ':') {
    p->fields[p->nfields].name.off = p->mark;
    p->fields[p->nfields].name.len = i - p->mark;
    p->state = HP_VALUE_START;
    return i + 1;
  }
  if (IS_WS(buf[i])) return hp_fail(p, 400, "whitespace between header name and colon", i);
  return hp_fail(p, 400, "invalid character in header name", i);
}

static size_t hp_value_char_error(heron_http_parser *p, unsigned char c, size_t i)
{
  if (c == '\n') return hp_fail(p, 400, "bare LF", i);
  return hp_fail(p, 400, "invalid character in header value", i);
}

static size_t hp_value_start(heron_http_parser *p, const char *buf, size_t i, size_t end)
{
  while (i < end && IS_WS(buf[i])) i++;
  if (i == end) return i;
  p->mark = p->value_end = i;
  if (buf[i] == '\r') {
    p->state = HP_FIELD_LF;
    return i + 1;
  }
  if (!IS(CC_VALUE, buf[i])) return hp_value_char_error(p, buf[i], i);
  p->state = HP_VALUE;
  return i;
}

static size_t hp_value(heron_http_parser *p, const char *buf, size_t i, size_t end)
{
  size_t value_end = p->value_end;
  for (; i < end; i++) {
    unsigned char c = buf[i];
    if (IS(CC_VALUE, c)) value_end = i + 1;
    else if (!IS_WS(c)) break;
  }
  p->value_end = value_end;
  if (i == end) return i;
  if (buf[i] != '\r') return hp_value_char_error(p, buf[i], i);
  p->state = HP_FIELD_LF;
  return i + 1;
}

static int parse_content_length(heron_http_parser *p, const char *v, size_t n)
{
  int64_t value = 0;
  size_t i;
  if (p->content_length >= 0) return hp_reject(p, 400, "repeated Content-Length");
  if (n == 0) return hp_reject(p, 400, "invalid Content-Length");
  for (i = 0; i < n; i++) {
    int d = (unsigned char)v[i] - '0';
    if (d < 0 || d > 9) return hp_reject(p, 400, "invalid Content-Length");
    if (value > (INT64_MAX - d) / 10) return hp_reject(p, 400, "Content-Length too large");
    value = value * 10 + d;
  }
  p->content_length = value;
  return 0;
}

static int parse_transfer_encoding(heron_http_parser *p, const char *v, size_t n)
{
  size_t pos = 0;
  heron_http_span e;
  p->te_seen = 1;
  while (list_next(v, n, &pos, &e)) {
    if (e.len == 0 || !all_tchar(v + e.off, e.len))
      return hp_reject(p, 400, "invalid Transfer-Encoding");
    if (token_ieq(v + e.off, e.len, "chunked")) {
      p->te_chunked_count++;
      p->te_last_chunked = 1;
    } else {
      p->te_other = 1;
      p->te_last_chunked = 0;
    }
  }
  return 0;
}

static void parse_connection(heron_http_parser *p, const char *v, size_t n)
{
  size_t pos = 0;
  heron_http_span e;
  while (list_next(v, n, &pos, &e)) {
    if (token_ieq(v + e.off, e.len, "close")) p->conn_close = 1;
    else if (token_ieq(v + e.off, e.len, "keep-alive")) p->conn_keepalive = 1;
  }
}

/* Semantics of the fields the framing depends on. Returns 0 or -1. */
static int on_field(heron_http_parser *p, const char *buf, const heron_http_field *f)
{
  const char *name = buf + f->name.off, *value = buf + f->value.off;
  switch (f->name.len) {
  case 4:
    if (!token_ieq(name, 4, "host")) return 0;
    if (p->host_seen) return hp_reject(p, 400, "repeated Host");
    if (!valid_authority(value, f->value.len)) return hp_reject(p, 400, "invalid Host");
    p->host_seen = 1;
    return 0;
  case 10:
    if (token_ieq(name, 10, "connection")) parse_connection(p, value, f->value.len);
    return 0;
  case 14:
    if (!token_ieq(name, 14, "content-length")) return 0;
    return parse_content_length(p, value, f->value.len);
  case 17:
    if (!token_ieq(name, 17, "transfer-encoding")) return 0;
    return parse_transfer_encoding(p, value, f->value.len);
  default:
    return 0;
  }
}

static size_t hp_field_lf(heron_http_parser *p, const char *buf, size_t i)
{
  heron_http_field *f = &p->fields[p->nfields];
  if (buf[i] != '\n') return hp_fail(p, 400, "bare CR", i);
  f->value.off = p->mark;
  f->value.len = p->value_end - p->mark;
  p->nfields++;
  if (on_field(p, buf, f) < 0) return i;
  p->state = HP_FIELD_START;
  return i + 1;
}

/* Whole-head checks once the empty line is seen. Returns 0 or -1. */
static int check_framing(heron_http_parser *p)
{
  if (!p->te_seen) return 0;
  if (p->http_minor == 0) return hp_reject(p, 400, "Transfer-Encoding in HTTP/1.0");
  if (p->content_length >= 0)
    return hp_reject(p, 400, "Content-Length with Transfer-Encoding");
  if (p->te_chunked_count > 1) return hp_reject(p, 400, "chunked applied more than once");
  if (!p->te_last_chunked)
    return hp_reject(p, 400, "last transfer coding is not chunked");
  if (p->te_other) return hp_reject(p, 501, "unsupported transfer coding");
  p->chunked = 1;
  return 0;
}

static size_t hp_head_lf(heron_http_parser *p, const char *buf, size_t i)
{
  if (buf[i] != '\n') return hp_fail(p, 400, "bare CR", i);
  if (p->http_minor == 1 && !p->host_seen) return hp_fail(p, 400, "missing Host header", i);
  if (check_framing(p) < 0) return i;
  p->keepalive = p->http_minor == 1 ? !p->conn_close : (p->conn_keepalive && !p->conn_close);
  p->head_length = i + 1;
  p->state = HP_DONE;
  return i + 1;
}

/* ---- driver ------------------------------------------------------------ */

static size_t hp_step(heron_http_parser *p, const char *buf, size_t i, size_t end)
{
  switch (p->state) {
  case HP_START: return hp_start(p, buf, i);
  case HP_START_LF: return hp_start_lf(p, buf, i);
  case HP_METHOD: return hp_method(p, buf, i, end);
  case HP_TARGET_START: return hp_target_start(p, buf, i);
  case HP_TARGET: return hp_target(p, buf, i, end);
  case HP_VERSION: return hp_version(p, buf, i);
  case HP_RL_LF: return hp_rl_lf(p, buf, i);
  case HP_FIELD_START: return hp_field_start(p, buf, i);
  case HP_NAME: return hp_name(p, buf, i, end);
  case HP_VALUE_START: return hp_value_start(p, buf, i, end);
  case HP_VALUE: return hp_value(p, buf, i, end);
  case HP_FIELD_LF: return hp_field_lf(p, buf, i);
  case HP_HEAD_LF: return hp_head_lf(p, buf, i);
  default: return end;
  }
}

/* Where scanning must stop: the header section may not exceed its limit. */
static size_t scan_end(const heron_http_parser *p, size_t len)
{
  if (p->state < HP_FIELD_START) return len;
  if (len - p->header_start > p->max_header_bytes) return p->header_start + p->max_header_bytes;
  return len;
}

int heron_http_parser_execute(heron_http_parser *p, const char *buf, size_t len)
{
  size_t i = p->nread, end;
  if (p->state == HP_DONE) return HERON_HTTP_DONE;
  if (p->state == HP_ERROR) return HERON_HTTP_ERROR;
  if (len < i) return HERON_HTTP_NEED_MORE;
  end = scan_end(p, len);
  while (i < end && p->state < HP_DONE) {
    int in_head = p->state >= HP_FIELD_START;
    i = hp_step(p, buf, i, end);
    if (!in_head && p->state >= HP_FIELD_START) end = scan_end(p, len);
  }
  p->nread = i;
  if (p->state == HP_DONE) return HERON_HTTP_DONE;
  if (p->state == HP_ERROR) return HERON_HTTP_ERROR;
  if (end < len) {
    hp_fail(p, 431, "header section too large", i);
    return HERON_HTTP_ERROR;
  }
  return HERON_HTTP_NEED_MORE;
}

/* ---- chunked transfer coding (RFC 9112 §7.1) --------------------------- */

enum {
  CH_SIZE_START, CH_SIZE,
  /* chunk-ext = *( BWS ";" BWS name [ BWS "=" BWS ( token / quoted-string ) ] ) */
  CH_EXT_WS, CH_EXT_PRE_NAME, CH_EXT_NAME, CH_EXT_NAME_WS, CH_EXT_PRE_VALUE,
  CH_EXT_TOKEN_VALUE, CH_EXT_QUOTED, CH_EXT_QUOTED_PAIR, CH_EXT_AFTER_QUOTE,
  CH_SIZE_LF, CH_DATA, CH_DATA_CR, CH_DATA_LF,
  CH_TRAILER_START, CH_TRAILER_NAME, CH_TRAILER_VALUE, CH_TRAILER_LF, CH_END_LF,
  CH_DONE, CH_ERROR
};

void heron_chunked_decoder_init(heron_chunked_decoder *d, size_t max_trailer_bytes,
                                size_t max_trailer_fields)
{
  heron_cc_init();
  memset(d, 0, sizeof(*d));
  d->state = CH_SIZE_START;
  d->max_trailer_bytes = max_trailer_bytes;
  d->max_trailer_fields = max_trailer_fields;
  d->max_ext_bytes = HERON_MAX_CHUNK_EXT_BYTES;
  d->max_ext_total = HERON_MAX_CHUNK_EXT_TOTAL;
}

void heron_chunked_decoder_limit_extensions(heron_chunked_decoder *d, size_t max_per_chunk,
                                            size_t max_total)
{
  d->max_ext_bytes = max_per_chunk;
  d->max_ext_total = max_total;
}

static int ch_fail(heron_chunked_decoder *d, int status, const char *msg)
{
  d->state = CH_ERROR;
  d->error_status = status;
  d->error = msg;
  return -1;
}

static int ch_goto(heron_chunked_decoder *d, int state)
{
  d->state = state;
  return 0;
}

static int ch_size_start(heron_chunked_decoder *d, unsigned char c)
{
  if (IS(CC_HEX, c)) {
    d->remaining = (uint64_t)hex_value(c);
    d->size_digits = 1;
    d->ext_bytes = 0;
    d->state = CH_SIZE;
    return 0;
  }
  if (IS_WS(c)) return ch_fail(d, 400, "whitespace before chunk size");
  if (c == '\r') return ch_fail(d, 400, "empty chunk size");
  return ch_fail(d, 400, "invalid chunk size");
}

/* Counts one byte of chunk extensions (everything between the size and the CRLF) against the
 * per-line and per-body limits. */
static int ch_count_ext(heron_chunked_decoder *d)
{
  if (++d->ext_bytes > d->max_ext_bytes) return ch_fail(d, 400, "chunk extension too long");
  if (++d->ext_total > d->max_ext_total) return ch_fail(d, 400, "too many chunk extension bytes in body");
  return 0;
}

static int ch_size(heron_chunked_decoder *d, unsigned char c)
{
  if (IS(CC_HEX, c)) {
    if (++d->size_digits > 16 || (d->remaining >> 59) != 0)
      return ch_fail(d, 400, "chunk size too large");
    d->remaining = (d->remaining << 4) | (uint64_t)hex_value(c);
    return 0;
  }
  if (c == '\r') return ch_goto(d, CH_SIZE_LF);
  if (c != ';' && !IS_WS(c)) return ch_fail(d, 400, "invalid chunk size");
  if (ch_count_ext(d) < 0) return -1;
  d->state = c == ';' ? CH_EXT_PRE_NAME : CH_EXT_WS;
  return 0;
}

/* After a size, name or value: BWS, then ";" or (not after BWS) CR. */
static int ch_ext_separator(heron_chunked_decoder *d, unsigned char c, int allow_cr)
{
  if (c == ';') d->state = CH_EXT_PRE_NAME;
  else if (IS_WS(c)) d->state = CH_EXT_WS;
  else if (c == '\r' && allow_cr) d->state = CH_SIZE_LF;
  else return ch_fail(d, 400, "invalid chunk extension");
  return 0;
}

static int ch_ext(heron_chunked_decoder *d, unsigned char c)
{
  if (c != '\r' && ch_count_ext(d) < 0) return -1;
  switch (d->state) {
  case CH_EXT_WS:
    return IS_WS(c) ? 0 : ch_ext_separator(d, c, 0);
  case CH_EXT_PRE_NAME:
    if (IS_WS(c)) return 0;
    if (!IS(CC_TCHAR, c)) return ch_fail(d, 400, "invalid chunk extension");
    d->state = CH_EXT_NAME;
    return 0;
  case CH_EXT_NAME:
    if (IS(CC_TCHAR, c)) return 0;
    if (c == '=') return ch_goto(d, CH_EXT_PRE_VALUE);
    if (IS_WS(c)) return ch_goto(d, CH_EXT_NAME_WS);
    return ch_ext_separator(d, c, 1);
  case CH_EXT_NAME_WS:
    if (IS_WS(c)) return 0;
    if (c == '=') return ch_goto(d, CH_EXT_PRE_VALUE);
    return ch_ext_separator(d, c, 0);
  case CH_EXT_PRE_VALUE:
    if (IS_WS(c)) return 0;
    if (c == '"') return ch_goto(d, CH_EXT_QUOTED);
    if (!IS(CC_TCHAR, c)) return ch_fail(d, 400, "invalid chunk extension");
    d->state = CH_EXT_TOKEN_VALUE;
    return 0;
  case CH_EXT_TOKEN_VALUE:
    return IS(CC_TCHAR, c) ? 0 : ch_ext_separator(d, c, 1);
  case CH_EXT_QUOTED:
    if (c == '"') return ch_goto(d, CH_EXT_AFTER_QUOTE);
    if (c == '\\') return ch_goto(d, CH_EXT_QUOTED_PAIR);
    return IS(CC_QDTEXT, c) ? 0 : ch_fail(d, 400, "invalid chunk extension");
  case CH_EXT_QUOTED_PAIR:
    if (!IS(CC_VALUE, c) && !IS_WS(c)) return ch_fail(d, 400, "invalid chunk extension");
    d->state = CH_EXT_QUOTED;
    return 0;
  default: /* CH_EXT_AFTER_QUOTE */
    return ch_ext_separator(d, c, 1);
  }
}

static int ch_size_lf(heron_chunked_decoder *d, unsigned char c)
{
  if (c != '\n') return ch_fail(d, 400, "bare CR in chunk size line");
  d->state = d->remaining ? CH_DATA : CH_TRAILER_START;
  return 0;
}

static int ch_data_end(heron_chunked_decoder *d, unsigned char c)
{
  if (d->state == CH_DATA_CR && c == '\r') return ch_goto(d, CH_DATA_LF);
  if (d->state == CH_DATA_LF && c == '\n') return ch_goto(d, CH_SIZE_START);
  return ch_fail(d, 400, "chunk data not followed by CRLF");
}

/* Trailer fields: parsed like header fields, then discarded. */
static int ch_trailer(heron_chunked_decoder *d, unsigned char c)
{
  if (++d->trailer_bytes > d->max_trailer_bytes) return ch_fail(d, 431, "trailer section too large");
  switch (d->state) {
  case CH_TRAILER_START:
    if (c == '\r') return ch_goto(d, CH_END_LF);
    if (IS(CC_TCHAR, c)) {
      if (++d->trailer_fields > d->max_trailer_fields)
        return ch_fail(d, 431, "too many trailer fields");
      return ch_goto(d, CH_TRAILER_NAME);
    }
    if (IS_WS(c)) return ch_fail(d, 400, "obsolete line folding");
    if (c == ':') return ch_fail(d, 400, "empty trailer name");
    return ch_fail(d, 400, "invalid character in trailer name");
  case CH_TRAILER_NAME:
    if (IS(CC_TCHAR, c)) return 0;
    if (c == ':') return ch_goto(d, CH_TRAILER_VALUE);
    if (IS_WS(c)) return ch_fail(d, 400, "whitespace between trailer name and colon");
    return ch_fail(d, 400, "invalid character in trailer name");
  case CH_TRAILER_VALUE:
    if (IS(CC_VALUE, c) || IS_WS(c)) return 0;
    if (c == '\r') return ch_goto(d, CH_TRAILER_LF);
    return ch_fail(d, 400, "invalid character in trailer value");
  case CH_TRAILER_LF:
    if (c != '\n') return ch_fail(d, 400, "bare CR");
    return ch_goto(d, CH_TRAILER_START);
  default: /* CH_END_LF */
    if (c != '\n') return ch_fail(d, 400, "bare CR");
    return ch_goto(d, CH_DONE);
  }
}

static int ch_step(heron_chunked_decoder *d, unsigned char c)
{
  switch (d->state) {
  case CH_SIZE_START: return ch_size_start(d, c);
  case CH_SIZE: return ch_size(d, c);
  case CH_SIZE_LF: return ch_size_lf(d, c);
  case CH_DATA_CR:
  case CH_DATA_LF: return ch_data_end(d, c);
  default:
    if (d->state >= CH_EXT_WS && d->state <= CH_EXT_AFTER_QUOTE) return ch_ext(d, c);
    return ch_trailer(d, c);
  }
}

int heron_chunked_decoder_execute(heron_chunked_decoder *d, const char *buf, size_t len,
                                  size_t *consumed, heron_chunk_data_cb on_data, void *userdata)
{
  size_t i = 0;
  while (i < len && d->state != CH_DONE && d->state != CH_ERROR) {
    if (d->state == CH_DATA) {
      size_t take = len - i;
      if ((uint64_t)take > d->remaining) take = (size_t)d->remaining;
      if (on_data) on_data(userdata, buf + i, take);
      d->remaining -= take;
      i += take;
      if (d->remaining == 0) d->state = CH_DATA_CR;
      continue;
    }
    if (ch_step(d, (unsigned char)buf[i]) < 0) break;
    i++;
  }
  *consumed = i;
  if (d->state == CH_DONE) return HERON_HTTP_DONE;
  if (d->state == CH_ERROR) return HERON_HTTP_ERROR;
  return HERON_HTTP_NEED_MORE;
}
