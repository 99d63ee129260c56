/* SPDX-License-Identifier: Apache-2.0 */
/*
 * dmon.c - `gpuctl dmon`: one line per GPU per interval, like nvidia-smi
 * dmon, as text, CSV or JSON lines (docs/dmon.md). Values come from the
 * sampler; columns and their formatting from core/moncol.
 */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cmd.h"
#include "help.h"
#include "core/units.h"
#include "top_watch.h"
#include "core/gpu_select.h"
#include "view/moncol.h"

static void print_columns(FILE *out)
{
	fputs("columns:\n", out);
	for (unsigned i = 0; i < moncol_count; i++) {
		const struct moncol *c = &moncols[i];
		fprintf(out, "  %-6s %-17s %c  %s%s%s\n", c->name, c->key, c->group ? c->group : ' ', c->help,
			*c->unit ? ", " : "", c->unit);
	}
}

enum { OPT_DMON_SELECT, OPT_DMON_COLUMNS, OPT_DMON_DELAY, OPT_DMON_COUNT, OPT_DMON_ID, OPT_DMON_CSV, OPT_DMON_JSON,
       OPT_DMON_STAMP };
static const struct opt_spec dmon_opts[] = {
	[OPT_DMON_SELECT] = { "select", 's', OPT_STRING, "GROUPS",
			      "column groups:\n"
			      "p power/temperature, u utilization, c clocks, v throttled time,\n"
			      "m memory, e ECC/PCIe errors, t PCIe throughput,\n"
			      "n NVLink throughput, s P-state and throttle reason",
			      MONCOL_DEFAULT_GROUPS, 0, 0, NULL },
	[OPT_DMON_COLUMNS] = { "columns", 0, OPT_STRING, "LIST", "columns by name (added after the groups' columns)",
			       NULL, 0, 0, NULL },
	[OPT_DMON_DELAY] = OPT_SPEC_DELAY("interval"),
	[OPT_DMON_COUNT] = { "count", 'c', OPT_INT, "COUNT", "stop after COUNT intervals", "until interrupted", 1,
			     100000000, NULL },
	[OPT_DMON_ID] = OPT_SPEC_GPU_IDS,
	[OPT_DMON_CSV] = { "csv", 0, OPT_FLAG, NULL, "CSV with a header line", NULL, 0, 0, NULL },
	[OPT_DMON_JSON] = { "json", 0, OPT_FLAG, NULL, "one JSON object per GPU per interval", NULL, 0, 0, NULL },
	[OPT_DMON_STAMP] = { NULL, 'o', OPT_STRING, "D|T|DT", "text: add date and/or time columns", NULL, 0, 0, NULL },
};

static const struct cmd_help dmon_help = {
	.name = "dmon",
	.usage = "[-s GROUPS] [--columns LIST] [-d DURATION] [-c COUNT] [-i ID[,ID...]]\n"
		 "                   [--csv | --json] [-o D|T|DT]",
	.what = "One line per GPU per interval (like nvidia-smi dmon).\n",
	.opts = dmon_opts,
	.nopts = sizeof(dmon_opts) / sizeof(dmon_opts[0]),
	.more = print_columns,
	.notes = "n/a: not supported, ERR: could not be read (or the GPU is down), -: no rate yet\n",
	.exits = "0 ok (--count lines, or SIGINT/SIGTERM), 64 usage, 65 bad simulation file,\n"
		 "            66 no simulation file, 69 no GPU/driver, 74 output could not be written",
};

/* Time of a sample for the row: the sample's own clock, else now. */
static void row_times(uint64_t ts_ns, char *date, char *tod, char *iso)
{
	struct timespec now;
	clock_gettime(CLOCK_REALTIME, &now);
	time_t t = ts_ns ? (time_t)(ts_ns / 1000000000ull) : now.tv_sec;
	struct tm lt, ut;
	localtime_r(&t, &lt);
	gmtime_r(&t, &ut);
	strftime(date, 16, "%Y%m%d", &lt);
	strftime(tod, 16, "%H:%M:%S", &lt);
	strftime(iso, 32, "%Y-%m-%dT%H:%M:%SZ", &ut);
}

struct dmon_opts {
	const char *groups, *columns, *ids;
	uint64_t interval_ns;
	long count;
	enum moncol_format fmt;
	bool date, time;
};

