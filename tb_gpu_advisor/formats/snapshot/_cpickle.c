/* The compiled twin of unpickle.loads: the same plain-data pickle interpreter, opcode for opcode, in C.
 *
 * unpickle.py stays the reference and its docstring the contract; this file follows _Reader step by step so that
 * every input gives the same value or the same error (class and message): the same opcodes refused, the same
 * object count at the same moment, the same depth and sealing bookkeeping, the same key rules, the same memo
 * sharing, the same calls of the reader's ``compact`` callback, and the same final check that the result is plain.
 * Where Python's own parsing defines a result (text integers, quoted strings, the ``too many objects`` message) the
 * Python helper is called, so the two cannot drift; the limits themselves are handed in on every call.
 *
 * Hostile bytes: every read is checked against the bytes left first (lengths are 64-bit and compared, never added
 * past the end); the interpreter is one loop with the value stack, the MARK positions and the memo in arrays that
 * grow on the heap; nothing recurses (the final check walks with a list of its own).  Objects are counted exactly
 * where Python counts them, so memory stays bounded by the file's size as it does there.
 *
 * Streams (unpickle.load, for files over a gigabyte): Python opens the passes and hands over the stream's read(n);
 * scan() is the first pass (the memo keys fetched again, the length), load() the second.  Both keep one window of
 * the input (raw[pos] is the byte at base + pos of total) and pull the next chunk through read(n) only where a read
 * needs bytes past it (more()), so every check above is made against the stream's length, every message names the
 * byte of the whole, and a length past the end is refused before anything is read for it.  loads() is the same code
 * with the whole pickle as its only window.  Why C pulling chunks rather than Python feeding them: the interpreter
 * stays one loop with every read where it was; a resumable reader would have to stop and restart mid-opcode.
 *
 * Written against the CPython API only.  Opcode numbers and meanings are the pickle format's (PEP 307, 3154, 574).
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#if PY_VERSION_HEX < 0x030B0000  /* Python 3.10 (setup.py's floor) has the unpacker under its private name */
#define PyFloat_Unpack8 _PyFloat_Unpack8
#endif

/* The value-stack marker of MARK: never an object, never reference-counted. */
static char mark_byte;
#define MARK ((PyObject *)&mark_byte)

/* ---- containers' depth and sealing, keyed by address (Python keys them by id()) ---- */

typedef struct {
    PyObject *key;    /* NULL: empty slot */
    uint32_t depth;   /* 0: no depth entry (Python's depth dict does not hold it) */
    uint32_t sealed;  /* 1: fetched a second time (Python's sealed set holds it) */
} Slot;

typedef struct {
    Slot *slots;
    size_t mask, used;
} Table;

static inline size_t slot_of(const Table *t, PyObject *key) {
    uint64_t h = (uint64_t)(uintptr_t)key;
    h = (h >> 4) * 0x9E3779B97F4A7C15ULL;
    return (size_t)(h >> 20) & t->mask;
}

static int table_init(Table *t) {
    t->mask = 1023;
    t->used = 0;
    t->slots = calloc(t->mask + 1, sizeof(Slot));
    return t->slots ? 0 : -1;
}

static Slot *table_find(const Table *t, PyObject *key) {
    size_t i = slot_of(t, key);
    while (t->slots[i].key) {
        if (t->slots[i].key == key) return &t->slots[i];
        i = (i + 1) & t->mask;
    }
    return NULL;
}

static int table_grow(Table *t) {
    Table n = {calloc(2 * (t->mask + 1), sizeof(Slot)), 2 * t->mask + 1, t->used};
    if (!n.slots) return -1;
    for (size_t i = 0; i <= t->mask; i++) {
        if (!t->slots[i].key) continue;
        size_t j = slot_of(&n, t->slots[i].key);
        while (n.slots[j].key) j = (j + 1) & n.mask;
        n.slots[j] = t->slots[i];
    }
    free(t->slots);
    *t = n;
    return 0;
}

/* The slot of ``key``, made (depth 0, unsealed) when absent; NULL only when memory runs out. */
static Slot *table_get(Table *t, PyObject *key) {
    Slot *s = table_find(t, key);
    if (s) return s;
    if (2 * (t->used + 1) > t->mask + 1 && table_grow(t) < 0) return NULL;
    size_t i = slot_of(t, key);
    while (t->slots[i].key) i = (i + 1) & t->mask;
    t->slots[i].key = key;
    t->slots[i].depth = 0;
    t->slots[i].sealed = 0;
    t->used++;
    return &t->slots[i];
}

/* Linear probing: removal shifts the following run back so that no search stops early. */
static void table_remove(Table *t, Slot *s) {
    size_t i = (size_t)(s - t->slots), j = i;
    for (;;) {
        j = (j + 1) & t->mask;
        if (!t->slots[j].key) break;
        size_t home = slot_of(t, t->slots[j].key);
        /* the entry at j may fill the hole at i unless its home lies cyclically in (i, j] */
        if ((j > i && (home <= i || home > j)) || (j < i && (home <= i && home > j))) {
            t->slots[i] = t->slots[j];
            i = j;
        }
    }
    t->slots[i].key = NULL;
    t->used--;
}

/* Python's ``depth.pop(id(key), None)``. */
static void depth_drop(Table *t, PyObject *key) {
    Slot *s = table_find(t, key);
    if (!s) return;
    s->depth = 0;
    if (!s->sealed) table_remove(t, s);
}

static inline int is_sealed(const Table *t, PyObject *key) {
    Slot *s = table_find(t, key);
    return s && s->sealed;
}

static inline int exact_container(PyObject *o) {
    return PyList_CheckExact(o) || PyDict_CheckExact(o) || PyTuple_CheckExact(o);
}

/* ---- the interpreter's state (unpickle._Reader's fields) ---- */

typedef struct {
    /* the window of the input: raw[pos] is the byte at base + pos of total; src (a stream's read(n), or NULL: raw is
     * the whole pickle) gives the bytes after it, chunk at a time, into win (the bytes object raw points into) */
    const uint8_t *raw;
    Py_ssize_t len, pos;
    Py_ssize_t base, total, chunk;
    PyObject *src, *win;
    PyObject **stack;
    Py_ssize_t sp, scap;
    Py_ssize_t *marks;
    Py_ssize_t nm, mcap;
    PyObject **memo;     /* memo[k]: the object memoized under k, NULL where it is not kept (never fetched) */
    Py_ssize_t memoized, memocap;
    uint8_t *fetched;    /* bitmap of the keys the file fetches; NULL: keep every memo entry */
    Py_ssize_t fetched_bits;
    long long objects, max_objects;
    Table t;
    PyObject *last_memo; /* a strong reference: ``is`` must compare live objects */
    PyObject *compact;
    /* handed in by unpickle.py on each call */
    PyObject *unsafe, *limit, *too_many, *text_int, *quoted, *plain, *mark_cls, *max_objects_obj;
    long long max_int_bytes, max_line, max_depth, max_int_key;
    PyObject *refused[256];  /* borrowed from unpickle._REFUSED: the opcode's name, or NULL */
} R;

/* ---- errors, worded as unpickle.py words them ---- */

