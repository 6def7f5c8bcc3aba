/* One OTS round over a block of rows (plugins/ots/kernel.py holds the same computation in numpy).

   For every training row of a block: its score, the sum of the weights of its features in column order
   (exactly the sum a CSR product forms, so the result is the same to the last bit), rounded to the tie
   key round(score, 9) (the multiply, rint, divide that numpy's round does); then
   - the gap of the sorted positives it falls into (how many positives rank before it: higher key, or the
     same key and a lower row), counted in ``counts`` (the whole-training-set AP needs only these counts);
   - for pool rows, the ``m`` best keys (ties to the lower row) among the rows of the block.
   Plain C against the Python headers (buffer protocol, no numpy headers); the GIL is released, so
   blocks run in threads. Compiled with -ffp-contract=off: no fused multiply-add may change a bit.
   The caller (kernel.py) builds the arrays: column indices in [0, F), indptr non-decreasing and within
   indices; round_pass does not re-check every entry (that would double the pass). */

#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
    double key;
    int64_t row;
} cand_t;

static int cand_cmp(const void *a, const void *b)
{
    const cand_t *x = (const cand_t *)a, *y = (const cand_t *)b;
    if (x->key > y->key) return -1;
    if (x->key < y->key) return 1;
    return (x->row > y->row) - (x->row < y->row);
}

static inline double tie_key(double s) { return rint(s * 1e9) / 1e9; }

/* The m best candidates seen so far (key descending, then row ascending), in a buffer of 2m + 16: when it
   fills it is sorted and cut to m, and from then on only a candidate that ranks above the m-th enters.
   Callers offer candidates only when m > 0. */
typedef struct {
    cand_t *buf;
    Py_ssize_t cap, nc, m;
    double thr;
    int64_t thr_row;
    int pruned;
} top_t;

static int top_init(top_t *t, Py_ssize_t m)
{
    t->cap = 2 * m + 16;
    t->nc = 0;
    t->m = m;
    t->thr = 0.0;
    t->thr_row = 0;
    t->pruned = 0;
    t->buf = (cand_t *)malloc((size_t)t->cap * sizeof(cand_t));
    if (!t->buf) {
        PyErr_NoMemory();
        return -1;
    }
    return 0;
}

/* whether a candidate would enter (a caller whose later candidates rank lower stops at the first refused) */
static inline int top_admits(const top_t *t, double key, int64_t row)
{
    return !t->pruned || key > t->thr || (key == t->thr && row < t->thr_row);
}

static inline void top_push(top_t *t, double key, int64_t row)
{
    t->buf[t->nc].key = key;
    t->buf[t->nc].row = row;
    if (++t->nc == t->cap) {
        qsort(t->buf, (size_t)t->nc, sizeof(cand_t), cand_cmp);
        t->nc = t->m;
        t->thr = t->buf[t->m - 1].key;
        t->thr_row = t->buf[t->m - 1].row;
        t->pruned = 1;
    }
}

static inline void top_offer(top_t *t, double key, int64_t row)
{
    if (top_admits(t, key, row)) top_push(t, key, row);
}

/* sort what is held (no Python calls: may run without the GIL) */
static void top_sort(top_t *t) { qsort(t->buf, (size_t)t->nc, sizeof(cand_t), cand_cmp); }

/* after top_sort: the best min(nc, m) into keys and rows; frees the buffer and returns their count */
static Py_ssize_t top_take(top_t *t, double *keys, int64_t *rows)
{
    Py_ssize_t n = t->nc < t->m ? t->nc : t->m;
    for (Py_ssize_t q = 0; q < n; q++) {
        keys[q] = t->buf[q].key;
        rows[q] = t->buf[q].row;
    }
    free(t->buf);
    t->buf = NULL;
    return n;
}

static void top_free(top_t *t)
{
    free(t->buf);
    t->buf = NULL;
}

/* a 1-d C-contiguous buffer whose items are `itemsize` bytes of kind `kind` ('f' float, 'i' signed, 'u' unsigned) */
static int get_buf(PyObject *obj, Py_buffer *view, char kind, Py_ssize_t itemsize, int writable, const char *name)
{
    int flags = PyBUF_C_CONTIGUOUS | PyBUF_FORMAT | (writable ? PyBUF_WRITABLE : 0);
    if (PyObject_GetBuffer(obj, view, flags) < 0) return -1;
    const char *f = view->format ? view->format : "B";
    while (*f == '<' || *f == '=' || *f == '@' || *f == '!' || *f == '>') f++;
    char c = *f;
    int ok = view->ndim == 1 && view->itemsize == itemsize && f[1] == '\0';
    if (ok) {
        if (kind == 'f') ok = c == 'd';
        else if (kind == 'i') ok = c == 'i' || c == 'l' || c == 'q';
        else ok = c == 'B';
    }
    if (!ok) {
        PyErr_Format(PyExc_TypeError, "%s: expected a 1-d contiguous array of %c%zd", name, kind, itemsize * 8);
        PyBuffer_Release(view);
        return -1;
    }
    return 0;
}

/* how many of the sorted positives rank before a row with key k and (global) row id r */
static inline int64_t gap_of(double k, int64_t r, const double *pk, const int64_t *pr, int64_t P, const int32_t *start,
                             int64_t nb, double kmax, double kmin, double scale)
{
    if (k > kmax) return 0;
    if (k < kmin) return P;
    int64_t b = (int64_t)((kmax - k) * scale);
    if (b >= nb) b = nb - 1;
    int64_t lo = start[b], hi = start[b + 1];
    if (lo == hi) return lo; /* most buckets hold no positive */
    /* positions lo..hi-1 share the bucket: "ranks before" is true on a prefix of them */
    while (lo < hi) {
        int64_t mid = lo + (hi - lo) / 2;
        if (pk[mid] > k || (pk[mid] == k && pr[mid] < r)) lo = mid + 1;
        else hi = mid;
    }
    return lo;
}

/* the gap of key k as its bucket alone gives it (branch-free: most keys are outside [kmin, kmax] or in a
   bucket without positives); *search says that positives share the bucket, so gap_of must decide */
static inline int64_t bucket_gap(double k, const int32_t *start, double top, double kmax, double kmin, double scale,
                                 int64_t P, int *search)
{
    double x = (kmax - k) * scale;
    x = x > 0.0 ? x : 0.0;
    x = x < top ? x : top;
    int64_t b = (int64_t)x;
    int64_t g = start[b], g1 = start[b + 1];
    int out_above = k > kmax, out_below = k < kmin;
    g = out_above ? 0 : g;
    g1 = out_above ? 0 : g1;
    g = out_below ? P : g;
    g1 = out_below ? P : g1;
    *search = g != g1;
    return g;
}

/* the sum of w over the columns of row i, its base part (ip, ix) and extra part (jp, jx) merged in
   column order: the order a CSR product of the union would add them in */
static inline double row_sum(const int64_t *ip, const int32_t *ix, const int64_t *jp, const int32_t *jx, int64_t i,
                             const double *w)
{
    int64_t a = ip[i], a1 = ip[i + 1], b = jp[i], b1 = jp[i + 1];
    double s = 0.0;
    if (b == b1) {
        for (; a < a1; a++) s += w[ix[a]];
        return s;
    }
    while (a < a1 && b < b1) {
        if (ix[a] < jx[b]) s += w[ix[a++]];
        else s += w[jx[b++]];
    }
    for (; a < a1; a++) s += w[ix[a]];
    for (; b < b1; b++) s += w[jx[b]];
    return s;
}

#define N_BUFS 13

static PyObject *round_pass(PyObject *self, PyObject *args)
{
    PyObject *o[N_BUFS];
    Py_ssize_t F, lo, hi, sel_off, m, row_base;
    int count_pool, count_sts, use_visit, visit_pool;
    double kmax, kmin, scale;
    /* base indptr, indices; extra indptr, indices; kind, vec; positive keys, rows, bucket starts;
       counts, top keys, top rows (written); the rows to visit (with use_visit: rows visit[lo:hi], else
       rows lo:hi) and whether pool rows are visited (STS rows are visited when count_sts) */
    if (!PyArg_ParseTuple(args, "OOOOOOnnnnniiOOOdddnOOOOii", &o[0], &o[1], &o[2], &o[3], &o[4], &o[5], &F, &lo, &hi,
                          &row_base, &sel_off, &count_pool, &count_sts, &o[6], &o[7], &o[8], &kmax, &kmin, &scale,
                          &m, &o[9], &o[10], &o[11], &o[12], &use_visit, &visit_pool))
        return NULL;
    static const char kinds[N_BUFS] = {'i', 'i', 'i', 'i', 'u', 'f', 'f', 'i', 'i', 'i', 'f', 'i', 'i'};
    static const Py_ssize_t sizes[N_BUFS] = {8, 4, 8, 4, 1, 8, 8, 8, 4, 8, 8, 8, 8};
    static const char *names[N_BUFS] = {"indptr", "indices", "extra indptr", "extra indices", "kind", "vec",
                                        "positive keys", "positive rows", "bucket starts", "counts", "top keys",
                                        "top rows", "visit"};
    Py_buffer v[N_BUFS];
    int got = 0;
    for (; got < N_BUFS; got++)
        if (get_buf(o[got], &v[got], kinds[got], sizes[got], got >= 9 && got < 12, names[got]) < 0) goto fail;

    Py_ssize_t n_rows = v[4].shape[0], P = v[6].shape[0], nb = v[8].shape[0] - 1;
    Py_ssize_t n_index = use_visit ? v[12].shape[0] : n_rows;
    const int64_t *vis = (const int64_t *)v[12].buf;
    if (use_visit)
        for (Py_ssize_t q = lo; q < hi && q < n_index && q >= 0; q++)
            if (vis[q] < 0 || vis[q] >= n_rows || (visit_pool && m > 0 && q > lo && vis[q] <= vis[q - 1])) {
                PyErr_SetString(PyExc_ValueError, "round_pass: the rows to visit are out of range or unsorted");
                goto fail;
            }
    if (v[0].shape[0] != n_rows + 1 || v[2].shape[0] != n_rows + 1 || lo < 0 || hi > n_index || lo > hi ||
        v[7].shape[0] != P || nb < 1 || v[9].shape[0] != P + 1 || v[10].shape[0] < m || v[11].shape[0] < m || m < 0 ||
        F < 0 || (sel_off >= 0 ? sel_off : 0) + F > v[5].shape[0] || 3 * F > v[5].shape[0]) {
        PyErr_SetString(PyExc_ValueError, "round_pass: inconsistent array sizes");
        goto fail;
    }
    const int64_t *ip = (const int64_t *)v[0].buf, *jp = (const int64_t *)v[2].buf;
    const int32_t *ix = (const int32_t *)v[1].buf, *jx = (const int32_t *)v[3].buf;
    if (ip[n_rows] > v[1].shape[0] || jp[n_rows] > v[3].shape[0]) {
        PyErr_SetString(PyExc_ValueError, "round_pass: indptr does not fit indices");
        goto fail;
    }
    const uint8_t *kd = (const uint8_t *)v[4].buf;
    const double *vec = (const double *)v[5].buf;
    const double *pkv = (const double *)v[6].buf;
    const int64_t *prv = (const int64_t *)v[7].buf;
    const int32_t *st = (const int32_t *)v[8].buf;
    int64_t *cnt = (int64_t *)v[9].buf;
    top_t best;
    if (top_init(&best, m) < 0) goto fail;
    Py_ssize_t visited = 0;
    Py_BEGIN_ALLOW_THREADS
    /* in chunks of rows: first the keys (independent sums the processor overlaps), then their gaps, then
       the best rows */
    enum { CH = 512 };
    double kb[CH];
    int64_t rb[CH];
    uint8_t cb[CH];
    for (Py_ssize_t i0 = lo; i0 < hi; i0 += CH) {
        Py_ssize_t i1 = i0 + CH < hi ? i0 + CH : hi, nq = 0;
        /* selects instead of branches where the rows mix at random (pool or STS, above or inside or below
           the positives): a mispredicted branch per row cost more than the row's sum */
        for (Py_ssize_t j = i0; j < i1; j++) {
            Py_ssize_t i = use_visit ? vis[j] : j;
            uint8_t k = kd[i];
            if ((k != 1 && k != 2) || (k == 2 && !count_sts) || (k == 1 && !visit_pool)) continue;
            int sts = k == 2;
            kb[nq] = tie_key(row_sum(ip, ix, jp, jx, i, vec + (sts ? F : 0)));
            cb[nq] = sts ? 2 : (uint8_t)count_pool;
            rb[nq++] = row_base + i;
        }
        double top = (double)(nb - 1);
        for (Py_ssize_t q = 0; q < nq; q++) {
            double key = kb[q];
            int search;
            int64_t g = bucket_gap(key, st, top, kmax, kmin, scale, P, &search);
            if (search) g = gap_of(key, rb[q], pkv, prv, P, st, nb, kmax, kmin, scale);
            cnt[g] += cb[q] != 0;
        }
        visited += nq;
        if (m == 0) continue;
        for (Py_ssize_t q = 0; q < nq; q++) {
            if (cb[q] == 2) continue;
            double key = sel_off >= 0 ? tie_key(row_sum(ip, ix, jp, jx, rb[q] - row_base, vec + sel_off)) : kb[q];
            /* rows come in ascending order: once m are held, an equal key ranks after all of them */
            top_offer(&best, key, rb[q]);
        }
    }
    top_sort(&best);
    Py_END_ALLOW_THREADS
    Py_ssize_t n_top = top_take(&best, (double *)v[10].buf, (int64_t *)v[11].buf);
    for (int q = 0; q < got; q++) PyBuffer_Release(&v[q]);
    return Py_BuildValue("nn", n_top, visited);
fail:
    for (int q = 0; q < got; q++) PyBuffer_Release(&v[q]);
    return NULL;
}

