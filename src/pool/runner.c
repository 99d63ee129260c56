/* SPDX-License-Identifier: Apache-2.0 */
/* runner.c - see runner.h. */
#include "runner.h"
#include "joblog.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <linux/sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <poll.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* Fixed descriptor numbers in the shim (after the agent's are closed): the
 * job's output files, the pipes its stdout and stderr write into (the shim
 * copies them into the files: OUT_R, ERR_R; the job gets OUT_W, ERR_W), the
 * pipe a failure to start comes back on (PIPE_R, PIPE_W). */
enum { FD_DIR = 3, FD_OUT, FD_ERR, FD_NULL, FD_CGROUP, FD_PIPE_R, FD_PIPE_W, FD_OUT_R, FD_OUT_W, FD_ERR_R, FD_ERR_W,
       FD_FIRST_FREE };
#define SHIM_FDS (FD_FIRST_FREE - FD_DIR)

const char *runner_stage_name(int stage)
{
	switch (stage) {
	case RUNNER_STAGE_RAN: return "ran";
	case RUNNER_STAGE_CGROUP: return "joining its cgroup";
	case RUNNER_STAGE_USER: return "switching to the user";
	case RUNNER_STAGE_CWD: return "changing to the submitting directory";
	case RUNNER_STAGE_EXEC: return "executing the command";
	default: return "starting";
	}
}

/* ---- async-signal-safe helpers (used between fork and exec) -------------- */

static size_t fmt_u64(char *p, uint64_t v)
{
	char tmp[24];
	size_t n = 0;
	do {
		tmp[n++] = (char)('0' + v % 10);
		v /= 10;
	} while (v);
	for (size_t i = 0; i < n; i++)
		p[i] = tmp[n - 1 - i];
	return n;
}

static size_t put_field(char *p, const char *key, uint64_t v, int neg)
{
	size_t n = 0;
	while (*key)
		p[n++] = *key++;
	if (neg)
		p[n++] = '-';
	n += fmt_u64(p + n, v);
	return n;
}

/* Writes name durably in the directory: name.tmp, fsync, rename, fsync dir.
 * name.tmp was made with its space reserved (reserve_record), so that a full
 * disk does not keep the record from being written; it is not truncated on
 * open (that would give the space back), but cut to the record's length.
 * A record not written whole is not renamed into place. */
static void write_record(const char *tmp, const char *name, const char *buf, size_t len)
{
	int fd = openat(FD_DIR, tmp, O_WRONLY | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0644);
	if (fd < 0)
		return;
	size_t off = 0;
	while (off < len) {
		ssize_t w = pwrite(fd, buf + off, len - off, (off_t)off);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			break;
		off += (size_t)w;
	}
	bool whole = off == len && ftruncate(fd, (off_t)len) == 0;
	fsync(fd);
	close(fd);
	if (!whole)
		return;
	renameat(FD_DIR, tmp, FD_DIR, name);
	fsync(FD_DIR);
}

/* Makes name (empty) with a block reserved for a record written later by
 * the shim (write_record), so that it can be written on a full disk. 0, or
 * -1 with errno (ENOSPC: no room even for that). A filesystem without
 * fallocate reserves nothing (the write may then fail on a full disk). */
static int reserve_record(int dirfd, const char *name)
{
	int fd = openat(dirfd, name, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0644);
	if (fd < 0)
		return -1;
	int rc = fallocate(fd, FALLOC_FL_KEEP_SIZE, 0, 4096);
	int saved = errno;
	close(fd);
	if (rc != 0 && (saved == EOPNOTSUPP || saved == ENOSYS))
		return 0;
	errno = saved;
	return rc;
}

static void move_fd(int from, int to)
{
	if (from == to) {
		fcntl(to, F_SETFD, 0);
		return;
	}
	dup2(from, to);
}

