/* Two passes of the multinomial family over a CSR matrix's entries (plugins/text/multinomial.py holds the
   same computations in numpy and scipy, and uses them when this module is not built).

   class_sums: out[j, y_i] += w_i * v for every stored entry (i, j, v), rows in order: each (word, class) sum adds its
   rows in row order, the order scipy's product of the weighted class indicator with X takes, so the
   result is the same to the last bit. One stream over the entries with a scatter into the (V, K) sums,
   where scipy's kernel for that product streams the transposed matrix once per two classes.
   Plain C against the Python headers (buffer protocol, no numpy headers); the GIL is released.
   Compiled with -ffp-contract=off: no fused multiply-add may change a bit. Every index is checked (a
   branch that is never taken costs nothing beside the memory traffic), so a malformed matrix raises
   instead of writing outside ``out``.

   row_scores: out[i, k] = sum over row i's entries (j, v) of v * weights[j, k], the entries in order from
   0.0, as scipy's CSR @ dense kernel adds them (the same bits), for the rows of one range: ranges run in
   threads (the GIL is released), where scipy's product takes one core. */

#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <string.h>

static int get_buffer(PyObject *obj, Py_buffer *view, const char *function, const char *name, int writable)
{
    int flags = PyBUF_C_CONTIGUOUS | PyBUF_FORMAT | (writable ? PyBUF_WRITABLE : 0);
    if (PyObject_GetBuffer(obj, view, flags) < 0) {
        PyErr_Format(PyExc_TypeError, "%s: %s must be a contiguous%s array", function, name,
                     writable ? " writable" : "");
        return -1;
    }
    return 0;
}

/* 4 for int32, 8 for int64, 0 otherwise */
static int int_width(const Py_buffer *view)
{
    const char *f = view->format ? view->format : "B";
    if (*f == '<' || *f == '=' || *f == '@') f++;
    if (view->itemsize == 4 && (*f == 'i' || *f == 'l')) return 4;
    if (view->itemsize == 8 && (*f == 'q' || *f == 'l' || *f == 'n')) return 8;
    return 0;
}

static int is_double(const Py_buffer *view)
{
    const char *f = view->format ? view->format : "B";
    if (*f == '<' || *f == '=' || *f == '@') f++;
    return view->itemsize == 8 && *f == 'd';
}

/* a * b == n for non-negative a, b without overflow: a product that wraps could match a short buffer */
static int product_is(Py_ssize_t a, Py_ssize_t b, Py_ssize_t n)
{
    if (a < 0 || b < 0) return 0;
    if (b != 0 && a > PY_SSIZE_T_MAX / b) return 0;
    return a * b == n;
}

#define IDX(p, width, k) ((width) == 4 ? (int64_t)((const int32_t *)(p))[k] : ((const int64_t *)(p))[k])

/* A call's end once its buffers were taken: the error of its first malformed row (kind 1: indptr, 2: a
   label, 3: a column index) or None; the buffers released either way */
static PyObject *finish(const char *function, int64_t bad_row, int64_t bad_kind, Py_buffer *b, int got)
{
    PyObject *result = NULL;
    if (bad_row >= 0) {
        const char *what = bad_kind == 1 ? "indptr is not a non-decreasing pointer into the entries"
                         : bad_kind == 2 ? "the label is outside [0, n_classes)"
                                         : "a column index is outside [0, n_features)";
        PyErr_Format(PyExc_ValueError, "%s: row %lld: %s", function, (long long)bad_row, what);
    } else {
        Py_INCREF(Py_None);
        result = Py_None;
    }
    for (int k = 0; k < got; k++) PyBuffer_Release(&b[k]);
    return result;
}

