/* The compiled XPlane wire decoder: a line's events straight from the plane's bytes into columns.
 *
 * The pure-Python path (wire.py + reader.py) stays the reference; this module mirrors it and never decides
 * anything on its own about damaged bytes.  Every function here returns None for any input outside a
 * conservative, well-formed subset of the protobuf wire format (groups, field number 0, over-long varints,
 * a length past its message, ...): the caller then decodes that line or batch with the Python path, which
 * gives its own result or its own error.  So a hostile file reads exactly as it does without this module.
 *
 * Every read is bounds-checked against the end of the message being read (itself checked against the
 * buffer): no read ever leaves the caller's buffer.  The loops run without the GIL and build no Python
 * object per event; output columns are malloc'd, then copied once into bytearrays (numpy views them).
 *
 * Written against the CPython API and the buffer protocol only (no numpy headers): building needs only a C
 * compiler and Python's headers, and the module does not depend on numpy's ABI.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* ---- growable arrays (malloc'd; no Python objects, usable without the GIL) ---- */

typedef struct {
    char *data;
    size_t len;   /* items */
    size_t cap;   /* items */
    size_t item;  /* bytes per item */
} Vec;

static void vec_init(Vec *v, size_t item) { v->data = NULL; v->len = v->cap = 0; v->item = item; }
static void vec_free(Vec *v) { free(v->data); v->data = NULL; v->len = v->cap = 0; }

static int vec_reserve(Vec *v, size_t n) {
    if (n <= v->cap) return 0;
    size_t cap = v->cap ? v->cap : 1024;
    while (cap < n) {
        if (cap > SIZE_MAX / 2 / v->item) return -1;
        cap *= 2;
    }
    char *d = realloc(v->data, cap * v->item);
    if (!d) return -1;
    v->data = d;
    v->cap = cap;
    return 0;
}

#define VEC_AT(v, T, i) (((T *)(v).data)[i])

/* Append ``x`` (of type T, the vector's item type); evaluates to nonzero when memory ran out. */
#define VEC_PUSH(v, T, x) \
    (((v)->len == (v)->cap && vec_reserve((v), (v)->len + 1)) ? -1 : (((T *)(v)->data)[(v)->len++] = (x), 0))

/* ---- wire reads: each checked against ``end`` ---- */

enum { WT_VARINT = 0, WT_FIXED64 = 1, WT_LEN = 2, WT_FIXED32 = 5 };
enum { OK = 0, BAD = 1, NOMEM = 2 };

/* A varint of at most 10 bytes wholly before ``end``; the 10th byte may hold only the top bit of 64. */
static inline int read_varint(const uint8_t *buf, int64_t *pos, int64_t end, uint64_t *out) {
    uint64_t v = 0;
    int64_t p = *pos;
    for (int k = 0; k < 10; k++) {
        if (p >= end) return BAD;
        uint8_t b = buf[p++];
        if (k == 9 && b > 1) return BAD;
        v |= (uint64_t)(b & 0x7F) << (7 * k);
        if (b < 0x80) {
            *pos = p;
            *out = v;
            return OK;
        }
    }
    return BAD;
}

/* A field's tag: at most 5 bytes, field number 1 .. 2**29-1, wire type 0, 1, 2 or 5 (no groups). */
static inline int read_tag(const uint8_t *buf, int64_t *pos, int64_t end, uint32_t *number, int *wt, int *tag_len) {
    int64_t p0 = *pos;
    uint64_t tag;
    if (read_varint(buf, pos, end, &tag) || *pos - p0 > 5 || tag > 0xFFFFFFFFu) return BAD;
    uint64_t num = tag >> 3;
    int w = (int)(tag & 7);
    if (num == 0 || num > 0x1FFFFFFF) return BAD;
    if (w != WT_VARINT && w != WT_FIXED64 && w != WT_LEN && w != WT_FIXED32) return BAD;
    *number = (uint32_t)num;
    *wt = w;
    *tag_len = (int)(*pos - p0);
    return OK;
}

/* The payload of a field of wire type ``wt`` at ``*pos``: its value (varint, fixed: the raw bits; length-
 * delimited: the length) and, for length-delimited fields, where the payload starts.  Moves past the field. */
static inline int read_payload(const uint8_t *buf, int64_t *pos, int64_t end, int wt, uint64_t *value,
                               int64_t *start, int *len_size) {
    int64_t p0 = *pos;
    switch (wt) {
    case WT_VARINT:
        return read_varint(buf, pos, end, value);
    case WT_LEN:
        if (read_varint(buf, pos, end, value)) return BAD;
        *len_size = (int)(*pos - p0);
        /* upb takes lengths up to 2 GiB in at most 5 bytes: anything else goes to the Python path */
        if (*len_size > 5 || *value > (uint64_t)(end - *pos) || *value >= 0x7FFFFFFFu) return BAD;
        *start = *pos;
        *pos += (int64_t)*value;
        return OK;
    case WT_FIXED64:
    case WT_FIXED32: {
        int width = wt == WT_FIXED64 ? 8 : 4;
        if (end - *pos < width) return BAD;
        uint64_t v = 0;
        for (int k = 0; k < width; k++) v |= (uint64_t)buf[*pos + k] << (8 * k);
        *value = v;
        *pos += width;
        return OK;
    }
    }
    return BAD;
}

static inline int varint_size(uint64_t v) {
    int n = 1;
    while (v >= 0x80) { v >>= 7; n++; }
    return n;
}

/* ---- buffers from Python ---- */

static int get_bytes(PyObject *obj, Py_buffer *view, int writable) {
    int flags = PyBUF_C_CONTIGUOUS | (writable ? PyBUF_WRITABLE : 0);
    if (PyObject_GetBuffer(obj, view, flags) < 0) return -1;
    return 0;
}

static PyObject *to_bytearray(const Vec *v) {
    return PyByteArray_FromStringAndSize(v->data ? v->data : "", (Py_ssize_t)(v->len * v->item));
}