/* ``f"{n:,}"`` of a signed magnitude. */
static void commas(char *out, int neg, uint64_t v) {
    char digits[32];
    int n = 0;
    do { digits[n++] = (char)('0' + v % 10); v /= 10; } while (v);
    if (neg) *out++ = '-';
    for (int i = n - 1; i >= 0; i--) {
        *out++ = digits[i];
        if (i && i % 3 == 0) *out++ = ',';
    }
    *out = 0;
}

static PyObject *fail(PyObject *cls, const char *fmt, ...) {
    va_list va;
    va_start(va, fmt);
    PyObject *msg = PyUnicode_FromFormatV(fmt, va);
    va_end(va);
    if (msg) {
        PyErr_SetObject(cls, msg);
        Py_DECREF(msg);
    }
    return NULL;
}

static const char *type_name(PyObject *o, PyObject **keep) {
    *keep = PyObject_GetAttrString((PyObject *)Py_TYPE(o), "__name__");
    if (*keep && PyUnicode_Check(*keep)) return PyUnicode_AsUTF8(*keep);
    PyErr_Clear();
    return Py_TYPE(o)->tp_name;
}

#define AT(r) ((r)->base + (r)->pos)

static int truncated(R *r, int neg, uint64_t n) {
    char a[40], b[40];
    commas(a, 0, (uint64_t)AT(r));
    commas(b, neg, n);
    fail(PyExc_ValueError, "pickle truncated at byte %s (wants %s more bytes)", a, b);
    return -1;
}

/* ``raise NEW(f"{prefix}{current exception}{suffix}") from current`` when the current one is a ValueError. */
static int rewrap(const char *prefix, const char *suffix) {
    if (!PyErr_ExceptionMatches(PyExc_ValueError)) return -1;
    PyObject *type, *value, *tb;
    PyErr_Fetch(&type, &value, &tb);
    PyErr_NormalizeException(&type, &value, &tb);
    if (tb) PyException_SetTraceback(value, tb);
    PyObject *msg = PyUnicode_FromFormat("%s%S%s", prefix, value, suffix);
    if (msg) {
        PyObject *exc = PyObject_CallOneArg(PyExc_ValueError, msg);
        Py_DECREF(msg);
        if (exc) {
            Py_INCREF(value);
            PyException_SetCause(exc, value);
            Py_INCREF(value);
            PyException_SetContext(exc, value);
            PyErr_SetObject(PyExc_ValueError, exc);
            Py_DECREF(exc);
        }
    }
    Py_XDECREF(type);
    Py_XDECREF(value);
    Py_XDECREF(tb);
    return -1;
}

/* ---- input: every read checked against the bytes left ---- */

/* Python's ``more(n)``: 1 when the window holds n bytes from pos, reading on from the stream (at least a chunk) where
 * it does not and can; 0 when the stream has not that many; -1 on an error the stream raised.  The bytes before pos
 * are dropped. */
static int more(R *r, Py_ssize_t n) {
    Py_ssize_t have = r->len - r->pos;
    if (have >= n || !r->src) return have >= n;
    Py_ssize_t size = n > r->chunk ? n : r->chunk, got = have;
    if (size > r->total - AT(r)) size = n > r->total - AT(r) ? n : r->total - AT(r);  /* no more than is left */
    PyObject *w = PyBytes_FromStringAndSize(NULL, size);
    if (!w) return -1;
    char *p = PyBytes_AS_STRING(w);
    if (have) memcpy(p, r->raw + r->pos, (size_t)have);
    while (got < size) {
        PyObject *part = PyObject_CallFunction(r->src, "n", size - got);
        if (!part) {
            Py_DECREF(w);
            return -1;
        }
        if (!PyBytes_Check(part)) {
            Py_DECREF(part);
            Py_DECREF(w);
            PyErr_SetString(PyExc_TypeError, "_cpickle: a stream's read(n) must give bytes");
            return -1;
        }
        Py_ssize_t k = PyBytes_GET_SIZE(part);
        if (k > size - got) k = size - got;
        if (k) memcpy(p + got, PyBytes_AS_STRING(part), (size_t)k);
        Py_DECREF(part);
        if (!k) break;
        got += k;
    }
    if (got < size && _PyBytes_Resize(&w, got) < 0) return -1;  /* the stream ended: the window holds what came */
    Py_XSETREF(r->win, w);
    r->raw = (const uint8_t *)PyBytes_AS_STRING(w);
    r->base += r->pos;
    r->pos = 0;
    r->len = got;
    return got >= n;
}

/* Python's ``need(n)``: n bytes next in the window, else the pickle is truncated (said at the byte, of the whole). */
static inline int need(R *r, Py_ssize_t n) {
    if (n > r->total - AT(r)) return truncated(r, 0, (uint64_t)n);
    if (n > r->len - r->pos) {
        int m = more(r, n);
        if (m <= 0) return m < 0 ? -1 : truncated(r, 0, (uint64_t)n);
    }
    return 0;
}

static inline uint64_t le(const uint8_t *p, int n) {
    uint64_t v = 0;
    for (int i = n - 1; i >= 0; i--) v = (v << 8) | p[i];
    return v;
}

/* Python's ``u(unpack, n)`` for the unsigned little-endian sizes 1, 2, 4, 8. */
static inline int read_u(R *r, int n, uint64_t *out) {
    if (need(r, n) < 0) return -1;
    *out = le(r->raw + r->pos, n);
    r->pos += n;
    return 0;
}

/* Python's ``take(n)``: the next n bytes (n may be negative or past the end: an error naming it). */
static int take(R *r, int neg, uint64_t n, const uint8_t **out) {
    if (neg || n > (uint64_t)(r->total - AT(r))) return truncated(r, neg, n);
    if (need(r, (Py_ssize_t)n) < 0) return -1;
    *out = r->raw + r->pos;
    r->pos += (Py_ssize_t)n;
    return 0;
}

/* Python's ``line()``: the bytes up to the next newline within max_line bytes, the newline stepped over. */
static int line(R *r, const uint8_t **out, Py_ssize_t *n) {
    Py_ssize_t room = r->len - r->pos;
    if (r->max_line < room) room = r->max_line < 0 ? 0 : (Py_ssize_t)r->max_line;
    const uint8_t *nl = room > 0 ? memchr(r->raw + r->pos, '\n', (size_t)room) : NULL;
    if (!nl && r->src && r->max_line > r->len - r->pos) {  /* the line may go on past the window: read on */
        Py_ssize_t left = r->total - AT(r);
        if (more(r, r->max_line < left ? (Py_ssize_t)r->max_line : left) < 0) return -1;
        room = r->len - r->pos;
        if (r->max_line < room) room = (Py_ssize_t)r->max_line;
        nl = room > 0 ? memchr(r->raw + r->pos, '\n', (size_t)room) : NULL;
    }
    if (!nl) {
        char a[40], b[40];
        commas(a, r->max_line < 0, r->max_line < 0 ? (uint64_t)(-(r->max_line + 1)) + 1 : (uint64_t)r->max_line);
        commas(b, 0, (uint64_t)AT(r));
        fail(PyExc_ValueError, "pickle: no end of line within %s bytes at byte %s", a, b);
        return -1;
    }
    *out = r->raw + r->pos;
    *n = nl - *out;
    r->pos += *n + 1;
    return 0;
}

