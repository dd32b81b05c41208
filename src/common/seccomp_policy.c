/* The seccomp policy tables. Each line says who needs the call, in words of
 * its own (tests/security/test_seccomp_bpf.py: every reason differs, every
 * name is an x86_64 system call, none is both allowed and on the kill-list
 * outside the fork server's template); a call no engine needs is not here.
 * Sizes are capped by tests/security/test_seccomp_bpf.py (JavaScript at
 * most 30, Python at most 70; pydeno's V8 worker, for scale, allows 92
 * plus about 20 argument-checked). How the lists were found: strace of
 * each worker running tests/ and HumanEval-X, then every entry justified
 * or removed. */
#include "seccomp_policy.h"

#define JS CC_SC_JS
#define PY CC_SC_PY
#define BOTH (CC_SC_JS | CC_SC_PY)
#define FORK CC_SC_FORK
/* Python always; JavaScript when it has scratch or a grant (its fs module) */
#define FILES (CC_SC_PY | CC_SC_FILES)
#define FORK_SCRATCH CC_SC_FORK_SCRATCH

const struct cc_sc_rule cc_sc_allow[] = {
	/* the channel and guest-visible I/O */
	{ "read", BOTH, CC_SC_ALLOW, "frames from the channel; Python reads module files" },
	{ "write", BOTH, CC_SC_ALLOW, "frames to the channel; Python writes scratch files" },
	{ "recvfrom", BOTH, CC_SC_ARGS,
	  "recv(MSG_DONTWAIT) reads the channel while waiting for a frame; no MSG_OOB" },
	{ "sendto", BOTH, CC_SC_ARGS, "send() of frames: never to an address, no MSG_OOB" },
	{ "poll", BOTH, CC_SC_ALLOW, "waiting for the next frame" },
	/* memory */
	{ "mmap", BOTH, CC_SC_ALLOW, "allocator; Python maps extension modules" },
	{ "munmap", BOTH, CC_SC_ALLOW, "allocator frees mappings" },
	{ "mremap", BOTH, CC_SC_ALLOW, "realloc of large blocks (QuickJS arrays)" },
	{ "mprotect", BOTH, CC_SC_ALLOW, "allocator arenas, thread stacks, ld.so" },
	{ "madvise", BOTH, CC_SC_ALLOW, "allocator returns memory" },
	{ "brk", BOTH, CC_SC_ALLOW, "allocator heap" },
	/* process and threads */
	{ "futex", BOTH, CC_SC_ARGS,
	  "libc locks, Python threads, the GIL: private only (no waking another sandbox), no PI" },
	{ "exit", BOTH, CC_SC_ALLOW, "a thread ends" },
	{ "exit_group", BOTH, CC_SC_ALLOW, "the worker ends" },
	{ "rt_sigreturn", BOTH, CC_SC_ALLOW, "return from a signal handler" },
	{ "rt_sigprocmask", BOTH, CC_SC_ALLOW, "siglongjmp in the self-probes; Python threads" },
	{ "getpid", BOTH, CC_SC_ALLOW, "libc and Python's random/os modules" },
	{ "gettid", BOTH, CC_SC_ALLOW, "Python's stop timer targets the main thread" },
	{ "clock_gettime", BOTH, CC_SC_ARGS,
	  "deadlines (the vDSO falls back to it): fixed clocks only, no other pid's CPU clock" },
	{ "getrandom", BOTH, CC_SC_ALLOW, "hash seeds, Math.random, os.urandom" },
	{ "clone", PY, CC_SC_ARGS,
	  "threads only: CLONE_THREAD|CLONE_VM|CLONE_SIGHAND|CLONE_FILES (one descriptor table, "
	  "so RLIMIT_NOFILE bounds the worker), no namespaces" },
	{ "set_robust_list", PY, CC_SC_ALLOW, "glibc's thread start registers its robust futexes" },
	{ "rseq", PY, CC_SC_ALLOW, "glibc's thread start registers restartable sequences" },
	{ "sched_yield", PY, CC_SC_ALLOW, "OpenBLAS and lock back-off" },
	{ "sched_getaffinity", PY, CC_SC_ARGS,
	  "os.cpu_count, numpy thread pools: pid 0 (itself) only, no other process" },
	{ "rt_sigaction", PY, CC_SC_ARGS, "Python's signal module; never for SIGSYS" },
	{ "timer_create", PY, CC_SC_ARGS,
	  "the soft-stop timer at the deadline: fixed clocks only, no other pid's CPU clock" },
	{ "timer_settime", PY, CC_SC_ALLOW, "arming the soft-stop timer" },
	{ "clock_nanosleep", PY, CC_SC_ARGS,
	  "time.sleep, asyncio.sleep: fixed clocks only, no other pid's CPU clock" },
	{ "prlimit64", PY, CC_SC_ARGS, "resource.getrlimit: read only, own process" },
	{ "uname", PY, CC_SC_ALLOW, "platform, sysconfig" },
	/* files: the mount namespace and Landlock decide which */
	{ "openat", FILES, CC_SC_ARGS,
	  "imports; files in the read-only tree and scratch: never created set-user-ID or "
	  "set-group-ID" },
	{ "close", BOTH, CC_SC_ALLOW,
	  "the monitor's socket after the self-probes; Python's files" },
	{ "newfstatat", FILES, CC_SC_ALLOW, "import system, os.stat" },
	{ "fstat", FILES, CC_SC_ALLOW, "open files' size and type (io, loading modules)" },
	{ "lseek", FILES, CC_SC_ALLOW, "seek and tell in open files" },
	{ "pread64", PY, CC_SC_ALLOW, "ld.so reads extension modules' headers" },
	{ "getdents64", FILES, CC_SC_ALLOW, "import caches, os.listdir" },
	{ "readlink", FILES, CC_SC_ALLOW, "os.path.realpath" },
	{ "getcwd", FILES, CC_SC_ALLOW, "os.getcwd, import of the current directory" },
	{ "access", FILES, CC_SC_ALLOW, "os.access, shutil.which" },
	{ "fcntl", FILES, CC_SC_ARGS,
	  "fd and status flags, F_DUPFD_CLOEXEC, record locks (sqlite): no F_SETOWN, no leases" },
	{ "ioctl", PY, CC_SC_ARGS, "isatty (TCGETS) and FIONBIO only: never TIOCSTI" },
	{ "dup", PY, CC_SC_ALLOW, "os.dup, io" },
	{ "ftruncate", FILES, CC_SC_ALLOW, "truncating scratch files (sqlite's journal)" },
	{ "unlink", FILES, CC_SC_ALLOW, "scratch files (tempfile)" },
	{ "mkdir", FILES, CC_SC_ALLOW, "scratch directories (tempfile.mkdtemp)" },
	{ "rmdir", FILES, CC_SC_ALLOW, "removing scratch directories (tempfile's cleanup)" },
	{ "rename", FILES, CC_SC_ALLOW, "os.replace of scratch files (atomic saves)" },
	/* ordinary file work in scratch and writable grants (issue 14); the
	 * mount namespace and Landlock decide where */
	{ "unlinkat", FILES, CC_SC_ALLOW, "shutil.rmtree removes by directory descriptor" },
	{ "chmod", FILES, CC_SC_ARGS,
	  "os.chmod, shutil.copy's copymode: never a set-user-ID or set-group-ID bit (an "
	  "idmapped grant's files are the host owner's)" },
	{ "fchmod", FILES, CC_SC_ARGS, "os.chmod on an open file, sqlite: the same mode check" },
	{ "utimensat", FILES, CC_SC_ALLOW, "os.utime, shutil.copystat" },
	{ "symlink", FILES, CC_SC_ALLOW, "os.symlink (Landlock MAKE_SYM: writable trees only)" },
	{ "chdir", FILES, CC_SC_ALLOW, "os.chdir into scratch" },
	{ "flock", FILES, CC_SC_ALLOW,
	  "fcntl.flock, advisory locks (SECURITY.md: host files too)" },
	{ "fsync", FILES, CC_SC_ALLOW, "sqlite commits, os.fsync" },
	{ "fdatasync", FILES, CC_SC_ALLOW, "sqlite commits" },
	{ "pwrite64", FILES, CC_SC_ALLOW, "sqlite writes pages at offsets" },
	{ "listxattr", FILES, CC_SC_ALLOW,
	  "shutil.copy2's copystat lists extended attributes (names only; never set)" },
	{ "llistxattr", FILES, CC_SC_ALLOW, "the same for a symlink (follow_symlinks=False)" },
	/* asyncio's event loop */
	{ "epoll_create1", PY, CC_SC_ALLOW, "creating asyncio's selector" },
	{ "epoll_ctl", PY, CC_SC_ALLOW, "asyncio's selector registers descriptors" },
	{ "epoll_wait", PY, CC_SC_ALLOW, "asyncio's selector waits" },
	{ "epoll_pwait", PY, CC_SC_ALLOW, "asyncio's selector (newer glibc)" },
	{ "eventfd2", PY, CC_SC_ALLOW,
	  "the wakers of Rust async runtimes (tokio in polars): a counter descriptor, "
	  "counted in RLIMIT_NOFILE" },
	{ "socketpair", PY, CC_SC_ARGS, "asyncio's self-pipe: AF_UNIX SOCK_STREAM only" },
	/* the fork server's template only (src/worker/forkserver.c): each
	 * session it forks stacks the engine's own filter on top, which
	 * refuses all of these again before any guest code runs */
	{ "clone", FORK, CC_SC_ARGS,
	  "a session: exactly SIGCHLD|CLONE_NEWUSER|CLONE_NEWPID (its own quotas, no siblings in "
	  "sight: one clone, issue 23), or glibc's fork flags (no namespaces; the probe "
	  "session's exec probe)" },
	{ "wait4", FORK, CC_SC_ALLOW, "reaping ended sessions" },
	{ "restart_syscall", FORK, CC_SC_ALLOW, "poll resumed after SIGCHLD under a tracer" },
	{ "recvmsg", FORK, CC_SC_ALLOW, "a fork request carries the session's channel" },
	{ "sendmsg", FORK, CC_SC_ALLOW, "the reply carries the session's pidfd" },
	{ "pidfd_open", FORK, CC_SC_ALLOW, "a pidfd of the new session for the supervisor" },
	{ "dup2", FORK, CC_SC_ALLOW, "the session's channel becomes fd 3" },
	{ "landlock_create_ruleset", FORK, CC_SC_ALLOW,
	  "the ruleset of the session's own Landlock domain" },
	{ "landlock_restrict_self", FORK, CC_SC_ALLOW,
	  "entering the session's own Landlock domain" },
	{ "seccomp", FORK, CC_SC_ARGS, "the session's own filter: SET_MODE_FILTER, no flags" },
	{ "setrlimit", FORK, CC_SC_ALLOW, "the session's own limits, lowered" },
	{ "capset", FORK, CC_SC_ALLOW, "dropping what the session's user namespace gave it" },
	{ "capget", FORK, CC_SC_ALLOW, "checking that nothing was kept" },
	/* a template whose sessions have scratch: each new session (its own
	 * user namespace, owning its own mount namespace) maps its ids and
	 * mounts its tmpfs on /tmp before any guest code */
	{ "clone", FORK_SCRATCH, CC_SC_ARGS,
	  "a session with scratch: exactly SIGCHLD|CLONE_NEWUSER|CLONE_NEWPID|CLONE_NEWNS "
	  "(its own user, pid and mount namespaces)" },
	{ "mount", FORK_SCRATCH, CC_SC_ARGS,
	  "the session's tmpfs: flags exactly MS_NOSUID|MS_NODEV|MS_NOEXEC (no bind, "
	  "remount or move)" },
	{ "landlock_add_rule", FORK_SCRATCH, CC_SC_ALLOW,
	  "each session's file domain, built after its tmpfs is mounted" },
	{ "prctl", FORK_SCRATCH, CC_SC_ARGS,
	  "PR_SET_DUMPABLE only: a non-dumpable process's /proc/self/uid_map belongs to "
	  "the host's root, so a new session is dumpable while it writes its maps" },
};
const size_t cc_sc_allow_len = sizeof(cc_sc_allow) / sizeof(cc_sc_allow[0]);

