/* Step 5 of DESIGN.md section 3: Landlock, through raw system calls (no
 * packaged library exists). Rights and their ABI versions are from the
 * kernel's include/uapi/linux/landlock.h and Documentation/userspace-api/
 * landlock.rst; they are defined here because Debian 12's headers stop at
 * ABI 2. */
#include "landlock.h"

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "error.h"
#include "grants.h"

#ifndef __NR_landlock_create_ruleset
#define __NR_landlock_create_ruleset 444
#define __NR_landlock_add_rule 445
#define __NR_landlock_restrict_self 446
#endif

#define LL_CREATE_RULESET_VERSION (1u << 0)
#define LL_RULE_PATH_BENEATH 1

/* Filesystem rights by ABI. */
#define LL_FS_EXECUTE (1ull << 0)
#define LL_FS_WRITE_FILE (1ull << 1)
#define LL_FS_READ_FILE (1ull << 2)
#define LL_FS_READ_DIR (1ull << 3)
#define LL_FS_REMOVE_DIR (1ull << 4)
#define LL_FS_REMOVE_FILE (1ull << 5)
#define LL_FS_MAKE_CHAR (1ull << 6)
#define LL_FS_MAKE_DIR (1ull << 7)
#define LL_FS_MAKE_REG (1ull << 8)
#define LL_FS_MAKE_SOCK (1ull << 9)
#define LL_FS_MAKE_FIFO (1ull << 10)
#define LL_FS_MAKE_BLOCK (1ull << 11)
#define LL_FS_MAKE_SYM (1ull << 12)
#define LL_FS_ABI1 ((1ull << 13) - 1)
#define LL_FS_REFER (1ull << 13)     /* ABI 2 */
#define LL_FS_TRUNCATE (1ull << 14)  /* ABI 3 */
#define LL_FS_IOCTL_DEV (1ull << 15) /* ABI 5 */
/* Network rights (ABI 4) and scopes (ABI 6). */
#define LL_NET_BIND_TCP (1ull << 0)
#define LL_NET_CONNECT_TCP (1ull << 1)
#define LL_SCOPE_ABSTRACT_UNIX_SOCKET (1ull << 0)
#define LL_SCOPE_SIGNAL (1ull << 1)

/* ABI 7 added audit logging flags for landlock_restrict_self, not rights:
 * every right up to 7 is handled, so 7 is what "applied" can report. */
#define LL_ABI_KNOWN 7

struct ll_ruleset_attr {
	uint64_t handled_access_fs;
	uint64_t handled_access_net;
	uint64_t scoped;
};

struct ll_path_beneath_attr {
	uint64_t allowed_access;
	int32_t parent_fd;
} __attribute__((packed));

/* Rights that make sense on a file (the kernel refuses directory rights
 * on a non-directory). */
#define LL_FS_FILE_RIGHTS                                                                          \
	(LL_FS_EXECUTE | LL_FS_WRITE_FILE | LL_FS_READ_FILE | LL_FS_TRUNCATE | LL_FS_IOCTL_DEV)

int cc_landlock_abi(void)
{
	long abi = syscall(__NR_landlock_create_ruleset, NULL, 0, LL_CREATE_RULESET_VERSION);
	return abi < 0 ? -errno : (int)abi;
}

static uint64_t fs_rights(int abi)
{
	uint64_t r = LL_FS_ABI1;
	if (abi >= 2)
		r |= LL_FS_REFER;
	if (abi >= 3)
		r |= LL_FS_TRUNCATE;
	if (abi >= 5)
		r |= LL_FS_IOCTL_DEV;
	return r;
}

/* One rule for the tree (or file) behind fd. Writable trees also get
 * symlinks (the mount namespace and these rules bound where they can
 * lead) and REFER, so a rename between two of their directories works;
 * REFER never lets a file move into a tree with more rights than its own. */
static int add_fd(int ruleset, int fd, const char *name, bool writable, uint64_t handled,
		  cc_error *err)
{
	struct stat st;
	uint64_t want = LL_FS_READ_FILE | LL_FS_READ_DIR;
	if (writable)
		want |= LL_FS_WRITE_FILE | LL_FS_REMOVE_DIR | LL_FS_REMOVE_FILE | LL_FS_MAKE_DIR |
			LL_FS_MAKE_REG | LL_FS_TRUNCATE | LL_FS_MAKE_SYM | LL_FS_REFER;
	if (fstat(fd, &st) == 0 && !S_ISDIR(st.st_mode))
		want &= LL_FS_FILE_RIGHTS;
	struct ll_path_beneath_attr pb = { .allowed_access = want & handled, .parent_fd = fd };
	long r = syscall(__NR_landlock_add_rule, ruleset, LL_RULE_PATH_BENEATH, &pb, 0);
	if (r < 0)
		return cc_fail(err, CC_ERR_INTERNAL, "landlock_add_rule %s: %s", name,
			       strerror(errno));
	return 0;
}