/* ---- the value stack ---- */

static int push(R *r, PyObject *o) {  /* steals o */
    if (!o) return -1;
    if (r->sp == r->scap) {
        Py_ssize_t cap = r->scap ? 2 * r->scap : 64;
        PyObject **s = realloc(r->stack, (size_t)cap * sizeof(PyObject *));
        if (!s) {
            if (o != MARK) Py_DECREF(o);
            PyErr_NoMemory();
            return -1;
        }
        r->stack = s;
        r->scap = cap;
    }
    r->stack[r->sp++] = o;
    return 0;
}

static PyObject *pop(R *r) {  /* a new reference */
    if (!r->sp || r->stack[r->sp - 1] == MARK) return fail(PyExc_ValueError, "pickle: stack underflow");
    return r->stack[--r->sp];
}

/* The items above the last MARK, taken off the stack: the caller owns their references (release_items). */
static int pop_mark(R *r, PyObject ***items, Py_ssize_t *n) {
    if (!r->nm) {
        fail(PyExc_ValueError, "pickle: MARK expected on the stack");
        return -1;
    }
    Py_ssize_t k = r->marks[--r->nm];
    *items = r->stack + k + 1;
    *n = r->sp - k - 1;
    r->sp = k;
    return 0;
}

static void release_items(PyObject **items, Py_ssize_t n) {
    for (Py_ssize_t i = 0; i < n; i++) Py_DECREF(items[i]);
}

/* Python's ``top(kind)`` then ``grow``'s sealed check: the list or dict on top, about to get items. */
static PyObject *grow(R *r, int want_dict) {
    const char *kind = want_dict ? "dict" : "list";
    PyObject *o = r->sp ? r->stack[r->sp - 1] : MARK;
    if (o == MARK || !(want_dict ? PyDict_Check(o) : PyList_Check(o)))
        return fail(PyExc_ValueError, "pickle: a %s expected on the stack", kind);
    if (is_sealed(&r->t, o))
        return fail(r->limit, "a %s changed after it was shared (a cycle, or a shared object rewritten: no snapshot "
                    "does either)", kind);
    return o;
}

/* ---- what is built ---- */

/* Python's ``new``: counted, depth 1, unsealed. */
static PyObject *fresh(R *r, PyObject *c) {
    if (!c) return NULL;
    Slot *s = table_get(&r->t, c);
    if (!s) {
        Py_DECREF(c);
        return PyErr_NoMemory();
    }
    r->objects++;
    s->depth = 1;
    s->sealed = 0;
    return c;
}

/* Python's ``place``: items[0], items[stride], ... go into parent (depth one more than the deepest's, counted).
 * Only containers are looked up: an id Python finds for anything else is a freed container's, a stale entry. */
static int place(R *r, PyObject *parent, PyObject **items, Py_ssize_t n, Py_ssize_t stride) {
    if (n <= 0) return 0;
    uint32_t d = 0;
    Py_ssize_t count = 0;
    for (Py_ssize_t i = 0; i < n; i += stride, count++) {
        if (!exact_container(items[i])) continue;
        Slot *s = table_find(&r->t, items[i]);
        if (s && s->depth > d) d = s->depth;
    }
    d += 1;
    Slot *p = table_get(&r->t, parent);
    if (!p) {
        PyErr_NoMemory();
        return -1;
    }
    if (d > p->depth) {
        if ((long long)d > r->max_depth) {
            fail(r->limit, "containers nested more than %lld deep (the limit; a snapshot nests 7)", r->max_depth);
            return -1;
        }
        p->depth = d;
    }
    r->objects += count;
    return 0;
}

static int key_ok(R *r, PyObject *key) {
    if (PyUnicode_CheckExact(key)) return 1;
    if (PyLong_CheckExact(key) || PyBool_Check(key)) {
        int overflow;
        long long v = PyLong_AsLongLongAndOverflow(key, &overflow);
        return !overflow && -r->max_int_key < v && v < r->max_int_key;
    }
    return 0;
}

/* Python's ``setitems``: keys checked and set in order, then the values placed. */
static int setitems(R *r, PyObject *d, PyObject **items, Py_ssize_t n) {
    if (n % 2) {
        fail(PyExc_ValueError, "pickle: a dict of an odd number of items");
        return -1;
    }
    for (Py_ssize_t k = 0; k < n; k += 2) {
        if (!key_ok(r, items[k])) {
            PyObject *keep;
            const char *name = type_name(items[k], &keep);
            fail(r->limit, "a dict key of type %s (keys are strings or integers below 2**60: anything else could cost "
                 "more to hash than the file is long)", name);
            Py_XDECREF(keep);
            return -1;
        }
        if (PyDict_SetItem(d, items[k], items[k + 1]) < 0) return -1;
    }
    return place(r, d, items + 1, n - 1, 2);
}

/* Python's ``compacted`` for one item placed in ``lst``: a new reference to what goes into the list. */
static PyObject *compacted(R *r, PyObject *x, PyObject *lst) {
    if (!PyDict_CheckExact(x) || is_sealed(&r->t, x)) return Py_NewRef(x);
    PyObject *y = PyObject_CallFunctionObjArgs(r->compact, x, lst, NULL);
    if (!y) return NULL;
    if (y == Py_None) {
        Py_DECREF(y);
        return Py_NewRef(x);
    }
    Py_ssize_t i = 0;
    PyObject *k, *v;
    while (PyDict_Next(x, &i, &k, &v))
        if (exact_container(v) && !is_sealed(&r->t, v)) depth_drop(&r->t, v);
    depth_drop(&r->t, x);
    return y;
}

static int append_items(R *r, PyObject *lst, PyObject **items, Py_ssize_t n) {
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *x = r->compact ? compacted(r, items[i], lst) : Py_NewRef(items[i]);
        if (!x) return -1;
        int rc = PyList_Append(lst, x);
        Py_DECREF(x);
        if (rc < 0) return -1;
    }
    return 0;
}

static PyObject *tuple_of(R *r, PyObject **items, Py_ssize_t n) {
    PyObject *t = PyTuple_New(n);
    if (!t) return NULL;
    for (Py_ssize_t i = 0; i < n; i++) PyTuple_SET_ITEM(t, i, Py_NewRef(items[i]));
    if (!fresh(r, t)) return NULL;
    if (place(r, t, items, n, 1) < 0) {
        Py_DECREF(t);
        return NULL;
    }
    return t;
}

/* ---- the memo ---- */

static inline int fetched(const R *r, long long key) {
    return !r->fetched || (key >= 0 && key < r->fetched_bits && (r->fetched[key >> 3] >> (key & 7)) & 1);
}

