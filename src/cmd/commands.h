/* SPDX-License-Identifier: Apache-2.0 */
/* The command table: CMD(name, summary). Each name has src/cmd/<name>.c
 * defining int cmd_<name>(int argc, char **argv, struct cmd_ctx *ctx).
 * No include guard: included with different CMD definitions. */
CMD(info, "list the GPUs and what is known of each")
CMD(topo, "GPU-to-GPU topology matrix with CPU and NUMA affinity")
CMD(agent, "monitoring daemon: Prometheus /metrics, JSON API, XID log")
CMD(health, "passive health checks: a verdict per GPU and subsystem, with evidence and action")
CMD(dmon, "one line per GPU per interval (like nvidia-smi dmon), text, CSV or JSON")
CMD(top, "live view of the GPUs and their processes (ncurses)")
CMD(diag, "active diagnostics -r 1..4: software checks, memory test, bandwidth, GEMM stress, NCCL")
CMD(plan, "plan a job: memory per GPU, GPUs that fit, time, cost, MIG layouts")
CMD(bench, "measure the GPUs against their datasheet: copies, memory, FLOP/s, GEMM, P2P, NCCL, apps")
CMD(report, "the whole picture of a server: inventory, topology, health, benchmarks, guide claims; HTML")
CMD(submit, "queue a command on the GPU pool (the agent with --pool); prints its job id")
CMD(queue, "the pool's running and pending jobs, with why each waits")
CMD(cancel, "cancel pool jobs (SIGTERM, then SIGKILL after a grace)")
CMD(logs, "a pool job's stdout or stderr; -f follows it")
CMD(wait, "wait until pool jobs end; exit status says how they ended")
CMD(jobs, "your pool jobs with exit status and accounting (--history)")
CMD(slurm, "Slurm integration: gres.conf from the topology, health check that drains/resumes, per-job GPU accounting")
CMD(cdi, "Container Device Interface spec of the GPUs for podman, Docker, containerd (generate, list)")