static void child_fail(int stage)
{
	int msg[2] = { stage, errno };
	ssize_t w = write(FD_PIPE_W, msg, sizeof(msg));
	(void)w;
	_exit(127);
}

/* execvp's search, async-signal-safe, run as the user after the switch (so
 * the agent never probes paths on a user's behalf). Never returns. */
static void exec_search(const struct runner_spec *s)
{
	if (strchr(s->path, '/')) {
		execve(s->path, s->argv, s->envp);
		child_fail(RUNNER_STAGE_EXEC);
	}
	const char *p = s->search_path && s->search_path[0] ? s->search_path : "/usr/local/bin:/usr/bin:/bin";
	size_t plen = strlen(s->path);
	int last = ENOENT;
	char buf[4096];
	for (;;) {
		const char *e = strchr(p, ':');
		size_t n = e ? (size_t)(e - p) : strlen(p);
		const char *dir = n ? p : ".";
		size_t dn = n ? n : 1;
		if (dn + plen + 2 <= sizeof(buf)) {
			memcpy(buf, dir, dn);
			buf[dn] = '/';
			memcpy(buf + dn + 1, s->path, plen + 1);
			execve(buf, s->argv, s->envp);
			if (errno != ENOENT && errno != ENOTDIR)
				last = errno; /* EACCES and the like win over "not found" */
		}
		if (!e)
			break;
		p = e + 1;
	}
	errno = last;
	child_fail(RUNNER_STAGE_EXEC);
}

/* The job, in the shim's child (in_cgroup: clone3 put it there). Never returns. */
static void run_job(const struct runner_spec *s, bool in_cgroup)
{
	struct sigaction dfl;
	memset(&dfl, 0, sizeof(dfl));
	dfl.sa_handler = SIG_DFL;
	for (int sig = 1; sig < NSIG; sig++)
		sigaction(sig, &dfl, NULL);
	sigset_t none;
	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
	setpgid(0, 0);
	close(FD_PIPE_R);
	if (s->cgroup_dir && !in_cgroup) {
		int procs = openat(FD_CGROUP, "cgroup.procs", O_WRONLY | O_CLOEXEC);
		if (procs < 0 || write(procs, "0\n", 2) != 2)
			child_fail(RUNNER_STAGE_CGROUP);
		close(procs);
	}
	if (s->devices_v1_procs) {
		int procs = open(s->devices_v1_procs, O_WRONLY | O_CLOEXEC);
		if (procs < 0 || write(procs, "0\n", 2) != 2)
			child_fail(RUNNER_STAGE_CGROUP);
		close(procs);
	}
	dup2(FD_NULL, 0);
	dup2(FD_OUT_W, 1);
	dup2(FD_ERR_W, 2);
	if (s->change_user) {
		if (setgroups((size_t)s->ngroups, s->groups) || setgid(s->gid) || setuid(s->uid))
			child_fail(RUNNER_STAGE_USER);
	}
	if (chdir(s->cwd))
		child_fail(RUNNER_STAGE_CWD);
	for (int fd = FD_DIR; fd < FD_FIRST_FREE; fd++)
		if (fd != FD_PIPE_W) /* close-on-exec: closed by a successful exec */
			close(fd);
	exec_search(s);
}

/* ---- the job's output: pipe -> file, within the limit (in the shim) ------- */

/* One of the job's streams: its pipe's read end and its file. */
struct stream {
	int in, out;
	uint64_t punched; /* joblog_trim_fd's mark */
	bool open;
};

/* The shim's copy buffer: static, not on the stack of whichever agent thread
 * forked it. One write is at most this: the slack of the limit. */
static char copy_buf[65536];

/* Moves up to max bytes from the stream's pipe into its file, then keeps the
 * file within the limit. >0 bytes moved, 0 at the end of the stream (closed),
 * -1 when the pipe is empty now. A file that cannot be written (a full disk)
 * loses what does not fit; the job goes on. */
