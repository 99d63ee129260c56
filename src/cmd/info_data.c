/* SPDX-License-Identifier: Apache-2.0 */
/*
 * info_data.c - `gpuctl info --data`: for each file of data/ (the copy compiled
 * into the binary lists them all), the place it is read from: --data-dir or
 * $GPUCTL_DATA_DIR, /etc/gpuctl, the installed /usr/share/gpuctl, or the binary
 * itself. The lookup is core/data_path.c's, the one every loader goes through.
 */
#include "info_data.h"

#include <stdio.h>
#include <sys/stat.h>

#include "core/data_path.h"
#include "view/json_util.h"

static bool is_dir(const char *path)
{
	struct stat sb;
	return path && *path && stat(path, &sb) == 0 && S_ISDIR(sb.st_mode);
}

static const char *const place_what[DATA_NDIRS] = { "--data-dir or GPUCTL_DATA_DIR", "overrides", "installed copy" };

static void print_text(FILE *out, const struct data_places *p)
{
	fprintf(out, "data files: each is read from the first place that has it\n");
	for (int i = 0; i < DATA_NDIRS; i++) {
		const char *d = p->dir[i] && *p->dir[i] ? p->dir[i] : NULL;
		fprintf(out, "  %d. %-10s %-34s %s\n", i + 1, data_origin_word((enum data_origin)i), d ? d : "(not set)",
			!d ? place_what[i] : is_dir(d) ? place_what[i] : "(no such folder)");
	}
	fprintf(out, "  %d. %-10s %zu files built into this gpuctl\n\n", DATA_NDIRS + 1,
		data_origin_word(DATA_FROM_EMBEDDED), p->nblobs);
	fprintf(out, "%-26s %-10s %s\n", "FILE", "SOURCE", "PATH");
	for (size_t i = 0; i < p->nblobs; i++) {
		char name[4096];
		enum data_origin o = data_places_locate(p, p->blobs[i].rel, name, sizeof(name));
		fprintf(out, "%-26s %-10s %s\n", p->blobs[i].rel, data_origin_word(o),
			o == DATA_FROM_EMBEDDED ? "-" : name);
	}
}

static int print_json(FILE *out, const struct data_places *p)
{
	json_t *doc = json_object(), *places = json_array(), *files = json_array();
	for (int i = 0; i < DATA_NDIRS; i++) {
		const char *d = p->dir[i] && *p->dir[i] ? p->dir[i] : NULL;
		json_array_append_new(places, json_pack("{s:s, s:s?, s:b}", "place", data_origin_word((enum data_origin)i),
							"dir", d, "exists", is_dir(d)));
	}
	json_array_append_new(places, json_pack("{s:s, s:n, s:b, s:I}", "place", data_origin_word(DATA_FROM_EMBEDDED),
						"dir", "exists", 1, "files", (json_int_t)p->nblobs));
	for (size_t i = 0; i < p->nblobs; i++) {
		char name[4096];
		enum data_origin o = data_places_locate(p, p->blobs[i].rel, name, sizeof(name));
		json_array_append_new(files, json_pack("{s:s, s:s, s:s?}", "file", p->blobs[i].rel, "source",
						       data_origin_word(o), "path",
						       o == DATA_FROM_EMBEDDED ? NULL : name));
	}
	json_object_set_new(doc, "places", places);
	json_object_set_new(doc, "files", files);
	int rc = json_write(doc, out);
	json_decref(doc);
	return rc;
}

int info_data_print(struct cmd_ctx *ctx, bool json)
{
	struct data_places p;
	data_places_default(&p, ctx->data_dir);
	if (json)
		return print_json(ctx->out, &p) == 0 ? EXIT_OK : EXIT_IOERR;
	print_text(ctx->out, &p);
	return EXIT_OK;
}

void info_data_summary(const char *env_dir, char *out, size_t outlen)
{
	struct data_places p;
	size_t count[DATA_NDIRS + 1] = { 0 };
	data_places_default(&p, env_dir);
	for (size_t i = 0; i < p.nblobs; i++) {
		char name[4096];
		enum data_origin o = data_places_locate(&p, p.blobs[i].rel, name, sizeof(name));
		if (o != DATA_MISSING)
			count[o]++;
	}
	if (count[DATA_FROM_EMBEDDED] == p.nblobs) {
		snprintf(out, outlen, "%zu files, all built in", p.nblobs);
		return;
	}
	int used = snprintf(out, outlen, "%zu files:", p.nblobs);
	const char *sep = " ";
	for (int o = 0; o <= DATA_NDIRS; o++) {
		if (!count[o] || used < 0 || (size_t)used >= outlen)
			continue;
		used += snprintf(out + used, outlen - (size_t)used, "%s%zu from %s", sep, count[o],
				 o == DATA_FROM_EMBEDDED ? "the copy built in" : p.dir[o]);
		sep = ", ";
	}
}