static PyObject *row_keys(PyObject *self, PyObject *args)
{
    PyObject *o[7];
    Py_ssize_t offset, F;
    /* base indptr, indices; extra indptr, indices; rows; vec; out (written) */
    if (!PyArg_ParseTuple(args, "OOOOOOnnO", &o[0], &o[1], &o[2], &o[3], &o[4], &o[5], &offset, &F, &o[6]))
        return NULL;
    static const char kinds[7] = {'i', 'i', 'i', 'i', 'i', 'f', 'f'};
    static const Py_ssize_t sizes[7] = {8, 4, 8, 4, 8, 8, 8};
    static const char *names[7] = {"indptr", "indices", "extra indptr", "extra indices", "rows", "vec", "out"};
    Py_buffer v[7];
    int got = 0;
    for (; got < 7; got++)
        if (get_buf(o[got], &v[got], kinds[got], sizes[got], got == 6, names[got]) < 0) goto fail;
    Py_ssize_t n_rows = v[0].shape[0] - 1, n = v[4].shape[0];
    const int64_t *ip = (const int64_t *)v[0].buf, *jp = (const int64_t *)v[2].buf, *rv = (const int64_t *)v[4].buf;
    const int32_t *ix = (const int32_t *)v[1].buf, *jx = (const int32_t *)v[3].buf;
    if (v[6].shape[0] != n || v[2].shape[0] != n_rows + 1 || offset < 0 || F < 0 || offset + F > v[5].shape[0] ||
        ip[n_rows] > v[1].shape[0] || jp[n_rows] > v[3].shape[0]) {
        PyErr_SetString(PyExc_ValueError, "row_keys: inconsistent array sizes");
        goto fail;
    }
    for (Py_ssize_t q = 0; q < n; q++)
        if (rv[q] < 0 || rv[q] >= n_rows) {
            PyErr_SetString(PyExc_ValueError, "row_keys: a row is out of range");
            goto fail;
        }
    const double *w = (const double *)v[5].buf + offset;
    double *out = (double *)v[6].buf;
    Py_BEGIN_ALLOW_THREADS
    for (Py_ssize_t q = 0; q < n; q++) out[q] = tie_key(row_sum(ip, ix, jp, jx, rv[q], w));
    Py_END_ALLOW_THREADS
    for (int q = 0; q < got; q++) PyBuffer_Release(&v[q]);
    Py_RETURN_NONE;
fail:
    for (int q = 0; q < got; q++) PyBuffer_Release(&v[q]);
    return NULL;
}

/* ---------------------------------------------------------------- patterns (restricted rows, column index)

   Linear passes that build the restricted rows without temporaries the size of the corpus: each
   writes its result into arrays the caller allocated at the exact size (int64 row pointers, int32
   column indices), and checks every index it follows. */

#define GET(i, kind, size, wr, name) \
    if (get_buf(o[i], &v[i], kind, size, wr, name) < 0) goto fail; \
    got = i + 1;

/* restrict(indptr, indices, map, out_indptr, out_indices) -> nnz: the entries whose map[column] >= 0,
   renumbered to map[column] (map increasing on its kept columns, so rows stay sorted) */
static PyObject *restrict_rows(PyObject *self, PyObject *args)
{
    PyObject *o[5];
    Py_buffer v[5];
    int got = 0;
    if (!PyArg_ParseTuple(args, "OOOOO", &o[0], &o[1], &o[2], &o[3], &o[4])) return NULL;
    GET(0, 'i', 8, 0, "indptr") GET(1, 'i', 4, 0, "indices") GET(2, 'i', 4, 0, "map")
    GET(3, 'i', 8, 1, "out indptr") GET(4, 'i', 4, 1, "out indices")
    Py_ssize_t n = v[0].shape[0] - 1, F = v[2].shape[0], cap = v[4].shape[0];
    const int64_t *ip = (const int64_t *)v[0].buf;
    const int32_t *ix = (const int32_t *)v[1].buf, *map = (const int32_t *)v[2].buf;
    int64_t *op = (int64_t *)v[3].buf;
    int32_t *ox = (int32_t *)v[4].buf;
    if (n < 0 || v[3].shape[0] != n + 1 || ip[0] != 0 || ip[n] > v[1].shape[0]) {
        PyErr_SetString(PyExc_ValueError, "restrict_rows: inconsistent array sizes");
        goto fail;
    }
    int bad = 0;
    int64_t q = 0;
    Py_BEGIN_ALLOW_THREADS
    op[0] = 0;
    for (Py_ssize_t i = 0; i < n && !bad; i++) {
        if (ip[i + 1] < ip[i]) { bad = 1; break; }
        for (int64_t a = ip[i]; a < ip[i + 1]; a++) {
            int32_t c = ix[a];
            if (c < 0 || c >= F) { bad = 1; break; }
            int32_t m = map[c];
            if (m < 0) continue;
            if (q >= cap) { bad = 2; break; }
            ox[q++] = m;
        }
        op[i + 1] = q;
    }
    Py_END_ALLOW_THREADS
    if (bad) {
        PyErr_SetString(PyExc_ValueError, bad == 1 ? "restrict_rows: an index is out of range"
                                                   : "restrict_rows: the output is too small");
        goto fail;
    }
    for (int k = 0; k < got; k++) PyBuffer_Release(&v[k]);
    return PyLong_FromLongLong(q);
fail:
    for (int k = 0; k < got; k++) PyBuffer_Release(&v[k]);
    return NULL;
}

/* merge(ip, ix, jp, jx, out_indptr, out_indices) -> nnz: the union of two row-sorted patterns with
   disjoint columns, rows sorted */
static PyObject *merge_rows(PyObject *self, PyObject *args)
{
    PyObject *o[6];
    Py_buffer v[6];
    int got = 0;
    Py_ssize_t lo = 0, hi = -1;
    if (!PyArg_ParseTuple(args, "OOOOOO|nn", &o[0], &o[1], &o[2], &o[3], &o[4], &o[5], &lo, &hi)) return NULL;
    GET(0, 'i', 8, 0, "indptr") GET(1, 'i', 4, 0, "indices") GET(2, 'i', 8, 0, "extra indptr")
    GET(3, 'i', 4, 0, "extra indices") GET(4, 'i', 8, 1, "out indptr") GET(5, 'i', 4, 1, "out indices")
    Py_ssize_t n = v[0].shape[0] - 1;
    if (hi < 0) hi = n;
    const int64_t *ip = (const int64_t *)v[0].buf, *jp = (const int64_t *)v[2].buf;
    const int32_t *ix = (const int32_t *)v[1].buf, *jx = (const int32_t *)v[3].buf;
    int64_t *op = (int64_t *)v[4].buf;
    int32_t *ox = (int32_t *)v[5].buf;
    if (n < 0 || v[2].shape[0] != n + 1 || v[4].shape[0] != n + 1 || ip[0] != 0 || jp[0] != 0 ||
        ip[n] > v[1].shape[0] || jp[n] > v[3].shape[0] || ip[n] + jp[n] > v[5].shape[0] || lo < 0 || hi > n ||
        lo > hi) {
        PyErr_SetString(PyExc_ValueError, "merge_rows: inconsistent array sizes");
        goto fail;
    }
    int bad = 0;
    Py_BEGIN_ALLOW_THREADS
    /* row i starts at ip[i] + jp[i] in the union: rows lo:hi are written without the rows before them */
    int64_t q = ip[lo] + jp[lo];
    if (lo == 0) op[0] = 0;
    for (Py_ssize_t i = lo; i < hi; i++) {
        int64_t a = ip[i], a1 = ip[i + 1], b = jp[i], b1 = jp[i + 1];
        if (a1 < a || b1 < b || a1 > ip[n] || b1 > jp[n] || a < 0 || b < 0) { bad = 1; break; }
        while (a < a1 && b < b1) ox[q++] = ix[a] < jx[b] ? ix[a++] : jx[b++];
        while (a < a1) ox[q++] = ix[a++];
        while (b < b1) ox[q++] = jx[b++];
        op[i + 1] = q;
    }
    Py_END_ALLOW_THREADS
    if (bad) {
        PyErr_SetString(PyExc_ValueError, "merge_rows: indptr is not non-decreasing");
        goto fail;
    }
    for (int k = 0; k < got; k++) PyBuffer_Release(&v[k]);
    Py_RETURN_NONE;
fail:
    for (int k = 0; k < got; k++) PyBuffer_Release(&v[k]);
    return NULL;
}