/* ==== split_repeated(buf, limit, start, end, number) ====
 *
 * Walk the message at buf[start:end] (limit: the plane's size, buf may hold padding after it) and split its
 * repeated length-delimited field ``number`` -- an XLine's events (4), an XPlane's lines (3) -- from the rest.
 * Returns (head, starts, lengths, in_place) or None:
 *   head: the message's other fields, serialized as they are (upb parses them: a line's id, names and
 *         timestamp, a plane's metadata -- validated as before, without upb copying the big repeated field);
 *   starts / lengths: int64 payload positions of every occurrence of ``number``, in order, empty ones included;
 *   in_place: whether the Python reader would find these occurrences in place (``wire.locate_repeated``): the
 *         first within the message's first 65 fields, every tag one byte and every length a minimal varint,
 *         and all of them one run with no other field between.  The Python reader batches a line's events
 *         differently in the two cases, and the batches decide string ids, so the caller must know.
 */

#define MAX_FIELDS_BEFORE_EVENTS 64

typedef struct {
    int64_t count, bytes, nonempty, from, last_end;
} Batcher;

/* split_line's batches (``reader._batches``): see split_line below. */
static int batcher_close(Batcher *b, Vec *spans) {
    if (b->nonempty > 0 && (VEC_PUSH(spans, int64_t, b->from) || VEC_PUSH(spans, int64_t, b->last_end) ||
                            VEC_PUSH(spans, int64_t, b->nonempty)))
        return NOMEM;
    b->count = b->bytes = b->nonempty = 0;
    return OK;
}

/* One more event (its field at [field_start, field_end), payload ``len`` bytes) of the batcher's sequence. */
static int batcher_add(Batcher *b, Vec *spans, int64_t chunk, int64_t max_bytes, int64_t field_start,
                       int64_t field_end, int64_t len) {
    if (b->count > 0 && (b->count >= chunk || b->bytes + len > max_bytes) && batcher_close(b, spans)) return NOMEM;
    if (b->count == 0) b->from = field_start;
    b->count++;
    b->bytes += len;
    if (len > 0) b->nonempty++;
    b->last_end = field_end;
    return OK;
}

/* One walk of a message for split_repeated and split_line: the same field loop and in_place verdict, and what
 * is kept of each occurrence of ``number``: its position (ev_start / ev_len) or, with ``spans``, only the
 * batches it falls in (all_spans: over every occurrence; kept_spans: over the non-empty ones). */
typedef struct {
    const uint8_t *buf;
    int64_t start, end;
    uint32_t number;   /* the repeated field split off */
    int spans;         /* batch the occurrences (split_line) instead of keeping their positions */
    int64_t chunk, max_bytes;  /* with spans: a batch's most events, and its most payload bytes past its first */
    Vec head_ranges; /* int64 pairs (from, to) of the non-event fields */
    Vec ev_start, ev_len;
    Vec all_spans, kept_spans;
    int in_place;
} LineWalk;

/* One occurrence of the split field (its field at [field_start, field_end), payload ``len`` bytes from
 * ``payload``) kept as the walk's mode says. */
static inline int keep_occurrence(LineWalk *w, Batcher *all, Batcher *kept, int64_t field_start,
                                  int64_t field_end, int64_t payload, int64_t len) {
    if (!w->spans)
        return (VEC_PUSH(&w->ev_start, int64_t, payload) || VEC_PUSH(&w->ev_len, int64_t, len)) ? NOMEM : OK;
    if (batcher_add(all, &w->all_spans, w->chunk, w->max_bytes, field_start, field_end, len)) return NOMEM;
    if (len > 0 && batcher_add(kept, &w->kept_spans, w->chunk, w->max_bytes, field_start, field_end, len))
        return NOMEM;
    return OK;
}

static int walk_line(LineWalk *w) {
    const uint8_t *buf = w->buf;
    int64_t pos = w->start, end = w->end;
    int64_t field_index = 0, run_end = -1; /* run_end: where the last event of the current run ended */
    int runs = 0, seen_first = 0;
    Batcher all = {0, 0, 0, 0, 0}, kept = {0, 0, 0, 0, 0};
    w->in_place = 1;
    while (pos < end) {
        int64_t field_start = pos;
        uint32_t number;
        int wt, tag_len, len_size = 0;
        uint64_t value;
        int64_t payload = 0;
        if (read_tag(buf, &pos, end, &number, &wt, &tag_len)) return BAD;
        if (read_payload(buf, &pos, end, wt, &value, &payload, &len_size)) return BAD;
        if (number == w->number && wt == WT_LEN) {
            if (keep_occurrence(w, &all, &kept, field_start, pos, payload, (int64_t)value)) return NOMEM;
            if (!seen_first) {
                seen_first = 1;
                if (field_index > MAX_FIELDS_BEFORE_EVENTS) w->in_place = 0;
            }
            if (tag_len != 1 || len_size != varint_size(value)) w->in_place = 0;
            if (field_start != run_end) runs++;
            run_end = pos;
        } else {
            if (VEC_PUSH(&w->head_ranges, int64_t, field_start) || VEC_PUSH(&w->head_ranges, int64_t, pos))
                return NOMEM;
        }
        field_index++;
    }
    if (runs > 1) w->in_place = 0;
    if (w->spans && (batcher_close(&all, &w->all_spans) || batcher_close(&kept, &w->kept_spans))) return NOMEM;
    return OK;
}

/* The bytes of ``bufobj`` with ``start <= end <= limit <= len`` checked: a line's range inside the file's buffer.
 * 0 with ``view`` held (the caller releases it), or -1 with ValueError set and nothing held. */
static int get_range_view(PyObject *bufobj, Py_buffer *view, Py_ssize_t limit, Py_ssize_t start, Py_ssize_t end) {
    if (get_bytes(bufobj, view, 0) < 0) return -1;
    if (limit < 0 || limit > view->len || start < 0 || end < start || end > limit) {
        PyBuffer_Release(view);
        PyErr_SetString(PyExc_ValueError, "line range outside the buffer");
        return -1;
    }
    return 0;
}

/* The head's bytes: the fields at the (from, to) pairs of ``ranges``, joined; NULL with an exception set. */
static PyObject *join_ranges(const uint8_t *buf, const Vec *ranges) {
    size_t head_len = 0;
    for (size_t i = 0; i < ranges->len; i += 2)
        head_len += (size_t)(VEC_AT(*ranges, int64_t, i + 1) - VEC_AT(*ranges, int64_t, i));
    PyObject *head = PyBytes_FromStringAndSize(NULL, (Py_ssize_t)head_len);
    if (!head) return NULL;
    char *out = PyBytes_AS_STRING(head);
    for (size_t i = 0; i < ranges->len; i += 2) {
        int64_t a = VEC_AT(*ranges, int64_t, i), b = VEC_AT(*ranges, int64_t, i + 1);
        memcpy(out, buf + a, (size_t)(b - a));
        out += b - a;
    }
    return head;
}