/* Returns -1 after --help, else the exit code (EXIT_OK: go on). */
static int parse_opts(int argc, char **argv, struct cmd_ctx *ctx, struct dmon_opts *o)
{
	memset(o, 0, sizeof(*o));
	o->interval_ns = UNITS_NS_PER_S;
	o->fmt = MONFMT_TEXT;
	struct opt_parser p;
	struct opt_value v;
	int k, rc;
	opt_init(&p, argc, argv, dmon_help.opts, dmon_help.nopts);
	while ((k = help_opt_next(ctx, &dmon_help, &p, &v, &rc)) != OPT_DONE) {
		switch (k) {
		case OPT_HELP: return -1;
		case OPT_ERROR: return rc;
		case OPT_DMON_SELECT: o->groups = v.text; break;
		case OPT_DMON_COLUMNS: o->columns = v.text; break;
		case OPT_DMON_ID: o->ids = v.text; break;
		case OPT_DMON_DELAY: o->interval_ns = (uint64_t)v.num; break;
		case OPT_DMON_COUNT: o->count = (long)v.num; break;
		case OPT_DMON_STAMP:
			if (strspn(v.text, "DT") != strlen(v.text)) {
				cmd_error(ctx, "dmon", "bad -o '%s' (D, T or DT)", v.text);
				return EXIT_USAGE;
			}
			o->date = strchr(v.text, 'D') != NULL;
			o->time = strchr(v.text, 'T') != NULL;
			break;
		default: /* --csv, --json */
			if (o->fmt != MONFMT_TEXT) {
				cmd_error(ctx, "dmon", "--csv and --json exclude each other");
				return EXIT_USAGE;
			}
			o->fmt = k == OPT_DMON_CSV ? MONFMT_CSV : MONFMT_JSON;
			break;
		}
	}
	if (cmd_check_gpu_spec(ctx, "dmon", o->ids) != EXIT_OK)
		return EXIT_USAGE;
	return EXIT_OK;
}

/* Per GPU: the last view printed and the one before, so that a rate is
 * taken between two different samples even when a read finds no new one. */
struct dmon_hist {
	struct gpu_view last, before;
	bool have_last, have_before;
};

int cmd_dmon(int argc, char **argv, struct cmd_ctx *ctx)
{
	struct dmon_opts o;
	int rc = parse_opts(argc, argv, ctx, &o);
	if (rc)
		return rc < 0 ? EXIT_OK : rc;
	const struct moncol *cols[MONCOL_MAX_SELECTED];
	char err[640]; /* "unknown column" lists every column */
	int ncols = moncol_select(o.groups, o.columns, cols, MONCOL_MAX_SELECTED, err, sizeof(err));
	if (ncols < 0) {
		cmd_error(ctx, "dmon", "%s", err);
		return EXIT_USAGE;
	}
	struct watch w;
	rc = watch_start(&w, ctx, "dmon", o.ids, o.interval_ns, moncol_sampler_groups(cols, (unsigned)ncols), false, 1);
	if (rc)
		return rc;
	struct dmon_hist *hist = calloc(w.n ? w.n : 1, sizeof(*hist));
	if (!hist) {
		watch_stop(&w);
		cmd_error(ctx, "dmon", "out of memory");
		return EXIT_SOFTWARE;
	}
	watch_catch_signals();
	struct monrow_ctx rcx = { o.fmt, cols, (unsigned)ncols, ctx->sys.simulated, o.date, o.time };
	FILE *out = ctx->out;
	if (o.fmt == MONFMT_TEXT)
		cmd_print_sim_banner(ctx, out);
	monrow_header(&rcx, out);
	fflush(out);
	/* the first snapshot is the baseline for rates; lines start one interval later */
	for (unsigned i = 0; i < w.n; i++) {
		hist[i].last = w.snap->gpu[i];
		hist[i].have_last = true;
	}
	/* read a little after the sampler's ticks (which started with the first
	 * sample) so that each line finds that interval's sample complete */
	uint64_t phase = o.interval_ns / 4 < 200000000ull ? o.interval_ns / 4 : 200000000ull;
	uint64_t next = clock_mono_ns() + o.interval_ns + phase;
	rc = EXIT_OK;
	for (long line = 0; !watch_interrupted && (o.count == 0 || line < o.count); line++) {
		watch_sleep_until(next);
		if (watch_interrupted)
			break;
		next += o.interval_ns;
		sampler_read(w.sampler, w.snap);
		for (unsigned i = 0; i < w.n; i++) {
			if (!gpu_select_has(w.mask, i))
				continue;
			const struct gpu_view *cur = &w.snap->gpu[i];
			struct dmon_hist *h = &hist[i];
			bool fresh = !h->have_last || cur->s.timestamp_ns != h->last.s.timestamp_ns;
			if (fresh && h->have_last) {
				h->before = h->last;
				h->have_before = true;
			}
			const struct gpu_view *prev = h->have_before ? &h->before : NULL;
			char date[16], tod[16], iso[32];
			row_times(cur->s.timestamp_ns, date, tod, iso);
			monrow_print(&rcx, cur, prev, i, date, tod, iso, cur->s.timestamp_ns, out);
			if (fresh) {
				h->last = *cur;
				h->have_last = true;
			}
		}
		if (fflush(out) != 0 || ferror(out)) {
			rc = EXIT_IOERR;
			break;
		}
	}
	free(hist);
	watch_stop(&w);
	return rc;
}
