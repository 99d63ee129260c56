/* SPDX-License-Identifier: Apache-2.0 */
/*
 * gpu_select.h - which GPUs a command's `-i/--id SPEC` names. Pure.
 *
 * SPEC is a comma-separated list of items; each item is
 *   an index          "3"
 *   a range           "0-3" (inclusive)
 *   a UUID            "GPU-5a1f..." (case-insensitive; a unique prefix of at
 *                     least 8 characters after "GPU-" is enough)
 *   a PCI bus id      "00000000:18:00.0", "0000:18:00.0" or "18:00.0"
 * e.g. "0-3,6", "GPU-8f3e12ab,7", "18:00.0,2a:00.0".
 * The result is a bitmap over GPU indexes (bit i = GPU i).
 */
#ifndef GPUCTL_GPU_SELECT_H
#define GPUCTL_GPU_SELECT_H

#include <stddef.h>
#include <stdint.h>

/* What identifies one GPU: its index, UUID and bus id (NULL when unknown). */
struct gpu_ident {
	const char *uuid;
	const char *bus_id;
};

/* Parses SPEC against n GPUs (n <= 64; ids[i] describes GPU i, ids may be
 * NULL when only indexes are to be accepted). Returns 0 with *mask set, or
 * -1 with a one-line message in err ("unknown GPU 'x'"). */
int gpu_select_parse(const char *spec, const struct gpu_ident *ids, unsigned n,
		     uint64_t *mask, char *err, size_t errlen);

/* Checks only SPEC's form, before the GPUs are known (a command checks its
 * options before it opens the backend): an empty list or item, a malformed
 * index, range or bus id, a range whose start is after its end fail here with
 * gpu_select_parse's message. Whether the GPUs are there (an index out of
 * range, an unknown UUID or bus id) only gpu_select_parse can say: every SPEC
 * it accepts passes this check. Returns 0, or -1 with a one-line message. */
int gpu_select_check(const char *spec, char *err, size_t errlen);

/* The one GPU-index list of the machine-facing inputs (the pool's requests,
 * Slurm's SLURM_JOB_GPUS, the agent's ?gpu=): SPEC's grammar with indexes and
 * ranges only, 0 to 63 ("0,2,5-7"); a UUID or bus id is refused ("GPU ids
 * here are indexes"), as are an empty list or item. Returns 0 with *mask set
 * (never 0), or -1 with a one-line message. */
int gpu_select_indexes(const char *spec, uint64_t *mask, char *err, size_t errlen);

/* All n GPUs. */
uint64_t gpu_select_all(unsigned n);

static inline int gpu_select_has(uint64_t mask, unsigned i)
{
	return i < 64 && (mask >> i & 1u);
}

/* A PCI address; gpu_busid_parse accepts "DDDDDDDD:BB:DD.F", "DDDD:BB:DD.F"
 * and "BB:DD.F" (domain 0), hex digits in either case. Returns 0 or -1. */
struct pci_addr {
	unsigned domain, bus, device, function;
};
int gpu_busid_parse(const char *s, struct pci_addr *out);

#endif
