/* SPDX-License-Identifier: Apache-2.0 */
/* price_files.c - price tables read from disk: one file, or every *.json file of a folder. */
#include "price_files.h"

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "core/data_path.h"

#define PRICE_FILE_MAX (16u << 20)
#define PRICE_DIR_MAX_FILES 256

/* Appends the rows of one price file's text; name is for messages. */
static enum plan_prices_status load_text(struct plan_prices *pr, const char *name, const char *text, size_t len,
					 char *err, size_t errlen)
{
	char why[512];
	struct plan_prices mine;
	if (plan_prices_parse(&mine, text, len, why, sizeof(why))) {
		snprintf(err, errlen, "'%s': %s", name, why);
		return PRICES_BADDATA;
	}
	int rc = plan_prices_append(pr, &mine, why, sizeof(why));
	plan_prices_free(&mine);
	if (rc) {
		snprintf(err, errlen, "'%s': %s", name, why);
		return PRICES_NOMEM;
	}
	return PRICES_OK;
}

enum plan_prices_status plan_prices_load_file(struct plan_prices *pr, const char *path, char *err, size_t errlen)
{
	size_t len;
	char *text = read_whole_file(path, PRICE_FILE_MAX, &len, err, errlen); /* its message names the file */
	if (!text)
		return PRICES_NOINPUT;
	enum plan_prices_status st = load_text(pr, path, text, len, err, errlen);
	free(text);
	return st;
}

enum plan_prices_status plan_prices_load_default(struct plan_prices *pr, const char *env_dir, size_t *files,
						 char *err, size_t errlen)
{
	struct data_places p;
	char **names;
	size_t n, loaded = 0;
	data_places_default(&p, env_dir);
	if (files)
		*files = 0;
	int rc = data_places_list(&p, "prices", ".json", &names, &n, err, errlen);
	if (rc != DATA_OK)
		return rc == DATA_ENOENT ? PRICES_NOINPUT : PRICES_BADDATA;
	enum plan_prices_status st = PRICES_OK;
	for (size_t i = 0; i < n && st == PRICES_OK; i++) {
		struct data_file f;
		if (data_places_read(&p, names[i], PRICE_FILE_MAX, &f, err, errlen) != DATA_OK) {
			st = PRICES_NOINPUT;
			break;
		}
		if ((st = load_text(pr, f.name, f.text, f.len, err, errlen)) == PRICES_OK)
			loaded++;
		data_file_free(&f);
	}
	data_list_free(names, n);
	if (st == PRICES_OK && loaded == 0) {
		snprintf(err, errlen, "no price files (*.json) in the data folder 'prices/'");
		st = PRICES_NOINPUT;
	}
	if (files)
		*files = loaded;
	return st;
}

static bool is_price_file_name(const char *name)
{
	size_t n = strlen(name);
	return name[0] != '.' && n > 5 && strcmp(name + n - 5, ".json") == 0;
}

static int by_name(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

enum plan_prices_status plan_prices_load_dir(struct plan_prices *pr, const char *dir, size_t *files, char *err,
					     size_t errlen)
{
	size_t loaded = 0;
	if (files)
		*files = 0;
	DIR *d = opendir(dir);
	if (!d) {
		snprintf(err, errlen, "cannot open folder '%s': %s", dir, strerror(errno));
		return PRICES_NOINPUT;
	}
	char *names[PRICE_DIR_MAX_FILES];
	size_t n = 0;
	enum plan_prices_status st = PRICES_OK;
	struct dirent *e;
	while ((e = readdir(d)) != NULL) {
		if (!is_price_file_name(e->d_name))
			continue;
		if (n == PRICE_DIR_MAX_FILES) {
			snprintf(err, errlen, "folder '%s' holds more than %d price files", dir, PRICE_DIR_MAX_FILES);
			st = PRICES_BADDATA;
			break;
		}
		if (!(names[n] = strdup(e->d_name))) {
			snprintf(err, errlen, "out of memory");
			st = PRICES_NOMEM;
			break;
		}
		n++;
	}
	closedir(d);
	if (st == PRICES_OK)
		qsort(names, n, sizeof(names[0]), by_name);
	for (size_t i = 0; i < n; i++) {
		if (st == PRICES_OK) {
			char path[4096];
			struct stat sb;
			if (snprintf(path, sizeof(path), "%s/%s", dir, names[i]) >= (int)sizeof(path)) {
				snprintf(err, errlen, "path too long in '%s'", dir);
				st = PRICES_NOINPUT;
			} else if (stat(path, &sb) == 0 && !S_ISREG(sb.st_mode)) {
				/* a folder or device named *.json is not a price file */
			} else if ((st = plan_prices_load_file(pr, path, err, errlen)) == PRICES_OK) {
				loaded++;
			}
		}
		free(names[i]);
	}
	if (st == PRICES_OK && loaded == 0) {
		snprintf(err, errlen, "no price files (*.json) in '%s'", dir);
		st = PRICES_NOINPUT;
	}
	if (files)
		*files = loaded;
	return st;
}