/* split_repeated's and split_line's common part: the range checked (ValueError), the walk run without the GIL,
 * its verdict turned into the result -- None where the bytes are outside the subset, ``result_of(w)`` where
 * they were walked -- and everything it held released. */
static PyObject *run_line_walk(LineWalk *w, PyObject *bufobj, Py_ssize_t limit, Py_ssize_t start, Py_ssize_t end,
                               PyObject *(*result_of)(const LineWalk *)) {
    Py_buffer view;
    if (get_range_view(bufobj, &view, limit, start, end) < 0) return NULL;
    w->buf = (const uint8_t *)view.buf;
    w->start = start;
    w->end = end;
    Vec *vecs[] = {&w->head_ranges, &w->ev_start, &w->ev_len, &w->all_spans, &w->kept_spans};
    size_t n_vecs = sizeof vecs / sizeof vecs[0];
    for (size_t i = 0; i < n_vecs; i++) vec_init(vecs[i], sizeof(int64_t));
    int rc;
    Py_BEGIN_ALLOW_THREADS
    rc = walk_line(w);
    Py_END_ALLOW_THREADS
    PyObject *result = NULL;
    if (rc == NOMEM) {
        PyErr_NoMemory();
    } else if (rc == BAD) {
        result = Py_None;
        Py_INCREF(result);
    } else {
        result = result_of(w);
    }
    for (size_t i = 0; i < n_vecs; i++) vec_free(vecs[i]);
    PyBuffer_Release(&view);
    return result;
}

/* (head, starts, lengths, in_place): split_repeated's result of a walk. */
static PyObject *positions_result(const LineWalk *w) {
    PyObject *head = join_ranges(w->buf, &w->head_ranges);
    if (!head) return NULL;
    PyObject *s = to_bytearray(&w->ev_start), *n = to_bytearray(&w->ev_len);
    if (s && n) return Py_BuildValue("(NNNO)", head, s, n, w->in_place ? Py_True : Py_False);
    Py_DECREF(head);
    Py_XDECREF(s);
    Py_XDECREF(n);
    return NULL;
}

static PyObject *split_repeated(PyObject *self, PyObject *args) {
    (void)self;
    PyObject *bufobj;
    Py_ssize_t limit, start, end;
    unsigned int number;
    if (!PyArg_ParseTuple(args, "OnnnI", &bufobj, &limit, &start, &end, &number)) return NULL;
    if (number == 0 || number > 15) {  /* one-byte tags only: the fields split are XLine.events and XPlane.lines */
        PyErr_SetString(PyExc_ValueError, "split_repeated: field number must be 1..15");
        return NULL;
    }
    LineWalk w = {0};
    w.number = number;
    return run_line_walk(&w, bufobj, limit, start, end, positions_result);
}

/* ==== split_line(buf, limit, start, end, event_chunk, batch_bytes) ====
 *
 * split_repeated(buf, limit, start, end, 4) for an XLine, with the reader's batching done in the same pass: no
 * position is kept per event.  Returns (head, spans) or None (where split_repeated returns None):
 *   head: as split_repeated's;
 *   spans: int64 triples (from, to, count), one per batch that holds a non-empty event, in order: the ``count``
 *     non-empty events (field 4, length-delimited, length > 0) within buf[from:to] are that batch's, and
 *     decode_span decodes them.
 * The batches are ``reader._batches``' over the events the Python reader batches: every event where it finds
 * them in place (split_repeated's in_place), the non-empty ones otherwise -- each batch at most ``event_chunk``
 * events and, past its first, ``batch_bytes`` payload bytes.  Both batchings are kept during the walk (a handful
 * of spans each) and the one in_place names is returned.
 *
 * Why: split_repeated's two int64 positions per event, copied into bytearrays and cut into batches by numpy, cost
 * ~25 ns and 32 bytes an event at the read's peak (the dense 100 MB capture: 0.10 s, and its 2.3 M-event host line
 * held ~70 MB of positions while it was decoded).
 */

#define LINE_EVENTS 4

/* (head, spans): split_line's result of a walk -- the batches in_place names. */
static PyObject *spans_result(const LineWalk *w) {
    PyObject *head = join_ranges(w->buf, &w->head_ranges);
    PyObject *spans = head ? to_bytearray(w->in_place ? &w->all_spans : &w->kept_spans) : NULL;
    if (head && spans) return Py_BuildValue("(NN)", head, spans);
    Py_XDECREF(head);
    Py_XDECREF(spans);
    return NULL;
}

static PyObject *split_line(PyObject *self, PyObject *args) {
    (void)self;
    PyObject *bufobj;
    Py_ssize_t limit, start, end, chunk, max_bytes;
    if (!PyArg_ParseTuple(args, "Onnnnn", &bufobj, &limit, &start, &end, &chunk, &max_bytes)) return NULL;
    if (chunk < 1 || max_bytes < 0) {
        PyErr_SetString(PyExc_ValueError, "split_line: a batch holds at least one event");
        return NULL;
    }
    LineWalk w = {0};
    w.number = LINE_EVENTS;
    w.spans = 1;
    w.chunk = chunk;
    w.max_bytes = max_bytes;
    return run_line_walk(&w, bufobj, limit, start, end, spans_result);
}

/* ==== decode_events(buf, limit, starts, lengths) ====
 *
 * Decode the XEvents at buf[starts[i]:starts[i]+lengths[i]] into the columns ``reader._decode_events`` builds
 * from ``wire.decode_messages``, in the same order.  Returns None on any malformed event or stat, else
 * (metadata_id, offset_ps, duration_ps, stat_owner, stat_metadata_id, value_stat, value_raw, value_start,
 * field_bounds) as bytearrays:
 *   metadata_id, offset_ps, duration_ps: int64 per event, the last occurrence of XEvent fields 1, 2, 3 as
 *     varints (0 when absent), as protobuf reads them;
 *   stat_owner (int32: the event), stat_metadata_id (int64: XStat field 1, last occurrence): one row per
 *     XStat (XEvent field 4) in the Python decoder's order -- by the stat's field position within its event
 *     first, then by event (``decode_messages`` decodes all messages' k-th fields in one round);
 *   value_*: one record per XStat value field written with its schema's wire type (2 fixed64, 3, 4, 7
 *     varint, 5, 6 length-delimited): the stat row (int32), the raw 64-bit value (for 5, 6: the length), ordered
 *     by field number, then by the field's position within its stat, then by stat row -- each field's records in
 *     the order of ``FieldGroups.select``'s, and one slice: ``field_bounds`` (int64, 7) says where the records of
 *     field 2 + f start (bounds[f]) and end (bounds[f + 1]);
 *   value_start: the payload start (int64) of the records of fields 5 and 6 only (the run from bounds[3]).
 * Why not a column per record for the field number and the start: the fields' slices say it, and the starts of
 * numbers were zeros -- 9 bytes a stat of memory written and faulted in for nothing.
 */

