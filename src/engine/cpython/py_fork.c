/* The Python engine in a fork server: what the template imports before
 * any session exists, and what each forked session must renew.
 *
 * What sessions of one template still share, on purpose (SECURITY.md):
 * the address-space layout (one ASLR draw per template) and str/bytes
 * hash randomisation (the secret is fixed when the interpreter starts and
 * every interned string carries a hash made with it). What they do not:
 * the `random` module (CPython reseeds it after fork through
 * os.register_at_fork), numpy's global RandomState (reseeded here), the
 * stop timer (POSIX timers are not inherited).
 *
 * Small sessions (issue 23): a page a session writes is a page it no
 * longer shares. Before sessions exist the template therefore (1) runs
 * once, many times over, the code every session runs anyway (the
 * at-fork hooks, the numpy reseed, a whole eval), so that CPython 3.11's
 * adaptive interpreter has quickened and specialised it and the lazy
 * state it builds on first use exists, and makes threading's at-fork hook
 * a no-op when it has nothing to renew, (2) collects, then fills the holes
 * left in pymalloc's pools and glibc's bins, so a session's new objects go
 * to pages of its own instead of one block in each of hundreds of shared
 * pages, and (3)
 * freezes everything (gc.freeze): a session's collector never walks the
 * template's objects. bench/session_memory.py measures what is left and
 * BENCHMARKS.md ("Idle session memory") says where. */
#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include <errno.h>
#include <malloc.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>

#include "error.h"
#include "py_fork.h"
#include "py_value.h"
#include "worker.h"
#include "worker_internal.h"

/* A module name as Python spells it: identifiers joined by dots. */
static bool module_name_ok(const char *s, size_t n)
{
	bool start = true;
	if (n == 0 || n > 200)
		return false;
	for (size_t i = 0; i < n; i++) {
		char c = s[i];
		if (c == '.' && !start) {
			start = true;
			continue;
		}
		if (!(c == '_' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
		      (!start && c >= '0' && c <= '9')))
			return false;
		start = false;
	}
	return !start;
}

static int import_one(const char *name, bool optional, cc_error *err)
{
	/* matplotlib: pyplot too, with the Agg backend and its font list
	 * built (py_helper.c's import hook), so a session draws at once. */
	PyObject *m =
		PyImport_ImportModule(strcmp(name, "matplotlib") ? name : "matplotlib.pyplot");
	if (m) {
		Py_DECREF(m);
		return 0;
	}
	PyObject *type = NULL, *exc = NULL, *tb = NULL;
	PyErr_Fetch(&type, &exc, &tb);
	PyErr_NormalizeException(&type, &exc, &tb);
	Py_XDECREF(type);
	Py_XDECREF(tb);
	PyObject *s = exc ? PyObject_Str(exc) : NULL;
	char *why = s ? cc_py_utf8(s, 300) : NULL;
	PyErr_Clear();
	Py_XDECREF(s);
	const char *tname = exc ? Py_TYPE(exc)->tp_name : "error";
	if (optional) { /* dropped, with the reason for "ready" */
		size_t k = cc_worker_n_preload_skipped;
		if (k < CC_PRELOAD_SKIPPED_MAX) {
			snprintf(cc_worker_preload_skipped[k], CC_PRELOAD_SKIPPED_LEN,
				 "%s: %.100s%s%s", name, tname, why ? ": " : "", why ? why : "");
			cc_worker_n_preload_skipped = k + 1;
		}
		Py_XDECREF(exc);
		free(why);
		return 0;
	}
	cc_fail(err, CC_ERR_INVALID_INPUT,
		"preloading module '%s' failed: %s%s%s; remove it from the preload list or "
		"mark it optional with a trailing '?'",
		name, tname, why ? ": " : "", why ? why : "");
	Py_XDECREF(exc);
	free(why);
	return -1;
}

/* module.attr of an already imported module (attr may be dotted: "a.b"
 * is an attribute of an attribute), a new reference; NULL with no
 * exception set when the module or an attribute is absent, NULL with one
 * set when looking raised something else. */
static PyObject *attr_of_imported(const char *module, const char *attr)
{
	PyObject *name = PyUnicode_FromString(module);
	PyObject *o = name ? PyImport_GetModule(name) : NULL;
	Py_XDECREF(name);
	char buf[64];
	snprintf(buf, sizeof(buf), "%s", attr);
	for (char *part = buf, *dot; o && part; part = dot) {
		dot = strchr(part, '.');
		if (dot)
			*dot++ = 0;
		Py_SETREF(o, PyObject_GetAttrString(o, part));
	}
	if (!o && PyErr_ExceptionMatches(PyExc_AttributeError))
		PyErr_Clear();
	return o;
}

