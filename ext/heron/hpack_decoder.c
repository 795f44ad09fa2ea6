/*
 * HPACK decoding (RFC 7541): see hpack_decoder.h. Plain C, no Ruby.
 */
#include "hpack_decoder.h"
#include <stdlib.h>
#include <string.h>

const heron_hpack_static_entry heron_hpack_static_table[HERON_HPACK_STATIC_COUNT] = {
  {":authority", "", 10, 0}, {":method", "GET", 7, 3}, {":method", "POST", 7, 4},
  {":path", "/", 5, 1}, {":path", "/index.html", 5, 11}, {":scheme", "http", 7, 4},
  {":scheme", "https", 7, 5}, {":status", "200", 7, 3}, {":status", "204", 7, 3},
  {":status", "206", 7, 3}, {":status", "304", 7, 3}, {":status", "400", 7, 3},
  {":status", "404", 7, 3}, {":status", "500", 7, 3}, {"accept-charset", "", 14, 0},
  {"accept-encoding", "gzip, deflate", 15, 13}, {"accept-language", "", 15, 0}, {"accept-ranges", "", 13, 0},
  {"accept", "", 6, 0}, {"access-control-allow-origin", "", 27, 0}, {"age", "", 3, 0},
  {"allow", "", 5, 0}, {"authorization", "", 13, 0}, {"cache-control", "", 13, 0},
  {"content-disposition", "", 19, 0}, {"content-encoding", "", 16, 0}, {"content-language", "", 16, 0},
  {"content-length", "", 14, 0}, {"content-location", "", 16, 0}, {"content-range", "", 13, 0},
  {"content-type", "", 12, 0}, {"cookie", "", 6, 0}, {"date", "", 4, 0},
  {"etag", "", 4, 0}, {"expect", "", 6, 0}, {"expires", "", 7, 0},
  {"from", "", 4, 0}, {"host", "", 4, 0}, {"if-match", "", 8, 0},
  {"if-modified-since", "", 17, 0}, {"if-none-match", "", 13, 0}, {"if-range", "", 8, 0},
  {"if-unmodified-since", "", 19, 0}, {"last-modified", "", 13, 0}, {"link", "", 4, 0},
  {"location", "", 8, 0}, {"max-forwards", "", 12, 0}, {"proxy-authenticate", "", 18, 0},
  {"proxy-authorization", "", 19, 0}, {"range", "", 5, 0}, {"referer", "", 7, 0},
  {"refresh", "", 7, 0}, {"retry-after", "", 11, 0}, {"server", "", 6, 0},
  {"set-cookie", "", 10, 0}, {"strict-transport-security", "", 25, 0}, {"transfer-encoding", "", 17, 0},
  {"user-agent", "", 10, 0}, {"vary", "", 4, 0}, {"via", "", 3, 0},
  {"www-authenticate", "", 16, 0},
};

/* The Huffman code's length in bits for each symbol (Appendix B; 256 is EOS). The code is
 * canonical: codes of one length are consecutive, in symbol order, after the shorter ones, so
 * the lengths alone give every code. */
const unsigned char heron_hpack_huffman_bits[257] = {
  13, 23, 28, 28, 28, 28, 28, 28, 28, 24, 30, 28, 28, 30, 28, 28, 28, 28, 28, 28, 28, 28, 30, 28, 28, 28, 28, 28, 28, 28, 28, 28,
  6, 10, 10, 12, 13, 6, 8, 11, 10, 10, 8, 11, 8, 6, 6, 6, 5, 5, 5, 6, 6, 6, 6, 6, 6, 6, 7, 8, 15, 6, 12, 10,
  13, 6, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 8, 7, 8, 13, 19, 13, 14, 6,
  15, 5, 6, 5, 6, 5, 6, 6, 6, 5, 7, 7, 6, 6, 6, 5, 6, 7, 6, 5, 5, 6, 7, 7, 7, 7, 7, 15, 11, 14, 13, 28,
  20, 22, 20, 20, 22, 22, 22, 23, 22, 23, 23, 23, 23, 23, 24, 23, 24, 24, 22, 23, 24, 23, 23, 23, 23, 21, 22, 23, 22, 23, 23, 24,
  22, 21, 20, 22, 22, 23, 23, 21, 23, 22, 22, 24, 21, 22, 23, 23, 21, 21, 22, 21, 23, 22, 23, 23, 20, 22, 22, 22, 23, 22, 22, 23,
  26, 26, 20, 19, 22, 23, 22, 25, 26, 26, 26, 27, 27, 26, 24, 25, 19, 21, 26, 27, 27, 26, 27, 24, 21, 21, 26, 26, 28, 27, 27, 27,
  20, 24, 20, 21, 22, 21, 21, 23, 22, 22, 25, 25, 24, 24, 26, 23, 26, 27, 26, 26, 27, 27, 27, 27, 27, 28, 27, 27, 27, 27, 27, 26,
  30,
};

