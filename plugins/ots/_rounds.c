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

#define N_BUFS 12

static PyObject *round_pass(PyObject *self, PyObject *args)
{
    PyObject *o[N_BUFS];
    Py_ssize_t F, lo, hi, sel_off, m, row_base;
    int count_pool, count_sts;
    double kmax, kmin, scale;
    /* base indptr, indices; extra indptr, indices; kind, vec; positive keys, rows, bucket starts;
       counts, top keys, top rows (written) */
    if (!PyArg_ParseTuple(args, "OOOOOOnnnnniiOOOdddnOOO", &o[0], &o[1], &o[2], &o[3], &o[4], &o[5], &F, &lo, &hi,
                          &row_base, &sel_off, &count_pool, &count_sts, &o[6], &o[7], &o[8], &kmax, &kmin, &scale,
                          &m, &o[9], &o[10], &o[11]))
        return NULL;
    static const char kinds[N_BUFS] = {'i', 'i', 'i', 'i', 'u', 'f', 'f', 'i', 'i', 'i', 'f', 'i'};
    static const Py_ssize_t sizes[N_BUFS] = {8, 4, 8, 4, 1, 8, 8, 8, 4, 8, 8, 8};
    static const char *names[N_BUFS] = {"indptr", "indices", "extra indptr", "extra indices", "kind", "vec",
                                        "positive keys", "positive rows", "bucket starts", "counts", "top keys",
                                        "top rows"};
    Py_buffer v[N_BUFS];
    int got = 0;
    for (; got < N_BUFS; got++)
        if (get_buf(o[got], &v[got], kinds[got], sizes[got], got >= 9, names[got]) < 0) goto fail;

    Py_ssize_t n_rows = v[4].shape[0], P = v[6].shape[0], nb = v[8].shape[0] - 1;
    if (v[0].shape[0] != n_rows + 1 || v[2].shape[0] != n_rows + 1 || lo < 0 || hi > n_rows || lo > hi ||
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
    Py_ssize_t cap = 2 * m + 16, nc = 0;
    cand_t *buf = (cand_t *)malloc((size_t)cap * sizeof(cand_t));
    if (!buf) {
        PyErr_NoMemory();
        goto fail;
    }
    int pruned = 0;
    double thr = 0.0;
    Py_BEGIN_ALLOW_THREADS
    for (Py_ssize_t i = lo; i < hi; i++) {
        uint8_t k = kd[i];
        if (k != 1 && k != 2) continue;
        int64_t r = row_base + i;
        if (k == 2) {
            if (count_sts)
                cnt[gap_of(tie_key(row_sum(ip, ix, jp, jx, i, vec + F)), r, pkv, prv, P, st, nb, kmax, kmin, scale)]++;
            continue;
        }
        double key = tie_key(row_sum(ip, ix, jp, jx, i, vec));
        if (count_pool) cnt[gap_of(key, r, pkv, prv, P, st, nb, kmax, kmin, scale)]++;
        if (m == 0) continue;
        if (sel_off >= 0) key = tie_key(row_sum(ip, ix, jp, jx, i, vec + sel_off));
        /* rows come in ascending order: once m are held, an equal key ranks after all of them */
        if (!pruned || key > thr) {
            buf[nc].key = key;
            buf[nc].row = r;
            nc++;
            if (nc == cap) {
                qsort(buf, (size_t)nc, sizeof(cand_t), cand_cmp);
                nc = m;
                thr = buf[m - 1].key;
                pruned = 1;
            }
        }
    }
    qsort(buf, (size_t)nc, sizeof(cand_t), cand_cmp);
    Py_END_ALLOW_THREADS
    Py_ssize_t n_top = nc < m ? nc : m;
    double *tko = (double *)v[10].buf;
    int64_t *tro = (int64_t *)v[11].buf;
    for (Py_ssize_t q = 0; q < n_top; q++) {
        tko[q] = buf[q].key;
        tro[q] = buf[q].row;
    }
    free(buf);
    for (int q = 0; q < got; q++) PyBuffer_Release(&v[q]);
    return PyLong_FromSsize_t(n_top);
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

static PyMethodDef methods[] = {
    {"round_pass", round_pass, METH_VARARGS, "Scores, AP gap counts and the m best pool rows of a block of rows."},
    {"row_keys", row_keys, METH_VARARGS, "Tie keys of the given rows under vec[offset:offset + F]."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "_rounds", "The OTS round kernel.", -1, methods};

PyMODINIT_FUNC PyInit__rounds(void) { return PyModule_Create(&module); }