/* filter(indptr, indices, keep) -> nnz: keep only the entries whose keep[column] is 1, in place */
static PyObject *filter_rows(PyObject *self, PyObject *args)
{
    PyObject *o[3];
    Py_buffer v[3];
    int got = 0;
    if (!PyArg_ParseTuple(args, "OOO", &o[0], &o[1], &o[2])) return NULL;
    GET(0, 'i', 8, 1, "indptr") GET(1, 'i', 4, 1, "indices") GET(2, 'u', 1, 0, "keep")
    Py_ssize_t n = v[0].shape[0] - 1, F = v[2].shape[0];
    int64_t *ip = (int64_t *)v[0].buf;
    int32_t *ix = (int32_t *)v[1].buf;
    const uint8_t *keep = (const uint8_t *)v[2].buf;
    if (n < 0 || ip[0] != 0 || ip[n] > v[1].shape[0]) {
        PyErr_SetString(PyExc_ValueError, "filter_rows: inconsistent array sizes");
        goto fail;
    }
    int bad = 0;
    int64_t q = 0;
    Py_BEGIN_ALLOW_THREADS
    int64_t a = 0;
    for (Py_ssize_t i = 0; i < n && !bad; i++) {
        int64_t a1 = ip[i + 1];
        if (a1 < a || a1 > ip[n]) { bad = 1; break; }
        for (; a < a1; a++) {
            int32_t c = ix[a];
            if (c < 0 || c >= F) { bad = 1; break; }
            if (keep[c]) ix[q++] = c;
        }
        ip[i + 1] = q;
    }
    Py_END_ALLOW_THREADS
    if (bad) {
        PyErr_SetString(PyExc_ValueError, "filter_rows: an index is out of range");
        goto fail;
    }
    for (int k = 0; k < got; k++) PyBuffer_Release(&v[k]);
    return PyLong_FromLongLong(q);
fail:
    for (int k = 0; k < got; k++) PyBuffer_Release(&v[k]);
    return NULL;
}

/* column_index(indptr, indices, colptr, rows): the column-major copy (rows ascending per column) of a
   row-major pattern, by counting; colptr has F + 1 entries */
static PyObject *column_index(PyObject *self, PyObject *args)
{
    PyObject *o[4];
    Py_buffer v[4];
    int got = 0;
    if (!PyArg_ParseTuple(args, "OOOO", &o[0], &o[1], &o[2], &o[3])) return NULL;
    GET(0, 'i', 8, 0, "indptr") GET(1, 'i', 4, 0, "indices") GET(2, 'i', 8, 1, "colptr") GET(3, 'i', 4, 1, "rows")
    Py_ssize_t n = v[0].shape[0] - 1, F = v[2].shape[0] - 1;
    const int64_t *ip = (const int64_t *)v[0].buf;
    const int32_t *ix = (const int32_t *)v[1].buf;
    int64_t *cp = (int64_t *)v[2].buf;
    int32_t *rows = (int32_t *)v[3].buf;
    if (n < 0 || F < 0 || n > INT32_MAX || ip[0] != 0 || ip[n] > v[1].shape[0] || v[3].shape[0] != ip[n]) {
        PyErr_SetString(PyExc_ValueError, "column_index: inconsistent array sizes");
        goto fail;
    }
    int bad = 0;
    Py_BEGIN_ALLOW_THREADS
    int64_t nnz = ip[n];
    memset(cp, 0, (size_t)(F + 1) * sizeof(int64_t));
    for (int64_t a = 0; a < nnz; a++) {
        int32_t c = ix[a];
        if (c < 0 || c >= F) { bad = 1; break; }
        cp[c + 1]++;
    }
    for (Py_ssize_t i = 0; i < n && !bad; i++)
        if (ip[i + 1] < ip[i] || ip[i + 1] > nnz) bad = 2;
    if (!bad) {
        for (Py_ssize_t c = 0; c < F; c++) cp[c + 1] += cp[c];
        /* cp[c] is the next free slot of column c while filling; shifted back afterwards */
        for (Py_ssize_t i = 0; i < n; i++)
            for (int64_t a = ip[i]; a < ip[i + 1]; a++) rows[cp[ix[a]]++] = (int32_t)i;
        for (Py_ssize_t c = F; c > 0; c--) cp[c] = cp[c - 1];
        cp[0] = 0;
    }
    Py_END_ALLOW_THREADS
    if (bad) {
        PyErr_SetString(PyExc_ValueError, bad == 1 ? "column_index: an index is out of range"
                                                   : "column_index: indptr is not non-decreasing");
        goto fail;
    }
    for (int k = 0; k < got; k++) PyBuffer_Release(&v[k]);
    Py_RETURN_NONE;
fail:
    for (int k = 0; k < got; k++) PyBuffer_Release(&v[k]);
    return NULL;
}

/* the first position in r[a:b] (ascending) holding a value >= x */
static inline int64_t first_at_least(const int32_t *r, int64_t a, int64_t b, int64_t x)
{
    while (a < b) {
        int64_t mid = a + (b - a) / 2;
        if (r[mid] < x) a = mid + 1;
        else b = mid;
    }
    return a;
}

/* gather(colptr, rows, features, ids, out_indptr, out_indices[, lo, hi]) -> nnz: the row-major pattern of the
   columns ``features`` (ascending) of a column index, column features[k] renumbered ids[k] (ascending);
   with lo:hi only those rows (out_indptr[lo + 1:hi + 1] and their entries; ranges run in threads),
   returning where they end */
static PyObject *gather_columns(PyObject *self, PyObject *args)
{
    PyObject *o[6];
    Py_buffer v[6];
    int got = 0;
    Py_ssize_t lo = 0, hi = -1;
    if (!PyArg_ParseTuple(args, "OOOOOO|nn", &o[0], &o[1], &o[2], &o[3], &o[4], &o[5], &lo, &hi)) return NULL;
    GET(0, 'i', 8, 0, "colptr") GET(1, 'i', 4, 0, "rows") GET(2, 'i', 8, 0, "features") GET(3, 'i', 4, 0, "ids")
    GET(4, 'i', 8, 1, "out indptr") GET(5, 'i', 4, 1, "out indices")
    Py_ssize_t F = v[0].shape[0] - 1, K = v[2].shape[0], n = v[4].shape[0] - 1, cap = v[5].shape[0];
    if (hi < 0) hi = n;
    const int64_t *cp = (const int64_t *)v[0].buf, *feat = (const int64_t *)v[2].buf;
    const int32_t *rows = (const int32_t *)v[1].buf, *ids = (const int32_t *)v[3].buf;
    int64_t *op = (int64_t *)v[4].buf;
    int32_t *ox = (int32_t *)v[5].buf;
    int64_t *span = NULL, *cur = NULL;
    if (F < 0 || n < 0 || v[3].shape[0] != K || cp[F] > v[1].shape[0] || lo < 0 || hi > n || lo > hi) {
        PyErr_SetString(PyExc_ValueError, "gather_columns: inconsistent array sizes");
        goto fail;
    }
    span = (int64_t *)malloc((size_t)(2 * K + 1) * sizeof(int64_t));
    cur = (int64_t *)malloc((size_t)(hi - lo + 1) * sizeof(int64_t));
    if (!span || !cur) {
        PyErr_NoMemory();
        goto fail;
    }
    int bad = 0;
    int64_t base = 0;
    Py_BEGIN_ALLOW_THREADS
    /* rows lo:hi only: each column's rows are ascending, so its entries in the range are one span of it,
       and the entries of the rows before lo (where this range starts writing) are the spans before */
    for (Py_ssize_t k = 0; k < K && !bad; k++) {
        int64_t f = feat[k];
        if (f < 0 || f >= F || cp[f + 1] < cp[f] || cp[f] < 0 || (k && (f <= feat[k - 1] || ids[k] <= ids[k - 1]))) {
            bad = 1;
            break;
        }
        int64_t a = first_at_least(rows, cp[f], cp[f + 1], lo), b = first_at_least(rows, a, cp[f + 1], hi);
        if ((lo == 0 && a != cp[f]) || (hi == n && b != cp[f + 1])) { /* a row below 0 or not below n */
            bad = 1;
            break;
        }
        span[2 * k] = a;
        span[2 * k + 1] = b;
        base += a - cp[f];
    }
    if (!bad) {
        int64_t total = base;
        for (Py_ssize_t k = 0; k < K; k++) total += cp[feat[k] + 1] - span[2 * k];
        if (total > cap) bad = 2;
    }
    if (!bad) {
        memset(cur, 0, (size_t)(hi - lo + 1) * sizeof(int64_t));
        for (Py_ssize_t k = 0; k < K && !bad; k++)
            for (int64_t a = span[2 * k]; a < span[2 * k + 1]; a++) {
                int32_t r = rows[a];
                if (r < lo || r >= hi) { bad = 1; break; } /* not ascending */
                cur[r - lo + 1]++;
            }
    }
    if (!bad) {
        cur[0] = base;
        for (Py_ssize_t i = 0; i < hi - lo; i++) cur[i + 1] += cur[i];
        for (Py_ssize_t i = 0; i < hi - lo; i++) op[lo + i + 1] = cur[i + 1];
        if (lo == 0) op[0] = 0;
        for (Py_ssize_t k = 0; k < K; k++)
            for (int64_t a = span[2 * k]; a < span[2 * k + 1]; a++) ox[cur[rows[a] - lo]++] = ids[k];
    }
    Py_END_ALLOW_THREADS
    free(span);
    free(cur);
    if (bad) {
        PyErr_SetString(PyExc_ValueError, bad == 1 ? "gather_columns: a feature or row is out of range or unsorted"
                                                   : "gather_columns: the output is too small");
        goto fail;
    }
    for (int k = 0; k < got; k++) PyBuffer_Release(&v[k]);
    return PyLong_FromLongLong(op[hi]);
fail:
    free(span);
    free(cur);
    for (int k = 0; k < got; k++) PyBuffer_Release(&v[k]);
    return NULL;
}

/* One feature t's three weights at log(max(N - n, 0) + a) = lr: the raw ones into ws/wn/wp, the thresholded
   ones (|w| > tau strictly, else 0) into vec's blocks 0-2, active[t]; the same subtractions as numpy's, in
   the same order. Returns whether t has a weight; *hi and *lo get the highest and lowest raw weight. */
static inline int feature_weights(Py_ssize_t t, Py_ssize_t F, double lr, double tau, const double *lp,
                                  const double *llp, const double *lna, const double *ln1a, double *vec,
                                  double *ws, double *wn, double *wp, uint8_t *act, double *hi, double *lo)
{
    double logit_q = lna[t] - lr;
    double a = lp[t] - logit_q, b = lp[t] - (ln1a[t] - lr), c = llp[t] - logit_q;
    ws[t] = a;
    wn[t] = b;
    wp[t] = c;
    double ta = fabs(a) > tau ? a : 0.0, tb = fabs(b) > tau ? b : 0.0, tc = fabs(c) > tau ? c : 0.0;
    vec[t] = ta;
    vec[F + t] = tb;
    vec[2 * F + t] = tc;
    int on = ta != 0 || tb != 0 || tc != 0;
    act[t] = (uint8_t)on;
    double h = a > b ? a : b, l = a < b ? a : b;
    *hi = h > c ? h : c;
    *lo = l < c ? l : c;
    return on;
}

/* weights(lp, llp, log_na, log_n1a, log_rest, tau, vec, w_sts, w_loo_neg, w_loo_pos, active) -> active count:
   a round's weights from the cached logarithms (rounds.TaskWeights.update): the same subtractions as
   numpy's, in the same order, thresholded (|w| > tau strictly, else 0) into vec's blocks 0-2 */
