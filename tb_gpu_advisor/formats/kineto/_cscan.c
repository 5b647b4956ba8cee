/* The compiled PyTorch (Kineto) JSON scanner: one chunk of events straight from its bytes into columns.
 *
 * The Python path (parse.py: msgspec's typed decode, then the column builder) stays the reference; this module
 * mirrors it and decides nothing on its own about unusual bytes.  It accepts only a conservative subset of JSON
 * on which msgspec's typed decode certainly succeeds with the same values: strictly valid UTF-8, no ``\u`` escape
 * anywhere, no escape at all in the strings it keeps (names, categories, ph, string pids), numbers of the types
 * the typed decode wants (integers for pid/tid and the integer arguments, 64-bit at most; finite floats for
 * ts/dur), no key read twice, nesting at most MAX_DEPTH.  On anything else ``scan`` returns None and the caller
 * decodes the chunk as before, which gives its own columns or its own error: a hostile file reads exactly as it
 * does without this module.
 *
 * Every read is checked against the chunk's end.  The scan runs without the GIL into malloc'd arrays; names,
 * categories and string pids/tids are interned per chunk (first appearance order) so the caller interns each
 * distinct one once, as the Python path does.  ``args`` are kept as byte spans (offset, length): the caller
 * decodes only the rows whose op's shapes a stage reads, once per distinct shapes (``op_keys`` gives each such row's
 * raw shape values as one bytes key).
 *
 * Written against the CPython API and the buffer protocol only (no numpy headers).
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <math.h>

#include "../_utf8.h"

#define MAX_DEPTH 32
#define MAX_PH 16
#define MAX_NUMBER 96

typedef struct {
    char *data;
    size_t len, cap, item;
} Vec;

static void vec_init(Vec *v, size_t item) { v->data = NULL; v->len = v->cap = 0; v->item = item; }
static void vec_free(Vec *v) { free(v->data); v->data = NULL; v->len = v->cap = 0; }

static int vec_grow(Vec *v) {
    size_t cap = v->cap ? v->cap * 2 : 1024;
    if (cap > SIZE_MAX / 2 / v->item) return -1;
    char *d = realloc(v->data, cap * v->item);
    if (!d) return -1;
    v->data = d;
    v->cap = cap;
    return 0;
}

#define PUSH(v, T, x) ((((v)->len == (v)->cap) && vec_grow(v)) ? -1 : (((T *)(v)->data)[(v)->len++] = (x), 0))

/* ---- interning of byte spans (per chunk): local ids in first-appearance order ---- */

typedef struct {
    int64_t *slots;  /* local id + 1, 0 empty */
    size_t mask;
    Vec spans;       /* int64 pairs (offset, length) by local id */
} Intern;

static int intern_init(Intern *t) {
    vec_init(&t->spans, 2 * sizeof(int64_t));
    t->mask = 255;
    t->slots = calloc(t->mask + 1, sizeof(int64_t));
    return t->slots ? 0 : -1;
}

static void intern_free(Intern *t) { free(t->slots); t->slots = NULL; vec_free(&t->spans); }

/* Eight bytes at a time (names of kernels run to hundreds of bytes); every read inside p[0:n]. */
static inline uint64_t hash_span(const uint8_t *p, int64_t n) {
    uint64_t h = 0x9E3779B97F4A7C15ULL ^ (uint64_t)n, w;
    int64_t i = 0;
    for (; i + 8 <= n; i += 8) {
        memcpy(&w, p + i, 8);
        h = (h ^ w) * 0xff51afd7ed558ccdULL;
        h ^= h >> 32;
    }
    w = 0;
    memcpy(&w, p + i, (size_t)(n - i));
    /* a full 64-bit finish (MurmurHash3's fmix64): a table slot is the hash's low bits, and names that differ only
     * in their last word's high bytes ("ProfilerStep#88", "#89", ...) must not share them, as they did when one
     * multiply and shift left those bytes out (a chunk of 65 step names went past MAX_PROBES and was handed back) */
    h ^= w;
    h ^= h >> 33;
    h *= 0xff51afd7ed558ccdULL;
    h ^= h >> 33;
    h *= 0xc4ceb9fe1a85ec53ULL;
    return h ^ (h >> 33);
}

/* Probes of one lookup past which the chunk is handed back: the hash is not keyed, so names made to collide could
 * make the table quadratic; Python's dict (keyed hashes) then interns them.  At load <= 1/2 no real trace gets near. */
#define MAX_PROBES 64

static int intern_rehash(Intern *t, const uint8_t *buf) {
    size_t mask = t->mask * 2 + 1;
    int64_t *slots = calloc(mask + 1, sizeof(int64_t));
    if (!slots) return -1;
    const int64_t *sp = (const int64_t *)t->spans.data;
    for (size_t id = 0; id < t->spans.len; id++) {
        size_t i = hash_span(buf + sp[2 * id], sp[2 * id + 1]) & mask;
        while (slots[i]) i = (i + 1) & mask;
        slots[i] = (int64_t)id + 1;
    }
    free(t->slots);
    t->slots = slots;
    t->mask = mask;
    return 0;
}

/* The local id of buf[off:off+n]; -1 when memory ran out, -2 past MAX_PROBES. */
static int64_t intern(Intern *t, const uint8_t *buf, int64_t off, int64_t n) {
    size_t i = hash_span(buf + off, n) & t->mask;
    const int64_t *sp = (const int64_t *)t->spans.data;
    int probes = 0;
    while (t->slots[i]) {
        int64_t id = t->slots[i] - 1;
        if (sp[2 * id + 1] == n && memcmp(buf + sp[2 * id], buf + off, (size_t)n) == 0) return id;
        if (++probes > MAX_PROBES) return -2;
        i = (i + 1) & t->mask;
    }
    int64_t id = (int64_t)t->spans.len;
    int64_t pair[2] = {off, n};
    if (t->spans.len == t->spans.cap && vec_grow(&t->spans)) return -1;
    memcpy(t->spans.data + t->spans.len * t->spans.item, pair, sizeof pair);
    t->spans.len++;
    t->slots[i] = id + 1;
    if ((t->spans.len + 1) * 2 > t->mask + 1 && intern_rehash(t, buf)) return -1;
    return id;
}