static PyObject *class_sums(PyObject *self, PyObject *args)
{
    PyObject *o_indptr, *o_indices, *o_data, *o_y, *o_w, *o_out;
    Py_ssize_t n_features, n_classes;
    if (!PyArg_ParseTuple(args, "OOOOOOnn", &o_indptr, &o_indices, &o_data, &o_y, &o_w, &o_out, &n_features,
                          &n_classes))
        return NULL;
    Py_buffer b[6];
    PyObject *objs[6] = {o_indptr, o_indices, o_data, o_y, o_w, o_out};
    const char *names[6] = {"indptr", "indices", "data", "y", "w", "out"};
    int got = 0;
    PyObject *result = NULL;
    for (; got < 6; got++)
        if (get_buffer(objs[got], &b[got], "class_sums", names[got], got == 5) < 0) goto done;
    int wp = int_width(&b[0]), wi = int_width(&b[1]), wy = int_width(&b[3]);
    if (!wp || !wi || !wy || !is_double(&b[2]) || !is_double(&b[4]) || !is_double(&b[5])) {
        PyErr_SetString(PyExc_TypeError, "class_sums: indptr, indices and y must be int32 or int64 arrays, "
                                         "data, w and out float64 arrays");
        goto done;
    }
    Py_ssize_t n_rows = b[0].len / wp - 1, nnz = b[1].len / wi;
    if (n_rows < 0 || b[3].len / wy != n_rows || b[4].len / 8 != n_rows || b[2].len / 8 != nnz ||
        n_features < 0 || n_classes < 1 || !product_is(n_features, n_classes, b[5].len / 8)) {
        PyErr_SetString(PyExc_ValueError, "class_sums: the arrays' lengths do not fit a CSR matrix of "
                                          "n_features columns, one label and weight per row, out of (V, K)");
        goto done;
    }
    const char *indptr = (const char *)b[0].buf, *indices = (const char *)b[1].buf, *ys = (const char *)b[3].buf;
    const double *data = (const double *)b[2].buf, *w = (const double *)b[4].buf;
    double *out = (double *)b[5].buf;
    const int64_t V = n_features, K = n_classes;
    int64_t bad_row = -1, bad_kind = 0;
    Py_BEGIN_ALLOW_THREADS
    int64_t start = IDX(indptr, wp, 0);   /* 0 for scipy's matrices; entries before it belong to no row */
    if (start < 0 || start > nnz) { bad_row = 0; bad_kind = 1; }
    for (int64_t i = 0; i < n_rows && bad_row < 0; i++) {
        int64_t end = IDX(indptr, wp, i + 1);
        int64_t c = IDX(ys, wy, i);
        if (end < start || end > nnz) { bad_row = i; bad_kind = 1; break; }
        if (c < 0 || c >= K) { bad_row = i; bad_kind = 2; break; }
        const double wi_ = w[i];
        double *col = out + c;
        if (wi == 4) {
            const int32_t *ix = (const int32_t *)indices;
            for (int64_t e = start; e < end; e++) {
                int64_t j = ix[e];
                if ((uint64_t)j >= (uint64_t)V) { bad_row = i; bad_kind = 3; break; }
                col[j * K] += wi_ * data[e];
            }
        } else {
            const int64_t *ix = (const int64_t *)indices;
            for (int64_t e = start; e < end; e++) {
                int64_t j = ix[e];
                if ((uint64_t)j >= (uint64_t)V) { bad_row = i; bad_kind = 3; break; }
                col[j * K] += wi_ * data[e];
            }
        }
        start = end;
    }
    Py_END_ALLOW_THREADS
    return finish("class_sums", bad_row, bad_kind, b, got);
done:
    for (int k = 0; k < got; k++) PyBuffer_Release(&b[k]);
    return result;
}

/* Rows start..stop of X @ weights into out, each row's sums from 0.0 in entry order (scipy's csr_matvec and
   csr_matvecs add a * x[k] to the row's sum the same way). Two classes keep their sums in registers and
   check the column indices after the row (a bad one is clamped to 0 until then); more add into the out row. Returns the first malformed row (-1: none), its kind in *kind
   (1: indptr, 3: a column index). */
#define SCORE_ROWS(NAME, ITYPE)                                                                          \
static int64_t NAME(const char *indptr, int wp, const ITYPE *restrict ix, const double *restrict data,    \
                    const double *restrict weights, double *restrict out, int64_t V, int64_t K,            \
                    int64_t nnz, int64_t start, int64_t stop,                                              \
                    int64_t *kind)                                                                       \
{                                                                                                        \
    for (int64_t i = start; i < stop; i++) {                                                             \
        const int64_t begin = IDX(indptr, wp, i), end = IDX(indptr, wp, i + 1);                          \
        if (begin < 0 || end < begin || end > nnz) { *kind = 1; return i; }                              \
        if (V == 0 && end > begin) { *kind = 3; return i; }  /* no column: the clamp below needs one */  \
        if (K == 2) {                                                                                    \
            double s0 = 0.0, s1 = 0.0;                                                                   \
            int bad = 0;                                                                                 \
            for (int64_t e = begin; e < end; e++) {                                                      \
                uint64_t j = (uint64_t)(int64_t)ix[e];                                                   \
                bad |= j >= (uint64_t)V;                                                                 \
                j = j < (uint64_t)V ? j : 0;                                                             \
                const double v = data[e], *w = weights + 2 * j;                                          \
                s0 += v * w[0];                                                                          \
                s1 += v * w[1];                                                                          \
            }                                                                                            \
            if (bad) { *kind = 3; return i; }                                                            \
            out[2 * i] = s0;                                                                             \
            out[2 * i + 1] = s1;                                                                         \
        } else {                                                                                         \
            double *restrict o = out + i * K;                                                            \
            for (int64_t k = 0; k < K; k++) o[k] = 0.0;                                                  \
            for (int64_t e = begin; e < end; e++) {                                                      \
                const int64_t j = ix[e];                                                                 \
                if ((uint64_t)j >= (uint64_t)V) { *kind = 3; return i; }                                 \
                const double v = data[e], *restrict w = weights + j * K;                                 \
                for (int64_t k = 0; k < K; k++) o[k] += v * w[k];                                        \
            }                                                                                            \
        }                                                                                                \
    }                                                                                                    \
    return -1;                                                                                           \
}
SCORE_ROWS(score_rows_i32, int32_t)
SCORE_ROWS(score_rows_i64, int64_t)