static ssize_t copy_chunk(struct stream *st, uint64_t limit, size_t max)
{
	ssize_t r;
	do
		r = read(st->in, copy_buf, max < sizeof(copy_buf) ? max : sizeof(copy_buf));
	while (r < 0 && errno == EINTR);
	if (r < 0 && errno == EAGAIN)
		return -1;
	if (r <= 0) {
		close(st->in);
		st->open = false;
		return 0;
	}
	for (ssize_t off = 0; off < r;) {
		ssize_t w = write(st->out, copy_buf + off, (size_t)(r - off));
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			break;
		off += w;
	}
	if (limit)
		(void)joblog_trim_fd(st->out, limit, &st->punched);
	return r;
}

/* Copies what is in the pipes now (and no more: a writer that never stops
 * cannot hold the exit record back). */
static void copy_pending(struct stream st[2], uint64_t limit)
{
	for (int k = 0; k < 2; k++) {
		int left = 0;
		if (!st[k].open || ioctl(st[k].in, FIONREAD, &left) != 0)
			continue;
		while (left > 0 && st[k].open) {
			ssize_t r = copy_chunk(&st[k], limit, (size_t)left);
			if (r <= 0)
				break;
			left -= (int)r;
		}
	}
}

/* Copies the job's output into its files as it comes. With child: until the
 * job has ended (*status from waitpid), then what its pipes hold at that
 * moment; without: until every process that holds the pipes has closed them. */
static void copy_until_exit(struct stream st[2], uint64_t limit, pid_t child, int *status)
{
	for (int k = 0; k < 2; k++)
		if (st[k].open)
			fcntl(st[k].in, F_SETFL, O_NONBLOCK);
	/* the job's end as an event (Linux 5.3); else checked every 50 ms */
#ifdef SYS_pidfd_open
	int pidfd = child > 0 ? (int)syscall(SYS_pidfd_open, child, 0) : -1;
#else
	int pidfd = -1;
#endif
	for (;;) {
		if (child > 0) {
			pid_t w = waitpid(child, status, WNOHANG);
			if (w == child || (w < 0 && errno == ECHILD))
				break;
		} else if (!st[0].open && !st[1].open) {
			break;
		}
		struct pollfd pf[3];
		nfds_t n = 0;
		int which[3];
		for (int k = 0; k < 2; k++)
			if (st[k].open) {
				pf[n] = (struct pollfd){ .fd = st[k].in, .events = POLLIN };
				which[n++] = k;
			}
		if (pidfd >= 0) {
			pf[n] = (struct pollfd){ .fd = pidfd, .events = POLLIN };
			which[n++] = -1;
		}
		if (poll(pf, n, child > 0 && pidfd < 0 ? 50 : -1) <= 0)
			continue;
		for (nfds_t i = 0; i < n; i++)
			if (which[i] >= 0 && (pf[i].revents & (POLLIN | POLLHUP | POLLERR)))
				copy_chunk(&st[which[i]], limit, sizeof(copy_buf));
	}
	if (pidfd >= 0)
		close(pidfd);
	if (child > 0)
		copy_pending(st, limit);
}