static PyObject *weights(PyObject *self, PyObject *args)
{
    PyObject *o[10];
    Py_buffer v[10];
    int got = 0;
    double tau;
    if (!PyArg_ParseTuple(args, "OOOOOdOOOOO", &o[0], &o[1], &o[2], &o[3], &o[4], &tau, &o[5], &o[6], &o[7], &o[8],
                          &o[9]))
        return NULL;
    GET(0, 'f', 8, 0, "lp") GET(1, 'f', 8, 0, "llp") GET(2, 'f', 8, 0, "log_na") GET(3, 'f', 8, 0, "log_n1a")
    GET(4, 'f', 8, 0, "log_rest") GET(5, 'f', 8, 1, "vec") GET(6, 'f', 8, 1, "w_sts") GET(7, 'f', 8, 1, "w_loo_neg")
    GET(8, 'f', 8, 1, "w_loo_pos") GET(9, 'u', 1, 1, "active")
    Py_ssize_t F = v[0].shape[0];
    for (int k = 1; k < 10; k++)
        if (k != 5 && v[k].shape[0] != F) {
            PyErr_SetString(PyExc_ValueError, "weights: inconsistent array sizes");
            goto fail;
        }
    if (v[5].shape[0] < 3 * F) {
        PyErr_SetString(PyExc_ValueError, "weights: inconsistent array sizes");
        goto fail;
    }
    const double *lp = (const double *)v[0].buf, *llp = (const double *)v[1].buf, *lna = (const double *)v[2].buf,
                 *ln1a = (const double *)v[3].buf, *lr = (const double *)v[4].buf;
    double *vec = (double *)v[5].buf, *ws = (double *)v[6].buf, *wn = (double *)v[7].buf, *wp = (double *)v[8].buf;
    uint8_t *act = (uint8_t *)v[9].buf;
    Py_ssize_t n_active = 0;
    Py_BEGIN_ALLOW_THREADS
    double hi, lo;
    for (Py_ssize_t t = 0; t < F; t++)
        n_active += feature_weights(t, F, lr[t], tau, lp, llp, lna, ln1a, vec, ws, wn, wp, act, &hi, &lo);
    Py_END_ALLOW_THREADS
    for (int k = 0; k < got; k++) PyBuffer_Release(&v[k]);
    return PyLong_FromSsize_t(n_active);
fail:
    for (int k = 0; k < got; k++) PyBuffer_Release(&v[k]);
    return NULL;
}

/* weights_at(lp, llp, log_na, log_n1a, at, log_rest, tau, N, alpha, vec, w_sts, w_loo_neg, w_loo_pos, active,
   safe_until) -> active count among at: ``weights`` for the features ``at`` only (log_rest[q] belongs to
   feature at[q]), the same operations bit for bit; the others keep their values. For a feature left with no
   weight in any block, safe_until[t] is an N up to which it surely keeps none while its count n stays: all
   three weights rise with N by log((N' - n + a) / (N - n + a)) <= (N' - N) / (N - n + a), so it stays
   within [-tau, tau] while that rise is below its distance to tau less a margin (1e-9, far above the
   rounding of the sums); -inf (recompute next round) when it is within the margin of -tau or tau, and for
   a feature with a weight */
static PyObject *weights_at(PyObject *self, PyObject *args)
{
    PyObject *o[12];
    Py_buffer v[12];
    int got = 0;
    double tau, N, alpha;
    if (!PyArg_ParseTuple(args, "OOOOOOdddOOOOOO", &o[0], &o[1], &o[2], &o[3], &o[4], &o[5], &tau, &N, &alpha, &o[6],
                          &o[7], &o[8], &o[9], &o[10], &o[11]))
        return NULL;
    GET(0, 'f', 8, 0, "lp") GET(1, 'f', 8, 0, "llp") GET(2, 'f', 8, 0, "log_na") GET(3, 'f', 8, 0, "log_n1a")
    GET(4, 'i', 8, 0, "at") GET(5, 'f', 8, 0, "log_rest") GET(6, 'f', 8, 1, "vec") GET(7, 'f', 8, 1, "w_sts")
    GET(8, 'f', 8, 1, "w_loo_neg") GET(9, 'f', 8, 1, "w_loo_pos") GET(10, 'u', 1, 1, "active")
    GET(11, 'f', 8, 1, "safe_until")
    Py_ssize_t F = v[0].shape[0], K = v[4].shape[0];
    int bad = v[5].shape[0] != K || v[6].shape[0] < 3 * F;
    for (int k = 1; k < 12; k++)
        if (k != 4 && k != 5 && k != 6 && v[k].shape[0] != F) bad = 1;
    const int64_t *at = (const int64_t *)v[4].buf;
    for (Py_ssize_t q = 0; q < K && !bad; q++)
        if (at[q] < 0 || at[q] >= F) bad = 1;
    if (bad) {
        PyErr_SetString(PyExc_ValueError, "weights_at: inconsistent array sizes or a feature out of range");
        goto fail;
    }
    const double *lp = (const double *)v[0].buf, *llp = (const double *)v[1].buf, *lna = (const double *)v[2].buf,
                 *ln1a = (const double *)v[3].buf, *lrv = (const double *)v[5].buf;
    double *vec = (double *)v[6].buf, *ws = (double *)v[7].buf, *wn = (double *)v[8].buf, *wp = (double *)v[9].buf;
    uint8_t *act = (uint8_t *)v[10].buf;
    double *safe = (double *)v[11].buf;
    const double margin = 1e-9;
    Py_ssize_t n_active = 0;
    Py_BEGIN_ALLOW_THREADS
    for (Py_ssize_t q = 0; q < K; q++) {
        int64_t t = at[q];
        double lr = lrv[q], hi, lo;
        int on = feature_weights(t, F, lr, tau, lp, llp, lna, ln1a, vec, ws, wn, wp, act, &hi, &lo);
        n_active += on;
        double room = tau - hi; /* how far the highest may still rise */
        /* N - n + a is exp(lr) to a relative 1e-15 (the factor 0.999 more than covers it) */
        if (on || !(room > margin) || !(lo + tau > margin) || !(lr == lr)) safe[t] = -INFINITY;
        else safe[t] = N + (room - margin) * 0.999 * exp(lr);
    }
    Py_END_ALLOW_THREADS
    for (int k = 0; k < got; k++) PyBuffer_Release(&v[k]);
    return PyLong_FromSsize_t(n_active);
fail:
    for (int k = 0; k < got; k++) PyBuffer_Release(&v[k]);
    return NULL;
}

/* nonempty(indptr, extra_indptr, kind, k, out) -> count: the rows of kind k whose pattern (both parts) is not
   empty, ascending, written into out (at least as long as the rows) */
static PyObject *nonempty_rows(PyObject *self, PyObject *args)
{
    PyObject *o[4];
    Py_buffer v[4];
    int got = 0, k;
    if (!PyArg_ParseTuple(args, "OOOiO", &o[0], &o[1], &o[2], &k, &o[3])) return NULL;
    GET(0, 'i', 8, 0, "indptr") GET(1, 'i', 8, 0, "extra indptr") GET(2, 'u', 1, 0, "kind") GET(3, 'i', 8, 1, "out")
    Py_ssize_t n = v[2].shape[0];
    if (v[0].shape[0] < n + 1 || v[1].shape[0] < n + 1 || v[3].shape[0] < n) {
        PyErr_SetString(PyExc_ValueError, "nonempty_rows: inconsistent array sizes");
        goto fail;
    }
    const int64_t *ip = (const int64_t *)v[0].buf, *jp = (const int64_t *)v[1].buf;
    const uint8_t *kd = (const uint8_t *)v[2].buf;
    int64_t *out = (int64_t *)v[3].buf;
    Py_ssize_t q = 0;
    Py_BEGIN_ALLOW_THREADS
    for (Py_ssize_t i = 0; i < n; i++) {
        out[q] = i;
        q += kd[i] == k && (ip[i + 1] != ip[i] || jp[i + 1] != jp[i]);
    }
    Py_END_ALLOW_THREADS
    for (int j = 0; j < got; j++) PyBuffer_Release(&v[j]);
    return PyLong_FromSsize_t(q);
fail:
    for (int j = 0; j < got; j++) PyBuffer_Release(&v[j]);
    return NULL;
}

/* first_empty(indptr, extra_indptr, kind, k, start, out) -> count: the first len(out) rows from start on of
   kind k whose pattern is empty, ascending */
static PyObject *first_empty(PyObject *self, PyObject *args)
{
    PyObject *o[4];
    Py_buffer v[4];
    int got = 0, k;
    Py_ssize_t start;
    if (!PyArg_ParseTuple(args, "OOOinO", &o[0], &o[1], &o[2], &k, &start, &o[3])) return NULL;
    GET(0, 'i', 8, 0, "indptr") GET(1, 'i', 8, 0, "extra indptr") GET(2, 'u', 1, 0, "kind") GET(3, 'i', 8, 1, "out")
    Py_ssize_t n = v[2].shape[0], m = v[3].shape[0];
    if (v[0].shape[0] < n + 1 || v[1].shape[0] < n + 1 || start < 0) {
        PyErr_SetString(PyExc_ValueError, "first_empty: inconsistent array sizes");
        goto fail;
    }
    const int64_t *ip = (const int64_t *)v[0].buf, *jp = (const int64_t *)v[1].buf;
    const uint8_t *kd = (const uint8_t *)v[2].buf;
    int64_t *out = (int64_t *)v[3].buf;
    Py_ssize_t q = 0;
    Py_BEGIN_ALLOW_THREADS
    for (Py_ssize_t i = start; i < n && q < m; i++)
        if (kd[i] == k && ip[i + 1] == ip[i] && jp[i + 1] == jp[i]) out[q++] = i;
    Py_END_ALLOW_THREADS
    for (int j = 0; j < got; j++) PyBuffer_Release(&v[j]);
    return PyLong_FromSsize_t(q);
fail:
    for (int j = 0; j < got; j++) PyBuffer_Release(&v[j]);
    return NULL;
}

/* the sum of w over the L entries from a (L fixed by the caller: unrolled, no branch) */
static inline double fixed_sum(const int32_t *ix, int64_t a, int L, const double *w)
{
    double s = 0.0;
    for (int l = 0; l < L; l++) s += w[ix[a + l]];
    return s;
}

#define N_CLASS 5
#define N_CBUFS 14

/* class_pass: round_pass over the rows visit[lo:hi] of one kind (block_kind 1: pool rows, read vec[0:F],
   counted if count_pool, candidates; 2: STS negatives, read vec[F:2F], counted), rows of another kind
   skipped. ``seg`` (N_CLASS + 1 offsets into visit) groups the rows by their pattern: segment c < 4 holds
   rows with c + 1 entries, all in the base part (a sum of fixed length, no branch between rows);
   segment 4 any row (both parts merged by column). Within a segment the rows are in any order: ties
   among candidates go to the lower row explicitly. Returns (candidates, rows visited). */
