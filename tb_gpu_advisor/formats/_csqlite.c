/* The compiled twin of formats/sqlite.py's column reads (int_columns, mixed_columns): one query over one table of
 * an SQLite profile (an Nsight Systems export, a rocmProfileData or rocpd database), stepped through SQLite's C API
 * with the GIL released, each integer column written straight into a native buffer (no Python object per row or
 * value), one text column interned (each distinct text decoded once).
 *
 * formats/sqlite.py stays the reference: it builds the SQL (the same expressions the Python path packs, so the same
 * values), and reads a table itself whenever this file hands it back (returns None): a value that is no integer (a REAL, a
 * TEXT, a BLOB where an integer is read: the Python path's numpy conversion decides what it becomes), a text that is
 * not strict UTF-8 (the Python path then re-reads the file leniently), any SQLite error (damaged pages: the Python
 * path raises its own error on the same rows), a query past the budget.  Nothing is guessed here.
 *
 * No SQLite header or development library is needed to build it: the few prototypes used are declared below, and
 * resolved when the module is imported, from the library Python's own ``_sqlite3`` uses (dlopen of that module, whose
 * dependencies dlsym searches), else ``libsqlite3.so.0`` and its usual names.  When none resolves the import fails
 * with ImportError and the Python path runs.
 *
 * Integer columns grow at the narrowest signed width holding every value so far (1, 2, 4, 8 bytes), widened in place
 * when a value does not fit: the final width is ``model.columns.int_dtype`` of the column's range, the dtype the
 * Python path narrows to, and the memory is the narrow column's, not an int64 one per column.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <dlfcn.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "_utf8.h"

/* ---- the SQLite C API, as much as is used (values from sqlite3.h of every 3.x: they are the stable ABI) ---- */

typedef struct sqlite3 sqlite3;
typedef struct sqlite3_stmt sqlite3_stmt;
typedef long long sqlite_i64;

#define SQ_OK 0
#define SQ_ROW 100
#define SQ_DONE 101
#define SQ_INTEGER 1
#define SQ_TEXT 3
#define SQ_NULL 5
#define SQ_OPEN_READONLY 0x00000001
#define SQ_OPEN_READWRITE 0x00000002
#define SQ_OPEN_CREATE 0x00000004
#define SQ_OPEN_URI 0x00000040
#define SQ_OPEN_NOMUTEX 0x00008000
#define SQ_LIMIT_LENGTH 0
#define SQ_DESERIALIZE_READONLY 4

static struct {
    int (*open_v2)(const char *, sqlite3 **, int, const char *);
    int (*close)(sqlite3 *);
    int (*exec)(sqlite3 *, const char *, void *, void *, char **);
    int (*limit)(sqlite3 *, int, int);
    int (*prepare_v2)(sqlite3 *, const char *, int, sqlite3_stmt **, const char **);
    int (*step)(sqlite3_stmt *);
    int (*finalize)(sqlite3_stmt *);
    int (*column_count)(sqlite3_stmt *);
    int (*column_type)(sqlite3_stmt *, int);
    sqlite_i64 (*column_int64)(sqlite3_stmt *, int);
    const unsigned char *(*column_text)(sqlite3_stmt *, int);
    int (*column_bytes)(sqlite3_stmt *, int);
    void (*progress_handler)(sqlite3 *, int, int (*)(void *), void *);
    const char *(*libversion)(void);
    /* optional: an in-memory export (tables.py's small files) is handed back without it */
    int (*deserialize)(sqlite3 *, const char *, unsigned char *, sqlite_i64, sqlite_i64, unsigned);
} S;

static const char *lib_used = NULL;