const char *const cc_sc_kill[] = {
	/* debugging and reading other processes */
	"ptrace",
	"process_vm_readv",
	"process_vm_writev",
	"kcmp",
	"pidfd_getfd",
	"process_madvise",
	/* large kernel attack surfaces */
	"io_uring_setup",
	"io_uring_enter",
	"io_uring_register",
	"bpf",
	"perf_event_open",
	"userfaultfd",
	"keyctl",
	"add_key",
	"request_key",
	"fanotify_init",
	/* the mount API and namespaces */
	"mount",
	"umount2",
	"fsopen",
	"fsconfig",
	"fsmount",
	"fspick",
	"move_mount",
	"open_tree",
	"mount_setattr",
	"pivot_root",
	"chroot",
	"unshare",
	"setns",
	/* running other code */
	"execve",
	"execveat",
	"memfd_create",
	"memfd_secret",
	"uselib",
	/* the machine itself */
	"kexec_load",
	"kexec_file_load",
	"init_module",
	"finit_module",
	"delete_module",
	"reboot",
	"swapon",
	"swapoff",
	"acct",
	"quotactl",
	"quotactl_fd",
	"iopl",
	"ioperm",
	"syslog",
	"settimeofday",
	"clock_settime",
	"clock_adjtime",
	"adjtimex",
	"vhangup",
	"open_by_handle_at",
	"name_to_handle_at",
	"lookup_dcookie",
	"nfsservctl",
};
const size_t cc_sc_kill_len = sizeof(cc_sc_kill) / sizeof(cc_sc_kill[0]);

_Static_assert(sizeof(cc_sc_kill) / sizeof(cc_sc_kill[0]) <= 255 - CC_SC_KILL_EXIT_BASE,
	       "kill-list indexes must fit an exit status");

const char *cc_sc_kill_name(int exit_status)
{
	if (exit_status < CC_SC_KILL_EXIT_BASE ||
	    (size_t)(exit_status - CC_SC_KILL_EXIT_BASE) >= cc_sc_kill_len)
		return NULL;
	return cc_sc_kill[exit_status - CC_SC_KILL_EXIT_BASE];
}