/* Python's ``memoize(key)``; ``key_obj`` (when not NULL) is the key as the file spelled it, for the message. */
static int memoize(R *r, long long key, int key_exact, PyObject *key_obj) {
    if (!r->sp || r->stack[r->sp - 1] == MARK) {
        fail(PyExc_ValueError, "pickle: nothing to memoize");
        return -1;
    }
    PyObject *v = r->stack[r->sp - 1];
    int memoizable = PyUnicode_CheckExact(v) || PyList_CheckExact(v) || PyDict_CheckExact(v)
                     || (PyTuple_CheckExact(v) && PyTuple_GET_SIZE(v));
    if (!key_exact || key != r->memoized || v == r->last_memo || !memoizable) {
        PyObject *keep;
        const char *name = type_name(v, &keep);
        if (key_obj)
            fail(r->limit, "memo entry %S of a %s (pickle.dump memoizes each string and container once, in order)",
                 key_obj, name);
        else
            fail(r->limit, "memo entry %lld of a %s (pickle.dump memoizes each string and container once, in order)",
                 key, name);
        Py_XDECREF(keep);
        return -1;
    }
    if (r->memoized == r->memocap) {
        Py_ssize_t cap = r->memocap ? 2 * r->memocap : 1024;
        PyObject **m = realloc(r->memo, (size_t)cap * sizeof(PyObject *));
        if (!m) {
            PyErr_NoMemory();
            return -1;
        }
        r->memo = m;
        r->memocap = cap;
    }
    Py_XSETREF(r->last_memo, Py_NewRef(v));
    int keep = fetched(r, key);
    r->memo[r->memoized++] = keep ? Py_NewRef(v) : NULL;
    if (keep) r->objects++;
    return 0;
}

/* Python's ``get(key)``: the memo entry pushed again, a container sealed. */
static int get(R *r, long long key, int key_exact, PyObject *key_obj) {
    PyObject *v = key_exact && key >= 0 && key < r->memoized ? r->memo[key] : NULL;
    if (!v) {
        if (key_obj) fail(PyExc_ValueError, "pickle: memo %S read before it is written", key_obj);
        else fail(PyExc_ValueError, "pickle: memo %lld read before it is written", key);
        return -1;
    }
    if (exact_container(v)) {
        Slot *s = table_get(&r->t, v);
        if (!s) {
            PyErr_NoMemory();
            return -1;
        }
        s->sealed = 1;
    }
    return push(r, Py_NewRef(v));
}

/* A key Python parsed from text (an int or a bool): its value, and whether it is one a memo can hold. */
static long long text_key(PyObject *key, int *exact) {
    int overflow = 0;
    long long v = PyLong_Check(key) ? PyLong_AsLongLongAndOverflow(key, &overflow) : -1;
    if (v == -1 && PyErr_Occurred()) PyErr_Clear();
    *exact = PyLong_Check(key) && !overflow;
    return v;
}

/* ---- strings and numbers ---- */

static int push_str(R *r, int neg, uint64_t n) {
    const uint8_t *p;
    if (take(r, neg, n, &p) < 0) return -1;
    PyObject *s = PyUnicode_DecodeUTF8((const char *)p, (Py_ssize_t)n, "surrogatepass");
    if (!s) {
        if (PyErr_ExceptionMatches(PyExc_UnicodeDecodeError))
            return rewrap("pickle: a string that is not UTF-8 (", ")");
        return -1;
    }
    r->objects++;
    return push(r, s);
}

static int push_long(R *r, int neg, uint64_t n) {
    if (!neg && n > (uint64_t)r->max_int_bytes) {
        char a[40];
        commas(a, 0, n);
        fail(r->unsafe, "an integer of %s bytes: no snapshot holds one", a);
        return -1;
    }
    const uint8_t *p;
    if (take(r, neg, n, &p) < 0) return -1;
    PyObject *v;
    if (n == 0) {
        v = PyLong_FromLong(0);
    } else if (n <= 8) {
        uint64_t u = le(p, (int)n);
        if (n < 8 && (p[n - 1] & 0x80)) u |= ~(uint64_t)0 << (8 * n);  /* sign-extend */
        v = PyLong_FromLongLong((long long)u);
    } else {
        v = _PyLong_FromByteArray(p, (size_t)n, 1, 1);
    }
    if (!v) return -1;
    r->objects++;
    return push(r, v);
}

/* A Python helper's answer for one text line (``_text_int``, ``_quoted``): a new reference, or NULL. */
static PyObject *call_on_line(PyObject *fn, const uint8_t *p, Py_ssize_t n) {
    PyObject *b = PyBytes_FromStringAndSize((const char *)p, n);
    if (!b) return NULL;
    PyObject *out = PyObject_CallOneArg(fn, b);
    Py_DECREF(b);
    return out;
}

/* ---- the final check: every object of the result is plain data (unpickle._check_plain) ---- */

static int extend_from(PyObject *todo, PyObject *iterable) {
    PyObject *it = PyObject_GetIter(iterable);
    if (!it) return -1;
    PyObject *x;
    while ((x = PyIter_Next(it))) {
        int rc = PyList_Append(todo, x);
        Py_DECREF(x);
        if (rc < 0) break;
    }
    Py_DECREF(it);
    return PyErr_Occurred() ? -1 : 0;
}

static int extend_method(PyObject *todo, PyObject *o, const char *method) {
    PyObject *view = PyObject_CallMethod(o, method, NULL);
    if (!view) return -1;
    int rc = extend_from(todo, view);
    Py_DECREF(view);
    return rc;
}

/* An object the check passes on sight: it holds nothing and is plain. */
static inline int plain_scalar(PyObject *v) {
    return PyUnicode_CheckExact(v) || PyLong_CheckExact(v) || PyFloat_CheckExact(v) || v == Py_None || PyBool_Check(v);
}

/* Queue what ``v`` holds; a plain scalar is skipped: Python would pop it and pass it, so no error moves. */
static inline int queue(PyObject *todo, PyObject *x) {
    return plain_scalar(x) ? 0 : PyList_Append(todo, x);
}

static int check_one(R *r, Table *seen, PyObject *todo, PyObject *v) {
    int container;
    if (plain_scalar(v)) {
        return 0;
    } else if (exact_container(v)) {
        container = 1;
    } else {
        int plain = PyObject_IsInstance(v, r->plain);
        if (plain < 0) return -1;
        int mark = plain ? PyObject_IsInstance(v, r->mark_cls) : 0;
        if (mark < 0) return -1;
        if (!plain || mark) {
            PyObject *keep;
            const char *name = type_name(v, &keep);
            fail(r->unsafe, "a %s in the pickle", name);
            Py_XDECREF(keep);
            return -1;
        }
        int d = PyObject_IsInstance(v, (PyObject *)&PyDict_Type);
        int l = d ? 0 : PyObject_IsInstance(v, (PyObject *)&PyList_Type);
        int t = d || l ? 0 : PyObject_IsInstance(v, (PyObject *)&PyTuple_Type);
        if (d < 0 || l < 0 || t < 0) return -1;
        container = d || l || t;
        if (!container) return 0;
    }
    Slot *s = table_find(seen, v);
    if (s) return 0;
    if (!(s = table_get(seen, v))) {
        PyErr_NoMemory();
        return -1;
    }
    if (PyDict_CheckExact(v)) {
        Py_ssize_t i = 0;
        PyObject *k, *x;
        while (PyDict_Next(v, &i, &k, &x))
            if (queue(todo, k) < 0) return -1;
        i = 0;
        while (PyDict_Next(v, &i, &k, &x))
            if (queue(todo, x) < 0) return -1;
        return 0;
    }
    if (PyList_CheckExact(v) || PyTuple_CheckExact(v)) {
        Py_ssize_t n = PySequence_Fast_GET_SIZE(v);
        PyObject **xs = PySequence_Fast_ITEMS(v);
        for (Py_ssize_t i = 0; i < n; i++)
            if (queue(todo, xs[i]) < 0) return -1;
        return 0;
    }
    int is_dict = PyObject_IsInstance(v, (PyObject *)&PyDict_Type);
    if (is_dict < 0) return -1;
    if (is_dict) return extend_method(todo, v, "keys") < 0 ? -1 : extend_method(todo, v, "values");
    return extend_from(todo, v);
}