/* ---- the scan ---- */

/* TRUNC: the chunk ends inside an event (every byte before was valid): no decoder can read it, the cut is wrong. */
enum { OK = 0, BAD = 1, NOMEM = 2, TRUNC = 3 };
#define TRY(x) do { int r_ = (x); if (r_) return r_; } while (0)
#define NEED(i) do { if ((i) >= s->n) return TRUNC; } while (0)

/* A value the caller keeps: its kind and where it is. */
enum { V_ABSENT = 0, V_NULL, V_STR, V_INT, V_FLOAT, V_OTHER };
typedef struct {
    int kind;
    int64_t off, len;  /* a string's content (no escapes), or the value's text */
    int64_t i;         /* V_INT */
    double f;          /* V_INT and V_FLOAT as a float */
    int escaped;       /* a string with an escape (kept strings must have none) */
} Val;

typedef struct {
    const uint8_t *b;
    int64_t n;
} Src;

static inline int64_t skip_ws(const Src *s, int64_t p) {
    while (p < s->n && (s->b[p] == ' ' || s->b[p] == '\n' || s->b[p] == '\r' || s->b[p] == '\t')) p++;
    return p;
}

/* Bytes a string holds as they are: printable ASCII other than the quote and the backslash (PyInit__cscan fills). */
static uint8_t PLAIN[256];

#define ONES 0x0101010101010101ULL
#define HIGHS 0x8080808080808080ULL

/* Whether any of a word's eight bytes is not PLAIN: a quote, a backslash, a control byte (< 0x20) or a non-ASCII one
 * (>= 0x80).  The classic zero-byte tests: exact as to *whether* one is there (they may misname which), which is all
 * the caller asks; it then reads the word byte by byte. */
static inline uint64_t needs_look(uint64_t w) {
    uint64_t q = w ^ (ONES * '"'), bs = w ^ (ONES * '\\');
    return (((q - ONES) & ~q) | ((bs - ONES) & ~bs) | ((w - ONES * 0x20) & ~w) | w) & HIGHS;
}

/* A string at s->b[*p] == '"': strictly valid UTF-8, simple escapes only (no \u).  Sets off/len of the content. */
static int scan_string(const Src *s, int64_t *p, Val *v) {
    int64_t i = *p + 1;
    const uint8_t *b = s->b;
    v->kind = V_STR;
    v->off = i;
    v->escaped = 0;
    while (1) {
        /* eight bytes at a time while none needs a look (a kernel's name runs to hundreds of bytes), then byte by
         * byte up to the byte that does */
        uint64_t w;
        while (i + 8 <= s->n) {
            memcpy(&w, b + i, 8);
            if (needs_look(w)) break;
            i += 8;
        }
        while (i < s->n && PLAIN[b[i]]) i++;
        NEED(i);
        uint8_t c = b[i];
        if (c == '"') break;
        if (c < 0x20) return BAD;
        if (c == '\\') {
            NEED(i + 1);
            uint8_t e = b[i + 1];
            if (!(e == '"' || e == '\\' || e == '/' || e == 'b' || e == 'f' || e == 'n' || e == 'r' || e == 't'))
                return BAD;
            v->escaped = 1;
            i += 2;
            continue;
        }
        if (c < 0x80) { i++; continue; }
        /* UTF-8: no overlongs, no surrogates, at most U+10FFFF; a sequence cut by the chunk's end is read on */
        int len = utf8_sequence(b + i, (size_t)(s->n - i));
        if (len < 0) return TRUNC;
        if (len == 0) return BAD;
        i += len;
    }
    v->len = i - v->off;
    *p = i + 1;
    return OK;
}

static const double POW10[] = {1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11,
                               1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22};

/* A JSON number (strict grammar).  An integer literal of at most 18 digits is V_INT; any other is V_FLOAT, its value
 * correctly rounded (exact arithmetic where it is exact, else strtod on a copy), BAD where it is not finite. */
static int scan_number(const Src *s, int64_t *p, Val *v) {
    const uint8_t *b = s->b;
    int64_t i = *p, start = i;
    int neg = 0;
    if (i < s->n && b[i] == '-') { neg = 1; i++; }
    NEED(i);
    if (b[i] < '0' || b[i] > '9') return BAD;
    uint64_t m = 0;
    int digits = 0, frac_digits = 0;
    if (b[i] == '0') {
        i++;
    } else {
        while (i < s->n && b[i] >= '0' && b[i] <= '9') {
            if (digits < 19) m = m * 10 + (uint64_t)(b[i] - '0');
            digits++;
            i++;
        }
    }
    int is_float = 0;
    if (i < s->n && b[i] == '.') {
        is_float = 1;
        i++;
        NEED(i);
        if (b[i] < '0' || b[i] > '9') return BAD;
        while (i < s->n && b[i] >= '0' && b[i] <= '9') {
            if (digits < 19 && !(digits == 0 && b[i] == '0')) { m = m * 10 + (uint64_t)(b[i] - '0'); digits++; }
            else if (digits >= 19) digits++;
            frac_digits++;
            i++;
        }
    }
    int64_t exp10 = 0;
    if (i < s->n && (b[i] == 'e' || b[i] == 'E')) {
        is_float = 1;
        i++;
        int eneg = 0;
        if (i < s->n && (b[i] == '+' || b[i] == '-')) { eneg = b[i] == '-'; i++; }
        NEED(i);
        if (b[i] < '0' || b[i] > '9') return BAD;
        while (i < s->n && b[i] >= '0' && b[i] <= '9') {
            if (exp10 < 100000) exp10 = exp10 * 10 + (b[i] - '0');
            i++;
        }
        if (eneg) exp10 = -exp10;
    }
    v->off = start;
    v->len = i - start;
    *p = i;
    if (!is_float && digits <= 18) {
        v->kind = V_INT;
        v->i = neg ? -(int64_t)m : (int64_t)m;
        v->f = (double)v->i;  /* as the typed decode turns an integer into a float (so -0 is 0.0) */
        return OK;
    }
    v->kind = V_FLOAT;
    int64_t e = exp10 - frac_digits;
    /* Clinger's fast path: every digit in m (at most 19) and m <= 2^53, so m and 10^|e| are exact doubles and the one
     * IEEE operation rounds correctly, as strtod does; a profiler's 16-digit times (4523358285700.585) take it */
    if (digits <= 19 && m <= (1ULL << 53) && e >= -22 && e <= 22) {
        double d = (double)m;
        d = e < 0 ? d / POW10[-e] : d * POW10[e];
        v->f = neg ? -d : d;
        return OK;
    }
    if (v->len >= MAX_NUMBER) return BAD;
    char tmp[MAX_NUMBER];
    memcpy(tmp, b + start, (size_t)v->len);
    tmp[v->len] = 0;
    char *endp;
    double d = strtod(tmp, &endp);
    if (endp != tmp + v->len || !isfinite(d)) return BAD;
    v->f = d;
    return OK;
}

