/*
 * HPACK decoding (RFC 7541) of one HTTP/2 connection's request header blocks, in plain C (no
 * Ruby: the libFuzzer harness in fuzz/ runs it alone). The Ruby binding is
 * heron_http2_decoder.c.
 *
 * heron_hpack_decode reads a whole header block and hands each field to a callback, keeping the
 * connection's dynamic table (§2.3.2, §4): entries added by literals with incremental indexing,
 * the oldest evicted to stay within the table's size, a size update (§6.3) only at the start of
 * a block and never past the limit the caller advertised (SETTINGS_HEADER_TABLE_SIZE).
 * Everything a client controls is bounded: integers (at most four continuation bytes, so below
 * 2^28), string lengths (within the block), the table (its size limit), Huffman padding (§5.2:
 * at most 7 bits, all ones, no EOS symbol).
 */
#ifndef HERON_HPACK_DECODER_H
#define HERON_HPACK_DECODER_H

#include <stddef.h>
#include <stdint.h>

#define HERON_HPACK_STATIC_COUNT 61
#define HERON_HPACK_ENTRY_OVERHEAD 32
/* Slots a binding may keep per table entry (cached objects); zero when the entry is made. */
#define HERON_HPACK_USER_SLOTS 3

enum {
  HERON_HPACK_OK = 0,
  HERON_HPACK_TRUNCATED,      /* the block ends inside a field */
  HERON_HPACK_INTEGER,        /* an integer past 2^28 */
  HERON_HPACK_INDEX,          /* index 0, or past the tables */
  HERON_HPACK_HUFFMAN,        /* bad padding, or the EOS symbol */
  HERON_HPACK_TABLE_SIZE,     /* a size update above the limit */
  HERON_HPACK_LATE_UPDATE,    /* a size update after a field */
  HERON_HPACK_NO_MEMORY,
  HERON_HPACK_ERRORS          /* callbacks return their own codes from here on */
};

/* One dynamic table entry: its name, then its value, in bytes. */
typedef struct heron_hpack_entry {
  size_t name_len, value_len;
  uintptr_t user[HERON_HPACK_USER_SLOTS];
  char bytes[];
} heron_hpack_entry;

/* A decoded field. name/value point into the block, the decoder's scratch or a table entry:
 * valid during the callback only. */
typedef struct heron_hpack_field {
  const char *name, *value;
  size_t name_len, value_len;
  unsigned static_index;          /* 1..61: the name (and the value, if indexed) is this static entry's */
  heron_hpack_entry *entry;       /* else the dynamic entry the name (and value, if indexed) is from */
  int indexed;                    /* the whole field is a table entry (§6.1) */
  heron_hpack_entry *added;       /* the entry this literal is added as (§6.2.1), or NULL */
} heron_hpack_field;

/* Returns HERON_HPACK_OK to go on, or a code >= HERON_HPACK_ERRORS to stop decoding with it. */
typedef int (*heron_hpack_emit)(void *userdata, const heron_hpack_field *field);

typedef struct heron_hpack_decoder {
  heron_hpack_entry **ring; /* the dynamic table, newest at `head`, older ones after it */
  size_t ring_cap, head, count;
  size_t size, max;         /* bytes in the table (§4.1) and its current maximum */
  char *scratch;            /* Huffman-decoded strings of the field being read */
  size_t scratch_cap;
  heron_hpack_entry *pending; /* a literal's new entry until it is in the table (freed if a callback never returns) */
} heron_hpack_decoder;

typedef struct heron_hpack_static_entry {
  const char *name, *value;
  size_t name_len, value_len;
} heron_hpack_static_entry;

/* The Huffman code's length in bits per symbol (Appendix B; 256 is EOS): the code is
 * canonical, so the lengths give the codes. */
extern const unsigned char heron_hpack_huffman_bits[257];

/* The static table (Appendix A), index 1 at [0]. */
extern const heron_hpack_static_entry heron_hpack_static_table[HERON_HPACK_STATIC_COUNT];

/* Builds the Huffman decoding tables; call once before decoding. */
void heron_hpack_init(void);
void heron_hpack_decoder_init(heron_hpack_decoder *d, size_t table_size);
void heron_hpack_decoder_free(heron_hpack_decoder *d);

/* Decodes one whole block, calling emit for each field. `limit` is the most a size update may
 * ask for. Returns HERON_HPACK_OK, an error above, or emit's code. On an error the table is left
 * as it stands (the connection ends: RFC 7541 §2.3.3, a COMPRESSION_ERROR). */
int heron_hpack_decode(heron_hpack_decoder *d, const unsigned char *data, size_t len, size_t limit,
                       heron_hpack_emit emit, void *userdata);

/* The dynamic entry at 0-based position i (0: the newest), or NULL. */
heron_hpack_entry *heron_hpack_entry_at(const heron_hpack_decoder *d, size_t i);

/* Decodes a Huffman-coded string (§5.2) of len bytes into out (room for len * 8 / 5 bytes).
 * Returns the decoded length, or -1 for bad padding or the EOS symbol. */
long heron_hpack_huffman_decode(const unsigned char *in, size_t len, char *out);

/* A short message for an error code below HERON_HPACK_ERRORS. */
const char *heron_hpack_error_message(int code);

#endif