/* Calls module.attr(*args) if it exists: 0 when it does not, 1 when the
 * call was made, -1 (exception set) when it raised. */
static int call_if_imported(const char *module, const char *attr, PyObject *args)
{
	PyObject *o = attr_of_imported(module, attr);
	if (!o)
		return PyErr_Occurred() ? -1 : 0;
	PyObject *r = PyObject_Call(o, args, NULL);
	Py_DECREF(o);
	Py_XDECREF(r);
	return r ? 1 : -1;
}

#define NP_MT_N 624 /* MT19937's state words */

/* n bytes from the kernel's generator (getrandom, as os.urandom); -1
 * with OSError set when it fails. */
static int getrandom_all(char *p, size_t n)
{
	while (n) {
		ssize_t r = getrandom(p, n, 0);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0) {
			PyErr_SetFromErrno(PyExc_OSError);
			return -1;
		}
		p += r;
		n -= (size_t)r;
	}
	return 0;
}

/* numpy's legacy global generator (numpy.random.seed() and friends) gets
 * a new state from the kernel: MT19937's 624 words straight from
 * getrandom (as os.urandom), position 624 (the next draw regenerates the
 * block), no cached gauss: RandomState.set_state with key bytes (or NULL:
 * fresh ones). The full 19,968 bits come from the kernel, as
 * numpy.random.seed() would take them (through a SeedSequence, which
 * runs far more code and so writes to far more of the template's
 * pages). 0 when numpy.random is not imported. */
static int set_numpy_state(const uint32_t *key, int pos)
{
	PyObject *np = attr_of_imported("numpy", "frombuffer");
	PyObject *set = np ? attr_of_imported("numpy.random", "mtrand._rand.set_state") : NULL;
	PyObject *bytes = NULL, *arr = NULL, *r = NULL;
	int rc = -1;
	if (!np || !set) {
		rc = PyErr_Occurred() ? -1 : 0;
		goto out;
	}
	bytes = PyBytes_FromStringAndSize((const char *)key, NP_MT_N * 4); /* NULL: unset */
	if (bytes && !key && getrandom_all(PyBytes_AS_STRING(bytes), NP_MT_N * 4) < 0)
		Py_CLEAR(bytes);
	arr = bytes ? PyObject_CallFunction(np, "Os", bytes, "uint32") : NULL;
	r = arr ? PyObject_CallFunction(set, "((sOiid))", "MT19937", arr, pos, 0, 0.0) : NULL;
	rc = r ? 0 : -1;
out:
	Py_XDECREF(r);
	Py_XDECREF(arr);
	Py_XDECREF(bytes);
	Py_XDECREF(set);
	Py_XDECREF(np);
	return rc;
}

/* Where that state lives: numpy's MT19937 keeps it in
 * mt19937_state_t {uint32_t key[624]; int pos;}, reached through the bit
 * generator's capsule ("BitGenerator": a bitgen_t whose first member is
 * the state's address). The template finds it once and checks the
 * layout by setting a known state through set_state and reading it back
 * here; a session then writes 2.5 KiB of fresh key into that one place
 * and runs no Python at all for it. NULL (the set_state path) when
 * anything does not match. */
struct np_mt19937 {
	uint32_t key[NP_MT_N];
	int pos;
};
static struct np_mt19937 *np_state;

static struct np_mt19937 *find_numpy_state(void)
{
	PyObject *cap = attr_of_imported("numpy.random", "mtrand._rand._bit_generator.capsule");
	struct np_mt19937 *st = NULL;
	if (cap && PyCapsule_IsValid(cap, "BitGenerator"))
		st = *(struct np_mt19937 **)PyCapsule_GetPointer(cap, "BitGenerator");
	Py_XDECREF(cap);
	PyErr_Clear();
	if (!st)
		return NULL;
	static uint32_t known[NP_MT_N];
	for (uint32_t i = 0; i < NP_MT_N; i++)
		known[i] = (i + 1) * 2654435761u;
	bool same = set_numpy_state(known, 123) == 0 && st->pos == 123 &&
		    !memcmp(st->key, known, sizeof(known));
	PyErr_Clear();
	return same ? st : NULL;
}

/* A session's reseed: in place when the layout was found, else through
 * set_state (the path the warm-up rounds run, before the search). In
 * place leaves RandomState's cached gauss alone: the template's last
 * set_state cleared it and nothing in the template draws after that. */
