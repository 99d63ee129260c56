/* SPDX-License-Identifier: Apache-2.0 */
/*
 * catalog.h - the GPU catalog: datasheet figures per GPU model, each with its
 * source, read from data/catalog/gpus.json. Pure: parsing and lookup only.
 * Used by the simulator (static facts), bench/diag (datasheet limits), the
 * planner (memory, FLOP/s, MIG profiles) and health (expected PCIe/NVLink).
 * A figure the vendor does not publish is NAN (or 0 for counts) and printed "n/a".
 */
#ifndef GPUCTL_CATALOG_H
#define GPUCTL_CATALOG_H

#include <stddef.h>
#include <stdint.h>
#include "mig_profile.h"

#define CAT_MAX_MIG_PROFILES 12

struct cat_mig_profile {
	char name[MIG_PROFILE_LEN]; /* "1g.18gb" */
	unsigned slices;        /* compute slices (the "1" of 1g) */
	unsigned mem_slices;    /* memory slices of 8 */
	double mem_gb;
	unsigned max_instances; /* how many fit on one GPU */
	unsigned sm_count;
};

struct cat_gpu {
	char key[32];           /* "H200 SXM" - the catalog's name */
	char vendor_name[64];   /* what the driver reports, "NVIDIA H200" */
	char architecture[16];  /* "Hopper" */
	unsigned cc_major, cc_minor;
	char form_factor[8];    /* "SXM", "PCIe", "NVL" */
	unsigned sm_count, cuda_cores;
	double mem_gb;          /* decimal GB as marketed */
	uint64_t mem_bytes;     /* as the driver reports total (for the simulator) */
	char mem_type[12];      /* "HBM3e" */
	unsigned mem_bus_width_bits;
	double mem_bw_gbs;      /* GB/s, decimal */
	unsigned max_sm_clock_mhz, max_mem_clock_mhz;
	/* dense TFLOP/s (no sparsity) */
	double tflops_fp64, tflops_fp64_tc, tflops_fp32, tflops_tf32, tflops_fp16, tflops_bf16,
	       tflops_fp8, tflops_int8;
	unsigned nvlink_gen, nvlink_links;
	double nvlink_bw_gbs;   /* total bidirectional GB/s per GPU */
	unsigned pcie_gen, pcie_width;
	double tdp_w;
	double l2_mb;
	unsigned mig_n;
	struct cat_mig_profile mig[CAT_MAX_MIG_PROFILES];
	char source[768];       /* URL(s) / document of the figures */
	char notes[512];        /* e.g. where an article disagrees */
	/* added after the first version (keep new fields at the end): */
	unsigned mig_mem_slices_total; /* memory slices MIG divides into: 8, or 4 on A30; 0 without MIG */
	unsigned n_aliases;
	char aliases[4][64];    /* other names a driver may report for this model */
};

struct catalog {
	size_t n;
	struct cat_gpu *gpus;
};

/* Parse a catalog from JSON text. Returns 0, or -1 with a one-line message. */
int catalog_parse(struct catalog *cat, const char *json_text, size_t len, char *err, size_t errlen);
/* Load from a file path. */
int catalog_load(struct catalog *cat, const char *path, char *err, size_t errlen);
/* Load the shipped catalog (see data_path.h for where it is found). */
int catalog_load_default(struct catalog *cat, char *err, size_t errlen);
/* The same, looking in data_dir first (--data-dir / $GPUCTL_DATA_DIR as the
 * command was given it; NULL: the built-in paths only). */
int catalog_load_dir(struct catalog *cat, const char *data_dir, char *err, size_t errlen);
void catalog_free(struct catalog *cat);
/* Exact key ("H200 SXM"), case-insensitive. */
const struct cat_gpu *catalog_find(const struct catalog *cat, const char *key);
/* Best match for a driver-reported name and memory size ("NVIDIA H200", 143771 MiB). */
const struct cat_gpu *catalog_match(const struct catalog *cat, const char *driver_name, uint64_t mem_bytes);
/* A named MIG profile of a GPU ("1g.18gb"), or NULL. */
const struct cat_mig_profile *catalog_mig_profile(const struct cat_gpu *g, const char *name);

#endif