static int check_plain(R *r, PyObject *value) {
    Table seen;
    if (table_init(&seen) < 0) {
        PyErr_NoMemory();
        return -1;
    }
    PyObject *todo = PyList_New(0);
    int rc = todo && PyList_Append(todo, value) == 0 ? 0 : -1;
    while (rc == 0 && PyList_GET_SIZE(todo)) {
        Py_ssize_t last = PyList_GET_SIZE(todo) - 1;
        PyObject *v = Py_NewRef(PyList_GET_ITEM(todo, last));
        if (PyList_SetSlice(todo, last, last + 1, NULL) < 0) rc = -1;
        else rc = check_one(r, &seen, todo, v);
        Py_DECREF(v);
    }
    Py_XDECREF(todo);
    free(seen.slots);
    return rc;
}

/* ---- the first pass: which memo keys the file fetches (unpickle.fetched_keys, step for step) ---- */

static int mark_fetched(R *r, uint64_t key) {
    /* a key past the opcodes read so far was never memoized before this fetch (one opcode a key): the fetch fails in
     * the second pass whether it is marked or not */
    if (key > (uint64_t)AT(r)) return 0;
    if ((Py_ssize_t)key >= r->fetched_bits) {
        Py_ssize_t bits = r->fetched_bits ? r->fetched_bits : 4096;
        while (bits <= (Py_ssize_t)key) bits *= 2;
        uint8_t *f = realloc(r->fetched, (size_t)(bits / 8));
        if (!f) {
            PyErr_NoMemory();
            return -1;
        }
        memset(f + r->fetched_bits / 8, 0, (size_t)((bits - r->fetched_bits) / 8));
        r->fetched = f;
        r->fetched_bits = bits;
    }
    r->fetched[key >> 3] |= (uint8_t)(1u << (key & 7));
    return 0;
}

/* Bytes of an opcode's fixed argument; -1 a length-prefixed one (prefix_size > 0) or a text line. */
static int arg_size(int op, int *prefix_size, int *prefix_signed) {
    *prefix_size = 0;
    *prefix_signed = 0;
    switch (op) {
    case 0x80: case 0x4B: case 0x68: case 0x71: case 0x82: return 1;
    case 0x4D: case 0x83: return 2;
    case 0x4A: case 0x6A: case 0x72: case 0x84: return 4;
    case 0x95: case 0x47: return 8;
    case 0x8C: case 0x55: case 0x43: case 0x8A: *prefix_size = 1; return -1;
    case 0x58: case 0x42: *prefix_size = 4; return -1;
    case 0x54: case 0x8B: *prefix_size = 4; *prefix_signed = 1; return -1;
    case 0x8D: case 0x8E: case 0x96: *prefix_size = 8; return -1;
    case 0x49: case 0x4C: case 0x46: case 0x53: case 0x56: case 0x70: case 0x67: case 0x50: case 0x63: case 0x69:
        return -1;
    default: return 0;
    }
}

/* Step over n bytes: in the window, or past it (read from the stream and dropped; the pass stops at its end). */
static int skip(R *r, uint64_t n) {
    Py_ssize_t have = r->len - r->pos;
    if (n <= (uint64_t)have) {
        r->pos += (Py_ssize_t)n;
        return 0;
    }
    r->pos = r->len;
    if (!r->src) return 0;
    n -= (uint64_t)have;
    r->base += r->len;
    r->pos = r->len = 0;
    Py_CLEAR(r->win);
    r->raw = NULL;
    while (n) {
        PyObject *part = PyObject_CallFunction(r->src, "n", (Py_ssize_t)(n < (uint64_t)r->chunk ? n : (uint64_t)r->chunk));
        if (!part) return -1;
        Py_ssize_t k = PyBytes_Check(part) ? PyBytes_GET_SIZE(part) : -1;
        Py_DECREF(part);
        if (k < 0) {
            PyErr_SetString(PyExc_TypeError, "_cpickle: a stream's read(n) must give bytes");
            return -1;
        }
        if (!k) break;
        if ((uint64_t)k > n) k = (Py_ssize_t)n;
        r->base += k;
        n -= (uint64_t)k;
    }
    return 0;
}

static int find_fetched(R *r) {
    for (;;) {
        int m = more(r, 1);
        if (m <= 0) {
            if (m < 0) return -1;
            break;
        }
        int op = r->raw[r->pos++], psize, psigned;
        int n = arg_size(op, &psize, &psigned);
        if (op == 0x68) {
            if ((m = more(r, 1)) < 0) return -1;
            if (m && mark_fetched(r, r->raw[r->pos]) < 0) return -1;
        } else if (op == 0x6A) {
            if ((m = more(r, 4)) < 0) return -1;
            if (m && mark_fetched(r, le(r->raw + r->pos, 4)) < 0) return -1;
        } else if (op == 0x2E) {
            break;
        }
        if (n >= 0) {
            if (skip(r, (uint64_t)n) < 0) return -1;
            continue;
        }
        if (psize) {
            if ((m = more(r, psize)) <= 0) {
                if (m < 0) return -1;
                break;
            }
            uint64_t length = le(r->raw + r->pos, psize);
            if (psigned && (length & 0x80000000u)) break;
            r->pos += psize;
            if (skip(r, length) < 0) return -1;
            continue;
        }
        /* the newline in the window, else in all a line may be, read on: the window is read on only where it ends
         * before the line does (read on for every line, a text pickle's window was copied once a line: quadratic) */
        Py_ssize_t room = r->len - r->pos;
        if (r->max_line < room) room = r->max_line < 0 ? 0 : (Py_ssize_t)r->max_line;
        const uint8_t *nl = room > 0 ? memchr(r->raw + r->pos, '\n', (size_t)room) : NULL;
        if (!nl && r->max_line > r->len - r->pos) {
            if (more(r, (Py_ssize_t)r->max_line) < 0) return -1;
            room = r->len - r->pos;
            if (r->max_line < room) room = (Py_ssize_t)r->max_line;
            nl = room > 0 ? memchr(r->raw + r->pos, '\n', (size_t)room) : NULL;
        }
        if (!nl) break;
        const uint8_t *at = r->raw + r->pos;
        if (op == 0x67) {  /* GET: the key as int() reads it, or the pass stops there */
            PyObject *b = PyBytes_FromStringAndSize((const char *)at, nl - at);
            PyObject *k = b ? PyNumber_Long(b) : NULL;
            Py_XDECREF(b);
            if (!k) {
                if (!PyErr_ExceptionMatches(PyExc_ValueError)) return -1;
                PyErr_Clear();
                break;
            }
            int overflow;
            long long v = PyLong_AsLongLongAndOverflow(k, &overflow);
            Py_DECREF(k);
            if (!overflow && v >= 0 && mark_fetched(r, (uint64_t)v) < 0) return -1;
        }
        r->pos += nl - at + 1;
        if (op == 0x63 || op == 0x69) break;
    }
    if (!r->fetched && mark_fetched(r, 0) == 0) r->fetched[0] = 0;  /* an empty set, not "keep all" */
    return PyErr_Occurred() ? -1 : 0;
}