static int bind_from(void *h) {
#define SYM(field, name) if (!(*(void **)&S.field = dlsym(h, name))) return -1
    SYM(open_v2, "sqlite3_open_v2");
    SYM(close, "sqlite3_close");
    SYM(exec, "sqlite3_exec");
    SYM(limit, "sqlite3_limit");
    SYM(prepare_v2, "sqlite3_prepare_v2");
    SYM(step, "sqlite3_step");
    SYM(finalize, "sqlite3_finalize");
    SYM(column_count, "sqlite3_column_count");
    SYM(column_type, "sqlite3_column_type");
    SYM(column_int64, "sqlite3_column_int64");
    SYM(column_text, "sqlite3_column_text");
    SYM(column_bytes, "sqlite3_column_bytes");
    SYM(progress_handler, "sqlite3_progress_handler");
    SYM(libversion, "sqlite3_libversion");
#undef SYM
    *(void **)&S.deserialize = dlsym(h, "sqlite3_deserialize");
    return 0;
}

/* The library Python's _sqlite3 uses (its own file first: dlsym searches its dependencies, and a static build's
 * exported symbols), else the names it links.  0, or -1 with nothing bound. */
static int bind_sqlite(void) {
    static char own[4096];
    const char *names[6];
    int n = 0;
    PyObject *mod = PyImport_ImportModule("_sqlite3");
    if (mod) {
        PyObject *file = PyObject_GetAttrString(mod, "__file__");
        const char *s = file && PyUnicode_Check(file) ? PyUnicode_AsUTF8(file) : NULL;
        if (s && strlen(s) < sizeof own) {
            strcpy(own, s);
            names[n++] = own;
        }
        Py_XDECREF(file);
        Py_DECREF(mod);
    }
    PyErr_Clear();
    names[n++] = "libsqlite3.so.0";
    names[n++] = "libsqlite3.so";
    names[n++] = "libsqlite3.0.dylib";
    names[n++] = "/usr/lib/libsqlite3.dylib";
    for (int i = 0; i < n; i++) {
        void *h = dlopen(names[i], RTLD_NOW | RTLD_LOCAL);
        if (!h) continue;
        if (bind_from(h) == 0) {
            lib_used = names[i];
            return 0;
        }
        dlclose(h);
    }
    memset(&S, 0, sizeof S);
    return -1;
}

/* ---- a column of integers at the narrowest width so far ---- */

typedef struct {
    char *data;
    size_t n, cap;
    int w; /* bytes per value: 1, 2, 4, 8 */
} Col;

static inline int width_of(int64_t v) {
    if (v >= INT8_MIN && v <= INT8_MAX) return 1;
    if (v >= INT16_MIN && v <= INT16_MAX) return 2;
    if (v >= INT32_MIN && v <= INT32_MAX) return 4;
    return 8;
}

static inline int64_t get_at(const char *d, int w, size_t i) {
    switch (w) {
    case 1: return ((const int8_t *)d)[i];
    case 2: return ((const int16_t *)d)[i];
    case 4: return ((const int32_t *)d)[i];
    default: return ((const int64_t *)d)[i];
    }
}

static inline void set_at(char *d, int w, size_t i, int64_t v) {
    switch (w) {
    case 1: ((int8_t *)d)[i] = (int8_t)v; break;
    case 2: ((int16_t *)d)[i] = (int16_t)v; break;
    case 4: ((int32_t *)d)[i] = (int32_t)v; break;
    default: ((int64_t *)d)[i] = v; break;
    }
}

/* Widen in place: the buffer grows to the new width, values are moved back to front (value i's new place starts
 * at or after its old one, and after every earlier value's old place). */
static int col_widen(Col *c, int w) {
    if (c->cap) {
        char *d = realloc(c->data, c->cap * (size_t)w);
        if (!d) return -1;
        c->data = d;
        for (size_t i = c->n; i-- > 0;) set_at(d, w, i, get_at(d, c->w, i));
    }
    c->w = w;
    return 0;
}

static inline int col_push(Col *c, int64_t v) {
    int w = width_of(v);
    if (w > c->w && col_widen(c, w) < 0) return -1;
    if (c->n == c->cap) {
        size_t cap = c->cap ? c->cap + c->cap / 2 : 65536;
        if (cap > SIZE_MAX / 8) return -1;
        char *d = realloc(c->data, cap * (size_t)c->w);
        if (!d) return -1;
        c->data = d;
        c->cap = cap;
    }
    set_at(c->data, c->w, c->n++, v);
    return 0;
}