static PyObject *class_pass(PyObject *self, PyObject *args)
{
    PyObject *o[N_CBUFS];
    Py_ssize_t F, lo, hi, sel_off, m, row_base;
    int count_pool, block_kind, want;
    double kmax, kmin, scale;
    if (!PyArg_ParseTuple(args, "OOOOOOnnnnniiOOOdddnOOOOOi", &o[0], &o[1], &o[2], &o[3], &o[4], &o[5], &F, &lo, &hi,
                          &row_base, &sel_off, &count_pool, &block_kind, &o[6], &o[7], &o[8], &kmax, &kmin, &scale,
                          &m, &o[9], &o[10], &o[11], &o[12], &o[13], &want))
        return NULL;
    static const char kinds[N_CBUFS] = {'i', 'i', 'i', 'i', 'u', 'f', 'f', 'i', 'i', 'i', 'f', 'i', 'i', 'i'};
    static const Py_ssize_t sizes[N_CBUFS] = {8, 4, 8, 4, 1, 8, 8, 8, 4, 8, 8, 8, 8, 8};
    static const char *names[N_CBUFS] = {"indptr", "indices", "extra indptr", "extra indices", "kind", "vec",
                                         "positive keys", "positive rows", "bucket starts", "counts", "top keys",
                                         "top rows", "visit", "segments"};
    Py_buffer v[N_CBUFS];
    int got = 0;
    for (; got < N_CBUFS; got++)
        if (get_buf(o[got], &v[got], kinds[got], sizes[got], got >= 9 && got < 12, names[got]) < 0) goto cfail;
    Py_ssize_t n_rows = v[4].shape[0], P = v[6].shape[0], nb = v[8].shape[0] - 1, nv = v[12].shape[0];
    const int64_t *ip = (const int64_t *)v[0].buf, *jp = (const int64_t *)v[2].buf;
    const int32_t *ix = (const int32_t *)v[1].buf, *jx = (const int32_t *)v[3].buf;
    const int64_t *vis = (const int64_t *)v[12].buf, *seg = (const int64_t *)v[13].buf;
    if (v[0].shape[0] != n_rows + 1 || v[2].shape[0] != n_rows + 1 || lo < 0 || hi > nv || lo > hi ||
        v[7].shape[0] != P || nb < 1 || v[9].shape[0] != P + 1 || v[10].shape[0] < m || v[11].shape[0] < m || m < 0 ||
        F < 0 || (sel_off >= 0 ? sel_off : 0) + F > v[5].shape[0] || 2 * F > v[5].shape[0] ||
        v[13].shape[0] != N_CLASS + 1 || (block_kind != 1 && block_kind != 2)) {
        PyErr_SetString(PyExc_ValueError, "class_pass: inconsistent array sizes");
        goto cfail;
    }
    if (ip[n_rows] > v[1].shape[0] || jp[n_rows] > v[3].shape[0] || seg[0] != 0 || seg[N_CLASS] != nv) {
        PyErr_SetString(PyExc_ValueError, "class_pass: indptr does not fit indices");
        goto cfail;
    }
    for (int c = 0; c < N_CLASS; c++)
        if (seg[c + 1] < seg[c]) {
            PyErr_SetString(PyExc_ValueError, "class_pass: segments are not non-decreasing");
            goto cfail;
        }
    /* a row to visit out of range, or a fixed-length row whose entries would run out of the indices, is
       replaced by row 0 / entry 0 as the pass goes (selects, no branch) and makes the call fail */
    const int64_t nnz_ix = v[1].shape[0];
    int bad = 0;
    const uint8_t *kd = (const uint8_t *)v[4].buf;
    const double *vec = (const double *)v[5].buf;
    const double *w = vec + (block_kind == 2 ? F : 0), *ws = sel_off >= 0 ? vec + sel_off : NULL;
    const double *pkv = (const double *)v[6].buf;
    const int64_t *prv = (const int64_t *)v[7].buf;
    const int32_t *st = (const int32_t *)v[8].buf;
    int64_t *cnt = (int64_t *)v[9].buf;
    int counted = block_kind == 2 ? 1 : count_pool, choose = block_kind == 1 && m > 0;
    top_t best;
    if (top_init(&best, m) < 0) goto cfail;
    Py_ssize_t visited = 0;
    int64_t sink[8] = {0}, below = 0;
    Py_BEGIN_ALLOW_THREADS
    enum { CH = 512 };
    double kb[CH];
    int64_t rb[CH];
    double top = (double)(nb - 1);
    for (int c = 0; c < N_CLASS; c++) {
        Py_ssize_t a0 = seg[c] > lo ? seg[c] : lo, b0 = seg[c + 1] < hi ? seg[c + 1] : hi;
        for (Py_ssize_t j0 = a0; j0 < b0; j0 += CH) {
            Py_ssize_t j1 = j0 + CH < b0 ? j0 + CH : b0, nq = 0;
            switch (c) {
#define FIXED(L)                                                                   \
            case L - 1:                                                            \
                if (nnz_ix < L) { bad = 1; break; }                                \
                for (Py_ssize_t j = j0; j < j1; j++) {                             \
                    int64_t i = vis[j];                                            \
                    int ok = (uint64_t)i < (uint64_t)n_rows;                       \
                    i = ok ? i : 0;                                                \
                    int64_t a = ip[i];                                             \
                    int ok_a = a >= 0 && a <= nnz_ix - L;                          \
                    bad |= !(ok && ok_a);                                          \
                    a = ok_a ? a : 0;                                              \
                    kb[nq] = tie_key(fixed_sum(ix, a, L, w));                      \
                    rb[nq] = i;                                                    \
                    nq += kd[i] == want;                                           \
                }                                                                  \
                break;
            FIXED(1) FIXED(2) FIXED(3) FIXED(4)
#undef FIXED
            default:
                for (Py_ssize_t j = j0; j < j1; j++) {
                    int64_t i = vis[j];
                    if ((uint64_t)i >= (uint64_t)n_rows) { bad = 1; continue; }
                    if (kd[i] != want) continue;
                    kb[nq] = tie_key(row_sum(ip, ix, jp, jx, i, w));
                    rb[nq++] = i;
                }
            }
            visited += nq;
            for (Py_ssize_t q = 0; q < nq; q++) {
                double key = kb[q];
                int search, out_below = key < kmin;
                int64_t g = bucket_gap(key, st, top, kmax, kmin, scale, P, &search);
                if (search) g = gap_of(key, row_base + rb[q], pkv, prv, P, st, nb, kmax, kmin, scale);
                /* most rows rank below every positive: counted in a register, not by a chain of
                   increments of cnt[P] (each waits for the last store) */
                int64_t *dst = out_below ? &sink[q & 7] : cnt + g;
                *dst += counted;
                below += out_below & counted;
            }
            if (!choose) continue;
            for (Py_ssize_t q = 0; q < nq; q++) {
                int64_t i = rb[q];
                double key = ws ? tie_key(row_sum(ip, ix, jp, jx, i, ws)) : kb[q];
                int64_t row = row_base + i;
                top_offer(&best, key, row);
            }
        }
    }
    top_sort(&best);
    cnt[P] += below;
    Py_END_ALLOW_THREADS
    (void)sink;
    if (bad) {
        top_free(&best);
        PyErr_SetString(PyExc_ValueError, "class_pass: a row to visit is out of range or its entries run out");
        goto cfail;
    }
    Py_ssize_t n_top = top_take(&best, (double *)v[10].buf, (int64_t *)v[11].buf);
    for (int q = 0; q < got; q++) PyBuffer_Release(&v[q]);
    return Py_BuildValue("nn", n_top, visited);
cfail:
    for (int q = 0; q < got; q++) PyBuffer_Release(&v[q]);
    return NULL;
}

/* single_pass: the rows whose pattern is one feature, grouped by it (feature f's rows are
   rows[ptr[f]:ptr[f + 1]], ascending; live[f] of them are still of kind block_kind), over the features
   flo:fhi. Their key is tie_key(0 + w[f]) = tie_key(w[f]), one per feature: the gap is found once for all
   of them unless a positive has the same key (then row by row: ties go by row). Pool rows (block_kind 1)
   are candidates by tie_key(ws[f]) (ws = vec + sel_off, or w): the first live rows of a feature.
   Returns (candidates, rows counted). */