#define HUFFMAN_MAX_BITS 30
static uint32_t huffman_first[HUFFMAN_MAX_BITS + 1]; /* the first code of each length */
static uint16_t huffman_count[HUFFMAN_MAX_BITS + 1]; /* how many codes have that length */
static uint16_t huffman_offset[HUFFMAN_MAX_BITS + 1]; /* where they start in huffman_symbols */
static uint16_t huffman_symbols[257];                 /* symbols by (length, symbol) */

void heron_hpack_init(void)
{
  uint32_t code = 0;
  unsigned len, sym, n = 0;
  for (len = 1; len <= HUFFMAN_MAX_BITS; len++) {
    huffman_first[len] = code;
    huffman_offset[len] = (uint16_t)n;
    huffman_count[len] = 0;
    for (sym = 0; sym < 257; sym++) {
      if (heron_hpack_huffman_bits[sym] != len) continue;
      huffman_symbols[n++] = (uint16_t)sym;
      huffman_count[len]++;
    }
    code = (code + huffman_count[len]) << 1;
  }
}

long heron_hpack_huffman_decode(const unsigned char *in, size_t len, char *out)
{
  uint32_t code = 0;
  unsigned bits = 0;
  size_t i, n = 0;
  int b;
  for (i = 0; i < len; i++) {
    for (b = 7; b >= 0; b--) {
      uint32_t d;
      code = (code << 1) | ((in[i] >> b) & 1u);
      bits++;
      if (bits < 5) continue;
      d = code - huffman_first[bits];
      if (code >= huffman_first[bits] && d < huffman_count[bits]) {
        uint16_t sym = huffman_symbols[huffman_offset[bits] + d];
        if (sym == 256) return -1; /* EOS in a string is an error (§5.2) */
        out[n++] = (char)sym;
        code = 0;
        bits = 0;
      } else if (bits >= HUFFMAN_MAX_BITS) {
        return -1;
      }
    }
  }
  /* padding: fewer than 8 bits, the most significant bits of EOS (all ones) */
  if (bits > 7 || code != (1u << bits) - 1u) return -1;
  return (long)n;
}

void heron_hpack_decoder_init(heron_hpack_decoder *d, size_t table_size)
{
  memset(d, 0, sizeof(*d));
  d->max = table_size;
}

static void heron_hpack_evict(heron_hpack_decoder *d, size_t room)
{
  while (d->count > 0 && d->size + room > d->max) {
    size_t last = (d->head + d->count - 1) % d->ring_cap;
    heron_hpack_entry *e = d->ring[last];
    d->size -= e->name_len + e->value_len + HERON_HPACK_ENTRY_OVERHEAD;
    d->ring[last] = NULL;
    d->count--;
    free(e);
  }
}

void heron_hpack_decoder_free(heron_hpack_decoder *d)
{
  d->max = 0;
  heron_hpack_evict(d, 0);
  free(d->ring);
  free(d->scratch);
  free(d->pending);
  memset(d, 0, sizeof(*d));
}

heron_hpack_entry *heron_hpack_entry_at(const heron_hpack_decoder *d, size_t i)
{
  if (i >= d->count) return NULL;
  return d->ring[(d->head + i) % d->ring_cap];
}

/* Room for one more entry at the front: the ring grows (doubling, as entries are at least 32
 * bytes: at most max / 32 of them). */
static int heron_hpack_reserve(heron_hpack_decoder *d)
{
  size_t cap, i;
  heron_hpack_entry **ring;
  if (d->count < d->ring_cap) return 1;
  cap = d->ring_cap ? d->ring_cap * 2 : 16;
  ring = malloc(cap * sizeof(*ring));
  if (!ring) return 0;
  for (i = 0; i < d->count; i++) ring[i] = d->ring[(d->head + i) % d->ring_cap];
  free(d->ring);
  d->ring = ring;
  d->ring_cap = cap;
  d->head = 0;
  return 1;
}

