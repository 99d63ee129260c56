/* SPDX-License-Identifier: Apache-2.0 */
/*
 * gpuctl_spank.c - SPANK plugin for gpuctl (docs/slurm.md, "SPANK plugin").
 *
 *   srun --gpu-stats ...            at the end of the step, srun prints the
 *                                   job's GPU statistics from the node's agent
 *                                   (`gpuctl slurm stats`)
 *   srun --gpu-health=quick|full    before the task starts, check its GPUs
 *                                   (quick: `gpuctl health --idle --window 0`;
 *                                   full: `gpuctl health --idle --window 5`);
 *                                   a failure ends the task (exit 2) with the
 *                                   verdict printed to the job's output
 *
 *   admin_comment=1 (plugin argument): when a step's rank-0 task ends, on the
 *                                   node, write the job's statistics so far to
 *                                   its AdminComment (scontrol update, as root)
 *
 * plugstack.conf: optional <libdir>/gpuctl/gpuctl_spank.so [gpuctl=PATH]
 * [socket=PATH] [sim=SPEC] [admin_comment=1]; "%n" in socket and sim is the
 * node's name (on the node: SLURMD_NODENAME; in srun: the first node of the
 * job). sim= is for test clusters on simulated servers. The plugin runs gpuctl as a program;
 * it links nothing of gpuctl and no NVIDIA library.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <slurm/spank.h>

SPANK_PLUGIN(gpuctl, 1);

#define HEALTH_QUICK 1
#define HEALTH_FULL 2

static int want_stats;
static int want_health;
static char gpuctl_path[512] = "gpuctl";
static char socket_arg[512];
static char sim_arg[512];
static int admin_comment;

static int opt_stats(int val, const char *optarg, int remote)
{
	(void)val;
	(void)optarg;
	(void)remote;
	want_stats = 1;
	return 0;
}

static int opt_health(int val, const char *optarg, int remote)
{
	(void)val;
	(void)remote;
	if (optarg && strcmp(optarg, "quick") == 0)
		want_health = HEALTH_QUICK;
	else if (optarg && strcmp(optarg, "full") == 0)
		want_health = HEALTH_FULL;
	else {
		slurm_error("gpuctl: --gpu-health takes 'quick' or 'full', not '%s'", optarg ? optarg : "");
		return -1;
	}
	return 0;
}

struct spank_option spank_options[] = {
	{ "gpu-stats", NULL, "print the job's GPU statistics (gpuctl) when the step ends", 0, 0, opt_stats },
	{ "gpu-health", "quick|full", "check the job's GPUs with gpuctl before the task starts", 1, 0, opt_health },
	SPANK_OPTIONS_TABLE_END
};

static void take_args(int ac, char **av)
{
	for (int i = 0; i < ac; i++) {
		if (strncmp(av[i], "gpuctl=", 7) == 0)
			snprintf(gpuctl_path, sizeof(gpuctl_path), "%s", av[i] + 7);
		else if (strncmp(av[i], "socket=", 7) == 0)
			snprintf(socket_arg, sizeof(socket_arg), "%s", av[i] + 7);
		else if (strncmp(av[i], "sim=", 4) == 0)
			snprintf(sim_arg, sizeof(sim_arg), "%s", av[i] + 4);
		else if (strcmp(av[i], "admin_comment=1") == 0)
			admin_comment = 1;
		else
			slurm_error("gpuctl: unknown plugin argument '%s' (gpuctl=, socket=, sim=, admin_comment=1)", av[i]);
	}
}

int slurm_spank_init(spank_t sp, int ac, char **av)
{
	(void)sp;
	take_args(ac, av);
	return 0;
}

/* Copies tmpl into out with every "%n" replaced by node. */
static void expand(const char *tmpl, const char *node, char *out, size_t outlen)
{
	size_t n = 0;
	for (const char *p = tmpl; *p && n + 1 < outlen; p++) {
		if (p[0] == '%' && p[1] == 'n') {
			int w = snprintf(out + n, outlen - n, "%s", node);
			n += w > 0 ? (size_t)w : 0;
			if (n >= outlen)
				n = outlen - 1;
			p++;
		} else {
			out[n++] = *p;
		}
	}
	out[n] = '\0';
}

/* The first node name of a Slurm host list "n[1-3],x" -> "n1". */
static void first_node(const char *list, char *out, size_t outlen)
{
	size_t n = strcspn(list, ",[");
	if (n >= outlen)
		n = outlen - 1;
	memcpy(out, list, n);
	out[n] = '\0';
	if (list[n] == '[') {
		const char *d = list + n + 1;
		size_t k = strspn(d, "0123456789");
		if (n + k < outlen) {
			memcpy(out + n, d, k);
			out[n + k] = '\0';
		}
	}
}

/* Runs gpuctl with argv (argv[0] replaced), GPUCTL_POOL_SOCKET and
 * GPUCTL_SIM set from the plugin's arguments. Returns the exit status, -1
 * when it could not run. */