/* XStat's value fields: 2 (double) .. 7 (ref); 5 and 6 (str, bytes) are length-delimited */
#define FIRST_VALUE_FIELD 2
#define N_VALUE_FIELDS 6
#define FIRST_LEN_FIELD 5
#define LAST_LEN_FIELD 6

typedef struct {
    const uint8_t *buf;
    const int64_t *starts, *lengths;
    int64_t n, limit;
    int64_t *meta, *offset, *duration;            /* [n], the output bytearrays */
    Vec s_event, s_round, s_start, s_len;         /* stats as met, event by event */
    int32_t max_round;
    int64_t *order;                               /* [m]: the final row of each stat as met */
    int32_t *st_owner;                            /* [m], output */
    int64_t *st_mid;                              /* [m], output */
    Vec v_row, v_round, v_field, v_raw, v_start;  /* value records as met, stat row by stat row */
    int32_t max_vround;
    int32_t *o_row;                               /* [k] outputs, in the final order */
    uint64_t *o_raw;
    int64_t *o_start;                             /* only the records of the length-delimited fields */
    int64_t field_bounds[N_VALUE_FIELDS + 1];     /* value records of field FIRST_VALUE_FIELD + f: [f, f+1) */
    const int64_t *key_table;                     /* metadata id -> stat key (-1: pruned), or NULL: keep all */
    int64_t n_table;                              /* its size; its last slot answers every other id */
    size_t n_stats;                               /* the stats kept */
    int owns_spare;                               /* the scratch vectors are the module's spare ones */
} EventWalk;

static const int VALUE_WIRE_TYPE[8] = {-1, -1, WT_FIXED64, WT_VARINT, WT_VARINT, WT_LEN, WT_LEN, WT_VARINT};

/* Stable counting sort of ``count`` records by their round (0 .. max_round): the destination index of each. */
static int round_order(const int32_t *round, size_t count, int32_t max_round, int64_t **dest_out) {
    int64_t *first = calloc((size_t)max_round + 2, sizeof(int64_t));
    int64_t *dest = malloc((count ? count : 1) * sizeof(int64_t));
    if (!first || !dest) { free(first); free(dest); return NOMEM; }
    for (size_t i = 0; i < count; i++) first[round[i] + 1]++;
    for (int32_t r = 0; r <= max_round; r++) first[r + 1] += first[r];
    for (size_t i = 0; i < count; i++) dest[i] = first[round[i]]++;
    free(first);
    *dest_out = dest;
    return OK;
}

/* Room for the records of ``bytes`` bytes of messages (a field takes at least 2 bytes), capped at a first guess
 * of ``guess`` (the vectors grow past it if need be): reserving up front spares the copies of growing. */
static int reserve_records(Vec **vecs, size_t n_vecs, int64_t bytes, size_t guess) {
    size_t want = (size_t)(bytes / 2 + 1);
    if (want > guess) want = guess;
    for (size_t i = 0; i < n_vecs; i++)
        if (vec_reserve(vecs[i], want)) return NOMEM;
    return OK;
}

/* Pass 1: each event's fields 1-3 into the output columns; its stats (field 4) listed with their round. */
static int walk_event_fields(EventWalk *w) {
    const uint8_t *buf = w->buf;
    int64_t total = 0;
    for (int64_t i = 0; i < w->n; i++) {
        int64_t pos = w->starts[i], len = w->lengths[i];
        if (pos < 0 || len < 0 || pos > w->limit || len > w->limit - pos) return BAD;
        total += len;
    }
    Vec *vecs[] = {&w->s_event, &w->s_round, &w->s_start, &w->s_len};
    if (reserve_records(vecs, 4, total, (size_t)w->n * 4 + 1024)) return NOMEM;
    w->max_round = 0;
    for (int64_t i = 0; i < w->n; i++) {
        int64_t pos = w->starts[i], end = pos + w->lengths[i];
        int64_t cols[3] = {0, 0, 0};
        int32_t round = 0, event = (int32_t)i;
        while (pos < end) {
            uint32_t number;
            int wt, tag_len, len_size;
            uint64_t value;
            int64_t payload = 0;
            if (read_tag(buf, &pos, end, &number, &wt, &tag_len)) return BAD;
            if (read_payload(buf, &pos, end, wt, &value, &payload, &len_size)) return BAD;
            if (number <= 3 && wt == WT_VARINT) {  /* number >= 1: read_tag refuses 0 */
                cols[number - 1] = (int64_t)value;
            } else if (number == 4 && wt == WT_LEN) {
                if (VEC_PUSH(&w->s_event, int32_t, event) || VEC_PUSH(&w->s_round, int32_t, round) ||
                    VEC_PUSH(&w->s_start, int64_t, payload) || VEC_PUSH(&w->s_len, int64_t, (int64_t)value))
                    return NOMEM;
                if (round > w->max_round) w->max_round = round;
            }
            if (round == INT32_MAX) return BAD;
            round++;
        }
        w->meta[i] = cols[0];
        w->offset[i] = cols[1];
        w->duration[i] = cols[2];
    }
    return round_order((const int32_t *)w->s_round.data, w->s_event.len, w->max_round, &w->order);
}