/* ---- the text column: each distinct (cut) text kept once, in first-appearance order ---- */

typedef struct {
    char *arena;          /* the distinct texts, back to back */
    size_t used, size;
    size_t *off, *len;    /* per distinct text */
    size_t count, room;
    uint32_t *slots;      /* open addressing: distinct index + 1, 0 empty */
    uint64_t *hashes;
    size_t mask;
} Interned;

static inline uint64_t hash_bytes(const unsigned char *s, size_t n) {
    uint64_t h = 1469598103934665603ULL;
    for (size_t i = 0; i < n; i++) h = (h ^ s[i]) * 1099511628211ULL;
    return h ^ (h >> 29);
}

static int interned_grow_slots(Interned *t) {
    size_t mask = t->mask ? t->mask * 2 + 1 : 4095;
    uint32_t *slots = calloc(mask + 1, sizeof *slots);
    if (!slots) return -1;
    for (size_t k = 0; k < t->count; k++) {
        size_t i = (size_t)t->hashes[k] & mask;
        while (slots[i]) i = (i + 1) & mask;
        slots[i] = (uint32_t)(k + 1);
    }
    free(t->slots);
    t->slots = slots;
    t->mask = mask;
    return 0;
}

/* The index of text ``s`` (added when new), or -1 out of memory / past 2^31 distinct texts. */
static int64_t intern(Interned *t, const unsigned char *s, size_t n) {
    if ((t->count + 1) * 2 > t->mask + 1 && interned_grow_slots(t) < 0) return -1;
    uint64_t h = hash_bytes(s, n);
    size_t i = (size_t)h & t->mask;
    while (t->slots[i]) {
        size_t k = t->slots[i] - 1;
        if (t->hashes[k] == h && t->len[k] == n && memcmp(t->arena + t->off[k], s, n) == 0) return (int64_t)k;
        i = (i + 1) & t->mask;
    }
    if (t->count >= INT32_MAX) return -1;
    if (t->count == t->room) {
        size_t room = t->room ? t->room * 2 : 1024;
        size_t *off = realloc(t->off, room * sizeof *off);
        if (!off) return -1;
        t->off = off;
        size_t *len = realloc(t->len, room * sizeof *len);
        if (!len) return -1;
        t->len = len;
        uint64_t *hs = realloc(t->hashes, room * sizeof *hs);
        if (!hs) return -1;
        t->hashes = hs;
        t->room = room;
    }
    if (t->used + n > t->size || !t->arena) { /* allocated even for an empty first text: never NULL + 0 */
        size_t size = t->size ? t->size : 65536;
        while (size < t->used + n) size *= 2;
        char *a = realloc(t->arena, size);
        if (!a) return -1;
        t->arena = a;
        t->size = size;
    }
    if (n) memcpy(t->arena + t->used, s, n);
    size_t k = t->count++;
    t->off[k] = t->used;
    t->len[k] = n;
    t->hashes[k] = h;
    t->used += n;
    t->slots[i] = (uint32_t)(k + 1);
    return (int64_t)k;
}

static void interned_free(Interned *t) {
    free(t->arena);
    free(t->off);
    free(t->len);
    free(t->slots);
    free(t->hashes);
}

/* Strict UTF-8 as Python decodes it: no overlong form, no surrogate, nothing past U+10FFFF. */
static int valid_utf8(const unsigned char *s, size_t n) {
    size_t i = 0;
    while (i < n) {
        while (i + 8 <= n) {
            uint64_t word;
            memcpy(&word, s + i, 8);
            if (word & 0x8080808080808080ULL) break;
            i += 8;
        }
        if (i >= n) break;
        unsigned char c = s[i];
        if (c < 0x80) { i++; continue; }
        int len = utf8_sequence(s + i, n - i);
        if (len <= 0) return 0; /* ill-formed, or the sequence runs past the end */
        i += (size_t)len;
    }
    return 1;
}

/* The byte length of the first ``chars`` characters of valid UTF-8 ``s`` (all of it when shorter). */
static size_t prefix_bytes(const unsigned char *s, size_t n, int64_t chars) {
    size_t i = 0;
    for (int64_t c = 0; c < chars && i < n; c++) {
        i++;
        while (i < n && (s[i] & 0xC0) == 0x80) i++;
    }
    return i;
}

