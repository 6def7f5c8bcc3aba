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

static int get_buffer(PyObject *obj, Py_buffer *view, const char *name, int writable)
{
    int flags = PyBUF_C_CONTIGUOUS | PyBUF_FORMAT | (writable ? PyBUF_WRITABLE : 0);
    if (PyObject_GetBuffer(obj, view, flags) < 0) {
        PyErr_Format(PyExc_TypeError, "class_sums: %s must be a contiguous%s array", name,
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

#define IDX(p, width, k) ((width) == 4 ? (int64_t)((const int32_t *)(p))[k] : ((const int64_t *)(p))[k])

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
        if (get_buffer(objs[got], &b[got], names[got], got == 5) < 0) goto done;
    int wp = int_width(&b[0]), wi = int_width(&b[1]), wy = int_width(&b[3]);
    if (!wp || !wi || !wy || !is_double(&b[2]) || !is_double(&b[4]) || !is_double(&b[5])) {
        PyErr_SetString(PyExc_TypeError, "class_sums: indptr, indices and y must be int32 or int64 arrays, "
                                         "data, w and out float64 arrays");
        goto done;
    }
    Py_ssize_t n_rows = b[0].len / wp - 1, nnz = b[1].len / wi;
    if (n_rows < 0 || b[3].len / wy != n_rows || b[4].len / 8 != n_rows || b[2].len / 8 != nnz ||
        n_features < 0 || n_classes < 1 || b[5].len / 8 != n_features * n_classes) {
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
    if (bad_row >= 0) {
        const char *what = bad_kind == 1 ? "indptr is not a non-decreasing pointer into the entries"
                         : bad_kind == 2 ? "the label is outside [0, n_classes)"
                                         : "a column index is outside [0, n_features)";
        PyErr_Format(PyExc_ValueError, "class_sums: row %lld: %s", (long long)bad_row, what);
        goto done;
    }
    Py_INCREF(Py_None);
    result = Py_None;
done:
    for (int k = 0; k < got; k++) PyBuffer_Release(&b[k]);
    return result;
}

/* out[i, :] for start <= i < stop; each row's sums kept in a local (K,) buffer */
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
    double *sums = NULL;
    for (; got < 5; got++)
        if (get_buffer(objs[got], &b[got], names[got], got == 4) < 0) goto done;
    int wp = int_width(&b[0]), wi = int_width(&b[1]);
    if (!wp || !wi || !is_double(&b[2]) || !is_double(&b[3]) || !is_double(&b[4])) {
        PyErr_SetString(PyExc_TypeError, "row_scores: indptr and indices must be int32 or int64 arrays, "
                                         "data, weights and out float64 arrays");
        goto done;
    }
    Py_ssize_t n_rows = b[0].len / wp - 1, nnz = b[1].len / wi;
    if (n_rows < 0 || b[2].len / 8 != nnz || n_features < 0 || n_classes < 1 ||
        b[3].len / 8 != n_features * n_classes || b[4].len / 8 != n_rows * n_classes ||
        row_start < 0 || row_stop < row_start || row_stop > n_rows) {
        PyErr_SetString(PyExc_ValueError, "row_scores: the arrays' lengths do not fit a CSR matrix of "
                                          "n_features columns, weights of (n_features, n_classes), out of "
                                          "(n_rows, n_classes) and rows start..stop within it");
        goto done;
    }
    const int64_t K = n_classes, V = n_features;
    sums = (double *)PyMem_RawMalloc((size_t)K * sizeof(double));
    if (!sums) { PyErr_NoMemory(); goto done; }
    const char *indptr = (const char *)b[0].buf, *indices = (const char *)b[1].buf;
    const double *data = (const double *)b[2].buf, *weights = (const double *)b[3].buf;
    double *out = (double *)b[4].buf;
    int64_t bad_row = -1, bad_kind = 0;
    Py_BEGIN_ALLOW_THREADS
    for (int64_t i = row_start; i < row_stop; i++) {
        int64_t begin = IDX(indptr, wp, i), end = IDX(indptr, wp, i + 1);
        if (begin < 0 || end < begin || end > nnz) { bad_row = i; bad_kind = 1; break; }
        for (int64_t k = 0; k < K; k++) sums[k] = 0.0;
        for (int64_t e = begin; e < end; e++) {
            int64_t j = IDX(indices, wi, e);
            if ((uint64_t)j >= (uint64_t)V) { bad_row = i; bad_kind = 3; break; }
            const double v = data[e];
            const double *row = weights + j * K;
            if (K == 2) { sums[0] += v * row[0]; sums[1] += v * row[1]; }
            else for (int64_t k = 0; k < K; k++) sums[k] += v * row[k];
        }
        if (bad_row >= 0) break;
        double *o = out + i * K;
        for (int64_t k = 0; k < K; k++) o[k] = sums[k];
    }
    Py_END_ALLOW_THREADS
    if (bad_row >= 0) {
        PyErr_Format(PyExc_ValueError, "row_scores: row %lld: %s", (long long)bad_row,
                     bad_kind == 1 ? "indptr is not a non-decreasing pointer into the entries"
                                   : "a column index is outside [0, n_features)");
        goto done;
    }
    Py_INCREF(Py_None);
    result = Py_None;
done:
    PyMem_RawFree(sums);
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