/* ---- the opcodes ---- */

static PyObject *too_many(R *r) {
    PyObject *exc = PyObject_CallOneArg(r->too_many, r->max_objects_obj);
    if (exc) {
        PyErr_SetObject((PyObject *)Py_TYPE(exc), exc);
        Py_DECREF(exc);
    }
    return NULL;
}

static int op_appends(R *r) {
    PyObject **items, *lst;
    Py_ssize_t n;
    if (pop_mark(r, &items, &n) < 0) return -1;
    int rc = (lst = grow(r, 0)) && place(r, lst, items, n, 1) == 0 && append_items(r, lst, items, n) == 0 ? 0 : -1;
    release_items(items, n);
    return rc;
}

static int op_setitems(R *r) {
    PyObject **items, *d;
    Py_ssize_t n;
    if (pop_mark(r, &items, &n) < 0) return -1;
    int rc = (d = grow(r, 1)) && setitems(r, d, items, n) == 0 ? 0 : -1;
    release_items(items, n);
    return rc;
}

static int op_list(R *r) {
    PyObject **items;
    Py_ssize_t n;
    if (pop_mark(r, &items, &n) < 0) return -1;
    PyObject *lst = PyList_New(n);
    if (lst)
        for (Py_ssize_t i = 0; i < n; i++) PyList_SET_ITEM(lst, i, Py_NewRef(items[i]));
    lst = fresh(r, lst);
    if (lst && place(r, lst, items, n, 1) < 0) Py_CLEAR(lst);
    release_items(items, n);
    return push(r, lst);
}

static int op_tuple(R *r) {
    PyObject **items;
    Py_ssize_t n;
    if (pop_mark(r, &items, &n) < 0) return -1;
    PyObject *t = tuple_of(r, items, n);
    release_items(items, n);
    return push(r, t);
}

static int op_dict(R *r) {
    PyObject **items;
    Py_ssize_t n;
    if (pop_mark(r, &items, &n) < 0) return -1;
    PyObject *d = fresh(r, PyDict_New());
    if (d && setitems(r, d, items, n) < 0) Py_CLEAR(d);
    release_items(items, n);
    return push(r, d);
}

static int op_small_tuple(R *r, int n) {  /* TUPLE1..3: popped last first, as Python pops them */
    PyObject *xs[3] = {NULL, NULL, NULL};
    for (int i = n - 1; i >= 0; i--)
        if (!(xs[i] = pop(r))) {
            release_items(xs + i + 1, n - i - 1);
            return -1;
        }
    PyObject *t = tuple_of(r, xs, n);
    release_items(xs, n);
    return push(r, t);
}

static int op_append(R *r) {
    PyObject *v = pop(r), *lst;
    if (!v) return -1;
    int rc = (lst = grow(r, 0)) && place(r, lst, &v, 1, 1) == 0 && append_items(r, lst, &v, 1) == 0 ? 0 : -1;
    Py_DECREF(v);
    return rc;
}

static int op_setitem(R *r) {
    PyObject *kv[2] = {NULL, NULL}, *d;
    if (!(kv[1] = pop(r))) return -1;
    if (!(kv[0] = pop(r))) {
        Py_DECREF(kv[1]);
        return -1;
    }
    int rc = (d = grow(r, 1)) && setitems(r, d, kv, 2) == 0 ? 0 : -1;
    release_items(kv, 2);
    return rc;
}

/* Text opcodes (protocol 0): parsed by the same functions Python uses, so values and errors are the same. */
static int op_text(R *r, int op) {
    const uint8_t *p;
    Py_ssize_t n;
    if (line(r, &p, &n) < 0)  /* Python reads FLOAT's line inside its try: a missing end of line is a bad FLOAT */
        return op == 'F' ? rewrap("pickle: bad FLOAT (", ")") : -1;
    PyObject *v = NULL;
    if (op == 'I') {
        v = call_on_line(r->text_int, p, n);
    } else if (op == 'L') {
        while (n && p[n - 1] == 'L') n--;
        v = call_on_line(r->text_int, p, n);
    } else if (op == 'F') {
        PyObject *b = PyBytes_FromStringAndSize((const char *)p, n);
        v = b ? PyFloat_FromString(b) : NULL;
        Py_XDECREF(b);
        if (!v) return rewrap("pickle: bad FLOAT (", ")");
    } else if (op == 'V') {
        v = PyUnicode_Decode((const char *)p, n, "raw_unicode_escape", NULL);
        if (!v) {
            if (PyErr_ExceptionMatches(PyExc_UnicodeDecodeError)) return rewrap("pickle: bad UNICODE (", ")");
            return -1;
        }
    } else if (op == 'S') {
        PyObject *b = call_on_line(r->quoted, p, n);
        if (!b) return -1;
        if (!PyBytes_Check(b)) {
            Py_DECREF(b);
            fail(PyExc_TypeError, "_quoted gave no bytes");
            return -1;
        }
        v = PyUnicode_DecodeLatin1(PyBytes_AS_STRING(b), PyBytes_GET_SIZE(b), NULL);
        Py_DECREF(b);
    } else {  /* 'p' PUT, 'g' GET: a key */
        PyObject *key = call_on_line(r->text_int, p, n);
        if (!key) return -1;
        int exact;
        long long k = text_key(key, &exact);
        int rc = op == 'p' ? memoize(r, k, exact, key) : get(r, k, exact, key);
        Py_DECREF(key);
        return rc;
    }
    if (!v) return -1;
    r->objects++;
    return push(r, v);
}

static int op_bytes_text(R *r, int op) {  /* SHORT_BINSTRING / BINSTRING: Python 2's str, read as latin-1 text */
    uint64_t n;
    if (read_u(r, op == 'T' ? 4 : 1, &n) < 0) return -1;
    int neg = op == 'T' && (n & 0x80000000u);
    uint64_t mag = neg ? (uint64_t)(-(int64_t)(int32_t)(uint32_t)n) : n;
    const uint8_t *p;
    if (take(r, neg, mag, &p) < 0) return -1;
    PyObject *v = PyUnicode_DecodeLatin1((const char *)p, (Py_ssize_t)mag, NULL);
    if (!v) return -1;
    r->objects++;
    return push(r, v);
}

