/* Which host objects a grant may never be (grants.c asks for each one it
 * resolved): the host's root directory, and /proc, /sys, /dev with what
 * they hold. Granting one would hand the guest the whole host, every host
 * process's command line and environment (/proc), or the kernel's devices
 * and settings. Decided twice: on the resolved path's text, and on the
 * object the supervisor opened (its filesystem's type, the device the
 * kernel's own filesystems are mounted from, the root's identity), so a
 * symlink or a bind mount of one elsewhere is refused too. Reads
 * /proc/self/mountinfo; pure otherwise. */
#include <errno.h>
#include <linux/magic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/sysmacros.h>

#include "error.h"
#include "supervisor.h"

/* Not in Debian 12's linux/magic.h. */
#define CC_MQUEUE_MAGIC 0x19800202
#define CC_CONFIGFS_MAGIC 0x62656570
#define CC_FUSECTL_MAGIC 0x65735543

#define NEVER_RULE                                                                                 \
	"/, /proc, /sys and /dev (and anything under the last three, wherever it is mounted) "     \
	"are never granted: grant a folder of your own files"

/* Paths whose whole tree is never granted ("/" itself is, below). */
static const char *const never[] = { "/proc", "/sys", "/dev" };

/* The kernel's own filesystems: what they hold is the host's state, never
 * files of the user's, wherever they are mounted. */
static const struct {
	unsigned long magic;
	const char *what;
} kernel_fs[] = {
	{ PROC_SUPER_MAGIC, "the kernel's process information (proc)" },
	{ SYSFS_MAGIC, "the kernel's objects (sysfs)" },
	{ DEVPTS_SUPER_MAGIC, "the host's terminals (devpts)" },
	{ CGROUP_SUPER_MAGIC, "the host's control groups (cgroup)" },
	{ CGROUP2_SUPER_MAGIC, "the host's control groups (cgroup2)" },
	{ DEBUGFS_MAGIC, "the kernel's debugging files (debugfs)" },
	{ TRACEFS_MAGIC, "the kernel's tracing files (tracefs)" },
	{ SECURITYFS_MAGIC, "the security modules' files (securityfs)" },
	{ BPF_FS_MAGIC, "pinned BPF objects (bpf)" },
	{ PSTOREFS_MAGIC, "the kernel's crash records (pstore)" },
	{ EFIVARFS_MAGIC, "the firmware's variables (efivarfs)" },
	{ BINFMTFS_MAGIC, "the kernel's binary formats (binfmt_misc)" },
	{ SELINUX_MAGIC, "SELinux's settings (selinuxfs)" },
	{ SMACK_MAGIC, "Smack's settings (smackfs)" },
	{ NSFS_MAGIC, "the host's namespaces (nsfs)" },
	{ CC_MQUEUE_MAGIC, "the host's message queues (mqueue)" },
	{ CC_CONFIGFS_MAGIC, "the kernel's configuration objects (configfs)" },
	{ CC_FUSECTL_MAGIC, "the host's FUSE connections (fusectl)" },
};

/* a is b or beneath it */
static bool beneath(const char *a, const char *b)
{
	size_t n = strlen(b);
	return !strncmp(a, b, n) && (a[n] == 0 || a[n] == '/');
}

/* One line of /proc/self/mountinfo: "ID PARENT MAJ:MIN ROOT POINT OPTS
 * [TAGS...] - TYPE SOURCE SUPER" (proc(5)). */
struct mnt_line {
	unsigned major, minor;
	char point[PATH_MAX];
	char type[64];
};

static bool parse_line(const char *line, struct mnt_line *m)
{
	const char *sep = strstr(line, " - ");
	return sep &&
	       sscanf(line, "%*d %*d %u:%u %*s %4095s", &m->major, &m->minor, m->point) == 3 &&
	       sscanf(sep + 3, "%63s", m->type) == 1;
}

/* Memory filesystems the kernel or the host's init mounts at or under
 * /proc, /sys and /dev (devtmpfs on /dev, tmpfs on /dev/shm or over a
 * masked /proc file): there they hold the host's devices and shared
 * memory, so another mount of the same one is refused too. A disk
 * filesystem mounted there (a container's /dev/termination-log) is not
 * taken for it: its other files may well be the user's. */
static const char *const memory_fs[] = { "devtmpfs", "tmpfs", "ramfs", "hugetlbfs" };

/* What mountinfo says of the filesystem on device dev: its type (the
 * first mount of it), and whether one of memory_fs is mounted from it at
 * or under /proc, /sys or /dev (there into kernel_at, with its type).
 * Empty strings when nothing is known. */
static void scan_mounts(dev_t dev, char *type, size_t type_cap, char *kernel_at, size_t at_cap)
{
	type[0] = kernel_at[0] = 0;
	FILE *f = fopen("/proc/self/mountinfo", "re");
	if (!f)
		return;
	char *line = NULL;
	size_t cap = 0;
	struct mnt_line m;
	while (getline(&line, &cap, f) > 0) {
		if (!parse_line(line, &m) || makedev(m.major, m.minor) != dev)
			continue;
		if (!type[0])
			snprintf(type, type_cap, "%s", m.type);
		bool memory = false;
		for (size_t i = 0; i < sizeof(memory_fs) / sizeof(memory_fs[0]); i++)
			memory = memory || !strcmp(m.type, memory_fs[i]);
		for (size_t i = 0; memory && !kernel_at[0] && i < 3; i++)
			if (beneath(m.point, never[i]))
				snprintf(kernel_at, at_cap, "%s (%s)", m.point, m.type);
	}
	free(line);
	fclose(f);
}

void cc_fs_type_name(const struct stat *st, char *buf, size_t cap)
{
	char at[PATH_MAX + 80];
	scan_mounts(st->st_dev, buf, cap, at, sizeof(at));
	if (!buf[0])
		snprintf(buf, cap, "unknown");
}

int cc_grant_check_host(const char *real, int fd, const struct stat *st, cc_error *err)
{
	if (!strcmp(real, "/"))
		return cc_fail(err, CC_ERR_INVALID_INPUT,
			       "the host path / is the host's root directory; " NEVER_RULE);
	for (size_t i = 0; i < sizeof(never) / sizeof(never[0]); i++)
		if (beneath(real, never[i]))
			return cc_fail(err, CC_ERR_INVALID_INPUT,
				       "the host path %s is %s%s; " NEVER_RULE, real,
				       strcmp(real, never[i]) ? "under " : "", never[i]);
	if (fd < 0)
		return 0;
	struct stat root;
	if (stat("/", &root) == 0 && root.st_dev == st->st_dev && root.st_ino == st->st_ino)
		return cc_fail(err, CC_ERR_INVALID_INPUT,
			       "the host path %s is the host's root directory (mounted there "
			       "too); " NEVER_RULE,
			       real);
	struct statfs sf;
	if (fstatfs(fd, &sf) == 0)
		for (size_t i = 0; i < sizeof(kernel_fs) / sizeof(kernel_fs[0]); i++)
			if ((unsigned long)sf.f_type == kernel_fs[i].magic)
				return cc_fail(err, CC_ERR_INVALID_INPUT,
					       "the host path %s is on %s; " NEVER_RULE, real,
					       kernel_fs[i].what);
	char type[64], at[PATH_MAX + 80];
	scan_mounts(st->st_dev, type, sizeof(type), at, sizeof(at));
	if (at[0])
		return cc_fail(err, CC_ERR_INVALID_INPUT,
			       "the host path %s is on the filesystem mounted at %s; " NEVER_RULE,
			       real, at);
	return 0;
}
