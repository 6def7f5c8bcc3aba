/* The fast path of the ARFF data-section reader: one pass over UTF-8 bytes, no Python object per value.
 *
 * A Parser is built from the header (kind of each attribute, declared nominal values, the string
 * tables, converters for dates) and fed buffers of data lines. It appends values to growable C
 * buffers (a dense row-major matrix, or CSR arrays) and hands them over as buffer objects that numpy
 * wraps without a copy. It never writes an error message: on any irregularity in a line (a syntax
 * error, an undeclared value, a quote that is not closed, a value it does not handle itself) it stops
 * before that line and reports where, and the strict tokenizer in arff_data.py re-reads the line, so
 * that every error names the same line and text whichever path met it.
 *
 * The grammar is the one arff_data.StrictRows implements (see its docstring): bytes 0x00-0x20 are
 * whitespace, a value ends at whitespace or one of , { } ' " %, values are separated by a comma or by
 * whitespace, quoted values take Java StreamTokenizer escapes, numbers are ASCII decimal/scientific.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <math.h>
#if defined(__linux__)
#include <sys/mman.h>
#include <unistd.h>
#endif

/* ------------------------------------------------------------------ growable byte buffers
 *
 * The output arrays grow while rows are read, to sizes not known in advance. Grown by realloc, a
 * buffer is copied whenever the heap cannot extend it in place, and on Linux the old copies stay
 * resident: glibc raises its mmap threshold to the size of every mapped block freed (up to 32 MiB),
 * so buffers of a few MiB live on the heap, where the blocks given up on the way (1 + 1/1.5 +
 * 1/1.5^2 ... of the final size) were measured at 1.9x the arrays of a 13 MB sparse file in resident
 * memory. So from MAP_FROM bytes on a buffer is pages mapped for it alone, grown with mremap (the
 * pages move, nothing is copied) by an eighth at a time (mremap's cost is the page tables, not the
 * bytes), and given back with munmap when numpy is done with it. Resident memory is then the bytes
 * written, and the allocated size at most 1/8 above them; tracemalloc is told about every mapping
 * (PyTraceMalloc_Track, as numpy does for its own arrays) so that traced figures count them too.
 * Elsewhere than Linux (no mremap), realloc as before. */

#if defined(__linux__) && defined(MREMAP_MAYMOVE)
#define GBUF_MAP 1
#define MAP_FROM ((Py_ssize_t)256 << 10)
#define TRACE_DOMAIN 0x41524646u /* "ARFF": the tracemalloc domain of the mapped buffers */
#else
#define GBUF_MAP 0
#endif

typedef struct {
    char *p;
    Py_ssize_t len; /* bytes used */
    Py_ssize_t cap; /* bytes allocated */
    int mapped;     /* p is an mmap of cap bytes (a multiple of the page size) */
} gbuf;

#if GBUF_MAP
static Py_ssize_t page_round(Py_ssize_t n)
{
    Py_ssize_t page = (Py_ssize_t)sysconf(_SC_PAGESIZE);
    if (page <= 0)
        page = 4096;
    if (n > PY_SSIZE_T_MAX - page)
        return -1;
    return (n + page - 1) / page * page;
}

/* Mappings given up lately, kept for the next buffers: a mapping afresh is faulted in page by page
 * as it is written (4,000 faults for 16 MB, a third of a dense 16 MB file's load in a loop of loads
 * here, where glibc's heap, before, handed back the pages of the last load warm). At most two, each
 * at most CACHE_MAX bytes; marked MADV_FREE, so the kernel may take their pages back under memory
 * pressure (they are then zero pages again). */
#define CACHE_SLOTS 2
#define CACHE_MAX ((Py_ssize_t)32 << 20)
static struct {
    char *p;
    Py_ssize_t cap;
} map_cache[CACHE_SLOTS];

/* A cached mapping (the largest), or NULL. */
static char *cache_take(Py_ssize_t *cap)
{
    int best = -1;
    for (int i = 0; i < CACHE_SLOTS; i++)
        if (map_cache[i].p != NULL && (best < 0 || map_cache[i].cap > map_cache[best].cap))
            best = i;
    if (best < 0)
        return NULL;
    char *p = map_cache[best].p;
    *cap = map_cache[best].cap;
    map_cache[best].p = NULL;
    map_cache[best].cap = 0;
    return p;
}