/* §4.4: evicts until the entry fits, then adds it first; an entry larger than the table empties
 * it and is not added (freed). */
static int heron_hpack_add(heron_hpack_decoder *d, heron_hpack_entry *e)
{
  size_t size = e->name_len + e->value_len + HERON_HPACK_ENTRY_OVERHEAD;
  heron_hpack_evict(d, size);
  if (size > d->max) {
    free(e);
    return HERON_HPACK_OK;
  }
  if (!heron_hpack_reserve(d)) {
    free(e);
    return HERON_HPACK_NO_MEMORY;
  }
  d->head = (d->head + d->ring_cap - 1) % d->ring_cap;
  d->ring[d->head] = e;
  d->count++;
  d->size += size;
  return HERON_HPACK_OK;
}

typedef struct {
  const unsigned char *p, *end;
} heron_hpack_cursor;

/* §5.1: an integer on an n-bit prefix, then 7 bits a byte, at most 4 bytes more. */
static int heron_hpack_integer(heron_hpack_cursor *c, unsigned prefix, size_t *out)
{
  size_t limit = ((size_t)1 << prefix) - 1, value;
  unsigned shift = 0;
  if (c->p >= c->end) return HERON_HPACK_TRUNCATED;
  value = *c->p++ & limit;
  if (value < limit) {
    *out = value;
    return HERON_HPACK_OK;
  }
  for (;;) {
    unsigned char octet;
    if (shift > 21) return HERON_HPACK_INTEGER;
    if (c->p >= c->end) return HERON_HPACK_TRUNCATED;
    octet = *c->p++;
    value += (size_t)(octet & 0x7f) << shift;
    if (octet < 0x80) break;
    shift += 7;
  }
  *out = value;
  return HERON_HPACK_OK;
}

/* §5.2: a string, raw (pointing into the block) or Huffman-coded (decoded into out). */
static int heron_hpack_string(heron_hpack_cursor *c, char *out, const char **str, size_t *len)
{
  int huffman, r;
  size_t n;
  long decoded;
  if (c->p >= c->end) return HERON_HPACK_TRUNCATED;
  huffman = *c->p & 0x80;
  if ((r = heron_hpack_integer(c, 7, &n)) != HERON_HPACK_OK) return r;
  if (n > (size_t)(c->end - c->p)) return HERON_HPACK_TRUNCATED;
  if (!huffman) {
    *str = (const char *)c->p;
    *len = n;
  } else {
    if ((decoded = heron_hpack_huffman_decode(c->p, n, out)) < 0) return HERON_HPACK_HUFFMAN;
    *str = out;
    *len = (size_t)decoded;
  }
  c->p += n;
  return HERON_HPACK_OK;
}

/* The field's name (and value, if indexed) from index i of the static or dynamic table. */
static int heron_hpack_lookup(const heron_hpack_decoder *d, size_t i, heron_hpack_field *f)
{
  if (i == 0) return HERON_HPACK_INDEX;
  if (i <= HERON_HPACK_STATIC_COUNT) {
    const heron_hpack_static_entry *s = &heron_hpack_static_table[i - 1];
    f->static_index = (unsigned)i;
    f->name = s->name;
    f->name_len = s->name_len;
    f->value = s->value;
    f->value_len = s->value_len;
    return HERON_HPACK_OK;
  }
  f->entry = heron_hpack_entry_at(d, i - HERON_HPACK_STATIC_COUNT - 1);
  if (!f->entry) return HERON_HPACK_INDEX;
  f->name = f->entry->bytes;
  f->name_len = f->entry->name_len;
  f->value = f->entry->bytes + f->entry->name_len;
  f->value_len = f->entry->value_len;
  return HERON_HPACK_OK;
}

/* §6.2: a literal field, its name indexed (name_index > 0) or a literal too; with incremental
 * indexing its entry is made before the callback (which may keep objects in it) and added
 * after, so the name it took from an entry that the addition evicts is still there for the
 * callback. */