/* The opcodes Python's ``rare`` handles, in its order: a refused one first. */
static int rare(R *r, int op) {
    uint64_t u;
    if (r->refused[op]) {
        char a[40];
        commas(a, 0, (uint64_t)(AT(r) - 1));
        fail(r->unsafe, "opcode %U at byte %s: a snapshot is plain data only", r->refused[op], a);
        return -1;
    }
    switch (op) {
    case 0x80:  /* PROTO */
        if (read_u(r, 1, &u) < 0) return -1;
        if (u > 5) {
            fail(PyExc_ValueError, "pickle protocol above 5");
            return -1;
        }
        return 0;
    case 0x95:  /* FRAME: a length prefix, which must fit in the file */
        if (read_u(r, 8, &u) < 0) return -1;
        if (u > (uint64_t)(r->total - AT(r))) {
            char a[40], b[40], c[40];
            commas(a, 0, u);
            commas(b, 0, (uint64_t)AT(r));
            commas(c, 0, (uint64_t)(r->total - AT(r)));
            fail(PyExc_ValueError, "pickle truncated: a frame of %s bytes at byte %s, %s left", a, b, c);
            return -1;
        }
        return 0;
    case 'N': return push(r, Py_NewRef(Py_None));
    case 0x88: return push(r, Py_NewRef(Py_True));
    case 0x89: return push(r, Py_NewRef(Py_False));
    case 'J':
        if (read_u(r, 4, &u) < 0) return -1;
        r->objects++;
        return push(r, PyLong_FromLong((int32_t)(uint32_t)u));
    case 'M':
        if (read_u(r, 2, &u) < 0) return -1;
        r->objects++;
        return push(r, PyLong_FromLong((long)u));
    case 0x8A:  /* LONG1 */
        if (read_u(r, 1, &u) < 0) return -1;
        return push_long(r, 0, u);
    case 0x8B: {  /* LONG4: a signed length */
        if (read_u(r, 4, &u) < 0) return -1;
        int32_t s = (int32_t)(uint32_t)u;
        return push_long(r, s < 0, s < 0 ? (uint64_t)(-(int64_t)s) : (uint64_t)s);
    }
    case 'G':  /* BINFLOAT: big-endian */
        if (need(r, 8) < 0) return -1;
        r->pos += 8;
        r->objects++;
        return push(r, PyFloat_FromDouble(PyFloat_Unpack8((const char *)r->raw + r->pos - 8, 0)));
    case 'I': case 'L': case 'F': case 'V': case 'S': case 'p': case 'g':
        return op_text(r, op);
    case 'X':
        if (read_u(r, 4, &u) < 0) return -1;
        return push_str(r, 0, u);
    case 0x8D:
        if (read_u(r, 8, &u) < 0) return -1;
        return push_str(r, 0, u);
    case 'T': case 'U':
        return op_bytes_text(r, op);
    case ')': return push(r, PyTuple_New(0));
    case 'l': return op_list(r);
    case 't': return op_tuple(r);
    case 'd': return op_dict(r);
    case 0x85: return op_small_tuple(r, 1);
    case 0x86: return op_small_tuple(r, 2);
    case 0x87: return op_small_tuple(r, 3);
    case 'a': return op_append(r);
    case 's': return op_setitem(r);
    case 'q':
        if (read_u(r, 1, &u) < 0) return -1;
        return memoize(r, (long long)u, 1, NULL);
    case 'r':
        if (read_u(r, 4, &u) < 0) return -1;
        return memoize(r, (long long)u, 1, NULL);
    default: {
        PyObject *b = PyBytes_FromStringAndSize((const char *)r->raw + r->pos - 1, 1);
        PyObject *rep = b ? PyObject_Repr(b) : NULL;
        char a[40];
        commas(a, 0, (uint64_t)(AT(r) - 1));
        if (rep) fail(r->unsafe, "unknown opcode %U at byte %s", rep, a);
        Py_XDECREF(b);
        Py_XDECREF(rep);
        return -1;
    }
    }
}

/* Python's ``run``: the hot opcodes of a snapshot first, the others in ``rare``. */
static PyObject *run(R *r) {
    uint64_t u;
    for (;;) {
        if (r->objects > r->max_objects) return too_many(r);
        if (r->pos >= r->len) {
            int m = more(r, 1);
            if (m < 0) return NULL;
            if (!m) return fail(PyExc_ValueError, "pickle ends without STOP (truncated)");
        }
        int op = r->raw[r->pos++], rc;
        switch (op) {
        case 0x68:  /* BINGET */
            rc = read_u(r, 1, &u) < 0 ? -1 : get(r, (long long)u, 1, NULL);
            break;
        case 0x94:  /* MEMOIZE */
            rc = memoize(r, r->memoized, 1, NULL);
            break;
        case 0x8C:  /* SHORT_BINUNICODE */
            rc = read_u(r, 1, &u) < 0 ? -1 : push_str(r, 0, u);
            break;
        case 0x4B:  /* BININT1: not counted, as in Python */
            rc = read_u(r, 1, &u) < 0 ? -1 : push(r, PyLong_FromLong((long)u));
            break;
        case 0x28:  /* MARK */
            if (r->nm == r->mcap) {
                Py_ssize_t cap = r->mcap ? 2 * r->mcap : 64;
                Py_ssize_t *m = realloc(r->marks, (size_t)cap * sizeof(Py_ssize_t));
                if (!m) return PyErr_NoMemory();
                r->marks = m;
                r->mcap = cap;
            }
            r->marks[r->nm++] = r->sp;
            rc = push(r, MARK);
            break;
        case 0x7D:  /* EMPTY_DICT */
            rc = push(r, fresh(r, PyDict_New()));
            break;
        case 0x5D:  /* EMPTY_LIST */
            rc = push(r, fresh(r, PyList_New(0)));
            break;
        case 0x75:  /* SETITEMS */
            rc = op_setitems(r);
            break;
        case 0x65:  /* APPENDS */
            rc = op_appends(r);
            break;
        case 0x6A:  /* LONG_BINGET */
            rc = read_u(r, 4, &u) < 0 ? -1 : get(r, (long long)u, 1, NULL);
            break;
        case 0x2E: {  /* STOP */
            PyObject *value = pop(r);
            if (!value) return NULL;
            if (r->sp) {
                Py_DECREF(value);
                return fail(PyExc_ValueError, "pickle: values left on the stack at STOP");
            }
            if (check_plain(r, value) < 0) {
                Py_DECREF(value);
                return NULL;
            }
            return value;
        }
        default:
            rc = rare(r, op);
        }
        if (rc < 0) return NULL;
    }
}

static void release(R *r) {
    for (Py_ssize_t i = 0; i < r->sp; i++)
        if (r->stack[i] != MARK) Py_DECREF(r->stack[i]);
    for (Py_ssize_t i = 0; i < r->memoized; i++) Py_XDECREF(r->memo[i]);
    Py_XDECREF(r->last_memo);
    free(r->stack);
    free(r->marks);
    free(r->memo);
    free(r->fetched);
    free(r->t.slots);
    Py_XDECREF(r->win);
}