static int add_path(int ruleset, const char *path, bool writable, uint64_t handled, cc_error *err)
{
	int fd = open(path, O_PATH | O_CLOEXEC);
	if (fd < 0) {
		if (errno == ENOENT)
			return 0; /* optional paths the policy lists but this host lacks */
		return cc_fail(err, CC_ERR_INTERNAL, "landlock: %s: %s", path, strerror(errno));
	}
	int r = add_fd(ruleset, fd, path, writable, handled, err);
	close(fd);
	return r;
}

int cc_landlock_apply(const struct cc_fs_policy *pol, int *abi_applied, cc_error *err)
{
	*abi_applied = 0;
	int abi = cc_landlock_abi();
	if (abi <= 0)
		return cc_fail(err, CC_ERR_SANDBOX_UNAVAILABLE,
			       "landlock is not available (%s); a kernel >= 6.7 with "
			       "lsm=landlock gives ABI 4+",
			       strerror(abi < 0 ? -abi : ENOSYS));
	if (abi > LL_ABI_KNOWN)
		abi = LL_ABI_KNOWN; /* newer kernels: handle every right we know */

	/* Handle every right this ABI knows; what the kernel lacks is dropped
	 * on purpose (older ABIs simply leave those operations unrestricted,
	 * and the report says which ABI applied). */
	struct ll_ruleset_attr attr = { .handled_access_fs = fs_rights(abi) };
	if (abi >= 4)
		attr.handled_access_net = LL_NET_BIND_TCP | LL_NET_CONNECT_TCP;
	if (abi >= 6)
		attr.scoped = LL_SCOPE_ABSTRACT_UNIX_SOCKET | LL_SCOPE_SIGNAL;
	int rs = (int)syscall(__NR_landlock_create_ruleset, &attr, sizeof(attr), 0);
	if (rs < 0)
		return cc_fail(err, CC_ERR_SANDBOX_UNAVAILABLE, "landlock_create_ruleset: %s",
			       strerror(errno));
	/* No network rule: TCP bind and connect are denied outright. */
	for (size_t i = 0; i < pol->n_read_only; i++)
		if (add_path(rs, pol->read_only[i], false, attr.handled_access_fs, err) < 0)
			goto fail;
	/* Devices: read; /dev/null also takes writes. No ioctl (IOCTL_DEV is
	 * handled and never granted). */
	for (size_t i = 0; i < pol->n_devices; i++)
		if (add_path(rs, pol->devices[i], !strcmp(pol->devices[i], "/dev/null"),
			     attr.handled_access_fs, err) < 0)
			goto fail;
	if (pol->scratch && add_path(rs, pol->scratch, true, attr.handled_access_fs, err) < 0)
		goto fail;
	/* The engine's empty cache folder: readable, never writable. */
	if (pol->cache && add_path(rs, pol->cache, false, attr.handled_access_fs, err) < 0)
		goto fail;
	/* Grants: by the supervisor's descriptor, the very object it resolved
	 * (not the guest path: this layer assumes the bind mount failed). */
	for (size_t i = 0; i < cc_worker_n_grants; i++)
		if (add_fd(rs, cc_worker_grants[i].fd, cc_worker_grants[i].guest,
			   cc_worker_grants[i].writable, attr.handled_access_fs, err) < 0)
			goto fail;
	/* A forked session has no_new_privs from its template already (and
	 * no prctl in its filter). */
	if ((!pol->in_session && prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0) ||
	    syscall(__NR_landlock_restrict_self, rs, 0) < 0) {
		cc_fail(err, CC_ERR_SANDBOX_UNAVAILABLE, "landlock_restrict_self: %s",
			strerror(errno));
		goto fail;
	}
	close(rs);
	*abi_applied = abi;
	return 0;
fail:
	close(rs);
	return -1;
}