/* The shim, in the agent's child. Never returns. */
static void run_shim(const struct runner_spec *s, const int keep[SHIM_FDS])
{
	setsid();
	struct sigaction ign;
	memset(&ign, 0, sizeof(ign));
	ign.sa_handler = SIG_IGN;
	sigaction(SIGTERM, &ign, NULL);
	sigaction(SIGINT, &ign, NULL);
	sigaction(SIGHUP, &ign, NULL);
	sigaction(SIGPIPE, &ign, NULL);
	/* gather what the shim keeps at fixed numbers above the ones in use, then down */
	int high[SHIM_FDS];
	for (int i = 0; i < SHIM_FDS; i++)
		high[i] = keep[i] >= 0 ? fcntl(keep[i], F_DUPFD, 100) : -1;
	for (int i = 0; i < SHIM_FDS; i++)
		if (high[i] >= 0)
			move_fd(high[i], FD_DIR + i);
		else
			close(FD_DIR + i); /* not an agent descriptor left open by chance */
	if (close_range(FD_FIRST_FREE, ~0u, 0) != 0)
		for (int fd = FD_FIRST_FREE; fd < 65536; fd++)
			close(fd);
	fcntl(FD_PIPE_W, F_SETFD, FD_CLOEXEC);
	bool cg = keep[FD_CGROUP - FD_DIR] >= 0;

	/* Straight into the cgroup with clone3 (Linux 5.7): moving a running
	 * process there (writing cgroup.procs) waits for an RCU grace period,
	 * about 10 ms, on every job start. fork + cgroup.procs is the fallback. */
	/* The job inherits the shim's ignored SIGTERM, SIGINT and SIGHUP until
	 * run_job sets them back: a cancel in that window (the pids record may
	 * already be out) was lost. Blocked, it stays pending in the job until
	 * run_job unblocks it; the shim then discards its own (ignored). */
	sigset_t stop_sigs, old_mask;
	sigemptyset(&stop_sigs);
	sigaddset(&stop_sigs, SIGTERM);
	sigaddset(&stop_sigs, SIGINT);
	sigaddset(&stop_sigs, SIGHUP);
	sigprocmask(SIG_BLOCK, &stop_sigs, &old_mask);
	pid_t child = -1;
	if (cg) {
		struct clone_args ca;
		memset(&ca, 0, sizeof(ca));
		ca.flags = CLONE_INTO_CGROUP;
		ca.exit_signal = SIGCHLD;
		ca.cgroup = FD_CGROUP;
		long r = syscall(SYS_clone3, &ca, sizeof(ca));
		if (r == 0)
			run_job(s, true);
		child = (pid_t)r;
	}
	if (child < 0)
		child = fork();
	if (child == 0)
		run_job(s, false);
	if (child > 0)
		setpgid(child, child); /* also here, so the group exists before "pids" names it */
	sigprocmask(SIG_SETMASK, &old_mask, NULL);
	/* the shim keeps none of the agent's stdin/stdout/stderr (a log pipe, a terminal) */
	dup2(FD_NULL, 0);
	dup2(FD_NULL, 1);
	dup2(FD_NULL, 2);
	close(FD_PIPE_W);
	close(FD_OUT_W); /* the job's ends: the shim reads EOF when the job's processes closed theirs */
	close(FD_ERR_W);
	close(FD_NULL);
	if (cg)
		close(FD_CGROUP);
	char buf[160];
	size_t n = 0;
	n += put_field(buf + n, "", (uint64_t)getpid(), 0);
	buf[n++] = ' ';
	n += put_field(buf + n, "", child > 0 ? (uint64_t)child : 0, 0);
	buf[n++] = '\n';
	if (child > 0)
		write_record("pids.tmp", "pids", buf, n);

	int stage = RUNNER_STAGE_RAN, error = 0, status = 0;
	struct stream st[2] = { { FD_OUT_R, FD_OUT, 0, true }, { FD_ERR_R, FD_ERR, 0, true } };
	if (child < 0) {
		stage = RUNNER_STAGE_EXEC;
		error = errno;
		status = 127 << 8;
	} else {
		int msg[2];
		ssize_t r;
		do
			r = read(FD_PIPE_R, msg, sizeof(msg));
		while (r < 0 && errno == EINTR);
		if (r == (ssize_t)sizeof(msg)) {
			stage = msg[0];
			error = msg[1];
		}
		copy_until_exit(st, s->log_limit, child, &status);
	}
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	uint64_t end = (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
	n = 0;
	n += put_field(buf + n, "v1 status=", (uint64_t)(unsigned)status, 0);
	n += put_field(buf + n, " end_ns=", end, 0);
	n += put_field(buf + n, " stage=", (uint64_t)stage, 0);
	n += put_field(buf + n, " error=", (uint64_t)error, 0);
	buf[n++] = '\n';
	write_record("exit.tmp", "exit", buf, n);
	/* what the job's processes still running (until its cgroup is killed)
	 * write goes on into the files, within the limit */
	copy_until_exit(st, s->log_limit, 0, NULL);
	_exit(0);
}

int runner_spawn(const struct runner_spec *s, pid_t *shim_pid, char *err, size_t errlen)
{
	int dirfd = -1, out = -1, errf = -1, devnull = -1, cg = -1, pipefd[2] = { -1, -1 }, opipe[2] = { -1, -1 },
	    epipe[2] = { -1, -1 };
	int rc = -1;
	dirfd = open(s->job_dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dirfd < 0) {
		snprintf(err, errlen, "cannot open '%s': %s", s->job_dir, strerror(errno));
		goto out;
	}
	out = openat(dirfd, "stdout", O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC | O_NOFOLLOW, 0600);
	errf = openat(dirfd, "stderr", O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC | O_NOFOLLOW, 0600);
	devnull = open("/dev/null", O_RDWR | O_CLOEXEC);
	if (out < 0 || errf < 0 || devnull < 0) {
		snprintf(err, errlen, "cannot create the job's output files in '%s': %s", s->job_dir, strerror(errno));
		goto out;
	}
	if (reserve_record(dirfd, "pids.tmp") || reserve_record(dirfd, "exit.tmp")) {
		snprintf(err, errlen, "no room for the job's records in '%s': %s", s->job_dir, strerror(errno));
		goto out;
	}
	if (s->change_user && (fchown(out, s->uid, s->gid) || fchown(errf, s->uid, s->gid))) {
		snprintf(err, errlen, "cannot give the output files to uid %u: %s", (unsigned)s->uid, strerror(errno));
		goto out;
	}
	if (s->cgroup_dir) {
		cg = open(s->cgroup_dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		if (cg < 0) {
			snprintf(err, errlen, "cannot open cgroup '%s': %s", s->cgroup_dir, strerror(errno));
			goto out;
		}
	}
	if (pipe2(pipefd, O_CLOEXEC) || pipe2(opipe, O_CLOEXEC) || pipe2(epipe, O_CLOEXEC)) {
		snprintf(err, errlen, "pipe: %s", strerror(errno));
		goto out;
	}
	pid_t pid = fork();
	if (pid < 0) {
		snprintf(err, errlen, "cannot fork the job's shim: %s", strerror(errno));
		goto out;
	}
	if (pid == 0) {
		int keep[SHIM_FDS] = { dirfd, out, errf, devnull, cg, pipefd[0], pipefd[1], opipe[0], opipe[1], epipe[0],
				       epipe[1] };
		run_shim(s, keep);
	}
	*shim_pid = pid;
	rc = 0;
out:;
	int fds[] = { dirfd, out, errf, devnull, cg, pipefd[0], pipefd[1], opipe[0], opipe[1], epipe[0], epipe[1] };
	for (size_t i = 0; i < sizeof(fds) / sizeof(fds[0]); i++)
		if (fds[i] >= 0)
			close(fds[i]);
	return rc;
}

/* ---- records --------------------------------------------------------------------- */

int runner_parse_exit(const char *text, struct runner_exit *out)
{
	unsigned status, stage, error;
	unsigned long long end;
	char tail;
	memset(out, 0, sizeof(*out));
	int n = sscanf(text, "v1 status=%u end_ns=%llu stage=%u error=%u%c", &status, &end, &stage, &error, &tail);
	if (n < 4 || (n == 5 && tail != '\n') || stage > RUNNER_STAGE_EXEC || status > 0xffff)
		return -1;
	out->wait_status = (int)status;
	out->end_ns = end;
	out->stage = (int)stage;
	out->error = (int)error;
	return 0;
}

int runner_parse_pids(const char *text, int *shim_pid, int *job_pid)
{
	int a, b;
	if (sscanf(text, "%d %d", &a, &b) != 2 || a <= 0 || b <= 0)
		return -1;
	*shim_pid = a;
	*job_pid = b;
	return 0;
}

static int read_small(const char *dir, const char *name, char *buf, size_t buflen)
{
	char p[512];
	snprintf(p, sizeof(p), "%s/%s", dir, name);
	int fd = open(p, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	if (fd < 0)
		return errno == ENOENT ? 0 : -1;
	ssize_t n = read(fd, buf, buflen - 1);
	close(fd);
	if (n < 0)
		return -1;
	buf[n] = '\0';
	return 1;
}

int runner_read_exit(const char *job_dir, struct runner_exit *out)
{
	char buf[256];
	int rc = read_small(job_dir, "exit", buf, sizeof(buf));
	if (rc <= 0)
		return rc;
	return runner_parse_exit(buf, out) == 0 ? 1 : -1;
}

int runner_read_pids(const char *job_dir, int *shim_pid, int *job_pid)
{
	char buf[128];
	int rc = read_small(job_dir, "pids", buf, sizeof(buf));
	if (rc <= 0)
		return rc;
	return runner_parse_pids(buf, shim_pid, job_pid) == 0 ? 1 : -1;
}

/* ---- processes ------------------------------------------------------------------- */

bool proc_alive_as(int pid, uint64_t start_ticks)
{
	struct proc_stat ps;
	return proc_stat_read(pid, &ps) == 0 && ps.state != 'Z' && ps.state != 'X' && ps.start_ticks == start_ticks;
}

bool proc_in_jobs(int pid, const int *shim_pids, unsigned n)
{
	int cur = pid;
	for (unsigned depth = 0; depth < 64 && cur > 1; depth++) {
		struct proc_stat ps;
		if (proc_stat_read(cur, &ps))
			return false;
		for (unsigned i = 0; i < n; i++)
			if (shim_pids[i] > 0 && (cur == shim_pids[i] || ps.session == shim_pids[i]))
				return true;
		cur = ps.ppid;
	}
	return false;
}

void runner_boot_id(char *out, size_t outlen)
{
	out[0] = '\0';
	FILE *f = fopen("/proc/sys/kernel/random/boot_id", "re");
	if (!f)
		return;
	if (fgets(out, (int)outlen, f))
		out[strcspn(out, "\n")] = '\0';
	fclose(f);
}

/* ---- cgroups ---------------------------------------------------------------------- */

bool runner_cgroup_path_within(const char *proc_path, const char *job_cgroup)
{
	const char *name = strrchr(job_cgroup, '/');
	if (!name || !name[1])
		return false;
	size_t n = strlen(name); /* "/gpuctl-TAG-job-ID": a component starts at a '/' */
	for (const char *at = strstr(proc_path, name); at; at = strstr(at + 1, name))
		if (at[n] == '\0' || at[n] == '/')
			return true;
	return false;
}

int runner_cgroup2_mount(char *out, size_t outlen)
{
	char line[1024];
	int rc = -1;
	FILE *f = fopen("/proc/self/mounts", "re");
	if (!f)
		return -1;
	while (rc && fgets(line, sizeof(line), f)) {
		char dev[128], dir[256], type[32];
		if (sscanf(line, "%127s %255s %31s", dev, dir, type) == 3 && strcmp(type, "cgroup2") == 0)
			rc = snprintf(out, outlen, "%s", dir) < (int)outlen ? 0 : -1;
	}
	fclose(f);
	return rc;
}

int runner_cgroup_base(const char *parent, char *out, size_t outlen, char *err, size_t errlen)
{
	if (parent && parent[0]) {
		struct stat sb;
		if (stat(parent, &sb) || !S_ISDIR(sb.st_mode)) {
			snprintf(err, errlen, "cgroup parent '%s' is not a directory", parent);
			return -1;
		}
		snprintf(out, outlen, "%s", parent);
		return 0;
	}
	char mnt[256] = "", line[1024], self[512] = "";
	if (runner_cgroup2_mount(mnt, sizeof(mnt))) {
		snprintf(err, errlen, "no cgroup v2 hierarchy is mounted");
		return -1;
	}
	FILE *f = fopen("/proc/self/cgroup", "re");
	if (f) {
		while (fgets(line, sizeof(line), f))
			if (strncmp(line, "0::", 3) == 0) {
				line[strcspn(line, "\n")] = '\0';
				snprintf(self, sizeof(self), "%.500s", line + 3);
			}
		fclose(f);
	}
	if (!self[0]) {
		snprintf(err, errlen, "the agent's cgroup v2 path is unknown");
		return -1;
	}
	snprintf(out, outlen, "%s%s", mnt, strcmp(self, "/") == 0 ? "" : self);
	if (access(out, W_OK) != 0) {
		snprintf(err, errlen, "cgroup '%s' is not writable (%s)", out, strerror(errno));
		return -1;
	}
	return 0;
}

int runner_cgroup_create(const char *base, const char *tag, uint64_t job, char *out, size_t outlen, char *err,
			 size_t errlen)
{
	snprintf(out, outlen, "%s/gpuctl-%s-job-%llu", base, tag, (unsigned long long)job);
	if (mkdir(out, 0755) != 0) {
		/* left empty by an earlier run: reuse it; never one with processes in it */
		int e = errno;
		if (e == EEXIST && runner_cgroup_count(out) == 0)
			return 0;
		snprintf(err, errlen, "cannot create cgroup '%s': %s", out,
			 e == EEXIST ? "it exists and holds processes" : strerror(e));
		out[0] = '\0';
		return -1;
	}
	return 0;
}

void runner_cgroup_kill(const char *dir)
{
	char p[512];
	snprintf(p, sizeof(p), "%s/cgroup.kill", dir);
	int fd = open(p, O_WRONLY | O_CLOEXEC);
	if (fd >= 0) {
		ssize_t w = write(fd, "1", 1);
		close(fd);
		if (w == 1)
			return;
	}
	snprintf(p, sizeof(p), "%s/cgroup.procs", dir);
	FILE *f = fopen(p, "re");
	if (!f)
		return;
	int pid;
	while (fscanf(f, "%d", &pid) == 1)
		if (pid > 1)
			kill(pid, SIGKILL);
	fclose(f);
}

int runner_cgroup_count(const char *dir)
{
	char p[512];
	snprintf(p, sizeof(p), "%s/cgroup.procs", dir);
	FILE *f = fopen(p, "re");
	if (!f)
		return -1;
	int pid, n = 0;
	while (fscanf(f, "%d", &pid) == 1)
		n++;
	fclose(f);
	return n;
}

/* Removes dir and the empty cgroups below it, deepest first (depth: how far down). */
static bool remove_tree(const char *dir, int depth)
{
	if (rmdir(dir) == 0 || errno == ENOENT)
		return true;
	if ((errno != EBUSY && errno != ENOTEMPTY) || depth == 0)
		return false;
	DIR *d = opendir(dir);
	if (!d)
		return false;
	struct dirent *e;
	char sub[512];
	while ((e = readdir(d)))
		if (e->d_type == DT_DIR && e->d_name[0] != '.' &&
		    (size_t)snprintf(sub, sizeof(sub), "%s/%s", dir, e->d_name) < sizeof(sub))
			remove_tree(sub, depth - 1);
	closedir(d);
	return rmdir(dir) == 0 || errno == ENOENT;
}

bool runner_cgroup_remove(const char *dir)
{
	return remove_tree(dir, 8); /* a container runtime's own cgroups in it (podman --cgroups=split) */
}