/* ---- a native buffer handed to numpy (np.frombuffer), freed with its last view ---- */

typedef struct {
    PyObject_HEAD
    char *data;
    Py_ssize_t size;
    Py_ssize_t exports;
} Buffer;

static void buffer_dealloc(Buffer *b) {
    free(b->data);
    Py_TYPE(b)->tp_free((PyObject *)b);
}

static int buffer_get(Buffer *b, Py_buffer *view, int flags) {
    if (PyBuffer_FillInfo(view, (PyObject *)b, b->data ? b->data : (char *)"", b->size, 0, flags) < 0) return -1;
    b->exports++;
    return 0;
}

static void buffer_release(Buffer *b, Py_buffer *view) {
    (void)view;
    b->exports--;
}

static PyBufferProcs buffer_procs = {(getbufferproc)buffer_get, (releasebufferproc)buffer_release};

static PyTypeObject BufferType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "tb_gpu_advisor.formats._csqlite.Buffer",
    .tp_basicsize = sizeof(Buffer),
    .tp_dealloc = (destructor)buffer_dealloc,
    .tp_as_buffer = &buffer_procs,
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "A column's values in native memory, for numpy.frombuffer.",
};

/* A Buffer that owns ``data`` (shrunk to ``size``), or NULL with an exception (``data`` freed). */
static PyObject *buffer_of(char *data, size_t size) {
    if (data && size) {
        char *d = realloc(data, size);
        if (d) data = d;
    }
    Buffer *b = PyObject_New(Buffer, &BufferType);
    if (!b) {
        free(data);
        return NULL;
    }
    b->data = data;
    b->size = (Py_ssize_t)size;
    b->exports = 0;
    return (PyObject *)b;
}

/* ---- one scan ---- */

typedef struct {
    long long ticks, allowed;
} Budget;

static int on_progress(void *p) {
    Budget *b = p;
    return ++b->ticks > b->allowed ? 1 : 0;
}

enum { DONE = 0, HAND_BACK = 1, NO_MEMORY = 2 };

typedef struct {
    /* in */
    const char *uri;       /* a private copy, or NULL: ``image`` */
    unsigned char *image;
    sqlite_i64 image_size;
    const char *sql;
    int ncols, has_text, cut;
    int length_limit, progress_step;
    /* out */
    Col *cols;
    Col idx;
    Interned strings;
    size_t rows;
    Budget budget;
} Scan;

static int open_db(Scan *s, sqlite3 **db) {
    *db = NULL;
    if (s->uri) {
        if (S.open_v2(s->uri, db, SQ_OPEN_READONLY | SQ_OPEN_URI | SQ_OPEN_NOMUTEX, NULL) != SQ_OK) return -1;
    } else {
        if (!S.deserialize) return -1;
        if (S.open_v2(":memory:", db, SQ_OPEN_READWRITE | SQ_OPEN_CREATE | SQ_OPEN_NOMUTEX, NULL) != SQ_OK) return -1;
        if (S.deserialize(*db, "main", s->image, s->image_size, s->image_size, SQ_DESERIALIZE_READONLY) != SQ_OK)
            return -1;
    }
    /* formats/sqlite.guard's settings: nothing the file defines runs with privileges, no write, no longer string */
    if (S.exec(*db, "PRAGMA trusted_schema = OFF; PRAGMA query_only = ON", NULL, NULL, NULL) != SQ_OK) return -1;
    S.limit(*db, SQ_LIMIT_LENGTH, s->length_limit);
    S.progress_handler(*db, s->progress_step, on_progress, &s->budget);
    return 0;
}

