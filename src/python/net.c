/* The network policy from Python (RuntimeConfig(allow_net=...)): a spec
 * dict to cc_net_options, and the host hooks, which run on the broker's
 * threads and take the GIL there. */
#include <string.h>

#include "ext.h"

/* The hooks: (on_request or None, on_response or None), a reference. */
static int request_cb(void *user, const cc_net_request *rq, cc_net_headers *add, char **reason)
{
	PyObject *hooks = user, *fn = PyTuple_GET_ITEM(hooks, 0);
	int rc = 0;
	if (fn == Py_None)
		return 0;
	PyGILState_STATE g = PyGILState_Ensure();
	PyObject *d = Py_BuildValue("{s:s,s:s,s:s,s:i,s:s}", "method", rq->method, "url", rq->url,
				    "host", rq->host, "port", rq->port, "address", rq->address);
	PyObject *r = d ? PyObject_CallOneArg(fn, d) : NULL;
	if (!r) {
		/* An exception refuses the request; its text is the reason. */
		PyObject *t, *v, *tb;
		PyErr_Fetch(&t, &v, &tb);
		PyObject *s = v ? PyObject_Str(v) : NULL;
		const char *m = s ? PyUnicode_AsUTF8(s) : NULL;
		*reason = strdup(m && *m ? m : "the request hook raised an exception");
		PyErr_Clear();
		Py_XDECREF(s);
		Py_XDECREF(t);
		Py_XDECREF(v);
		Py_XDECREF(tb);
		rc = -1;
	} else if (r == Py_False) {
		rc = -1;
	} else if (PyDict_Check(r)) {
		PyObject *k, *v;
		Py_ssize_t pos = 0;
		while (PyDict_Next(r, &pos, &k, &v)) {
			const char *ks = PyUnicode_Check(k) ? PyUnicode_AsUTF8(k) : NULL;
			const char *vs = PyUnicode_Check(v) ? PyUnicode_AsUTF8(v) : NULL;
			if (!ks || !vs || cc_net_add_header(add, ks, vs) < 0) {
				PyErr_Clear();
				*reason = strdup(
					"the request hook returned a header that is not a "
					"str token name and a str value without CR, LF or NUL");
				rc = -1;
				break;
			}
		}
	}
	Py_XDECREF(r);
	Py_XDECREF(d);
	PyGILState_Release(g);
	return rc;
}

static void response_cb(void *user, const cc_net_request *rq, int status, uint64_t bytes, double ms,
			const char *error)
{
	PyObject *hooks = user, *fn = PyTuple_GET_ITEM(hooks, 1);
	if (fn == Py_None)
		return;
	PyGILState_STATE g = PyGILState_Ensure();
	PyObject *d = Py_BuildValue("{s:s,s:s,s:i,s:K,s:d,s:z}", "method", rq->method, "url",
				    rq->url, "status", status, "bytes", (unsigned long long)bytes,
				    "ms", ms, "error", error);
	PyObject *r = d ? PyObject_CallOneArg(fn, d) : NULL;
	if (!r)
		PyErr_WriteUnraisable(fn);
	Py_XDECREF(r);
	Py_XDECREF(d);
	PyGILState_Release(g);
}

static void hooks_free(void *user)
{
	PyGILState_STATE g = PyGILState_Ensure();
	Py_DECREF((PyObject *)user);
	PyGILState_Release(g);
}

/* A list of str as a C array into *out (strings borrowed from the list,
 * which the caller keeps alive). */
static int str_list(PyObject *spec, const char *key, const char ***out, size_t *n)
{
	PyObject *l = PyDict_GetItemString(spec, key);
	*out = NULL;
	*n = 0;
	if (!l || l == Py_None)
		return 0;
	if (!PyList_Check(l))
		return PyErr_Format(PyExc_TypeError, "%s must be a list of str", key), -1;
	*n = (size_t)PyList_GET_SIZE(l);
	*out = PyMem_Calloc(*n + 1, sizeof(char *));
	if (!*out)
		return PyErr_NoMemory(), -1;
	for (size_t i = 0; i < *n; i++) {
		PyObject *s = PyList_GET_ITEM(l, (Py_ssize_t)i);
		(*out)[i] = PyUnicode_Check(s) ? PyUnicode_AsUTF8(s) : NULL;
		if (!(*out)[i]) {
			PyErr_Clear();
			return PyErr_Format(PyExc_TypeError, "%s must be a list of str", key), -1;
		}
	}
	return 0;
}