/* Pass 2: the stats in their final order -- owner, metadata id (field 1), value records with their round. */
static int walk_stat_fields(EventWalk *w) {
    const uint8_t *buf = w->buf;
    size_t m = w->s_event.len;
    int64_t total = 0;
    for (size_t k = 0; k < m; k++) {
        int64_t row = w->order[k];
        VEC_AT(w->s_round, int32_t, row) = (int32_t)k; /* reused: the stat met k-th is row ``row`` */
        total += VEC_AT(w->s_len, int64_t, k);
    }
    Vec *vecs[] = {&w->v_row, &w->v_round, &w->v_field, &w->v_raw, &w->v_start};
    if (reserve_records(vecs, 5, total, m * 2 + 1024)) return NOMEM;
    w->max_vround = 0;
    w->n_stats = 0;
    for (size_t row = 0; row < m; row++) {
        int32_t k = VEC_AT(w->s_round, int32_t, row);
        int64_t pos = VEC_AT(w->s_start, int64_t, k), end = pos + VEC_AT(w->s_len, int64_t, k);
        int64_t mid = 0;
        int32_t round = 0, r32 = (int32_t)w->n_stats;
        size_t records_before = w->v_row.len;
        while (pos < end) {
            uint32_t number;
            int wt, tag_len, len_size;
            uint64_t value;
            int64_t payload = 0;
            if (read_tag(buf, &pos, end, &number, &wt, &tag_len)) return BAD;
            if (read_payload(buf, &pos, end, wt, &value, &payload, &len_size)) return BAD;
            if (number == 1 && wt == WT_VARINT) {
                mid = (int64_t)value;
            } else if (number <= 7 && wt == VALUE_WIRE_TYPE[number]) {
                if (wt != WT_LEN) payload = 0;
                if (VEC_PUSH(&w->v_row, int32_t, r32) || VEC_PUSH(&w->v_round, int32_t, round) ||
                    VEC_PUSH(&w->v_field, uint8_t, (uint8_t)number) || VEC_PUSH(&w->v_raw, uint64_t, value) ||
                    VEC_PUSH(&w->v_start, int64_t, payload))
                    return NOMEM;
                if (round > w->max_vround) w->max_vround = round;
            }
            if (round == INT32_MAX) return BAD;
            round++;
        }
        if (w->key_table) { /* a stat the reader prunes: walked (its bytes checked), then dropped with its values */
            int64_t key = (uint64_t)mid < (uint64_t)(w->n_table - 1) ? w->key_table[mid] : w->key_table[w->n_table - 1];
            if (key < 0) {
                Vec *recs[] = {&w->v_row, &w->v_round, &w->v_field, &w->v_raw, &w->v_start};
                for (int i = 0; i < 5; i++) recs[i]->len = records_before;
                continue;
            }
            mid = key;
        }
        w->st_owner[w->n_stats] = VEC_AT(w->s_event, int32_t, k);
        w->st_mid[w->n_stats++] = mid;
    }
    free(w->order);
    w->order = NULL;
    /* ordered by field number first (stable), so that each field's records are one slice: the records of
     * ``FieldGroups.select(number)`` in their order, without a search of every record per field */
    if (((int64_t)w->max_vround + 1) * N_VALUE_FIELDS > INT32_MAX) return BAD;
    int32_t width = w->max_vround + 1;
    memset(w->field_bounds, 0, sizeof(w->field_bounds));
    for (size_t j = 0; j < w->v_row.len; j++) {
        int f = VEC_AT(w->v_field, uint8_t, j) - FIRST_VALUE_FIELD;
        VEC_AT(w->v_round, int32_t, j) += f * width;
        w->field_bounds[f + 1]++;
    }
    for (int f = 0; f < N_VALUE_FIELDS; f++) w->field_bounds[f + 1] += w->field_bounds[f];
    return round_order((const int32_t *)w->v_round.data, w->v_row.len, N_VALUE_FIELDS * width - 1, &w->order);
}

/* Where the records of the length-delimited value fields (5, 6: one run, the fields being ordered) start and end. */
static int64_t len_first(const EventWalk *w) { return w->field_bounds[FIRST_LEN_FIELD - FIRST_VALUE_FIELD]; }
static int64_t len_end(const EventWalk *w) { return w->field_bounds[LAST_LEN_FIELD - FIRST_VALUE_FIELD + 1]; }

/* Pass 3: the value records in their final order (a payload start only for the length-delimited ones). */
static void scatter_values(EventWalk *w) {
    int64_t lo = len_first(w), hi = len_end(w);
    for (size_t j = 0; j < w->v_row.len; j++) {
        int64_t d = w->order[j];
        w->o_row[d] = VEC_AT(w->v_row, int32_t, j);
        w->o_raw[d] = VEC_AT(w->v_raw, uint64_t, j);
        if (d >= lo && d < hi) w->o_start[d - lo] = VEC_AT(w->v_start, int64_t, j);
    }
}

#define N_SCRATCH 9
#define MAX_KEPT_SCRATCH (16u << 20) /* bytes of scratch kept for the next call at most */

static Vec **scratch_vecs(EventWalk *w, Vec **all) {
    Vec *v[N_SCRATCH] = {&w->s_event, &w->s_round, &w->s_start, &w->s_len,
                         &w->v_row, &w->v_round, &w->v_field, &w->v_raw, &w->v_start};
    memcpy(all, v, sizeof(v));
    return all;
}

/* The scratch vectors of the last call, kept so the next batch reuses their pages instead of faulting fresh
 * ones in (malloc hands big blocks back to the OS on free).  Taken and given back with the GIL held, whole: a
 * call that finds them taken (another thread's) uses vectors of its own. */
static Vec spare[N_SCRATCH];
static int spare_taken = 0;

static void event_walk_init(EventWalk *w) {
    Vec *all[N_SCRATCH];
    static const size_t items[N_SCRATCH] = {4, 4, 8, 8, 4, 4, 1, 8, 8};
    memset(w, 0, sizeof(*w));
    scratch_vecs(w, all);
    w->owns_spare = !spare_taken;
    for (int i = 0; i < N_SCRATCH; i++) {
        if (w->owns_spare && spare[i].data) {
            *all[i] = spare[i];
            all[i]->len = 0;
        } else {
            vec_init(all[i], items[i]);
        }
    }
    if (w->owns_spare) spare_taken = 1;
}

static void event_walk_free(EventWalk *w) {
    Vec *all[N_SCRATCH];
    size_t bytes = 0;
    scratch_vecs(w, all);
    for (int i = 0; i < N_SCRATCH; i++) bytes += all[i]->cap * all[i]->item;
    int keep = w->owns_spare && bytes <= MAX_KEPT_SCRATCH;
    for (int i = 0; i < N_SCRATCH; i++) {
        if (keep) {
            spare[i] = *all[i]; /* the spare's old block is this one, or was realloc'd into it */
        } else {
            vec_free(all[i]);
            if (w->owns_spare) vec_init(&spare[i], all[i]->item);
        }
    }
    if (w->owns_spare) spare_taken = 0;
    free(w->order);
    w->order = NULL;
}

