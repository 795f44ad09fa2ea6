/*
 * libFuzzer harness for the pure-C HPACK decoder (../hpack_decoder.c).
 *
 * An input is a connection's header blocks: two bytes give the table size limit (our
 * SETTINGS_HEADER_TABLE_SIZE, up to 16 KiB), then each block is a length byte and that many
 * bytes. One decoder reads them in turn (the dynamic table carries over, as on a connection).
 * For each input it checks that
 *  - every field's name and value can be read whole (ASan sees any byte out of bounds) and are
 *    no longer than the block and the table allow;
 *  - the dynamic table stays within its maximum, which stays within the limit, and its size is
 *    the sum of its entries' (RFC 7541 §4.1);
 *  - a Huffman string that decodes, encoded again (with the harness's own encoder, from the
 *    code lengths alone), gives back the very bytes it came from: no code misread, and padding
 *    accepted only as §5.2 allows (fewer than 8 bits, all ones);
 *  - a callback that stops the decoding (at a field chosen by the data) leaks nothing.
 * Any mismatch aborts, which libFuzzer reports as a crash. Built and run by ./run.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hpack_decoder.h"
#include "fuzz_check.h"

#define STOP (HERON_HPACK_ERRORS + 1)

static uint32_t codes[257]; /* canonical codes, computed here from the lengths */

static void Heron_Fuzz_codes(void)
{
  uint32_t code = 0;
  unsigned len, sym;
  for (len = 1; len <= 30; len++) {
    for (sym = 0; sym < 257; sym++)
      if (heron_hpack_huffman_bits[sym] == len) codes[sym] = code++;
    code <<= 1;
  }
  /* a few codes from RFC 7541 Appendix B, to tie the lengths to the real code */
  CHECK(codes['0'] == 0x0 && heron_hpack_huffman_bits['0'] == 5);
  CHECK(codes['a'] == 0x3 && heron_hpack_huffman_bits['a'] == 5);
  CHECK(codes[':'] == 0x5c && heron_hpack_huffman_bits[':'] == 7);
  CHECK(codes[256] == 0x3fffffff && heron_hpack_huffman_bits[256] == 30);
}

/* Encodes s, padded with ones; returns the length written to out. */
static size_t Heron_Fuzz_huffman_encode(const unsigned char *s, size_t n, unsigned char *out)
{
  uint64_t acc = 0;
  unsigned bits = 0;
  size_t i, len = 0;
  for (i = 0; i < n; i++) {
    acc = (acc << heron_hpack_huffman_bits[s[i]]) | codes[s[i]];
    bits += heron_hpack_huffman_bits[s[i]];
    while (bits >= 8) {
      out[len++] = (unsigned char)(acc >> (bits - 8));
      bits -= 8;
    }
  }
  if (bits) out[len++] = (unsigned char)((acc << (8 - bits)) | (0xffu >> bits));
  return len;
}

typedef struct {
  size_t block_len, limit;
  unsigned long fields, stop_at;
  unsigned sum;
} Heron_Fuzz_state;

static int Heron_Fuzz_emit(void *userdata, const heron_hpack_field *f)
{
  Heron_Fuzz_state *st = userdata;
  size_t i;
  /* a literal's strings come from the block (Huffman: at most 8/5 as long); an indexed
   * field's from a table entry, which fits the table */
  if (!f->indexed && !f->static_index && !f->entry) CHECK(f->name_len + f->value_len <= st->block_len / 5 * 8 + 8);
  if (f->indexed && f->entry) CHECK(f->name_len + f->value_len + HERON_HPACK_ENTRY_OVERHEAD <= st->limit);
  if (f->static_index) CHECK(f->static_index >= 1 && f->static_index <= HERON_HPACK_STATIC_COUNT);
  for (i = 0; i < f->name_len; i++) st->sum += (unsigned char)f->name[i];
  for (i = 0; i < f->value_len; i++) st->sum += (unsigned char)f->value[i];
  if (f->added) {
    CHECK(f->added->name_len == f->name_len && f->added->value_len == f->value_len);
    CHECK(memcmp(f->added->bytes, f->name, f->name_len) == 0);
    CHECK(memcmp(f->added->bytes + f->name_len, f->value, f->value_len) == 0);
  }
  return ++st->fields == st->stop_at ? STOP : HERON_HPACK_OK;
}

static void Heron_Fuzz_check_table(const heron_hpack_decoder *d, size_t limit)
{
  size_t i, size = 0;
  CHECK(d->max <= limit);
  for (i = 0; i < d->count; i++) {
    const heron_hpack_entry *e = heron_hpack_entry_at(d, i);
    CHECK(e != NULL);
    size += e->name_len + e->value_len + HERON_HPACK_ENTRY_OVERHEAD;
  }
  CHECK(heron_hpack_entry_at(d, d->count) == NULL);
  CHECK(size == d->size);
  CHECK(d->size <= d->max);
}

/* Each block as a lone Huffman string: what decodes must encode back to the same bytes. */
static void Heron_Fuzz_check_huffman(const unsigned char *s, size_t n)
{
  char *decoded = malloc(n / 5 * 8 + 8);
  unsigned char *again = malloc(n + 8);
  long len = heron_hpack_huffman_decode(s, n, decoded);
  if (len >= 0) {
    CHECK((size_t)len <= n * 8 / 5);
    CHECK(Heron_Fuzz_huffman_encode((const unsigned char *)decoded, (size_t)len, again) == n);
    CHECK(memcmp(again, s, n) == 0);
  }
  free(decoded);
  free(again);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
  static int ready;
  heron_hpack_decoder d;
  Heron_Fuzz_state st;
  size_t limit, pos = 2;
  if (!ready) {
    heron_hpack_init();
    Heron_Fuzz_codes();
    ready = 1;
  }
  if (size < 2) return 0;
  limit = ((size_t)data[0] << 8 | data[1]) & 0x3fff;
  heron_hpack_decoder_init(&d, limit);
  memset(&st, 0, sizeof(st));
  st.limit = limit;
  st.stop_at = size > 2 && (data[2] & 0x80) ? (unsigned long)(data[2] & 0x0f) + 1 : 0;
  while (pos < size) {
    size_t n = data[pos++];
    int r;
    if (n > size - pos) n = size - pos;
    st.block_len = n;
    Heron_Fuzz_check_huffman(data + pos, n);
    r = heron_hpack_decode(&d, data + pos, n, limit, Heron_Fuzz_emit, &st);
    CHECK(r >= HERON_HPACK_OK && (r < HERON_HPACK_ERRORS || r == STOP));
    Heron_Fuzz_check_table(&d, limit);
    pos += n;
    if (r != HERON_HPACK_OK) break; /* the connection ends */
  }
  heron_hpack_decoder_free(&d);
  return 0;
}