/* A number no one reads (most of ``args``: occupancy, grids, strides, sequence numbers): its grammar is checked as
 * scan_number checks it, its value not worked out.  Without an exponent and shorter than MAX_NUMBER, a number that
 * follows the grammar is one scan_number accepts (finite, at most 96 digits); any other goes to scan_number, so a
 * chunk is refused exactly as before. */
static int skip_number(const Src *s, int64_t *p, Val *v) {
    const uint8_t *b = s->b;
    int64_t i = *p, start = i;
    if (i < s->n && b[i] == '-') i++;
    NEED(i);
    if (b[i] < '0' || b[i] > '9') return BAD;
    if (b[i] == '0') i++;
    else while (i < s->n && b[i] >= '0' && b[i] <= '9') i++;
    if (i < s->n && b[i] == '.') {
        i++;
        NEED(i);
        if (b[i] < '0' || b[i] > '9') return BAD;
        while (i < s->n && b[i] >= '0' && b[i] <= '9') i++;
    }
    if ((i < s->n && (b[i] == 'e' || b[i] == 'E')) || i - start >= MAX_NUMBER) return scan_number(s, p, v);
    v->kind = V_FLOAT;  /* a number: its kind is all a skipping caller may look at */
    v->off = start;
    v->len = i - start;
    *p = i;
    return OK;
}

static int skip_value(const Src *s, int64_t *p, int depth);

/* The value at s->b[*p]: a kept one (``read``: its number worked out) or one only checked and passed over. */
static int scan_value(const Src *s, int64_t *p, Val *v, int depth, int read) {
    int64_t i = *p;
    NEED(i);
    uint8_t c = s->b[i];
    if (c == '"') return scan_string(s, p, v);
    if (c == '-' || (c >= '0' && c <= '9')) return read ? scan_number(s, p, v) : skip_number(s, p, v);
    v->off = i;
    if (c == 'n' && i + 4 <= s->n && memcmp(s->b + i, "null", 4) == 0) { v->kind = V_NULL; *p = i + 4; return OK; }
    if (c == 't' && i + 4 <= s->n && memcmp(s->b + i, "true", 4) == 0) { v->kind = V_OTHER; *p = i + 4; return OK; }
    if (c == 'f' && i + 5 <= s->n && memcmp(s->b + i, "false", 5) == 0) { v->kind = V_OTHER; *p = i + 5; return OK; }
    if (c == '[' || c == '{') {
        int r = skip_value(s, p, depth);
        v->kind = V_OTHER;
        v->len = *p - i;
        return r;
    }
    return BAD;
}

/* An object's key and its colon at s->b[*p]: the key into *k, *p past the colon and the space after it. */
static int scan_key(const Src *s, int64_t *p, Val *k) {
    int64_t i = *p;
    NEED(i);
    if (s->b[i] != '"') return BAD;
    TRY(scan_string(s, &i, k));
    i = skip_ws(s, i);
    NEED(i);
    if (s->b[i] != ':') return BAD;
    *p = skip_ws(s, i + 1);
    return OK;
}

/* An array or object at s->b[*p], validated and skipped. */
static int skip_value(const Src *s, int64_t *p, int depth) {
    if (depth >= MAX_DEPTH) return BAD;
    int64_t i = *p;
    uint8_t open = s->b[i], close = open == '[' ? ']' : '}';
    i = skip_ws(s, i + 1);
    if (i < s->n && s->b[i] == close) { *p = i + 1; return OK; }
    NEED(i);
    Val v;
    while (1) {
        if (open == '{') TRY(scan_key(s, &i, &v));
        TRY(scan_value(s, &i, &v, depth + 1, 0));
        i = skip_ws(s, i);
        NEED(i);
        if (s->b[i] == close) { *p = i + 1; return OK; }
        if (s->b[i] != ',') return BAD;
        i = skip_ws(s, i + 1);
    }
}

/* ``args`` keys of the typed decode's struct (parse.py ``_STRUCT_ARGS``); the first 7 are its integer ones. */
static const char *ARG_KEYS[] = {"correlation", "External id", "external id", "device", "stream", "bytes", "graph id",
                                 "name", "labels", "Device Id", "Device Type", "Total Allocated", "Total Reserved",
                                 "Bytes", "Addr", "Input Dims", "Input type", "Concrete Inputs", "In msg nelems",
                                 "dtype", "Group size", "Process Group Name", "Process Group ID",
                                 "Process Group Desc", "Seq", "Process Group Ranks", "rank", "grid", "block"};