/* release_scratch(): free the scratch kept for the next batch (the reader calls it after each plane, so none
 * of it stays alive through the analysis). */
static PyObject *release_scratch(PyObject *self, PyObject *args) {
    (void)self;
    (void)args;
    if (!spare_taken) {
        for (int i = 0; i < N_SCRATCH; i++) {
            size_t item = spare[i].item;
            vec_free(&spare[i]);
            vec_init(&spare[i], item);
        }
    }
    Py_RETURN_NONE;
}

/* New bytearrays of ``count`` items of the given sizes, stored in ``out`` from index ``first``; their data in
 * ``ptrs``.  Returns -1 (with a Python error set) when one cannot be made. */
static int new_columns(PyObject *out, Py_ssize_t first, size_t count, const size_t *item, void ***ptrs, size_t k) {
    for (size_t i = 0; i < k; i++) {
        PyObject *b = PyByteArray_FromStringAndSize(NULL, (Py_ssize_t)(count * item[i]));
        if (!b) return -1;
        PyTuple_SET_ITEM(out, first + (Py_ssize_t)i, b);
        *ptrs[i] = PyByteArray_AS_STRING(b);
    }
    return 0;
}

/* The arguments (buf, limit, starts, lengths) of decode_events and content_groups, as three held buffers: 0, or -1
 * with an exception set and nothing held. */
static int ranges_args(PyObject *args, Py_buffer *view, Py_ssize_t *limit, Py_buffer *sv, Py_buffer *lv) {
    PyObject *bufobj, *startobj, *lenobj;
    if (!PyArg_ParseTuple(args, "OnOO", &bufobj, limit, &startobj, &lenobj)) return -1;
    if (get_bytes(bufobj, view, 0) < 0) return -1;
    if (get_bytes(startobj, sv, 0) < 0) { PyBuffer_Release(view); return -1; }
    if (get_bytes(lenobj, lv, 0) < 0) { PyBuffer_Release(view); PyBuffer_Release(sv); return -1; }
    return 0;
}

static void release_ranges(Py_buffer *view, Py_buffer *sv, Py_buffer *lv) {
    PyBuffer_Release(view);
    PyBuffer_Release(sv);
    PyBuffer_Release(lv);
}

/* decode_events' work on held buffers: the 9-tuple (see decode_events), None for a malformed event or stat, or
 * NULL with an exception set.  With ``offset_out`` and ``duration_out``, the events' offsets and durations are
 * written there (n items each) instead of into new columns, and the tuple holds None in their places. */
static PyObject *decode_batch(const uint8_t *buf, int64_t limit, const int64_t *starts, const int64_t *lengths,
                              int64_t n, int64_t *offset_out, int64_t *duration_out, const int64_t *key_table,
                              int64_t n_table) {
    PyObject *result = NULL;
    EventWalk w;
    event_walk_init(&w);
    w.key_table = n_table > 0 ? key_table : NULL;
    w.n_table = n_table;
    w.buf = buf;
    w.starts = starts;
    w.lengths = lengths;
    w.n = n;
    w.limit = limit;
    result = PyTuple_New(9);
    if (!result) goto done;
    size_t i64[3] = {8, 8, 8}, stat_items[2] = {4, 8}, value_items[2] = {4, 8}, start_item[1] = {8};
    void **event_cols[3] = {(void **)&w.meta, (void **)&w.offset, (void **)&w.duration};
    void **stat_cols[2] = {(void **)&w.st_owner, (void **)&w.st_mid};
    void **value_cols[2] = {(void **)&w.o_row, (void **)&w.o_raw};
    void **start_col[1] = {(void **)&w.o_start};
    int rc;
    if (offset_out) {
        if (new_columns(result, 0, (size_t)w.n, i64, event_cols, 1)) goto fail;
        w.offset = offset_out;
        w.duration = duration_out;
        Py_INCREF(Py_None);
        PyTuple_SET_ITEM(result, 1, Py_None);
        Py_INCREF(Py_None);
        PyTuple_SET_ITEM(result, 2, Py_None);
    } else if (new_columns(result, 0, (size_t)w.n, i64, event_cols, 3)) {
        goto fail;
    }
    Py_BEGIN_ALLOW_THREADS
    rc = walk_event_fields(&w);
    Py_END_ALLOW_THREADS
    if (rc != OK) goto bad;
    if (new_columns(result, 3, w.s_event.len, stat_items, stat_cols, 2)) goto fail;
    Py_BEGIN_ALLOW_THREADS
    rc = walk_stat_fields(&w);
    Py_END_ALLOW_THREADS
    if (rc != OK) goto bad;
    if (w.n_stats < w.s_event.len && (PyByteArray_Resize(PyTuple_GET_ITEM(result, 3), (Py_ssize_t)(w.n_stats * 4)) < 0 ||
                                      PyByteArray_Resize(PyTuple_GET_ITEM(result, 4), (Py_ssize_t)(w.n_stats * 8)) < 0))
        goto fail;
    if (new_columns(result, 5, w.v_row.len, value_items, value_cols, 2)) goto fail;
    if (new_columns(result, 7, (size_t)(len_end(&w) - len_first(&w)), start_item, start_col, 1)) goto fail;
    Py_BEGIN_ALLOW_THREADS
    scatter_values(&w);
    Py_END_ALLOW_THREADS
    PyObject *bounds = PyByteArray_FromStringAndSize((const char *)w.field_bounds, sizeof(w.field_bounds));
    if (!bounds) goto fail;
    PyTuple_SET_ITEM(result, 8, bounds);
    goto done;
bad:
    Py_CLEAR(result);
    if (rc == NOMEM) {
        PyErr_NoMemory();
    } else {
        result = Py_None;
        Py_INCREF(result);
    }
    goto done;
fail:
    Py_CLEAR(result);
done:
    event_walk_free(&w);
    return result;
}