/* Bind the helpers unpickle.py hands over: (UnsafePickle, PickleLimit, _too_many, _text_int, _quoted, _PLAIN, _Mark,
 * _REFUSED, MAX_INT_BYTES, MAX_LINE, MAX_DEPTH, _MAX_INT_KEY). */
static int bind(R *r, PyObject *h) {
    if (!PyTuple_Check(h) || PyTuple_GET_SIZE(h) != 12) {
        PyErr_SetString(PyExc_TypeError, "_cpickle.loads: helpers must be a 12-tuple");
        return -1;
    }
    r->unsafe = PyTuple_GET_ITEM(h, 0);
    r->limit = PyTuple_GET_ITEM(h, 1);
    r->too_many = PyTuple_GET_ITEM(h, 2);
    r->text_int = PyTuple_GET_ITEM(h, 3);
    r->quoted = PyTuple_GET_ITEM(h, 4);
    r->plain = PyTuple_GET_ITEM(h, 5);
    r->mark_cls = PyTuple_GET_ITEM(h, 6);
    PyObject *refused = PyTuple_GET_ITEM(h, 7), *k, *v;
    if (!PyDict_Check(refused)) {
        PyErr_SetString(PyExc_TypeError, "_cpickle.loads: the refused opcodes must be a dict");
        return -1;
    }
    Py_ssize_t i = 0;
    while (PyDict_Next(refused, &i, &k, &v))
        if (PyBytes_Check(k) && PyBytes_GET_SIZE(k) == 1 && PyUnicode_Check(v))
            r->refused[(uint8_t)PyBytes_AS_STRING(k)[0]] = v;
    long long *limits[4] = {&r->max_int_bytes, &r->max_line, &r->max_depth, &r->max_int_key};
    for (int j = 0; j < 4; j++) {
        *limits[j] = PyLong_AsLongLong(PyTuple_GET_ITEM(h, 8 + j));
        if (*limits[j] == -1 && PyErr_Occurred()) return -1;
    }
    return 0;
}

static PyObject *loads(PyObject *Py_UNUSED(self), PyObject *args) {
    Py_buffer buf;
    PyObject *max_objects, *compact, *helpers;
    if (!PyArg_ParseTuple(args, "y*OOO", &buf, &max_objects, &compact, &helpers)) return NULL;
    R r;
    memset(&r, 0, sizeof r);
    r.raw = buf.buf;
    r.len = r.total = buf.len;
    r.compact = compact == Py_None ? NULL : compact;
    r.max_objects_obj = max_objects;
    PyObject *out = NULL;
    r.max_objects = PyLong_AsLongLong(max_objects);
    if (!(r.max_objects == -1 && PyErr_Occurred()) && bind(&r, helpers) == 0) {
        /* The collector is paused while the value is built: what is built can hold no cycle (a container is sealed
         * once shared), so a collection would walk millions of new objects to free nothing. */
        int collecting = PyGC_Disable();
        if (table_init(&r.t) < 0) PyErr_NoMemory();
        else if (!r.compact || find_fetched(&r) == 0) {
            r.pos = 0;  /* the first pass stepped through the same bytes */
            out = run(&r);
        }
        if (collecting) PyGC_Enable();
    }
    release(&r);
    PyBuffer_Release(&buf);
    return out;
}

/* ``unpickle.load``'s first pass: (the bitmap of the memo keys fetched, as bytes; the stream's length, read to its
 * end).  read: the stream's read(n); max_line: unpickle.MAX_LINE. */
static PyObject *scan(PyObject *Py_UNUSED(self), PyObject *args) {
    R r;
    memset(&r, 0, sizeof r);
    PyObject *src;
    long long max_line;
    if (!PyArg_ParseTuple(args, "OnL", &src, &r.chunk, &max_line)) return NULL;
    r.src = src;
    r.total = PY_SSIZE_T_MAX;  /* not known before the pass reads to the end */
    r.max_line = max_line;
    if (r.chunk < 1) r.chunk = 1;
    PyObject *out = NULL;
    if (find_fetched(&r) == 0) {
        Py_ssize_t total = r.base + r.len;  /* then the rest, read to the end: the pass stops at STOP */
        Py_CLEAR(r.win);
        r.raw = NULL;
        r.pos = r.len = 0;
        for (;;) {
            PyObject *part = PyObject_CallFunction(src, "n", r.chunk);
            if (!part) break;
            Py_ssize_t k = PyBytes_Check(part) ? PyBytes_GET_SIZE(part) : -1;
            Py_DECREF(part);
            if (k < 0) PyErr_SetString(PyExc_TypeError, "_cpickle: a stream's read(n) must give bytes");
            if (k <= 0) break;
            total += k;
        }
        if (!PyErr_Occurred())
            out = Py_BuildValue("(y#n)", (const char *)r.fetched, r.fetched_bits / 8, total);
    }
    release(&r);
    return out;
}

/* ``unpickle.load``'s second pass: loads over a stream of ``total`` bytes, keeping the memo keys of ``fetched`` (the
 * first pass's bitmap). */
static PyObject *load(PyObject *Py_UNUSED(self), PyObject *args) {
    PyObject *src, *max_objects, *compact, *helpers;
    Py_buffer bits;
    R r;
    memset(&r, 0, sizeof r);
    if (!PyArg_ParseTuple(args, "OnnOOOy*", &src, &r.total, &r.chunk, &max_objects, &compact, &helpers, &bits))
        return NULL;
    r.src = src;
    if (r.chunk < 1) r.chunk = 1;
    r.compact = compact == Py_None ? NULL : compact;
    r.max_objects_obj = max_objects;
    PyObject *out = NULL;
    r.max_objects = PyLong_AsLongLong(max_objects);
    if (!(r.max_objects == -1 && PyErr_Occurred()) && bind(&r, helpers) == 0) {
        if (r.compact) {
            Py_ssize_t n = bits.len ? bits.len : 1;
            r.fetched = calloc((size_t)n, 1);
            r.fetched_bits = 8 * n;
            if (r.fetched && bits.len) memcpy(r.fetched, bits.buf, (size_t)bits.len);
        }
        if (r.compact && !r.fetched) PyErr_NoMemory();
        else {
            int collecting = PyGC_Disable();  /* as in loads */
            if (table_init(&r.t) < 0) PyErr_NoMemory();
            else out = run(&r);
            if (collecting) PyGC_Enable();
        }
    }
    release(&r);
    PyBuffer_Release(&bits);
    return out;
}

static PyMethodDef methods[] = {
    {"loads", loads, METH_VARARGS,
     "loads(raw, max_objects, compact, helpers): unpickle.loads in C (unpickle.py passes the helpers)."},
    {"scan", scan, METH_VARARGS,
     "scan(read, chunk, max_line) -> (fetched bitmap, length): unpickle.load's first pass over a stream, in C."},
    {"load", load, METH_VARARGS,
     "load(read, total, chunk, max_objects, compact, helpers, fetched): unpickle.load's second pass, in C."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT, "_cpickle", "Compiled plain-data pickle reader (the twin of unpickle.loads).", -1, methods,
    NULL, NULL, NULL, NULL,
};

PyMODINIT_FUNC PyInit__cpickle(void) { return PyModule_Create(&module); }