static int reseed_numpy(void)
{
	if (!np_state)
		return set_numpy_state(NULL, NP_MT_N);
	if (getrandom_all((char *)np_state->key, sizeof(np_state->key)) < 0)
		return -1;
	np_state->pos = NP_MT_N;
	return 0;
}

/* The template runs, WARM_ROUNDS times, what every session runs after
 * fork or in its first eval, so that none of it is run for the first
 * time in a session: threading's and random's at-fork hooks (the only
 * two the default preload registers; in a single-threaded template they
 * only renew what they renew in a child), the numpy reseed, and evals of
 * fixed code with output discarded ("None": the exec and eval halves of
 * compile_src; "_ = 1" then removed). No guest code: these strings are
 * ours. -1 with a Python exception when one of them failed. */
#define WARM_ROUNDS 16

static int warm_up(void)
{
	static const char *const code[] = { "None", "_ = 1", "del _" };
	PyObject *none = PyTuple_New(0);
	struct cc_outcome o;
	int rc = 0;
	if (!none)
		return -1;
	cc_outcome_init(&o);
	cc_worker_discard_output(true);
	for (int i = 0; i < WARM_ROUNDS && rc == 0; i++) {
		if (call_if_imported("threading", "_after_fork", none) < 0 ||
		    call_if_imported("random", "_inst.seed", none) < 0 || reseed_numpy() < 0)
			rc = -1;
		for (size_t k = 0; rc == 0 && k < sizeof(code) / sizeof(code[0]); k++) {
			/* a deadline far away: the stop timer, armed, only
			 * disarms itself when it fires between evals */
			cc_worker_begin_eval(0, 60000);
			cc_worker_engine->eval(code[k], strlen(code[k]), &o);
			if (!o.ok)
				rc = -1;
			cc_outcome_reset(&o);
		}
	}
	cc_worker_discard_output(false);
	Py_DECREF(none);
	/* the last warm-up source is not left for a guest to find */
	PyObject *lc = PyImport_ImportModule("linecache");
	PyObject *cache = lc ? PyObject_GetAttrString(lc, "cache") : NULL;
	if (cache && PyDict_Check(cache) && PyDict_DelItemString(cache, "<code>") < 0)
		PyErr_Clear();
	Py_XDECREF(cache);
	Py_XDECREF(lc);
	if (rc < 0 && !PyErr_Occurred())
		PyErr_SetString(PyExc_RuntimeError, "a warm-up eval failed");
	return rc < 0 || PyErr_Occurred() ? -1 : 0;
}

/* threading's at-fork hook renews the bookkeeping of threads that did
 * not survive the fork and the locks they may have held. A template with
 * no thread but its main one (checked here: nothing started, nothing
 * starting, no other Thread object left) gives it nothing to renew: the
 * session's only thread is the main thread it already lists, and no lock
 * was held by another thread at fork (the template forks from C, with no
 * Python code running). Running it anyway copied ~190 KiB of template
 * pages into every session (its objects' reference counts), so such a
 * template makes it a no-op: its code becomes an empty function's. A
 * template with any other thread keeps it. */
static const char quiet_threading_hook[] = "import threading as t\n"
					   "if t.active_count() == 1 and not t._limbo and "
					   "all(x is t.main_thread() for x in t._dangling):\n"
					   "\tt._after_fork.__code__ = (lambda: None).__code__\n";

static void quiet_threading(void)
{
	PyObject *name = PyUnicode_FromString("threading");
	PyObject *th = name ? PyImport_GetModule(name) : NULL; /* not imported: no hook */
	PyObject *g = th ? PyDict_New() : NULL;
	PyObject *r = NULL;
	Py_XDECREF(name);
	if (g && PyDict_SetItemString(g, "__builtins__", PyEval_GetBuiltins()) == 0)
		r = PyRun_String(quiet_threading_hook, Py_file_input, g, g);
	Py_XDECREF(r);
	Py_XDECREF(g);
	Py_XDECREF(th);
	PyErr_Clear(); /* only costs memory */
}

/* After the template's last collection, pymalloc's pools and glibc's
 * bins hold free blocks scattered among live ones. A session allocating
 * from them writes one block, and so copies one page, per hole; these
 * take the holes in the template, which keeps them (its own memory,
 * shared by every session), so that a session's new objects go to pages
 * of its own. Heuristics on the allocators' behaviour only: if one is
 * wrong, sessions copy more pages, never anything worse.
 *
 * pymalloc: for every size class (16-byte steps up to its 512), allocate
 * until FILL_RUN blocks in a row come out adjacent (a pool's untouched
 * tail or a fresh pool), at most FILL_CLASS_BYTES a class. */