/* One row into the columns: DONE, HAND_BACK (a value of another type, a text that is no UTF-8), NO_MEMORY. */
static int take_row(Scan *s, sqlite3_stmt *st) {
    int64_t cut = 0;
    for (int j = 0; j < s->ncols; j++) {
        if (S.column_type(st, j) != SQ_INTEGER) return HAND_BACK;
        int64_t v = S.column_int64(st, j);
        if (j == s->cut) cut = v;
        if (col_push(&s->cols[j], v) < 0) return NO_MEMORY;
    }
    if (!s->has_text) return DONE;
    int type = S.column_type(st, s->ncols);
    int64_t k = -1;
    if (type == SQ_TEXT) {
        const unsigned char *t = S.column_text(st, s->ncols);
        int n = S.column_bytes(st, s->ncols);
        if (!t || n < 0) return HAND_BACK;
        if (!valid_utf8(t, (size_t)n)) return HAND_BACK;
        size_t keep = cut > 0 ? prefix_bytes(t, (size_t)n, cut - 1) : (size_t)n;
        k = intern(&s->strings, t, keep);
        if (k < 0) return NO_MEMORY;
    } else if (type != SQ_NULL) {
        return HAND_BACK;
    }
    return col_push(&s->idx, k) < 0 ? NO_MEMORY : DONE;
}

static int run_scan(Scan *s) {
    sqlite3 *db = NULL;
    sqlite3_stmt *st = NULL;
    int status = HAND_BACK;
    if (open_db(s, &db) < 0) goto out;
    if (S.prepare_v2(db, s->sql, -1, &st, NULL) != SQ_OK || !st) goto out;
    if (S.column_count(st) != s->ncols + (s->has_text ? 1 : 0)) goto out;
    for (;;) {
        int rc = S.step(st);
        if (rc == SQ_DONE) {
            status = DONE;
            break;
        }
        if (rc != SQ_ROW) break; /* an error, the budget's interrupt: the Python path meets it again */
        int r = take_row(s, st);
        if (r != DONE) {
            status = r;
            break;
        }
        s->rows++;
    }
out:
    if (st) S.finalize(st);
    if (db) S.close(db);
    return status;
}

static void scan_free(Scan *s) {
    if (s->cols)
        for (int j = 0; j < s->ncols; j++) free(s->cols[j].data);
    free(s->cols);
    free(s->idx.data);
    interned_free(&s->strings);
}

/* (width, Buffer) of a column; the column's memory passes to the Buffer. */
static PyObject *column_out(Col *c) {
    int w = c->n ? c->w : 8;
    PyObject *buf = buffer_of(c->data, c->n * (size_t)w);
    c->data = NULL;
    if (!buf) return NULL;
    return Py_BuildValue("(iN)", w, buf);
}

static PyObject *strings_out(Interned *t) {
    PyObject *out = PyList_New((Py_ssize_t)t->count);
    if (!out) return NULL;
    for (size_t k = 0; k < t->count; k++) {
        PyObject *u = PyUnicode_DecodeUTF8(t->arena + t->off[k], (Py_ssize_t)t->len[k], "strict");
        if (!u) {
            Py_DECREF(out);
            return NULL;
        }
        PyList_SET_ITEM(out, (Py_ssize_t)k, u);
    }
    return out;
}

PyDoc_STRVAR(scan_doc,
"scan(target, sql, ncols, has_text, cut, length_limit, allowed_ticks, progress_step)\n"
"-> (ticks, None | (rows, [(width, Buffer)] * ncols, (width, Buffer) | None, [str] | None))\n\n"
"Step ``sql`` on its own read-only connection to ``target`` (a ``file:`` URI, or a buffer holding the whole\n"
"database, deserialized read-only in place), the GIL released.  Its first ``ncols`` result columns must be\n"
"integers; with ``has_text`` the next one is a text or NULL, cut before the 1-based character position in integer\n"
"column ``cut`` where that is > 0 (``cut`` < 0: never), interned: per row the index of its text among the\n"
"distinct texts (-1 for NULL), and those texts in first-appearance order.  ``ticks``: progress calls spent\n"
"(every ``progress_step`` VM steps; interrupted past ``allowed_ticks``).  None where the Python path must read\n"
"the table (a value of another type, a text that is no UTF-8, any SQLite error or interrupt).");