static PyObject *decode_events(PyObject *self, PyObject *args) {
    (void)self;
    Py_ssize_t limit;
    Py_buffer view, sv, lv;
    if (ranges_args(args, &view, &limit, &sv, &lv) < 0) return NULL;
    PyObject *result = NULL;
    if (limit < 0 || limit > view.len || sv.len != lv.len || sv.len % 8 || sv.len / 8 > INT32_MAX) {
        PyErr_SetString(PyExc_ValueError, "decode_events: bad buffers (int64 starts and lengths of one size)");
    } else {
        result = decode_batch((const uint8_t *)view.buf, limit, (const int64_t *)sv.buf, (const int64_t *)lv.buf,
                              sv.len / 8, NULL, NULL, NULL, 0);
    }
    release_ranges(&view, &sv, &lv);
    return result;
}

/* The payload start and length of each non-empty event (field 4, length-delimited) in buf[from:to]. */
static int span_events(const uint8_t *buf, int64_t from, int64_t to, Vec *starts, Vec *lengths) {
    int64_t pos = from;
    while (pos < to) {
        uint32_t number;
        int wt, tag_len, len_size = 0;
        uint64_t value;
        int64_t payload = 0;
        if (read_tag(buf, &pos, to, &number, &wt, &tag_len)) return BAD;
        if (read_payload(buf, &pos, to, wt, &value, &payload, &len_size)) return BAD;
        if (number == LINE_EVENTS && wt == WT_LEN && value > 0) {
            if (starts->len >= INT32_MAX) return BAD;
            if (VEC_PUSH(starts, int64_t, payload) || VEC_PUSH(lengths, int64_t, (int64_t)value)) return NOMEM;
        }
    }
    return OK;
}

/* ==== decode_span(buf, limit, from, to, offsets, durations, at[, keys]) ====
 *
 * decode_events of the non-empty events in buf[from:to] (a span of split_line), their offsets and durations written
 * into the int64 arrays ``offsets`` and ``durations`` from index ``at`` on (the line's columns: no column per batch
 * to join after): the same 9-tuple with None for those two, or None.  ValueError when the events do not fit.
 * ``keys``: the reader's dense table of stat keys (int64, index a metadata id, -1 a stat it prunes; its last slot
 * answers every id past it and every negative one, as ``IdTable.lookup``): the stats it prunes are dropped here
 * with their values (every stat is still walked and checked), and stat_metadata_id holds each kept stat's key. */
static PyObject *decode_span(PyObject *self, PyObject *args) {
    (void)self;
    PyObject *bufobj, *offobj, *durobj, *keysobj = Py_None;
    Py_ssize_t limit, from, to, at;
    if (!PyArg_ParseTuple(args, "OnnnOOn|O", &bufobj, &limit, &from, &to, &offobj, &durobj, &at, &keysobj))
        return NULL;
    Py_buffer view, ov, dv, kv;
    kv.buf = NULL;
    kv.len = 0;
    if (get_bytes(bufobj, &view, 0) < 0) return NULL;
    if (get_bytes(offobj, &ov, 1) < 0) { PyBuffer_Release(&view); return NULL; }
    if (get_bytes(durobj, &dv, 1) < 0) { PyBuffer_Release(&view); PyBuffer_Release(&ov); return NULL; }
    if (keysobj != Py_None && get_bytes(keysobj, &kv, 0) < 0) {
        PyBuffer_Release(&view); PyBuffer_Release(&ov); PyBuffer_Release(&dv);
        return NULL;
    }
    PyObject *result = NULL;
    Vec starts, lengths;
    vec_init(&starts, sizeof(int64_t));
    vec_init(&lengths, sizeof(int64_t));
    if (limit < 0 || limit > view.len || from < 0 || to < from || to > limit) {
        PyErr_SetString(PyExc_ValueError, "decode_span: a span outside the buffer");
        goto done;
    }
    if (ov.len != dv.len || ov.len % 8 || at < 0 || at > ov.len / 8) {
        PyErr_SetString(PyExc_ValueError, "decode_span: bad output columns (int64, one size, room from ``at``)");
        goto done;
    }
    if (keysobj != Py_None && (kv.len % 8 || kv.len == 0)) {
        PyErr_SetString(PyExc_ValueError, "decode_span: the key table is int64, with at least its 'other' slot");
        goto done;
    }
    int rc;
    Py_BEGIN_ALLOW_THREADS
    rc = span_events((const uint8_t *)view.buf, from, to, &starts, &lengths);
    Py_END_ALLOW_THREADS
    if (rc == NOMEM) {
        PyErr_NoMemory();
    } else if (rc == BAD) {
        result = Py_None;
        Py_INCREF(result);
    } else if ((Py_ssize_t)starts.len > ov.len / 8 - at) {
        PyErr_SetString(PyExc_ValueError, "decode_span: more events than the output columns hold");
    } else {
        result = decode_batch((const uint8_t *)view.buf, limit, (const int64_t *)starts.data,
                              (const int64_t *)lengths.data, (int64_t)starts.len, (int64_t *)ov.buf + at,
                              (int64_t *)dv.buf + at, (const int64_t *)kv.buf, kv.len / 8);
    }
done:
    vec_free(&starts);
    vec_free(&lengths);
    PyBuffer_Release(&view);
    PyBuffer_Release(&ov);
    PyBuffer_Release(&dv);
    if (keysobj != Py_None) PyBuffer_Release(&kv);
    return result;
}

/* ==== content_groups(buf, limit, starts, lengths) ====
 *
 * Group the byte ranges buf[starts[i]:starts[i]+lengths[i]] by exact content: (reps, group) as int64
 * bytearrays, ``reps[g]`` the first range of group g (groups numbered in order of first appearance),
 * ``group[i]`` the group of range i.  What ``wire._content_groups`` gives, up to the numbering of groups, which
 * ``wire.intern_ranges`` makes irrelevant (it interns groups in the order of their content keys; the key of a
 * range over 64 KiB is its representative's index, the first occurrence on both paths).  An open-addressing
 * hash table, every match confirmed byte for byte.  Raises ValueError for a range outside the buffer.
 */

static inline uint64_t hash_bytes(const uint8_t *p, int64_t n) {
    uint64_t h = 0x9E3779B97F4A7C15ull ^ (uint64_t)n;
    int64_t i = 0;
    for (; i + 8 <= n; i += 8) {
        uint64_t w;
        memcpy(&w, p + i, 8);
        h = (h ^ w) * 0xBF58476D1CE4E5B9ull;
        h ^= h >> 29;
    }
    uint64_t t = 0;
    for (int64_t k = 0; i + k < n; k++) t |= (uint64_t)p[i + k] << (8 * k);
    h = (h ^ t) * 0x94D049BB133111EBull;
    return h ^ (h >> 31);
}