#define N_ARG_KEYS 29
#define N_INT_ARGS 7
/* A kernel's launch configuration (parse.py ``_LAUNCH_ARGS``): ``grid`` and ``block``, each [x, y, z]. */
#define K_GRID 27
#define K_BLOCK 28
#define DIMS_TOP 2147483647

/* A table of keys to match, bucketed by length: a key costs a length lookup and a memcmp per key of that length
 * (one or two), not one per key of the table (every ``args`` key of every event is matched). */
#define MAX_KEY_LEN 31
typedef struct {
    const char **keys;
    int count;
    size_t lens[N_ARG_KEYS];
    int8_t first[MAX_KEY_LEN + 1];  /* the first key of each length, -1 none */
    int8_t next[N_ARG_KEYS];        /* the next key of the same length, -1 none */
} Keys;

static Keys ARG_TABLE, EVENT_TABLE;

static void keys_init(Keys *t, const char **keys, int count) {
    t->keys = keys;
    t->count = count;
    memset(t->first, -1, sizeof t->first);
    for (int j = count - 1; j >= 0; j--) {
        size_t n = strlen(keys[j]);
        t->lens[j] = n;
        t->next[j] = n <= MAX_KEY_LEN ? t->first[n] : -1;
        if (n <= MAX_KEY_LEN) t->first[n] = (int8_t)j;
    }
}

/* a[0:n] == b[0:n] for 1 <= n <= MAX_KEY_LEN, inline: whole words, the last one overlapping (a key is a few bytes:
 * a call of memcmp cost more than the compare) */
static inline int same_key(const uint8_t *a, const char *b, int64_t n) {
    uint64_t x, y;
    if (n >= 8) {
        int64_t i = 0;
        for (; i + 8 < n; i += 8) {
            memcpy(&x, a + i, 8);
            memcpy(&y, b + i, 8);
            if (x != y) return 0;
        }
        memcpy(&x, a + n - 8, 8);
        memcpy(&y, b + n - 8, 8);
        return x == y;
    }
    uint32_t u, v;
    if (n >= 4) {
        memcpy(&u, a, 4);
        memcpy(&v, b, 4);
        if (u != v) return 0;
        memcpy(&u, a + n - 4, 4);
        memcpy(&v, b + n - 4, 4);
        return u == v;
    }
    for (int64_t i = 0; i < n; i++)
        if (a[i] != (uint8_t)b[i]) return 0;
    return 1;
}

/* The index of the key k[0:n] in the table, -1 where it is none of them. */
static inline int match_key(const uint8_t *k, int64_t n, const Keys *t) {
    if (n <= 0 || n > MAX_KEY_LEN) return -1;
    for (int j = t->first[n]; j >= 0; j = t->next[j])
        if (same_key(k, t->keys[j], n)) return j;
    return -1;
}

/* ``grid`` or ``block``'s value at s->b[*p] -> *out: the product of its 1 to 3 integers, each in [0, DIMS_TOP],
 * saturated at DIMS_TOP (parse.py ``launch_count``); -1 for any other value (not a list, another length, another
 * element), which is still scanned as a value.  The integers themselves into dims[0:*n_dims] (*n_dims 0 where *out
 * is -1), for launch_groups. */
static int scan_dims(const Src *s, int64_t *p, int32_t *out, int64_t dims[3], int *n_dims) {
    int64_t i = *p;
    NEED(i);
    *out = -1;
    *n_dims = 0;
    Val v;
    if (s->b[i] != '[') return scan_value(s, p, &v, 2, 0);
    int64_t prod = 1;
    int count = 0, ok = 1;
    i = skip_ws(s, i + 1);
    NEED(i);
    if (s->b[i] == ']') { *p = i + 1; return OK; }  /* [] holds no count */
    while (1) {
        TRY(scan_value(s, &i, &v, 3, 1));
        if (v.kind != V_INT || v.i < 0 || v.i > DIMS_TOP || ++count > 3) ok = 0;
        else {
            prod = prod * v.i > DIMS_TOP ? DIMS_TOP : prod * v.i;
            dims[count - 1] = v.i;
        }
        i = skip_ws(s, i);
        NEED(i);
        if (s->b[i] == ']') break;
        if (s->b[i] != ',') return BAD;
        i = skip_ws(s, i + 1);
    }
    *p = i + 1;
    if (ok) {
        *out = (int32_t)prod;
        *n_dims = count;
    }
    return OK;
}

/* The workgroups of a launch were its grid in work-items (parse.py ``launch_groups``): the product over the
 * dimensions of ceil(grid_d / block_d), saturated at DIMS_TOP; -1 where either is not recorded, their lengths differ
 * or a block dimension is 0. */
static int32_t launch_groups(const int64_t grid[3], int n_grid, const int64_t block[3], int n_block) {
    if (n_grid == 0 || n_grid != n_block) return -1;
    int64_t prod = 1;
    for (int d = 0; d < n_grid; d++) {
        if (block[d] == 0) return -1;
        int64_t g = (grid[d] + block[d] - 1) / block[d];
        prod = prod * g > DIMS_TOP ? DIMS_TOP : prod * g;
    }
    return (int32_t)prod;
}

/* ``args`` (an object): the integer arguments into ints[] (-1 where absent, null, a string), the launch
 * configuration into launch[] (blocks, threads per block, launch_groups; -1 where absent). */