static int run_gpuctl(const char *node, char **argv)
{
	pid_t pid = fork();
	if (pid < 0)
		return -1;
	if (pid == 0) {
		char buf[600];
		if (socket_arg[0]) {
			expand(socket_arg, node, buf, sizeof(buf));
			setenv("GPUCTL_POOL_SOCKET", buf, 1);
		}
		if (sim_arg[0]) {
			expand(sim_arg, node, buf, sizeof(buf));
			setenv("GPUCTL_SIM", buf, 1);
		}
		argv[0] = gpuctl_path;
		execvp(gpuctl_path, argv);
		fprintf(stderr, "gpuctl: cannot run '%s': %s\n", gpuctl_path, strerror(errno));
		_exit(127);
	}
	int st;
	while (waitpid(pid, &st, 0) < 0)
		if (errno != EINTR)
			return -1;
	return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

/* The node's name: the job's SLURMD_NODENAME, else this process's (in the
 * task, before exec, the job's environment does not have it yet). */
static void node_name(spank_t sp, char *out, int outlen)
{
	if (spank_getenv(sp, "SLURMD_NODENAME", out, outlen) == ESPANK_SUCCESS && out[0])
		return;
	const char *e = getenv("SLURMD_NODENAME");
	snprintf(out, (size_t)outlen, "%s", e ? e : "");
}

/* Before the task runs (as root, in the task, its output already the job's). */
int slurm_spank_task_init_privileged(spank_t sp, int ac, char **av)
{
	(void)ac;
	(void)av;
	if (!want_health || !spank_remote(sp))
		return 0;
	char gpus[256] = "", node[128] = "";
	const char *vars[] = { "SLURM_STEP_GPUS", "SLURM_JOB_GPUS" };
	for (size_t i = 0; i < 2 && !gpus[0]; i++)
		if (spank_getenv(sp, vars[i], gpus, sizeof(gpus)) != ESPANK_SUCCESS)
			gpus[0] = '\0';
	node_name(sp, node, sizeof(node));
	if (!gpus[0]) {
		slurm_info("gpuctl: --gpu-health: the step has no GPUs to check");
		return 0;
	}
	char *argv[] = { NULL, "health", "--idle", "--window", want_health == HEALTH_FULL ? "5" : "0", "-i", gpus,
			 NULL };
	int rc = run_gpuctl(node, argv);
	if (rc == 0 || rc == 1) /* PASS, or warnings only */
		return 0;
	slurm_error("gpuctl: --gpu-health=%s: GPUs %s on %s %s (gpuctl exit %d); the task does not start",
		    want_health == HEALTH_FULL ? "full" : "quick", gpus, node[0] ? node : "this node",
		    rc == 2 ? "FAIL" : "could not be checked", rc);
	/* Slurm ignores a failing callback of an "optional" plugin: this is the
	 * task's own process, before exec, so end it here (exit 2: health FAIL). */
	_exit(2);
}

/* A task ended on the node (slurmstepd, root): with admin_comment=1, the
 * job's statistics so far go to its AdminComment. This runs before srun
 * hears of the task's end, so the job still runs (Slurm refuses updates of
 * a finished job, which is why the epilog cannot do it). Once per step: the
 * task of global rank 0. */
int slurm_spank_task_exit(spank_t sp, int ac, char **av)
{
	(void)ac;
	(void)av;
	uint32_t job = 0, rank = 1;
	if (!admin_comment || !spank_remote(sp))
		return 0;
	if (spank_get_item(sp, S_TASK_GLOBAL_ID, &rank) != ESPANK_SUCCESS || rank != 0)
		return 0;
	if (spank_get_item(sp, S_JOB_ID, &job) != ESPANK_SUCCESS || job == 0)
		return 0;
	char node[128] = "", id[24];
	node_name(sp, node, sizeof(node));
	snprintf(id, sizeof(id), "%u", job);
	char *argv[] = { NULL, "slurm", "stats", "--job", id, "--admin-comment", NULL };
	if (run_gpuctl(node, argv) != 0)
		slurm_info("gpuctl: no AdminComment for job %u", job);
	return 0;
}

/* At the end of the step: in srun, print the job's statistics so far. */
int slurm_spank_exit(spank_t sp, int ac, char **av)
{
	(void)sp;
	(void)ac;
	(void)av;
	if (!want_stats || spank_context() != S_CTX_LOCAL)
		return 0;
	/* srun's own environment names the allocation (S_JOB_ID is not available here) */
	const char *job = getenv("SLURM_JOB_ID"), *list = getenv("SLURM_JOB_NODELIST");
	if (!list)
		list = getenv("SLURM_NODELIST");
	if (!job || !*job)
		return 0;
	char node[128] = "", id[24];
	if (list)
		first_node(list, node, sizeof(node));
	snprintf(id, sizeof(id), "%s", job);
	char *argv[] = { NULL, "slurm", "stats", "--job", id, NULL };
	fflush(stdout);
	if (run_gpuctl(node, argv) != 0)
		slurm_error("gpuctl: --gpu-stats: no statistics for job %s (is the gpuctl agent running with --pool "
			    "on %s?)", id, node[0] ? node : "the node");
	return 0;
}
