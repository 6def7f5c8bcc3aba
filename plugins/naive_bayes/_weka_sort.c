/* WEKA 3.6's Utils.sortWithNoMissingValues in C: its quicksort (median of three, unstable), step for step,
   so that ties come out in WEKA's order (plugins/naive_bayes/estimators.py holds the same algorithm in
   Python, ``_weka_sort_order_python``, and uses it when this module is not built).

   nb-weka and bma-nb replay WEKA's running sums in the order WEKA adds the instances, which is the cascade
   of these sorts over every numeric attribute; in Python that was ~2 s a million values, so it was found
   for small data only. Plain C against the Python headers (buffer protocol, no numpy headers); the GIL is
   released. The partition's scans stop at the median-of-three sentinels; NaN compares false and stops
   them too, so no index leaves [left, right]. */

#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <stdlib.h>

static int is_type(const Py_buffer *view, char code, Py_ssize_t size)
{
    const char *f = view->format ? view->format : "B";
    if (*f == '<' || *f == '=' || *f == '@') f++;
    return view->itemsize == size && (*f == code || (code == 'q' && (*f == 'l' || *f == 'n')));
}

#define SWAP(i, j) do { int64_t t_ = index[i]; index[i] = index[j]; index[j] = t_; } while (0)
#define COND_SWAP(l, r) do { if (a[index[l]] > a[index[r]]) SWAP(l, r); } while (0)

static void weka_quicksort(const double *a, int64_t *index, int64_t n, int64_t *stack)
{
    int64_t top = 0;
    for (int64_t i = 0; i < n; i++) index[i] = i;
    if (n > 1) { stack[0] = 0; stack[1] = n - 1; top = 1; }
    while (top > 0) {
        top--;
        int64_t left = stack[2 * top], right = stack[2 * top + 1];
        int64_t diff = right - left;
        if (diff <= 0) continue;
        if (diff == 1) { COND_SWAP(left, right); continue; }
        if (diff == 2) { COND_SWAP(left, left + 1); COND_SWAP(left, right); COND_SWAP(left + 1, right); continue; }
        int64_t center = (left + right) / 2;              /* sortLeftRightAndCenter */
        COND_SWAP(left, center);
        COND_SWAP(left, right);
        COND_SWAP(center, right);
        SWAP(center, right - 1);
        double pivot = a[index[right - 1]];
        int64_t lo = left, hi = right - 1;                 /* partition(array, index, left, right, pivot) */
        for (;;) {
            lo++;
            while (a[index[lo]] < pivot) lo++;
            hi--;
            while (a[index[hi]] > pivot) hi--;
            if (lo >= hi) break;
            SWAP(lo, hi);
        }
        SWAP(lo, right - 1);
        stack[2 * top] = lo + 1; stack[2 * top + 1] = right; top++;
        stack[2 * top] = left; stack[2 * top + 1] = lo - 1; top++;
    }
}

static PyObject *sort_order(PyObject *self, PyObject *args)
{
    PyObject *o_values, *o_index;
    if (!PyArg_ParseTuple(args, "OO", &o_values, &o_index))
        return NULL;
    Py_buffer v, ix;
    if (PyObject_GetBuffer(o_values, &v, PyBUF_C_CONTIGUOUS | PyBUF_FORMAT) < 0)
        return NULL;
    if (PyObject_GetBuffer(o_index, &ix, PyBUF_C_CONTIGUOUS | PyBUF_FORMAT | PyBUF_WRITABLE) < 0) {
        PyBuffer_Release(&v);
        return NULL;
    }
    PyObject *result = NULL;
    if (!is_type(&v, 'd', 8) || !is_type(&ix, 'q', 8) || v.len / 8 != ix.len / 8) {
        PyErr_SetString(PyExc_TypeError, "sort_order: values must be float64 and index a writable int64 array "
                                         "of the same length");
        goto done;
    }
    int64_t n = (int64_t)(v.len / 8);
    /* each pass pops one range and pushes at most two, whose sizes sum to less than the popped one's: at
       most n + 1 ranges are ever held */
    int64_t *stack = (int64_t *)malloc(sizeof(int64_t) * 2 * (size_t)(n + 2));
    if (stack == NULL) {
        PyErr_NoMemory();
        goto done;
    }
    Py_BEGIN_ALLOW_THREADS
    weka_quicksort((const double *)v.buf, (int64_t *)ix.buf, n, stack);
    Py_END_ALLOW_THREADS
    free(stack);
    Py_INCREF(Py_None);
    result = Py_None;
done:
    PyBuffer_Release(&v);
    PyBuffer_Release(&ix);
    return result;
}

static PyMethodDef methods[] = {
    {"sort_order", sort_order, METH_VARARGS,
     "sort_order(values, index): index = the permutation WEKA 3.6's quicksort gives values (ties in its order)."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "_weka_sort", "WEKA 3.6's quicksort permutation.", -1,
                                    methods};

PyMODINIT_FUNC PyInit__weka_sort(void) { return PyModule_Create(&module); }