/* Grow (or start) the mapping of b to at least want bytes. */
static int gbuf_remap(gbuf *b, Py_ssize_t want)
{
    Py_ssize_t cap = b->cap + b->cap / 8;
    if (cap < want)
        cap = want;
    cap = page_round(cap);
    if (cap < 0) {
        PyErr_NoMemory();
        return -1;
    }
    char *p;
    if (b->mapped) {
        p = mremap(b->p, (size_t)b->cap, (size_t)cap, MREMAP_MAYMOVE);
        if (p == MAP_FAILED) {
            PyErr_NoMemory();
            return -1;
        }
        PyTraceMalloc_Untrack(TRACE_DOMAIN, (uintptr_t)b->p);
    }
    else {
        Py_ssize_t have = 0;
        p = cache_take(&have);
        if (p != NULL && have < cap) {
            char *q = mremap(p, (size_t)have, (size_t)cap, MREMAP_MAYMOVE);
            if (q == MAP_FAILED) {
                munmap(p, (size_t)have);
                p = NULL;
            }
            else
                p = q;
        }
        else if (p != NULL)
            cap = have; /* the whole mapping (shrunk when handed over) */
        if (p == NULL) {
            p = mmap(NULL, (size_t)cap, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
            if (p == MAP_FAILED) {
                PyErr_NoMemory();
                return -1;
            }
        }
        if (b->len)
            memcpy(p, b->p, (size_t)b->len); /* at most MAP_FROM bytes, once */
        PyMem_RawFree(b->p);
    }
    PyTraceMalloc_Track(TRACE_DOMAIN, (uintptr_t)p, (size_t)cap);
    b->p = p;
    b->cap = cap;
    b->mapped = 1;
    return 0;
}

static void unmap(char *p, Py_ssize_t cap)
{
    PyTraceMalloc_Untrack(TRACE_DOMAIN, (uintptr_t)p);
    if (cap <= CACHE_MAX) {
        int slot = -1; /* an empty slot, else the smallest mapping if smaller than this one */
        for (int i = 0; i < CACHE_SLOTS; i++) {
            if (map_cache[i].p == NULL) {
                slot = i;
                break;
            }
            if (map_cache[i].cap < cap && (slot < 0 || map_cache[i].cap < map_cache[slot].cap))
                slot = i;
        }
        if (slot >= 0) {
            if (map_cache[slot].p != NULL)
                munmap(map_cache[slot].p, (size_t)map_cache[slot].cap);
#ifdef MADV_FREE
            madvise(p, (size_t)cap, MADV_FREE);
#endif
            map_cache[slot].p = p;
            map_cache[slot].cap = cap;
            return;
        }
    }
    munmap(p, (size_t)cap);
}
#endif

static int gbuf_reserve(gbuf *b, Py_ssize_t extra)
{
    if (extra <= b->cap - b->len)
        return 0;
    if (extra > PY_SSIZE_T_MAX - b->len) {
        PyErr_NoMemory();
        return -1;
    }
    Py_ssize_t want = b->len + extra;
#if GBUF_MAP
    if (b->mapped || want > MAP_FROM)
        return gbuf_remap(b, want);
#endif
    Py_ssize_t cap = b->cap ? b->cap : 1024;
    while (cap < want) {
        if (cap > PY_SSIZE_T_MAX / 3) {
            cap = want;
            break;
        }
        cap += cap / 2;
    }
    char *p = PyMem_RawRealloc(b->p, (size_t)cap);
    if (p == NULL) {
        PyErr_NoMemory();
        return -1;
    }
    b->p = p;
    b->cap = cap;
    return 0;
}

/* give back memory of either origin: a mapping of cap bytes, or the raw heap */
static void release_memory(char *p, Py_ssize_t cap, int mapped)
{
#if GBUF_MAP
    if (mapped) {
        unmap(p, cap);
        return;
    }
#else
    (void)cap;
    (void)mapped;
#endif
    PyMem_RawFree(p);
}

static void gbuf_free(gbuf *b)
{
    release_memory(b->p, b->cap, b->mapped);
    b->p = NULL;
    b->len = b->cap = 0;
    b->mapped = 0;
}

#define GB_D(b) ((double *)(b).p)
#define GB_I32(b) ((int32_t *)(b).p)
#define GB_I64(b) ((int64_t *)(b).p)

/* ------------------------------------------------------------------ Buf: memory handed to numpy */

typedef struct {
    PyObject_HEAD
    char *p;
    Py_ssize_t len;
    Py_ssize_t cap;  /* the mapped size when mapped */
    int mapped;
} BufObject;

static char empty_bytes[8];

static int Buf_getbuffer(BufObject *self, Py_buffer *view, int flags)
{
    return PyBuffer_FillInfo(view, (PyObject *)self, self->p ? self->p : empty_bytes, self->len, 0, flags);
}

static void Buf_dealloc(BufObject *self)
{
    release_memory(self->p, self->cap, self->mapped);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

static PyBufferProcs Buf_as_buffer = {(getbufferproc)Buf_getbuffer, NULL};

static PyTypeObject BufType = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "toolkit.data._arffscan.Buf",
    .tp_basicsize = sizeof(BufObject),
    .tp_dealloc = (destructor)Buf_dealloc,
    .tp_as_buffer = &Buf_as_buffer,
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "Memory filled by the parser, exposed through the buffer protocol.",
};

/* Move a gbuf's memory (shrunk to its length) into a new Buf; the gbuf is left empty. */
static PyObject *gbuf_take(gbuf *b)
{
    BufObject *o = PyObject_New(BufObject, &BufType);
    if (o == NULL)
        return NULL;
    o->mapped = 0;
    o->cap = 0;
    if (b->len == 0) {
        gbuf_free(b);
        o->p = NULL;
        o->len = 0;
        return (PyObject *)o;
    }
#if GBUF_MAP
    if (b->mapped) {
        /* shrinking a mapping never moves it: the pages past the length go back */
        Py_ssize_t cap = page_round(b->len);
        if (cap > 0 && cap < b->cap && mremap(b->p, (size_t)b->cap, (size_t)cap, 0) != MAP_FAILED) {
            PyTraceMalloc_Untrack(TRACE_DOMAIN, (uintptr_t)b->p);
            PyTraceMalloc_Track(TRACE_DOMAIN, (uintptr_t)b->p, (size_t)cap);
            b->cap = cap;
        }
        o->p = b->p;
        o->len = b->len;
        o->cap = b->cap;
        o->mapped = 1;
        b->p = NULL;
        b->len = b->cap = 0;
        b->mapped = 0;
        return (PyObject *)o;
    }
#endif
    char *p = PyMem_RawRealloc(b->p, (size_t)b->len);
    o->p = p ? p : b->p;
    o->len = b->len;
    b->p = NULL;
    b->len = b->cap = 0;
    return (PyObject *)o;
}

/* ------------------------------------------------------------------ nominal lookup tables
 *
 * The declared values of a nominal attribute, looked up for every value read. The header is input
 * too: values chosen to collide under a fixed hash would make every lookup walk the whole table
 * (quadratic time). So the hash takes a key drawn once per process (os.urandom), and no lookup
 * probes further than the longest probe sequence met while building the table; a table
 * whose building would probe more than PROBE_LIMIT slots for one value is replaced by the values
 * in sorted order, searched by bisection (log n comparisons whatever the hash does). Codes are the
 * declared positions either way. */

typedef struct {
    const char *s; /* NULL: empty slot */
    Py_ssize_t n;
    double code;
} nslot;

typedef struct {
    nslot *slots;     /* hash table (NULL when sorted is used) */
    size_t mask;
    size_t max_probe; /* the longest probe sequence of the build: a lookup that goes further fails */
    nslot *sorted;    /* the values ordered by (length, bytes), when the hash table would be slow */
    Py_ssize_t n_sorted;
    uint64_t k0, k1;  /* the key the table was built with */
    int constant;     /* tests only: every value hashes alike */
} ntable;

#define PROBE_LIMIT 64

static uint64_t hash_k0, hash_k1;  /* drawn at import */
static int hash_constant;          /* tests only (_constant_hash_for_tests) */
static uint64_t probe_count;       /* slots and comparisons visited by lookups and builds (_probes) */

/* A little-endian word from p (memcpy: any alignment, one load). */
static inline uint64_t load_le64(const unsigned char *p)
{
    uint64_t w;
    memcpy(&w, p, 8);
#if !PY_LITTLE_ENDIAN
    w = __builtin_bswap64(w);
#endif
    return w;
}

static inline uint64_t load_le32(const unsigned char *p)
{
    uint32_t w;
    memcpy(&w, p, 4);
#if !PY_LITTLE_ENDIAN
    w = __builtin_bswap32(w);
#endif
    return w;
}

/* MurmurHash3's finaliser: a bijection in which every output bit depends on every input bit. */
static inline uint64_t fmix64(uint64_t x)
{
    x ^= x >> 33;
    x *= 0xff51afd7ed558ccdULL;
    x ^= x >> 33;
    x *= 0xc4ceb9fe1a85ec53ULL;
    x ^= x >> 33;
    return x;
}

/* The hash of s[0:n] under the key (k0, k1): the length and k0 start the state, each 8-byte word is
 * mixed in through fmix64, and the last word (the last 8 bytes, overlapping the one before; for a
 * shorter value, loads that cover every byte) goes in with k1. As fast as the FNV-1a it replaces
 * (2 multiplications a word instead of 1 a byte); not a cryptographic function: the bound on probes
 * above is what guarantees the work, the key only keeps a crafted header from reaching it. */
static uint64_t keyed_hash(uint64_t k0, uint64_t k1, const char *s, Py_ssize_t n)
{
    const unsigned char *m = (const unsigned char *)s;
    size_t len = (size_t)n;
    uint64_t h = k0 ^ (len * 0x9e3779b97f4a7c15ULL), last;
    if (len >= 8) {
        for (size_t i = 0; i + 8 < len; i += 8)
            h = fmix64(h ^ load_le64(m + i));
        last = load_le64(m + len - 8);
    }
    else if (len >= 4)
        last = load_le32(m) | (load_le32(m + len - 4) << 32);
    else if (len > 0)
        last = ((uint64_t)m[0] << 16) | ((uint64_t)m[len >> 1] << 8) | m[len - 1];
    else
        last = 0;
    return fmix64(h ^ last ^ k1);
}

static inline size_t ntable_home(const ntable *t, const char *s, Py_ssize_t n)
{
    return t->constant ? 0 : (size_t)keyed_hash(t->k0, t->k1, s, n) & t->mask;
}

/* Order of the sorted fallback: by length, then bytes, then code (so a repeat sorts after the first). */
static int nslot_cmp(const void *pa, const void *pb)
{
    const nslot *a = pa, *b = pb;
    if (a->n != b->n)
        return a->n < b->n ? -1 : 1;
    int c = memcmp(a->s, b->s, (size_t)a->n);
    if (c)
        return c;
    return (a->code > b->code) - (a->code < b->code);
}

static int ntable_build_sorted(ntable *t, PyObject *values)
{
    Py_ssize_t count = PyList_GET_SIZE(values);
    PyMem_RawFree(t->slots);
    t->slots = NULL;
    t->sorted = PyMem_RawMalloc((size_t)(count ? count : 1) * sizeof(nslot));
    if (t->sorted == NULL) {
        PyErr_NoMemory();
        return -1;
    }
    for (Py_ssize_t k = 0; k < count; k++) {
        PyObject *item = PyList_GET_ITEM(values, k); /* checked to be bytes by ntable_build */
        t->sorted[k].s = PyBytes_AS_STRING(item);
        t->sorted[k].n = PyBytes_GET_SIZE(item);
        t->sorted[k].code = (double)k;
    }
    qsort(t->sorted, (size_t)count, sizeof(nslot), nslot_cmp);
    Py_ssize_t kept = 0; /* a repeated value keeps its first code */
    for (Py_ssize_t k = 0; k < count; k++) {
        nslot *e = &t->sorted[k];
        if (kept && t->sorted[kept - 1].n == e->n && memcmp(t->sorted[kept - 1].s, e->s, (size_t)e->n) == 0)
            continue;
        t->sorted[kept++] = *e;
    }
    t->n_sorted = kept;
    return 0;
}

static int ntable_build(ntable *t, PyObject *values)
{
    Py_ssize_t count = PyList_GET_SIZE(values);
    size_t size = 8;
    while (size < (size_t)count * 2 + 2)
        size <<= 1;
    t->slots = PyMem_RawCalloc(size, sizeof(nslot));
    if (t->slots == NULL) {
        PyErr_NoMemory();
        return -1;
    }
    t->mask = size - 1;
    t->max_probe = 0;
    t->k0 = hash_k0;
    t->k1 = hash_k1;
    t->constant = hash_constant;
    for (Py_ssize_t k = 0; k < count; k++) {
        PyObject *item = PyList_GET_ITEM(values, k);
        if (!PyBytes_Check(item)) {
            PyErr_SetString(PyExc_TypeError, "nominal values must be bytes");
            return -1;
        }
    }
    for (Py_ssize_t k = 0; k < count; k++) {
        PyObject *item = PyList_GET_ITEM(values, k);
        const char *s = PyBytes_AS_STRING(item);
        Py_ssize_t n = PyBytes_GET_SIZE(item);
        size_t i = ntable_home(t, s, n), probe = 0;
        while (t->slots[i].s != NULL) {
            probe_count++;
            if (t->slots[i].n == n && memcmp(t->slots[i].s, s, (size_t)n) == 0)
                break; /* a repeated value keeps its first code (the header refuses repeats anyway) */
            if (++probe > PROBE_LIMIT)
                return ntable_build_sorted(t, values);
            i = (i + 1) & t->mask;
        }
        probe_count++;
        if (t->slots[i].s == NULL) {
            t->slots[i].s = s;
            t->slots[i].n = n;
            t->slots[i].code = (double)k;
        }
        if (probe > t->max_probe)
            t->max_probe = probe;
    }
    return 0;
}

static int ntable_find(const ntable *t, const char *s, Py_ssize_t n, double *code)
{
    if (t->sorted != NULL) {
        Py_ssize_t lo = 0, hi = t->n_sorted;
        while (lo < hi) {
            Py_ssize_t mid = lo + (hi - lo) / 2;
            const nslot *e = &t->sorted[mid];
            probe_count++;
            int c = e->n != n ? (e->n < n ? -1 : 1) : memcmp(e->s, s, (size_t)n);
            if (c == 0) {
                *code = e->code;
                return 1;
            }
            if (c < 0)
                lo = mid + 1;
            else
                hi = mid;
        }
        return 0;
    }
    size_t i = ntable_home(t, s, n);
    for (size_t probe = 0; probe <= t->max_probe; probe++) {
        const nslot *e = &t->slots[i];
        probe_count++;
        if (e->s == NULL)
            return 0;
        if (e->n == n && memcmp(e->s, s, (size_t)n) == 0) {
            *code = e->code;
            return 1;
        }
        i = (i + 1) & t->mask;
    }
    return 0;
}

static void ntable_free(ntable *t)
{
    PyMem_RawFree(t->slots);
    PyMem_RawFree(t->sorted);
    t->slots = t->sorted = NULL;
}

/* ------------------------------------------------------------------ character classes */

/* 1 where a bare value ends: whitespace (0x00-0x20) and , { } ' " % */
static unsigned char STOP[256];

static void init_tables(void)
{
    for (int c = 0; c <= 0x20; c++)
        STOP[c] = 1;
    STOP[(unsigned char)','] = STOP[(unsigned char)'{'] = STOP[(unsigned char)'}'] = 1;
    STOP[(unsigned char)'\''] = STOP[(unsigned char)'"'] = STOP[(unsigned char)'%'] = 1;
}

#define IS_WS(c) ((unsigned char)(c) <= 0x20)
#define IS_DIGIT(c) ((unsigned char)((c) - '0') < 10)

/* ------------------------------------------------------------------ numbers */

static const double POW10[23] = {1e0,  1e1,  1e2,  1e3,  1e4,  1e5,  1e6,  1e7,  1e8,  1e9,  1e10, 1e11,
                                 1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22};

/* An ASCII decimal or scientific number, NaN or Infinity (with an optional sign), surrounded by
 * optional whitespace (Java's Double.valueOf trims). Returns 0 and sets *out, or -1. The value is
 * correctly rounded: Clinger's fast path when it is exact, CPython's dtoa otherwise. */
static int parse_number(const char *s, Py_ssize_t n, double *out, gbuf *scratch)
{
    while (n > 0 && IS_WS(s[0])) {
        s++;
        n--;
    }
    while (n > 0 && IS_WS(s[n - 1]))
        n--;
    if (n == 0)
        return -1;
    const char *p = s, *e = s + n;
    int neg = 0;
    if (*p == '+' || *p == '-') {
        neg = *p == '-';
        p++;
    }
    if (p == e)
        return -1;
    if (*p == 'N') {
        if (e - p == 3 && memcmp(p, "NaN", 3) == 0) {
            *out = Py_NAN;
            return 0;
        }
        return -1;
    }
    if (*p == 'I') {
        if (e - p == 8 && memcmp(p, "Infinity", 8) == 0) {
            *out = neg ? -Py_HUGE_VAL : Py_HUGE_VAL;
            return 0;
        }
        return -1;
    }
    uint64_t mant = 0;
    int64_t exp10 = 0;
    int digits = 0, exact = 1; /* digits: 0 or 1 (a count would overflow on a 2 GB number) */
    while (p < e && IS_DIGIT(*p)) {
        int d = *p - '0';
        if (mant < 100000000000000000ULL)
            mant = mant * 10 + (uint64_t)d;
        else {
            exp10++;
            if (d)
                exact = 0;
        }
        digits = 1;
        p++;
    }
    if (p < e && *p == '.') {
        p++;
        while (p < e && IS_DIGIT(*p)) {
            int d = *p - '0';
            if (mant < 100000000000000000ULL) {
                mant = mant * 10 + (uint64_t)d;
                exp10--;
            }
            else if (d)
                exact = 0;
            digits = 1;
            p++;
        }
    }
    if (digits == 0)
        return -1;
    if (p < e && (*p == 'e' || *p == 'E')) {
        p++;
        int eneg = 0;
        if (p < e && (*p == '+' || *p == '-')) {
            eneg = *p == '-';
            p++;
        }
        if (p == e || !IS_DIGIT(*p))
            return -1;
        int64_t ev = 0;
        while (p < e && IS_DIGIT(*p)) {
            if (ev < 100000000)
                ev = ev * 10 + (*p - '0');
            p++;
        }
        exp10 += eneg ? -ev : ev;
    }
    if (p != e)
        return -1;
    double v;
    if (mant == 0) {
        v = 0.0;
    }
    else if (exact && mant <= (1ULL << 53) && exp10 >= -22 && exp10 <= 22) {
        v = (double)mant;
        v = exp10 >= 0 ? v * POW10[exp10] : v / POW10[-exp10];
    }
    else {
        /* the grammar was checked: dtoa reads exactly these characters */
        scratch->len = 0;
        if (gbuf_reserve(scratch, n + 1) < 0)
            return -2;
        memcpy(scratch->p, s, (size_t)n);
        scratch->p[n] = '\0';
        v = PyOS_string_to_double(scratch->p, NULL, NULL);
        if (v == -1.0 && PyErr_Occurred()) {
            PyErr_Clear();
            return -1;
        }
        *out = v; /* the sign was read by dtoa */
        return 0;
    }
    *out = neg ? -v : v;
    return 0;
}

/* The longest number taken, in characters after trimming (arff_syntax.MAX_NUMBER_CHARS, where the
 * reason is given): a longer one goes to the strict path, which refuses it. */
#define MAX_NUMBER_CHARS 4096

static int number_too_long(const char *s, Py_ssize_t n)
{
    if (n <= MAX_NUMBER_CHARS)
        return 0;
    while (n > 0 && IS_WS(s[0])) {
        s++;
        n--;
    }
    while (n > 0 && IS_WS(s[n - 1]))
        n--;
    return n > MAX_NUMBER_CHARS;
}

/* A bare number of at most 15 significant digits and a small exponent, read while scanning (no
 * separate token pass): 1 with *pp moved past it when it is exactly that and ends at a delimiter,
 * 0 (nothing consumed) otherwise; the general path then reads the token. Same value as parse_number. */
static inline int quick_number(const char **pp, const char *le, double *out)
{
    const char *p = *pp;
    int neg = 0;
    if (p < le && (*p == '-' || *p == '+')) {
        neg = *p == '-';
        p++;
    }
    uint64_t mant = 0;
    int digits = 0, frac = 0; /* stop at 16 digits: a longer number (of any length) is the general path's */
    while (p < le && IS_DIGIT(*p)) {
        if (++digits > 15)
            return 0;
        mant = mant * 10 + (uint64_t)(*p - '0');
        p++;
    }
    if (p < le && *p == '.') {
        p++;
        while (p < le && IS_DIGIT(*p)) {
            if (++digits > 15)
                return 0;
            mant = mant * 10 + (uint64_t)(*p - '0');
            frac++;
            p++;
        }
    }
    if (digits == 0)
        return 0;
    if (p < le && !STOP[(unsigned char)*p])
        return 0; /* an exponent, or something else: the general path */
    double v = (double)mant;
    if (frac)
        v /= POW10[frac];
    *out = neg ? -v : v;
    *pp = p;
    return 1;
}

/* ------------------------------------------------------------------ tokens */

typedef struct {
    const char *s;
    Py_ssize_t n;
    int quoted;
} token;

/* Append code point c (< 256) as UTF-8. */
static inline char *put_latin1(char *o, unsigned int c)
{
    if (c < 0x80)
        *o++ = (char)c;
    else {
        *o++ = (char)(0xC0 | (c >> 6));
        *o++ = (char)(0x80 | (c & 0x3F));
    }
    return o;
}

/* Resolve Java StreamTokenizer escapes of s[0:n] into scratch (see arff_syntax.unescape). */
static int unescape(const char *s, Py_ssize_t n, gbuf *scratch, token *tok)
{
    scratch->len = 0;
    if (gbuf_reserve(scratch, 2 * n + 1) < 0)
        return -1;
    char *o = scratch->p;
    const char *e = s + n;
    while (s < e) {
        char c = *s++;
        if (c != '\\' || s == e) {
            *o++ = c;
            continue;
        }
        c = *s++;
        if (c >= '0' && c <= '7') {
            unsigned int v = (unsigned int)(c - '0');
            int more = c <= '3' ? 2 : 1;
            while (more-- > 0 && s < e && *s >= '0' && *s <= '7')
                v = v * 8 + (unsigned int)(*s++ - '0');
            o = put_latin1(o, v);
            continue;
        }
        switch (c) {
        case 'n': *o++ = '\n'; break;
        case 't': *o++ = '\t'; break;
        case 'r': *o++ = '\r'; break;
        case 'a': *o++ = '\a'; break;
        case 'b': *o++ = '\b'; break;
        case 'f': *o++ = '\f'; break;
        case 'v': *o++ = '\v'; break;
        default: *o++ = c;
        }
    }
    tok->s = scratch->p;
    tok->n = o - scratch->p;
    return 0;
}

/* Read one value at *pp (which is not whitespace). 1: a token; 0: not a value here; -1: error set. */
static int read_value(const char **pp, const char *le, token *tok, gbuf *scratch)
{
    const char *p = *pp;
    if (p >= le)
        return 0;
    char q = *p;
    if (q == '\'' || q == '"') {
        const char *i = p + 1;
        int esc = 0;
        while (i < le && *i != q) {
            if (*i == '\\') {
                esc = 1;
                i += 2;
            }
            else
                i++;
        }
        if (i >= le)
            return 0; /* unterminated */
        tok->quoted = 1;
        if (esc) {
            if (unescape(p + 1, i - p - 1, scratch, tok) < 0)
                return -1;
        }
        else {
            tok->s = p + 1;
            tok->n = i - p - 1;
        }
        *pp = i + 1;
        return 1;
    }
    if (STOP[(unsigned char)q])
        return 0;
    const char *i = p + 1;
    while (i < le && !STOP[(unsigned char)*i])
        i++;
    tok->s = p;
    tok->n = i - p;
    tok->quoted = 0;
    *pp = i;
    return 1;
}

enum { SEP_END, SEP_COMMA, SEP_WS, SEP_NONE };

/* Skip what separates two tokens; *pp ends on the next token, or at le (SEP_END, and also SEP_COMMA
 * when a comma ends the line: callers check p < le before they look at *p). */
static inline int skip_sep(const char **pp, const char *le)
{
    const char *p = *pp;
    int ws = 0;
    while (p < le && IS_WS(*p)) {
        p++;
        ws = 1;
    }
    if (p < le && *p == ',') {
        p++;
        while (p < le && IS_WS(*p))
            p++;
        *pp = p;
        return SEP_COMMA;
    }
    *pp = p;
    if (p == le || *p == '%')
        return SEP_END;
    return ws ? SEP_WS : SEP_NONE;
}

/* ------------------------------------------------------------------ the parser */

enum { K_NUMERIC = 0, K_NOMINAL = 1, K_STRING = 2, K_DATE = 3, K_RELATIONAL = 4 };

typedef struct {
    PyObject_HEAD
    Py_ssize_t n_attr;
    Py_ssize_t n_feat;
    Py_ssize_t class_index; /* -1: none */
    int sparse;
    unsigned char *kind;
    ntable *nominal;     /* per attribute (slots NULL unless nominal) */
    PyObject **dicts;    /* per attribute: string value -> code (borrowed from keep) */
    PyObject **lists;    /* per attribute: the string table */
    PyObject **convert;  /* per attribute: text -> float, ValueError when it does not parse */
    PyObject *keep;      /* references to everything above */
    Py_ssize_t *feat_of; /* attribute -> feature column (-1 for the class) */
    int64_t *seen;       /* sparse: the row stamp that last used each attribute */
    int64_t stamp;
    /* output */
    gbuf X;       /* dense: n_rows x n_feat doubles; sparse: the CSR data */
    gbuf indices; /* sparse: int32 columns */
    gbuf indptr;  /* sparse: int64, n_rows + 1 */
    gbuf y;       /* class values */
    gbuf w;       /* weights */
    Py_ssize_t n_rows;
    int any_weight;
    Py_ssize_t declined; /* lines handed to the strict path */
    gbuf scratch, nscratch;
} Parser;

static void Parser_clear_arrays(Parser *self)
{
    gbuf_free(&self->X);
    gbuf_free(&self->indices);
    gbuf_free(&self->indptr);
    gbuf_free(&self->y);
    gbuf_free(&self->w);
    self->n_rows = 0;
    self->any_weight = 0;
}

static void Parser_dealloc(Parser *self)
{
    Parser_clear_arrays(self);
    gbuf_free(&self->scratch);
    gbuf_free(&self->nscratch);
    if (self->nominal) {
        for (Py_ssize_t i = 0; i < self->n_attr; i++)
            ntable_free(&self->nominal[i]);
    }
    PyMem_RawFree(self->nominal);
    PyMem_RawFree(self->kind);
    PyMem_RawFree(self->dicts);
    PyMem_RawFree(self->lists);
    PyMem_RawFree(self->convert);
    PyMem_RawFree(self->feat_of);
    PyMem_RawFree(self->seen);
    Py_XDECREF(self->keep);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

static int start_indptr(Parser *self)
{
    if (self->sparse == 1 && self->indptr.len == 0) {
        if (gbuf_reserve(&self->indptr, 8) < 0)
            return -1;
        GB_I64(self->indptr)[0] = 0;
        self->indptr.len = 8;
    }
    return 0;
}

/* Parser(kinds, nominal, strings, converters, class_index, sparse)
 *   kinds: bytes, one kind code per attribute
 *   nominal: list (per attribute) of None or a list of the declared values as UTF-8 bytes
 *   strings: list of None or (dict, list), the string table that codes index
 *   converters: list of None or a callable (dates)
 */
static int Parser_init(Parser *self, PyObject *args, PyObject *kw)
{
    PyObject *kinds, *nominal, *strings, *converters;
    Py_ssize_t class_index;
    int sparse;
    if (!PyArg_ParseTuple(args, "O!O!O!O!ni", &PyBytes_Type, &kinds, &PyList_Type, &nominal, &PyList_Type,
                          &strings, &PyList_Type, &converters, &class_index, &sparse))
        return -1;
    Py_ssize_t n = PyBytes_GET_SIZE(kinds);
    if (PyList_GET_SIZE(nominal) != n || PyList_GET_SIZE(strings) != n || PyList_GET_SIZE(converters) != n) {
        PyErr_SetString(PyExc_ValueError, "one entry per attribute expected");
        return -1;
    }
    if (class_index < -1 || class_index >= n) {
        PyErr_SetString(PyExc_ValueError, "class index out of range");
        return -1;
    }
    self->n_attr = n;
    self->class_index = class_index;
    self->n_feat = n - (class_index >= 0 ? 1 : 0);
    self->sparse = sparse < 0 ? -1 : sparse != 0;
    self->kind = PyMem_RawMalloc((size_t)n + 1);
    self->nominal = PyMem_RawCalloc((size_t)n + 1, sizeof(ntable));
    self->dicts = PyMem_RawCalloc((size_t)n + 1, sizeof(PyObject *));
    self->lists = PyMem_RawCalloc((size_t)n + 1, sizeof(PyObject *));
    self->convert = PyMem_RawCalloc((size_t)n + 1, sizeof(PyObject *));
    self->feat_of = PyMem_RawMalloc(((size_t)n + 1) * sizeof(Py_ssize_t));
    self->seen = PyMem_RawCalloc((size_t)n + 1, sizeof(int64_t));
    self->keep = PyList_New(0);
    if (!self->kind || !self->nominal || !self->dicts || !self->lists || !self->convert || !self->feat_of ||
        !self->seen || !self->keep) {
        PyErr_NoMemory();
        return -1;
    }
    self->stamp = 0;
    memcpy(self->kind, PyBytes_AS_STRING(kinds), (size_t)n);
    Py_ssize_t col = 0;
    for (Py_ssize_t i = 0; i < n; i++) {
        self->feat_of[i] = i == class_index ? -1 : col++;
        unsigned char k = self->kind[i];
        if (k > K_RELATIONAL) {
            PyErr_SetString(PyExc_ValueError, "unknown attribute kind");
            return -1;
        }
        if (k == K_NOMINAL) {
            PyObject *values = PyList_GET_ITEM(nominal, i);
            if (!PyList_Check(values)) {
                PyErr_SetString(PyExc_TypeError, "nominal attribute without a list of values");
                return -1;
            }
            if (PyList_Append(self->keep, values) < 0 || ntable_build(&self->nominal[i], values) < 0)
                return -1;
        }
        else if (k == K_STRING) {
            PyObject *pair = PyList_GET_ITEM(strings, i);
            if (!PyTuple_Check(pair) || PyTuple_GET_SIZE(pair) != 2 || !PyDict_Check(PyTuple_GET_ITEM(pair, 0)) ||
                !PyList_Check(PyTuple_GET_ITEM(pair, 1))) {
                PyErr_SetString(PyExc_TypeError, "string attribute without a (dict, list) table");
                return -1;
            }
            if (PyList_Append(self->keep, pair) < 0)
                return -1;
            self->dicts[i] = PyTuple_GET_ITEM(pair, 0);
            self->lists[i] = PyTuple_GET_ITEM(pair, 1);
        }
        else if (k == K_DATE) {
            PyObject *f = PyList_GET_ITEM(converters, i);
            if (!PyCallable_Check(f)) {
                PyErr_SetString(PyExc_TypeError, "date attribute without a converter");
                return -1;
            }
            if (PyList_Append(self->keep, f) < 0)
                return -1;
            self->convert[i] = f;
        }
    }
    return start_indptr(self);
}

enum { V_OK = 0, V_BAD = 1, V_FAIL = -1 };

/* The first data row decides between a dense matrix and CSR for the whole section. */
static int decide(Parser *self, int sparse)
{
    self->sparse = sparse;
    return start_indptr(self);
}

/* The value of token tok for attribute a. */
static int convert_value(Parser *self, Py_ssize_t a, const token *tok, double *out)
{
    if (!tok->quoted && tok->n == 1 && tok->s[0] == '?') {
        *out = Py_NAN;
        return V_OK;
    }
    switch (self->kind[a]) {
    case K_NUMERIC: {
        if (number_too_long(tok->s, tok->n))
            return V_BAD;
        int r = parse_number(tok->s, tok->n, out, &self->nscratch);
        return r == 0 ? V_OK : (r == -1 ? V_BAD : V_FAIL);
    }
    case K_NOMINAL:
        return ntable_find(&self->nominal[a], tok->s, tok->n, out) ? V_OK : V_BAD;
    case K_STRING: {
        PyObject *s = PyUnicode_DecodeUTF8(tok->s, tok->n, NULL);
        if (s == NULL) {
            if (PyErr_ExceptionMatches(PyExc_UnicodeDecodeError)) {
                PyErr_Clear();
                return V_BAD;
            }
            return V_FAIL;
        }
        PyObject *code = PyDict_GetItemWithError(self->dicts[a], s);
        if (code != NULL) {
            Py_ssize_t k = PyLong_AsSsize_t(code);
            Py_DECREF(s);
            if (k == -1 && PyErr_Occurred())
                return V_FAIL;
            *out = (double)k;
            return V_OK;
        }
        if (PyErr_Occurred()) {
            Py_DECREF(s);
            return V_FAIL;
        }
        Py_ssize_t k = PyList_GET_SIZE(self->lists[a]);
        PyObject *num = PyLong_FromSsize_t(k);
        if (num == NULL || PyList_Append(self->lists[a], s) < 0 || PyDict_SetItem(self->dicts[a], s, num) < 0) {
            Py_XDECREF(num);
            Py_DECREF(s);
            return V_FAIL;
        }
        Py_DECREF(num);
        Py_DECREF(s);
        *out = (double)k;
        return V_OK;
    }
    case K_DATE: {
        PyObject *s = PyUnicode_DecodeUTF8(tok->s, tok->n, NULL);
        if (s == NULL) {
            if (PyErr_ExceptionMatches(PyExc_UnicodeDecodeError)) {
                PyErr_Clear();
                return V_BAD;
            }
            return V_FAIL;
        }
        PyObject *r = PyObject_CallOneArg(self->convert[a], s);
        Py_DECREF(s);
        if (r == NULL) {
            if (PyErr_ExceptionMatches(PyExc_ValueError)) {
                PyErr_Clear();
                return V_BAD;
            }
            return V_FAIL;
        }
        *out = PyFloat_AsDouble(r);
        Py_DECREF(r);
        if (*out == -1.0 && PyErr_Occurred())
            return V_FAIL;
        return V_OK;
    }
    default:
        return V_BAD; /* relational bags: the strict path reads them */
    }
}

/* "{w}" at *pp, then nothing but a comment. */
static int read_weight(Parser *self, const char *p, const char *le, double *w)
{
    token tok;
    p++; /* '{' */
    while (p < le && IS_WS(*p))
        p++;
    if (p >= le)
        return V_BAD;
    int r = read_value(&p, le, &tok, &self->scratch);
    if (r <= 0)
        return r < 0 ? V_FAIL : V_BAD;
    while (p < le && IS_WS(*p))
        p++;
    if (p >= le || *p != '}')
        return V_BAD;
    p++;
    while (p < le && IS_WS(*p))
        p++;
    if (p < le && *p != '%')
        return V_BAD;
    if (number_too_long(tok.s, tok.n))
        return V_BAD;
    int nr = parse_number(tok.s, tok.n, w, &self->nscratch);
    if (nr == -2)
        return V_FAIL;
    if (nr != 0 || !(*w >= 0.0) || *w == Py_HUGE_VAL)
        return V_BAD;
    return V_OK;
}

static int push_sparse(Parser *self, Py_ssize_t col, double v)
{
    if (gbuf_reserve(&self->X, 8) < 0 || gbuf_reserve(&self->indices, 4) < 0)
        return -1;
    GB_D(self->X)[self->X.len / 8] = v;
    GB_I32(self->indices)[self->indices.len / 4] = (int32_t)col;
    self->X.len += 8;
    self->indices.len += 4;
    return 0;
}

/* Move the entry at root down the heap ind[0:n] (a max-heap on the index), values alongside. */
static void sift_down(int32_t *ind, double *val, Py_ssize_t root, Py_ssize_t n)
{
    int32_t c = ind[root];
    double v = val[root];
    for (;;) {
        Py_ssize_t child = 2 * root + 1;
        if (child >= n)
            break;
        if (child + 1 < n && ind[child + 1] > ind[child])
            child++;
        if (ind[child] <= c)
            break;
        ind[root] = ind[child];
        val[root] = val[child];
        root = child;
    }
    ind[root] = c;
    val[root] = v;
}

/* Sort the entries of the row that starts at entry lo (rows may list indices in any order; each index
 * is there once). Insertion sort for short rows, heapsort for long ones: a long row in reverse order
 * costs n log n, not n^2, and no memory. */
static void sort_row(Parser *self, Py_ssize_t lo)
{
    int32_t *ind = GB_I32(self->indices) + lo;
    double *val = GB_D(self->X) + lo;
    Py_ssize_t n = self->indices.len / 4 - lo;
    if (n <= 32) {
        for (Py_ssize_t i = 1; i < n; i++) {
            int32_t c = ind[i];
            double v = val[i];
            Py_ssize_t j = i;
            while (j > 0 && ind[j - 1] > c) {
                ind[j] = ind[j - 1];
                val[j] = val[j - 1];
                j--;
            }
            ind[j] = c;
            val[j] = v;
        }
        return;
    }
    for (Py_ssize_t root = n / 2; root-- > 0;)
        sift_down(ind, val, root, n);
    while (n > 1) {
        n--;
        int32_t c = ind[0];
        double v = val[0];
        ind[0] = ind[n];
        val[0] = val[n];
        ind[n] = c;
        val[n] = v;
        sift_down(ind, val, 0, n);
    }
}

/* Store value v of attribute a in the current row. */
static inline int store(Parser *self, Py_ssize_t a, double v, double *row, double *cls, int *unsorted,
                        Py_ssize_t *last)
{
    Py_ssize_t c = self->feat_of[a];
    if (c < 0) {
        *cls = v;
        return 0;
    }
    if (!self->sparse) {
        row[c] = v;
        return 0;
    }
    if (v == 0.0)
        return 0;
    if (c < *last)
        *unsorted = 1;
    *last = c;
    return push_sparse(self, c, v);
}

static int commit_row(Parser *self, double cls, double weight)
{
    /* every reservation before any write: a failed one leaves the arrays as they were */
    if (gbuf_reserve(&self->y, 8) < 0 || gbuf_reserve(&self->w, 8) < 0 ||
        (self->sparse && gbuf_reserve(&self->indptr, 8) < 0))
        return -1;
    GB_D(self->y)[self->y.len / 8] = cls;
    self->y.len += 8;
    GB_D(self->w)[self->w.len / 8] = weight;
    self->w.len += 8;
    if (weight != 1.0)
        self->any_weight = 1;
    if (self->sparse) {
        GB_I64(self->indptr)[self->indptr.len / 8] = (int64_t)(self->indices.len / 4);
        self->indptr.len += 8;
    }
    else
        self->X.len += self->n_feat * 8;
    self->n_rows++;
    return 0;
}

/* One data line [p, le). Returns 1 (a row was added), 0 (blank or comment), V_BAD as 2 (hand the line
 * over), or -1 (Python error). Nothing of a refused line stays in the output. */
static int parse_line(Parser *self, const char *p, const char *le)
{
    while (p < le && IS_WS(*p))
        p++;
    if (p == le || *p == '%')
        return 0;
    if (self->sparse < 0 && decide(self, *p == '{') < 0)
        return -1;
    double cls = 0.0, weight = 1.0, v;
    double *row = NULL;
    Py_ssize_t start_entries = self->indices.len / 4, start_X = self->X.len;
    Py_ssize_t last = -1;
    int unsorted = 0, r;
    token tok;
    if (!self->sparse) {
        if (gbuf_reserve(&self->X, self->n_feat * 8) < 0)
            return -1;
        row = GB_D(self->X) + self->X.len / 8;
    }
    if (*p == '{') { /* a sparse row: {index value, ...} */
        if (row != NULL)
            memset(row, 0, (size_t)self->n_feat * 8);
        int64_t stamp = ++self->stamp;
        p++;
        while (p < le && IS_WS(*p))
            p++;
        if (p < le && *p == '}')
            p++;
        else {
            for (;;) { /* index, separator, value; then ',' or whitespace and the next pair, or '}' */
                const char *i = p;
                if (i < le && *i == '+')
                    i++;
                const char *d0 = i;
                uint64_t index = 0;
                while (i < le && IS_DIGIT(*i)) {
                    if (index <= (uint64_t)self->n_attr)
                        index = index * 10 + (uint64_t)(*i - '0');
                    i++;
                }
                if (i == d0 || (i < le && !STOP[(unsigned char)*i]) || index >= (uint64_t)self->n_attr)
                    goto bad;
                p = i;
                int sep = skip_sep(&p, le);
                if (sep != SEP_COMMA && sep != SEP_WS)
                    goto bad;
                r = read_value(&p, le, &tok, &self->scratch);
                if (r < 0)
                    goto fail;
                if (r == 0)
                    goto bad;
                Py_ssize_t a = (Py_ssize_t)index;
                if (self->seen[a] == stamp)
                    goto bad; /* an index given twice */
                self->seen[a] = stamp;
                r = convert_value(self, a, &tok, &v);
                if (r == V_FAIL)
                    goto fail;
                if (r == V_BAD)
                    goto bad;
                if (store(self, a, v, row, &cls, &unsorted, &last) < 0)
                    goto fail;
                sep = skip_sep(&p, le);
                if (sep == SEP_END)
                    goto bad; /* not closed */
                if (p < le && *p == '}') { /* (a comma may end the line: p == le) */
                    if (sep == SEP_COMMA)
                        goto bad; /* a comma before '}' */
                    p++;
                    break;
                }
                if (sep == SEP_NONE)
                    goto bad;
            }
        }
        int sep = skip_sep(&p, le);
        if (sep != SEP_END) {
            if (p >= le || *p != '{')
                goto bad;
            r = read_weight(self, p, le, &weight);
            if (r == V_FAIL)
                goto fail;
            if (r == V_BAD)
                goto bad;
        }
        if (unsorted)
            sort_row(self, start_entries);
    }
    else { /* a dense row */
        Py_ssize_t n = 0;
        for (;;) {
            if (n < self->n_attr && self->kind[n] == K_NUMERIC && !self->sparse && self->feat_of[n] >= 0) {
                const char *q = p;
                if (quick_number(&q, le, &v)) { /* the common case: a short plain number */
                    row[self->feat_of[n]] = v;
                    p = q;
                    n++;
                    int sep = skip_sep(&p, le);
                    if (sep == SEP_END)
                        break;
                    if (p < le && *p == '{') {
                        if (n != self->n_attr)
                            goto bad;
                        r = read_weight(self, p, le, &weight);
                        if (r == V_FAIL)
                            goto fail;
                        if (r == V_BAD)
                            goto bad;
                        break;
                    }
                    if (sep == SEP_NONE)
                        goto bad;
                    continue;
                }
            }
            r = read_value(&p, le, &tok, &self->scratch);
            if (r < 0)
                goto fail;
            if (r == 0 || n == self->n_attr)
                goto bad; /* not a value, or more values than attributes */
            r = convert_value(self, n, &tok, &v);
            if (r == V_FAIL)
                goto fail;
            if (r == V_BAD)
                goto bad;
            if (store(self, n, v, row, &cls, &unsorted, &last) < 0)
                goto fail;
            n++;
            int sep = skip_sep(&p, le);
            if (sep == SEP_END)
                break;
            if (p < le && *p == '{') { /* the weight */
                if (n != self->n_attr)
                    goto bad;
                r = read_weight(self, p, le, &weight);
                if (r == V_FAIL)
                    goto fail;
                if (r == V_BAD)
                    goto bad;
                break;
            }
            if (sep == SEP_NONE)
                goto bad; /* two values without a separator */
        }
        if (n != self->n_attr)
            goto bad;
    }
    if (commit_row(self, cls, weight) < 0)
        goto fail;
    return 1;
bad:
    self->X.len = self->sparse ? start_entries * 8 : start_X;
    if (self->sparse)
        self->indices.len = start_entries * 4;
    return 2;
fail:
    self->X.len = self->sparse ? start_entries * 8 : start_X;
    if (self->sparse)
        self->indices.len = start_entries * 4;
    return -1;
}

/* feed(data, start, end, line_no, max_rows, final) -> (status, pos, line_no, line_end)
 *   status 0: every complete line in data[start:end] was read; pos is where the rest begins
 *   status 1: max_rows rows were added (max_rows > 0); pos is the next line
 *   status 2: the line at pos (number line_no, ending at line_end) needs the strict path
 * A line ends at \n, \r\n or \r; without ``final`` the unterminated rest (or a lone \r at the very end)
 * is left for the next call. */
static PyObject *Parser_feed(Parser *self, PyObject *args)
{
    Py_buffer view;
    Py_ssize_t start, end, line_no, max_rows;
    int final;
    if (!PyArg_ParseTuple(args, "y*nnnnp", &view, &start, &end, &line_no, &max_rows, &final))
        return NULL;
    const char *buf = view.buf;
    Py_ssize_t size = view.len;
    if (start < 0 || end > size || start > end) {
        PyBuffer_Release(&view);
        PyErr_SetString(PyExc_ValueError, "bad range");
        return NULL;
    }
    Py_ssize_t p = start, rows = 0;
    const char *nl = NULL; /* the next '\n' at or after p, cached (NULL: not searched yet) */
    int status = 0;
    Py_ssize_t line_end = p;
    while (p < end) {
        if (nl == NULL || nl < buf + p) {
            nl = memchr(buf + p, '\n', (size_t)(end - p));
            if (nl == NULL)
                nl = buf + end;
        }
        const char *cr = memchr(buf + p, '\r', (size_t)(nl - (buf + p)));
        const char *q = cr ? cr : nl;
        Py_ssize_t next;
        if (q == buf + end) {
            if (!final)
                break;
            next = end;
        }
        else if (*q == '\r') {
            if (q + 1 == buf + end && !final)
                break;
            next = (q + 1 - buf) + (q + 1 < buf + end && q[1] == '\n' ? 1 : 0);
        }
        else
            next = q + 1 - buf;
        int r = parse_line(self, buf + p, q);
        if (r < 0) {
            PyBuffer_Release(&view);
            return NULL;
        }
        if (r == 2) {
            status = 2;
            line_end = q - buf;
            self->declined++;
            break;
        }
        p = next;
        line_no++;
        if (r == 1) {
            rows++;
            if (max_rows > 0 && rows >= max_rows) {
                status = 1;
                break;
            }
        }
    }
    Py_ssize_t after = p;
    if (status == 2) {
        after = line_end;
        if (after < end && buf[after] == '\r')
            after++;
        if (after < end && buf[after] == '\n')
            after++;
    }
    PyBuffer_Release(&view);
    return Py_BuildValue("innnn", status, p, line_no, status == 2 ? line_end : p, after);
}

/* add_dense(values, weight): a row read by the strict path (values: one float per attribute). */
static PyObject *Parser_add_dense(Parser *self, PyObject *args)
{
    PyObject *values;
    double weight;
    if (!PyArg_ParseTuple(args, "O!d", &PyList_Type, &values, &weight))
        return NULL;
    if (PyList_GET_SIZE(values) != self->n_attr) {
        PyErr_SetString(PyExc_ValueError, "one value per attribute expected");
        return NULL;
    }
    if (self->sparse < 0 && decide(self, 0) < 0)
        return NULL;
    double cls = 0.0;
    Py_ssize_t start_entries = self->indices.len / 4, last = -1;
    int unsorted = 0;
    double *row = NULL;
    if (!self->sparse) {
        if (gbuf_reserve(&self->X, self->n_feat * 8) < 0)
            return NULL;
        row = GB_D(self->X) + self->X.len / 8;
    }
    for (Py_ssize_t a = 0; a < self->n_attr; a++) {
        double v = PyFloat_AsDouble(PyList_GET_ITEM(values, a));
        if (v == -1.0 && PyErr_Occurred())
            goto fail;
        if (store(self, a, v, row, &cls, &unsorted, &last) < 0)
            goto fail;
    }
    if (commit_row(self, cls, weight) < 0)
        goto fail;
    Py_RETURN_NONE;
fail: /* nothing of the row stays (in CSR, its entries would join the next row) */
    if (self->sparse == 1) {
        self->X.len = start_entries * 8;
        self->indices.len = start_entries * 4;
    }
    return NULL;
}

/* add_sparse(pairs, weight): a sparse row read by the strict path (pairs: (attribute, value), unique). */
static PyObject *Parser_add_sparse(Parser *self, PyObject *args)
{
    PyObject *pairs;
    double weight;
    if (!PyArg_ParseTuple(args, "O!d", &PyList_Type, &pairs, &weight))
        return NULL;
    if (self->sparse < 0 && decide(self, 1) < 0)
        return NULL;
    double cls = 0.0;
    Py_ssize_t start_entries = self->indices.len / 4, last = -1;
    int unsorted = 0;
    double *row = NULL;
    if (!self->sparse) {
        if (gbuf_reserve(&self->X, self->n_feat * 8) < 0)
            return NULL;
        row = GB_D(self->X) + self->X.len / 8;
        if (self->n_feat)
            memset(row, 0, (size_t)self->n_feat * 8); /* (no feature: X may still be NULL) */
    }
    for (Py_ssize_t k = 0; k < PyList_GET_SIZE(pairs); k++) {
        PyObject *item = PyList_GET_ITEM(pairs, k);
        Py_ssize_t a;
        double v;
        if (!PyTuple_Check(item)) {
            PyErr_SetString(PyExc_TypeError, "(attribute, value) pairs expected");
            goto fail;
        }
        if (!PyArg_ParseTuple(item, "nd", &a, &v))
            goto fail;
        if (a < 0 || a >= self->n_attr) {
            PyErr_SetString(PyExc_IndexError, "attribute index out of range");
            goto fail;
        }
        if (store(self, a, v, row, &cls, &unsorted, &last) < 0)
            goto fail;
    }
    if (unsorted)
        sort_row(self, start_entries);
    if (commit_row(self, cls, weight) < 0)
        goto fail;
    Py_RETURN_NONE;
fail: /* nothing of the row stays (in CSR, its entries would join the next row) */
    if (self->sparse == 1) {
        self->X.len = start_entries * 8;
        self->indices.len = start_entries * 4;
    }
    return NULL;
}

/* take() -> dict: the rows read so far, as Buf objects (X or data/indices/indptr, y, w), and reset. */
static PyObject *Parser_take(Parser *self, PyObject *Py_UNUSED(ignored))
{
    PyObject *d = PyDict_New();
    if (d == NULL)
        return NULL;
    PyObject *v;
#define PUT(key, expr)                                                                                            \
    v = (expr);                                                                                                   \
    if (v == NULL || PyDict_SetItemString(d, key, v) < 0) {                                                       \
        Py_XDECREF(v);                                                                                            \
        Py_DECREF(d);                                                                                             \
        return NULL;                                                                                              \
    }                                                                                                             \
    Py_DECREF(v);
    PUT("n_rows", PyLong_FromSsize_t(self->n_rows));
    PUT("any_weight", PyBool_FromLong(self->any_weight));
    PUT("y", gbuf_take(&self->y));
    PUT("w", gbuf_take(&self->w));
    PUT("sparse", PyLong_FromLong(self->sparse));
    if (self->sparse == 1) {
        PUT("data", gbuf_take(&self->X));
        PUT("indices", gbuf_take(&self->indices));
        PUT("indptr", gbuf_take(&self->indptr));
    }
    else {
        PUT("X", gbuf_take(&self->X));
    }
#undef PUT
    self->n_rows = 0;
    self->any_weight = 0;
    if (start_indptr(self) < 0) {
        Py_DECREF(d);
        return NULL;
    }
    return d;
}

static PyObject *Parser_get_n_rows(Parser *self, void *closure)
{
    return PyLong_FromSsize_t(self->n_rows);
}

static PyObject *Parser_get_declined(Parser *self, void *closure)
{
    return PyLong_FromSsize_t(self->declined);
}

static PyObject *Parser_get_sparse(Parser *self, void *closure)
{
    return PyLong_FromLong(self->sparse);
}

static PyObject *Parser_get_nbytes(Parser *self, void *closure)
{
    return PyLong_FromSsize_t(self->X.cap + self->indices.cap + self->indptr.cap + self->y.cap + self->w.cap);
}

static PyMethodDef Parser_methods[] = {
    {"feed", (PyCFunction)Parser_feed, METH_VARARGS, "Read data lines from a bytes buffer."},
    {"add_dense", (PyCFunction)Parser_add_dense, METH_VARARGS, "Append a row read by the strict path."},
    {"add_sparse", (PyCFunction)Parser_add_sparse, METH_VARARGS, "Append a sparse row read by the strict path."},
    {"take", (PyCFunction)Parser_take, METH_NOARGS, "Hand over the rows read so far and start afresh."},
    {NULL, NULL, 0, NULL},
};

static PyGetSetDef Parser_getset[] = {
    {"n_rows", (getter)Parser_get_n_rows, NULL, "rows read since the last take()", NULL},
    {"declined", (getter)Parser_get_declined, NULL, "lines handed to the strict path", NULL},
    {"sparse", (getter)Parser_get_sparse, NULL, "-1 until the first row, then 1 for CSR, 0 for dense", NULL},
    {"nbytes", (getter)Parser_get_nbytes, NULL, "bytes allocated for the output", NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

static PyTypeObject ParserType = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "toolkit.data._arffscan.Parser",
    .tp_basicsize = sizeof(Parser),
    .tp_dealloc = (destructor)Parser_dealloc,
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "Reads ARFF data lines into numeric buffers (see the module docstring).",
    .tp_methods = Parser_methods,
    .tp_getset = Parser_getset,
    .tp_init = (initproc)Parser_init,
    .tp_new = PyType_GenericNew,
};

/* parse_numbers(list of str) -> (bytes of float64 values, bytes of uint8 ok flags): the number grammar
 * for other readers (CSV type detection). */
static PyObject *parse_numbers(PyObject *mod, PyObject *arg)
{
    if (!PyList_Check(arg)) {
        PyErr_SetString(PyExc_TypeError, "a list of str expected");
        return NULL;
    }
    Py_ssize_t n = PyList_GET_SIZE(arg);
    PyObject *vals = PyBytes_FromStringAndSize(NULL, n * 8);
    PyObject *ok = PyBytes_FromStringAndSize(NULL, n);
    if (!vals || !ok) {
        Py_XDECREF(vals);
        Py_XDECREF(ok);
        return NULL;
    }
    double *v = (double *)PyBytes_AS_STRING(vals);
    char *f = PyBytes_AS_STRING(ok);
    gbuf scratch = {NULL, 0, 0, 0};
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *s = PyList_GET_ITEM(arg, i);
        Py_ssize_t len;
        const char *u = PyUnicode_Check(s) ? PyUnicode_AsUTF8AndSize(s, &len) : NULL;
        if (u == NULL) {
            PyErr_Clear();
            v[i] = Py_NAN;
            f[i] = 0;
            continue;
        }
        int r = parse_number(u, len, &v[i], &scratch);
        if (r == -2) {
            gbuf_free(&scratch);
            Py_DECREF(vals);
            Py_DECREF(ok);
            return NULL;
        }
        f[i] = r == 0;
        if (r != 0)
            v[i] = Py_NAN;
    }
    gbuf_free(&scratch);
    return Py_BuildValue("(NN)", vals, ok);
}

/* _probes() -> int: slots and comparisons visited by nominal lookups and table builds so far (a
 * deterministic measure of work for tests). */
static PyObject *probes(PyObject *mod, PyObject *Py_UNUSED(arg))
{
    return PyLong_FromUnsignedLongLong(probe_count);
}

/* _constant_hash_for_tests(flag): tables built afterwards hash every value alike (the worst case of
 * any hash function), to test that lookups stay bounded anyway. */
static PyObject *constant_hash_for_tests(PyObject *mod, PyObject *arg)
{
    int flag = PyObject_IsTrue(arg);
    if (flag < 0)
        return NULL;
    hash_constant = flag;
    Py_RETURN_NONE;
}

static PyMethodDef module_methods[] = {
    {"parse_numbers", parse_numbers, METH_O, "Numbers in the ARFF grammar: (float64 bytes, ok bytes)."},
    {"_probes", probes, METH_NOARGS, "Slots and comparisons visited by nominal lookups so far (tests)."},
    {"_constant_hash_for_tests", constant_hash_for_tests, METH_O,
     "Tables built afterwards hash every value alike (tests)."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef moduledef = {
    PyModuleDef_HEAD_INIT, "_arffscan", "Fast path of the ARFF data-section reader.", -1, module_methods,
};

/* The per-process key of the nominal tables, from os.urandom. */
static int init_hash_key(void)
{
    PyObject *os = PyImport_ImportModule("os");
    if (os == NULL)
        return -1;
    PyObject *key = PyObject_CallMethod(os, "urandom", "n", (Py_ssize_t)16);
    Py_DECREF(os);
    if (key == NULL)
        return -1;
    if (!PyBytes_Check(key) || PyBytes_GET_SIZE(key) != 16) {
        Py_DECREF(key);
        PyErr_SetString(PyExc_RuntimeError, "os.urandom(16) did not give 16 bytes");
        return -1;
    }
    const unsigned char *k = (const unsigned char *)PyBytes_AS_STRING(key);
    hash_k0 = hash_k1 = 0;
    for (int b = 0; b < 8; b++) {
        hash_k0 |= (uint64_t)k[b] << (8 * b);
        hash_k1 |= (uint64_t)k[8 + b] << (8 * b);
    }
    Py_DECREF(key);
    return 0;
}

PyMODINIT_FUNC PyInit__arffscan(void)
{
    init_tables();
    if (init_hash_key() < 0)
        return NULL;
    if (PyType_Ready(&BufType) < 0 || PyType_Ready(&ParserType) < 0)
        return NULL;
    PyObject *m = PyModule_Create(&moduledef);
    if (m == NULL)
        return NULL;
    Py_INCREF(&ParserType);
    if (PyModule_AddObject(m, "Parser", (PyObject *)&ParserType) < 0) {
        Py_DECREF(&ParserType);
        Py_DECREF(m);
        return NULL;
    }
    if (PyModule_AddIntConstant(m, "MAX_NUMBER_CHARS", MAX_NUMBER_CHARS) < 0) {
        Py_DECREF(m);
        return NULL;
    }
    Py_INCREF(&BufType);
    if (PyModule_AddObject(m, "Buf", (PyObject *)&BufType) < 0) {
        Py_DECREF(&BufType);
        Py_DECREF(m);
        return NULL;
    }
    return m;
}