static int heron_hpack_literal(heron_hpack_decoder *d, heron_hpack_cursor *c, size_t name_index, int indexing,
                               heron_hpack_emit emit, void *userdata)
{
  heron_hpack_field f;
  int r;
  memset(&f, 0, sizeof(f));
  if (name_index) {
    if ((r = heron_hpack_lookup(d, name_index, &f)) != HERON_HPACK_OK) return r;
  } else if ((r = heron_hpack_string(c, d->scratch, &f.name, &f.name_len)) != HERON_HPACK_OK) {
    return r;
  }
  /* the value's decoded bytes go after the name's (together within the block's length * 8 / 5) */
  r = heron_hpack_string(c, d->scratch + (f.name == d->scratch ? f.name_len : 0), &f.value, &f.value_len);
  if (r != HERON_HPACK_OK) return r;
  if (indexing) {
    heron_hpack_entry *e = malloc(sizeof(*e) + f.name_len + f.value_len);
    if (!e) return HERON_HPACK_NO_MEMORY;
    e->name_len = f.name_len;
    e->value_len = f.value_len;
    memset(e->user, 0, sizeof(e->user));
    memcpy(e->bytes, f.name, f.name_len);
    memcpy(e->bytes + f.name_len, f.value, f.value_len);
    d->pending = f.added = e;
  }
  r = emit(userdata, &f);
  d->pending = NULL;
  if (r != HERON_HPACK_OK) {
    free(f.added);
    return r;
  }
  return f.added ? heron_hpack_add(d, f.added) : HERON_HPACK_OK;
}

/* Room for the Huffman-decoded strings of one field of a block of len bytes. */
static int heron_hpack_scratch(heron_hpack_decoder *d, size_t len)
{
  size_t need = len / 5 * 8 + 8;
  char *scratch;
  if (need <= d->scratch_cap) return 1;
  scratch = realloc(d->scratch, need);
  if (!scratch) return 0;
  d->scratch = scratch;
  d->scratch_cap = need;
  return 1;
}

int heron_hpack_decode(heron_hpack_decoder *d, const unsigned char *data, size_t len, size_t limit,
                       heron_hpack_emit emit, void *userdata)
{
  heron_hpack_cursor c = {data, data + len};
  int r, fields = 0;
  free(d->pending); /* a callback that never returned (the binding's raise) */
  d->pending = NULL;
  if (!heron_hpack_scratch(d, len)) return HERON_HPACK_NO_MEMORY;
  while (c.p < c.end) {
    unsigned char byte = *c.p;
    size_t n;
    if (byte >= 0x80) { /* §6.1 indexed */
      heron_hpack_field f;
      memset(&f, 0, sizeof(f));
      if ((r = heron_hpack_integer(&c, 7, &n)) != HERON_HPACK_OK) return r;
      if ((r = heron_hpack_lookup(d, n, &f)) != HERON_HPACK_OK) return r;
      f.indexed = 1;
      if ((r = emit(userdata, &f)) != HERON_HPACK_OK) return r;
    } else if (byte >= 0x40) { /* §6.2.1 with incremental indexing */
      if ((r = heron_hpack_integer(&c, 6, &n)) != HERON_HPACK_OK) return r;
      if ((r = heron_hpack_literal(d, &c, n, 1, emit, userdata)) != HERON_HPACK_OK) return r;
    } else if (byte >= 0x20) { /* §6.3 dynamic table size update: first in the block only (§4.2) */
      if (fields) return HERON_HPACK_LATE_UPDATE;
      if ((r = heron_hpack_integer(&c, 5, &n)) != HERON_HPACK_OK) return r;
      if (n > limit) return HERON_HPACK_TABLE_SIZE;
      d->max = n;
      heron_hpack_evict(d, 0);
      continue;
    } else { /* §6.2.2 without indexing, §6.2.3 never indexed */
      if ((r = heron_hpack_integer(&c, 4, &n)) != HERON_HPACK_OK) return r;
      if ((r = heron_hpack_literal(d, &c, n, 0, emit, userdata)) != HERON_HPACK_OK) return r;
    }
    fields = 1;
  }
  return HERON_HPACK_OK;
}

const char *heron_hpack_error_message(int code)
{
  switch (code) {
  case HERON_HPACK_TRUNCATED: return "header block truncated";
  case HERON_HPACK_INTEGER: return "integer too large";
  case HERON_HPACK_INDEX: return "invalid index";
  case HERON_HPACK_HUFFMAN: return "invalid Huffman code (padding or EOS)";
  case HERON_HPACK_TABLE_SIZE: return "table size update exceeds the limit";
  case HERON_HPACK_LATE_UPDATE: return "table size update after a field";
  case HERON_HPACK_NO_MEMORY: return "out of memory";
  default: return "HPACK error";
  }
}