static int scan_args(const Src *s, int64_t *p, int64_t ints[N_INT_ARGS], int32_t launch[3]) {
    for (int j = 0; j < N_INT_ARGS; j++) ints[j] = -1;
    launch[0] = launch[1] = launch[2] = -1;
    int64_t dims[2][3];
    int n_dims[2] = {0, 0};
    int64_t i = skip_ws(s, *p + 1);
    uint32_t seen = 0;
    NEED(i);
    if (s->b[i] == '}') { *p = i + 1; return OK; }
    Val k, v;
    while (1) {
        TRY(scan_key(s, &i, &k));
        if (k.escaped) return BAD;  /* the typed decode matches the unescaped key */
        int j = match_key(s->b + k.off, k.len, &ARG_TABLE);
        if (j >= 0) {
            if (seen & (1u << j)) return BAD;
            seen |= 1u << j;
        }
        if (j == K_GRID || j == K_BLOCK) {
            TRY(scan_dims(s, &i, &launch[j - K_GRID], dims[j - K_GRID], &n_dims[j - K_GRID]));
            goto next;
        }
        TRY(scan_value(s, &i, &v, 2, j >= 0 && j < N_INT_ARGS));
        if (j >= 0 && j < N_INT_ARGS) {
            if (v.kind == V_INT) ints[j] = v.i;
            else if (v.kind != V_STR && v.kind != V_NULL) return BAD;  /* int | str | None */
        }
    next:
        i = skip_ws(s, i);
        NEED(i);
        if (s->b[i] == '}') {
            launch[2] = launch_groups(dims[0], n_dims[0], dims[1], n_dims[1]);
            *p = i + 1;
            return OK;
        }
        if (s->b[i] != ',') return BAD;
        i = skip_ws(s, i + 1);
    }
}

static const char *EVENT_KEYS[] = {"ph", "cat", "name", "pid", "tid", "ts", "dur", "args"};
enum { K_PH, K_CAT, K_NAME, K_PID, K_TID, K_TS, K_DUR, K_ARGS };

typedef struct {
    Src s;
    int64_t n_events, n_x, bad_dur;
    /* ph: distinct spans in first-appearance order (len -1: absent or null) and their counts */
    int n_ph;
    int64_t ph_off[MAX_PH], ph_len[MAX_PH], ph_count[MAX_PH];
    Vec others;  /* int64 (start, end) of M and i events */
    Vec ts, dur, name, cat, pid, tid, pid_s, tid_s, ints, args_span;
    Vec launch;  /* int32 (blocks, threads per block, launch_groups) per row, -1 where not recorded */
    Intern names, cats, pids, tids;
} Scan;

static int scan_init(Scan *c) {
    vec_init(&c->others, 2 * sizeof(int64_t));
    vec_init(&c->ts, sizeof(double));
    vec_init(&c->dur, sizeof(double));
    vec_init(&c->name, sizeof(int32_t));
    vec_init(&c->cat, sizeof(int32_t));
    vec_init(&c->pid, sizeof(int64_t));
    vec_init(&c->tid, sizeof(int64_t));
    vec_init(&c->pid_s, sizeof(int32_t));
    vec_init(&c->tid_s, sizeof(int32_t));
    vec_init(&c->ints, 6 * sizeof(int64_t));
    vec_init(&c->args_span, 2 * sizeof(int64_t));
    vec_init(&c->launch, 3 * sizeof(int32_t));
    c->n_events = c->n_x = c->bad_dur = 0;
    c->n_ph = 0;
    int r = intern_init(&c->names) | intern_init(&c->cats) | intern_init(&c->pids) | intern_init(&c->tids);
    return r ? -1 : 0;
}

static void scan_free(Scan *c) {
    Vec *vs[] = {&c->others, &c->ts, &c->dur, &c->name, &c->cat, &c->pid, &c->tid, &c->pid_s, &c->tid_s, &c->ints,
                 &c->args_span, &c->launch};
    for (size_t j = 0; j < sizeof vs / sizeof *vs; j++) vec_free(vs[j]);
    intern_free(&c->names);
    intern_free(&c->cats);
    intern_free(&c->pids);
    intern_free(&c->tids);
}

static int count_ph(Scan *c, const Val *ph) {
    int64_t off = ph->kind == V_STR ? ph->off : 0, len = ph->kind == V_STR ? ph->len : -1;
    for (int j = 0; j < c->n_ph; j++) {
        if (c->ph_len[j] == len && (len <= 0 || memcmp(c->s.b + c->ph_off[j], c->s.b + off, (size_t)len) == 0)) {
            c->ph_count[j]++;
            return OK;
        }
    }
    if (c->n_ph == MAX_PH) return BAD;
    c->ph_off[c->n_ph] = off;
    c->ph_len[c->n_ph] = len;
    c->ph_count[c->n_ph++] = 1;
    return OK;
}

static inline int is_ph(const Scan *c, const Val *ph, char which) {
    return ph->kind == V_STR && ph->len == 1 && c->s.b[ph->off] == (uint8_t)which;
}

/* A pid or tid of an X row: the integer (-1 null or absent), or a string's local id in *str (else -1). */
static int row_id(Intern *t, const Src *s, const Val *v, int64_t *value, int32_t *str) {
    *str = -1;
    *value = -1;
    if (v->kind == V_INT) { *value = v->i; return OK; }
    if (v->kind == V_STR) {
        int64_t id = intern(t, s->b, v->off, v->len);
        if (id < 0) return id == -2 ? BAD : NOMEM;
        *str = (int32_t)id;
    }
    return OK;
}

