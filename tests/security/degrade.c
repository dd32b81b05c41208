/* cc-degrade: run a command as if the kernel lacked Landlock, namespaces or
 * seccomp, so tests/security/test_degraded.py can check what sandbox modes
 * require and auto do on such a host.
 *
 *   cc-degrade --deny landlock,namespaces,seccomp [--] CMD [ARGS...]
 *
 * Sets no_new_privs, installs a seccomp filter that allows everything but
 * the listed features' system calls, then execvp's CMD. The filter is
 * inherited by everything CMD starts (the CLI, libcodecage, the worker and
 * its monitor) and cannot be removed, so the worker meets the feature
 * exactly as a degraded kernel would show it. Filters stack: where the
 * worker's own filter also decides a call, the stricter action wins.
 *
 * Each feature fails with the errno a real kernel without it returns:
 *
 *   landlock            landlock_create_ruleset, landlock_add_rule,
 *                       landlock_restrict_self: ENOSYS, a kernel built
 *                       without CONFIG_SECURITY_LANDLOCK (sys_ni_syscall).
 *   landlock-disabled   the same calls: EOPNOTSUPP, Landlock built in but
 *                       not in the boot's lsm= list (Debian 12's 6.1 kernel
 *                       by default). Reported as the layer "landlock".
 *   namespaces          unshare and clone with any CLONE_NEW* flag: EPERM,
 *                       what Debian's kernel.unprivileged_userns_clone=0,
 *                       Ubuntu's AppArmor user-namespace restriction and
 *                       Docker's default seccomp profile answer. clone3
 *                       passes its flags in memory a filter cannot read, so
 *                       it answers ENOSYS whatever it asks (as under
 *                       Docker's profile); glibc then falls back to clone,
 *                       whose flags are checked. Threads and plain forks
 *                       still work.
 *   ro-remount          mount(2) read-only remounts (MS_REMOUNT|MS_BIND|
 *                       MS_RDONLY) answer 0 without happening: the mount
 *                       layer's read-only binds (a read-only grant, the
 *                       engine's files, the root) fail open, so a test sees
 *                       what Landlock alone stops. Not a kernel condition:
 *                       a simulated failure of one layer.
 *   idmap               open_tree and mount_setattr: EPERM, what a
 *                       container without CAP_SYS_ADMIN (Docker's default
 *                       profile) answers: the supervisor, running as root,
 *                       cannot make a grant an idmapped mount (src/lib/
 *                       idmap.c) and must say so at start.
 *   seccomp             seccomp(2): ENOSYS, a kernel built without
 *                       CONFIG_SECCOMP (sys_ni_syscall);
 *                       prctl(PR_SET_SECCOMP) and prctl(PR_GET_SECCOMP):
 *                       EINVAL, the stubs such a kernel has for them
 *                       (include/linux/seccomp.h). This helper's own filter
 *                       goes in first, so it still applies.
 *
 * The rules cover the native architecture and, on x86_64, the i386 and x32
 * system call tables too, so a 32-bit call cannot step around the
 * simulation. Exit status: CMD's; 2 for usage errors; 70 when the filter
 * cannot be built or installed; 127 when CMD cannot be run. */
#include <errno.h>
#include <sched.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <unistd.h>

#include <seccomp.h>

#ifndef CLONE_NEWTIME
#define CLONE_NEWTIME 0x00000080
#endif

enum {
	DENY_LANDLOCK = 1,
	DENY_LANDLOCK_DISABLED = 2,
	DENY_NAMESPACES = 4,
	DENY_SECCOMP = 8,
	DENY_RO_REMOUNT = 16,
	DENY_IDMAP = 32
};

static const struct {
	const char *name;
	unsigned bit;
} features[] = {
	{ "landlock", DENY_LANDLOCK },	   { "landlock-disabled", DENY_LANDLOCK_DISABLED },
	{ "namespaces", DENY_NAMESPACES }, { "seccomp", DENY_SECCOMP },
	{ "ro-remount", DENY_RO_REMOUNT }, { "idmap", DENY_IDMAP },
};
#define N_FEATURES (sizeof(features) / sizeof(features[0]))

/* Flags that create a namespace; clone cannot carry CLONE_NEWTIME (its bit
 * is part of the exit signal there). */
static const unsigned long ns_flags[] = { CLONE_NEWNS,	CLONE_NEWCGROUP, CLONE_NEWUTS,
					  CLONE_NEWIPC, CLONE_NEWUSER,	 CLONE_NEWPID,
					  CLONE_NEWNET, CLONE_NEWTIME };
#define N_NS_FLAGS (sizeof(ns_flags) / sizeof(ns_flags[0]))

static int usage(const char *why)
{
	fprintf(stderr,
		"cc-degrade: %s\n"
		"usage: cc-degrade --deny FEATURE[,FEATURE...] [--] CMD [ARGS...]\n"
		"FEATURE: landlock, landlock-disabled, namespaces, seccomp, ro-remount, idmap\n",
		why);
	return 2;
}

