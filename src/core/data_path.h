/* SPDX-License-Identifier: Apache-2.0 */
/* data_path.h - where gpuctl finds its shipped data files (GPU catalog,
 * simulated servers, prices, model presets, XID catalog, health rules, claims):
 * the one place every loader goes through.
 *
 * Each file is looked for by its name under data/ ("sim/h200x8.json") in these
 * places, the first that has it wins:
 *   1. the caller's data directory: --data-dir, or $GPUCTL_DATA_DIR (the
 *      caller reads the environment and passes it in)
 *   2. <sysconfdir>/gpuctl   (/etc/gpuctl: an administrator's overrides)
 *   3. <datadir>/gpuctl      (/usr/share/gpuctl: the installed copy)
 *   4. the copy compiled into the binary (cmake/datafiles.cmake writes it from
 *      data/ at build time), so that a gpuctl copied alone has all its data.
 * A folder (prices/) is taken whole from the first place that has it. */
#ifndef GPUCTL_DATA_PATH_H
#define GPUCTL_DATA_PATH_H
#include <stddef.h>

#include "readfile.h" /* read_whole_file: its callers find data files here */

/* One file of data/ as compiled in: its name under data/, its bytes (with a
 * NUL after the last), its length. */
struct data_blob {
	const char *rel;
	const unsigned char *bytes;
	size_t len;
};
/* Every file of data/, sorted by name (generated: build/data_embedded.c). */
extern const struct data_blob data_embedded[];
extern const size_t data_embedded_n;

/* Where a data file came from. */
enum data_origin {
	DATA_MISSING = -1,
	DATA_FROM_DIR = 0, /* the caller's --data-dir / $GPUCTL_DATA_DIR */
	DATA_FROM_ETC,     /* <sysconfdir>/gpuctl */
	DATA_FROM_SHARE,   /* <datadir>/gpuctl */
	DATA_FROM_EMBEDDED,
};
#define DATA_NDIRS 3 /* the places on disk: DATA_FROM_DIR .. DATA_FROM_SHARE */

/* The places to look, in order: dir[i] is the place of origin i (NULL or "":
 * none), then the blobs. data_places_default gives the compiled-in ones; the
 * tests make their own. */
struct data_places {
	const char *dir[DATA_NDIRS];
	const struct data_blob *blobs;
	size_t nblobs;
};
void data_places_default(struct data_places *p, const char *env_dir);
/* "data-dir", "etc", "installed", "embedded" ("missing"): a place's word in
 * `info --data` and --version. */
const char *data_origin_word(enum data_origin o);

/* Where a file is, without reading it: its origin, and in name the path on
 * disk or "embedded:REL". DATA_MISSING if no place has it. */
enum data_origin data_places_locate(const struct data_places *p, const char *rel, char *name, size_t namelen);

/* A data file read into memory. */
struct data_file {
	enum data_origin origin;
	char name[4096]; /* the path read, or "embedded:REL": for messages */
	char *text;      /* malloc'd, NUL-terminated; data_file_free */
	size_t len;
};
enum { DATA_OK = 0, DATA_ENOENT = -1, DATA_EREAD = -2 };
/* Reads file rel from the first place that has it (at most max_bytes). Returns
 * DATA_OK; DATA_ENOENT if no place has it (err: "no data file 'REL'"); DATA_EREAD
 * if it could not be read (err names the path). */
int data_places_read(const struct data_places *p, const char *rel, size_t max_bytes, struct data_file *f, char *err,
		     size_t errlen);
/* The same through data_places_default(env_dir). */
int data_file_read(const char *env_dir, const char *rel, size_t max_bytes, struct data_file *f, char *err,
		   size_t errlen);
void data_file_free(struct data_file *f);

/* The files NAME<suffix> of folder `folder` ("prices") in the first place that
 * has the folder, sorted, as names under data/ ("prices/aws.json"): a malloc'd
 * array of *n malloc'd strings (data_list_free). Returns DATA_OK, DATA_ENOENT
 * (no place has the folder), or DATA_EREAD (err: too many files, no memory). */
int data_places_list(const struct data_places *p, const char *folder, const char *suffix, char ***names, size_t *n,
		     char *err, size_t errlen);
void data_list_free(char **names, size_t n);


#endif