static int add_row(Scan *c, const Val f[8], const int64_t ints[N_INT_ARGS], const int32_t launch[3],
                   int64_t args_off, int64_t args_len) {
    int64_t name_id = intern(&c->names, c->s.b, f[K_NAME].kind == V_STR ? f[K_NAME].off : 0,
                             f[K_NAME].kind == V_STR ? f[K_NAME].len : 0);
    int64_t cat_id = intern(&c->cats, c->s.b, f[K_CAT].kind == V_STR ? f[K_CAT].off : 0,
                            f[K_CAT].kind == V_STR ? f[K_CAT].len : 0);
    if (name_id < 0 || cat_id < 0) return name_id == -2 || cat_id == -2 ? BAD : NOMEM;
    int64_t pid, tid;
    int32_t pid_s, tid_s;
    TRY(row_id(&c->pids, &c->s, &f[K_PID], &pid, &pid_s));
    TRY(row_id(&c->tids, &c->s, &f[K_TID], &tid, &tid_s));
    double dur = 0.0;
    if (f[K_DUR].kind == V_INT || f[K_DUR].kind == V_FLOAT) dur = f[K_DUR].f;
    else c->bad_dur++;
    /* External id wins where it is >= 0, else external id (parse.py's np.where over _ARG_KEYS' order) */
    int64_t six[6] = {ints[0], ints[1] >= 0 ? ints[1] : ints[2], ints[3], ints[4], ints[5], ints[6]};
    int64_t span[2] = {args_off, args_len};
    if (PUSH(&c->ts, double, f[K_TS].f) || PUSH(&c->dur, double, dur) || PUSH(&c->name, int32_t, (int32_t)name_id)
        || PUSH(&c->cat, int32_t, (int32_t)cat_id) || PUSH(&c->pid, int64_t, pid) || PUSH(&c->tid, int64_t, tid)
        || PUSH(&c->pid_s, int32_t, pid_s) || PUSH(&c->tid_s, int32_t, tid_s))
        return NOMEM;
    if (c->ints.len == c->ints.cap && vec_grow(&c->ints)) return NOMEM;
    memcpy(c->ints.data + c->ints.len++ * c->ints.item, six, sizeof six);
    if (c->args_span.len == c->args_span.cap && vec_grow(&c->args_span)) return NOMEM;
    memcpy(c->args_span.data + c->args_span.len++ * c->args_span.item, span, sizeof span);
    if (c->launch.len == c->launch.cap && vec_grow(&c->launch)) return NOMEM;
    memcpy(c->launch.data + c->launch.len++ * c->launch.item, launch, 3 * sizeof(int32_t));
    return OK;
}

/* One event (an object at *p) of the chunk. */
static int scan_event(Scan *c, int64_t *p) {
    const Src *s = &c->s;
    int64_t start = *p, i = skip_ws(s, *p + 1);
    Val f[8];
    int64_t ints[N_INT_ARGS];
    int32_t launch[3] = {-1, -1, -1};
    for (int j = 0; j < N_INT_ARGS; j++) ints[j] = -1;
    int64_t args_off = -1, args_len = 0;
    for (int j = 0; j < 8; j++) f[j].kind = V_ABSENT;
    NEED(i);
    if (s->b[i] == '}') {
        i++;
    } else {
        Val k, v;
        while (1) {
            TRY(scan_key(s, &i, &k));
            NEED(i);
            if (k.escaped) return BAD;
            int j = match_key(s->b + k.off, k.len, &EVENT_TABLE);
            if (j >= 0 && f[j].kind != V_ABSENT) return BAD;
            if (j == K_ARGS && s->b[i] == '{') {
                args_off = i;
                TRY(scan_args(s, &i, ints, launch));
                args_len = i - args_off;
                f[j].kind = V_OTHER;
            } else {
                /* a field's value straight into its slot: scanned into a temporary and copied, the copy's loads
                 * waited on the scan's stores (perf: a fifth of the event loop) */
                Val *dst = j >= 0 ? &f[j] : &v;
                TRY(scan_value(s, &i, dst, 1, j >= 0));
                if (j >= 0) {
                    int t = dst->kind;
                    switch (j) {
                        case K_PH: case K_CAT: case K_NAME:  /* str | None, kept: no escapes */
                            if (!(t == V_NULL || (t == V_STR && !dst->escaped))) return BAD;
                            break;
                        case K_PID: case K_TID:  /* int | str | None */
                            if (!(t == V_NULL || t == V_INT || (t == V_STR && !dst->escaped))) return BAD;
                            break;
                        case K_TS: case K_DUR:  /* float | None */
                            if (!(t == V_NULL || t == V_INT || t == V_FLOAT)) return BAD;
                            break;
                        case K_ARGS:  /* Args | None */
                            if (t != V_NULL) return BAD;
                            break;
                    }
                }
            }
            i = skip_ws(s, i);
            NEED(i);
            if (s->b[i] == '}') { i++; break; }
            if (s->b[i] != ',') return BAD;
            i = skip_ws(s, i + 1);
        }
    }
    *p = i;
    c->n_events++;
    if (count_ph(c, &f[K_PH])) return BAD;
    if (is_ph(c, &f[K_PH], 'M') || is_ph(c, &f[K_PH], 'i')) {
        int64_t pair[2] = {start, i};
        if (c->others.len == c->others.cap && vec_grow(&c->others)) return NOMEM;
        memcpy(c->others.data + c->others.len++ * c->others.item, pair, sizeof pair);
        return OK;
    }
    if (!is_ph(c, &f[K_PH], 'X')) return OK;
    c->n_x++;
    if (f[K_TS].kind != V_INT && f[K_TS].kind != V_FLOAT) return OK;  /* no time: counted as malformed */
    return add_row(c, f, ints, launch, args_off, args_len);
}

/* The chunk: whole events separated by commas (what parse.py wraps in [ ] for the typed decode). */
static int scan_chunk(Scan *c) {
    const Src *s = &c->s;
    int64_t i = skip_ws(s, 0);
    if (i >= s->n) return BAD;
    while (1) {
        if (s->b[i] != '{') return BAD;
        int r = scan_event(c, &i);
        if (r) return r;
        i = skip_ws(s, i);
        if (i >= s->n) return OK;
        if (s->b[i] != ',') return BAD;
        i = skip_ws(s, i + 1);
        if (i >= s->n) return BAD;
    }
}

/* ---- Python side ---- */

static PyObject *vec_bytes(const Vec *v) {
    return PyBytes_FromStringAndSize(v->data ? v->data : "", (Py_ssize_t)(v->len * v->item));
}