static PyObject *single_pass(PyObject *self, PyObject *args)
{
    PyObject *o[12];
    PyObject *feats_obj = NULL, *front_obj = NULL;
    Py_ssize_t F, flo, fhi, sel_off, m, row_base;
    int count_pool, block_kind, want;
    double kmax, kmin, scale;
    if (!PyArg_ParseTuple(args, "OOOOOnnnnniiOOOdddnOOOi|OO", &o[0], &o[1], &o[2], &o[3], &o[4], &F, &flo, &fhi,
                          &row_base, &sel_off, &count_pool, &block_kind, &o[5], &o[6], &o[7], &kmax, &kmin, &scale,
                          &m, &o[8], &o[9], &o[10], &want, &feats_obj, &front_obj))
        return NULL;
    /* with feats (int64, ascending): the features feats[flo:fhi], else flo:fhi */
    Py_buffer fv;
    const int64_t *fl = NULL;
    Py_ssize_t n_fl = 0;
    if (feats_obj && feats_obj != Py_None) {
        if (get_buf(feats_obj, &fv, 'i', 8, 0, "features") < 0) return NULL;
        fl = (const int64_t *)fv.buf;
        n_fl = fv.shape[0];
    }
    /* with front (int64 per feature, written): where the scan for candidates starts in each feature's rows;
       rows before it are of another state (chosen: they leave a feature's rows from its front) */
    Py_buffer frv;
    int64_t *front = NULL;
    if (front_obj && front_obj != Py_None) {
        if (get_buf(front_obj, &frv, 'i', 8, 1, "front") < 0) {
            if (fl) PyBuffer_Release(&fv);
            return NULL;
        }
        front = (int64_t *)frv.buf;
    }
    static const char kinds[11] = {'i', 'i', 'i', 'u', 'f', 'f', 'i', 'i', 'i', 'f', 'i'};
    static const Py_ssize_t sizes[11] = {8, 8, 8, 1, 8, 8, 8, 4, 8, 8, 8};
    static const char *names[11] = {"feature rows ptr", "feature rows", "live", "kind", "vec", "positive keys",
                                    "positive rows", "bucket starts", "counts", "top keys", "top rows"};
    Py_buffer v[11];
    int got = 0;
    for (; got < 11; got++)
        if (get_buf(o[got], &v[got], kinds[got], sizes[got], got >= 8, names[got]) < 0) goto sfail;
    Py_ssize_t n_rows = v[3].shape[0], P = v[5].shape[0], nb = v[7].shape[0] - 1, nr = v[1].shape[0];
    const int64_t *fp = (const int64_t *)v[0].buf, *fr = (const int64_t *)v[1].buf, *live = (const int64_t *)v[2].buf;
    if (v[0].shape[0] != F + 1 || v[2].shape[0] != F || flo < 0 || fhi > (fl ? n_fl : F) || flo > fhi ||
        v[6].shape[0] != P ||
        nb < 1 || v[8].shape[0] != P + 1 || v[9].shape[0] < m || v[10].shape[0] < m || m < 0 ||
        (sel_off >= 0 ? sel_off : 0) + F > v[4].shape[0] || 2 * F > v[4].shape[0] ||
        (block_kind != 1 && block_kind != 2) || fp[0] != 0 || fp[F] != nr) {
        PyErr_SetString(PyExc_ValueError, "single_pass: inconsistent array sizes");
        goto sfail;
    }
    for (Py_ssize_t j = flo; j < fhi; j++) {
        int64_t f = fl ? fl[j] : j;
        if (f < 0 || f >= F || fp[f + 1] < fp[f] || live[f] < 0 || live[f] > fp[f + 1] - fp[f]) {
            PyErr_SetString(PyExc_ValueError, "single_pass: inconsistent feature rows");
            goto sfail;
        }
    }
    if (front && frv.shape[0] != F) {
        PyErr_SetString(PyExc_ValueError, "single_pass: front has not one entry per feature");
        goto sfail;
    }
    for (Py_ssize_t j = flo; j < fhi && front; j++) {
        int64_t f = fl ? fl[j] : j;
        if (front[f] < fp[f] || front[f] > fp[f + 1]) {
            PyErr_SetString(PyExc_ValueError, "single_pass: front out of its feature's rows");
            goto sfail;
        }
    }
    if (fp[F] > nr) {
        PyErr_SetString(PyExc_ValueError, "single_pass: inconsistent feature rows");
        goto sfail;
    }
    const uint8_t *kd = (const uint8_t *)v[3].buf;
    const double *vec = (const double *)v[4].buf;
    const double *w = vec + (block_kind == 2 ? F : 0), *ws = sel_off >= 0 ? vec + sel_off : w;
    const double *pkv = (const double *)v[5].buf;
    const int64_t *prv = (const int64_t *)v[6].buf;
    const int32_t *st = (const int32_t *)v[7].buf;
    int64_t *cnt = (int64_t *)v[8].buf;
    int counted = block_kind == 2 ? 1 : count_pool, choose = block_kind == 1 && m > 0;
    top_t best;
    if (top_init(&best, m) < 0) goto sfail;
    int bad = 0; /* a row out of range is skipped and makes the call fail */
    Py_ssize_t visited = 0;
    Py_BEGIN_ALLOW_THREADS
    for (Py_ssize_t j = flo; j < fhi; j++) {
        int64_t f = fl ? fl[j] : j;
        int64_t nl = live[f];
        if (nl == 0) continue;
        visited += nl;
        double key = tie_key(0.0 + w[f]);
        int64_t g = gap_of(key, INT64_MIN, pkv, prv, P, st, nb, kmax, kmin, scale);
        int64_t g1 = gap_of(key, INT64_MAX, pkv, prv, P, st, nb, kmax, kmin, scale);
        if (counted) {
            if (g == g1) cnt[g] += nl;
            else /* a positive has this key: its rows rank by row */
                for (int64_t q = fp[f]; q < fp[f + 1]; q++) {
                    int64_t i = fr[q];
                    if ((uint64_t)i >= (uint64_t)n_rows) { bad = 1; continue; }
                    if (kd[i] == want) cnt[gap_of(key, row_base + i, pkv, prv, P, st, nb, kmax, kmin, scale)]++;
                }
        }
        if (!choose) continue;
        double sk = tie_key(0.0 + ws[f]);
        Py_ssize_t taken = 0;
        int64_t q0 = fp[f];
        if (front) {
            while (front[f] < fp[f + 1] && (uint64_t)fr[front[f]] < (uint64_t)n_rows && kd[fr[front[f]]] != want)
                front[f]++;
            q0 = front[f];
        }
        for (int64_t q = q0; q < fp[f + 1] && taken < m; q++) {
            int64_t i = fr[q];
            if ((uint64_t)i >= (uint64_t)n_rows) { bad = 1; continue; }
            if (kd[i] != want) continue;
            int64_t row = row_base + i;
            if (!top_admits(&best, sk, row)) break; /* later rows rank lower */
            top_push(&best, sk, row);
            taken++;
        }
    }
    top_sort(&best);
    Py_END_ALLOW_THREADS
    if (bad) {
        top_free(&best);
        PyErr_SetString(PyExc_ValueError, "single_pass: a row is out of range");
        goto sfail;
    }
    Py_ssize_t n_top = top_take(&best, (double *)v[9].buf, (int64_t *)v[10].buf);
    for (int q = 0; q < got; q++) PyBuffer_Release(&v[q]);
    if (fl) PyBuffer_Release(&fv);
    if (front) PyBuffer_Release(&frv);
    return Py_BuildValue("nn", n_top, visited);
sfail:
    for (int q = 0; q < got; q++) PyBuffer_Release(&v[q]);
    if (fl) PyBuffer_Release(&fv);
    if (front) PyBuffer_Release(&frv);
    return NULL;
}

/* ---------------------------------------------------------------- packed rows

   The rows a pass visits, copied out of the restricted rows into one array each, in the order the pass
   reads them: the rows of 2, 3, 4 entries (each class a block of fixed-length patterns, the base and extra
   parts merged by column), then the others (row pointers). The pass then reads memory in sequence; only
   the weights (a few hundred KB) are gathered. */

#define N_PACK 4 /* classes: 2, 3, 4 entries; any other (>= 5) */

/* pack_count(ip, ix, jp, jx, kind, k, lo, hi, size, ent, live): the first half of packing rows lo:hi of kind k
   (kernel.pack_rows): size[c] and ent[c] the rows and entries of class c (rows of 2, 3, 4 entries, then any
   other), live[f] the rows whose one entry is f. Several row ranges run in threads; the caller adds up. */
static PyObject *pack_count(PyObject *self, PyObject *args)
{
    PyObject *o[8];
    Py_buffer v[8];
    int got = 0, k;
    Py_ssize_t lo, hi;
    if (!PyArg_ParseTuple(args, "OOOOOinnOOO", &o[0], &o[1], &o[2], &o[3], &o[4], &k, &lo, &hi, &o[5], &o[6], &o[7]))
        return NULL;
    GET(0, 'i', 8, 0, "indptr") GET(1, 'i', 4, 0, "indices") GET(2, 'i', 8, 0, "extra indptr")
    GET(3, 'i', 4, 0, "extra indices") GET(4, 'u', 1, 0, "kind") GET(5, 'i', 8, 1, "size") GET(6, 'i', 8, 1, "ent")
    GET(7, 'i', 8, 1, "live")
    Py_ssize_t n = v[4].shape[0], F = v[7].shape[0];
    const int64_t *ip = (const int64_t *)v[0].buf, *jp = (const int64_t *)v[2].buf;
    const int32_t *ix = (const int32_t *)v[1].buf, *jx = (const int32_t *)v[3].buf;
    const uint8_t *kd = (const uint8_t *)v[4].buf;
    int64_t *size = (int64_t *)v[5].buf, *ent = (int64_t *)v[6].buf, *live = (int64_t *)v[7].buf;
    if (n > INT32_MAX || v[0].shape[0] < n + 1 || v[2].shape[0] < n + 1 || v[5].shape[0] != N_PACK ||
        v[6].shape[0] != N_PACK || lo < 0 || hi > n || lo > hi || ip[n] > v[1].shape[0] || jp[n] > v[3].shape[0]) {
        PyErr_SetString(PyExc_ValueError, "pack_count: inconsistent array sizes");
        goto fail;
    }
    int bad = 0;
    Py_BEGIN_ALLOW_THREADS
    for (int c = 0; c < N_PACK; c++) size[c] = ent[c] = 0;
    memset(live, 0, (size_t)F * sizeof(int64_t));
    for (Py_ssize_t i = lo; i < hi; i++) {
        if (kd[i] != k) continue;
        int64_t a = ip[i], a1 = ip[i + 1], b = jp[i], b1 = jp[i + 1];
        if (a1 < a || b1 < b || a < 0 || b < 0) { bad = 1; break; }
        int64_t L = (a1 - a) + (b1 - b);
        if (L == 0) continue;
        if (L == 1) {
            int32_t f = a1 > a ? ix[a] : jx[b];
            if (f < 0 || f >= F) { bad = 1; break; }
            live[f]++;
            continue;
        }
        int c = L <= N_PACK ? (int)L - 2 : N_PACK - 1;
        size[c]++;
        ent[c] += L;
    }
    Py_END_ALLOW_THREADS
    if (bad) {
        PyErr_SetString(PyExc_ValueError, "pack_count: an index is out of range");
        goto fail;
    }
    for (int j = 0; j < got; j++) PyBuffer_Release(&v[j]);
    Py_RETURN_NONE;
fail:
    for (int j = 0; j < got; j++) PyBuffer_Release(&v[j]);
    return NULL;
}

/* pack_write(ip, ix, jp, jx, kind, k, lo, hi, next, inext, ng, ioff, cursor, rows, idx, gptr, srows, state, pos):
   the second half for rows lo:hi, after pack_count: row i of class c goes to rows[next[c]++] with its
   pattern (both parts merged by column) at idx[inext[c]], a row of the general class also gets
   gptr[++ng] (relative to ioff[N_PACK - 1]); a row of one entry f goes to srows[cursor[f]++]. The caller
   starts each range's next, inext, ng and cursor where the ranges before it end, so the ranges together
   write what one range would. state[i] (0, 1 packed, 2 single) and pos[i] (its place in rows, -1) are
   written for every row of lo:hi. */
static PyObject *pack_write(PyObject *self, PyObject *args)
{
    PyObject *o[16];
    Py_buffer v[16];
    int got = 0, k;
    Py_ssize_t lo, hi, ng;
    if (!PyArg_ParseTuple(args, "OOOOOinnOOnOOOOOOOO", &o[0], &o[1], &o[2], &o[3], &o[4], &k, &lo, &hi, &o[5], &o[6],
                          &ng, &o[7], &o[8], &o[9], &o[10], &o[11], &o[12], &o[13], &o[14]))
        return NULL;
    GET(0, 'i', 8, 0, "indptr") GET(1, 'i', 4, 0, "indices") GET(2, 'i', 8, 0, "extra indptr")
    GET(3, 'i', 4, 0, "extra indices") GET(4, 'u', 1, 0, "kind") GET(5, 'i', 8, 0, "next") GET(6, 'i', 8, 0, "inext")
    GET(7, 'i', 8, 0, "ioff") GET(8, 'i', 8, 0, "cursor") GET(9, 'i', 8, 1, "rows") GET(10, 'i', 4, 1, "idx")
    GET(11, 'i', 8, 1, "gptr") GET(12, 'i', 8, 1, "srows") GET(13, 'u', 1, 1, "state") GET(14, 'i', 4, 1, "pos")
    Py_ssize_t n = v[4].shape[0], F = v[8].shape[0];
    const int64_t *ip = (const int64_t *)v[0].buf, *jp = (const int64_t *)v[2].buf;
    const int32_t *ix = (const int32_t *)v[1].buf, *jx = (const int32_t *)v[3].buf;
    const uint8_t *kd = (const uint8_t *)v[4].buf;
    const int64_t *ioff = (const int64_t *)v[7].buf;
    int64_t next[N_PACK], inext[N_PACK], *cur = NULL;
    int64_t *rows = (int64_t *)v[9].buf, *gptr = (int64_t *)v[11].buf, *srows = (int64_t *)v[12].buf;
    int32_t *idx = (int32_t *)v[10].buf, *pos = (int32_t *)v[14].buf;
    uint8_t *state = (uint8_t *)v[13].buf;
    Py_ssize_t n_rows = v[9].shape[0], n_idx = v[10].shape[0], n_g = v[11].shape[0], n_s = v[12].shape[0];
    if (n > INT32_MAX || v[0].shape[0] < n + 1 || v[2].shape[0] < n + 1 || v[5].shape[0] != N_PACK ||
        v[6].shape[0] != N_PACK || v[7].shape[0] != N_PACK + 1 || v[13].shape[0] != n || v[14].shape[0] != n ||
        lo < 0 || hi > n || lo > hi || ng < 0 || ip[n] > v[1].shape[0] || jp[n] > v[3].shape[0]) {
        PyErr_SetString(PyExc_ValueError, "pack_write: inconsistent array sizes");
        goto fail;
    }
    cur = (int64_t *)malloc((size_t)(F > 0 ? F : 1) * sizeof(int64_t));
    if (!cur) {
        PyErr_NoMemory();
        goto fail;
    }
    memcpy(cur, v[8].buf, (size_t)F * sizeof(int64_t));
    memcpy(next, v[5].buf, sizeof(next));
    memcpy(inext, v[6].buf, sizeof(inext));
    int bad = 0;
    Py_BEGIN_ALLOW_THREADS
    for (Py_ssize_t i = lo; i < hi && !bad; i++) {
        state[i] = 0;
        pos[i] = -1;
        if (kd[i] != k) continue;
        int64_t a = ip[i], a1 = ip[i + 1], b = jp[i], b1 = jp[i + 1];
        if (a1 < a || b1 < b || a < 0 || b < 0) { bad = 1; break; }
        int64_t L = (a1 - a) + (b1 - b);
        if (L == 0) continue;
        if (L == 1) {
            int32_t f = a1 > a ? ix[a] : jx[b];
            if (f < 0 || f >= F || cur[f] < 0 || cur[f] >= n_s) { bad = 1; break; }
            srows[cur[f]++] = i;
            state[i] = 2;
            continue;
        }
        int c = L <= N_PACK ? (int)L - 2 : N_PACK - 1;
        if (next[c] < 0 || next[c] >= n_rows || inext[c] < 0 || inext[c] + L > n_idx ||
            (c == N_PACK - 1 && ng + 1 >= n_g)) { bad = 1; break; }
        state[i] = 1;
        pos[i] = (int32_t)next[c];
        rows[next[c]++] = i;
        int32_t *out = idx + inext[c];
        while (a < a1 && b < b1) *out++ = ix[a] < jx[b] ? ix[a++] : jx[b++];
        while (a < a1) *out++ = ix[a++];
        while (b < b1) *out++ = jx[b++];
        inext[c] += L;
        if (c == N_PACK - 1) gptr[++ng] = inext[c] - ioff[c];
    }
    Py_END_ALLOW_THREADS
    free(cur);
    if (bad) {
        PyErr_SetString(PyExc_ValueError, "pack_write: an index is out of range or the output is too small");
        goto fail;
    }
    for (int j = 0; j < got; j++) PyBuffer_Release(&v[j]);
    Py_RETURN_NONE;
fail:
    for (int j = 0; j < got; j++) PyBuffer_Release(&v[j]);
    return NULL;
}

