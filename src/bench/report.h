/* SPDX-License-Identifier: Apache-2.0 */
/*
 * report.h - `gpuctl report`: the whole picture of one server (inventory,
 * topology, health, benchmark results, the guide's claims) as terminal text
 * and as one self-contained HTML file with inline SVG charts (no script, no
 * downloaded library). The command gathers the pieces; everything here is
 * pure formatting into a FILE* it owns.
 */
#ifndef GPUCTL_BENCH_REPORT_H
#define GPUCTL_BENCH_REPORT_H

#include <stdbool.h>
#include <stdio.h>

#include "core/catalog.h"
#include "device/gpu.h"
#include "health/health.h"
#include "claims.h"
#include "model.h"

/* What a model needs on this server (from the planner, src/plan). */
struct report_plan_row {
	char model[48];
	double params;            /* parameters */
	double train1_bytes;      /* per GPU: BF16 mixed precision, AdamW, PyTorch, one GPU */
	double trainn_bytes;      /* per GPU: DeepSpeed ZeRO-3 over the server's GPUs */
	double serve_bytes;       /* per GPU: BF16 weights, tensor parallel over the server's GPUs, with one
	                           * 4096-token sequence's KV cache and the workspace (NAN: not planned) */
	bool serve_fits;          /* at least one 4096-token sequence fits at the planner's 90% (plan_serve_fit) */
	char serve_fit[160];      /* plan_serve_fit_text: "fits (31 x 4096-token sequences)" or what would */
};
#define REPORT_MAX_PLAN 12

struct report {
	char generated_utc[32];
	bool simulated;                   /* inventory from the simulator: every output says SIMULATED */
	struct gpu_system sys;
	unsigned n;                       /* GPUs in the inventory */
	const struct gpu_static *st;      /* n entries */
	const struct cat_gpu *const *cat; /* n entries, NULL where the catalog has no match */
	const struct gpu_link (*link)[GPU_MAX_GPUS]; /* n x n; NULL: topology not read */
	char inventory_source[200];       /* "": read from the GPUs now; else where it was recorded */
	const struct health_report *health; /* NULL: not evaluated (health_note says why) */
	char health_note[200];
	const struct bench_run *bench;    /* NULL: no benchmark figures (bench_note says why) */
	const struct cat_gpu *bench_cat;  /* datasheet of the benchmarked GPU 0 (roofline, GEMM bars); may be NULL */
	char bench_source[200];           /* "results file 'x.json'" or "quick run now" */
	char bench_note[200];
	unsigned nplan;                   /* planning rows (0: section says plan_note) */
	struct report_plan_row plan[REPORT_MAX_PLAN];
	double plan_mem_bytes;            /* one GPU's memory the rows are judged against */
	unsigned plan_gpus;               /* the "server's GPUs" of trainn / serve */
	char plan_note[200];
	const struct claims *claims;      /* NULL: claims table left out */
	const struct claim_eval *evals;   /* claims->n entries */
};

/* Assembling the report (report_build.c); the command reads the GPUs and files. */
struct plan_presets;
/* The planning rows of rep (rep->n, rep->plan_mem_bytes set) for the preset
 * models the report plans that pre holds: training on one GPU and on all,
 * serving on g (NULL: no serving figures). */
void report_plan_rows(struct report *rep, const struct plan_presets *pre, const struct cat_gpu *g);
/* The inventory a results file (path) recorded, run: its host, driver, CUDA
 * and each GPU's name, UUID, bus id and catalog model (st and cat_for, rep's
 * arrays, filled); memory from the catalog; no topology or health (not
 * recorded: health_note says so). */
void report_recorded_inventory(struct report *rep, const struct bench_run *run, const char *path,
			       const struct catalog *cat, struct gpu_static st[GPU_MAX_GPUS],
			       const struct cat_gpu *cat_for[GPU_MAX_GPUS]);

/* One headline figure of a run: the best result of a kind. */
struct report_highlight {
	const char *label;                /* "device memory copy" */
	const struct bench_result *r;     /* NULL: not measured in this run */
	bool best_of_variants;            /* r is the best of several variants: its row names it */
};

#define REPORT_MAX_HIGHLIGHTS 24
/* The headline figures (fixed list, in order); returns how many filled. */
unsigned report_highlights(const struct bench_run *run, struct report_highlight *out, unsigned max);

/* A bandwidth-vs-size series: one (suite, test, variant, gpu, peer) measured at several sizes. */
#define REPORT_MAX_POINTS 24
struct report_series {
	char name[112];
	unsigned n;
	double x[REPORT_MAX_POINTS];      /* bytes */
	double y[REPORT_MAX_POINTS];      /* GB/s */
};
/* Series with at least two sizes, in result order; returns how many. */
unsigned report_bw_series(const struct bench_run *run, struct report_series *out, unsigned max);
/* The memory latency sweeps ("memory latency sweep GPUn"; y in ns), one per GPU. */
unsigned report_latency_series(const struct bench_run *run, struct report_series *out, unsigned max);
/* A latency series' staircase in words: its plateaus (a rise of more than
 * REPORT_LAT_RISE starts the next), "16 KiB .. 64 KiB: 32 ns; 256 KiB .. 16 MiB: 146 ns; ...". */
#define REPORT_LAT_RISE 1.3
void report_latency_steps_text(const struct report_series *s, char *out, size_t len);

/* A kernel on the roofline: arithmetic intensity (FLOP/byte) and GFLOP/s. */
struct report_roof_point { char name[80]; double ai, gflops; bool compute_only; };
/* Results with FLOPs and a byte count (GEMM: its minimum traffic from the shape). */
unsigned report_roof_points(const struct bench_run *run, int gpu, struct report_roof_point *out, unsigned max);

/* P2P unidirectional bandwidth matrix (GB/s, largest size, copy engine); NAN where
 * not measured. m is ngpus x ngpus row-major; returns ngpus (0: no p2p result). */
unsigned report_p2p_matrix(const struct bench_run *run, double *m, unsigned max_gpus);

/* Table rows shared by the text and HTML renderings (cells of at most 96 bytes). */
#define REPORT_CELL 192
#define REPORT_INV_COLS 10
extern const char *const report_inventory_headers[REPORT_INV_COLS];
void report_inventory_row(const struct report *rep, unsigned gpu, char cells[REPORT_INV_COLS][REPORT_CELL]);
#define REPORT_HL_COLS 6
extern const char *const report_highlight_headers[REPORT_HL_COLS];
void report_highlight_row(const struct report_highlight *h, char cells[REPORT_HL_COLS][REPORT_CELL]);
#define REPORT_DS_COLS 9
extern const char *const report_datasheet_headers[REPORT_DS_COLS];
/* Distinct catalog models of the inventory (at most max); returns how many. */
unsigned report_models(const struct report *rep, const struct cat_gpu **out, unsigned max);
void report_datasheet_row(const struct cat_gpu *g, char cells[REPORT_DS_COLS][REPORT_CELL]);
#define REPORT_PLAN_COLS 5
extern const char *const report_plan_headers[REPORT_PLAN_COLS];
void report_plan_row(const struct report *rep, const struct report_plan_row *p, char cells[REPORT_PLAN_COLS][REPORT_CELL]);
#define REPORT_CLAIM_COLS 6
extern const char *const report_claim_headers[REPORT_CLAIM_COLS];
void report_claim_row(const struct claim_eval *e, char cells[REPORT_CLAIM_COLS][REPORT_CELL]);

void report_print_text(const struct report *rep, FILE *out);
void report_print_html(const struct report *rep, FILE *out);

#endif