static int num(PyObject *spec, const char *key, uint64_t *out)
{
	PyObject *v = PyDict_GetItemString(spec, key);
	if (!v || v == Py_None)
		return 0;
	unsigned long long x =
		PyLong_Check(v) ? PyLong_AsUnsignedLongLong(v) : (unsigned long long)-1;
	if (PyErr_Occurred() || !PyLong_Check(v)) {
		PyErr_Clear();
		cc_py_raise(CC_ERR_INVALID_INPUT, "a network limit is not a non-negative int");
		return -1;
	}
	*out = x;
	return 0;
}

int cc_py_net_options(PyObject *spec, cc_net_options *n, bool with_hooks)
{
	cc_net_options_init(n);
	uint64_t req = n->max_requests, resp = n->max_response_bytes, tot = n->max_total_bytes,
		 body = n->max_body_bytes;
	if (!PyDict_Check(spec))
		return PyErr_Format(PyExc_TypeError, "the network spec must be a dict"), -1;
	if (str_list(spec, "allow_net", (const char ***)&n->allow, &n->n_allow) < 0 ||
	    str_list(spec, "test_resolve", (const char ***)&n->test_resolve, &n->n_test_resolve) <
		    0 ||
	    str_list(spec, "credential_headers", (const char ***)&n->credential_headers,
		     &n->n_credential_headers) < 0 ||
	    num(spec, "max_requests", &req) < 0 || num(spec, "max_response_bytes", &resp) < 0 ||
	    num(spec, "max_total_bytes", &tot) < 0 || num(spec, "max_body_bytes", &body) < 0)
		goto fail;
	if (req > UINT32_MAX) {
		cc_py_raise(CC_ERR_INVALID_INPUT, "net max_requests is too large");
		goto fail;
	}
	n->max_requests = (uint32_t)req;
	n->max_response_bytes = resp;
	n->max_total_bytes = tot;
	n->max_body_bytes = body;
	PyObject *t = PyDict_GetItemString(spec, "timeout");
	if (t && t != Py_None) {
		n->timeout_s = PyFloat_AsDouble(t);
		if (PyErr_Occurred())
			goto fail;
	}
	PyObject *ca = PyDict_GetItemString(spec, "ca_file");
	if (ca && ca != Py_None && !(n->ca_file = PyUnicode_AsUTF8(ca)))
		goto fail;
	PyObject *onq = PyDict_GetItemString(spec, "on_request");
	PyObject *ons = PyDict_GetItemString(spec, "on_response");
	if (with_hooks && ((onq && onq != Py_None) || (ons && ons != Py_None))) {
		PyObject *h = PyTuple_Pack(2, onq ? onq : Py_None, ons ? ons : Py_None);
		if (!h)
			goto fail;
		n->on_request = request_cb;
		n->on_response = response_cb;
		n->hook_user = h;
		n->hook_free = hooks_free;
	}
	return 0;
fail:
	cc_py_net_options_free(n);
	return -1;
}

void cc_py_net_options_free(cc_net_options *n)
{
	PyMem_Free((void *)n->allow);
	PyMem_Free((void *)n->test_resolve);
	PyMem_Free((void *)n->credential_headers);
	n->allow = n->test_resolve = n->credential_headers = NULL;
}

PyObject *cc_py_net_check(PyObject *mod, PyObject *spec)
{
	cc_net_options n;
	cc_error err = { 0 };
	(void)mod;
	if (cc_py_net_options(spec, &n, false) < 0)
		return NULL;
	int rc = cc_net_check(&n, &err);
	cc_py_net_options_free(&n);
	if (rc < 0) {
		cc_py_raise(err.kind, err.message);
		cc_error_clear(&err);
		return NULL;
	}
	Py_RETURN_NONE;
}

int cc_py_net_apply(cc_runtime *rt, PyObject *spec)
{
	cc_net_options n;
	cc_error err = { 0 };
	if (cc_py_net_options(spec, &n, true) < 0)
		return -1;
	int rc;
	Py_BEGIN_ALLOW_THREADS
		rc = cc_runtime_set_net(rt, &n, &err);
	Py_END_ALLOW_THREADS
	cc_py_net_options_free(&n);
	if (rc < 0) { /* the library freed the hooks (hook_free) */
		cc_py_raise(err.kind, err.message);
		cc_error_clear(&err);
		return -1;
	}
	return 0;
}
