/*
 * dmon.c - `gpuctl dmon`: one line per GPU per interval, like nvidia-smi
 * dmon, as text, CSV or JSON lines (docs/dmon.md). Values come from the
 * sampler; columns and their formatting from core/moncol.
 */
#include <getopt.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cmd.h"
#include "top_watch.h"
#include "core/gpu_select.h"
#include "view/moncol.h"

static void usage(FILE *out)
{
	fprintf(out,
		"usage: gpuctl dmon [-s GROUPS] [--columns LIST] [-d SECONDS] [-c COUNT] [-i ID[,ID...]]\n"
		"                   [--csv | --json] [-o D|T|DT]\n\n"
		"One line per GPU per interval (like nvidia-smi dmon).\n\n"
		"  -s, --select GROUPS  column groups (default %s):\n"
		"                       p power/temperature, u utilization, c clocks, v throttled time,\n"
		"                       m memory, e ECC/PCIe errors, t PCIe throughput,\n"
		"                       n NVLink throughput, s P-state and throttle reason\n"
		"      --columns LIST   columns by name (added after the groups' columns)\n"
		"  -d, --delay SECONDS  interval (default 1; 0.1 to 3600)\n"
		"  -c, --count COUNT    stop after COUNT intervals (default: until interrupted)\n"
		"  -i, --id ID          GPUs by index, range, UUID or bus id (default all)\n"
		"      --csv            CSV with a header line\n"
		"      --json           one JSON object per GPU per interval\n"
		"  -o D|T|DT            text: add date and/or time columns\n\n"
		"columns:\n", MONCOL_DEFAULT_GROUPS);
	for (unsigned i = 0; i < moncol_count; i++) {
		const struct moncol *c = &moncols[i];
		fprintf(out, "  %-6s %-17s %c  %s%s%s\n", c->name, c->key, c->group ? c->group : ' ', c->help,
			*c->unit ? ", " : "", c->unit);
	}
	fprintf(out, "\nn/a: not supported, ERR: could not be read (or the GPU is down), -: no rate yet\n"
		     "exit codes: 0 ok (--count lines, or SIGINT/SIGTERM), 64 usage, 65 bad simulation file,\n"
		     "            66 no simulation file, 69 no GPU/driver, 74 output could not be written\n");
}

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

static int parse_opts(int argc, char **argv, struct cmd_ctx *ctx, struct dmon_opts *o)
{
	static const struct option longopts[] = {
		{ "select", required_argument, NULL, 's' }, { "columns", required_argument, NULL, 'C' },
		{ "delay", required_argument, NULL, 'd' }, { "count", required_argument, NULL, 'c' },
		{ "id", required_argument, NULL, 'i' }, { "csv", no_argument, NULL, 'V' },
		{ "json", no_argument, NULL, 'J' }, { "help", no_argument, NULL, 'h' }, { NULL, 0, NULL, 0 },
	};
	memset(o, 0, sizeof(*o));
	o->interval_ns = 1000000000ull;
	o->fmt = MONFMT_TEXT;
	char err[256];
	int c;
	opterr = 0;
	optind = 1;
	while ((c = getopt_long(argc, argv, ":s:d:c:i:o:h", longopts, NULL)) != -1) {
		switch (c) {
		case 's': o->groups = optarg; break;
		case 'C': o->columns = optarg; break;
		case 'i': o->ids = optarg; break;
		case 'd':
			if (moncol_parse_interval(optarg, &o->interval_ns, err, sizeof(err))) {
				cmd_error(ctx, "dmon", "%s", err);
				return EXIT_USAGE;
			}
			break;
		case 'c': {
			char *end;
			o->count = strtol(optarg, &end, 10);
			if (*end || o->count < 1 || o->count > 100000000) {
				cmd_error(ctx, "dmon", "bad count '%s' (a whole number from 1)", optarg);
				return EXIT_USAGE;
			}
			break;
		}
		case 'o':
			if (strspn(optarg, "DT") != strlen(optarg) || !*optarg) {
				cmd_error(ctx, "dmon", "bad -o '%s' (D, T or DT)", optarg);
				return EXIT_USAGE;
			}
			o->date = strchr(optarg, 'D') != NULL;
			o->time = strchr(optarg, 'T') != NULL;
			break;
		case 'V':
		case 'J':
			if (o->fmt != MONFMT_TEXT) {
				cmd_error(ctx, "dmon", "--csv and --json exclude each other");
				return EXIT_USAGE;
			}
			o->fmt = c == 'V' ? MONFMT_CSV : MONFMT_JSON;
			break;
		case 'h': usage(ctx->out); return -1;
		case ':':
			cmd_error(ctx, "dmon", "option '%s' needs a value", argv[optind - 1]);
			return EXIT_USAGE;
		default:
			cmd_error(ctx, "dmon", "unknown option '%s'; see 'gpuctl dmon --help'", argv[optind - 1]);
			return EXIT_USAGE;
		}
	}
	if (optind < argc) {
		cmd_error(ctx, "dmon", "unexpected argument '%s'", argv[optind]);
		return EXIT_USAGE;
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
	char err[256];
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