static PyObject *span_strings(const Intern *t, const uint8_t *buf) {
    PyObject *out = PyList_New((Py_ssize_t)t->spans.len);
    if (!out) return NULL;
    const int64_t *sp = (const int64_t *)t->spans.data;
    for (size_t j = 0; j < t->spans.len; j++) {
        PyObject *u = PyUnicode_DecodeUTF8((const char *)buf + sp[2 * j], (Py_ssize_t)sp[2 * j + 1], "strict");
        if (!u) { Py_DECREF(out); return NULL; }
        PyList_SET_ITEM(out, (Py_ssize_t)j, u);
    }
    return out;
}

static PyObject *ph_list(const Scan *c) {
    PyObject *out = PyList_New(c->n_ph);
    if (!out) return NULL;
    for (int j = 0; j < c->n_ph; j++) {
        PyObject *u;
        if (c->ph_len[j] < 0) { u = Py_None; Py_INCREF(u); }
        else u = PyUnicode_DecodeUTF8((const char *)c->s.b + c->ph_off[j], (Py_ssize_t)c->ph_len[j], "strict");
        PyObject *n = u ? PyLong_FromLongLong(c->ph_count[j]) : NULL;
        PyObject *pair = n ? PyTuple_Pack(2, u, n) : NULL;
        Py_XDECREF(u);
        Py_XDECREF(n);
        if (!pair) { Py_DECREF(out); return NULL; }
        PyList_SET_ITEM(out, j, pair);
    }
    return out;
}

/* scan(chunk) -> None (not read: the caller decodes it), False (it ends inside an event, every byte before it valid
 * JSON: no decoder reads it, its cut is no event boundary), or a tuple:
 *   (n_events, n_x, bad_dur, [(ph or None, count)], others, ts, dur, name, cat, pid, tid, pid_s, tid_s, ints,
 *    args_span, names, cats, pid_strings, tid_strings, launch)
 * n_x counts every X event, rows only those with a time; the columns are bytes (float64 ts/dur, int32 local name
 * and cat ids, int64 pid/tid, int32 local string pid/tid ids or -1, int64 x6 per row: correlation, external_id,
 * device, stream, bytes, graph_id; int64 pairs (offset, length) of args, offset -1 where absent); others: int64
 * pairs (start, end) of the M and i events; the string lists are the distinct values by local id; launch: int32 triples
 * (blocks, threads per block) per row, -1 where not recorded. */
static PyObject *scan(PyObject *self, PyObject *args) {
    PyObject *obj;
    if (!PyArg_ParseTuple(args, "O", &obj)) return NULL;
    Py_buffer view;
    if (PyObject_GetBuffer(obj, &view, PyBUF_C_CONTIGUOUS) < 0) return NULL;
    Scan c;
    c.s.b = (const uint8_t *)view.buf;
    c.s.n = (int64_t)view.len;
    int r;
    if (scan_init(&c)) {
        r = NOMEM;
    } else {
        Py_BEGIN_ALLOW_THREADS
        r = scan_chunk(&c);
        Py_END_ALLOW_THREADS
    }
    PyObject *out = NULL;
    if (r == NOMEM) {
        PyErr_NoMemory();
    } else if (r == BAD) {
        out = Py_None;
        Py_INCREF(out);
    } else if (r == TRUNC) {
        out = Py_False;
        Py_INCREF(out);
    } else {
        out = Py_BuildValue("(LLLNNNNNNNNNNNNNNNNN)", (long long)c.n_events, (long long)c.n_x, (long long)c.bad_dur,
                            ph_list(&c), vec_bytes(&c.others), vec_bytes(&c.ts), vec_bytes(&c.dur),
                            vec_bytes(&c.name), vec_bytes(&c.cat), vec_bytes(&c.pid), vec_bytes(&c.tid),
                            vec_bytes(&c.pid_s), vec_bytes(&c.tid_s), vec_bytes(&c.ints), vec_bytes(&c.args_span),
                            span_strings(&c.names, c.s.b), span_strings(&c.cats, c.s.b),
                            span_strings(&c.pids, c.s.b), span_strings(&c.tids, c.s.b), vec_bytes(&c.launch));
    }
    scan_free(&c);
    PyBuffer_Release(&view);
    return out;
}

/* ---- the shape arguments of the rows that keep them ---- */

/* The first of the op-shape keys in ARG_KEYS (parse.py ``_OP_KEYS``, in its order). */
#define FIRST_OP_KEY 15
#define N_OP_KEYS (K_GRID - FIRST_OP_KEY)  /* the keys before the launch ones */

/* One ``args`` object at buf[off:off+len] -> out: for each op-shape key in order, a 4-byte little-endian length (0:
 * absent) and the value's JSON text as the typed decode's ``msgspec.Raw`` holds it.  Equal keys <=> equal raw values,
 * so the caller works out one op's FLOPs per distinct (name, key).  BAD on anything but the scanner's JSON subset. */
static int op_key(const uint8_t *buf, int64_t off, int64_t len, Vec *out) {
    const Src src = {buf, off + len}, *s = &src;  /* every read stops at the span's end */
    int64_t at[N_OP_KEYS], n[N_OP_KEYS];
    for (int j = 0; j < N_OP_KEYS; j++) at[j] = n[j] = 0;
    if (buf[off] != '{') return BAD;
    int64_t i = skip_ws(s, off + 1);
    NEED(i);
    Val k, v;
    if (buf[i] != '}') {
        while (1) {
            TRY(scan_key(s, &i, &k));
            if (k.escaped) return BAD;
            int j = match_key(buf + k.off, k.len, &ARG_TABLE) - FIRST_OP_KEY;
            int64_t start = i;
            TRY(scan_value(s, &i, &v, 2, 0));
            if (j >= 0 && j < N_OP_KEYS) {
                if (n[j]) return BAD;  /* a key twice: the scanner refuses it, so no span holds one */
                at[j] = start;
                n[j] = i - start;
            }
            i = skip_ws(s, i);
            NEED(i);
            if (buf[i] == '}') break;
            if (buf[i] != ',') return BAD;
            i = skip_ws(s, i + 1);
        }
    }
    for (int j = 0; j < N_OP_KEYS; j++) {
        if (n[j] > INT32_MAX) return BAD;
        uint8_t head[4] = {(uint8_t)n[j], (uint8_t)(n[j] >> 8), (uint8_t)(n[j] >> 16), (uint8_t)(n[j] >> 24)};
        while (out->cap - out->len < 4 + (size_t)n[j])
            if (vec_grow(out)) return NOMEM;
        memcpy(out->data + out->len, head, 4);
        memcpy(out->data + out->len + 4, buf + at[j], (size_t)n[j]);
        out->len += 4 + (size_t)n[j];
    }
    return OK;
}