static int parse_deny(const char *list, unsigned *deny)
{
	char *copy = strdup(list);
	if (!copy)
		return -1;
	int r = 0;
	char *save = NULL;
	for (char *tok = strtok_r(copy, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		size_t i = 0;
		while (i < N_FEATURES && strcmp(tok, features[i].name))
			i++;
		if (i == N_FEATURES) {
			fprintf(stderr, "cc-degrade: unknown feature '%s'\n", tok);
			r = -1;
			break;
		}
		*deny |= features[i].bit;
	}
	free(copy);
	return *deny ? r : -1;
}

/* A rule by name; a name this libseccomp does not know is an error (the
 * simulation would silently not happen). */
static int rule(scmp_filter_ctx ctx, int errno_value, const char *name, unsigned n,
		const struct scmp_arg_cmp *cmp)
{
	int nr = seccomp_syscall_resolve_name(name);
	if (nr == __NR_SCMP_ERROR) {
		fprintf(stderr, "cc-degrade: libseccomp does not know %s\n", name);
		return -1;
	}
	int r = seccomp_rule_add_array(ctx, SCMP_ACT_ERRNO(errno_value), nr, n, cmp);
	if (r < 0)
		fprintf(stderr, "cc-degrade: rule for %s: %s\n", name, strerror(-r));
	return r < 0 ? -1 : 0;
}

static int deny_landlock(scmp_filter_ctx ctx, int errno_value)
{
	static const char *const calls[] = { "landlock_create_ruleset", "landlock_add_rule",
					     "landlock_restrict_self" };
	for (size_t i = 0; i < sizeof(calls) / sizeof(calls[0]); i++)
		if (rule(ctx, errno_value, calls[i], 0, NULL) < 0)
			return -1;
	return 0;
}

static int deny_namespaces(scmp_filter_ctx ctx)
{
	/* One rule per flag: any one of them set is enough to refuse. */
	for (size_t i = 0; i < N_NS_FLAGS; i++) {
		struct scmp_arg_cmp any = SCMP_A0(SCMP_CMP_MASKED_EQ, ns_flags[i], ns_flags[i]);
		if (rule(ctx, EPERM, "unshare", 1, &any) < 0)
			return -1;
		if (ns_flags[i] != CLONE_NEWTIME && rule(ctx, EPERM, "clone", 1, &any) < 0)
			return -1;
	}
	return rule(ctx, ENOSYS, "clone3", 0, NULL);
}

static int deny_seccomp(scmp_filter_ctx ctx)
{
	struct scmp_arg_cmp set = SCMP_A0(SCMP_CMP_EQ, PR_SET_SECCOMP);
	struct scmp_arg_cmp get = SCMP_A0(SCMP_CMP_EQ, PR_GET_SECCOMP);
	if (rule(ctx, ENOSYS, "seccomp", 0, NULL) < 0 || rule(ctx, EINVAL, "prctl", 1, &set) < 0)
		return -1;
	return rule(ctx, EINVAL, "prctl", 1, &get);
}

/* Read-only remounts pretend to succeed (SECCOMP_RET_ERRNO with 0). */
static int skip_ro_remounts(scmp_filter_ctx ctx)
{
	const unsigned long ro = MS_REMOUNT | MS_BIND | MS_RDONLY;
	struct scmp_arg_cmp cmp = SCMP_A3(SCMP_CMP_MASKED_EQ, ro, ro);
	return rule(ctx, 0, "mount", 1, &cmp);
}

static int install(unsigned deny)
{
	scmp_filter_ctx ctx = seccomp_init(SCMP_ACT_ALLOW);
	if (!ctx)
		return -1;
	int r = 0;
#if defined(__x86_64__)
	/* Also the 32-bit tables (int 0x80, x32 numbers); EEXIST: already in. */
	int a = seccomp_arch_add(ctx, SCMP_ARCH_X86);
	if (!a || a == -EEXIST)
		a = seccomp_arch_add(ctx, SCMP_ARCH_X32);
	if (a && a != -EEXIST) {
		fprintf(stderr, "cc-degrade: adding 32-bit tables: %s\n", strerror(-a));
		r = -1;
	}
#endif
	if (!r && (deny & DENY_LANDLOCK))
		r = deny_landlock(ctx, ENOSYS);
	else if (!r && (deny & DENY_LANDLOCK_DISABLED))
		r = deny_landlock(ctx, EOPNOTSUPP);
	if (!r && (deny & DENY_NAMESPACES))
		r = deny_namespaces(ctx);
	if (!r && (deny & DENY_SECCOMP))
		r = deny_seccomp(ctx);
	if (!r && (deny & DENY_RO_REMOUNT))
		r = skip_ro_remounts(ctx);
	if (!r && (deny & DENY_IDMAP))
		r = rule(ctx, EPERM, "open_tree", 0, NULL) < 0
			    ? -1
			    : rule(ctx, EPERM, "mount_setattr", 0, NULL);
	if (!r && prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0) {
		fprintf(stderr, "cc-degrade: no_new_privs: %s\n", strerror(errno));
		r = -1;
	}
	if (!r) {
		int l = seccomp_load(ctx);
		if (l < 0) {
			fprintf(stderr, "cc-degrade: loading the filter: %s\n", strerror(-l));
			r = -1;
		}
	}
	seccomp_release(ctx);
	return r;
}

int main(int argc, char **argv)
{
	unsigned deny = 0;
	int i = 1;
	if (i + 1 < argc && !strcmp(argv[i], "--deny")) {
		if (parse_deny(argv[i + 1], &deny) < 0)
			return usage("--deny wants a comma-separated list of features");
		i += 2;
	} else if (i < argc && !strncmp(argv[i], "--deny=", 7)) {
		if (parse_deny(argv[i] + 7, &deny) < 0)
			return usage("--deny wants a comma-separated list of features");
		i++;
	} else {
		return usage("--deny is required");
	}
	if (i < argc && !strcmp(argv[i], "--"))
		i++;
	if (i >= argc)
		return usage("no command to run");
	if ((deny & DENY_LANDLOCK) && (deny & DENY_LANDLOCK_DISABLED))
		return usage("landlock and landlock-disabled exclude each other");
	if (install(deny) < 0)
		return 70;
	execvp(argv[i], argv + i);
	fprintf(stderr, "cc-degrade: %s: %s\n", argv[i], strerror(errno));
	return 127;
}