static PyObject *scan(PyObject *self, PyObject *args) {
    (void)self;
    PyObject *target;
    const char *sql;
    int ncols, has_text, cut, length_limit, progress_step;
    long long allowed;
    if (!PyArg_ParseTuple(args, "OsipiiLi", &target, &sql, &ncols, &has_text, &cut, &length_limit, &allowed,
                          &progress_step))
        return NULL;
    if (ncols < 0 || ncols > 64 || cut >= ncols || progress_step < 1) {
        PyErr_SetString(PyExc_ValueError, "scan: bad column count, cut column or progress step");
        return NULL;
    }
    Scan s;
    memset(&s, 0, sizeof s);
    s.sql = sql;
    s.ncols = ncols;
    s.has_text = has_text;
    s.cut = has_text ? cut : -1;
    s.length_limit = length_limit;
    s.progress_step = progress_step;
    s.budget.allowed = allowed;
    s.idx.w = 1;
    Py_buffer view;
    int have_view = 0;
    PyObject *uri = NULL;
    if (PyUnicode_Check(target)) {
        uri = target;
        s.uri = PyUnicode_AsUTF8(target);
        if (!s.uri) return NULL;
    } else {
        if (PyObject_GetBuffer(target, &view, PyBUF_SIMPLE) < 0) return NULL;
        have_view = 1;
        s.image = view.buf;
        s.image_size = view.len;
    }
    (void)uri;
    s.cols = calloc((size_t)(ncols ? ncols : 1), sizeof(Col));
    if (!s.cols) {
        if (have_view) PyBuffer_Release(&view);
        return PyErr_NoMemory();
    }
    for (int j = 0; j < ncols; j++) s.cols[j].w = 1;
    int status;
    Py_BEGIN_ALLOW_THREADS
    status = allowed >= 0 ? run_scan(&s) : HAND_BACK;
    Py_END_ALLOW_THREADS
    if (have_view) PyBuffer_Release(&view);
    PyObject *result = NULL;
    if (status == NO_MEMORY) {
        scan_free(&s);
        return PyErr_NoMemory();
    }
    if (status == HAND_BACK) {
        scan_free(&s);
        return Py_BuildValue("(LO)", s.budget.ticks, Py_None);
    }
    PyObject *cols = PyList_New(ncols);
    if (!cols) goto fail;
    for (int j = 0; j < ncols; j++) {
        PyObject *c = column_out(&s.cols[j]);
        if (!c) {
            Py_DECREF(cols);
            goto fail;
        }
        PyList_SET_ITEM(cols, j, c);
    }
    PyObject *idx = Py_None, *strings = Py_None;
    Py_INCREF(Py_None);
    Py_INCREF(Py_None);
    if (has_text) {
        Py_DECREF(idx);
        Py_DECREF(strings);
        idx = column_out(&s.idx);
        strings = idx ? strings_out(&s.strings) : NULL;
        if (!idx || !strings) {
            Py_XDECREF(idx);
            Py_XDECREF(strings);
            Py_DECREF(cols);
            goto fail;
        }
    }
    result = Py_BuildValue("(L(nNNN))", s.budget.ticks, (Py_ssize_t)s.rows, cols, idx, strings);
fail:
    scan_free(&s);
    return result;
}

static PyObject *library(PyObject *self, PyObject *args) {
    (void)self;
    (void)args;
    return Py_BuildValue("(ss)", lib_used ? lib_used : "", S.libversion ? S.libversion() : "");
}

static PyMethodDef methods[] = {
    {"scan", scan, METH_VARARGS, scan_doc},
    {"library", library, METH_NOARGS, "(the file the SQLite functions were found in, its SQLite version)."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT, "_csqlite",
    "SQLite profile columns read through SQLite's C API (the twin of formats/sqlite.py's reads).", -1, methods,
    NULL, NULL, NULL, NULL,
};

PyMODINIT_FUNC PyInit__csqlite(void) {
    if (bind_sqlite() < 0) {
        PyErr_SetString(PyExc_ImportError, "no SQLite library found (neither _sqlite3's nor libsqlite3.so.0)");
        return NULL;
    }
    if (PyType_Ready(&BufferType) < 0) return NULL;
    return PyModule_Create(&module);
}
