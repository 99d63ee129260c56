/* The command table: CMD(name, flags, summary). Each name has src/cmd/<name>.c
 * defining int cmd_<name>(int argc, char **argv, struct cmd_ctx *ctx).
 * No include guard: included with different CMD definitions. */
CMD(info, CMD_NEED_BACKEND, "list the GPUs and what is known of each")
CMD(topo, CMD_NEED_BACKEND, "GPU-to-GPU topology matrix with CPU and NUMA affinity")
CMD(agent, CMD_NEED_BACKEND, "monitoring daemon: Prometheus /metrics, JSON API, XID log")
CMD(health, CMD_NEED_BACKEND, "passive health checks: a verdict per GPU and subsystem, with evidence and action")
CMD(dmon, CMD_NEED_BACKEND, "one line per GPU per interval (like nvidia-smi dmon), text, CSV or JSON")
CMD(top, CMD_NEED_BACKEND, "live view of the GPUs and their processes (ncurses)")
CMD(diag, CMD_NEED_BACKEND, "active diagnostics -r 1..4: software checks, memory test, bandwidth, GEMM stress, NCCL")
CMD(plan, 0, "plan a job: memory per GPU, GPUs that fit, time, cost, MIG layouts")
CMD(bench, 0, "measure the GPUs against their datasheet: copies, memory, FLOP/s, GEMM, P2P, NCCL, apps")
CMD(report, CMD_NEED_BACKEND, "the whole picture of a server: inventory, topology, health, benchmarks, guide claims; HTML")
CMD(submit, 0, "queue a command on the GPU pool (the agent with --pool); prints its job id")
CMD(queue, 0, "the pool's running and pending jobs, with why each waits")
CMD(cancel, 0, "cancel pool jobs (SIGTERM, then SIGKILL after a grace)")
CMD(logs, 0, "a pool job's stdout or stderr; -f follows it")
CMD(wait, 0, "wait until pool jobs end; exit status says how they ended")
CMD(jobs, 0, "your pool jobs with exit status and accounting (--history)")