/* out[i, :] for start <= i < stop */
static PyObject *row_scores(PyObject *self, PyObject *args)
{
    PyObject *o_indptr, *o_indices, *o_data, *o_weights, *o_out;
    Py_ssize_t n_features, n_classes, row_start, row_stop;
    if (!PyArg_ParseTuple(args, "OOOOOnnnn", &o_indptr, &o_indices, &o_data, &o_weights, &o_out, &n_features,
                          &n_classes, &row_start, &row_stop))
        return NULL;
    Py_buffer b[5];
    PyObject *objs[5] = {o_indptr, o_indices, o_data, o_weights, o_out};
    const char *names[5] = {"indptr", "indices", "data", "weights", "out"};
    int got = 0;
    PyObject *result = NULL;
    for (; got < 5; got++)
        if (get_buffer(objs[got], &b[got], "row_scores", names[got], got == 4) < 0) goto done;
    int wp = int_width(&b[0]), wi = int_width(&b[1]);
    if (!wp || !wi || !is_double(&b[2]) || !is_double(&b[3]) || !is_double(&b[4])) {
        PyErr_SetString(PyExc_TypeError, "row_scores: indptr and indices must be int32 or int64 arrays, "
                                         "data, weights and out float64 arrays");
        goto done;
    }
    Py_ssize_t n_rows = b[0].len / wp - 1, nnz = b[1].len / wi;
    if (n_rows < 0 || b[2].len / 8 != nnz || n_features < 0 || n_classes < 1 ||
        !product_is(n_features, n_classes, b[3].len / 8) || !product_is(n_rows, n_classes, b[4].len / 8) ||
        row_start < 0 || row_stop < row_start || row_stop > n_rows) {
        PyErr_SetString(PyExc_ValueError, "row_scores: the arrays' lengths do not fit a CSR matrix of "
                                          "n_features columns, weights of (n_features, n_classes), out of "
                                          "(n_rows, n_classes) and rows start..stop within it");
        goto done;
    }
    const int64_t K = n_classes, V = n_features;
    const char *indptr = (const char *)b[0].buf;
    const double *data = (const double *)b[2].buf, *weights = (const double *)b[3].buf;
    double *out = (double *)b[4].buf;
    int64_t bad_row = -1, bad_kind = 0;
    Py_BEGIN_ALLOW_THREADS
    if (wi == 4)
        bad_row = score_rows_i32(indptr, wp, (const int32_t *)b[1].buf, data, weights, out, V, K, nnz,
                                 row_start, row_stop, &bad_kind);
    else
        bad_row = score_rows_i64(indptr, wp, (const int64_t *)b[1].buf, data, weights, out, V, K, nnz,
                                 row_start, row_stop, &bad_kind);
    Py_END_ALLOW_THREADS
    return finish("row_scores", bad_row, bad_kind, b, got);
done:
    for (int k = 0; k < got; k++) PyBuffer_Release(&b[k]);
    return result;
}

static PyMethodDef methods[] = {
    {"class_sums", class_sums, METH_VARARGS,
     "class_sums(indptr, indices, data, y, w, out, n_features, n_classes): out[j, y_i] += w_i * v, rows in order."},
    {"row_scores", row_scores, METH_VARARGS,
     "row_scores(indptr, indices, data, weights, out, n_features, n_classes, start, stop): out[i] = X[i] @ "
     "weights for start <= i < stop, entries in order."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "_sparse_kernels",
                                    "Class sums and row scores of a CSR matrix, one pass each.", -1, methods};

PyMODINIT_FUNC PyInit__sparse_kernels(void) { return PyModule_Create(&module); }
