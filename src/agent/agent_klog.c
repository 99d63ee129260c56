/* SPDX-License-Identifier: Apache-2.0 */
/*
 * agent_klog.c - the agent's kernel-log reader: a thread that follows
 * /dev/kmsg (kmsg.c parses the lines) and counts each NVRM XID against the
 * GPU whose PCI address it names (sampler_note_xid), next to NVML's events.
 */
#include "agent_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "core/thread.h"
#include "kmsg.h"

#define KLOG_POLL_MS 250u

struct klog_ctx {
	struct agent *a;
	struct kmsg_reader *reader;
	unsigned n;
	bool known[GPU_MAX_GPUS];
	unsigned dom[GPU_MAX_GPUS], bus[GPU_MAX_GPUS], dev[GPU_MAX_GPUS];
	struct gpu_view *view;   /* scratch for reading the sampler */
	uint64_t next_refresh_ns;
};

/* Learns each GPU's PCI address from the sampler's static info (once read). */
static void klog_refresh(struct klog_ctx *k)
{
	uint64_t now = clock_mono_ns();
	if (now < k->next_refresh_ns)
		return;
	k->next_refresh_ns = now + 5000000000ull;
	for (unsigned i = 0; i < k->n; i++) {
		if (k->known[i])
			continue;
		sampler_read_gpu(k->a->sampler, i, k->view);
		if (VAL_HAS(k->view->st.pci_bus_id) &&
		    kmsg_parse_pci(k->view->st.pci_bus_id.s, &k->dom[i], &k->bus[i], &k->dev[i]) == 0)
			k->known[i] = true;
	}
}

static void klog_on_xid(void *arg, const struct kmsg_xid *x)
{
	struct klog_ctx *k = arg;
	k->next_refresh_ns = 0;
	klog_refresh(k);
	struct timespec rt, mono;
	clock_gettime(CLOCK_REALTIME, &rt);
	clock_gettime(CLOCK_MONOTONIC, &mono);
	uint64_t real_ns = (uint64_t)rt.tv_sec * 1000000000ull + (uint64_t)rt.tv_nsec;
	uint64_t mono_ns = (uint64_t)mono.tv_sec * 1000000000ull + (uint64_t)mono.tv_nsec;
	uint64_t when = real_ns;
	/* kernel timestamps count from boot (the monotonic clock) */
	if (x->has_time && x->boot_us * 1000ull <= mono_ns)
		when = real_ns - mono_ns + x->boot_us * 1000ull;
	for (unsigned i = 0; i < k->n; i++)
		if (k->known[i] && k->dom[i] == x->pci_domain && k->bus[i] == x->pci_bus && k->dev[i] == x->pci_dev)
			sampler_note_xid(k->a->sampler, i, x->xid, when, XID_SRC_KERNEL_LOG);
}

static void *klog_thread(void *arg)
{
	struct klog_ctx *k = arg;
	struct agent *a = k->a;
	while (!agent_stopping(a)) {
		klog_refresh(k);
		if (kmsg_reader_poll(k->reader, KLOG_POLL_MS, klog_on_xid, k) < 0) {
			snprintf(a->kernel_log_error, sizeof(a->kernel_log_error), "reading the kernel log '%.200s' failed",
				 a->cfg.kernel_log);
			atomic_store(&a->kernel_log, 0);
			break;
		}
	}
	kmsg_reader_close(k->reader);
	free(k->view);
	free(k);
	return NULL;
}

void agent_start_klog(struct agent *a)
{
	atomic_store(&a->kernel_log, -1);
	if (!a->cfg.kernel_log[0] || !(a->cfg.groups & MG_XID))
		return;
	struct klog_ctx *k = calloc(1, sizeof(*k));
	struct gpu_view *view = gpu_view_new();
	if (!k || !view) {
		free(k);
		free(view);
		snprintf(a->kernel_log_error, sizeof(a->kernel_log_error), "out of memory");
		atomic_store(&a->kernel_log, 0);
		return;
	}
	k->a = a;
	k->view = view;
	k->n = sampler_gpu_count(a->sampler);
	if (kmsg_reader_open(&k->reader, a->cfg.kernel_log, a->kernel_log_error, sizeof(a->kernel_log_error))) {
		free(view);
		free(k);
		atomic_store(&a->kernel_log, 0);
		return;
	}
	atomic_store(&a->kernel_log, 1);
	if (thread_start(&a->klog_thread, AGENT_THREAD_STACK_BYTES, klog_thread, k) == 0) {
		a->klog_started = true;
	} else {
		kmsg_reader_close(k->reader);
		free(view);
		free(k);
		atomic_store(&a->kernel_log, 0);
		snprintf(a->kernel_log_error, sizeof(a->kernel_log_error), "cannot start the kernel log thread");
	}
}
