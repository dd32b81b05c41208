/* Where the Python worker's interpreter looks: sys.prefix, sys.path, and
 * the folders the confinement lets it read (its engine's fs_policy). */
#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "confine.h"
#include "grants.h"
#include "py_data_dirs.h"
#include "py_paths.h"
#include "worker.h"

#if !defined(CC_PY_STDLIB) || !defined(CC_PY_DYNLOAD) || !defined(CC_PY_DISTPACKAGES) ||           \
	!defined(CC_PY_LIBDIR)
#error "meson.build passes CC_PY_STDLIB, CC_PY_DYNLOAD, CC_PY_DISTPACKAGES and CC_PY_LIBDIR"
#endif
#define WIDE_(s) L##s
#define WIDE(s) WIDE_(s)

/* sys.prefix: the stdlib is <prefix>/lib/python3.X. Setting home keeps
 * getpath from searching the filesystem for landmarks. */
int cc_py_config_home(PyConfig *config)
{
	char home[] = CC_PY_STDLIB;

	for (int i = 0; i < 2; i++) {
		char *slash = strrchr(home, '/');
		if (!slash || slash == home)
			return 0;
		*slash = 0;
	}
	return PyStatus_Exception(PyConfig_SetBytesString(config, &config->home, home)) ? -1 : 0;
}

/* What the Python worker may read: the stdlib (lib-dynload is inside
 * it), Debian's python3-* packages, libpython's library directory
 * (CC_PY_LIBDIR: the shared libraries extension modules need), the linker cache
 * and Debian's alternatives symlinks that lead to BLAS/LAPACK, time zone
 * data, the data those packages keep outside dist-packages (such as
 * /usr/share/matplotlib and /etc/matplotlibrc: CC_PY_DATA_DIRS, derived
 * from the installed packages at build time by scripts/py-data-dirs);
 * and /dev/null, /dev/zero, /dev/urandom. */
void cc_py_fs_policy(struct cc_fs_policy *pol)
{
	static char libdir[PATH_MAX];
	static const char *const data[] = { CC_PY_DATA_DIRS };
	size_t n = 0;
	pol->read_only[n++] = CC_PY_STDLIB;
	pol->read_only[n++] = CC_PY_DISTPACKAGES;
	/* libpython is linked in (meson.build), so its build's library
	 * directory comes from pkg-config. Resolved: with merged /usr it may
	 * be named through /lib, and the bind must land at the real place so
	 * that /lib can be a symlink. */
	if (realpath(CC_PY_LIBDIR, libdir))
		pol->read_only[n++] = libdir;
	pol->read_only[n++] = "/etc/ld.so.cache";
	pol->read_only[n++] = "/etc/alternatives";
	pol->read_only[n++] = "/usr/share/zoneinfo";
	for (size_t i = 0; i < CC_PY_N_DATA_DIRS && n < CC_FS_MAX_READ_ONLY; i++)
		if (data[i][0])
			pol->read_only[n++] = data[i];
	pol->n_read_only = n;
	pol->cache = PY_CACHE;
	pol->devices[0] = "/dev/null";
	pol->devices[1] = "/dev/zero";
	pol->devices[2] = "/dev/urandom";
	pol->n_devices = 3;
}

/* sys.path: the stdlib, lib-dynload, the host's python_path folders in
 * order (where the guest sees them), then Debian's dist-packages. */
int cc_py_search_paths(PyConfig *config)
{
	PyWideStringList *l = &config->module_search_paths;
	if (PyStatus_Exception(PyWideStringList_Append(l, WIDE(CC_PY_STDLIB))) ||
	    PyStatus_Exception(PyWideStringList_Append(l, WIDE(CC_PY_DYNLOAD))))
		return -1;
	const char *pp[CC_MAX_PYTHON_PATH];
	size_t n = cc_grants_python_path(pp, CC_MAX_PYTHON_PATH, cc_worker_isolated);
	for (size_t i = 0; i < n; i++) {
		wchar_t *w = Py_DecodeLocale(pp[i], NULL);
		PyStatus st = w ? PyWideStringList_Append(l, w) : PyStatus_NoMemory();
		PyMem_RawFree(w);
		if (PyStatus_Exception(st))
			return -1;
	}
	return PyStatus_Exception(PyWideStringList_Append(l, WIDE(CC_PY_DISTPACKAGES))) ? -1 : 0;
}