/* packed_pass(rows, seg, idx, ioff, gptr, kind, vec, F, lo, hi, row_base, sel_off, count_pool, block_kind,
   positive keys, rows, bucket starts, kmax, kmin, scale, m, counts, top keys, top rows) -> (candidates,
   rows visited): class_pass over the packed rows rows[lo:hi] whose alive[j] is not 0 (entries of rows
   that left: chosen pool rows, rows whose pattern changed; the rows array is read only for ties and
   candidates). An entry outside [0, F) or a pointer outside idx is replaced by 0 as the pass goes (selects)
   and makes the call fail. */
#define N_PBUFS 13
static PyObject *packed_pass(PyObject *self, PyObject *args)
{
    PyObject *o[N_PBUFS];
    Py_ssize_t F, lo, hi, sel_off, m, row_base;
    int count_pool, block_kind, want;
    double kmax, kmin, scale;
    Py_ssize_t part = 0, n_parts = 1;
    if (!PyArg_ParseTuple(args, "OOOOOOOnnnnniiOOOdddnOOOi|nn", &o[0], &o[1], &o[2], &o[3], &o[4], &o[5], &o[6], &F,
                          &lo, &hi, &row_base, &sel_off, &count_pool, &block_kind, &o[7], &o[8], &o[9], &kmax, &kmin,
                          &scale, &m, &o[10], &o[11], &o[12], &want, &part, &n_parts))
        return NULL;
    static const char kinds[N_PBUFS] = {'i', 'i', 'i', 'i', 'i', 'u', 'f', 'f', 'i', 'i', 'i', 'f', 'i'};
    static const Py_ssize_t sizes[N_PBUFS] = {8, 8, 4, 8, 8, 1, 8, 8, 8, 4, 8, 8, 8};
    static const char *names[N_PBUFS] = {"rows", "seg", "idx", "ioff", "gptr", "alive", "vec", "positive keys",
                                         "positive rows", "bucket starts", "counts", "top keys", "top rows"};
    Py_buffer v[N_PBUFS];
    int got = 0;
    for (; got < N_PBUFS; got++)
        if (get_buf(o[got], &v[got], kinds[got], sizes[got], got >= 10, names[got]) < 0) goto pfail;
    const int64_t *vr = (const int64_t *)v[0].buf, *seg = (const int64_t *)v[1].buf, *ioff = (const int64_t *)v[3].buf;
    const int64_t *gptr = (const int64_t *)v[4].buf;
    const int32_t *idx = (const int32_t *)v[2].buf;
    Py_ssize_t nv = v[0].shape[0], P = v[7].shape[0], nb = v[9].shape[0] - 1;
    Py_ssize_t n_idx = v[2].shape[0], n_g = v[4].shape[0];
    if (v[5].shape[0] != nv || v[1].shape[0] != N_PACK + 1 || v[3].shape[0] != N_PACK + 1 || lo < 0 || hi > nv || lo > hi ||
        v[8].shape[0] != P || nb < 1 || v[10].shape[0] != P + 1 || v[11].shape[0] < m || v[12].shape[0] < m || m < 0 ||
        F < 0 || (sel_off >= 0 ? sel_off : 0) + F > v[6].shape[0] || 2 * F > v[6].shape[0] ||
        (block_kind != 1 && block_kind != 2) || seg[0] != 0 || seg[N_PACK] > nv || ioff[N_PACK] > n_idx ||
        n_g < seg[N_PACK] - seg[N_PACK - 1] + 1 || n_parts < 1 || part < 0 || part >= n_parts) {
        PyErr_SetString(PyExc_ValueError, "packed_pass: inconsistent array sizes");
        goto pfail;
    }
    for (int c = 0; c < N_PACK; c++)
        if (seg[c + 1] < seg[c] || ioff[c + 1] < ioff[c] ||
            (c < N_PACK - 1 && ioff[c + 1] - ioff[c] != (seg[c + 1] - seg[c]) * (c + 2))) {
            PyErr_SetString(PyExc_ValueError, "packed_pass: inconsistent classes");
            goto pfail;
        }
    const uint8_t *al = (const uint8_t *)v[5].buf; /* alive[j]: entry j is still held here */
    const double *vec = (const double *)v[6].buf;
    const double *w = vec + (block_kind == 2 ? F : 0), *ws = sel_off >= 0 ? vec + sel_off : NULL;
    const double *pkv = (const double *)v[7].buf;
    const int64_t *prv = (const int64_t *)v[8].buf;
    const int32_t *st = (const int32_t *)v[9].buf;
    int64_t *cnt = (int64_t *)v[10].buf;
    int counted = block_kind == 2 ? 1 : count_pool, choose = block_kind == 1 && m > 0;
    top_t best;
    if (top_init(&best, m) < 0) goto pfail;
    int bad = 0;
    Py_ssize_t visited = 0;
    int64_t sink[8] = {0}, below = 0;
    const uint32_t uF = (uint32_t)F;
    Py_BEGIN_ALLOW_THREADS
    enum { CH = 512 };
    double kb[CH];
    int64_t rb[CH], eb[CH], lb[CH];
    uint8_t kr[CH];
    double top = (double)(nb - 1);
    const double cut = kmin - 1e-8 * (1.0 + fabs(kmin));
    for (int c = 0; c < N_PACK; c++) {
        /* part `part` of `n_parts` of every class (the classes differ in cost), within lo:hi */
        Py_ssize_t cs = seg[c] + (seg[c + 1] - seg[c]) * part / n_parts;
        Py_ssize_t ce = seg[c] + (seg[c + 1] - seg[c]) * (part + 1) / n_parts;
        Py_ssize_t a0 = cs > lo ? cs : lo, b0 = ce < hi ? ce : hi;
        for (Py_ssize_t j0 = a0; j0 < b0; j0 += CH) {
            Py_ssize_t j1 = j0 + CH < b0 ? j0 + CH : b0, nq = 0;
            switch (c) {
#define PFIXED(L)                                                                        \
            case L - 2:                                                                  \
                for (Py_ssize_t j = j0; j < j1; j++) {                                   \
                    const int32_t *e = idx + ioff[c] + (j - seg[c]) * L;                 \
                    double s = 0.0;                                                      \
                    for (int l = 0; l < L; l++) {                                        \
                        uint32_t col = (uint32_t)e[l];                                   \
                        bad |= col >= uF;                                                \
                        s += w[col < uF ? col : 0];                                      \
                    }                                                                    \
                    kb[nq] = s;                                                          \
                    rb[nq] = j;                                                          \
                    eb[nq] = ioff[c] + (j - seg[c]) * L;                                 \
                    lb[nq] = L;                                                          \
                    nq += al[j] != 0;                                                    \
                }                                                                        \
                break;
            PFIXED(2) PFIXED(3) PFIXED(4)
#undef PFIXED
            default:
                for (Py_ssize_t j = j0; j < j1; j++) {
                    if (!al[j]) continue;
                    int64_t g = j - seg[c];
                    int64_t e0 = ioff[c] + gptr[g], e1 = ioff[c] + gptr[g + 1];
                    if (e0 < ioff[c] || e1 < e0 || e1 > ioff[c + 1]) { bad = 1; continue; }
                    double s = 0.0;
                    for (int64_t e = e0; e < e1; e++) {
                        uint32_t col = (uint32_t)idx[e];
                        bad |= col >= uF;
                        s += w[col < uF ? col : 0];
                    }
                    kb[nq] = s;
                    rb[nq] = j;
                    eb[nq] = e0;
                    lb[nq++] = e1 - e0;
                }
            }
            visited += nq;
            /* kb holds the sums: a sum below `cut` has a key below every positive's (the key is the sum
               rounded to 9 decimals), so it is counted below them without its key; the others' keys
               replace their sums (kr[q]: whether kb[q] is a key) */
            for (Py_ssize_t q = 0; q < nq; q++) {
                double sum = kb[q];
                int low = sum < cut;
                below += low & counted;
                kr[q] = (uint8_t)!low;
                if (low) continue;
                double key = tie_key(sum);
                kb[q] = key;
                int search, out_below = key < kmin;
                int64_t g = bucket_gap(key, st, top, kmax, kmin, scale, P, &search);
                /* the row itself is read only for a tie with a positive (rb holds the entry) */
                if (search) g = gap_of(key, row_base + vr[rb[q]], pkv, prv, P, st, nb, kmax, kmin, scale);
                /* most rows rank below every positive: counted in a register, not by a chain of
                   increments of cnt[P] (each waits for the last store) */
                int64_t *dst = out_below ? &sink[q & 7] : cnt + g;
                *dst += counted;
                below += out_below & counted;
            }
            if (!choose) continue;
            for (Py_ssize_t q = 0; q < nq; q++) {
                double key = kb[q];
                if (!ws && !kr[q]) {
                    /* a sum below `cut`: its key is within 1e-9 of it, so it is refused when the sum is
                       far enough below the m-th held key */
                    if (best.pruned && key < best.thr - 1e-8 * (1.0 + fabs(best.thr))) continue;
                    key = tie_key(key);
                }
                if (ws) {
                    double s = 0.0;
                    for (int64_t e = eb[q]; e < eb[q] + lb[q]; e++) {
                        uint32_t col = (uint32_t)idx[e];
                        s += ws[col < uF ? col : 0];
                    }
                    key = tie_key(s);
                }
                int64_t row = row_base + vr[rb[q]];
                top_offer(&best, key, row);
            }
        }
    }
    top_sort(&best);
    cnt[P] += below;
    Py_END_ALLOW_THREADS
    (void)sink;
    (void)want;
    if (bad) {
        top_free(&best);
        PyErr_SetString(PyExc_ValueError, "packed_pass: a row, entry or pointer is out of range");
        goto pfail;
    }
    Py_ssize_t n_top = top_take(&best, (double *)v[11].buf, (int64_t *)v[12].buf);
    for (int q = 0; q < got; q++) PyBuffer_Release(&v[q]);
    return Py_BuildValue("nn", n_top, visited);
pfail:
    for (int q = 0; q < got; q++) PyBuffer_Release(&v[q]);
    return NULL;
}