#define FILL_RUN 8
#define FILL_CLASS_BYTES (128u << 10)
static void fill_pools(void)
{
	for (size_t sz = 16; sz <= 512; sz += 16) {
		char *prev = NULL;
		int run = 0;
		for (size_t n = 0; n < FILL_CLASS_BYTES / sz && run < FILL_RUN; n++) {
			char *p = PyObject_Malloc(sz);
			if (!p)
				return;
			run = prev && p == prev + sz ? run + 1 : 0;
			prev = p;
		}
	}
}

/* glibc: for sizes from 64 KiB halving to 32 bytes, allocate until a
 * block comes from the top chunk or grows the heap (mallinfo2: keepcost
 * shrinks or arena grows; the bins hold nothing that size), which is
 * given back; never more in all than the bins held at the start. Not the
 * RAW domain's counting allocator: this is not the guest's memory. */
static void fill_heap(void)
{
	struct mallinfo2 m = mallinfo2();
	size_t budget = m.fordblks > m.keepcost ? m.fordblks - m.keepcost : 0;
	for (size_t sz = 65536; sz >= 32; sz /= 2) {
		while (budget >= sz) {
			m = mallinfo2();
			void *p = malloc(sz);
			if (!p)
				return;
			struct mallinfo2 after = mallinfo2();
			if (after.keepcost < m.keepcost || after.arena > m.arena) {
				free(p);
				break;
			}
			budget -= sz;
		}
	}
}

int cc_py_preload(const char *modules, cc_error *err)
{
	const char *p = modules;
	while (*p) {
		size_t n = strcspn(p, ",");
		bool optional = n > 0 && p[n - 1] == '?';
		size_t len = optional ? n - 1 : n;
		char name[201];
		if (!module_name_ok(p, len))
			return cc_fail(err, CC_ERR_INVALID_INPUT,
				       "preload list: '%.*s' is not a module name; give "
				       "comma-separated names such as \"json,numpy?\"",
				       (int)(n > 60 ? 60 : n), p);
		memcpy(name, p, len);
		name[len] = 0;
		if (import_one(name, optional, err) < 0)
			return -1;
		p += n;
		if (*p == ',')
			p++;
	}
	/* What the glue imports only when it formats a traceback (py_helper.c)
	 * is imported here, so a forked session formats its first one at
	 * once, as spawned workers used to. Optional: a failure only makes
	 * that first traceback slower. */
	PyObject *tb = PyImport_ImportModule("traceback");
	if (!tb)
		PyErr_Clear();
	Py_XDECREF(tb);
	if (warm_up() < 0)
		PyErr_Clear(); /* only costs memory: never refuses the template */
	quiet_threading();
	/* found with a known state set: the template's own is fresh again */
	np_state = find_numpy_state();
	if (set_numpy_state(NULL, NP_MT_N) < 0)
		return cc_fail(err, CC_ERR_INTERNAL,
			       "reseeding numpy.random in the template failed");
	/* Everything alive now moves to the permanent generation: the
	 * collector in a session never walks (and so never writes to) the
	 * template's objects, which keeps their pages shared. The holes the
	 * collection leaves are filled first. */
	PyObject *gc = PyImport_ImportModule("gc");
	PyObject *r = gc ? PyObject_CallMethod(gc, "collect", NULL) : NULL;
	Py_XDECREF(r);
	fill_pools();
	fill_heap();
	r = gc ? PyObject_CallMethod(gc, "freeze", NULL) : NULL;
	Py_XDECREF(gc);
	if (!r) {
		PyErr_Clear();
		return cc_fail(err, CC_ERR_INTERNAL, "gc.freeze() failed in the template");
	}
	Py_DECREF(r);
	return 0;
}

void cc_py_before_fork(void)
{
	PyOS_BeforeFork();
}

void cc_py_after_fork_parent(void)
{
	PyOS_AfterFork_Parent();
}

int cc_py_after_fork_child(cc_error *err)
{
	/* Runs os.register_at_fork's hooks: `random` reseeds itself. */
	PyOS_AfterFork_Child();
	if (cc_py_stop_timer_create(err) < 0)
		return -1;
	/* numpy's legacy global RandomState does not reseed after fork. */
	if (reseed_numpy() < 0) {
		PyErr_Clear();
		return cc_fail(err, CC_ERR_INTERNAL,
			       "reseeding numpy.random in a forked session failed");
	}
	PyErr_Clear();
	return 0;
}
