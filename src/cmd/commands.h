/* The command table: CMD(name, flags, summary). Each name has src/cmd/<name>.c
 * defining int cmd_<name>(int argc, char **argv, struct cmd_ctx *ctx).
 * No include guard: included with different CMD definitions. */
CMD(info, CMD_NEED_BACKEND, "list the GPUs and what is known of each")
CMD(topo, CMD_NEED_BACKEND, "GPU-to-GPU topology matrix with CPU and NUMA affinity")
CMD(agent, CMD_NEED_BACKEND, "monitoring daemon: Prometheus /metrics, JSON API, XID log")
CMD(health, CMD_NEED_BACKEND, "passive health checks: a verdict per GPU and subsystem, with evidence and action")