int cc_landlock_defer(int *abi_applied, cc_error *err)
{
	*abi_applied = 0;
	int abi = cc_landlock_abi();
	if (abi <= 0)
		return cc_fail(err, CC_ERR_SANDBOX_UNAVAILABLE,
			       "landlock is not available (%s); a kernel >= 6.7 with "
			       "lsm=landlock gives ABI 4+",
			       strerror(abi < 0 ? -abi : ENOSYS));
	*abi_applied = abi > LL_ABI_KNOWN ? LL_ABI_KNOWN : abi;
	return 0;
}

/* The scope-only domain's ruleset, made by a template before its seccomp
 * filter (which has no landlock_add_rule) for its sessions; -1: none. */
static int session_rs = -1;

/* Network rights and scopes; with refer, also REFER granted beneath "/":
 * the kernel denies reparenting (a rename or link into another directory:
 * EXDEV) in every layer that does not grant REFER, even one that does not
 * handle it, so without this rule a session's scope-only layer would
 * forbid what its template's file domain allows. Handling only REFER and
 * granting it everywhere leaves that to the file domain, as in a spawned
 * worker. (A scratch template has no layer of its own: its sessions build
 * their whole domain, cc_landlock_defer.) */
static int scope_ruleset(int abi, bool refer, cc_error *err)
{
	struct ll_ruleset_attr attr = { 0 };
	if (abi >= 4)
		attr.handled_access_net = LL_NET_BIND_TCP | LL_NET_CONNECT_TCP;
	if (abi >= 6)
		attr.scoped = LL_SCOPE_ABSTRACT_UNIX_SOCKET | LL_SCOPE_SIGNAL;
	if (!attr.handled_access_net)
		return cc_fail(err, CC_ERR_SANDBOX_UNAVAILABLE,
			       "landlock ABI %d has no network rights or scopes for a session "
			       "domain (ABI 4+ needed)",
			       abi);
	attr.handled_access_fs = refer ? LL_FS_REFER : 0;
	int rs = (int)syscall(__NR_landlock_create_ruleset, &attr, sizeof(attr), 0);
	if (rs < 0)
		return cc_fail(err, CC_ERR_SANDBOX_UNAVAILABLE, "landlock_create_ruleset: %s",
			       strerror(errno));
	if (!refer)
		return rs;
	int root = open("/", O_PATH | O_CLOEXEC);
	struct ll_path_beneath_attr pb = { .allowed_access = LL_FS_REFER, .parent_fd = root };
	if (root < 0 || syscall(__NR_landlock_add_rule, rs, LL_RULE_PATH_BENEATH, &pb, 0) < 0) {
		int e = errno;
		if (root >= 0)
			close(root);
		close(rs);
		return cc_fail(err, CC_ERR_INTERNAL, "landlock_add_rule /: %s", strerror(e));
	}
	close(root);
	return rs;
}

static int known_abi(cc_error *err)
{
	int abi = cc_landlock_abi();
	if (abi <= 0)
		return cc_fail(err, CC_ERR_SANDBOX_UNAVAILABLE, "landlock is not available (%s)",
			       strerror(abi < 0 ? -abi : ENOSYS));
	return abi > LL_ABI_KNOWN ? LL_ABI_KNOWN : abi;
}

int cc_landlock_session_prepare(cc_error *err)
{
	int abi = known_abi(err);
	if (abi < 0)
		return -1;
	int rs = scope_ruleset(abi, true, err);
	if (rs < 0)
		return -1;
	session_rs = rs;
	return 0;
}

int cc_landlock_session(int *abi_applied, cc_error *err)
{
	*abi_applied = 0;
	int abi = known_abi(err);
	if (abi < 0)
		return -1;
	/* Files: the template's domain already decides, and a nested domain
	 * can only narrow it. What a domain of its own adds is its scope:
	 * signals and abstract sockets stop at this session's boundary, so
	 * it cannot reach the template or a sibling session. */
	int rs = session_rs >= 0 ? session_rs : scope_ruleset(abi, false, err);
	session_rs = -1; /* this process's copy is used up here */
	if (rs < 0)
		return -1;
	/* no_new_privs came with the template (it is inherited over fork). */
	long r = syscall(__NR_landlock_restrict_self, rs, 0);
	int e = errno;
	close(rs);
	if (r < 0)
		return cc_fail(err, CC_ERR_SANDBOX_UNAVAILABLE, "landlock_restrict_self: %s",
			       strerror(e));
	*abi_applied = abi;
	return 0;
}
