/* SPDX-License-Identifier: Apache-2.0 */
/*
 * kmsg.h - XID errors from the kernel log. The NVIDIA driver logs
 *   NVRM: Xid (PCI:0000:18:00): 79, pid=..., GPU has fallen off the bus.
 * kmsg_parse_xid() recognises that in a /dev/kmsg record, a dmesg line or a
 * bare message (pure, fuzzed by tests/fuzz/fuzz_kmsg.c); the reader follows
 * /dev/kmsg (or any file, for tests) without blocking anyone.
 */
#ifndef GPUCTL_KMSG_H
#define GPUCTL_KMSG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct kmsg_xid {
	unsigned pci_domain, pci_bus, pci_dev;
	uint64_t xid;
	bool has_time;
	uint64_t boot_us;        /* kernel timestamp, microseconds since boot */
	char detail[128];        /* the rest of the message */
};

/* 1 if the line is an XID record (out filled), 0 if not. */
int kmsg_parse_xid(const char *line, size_t len, struct kmsg_xid *out);
/* "00000000:18:00.0" or "0000:18:00" -> domain, bus, device. 0 or -1. */
int kmsg_parse_pci(const char *s, unsigned *domain, unsigned *bus, unsigned *dev);

struct kmsg_reader;
typedef void (*kmsg_xid_fn)(void *arg, const struct kmsg_xid *x);

/* Opens path for reading from its start. -1 with a message (e.g. EPERM under dmesg_restrict). */
int kmsg_reader_open(struct kmsg_reader **out, const char *path, char *err, size_t errlen);
/* Waits up to timeout_ms for records and hands every XID to fn. Returns records read, or -1 on a read error. */
int kmsg_reader_poll(struct kmsg_reader *r, unsigned timeout_ms, kmsg_xid_fn fn, void *arg);
void kmsg_reader_close(struct kmsg_reader *r);

#endif