static int group_ranges(const uint8_t *buf, const int64_t *starts, const int64_t *lengths, int64_t n,
                        int64_t *group, int64_t *reps, int64_t *n_groups) {
    size_t cap = 16;
    while (cap < (size_t)n * 2) cap <<= 1;
    int64_t *table = malloc(cap * sizeof(int64_t)); /* group + 1, 0: empty */
    uint64_t *hashes = malloc(((size_t)n ? (size_t)n : 1) * sizeof(uint64_t)); /* of each group's rep */
    if (!table || !hashes) { free(table); free(hashes); return NOMEM; }
    memset(table, 0, cap * sizeof(int64_t));
    int64_t g = 0;
    for (int64_t i = 0; i < n; i++) {
        const uint8_t *p = buf + starts[i];
        int64_t len = lengths[i];
        uint64_t h = hash_bytes(p, len);
        size_t slot = (size_t)h & (cap - 1);
        for (;;) {
            int64_t e = table[slot];
            if (e == 0) {
                table[slot] = g + 1;
                reps[g] = i;
                hashes[g] = h;
                group[i] = g++;
                break;
            }
            int64_t r = reps[e - 1];
            if (hashes[e - 1] == h && lengths[r] == len && memcmp(buf + starts[r], p, (size_t)len) == 0) {
                group[i] = e - 1;
                break;
            }
            slot = (slot + 1) & (cap - 1);
        }
    }
    free(table);
    free(hashes);
    *n_groups = g;
    return OK;
}

static PyObject *content_groups(PyObject *self, PyObject *args) {
    (void)self;
    Py_ssize_t limit;
    Py_buffer view, sv, lv;
    if (ranges_args(args, &view, &limit, &sv, &lv) < 0) return NULL;
    PyObject *result = NULL, *group = NULL, *reps = NULL;
    int64_t n = sv.len / 8, n_groups = 0;
    const int64_t *starts = (const int64_t *)sv.buf, *lengths = (const int64_t *)lv.buf;
    int bad = limit < 0 || limit > view.len || sv.len != lv.len || sv.len % 8;
    for (int64_t i = 0; !bad && i < n; i++)
        bad = starts[i] < 0 || lengths[i] < 0 || starts[i] > limit || lengths[i] > limit - starts[i];
    if (bad) {
        PyErr_SetString(PyExc_ValueError, "content_groups: a range outside the buffer");
        goto done;
    }
    group = PyByteArray_FromStringAndSize(NULL, (Py_ssize_t)(n * 8));
    reps = PyByteArray_FromStringAndSize(NULL, (Py_ssize_t)(n * 8));
    if (!group || !reps) goto done;
    int rc;
    int64_t *gp = (int64_t *)PyByteArray_AS_STRING(group), *rp = (int64_t *)PyByteArray_AS_STRING(reps);
    Py_BEGIN_ALLOW_THREADS
    rc = group_ranges((const uint8_t *)view.buf, starts, lengths, n, gp, rp, &n_groups);
    Py_END_ALLOW_THREADS
    if (rc != OK) { PyErr_NoMemory(); goto done; }
    if (PyByteArray_Resize(reps, (Py_ssize_t)(n_groups * 8)) < 0) goto done;
    result = Py_BuildValue("(OO)", reps, group);
done:
    Py_XDECREF(group);
    Py_XDECREF(reps);
    release_ranges(&view, &sv, &lv);
    return result;
}

/* ==== empty_event_pairs(buf, limit, start, end) ====
 *
 * How many ``22 00`` byte pairs (an empty event's whole record) buf[start:end] holds, overlapping pairs counted at
 * every position: what ``reader._mostly_empty_events`` counts with numpy, in one pass without temporaries. */
static PyObject *empty_event_pairs(PyObject *self, PyObject *args) {
    (void)self;
    PyObject *bufobj;
    Py_ssize_t limit, start, end;
    if (!PyArg_ParseTuple(args, "Onnn", &bufobj, &limit, &start, &end)) return NULL;
    Py_buffer view;
    if (get_bytes(bufobj, &view, 0) < 0) return NULL;
    if (limit < 0 || limit > view.len || start < 0 || end < start || end > limit) {
        PyBuffer_Release(&view);
        PyErr_SetString(PyExc_ValueError, "empty_event_pairs: a range outside the buffer");
        return NULL;
    }
    const uint8_t *b = (const uint8_t *)view.buf;
    int64_t pairs = 0;
    Py_BEGIN_ALLOW_THREADS
    for (int64_t i = start; i + 1 < end;) { /* blocks with a narrow counter: the compiler vectorises the loop */
        int64_t n = end - 1 - i < 4096 ? end - 1 - i : 4096;
        uint32_t c = 0;
        for (int64_t k = 0; k < n; k++) c += (uint32_t)((b[i + k] == 0x22) & (b[i + k + 1] == 0));
        pairs += c;
        i += n;
    }
    Py_END_ALLOW_THREADS
    PyBuffer_Release(&view);
    return PyLong_FromLongLong((long long)pairs);
}

static PyMethodDef methods[] = {
    {"split_repeated", split_repeated, METH_VARARGS,
     "Split a message's repeated field from the rest: (head, starts, lengths, in_place) or None."},
    {"content_groups", content_groups, METH_VARARGS,
     "Group byte ranges by exact content: (first range of each group, group of each range)."},
    {"release_scratch", release_scratch, METH_NOARGS, "Free the scratch decode_events keeps between batches."},
    {"decode_events", decode_events, METH_VARARGS, "Decode a batch of XEvents into columns, or None if malformed."},
    {"split_line", split_line, METH_VARARGS,
     "Split an XLine's events from its other fields, cut into the reader's batches: (head, spans) or None."},
    {"decode_span", decode_span, METH_VARARGS, "decode_events of the non-empty events of a span, or None."},
    {"empty_event_pairs", empty_event_pairs, METH_VARARGS, "How many 22 00 byte pairs a range holds."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT, "_cwire", "Compiled XPlane wire decoder.", -1, methods, NULL, NULL, NULL, NULL,
};

PyMODINIT_FUNC PyInit__cwire(void) { return PyModule_Create(&module); }