/* touch(colptr, colrows, features, kind, k, state, tail_state, out, singles, packed) -> (n_out, n_singles,
   n_packed): the rows
   below len(state) of kind k that hold one of ``features`` (a column index's columns) and are not in the
   tail yet: each is written once to out, and also to singles if its state was 2 (one-feature rows) or to
   packed if it was 1, and its state becomes tail_state */
static PyObject *touch_rows(PyObject *self, PyObject *args)
{
    PyObject *o[8];
    Py_buffer v[8];
    int got = 0, k, tail_state;
    if (!PyArg_ParseTuple(args, "OOOOiOiOOO", &o[0], &o[1], &o[2], &o[3], &k, &o[4], &tail_state, &o[5], &o[6],
                          &o[7]))
        return NULL;
    GET(0, 'i', 8, 0, "colptr") GET(1, 'i', 4, 0, "rows") GET(2, 'i', 8, 0, "features") GET(3, 'u', 1, 0, "kind")
    GET(4, 'u', 1, 1, "state") GET(5, 'i', 8, 1, "out") GET(6, 'i', 8, 1, "singles") GET(7, 'i', 8, 1, "packed")
    Py_ssize_t F = v[0].shape[0] - 1, K = v[2].shape[0], n = v[4].shape[0], cap = v[5].shape[0];
    const int64_t *cp = (const int64_t *)v[0].buf, *feat = (const int64_t *)v[2].buf;
    const int32_t *rows = (const int32_t *)v[1].buf;
    const uint8_t *kd = (const uint8_t *)v[3].buf;
    uint8_t *state = (uint8_t *)v[4].buf;
    int64_t *out = (int64_t *)v[5].buf, *sg = (int64_t *)v[6].buf, *pk = (int64_t *)v[7].buf;
    if (F < 0 || v[3].shape[0] < n || v[6].shape[0] != cap || v[7].shape[0] != cap || cp[F] > v[1].shape[0]) {
        PyErr_SetString(PyExc_ValueError, "touch_rows: inconsistent array sizes");
        goto fail;
    }
    int bad = 0;
    Py_ssize_t q = 0, qs = 0, qp = 0;
    Py_BEGIN_ALLOW_THREADS
    for (Py_ssize_t j = 0; j < K && !bad; j++) {
        int64_t f = feat[j];
        if (f < 0 || f >= F || cp[f + 1] < cp[f]) { bad = 1; break; }
        for (int64_t a = cp[f]; a < cp[f + 1]; a++) {
            int32_t r = rows[a];
            if (r < 0 || r >= n || kd[r] != k || state[r] == tail_state) continue;
            if (q >= cap) { bad = 2; break; }
            if (state[r] == 2) sg[qs++] = r;
            if (state[r] == 1) pk[qp++] = r;
            state[r] = (uint8_t)tail_state;
            out[q++] = r;
        }
    }
    Py_END_ALLOW_THREADS
    if (bad) {
        PyErr_SetString(PyExc_ValueError, bad == 1 ? "touch_rows: a feature is out of range"
                                                   : "touch_rows: the output is too small");
        goto fail;
    }
    for (int j = 0; j < got; j++) PyBuffer_Release(&v[j]);
    return Py_BuildValue("nnn", q, qs, qp);
fail:
    for (int j = 0; j < got; j++) PyBuffer_Release(&v[j]);
    return NULL;
}

/* ---------------------------------------------------------------- the positives' order */

static inline int pos_before(const double *k, const int64_t *r, int64_t a, int64_t b)
{
    return k[a] > k[b] || (k[a] == k[b] && r[a] < r[b]);
}

/* order(keys, rows, perm, out_keys, out_rows, start) -> (kmax, kmin, scale): the positives sorted by (key
   descending, row ascending) (perm: the last order on entry, as a first guess: an insertion sort from it
   costs little when few keys changed places; a merge sort when many did), and the running count of
   positives per bucket, buckets as kernel.positive_order makes them (len(start) - 1 of them) */
static PyObject *order_positives(PyObject *self, PyObject *args)
{
    PyObject *o[6];
    Py_buffer v[6];
    int got = 0;
    if (!PyArg_ParseTuple(args, "OOOOOO", &o[0], &o[1], &o[2], &o[3], &o[4], &o[5])) return NULL;
    GET(0, 'f', 8, 0, "keys") GET(1, 'i', 8, 0, "rows") GET(2, 'i', 8, 1, "perm") GET(3, 'f', 8, 1, "out keys")
    GET(4, 'i', 8, 1, "out rows") GET(5, 'i', 4, 1, "start")
    Py_ssize_t P = v[0].shape[0], nb = v[5].shape[0] - 1;
    const double *k = (const double *)v[0].buf;
    const int64_t *r = (const int64_t *)v[1].buf;
    int64_t *perm = (int64_t *)v[2].buf, *ro = (int64_t *)v[4].buf;
    double *ko = (double *)v[3].buf;
    int32_t *st = (int32_t *)v[5].buf;
    if (P < 1 || nb < 1 || v[1].shape[0] != P || v[2].shape[0] != P || v[3].shape[0] != P || v[4].shape[0] != P) {
        PyErr_SetString(PyExc_ValueError, "order_positives: inconsistent array sizes");
        goto fail;
    }
    int64_t *seen = (int64_t *)calloc((size_t)P, sizeof(int64_t)), *tmp = (int64_t *)malloc((size_t)P * sizeof(int64_t));
    if (!seen || !tmp) {
        free(seen);
        free(tmp);
        PyErr_NoMemory();
        goto fail;
    }
    int bad = 0;
    for (Py_ssize_t q = 0; q < P && !bad; q++) {
        if (perm[q] < 0 || perm[q] >= P || seen[perm[q]]) bad = 1;
        else seen[perm[q]] = 1;
    }
    if (bad) {
        free(seen);
        free(tmp);
        PyErr_SetString(PyExc_ValueError, "order_positives: perm is not a permutation");
        goto fail;
    }
    double kmax, kmin, scale;
    Py_BEGIN_ALLOW_THREADS
    int64_t moves = 0, limit = 16 * (int64_t)P + 1024;
    for (Py_ssize_t q = 1; q < P && moves <= limit; q++) {
        int64_t x = perm[q];
        Py_ssize_t j = q;
        while (j > 0 && pos_before(k, r, x, perm[j - 1])) {
            perm[j] = perm[j - 1];
            j--;
            moves++;
        }
        perm[j] = x;
    }
    if (moves > limit) { /* many changed places: a bottom-up merge sort (stable, the same total order) */
        for (int64_t width = 1; width < P; width *= 2) {
            for (int64_t lo = 0; lo < P; lo += 2 * width) {
                int64_t mid = lo + width < P ? lo + width : P, hi = lo + 2 * width < P ? lo + 2 * width : P;
                int64_t a = lo, b = mid, t = lo;
                while (a < mid && b < hi) tmp[t++] = pos_before(k, r, perm[b], perm[a]) ? perm[b++] : perm[a++];
                while (a < mid) tmp[t++] = perm[a++];
                while (b < hi) tmp[t++] = perm[b++];
            }
            memcpy(perm, tmp, (size_t)P * sizeof(int64_t));
        }
    }
    for (Py_ssize_t q = 0; q < P; q++) {
        ko[q] = k[perm[q]];
        ro[q] = r[perm[q]];
    }
    kmax = ko[0];
    kmin = ko[P - 1];
    scale = kmax > kmin ? (double)nb / (kmax - kmin) : 0.0;
    /* start[b]: positives in buckets below b (buckets do not decrease along the order) */
    Py_ssize_t q = 0;
    for (Py_ssize_t b = 0; b <= nb; b++) {
        while (q < P) {
            int64_t bq = (int64_t)((kmax - ko[q]) * scale);
            if (bq > nb - 1) bq = nb - 1;
            if (bq >= b) break;
            q++;
        }
        st[b] = (int32_t)q;
    }
    Py_END_ALLOW_THREADS
    free(seen);
    free(tmp);
    for (int j = 0; j < got; j++) PyBuffer_Release(&v[j]);
    return Py_BuildValue("ddd", kmax, kmin, scale);
fail:
    for (int j = 0; j < got; j++) PyBuffer_Release(&v[j]);
    return NULL;
}

static PyMethodDef methods[] = {
    {"order_positives", order_positives, METH_VARARGS, "The positives in rank order and their buckets."},
    {"touch_rows", touch_rows, METH_VARARGS, "Move the rows holding some features to the tail."},
    {"pack_count", pack_count, METH_VARARGS, "Packing a range of rows: the sizes of its classes and groups."},
    {"pack_write", pack_write, METH_VARARGS, "Packing a range of rows: their patterns, by class and group."},
    {"packed_pass", packed_pass, METH_VARARGS, "class_pass over packed rows."},
    {"single_pass", single_pass, METH_VARARGS, "The rows of one feature, one key per feature."},
    {"class_pass", class_pass, METH_VARARGS, "round_pass over rows grouped by the length of their pattern."},
    {"nonempty_rows", nonempty_rows, METH_VARARGS, "The rows of a kind whose pattern is not empty."},
    {"first_empty", first_empty, METH_VARARGS, "The first rows of a kind whose pattern is empty."},
    {"weights", weights, METH_VARARGS, "A round's thresholded weights from the cached logarithms."},
    {"weights_at", weights_at, METH_VARARGS, "weights for some features; when each without weight must be seen again."},
    {"round_pass", round_pass, METH_VARARGS, "Scores, AP gap counts and the m best pool rows of a block of rows."},
    {"row_keys", row_keys, METH_VARARGS, "Tie keys of the given rows under vec[offset:offset + F]."},
    {"restrict_rows", restrict_rows, METH_VARARGS, "The entries of mapped columns, renumbered."},
    {"merge_rows", merge_rows, METH_VARARGS, "The union of two row-sorted patterns with disjoint columns."},
    {"filter_rows", filter_rows, METH_VARARGS, "Keep the entries of kept columns, in place."},
    {"column_index", column_index, METH_VARARGS, "The column-major copy of a row-major pattern."},
    {"gather_columns", gather_columns, METH_VARARGS, "The row-major pattern of some columns of a column index."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "_rounds", "The OTS round kernel.", -1, methods};

PyMODINIT_FUNC PyInit__rounds(void) { return PyModule_Create(&module); }
