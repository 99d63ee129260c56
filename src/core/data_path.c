/* SPDX-License-Identifier: Apache-2.0 */
/* data_path.c - locating and reading shipped data files: on disk, else the
 * copy compiled in (data_path.h). */
#include "data_path.h"

#include <dirent.h>
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#ifndef GPUCTL_ETC_DATA_DIR
#define GPUCTL_ETC_DATA_DIR "/etc/gpuctl"
#endif
#ifndef GPUCTL_INSTALL_DATA_DIR
#define GPUCTL_INSTALL_DATA_DIR "/usr/local/share/gpuctl"
#endif

#define DATA_LIST_MAX 256 /* files of one folder */

void data_places_default(struct data_places *p, const char *env_dir)
{
	*p = (struct data_places){ .dir = { env_dir, GPUCTL_ETC_DATA_DIR, GPUCTL_INSTALL_DATA_DIR },
				   .blobs = data_embedded,
				   .nblobs = data_embedded_n };
}

const char *data_origin_word(enum data_origin o)
{
	switch (o) {
	case DATA_FROM_DIR: return "data-dir";
	case DATA_FROM_ETC: return "etc";
	case DATA_FROM_SHARE: return "installed";
	case DATA_FROM_EMBEDDED: return "embedded";
	default: return "missing";
	}
}

static const struct data_blob *blob_find(const struct data_places *p, const char *rel)
{
	for (size_t i = 0; i < p->nblobs; i++)
		if (strcmp(p->blobs[i].rel, rel) == 0)
			return &p->blobs[i];
	return NULL;
}

/* path = dir/rel, if it fits and names something of the wanted kind */
static bool on_disk(const char *dir, const char *rel, bool want_dir, char *path, size_t pathlen)
{
	struct stat sb;
	if (!dir || !*dir)
		return false;
	int n = snprintf(path, pathlen, "%s/%s", dir, rel);
	if (n < 0 || (size_t)n >= pathlen || stat(path, &sb) != 0)
		return false;
	return want_dir ? S_ISDIR(sb.st_mode) : !S_ISDIR(sb.st_mode) && access(path, R_OK) == 0;
}

enum data_origin data_places_locate(const struct data_places *p, const char *rel, char *name, size_t namelen)
{
	for (int i = 0; i < DATA_NDIRS; i++)
		if (on_disk(p->dir[i], rel, false, name, namelen))
			return (enum data_origin)i;
	if (blob_find(p, rel)) {
		snprintf(name, namelen, "embedded:%s", rel);
		return DATA_FROM_EMBEDDED;
	}
	if (namelen)
		name[0] = '\0';
	return DATA_MISSING;
}

int data_places_read(const struct data_places *p, const char *rel, size_t max_bytes, struct data_file *f, char *err,
		     size_t errlen)
{
	memset(f, 0, sizeof(*f));
	f->origin = data_places_locate(p, rel, f->name, sizeof(f->name));
	if (f->origin == DATA_MISSING) {
		snprintf(err, errlen, "no data file '%s'", rel);
		return DATA_ENOENT;
	}
	if (f->origin != DATA_FROM_EMBEDDED) {
		f->text = read_whole_file(f->name, max_bytes, &f->len, err, errlen);
		return f->text ? DATA_OK : DATA_EREAD;
	}
	const struct data_blob *b = blob_find(p, rel);
	if (b->len > max_bytes) {
		snprintf(err, errlen, "'%s' is larger than %zu bytes", f->name, max_bytes);
		return DATA_EREAD;
	}
	if (!(f->text = malloc(b->len + 1))) {
		snprintf(err, errlen, "out of memory reading '%s'", f->name);
		return DATA_EREAD;
	}
	memcpy(f->text, b->bytes, b->len + 1); /* with its NUL */
	f->len = b->len;
	return DATA_OK;
}

int data_file_read(const char *env_dir, const char *rel, size_t max_bytes, struct data_file *f, char *err,
		   size_t errlen)
{
	struct data_places p;
	data_places_default(&p, env_dir);
	return data_places_read(&p, rel, max_bytes, f, err, errlen);
}

void data_file_free(struct data_file *f)
{
	free(f->text);
	f->text = NULL;
	f->len = 0;
}

static bool has_suffix(const char *name, const char *suffix)
{
	size_t n = strlen(name), k = strlen(suffix);
	return name[0] != '.' && n > k && strcmp(name + n - k, suffix) == 0;
}

static int by_name(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Appends "folder/name" to the list; -1 with err when full or out of memory. */
static int list_add(char **names, size_t *n, const char *folder, const char *name, char *err, size_t errlen)
{
	if (*n == DATA_LIST_MAX) {
		snprintf(err, errlen, "data folder '%s' holds more than %d files", folder, DATA_LIST_MAX);
		return -1;
	}
	size_t len = strlen(folder) + 1 + strlen(name) + 1;
	if (!(names[*n] = malloc(len))) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	snprintf(names[(*n)++], len, "%s/%s", folder, name);
	return 0;
}

/* The folder's files in place i (a directory on disk, or the blobs); 1 if the
 * place has no such folder. */
static int list_place(const struct data_places *p, int i, const char *folder, const char *suffix, char **names,
		      size_t *n, char *err, size_t errlen)
{
	size_t flen = strlen(folder);
	if (i == DATA_NDIRS) {
		bool any = false;
		for (size_t b = 0; b < p->nblobs; b++) {
			const char *rel = p->blobs[b].rel;
			if (strncmp(rel, folder, flen) != 0 || rel[flen] != '/')
				continue;
			any = true;
			if (!strchr(rel + flen + 1, '/') && has_suffix(rel + flen + 1, suffix) &&
			    list_add(names, n, folder, rel + flen + 1, err, errlen))
				return -1;
		}
		return any ? 0 : 1;
	}
	char path[4096];
	if (!on_disk(p->dir[i], folder, true, path, sizeof(path)))
		return 1;
	DIR *d = opendir(path);
	if (!d) {
		snprintf(err, errlen, "cannot open folder '%s': %s", path, strerror(errno));
		return -1;
	}
	struct dirent *e;
	int rc = 0;
	while (rc == 0 && (e = readdir(d)) != NULL) {
		char file[4096 + 256];
		struct stat sb; /* a folder or device named *.json is not a data file */
		snprintf(file, sizeof(file), "%s/%s", path, e->d_name);
		if (has_suffix(e->d_name, suffix) && stat(file, &sb) == 0 && S_ISREG(sb.st_mode))
			rc = list_add(names, n, folder, e->d_name, err, errlen);
	}
	closedir(d);
	return rc;
}

int data_places_list(const struct data_places *p, const char *folder, const char *suffix, char ***names, size_t *n,
		     char *err, size_t errlen)
{
	*names = NULL;
	*n = 0;
	char **list = calloc(DATA_LIST_MAX, sizeof(*list));
	if (!list) {
		snprintf(err, errlen, "out of memory");
		return DATA_EREAD;
	}
	for (int i = 0; i <= DATA_NDIRS; i++) {
		int rc = list_place(p, i, folder, suffix, list, n, err, errlen);
		if (rc == 1)
			continue;
		if (rc != 0) {
			data_list_free(list, *n);
			*n = 0;
			return DATA_EREAD;
		}
		qsort(list, *n, sizeof(*list), by_name);
		*names = list;
		return DATA_OK;
	}
	free(list);
	snprintf(err, errlen, "no data folder '%s'", folder);
	return DATA_ENOENT;
}

void data_list_free(char **names, size_t n)
{
	for (size_t i = 0; names && i < n; i++)
		free(names[i]);
	free(names);
}
