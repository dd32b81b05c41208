/* src/engine/cpython/: the CPython engine (engine_py.c, its struct
 * cc_engine) with its values, tools, displays, soft stop, memory cap,
 * paths, fork hooks and its Python-side glue, frozen at build time
 * (py_*.c, py_exports.dynlist). It may include src/worker/, src/confine/,
 * src/common/ (where py_from_value.c and py_objects.c, shared with the
 * extension, live), the public headers and Python's; nothing includes it.
 *
 * Python objects to and from the boundary's values (DESIGN.md section 5),
 * for the CPython engine, plus the few declarations the engine's files
 * share (py_tools.c, engine_py.c). Worker side only; every function here
 * needs the GIL and an initialised interpreter. */
#ifndef CC_WORKER_PY_VALUE_H
#define CC_WORKER_PY_VALUE_H

#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include <msgpack.h>
#include <stddef.h>
#include <stdint.h>

#include "codecage.h"
/* Bytes from the UTF-8 codec with errors="surrogatepass" go through
 * cc_utf8_fix_surrogates: one U+FFFD per lone surrogate. */
#include "utf8.h"

/* cc_py_pack's "the packed value would be larger than max_bytes". */
#define CC_PY_TOO_BIG (-2)
/* More values than cc_value_node_budget() allows. */
#define CC_PY_TOO_MANY (-3)

/* Import the datetime C API. Call once after Py_Initialize. Returns 0, or
 * -1 with a Python exception set. */
int cc_py_value_init(void);

/* Pack obj (borrowed) as exactly one MessagePack item appended to sb.
 * max_bytes caps sb's total size (0 = no cap). Returns 0; -1 with a Python
 * exception set (TypeError/ValueError naming what cannot be returned and
 * where, MemoryError, or whatever guest code run by the conversion raised,
 * such as a tzinfo's utcoffset); CC_PY_TOO_BIG or CC_PY_TOO_MANY with no
 * exception set.
 * On failure sb is left as it was on entry. Guest code can run (tzinfo,
 * numpy's tolist), so the caller keeps the deadline armed. */
int cc_py_pack(PyObject *obj, msgpack_sbuffer *sb, uint64_t max_bytes);

/* With the TypeError of a failed cc_py_pack(obj) pending: make o an ok
 * outcome holding obj's repr() text and type name (cc_outcome_fallback),
 * "<T object>" when repr raises; true. false, with a TypeError pending,
 * when it cannot (out of memory) or when the pending error is not a
 * TypeError (a cap). Runs guest code (__repr__). */
struct cc_outcome;
bool cc_py_fallback(PyObject *obj, struct cc_outcome *o);

/* cc_py_pack for a host tool's arguments: args must be a tuple, packed as
 * one array; same rules and return codes, with error messages that speak
 * of passing ("cannot pass a value of type 'set' ... (at args[0])"). */
int cc_py_pack_args(PyObject *args, msgpack_sbuffer *sb, uint64_t max_bytes);
/* The same for keyword arguments: kwargs must be a dict (str keys),
 * packed as a map. */
int cc_py_pack_kwargs(PyObject *kwargs, msgpack_sbuffer *sb, uint64_t max_bytes);

/* A new Python object for v (borrowed; NULL is None). Returns a new
 * reference, or NULL with a Python exception set (MemoryError; ValueError
 * for a timestamp outside datetime's years 1..9999). */
PyObject *cc_py_from_value(const cc_value *v);

/* UTF-8 of a str (borrowed), for messages: lone surrogates become U+FFFD,
 * and the text is cut at max bytes (on a character boundary, with a
 * "[truncated]" note). Returns a malloc'ed NUL-terminated copy (caller
 * frees), or NULL when s is not a str or memory ran out; never leaves a
 * Python exception set. */
char *cc_py_utf8(PyObject *s, size_t max);

/* ---- host tool calls (py_tools.c) ---- */

/* Bind host tool cname (an identifier) in globals (__main__'s dict): the
 * global function, tools.<cname> and atools.<cname> (see py_tools.c).
 * Returns 0, or -1 with a Python exception set. */
int cc_py_tools_bind(PyObject *globals, const char *cname);

/* A new eval begins: forget atools calls of earlier evals. */
void cc_py_tools_eval_begin(void);

/* From engine_py.c: raise the soft stop's KeyboardInterrupt for the
 * current stop reason. Returns NULL. */
PyObject *cc_py_raise_stop(void);

#endif