/* op_keys(chunk, spans) -> [bytes] per span (``spans``: int64 pairs (offset, length) of ``args`` objects of the chunk,
 * as ``scan`` gives them; offset -1: no ``args``, every key absent), or None where a span is out of the chunk or holds
 * anything ``scan`` would not have accepted (the caller then decodes those rows one by one). */
static PyObject *op_keys(PyObject *self, PyObject *args) {
    PyObject *obj, *sobj;
    if (!PyArg_ParseTuple(args, "OO", &obj, &sobj)) return NULL;
    Py_buffer view, sv;
    if (PyObject_GetBuffer(obj, &view, PyBUF_C_CONTIGUOUS) < 0) return NULL;
    if (PyObject_GetBuffer(sobj, &sv, PyBUF_C_CONTIGUOUS) < 0) { PyBuffer_Release(&view); return NULL; }
    Py_ssize_t rows = sv.len / (Py_ssize_t)(2 * sizeof(int64_t));
    PyObject *out = sv.len % (Py_ssize_t)(2 * sizeof(int64_t)) ? NULL : PyList_New(rows);
    if (!out && !PyErr_Occurred()) PyErr_SetString(PyExc_ValueError, "spans: int64 pairs");
    Vec key;
    vec_init(&key, 1);
    const uint8_t *buf = (const uint8_t *)view.buf;
    for (Py_ssize_t r = 0; out && r < rows; r++) {
        int64_t span[2];
        memcpy(span, (const char *)sv.buf + r * (Py_ssize_t)sizeof span, sizeof span);
        key.len = 0;
        int rc = OK;
        if (span[0] != -1) {
            if (span[0] < 0 || span[1] < 2 || span[0] > (int64_t)view.len - span[1]) rc = BAD;
            else rc = op_key(buf, span[0], span[1], &key);
        } else {
            while (!rc && key.cap < 4 * N_OP_KEYS) rc = vec_grow(&key) ? NOMEM : OK;
            if (!rc) { memset(key.data, 0, 4 * N_OP_KEYS); key.len = 4 * N_OP_KEYS; }
        }
        PyObject *b = rc ? NULL : PyBytes_FromStringAndSize(key.data, (Py_ssize_t)key.len);
        if (rc == NOMEM) PyErr_NoMemory();
        if (!b) {
            Py_CLEAR(out);
            if (rc && rc != NOMEM) { out = Py_None; Py_INCREF(out); }  /* BAD or TRUNC: not the scanner's subset */
            break;
        }
        PyList_SET_ITEM(out, r, b);
    }
    vec_free(&key);
    PyBuffer_Release(&sv);
    PyBuffer_Release(&view);
    return out;
}

/* count_byte(buffer, start, length, byte) -> how many of buffer[start:start + length] are ``byte`` (the window
 * clipped to the buffer): the reader's chunk sizing counts each 4 MB window's "}" (parse.py ``_chunk_size``), which
 * numpy did by a comparison into a 4 MB temporary and a second pass over it.  Blocks of 128 bytes with byte-wide
 * counters, so the compiler keeps the comparisons in vector registers. */
static PyObject *count_byte(PyObject *self, PyObject *args) {
    PyObject *obj;
    Py_ssize_t start, length;
    int byte;
    if (!PyArg_ParseTuple(args, "Onni", &obj, &start, &length, &byte)) return NULL;
    if (byte < 0 || byte > 255) {
        PyErr_SetString(PyExc_ValueError, "byte: 0 to 255");
        return NULL;
    }
    Py_buffer view;
    if (PyObject_GetBuffer(obj, &view, PyBUF_SIMPLE) < 0) return NULL;
    if (start < 0) start = 0;
    if (start > view.len) start = view.len;
    if (length < 0) length = 0;
    if (length > view.len - start) length = view.len - start;
    const uint8_t *p = (const uint8_t *)view.buf + start;
    const uint8_t b = (uint8_t)byte;
    uint64_t n = 0;
    Py_BEGIN_ALLOW_THREADS
    Py_ssize_t i = 0;
    for (; i + 128 <= length; i += 128) {
        uint8_t c = 0;  /* at most 128 per block: no overflow */
        for (int j = 0; j < 128; j++) c += p[i + j] == b;
        n += c;
    }
    for (; i < length; i++) n += p[i] == b;
    Py_END_ALLOW_THREADS
    PyBuffer_Release(&view);
    return PyLong_FromUnsignedLongLong((unsigned long long)n);
}

static PyMethodDef methods[] = {
    {"scan", scan, METH_VARARGS, "Columns of one chunk of Kineto events, or None (the caller decodes it)."},
    {"op_keys", op_keys, METH_VARARGS, "Per args span: its op-shape values as one bytes key, or None."},
    {"count_byte", count_byte, METH_VARARGS, "How many bytes of buffer[start:start + length] equal byte."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT, "_cscan", "Compiled Kineto JSON scanner.", -1, methods, NULL, NULL, NULL, NULL,
};

PyMODINIT_FUNC PyInit__cscan(void) {
    keys_init(&ARG_TABLE, ARG_KEYS, N_ARG_KEYS);
    keys_init(&EVENT_TABLE, EVENT_KEYS, 8);
    for (int c = 0x20; c < 0x80; c++) PLAIN[c] = c != '"' && c != '\\';
    return PyModule_Create(&module);
}
